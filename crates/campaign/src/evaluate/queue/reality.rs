//! The load test of part 2: open-loop Poisson handshakes against the in-process gateway
//! with ONE worker, at target utilisations rho, and the mean job wait from the gateway's
//! own job records beside every model's prediction for the same point.
//!
//! The generator and the gateway worker are pinned to different cores (the worker
//! busy-polls), so a job waits only behind other jobs: on a 2-core machine that is the
//! difference between measuring the queue and measuring the scheduler. rho is set from
//! the gateway's own per-handshake service time, measured in a short calibration run
//! before the points (over UDP a job costs more than in memory: system calls and the
//! loopback path). The cases are the slow ones of each family (283k/283k, rsa2048), so
//! that a job lasts hundreds of microseconds and the generator's share of the machine
//! stays small. (The fast 256p/256p needs over 12 000 handshakes/s at rho = 0.9, where the
//! generator on one core falls behind; its capacity is measured by `wtlsperf load
//! --capacity` instead.)
//!
//! Every point runs twice: with the client answering at once (bare loopback, where a
//! handshake's next job follows the previous one by some 10 us and the job stream is
//! not Poisson), and with an emulated bearer round trip ([`BEARER_ROUND_TRIP_MS`], an
//! exponential delay before each client answer, as the thesis' clients had hundreds of
//! milliseconds between flights), which is the setting the P-K model describes.
//!
//! The queue is read over a steady window: the jobs that arrived in the run's arrival
//! span less a tenth of it (at most [`wtlsperf_models::queue::trace::EDGE_MAX_NS`]) at either end, so the empty queue of
//! the start and the drain at the end (where only the last handshakes' second jobs
//! arrive) bias neither the measured wait nor the arrival rate the models get.
//!
//! It is read twice: over the whole window, and over its *undisturbed* part. On a shared
//! virtual machine a thread is sometimes off its core although it never sleeps: the
//! hypervisor deschedules the virtual CPU, or a kernel thread (on the test machine mostly
//! DAMON's `kdamond`, for 1-5 ms) or another process preempts it. When that happens to
//! the gateway's worker (its [`wtlsperf_drivers::gateway::Stall`] log) every job arriving meanwhile waits for it; when
//! it happens to the generator (its own stall log) every send due meanwhile leaves late,
//! and the Poisson stream arrives as a burst. Neither is part of the queue the models
//! describe, and at low load one such stall every few hundred milliseconds adds more wait
//! than the queue itself: a run at rho = 0.3 measured 14-17 % above P-K, and 0-1 % from it
//! without the stalls. The undisturbed part leaves out every job whose time at the gateway,
//! from its arrival to the end of its occupancy, meets a stall or the time the queue takes
//! to forget it afterwards ([`settle_ns`]): a job that was waiting or in service when a
//! stall came holds it in its wait or its service time, and one service of 20 ms among
//! thousands of 0.2 ms would alone raise the E[S^2] the model gets by a third. Both logs
//! record a thread being off-core while it had work, whatever the queue's state, so what
//! is left is a fair sample of the queue; the table shows how much of the window it is.
//! (The generator's late sends are not the criterion: a send can also be late because
//! many were due at once, which is the arrival process itself.)
//!
//! The model the undisturbed part is judged against keeps the job that opens a busy
//! period apart ([`UndisturbedQueue::exceptional_first_ms`]): the kernel stamps a
//! datagram on arrival, and an idle worker polls it out some microseconds later, while a
//! job that arrives behind a busy worker is taken as the worker turns round. So the
//! opener holds the worker from its arrival, and the jobs arriving during its delivery
//! wait for that too; P-K with one law for every job misses about rho x the delivery per
//! job, 2-4 % of the wait at rho = 0.1. A trace replay that gives each opener its
//! measured delivery reproduces the measured mean wait exactly. Each undisturbed mean
//! wait comes with its batch-means 95 % interval: at low load few jobs wait at all, and a
//! mean wait is a noisy thing to measure.
//!
//! Both corrected models take the *flights* as the Poisson arrivals
//! ([`wtlsperf_models::queue::trace::FlightLoad`]): a client whose flight spans several
//! datagrams (DTLS 1.3, WTLS with one message per datagram) hands the worker several
//! jobs at once, and the later ones always wait for the earlier; with one datagram a
//! flight the model is Eq. 3.12 at the job rate, as before.

use std::time::Duration;
use wtlsperf_models::queue::pk_mean_wait_ms;

use wtls::handshake::Packing;
use wtls::suite::Case;
use wtlsperf_models::Authentication;

use super::calibrate::{calibrate, record, RateEstimate, Take, MAX_WARMUPS};
use super::disturbance::{Cause, RecordingLoad, RerecordBudget};
use super::modelled::predict;
use super::point::{
    Disturbances, LoadPoint, PointCalibration, Predictions, RecordingFigures, RunFigures,
    UndisturbedFigures, WindowWait,
};
use crate::evaluate::context::{Ctx, Mode};
use crate::evaluate::processing::ProcessingResults;
use wtlsperf_drivers::gateway::JobRecord;
use wtlsperf_drivers::load::{run_load, Arrivals, LoadReport, LoadSpec, RoundTripLaw};
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::registry::wtls::WtlsCase;
use wtlsperf_drivers::registry::{self, Bench, Contender};

/// Mean of the emulated bearer round trip (ms, exponential) of the second run of every
/// point: 100 times a job of the measured cases, so the answers are independent of the
/// queue, yet short enough that a run's drain at the end is a small part of it.
pub const BEARER_ROUND_TRIP_MS: f64 = 20.0;

/// The load points of a mode: cases, the length of each warm-up, and per setting
/// (round trip in ms, 0 = bare loopback) the points as (target utilisation, seconds).
pub struct Plan {
    pub cases: Vec<&'static str>,
    pub warmup: WarmupLength,
    pub settings: Vec<(f64, Vec<(f64, f64)>)>,
}

/// How long a warm-up runs: long enough for `handshakes` arrivals, within
/// [`min_s`, `max_s`] seconds. The measured rho of a short run is noisy only through the
/// occupancy's mean (the arrivals' count is exact, see [`Arrivals::PoissonExactCount`]),
/// so a few hundred handshakes read it to about a percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmupLength {
    pub handshakes: f64,
    pub min_s: f64,
    pub max_s: f64,
}

impl WarmupLength {
    /// Seconds of a warm-up at `lambda` handshakes/s.
    pub fn seconds(&self, lambda: f64) -> f64 {
        (self.handshakes / lambda.max(1e-9)).clamp(self.min_s, self.max_s)
    }
}

/// The full run spends its time where the model is tested, nine utilisations with the
/// bearer round trip, and gives each the length its mean wait needs: at low load few
/// jobs wait at all (at rho = 0.1 the batch-means interval of a 20 s run is +-11 %), and
/// near saturation the queue's memory is long; in between (rho 0.3-0.6) a mean wait
/// converges within seconds, and those points are shorter than the run that measured
/// them before the points were calibrated, which pays for the warm-ups (some 1-2 s each)
/// within the full evaluation's 15 minutes. Bare loopback, the contrast, gets three short
/// points.
pub fn plan(mode: Mode) -> Plan {
    let cases = vec!["283k/283k", "rsa2048/rsa2048"];
    let at = |rhos: &[f64], seconds: f64| rhos.iter().map(|&r| (r, seconds)).collect();
    match mode {
        Mode::Smoke => Plan {
            cases: vec!["256p/256p"],
            warmup: WarmupLength {
                handshakes: 100.0,
                min_s: 0.3,
                max_s: 0.3,
            },
            settings: vec![
                (0.0, at(&[0.3], 0.5)),
                (BEARER_ROUND_TRIP_MS, at(&[0.3], 0.5)),
            ],
        },
        Mode::Quick => Plan {
            cases,
            warmup: WarmupLength {
                handshakes: 300.0,
                min_s: 0.6,
                max_s: 1.0,
            },
            settings: vec![
                (0.0, at(&[0.3, 0.6, 0.8], 1.0)),
                (
                    BEARER_ROUND_TRIP_MS,
                    vec![(0.3, 4.0), (0.6, 4.0), (0.8, 5.0)],
                ),
            ],
        },
        Mode::Full => Plan {
            cases,
            warmup: WarmupLength {
                handshakes: 400.0,
                min_s: 0.6,
                max_s: 1.5,
            },
            settings: vec![
                (0.0, at(&[0.3, 0.6, 0.8], 2.0)),
                (
                    BEARER_ROUND_TRIP_MS,
                    vec![
                        (0.1, 20.0),
                        (0.2, 12.0),
                        (0.3, 7.0),
                        (0.4, 6.0),
                        (0.5, 6.0),
                        (0.6, 6.0),
                        (0.7, 8.0),
                        (0.8, 14.0),
                        (0.9, 5.0),
                    ],
                ),
            ],
        },
    }
}

/// The load test's designed headline points in a mode: every case's bearer-setting
/// points with target rho <= 0.8 (16 in the full mode), the set the corrected model is
/// judged over and every headline count is counted against.
pub fn designed_points(mode: Mode) -> usize {
    let p = plan(mode);
    let bearer: usize = p
        .settings
        .iter()
        .filter(|s| s.0 > 0.0)
        .map(|s| s.1.iter().filter(|(rho, _)| *rho <= 0.8 + 1e-9).count())
        .sum();
    p.cases.len() * bearer
}

/// Planned recording seconds of the load test's own points and of DTLS 1.2's and
/// EDHOC's in a mode: what the queue part's re-recording allowance is a share of.
pub fn planned_seconds(mode: Mode) -> f64 {
    let of = |plan: &Plan| {
        plan.cases.len() as f64
            * plan
                .settings
                .iter()
                .flat_map(|s| &s.1)
                .map(|p| p.1)
                .sum::<f64>()
    };
    of(&plan(mode)) + of(&modern_plan(mode))
}

/// The DTLS 1.2 and EDHOC suites of the load test: DTLS's certificate mode (RFC 7925's
/// mandatory ECDHE-ECDSA suite) and EDHOC's method 3, each against its own real server
/// behind the same gateway worker. Both authenticate both sides: then the client's
/// public-key work per handshake is about the server's (server-authenticated DTLS leaves
/// the client two ECDSA verifications against the server's one signature, and the one
/// core of the generator falls behind the rate a worker at rho 0.5 takes, which a first
/// quick run showed: the warm-ups read the generator's shortfall as a low rho).
pub const MODERN_SUITES: [&str; 2] = [
    "dtls1.2:ecdhe-ecdsa-p256-ccm8-mutual",
    "edhoc:method3-suite2",
];

/// The text after `protocol:` of a contender's text.
fn configuration_of(text: &'static str) -> &'static str {
    text.split_once(':').map_or(text, |(_, c)| c)
}

/// The single-point configurations of the load test: DTLS 1.3 classical (P-256) and
/// ML-KEM-768, both mutual for the reason [`MODERN_SUITES`] are (the client's
/// public-key work per handshake about the server's, so the one-core generator keeps
/// up), and every protocol the registry adds by its default configuration.
pub const SINGLE_POINT: [&str; 2] = [
    "dtls1.3:ecdhe-p256-ecdsa-ccm8-mutual",
    "dtls1.3:mlkem768-ecdsa-ccm8-mutual",
];

/// The contenders of [`SINGLE_POINT`] this build has, and the registry's other
/// protocols beyond WTLS and [`MODERN_SUITES`]'.
pub fn single_point_contenders() -> Vec<Contender> {
    let mut named: Vec<&str> = MODERN_SUITES.to_vec();
    named.extend(SINGLE_POINT);
    crate::evaluate::contenders::with_every_protocol(&named)
        .into_iter()
        .filter(|c| !MODERN_SUITES.contains(&c.to_string().as_str()))
        .collect()
}

/// The modern protocols' points of a mode: the bearer setting only (the one the model
/// describes), one point at the middle utilisation in the short modes, three in the full
/// one. Their clients do as much public-key work per handshake as the server (DTLS's
/// more: two verifications), and the generator has one core, so no point goes above 0.7.
pub fn modern_plan(mode: Mode) -> Plan {
    let at = |rhos: &[f64], seconds: f64| rhos.iter().map(|&r| (r, seconds)).collect();
    let (warmup, points) = match mode {
        Mode::Smoke => (
            WarmupLength {
                handshakes: 100.0,
                min_s: 0.3,
                max_s: 0.3,
            },
            at(&[0.3], 0.5),
        ),
        Mode::Quick => (
            WarmupLength {
                handshakes: 300.0,
                min_s: 0.8,
                max_s: 1.2,
            },
            at(&[0.5], 2.0),
        ),
        Mode::Full => (
            WarmupLength {
                handshakes: 400.0,
                min_s: 0.6,
                max_s: 1.5,
            },
            at(&[0.3, 0.5, 0.7], 6.0),
        ),
    };
    Plan {
        cases: MODERN_SUITES.iter().map(|s| configuration_of(s)).collect(),
        warmup,
        settings: vec![(BEARER_ROUND_TRIP_MS, points)],
    }
}

/// Runs the DTLS 1.2 and EDHOC load points of the mode.
pub fn run_modern(
    ctx: &Ctx,
    store: &PkiStore,
    rerecord: &RerecordBudget,
) -> anyhow::Result<Vec<LoadPoint>> {
    let Plan {
        cases: _,
        warmup,
        settings,
    } = modern_plan(ctx.mode);
    let sim_jobs = if ctx.mode == Mode::Full {
        200_000
    } else {
        20_000
    };
    let planned_s: f64 = settings.iter().flat_map(|s| &s.1).map(|p| p.1).sum();
    let points = MODERN_SUITES.len() * settings.iter().map(|s| s.1.len()).sum::<usize>();
    let mut budget = Budget::new(MODERN_SUITES.len() as f64 * planned_s, points, rerecord);
    let mut out = Vec::new();
    for contender in MODERN_SUITES.iter().map(|t| registry::contender(t)) {
        let contender = contender?;
        let name = contender.configuration();
        ctx.step(&format!("queue load test: {contender} in memory"));
        let in_memory = contender.measure_in_memory(Bench { store }, 50, 10)?;
        // Over UDP a handshake costs the gateway more than in memory (system calls, the
        // loopback path); the warm-ups correct the guess.
        let mut estimate = RateEstimate::from_handshake_ms(in_memory.server_cpu_us / 1e3 * 1.5);
        for (round_trip_ms, points) in &settings {
            for &(rho, seconds) in points {
                let conditions = Conditions::of(&name, contender.clone(), rho, *round_trip_ms);
                out.push(calibrated_point(
                    ctx,
                    store,
                    &conditions,
                    &mut estimate,
                    &budget,
                    warmup,
                    seconds,
                    sim_jobs,
                )?);
                budget.done(seconds);
            }
        }
    }
    Ok(out)
}

/// The single-point configurations' load points ([`single_point_contenders`]): one
/// utilisation (0.5) per configuration on the bearer setting, short, so two points add
/// well under 30 s to a full evaluation.
pub fn run_single_points(
    ctx: &Ctx,
    store: &PkiStore,
    rerecord: &RerecordBudget,
) -> anyhow::Result<Vec<LoadPoint>> {
    let (warmup, seconds) = match ctx.mode {
        Mode::Smoke => (
            WarmupLength {
                handshakes: 100.0,
                min_s: 0.3,
                max_s: 0.3,
            },
            0.5,
        ),
        Mode::Quick => (
            WarmupLength {
                handshakes: 200.0,
                min_s: 0.5,
                max_s: 0.8,
            },
            1.5,
        ),
        Mode::Full => (
            WarmupLength {
                handshakes: 300.0,
                min_s: 0.8,
                max_s: 1.2,
            },
            4.0,
        ),
    };
    let sim_jobs = 20_000;
    let mut suites = single_point_contenders();
    if ctx.mode == Mode::Quick {
        // one point a protocol: the quick run shows each under load, the full run each
        // configuration
        let mut seen = Vec::new();
        suites.retain(|c| {
            let fresh = !seen.contains(&c.protocol());
            seen.push(c.protocol());
            fresh
        });
    }
    // Twice the usual calibration allowance per point: a DTLS 1.3 client's work is the
    // generator's, and a first quick run spent the second point's warm-ups on the first
    // (the ML-KEM point then ran once, uncalibrated, and collapsed). Full: about 25 s.
    let mut budget = Budget::new(suites.len() as f64 * seconds, 2 * suites.len(), rerecord);
    let mut out = Vec::new();
    for contender in suites {
        let name = contender.configuration();
        ctx.step(&format!("queue load test: {contender} in memory"));
        let m = contender.measure_in_memory(Bench { store }, 30, 0)?;
        let mut estimate = RateEstimate::from_handshake_ms(m.server_cpu_us / 1e3 * 1.5);
        let conditions = Conditions::of(&name, contender.clone(), 0.5, BEARER_ROUND_TRIP_MS);
        out.push(calibrated_point(
            ctx,
            store,
            &conditions,
            &mut estimate,
            &budget,
            warmup,
            seconds,
            sim_jobs,
        )?);
        budget.done(seconds);
    }
    Ok(out)
}

/// Runs the load points of the mode.
pub fn run(
    ctx: &Ctx,
    store: &PkiStore,
    processing: &ProcessingResults,
    rerecord: &RerecordBudget,
) -> anyhow::Result<Vec<LoadPoint>> {
    let Plan {
        cases,
        warmup,
        settings,
    } = plan(ctx.mode);
    let sim_jobs = if ctx.mode == Mode::Full {
        200_000
    } else {
        20_000
    };
    let planned_s: f64 = settings.iter().flat_map(|s| &s.1).map(|p| p.1).sum();
    let points = cases.len() * settings.iter().map(|s| s.1.len()).sum::<usize>();
    let mut budget = Budget::new(cases.len() as f64 * planned_s, points, rerecord);
    let mut out = Vec::new();
    for name in cases {
        let case = Case::parse(name)?;
        let Some(r) = processing.find(&case, Authentication::ServerAuth) else {
            continue;
        };
        let in_memory_ms: f64 = r.mean_jobs().iter().sum();
        anyhow::ensure!(in_memory_ms > 0.0, "{name}: no in-process service time");
        // The first guess only: the first point's warm-ups correct it, and every run
        // after corrects it again (the machine drifts from point to point).
        let mut estimate = RateEstimate::from_handshake_ms(in_memory_ms);
        for (round_trip_ms, points) in &settings {
            for &(rho, seconds) in points {
                let conditions = Conditions::plain(name, case, rho, *round_trip_ms);
                out.push(calibrated_point(
                    ctx,
                    store,
                    &conditions,
                    &mut estimate,
                    &budget,
                    warmup,
                    seconds,
                    sim_jobs,
                )?);
                budget.done(seconds);
            }
        }
    }
    anyhow::ensure!(!out.is_empty(), "no load point could be run");
    Ok(out)
}

/// The utilisation a load point is calibrated to and judged at: that of the jobs no stall
/// disturbed (their arrival rate times their mean service), where the run has enough of
/// them, else the whole window's occupancy.
///
/// Why: the models are judged on the undisturbed jobs, so the point's rho is theirs. A
/// window's occupancy also counts the time the worker lost to its core's other tenants
/// inside jobs (a hypervisor's steal, the interference injector's bursts): at a 5 % duty
/// cycle that lifted the whole-window rho 0.03-0.08 above the undisturbed jobs' at every
/// point, and a calibration aimed at it both missed its target at rho 0.7-0.8 and set the
/// undisturbed load below the design.
fn judged_rho(rep: &LoadReport) -> f64 {
    let disturbed = disturbed_of(rep);
    SteadyQueue::of(&rep.jobs, &disturbed).map_or(0.0, |q| {
        q.undisturbed.as_ref().map_or(q.utilisation, |u| {
            u.job_rate_per_s * u.service_mean_ms / 1e3
        })
    })
}

/// The intervals of a run that a stall of the worker, the generator or the delivery
/// disturbed.
fn disturbed_of(rep: &LoadReport) -> Vec<(u64, u64)> {
    let others: Vec<(u64, u64)> = rep
        .generator_stall_log
        .iter()
        .chain(&rep.delivery_stall_log)
        .copied()
        .collect();
    disturbed_intervals(&rep.stalls, &others)
}

/// The utilisation a run tells the calibration: what it measured, except that a run in
/// which fewer than [`COLLAPSED_SUCCESS`] of the handshakes completed was overloaded
/// (the gateway fell behind, handshakes timed out and the worker served retransmissions),
/// and counts as rho = 1 at least. Read as measured, such a run's low occupancy over the
/// window would make the next rate higher still.
pub(crate) fn calibration_rho(measured: f64, success_ratio: f64) -> f64 {
    if success_ratio < COLLAPSED_SUCCESS {
        measured.max(1.0)
    } else {
        measured
    }
}

/// Share of completed handshakes below which a run counts as overloaded.
const COLLAPSED_SUCCESS: f64 = 0.9;

/// What a load point's warm-ups and recordings share.
pub(super) struct Conditions<'a> {
    pub(super) name: &'a str,
    /// What is offered: a WTLS case in one mode, or any other configuration.
    pub(super) contender: Contender,
    /// Target utilisation.
    pub(super) rho: f64,
    pub(super) round_trip_ms: f64,
    pub(super) law: RoundTripLaw,
    pub(super) packing: Packing,
}

impl<'a> Conditions<'a> {
    /// The WTLS case's conditions with an exponential round trip and one datagram per
    /// flight, the load test's own.
    pub(super) fn plain(name: &'a str, case: Case, rho: f64, round_trip_ms: f64) -> Self {
        let wtls = WtlsCase {
            case,
            auth: Authentication::ServerAuth,
        };
        Conditions::of(name, Contender::new(wtls), rho, round_trip_ms)
    }

    /// `contender`'s conditions with an exponential round trip and one datagram per
    /// flight.
    pub(super) fn of(name: &'a str, contender: Contender, rho: f64, round_trip_ms: f64) -> Self {
        Conditions {
            name,
            contender,
            rho,
            round_trip_ms,
            law: RoundTripLaw::Exponential,
            packing: Packing::FlightPerDatagram,
        }
    }

    /// The same conditions with the WTLS case mutually authenticated.
    pub(super) fn mutual(self) -> Self {
        let contender = match self.contender.downcast::<WtlsCase>() {
            Some(w) => Contender::new(WtlsCase {
                auth: Authentication::Mutual,
                ..*w
            }),
            None => self.contender,
        };
        Conditions { contender, ..self }
    }

    /// Whether a WTLS case is mutually authenticated (its job logs say so).
    fn wtls_mutual(&self) -> bool {
        self.contender.protocol() == wtls::handshake::WTLS
            && self.contender.auth() == Authentication::Mutual
    }

    fn setting(&self) -> String {
        if self.round_trip_ms > 0.0 && self.law != RoundTripLaw::Exponential {
            format!("round trip {} ms {}", self.round_trip_ms, self.law)
        } else if self.round_trip_ms > 0.0 {
            format!("round trip {} ms", self.round_trip_ms)
        } else {
            "loopback".to_owned()
        }
    }

    /// The load run of these conditions at `lambda` for `seconds`: one pinned worker,
    /// the Poisson arrivals conditioned on their count (see [`Arrivals`]).
    fn spec(&self, lambda: f64, seconds: f64, seed: u64) -> LoadSpec {
        let mut spec = LoadSpec::offering(
            self.contender.clone(),
            lambda,
            Duration::from_secs_f64(seconds),
        );
        spec.arrivals = Arrivals::PoissonExactCount { rate: lambda };
        spec.workers = 1;
        spec.pin_cores = true;
        spec.seed = seed;
        spec.max_handshakes = (lambda * seconds * 1.5) as usize + 10;
        spec.round_trip =
            (self.round_trip_ms > 0.0).then(|| Duration::from_secs_f64(self.round_trip_ms / 1e3));
        spec.round_trip_law = self.law;
        spec.packing = self.packing;
        spec
    }

    /// Whether a judgement reads the point: the bearer setting at target rho <= 0.8.
    fn judged_setting(&self) -> bool {
        self.round_trip_ms > 0.0 && self.rho <= 0.8 + 1e-9
    }

    /// [`Conditions::spec`] with the evaluation's interference injector, if any, seeded
    /// from the run's own seed.
    fn spec_in(&self, ctx: &Ctx, lambda: f64, seconds: f64, seed: u64) -> LoadSpec {
        let mut spec = self.spec(lambda, seconds, seed);
        spec.interference = ctx
            .interference
            .map(|i| wtlsperf_drivers::load::Interference {
                seed: i.seed ^ seed.rotate_left(17),
                ..i
            });
        spec
    }

    /// The seed of a point's runs: warm-ups and recordings draw different arrivals.
    fn seed(&self, run: u64) -> u64 {
        2004 + (self.rho * 10.0).round() as u64 + 100 * run
    }
}

/// One load point calibrated while it runs (see `calibrate`): warm-ups until the
/// measured rho is on target, then the recording, repeated while it misses (at most
/// [`MAX_RECORDINGS`](super::calibrate::MAX_RECORDINGS) undisturbed recordings), and
/// recorded again while disturbed (see `disturbance`) and the part's allowance lasts.
#[allow(clippy::too_many_arguments)]
pub(super) fn calibrated_point(
    ctx: &Ctx,
    store: &PkiStore,
    c: &Conditions<'_>,
    estimate: &mut RateEstimate,
    budget: &Budget<'_>,
    warmup: WarmupLength,
    seconds: f64,
    sim_jobs: usize,
) -> anyhow::Result<LoadPoint> {
    let mut runs = 0u64;
    // Out of budget a point still warms up once, and is not repeated.
    let max_warmups = if budget.allows(0.0) { MAX_WARMUPS } else { 1 };
    let calibration = calibrate(c.rho, max_warmups, estimate, |lambda| {
        runs += 1;
        let s = warmup.seconds(lambda);
        ctx.step(&format!(
            "queue load test: {} rho {:.1} {} warm-up ({lambda:.0} handshakes/s, {s:.1} s)",
            c.name,
            c.rho,
            c.setting()
        ));
        let spec = c.spec_in(ctx, lambda, s, c.seed(runs));
        let rep = ctx.without_ticker(|| run_load(&spec, store))?;
        let rho = judged_rho(&rep);
        let disturbed = recording_load(&rep).disturbed().is_some();
        Ok((calibration_rho(rho, rep.success_ratio), disturbed))
    })?;
    let recorded = record(
        c.rho,
        calibration.lambda_hs_per_s,
        estimate,
        || budget.allows(seconds),
        // Only points a judgement reads spend the part's allowance: the loopback contrast
        // and the points beyond rho 0.8 come first in the plan and would otherwise take
        // it from the designed points after them.
        || c.judged_setting() && budget.rerecord(seconds),
        |lambda, attempt| {
            let spec = c.spec_in(ctx, lambda, seconds, c.seed(10 * attempt as u64));
            let p = point(ctx, store, c, spec, sim_jobs)?;
            let rho = calibration_rho(p.calibrated_rho(), p.run.success_ratio);
            Ok(Take {
                disturbed: p.recording.disturbed.is_some(),
                point: p,
                rho,
            })
        },
    )?;
    let mut p = recorded.point;
    p.calibration.warmups = calibration.warmups.len();
    p.calibration.warmup_rho = calibration.last_rho();
    p.calibration.attempts = recorded.attempts;
    p.calibration.rho_missed = recorded.missed;
    p.recording.rerecords = recorded.rerecords;
    Ok(p)
}

/// What the kernel's counters say of a run (see `disturbance`); all unknown for a run
/// whose gateway was not in process.
fn recording_load(rep: &LoadReport) -> RecordingLoad {
    let cpus = wtlsperf_drivers::setup::available_cpus();
    let injected = rep.interference.map(|i| i.busy_ms);
    rep.window_load
        .map(|w| RecordingLoad::of(&w, cpus, injected))
        .unwrap_or_default()
}

/// The disturbance rule's verdict on a recording: the kernel's counters, and for a point
/// the undisturbed judgement reads (bearer setting, target rho <= 0.8), an undisturbed
/// part too small to read (stalls).
fn recording_verdict(c: &Conditions<'_>, load: &RecordingLoad, undisturbed: bool) -> Option<Cause> {
    load.disturbed()
        .or_else(|| (c.judged_setting() && !undisturbed).then_some(Cause::Stalls))
}

/// One recorded load point: the run, the steady-window queue and every model beside it.
fn point(
    ctx: &Ctx,
    store: &PkiStore,
    c: &Conditions<'_>,
    spec: LoadSpec,
    sim_jobs: usize,
) -> anyhow::Result<LoadPoint> {
    let rep = recording(ctx, store, c, &spec)?;
    let steal = rep.window_load.and_then(|w| w.steal_ms);
    let k = if rep.started > 0 {
        rep.jobs.len() as f64 / rep.started as f64
    } else {
        0.0
    };
    let disturbed = disturbed_of(&rep);
    let steady = SteadyQueue::of(&rep.jobs, &disturbed)
        .ok_or_else(|| anyhow::anyhow!("{}: too few jobs for a steady window", c.name))?;
    // The models get the job rate that really reached the gateway in the window (at high
    // offered rates the generator may fall behind), as handshakes per second: each model
    // is evaluated at the point's measured load, not at its target.
    let arrived_hs = steady.job_rate_per_s / k.max(1.0);
    let (_, as_published, mm1, des) = predict(
        arrived_hs,
        k,
        steady.service_mean_ms,
        steady.service_m2_ms2,
        &steady.service_samples_ms,
        sim_jobs,
    );
    // Corrected P-K over the flights (the batch-Poisson arrivals; one job each for a
    // protocol whose flights fit a datagram, where it is Eq. 3.12 at the job rate).
    let corrected = steady.flights.pk_ms();
    let chains = ChainReading::of(&rep.jobs, &steady, arrived_hs, c.round_trip_ms, sim_jobs);
    let undisturbed = steady.undisturbed.as_ref();
    let load = recording_load(&rep);
    Ok(LoadPoint {
        protocol: spec.protocol(),
        case: c.name.to_owned(),
        auth: point_authentication(c),
        round_trip_ms: c.round_trip_ms,
        round_trip_law: c.law,
        packing: c.packing,
        calibration: PointCalibration {
            target_rho: c.rho,
            lambda_hs_per_s: spec.arrivals.offered_rate().unwrap_or(0.0),
            measured_rho: steady.utilisation,
            // The rest is set by `calibrated_point`.
            attempts: 1,
            ..Default::default()
        },
        run: RunFigures {
            achieved_hs_per_s: rep.achieved_rate,
            success_ratio: rep.success_ratio,
            jobs_per_handshake: k,
            service_mean_ms: steady.service_mean_ms,
            service_m2_ms2: steady.service_m2_ms2,
            think_ms: chains.think_ms,
            delivery_ms: delivery_delay_ms(&rep.jobs),
            late_share: rep.late_share,
            steal_ms: steal,
        },
        window: WindowWait {
            measured_wait_ms: steady.queueing_wait_ms,
            measured_wait_ci95_ms: steady.queueing_wait_ci95_ms,
            total_wait_ms: steady.mean_wait_ms,
            idle_arrival_share: steady.idle_share,
            idle_arrival_wait_ms: steady.idle_wait_mean_ms,
            first_job_wait_ms: chains.first_wait_ms,
        },
        models: Predictions {
            corrected_ms: corrected,
            as_published_ms: as_published,
            mm1_ms: mm1,
            des_ms: des,
            chain_ms: chains.chain_ms,
            replay_ms: Some(steady.replay_wait_ms),
            pk_undisturbed_ms: undisturbed.and_then(UndisturbedQueue::pk_ms),
            corrected_undisturbed_ms: undisturbed.and_then(UndisturbedQueue::exceptional_first_ms),
            as_published_undisturbed_ms: undisturbed.and_then(|u| as_published_on(u, k)),
        },
        disturbances: disturbances_of(&rep),
        undisturbed: UndisturbedFigures {
            share: steady.undisturbed_share,
            wait_ms: undisturbed.map(|u| u.queueing_wait_ms),
            wait_ci95_ms: undisturbed.and_then(|u| u.queueing_wait_ci95_ms),
            opening_delivery_ms: undisturbed.map(|u| u.opening_delivery_ms),
        },
        recording: RecordingFigures {
            disturbed: recording_verdict(c, &load, undisturbed.is_some()),
            load,
            rerecords: 0,
            undisturbed_rho: undisturbed.map(|u| u.job_rate_per_s * u.service_mean_ms / 1e3),
        },
    })
}

/// Eq. 3.12 as published (lambda in handshakes/s against one job's moments) on the
/// undisturbed jobs' own rate and occupancy moments, `k` jobs a handshake.
fn as_published_on(u: &UndisturbedQueue, k: f64) -> Option<f64> {
    pk_mean_wait_ms(
        u.job_rate_per_s / k.max(1.0),
        u.service_mean_ms,
        u.service_m2_ms2,
    )
}

/// The authentication a point's handshakes ran with.
fn point_authentication(c: &Conditions<'_>) -> Authentication {
    c.contender.auth()
}

/// Runs a recording (and writes its job log when asked).
fn recording(
    ctx: &Ctx,
    store: &PkiStore,
    c: &Conditions<'_>,
    spec: &LoadSpec,
) -> anyhow::Result<LoadReport> {
    let (name, rho, round_trip_ms) = (c.name, c.rho, c.round_trip_ms);
    ctx.step(&format!(
        "queue load test: {name} rho {rho:.1} {} ({:.0} handshakes/s, {:.1} s)",
        c.setting(),
        spec.arrivals.offered_rate().unwrap_or(0.0),
        spec.duration.as_secs_f64()
    ));
    let rep = ctx.without_ticker(|| run_load(spec, store))?;
    if let Some(dir) = &ctx.job_logs {
        std::fs::create_dir_all(dir)?;
        // The load test's own points keep their names; the others say how they differ.
        let mut variant = String::new();
        if c.law != RoundTripLaw::Exponential {
            variant.push_str(&format!("_{}", c.law));
        }
        if c.wtls_mutual() {
            variant.push_str("_mutual");
        }
        if c.packing == Packing::MessagePerDatagram {
            variant.push_str("_message");
        }
        let file = format!(
            "{}{variant}_rt{round_trip_ms}_rho{rho:.1}.csv",
            name.replace('/', "_")
        );
        wtlsperf_drivers::load::write_job_log(&rep, &dir.join(file))?;
    }
    anyhow::ensure!(
        rep.gateway.is_some(),
        "{name}: the in-process gateway returned no job statistics"
    );
    Ok(rep)
}

/// The shared machine's interruptions a run logged.
fn disturbances_of(rep: &LoadReport) -> Disturbances {
    Disturbances {
        worker_stalls: rep.worker_stalls,
        worker_stall_ms: rep.worker_stall_ms,
        generator_stalls: rep.generator_stalls,
        generator_stall_ms: rep.generator_stall_ms,
        delivery_stalls: rep.delivery_stalls,
        delivery_stall_ms: rep.delivery_stall_ms,
        late_sends: rep.late_sends_over_stall,
    }
}

/// The handshake-chain simulation of a run and what it reads from the job log.
struct ChainReading {
    chain_ms: Option<f64>,
    think_ms: f64,
    first_wait_ms: Option<f64>,
}

impl ChainReading {
    fn of(
        jobs: &[JobRecord],
        steady: &SteadyQueue,
        arrived_hs: f64,
        round_trip_ms: f64,
        sim_jobs: usize,
    ) -> Self {
        let (mut chains, think_ms, first_wait_ms) = job_chains_and_first_wait(jobs);
        // Chains in occupancy like the other models: each job holds the worker for its
        // service plus the typical gap, and the think time is counted from then on.
        let gap = steady.typical_gap_ms;
        for job in chains.iter_mut().flatten() {
            *job += gap;
        }
        // The chain simulation gets the think time without the emulated round trip (the
        // client's own work and the loopback path) plus the round trip's law.
        let base_think_ms = if round_trip_ms > 0.0 {
            fixed_think_ms(think_ms, round_trip_ms)
        } else {
            think_ms
        };
        let base_think_ms = (base_think_ms - gap).max(0.0);
        let chain_ms = wtlsperf_models::queue::simulate_chains(
            wtlsperf_models::queue::SimConfig {
                arrival_rate_per_s: arrived_hs,
                servers: 1,
                jobs: sim_jobs,
                warmup_jobs: sim_jobs / 10,
                seed: 2004,
            },
            &chains,
            base_think_ms,
            round_trip_ms,
        )
        .ok()
        .map(|r| r.mean_wait_ms);
        ChainReading {
            chain_ms,
            think_ms,
            first_wait_ms,
        }
    }
}

/// The think time left when the emulated round trip is taken out: the median think time
/// of the run minus the median of an exponential law of mean `round_trip_ms` (ln 2 x
/// mean), not below the smallest think time seen.
fn fixed_think_ms(median_think_ms: f64, round_trip_ms: f64) -> f64 {
    (median_think_ms - std::f64::consts::LN_2 * round_trip_ms).max(0.0)
}

mod budget;
mod steady;

pub(super) use budget::Budget;

pub use steady::{
    delivery_delay_ms, disturbed_intervals, job_chains, job_chains_and_first_wait, settle_ns,
    CalmJob, SteadyQueue, UndisturbedQueue,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_keeps_room_for_the_points_to_come() {
        // 100 s planned over 10 points: 115 s of recordings and 60 s of calibration.
        let rerecord = RerecordBudget::new(0.0);
        let mut b = Budget::new(100.0, 10, &rerecord);
        assert!(b.allows_at(0.0, 0.0));
        // A 20 s repeat fits at the start, not once the slack is spent.
        assert!(b.allows_at(0.0, 20.0));
        assert!(!b.allows_at(50.0, 20.0));
        // With half the points done on time, a repeat of 20 s fits again.
        b.done(50.0);
        assert!(b.allows_at(70.0, 20.0));
        // Far behind: not even the planned rest fits; warm up once, repeat nothing.
        assert!(!b.allows_at(120.0, 0.0));
    }

    #[test]
    fn an_overloaded_run_counts_as_saturated_for_the_calibration() {
        assert_eq!(calibration_rho(0.42, 1.0), 0.42);
        // Most handshakes timed out: whatever occupancy the window showed, the rate was
        // too high.
        assert_eq!(calibration_rho(0.03, 0.5), 1.0);
        assert_eq!(calibration_rho(1.2, 0.5), 1.2);
    }

    #[test]
    fn the_full_runs_planned_recordings_size_the_re_recording_allowance() {
        // WTLS: 2 cases x (3 x 2 s loopback + 84 s bearer); DTLS 1.2 and EDHOC: 2 x 18 s.
        assert_eq!(planned_seconds(Mode::Full), 216.0);
        assert_eq!(designed_points(Mode::Full), 16);
        assert_eq!(designed_points(Mode::Quick), 6);
        let rerecord = RerecordBudget::for_part(planned_seconds(Mode::Full));
        assert!((rerecord.summary().limit_s - 43.2).abs() < 1e-9);
    }

    #[test]
    fn plans_cover_the_required_points() {
        let full = plan(Mode::Full);
        assert_eq!(full.cases, ["283k/283k", "rsa2048/rsa2048"]);
        let (round_trip, points) = &full.settings[1];
        assert_eq!(*round_trip, BEARER_ROUND_TRIP_MS);
        let rhos: Vec<f64> = points.iter().map(|p| p.0).collect();
        assert_eq!(
            rhos,
            (1..=9).map(|i| f64::from(i) / 10.0).collect::<Vec<_>>()
        );
        // Every point long enough for a steady window well beyond its cut edges.
        assert!(points.iter().all(|p| p.1 >= 5.0));
        let quick = plan(Mode::Quick);
        assert!(quick
            .settings
            .iter()
            .all(|s| s.1.iter().map(|p| p.0).eq([0.3, 0.6, 0.8])));
    }
}
