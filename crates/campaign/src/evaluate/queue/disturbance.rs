//! Whether a recording of the load test was disturbed, the time the queue part may spend
//! recording disturbed windows again, and what a run that judged fewer points than it
//! designed says about itself (`degraded` in `summary.json`).
//!
//! Why a rule per recording: on a virtual machine whose hypervisor takes CPU away, a
//! recording can lose so much of the worker's time that neither its measured rho nor its
//! undisturbed part stands for the queue the model describes. The undisturbed reading
//! (see `reality`) handles a disturbance of a few percent by leaving out the jobs around
//! each stall; beyond [`MAX_LOST_SHARE`] it cannot, so such a recording is recorded again
//! while the part's [`RerecordBudget`] lasts, and otherwise kept, not judged, and counted
//! with its cause.

use std::cell::Cell;

use serde::Serialize;
use wtlsperf_drivers::load::WindowLoad;

use super::point::LoadPoint;

/// Largest share of a recording's window the worker may lose (waiting on its run queue,
/// or its CPU stolen by the hypervisor) or the generator may wait on its run queue, for
/// the recording to count as undisturbed.
///
/// Why 10 %: (1) time taken from a busy worker counts in its occupancy, so a loss of q
/// moves the measured rho by up to q x rho: 0.05 at rho 0.5, the miss tolerance of the
/// calibration, and 0.08 at rho 0.8; (2) the undisturbed reading drops each stall of L
/// with 20 ms plus 10 L after it ([`wtlsperf_models::queue::trace::settle_ns`]), so a
/// loss of q in 10 ms bursts (100 q bursts a second, 130 ms dropped with each) drops up
/// to 13 q of the window: at 10 % nothing is left (the reading needs a fifth of the
/// window), at 5 % a third or more is; (3) it is twice
/// the 5 % duty cycle in 10 ms bursts the load test is designed to hold through
/// (`--interference`), and some three times what the reference VM's hypervisor took on
/// average (the worker 5.1 s off its core over about 180 s of recordings).
pub const MAX_LOST_SHARE: f64 = 0.10;

/// Share of the part's planned recording time it may spend recording disturbed windows
/// again. A fifth: the full run's load test plans some 230 s of recordings, so at most
/// about 45 s more, which the 900 s budget of a full evaluation holds (the latest full
/// runs took 676-858 s).
pub const RERECORD_SHARE: f64 = 0.2;

/// Most re-recordings of one point's disturbed windows: a point whose windows are all
/// disturbed must not spend the whole part's allowance.
pub const MAX_RERECORDS_PER_POINT: usize = 2;

/// Why a designed point was not judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Its kept recording lost more than [`MAX_LOST_SHARE`], most of it to the
    /// hypervisor's steal.
    Steal,
    /// Its kept recording lost more than [`MAX_LOST_SHARE`], most of it to the threads
    /// waiting on their run queues; or its undisturbed part was too small to read.
    Stalls,
    /// Its measured rho stayed more than 0.05 off the target after the repeats.
    MissedRho,
}

impl Cause {
    pub fn name(self) -> &'static str {
        match self {
            Cause::Steal => "steal",
            Cause::Stalls => "stalls",
            Cause::MissedRho => "missed_rho",
        }
    }
}

/// What the scheduler and the hypervisor took from a recording's threads (ms), as the
/// rule reads it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RecordingLoad {
    pub window_ms: f64,
    pub worker_run_queue_ms: Option<f64>,
    pub generator_run_queue_ms: Option<f64>,
    /// Steal on the worker's CPU; where the worker is not pinned, the steal over every
    /// CPU divided by their number.
    pub worker_steal_ms: Option<f64>,
    /// CPU time the interference injector spun, when one ran.
    pub interference_ms: Option<f64>,
}

impl RecordingLoad {
    /// From a run's window figures, on a machine of `cpus` CPUs.
    pub fn of(w: &WindowLoad, cpus: usize, interference_ms: Option<f64>) -> Self {
        RecordingLoad {
            window_ms: w.window_ms,
            worker_run_queue_ms: w.worker_run_queue_ms,
            generator_run_queue_ms: w.generator_run_queue_ms,
            worker_steal_ms: w
                .worker_cpu_steal_ms
                .or_else(|| w.steal_ms.map(|s| s / cpus.max(1) as f64)),
            interference_ms,
        }
    }

    /// The rule: disturbed when the worker lost more than [`MAX_LOST_SHARE`] of the
    /// window (run-queue wait plus steal on its CPU) or the generator waited on its run
    /// queue for more than that; the cause is steal when steal is the larger part of the
    /// worker's loss, stalls otherwise. A figure the kernel did not give counts as zero;
    /// a window of no length is not judged disturbed.
    pub fn disturbed(&self) -> Option<Cause> {
        if self.window_ms <= 0.0 {
            return None;
        }
        let run_queue = self.worker_run_queue_ms.unwrap_or(0.0);
        let steal = self.worker_steal_ms.unwrap_or(0.0);
        let generator = self.generator_run_queue_ms.unwrap_or(0.0);
        let limit = MAX_LOST_SHARE * self.window_ms;
        if run_queue + steal > limit || generator > limit {
            Some(if steal > run_queue.max(generator) {
                Cause::Steal
            } else {
                Cause::Stalls
            })
        } else {
            None
        }
    }
}

/// The queue part's allowance for recording disturbed windows again, shared by its
/// stages in the order they run. Each re-recording is charged its planned length times
/// the recordings' overhead factor before it runs, so the account is the same on any
/// machine.
#[derive(Debug)]
pub struct RerecordBudget {
    limit_s: f64,
    spent_s: Cell<f64>,
    taken: Cell<usize>,
    refused: Cell<usize>,
}

/// The recordings' overhead beyond their window (gateway start, drain, models), as in
/// the stages' own budget.
const OVERHEAD: f64 = 1.15;

impl RerecordBudget {
    pub fn new(limit_s: f64) -> Self {
        RerecordBudget {
            limit_s: limit_s.max(0.0),
            spent_s: Cell::new(0.0),
            taken: Cell::new(0),
            refused: Cell::new(0),
        }
    }

    /// [`RERECORD_SHARE`] of the part's planned recording seconds.
    pub fn for_part(planned_s: f64) -> Self {
        Self::new(RERECORD_SHARE * planned_s)
    }

    /// Whether a re-recording of `seconds` fits; if it does, it is charged.
    pub fn take(&self, seconds: f64) -> bool {
        let cost = OVERHEAD * seconds;
        if self.spent_s.get() + cost <= self.limit_s + 1e-9 {
            self.spent_s.set(self.spent_s.get() + cost);
            self.taken.set(self.taken.get() + 1);
            true
        } else {
            self.refused.set(self.refused.get() + 1);
            false
        }
    }

    /// The account so far.
    pub fn summary(&self) -> RerecordSummary {
        RerecordSummary {
            limit_s: self.limit_s,
            spent_s: self.spent_s.get(),
            rerecords: self.taken.get(),
            refused: self.refused.get(),
        }
    }
}

/// The re-recording account of a run (`summary.json`, `degraded`'s `rerecord`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct RerecordSummary {
    /// The part's allowance and what was charged to it (s).
    pub limit_s: f64,
    pub spent_s: f64,
    /// Re-recordings made, and re-recordings a disturbed window needed but the allowance
    /// (or the per-point limit) refused.
    pub rerecords: usize,
    pub refused: usize,
}

/// Unjudged designed points by cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Causes {
    pub steal: usize,
    pub stalls: usize,
    pub missed_rho: usize,
    /// Designed points that did not run at all (the load test failed, or a case had no
    /// service time to start from).
    pub not_run: usize,
}

impl Causes {
    pub fn add(&mut self, c: Cause) {
        match c {
            Cause::Steal => self.steal += 1,
            Cause::Stalls => self.stalls += 1,
            Cause::MissedRho => self.missed_rho += 1,
        }
    }

    pub fn total(&self) -> usize {
        self.steal + self.stalls + self.missed_rho + self.not_run
    }

    /// `stalls 2, missed rho 1`: the non-zero causes.
    pub fn words(&self) -> String {
        [
            ("steal", self.steal),
            ("stalls", self.stalls),
            ("missed rho", self.missed_rho),
            ("not run", self.not_run),
        ]
        .iter()
        .filter(|c| c.1 > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// Why a designed point was not judged against the corrected model over its undisturbed
/// jobs; `None` when it was. A disturbed recording's cause comes first (its rho and its
/// undisturbed part are the disturbance's), then a missed rho, then an undisturbed part
/// too small to read (stalls).
pub fn unjudged_cause(p: &LoadPoint) -> Option<Cause> {
    if let Some(c) = p.recording.disturbed {
        return Some(c);
    }
    if p.calibration.rho_missed {
        return Some(Cause::MissedRho);
    }
    if p.undisturbed.wait_ms.is_none() || p.models.corrected_undisturbed_ms.is_none() {
        return Some(Cause::Stalls);
    }
    None
}

/// How a run's designed points fared: `summary.json`'s `degraded` when fewer were judged
/// than designed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Degraded {
    /// Designed points judged, and designed.
    pub judged: usize,
    pub designed: usize,
    /// The unjudged designed points by cause; they add up to designed - judged.
    pub causes: Causes,
    /// Over the designed points' kept recordings: steal on the worker's CPU, and the
    /// worker's and the generator's run-queue wait (ms, summed).
    pub steal_ms: f64,
    pub worker_run_queue_ms: f64,
    pub generator_run_queue_ms: f64,
    /// CPU time the interference injector took (ms, summed; 0 without it).
    pub interference_ms: f64,
    /// The part's re-recording account.
    pub rerecord: RerecordSummary,
    /// The other protocols' load points (their finding's set), when one went unjudged:
    /// the WTLS design can hold while another protocol's points do not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_protocols: Option<OtherProtocols>,
    /// The mutual WTLS series' load points (their finding's set), when one went
    /// unjudged: `short` names the series with its causes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wtls_mutual: Option<OtherProtocols>,
    /// Why, in words ([`Degraded::cause_words`]): the first screen quotes it.
    pub cause: String,
}

/// The other protocols' load points: judged of run, and each protocol short of its
/// points with the causes (`quic 0 of 3 (stalls 3)`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OtherProtocols {
    pub judged: usize,
    pub run: usize,
    pub short: Vec<String>,
}

impl OtherProtocols {
    /// `{series} 8 of 11 judged{lead} quic 0 of 3 (...)`.
    fn words(&self, series: &str, lead: &str) -> String {
        format!(
            "{series} {} of {} judged{lead} {}",
            self.judged,
            self.run,
            self.short.join(", ")
        )
    }
}

impl Degraded {
    /// The account of the designed points that ran (`ran`, chosen by the caller) out of
    /// `designed` in the plan, and the part's re-recordings; `None` when every designed
    /// point was judged.
    pub fn of(ran: &[&LoadPoint], designed: usize, rerecord: RerecordSummary) -> Option<Self> {
        let d = Self::account(ran, designed, rerecord);
        (d.judged < d.designed).then_some(d)
    }

    /// The account whether or not every designed point was judged.
    pub fn account(ran: &[&LoadPoint], designed: usize, rerecord: RerecordSummary) -> Self {
        let mut causes = Causes {
            not_run: designed.saturating_sub(ran.len()),
            ..Causes::default()
        };
        let mut d = Degraded {
            judged: 0,
            designed: designed.max(ran.len()),
            causes,
            steal_ms: 0.0,
            worker_run_queue_ms: 0.0,
            generator_run_queue_ms: 0.0,
            interference_ms: 0.0,
            rerecord,
            other_protocols: None,
            wtls_mutual: None,
            cause: String::new(),
        };
        for p in ran {
            match unjudged_cause(p) {
                Some(c) => causes.add(c),
                None => d.judged += 1,
            }
            let r = &p.recording.load;
            d.steal_ms += r.worker_steal_ms.unwrap_or(0.0);
            d.worker_run_queue_ms += r.worker_run_queue_ms.unwrap_or(0.0);
            d.generator_run_queue_ms += r.generator_run_queue_ms.unwrap_or(0.0);
            d.interference_ms += r.interference_ms.unwrap_or(0.0);
        }
        d.causes = causes;
        d.cause = d.cause_words();
        d
    }

    /// The causes in words: the unjudged designed points' (`stalls 2, missed rho 1`),
    /// then the other protocols' short points.
    pub fn cause_words(&self) -> String {
        let mut parts = Vec::new();
        if self.judged < self.designed {
            parts.push(self.causes.words());
        }
        if let Some(o) = &self.other_protocols {
            parts.push(o.words("the other protocols' load points", ", short:"));
        }
        if let Some(m) = &self.wtls_mutual {
            parts.push(m.words("the mutual WTLS load points", ":"));
        }
        parts.join("; ")
    }

    /// The headline's words: "13 of 16 designed points judged (missed_rho 2, stalls 1)".
    pub fn words(&self) -> String {
        format!(
            "degraded run: {} of {} designed load points judged ({})",
            self.judged,
            self.designed,
            self.cause_words()
        )
    }
}

#[cfg(test)]
mod tests;
