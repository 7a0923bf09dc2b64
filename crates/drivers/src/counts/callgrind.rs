//! Running one case under valgrind's callgrind and reading its per-side counts.
//!
//! The child runs a warm-up rep, then the counted one; callgrind dumps the profile when
//! the counted rep starts, so the final profile holds only it. Collection is off at start (`--collect-atstart=no`: process start-up, PKI loading
//! and key parsing are not counted) and on only inside the counted functions
//! (`--toggle-collect`). The profile then gives each function's instructions including
//! everything it called ([`parse`]); the entry points do not nest, so each side's count
//! is the sum over its entry points.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// Callgrind's (demangled) names of what is counted, per side.
const SERVER: &[&str] = &["wtlsperf_spine::pair::server_receives"];
const CLIENT: &[&str] = &[
    "wtlsperf_spine::pair::client_starts",
    "wtlsperf_spine::pair::client_receives",
];
/// The bound's denominator (wherever the runner keeps it: matched by its tail).
const RAW_PK: &[&str] = &["RawServerOps::run"];

/// The function of the counted rep (after the warm-up).
const COUNTED: &str = "wtlsperf_drivers::counts::one::counted";

/// Instructions one run executed in each counted part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    pub server: u64,
    pub client: u64,
    /// None when the variant has no bound (no raw operations run).
    pub raw_pk: Option<u64>,
}

/// Whether valgrind can be run; the reason if not.
pub fn available() -> Result<(), String> {
    match Command::new("valgrind").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("valgrind --version exited {}", o.status)),
        Err(e) => Err(format!(
            "valgrind not runnable ({e}; Debian package `valgrind`, installed by scripts/setup.sh)"
        )),
    }
}

/// Runs `program args` under callgrind in directory `cwd`, writing its profile to
/// `profile`, and reads the counts.
pub fn measure(program: &Path, args: &[String], cwd: &Path, profile: &Path) -> Result<Measured> {
    let mut cmd = Command::new("valgrind");
    cmd.current_dir(cwd)
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", profile.display()))
        .arg("--collect-atstart=no");
    for f in SERVER.iter().chain(CLIENT).chain(RAW_PK) {
        cmd.arg(format!("--toggle-collect=*{f}"));
    }
    // The warm-up rep goes to `<profile>.1`; the counted rep ends in `<profile>`.
    cmd.arg(format!("--dump-before=*{COUNTED}"));
    let out = cmd
        .arg(program)
        .args(args)
        .output()
        .context("running valgrind")?;
    if !out.status.success() {
        bail!(
            "valgrind {} {} failed ({}): {}",
            program.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = std::fs::read_to_string(profile)
        .with_context(|| format!("reading the profile {}", profile.display()))?;
    parse(&text).with_context(|| format!("profile {}", profile.display()))
}

/// The counts from a callgrind profile (its format: valgrind's "Callgrind Format
/// Specification"). A function's count is its own instructions (inlined code included:
/// `fi=`/`fe=` switch files inside one function) plus the inclusive cost of every call
/// it makes (the cost line after `calls=`), over every block of that name. Since only
/// the counted functions collect, their sum must be the profile's `totals:`; anything
/// else is an error, never a silently wrong count.
pub fn parse(profile: &str) -> Result<Measured> {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut per_function: HashMap<String, u64> = HashMap::new();
    let mut current: Option<String> = None;
    let mut totals = None;
    for line in profile.lines() {
        if let Some(spec) = line.strip_prefix("fn=") {
            current = Some(resolve(&mut names, spec));
        } else if let Some(spec) = line.strip_prefix("cfn=") {
            resolve(&mut names, spec);
        } else if let Some(t) = line
            .strip_prefix("totals:")
            .or(line.strip_prefix("summary:"))
        {
            totals = Some(t.trim().parse::<u64>().context("totals line")?);
        } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)) {
            // A cost line: position, then Ir (the only event). A call's inclusive cost
            // line follows its `calls=` line and counts for the caller like its own.
            let cost = line.split_whitespace().nth(1).unwrap_or("0");
            let cost: u64 = cost
                .parse()
                .with_context(|| format!("cost line {line:?}"))?;
            if let Some(f) = &current {
                *per_function.entry(f.clone()).or_default() += cost;
            }
        }
    }
    let sum = |wanted: &[&str]| -> Option<u64> {
        let hits: Vec<u64> = per_function
            .iter()
            .filter(|(name, _)| wanted.iter().any(|w| name.ends_with(w)))
            .map(|(_, &c)| c)
            .collect();
        (!hits.is_empty()).then(|| hits.iter().sum())
    };
    let server = sum(SERVER).context("no server count in the profile")?;
    let client = sum(CLIENT).context("no client count in the profile")?;
    let raw_pk = sum(RAW_PK);
    let totals = totals.context("the profile has no totals line")?;
    let counted = server + client + raw_pk.unwrap_or(0);
    if counted != totals {
        bail!("the counted functions sum to {counted} instructions, the profile to {totals}");
    }
    Ok(Measured {
        server,
        client,
        raw_pk,
    })
}

/// A compressed name (`(12) name` defines id 12, `(12)` refers to it).
fn resolve(names: &mut HashMap<String, String>, spec: &str) -> String {
    let spec = spec.trim();
    match spec.strip_prefix('(').and_then(|r| r.split_once(')')) {
        Some((id, rest)) if !rest.trim().is_empty() => {
            let name = rest.trim().to_string();
            names.insert(id.to_string(), name.clone());
            name
        }
        Some((id, _)) => names.get(id).cloned().unwrap_or_default(),
        None => spec.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile in callgrind's format: compressed names, an inlined file switch, a call
    /// whose inclusive cost counts for its caller, and the totals line.
    const PROFILE: &str = "\
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 1165

fl=(1) pair.rs
fn=(1) wtlsperf_spine::pair::server_receives
10 5
fi=(2) vec.rs
3 10
fe=(1)
cfl=(3) server.rs
cfn=(2) wtls::handshake::server::ServerConnection::handle_datagram
calls=1 40
11 1000
fn=(3) wtlsperf_spine::pair::client_starts
20 50
fn=(4) wtlsperf_spine::pair::client_receives
+2 60
fl=(3)
fn=(2)
40 1000
fl=(4) runner.rs
fn=(5) wtlsperf_drivers::runner::RawServerOps::run
5 40
totals: 1165
";

    #[test]
    fn each_side_is_its_functions_with_their_callees() {
        // The callee's own block (1000) is not counted again: only the entry points'.
        let m = parse(PROFILE).unwrap();
        assert_eq!(
            m,
            Measured {
                server: 1015,
                client: 110,
                raw_pk: Some(40),
            }
        );
    }

    #[test]
    fn counts_that_do_not_add_up_are_an_error() {
        let err = parse(&PROFILE.replace("totals: 1165", "totals: 1166")).unwrap_err();
        assert!(err.to_string().contains("sum to 1165"), "{err}");
        assert!(
            parse("events: Ir\ntotals: 0\n").is_err(),
            "no counted function"
        );
    }
}
