//! The load test beyond its own points: the Poisson premise under round trips that are
//! not exponential, and handshakes of three or more jobs.
//!
//! **Robustness of the premise.** The load test's own bearer points hold each client
//! answer for an exponential delay, and a Poisson stream delayed by independent
//! exponential delays is Poisson by construction: they cannot show where the premise of
//! Eq. 3.12 stops. These points run the same case and calibration with round trips of
//! the same 20 ms mean under other laws ([`RoundTripLaw`]): nearly fixed (+-10 % jitter),
//! the thesis' GSM CSD traversal law (section 4.3.1: 391.3 ms mean, 90 ms standard
//! deviation, scaled to the mean), heavy-tailed (Pareto, infinite variance), and bimodal
//! with half the answers at once, which brings part of each handshake's jobs in step with
//! the queue as bare loopback does. The scale stays 20 ms: what decides the premise is
//! the round trip beside a job's time at the gateway (well under a millisecond), and a
//! 391 ms mean would leave a run of seconds mostly ramp and drain.
//!
//! **Mutual handshakes of three or more jobs.** The load test's own points are
//! server-authenticated with one datagram per flight, two jobs a handshake. These points
//! run mutual handshakes with one datagram per message, the thesis' unit of a gateway job
//! (its Eq. 3.19 mixes per-message service times): the client's second flight then
//! brings the gateway its Certificate, key exchange, CertificateVerify (RSA),
//! ChangeCipherSpec and Finished as separate jobs, back to back. An ECC case (283k/283k,
//! ECDH_ECDSA) and an RSA case (rsa2048/rsa2048, whose client signs a CertificateVerify
//! per handshake on the generator's one core, so no point goes above 0.6).
//!
//! Both sets are judged as the load test's own points (the corrected model at each
//! point's measured rho, over the whole window and the undisturbed jobs, and the FIFO
//! replay), and each point also by an interval rule ([`PointVerdict`]).

use wtls::handshake::{AuthMode, Packing};
use wtls::suite::Case;
use wtlsperf_models::Authentication;

use super::calibrate::RateEstimate;
use super::point::{packing_name, LoadPoint};
use super::reality::{calibrated_point, Budget, Conditions, WarmupLength, BEARER_ROUND_TRIP_MS};
use crate::evaluate::context::{Ctx, Mode};
use crate::evaluate::processing::ProcessingResults;
use wtlsperf_drivers::load::RoundTripLaw;
use wtlsperf_drivers::pki_store::PkiStore;

/// One point of the variant plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VariantPoint {
    pub case: &'static str,
    pub auth: AuthMode,
    pub packing: Packing,
    pub law: RoundTripLaw,
    pub rho: f64,
    pub seconds: f64,
}

/// The variant points of a mode.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantPlan {
    pub warmup: WarmupLength,
    pub robustness: Vec<VariantPoint>,
    pub mutual: Vec<VariantPoint>,
}

impl VariantPlan {
    /// Planned recording seconds of every point.
    pub fn planned_s(&self) -> f64 {
        self.robustness
            .iter()
            .chain(&self.mutual)
            .map(|p| p.seconds)
            .sum()
    }
}

/// The laws the premise is tested under, beside the load test's exponential one.
pub const ROBUSTNESS_LAWS: [RoundTripLaw; 4] = [
    RoundTripLaw::Jittered,
    RoundTripLaw::GsmCsd,
    RoundTripLaw::Pareto,
    RoundTripLaw::Bimodal,
];

/// The case of the robustness points: K-283's jobs last hundreds of microseconds, so the
/// generator's share of the machine stays small, and the load test's own exponential
/// points of the same case at the same utilisations are the baseline.
pub const ROBUSTNESS_CASE: &str = "283k/283k";

/// Which variant points a run takes: the main evaluation's, or the premise's test
/// alone (`evaluate --only robustness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariantScope {
    /// The evaluation's own run: the mutual points, and in the short modes a glimpse of
    /// the robustness points (one load per law) so that every section runs end to end.
    Main,
    /// The Poisson premise's test alone, long enough to decide: every law including the
    /// exponential baseline, at three loads.
    Robustness,
}

/// The variant points of a mode and scope.
///
/// The full evaluation runs the mutual cases at two loads, 5 s a point: at rho 0.3-0.7
/// a mean wait converges within seconds. It leaves the robustness points to their own
/// run: a law's verdict needs its error's interval inside +-15 %, and at 5 s a point the
/// batch-means interval of a mean wait of a tenth of a millisecond is about +-20 %
/// (first full runs: every point but one undecided), while points long enough to decide
/// (20 s) do not fit the evaluation's 15 minutes (docs/results.md, "Time budget"). The
/// premise's own run takes the exponential law as a point of its own, so that the
/// baseline is measured as long and in the same run as the laws it is compared with.
pub fn variant_plan(mode: Mode, scope: VariantScope) -> VariantPlan {
    let robustness = |laws: &[RoundTripLaw], case, rhos: &[f64], seconds| {
        laws.iter()
            .flat_map(|&law| {
                rhos.iter().map(move |&rho| VariantPoint {
                    case,
                    auth: AuthMode::ServerAuth,
                    packing: Packing::FlightPerDatagram,
                    law,
                    rho,
                    seconds,
                })
            })
            .collect::<Vec<_>>()
    };
    let mutual = |cases: &[&'static str], rhos: &[f64], seconds| {
        cases
            .iter()
            .flat_map(|&case| {
                rhos.iter().map(move |&rho| VariantPoint {
                    case,
                    auth: AuthMode::Mutual,
                    packing: Packing::MessagePerDatagram,
                    law: RoundTripLaw::Exponential,
                    rho,
                    seconds,
                })
            })
            .collect::<Vec<_>>()
    };
    let mut every_law = vec![RoundTripLaw::Exponential];
    every_law.extend(ROBUSTNESS_LAWS);
    let warmup = match mode {
        Mode::Smoke => WarmupLength {
            handshakes: 100.0,
            min_s: 0.3,
            max_s: 0.3,
        },
        Mode::Quick => WarmupLength {
            handshakes: 300.0,
            min_s: 0.8,
            max_s: 1.2,
        },
        Mode::Full => WarmupLength {
            handshakes: 400.0,
            min_s: 0.6,
            max_s: 1.5,
        },
    };
    let (robustness, mutual) = match (scope, mode) {
        (VariantScope::Main, Mode::Smoke) => (
            robustness(&[RoundTripLaw::GsmCsd], "256p/256p", &[0.3], 0.5),
            mutual(&["256p/256p"], &[0.3], 0.5),
        ),
        // One law, as the smoke run: the main run only shows the variant's path works;
        // the premise's test is `--only robustness`, every law at three loads.
        (VariantScope::Main, Mode::Quick) => (
            robustness(&[RoundTripLaw::GsmCsd], ROBUSTNESS_CASE, &[0.6], 2.0),
            mutual(&["283k/283k", "rsa2048/rsa2048"], &[0.5], 2.0),
        ),
        (VariantScope::Main, Mode::Full) => (
            Vec::new(),
            mutual(&["283k/283k", "rsa2048/rsa2048"], &[0.3, 0.6], 5.0),
        ),
        (VariantScope::Robustness, Mode::Smoke) => (
            robustness(&every_law[..2], "256p/256p", &[0.3], 0.5),
            Vec::new(),
        ),
        (VariantScope::Robustness, Mode::Quick) => (
            robustness(&every_law, ROBUSTNESS_CASE, &[0.5], 6.0),
            Vec::new(),
        ),
        (VariantScope::Robustness, Mode::Full) => (
            robustness(&every_law, ROBUSTNESS_CASE, &[0.3, 0.5, 0.7], 20.0),
            Vec::new(),
        ),
    };
    VariantPlan {
        warmup,
        robustness,
        mutual,
    }
}

/// Runs the variant points of the mode and scope: (robustness points, mutual points).
pub fn run(
    ctx: &Ctx,
    store: &PkiStore,
    processing: &ProcessingResults,
    scope: VariantScope,
    rerecord: &super::disturbance::RerecordBudget,
) -> anyhow::Result<(Vec<LoadPoint>, Vec<LoadPoint>)> {
    let plan = variant_plan(ctx.mode, scope);
    let sim_jobs = if ctx.mode == Mode::Full {
        200_000
    } else {
        20_000
    };
    let all: Vec<VariantPoint> = plan
        .robustness
        .iter()
        .chain(&plan.mutual)
        .copied()
        .collect();
    let mut budget = Budget::new(all.iter().map(|p| p.seconds).sum(), all.len(), rerecord);
    // One rate estimate per case, authentication and packing: the law of the round trip
    // does not change what a handshake costs the gateway.
    let mut estimates: Vec<((Case, AuthMode, Packing), RateEstimate)> = Vec::new();
    let mut robustness = Vec::new();
    let mut mutual = Vec::new();
    for (i, v) in all.iter().enumerate() {
        let case = Case::parse(v.case)?;
        let key = (case, v.auth, v.packing);
        let slot = match estimates.iter().position(|(k, _)| *k == key) {
            Some(slot) => slot,
            None => {
                estimates.push((key, first_guess(processing, &case, v.auth)));
                estimates.len() - 1
            }
        };
        let plain = Conditions::plain(v.case, case, v.rho, BEARER_ROUND_TRIP_MS);
        let conditions = Conditions {
            law: v.law,
            packing: v.packing,
            ..if v.auth == AuthMode::Mutual {
                plain.mutual()
            } else {
                plain
            }
        };
        let p = calibrated_point(
            ctx,
            store,
            &conditions,
            &mut estimates[slot].1,
            &budget,
            plan.warmup,
            v.seconds,
            sim_jobs,
        )?;
        budget.done(v.seconds);
        if i < plan.robustness.len() {
            robustness.push(p);
        } else {
            mutual.push(p);
        }
    }
    Ok((robustness, mutual))
}

/// The first guess of a case's per-handshake occupancy: its in-process service time, or
/// a millisecond when the processing part did not measure it (the warm-ups correct
/// either).
fn first_guess(processing: &ProcessingResults, case: &Case, auth: AuthMode) -> RateEstimate {
    let auth = match auth {
        AuthMode::Mutual => Authentication::Mutual,
        AuthMode::ServerAuth => Authentication::ServerAuth,
    };
    let ms: f64 = processing
        .find(case, auth)
        .map(|r| r.mean_jobs().iter().sum())
        .filter(|ms: &f64| *ms > 0.0)
        .unwrap_or(1.0);
    RateEstimate::from_handshake_ms(ms)
}

/// What one point says about a model under the interval rule: the relative error's
/// interval, the model against the measured mean wait's 95 % interval, inside the 15 %
/// band, wholly outside it, or across its edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointVerdict {
    /// The error's whole interval lies within +-15 %.
    Keeps,
    /// The error's whole interval lies beyond +-15 %: a miss the noise cannot explain.
    Stops,
    /// The interval straddles the 15 % line: the run cannot tell.
    Undecided,
    /// No measurement or model, or the point missed its target rho or lies above 0.8.
    NotJudged,
}

impl PointVerdict {
    /// The rule: the model `w` against a measured mean `m` with 95 % half-width `h`; the
    /// relative error runs from w/(m+h) - 1 to w/(m-h) - 1 (unbounded above when the
    /// interval reaches zero).
    pub fn of(w: Option<f64>, m: Option<f64>, h: Option<f64>) -> Self {
        let (Some(w), Some(m)) = (w, m) else {
            return PointVerdict::NotJudged;
        };
        if m <= 0.0 || !w.is_finite() {
            return PointVerdict::NotJudged;
        }
        let h = h.unwrap_or(0.0).max(0.0);
        let low = w / (m + h) - 1.0;
        let high = if m > h {
            w / (m - h) - 1.0
        } else {
            f64::INFINITY
        };
        if low >= -0.15 && high <= 0.15 {
            PointVerdict::Keeps
        } else if low > 0.15 || high < -0.15 {
            PointVerdict::Stops
        } else {
            PointVerdict::Undecided
        }
    }

    /// Whether a point is judged at all (the findings' rule 4): its target rho is at
    /// most 0.8, its measured rho landed within 0.05 of it, and its kept recording was
    /// not disturbed (docs/results.md: such a point is judged in neither view).
    pub fn judged(p: &LoadPoint) -> bool {
        !p.calibration.rho_missed
            && p.calibration.target_rho <= 0.8 + 1e-9
            && p.recording.disturbed.is_none()
    }

    /// A model's prediction `w` at a point against a measured mean wait and its 95 %
    /// half-width: the rule where the point is judged, [`PointVerdict::NotJudged`]
    /// otherwise.
    pub fn at(p: &LoadPoint, w: Option<f64>, measured: Option<(f64, Option<f64>)>) -> Self {
        match measured {
            Some((m, h)) if Self::judged(p) => Self::of(w, Some(m), h),
            _ => PointVerdict::NotJudged,
        }
    }

    /// A load point's verdict for the corrected model over its undisturbed jobs (the
    /// load test's headline reading), or over its whole window.
    pub fn of_point(p: &LoadPoint, whole_window: bool) -> Self {
        if whole_window {
            Self::at(p, p.models.corrected_ms, Some(whole_window_wait(p)))
        } else {
            Self::at(
                p,
                p.models.corrected_undisturbed_ms,
                p.undisturbed
                    .wait_ms
                    .map(|w| (w, p.undisturbed.wait_ci95_ms)),
            )
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PointVerdict::Keeps => "keeps",
            PointVerdict::Stops => "stops",
            PointVerdict::Undecided => "undecided",
            PointVerdict::NotJudged => "not judged",
        }
    }
}

/// Counts of a set of points under the interval rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct VerdictCounts {
    pub keeps: usize,
    pub stops: usize,
    pub undecided: usize,
    pub not_judged: usize,
}

/// A point's whole-window mean wait and its 95 % half-width.
pub fn whole_window_wait(p: &LoadPoint) -> (f64, Option<f64>) {
    (p.window.measured_wait_ms, p.window.measured_wait_ci95_ms)
}

impl VerdictCounts {
    pub fn of<'a>(points: impl IntoIterator<Item = &'a LoadPoint>, whole_window: bool) -> Self {
        Self::tally(
            points
                .into_iter()
                .map(|p| PointVerdict::of_point(p, whole_window)),
        )
    }

    /// The counts of some points' verdicts.
    pub fn tally(verdicts: impl IntoIterator<Item = PointVerdict>) -> Self {
        let mut c = VerdictCounts::default();
        for v in verdicts {
            match v {
                PointVerdict::Keeps => c.keeps += 1,
                PointVerdict::Stops => c.stops += 1,
                PointVerdict::Undecided => c.undecided += 1,
                PointVerdict::NotJudged => c.not_judged += 1,
            }
        }
        c
    }

    pub fn judged(&self) -> usize {
        self.keeps + self.stops + self.undecided
    }
}

/// One row of `queue_robustness.csv`: a point of the premise's test (the load test's own
/// exponential points of the case at the same utilisations included, as the baseline).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct RobustnessRow {
    pub round_trip_law: &'static str,
    pub round_trip_ms: f64,
    pub case: String,
    pub packing: &'static str,
    pub target_rho: f64,
    pub measured_rho: f64,
    pub rho_missed: bool,
    pub think_ms: f64,
    pub undisturbed_wait_ms: Option<f64>,
    pub undisturbed_wait_ci95_ms: Option<f64>,
    pub corrected_undisturbed_ms: Option<f64>,
    pub undisturbed_error: Option<f64>,
    pub undisturbed_verdict: &'static str,
    pub measured_wait_ms: f64,
    pub measured_wait_ci95_ms: Option<f64>,
    pub corrected_ms: Option<f64>,
    pub whole_window_error: Option<f64>,
    pub whole_window_verdict: &'static str,
    pub replay_error: Option<f64>,
}

impl RobustnessRow {
    pub fn of(p: &LoadPoint) -> Self {
        use wtlsperf_models::stats::relative_error;
        let err = |w: Option<f64>, m: Option<f64>| w.zip(m).and_then(|(w, m)| relative_error(w, m));
        RobustnessRow {
            round_trip_law: p.round_trip_law.name(),
            round_trip_ms: p.round_trip_ms,
            case: p.case.clone(),
            packing: packing_name(p.packing),
            target_rho: p.calibration.target_rho,
            measured_rho: p.calibration.measured_rho,
            rho_missed: p.calibration.rho_missed,
            think_ms: p.run.think_ms,
            undisturbed_wait_ms: p.undisturbed.wait_ms,
            undisturbed_wait_ci95_ms: p.undisturbed.wait_ci95_ms,
            corrected_undisturbed_ms: p.models.corrected_undisturbed_ms,
            undisturbed_error: err(p.models.corrected_undisturbed_ms, p.undisturbed.wait_ms),
            undisturbed_verdict: PointVerdict::of_point(p, false).name(),
            measured_wait_ms: p.window.measured_wait_ms,
            measured_wait_ci95_ms: p.window.measured_wait_ci95_ms,
            corrected_ms: p.models.corrected_ms,
            whole_window_error: err(p.models.corrected_ms, Some(p.window.measured_wait_ms)),
            whole_window_verdict: PointVerdict::of_point(p, true).name(),
            replay_error: err(p.models.replay_ms, Some(p.window.measured_wait_ms)),
        }
    }
}

/// One round-trip law's points under the interval rule: the corrected model over the
/// undisturbed jobs and over the whole window.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LawSummary {
    pub law: &'static str,
    pub undisturbed: VerdictCounts,
    pub undisturbed_worst_error: Option<f64>,
    pub whole_window: VerdictCounts,
    pub whole_window_worst_error: Option<f64>,
}

impl LawSummary {
    /// The summary of `law` over robustness rows.
    pub fn of(law: RoundTripLaw, rows: &[RobustnessRow], points: &[&LoadPoint]) -> Self {
        let worst = |f: &dyn Fn(&RobustnessRow) -> Option<f64>| {
            rows.iter()
                .filter(|r| r.round_trip_law == law.name() && !r.rho_missed)
                .filter_map(f)
                .map(f64::abs)
                .max_by(f64::total_cmp)
        };
        let mine: Vec<&LoadPoint> = points
            .iter()
            .copied()
            .filter(|p| p.round_trip_law == law)
            .collect();
        LawSummary {
            law: law.name(),
            undisturbed: VerdictCounts::of(mine.iter().copied(), false),
            undisturbed_worst_error: worst(&|r| r.undisturbed_error),
            whole_window: VerdictCounts::of(mine.iter().copied(), true),
            whole_window_worst_error: worst(&|r| r.whole_window_error),
        }
    }
}

/// What the variant points add to `summary.json`'s headline.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct VariantsHeadline {
    /// Per round-trip law (the exponential baseline first), the corrected model under
    /// the interval rule.
    pub queue_robustness: Vec<LawSummary>,
    /// The mutual points (three or more jobs a handshake): the corrected model within
    /// 15 % at (points, judged points), over the undisturbed jobs and the whole window,
    /// and the interval rule's counts over the undisturbed jobs.
    pub queue_mutual_undisturbed_within_15_percent: (usize, usize),
    pub queue_mutual_whole_window_within_15_percent: (usize, usize),
    pub queue_mutual_undisturbed_verdicts: VerdictCounts,
    /// Jobs per handshake of the mutual points, smallest and largest.
    pub queue_mutual_jobs_per_handshake: Option<(f64, f64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_rule_needs_the_whole_interval_on_one_side() {
        // 5 % off, +-5 %: the error runs from 0 % to +10.5 %.
        assert_eq!(
            PointVerdict::of(Some(1.05), Some(1.0), Some(0.05)),
            PointVerdict::Keeps
        );
        // 10 % off, +-10 %: up to +22 %: cannot tell.
        assert_eq!(
            PointVerdict::of(Some(1.1), Some(1.0), Some(0.1)),
            PointVerdict::Undecided
        );
        // 40 % below, +-10 %: the whole interval beyond -15 %.
        assert_eq!(
            PointVerdict::of(Some(0.6), Some(1.0), Some(0.1)),
            PointVerdict::Stops
        );
        // An interval reaching zero leaves the error unbounded: never kept.
        assert_eq!(
            PointVerdict::of(Some(1.0), Some(1.0), Some(1.0)),
            PointVerdict::Undecided
        );
        // No interval: the point estimate alone.
        assert_eq!(
            PointVerdict::of(Some(1.2), Some(1.0), None),
            PointVerdict::Stops
        );
        assert_eq!(
            PointVerdict::of(None, Some(1.0), None),
            PointVerdict::NotJudged
        );
        assert_eq!(
            PointVerdict::of(Some(1.0), Some(0.0), None),
            PointVerdict::NotJudged
        );
    }

    #[test]
    fn missed_and_saturated_points_are_not_judged() {
        let mut p = LoadPoint::default();
        p.calibration.target_rho = 0.5;
        p.models.corrected_undisturbed_ms = Some(1.0);
        p.undisturbed.wait_ms = Some(1.0);
        p.undisturbed.wait_ci95_ms = Some(0.01);
        assert_eq!(PointVerdict::of_point(&p, false), PointVerdict::Keeps);
        // The whole window has no model here.
        assert_eq!(PointVerdict::of_point(&p, true), PointVerdict::NotJudged);
        p.calibration.rho_missed = true;
        assert_eq!(PointVerdict::of_point(&p, false), PointVerdict::NotJudged);
        let counts = VerdictCounts::of([&p], false);
        assert_eq!((counts.judged(), counts.not_judged), (0, 1));
    }

    #[test]
    fn the_full_plans_test_every_law_in_its_own_run_and_both_families_mutually() {
        let main = variant_plan(Mode::Full, VariantScope::Main);
        assert!(main.robustness.is_empty(), "robustness runs on its own");
        let cases: Vec<&str> = main.mutual.iter().map(|p| p.case).collect();
        assert!(cases.contains(&"283k/283k") && cases.contains(&"rsa2048/rsa2048"));
        assert!(main.mutual.iter().all(|p| p.auth == AuthMode::Mutual
            && p.packing == Packing::MessagePerDatagram
            && p.rho <= 0.6));
        let own = variant_plan(Mode::Full, VariantScope::Robustness);
        assert!(own.mutual.is_empty());
        let mut laws = vec![RoundTripLaw::Exponential];
        laws.extend(ROBUSTNESS_LAWS);
        for law in laws {
            let rhos: Vec<f64> = own
                .robustness
                .iter()
                .filter(|p| p.law == law)
                .map(|p| p.rho)
                .collect();
            assert_eq!(rhos, [0.3, 0.5, 0.7], "{law}");
        }
        assert!(own
            .robustness
            .iter()
            .all(|p| p.case == ROBUSTNESS_CASE && p.seconds >= 20.0));
    }

    #[test]
    fn the_short_modes_still_run_a_robustness_point_in_the_main_run() {
        for mode in [Mode::Smoke, Mode::Quick] {
            let plan = variant_plan(mode, VariantScope::Main);
            assert!(!plan.robustness.is_empty() && !plan.mutual.is_empty());
        }
    }
}
