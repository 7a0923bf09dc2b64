//! `wtlsperf run FILE.toml`: an experiment file (docs/experiments.md) checked, run, and
//! written as CSVs, figures and one HTML page (`wtlsperf_campaign::experiment`).

use std::path::PathBuf;
use std::time::Instant;

use wtlsperf_campaign::experiment::{self, RunConfig};

/// `wtlsperf run` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The experiment file (TOML; docs/experiments.md, examples in experiments/).
    #[arg(value_name = "FILE.toml")]
    pub file: PathBuf,
    /// Output directory (default `results/<UTC timestamp>-<file stem>/`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// PKI directory, created on first use (default `<out>/pki`).
    #[arg(long = "pki", value_name = "DIR")]
    pub pki: Option<PathBuf>,
    /// Only check the file (every name known, every value in range) and say what it
    /// would run; exit 0 if it is good, 2 if not.
    #[arg(long)]
    pub check: bool,
}

/// Checks the file, then runs it unless `--check`. A bad file is an
/// [`experiment::FileError`], which `main` turns into exit code 2.
pub fn run(args: Args) -> anyhow::Result<()> {
    let x = experiment::check(&args.file)?;
    if args.check {
        println!(
            "{}: {} contenders, {} bearers, {} devices, {} loss levels, {} runs a point: good",
            args.file.display(),
            x.contenders.len(),
            x.bearers.len(),
            x.devices.len(),
            x.levels.len(),
            x.runs
        );
        return Ok(());
    }
    let clock = Instant::now();
    let out = experiment::run(RunConfig {
        file: args.file,
        out: args.out,
        pki_dir: args.pki,
    })?;
    eprintln!(
        "wtlsperf run: {} written in {:.1} s",
        out.join("report.html").display(),
        clock.elapsed().as_secs_f64()
    );
    Ok(())
}
