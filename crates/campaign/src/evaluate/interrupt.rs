//! An evaluation stopped by SIGINT or SIGTERM, or killed: nothing in its directory may
//! pass for a complete run.
//!
//! Every file is written whole ([`wtlsperf_report::write_whole_with`]), so a stop at any
//! moment leaves whole files or none, never a torn one. `summary.json` and `report.html`
//! are written last, once every part has finished, and the stale ones of an earlier run in
//! the same directory are removed at the start: their presence means the run completed.
//! A killed run (SIGKILL) therefore leaves neither. On SIGINT or SIGTERM a watcher
//! thread writes `INTERRUPTED` (what stopped the run, and when) and
//! `summary.partial.json` (`"run_state": "interrupted"`, the parts finished and their
//! wall times), says on stderr where they are, and exits with 128 + the signal's number,
//! as a shell reports a process a signal ended. It does so at once, whatever part is
//! running: the parts' in-process gateways and load generators are threads of this
//! process and stop with it.
//!
//! A signal that arrives while the finished run writes its files waits for them: the run
//! then completes (exit status 0).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use serde::Serialize;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

/// The marker of an interrupted run, in its directory.
pub const INTERRUPTED: &str = "INTERRUPTED";
/// The partial summary of an interrupted run, beside the marker.
pub const PARTIAL_SUMMARY: &str = "summary.partial.json";
/// The files whose presence says a run completed.
const COMPLETE_ONLY: [&str; 2] = ["summary.json", "report.html"];

/// `summary.partial.json`.
#[derive(Debug, Clone, Serialize)]
pub struct PartialSummary {
    /// Always `interrupted`: this is not a complete run's summary.
    pub run_state: &'static str,
    /// `SIGINT` or `SIGTERM`.
    pub signal: &'static str,
    pub run_id: String,
    pub start_unix_s: u64,
    pub interrupted_unix_s: u64,
    /// The parts that finished, in order, with their wall times (s). Their files are
    /// written only when every part has finished, so none is in the directory.
    pub parts_finished: Vec<(String, f64)>,
}

/// What the watcher needs to mark the run.
struct RunState {
    out: PathBuf,
    run_id: String,
    start_unix_s: u64,
    parts: Vec<(String, f64)>,
    /// The final files are being written, or have been: a signal no longer interrupts.
    finishing: bool,
}

/// The watcher of one evaluation run (module docs); stops watching when dropped.
pub struct RunGuard {
    state: Arc<Mutex<RunState>>,
    handle: Handle,
    watcher: Option<std::thread::JoinHandle<()>>,
}

fn lock(state: &Mutex<RunState>) -> MutexGuard<'_, RunState> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn signal_name(signal: i32) -> &'static str {
    if signal == SIGTERM {
        "SIGTERM"
    } else {
        "SIGINT"
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl RunGuard {
    /// Removes what would make `out` look like a complete or an interrupted run (the
    /// files of an earlier run there) and starts watching for SIGINT and SIGTERM.
    pub fn install(out: &Path, run_id: &str, start_unix_s: u64) -> anyhow::Result<RunGuard> {
        for name in COMPLETE_ONLY.iter().chain(&[INTERRUPTED, PARTIAL_SUMMARY]) {
            let path = out.join(name);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("removing {} of an earlier run", path.display()))
                }
            }
        }
        let state = Arc::new(Mutex::new(RunState {
            out: out.to_path_buf(),
            run_id: run_id.to_owned(),
            start_unix_s,
            parts: Vec::new(),
            finishing: false,
        }));
        let mut signals =
            Signals::new([SIGINT, SIGTERM]).context("watching for SIGINT and SIGTERM")?;
        let handle = signals.handle();
        let watched = state.clone();
        let watcher = std::thread::Builder::new()
            .name("evaluate-signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    interrupted(&watched, signal);
                }
            })
            .context("starting the signal watcher")?;
        Ok(RunGuard {
            state,
            handle,
            watcher: Some(watcher),
        })
    }

    /// Part `name` finished in `seconds`.
    pub fn part_done(&self, name: &str, seconds: f64) {
        lock(&self.state).parts.push((name.to_owned(), seconds));
    }

    /// Runs `finish`, which writes the run's files, with signals held off: a run that got
    /// this far completes.
    pub fn finish<T>(&self, finish: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
        let mut state = lock(&self.state);
        state.finishing = true;
        finish()
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
    }
}

/// Marks the run interrupted, says where its partial results are and exits (module docs).
/// Nothing happens once the final files are being written.
fn interrupted(state: &Mutex<RunState>, signal: i32) {
    let state = lock(state);
    if state.finishing {
        return;
    }
    let summary = PartialSummary {
        run_state: "interrupted",
        signal: signal_name(signal),
        run_id: state.run_id.clone(),
        start_unix_s: state.start_unix_s,
        interrupted_unix_s: unix_now(),
        parts_finished: state.parts.clone(),
    };
    let written = mark(&state.out, &summary);
    eprintln!();
    match written {
        Ok(()) => eprintln!(
            "wtlsperf evaluate: interrupted by {} after {} part(s); partial results in {} \
             ({INTERRUPTED}, {PARTIAL_SUMMARY}; no summary.json or report.html)",
            summary.signal,
            summary.parts_finished.len(),
            state.out.display()
        ),
        Err(e) => eprintln!(
            "wtlsperf evaluate: interrupted by {}; partial results in {} (marking them \
             failed: {e:#})",
            summary.signal,
            state.out.display()
        ),
    }
    std::process::exit(128 + signal);
}

/// Writes the marker and the partial summary, each whole.
fn mark(out: &Path, summary: &PartialSummary) -> anyhow::Result<()> {
    super::output::write_json(&out.join(PARTIAL_SUMMARY), summary)?;
    let parts: Vec<&str> = summary
        .parts_finished
        .iter()
        .map(|p| p.0.as_str())
        .collect();
    let text = format!(
        "run {} interrupted by {} at {} (Unix s), started at {}\nparts finished: {}\n\
         This is not a complete run: it has no summary.json and no report.html.\n",
        summary.run_id,
        summary.signal,
        summary.interrupted_unix_s,
        summary.start_unix_s,
        if parts.is_empty() {
            "none".to_owned()
        } else {
            parts.join(", ")
        }
    );
    let path = out.join(INTERRUPTED);
    wtlsperf_report::write_whole(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_complete_run_is_cleared_and_an_interruption_is_marked() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["summary.json", "report.html", INTERRUPTED, "cases.csv"] {
            std::fs::write(dir.path().join(name), "old").unwrap();
        }
        let guard = RunGuard::install(dir.path(), "run", 7).unwrap();
        for name in ["summary.json", "report.html", INTERRUPTED] {
            assert!(!dir.path().join(name).exists(), "{name}");
        }
        assert!(dir.path().join("cases.csv").exists());
        guard.part_done("pki", 0.5);
        let summary = PartialSummary {
            run_state: "interrupted",
            signal: signal_name(SIGTERM),
            run_id: "run".into(),
            start_unix_s: 7,
            interrupted_unix_s: 9,
            parts_finished: lock(&guard.state).parts.clone(),
        };
        mark(dir.path(), &summary).unwrap();
        let json = std::fs::read_to_string(dir.path().join(PARTIAL_SUMMARY)).unwrap();
        assert!(json.contains("\"run_state\": \"interrupted\"") && json.contains("SIGTERM"));
        let marker = std::fs::read_to_string(dir.path().join(INTERRUPTED)).unwrap();
        assert!(marker.contains("parts finished: pki"), "{marker}");
    }
}
