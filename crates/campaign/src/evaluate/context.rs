//! What every section of the campaign shares: the size of the run, the devices and
//! bearers it runs on, how its measured numbers are labelled and the progress line. It sits below every section, so that a
//! section reads it without reaching up into the command that runs them all; the command
//! (`evaluate/mod.rs`) keeps what only it needs (the output directory, the parts' wall
//! times).

use std::path::PathBuf;

use indicatif::ProgressBar;
use wtlsperf_report::Provenance;

use super::vocabulary::Catalogue;

/// How much of the campaign to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Minimal inputs for the integration test.
    Smoke,
    /// CI size.
    Quick,
    /// The real evaluation.
    Full,
}

impl Mode {
    /// Handshakes per case and authentication mode for the processing tables.
    pub fn processing_reps(self) -> usize {
        match self {
            Mode::Smoke => 1,
            Mode::Quick => 3,
            Mode::Full => 15,
        }
    }
}

/// What every part needs: the mode, where its numbers go and how to label them.
pub struct Ctx {
    /// Size of the run.
    pub mode: Mode,
    /// The devices and bearers, loaded and validated at start-up.
    pub catalogue: Catalogue,
    /// Identifies this run in every measured provenance (`20261122T052157Z`).
    pub run_id: String,
    /// Short machine description (CPU model, cores).
    pub machine: String,
    /// Progress on stderr.
    pub progress: ProgressBar,
    /// Where the queue load points' job logs go, if anywhere (`--job-logs`).
    pub job_logs: Option<PathBuf>,
    /// The queue load test's interference injector (`--interference`): each load run
    /// takes it, reseeded from the run's own seed.
    pub interference: Option<wtlsperf_drivers::load::Interference>,
}

impl Ctx {
    /// Provenance of a number measured in this run.
    pub fn measured(&self) -> Provenance {
        Provenance::measured(&self.run_id, &self.machine)
    }

    /// Tells the user which step runs now.
    pub fn step(&self, what: &str) {
        self.progress.set_message(what.to_owned());
        self.progress.tick();
    }

    /// Runs `measure` with the progress bar's redraw thread stopped. A load test pins
    /// its generator and the gateway's worker to the two cores, both busy-polling: a
    /// thread waking four times a second to redraw would preempt one of them, and the
    /// worker's stall log would count its own program among the machine's disturbances.
    pub fn without_ticker<T>(&self, measure: impl FnOnce() -> T) -> T {
        self.progress.disable_steady_tick();
        let out = measure();
        self.progress.enable_steady_tick(TICK);
        out
    }
}

/// How often the progress bar redraws on its own.
pub const TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// The wall time of a section's stages, in order: a section whose time is most of the
/// budget (the queue) or varies between runs (the protocols) says where it went, as
/// `summary.json`'s `part_seconds` entries `<section>: <stage>`.
#[derive(Debug)]
pub struct StageClock {
    since: std::time::Instant,
    seconds: Vec<(&'static str, f64)>,
}

impl StageClock {
    pub fn start() -> Self {
        StageClock {
            since: std::time::Instant::now(),
            seconds: Vec::new(),
        }
    }

    /// Ends `stage` now and starts the next.
    pub fn lap(&mut self, stage: &'static str) {
        self.seconds
            .push((stage, self.since.elapsed().as_secs_f64()));
        self.since = std::time::Instant::now();
    }

    pub fn into_seconds(self) -> Vec<(&'static str, f64)> {
        self.seconds
    }
}

/// UTC `YYYYMMDDTHHMMSSZ` of a Unix time, without a date crate: the civil-from-days
/// conversion of Howard Hinnant's date algorithms.
pub fn utc_stamp(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let rem = unix_secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}
