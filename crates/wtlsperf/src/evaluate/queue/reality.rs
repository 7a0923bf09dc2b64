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
//! span less a tenth of it (at most [`EDGE_MAX_NS`]) at either end, so the empty queue of
//! the start and the drain at the end (where only the last handshakes' second jobs
//! arrive) bias neither the measured wait nor the arrival rate the models get.
//!
//! It is read twice: over the whole window, and over its *undisturbed* part. On a shared
//! virtual machine a thread is sometimes off its core although it never sleeps: the
//! hypervisor deschedules the virtual CPU, or a kernel thread (on the test machine mostly
//! DAMON's `kdamond`, for 1-5 ms) or another process preempts it. When that happens to
//! the gateway's worker (its [`Stall`] log) every job arriving meanwhile waits for it; when
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

use std::time::Duration;

use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_models::stats::{mean, Moments};
use wtlsperf_models::Authentication;

use super::calibrate::{calibrate, record, RateEstimate};
use super::{predict, LoadPoint};
use crate::evaluate::processing::ProcessingResults;
use crate::evaluate::{Ctx, Mode};
use crate::gateway::{JobRecord, Stall};
use crate::load::{run_load, Arrivals, LoadSpec};
use crate::pki_store::PkiStore;

/// Mean of the emulated bearer round trip (ms, exponential) of the second run of every
/// point: 100 times a job of the measured cases, so the answers are independent of the
/// queue, yet short enough that a run's drain at the end is a small part of it.
pub const BEARER_ROUND_TRIP_MS: f64 = 20.0;

/// What is cut at each end of the arrival span before the queue is read: a tenth of it,
/// at most [`EDGE_MAX_NS`]. The queue starts empty and the answer stream of a 20 ms
/// bearer ramps up within some five round trips, and ends as the last handshakes' answers
/// trickle in over as long, so a quarter of a second is steady on either side; cutting a
/// tenth of a 45 s run would throw away 9 s of steady queue.
const EDGE: f64 = 0.1;
/// At most this much (ns) is cut at each end of the arrival span.
const EDGE_MAX_NS: f64 = 250e6;

/// Batches (of equal job counts, in arrival order) of the batch-means interval of the
/// undisturbed mean wait: each batch spans at least a tenth of a second, hundreds of the
/// queue's correlation times at rho <= 0.8, so batch means are nearly independent.
const BATCHES: usize = 20;

/// Fewest jobs, and smallest share of the window, from which the undisturbed part of a
/// run is read at all.
const MIN_UNDISTURBED_JOBS: usize = 200;
const MIN_UNDISTURBED_SHARE: f64 = 0.2;

/// How long after a stall or late send of length `len_ns` its effect on the queue is
/// taken to last: the backlog it built clears at the rate the worker outpaces arrivals,
/// (1 - rho)/rho of real time, which for rho <= 0.8 is at least a quarter; ten times the
/// stall plus 20 ms (a hundred jobs of the measured cases) covers that with margin.
pub fn settle_ns(len_ns: u64) -> u64 {
    20_000_000 + 10 * len_ns
}

/// The intervals (process clock, ns; sorted, disjoint) whose arrivals the undisturbed
/// reading leaves out: each stall of the gateway's workers, and every other disturbance
/// (the generator's stalls, the delivery path's), from its start to its end plus
/// [`settle_ns`].
pub fn disturbed_intervals(
    worker_stalls: &[Stall],
    generator_stalls: &[(u64, u64)],
) -> Vec<(u64, u64)> {
    let mut raw: Vec<(u64, u64)> = worker_stalls
        .iter()
        .map(|s| (s.start_ns, s.end_ns))
        .chain(generator_stalls.iter().copied())
        .map(|(a, b)| {
            let b = b.max(a);
            (a, b + settle_ns(b - a))
        })
        .collect();
    raw.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(raw.len());
    for (a, b) in raw {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// Whether [from, to] meets one of the sorted, disjoint `intervals` (half-open).
fn meets(intervals: &[(u64, u64)], from: u64, to: u64) -> bool {
    // Disjoint and sorted by start, so sorted by end too: only the last interval that
    // starts by `to` can still be open at `from`.
    let i = intervals.partition_point(|&(a, _)| a <= to);
    i > 0 && from < intervals[i - 1].1
}

/// Length of [from, to) covered by the sorted, disjoint `intervals` (ns).
fn covered_length(intervals: &[(u64, u64)], from: u64, to: u64) -> u64 {
    intervals
        .iter()
        .map(|&(a, b)| b.min(to).saturating_sub(a.max(from)))
        .sum()
}

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
                handshakes: 400.0,
                min_s: 0.8,
                max_s: 1.5,
            },
            settings: vec![
                (0.0, at(&[0.3, 0.6, 0.8], 1.5)),
                (
                    BEARER_ROUND_TRIP_MS,
                    vec![(0.3, 4.0), (0.6, 4.0), (0.8, 5.0)],
                ),
            ],
        },
        Mode::Full => Plan {
            cases,
            warmup: WarmupLength {
                handshakes: 600.0,
                min_s: 1.0,
                max_s: 2.5,
            },
            settings: vec![
                (0.0, at(&[0.3, 0.6, 0.8], 3.0)),
                (
                    BEARER_ROUND_TRIP_MS,
                    vec![
                        (0.1, 45.0),
                        (0.2, 25.0),
                        (0.3, 12.0),
                        (0.4, 12.0),
                        (0.5, 10.0),
                        (0.6, 10.0),
                        (0.7, 18.0),
                        (0.8, 30.0),
                        (0.9, 8.0),
                    ],
                ),
            ],
        },
    }
}

/// Runs the load points of the mode.
pub fn run(
    ctx: &Ctx,
    store: &PkiStore,
    processing: &ProcessingResults,
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
                let conditions = Conditions {
                    name,
                    case,
                    rho,
                    round_trip_ms: *round_trip_ms,
                };
                out.push(calibrated_point(
                    ctx,
                    store,
                    &conditions,
                    &mut estimate,
                    warmup,
                    seconds,
                    sim_jobs,
                )?);
            }
        }
    }
    anyhow::ensure!(!out.is_empty(), "no load point could be run");
    Ok(out)
}

/// What a load point's warm-ups and recordings share.
struct Conditions<'a> {
    name: &'a str,
    case: Case,
    /// Target utilisation.
    rho: f64,
    round_trip_ms: f64,
}

impl Conditions<'_> {
    fn setting(&self) -> String {
        if self.round_trip_ms > 0.0 {
            format!("round trip {} ms", self.round_trip_ms)
        } else {
            "loopback".to_owned()
        }
    }

    /// The load run of these conditions at `lambda` for `seconds`: one pinned worker,
    /// the Poisson arrivals conditioned on their count (see [`Arrivals`]).
    fn spec(&self, lambda: f64, seconds: f64, seed: u64) -> LoadSpec {
        let mut spec = LoadSpec::new(
            self.case,
            AuthMode::ServerAuth,
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
        spec
    }

    /// The seed of a point's runs: warm-ups and recordings draw different arrivals.
    fn seed(&self, run: u64) -> u64 {
        2004 + (self.rho * 10.0).round() as u64 + 100 * run
    }
}

/// One load point calibrated while it runs (see `calibrate`): warm-ups until the
/// measured rho is on target, then the recording, repeated once if it missed.
fn calibrated_point(
    ctx: &Ctx,
    store: &PkiStore,
    c: &Conditions<'_>,
    estimate: &mut RateEstimate,
    warmup: WarmupLength,
    seconds: f64,
    sim_jobs: usize,
) -> anyhow::Result<LoadPoint> {
    let mut runs = 0u64;
    let calibration = calibrate(c.rho, estimate, |lambda| {
        runs += 1;
        let s = warmup.seconds(lambda);
        ctx.step(&format!(
            "queue load test: {} rho {:.1} {} warm-up ({lambda:.0} handshakes/s, {s:.1} s)",
            c.name,
            c.rho,
            c.setting()
        ));
        let rep = ctx.without_ticker(|| run_load(&c.spec(lambda, s, c.seed(runs)), store))?;
        Ok(SteadyQueue::of(&rep.jobs, &[]).map_or(0.0, |q| q.utilisation))
    })?;
    let recorded = record(
        c.rho,
        calibration.lambda_hs_per_s,
        estimate,
        |lambda, attempt| {
            let spec = c.spec(lambda, seconds, c.seed(10 * attempt as u64));
            let p = point(ctx, store, c, spec, sim_jobs)?;
            let rho = p.measured_rho;
            Ok((p, rho))
        },
    )?;
    let mut p = recorded.point;
    p.warmups = calibration.warmups.len();
    p.warmup_rho = calibration.last_rho();
    p.attempts = recorded.attempts;
    p.rho_missed = recorded.missed;
    Ok(p)
}

/// One recorded load point: the run, the steady-window queue and every model beside it.
fn point(
    ctx: &Ctx,
    store: &PkiStore,
    c: &Conditions<'_>,
    spec: LoadSpec,
    sim_jobs: usize,
) -> anyhow::Result<LoadPoint> {
    let (name, rho, round_trip_ms) = (c.name, c.rho, c.round_trip_ms);
    let lambda = spec.arrivals.offered_rate().unwrap_or(0.0);
    ctx.step(&format!(
        "queue load test: {name} rho {rho:.1} {} ({lambda:.0} handshakes/s, {:.1} s)",
        c.setting(),
        spec.duration.as_secs_f64()
    ));
    let steal0 = steal_ms();
    let rep = ctx.without_ticker(|| run_load(&spec, store))?;
    let steal = steal0.zip(steal_ms()).map(|(a, b)| b - a);
    if let Some(dir) = &ctx.job_logs {
        std::fs::create_dir_all(dir)?;
        let file = format!(
            "{}_rt{round_trip_ms}_rho{rho:.1}.csv",
            name.replace('/', "_")
        );
        crate::load::write_job_log(&rep, &dir.join(file))?;
    }
    anyhow::ensure!(
        rep.gateway.is_some(),
        "{name}: the in-process gateway returned no job statistics"
    );
    let k = if rep.started > 0 {
        rep.jobs.len() as f64 / rep.started as f64
    } else {
        0.0
    };
    let others: Vec<(u64, u64)> = rep
        .generator_stall_log
        .iter()
        .chain(&rep.delivery_stall_log)
        .copied()
        .collect();
    let disturbed = disturbed_intervals(&rep.stalls, &others);
    let steady = SteadyQueue::of(&rep.jobs, &disturbed)
        .ok_or_else(|| anyhow::anyhow!("{name}: too few jobs for a steady window"))?;
    // The models get the job rate that really reached the gateway in the window (at high
    // offered rates the generator may fall behind), as handshakes per second.
    let arrived_hs = steady.job_rate_per_s / k.max(1.0);
    let (corrected, as_published, mm1, des) = predict(
        arrived_hs,
        k,
        steady.service_mean_ms,
        steady.service_m2_ms2,
        &steady.service_samples_ms,
        sim_jobs,
    );
    let undisturbed = steady.undisturbed.as_ref();
    let (mut chains, think_ms, first_wait_ms) = job_chains_and_first_wait(&rep.jobs);
    // Chains in occupancy like the other models: each job holds the worker for its
    // service plus the typical gap, and the think time is counted from then on.
    let gap = steady.typical_gap_ms;
    for job in chains.iter_mut().flatten() {
        *job += gap;
    }
    let delivery_ms = delivery_delay_ms(&rep.jobs);
    // The chain simulation gets the think time without the emulated round trip (the
    // client's own work and the loopback path) plus the round trip's law.
    let base_think_ms = if round_trip_ms > 0.0 {
        fixed_think_ms(think_ms, round_trip_ms)
    } else {
        think_ms
    };
    let base_think_ms = (base_think_ms - gap).max(0.0);
    let chain = wtlsperf_models::queue::simulate_chains(
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
    Ok(LoadPoint {
        case: name.to_owned(),
        auth: "server".to_owned(),
        round_trip_ms,
        target_rho: rho,
        lambda_hs_per_s: lambda,
        achieved_hs_per_s: rep.achieved_rate,
        success_ratio: rep.success_ratio,
        jobs_per_handshake: k,
        measured_rho: steady.utilisation,
        service_mean_ms: steady.service_mean_ms,
        service_m2_ms2: steady.service_m2_ms2,
        measured_wait_ms: steady.queueing_wait_ms,
        measured_wait_ci95_ms: steady.queueing_wait_ci95_ms,
        // Set by `calibrated_point`.
        warmups: 0,
        warmup_rho: None,
        attempts: 1,
        rho_missed: false,
        total_wait_ms: steady.mean_wait_ms,
        idle_arrival_share: steady.idle_share,
        idle_arrival_wait_ms: steady.idle_wait_mean_ms,
        corrected_ms: corrected,
        as_published_ms: as_published,
        mm1_ms: mm1,
        des_ms: des,
        chain_ms: chain,
        replay_ms: Some(steady.replay_wait_ms),
        think_ms,
        first_job_wait_ms: first_wait_ms,
        delivery_ms,
        late_share: rep.late_share,
        steal_ms: steal,
        worker_stalls: rep.worker_stalls,
        worker_stall_ms: rep.worker_stall_ms,
        generator_stalls: rep.generator_stalls,
        generator_stall_ms: rep.generator_stall_ms,
        delivery_stalls: rep.delivery_stalls,
        delivery_stall_ms: rep.delivery_stall_ms,
        late_sends: rep.late_sends_over_stall,
        undisturbed_share: steady.undisturbed_share,
        undisturbed_wait_ms: undisturbed.map(|u| u.queueing_wait_ms),
        undisturbed_wait_ci95_ms: undisturbed.and_then(|u| u.queueing_wait_ci95_ms),
        undisturbed_opening_delivery_ms: undisturbed.map(|u| u.opening_delivery_ms),
        pk_undisturbed_ms: undisturbed.and_then(UndisturbedQueue::pk_ms),
        corrected_undisturbed_ms: undisturbed.and_then(UndisturbedQueue::exceptional_first_ms),
    })
}

/// Time the hypervisor ran something else while this machine's CPUs had work ("steal",
/// /proc/stat), summed over the CPUs, in ms; `None` where /proc/stat cannot be read. On
/// a shared virtual machine a point with steal is one whose worker was sometimes not
/// running, which no queue model of the gateway describes.
fn steal_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let steal: f64 = line.split_whitespace().nth(8)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| steal * 1000.0 / hz as f64)
}

/// The think time left when the emulated round trip is taken out: the median think time
/// of the run minus the median of an exponential law of mean `round_trip_ms` (ln 2 x
/// mean), not below the smallest think time seen.
fn fixed_think_ms(median_think_ms: f64, round_trip_ms: f64) -> f64 {
    (median_think_ms - std::f64::consts::LN_2 * round_trip_ms).max(0.0)
}

/// The gateway's queue over the steady window of a run (see the module notes).
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyQueue {
    pub jobs: usize,
    /// Jobs arriving per second in the window.
    pub job_rate_per_s: f64,
    /// Mean wait from the kernel's timestamp to the start of service.
    pub mean_wait_ms: f64,
    /// Mean queueing wait: the wait of a job that arrived while the worker was busy
    /// with earlier jobs, zero for one that found it idle. This is what the queue models
    /// predict (P-K's W_q is zero for an arrival that finds the server idle).
    pub queueing_wait_ms: f64,
    /// Half-width (ms) of its 95 % interval by [`BATCHES`] batch means in service order.
    pub queueing_wait_ci95_ms: Option<f64>,
    /// Share of the window's jobs that found the worker idle, and their mean wait: the
    /// path from the kernel to the worker, plus any time the worker was not running
    /// (the virtual CPU descheduled, an interrupt): no queueing, measured apart.
    pub idle_share: f64,
    pub idle_wait_mean_ms: f64,
    pub service_mean_ms: f64,
    pub service_m2_ms2: f64,
    /// Service time of the window's jobs over the window's length.
    pub utilisation: f64,
    pub service_samples_ms: Vec<f64>,
    /// The median time (ms) the worker spends between the end of a job and the start of
    /// the next one that was already waiting.
    pub typical_gap_ms: f64,
    /// Trace replay: the mean queueing wait (ms) of the window's jobs in a FIFO single
    /// server fed with the run's own arrival instants and each job's own occupancy
    /// (Lindley's recursion). It assumes nothing about the arrival process: where it
    /// matches the measurement and P-K does not, the gateway is the queue the models
    /// describe and the difference lies in the arrivals.
    pub replay_wait_ms: f64,
    /// Share of the window's jobs that arrived outside every disturbed interval, and the
    /// queue over those jobs (`None` when fewer than [`MIN_UNDISTURBED_JOBS`] or less
    /// than [`MIN_UNDISTURBED_SHARE`] of the window are left).
    pub undisturbed_share: f64,
    pub undisturbed: Option<UndisturbedQueue>,
}

/// The queue over the undisturbed part of a steady window (see the module notes): the
/// jobs that arrived outside every disturbed interval, their rate over the window's
/// undisturbed time, their mean queueing wait with its batch-means interval, their
/// occupancy moments, and the delivery of those that found the worker idle (arrival to
/// start of service), which the job opening a busy period holds the worker for on top of
/// its occupancy (the exceptional first service of
/// [`wtlsperf_models::queue::pk_exceptional_first_wait_ms`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UndisturbedQueue {
    pub jobs: usize,
    pub job_rate_per_s: f64,
    pub queueing_wait_ms: f64,
    /// Half-width (ms) of the 95 % confidence interval of `queueing_wait_ms` by
    /// [`BATCHES`] batch means.
    pub queueing_wait_ci95_ms: Option<f64>,
    pub service_mean_ms: f64,
    pub service_m2_ms2: f64,
    /// Share of the jobs that found the worker idle, and the first two moments of their
    /// delivery (ms, ms^2).
    pub opening_share: f64,
    pub opening_delivery_ms: f64,
    pub opening_delivery_m2_ms2: f64,
}

/// One job of a steady window's undisturbed part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalmJob {
    /// Kernel timestamp (process clock, ns).
    pub arrival_ns: u64,
    /// Queueing wait (ms): zero for a job that found the worker idle.
    pub queueing_ms: f64,
    /// The worker's occupancy by the job (ms).
    pub occupancy_ms: f64,
    /// Arrival to start of service (ms) of a job that found the worker idle.
    pub delivery_ms: Option<f64>,
}

impl UndisturbedQueue {
    /// From the undisturbed jobs, in any order, and the undisturbed time (ms). `None`
    /// for an empty part or time.
    fn of(mut calm: Vec<CalmJob>, calm_ms: f64) -> Option<Self> {
        if calm.is_empty() || calm_ms <= 0.0 {
            return None;
        }
        calm.sort_by_key(|c| c.arrival_ns);
        let m = calm.len() as f64;
        let occupancies: Vec<f64> = calm.iter().map(|c| c.occupancy_ms).collect();
        let deliveries: Vec<f64> = calm.iter().filter_map(|c| c.delivery_ms).collect();
        let opening_share = deliveries.len() as f64 / m;
        let waits: Vec<f64> = calm.iter().map(|c| c.queueing_ms).collect();
        let occupancy = Moments::of(&occupancies)?;
        let delivery = Moments::of(&deliveries);
        Some(UndisturbedQueue {
            jobs: calm.len(),
            job_rate_per_s: m / (calm_ms / 1e3),
            queueing_wait_ms: mean(&waits)?,
            queueing_wait_ci95_ms: wtlsperf_models::stats::batch_mean_ci95(&waits, BATCHES),
            service_mean_ms: occupancy.mean,
            service_m2_ms2: occupancy.m2,
            opening_share,
            opening_delivery_ms: delivery.map_or(0.0, |d| d.mean),
            opening_delivery_m2_ms2: delivery.map_or(0.0, |d| d.m2),
        })
    }

    /// Corrected P-K (Eq. 3.12 at the job rate) with one occupancy law for every job.
    pub fn pk_ms(&self) -> Option<f64> {
        wtlsperf_models::queue::pk_mean_wait_ms(
            self.job_rate_per_s,
            self.service_mean_ms,
            self.service_m2_ms2,
        )
    }

    /// Corrected P-K with the busy period's opening job apart: it holds the worker for
    /// its delivery D on top of its occupancy X, D independent of X, so its moments are
    /// E[X] + E[D] and E[X^2] + 2E[X]E[D] + E[D^2]. One occupancy law for every job
    /// beyond that: the occupancy of jobs that found the worker busy alone is a smaller
    /// sample, and at high load its mean moves the model by several times its own error.
    pub fn exceptional_first_ms(&self) -> Option<f64> {
        let (x, x2) = (self.service_mean_ms, self.service_m2_ms2);
        let (d, d2) = (self.opening_delivery_ms, self.opening_delivery_m2_ms2);
        wtlsperf_models::queue::pk_exceptional_first_wait_ms(
            self.job_rate_per_s,
            x,
            x2,
            x + d,
            x2 + 2.0 * x * d + d2,
        )
    }
}

impl SteadyQueue {
    /// `None` with fewer than 10 jobs in the window.
    ///
    /// The service time the models get is the worker's *occupancy* per job: from the
    /// start of a job to the start of the next one when that one was already waiting
    /// (so the worker's own bookkeeping between jobs, the next `recvmmsg` and any
    /// interruption of the worker count, as they delay the queue), and otherwise the
    /// job's service plus the median of those gaps. The wall time from start to end of a
    /// job alone leaves out what the worker does between jobs, which the queue waits for
    /// all the same.
    ///
    /// `disturbed` are the sorted, disjoint intervals of [`disturbed_intervals`].
    pub fn of(jobs: &[JobRecord], disturbed: &[(u64, u64)]) -> Option<Self> {
        let first = jobs.iter().map(|j| j.arrival_ns).min()?;
        let last = jobs.iter().map(|j| j.arrival_ns).max()?;
        let span = last.saturating_sub(first) as f64;
        let edge = (EDGE * span).min(EDGE_MAX_NS);
        let (from, to) = (first as f64 + edge, last as f64 - edge);
        let mut by_start: Vec<&JobRecord> = jobs.iter().collect();
        by_start.sort_by_key(|j| j.start_ns);
        let ms = |ns: u64| ns as f64 / 1e6;
        // Gaps between a job's end and the next start while the next one was waiting.
        let mut gaps: Vec<u64> = by_start
            .windows(2)
            .filter(|w| w[1].arrival_ns <= w[0].end_ns)
            .map(|w| w[1].start_ns.saturating_sub(w[0].end_ns))
            .collect();
        gaps.sort_unstable();
        let typical_gap = gaps.get(gaps.len() / 2).copied().unwrap_or(0);
        // Every job's occupancy (ns), in service order, for the replay.
        let occupancy_ns: Vec<u64> = by_start
            .iter()
            .enumerate()
            .map(|(i, j)| match by_start.get(i + 1) {
                Some(next) if next.arrival_ns <= j.end_ns => {
                    next.start_ns.saturating_sub(j.start_ns)
                }
                _ => j.service_ns() + typical_gap,
            })
            .collect();
        let replay_wait_ms = {
            let mut order: Vec<usize> = (0..by_start.len()).collect();
            order.sort_by_key(|&i| by_start[i].arrival_ns);
            let (mut free_at, mut sum, mut n) = (0u64, 0.0, 0usize);
            for i in order {
                let arrival = by_start[i].arrival_ns;
                let start = free_at.max(arrival);
                free_at = start + occupancy_ns[i];
                if (from..to).contains(&(arrival as f64)) {
                    sum += ms(start - arrival);
                    n += 1;
                }
            }
            if n > 0 {
                sum / n as f64
            } else {
                0.0
            }
        };
        let mut occupancy_ms = Vec::new();
        let mut waits_ms = Vec::new();
        let mut queueing_ms = Vec::new();
        let mut idle_waits_ms = Vec::new();
        let mut calm: Vec<CalmJob> = Vec::new();
        let mut busy_until = 0u64;
        for (i, j) in by_start.iter().enumerate() {
            let found_idle = j.arrival_ns >= busy_until;
            busy_until = busy_until.max(j.end_ns);
            if !(from..to).contains(&(j.arrival_ns as f64)) {
                continue;
            }
            let queueing = if found_idle {
                idle_waits_ms.push(ms(j.wait_ns()));
                0.0
            } else {
                ms(j.wait_ns())
            };
            queueing_ms.push(queueing);
            occupancy_ms.push(ms(occupancy_ns[i]));
            waits_ms.push(ms(j.wait_ns()));
            // A job is undisturbed when nothing disturbed it from its arrival to the end
            // of its occupancy: one that arrived before a stall and was still waiting
            // or in service when it came has a wait or an occupancy that holds the stall.
            if !meets(disturbed, j.arrival_ns, j.start_ns + occupancy_ns[i]) {
                let delivery = found_idle.then(|| ms(j.wait_ns()));
                calm.push(CalmJob {
                    arrival_ns: j.arrival_ns,
                    queueing_ms: queueing,
                    occupancy_ms: ms(occupancy_ns[i]),
                    delivery_ms: delivery,
                });
            }
        }
        if occupancy_ms.len() < 10 || to <= from {
            return None;
        }
        let n = occupancy_ms.len() as f64;
        let occupancy = Moments::of(&occupancy_ms)?;
        let (service_mean_ms, service_m2_ms2) = (occupancy.mean, occupancy.m2);
        let length_ms = (to - from) / 1e6;
        let undisturbed_share = calm.len() as f64 / n;
        let calm_ms = length_ms - covered_length(disturbed, from as u64, to as u64) as f64 / 1e6;
        let undisturbed = (calm.len() >= MIN_UNDISTURBED_JOBS
            && undisturbed_share >= MIN_UNDISTURBED_SHARE)
            .then(|| UndisturbedQueue::of(calm, calm_ms))
            .flatten();
        Some(SteadyQueue {
            jobs: occupancy_ms.len(),
            job_rate_per_s: n / (length_ms / 1e3),
            mean_wait_ms: waits_ms.iter().sum::<f64>() / n,
            queueing_wait_ms: queueing_ms.iter().sum::<f64>() / n,
            queueing_wait_ci95_ms: wtlsperf_models::stats::batch_mean_ci95(&queueing_ms, BATCHES),
            idle_share: idle_waits_ms.len() as f64 / n,
            idle_wait_mean_ms: if idle_waits_ms.is_empty() {
                0.0
            } else {
                idle_waits_ms.iter().sum::<f64>() / idle_waits_ms.len() as f64
            },
            service_mean_ms,
            service_m2_ms2,
            utilisation: occupancy_ms.iter().sum::<f64>() / length_ms,
            service_samples_ms: occupancy_ms,
            typical_gap_ms: ms(typical_gap),
            replay_wait_ms,
            undisturbed_share,
            undisturbed,
        })
    }
}

/// The gateway's jobs grouped by handshake (each handshake comes from its own client
/// address), in arrival order, as service-time chains (ms, wall time from the start to
/// the end of a job's service), and the median think time between consecutive jobs of
/// a handshake (ms). Handshakes cut by the run's start or end are kept as they are.
pub fn job_chains(jobs: &[crate::gateway::JobRecord]) -> (Vec<Vec<f64>>, f64) {
    let (chains, think, _) = job_chains_and_first_wait(jobs);
    (chains, think)
}

/// The delivery delay (ms): the median wait of jobs that found the worker idle
/// (arrived after every earlier job had ended): no queueing, but the time from the
/// kernel's receive timestamp to the worker starting on the datagram.
pub fn delivery_delay_ms(jobs: &[crate::gateway::JobRecord]) -> f64 {
    crate::load::idle_arrival_waits_us(jobs).2 / 1000.0
}

/// [`job_chains`], plus the mean wait (ms) of the first job of each handshake: those
/// jobs arrive as the Poisson process itself, so by PASTA they see the time-average
/// queue that the Pollaczek-Khinchin formula describes.
pub fn job_chains_and_first_wait(
    jobs: &[crate::gateway::JobRecord],
) -> (Vec<Vec<f64>>, f64, Option<f64>) {
    use std::collections::HashMap;
    let mut by_peer: HashMap<std::net::SocketAddr, Vec<&crate::gateway::JobRecord>> =
        HashMap::new();
    for j in jobs {
        by_peer.entry(j.peer).or_default().push(j);
    }
    let mut chains = Vec::with_capacity(by_peer.len());
    let mut thinks = Vec::new();
    let (mut first_sum, mut firsts) = (0.0, 0usize);
    for (_, mut js) in by_peer {
        js.sort_by_key(|j| j.arrival_ns);
        if let Some(first) = js.first() {
            first_sum += first.wait_ns() as f64 / 1e6;
            firsts += 1;
        }
        for w in js.windows(2) {
            thinks.push(w[1].arrival_ns.saturating_sub(w[0].end_ns) as f64 / 1e6);
        }
        chains.push(
            js.iter()
                .map(|j| j.end_ns.saturating_sub(j.start_ns) as f64 / 1e6)
                .collect(),
        );
    }
    thinks.sort_by(f64::total_cmp);
    let think = thinks.get(thinks.len() / 2).copied().unwrap_or(0.0);
    let first_wait = (firsts > 0).then(|| first_sum / firsts as f64);
    (chains, think, first_wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(arrival_ms: f64, start_ms: f64, service_ms: f64, peer: u16) -> JobRecord {
        let ns = |ms: f64| (ms * 1e6) as u64;
        JobRecord {
            arrival_ns: ns(arrival_ms),
            start_ns: ns(start_ms),
            end_ns: ns(start_ms + service_ms),
            cpu_ns: ns(service_ms),
            bytes: 100,
            messages: 1,
            peer: std::net::SocketAddr::from(([127, 0, 0, 1], peer)),
            worker: 0,
            kernel_timestamp: true,
        }
    }

    #[test]
    fn disturbances_are_widened_by_their_settling_time_and_merged() {
        let stall = Stall {
            start_ns: 1_000_000,
            end_ns: 3_000_000,
            worker: 0,
        };
        // A generator stall inside the worker stall's settling time merges with it; a
        // later one does not.
        let generator = [(30_000_000, 30_500_000), (200_000_000, 200_300_000)];
        let d = disturbed_intervals(&[stall], &generator);
        assert_eq!(
            d,
            vec![
                (1_000_000, 30_500_000 + settle_ns(500_000)),
                (200_000_000, 200_300_000 + settle_ns(300_000)),
            ]
        );
        assert!(!meets(&d, 0, 999_999));
        assert!(meets(&d, 0, 1_000_000));
        assert!(meets(&d, 55_000_000, 55_000_000));
        assert!(!meets(&d, d[0].1, 199_999_999));
        assert!(meets(&d, d[0].1, 200_000_000));
        assert!(meets(&d, 0, u64::MAX));
        assert_eq!(covered_length(&d, 0, 10_000_000), 9_000_000);
    }

    #[test]
    fn the_undisturbed_part_leaves_out_the_backlog_of_a_stall() {
        // One job per ms, 0.5 ms of service, never waiting, except that a 5 ms stall of
        // the worker at 500 ms makes the jobs arriving in it wait for its end.
        let mut jobs = Vec::new();
        for i in 0..1000u16 {
            let a = f64::from(i);
            let start = if (500.0..505.0).contains(&a) {
                505.0 + (a - 500.0) * 0.5
            } else {
                a
            };
            jobs.push(job(a, start.max(a), 0.5, 1000 + i));
        }
        let stall = Stall {
            start_ns: 500_000_000,
            end_ns: 505_000_000,
            worker: 0,
        };
        let clean = SteadyQueue::of(&jobs, &[]).unwrap();
        assert!(clean.queueing_wait_ms > 0.0);
        assert_eq!(clean.undisturbed_share, 1.0);
        let q = SteadyQueue::of(&jobs, &disturbed_intervals(&[stall], &[])).unwrap();
        // The window's measured wait is unchanged; the undisturbed part has none.
        assert_eq!(q.queueing_wait_ms, clean.queueing_wait_ms);
        let u = q.undisturbed.expect("most of the window is undisturbed");
        assert_eq!(u.queueing_wait_ms, 0.0);
        // 5 ms of stall + 20 + 50 ms settling: 75 of the window's ~800 jobs are out, and
        // the rate is read over the undisturbed time only, so it stays one job per ms.
        assert_eq!(u.jobs, q.jobs - 75);
        assert!(
            (u.job_rate_per_s - 1000.0).abs() < 5.0,
            "{}",
            u.job_rate_per_s
        );
        // A disturbance over most of the window leaves too little to read.
        let long = Stall {
            start_ns: 0,
            end_ns: 200_000_000,
            worker: 0,
        };
        let q = SteadyQueue::of(&jobs, &disturbed_intervals(&[long], &[])).unwrap();
        assert!(q.undisturbed.is_none());
    }

    #[test]
    fn a_job_that_finds_the_worker_idle_holds_it_from_its_arrival() {
        // Every ms a job finds the worker idle and waits 10 us to be polled out (its
        // delivery); a second arrives 5 us after it, during that delivery, and waits
        // for its whole service. The second's wait holds the delivery.
        let mut jobs = Vec::new();
        for i in 0..1000u16 {
            let t = f64::from(i);
            jobs.push(job(t, t + 0.010, 0.2, 2 * i));
            jobs.push(job(t + 0.005, t + 0.210, 0.2, 2 * i + 1));
        }
        let u = SteadyQueue::of(&jobs, &[]).unwrap().undisturbed.unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(close(u.opening_share, 0.5));
        assert!(close(u.opening_delivery_ms, 0.010));
        assert!(close(u.opening_delivery_m2_ms2, 0.0001));
        assert!(close(u.service_mean_ms, 0.200));
        assert!(close(u.queueing_wait_ms, 0.205 / 2.0));
        // A steady pattern: batches differ only where one cuts a pair, so the interval
        // is narrow.
        assert!(u.queueing_wait_ci95_ms.unwrap() < 0.05 * u.queueing_wait_ms);
        // With the delivery counted, the model predicts more wait than with one law.
        assert!(u.exceptional_first_ms().unwrap() > u.pk_ms().unwrap());
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
        assert!(points.iter().all(|p| p.1 >= 8.0));
        let quick = plan(Mode::Quick);
        assert!(quick
            .settings
            .iter()
            .all(|s| s.1.iter().map(|p| p.0).eq([0.3, 0.6, 0.8])));
    }
}
