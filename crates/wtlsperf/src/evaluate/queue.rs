//! Part 2, the gateway queue (thesis sections 3.2 and 4.2; Levi-Savas 2003 section 4.2).
//!
//! Three layers, each compared with the next:
//!
//! 1. the thesis' M/G/1 Pollaczek-Khinchin model (Eq. 3.12-3.19) on the PUBLISHED service
//!    times, as printed (lambda handshakes/s against per-message moments) and corrected
//!    (k jobs per handshake), for the four category-3 groups and both modes;
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

use wtls::suite::Case;
use wtlsperf_models::queue::{
    allen_cunneen_wait_ms, group_load, mm1_wait_ms, pk_mean_wait_ms, published_handshake_jobs,
    simulate, Empirical, GroupLoad, MixtureCase, SimConfig, Variant,
};
use wtlsperf_models::stats::relative_error;
use wtlsperf_models::Authentication;
use wtlsperf_report::{
    Axis, Cell, Column, Figure, LineChart, Point, Provenance, Section, Series, Table,
};

use super::processing::ProcessingResults;
use super::{Ctx, Mode};
use crate::pki_store::PkiStore;

/// One row of `queue.csv`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct QueueRow {
    /// `pk_mg1`, `mm1_levi_savas`, `allen_cunneen_c2`, `des_mg1`, `load_test`.
    pub model: String,
    /// `as_published`, `corrected` or `-`.
    pub variant: String,
    /// Inputs: `published` or `measured`.
    pub inputs: String,
    /// Group (`cat3-g2`) or case (`256p/256p`).
    pub group: String,
    /// Mixture of leaves (`283k`, `equal`).
    pub mixture: String,
    /// `mutual` or `server`.
    pub auth: String,
    /// Handshakes per second.
    pub lambda_hs_per_s: f64,
    /// Utilisation under the model's own reading.
    pub rho: f64,
    /// Predicted mean wait of one job (ms).
    pub predicted_wait_ms: Option<f64>,
    /// Measured mean wait (ms), load-test rows only.
    pub measured_wait_ms: Option<f64>,
    /// (predicted - measured) / measured.
    pub relative_error: Option<f64>,
    /// Load-test rows: the utilisation the run measured (`rho` is its target), the
    /// half-width of the measured wait's 95 % interval (ms), and whether the measured rho
    /// missed the target by more than 0.05 (such a point is not judged).
    pub measured_rho: Option<f64>,
    pub measured_wait_ci95_ms: Option<f64>,
    pub rho_missed: Option<bool>,
    /// Load-test rows: whether the model is outside both 15 % and that interval.
    pub outside_15_percent_and_interval: Option<bool>,
}

/// A category-3 group: its CA and the leaves of Table 3.3.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// 1..4.
    pub group: u8,
    /// The group's cases.
    pub cases: Vec<Case>,
}

impl Group {
    /// `cat3-g2`.
    pub fn id(&self) -> String {
        format!("cat3-g{}", self.group)
    }
}

/// The four category-3 groups of thesis Figures 4.13-4.23.
pub fn category3_groups() -> Vec<Group> {
    (1..=4u8)
        .map(|g| Group {
            group: g,
            cases: Case::ALL
                .into_iter()
                .filter(|c| c.category == 3 && c.group == g)
                .collect(),
        })
        .collect()
}

/// Mixtures p of Eq. 3.19 evaluated: each leaf alone and equal shares.
pub fn mixtures(group: &Group) -> Vec<(String, Vec<(Case, f64)>)> {
    let mut out: Vec<(String, Vec<(Case, f64)>)> = group
        .cases
        .iter()
        .map(|c| (c.leaf.short().to_owned(), vec![(*c, 1.0)]))
        .collect();
    let w = 1.0 / group.cases.len() as f64;
    out.push((
        "equal".to_owned(),
        group.cases.iter().map(|c| (*c, w)).collect(),
    ));
    out
}

fn auth_name(auth: Authentication) -> &'static str {
    match auth {
        Authentication::Mutual => "mutual",
        Authentication::ServerAuth => "server",
    }
}

fn variant_name(v: Variant) -> &'static str {
    match v {
        Variant::AsPublished => "as_published",
        Variant::Corrected => "corrected",
    }
}

/// The group load of a mixture on the published service times.
pub fn published_load(
    auth: Authentication,
    mixture: &[(Case, f64)],
    variant: Variant,
) -> Option<GroupLoad> {
    let cases: Vec<MixtureCase> = mixture
        .iter()
        .map(|(c, w)| {
            Some(MixtureCase {
                weight: *w,
                job_service_ms: published_handshake_jobs(
                    auth,
                    c.ca.short(),
                    c.leaf.short(),
                    variant,
                )
                .ok()?,
            })
        })
        .collect::<Option<_>>()?;
    group_load(&cases, variant).ok()
}

/// The group load of a mixture on our measured mean per-job service times.
pub fn measured_load(
    processing: &ProcessingResults,
    auth: Authentication,
    mixture: &[(Case, f64)],
    variant: Variant,
) -> Option<GroupLoad> {
    let cases: Vec<MixtureCase> = mixture
        .iter()
        .map(|(c, w)| {
            let jobs = processing.find(c, auth)?.mean_jobs();
            (!jobs.is_empty()).then_some(MixtureCase {
                weight: *w,
                job_service_ms: jobs,
            })
        })
        .collect::<Option<_>>()?;
    group_load(&cases, variant).ok()
}

/// The thesis' arrival rates of Figures 4.13-4.23: 0 to 100 handshakes/s.
pub fn thesis_lambdas() -> Vec<f64> {
    (0..=50).map(|i| i as f64 * 2.0).collect()
}

/// A capacity (handshakes/s at rho = 1): group, mixture, mode, inputs (`published` or
/// `measured`), reading of the model, value.
pub type Capacity = (String, String, Authentication, &'static str, Variant, f64);

/// One load-test point against the real gateway.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct LoadPoint {
    /// Case.
    pub case: String,
    /// Mode.
    pub auth: String,
    /// Mean of the emulated bearer round trip before each client answer (ms,
    /// exponential); 0 on bare loopback.
    pub round_trip_ms: f64,
    /// Target utilisation of the point.
    pub target_rho: f64,
    /// Offered handshakes/s: the rate the warm-ups calibrated (see `calibrate`).
    pub lambda_hs_per_s: f64,
    /// Warm-ups run before the recording, and the utilisation the last one measured.
    pub warmups: usize,
    pub warmup_rho: Option<f64>,
    /// Recordings made (2 when the first missed its target rho by more than 0.05).
    pub attempts: usize,
    /// Whether the kept recording's measured rho is still more than 0.05 from the
    /// target: such a point is reported, not judged.
    pub rho_missed: bool,
    /// Achieved handshakes/s.
    pub achieved_hs_per_s: f64,
    /// Share of handshakes that completed.
    pub success_ratio: f64,
    /// Jobs (datagrams served) per handshake.
    pub jobs_per_handshake: f64,
    /// Measured gateway utilisation.
    pub measured_rho: f64,
    /// Mean per-job service time at the gateway (ms).
    pub service_mean_ms: f64,
    /// Second moment of the per-job service time (ms^2).
    pub service_m2_ms2: f64,
    /// Measured mean queueing wait of a job (ms): its wait when it arrived while the
    /// worker was busy with earlier jobs, zero when it found the worker idle. What the
    /// queue models predict.
    pub measured_wait_ms: f64,
    /// Half-width (ms) of the 95 % batch-means interval of `measured_wait_ms`.
    pub measured_wait_ci95_ms: Option<f64>,
    /// Measured mean wait of a job (ms), from the kernel's timestamp to the start of
    /// service, idle arrivals included.
    pub total_wait_ms: f64,
    /// Share of jobs that found the worker idle, and their mean wait (ms): the path from
    /// the kernel to the worker and any time the worker was not running, no queueing.
    pub idle_arrival_share: f64,
    pub idle_arrival_wait_ms: f64,
    /// Corrected P-K at k x lambda with the measured moments (ms).
    pub corrected_ms: Option<f64>,
    /// As published: lambda against the per-job moments (ms).
    pub as_published_ms: Option<f64>,
    /// Levi-Savas M/M/1 with T_s = k x mean job service (ms), a per-handshake wait.
    pub mm1_ms: Option<f64>,
    /// Discrete-event simulation with the measured per-job service times (ms).
    pub des_ms: Option<f64>,
    /// Handshake-aware simulation: the gateway's measured job chains of this run, the
    /// next job of a handshake arriving the measured think time after the previous
    /// one's service (ms).
    pub chain_ms: Option<f64>,
    /// Trace replay: a FIFO single server fed with the run's own arrival instants and
    /// job occupancies (ms); no assumption on the arrival process.
    pub replay_ms: Option<f64>,
    /// Median time from the end of a job's service to the arrival of the same
    /// handshake's next job (ms): round trip plus client work.
    pub think_ms: f64,
    /// Mean wait of each handshake's first job (ms): the Poisson arrivals, which see
    /// the time-average queue P-K describes (PASTA).
    pub first_job_wait_ms: Option<f64>,
    /// Delivery delay (ms): median wait of jobs that found the worker idle, added to
    /// every model's prediction (the models predict queueing only).
    pub delivery_ms: f64,
    /// Share of the generator's scheduled sends that left more than 1 ms late.
    pub late_share: f64,
    /// CPU time the hypervisor gave to others during the run (ms, all CPUs).
    pub steal_ms: Option<f64>,
    /// The gateway worker's and the generator's stalls in the run (off-core for over
    /// 200 us while never sleeping): how many and their summed length (ms); and the
    /// generator's sends more than 200 us late.
    pub worker_stalls: usize,
    pub worker_stall_ms: f64,
    pub generator_stalls: usize,
    pub generator_stall_ms: f64,
    /// Datagrams held on their way to a free worker for over 200 us (the kernel's
    /// receive backlog): how many and their summed length (ms).
    pub delivery_stalls: usize,
    pub delivery_stall_ms: f64,
    pub late_sends: usize,
    /// Share of the steady window's jobs outside every disturbed interval (see
    /// `reality`), their mean queueing wait (ms) and the half-width of its 95 %
    /// batch-means interval (ms).
    pub undisturbed_share: f64,
    pub undisturbed_wait_ms: Option<f64>,
    pub undisturbed_wait_ci95_ms: Option<f64>,
    /// Mean delivery (ms) of the undisturbed jobs that found the worker idle: arrival to
    /// start of service, worker time the jobs behind them wait for.
    pub undisturbed_opening_delivery_ms: Option<f64>,
    /// Corrected P-K on the undisturbed part's own job rate and occupancy moments, one
    /// law for every job (Eq. 3.12) (ms).
    pub pk_undisturbed_ms: Option<f64>,
    /// The same with the busy period's opening job apart, its delivery counted as worker
    /// time (exceptional first service, `pk_exceptional_first_wait_ms`) (ms): the
    /// corrected model the undisturbed measurement is judged against.
    pub corrected_undisturbed_ms: Option<f64>,
}

/// All of part 2.
#[derive(Debug, Clone)]
pub struct QueueResults {
    /// Every modelled and measured point.
    pub rows: Vec<QueueRow>,
    /// Load-test points.
    pub load: Vec<LoadPoint>,
    /// Capacities (handshakes/s): (group, mixture, auth, inputs, variant, capacity).
    pub capacities: Vec<Capacity>,
    /// Why the load test did not run, if it did not.
    pub load_note: Option<String>,
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
/// within 0.05 of the target (a missed point is reported, not judged).
fn judged(p: &LoadPoint, setting: Setting) -> bool {
    p.target_rho <= 0.8 + 1e-9 && !p.rho_missed && Setting::of(p) == setting
}

/// A model against a measurement over a setting's judged points (see [`judged`]). Each
/// point's model is evaluated at that point's measured rho (its measured job rate and
/// occupancy moments), so the error is the model's, not the calibration's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Judgement {
    /// |relative error| per judged point with both numbers.
    pub errors: Vec<f64>,
    /// Points within 15 %.
    pub within: usize,
    /// Points outside both 15 % and the measured wait's 95 % interval: misses the
    /// measurement's noise cannot explain.
    pub outside_both: usize,
    /// Points of the setting with target rho <= 0.8 left out as missed.
    pub missed: usize,
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
    fn errors(&self, setting: Setting, pick: impl Fn(&LoadPoint) -> Option<f64>) -> Vec<f64> {
        self.errors_against(setting, pick, |p| Some(p.measured_wait_ms))
    }

    /// |relative error| of a model against a chosen measurement, at the judged load
    /// points of a setting where both exist.
    fn errors_against(
        &self,
        setting: Setting,
        pick: impl Fn(&LoadPoint) -> Option<f64>,
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
        pick: impl Fn(&LoadPoint) -> Option<f64>,
        measured: impl Fn(&LoadPoint) -> Option<(f64, Option<f64>)>,
    ) -> Judgement {
        let mut j = Judgement::default();
        for p in self.load.iter().filter(|p| Setting::of(p) == setting) {
            if p.target_rho <= 0.8 + 1e-9 && p.rho_missed {
                j.missed += 1;
            }
            if !judged(p, setting) {
                continue;
            }
            let (Some(w), Some((m, ci))) = (pick(p), measured(p)) else {
                continue;
            };
            let Some(e) = relative_error(w, m).map(f64::abs) else {
                continue;
            };
            j.errors.push(e);
            j.within += usize::from(e <= 0.15);
            j.outside_both += usize::from(outside_both(w, m, ci));
            let r = p.measured_rho;
            j.rho_range = Some(
                j.rho_range
                    .map_or((r, r), |(lo, hi)| (lo.min(r), hi.max(r))),
            );
        }
        j
    }

    /// The corrected model over the whole steady windows, bearer setting.
    pub fn corrected_judgement(&self) -> Judgement {
        self.judge(
            Setting::Bearer,
            |p| p.corrected_ms,
            |p| Some((p.measured_wait_ms, p.measured_wait_ci95_ms)),
        )
    }

    /// The corrected model (opening job apart) over the undisturbed parts, bearer setting.
    pub fn undisturbed_judgement(&self) -> Judgement {
        self.judge(
            Setting::Bearer,
            |p| p.corrected_undisturbed_ms,
            |p| Some((p.undisturbed_wait_ms?, p.undisturbed_wait_ci95_ms)),
        )
    }

    /// Points of every setting whose measured rho missed the target by more than 0.05
    /// after the repeat: (case, setting, target rho, measured rho).
    pub fn missed_points(&self) -> Vec<(&str, Setting, f64, f64)> {
        self.load
            .iter()
            .filter(|p| p.rho_missed)
            .map(|p| {
                (
                    p.case.as_str(),
                    Setting::of(p),
                    p.target_rho,
                    p.measured_rho,
                )
            })
            .collect()
    }

    /// The load the judged points of a setting ran at, in words from the run: their
    /// measured rho range and every point that missed its target, with both numbers.
    pub fn load_clause(&self, setting: Setting, j: &Judgement) -> String {
        let range = match j.rho_range {
            Some((lo, hi)) => format!("measured rho {lo:.2} to {hi:.2}"),
            None => "no point on target".to_owned(),
        };
        let missed: Vec<String> = self
            .missed_points()
            .into_iter()
            .filter(|m| m.1 == setting)
            .map(|(case, _, target, measured)| format!("{case} at {measured:.2} for {target:.1}"))
            .collect();
        if missed.is_empty() {
            format!("{range}, every point within 0.05 of its target rho")
        } else {
            format!(
                "{range}; {} point(s) missed their target rho by more than 0.05 after a repeat and are not judged: {}",
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

    /// The same for P-K with one occupancy law for every job (no opening delivery).
    pub fn undisturbed_one_law_errors(&self) -> Vec<f64> {
        self.errors_against(
            Setting::Bearer,
            |p| p.pk_undisturbed_ms,
            |p| p.undisturbed_wait_ms,
        )
    }

    /// Half-widths of the 95 % intervals of the undisturbed mean waits, relative to the
    /// waits, bearer setting, judged points.
    pub fn undisturbed_intervals(&self) -> Vec<f64> {
        self.load
            .iter()
            .filter(|p| judged(p, Setting::Bearer))
            .filter_map(|p| {
                let wait = p.undisturbed_wait_ms.filter(|w| *w > 0.0)?;
                Some(p.undisturbed_wait_ci95_ms? / wait)
            })
            .collect()
    }

    /// Median share of the window's jobs in the undisturbed part, bearer setting.
    pub fn undisturbed_share_median(&self) -> Option<f64> {
        let shares: Vec<f64> = self
            .load
            .iter()
            .filter(|p| Setting::of(p) == Setting::Bearer)
            .map(|p| p.undisturbed_share)
            .collect();
        wtlsperf_models::stats::median(&shares)
    }

    /// Largest |relative error| of a model over a setting's points with rho <= 0.8.
    pub fn max_error(
        &self,
        setting: Setting,
        pick: impl Fn(&LoadPoint) -> Option<f64>,
    ) -> Option<f64> {
        self.errors(setting, pick)
            .into_iter()
            .max_by(f64::total_cmp)
    }

    /// Median |relative error| of a model over a setting's points with rho <= 0.8.
    pub fn median_error(
        &self,
        setting: Setting,
        pick: impl Fn(&LoadPoint) -> Option<f64>,
    ) -> Option<f64> {
        wtlsperf_models::stats::median(&self.errors(setting, pick))
    }

    /// (points within 15 %, points) of a model over a setting's points with rho <= 0.8.
    pub fn within_15_percent(
        &self,
        setting: Setting,
        pick: impl Fn(&LoadPoint) -> Option<f64>,
    ) -> (usize, usize) {
        let e = self.errors(setting, pick);
        (e.iter().filter(|&&x| x <= 0.15).count(), e.len())
    }

    /// A capacity by key.
    pub fn capacity(
        &self,
        group: &str,
        mixture: &str,
        auth: Authentication,
        inputs: &str,
        variant: Variant,
    ) -> Option<f64> {
        self.capacities
            .iter()
            .find(|c| {
                c.0 == group && c.1 == mixture && c.2 == auth && c.3 == inputs && c.4 == variant
            })
            .map(|c| c.5)
    }
}

/// The models on the published service times (layer 1).
pub fn published_rows() -> (Vec<QueueRow>, Vec<Capacity>) {
    let mut rows = Vec::new();
    let mut caps = Vec::new();
    for group in category3_groups() {
        for auth in Authentication::ALL {
            for (mix, mixture) in mixtures(&group) {
                for variant in [Variant::AsPublished, Variant::Corrected] {
                    let Some(load) = published_load(auth, &mixture, variant) else {
                        continue;
                    };
                    caps.push((
                        group.id(),
                        mix.clone(),
                        auth,
                        "published",
                        variant,
                        load.capacity_handshakes_per_s(),
                    ));
                    for lambda in thesis_lambdas() {
                        rows.push(QueueRow {
                            model: "pk_mg1".into(),
                            variant: variant_name(variant).into(),
                            inputs: "published".into(),
                            group: group.id(),
                            mixture: mix.clone(),
                            auth: auth_name(auth).into(),
                            lambda_hs_per_s: lambda,
                            rho: load.utilisation(lambda),
                            predicted_wait_ms: load.mean_wait_ms(lambda),
                            measured_wait_ms: None,
                            relative_error: None,
                            measured_rho: None,
                            measured_wait_ci95_ms: None,
                            rho_missed: None,
                            outside_15_percent_and_interval: None,
                        });
                    }
                }
            }
        }
    }
    (rows, caps)
}

/// Arrival rates from 0 to 95 % of a capacity, `n` + 1 points.
pub fn lambdas_to(capacity: f64, n: usize) -> Vec<f64> {
    (0..=n)
        .map(|i| 0.95 * capacity * i as f64 / n as f64)
        .collect()
}

/// The models on our measured service times (layer 2).
pub fn measured_rows(mode: Mode, processing: &ProcessingResults) -> (Vec<QueueRow>, Vec<Capacity>) {
    let mut rows = Vec::new();
    let mut caps = Vec::new();
    let sim_jobs = match mode {
        Mode::Smoke => 2_000,
        Mode::Quick => 20_000,
        Mode::Full => 200_000,
    };
    for group in category3_groups() {
        for auth in Authentication::ALL {
            for (mix, mixture) in mixtures(&group) {
                let (Some(corr), Some(asp)) = (
                    measured_load(processing, auth, &mixture, Variant::Corrected),
                    measured_load(processing, auth, &mixture, Variant::AsPublished),
                ) else {
                    continue;
                };
                caps.push((
                    group.id(),
                    mix.clone(),
                    auth,
                    "measured",
                    Variant::Corrected,
                    corr.capacity_handshakes_per_s(),
                ));
                caps.push((
                    group.id(),
                    mix.clone(),
                    auth,
                    "measured",
                    Variant::AsPublished,
                    asp.capacity_handshakes_per_s(),
                ));
                let capacity = corr.capacity_handshakes_per_s();
                let per_handshake_ms = corr.mean_service_ms * corr.jobs_per_handshake;
                let row =
                    |model: &str, variant: &str, lambda: f64, rho: f64, w: Option<f64>| QueueRow {
                        model: model.into(),
                        variant: variant.into(),
                        inputs: "measured".into(),
                        group: group.id(),
                        mixture: mix.clone(),
                        auth: auth_name(auth).into(),
                        lambda_hs_per_s: lambda,
                        rho,
                        predicted_wait_ms: w,
                        measured_wait_ms: None,
                        relative_error: None,
                        measured_rho: None,
                        measured_wait_ci95_ms: None,
                        rho_missed: None,
                        outside_15_percent_and_interval: None,
                    };
                // Pooled per-job samples of the mixture, each case weighted by its share.
                let samples = pooled_jobs(processing, auth, &mixture);
                for lambda in lambdas_to(capacity, 19) {
                    rows.push(row(
                        "pk_mg1",
                        "corrected",
                        lambda,
                        corr.utilisation(lambda),
                        corr.mean_wait_ms(lambda),
                    ));
                    rows.push(row(
                        "pk_mg1",
                        "as_published",
                        lambda,
                        asp.utilisation(lambda),
                        asp.mean_wait_ms(lambda),
                    ));
                    let rho_h = lambda * per_handshake_ms / 1000.0;
                    rows.push(row(
                        "mm1_levi_savas",
                        "-",
                        lambda,
                        rho_h,
                        mm1_wait_ms(per_handshake_ms, rho_h),
                    ));
                    let job_rate = corr.job_rate_per_s(lambda);
                    for c in [1u32, 2, 4] {
                        rows.push(row(
                            &format!("allen_cunneen_c{c}"),
                            "corrected",
                            lambda,
                            corr.utilisation(lambda) / c as f64,
                            allen_cunneen_wait_ms(
                                job_rate,
                                c,
                                corr.mean_service_ms,
                                corr.second_moment_ms2,
                            ),
                        ));
                    }
                }
                if mix == "equal" && !samples.is_empty() {
                    for rho in [0.2, 0.4, 0.6, 0.8, 0.9] {
                        let lambda = rho * capacity;
                        let w = des_wait(&samples, corr.job_rate_per_s(lambda), sim_jobs);
                        rows.push(row("des_mg1", "corrected", lambda, rho, w));
                    }
                }
            }
        }
    }
    (rows, caps)
}

/// The per-job samples of a mixture: every job of every repetition of each case,
/// replicated in proportion to the case's weight (weights of 1/3 or 1 only need equal
/// repetition counts, which the runner gives).
pub fn pooled_jobs(
    processing: &ProcessingResults,
    auth: Authentication,
    mixture: &[(Case, f64)],
) -> Vec<f64> {
    let mut out = Vec::new();
    for (c, w) in mixture {
        if *w <= 0.0 {
            continue;
        }
        if let Some(r) = processing.find(c, auth) {
            out.extend(r.job_service_ms.iter().flatten().copied());
        }
    }
    out
}

/// Mean wait of a simulated M/G/1 queue fed with the given service-time samples.
pub fn des_wait(samples_ms: &[f64], job_rate_per_s: f64, jobs: usize) -> Option<f64> {
    let mut sampler = Empirical::new(samples_ms.to_vec())?;
    let cfg = SimConfig {
        arrival_rate_per_s: job_rate_per_s,
        servers: 1,
        jobs,
        warmup_jobs: jobs / 10,
        seed: 2004,
    };
    simulate(cfg, &mut sampler).ok().map(|r| r.mean_wait_ms)
}

/// Predictions for one measured load point (moments in ms, rates per second).
pub fn predict(
    lambda_hs: f64,
    jobs_per_handshake: f64,
    mean_ms: f64,
    m2_ms2: f64,
    samples_ms: &[f64],
    sim_jobs: usize,
) -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
    let job_rate = lambda_hs * jobs_per_handshake;
    let corrected = pk_mean_wait_ms(job_rate, mean_ms, m2_ms2);
    let as_published = pk_mean_wait_ms(lambda_hs, mean_ms, m2_ms2);
    let ts = jobs_per_handshake * mean_ms;
    let mm1 = mm1_wait_ms(ts, lambda_hs * ts / 1000.0);
    let des = des_wait(samples_ms, job_rate, sim_jobs);
    (corrected, as_published, mm1, des)
}

/// Part 2.
pub fn run(
    ctx: &Ctx,
    store: &PkiStore,
    processing: &ProcessingResults,
) -> anyhow::Result<QueueResults> {
    ctx.step("queue: models on the published service times");
    let (mut rows, mut capacities) = published_rows();
    ctx.step("queue: models and simulation on the measured service times");
    let (r2, c2) = measured_rows(ctx.mode, processing);
    rows.extend(r2);
    capacities.extend(c2);
    let (load, load_note) = match reality::run(ctx, store, processing) {
        Ok(points) => (points, None),
        Err(e) => (Vec::new(), Some(format!("load test not run: {e:#}"))),
    };
    for p in &load {
        for (model, w) in [
            ("pk_mg1_corrected", p.corrected_ms),
            ("pk_mg1_as_published", p.as_published_ms),
            ("mm1_levi_savas", p.mm1_ms),
            ("des_mg1", p.des_ms),
            ("chain_sim", p.chain_ms),
            ("trace_replay", p.replay_ms),
            ("pk_mg1_one_law_undisturbed", p.pk_undisturbed_ms),
            ("pk_mg1_corrected_undisturbed", p.corrected_undisturbed_ms),
        ] {
            // The undisturbed model is read against the undisturbed measurement.
            let (measured, ci) = if model.ends_with("_undisturbed") {
                (p.undisturbed_wait_ms, p.undisturbed_wait_ci95_ms)
            } else {
                (Some(p.measured_wait_ms), p.measured_wait_ci95_ms)
            };
            rows.push(QueueRow {
                model: format!("load_test_vs_{model}"),
                variant: if p.round_trip_ms > 0.0 {
                    format!("round_trip_{}ms", p.round_trip_ms)
                } else {
                    "loopback".into()
                },
                inputs: "measured".into(),
                group: p.case.clone(),
                mixture: "-".into(),
                auth: p.auth.clone(),
                lambda_hs_per_s: p.lambda_hs_per_s,
                rho: p.target_rho,
                predicted_wait_ms: w,
                measured_wait_ms: measured,
                relative_error: w.zip(measured).and_then(|(w, m)| relative_error(w, m)),
                measured_rho: Some(p.measured_rho),
                measured_wait_ci95_ms: ci,
                rho_missed: Some(p.rho_missed),
                outside_15_percent_and_interval: w
                    .zip(measured)
                    .map(|(w, m)| outside_both(w, m, ci)),
            });
        }
    }
    Ok(QueueResults {
        rows,
        load,
        capacities,
        load_note,
    })
}

pub mod calibrate;
pub mod reality;

impl QueueResults {
    /// The report section of part 2.
    pub fn section(&self, ctx: &Ctx) -> Section {
        let mut s = Section::new(
            "queue",
            "Queueing at the gateway (thesis 3.2, 4.2; Levi-Savas 4.2)",
        )
        .intro(
            "Eq. 3.12 (Pollaczek-Khinchin) as printed uses lambda = handshakes/s against the \
                 mean service time of one message, so rho understates the load by the k \
                 messages (jobs) per handshake. 'as published' keeps that reading and \
                 reproduces the thesis' curves; 'corrected' offers k x lambda jobs/s with the \
                 exact per-job mixture. A load test on the real gateway decides.",
        );
        s = s.table(self.capacity_table(ctx));
        for group in category3_groups() {
            for auth in Authentication::ALL {
                if let Some(f) = self.published_figure(&group, auth) {
                    s = s.figure(f);
                }
            }
        }
        for group in category3_groups() {
            for auth in Authentication::ALL {
                if let Some(f) = self.measured_figure(ctx, &group, auth) {
                    s = s.figure(f);
                }
            }
        }
        if let Some(note) = &self.load_note {
            s = s.paragraph(note.clone());
        }
        if !self.load.is_empty() {
            s = s.paragraph(format!(
                "Each load point runs in two settings. 'bearer round trip': each client answer \
                 waits an exponential delay of {} ms mean, as a handset's answers follow the \
                 gateway's flight only after a bearer round trip; a handshake's jobs then reach \
                 the gateway independently of its queue, the setting of Eq. 3.12. 'loopback': \
                 the client answers at once, so a handshake's key-exchange job arrives some \
                 10 us after its ClientHello job left the worker, in step with the queue; only \
                 the handshake-chain simulation describes that. The waits are read over each \
                 run's steady window (a tenth of it, at most 0.25 s, cut at either end).",
                reality::BEARER_ROUND_TRIP_MS
            ));
            s = s.table(self.load_table(ctx));
            s = s.figure(self.load_figure(ctx, Setting::Bearer));
            s = s.figure(self.load_figure(ctx, Setting::Loopback));
        }
        s
    }

    fn capacity_table(&self, ctx: &Ctx) -> Table {
        let p = Provenance::modelled(
            "Bayoglu 2004 Eq. 3.12-3.19, rho = 1",
            "published T_PD_S and Tables 4.5/4.6/4.9/4.10",
        );
        let m = Provenance::modelled(
            "Eq. 3.12-3.19, rho = 1",
            format!("per-job gateway CPU measured in run {}", ctx.run_id),
        );
        let mut t = Table::new(
            "queue_capacity",
            "Gateway capacity (handshakes/s at rho = 1), category 3",
        )
        .caption("Upper limit of one single-threaded gateway per group and mixture.")
        .column(Column::label("group"))
        .column(Column::label("mixture"))
        .column(Column::label("auth"))
        .column(Column::new(
            "published inputs, as published",
            Some("hs/s"),
            p.clone(),
        ))
        .column(Column::new("published inputs, corrected", Some("hs/s"), p))
        .column(Column::new(
            "our inputs, as published",
            Some("hs/s"),
            m.clone(),
        ))
        .column(Column::new("our inputs, corrected", Some("hs/s"), m));
        for group in category3_groups() {
            for auth in Authentication::ALL {
                for (mix, _) in mixtures(&group) {
                    let g = group.id();
                    t = t.row(vec![
                        Cell::text(&g),
                        Cell::text(&mix),
                        Cell::text(auth_name(auth)),
                        Cell::opt(
                            self.capacity(&g, &mix, auth, "published", Variant::AsPublished),
                            1,
                        ),
                        Cell::opt(
                            self.capacity(&g, &mix, auth, "published", Variant::Corrected),
                            1,
                        ),
                        Cell::opt(
                            self.capacity(&g, &mix, auth, "measured", Variant::AsPublished),
                            0,
                        ),
                        Cell::opt(
                            self.capacity(&g, &mix, auth, "measured", Variant::Corrected),
                            0,
                        ),
                    ]);
                }
            }
        }
        t.note("Thesis section 4.2 quotes 72 handshakes/s for group 2 mutual; the formula as printed gives 79.1 (163k leaves).")
    }

    fn curve(&self, filter: impl Fn(&QueueRow) -> bool) -> Vec<(f64, f64)> {
        self.rows
            .iter()
            .filter(|r| filter(r))
            .filter_map(|r| Some((r.lambda_hs_per_s, r.predicted_wait_ms?)))
            .collect()
    }

    fn published_figure(&self, group: &Group, auth: Authentication) -> Option<Figure> {
        let number = match (auth, group.group) {
            (Authentication::Mutual, g) => 12 + g as u32,
            (Authentication::ServerAuth, g) => 19 + g as u32,
        };
        let mut chart = LineChart::new(
            Axis::new("arrival rate lambda", "handshakes/s"),
            Axis::new("mean wait of a job", "ms").log(),
        );
        for (i, (mix, _)) in mixtures(group).into_iter().enumerate() {
            for variant in [Variant::AsPublished, Variant::Corrected] {
                let pts = self.curve(|r| {
                    r.inputs == "published"
                        && r.group == group.id()
                        && r.mixture == mix
                        && r.auth == auth_name(auth)
                        && r.variant == variant_name(variant)
                        && r.predicted_wait_ms.is_some_and(|w| w > 0.0)
                });
                if pts.is_empty() {
                    continue;
                }
                chart = chart.series(
                    Series::new(
                        format!("{mix} {}", variant_name(variant)),
                        Provenance::modelled(
                            format!("Bayoglu 2004 Eq. 3.12, {}", variant_name(variant)),
                            "published service times (Tables 4.1/4.2 x server % tables)",
                        ),
                        pts,
                    )
                    .colour(i),
                );
            }
        }
        if chart.series.is_empty() {
            return None;
        }
        Some(
            Figure::new(
                format!("fig4_{number}_queue_{}_{}", group.id(), auth_name(auth)),
                format!(
                    "Figure 4.{number}: category 3 group {} queue delay, {auth:?} (published service times)",
                    group.group
                ),
                chart,
            )
            .caption("As published reproduces the thesis' curves; corrected saturates k times earlier.")
            .size(900, 480),
        )
    }

    fn measured_figure(&self, ctx: &Ctx, group: &Group, auth: Authentication) -> Option<Figure> {
        let filt = |model: &'static str, variant: &'static str| {
            let g = group.id();
            move |r: &QueueRow| {
                r.inputs == "measured"
                    && r.group == g
                    && r.mixture == "equal"
                    && r.auth == auth_name(auth)
                    && r.model == model
                    && (variant.is_empty() || r.variant == variant)
                    && r.predicted_wait_ms.is_some_and(|w| w > 0.0)
            }
        };
        let inputs = format!("per-job gateway CPU, run {}", ctx.run_id);
        let mut chart = LineChart::new(
            Axis::new("arrival rate lambda", "handshakes/s"),
            Axis::new("mean wait", "ms").log(),
        );
        for (name, model, variant, eq) in [
            (
                "M/G/1 corrected",
                "pk_mg1",
                "corrected",
                "Bayoglu 2004 Eq. 3.12, k jobs per handshake",
            ),
            (
                "M/G/1 as published",
                "pk_mg1",
                "as_published",
                "Bayoglu 2004 Eq. 3.12 as printed",
            ),
            (
                "M/M/1 Levi-Savas (per handshake)",
                "mm1_levi_savas",
                "",
                "Levi-Savas 2003, Tw = Ts rho/(1-rho)",
            ),
            (
                "M/G/2 Allen-Cunneen",
                "allen_cunneen_c2",
                "",
                "Allen-Cunneen, c = 2",
            ),
            (
                "M/G/4 Allen-Cunneen",
                "allen_cunneen_c4",
                "",
                "Allen-Cunneen, c = 4",
            ),
            (
                "discrete-event simulation",
                "des_mg1",
                "",
                "M/G/1 simulation, resampled measured jobs",
            ),
        ] {
            let pts = self.curve(filt(model, variant));
            if !pts.is_empty() {
                chart = chart.series(Series::new(
                    name,
                    Provenance::modelled(eq, inputs.clone()),
                    pts,
                ));
            }
        }
        if chart.series.is_empty() {
            return None;
        }
        Some(
            Figure::new(
                format!("queue_ours_{}_{}", group.id(), auth_name(auth)),
                format!(
                    "Our gateway: category 3 group {} ({auth:?}, equal key-size mix)",
                    group.group
                ),
                chart,
            )
            .size(900, 480),
        )
    }

    fn load_table(&self, ctx: &Ctx) -> Table {
        let m = ctx.measured();
        let inputs = "measured per-job service moments of the same load run";
        let mut t = Table::new("queue_load_test", "Load test: measured job wait vs the models (one worker)")
            .caption("rho from the gateway's own per-handshake service time (calibration run); waits are per job (datagram), from the gateway's job records, from the kernel's receive timestamp to the start of service, over each run's steady window (a tenth of the run, at most 0.25 s, cut at either end). 'measured wait' is the queueing wait the models predict: a job's wait when it arrived while the worker was busy with earlier jobs, zero when it found the worker idle; what jobs that found the worker idle waited (the path from the kernel to the worker, and any time the shared machine did not run the worker) is shown apart, with the total. Generator and gateway worker on separate cores.")
            .column(Column::label("case"))
            .column(Column::label("auth"))
            .column(Column::new("round trip", Some("ms"), Provenance::derived("emulated bearer round trip before each client answer, exponential mean; 0 = bare loopback")))
            .column(Column::new("target rho", None, Provenance::derived("lambda x per-handshake gateway service (calibration)")))
            .column(Column::new("lambda", Some("hs/s"), m.clone()))
            .column(Column::new("measured rho", None, m.clone()))
            .column(Column::new("warm-ups", None, Provenance::derived("short runs in the point's conditions until the measured rho is within 0.03 of the target")))
            .column(Column::new("warm-up rho", None, m.clone()))
            .column(Column::new("recordings", None, Provenance::derived("2 when the first recording's rho missed the target by more than 0.05")))
            .column(Column::label("rho missed"))
            .column(Column::new("k jobs/handshake", None, m.clone()))
            .column(Column::new("measured wait", Some("ms"), m.clone()))
            .column(Column::new("95 % interval", Some("+- %"), Provenance::derived("batch means: 20 batches of the window's jobs in service order, Student's t")))
            .column(Column::new("total wait", Some("ms"), m.clone()))
            .column(Column::new("idle arrivals", Some("%"), m.clone()))
            .column(Column::new("idle-arrival wait", Some("ms"), m.clone()))
            .column(Column::new("first-job wait", Some("ms"), m.clone()))
            .column(Column::new("delivery delay", Some("ms"), m.clone()))
            .column(Column::new("late sends", Some("%"), m.clone()))
            .column(Column::new("steal", Some("ms"), m.clone()))
            .column(Column::new("worker stalls", None, m.clone()))
            .column(Column::new("worker stalled", Some("ms"), m.clone()))
            .column(Column::new("generator stalls", None, m.clone()))
            .column(Column::new("generator stalled", Some("ms"), m.clone()))
            .column(Column::new("sends > 0.2 ms late", None, m.clone()))
            .column(Column::new("delivery stalls", None, m.clone()))
            .column(Column::new("delivery stalled", Some("ms"), m.clone()))
            .column(Column::new("M/G/1 corrected", Some("ms"), Provenance::modelled("Eq. 3.12 at k x lambda", inputs)))
            .column(Column::new("error corrected", Some("%"), Provenance::derived("(model - measured)/measured")))
            .column(Column::new("undisturbed jobs", Some("%"), m.clone()))
            .column(Column::new("undisturbed wait", Some("ms"), m.clone()))
            .column(Column::new("95 % interval", Some("+- %"), Provenance::derived("batch means: 20 batches of the undisturbed jobs in arrival order, Student's t")))
            .column(Column::new("opening delivery", Some("us"), m))
            .column(Column::new("P-K one law, undisturbed", Some("ms"), Provenance::modelled("Eq. 3.12 at k x lambda", "job rate and occupancy moments of the undisturbed jobs")))
            .column(Column::new("error one law", Some("%"), Provenance::derived("(model - undisturbed wait)/undisturbed wait")))
            .column(Column::new("M/G/1 corrected, undisturbed", Some("ms"), Provenance::modelled("Eq. 3.12 at k x lambda, the busy period's opening job apart (Welch 1964)", "job rate and occupancy moments of the undisturbed jobs; those that found the worker idle hold it for their measured delivery too")))
            .column(Column::new("error undisturbed", Some("%"), Provenance::derived("(model - undisturbed wait)/undisturbed wait")))
            .column(Column::new("M/G/1 as published", Some("ms"), Provenance::modelled("Eq. 3.12 at lambda", inputs)))
            .column(Column::new("error as published", Some("%"), Provenance::derived("(model - measured)/measured")))
            .column(Column::new("M/M/1 Levi-Savas", Some("ms"), Provenance::modelled("Levi-Savas 2003 Tw", inputs)))
            .column(Column::new("simulation", Some("ms"), Provenance::modelled("M/G/1 DES", inputs)))
            .column(Column::new("handshake chains", Some("ms"), Provenance::modelled("chain simulation (wtlsperf)", "measured job chains and think time of the same run")))
            .column(Column::new("error chains", Some("%"), Provenance::derived("(model - measured)/measured")))
            .column(Column::new("trace replay", Some("ms"), Provenance::modelled("FIFO single server, Lindley recursion", "the run's own arrival instants and job occupancies")))
            .column(Column::new("error replay", Some("%"), Provenance::derived("(model - measured)/measured")));
        for p in &self.load {
            let err_against = |w: Option<f64>, measured: Option<f64>| {
                let e = w
                    .zip(measured)
                    .and_then(|(w, m)| relative_error(w, m))
                    .map(|e| e * 100.0);
                let cell = Cell::opt(e, 1);
                match e {
                    Some(e) if e.abs() > 15.0 && p.target_rho <= 0.8 && !p.rho_missed => {
                        cell.flag("outside the 15 % target")
                    }
                    _ => cell,
                }
            };
            let err = |w: Option<f64>| err_against(w, Some(p.measured_wait_ms));
            let relative_ci = |ci: Option<f64>, w: Option<f64>| {
                ci.zip(w)
                    .and_then(|(h, w)| (w > 0.0).then(|| 100.0 * h / w))
            };
            let missed = if p.rho_missed {
                Cell::text("missed")
                    .flag("measured rho more than 0.05 from the target after a repeat: not judged")
            } else {
                Cell::text("-")
            };
            t = t.row(vec![
                Cell::text(&p.case),
                Cell::text(&p.auth),
                Cell::num(p.round_trip_ms, 0),
                Cell::num(p.target_rho, 2),
                Cell::num(p.lambda_hs_per_s, 1),
                Cell::num(p.measured_rho, 2),
                Cell::num(p.warmups as f64, 0),
                Cell::opt(p.warmup_rho, 2),
                Cell::num(p.attempts as f64, 0),
                missed,
                Cell::num(p.jobs_per_handshake, 2),
                Cell::num(p.measured_wait_ms, 3),
                Cell::opt(
                    relative_ci(p.measured_wait_ci95_ms, Some(p.measured_wait_ms)),
                    1,
                ),
                Cell::num(p.total_wait_ms, 3),
                Cell::num(p.idle_arrival_share * 100.0, 1),
                Cell::num(p.idle_arrival_wait_ms, 4),
                Cell::opt(p.first_job_wait_ms, 3),
                Cell::num(p.delivery_ms, 3),
                Cell::num(p.late_share * 100.0, 2),
                Cell::opt(p.steal_ms, 0),
                Cell::num(p.worker_stalls as f64, 0),
                Cell::num(p.worker_stall_ms, 1),
                Cell::num(p.generator_stalls as f64, 0),
                Cell::num(p.generator_stall_ms, 1),
                Cell::num(p.late_sends as f64, 0),
                Cell::num(p.delivery_stalls as f64, 0),
                Cell::num(p.delivery_stall_ms, 1),
                Cell::opt(p.corrected_ms, 3),
                err(p.corrected_ms),
                Cell::num(p.undisturbed_share * 100.0, 0),
                Cell::opt(p.undisturbed_wait_ms, 3),
                Cell::opt(
                    relative_ci(p.undisturbed_wait_ci95_ms, p.undisturbed_wait_ms),
                    1,
                ),
                Cell::opt(p.undisturbed_opening_delivery_ms.map(|d| d * 1e3), 1),
                Cell::opt(p.pk_undisturbed_ms, 3),
                err_against(p.pk_undisturbed_ms, p.undisturbed_wait_ms),
                Cell::opt(p.corrected_undisturbed_ms, 3),
                err_against(p.corrected_undisturbed_ms, p.undisturbed_wait_ms),
                Cell::opt(p.as_published_ms, 3),
                err(p.as_published_ms),
                Cell::opt(p.mm1_ms, 3),
                Cell::opt(p.des_ms, 3),
                Cell::opt(p.chain_ms, 3),
                err(p.chain_ms),
                Cell::opt(p.replay_ms, 3),
                err(p.replay_ms),
            ]);
        }
        t
    }

    fn load_figure(&self, ctx: &Ctx, setting: Setting) -> Figure {
        let mut chart = LineChart::new(
            Axis::new("measured utilisation rho", ""),
            Axis::new("mean job wait", "ms").log(),
        );
        let cases: Vec<String> = {
            let mut v: Vec<String> = self.load.iter().map(|p| p.case.clone()).collect();
            v.sort();
            v.dedup();
            v
        };
        let n = cases.len().max(1);
        for (i, case) in cases.iter().enumerate() {
            // One colour per curve: the case, then the model (measured points share the
            // case's first colour).
            let pts = |f: &dyn Fn(&LoadPoint) -> Option<f64>| -> Vec<(f64, f64)> {
                self.load
                    .iter()
                    .filter(|p| &p.case == case && Setting::of(p) == setting)
                    .filter_map(|p| Some((p.measured_rho, f(p).filter(|w| *w > 0.0)?)))
                    .collect()
            };
            chart = chart
                .series(
                    Series::new(
                        format!("{case} measured"),
                        ctx.measured(),
                        pts(&|p| Some(p.measured_wait_ms)),
                    )
                    .colour(i),
                )
                .series(
                    Series::new(
                        format!("{case} M/G/1 corrected"),
                        Provenance::modelled("Eq. 3.12 at k x lambda", "measured per-job moments"),
                        pts(&|p| p.corrected_ms),
                    )
                    .colour(i + n),
                )
                .series(
                    Series::from_points(
                        format!("{case} measured, undisturbed part (95 % interval)"),
                        ctx.measured(),
                        self.load
                            .iter()
                            .filter(|p| &p.case == case && Setting::of(p) == setting)
                            .filter_map(|p| {
                                let w = p.undisturbed_wait_ms.filter(|w| *w > 0.0)?;
                                Some(match p.undisturbed_wait_ci95_ms {
                                    // The axis is logarithmic: the bar stops above zero.
                                    Some(h) => Point::with_err(
                                        p.measured_rho,
                                        w,
                                        (w - h).max(0.01 * w),
                                        w + h,
                                    ),
                                    None => Point::new(p.measured_rho, w),
                                })
                            })
                            .collect(),
                    )
                    .colour(i + 4 * n),
                )
                .series(
                    Series::new(
                        format!("{case} M/G/1 corrected, undisturbed part"),
                        Provenance::modelled(
                            "Eq. 3.12 at k x lambda",
                            "the undisturbed jobs' rate and occupancy moments",
                        ),
                        pts(&|p| p.corrected_undisturbed_ms),
                    )
                    .colour(i + 5 * n),
                )
                .series(
                    Series::new(
                        format!("{case} handshake chains"),
                        Provenance::modelled("chain simulation", "measured job chains"),
                        pts(&|p| p.chain_ms),
                    )
                    .colour(i + 2 * n),
                )
                .series(
                    Series::new(
                        format!("{case} M/G/1 as published"),
                        Provenance::published("Bayoglu 2004 Eq. 3.12 reading: lambda handshakes/s"),
                        pts(&|p| p.as_published_ms),
                    )
                    .colour(i + 3 * n),
                );
        }
        let (id, title) = match setting {
            Setting::Bearer => (
                "queue_load_test",
                format!(
                    "Gateway wait vs queue models: {} ms bearer round trip",
                    reality::BEARER_ROUND_TRIP_MS
                ),
            ),
            Setting::Loopback => (
                "queue_load_test_loopback",
                "Gateway wait vs queue models: bare loopback".to_owned(),
            ),
        };
        Figure::new(id, title, chart).size(900, 480)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_those_of_table_3_3() {
        let g = category3_groups();
        assert_eq!(g.len(), 4);
        assert!(g.iter().all(|g| g.cases.len() == 3));
        assert_eq!(g[1].cases[0].to_string(), "283k/163k");
        assert_eq!(mixtures(&g[0]).len(), 4);
    }

    #[test]
    fn published_capacity_of_group_2_mutual_is_the_printed_formula() {
        let (_, caps) = published_rows();
        let c = caps
            .iter()
            .find(|c| {
                c.0 == "cat3-g2"
                    && c.1 == "163k"
                    && c.2 == Authentication::Mutual
                    && c.4 == Variant::AsPublished
            })
            .unwrap();
        assert_eq!((c.5 * 10.0).round() / 10.0, 79.1);
    }

    #[test]
    fn corrected_prediction_is_k_times_the_as_published_rho() {
        let samples = vec![1.0, 3.0];
        let (corr, asp, mm1, des) = predict(100.0, 2.0, 2.0, 5.0, &samples, 50_000);
        // k lambda = 200 jobs/s, E[X] = 2 ms: rho = 0.4, W = 0.2 x 5 / 1.2 = 0.8333 ms.
        assert!((corr.unwrap() - 0.2 * 5.0 / 1.2).abs() < 1e-9);
        // lambda = 100/s: rho = 0.2, W = 0.1 x 5 / 1.6.
        assert!((asp.unwrap() - 0.1 * 5.0 / 1.6).abs() < 1e-9);
        // Ts = 4 ms, rho = 0.4: 4 x 0.4 / 0.6.
        assert!((mm1.unwrap() - 4.0 * 0.4 / 0.6).abs() < 1e-9);
        let des = des.unwrap();
        assert!((des - corr.unwrap()).abs() / corr.unwrap() < 0.1, "{des}");
    }

    /// A bearer point: target and measured rho, measured wait and its interval, the
    /// corrected model's prediction.
    fn bearer(target: f64, rho: f64, wait: f64, ci: f64, model: f64, missed: bool) -> LoadPoint {
        LoadPoint {
            case: "283k/283k".into(),
            round_trip_ms: 20.0,
            target_rho: target,
            measured_rho: rho,
            measured_wait_ms: wait,
            measured_wait_ci95_ms: Some(ci),
            corrected_ms: Some(model),
            rho_missed: missed,
            ..Default::default()
        }
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
            capacities: Vec::new(),
            load_note: None,
        };
        let j = q.corrected_judgement();
        assert_eq!(j.points(), 3);
        assert_eq!((j.within, j.outside_both, j.missed), (1, 1, 1));
        assert_eq!(j.rho_range, Some((0.31, 0.72)));
        assert!((j.worst().unwrap() - 0.4).abs() < 1e-12);
        let clause = q.load_clause(Setting::Bearer, &j);
        assert!(clause.contains("measured rho 0.31 to 0.72"), "{clause}");
        assert!(clause.contains("283k/283k at 0.90 for 0.8"), "{clause}");
        assert_eq!(
            q.within_15_percent(Setting::Bearer, |p| p.corrected_ms),
            (1, 3)
        );
        // Nothing in the loopback setting.
        assert_eq!(
            q.judge(Setting::Loopback, |p| p.corrected_ms, |_| None)
                .points(),
            0
        );
    }

    #[test]
    fn lambda_grid_stops_short_of_saturation() {
        let l = lambdas_to(100.0, 19);
        assert_eq!(l.len(), 20);
        assert_eq!(l[0], 0.0);
        assert!((l[19] - 95.0).abs() < 1e-9);
    }
}
