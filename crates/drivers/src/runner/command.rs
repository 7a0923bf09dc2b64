//! `wtlsperf handshake`: the cases to run, the tables on stdout (or stderr) and the JSON
//! records. The command line (the `wtlsperf` crate's `handshake_cmd`) parses the options
//! into a [`CommandConfig`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use wtls::handshake::AuthMode;
use wtls::suite::Case;

use super::{
    json_records, measure_case, planned_cases, render_case, render_overview, RunnerOptions,
};
use crate::pki_store::PkiStore;

/// What `wtlsperf handshake` runs.
#[derive(Debug, Clone)]
pub struct CommandConfig {
    pub plan: Plan,
    /// Newline-delimited JSON records to this file, or to stdout with `-` (the tables
    /// then go to stderr).
    pub json: Option<PathBuf>,
    /// The PKI, issued on first use: the in-memory runner serves no one else.
    pub pki_dir: PathBuf,
    /// One bound pair per rep and no extension (`scripts/bench-counts.sh` divides the
    /// raw operations' count by the reps).
    pub options: RunnerOptions,
}

/// Which handshakes run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Every case of thesis Table 3.3 the PKI holds, in each mode the variant can run.
    All,
    /// One case in one mode.
    One(Case, AuthMode),
}

/// Runs `wtlsperf handshake`.
pub fn run(args: CommandConfig) -> Result<()> {
    let started = Instant::now();
    let store = PkiStore::load_or_init(&args.pki_dir)
        .with_context(|| format!("--pki {}", args.pki_dir.display()))?;
    let opts = args.options.clone();
    let to_stdout = args.json.as_deref() == Some(std::path::Path::new("-"));
    let mut json: Option<Box<dyn Write>> = match &args.json {
        None => None,
        Some(_) if to_stdout => Some(Box::new(BufWriter::new(std::io::stdout()))),
        Some(p) => Some(Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("creating {}", p.display()))?,
        ))),
    };
    // With the JSON on stdout, the tables go to stderr.
    let print = |text: &str| {
        if to_stdout {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    };
    let plan = plan(&args, &store, &print)?;
    let mut results = Vec::new();
    for (i, (case, auth)) in plan.iter().enumerate() {
        if plan.len() > 1 {
            eprintln!("[{}/{}] {case} {}", i + 1, plan.len(), auth.name());
        }
        let m = measure_case(&store, *case, *auth, &opts)?;
        print(&render_case(&m));
        print("\n");
        if let Some(w) = json.as_mut() {
            for r in json_records(&m) {
                serde_json::to_writer(&mut *w, &r)?;
                w.write_all(b"\n")?;
            }
        }
        results.push(m);
    }
    if results.len() > 1 {
        print(&render_overview(&results));
    }
    if let Some(mut w) = json {
        w.flush()?;
    }
    print(&format!(
        "run took {:.1} s\n",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// The (case, authentication) pairs to run: every planned one with `--all` (naming the
/// cases the local libcrypto cannot run), else the one given.
fn plan(
    args: &CommandConfig,
    store: &PkiStore,
    print: &dyn Fn(&str),
) -> Result<Vec<(Case, AuthMode)>> {
    let Plan::One(case, auth) = args.plan else {
        for c in Case::ALL.iter().filter(|c| !c.is_available()) {
            print(&format!(
                "note: skipping {c}: {}\n",
                c.ca.unavailability()
                    .or(c.leaf.unavailability())
                    .unwrap_or("not in the PKI")
            ));
        }
        return Ok(planned_cases(store, args.options.variant));
    };
    if !case.is_available() {
        bail!("case {case} needs a curve the local libcrypto lacks");
    }
    Ok(vec![(case, auth)])
}
