//! The load test's time budget (see [`Budget`]).

use crate::evaluate::queue::disturbance::RerecordBudget;

/// The load test's time budget: its planned recordings and what calibration may add,
/// so that the full evaluation stays within 15 minutes on 2 cores however the machine
/// behaves. Warm-ups and repeats are spent while the points still to come fit; past
/// that, a point warms up once and a recording off target is reported missed.
pub(in crate::evaluate::queue) struct Budget<'a> {
    start: std::time::Instant,
    limit_s: f64,
    /// Planned recording seconds of the points not yet run.
    remaining_s: f64,
    /// The queue part's allowance for recording disturbed windows again, shared by its
    /// stages (see `disturbance`).
    rerecord: &'a RerecordBudget,
}

impl<'a> Budget<'a> {
    /// Overhead of a recording beyond its window (gateway start, key shares, drain,
    /// models), as a factor, and the calibration's allowance per point (s): warm-ups of
    /// up to 1.5 s, and a repeat of a point that missed its rho. At 4 s a point the
    /// first full run spent the allowance before its last (RSA) points, which then
    /// warmed up once, were not repeated, and four of them missed their target rho.
    const OVERHEAD: f64 = 1.15;
    const PER_POINT_S: f64 = 6.0;

    pub(in crate::evaluate::queue) fn new(
        planned_s: f64,
        points: usize,
        rerecord: &'a RerecordBudget,
    ) -> Self {
        Budget {
            start: std::time::Instant::now(),
            limit_s: Self::OVERHEAD * planned_s + Self::PER_POINT_S * points as f64,
            remaining_s: planned_s,
            rerecord,
        }
    }

    /// Whether a disturbed recording of `seconds` may be recorded again (charged to the
    /// part's allowance when it may).
    pub(super) fn rerecord(&self, seconds: f64) -> bool {
        self.rerecord.take(seconds)
    }

    /// Whether `extra_s` more seconds still leave room for the points to come.
    pub(super) fn allows(&self, extra_s: f64) -> bool {
        self.allows_at(self.start.elapsed().as_secs_f64(), extra_s)
    }

    /// [`Budget::allows`] once `elapsed_s` seconds have passed.
    pub(super) fn allows_at(&self, elapsed_s: f64, extra_s: f64) -> bool {
        elapsed_s + Self::OVERHEAD * (self.remaining_s + extra_s) <= self.limit_s
    }

    pub(in crate::evaluate::queue) fn done(&mut self, planned_s: f64) {
        self.remaining_s = (self.remaining_s - planned_s).max(0.0);
    }
}
