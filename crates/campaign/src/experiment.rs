//! `wtlsperf run FILE.toml`: a question of the user's own, asked of the laboratory in an
//! experiment file instead of in Rust. The file names the contenders (registry
//! configurations, `protocol:configuration`), the bearers (catalogue names or inline
//! definitions), the devices, the loss levels, the runs per point, a seed and the
//! measurements to take; [`run`] checks all of it before anything runs ([`file`]), then
//! takes each measurement through the functions of [`measure`] and the evaluation's loss
//! curve machinery, and writes CSVs, figures and one HTML page through the report crate
//! ([`report`]).
//!
//! The format, every key, the outputs and their columns are documented in
//! docs/experiments.md; `experiments/` holds documented examples.

pub mod bearer;
pub mod file;
pub mod measure;
pub mod report;

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_models::device::published_pq::published_pq_costs;
use wtlsperf_report::Report;

use crate::evaluate::context::{Ctx, Mode, TICK};
use crate::evaluate::csv_file::write_csv;
use crate::evaluate::loss_curves::{LossCurveRow, LossStudy};
use crate::evaluate::output::MachineInfo;
use crate::evaluate::utc_stamp;
use crate::evaluate::vocabulary::Catalogue;
pub use file::{Experiment, FileError};
use measure::{BearerRunRow, Failure, FlightRow, LoadPointRow};

/// What `wtlsperf run` was asked.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub file: PathBuf,
    /// Output directory; `None`: `results/<UTC timestamp>-<file stem>/`.
    pub out: Option<PathBuf>,
    /// PKI directory, created on first use; `None`: `<out>/pki`.
    pub pki_dir: Option<PathBuf>,
}

/// Everything an experiment measured.
#[derive(Debug, Clone, Default)]
pub struct Results {
    pub flights: Vec<FlightRow>,
    pub bearer_runs: Vec<BearerRunRow>,
    pub loss_curves: Vec<LossCurveRow>,
    pub load_points: Vec<LoadPointRow>,
    /// What a measurement could not take, and why.
    pub failures: Vec<Failure>,
    /// Wall time of the measurements (s).
    pub seconds: f64,
}

/// Checks the file against the shipped registry and catalogues: what `run` does first.
pub fn check(path: &Path) -> anyhow::Result<Experiment> {
    let catalogue = Catalogue::shipped()?;
    Ok(Experiment::load(path, &catalogue)?)
}

/// Checks the file, runs it, and writes its directory; returns that directory.
pub fn run(config: RunConfig) -> anyhow::Result<PathBuf> {
    let catalogue = Catalogue::shipped()?;
    let experiment = Experiment::load(&config.file, &catalogue)?;
    let start = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let run_id = utc_stamp(start);
    let stem = config
        .file
        .file_stem()
        .map_or("experiment".into(), |s| s.to_string_lossy().into_owned());
    let out = config
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(format!("{run_id}-{stem}")));
    std::fs::create_dir_all(&out)
        .with_context(|| format!("creating the output directory {}", out.display()))?;
    let machine = MachineInfo::collect();
    let ctx = Ctx {
        mode: Mode::Full,
        catalogue,
        run_id,
        machine: machine.short(),
        progress: progress_bar(stages(&experiment)),
        job_logs: None,
        interference: None,
    };
    ctx.step("loading or creating the PKI");
    let pki_dir = config.pki_dir.unwrap_or_else(|| out.join("pki"));
    let store = PkiStore::load_or_init_numbered(&pki_dir, wtls::params::ParameterNumbering::Thesis)
        .with_context(|| format!("PKI in {}", pki_dir.display()))?;
    let results = measure_all(&ctx, &store, &experiment)?;
    ctx.step("writing the results");
    write(&ctx, &experiment, &results, &machine, &out)?;
    ctx.progress.finish_and_clear();
    Ok(out)
}

/// The progress bar's length: the PKI, each measurement taken, the files.
fn stages(x: &Experiment) -> u64 {
    let m = &x.measure;
    let memory = m.flights || m.bearer_runs || m.load.is_some();
    2 + [
        memory,
        m.flights,
        m.bearer_runs,
        m.loss_curves,
        m.load.is_some(),
    ]
    .iter()
    .filter(|on| **on)
    .count() as u64
}

fn progress_bar(len: u64) -> ProgressBar {
    let progress = ProgressBar::new(len);
    progress.set_style(
        ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    progress.enable_steady_tick(TICK);
    progress
}

/// Takes every measurement the file asks for, in order.
pub fn measure_all(ctx: &Ctx, store: &PkiStore, x: &Experiment) -> anyhow::Result<Results> {
    let clock = Instant::now();
    let m = &x.measure;
    let mut r = Results::default();
    let memory = if m.flights || m.bearer_runs || m.load.is_some() {
        let memory = measure::in_memory(ctx, store, &x.contenders)?;
        ctx.progress.inc(1);
        memory
    } else {
        Vec::new()
    };
    if m.flights {
        let (rows, failures) = measure::flights(ctx, store, &x.contenders, &memory, &x.bearers);
        r.flights = rows;
        r.failures.extend(failures);
        ctx.progress.inc(1);
    }
    if m.bearer_runs {
        let published = published_pq_costs()
            .map_err(|e| anyhow::anyhow!("published post-quantum costs: {e}"))?;
        r.bearer_runs = measure::bearer_runs(
            ctx,
            store,
            &x.contenders,
            &memory,
            &x.bearers,
            &x.devices,
            &published,
            (x.runs, x.seed),
        )?;
        r.failures.extend(
            r.bearer_runs
                .iter()
                .filter_map(|row| Some((row, row.first_error.as_ref()?)))
                .map(|(row, e)| Failure {
                    measurement: "bearer_runs",
                    contender: row.contender.clone(),
                    bearer: row.bearer.clone(),
                    error: format!(
                        "{} of {} runs as {} failed; the first: {e}",
                        row.runs - row.completed,
                        row.runs,
                        row.device
                    ),
                }),
        );
        ctx.progress.inc(1);
    }
    if m.loss_curves {
        let bearers: Vec<_> = x.bearers.iter().map(|b| b.profile.clone()).collect();
        let study = LossStudy {
            contenders: &x.contenders,
            bearers: &bearers,
            levels: &x.levels,
            reps: x.runs,
            first_timer: None,
            timers: "default".to_owned(),
        };
        // one stream per (bearer, level, run), the same for every contender
        r.loss_curves = study.run(ctx, store, |j| {
            measure::seed_of(&[x.seed, j.bearer as u64, j.level as u64, j.rep as u64])
        })?;
        ctx.progress.inc(1);
    }
    if let Some(load) = &m.load {
        let how = measure::LoadRun {
            seconds: load.seconds,
            warmups: load.warmups,
            seed: x.seed,
        };
        r.load_points = measure::load_points(ctx, store, &x.contenders, &memory, &load.rho, how)?;
        ctx.progress.inc(1);
    }
    r.seconds = clock.elapsed().as_secs_f64();
    Ok(r)
}

/// The page of an experiment: its sections in order.
pub fn page(ctx: &Ctx, x: &Experiment, r: &Results, machine: &MachineInfo) -> Report {
    let m = &x.measure;
    let mut page = Report::new(&x.title)
        .subtitle(format!("wtlsperf run {}", x.file.display()))
        .meta("run", &ctx.run_id)
        .meta("machine", machine.short())
        .meta("kernel", &machine.kernel)
        .meta("OpenSSL", &machine.openssl)
        .meta("wtlsperf", &machine.wtlsperf)
        .section(report::overview(x, r));
    if m.flights {
        page = page.section(report::flights(ctx, &r.flights));
    }
    if m.bearer_runs {
        page = page.section(report::bearer_runs(ctx, &r.bearer_runs));
    }
    if m.loss_curves {
        page = page.section(report::loss_curves(ctx, &r.loss_curves, x.runs));
    }
    if m.load.is_some() {
        page = page.section(report::load_points(ctx, &r.load_points));
    }
    page
}

/// Writes the CSVs of the measurements taken, the page with its figures and tables, and
/// a copy of the file.
fn write(
    ctx: &Ctx,
    x: &Experiment,
    r: &Results,
    machine: &MachineInfo,
    out: &Path,
) -> anyhow::Result<()> {
    let m = &x.measure;
    if m.flights {
        write_csv(&out.join("flights.csv"), &r.flights)?;
    }
    if m.bearer_runs {
        write_csv(&out.join("bearer_runs.csv"), &r.bearer_runs)?;
    }
    if m.loss_curves {
        write_csv(&out.join("loss_curves.csv"), &r.loss_curves)?;
    }
    if m.load.is_some() {
        write_csv(&out.join("load_points.csv"), &r.load_points)?;
    }
    if !r.failures.is_empty() {
        write_csv(&out.join("failures.csv"), &r.failures)?;
    }
    std::fs::copy(&x.file, out.join("experiment.toml"))
        .with_context(|| format!("copying {} into {}", x.file.display(), out.display()))?;
    page(ctx, x, r, machine)
        .write(out)
        .with_context(|| format!("writing the report into {}", out.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests;
