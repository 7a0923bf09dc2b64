//! Load calibrated while it runs: each load point reaches its target utilisation by
//! measuring it, not by trusting a service time measured minutes before.
//!
//! Why: the arrival rate of a point used to be set once per case from a short calibration
//! run before the points, and this machine's speed drifts 10-20 % within minutes (three
//! capacity runs in a row gave 9 051, 8 978 and 13 961 handshakes/s). Near saturation a
//! few percent of error in rho moves the Pollaczek-Khinchin wait by a factor, so a point
//! that lands at rho 0.98 for a target of 0.7 tests nothing. Here every point first runs
//! short warm-ups in its own conditions (same gateway, pinning, round trip), reads the
//! worker's occupancy over each, and scales the rate until the measured rho is within
//! [`WARMUP_TOLERANCE`] of the target; then it records. A recording whose measured rho
//! ends more than [`MISS_TOLERANCE`] from the target is repeated at the corrected rate, up
//! to [`MAX_RECORDINGS`] recordings in all, and otherwise reported as missed with both
//! numbers. A warm-up or recording the disturbance rule (`disturbance`) judges disturbed
//! is not learned from, and a disturbed recording is recorded again at the same rate
//! while the queue part's allowance lasts.
//!
//! The logic is pure over a measuring function (rate in, measured rho out), so it is
//! tested with a fake occupancy law instead of a machine.

/// A warm-up within this distance of the target rho ends the calibration.
pub const WARMUP_TOLERANCE: f64 = 0.03;
/// A recording farther than this from its target rho is repeated, then missed.
pub const MISS_TOLERANCE: f64 = 0.05;
use super::disturbance::MAX_RERECORDS_PER_POINT;

/// Most undisturbed recordings per point. A drift of the shared machine during one recording (a
/// neighbour's burst, a frequency change) moves its rho off target; two such drifts in
/// a row happen on a busy machine too (one point of 24 in two of three full runs), a
/// third is rarer. The repeats select on the measured load only, never on the models'
/// errors, and each costs one recording's time when the budget allows it.
pub const MAX_RECORDINGS: usize = 3;
/// Most warm-ups per point: with the occupancy nearly proportional to the rate, one
/// correction normally suffices; the rest absorb a drift during the calibration.
pub const MAX_WARMUPS: usize = 4;
/// A single correction scales the rate by at most this factor either way: a warm-up
/// disturbed by a stall of the shared machine must not throw the next one far off.
const MAX_STEP: f64 = 2.0;

/// One run at an offered rate and the utilisation it measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trial {
    /// Offered handshakes/s.
    pub lambda_hs_per_s: f64,
    /// The worker's occupancy over the run's steady window.
    pub measured_rho: f64,
}

/// The worker occupancy one handshake per second brings (rho per handshake/s), the
/// slope the rate of a point is set from; carried from point to point, so it follows the
/// machine's drift, and within a point pooled over that point's runs.
///
/// Why pooled: on this shared machine one run's slope scatters by 5-8 % from the next at
/// the same rate (one point's 0.41 ms a handshake, the next point's second recording's
/// 0.55 and its third's 0.48), as much as [`MISS_TOLERANCE`] allows at rho 0.7. Taking only
/// the newest slope made each repeat chase the previous run's swing; the median of the
/// point's slopes near the newest rate averages the swing out (the mean of two, the
/// middle of three, so one run that a stall inflated does not carry the point). Slopes
/// measured at rates more than [`POOL_SPAN`] away are left out: the occupancy per
/// handshake falls a little as the rate rises (the worker reads more datagrams per wake),
/// and a first warm-up from a stale estimate may have run far from the point's rate.
#[derive(Debug, Clone, PartialEq)]
pub struct RateEstimate {
    rho_per_hs: f64,
    /// The current point's runs, oldest first.
    point: Vec<Trial>,
}

/// Relative distance in offered rate within which a point's runs are pooled.
pub const POOL_SPAN: f64 = 0.2;

impl RateEstimate {
    /// From a per-handshake occupancy (ms).
    pub fn from_handshake_ms(ms: f64) -> Self {
        RateEstimate {
            rho_per_hs: ms / 1000.0,
            point: Vec::new(),
        }
    }

    /// The rate (handshakes/s) expected to bring utilisation `rho`.
    pub fn rate_for(&self, rho: f64) -> f64 {
        rho / self.rho_per_hs
    }

    /// The per-handshake occupancy (ms) the estimate stands for.
    pub fn handshake_ms(&self) -> f64 {
        self.rho_per_hs * 1000.0
    }

    /// Starts a new point: its runs pool among themselves, the earlier point's only
    /// through the slope they left.
    pub fn begin_point(&mut self) {
        self.point.clear();
    }

    /// Takes a run: the estimate becomes the median slope of the point's runs within
    /// [`POOL_SPAN`] of this run's rate, moved at most [`MAX_STEP`] from the current one;
    /// a run that measured nothing leaves the estimate as it was.
    pub fn update(&mut self, t: Trial) {
        if !(t.lambda_hs_per_s > 0.0 && t.measured_rho > 0.0 && t.measured_rho.is_finite()) {
            return;
        }
        self.point.push(t);
        let near = |p: &&Trial| {
            (p.lambda_hs_per_s - t.lambda_hs_per_s).abs() <= POOL_SPAN * t.lambda_hs_per_s
        };
        let slopes: Vec<f64> = self
            .point
            .iter()
            .filter(near)
            .map(|p| p.measured_rho / p.lambda_hs_per_s)
            .collect();
        // Never empty: the run just taken is near itself.
        if let Some(median) = wtlsperf_models::stats::median(&slopes) {
            self.rho_per_hs = median.clamp(self.rho_per_hs / MAX_STEP, self.rho_per_hs * MAX_STEP);
        }
    }
}

/// Whether a measured rho is within `tolerance` of its target.
pub fn on_target(target: f64, measured: f64, tolerance: f64) -> bool {
    (measured - target).abs() <= tolerance + 1e-12
}

/// The warm-ups of a point and the rate it records at.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub warmups: Vec<Trial>,
    /// The rate the recording offers (handshakes/s).
    pub lambda_hs_per_s: f64,
}

impl Calibration {
    /// The last warm-up's measured rho (`None` without warm-ups).
    pub fn last_rho(&self) -> Option<f64> {
        self.warmups.last().map(|t| t.measured_rho)
    }
}

/// Warm-ups at the estimated rate until one measures within [`WARMUP_TOLERANCE`] of
/// `target` (at most `max_warmups`, at least one); the estimate learns from each
/// undisturbed one, and the recording then offers the rate the last one implies.
/// `measure` runs the point's conditions at a rate and returns the measured rho and
/// whether the run was disturbed (see `disturbance`): a disturbed warm-up's rho is the
/// disturbance's as much as the load's, so the calibration neither learns from it nor
/// ends on it (it still counts towards `max_warmups`, which bounds the time).
pub fn calibrate(
    target: f64,
    max_warmups: usize,
    estimate: &mut RateEstimate,
    mut measure: impl FnMut(f64) -> anyhow::Result<(f64, bool)>,
) -> anyhow::Result<Calibration> {
    estimate.begin_point();
    let mut warmups = Vec::new();
    while warmups.len() < max_warmups.max(1) {
        let lambda = estimate.rate_for(target);
        let (measured_rho, disturbed) = measure(lambda)?;
        let t = Trial {
            lambda_hs_per_s: lambda,
            measured_rho,
        };
        warmups.push(t);
        if disturbed {
            continue;
        }
        estimate.update(t);
        if on_target(target, t.measured_rho, WARMUP_TOLERANCE) {
            break;
        }
    }
    Ok(Calibration {
        warmups,
        lambda_hs_per_s: estimate.rate_for(target),
    })
}

/// One recording as `record` sees it: the point, its measured rho, and whether the
/// disturbance rule judged it disturbed.
#[derive(Debug, Clone, PartialEq)]
pub struct Take<P> {
    pub point: P,
    pub rho: f64,
    pub disturbed: bool,
}

/// A recorded point: what the recording returned, its trial, how many recordings it took
/// in all, whether its measured rho still missed the target by more than
/// [`MISS_TOLERANCE`], whether the kept recording is a disturbed one (every window of
/// the point was, and the re-recording allowance ran out), and how many disturbed
/// recordings were recorded again.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded<P> {
    pub point: P,
    pub trial: Trial,
    pub attempts: usize,
    pub missed: bool,
    pub disturbed: bool,
    pub rerecords: usize,
}

/// Records at `lambda`. A disturbed recording is recorded again at the same rate, at most
/// [`MAX_RERECORDS_PER_POINT`] times and while `may_rerecord` (the part's allowance, which
/// it charges) says so; the rate estimate does not learn from it. An undisturbed
/// recording whose measured rho misses `target` by more than [`MISS_TOLERANCE`] is
/// repeated at the rate the point's pooled runs imply (see [`RateEstimate`]), up to
/// [`MAX_RECORDINGS`] undisturbed recordings, when `may_repeat` says the time budget
/// allows. The last undisturbed recording is kept whatever it measured; a disturbed one
/// only when there is none. `run` records at a rate (with the recording's number).
pub fn record<P>(
    target: f64,
    lambda: f64,
    estimate: &mut RateEstimate,
    may_repeat: impl Fn() -> bool,
    mut may_rerecord: impl FnMut() -> bool,
    mut run: impl FnMut(f64, usize) -> anyhow::Result<Take<P>>,
) -> anyhow::Result<Recorded<P>> {
    let mut lambda = lambda;
    let (mut attempts, mut undisturbed, mut rerecords) = (0, 0, 0);
    let mut kept: Option<Recorded<P>> = None;
    loop {
        attempts += 1;
        let take = run(lambda, attempts)?;
        let trial = Trial {
            lambda_hs_per_s: lambda,
            measured_rho: take.rho,
        };
        let hit = on_target(target, take.rho, MISS_TOLERANCE);
        let this = Recorded {
            point: take.point,
            trial,
            attempts,
            missed: !hit,
            disturbed: take.disturbed,
            rerecords,
        };
        let done = if take.disturbed {
            // An undisturbed recording is never replaced by a disturbed one.
            if kept.as_ref().is_none_or(|k| k.disturbed) {
                kept = Some(this);
            }
            let again = rerecords < MAX_RERECORDS_PER_POINT && may_rerecord();
            rerecords += usize::from(again);
            !again
        } else {
            undisturbed += 1;
            estimate.update(trial);
            kept = Some(this);
            hit || undisturbed == MAX_RECORDINGS || !may_repeat()
        };
        if done {
            // Never empty: the recording just made was kept unless an undisturbed one was.
            let mut k = kept.ok_or_else(|| anyhow::anyhow!("no recording kept"))?;
            k.attempts = attempts;
            k.rerecords = rerecords;
            return Ok(k);
        }
        if !take.disturbed {
            lambda = estimate.rate_for(target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake gateway: occupancy proportional to the rate with a per-handshake cost that
    /// changes from run to run (the machine's drift), read exactly.
    struct Drifting {
        costs_ms: Vec<f64>,
        runs: usize,
    }

    /// `record` at 0.5 from 250/s on a drifting machine, never disturbed.
    fn on_drifting(est: &mut RateEstimate, gw: &mut Drifting, may_repeat: bool) -> Recorded<usize> {
        record(
            0.5,
            250.0,
            est,
            || may_repeat,
            || false,
            |l, n| Ok(clean(n, gw.rho(l))),
        )
        .unwrap()
    }

    fn clean<P>(point: P, rho: f64) -> Take<P> {
        Take {
            point,
            rho,
            disturbed: false,
        }
    }

    fn trial(lambda_hs_per_s: f64, measured_rho: f64) -> Trial {
        Trial {
            lambda_hs_per_s,
            measured_rho,
        }
    }

    impl Drifting {
        fn rho(&mut self, lambda: f64) -> f64 {
            let ms = self.costs_ms[self.runs.min(self.costs_ms.len() - 1)];
            self.runs += 1;
            lambda * ms / 1000.0
        }
    }

    #[test]
    fn a_stale_service_time_is_corrected_by_one_warm_up() {
        // Calibrated at 2 ms per handshake; the machine now needs 3 ms.
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let mut gw = Drifting {
            costs_ms: vec![3.0],
            runs: 0,
        };
        let c = calibrate(0.7, MAX_WARMUPS, &mut est, |l| Ok((gw.rho(l), false))).unwrap();
        // The first warm-up offered 350/s and measured 1.05 (capped at twice the step),
        // the second is on target.
        assert_eq!(c.warmups.len(), 2);
        assert!((c.warmups[0].lambda_hs_per_s - 350.0).abs() < 1e-9);
        assert!((c.warmups[0].measured_rho - 1.05).abs() < 1e-9);
        assert!(on_target(0.7, c.last_rho().unwrap(), WARMUP_TOLERANCE));
        assert!((c.lambda_hs_per_s - 700.0 / 3.0).abs() < 1e-9);
        assert!((est.handshake_ms() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn calibration_stops_after_its_last_warm_up_however_far_off() {
        // A machine whose cost doubles on every run: never on target.
        let mut est = RateEstimate::from_handshake_ms(1.0);
        let mut n = 0;
        let c = calibrate(0.5, MAX_WARMUPS, &mut est, |l| {
            n += 1;
            Ok((l * f64::from(1u32 << n) / 1000.0, false))
        })
        .unwrap();
        assert_eq!(c.warmups.len(), MAX_WARMUPS);
        assert!(!on_target(0.5, c.last_rho().unwrap(), WARMUP_TOLERANCE));
    }

    #[test]
    fn one_correction_is_bounded_by_the_step() {
        let mut est = RateEstimate::from_handshake_ms(1.0);
        est.update(trial(100.0, 0.9));
        assert!((est.handshake_ms() - 2.0).abs() < 1e-12);
        // Nothing measured: unchanged.
        est.update(trial(100.0, 0.0));
        assert!((est.handshake_ms() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_recording_off_target_is_repeated_then_missed() {
        // On target at once: one recording.
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let r = record(
            0.5,
            250.0,
            &mut est,
            || true,
            || false,
            |l, _| Ok(clean("a", l * 2.0 / 1000.0)),
        )
        .unwrap();
        assert_eq!((r.point, r.attempts, r.missed), ("a", 1, false));
        // Drifted during the recording (0.6 for 0.5): repeated at the corrected rate,
        // which lands.
        let mut gw = Drifting {
            costs_ms: vec![2.4],
            runs: 0,
        };
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let r = on_drifting(&mut est, &mut gw, true);
        assert_eq!((r.point, r.attempts, r.missed), (2, 2, false));
        assert!((r.trial.measured_rho - 0.5).abs() < 1e-9);
        // Swinging the other way during the first repeat, on target at the second (which
        // offers the pooled slope of the two): kept, three recordings.
        let mut gw = Drifting {
            costs_ms: vec![2.3, 1.7, 2.0],
            runs: 0,
        };
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let r = on_drifting(&mut est, &mut gw, true);
        assert_eq!((r.point, r.attempts, r.missed), (3, 3, false));
        // Drifting again at every repeat: missed after the last, and the kept point says
        // by how much.
        let mut gw = Drifting {
            costs_ms: vec![2.4, 3.0, 4.5],
            runs: 0,
        };
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let r = on_drifting(&mut est, &mut gw, true);
        assert_eq!((r.point, r.attempts, r.missed), (3, MAX_RECORDINGS, true));
        assert!(
            (r.trial.measured_rho - 0.5).abs() > MISS_TOLERANCE,
            "{}",
            r.trial.measured_rho
        );
        // No time left for a repeat: the first recording is kept, missed.
        let mut gw = Drifting {
            costs_ms: vec![2.4],
            runs: 0,
        };
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let r = on_drifting(&mut est, &mut gw, false);
        assert_eq!((r.point, r.attempts, r.missed), (1, 1, true));
        // Out of budget, the calibration still runs one warm-up.
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let c = calibrate(0.5, 0, &mut est, |l| Ok((l * 3.0 / 1000.0, false))).unwrap();
        assert_eq!(c.warmups.len(), 1);
    }

    #[test]
    fn a_swinging_machine_is_averaged_not_chased() {
        // The cost per handshake swings around 2 ms from run to run: 2.16, 1.86, 2.0.
        // Taking the newest slope alone, the third recording would offer 0.7/1.86 per ms
        // (376/s) and measure 0.753, a miss; pooled, it offers the mean of the first two
        // slopes (348/s) and lands.
        let mut gw = Drifting {
            costs_ms: vec![2.16, 1.86, 2.0],
            runs: 0,
        };
        let mut est = RateEstimate::from_handshake_ms(2.0);
        est.begin_point();
        let r = record(
            0.7,
            350.0,
            &mut est,
            || true,
            || false,
            |l, n| Ok(clean(n, gw.rho(l))),
        )
        .unwrap();
        assert_eq!((r.point, r.attempts, r.missed), (3, 3, false));
        let pooled = 0.7 / ((2.16 + 1.86) / 2.0) * 1000.0;
        assert!((r.trial.lambda_hs_per_s - pooled).abs() < 1e-9);
        assert!((r.trial.measured_rho - 0.7).abs() < 0.01);
    }

    #[test]
    fn runs_far_from_the_newest_rate_or_of_an_earlier_point_are_not_pooled() {
        let mut est = RateEstimate::from_handshake_ms(1.0);
        est.update(trial(100.0, 0.3));
        // 3 ms at 100/s, then 2 ms at 200/s: 100 is farther than the span from 200.
        est.update(trial(200.0, 0.4));
        assert!((est.handshake_ms() - 2.0).abs() < 1e-12);
        // Within the span: the mean of the two near slopes (2 and 2.2 ms).
        est.update(trial(220.0, 0.484));
        assert!((est.handshake_ms() - 2.1).abs() < 1e-9);
        // Three near slopes: the middle one, whatever the outlier.
        est.update(trial(210.0, 2.0));
        assert!((est.handshake_ms() - 2.2).abs() < 1e-9);
        // A new point starts from the slope left, alone.
        est.begin_point();
        est.update(trial(210.0, 0.42));
        assert!((est.handshake_ms() - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_measuring_error_ends_the_calibration() {
        let mut est = RateEstimate::from_handshake_ms(1.0);
        assert!(calibrate(0.5, 1, &mut est, |_| anyhow::bail!("gateway down")).is_err());
    }

    /// A scripted machine: each recording's (rho, disturbed), in order.
    fn scripted(
        script: &[(f64, bool)],
    ) -> impl FnMut(f64, usize) -> anyhow::Result<Take<usize>> + '_ {
        move |_, n| {
            let (rho, disturbed) = script[n - 1];
            Ok(Take {
                point: n,
                rho,
                disturbed,
            })
        }
    }

    #[test]
    fn a_disturbed_recording_is_recorded_again_at_the_same_rate() {
        // Disturbed at 0.9 (a rate far off would follow if it were learned from), then an
        // undisturbed recording on target at the same rate.
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let mut rates = Vec::new();
        let script = [(0.9, true), (0.5, false)];
        let mut run = scripted(&script);
        let r = record(
            0.5,
            250.0,
            &mut est,
            || true,
            || true,
            |l, n| {
                rates.push(l);
                run(l, n)
            },
        )
        .unwrap();
        assert_eq!((r.point, r.attempts, r.rerecords), (2, 2, 1));
        assert!(!r.disturbed && !r.missed);
        assert_eq!(rates, [250.0, 250.0]);
        assert!((est.handshake_ms() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn re_recording_stops_at_the_allowance_and_the_per_point_limit() {
        // Every window disturbed, the allowance unlimited: the per-point limit ends it,
        // and the last disturbed recording is kept, marked.
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let script = [(0.9, true); 1 + MAX_RERECORDS_PER_POINT];
        let r = record(0.5, 250.0, &mut est, || true, || true, scripted(&script)).unwrap();
        assert_eq!(r.attempts, 1 + MAX_RERECORDS_PER_POINT);
        assert_eq!(r.rerecords, MAX_RERECORDS_PER_POINT);
        assert_eq!(r.point, 1 + MAX_RERECORDS_PER_POINT);
        assert!(r.disturbed && r.missed);
        // An allowance of one re-recording (charged when taken).
        let mut left = 1;
        let allowance = || {
            let ok = left > 0;
            left -= usize::from(ok);
            ok
        };
        let r = record(0.5, 250.0, &mut est, || true, allowance, scripted(&script)).unwrap();
        assert_eq!((r.attempts, r.rerecords, r.disturbed), (2, 1, true));
        // An undisturbed recording off target, then a disturbed repeat the allowance
        // refuses: the undisturbed one is kept, missed, not disturbed.
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let script = [(0.6, false), (0.5, true)];
        let r = record(0.5, 250.0, &mut est, || true, || false, scripted(&script)).unwrap();
        assert_eq!((r.point, r.attempts, r.rerecords), (1, 2, 0));
        assert!(r.missed && !r.disturbed);
    }

    #[test]
    fn a_disturbed_warm_up_is_not_learned_from() {
        let mut est = RateEstimate::from_handshake_ms(2.0);
        let mut n = 0;
        // The first warm-up was disturbed (read 0.95 for 0.5); the second measures the
        // machine as it is (2 ms a handshake) at the unchanged rate and ends.
        let c = calibrate(0.5, MAX_WARMUPS, &mut est, |l| {
            n += 1;
            Ok(if n == 1 {
                (0.95, true)
            } else {
                (l * 2.0 / 1000.0, false)
            })
        })
        .unwrap();
        assert_eq!(c.warmups.len(), 2);
        assert_eq!(c.warmups[0].lambda_hs_per_s, c.warmups[1].lambda_hs_per_s);
        assert!((c.lambda_hs_per_s - 250.0).abs() < 1e-9);
    }
}
