//! The measurements an experiment takes, each a function over (contenders, bearers,
//! devices, runs) that knows no protocol: everything protocol-specific comes from the
//! registry ([`Contender`]). The evaluation can run its own protocol parts through the
//! same functions.
//!
//! - [`in_memory`]: repeated handshakes through the spine's pair, for the processing
//!   terms of the model and the load points' rate;
//! - [`flights`]: bytes and flights of each contender at each bearer's payload limit,
//!   with Eq. 3.84 per flight;
//! - [`bearer_runs`]: real handshakes through the emulated bearer relay and the real
//!   gateway, the client held to each device's priced time, beside T_H of Eq. 3.84
//!   plus processing;
//! - [`load_points`]: open-loop load on the real gateway at target utilisations, beside
//!   the Pollaczek-Khinchin mean wait (Eq. 3.12) from the run's own service moments.

use std::time::Duration;

use anyhow::Context;
use wtlsperf_bearer::LinkProfile;
use wtlsperf_drivers::load::{run_load, Arrivals, LoadReport, LoadSpec};
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::protocols::model::duration_ms;
use wtlsperf_drivers::protocols::{MemoryRun, SuiteMeasurement};
use wtlsperf_drivers::registry::{
    run_over_bearers, BearerHandshake, Bench, Contender, BEARER_HANDSHAKE_TIMEOUT,
};
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::queue::pk_mean_wait_ms;
use wtlsperf_models::queue::trace::SteadyQueue;
use wtlsperf_models::stats::{median, percentile, Rank};
use wtlsperf_models::transmission::link_ms;
use wtlsperf_models::transmission::Direction;

use super::bearer::Bearer;
use super::file::Device;
use crate::evaluate::context::Ctx;
use crate::evaluate::queue::calibrate::{calibrate, RateEstimate};
use crate::evaluate::queue::reality::calibration_rho;
use crate::evaluate::vocabulary::auth_name;

/// In-memory handshakes per contender for the processing terms and the load rate (after
/// one unmeasured warm-up).
pub const MEMORY_REPS: usize = 5;
/// Bearer runs at once: most of a run is waiting on the emulated link.
pub const PARALLEL_BEARER_RUNS: usize = 16;

/// A 64-bit mix of a run's coordinates into its seed (splitmix64 over each part): the
/// same file gives the same seeds, and no two points share a stream.
pub fn seed_of(parts: &[u64]) -> u64 {
    parts.iter().fold(0x9e37_79b9_7f4a_7c15, |acc, p| {
        let mut z = acc ^ p.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// Each contender measured in memory, in order.
pub fn in_memory(
    ctx: &Ctx,
    store: &PkiStore,
    contenders: &[Contender],
) -> anyhow::Result<Vec<SuiteMeasurement>> {
    contenders
        .iter()
        .map(|c| {
            ctx.step(&format!("in memory: {c}, {MEMORY_REPS} handshakes"));
            c.measure_in_memory(Bench { store }, MEMORY_REPS, 1)
                .with_context(|| format!("{c} in memory"))
        })
        .collect()
}

/// One flight of one contender over one bearer (`flights.csv`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FlightRow {
    pub contender: String,
    pub protocol: &'static str,
    pub suite: String,
    pub auth: &'static str,
    pub bearer: String,
    /// The UDP payload limit the contender's sides fragmented to, where they do.
    pub payload_limit: u16,
    /// 1-based, in the order the flights crossed.
    pub flight: usize,
    /// `up` (client to gateway) or `down`.
    pub direction: &'static str,
    pub datagrams: u32,
    /// UDP payload bytes of the flight.
    pub bytes: u32,
    pub largest_datagram: usize,
    /// Datagrams whose payload exceeds the bearer's payload limit (a link below UDP
    /// would have to fragment them).
    pub over_payload_limit: usize,
    /// Eq. 3.84 for this flight: its serialisation at the direction's rate plus one mean
    /// traversal (ms).
    pub model_ms: f64,
}

/// The flights of `shape` over `bearer`, each with Eq. 3.84.
fn flight_rows(c: &Contender, bearer: &LinkProfile, shape: &MemoryRun) -> Vec<FlightRow> {
    let limit = bearer.datagram_payload_limit();
    let mut log = shape.log.iter();
    shape
        .flights()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let sizes: Vec<usize> = log
                .by_ref()
                .take(f.datagrams as usize)
                .map(|d| d.bytes)
                .collect();
            FlightRow {
                contender: c.to_string(),
                protocol: c.protocol().name(),
                suite: c.suite(),
                auth: auth_name(c.auth()),
                bearer: bearer.name.clone(),
                payload_limit: limit,
                flight: i + 1,
                direction: match f.direction {
                    Direction::Up => "up",
                    Direction::Down => "down",
                },
                datagrams: f.datagrams,
                bytes: f.bytes,
                largest_datagram: sizes.iter().copied().max().unwrap_or(0),
                over_payload_limit: sizes.iter().filter(|s| **s > usize::from(limit)).count(),
                model_ms: link_ms(std::slice::from_ref(f), &bearer.rates()),
            }
        })
        .collect()
}

/// A contender a measurement could not take on a bearer, and why (`failures.csv`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Failure {
    /// `flights`, `bearer_runs`, `loss_curves` or `load`.
    pub measurement: &'static str,
    pub contender: String,
    pub bearer: String,
    pub error: String,
}

/// Every contender's flights on every bearer: its in-memory shape, or, for a contender
/// that fragments to the bearer's MTU, one handshake at that bearer's payload limit. A
/// contender that cannot complete at a limit (a library's smallest MTU) is a failure,
/// not the end of the experiment.
pub fn flights(
    ctx: &Ctx,
    store: &PkiStore,
    contenders: &[Contender],
    memory: &[SuiteMeasurement],
    bearers: &[Bearer],
) -> (Vec<FlightRow>, Vec<Failure>) {
    let (mut rows, mut failures) = (Vec::new(), Vec::new());
    for (c, m) in contenders.iter().zip(memory) {
        for b in bearers {
            ctx.step(&format!("flights: {c} over {}", b.profile.name));
            let limit = b.profile.datagram_payload_limit();
            match c.shape_at(Bench { store }, limit) {
                Ok(shape) => rows.extend(flight_rows(
                    c,
                    &b.profile,
                    shape.as_ref().unwrap_or(&m.shape),
                )),
                Err(e) => failures.push(Failure {
                    measurement: "flights",
                    contender: c.to_string(),
                    bearer: b.profile.name.clone(),
                    error: format!("at a {limit}-byte payload limit: {e:#}"),
                }),
            }
        }
    }
    (rows, failures)
}

/// One point of the bearer runs (`bearer_runs.csv`): a contender over a bearer as a
/// device, its runs summarised.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BearerRunRow {
    pub contender: String,
    pub protocol: &'static str,
    pub suite: String,
    pub auth: &'static str,
    pub bearer: String,
    pub device: String,
    /// `measured`, or why the point was not run (`not available: ...`: the device has
    /// no price for the contender's client operations).
    pub status: String,
    pub runs: usize,
    pub completed: usize,
    /// Client start to completion over the relay (ms), over the completed runs.
    pub median_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub min_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// The client time the device's holds add up to (ms; this machine: its in-memory
    /// client CPU).
    pub client_ms: Option<f64>,
    /// The gateway's in-memory CPU per handshake (ms).
    pub server_ms: Option<f64>,
    /// Eq. 3.84 over the flights exchanged (ms), median over the completed runs.
    pub transmission_model_ms: Option<f64>,
    /// T_H = Eq. 3.84 + client + server processing (ms), median.
    pub model_ms: Option<f64>,
    /// median_ms / model_ms.
    pub measured_over_model: Option<f64>,
    /// Client retransmissions, median.
    pub retransmissions: Option<f64>,
    /// UDP payload bytes both ways and flights, median.
    pub bytes: Option<f64>,
    pub flights: Option<f64>,
    /// Handshakes that failed, with the first error.
    pub first_error: Option<String>,
}

/// A bearer-run point to make: indices into the lists, and the device's holds.
struct Point {
    contender: usize,
    bearer: usize,
    device: usize,
    steps: Result<Option<wtlsperf_drivers::device::ClientSteps>, String>,
}

/// What one bearer run gave.
struct RunFigures {
    measured_ms: f64,
    /// Eq. 3.84 over the flights exchanged.
    link_ms: f64,
    /// T_H: the same plus the client's and the server's processing.
    model_ms: f64,
    retransmissions: u32,
    bytes: usize,
    flights: usize,
}

type Run = anyhow::Result<RunFigures>;

impl Point {
    /// The client's processing of the model (ms): the device's holds, or this machine's
    /// in-memory client CPU; `None` where the device cannot price the contender.
    fn client_ms(&self, m: &SuiteMeasurement) -> Option<f64> {
        match &self.steps {
            Ok(Some(steps)) => Some(steps.total_ms()),
            Ok(None) => Some(m.client_cpu_us / 1e3),
            Err(_) => None,
        }
    }
}

/// Real handshakes of every contender over every bearer as every device, `runs` a
/// point, many at once (one relay each), each seeded from `seed`.
#[allow(clippy::too_many_arguments)]
pub fn bearer_runs(
    ctx: &Ctx,
    store: &PkiStore,
    contenders: &[Contender],
    memory: &[SuiteMeasurement],
    bearers: &[Bearer],
    devices: &[Device],
    published: &[PublishedPqCost],
    (runs, seed): (usize, u64),
) -> anyhow::Result<Vec<BearerRunRow>> {
    let mut points = Vec::new();
    for (ci, c) in contenders.iter().enumerate() {
        for bi in 0..bearers.len() {
            for (di, d) in devices.iter().enumerate() {
                let steps = match d {
                    Device::ThisMachine => Ok(None),
                    Device::Profile(p) => {
                        c.client_steps(p, published).map(Some).map_err(|e| e.reason)
                    }
                };
                points.push(Point {
                    contender: ci,
                    bearer: bi,
                    device: di,
                    steps,
                });
            }
        }
    }
    let jobs: Vec<(usize, usize)> = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.steps.is_ok())
        .flat_map(|(pi, _)| (0..runs).map(move |r| (pi, r)))
        .collect();
    ctx.step(&format!(
        "bearer runs: {} handshakes through the relay",
        jobs.len()
    ));
    let runs = run_over_bearers(
        Bench { store },
        &jobs,
        PARALLEL_BEARER_RUNS,
        |_, &(pi, r)| {
            let p = &points[pi];
            Ok(BearerHandshake {
                contender: &contenders[p.contender],
                bearer: bearers[p.bearer].profile.clone(),
                seed: seed_of(&[
                    seed,
                    p.contender as u64,
                    p.bearer as u64,
                    p.device as u64,
                    r as u64,
                ]),
                steps: p.steps.clone().ok().flatten(),
                deadline: BEARER_HANDSHAKE_TIMEOUT,
            })
        },
    );
    let results: Vec<Run> = jobs
        .iter()
        .zip(runs)
        .map(|(&(pi, _), run)| -> Run {
            let (run, p) = (run?, &points[pi]);
            let bearer = &bearers[p.bearer].profile;
            let flights = run.flights();
            let m = &memory[p.contender];
            let client_ms = p.client_ms(m).unwrap_or(0.0);
            Ok(RunFigures {
                measured_ms: run.duration_ms,
                link_ms: link_ms(&flights, &bearer.rates()),
                model_ms: duration_ms(&flights, bearer, client_ms, m.server_cpu_us / 1e3),
                retransmissions: run.client_retransmissions,
                bytes: run.bytes(),
                flights: flights.len(),
            })
        })
        .collect();
    Ok(points
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let mine: Vec<&Run> = jobs
                .iter()
                .zip(&results)
                .filter(|((j, _), _)| *j == pi)
                .map(|(_, r)| r)
                .collect();
            bearer_row(
                p,
                &contenders[p.contender],
                &memory[p.contender],
                &bearers[p.bearer],
                &devices[p.device],
                &mine,
            )
        })
        .collect())
}

/// A point's row from its runs.
fn bearer_row(
    p: &Point,
    c: &Contender,
    m: &SuiteMeasurement,
    b: &Bearer,
    d: &Device,
    runs: &[&Run],
) -> BearerRunRow {
    let ok: Vec<&RunFigures> = runs.iter().filter_map(|r| r.as_ref().ok()).collect();
    let col = |f: fn(&RunFigures) -> f64| -> Vec<f64> { ok.iter().map(|r| f(r)).collect() };
    let ms = col(|r| r.measured_ms);
    let client_ms = p.client_ms(m);
    let median_ms = median(&ms);
    let model_ms = median(&col(|r| r.model_ms));
    BearerRunRow {
        contender: c.to_string(),
        protocol: c.protocol().name(),
        suite: c.suite(),
        auth: auth_name(c.auth()),
        bearer: b.profile.name.clone(),
        device: d.name().to_owned(),
        status: match &p.steps {
            Ok(_) => "measured".to_owned(),
            Err(why) => why.clone(),
        },
        runs: runs.len(),
        completed: ok.len(),
        median_ms,
        p95_ms: percentile(&ms, 95.0, Rank::Nearest),
        min_ms: ms.iter().copied().reduce(f64::min),
        max_ms: ms.iter().copied().reduce(f64::max),
        client_ms,
        server_ms: client_ms.map(|_| m.server_cpu_us / 1e3),
        transmission_model_ms: median(&col(|r| r.link_ms)),
        model_ms,
        measured_over_model: median_ms.zip(model_ms).map(|(a, b)| a / b),
        retransmissions: median(&col(|r| f64::from(r.retransmissions))),
        bytes: median(&col(|r| r.bytes as f64)),
        flights: median(&col(|r| r.flights as f64)),
        first_error: runs
            .iter()
            .find_map(|r| r.as_ref().err())
            .map(|e| format!("{e:#}")),
    }
}

/// One load point (`load_points.csv`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoadPointRow {
    pub contender: String,
    pub protocol: &'static str,
    pub suite: String,
    pub auth: &'static str,
    pub target_rho: f64,
    /// The gateway's in-memory CPU per handshake (us).
    pub memory_server_us: f64,
    /// The first rate tried (handshakes/s): target_rho / memory_server_us.
    pub first_guess_hs_per_s: f64,
    /// Warm-ups run to correct it by the utilisation they measured.
    pub warmups: usize,
    /// Handshakes/s the recording offered.
    pub offered_hs_per_s: f64,
    pub achieved_hs_per_s: f64,
    pub success_ratio: f64,
    pub seconds: f64,
    /// Over the run's steady window: the worker's busy share, the jobs' arrival rate and
    /// the first two moments of their service time.
    pub measured_rho: Option<f64>,
    pub job_rate_per_s: Option<f64>,
    pub service_mean_ms: Option<f64>,
    pub service_m2_ms2: Option<f64>,
    /// Mean queueing wait of a job (ms; zero for one that found the worker idle).
    pub measured_wait_ms: Option<f64>,
    /// P-K (Eq. 3.12) at the measured job rate with the measured service moments (ms).
    pub pk_wait_ms: Option<f64>,
    /// measured_wait_ms / pk_wait_ms - 1.
    pub pk_error: Option<f64>,
    /// Handshake latency from the intended start (ms).
    pub latency_p50_ms: f64,
    pub latency_p95_ms: f64,
    /// The worker's stalls (off its core while it had work): how many, summed (ms).
    pub worker_stalls: usize,
    pub worker_stall_ms: f64,
}

/// How a load point is run: its recording's length, the warm-ups that calibrate its
/// rate, and the seed of its arrivals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadRun {
    pub seconds: f64,
    pub warmups: usize,
    pub seed: u64,
}

/// Every contender at every target utilisation on the real gateway: one pinned worker,
/// Poisson arrivals conditioned on their count. The first rate is rho over the
/// contender's in-memory server CPU per handshake; up to `warmups` short runs then
/// correct it by the utilisation they measure (the evaluation's calibration: the real
/// gateway's occupancy per handshake is more than the in-memory CPU), and the recording
/// offers the corrected rate.
pub fn load_points(
    ctx: &Ctx,
    store: &PkiStore,
    contenders: &[Contender],
    memory: &[SuiteMeasurement],
    rhos: &[f64],
    how: LoadRun,
) -> anyhow::Result<Vec<LoadPointRow>> {
    let mut rows = Vec::new();
    for (ci, (c, m)) in contenders.iter().zip(memory).enumerate() {
        let mut estimate = RateEstimate::from_handshake_ms(m.server_cpu_us / 1e3);
        for (ri, &rho) in rhos.iter().enumerate() {
            let first = estimate.rate_for(rho);
            let seed = seed_of(&[how.seed, ci as u64, ri as u64]);
            let run = |rate: f64, seconds: f64, seed: u64| {
                let mut spec =
                    LoadSpec::offering(c.clone(), rate, Duration::from_secs_f64(seconds));
                spec.arrivals = Arrivals::PoissonExactCount { rate };
                spec.workers = 1;
                spec.pin_cores = true;
                spec.seed = seed;
                spec.max_handshakes = (rate * seconds * 1.5) as usize + 10;
                ctx.without_ticker(|| run_load(&spec, store))
                    .with_context(|| format!("load of {c} at {rate:.0} handshakes/s"))
            };
            let mut warmups = 0;
            let rate = if how.warmups == 0 {
                first
            } else {
                let warmup_s = (how.seconds / 3.0).clamp(0.3, 2.0);
                calibrate(rho, how.warmups, &mut estimate, |rate| {
                    warmups += 1;
                    ctx.step(&format!(
                        "load: {c} at rho {rho}, warm-up {warmups} at {rate:.0} handshakes/s"
                    ));
                    let r = run(rate, warmup_s, seed_of(&[seed, warmups]))?;
                    let rho = SteadyQueue::of(&r.jobs, &[]).map_or(0.0, |q| q.utilisation);
                    // a warm-up of an experiment is never set aside as disturbed
                    Ok((calibration_rho(rho, r.success_ratio), false))
                })?
                .lambda_hs_per_s
            };
            ctx.step(&format!(
                "load: {c} at rho {rho} ({rate:.0} handshakes/s, {} s)",
                how.seconds
            ));
            let report = run(rate, how.seconds, seed)?;
            let mut row = load_row(c, m, rho, rate, how.seconds, &report);
            (row.first_guess_hs_per_s, row.warmups) = (first, warmups as usize);
            rows.push(row);
        }
    }
    Ok(rows)
}

fn load_row(
    c: &Contender,
    m: &SuiteMeasurement,
    rho: f64,
    rate: f64,
    seconds: f64,
    r: &LoadReport,
) -> LoadPointRow {
    let q = SteadyQueue::of(&r.jobs, &[]);
    let pk = q
        .as_ref()
        .and_then(|q| pk_mean_wait_ms(q.job_rate_per_s, q.service_mean_ms, q.service_m2_ms2));
    let measured = q.as_ref().map(|q| q.queueing_wait_ms);
    LoadPointRow {
        contender: c.to_string(),
        protocol: c.protocol().name(),
        suite: c.suite(),
        auth: auth_name(c.auth()),
        target_rho: rho,
        memory_server_us: m.server_cpu_us,
        first_guess_hs_per_s: rate,
        warmups: 0,
        offered_hs_per_s: rate,
        achieved_hs_per_s: r.achieved_rate,
        success_ratio: r.success_ratio,
        seconds,
        measured_rho: q.as_ref().map(|q| q.utilisation),
        job_rate_per_s: q.as_ref().map(|q| q.job_rate_per_s),
        service_mean_ms: q.as_ref().map(|q| q.service_mean_ms),
        service_m2_ms2: q.as_ref().map(|q| q.service_m2_ms2),
        measured_wait_ms: measured,
        pk_wait_ms: pk,
        pk_error: measured
            .zip(pk)
            .filter(|(_, p)| *p > 0.0)
            .map(|(w, p)| w / p - 1.0),
        latency_p50_ms: r.latency_ms.p50,
        latency_p95_ms: r.latency_ms.p95,
        worker_stalls: r.worker_stalls,
        worker_stall_ms: r.worker_stall_ms,
    }
}
