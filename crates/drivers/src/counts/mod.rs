//! Instruction counts of the handshake cases: the deterministic twin of the timings.
//!
//! On a shared machine CPU times drift 10-20 % within minutes; the instructions a run
//! executes do not. For each case this runs one handshake through the in-memory
//! [`wtlsperf_spine::Pair`] driver, then the server's raw public-key operations (the
//! bound's denominator), in a child process under valgrind's callgrind, and reads the
//! instructions of the server side, the client side and the raw operations (rustls'
//! ci-bench counts the same way). Randomness is seeded, time is virtual and the PKI is
//! issued from the same seed, so two runs of one binary give identical counts.
//!
//! The PKI is issued once in this process (natively: RSA 3072 key search under valgrind
//! would take minutes) into a temporary directory the children load.

mod callgrind;
mod one;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use serde::Serialize;
use wtls::fixtures::UNIX_NOW;
use wtls::handshake::AuthMode;
use wtls::params::ParameterNumbering;
use wtls::suite::Case;

use crate::pki_store::PkiStore;
use crate::runner::Variant;

pub use callgrind::available;

/// The seed of the evaluation's counts (any fixed value: it only has to be the same).
pub const DEFAULT_SEED: u64 = 0x5754_4C53;

/// What `wtlsperf count` counts (the command line, the `wtlsperf` crate's `count_cmd`,
/// parses its options into this).
#[derive(Debug, Clone)]
pub struct CountConfig {
    /// Cases to count; empty means every case the local libcrypto supports.
    pub cases: Vec<Case>,
    /// Authentication modes; empty means every mode the variant can run.
    pub auths: Vec<AuthMode>,
    /// Handshake variant (resumed is not counted).
    pub variant: Variant,
    /// Seed of the PKI and of every random draw.
    pub seed: u64,
    /// Cases counted at once (one valgrind process each).
    pub jobs: u16,
    /// Write the counts as CSV here instead of a table on stdout.
    pub csv: Option<PathBuf>,
    /// Keep the PKI and the callgrind profiles in this directory; `None`: a temporary
    /// directory, removed after.
    pub keep: Option<PathBuf>,
    /// The child under valgrind: run the one case in this process, on the PKI in this
    /// directory (issued by the parent from the seed, not the shared `--pki`).
    pub child_pki: Option<PathBuf>,
}

/// One case's counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseCounts {
    pub case: Case,
    pub auth: AuthMode,
    pub variant: Variant,
    /// Instructions the server executed handling the client's datagrams.
    pub server: u64,
    /// Instructions the client executed (its first flight and every datagram it handled).
    pub client: u64,
    /// Instructions of the server's raw public-key operations; None for variants without
    /// a bound (anonymous).
    pub raw_pk: Option<u64>,
}

impl CaseCounts {
    /// Server instructions over raw public-key instructions: the bound ratio's exact
    /// twin. It cannot be below 1 unless the server skipped an operation the raw set
    /// does (a finding, not noise).
    pub fn bound_ratio(&self) -> Option<f64> {
        self.raw_pk
            .filter(|&r| r > 0)
            .map(|r| self.server as f64 / r as f64)
    }
}

/// What to count: one handshake shape of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    pub case: Case,
    pub auth: AuthMode,
    pub variant: Variant,
}

/// Counts every planned handshake under callgrind, `jobs` at a time, on a PKI issued
/// from `seed` under `numbering`. Fails if valgrind is missing or any case fails.
pub fn count(
    plan: &[Planned],
    seed: u64,
    numbering: ParameterNumbering,
    jobs: usize,
    keep: Option<&Path>,
    mut progress: impl FnMut(usize, usize) + Send,
) -> Result<Vec<CaseCounts>> {
    callgrind::available().map_err(|e| anyhow!(e))?;
    let program = std::env::current_exe().context("locating the wtlsperf executable")?;
    let dir = match keep {
        Some(path) => {
            std::fs::create_dir_all(path)
                .with_context(|| format!("--keep {}: cannot create", path.display()))?;
            WorkDir(path.to_path_buf(), false)
        }
        None => WorkDir::temporary(seed)?,
    };
    let mut cases: Vec<Case> = plan.iter().map(|p| p.case).collect();
    cases.sort();
    cases.dedup();
    for case in cases {
        // One PKI per case, from a seed of its own, so a case's keys (and counts) do not
        // depend on which other cases run.
        let case_seed = seed ^ wtls::fixtures::CaseKeys::seed_of(case);
        let _seeded =
            wtls::crypto::random::seed_thread(case_seed).map_err(|e| anyhow!("seeding: {e}"))?;
        PkiStore::create_numbered(
            &dir.0.join(pki_dir(case)),
            true,
            UNIX_NOW,
            &[case],
            numbering,
        )?;
    }
    let progress = Mutex::new((&mut progress, 0usize));
    crate::pool::run_concurrently(plan, jobs, |i, p| {
        let r = count_one(&program, &dir.0, i, *p, seed);
        let mut g = progress.lock().unwrap_or_else(|e| e.into_inner());
        g.1 += 1;
        let done = g.1;
        (g.0)(done, plan.len());
        r
    })
    .into_iter()
    .collect()
}

/// The handshakes `count` runs: the selected cases (default every case the local
/// libcrypto supports) in each selected mode (default every mode the variant can run).
/// A selection the variant cannot run is refused here, naming the options, rather than
/// case by case from the children.
fn plan(args: &CountConfig) -> Result<Vec<Planned>> {
    let variant = args.variant;
    if variant == Variant::Resumed {
        anyhow::bail!(
            "--variant resumed: not counted (its priming handshake would be counted too)"
        );
    }
    if let Some(auth) = args
        .auths
        .iter()
        .find(|a| !variant.auth_modes().contains(a))
    {
        anyhow::bail!(
            "--auth {} with --variant {}: the variant runs only with --auth {}",
            auth.name(),
            variant.name(),
            variant
                .auth_modes()
                .iter()
                .map(|a| a.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let cases = if args.cases.is_empty() {
        Case::ALL.into_iter().filter(Case::is_available).collect()
    } else {
        args.cases.clone()
    };
    let auths = if args.auths.is_empty() {
        variant.auth_modes().to_vec()
    } else {
        args.auths.clone()
    };
    Ok(cases
        .iter()
        .flat_map(|&case| {
            auths.iter().map(move |&auth| Planned {
                case,
                auth,
                variant,
            })
        })
        .collect())
}

/// The PKI directory of a case, relative to the work directory.
fn pki_dir(case: Case) -> String {
    format!("pki-{}", case.to_string().replace('/', "_"))
}

fn count_one(program: &Path, dir: &Path, i: usize, p: Planned, seed: u64) -> Result<CaseCounts> {
    // The child runs in the work directory with a relative PKI path: its arguments (which
    // sit on its stack, and so shift every stack address and memcpy alignment after them)
    // are then the same on every run, wherever the work directory is.
    let args = vec![
        "count".to_string(),
        "--one".into(),
        "--child-pki".into(),
        pki_dir(p.case),
        "--case".into(),
        p.case.to_string(),
        "--auth".into(),
        p.auth.name().into(),
        "--variant".into(),
        p.variant.name().into(),
        "--seed".into(),
        seed.to_string(),
    ];
    let m = callgrind::measure(program, &args, dir, &dir.join(format!("callgrind.{i}")))
        .with_context(|| format!("{} {} {}", p.case, p.auth.name(), p.variant.name()))?;
    Ok(CaseCounts {
        case: p.case,
        auth: p.auth,
        variant: p.variant,
        server: m.server,
        client: m.client,
        raw_pk: m.raw_pk,
    })
}

/// Where the PKI and the profiles go; removed when dropped if temporary (the bool).
struct WorkDir(PathBuf, bool);

impl WorkDir {
    fn temporary(seed: u64) -> Result<WorkDir> {
        let path = std::env::temp_dir().join(format!(
            "wtlsperf-count-{}-{seed:x}-{}",
            std::process::id(),
            Instant::now().elapsed().as_nanos()
        ));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(WorkDir(path, true))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.1 {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// One row of `wtlsperf count --csv` (and the columns `cases.csv` takes).
#[derive(Debug, Serialize)]
struct CountCsv {
    case: String,
    auth: &'static str,
    variant: &'static str,
    server_instructions: u64,
    client_instructions: u64,
    raw_pk_instructions: Option<u64>,
    instruction_bound_ratio: Option<f64>,
}

/// `wtlsperf count`.
pub fn run(args: CountConfig) -> Result<()> {
    if let Some(pki) = args.child_pki.as_deref() {
        let [case] = args.cases[..] else {
            anyhow::bail!("--one counts exactly one --case");
        };
        let [auth] = args.auths[..] else {
            anyhow::bail!("--one counts exactly one --auth");
        };
        return one::run_one(pki, case, auth, args.variant, args.seed);
    }
    let plan = plan(&args)?;
    let started = Instant::now();
    let counts = count(
        &plan,
        args.seed,
        ParameterNumbering::Thesis,
        args.jobs.into(),
        args.keep.as_deref(),
        |done, total| eprint!("\rcounted {done}/{total}"),
    )?;
    eprintln!(" in {:.1} s", started.elapsed().as_secs_f64());
    let rows = counts.iter().map(|c| CountCsv {
        case: c.case.to_string(),
        auth: c.auth.name(),
        variant: c.variant.name(),
        server_instructions: c.server,
        client_instructions: c.client,
        raw_pk_instructions: c.raw_pk,
        instruction_bound_ratio: c.bound_ratio(),
    });
    let write = |out: &mut dyn Write| {
        let mut w = csv::Writer::from_writer(out);
        for r in rows {
            w.serialize(r)?;
        }
        w.flush()
    };
    match &args.csv {
        // Whole or not at all, as every result file.
        Some(path) => {
            wtlsperf_report::write_whole_with(path, wtlsperf_report::Readers::Everyone, write)
                .with_context(|| format!("--csv {}: cannot write", path.display()))
        }
        None => write(&mut std::io::stdout().lock()).context("writing the counts"),
    }
}
