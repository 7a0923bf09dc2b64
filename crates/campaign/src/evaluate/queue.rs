//! Part 2, the gateway queue (thesis sections 3.2 and 4.2; Levi-Savas 2003 section 4.2).
//!
//! Three layers, each compared with the next:
//!
//! 1. the thesis' M/G/1 Pollaczek-Khinchin model (Eq. 3.12 with the groups' moments,
//!    Eq. 3.21-3.82) on the PUBLISHED service times, as printed (lambda handshakes/s
//!    against per-message moments) and corrected (k jobs per handshake), for the four
//!    category-3 groups and both modes;
//! 2. the same models, M/M/1 (Levi-Savas), M/G/c (Allen-Cunneen, c = 1, 2, 4) and a
//!    discrete-event simulation on OUR measured per-job service times, up to saturation;
//! 3. reality: the open-loop load generator against the in-process gateway with one
//!    worker, at target utilisations rho, and the measured mean wait of its job records.
//!
//! What a "job" is matters: the gateway serves datagrams, and with flight packing a
//! server-authenticated handshake brings two (ClientHello, then the client's second
//! flight). The corrected model is fed the measured per-job moments and the job arrival
//! rate k x lambda; the as-published reading uses lambda handshakes/s against the same
//! per-job mean, which understates rho by k.

use wtlsperf_models::queue::Variant;
use wtlsperf_models::stats::relative_error;
use wtlsperf_models::Authentication;

use super::context::{Ctx, StageClock};
use super::processing::ProcessingResults;
use wtlsperf_drivers::pki_store::PkiStore;

/// All of part 2.
#[derive(Debug, Clone)]
pub struct QueueResults {
    /// Every modelled and measured point.
    pub rows: Vec<QueueRow>,
    /// WTLS's load-test points.
    pub load: Vec<LoadPoint>,
    /// DTLS 1.2's and EDHOC's load-test points: their own servers behind the same
    /// gateway worker, judged as WTLS is ([`QueueResults::protocol_judgement`]).
    pub modern: Vec<LoadPoint>,
    /// Capacities (handshakes/s): (group, mixture, auth, inputs, variant, capacity).
    pub capacities: Vec<Capacity>,
    /// Why the load test did not run, if it did not.
    pub load_note: Option<String>,
    /// Why the DTLS 1.2 / EDHOC load test did not run, if it did not.
    pub modern_note: Option<String>,
    /// The points beyond the load test's own: other round-trip laws, mutual handshakes.
    pub variants: Variants,
    /// Wall time (s) of each stage of the part: the models, the load test's own points,
    /// DTLS 1.2 and EDHOC, the variants (the evaluation's time budget is spent here).
    pub stage_seconds: Vec<(&'static str, f64)>,
    /// The load test's designed headline points: WTLS, bearer setting, target rho <= 0.8,
    /// every case of the mode's plan (16 in the full mode), whether they ran or not.
    pub designed: usize,
    /// The part's account of disturbed windows recorded again.
    pub rerecord: RerecordSummary,
}

/// The load points beyond the load test's own (see `variants`), judged apart from its
/// headline points.
#[derive(Debug, Clone, Default)]
pub struct Variants {
    /// The Poisson premise under round trips that are not exponential.
    pub robustness: Vec<LoadPoint>,
    /// Mutual handshakes, one datagram per message: three or more jobs a handshake.
    pub mutual: Vec<LoadPoint>,
    /// Why they did not run, if they did not.
    pub note: Option<String>,
}

/// How one protocol's load points fare against the three readings WTLS is judged by.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProtocolJudgement {
    /// The corrected M/G/1 at measured rho over the whole steady window.
    pub corrected: Judgement,
    /// The FIFO replay of the run's own arrivals and occupancies.
    pub replay: Judgement,
    /// The corrected model over the undisturbed jobs.
    pub undisturbed: Judgement,
}

/// How the load generator's clients answer: at once over bare loopback, or after an
/// emulated bearer round trip (see `reality`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    Loopback,
    Bearer,
}

impl Setting {
    pub fn of(p: &LoadPoint) -> Self {
        if p.round_trip_ms > 0.0 {
            Setting::Bearer
        } else {
            Setting::Loopback
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Setting::Loopback => "loopback",
            Setting::Bearer => "bearer round trip",
        }
    }
}

/// The load points a model is judged at: targets rho <= 0.8, whose measured rho landed
/// within 0.05 of the target and whose kept recording the disturbance rule passed (a
/// missed or disturbed point is reported, not judged).
fn judged(p: &LoadPoint, setting: Setting) -> bool {
    designed(p, setting) && !p.calibration.rho_missed && p.recording.disturbed.is_none()
}

/// The load points a setting's judgement is designed over: targets rho <= 0.8.
fn designed(p: &LoadPoint, setting: Setting) -> bool {
    p.calibration.target_rho <= 0.8 + 1e-9 && Setting::of(p) == setting
}

/// A model against a measurement over a setting's judged points (see [`judged`]). Each
/// point's model is evaluated at that point's measured rho (its measured job rate and
/// occupancy moments), so the error is the model's, not the calibration's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Judgement {
    /// |relative error| per judged point with both numbers.
    pub errors: Vec<f64>,
    /// The same errors with their sign (model over measurement minus one).
    pub signed: Vec<f64>,
    /// Points within 15 %.
    pub within: usize,
    /// Points outside both 15 % and the measured wait's 95 % interval: misses the
    /// measurement's noise cannot explain.
    pub outside_both: usize,
    /// Points of the setting with target rho <= 0.8 left out as missed.
    pub missed: usize,
    /// Points of the setting with target rho <= 0.8 that ran: what the judged points
    /// are counted against.
    pub designed: usize,
    /// Smallest and largest measured rho of the judged points.
    pub rho_range: Option<(f64, f64)>,
}

impl Judgement {
    pub fn points(&self) -> usize {
        self.errors.len()
    }

    pub fn median(&self) -> Option<f64> {
        wtlsperf_models::stats::median(&self.errors)
    }

    pub fn worst(&self) -> Option<f64> {
        self.errors.iter().copied().max_by(f64::total_cmp)
    }
}

/// Whether `predicted` misses `measured` by more than 15 % and by more than the
/// measurement's 95 % half-width `ci` (a missing interval counts as zero width).
pub fn outside_both(predicted: f64, measured: f64, ci: Option<f64>) -> bool {
    let miss = (predicted - measured).abs();
    miss > 0.15 * measured.abs() && miss > ci.unwrap_or(0.0)
}

impl QueueResults {
    /// |relative error| of a model at the judged load points of a setting.
    fn errors(&self, setting: Setting, pick: impl Fn(&Predictions) -> Option<f64>) -> Vec<f64> {
        self.errors_against(setting, pick, |p| Some(p.window.measured_wait_ms))
    }

    /// |relative error| of a model against a chosen measurement, at the judged load
    /// points of a setting where both exist.
    fn errors_against(
        &self,
        setting: Setting,
        pick: impl Fn(&Predictions) -> Option<f64>,
        measured: impl Fn(&LoadPoint) -> Option<f64>,
    ) -> Vec<f64> {
        self.judge(setting, pick, |p| Some((measured(p)?, None)))
            .errors
    }

    /// A model against a measurement (mean wait and its 95 % half-width) over the judged
    /// points of a setting.
    pub fn judge(
        &self,
        setting: Setting,
        pick: impl Fn(&Predictions) -> Option<f64>,
        measured: impl Fn(&LoadPoint) -> Option<(f64, Option<f64>)>,
    ) -> Judgement {
        let mut j = Judgement::default();
        for p in self.load.iter().filter(|p| Setting::of(p) == setting) {
            if p.calibration.target_rho <= 0.8 + 1e-9 && p.calibration.rho_missed {
                j.missed += 1;
            }
            j.designed += usize::from(designed(p, setting));
            if !judged(p, setting) {
                continue;
            }
            let (Some(w), Some((m, ci))) = (pick(&p.models), measured(p)) else {
                continue;
            };
            let Some(signed) = relative_error(w, m) else {
                continue;
            };
            let e = signed.abs();
            j.signed.push(signed);
            j.errors.push(e);
            j.within += usize::from(e <= 0.15);
            j.outside_both += usize::from(outside_both(w, m, ci));
            // The rho the point was calibrated to and its target checked at.
            let r = p.calibrated_rho();
            j.rho_range = Some(
                j.rho_range
                    .map_or((r, r), |(lo, hi)| (lo.min(r), hi.max(r))),
            );
        }
        j
    }

    /// A model against a measurement over a setting's designed points (target rho <=
    /// 0.8) by the interval rule (the findings' rule 4): each point keeps, stops, is
    /// undecided, or is not judged (missed rho, disturbed recording, no measurement).
    pub fn interval(
        &self,
        setting: Setting,
        pick: impl Fn(&Predictions) -> Option<f64>,
        measured: impl Fn(&LoadPoint) -> Option<(f64, Option<f64>)>,
    ) -> variants::VerdictCounts {
        variants::VerdictCounts::tally(
            self.load
                .iter()
                .filter(|p| designed(p, setting))
                .map(|p| variants::PointVerdict::at(p, pick(&p.models), measured(p))),
        )
    }

    /// The designed points of a setting that ran (target rho <= 0.8).
    pub fn designed_of(&self, setting: Setting) -> Vec<&LoadPoint> {
        self.load.iter().filter(|p| designed(p, setting)).collect()
    }

    /// A DTLS 1.2 or EDHOC point set against the corrected model, the replay and the
    /// undisturbed view, bearer setting (the one the model describes).
    pub fn protocol_judgement(&self, protocol: wtlsperf_spine::ProtocolId) -> ProtocolJudgement {
        Self::judgement_of(
            self.modern
                .iter()
                .filter(|p| p.protocol == protocol)
                .cloned()
                .collect(),
        )
    }

    /// Results holding `points` as the load test's own and nothing else: the view a
    /// set of points is judged through.
    pub fn judgement_view(points: Vec<LoadPoint>) -> QueueResults {
        QueueResults {
            rows: Vec::new(),
            load: points,
            modern: Vec::new(),
            capacities: Vec::new(),
            load_note: None,
            modern_note: None,
            variants: Variants::default(),
            stage_seconds: Vec::new(),
            designed: 0,
            rerecord: RerecordSummary::default(),
        }
    }

    /// A set of bearer-setting points (the variants, a protocol's) against the corrected
    /// model, the replay and the undisturbed view, as the load test's own are judged.
    pub fn judgement_of(points: Vec<LoadPoint>) -> ProtocolJudgement {
        let view = QueueResults::judgement_view(points);
        ProtocolJudgement {
            corrected: view.corrected_judgement(),
            replay: view.judge(
                Setting::Bearer,
                |m| m.replay_ms,
                |p| Some((p.window.measured_wait_ms, p.window.measured_wait_ci95_ms)),
            ),
            undisturbed: view.undisturbed_judgement(),
        }
    }

    /// The corrected model over the whole steady windows, bearer setting.
    pub fn corrected_judgement(&self) -> Judgement {
        self.judge(
            Setting::Bearer,
            |m| m.corrected_ms,
            |p| Some((p.window.measured_wait_ms, p.window.measured_wait_ci95_ms)),
        )
    }

    /// The corrected model (opening job apart) over the undisturbed parts, bearer setting.
    pub fn undisturbed_judgement(&self) -> Judgement {
        self.judge(
            Setting::Bearer,
            |m| m.corrected_undisturbed_ms,
            |p| Some((p.undisturbed.wait_ms?, p.undisturbed.wait_ci95_ms)),
        )
    }

    /// The load test's headline points that ran (WTLS, bearer setting, target rho <= 0.8).
    pub fn designed_points(&self) -> Vec<&LoadPoint> {
        self.load
            .iter()
            .filter(|p| designed(p, Setting::Bearer))
            .collect()
    }

    /// How many of bare loopback's points the same design covers (rho <= 0.8).
    pub fn loopback_designed_points(&self) -> usize {
        self.load
            .iter()
            .filter(|p| designed(p, Setting::Loopback))
            .count()
    }

    /// CPU time the interference injector took over the part's kept recordings (ms):
    /// every load point, the other protocols' and the variants' (round-trip laws,
    /// mutual) included.
    pub fn injected_ms(&self) -> f64 {
        self.load
            .iter()
            .chain(&self.modern)
            .chain(&self.variants.robustness)
            .chain(&self.variants.mutual)
            .filter_map(|p| p.recording.load.interference_ms)
            .sum()
    }

    /// The other protocols' load points (their finding's set): judged by the interval
    /// rule of all, and each protocol with a point left unjudged as `quic 0 of 3
    /// (stalls 3)`, for the first screen: the WTLS design can hold while another
    /// protocol's does not.
    pub fn other_protocols_judged(&self) -> (usize, usize, Vec<String>) {
        self.other_protocols(false)
    }

    /// The same, each short protocol with what disturbed its stalled points (the
    /// degraded-run account's words).
    pub fn other_protocols_in_detail(&self) -> (usize, usize, Vec<String>) {
        self.other_protocols(true)
    }

    fn other_protocols(&self, detail: bool) -> (usize, usize, Vec<String>) {
        let mut short = Vec::new();
        for protocol in wtlsperf_drivers::registry::ids() {
            let points: Vec<&LoadPoint> = self
                .modern
                .iter()
                .filter(|p| p.protocol == protocol)
                .collect();
            let c = variants::VerdictCounts::of(points.iter().copied(), false);
            if c.not_judged > 0 {
                short.push(format!(
                    "{protocol} {} of {} ({})",
                    c.judged(),
                    points.len(),
                    not_judged_causes(&points, detail)
                ));
            }
        }
        let all = variants::VerdictCounts::of(&self.modern, false);
        (all.judged(), self.modern.len(), short)
    }

    /// Whose stalls the load points met: the shared machine's, and the interference
    /// injector's when the run had it on, so that no finding lays the injected stalls
    /// at the machine's or the gateway's door.
    pub fn stall_sources(&self) -> &'static str {
        if self.injected_ms() > 0.0 {
            "the shared machine and this run's interference injector"
        } else {
            "the shared machine"
        }
    }

    /// What the interference injector took of the worker's core over `setting`'s
    /// designed points, beside the time the worker was off its core while it had work:
    /// `None` when the run had no injector.
    pub fn injected_over(&self, setting: Setting) -> Option<String> {
        let points = self.designed_of(setting);
        let injected: f64 = points
            .iter()
            .filter_map(|p| p.recording.load.interference_ms)
            .sum();
        let off: f64 = points.iter().map(|p| p.disturbances.worker_stall_ms).sum();
        (injected > 0.0).then(|| {
            format!(
                "the interference injector, standing in for a hypervisor, spun {injected:.0} ms on the worker's core over these points, where the worker was off its core {off:.0} ms while it had work"
            )
        })
    }

    /// `summary.json`'s `degraded`: how many designed points were judged and why the
    /// others were not, and the other protocols' and the mutual WTLS series' load
    /// points when one of them went unjudged; `None` when every point of those three
    /// sets was judged. A designed point that did not run at all (the load test failed, or a case
    /// had no service time) counts under `not_run`.
    pub fn degraded(&self) -> Option<disturbance::Degraded> {
        let ran = self.designed_points();
        let mut d =
            disturbance::Degraded::account(&ran, self.designed.max(ran.len()), self.rerecord);
        let (judged, run, short) = self.other_protocols_in_detail();
        if !short.is_empty() {
            d.other_protocols = Some(disturbance::OtherProtocols { judged, run, short });
        }
        let mutual: Vec<&LoadPoint> = self.variants.mutual.iter().collect();
        let m = variants::VerdictCounts::of(mutual.iter().copied(), false);
        if m.not_judged > 0 {
            let causes = not_judged_causes(&mutual, true);
            d.wtls_mutual = Some(disturbance::OtherProtocols {
                judged: m.judged(),
                run: mutual.len(),
                short: vec![format!(
                    "wtls mutual {} of {} ({causes})",
                    m.judged(),
                    mutual.len()
                )],
            });
        }
        d.cause = d.cause_words();
        (d.judged < d.designed || d.other_protocols.is_some() || d.wtls_mutual.is_some())
            .then_some(d)
    }

    /// WTLS's points of both settings whose rho (the undisturbed jobs', where the point
    /// is checked) missed the target by more than 0.05 after the repeats.
    pub fn missed_points(&self) -> Vec<&LoadPoint> {
        self.load
            .iter()
            .filter(|p| p.calibration.rho_missed)
            .collect()
    }

    /// How many load points of the whole part missed their target rho after the repeats:
    /// WTLS's own of both settings, the other protocols', and the variants'.
    pub fn missed_points_all(&self) -> usize {
        self.load
            .iter()
            .chain(&self.modern)
            .chain(&self.variants.robustness)
            .chain(&self.variants.mutual)
            .filter(|p| p.calibration.rho_missed)
            .count()
    }

    /// The load the judged points of a setting ran at, in words from the run: their
    /// measured rho range and every point that missed its target, with both numbers.
    pub fn load_clause(&self, setting: Setting, j: &Judgement) -> String {
        let range = match j.rho_range {
            Some((lo, hi)) => format!("measured rho {lo:.2} to {hi:.2} (over the undisturbed jobs, where the points are calibrated and their targets checked)"),
            None => "no point on target".to_owned(),
        };
        let missed: Vec<String> = self
            .missed_points()
            .into_iter()
            .filter(|p| Setting::of(p) == setting)
            .map(|p| match p.recording.undisturbed_rho {
                Some(undisturbed) => format!(
                    "{} at {undisturbed:.2} (whole window {:.2}) for {:.1}",
                    p.case, p.calibration.measured_rho, p.calibration.target_rho
                ),
                None => format!(
                    "{} at {:.2} over the whole window (no undisturbed jobs to read) for {:.1}",
                    p.case, p.calibration.measured_rho, p.calibration.target_rho
                ),
            })
            .collect();
        if missed.is_empty() {
            format!("{range}, every point within 0.05 of its target rho")
        } else {
            format!(
                "{range}; {} point(s) missed their target rho by more than 0.05 after the repeats and are not judged: {}",
                missed.len(),
                missed.join(", ")
            )
        }
    }

    /// |relative error| of the corrected P-K over the undisturbed part of each run
    /// (model on that part's inputs, against that part's measured wait), bearer setting,
    /// judged points.
    pub fn undisturbed_errors(&self) -> Vec<f64> {
        self.undisturbed_judgement().errors
    }

    /// The corrected model against the undisturbed mean waits on bare loopback, over its
    /// judged points (rho <= 0.8): where the arrivals are not Poisson, the setting the
    /// headline's count leaves out.
    pub fn loopback_undisturbed_errors(&self) -> Vec<f64> {
        self.errors_against(
            Setting::Loopback,
            |m| m.corrected_undisturbed_ms,
            |p| p.undisturbed.wait_ms,
        )
    }

    /// The same for P-K with one occupancy law for every job (no opening delivery).
    pub fn undisturbed_one_law_errors(&self) -> Vec<f64> {
        self.errors_against(
            Setting::Bearer,
            |m| m.pk_undisturbed_ms,
            |p| p.undisturbed.wait_ms,
        )
    }

    /// Half-widths of the 95 % intervals of the undisturbed mean waits, relative to the
    /// waits, bearer setting, judged points.
    pub fn undisturbed_intervals(&self) -> Vec<f64> {
        self.load
            .iter()
            .filter(|p| judged(p, Setting::Bearer))
            .filter_map(|p| {
                let wait = p.undisturbed.wait_ms.filter(|w| *w > 0.0)?;
                Some(p.undisturbed.wait_ci95_ms? / wait)
            })
            .collect()
    }

    /// Median share of the window's jobs in the undisturbed part, over the designed
    /// points of the bearer setting (rho <= 0.8), the set the undisturbed judgement reads.
    pub fn undisturbed_share_median(&self) -> Option<f64> {
        let shares: Vec<f64> = self
            .designed_points()
            .into_iter()
            .map(|p| p.undisturbed.share)
            .collect();
        wtlsperf_models::stats::median(&shares)
    }

    /// Largest |relative error| of a model over a setting's points with rho <= 0.8.
    pub fn max_error(
        &self,
        setting: Setting,
        pick: impl Fn(&Predictions) -> Option<f64>,
    ) -> Option<f64> {
        self.errors(setting, pick)
            .into_iter()
            .max_by(f64::total_cmp)
    }

    /// Median |relative error| of a model over a setting's points with rho <= 0.8.
    pub fn median_error(
        &self,
        setting: Setting,
        pick: impl Fn(&Predictions) -> Option<f64>,
    ) -> Option<f64> {
        wtlsperf_models::stats::median(&self.errors(setting, pick))
    }

    /// (points within 15 %, points) of a model over a setting's points with rho <= 0.8.
    pub fn within_15_percent(
        &self,
        setting: Setting,
        pick: impl Fn(&Predictions) -> Option<f64>,
    ) -> (usize, usize) {
        let e = self.errors(setting, pick);
        (e.iter().filter(|&&x| x <= 0.15).count(), e.len())
    }

    /// The rows of `queue_robustness.csv`: the load test's own exponential points of the
    /// robustness case at the robustness points' utilisations (the baseline), then the
    /// points of every other law.
    pub fn robustness_rows(&self) -> Vec<variants::RobustnessRow> {
        let rhos: Vec<f64> = self
            .variants
            .robustness
            .iter()
            .map(|p| p.calibration.target_rho)
            .collect();
        let cases: Vec<&str> = self
            .variants
            .robustness
            .iter()
            .map(|p| p.case.as_str())
            .collect();
        self.load
            .iter()
            .filter(|p| {
                Setting::of(p) == Setting::Bearer
                    && cases.contains(&p.case.as_str())
                    && rhos
                        .iter()
                        .any(|r| (r - p.calibration.target_rho).abs() < 1e-9)
            })
            .chain(&self.variants.robustness)
            .map(variants::RobustnessRow::of)
            .collect()
    }

    /// The variant points' part of the headline.
    pub fn variants_headline(&self) -> variants::VariantsHeadline {
        let rows = self.robustness_rows();
        let baseline: Vec<&LoadPoint> = self
            .load
            .iter()
            .filter(|p| {
                rows.iter().any(|r| {
                    r.round_trip_law == p.round_trip_law.name()
                        && r.case == p.case
                        && r.target_rho == p.calibration.target_rho
                        && p.round_trip_ms > 0.0
                })
            })
            .collect();
        let points: Vec<&LoadPoint> = baseline
            .into_iter()
            .chain(&self.variants.robustness)
            .collect();
        let mut laws = vec![wtlsperf_drivers::load::RoundTripLaw::Exponential];
        laws.extend(variants::ROBUSTNESS_LAWS);
        let mutual = Self::judgement_of(self.variants.mutual.clone());
        let k = self
            .variants
            .mutual
            .iter()
            .map(|p| p.run.jobs_per_handshake);
        variants::VariantsHeadline {
            queue_robustness: if self.variants.robustness.is_empty() {
                Vec::new()
            } else {
                laws.into_iter()
                    .map(|law| variants::LawSummary::of(law, &rows, &points))
                    .collect()
            },
            queue_mutual_undisturbed_within_15_percent: (
                mutual.undisturbed.within,
                mutual.undisturbed.points(),
            ),
            queue_mutual_whole_window_within_15_percent: (
                mutual.corrected.within,
                mutual.corrected.points(),
            ),
            queue_mutual_undisturbed_verdicts: variants::VerdictCounts::of(
                &self.variants.mutual,
                false,
            ),
            queue_mutual_jobs_per_handshake: k.clone().reduce(f64::min).zip(k.reduce(f64::max)),
        }
    }

    /// A capacity by key.
    pub fn capacity(
        &self,
        group: &str,
        mixture: &str,
        auth: Authentication,
        inputs: Inputs,
        variant: Variant,
    ) -> Option<f64> {
        self.capacities
            .iter()
            .find(|c| {
                c.group == group
                    && c.mixture == mixture
                    && c.auth == auth
                    && c.inputs == inputs
                    && c.variant == variant
            })
            .map(|c| c.handshakes_per_s)
    }
}

/// Part 2.
pub fn run(
    ctx: &Ctx,
    store: &PkiStore,
    processing: &ProcessingResults,
) -> anyhow::Result<QueueResults> {
    let mut stages = StageClock::start();
    ctx.step("queue: models on the published service times");
    let (mut rows, mut capacities) = published_rows();
    let rerecord = RerecordBudget::for_part(reality::planned_seconds(ctx.mode));
    ctx.step("queue: models and simulation on the measured service times");
    let (r2, c2) = measured_rows(ctx.mode, processing);
    rows.extend(r2);
    capacities.extend(c2);
    stages.lap("models");
    let (load, load_note) = match reality::run(ctx, store, processing, &rerecord) {
        Ok(points) => (points, None),
        Err(e) => (Vec::new(), Some(format!("load test not run: {e:#}"))),
    };
    stages.lap("load test");
    let (mut modern, mut modern_note) = match reality::run_modern(ctx, store, &rerecord) {
        Ok(points) => (points, None),
        Err(e) => (
            Vec::new(),
            Some(format!("DTLS 1.2 / EDHOC load test not run: {e:#}")),
        ),
    };
    match reality::run_single_points(ctx, store, &rerecord) {
        Ok(points) => modern.extend(points),
        Err(e) => {
            let note = format!("single-point load test not run: {e:#}");
            modern_note = Some(match modern_note {
                Some(n) => format!("{n}; {note}"),
                None => note,
            });
        }
    }
    stages.lap("dtls1.2 and edhoc");
    let variants = run_variants(
        ctx,
        store,
        processing,
        variants::VariantScope::Main,
        &rerecord,
    );
    stages.lap("robustness and mutual");
    for p in load
        .iter()
        .chain(&modern)
        .chain(&variants.robustness)
        .chain(&variants.mutual)
    {
        rows.extend(load_rows(p));
    }
    Ok(QueueResults {
        rows,
        load,
        modern,
        capacities,
        load_note,
        modern_note,
        variants,
        stage_seconds: stages.into_seconds(),
        designed: reality::designed_points(ctx.mode),
        rerecord: rerecord.summary(),
    })
}

/// The variant points of a scope; a failure becomes the section's note.
fn run_variants(
    ctx: &Ctx,
    store: &PkiStore,
    processing: &ProcessingResults,
    scope: variants::VariantScope,
    rerecord: &RerecordBudget,
) -> Variants {
    match variants::run(ctx, store, processing, scope, rerecord) {
        Ok((robustness, mutual)) => Variants {
            robustness,
            mutual,
            note: None,
        },
        Err(e) => Variants {
            note: Some(format!("robustness and mutual load points not run: {e:#}")),
            ..Variants::default()
        },
    }
}

/// The Poisson premise's test alone (`evaluate --only robustness`): the robustness
/// points of every law, the exponential baseline among them, and their rows; no model
/// tables and no load test of the evaluation's own.
pub fn run_robustness(ctx: &Ctx, store: &PkiStore, processing: &ProcessingResults) -> QueueResults {
    let clock = std::time::Instant::now();
    let scope = variants::VariantScope::Robustness;
    let rerecord = RerecordBudget::for_part(variants::variant_plan(ctx.mode, scope).planned_s());
    let variants = run_variants(ctx, store, processing, scope, &rerecord);
    let rows = variants.robustness.iter().flat_map(load_rows).collect();
    QueueResults {
        rows,
        load: Vec::new(),
        modern: Vec::new(),
        capacities: Vec::new(),
        load_note: None,
        modern_note: None,
        variants,
        stage_seconds: vec![("robustness", clock.elapsed().as_secs_f64())],
        designed: 0,
        rerecord: rerecord.summary(),
    }
}

/// The rows of a load point in `queue.csv`: the measured wait against each model.
fn load_rows(p: &LoadPoint) -> Vec<QueueRow> {
    LoadModel::ALL
        .into_iter()
        .map(|model| {
            let w = match model {
                LoadModel::PkCorrected => p.models.corrected_ms,
                LoadModel::PkAsPublished => p.models.as_published_ms,
                LoadModel::Mm1LeviSavas => p.models.mm1_ms,
                LoadModel::Des => p.models.des_ms,
                LoadModel::ChainSim => p.models.chain_ms,
                LoadModel::TraceReplay => p.models.replay_ms,
                LoadModel::PkOneLawUndisturbed => p.models.pk_undisturbed_ms,
                LoadModel::PkCorrectedUndisturbed => p.models.corrected_undisturbed_ms,
            };
            // The undisturbed models are read against the undisturbed measurement.
            let (measured, ci) = if model.undisturbed() {
                (p.undisturbed.wait_ms, p.undisturbed.wait_ci95_ms)
            } else {
                (
                    Some(p.window.measured_wait_ms),
                    p.window.measured_wait_ci95_ms,
                )
            };
            QueueRow {
                measured_wait_ms: measured,
                relative_error: w.zip(measured).and_then(|(w, m)| relative_error(w, m)),
                measured_rho: Some(p.calibration.measured_rho),
                measured_wait_ci95_ms: ci,
                rho_missed: Some(p.calibration.rho_missed),
                outside_15_percent_and_interval: w
                    .zip(measured)
                    .map(|(w, m)| outside_both(w, m, ci)),
                protocol: p.protocol,
                ..QueueRow::modelled(
                    QueueModel::LoadTestVs(model),
                    RowVariant::Setting {
                        round_trip_ms: p.round_trip_ms,
                        law: p.round_trip_law,
                        per_message: p.packing == wtls::handshake::Packing::MessagePerDatagram,
                    },
                    Inputs::Measured,
                    p.case.clone(),
                    "-".into(),
                    p.auth,
                    p.calibration.lambda_hs_per_s,
                    p.calibration.target_rho,
                    w,
                )
            }
        })
        .collect()
}

/// Why the unjudged ones of `points` went unjudged, one cause each as the degraded-run
/// account gives it ([`disturbance::unjudged_cause`]): `stalls 2, missed rho 1`.
fn not_judged_causes(points: &[&LoadPoint], detail: bool) -> String {
    let mut causes = disturbance::Causes::default();
    let mut above = 0;
    // The stalled ones, for which disturbances took their undisturbed part.
    let mut stalled: Vec<&LoadPoint> = Vec::new();
    for &p in points {
        if variants::PointVerdict::of_point(p, false) != variants::PointVerdict::NotJudged {
            continue;
        }
        match disturbance::unjudged_cause(p) {
            Some(c) => {
                causes.add(c);
                if c == disturbance::Cause::Stalls {
                    stalled.push(p);
                }
            }
            // Rule 4 judges no point above rho 0.8.
            None => above += 1,
        }
    }
    let mut words = causes.words();
    if detail && !stalled.is_empty() {
        let sum = |f: fn(&LoadPoint) -> usize| stalled.iter().map(|p| f(p)).sum::<usize>();
        words.push_str(&format!(
            "; the stalled points' undisturbed share {}, with {} datagrams held on their way to a free worker, {} worker stalls, {} generator stalls{}",
            stalled
                .iter()
                .map(|p| format!("{:.1} %", 100.0 * p.undisturbed.share))
                .collect::<Vec<_>>()
                .join(", "),
            sum(|p| p.disturbances.delivery_stalls),
            sum(|p| p.disturbances.worker_stalls),
            sum(|p| p.disturbances.generator_stalls),
            match stalled.iter().filter(|p| p.calibration.rho_missed).count() {
                0 => String::new(),
                n => format!("; {n} of them also missed their target rho"),
            },
        ));
    }
    if above > 0 {
        words = [words, format!("target rho above 0.8 {above}")]
            .into_iter()
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(", ");
    }
    words
}

pub mod calibrate;
pub mod disturbance;
pub mod fleet_sizing;
mod modelled;
pub mod reality;
pub(crate) mod report;

mod point;
mod rows;
pub mod variants;

pub use disturbance::{Degraded, RerecordBudget, RerecordSummary};
pub use modelled::{
    category3_groups, des_wait, lambdas_to, measured_load, measured_rows, mixtures, pooled_jobs,
    predict, published_load, published_rows, thesis_lambdas,
};
pub use point::{
    Disturbances, LoadPoint, PointCalibration, Predictions, RecordingFigures, RunFigures,
    UndisturbedFigures, WindowWait,
};
pub use rows::{auth_name, Capacity, Group, Inputs, LoadModel, QueueModel, QueueRow, RowVariant};

#[cfg(test)]
mod tests {
    use super::*;

    /// A bearer point: target and measured rho, measured wait and its interval, the
    /// corrected model's prediction.
    fn bearer(target: f64, rho: f64, wait: f64, ci: f64, model: f64, missed: bool) -> LoadPoint {
        LoadPoint {
            case: "283k/283k".into(),
            round_trip_ms: 20.0,
            calibration: PointCalibration {
                target_rho: target,
                measured_rho: rho,
                rho_missed: missed,
                ..Default::default()
            },
            window: WindowWait {
                measured_wait_ms: wait,
                measured_wait_ci95_ms: Some(ci),
                ..Default::default()
            },
            models: Predictions {
                corrected_ms: Some(model),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn the_robustness_baseline_is_the_load_tests_own_points_at_the_same_loads() {
        use wtlsperf_drivers::load::RoundTripLaw;
        let undisturbed = |mut p: LoadPoint, wait: f64| {
            p.undisturbed.wait_ms = Some(wait);
            p.undisturbed.wait_ci95_ms = Some(0.02);
            p.models.corrected_undisturbed_ms = Some(1.0);
            p
        };
        let law = |law, rho, wait| LoadPoint {
            round_trip_law: law,
            ..undisturbed(bearer(rho, rho, 1.0, 0.02, 1.0, false), wait)
        };
        let q = QueueResults {
            rows: Vec::new(),
            load: vec![
                law(RoundTripLaw::Exponential, 0.3, 1.0),
                law(RoundTripLaw::Exponential, 0.5, 1.0),
            ],
            modern: Vec::new(),
            capacities: Vec::new(),
            load_note: None,
            modern_note: None,
            variants: Variants {
                robustness: vec![
                    law(RoundTripLaw::GsmCsd, 0.3, 1.02),
                    // 40 % above the model, outside its +-2 % interval.
                    law(RoundTripLaw::Bimodal, 0.3, 1.0 / 0.6),
                ],
                ..Variants::default()
            },
            stage_seconds: Vec::new(),
            designed: 0,
            rerecord: RerecordSummary::default(),
        };
        let rows = q.robustness_rows();
        // The exponential point at rho 0.5 has no counterpart: not a baseline.
        assert_eq!(
            rows.iter().map(|r| r.round_trip_law).collect::<Vec<_>>(),
            ["exponential", "gsm-csd", "bimodal"]
        );
        let h = q.variants_headline();
        let of = |name: &str| h.queue_robustness.iter().find(|l| l.law == name).unwrap();
        assert_eq!(of("exponential").undisturbed.keeps, 1);
        assert_eq!(of("gsm-csd").undisturbed.keeps, 1);
        assert_eq!(of("bimodal").undisturbed.stops, 1);
        assert!((of("bimodal").undisturbed_worst_error.unwrap() - 0.4).abs() < 1e-9);
        assert_eq!(of("pareto").undisturbed.judged(), 0);
    }

    #[test]
    fn outside_both_needs_15_percent_and_the_interval() {
        // 20 % off, interval +-10 %: outside both.
        assert!(outside_both(1.2, 1.0, Some(0.1)));
        // 20 % off, interval +-25 %: the noise explains it.
        assert!(!outside_both(1.2, 1.0, Some(0.25)));
        // 10 % off, narrow interval: within 15 %.
        assert!(!outside_both(1.1, 1.0, Some(0.01)));
        // No interval: 15 % alone decides.
        assert!(outside_both(0.8, 1.0, None));
    }

    #[test]
    fn points_are_judged_at_their_measured_rho_and_missed_ones_counted_apart() {
        let q = QueueResults {
            rows: Vec::new(),
            load: vec![
                bearer(0.3, 0.31, 1.0, 0.05, 1.05, false),
                // 20 % off inside a +-30 % interval.
                bearer(0.5, 0.48, 1.0, 0.3, 1.2, false),
                // 40 % off outside its interval.
                bearer(0.7, 0.72, 1.0, 0.1, 0.6, false),
                // Missed: not judged, however good or bad.
                bearer(0.8, 0.9, 1.0, 0.1, 5.0, true),
                // Beyond 0.8: shown, not judged.
                bearer(0.9, 0.9, 1.0, 0.1, 5.0, false),
            ],
            modern: Vec::new(),
            capacities: Vec::new(),
            load_note: None,
            modern_note: None,
            variants: Variants::default(),
            stage_seconds: Vec::new(),
            designed: 4,
            rerecord: RerecordSummary::default(),
        };
        let j = q.corrected_judgement();
        assert_eq!(j.points(), 3);
        assert_eq!((j.within, j.outside_both, j.missed), (1, 1, 1));
        assert_eq!(j.rho_range, Some((0.31, 0.72)));
        assert!((j.worst().unwrap() - 0.4).abs() < 1e-12);
        let clause = q.load_clause(Setting::Bearer, &j);
        assert!(clause.contains("measured rho 0.31 to 0.72"), "{clause}");
        // Without undisturbed jobs the whole window's rho is all there is, and says so.
        assert!(
            clause.contains(
                "283k/283k at 0.90 over the whole window (no undisturbed jobs to read) for 0.8"
            ),
            "{clause}"
        );
        let mut with_undisturbed = q.clone();
        with_undisturbed.load[3].recording.undisturbed_rho = Some(0.87);
        let clause = with_undisturbed.load_clause(Setting::Bearer, &j);
        assert!(
            clause.contains("283k/283k at 0.87 (whole window 0.90) for 0.8"),
            "{clause}"
        );
        assert_eq!(
            q.within_15_percent(Setting::Bearer, |m| m.corrected_ms),
            (1, 3)
        );
        // Nothing in the loopback setting.
        assert_eq!(
            q.judge(Setting::Loopback, |m| m.corrected_ms, |_| None)
                .points(),
            0
        );
    }
}
