//! The open-loop load generator: new handshakes arrive as a Poisson process, each from
//! its own UDP socket (its own source address at the gateway), all multiplexed by one
//! `mio` event-loop thread.
//!
//! Open loop and no coordinated omission: arrival instants are drawn up front (seeded
//! exponential inter-arrival times) and a handshake's latency runs from its INTENDED
//! start, so when the generator falls behind, the lag is part of the latency it reports
//! instead of silently lowering the offered rate.
//!
//! Client-side work is kept small so one core can push a gateway worker past saturation:
//! the server certificate is validated once and then looked up
//! (`ClientConfig::verified_server_cache`), ephemeral EC keys come from a pool filled
//! before the run and topped up by a background thread (`ClientConfig::ephemeral_source`),
//! for server-authenticated ECDH_ECDSA even the ECDH is done before the clock starts
//! (each precomputed ephemeral key comes with its secret for the server's certified key,
//! `ClientConfig::key_share_source`, and the key pool is then only a small reserve), and
//! the probe is off. What remains per handshake is the client's share of the
//! protocol: the ECDH (or RSA encryption), the PRF and Finished computations, and for
//! mutual RSA the CertificateVerify signature, a private-key operation nothing can cache.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mio::Poll;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};
use serde::Serialize;
use wtls::crypto::pk::EphemeralPool;
use wtls::handshake::AuthMode;
use wtls::handshake::Packing;
use wtls::suite::Case;

use wtlsperf_models::stats::{mean, median, percentile, Rank};

use crate::gateway::{
    spawn_gateway, GatewayConfig, GatewayHandle, JobRecord, ServeProtocol, Stall,
};
use crate::pki_store::PkiStore;
use crate::registry::wtls::WtlsCase;
use crate::registry::{Bench, Contender, LoadSides};
use crate::setup::{self, ClientAuth, Options};
use wtlsperf_models::Authentication;
use wtlsperf_spine::ProtocolId;

mod capacity;
mod clients;
mod files;
mod generator;
pub mod interference;
mod jobs;
pub mod outcomes;
pub(crate) mod protocols;
mod round_trip;
pub mod sched;

use capacity::server_cpu_samples_on;
use clients::{cheap_client_config, open_client_socket, raise_fd_limit, RestoreAffinity};
pub use files::{write_job_log, write_report};
pub use generator::LoadClients;
use generator::{Generator, Sockets, Tally};
pub use interference::{InjectorTally, Interference};
use jobs::summed_ms;
pub use jobs::{delivery_stalls, idle_arrival_waits_us, queue_stats};
use protocols::{SpineClients, WtlsClients};
pub use round_trip::{RoundTripLaw, RoundTripSampler};
pub use sched::WindowLoad;

/// In-memory handshakes behind the capacity bound, half before the run and half after.
const CAPACITY_BOUND_RUNS: usize = 1000;
/// Ephemeral keys (or key shares) prepared before a run at most: enough for a 4 s
/// capacity run of one worker at 16 000 handshakes/s, about 3 s of P-256 key generation
/// and ECDH on two cores. A longer run falls back to keys made on the spot.
const MAX_POOL: usize = 100_000;

/// What to offer.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    /// A running gateway; `None` starts one in process with `workers` workers.
    pub target: Option<SocketAddr>,
    pub workers: usize,
    /// How handshakes arrive: open-loop Poisson (the offered rate) or a closed loop.
    pub arrivals: Arrivals,
    pub duration: Duration,
    pub max_handshakes: usize,
    /// What is offered: any configuration of the registry (its own server in process,
    /// behind the same gateway worker).
    pub contender: Contender,
    /// Share of arrivals that resume an earlier session (abbreviated handshake).
    pub resume_ratio: f64,
    pub seed: u64,
    /// A handshake not complete this long after its intended start failed.
    pub handshake_timeout: Duration,
    /// The client's first retransmission timeout.
    pub retransmit_timeout: Duration,
    /// Most handshakes (sockets) open at once; arrivals beyond it fail at once.
    pub max_in_flight: usize,
    /// How the in-process gateway treats client certificates.
    pub client_auth: ClientAuth,
    /// Also measure the server CPU time per handshake in memory (for the capacity ratio).
    pub measure_capacity: bool,
    /// In-process gateway only: pin the generator to CPU 0 and the gateway's workers to
    /// the other CPUs (busy polling with one worker), so that neither waits for the
    /// other's CPU and a job's measured wait is the queue's alone.
    pub pin_cores: bool,
    /// Mean of an emulated bearer round trip: the client holds each answer to a server
    /// flight for a delay drawn from an exponential law of this mean before sending it.
    /// `None` answers at once (bare loopback).
    ///
    /// Why: on loopback a handshake's next job reaches the gateway some 10 us after the
    /// previous one left it, so a handshake's jobs arrive in lock-step with the queue and
    /// the job stream is not the Poisson stream the Pollaczek-Khinchin model assumes. On a
    /// real bearer hundreds of milliseconds pass between a handshake's flights; a random
    /// delay much longer than a job's sojourn decorrelates the answers from the queue (a
    /// Poisson stream shifted by independent delays stays Poisson), which is the setting
    /// of the thesis' queue model.
    pub round_trip: Option<Duration>,
    /// The law of each round trip around that mean ([`RoundTripLaw`]): exponential unless
    /// the premise of the queue model is under test.
    pub round_trip_law: RoundTripLaw,
    /// How the clients pack a flight into datagrams: one datagram per flight, as real
    /// stacks do, or one per message, the thesis' unit of a gateway job (then a
    /// handshake brings the gateway three or more jobs).
    pub packing: Packing,
    /// Keep every handshake's outcome ([`LoadReport::outcomes`]).
    pub record_outcomes: bool,
    /// Take the worker's core in bursts while the run lasts (see [`interference`]); in
    /// process only, and on the worker's CPU when the run pins it.
    pub interference: Option<Interference>,
}

impl LoadSpec {
    /// The protocol the run offers.
    pub fn protocol(&self) -> ProtocolId {
        self.contender.protocol()
    }

    /// A WTLS case in `auth` mode offered at `rate` for `duration`.
    pub fn new(case: Case, auth: AuthMode, rate: f64, duration: Duration) -> Self {
        let auth = match auth {
            AuthMode::Mutual => Authentication::Mutual,
            _ => Authentication::ServerAuth,
        };
        LoadSpec::offering(Contender::new(WtlsCase { case, auth }), rate, duration)
    }

    /// `contender` offered at `rate` for `duration`, with the defaults below.
    pub fn offering(contender: Contender, rate: f64, duration: Duration) -> Self {
        LoadSpec {
            target: None,
            workers: 1,
            arrivals: Arrivals::Poisson { rate },
            duration,
            max_handshakes: 1_000_000,
            contender,
            resume_ratio: 0.0,
            seed: 1,
            handshake_timeout: Duration::from_secs(5),
            retransmit_timeout: Duration::from_secs(1),
            max_in_flight: 8_000,
            client_auth: ClientAuth::Optional,
            measure_capacity: false,
            pin_cores: false,
            round_trip: None,
            round_trip_law: RoundTripLaw::Exponential,
            packing: Packing::FlightPerDatagram,
            record_outcomes: false,
            interference: None,
        }
    }
}

/// How a load run's handshakes arrive. The modes differ in what they measure, not only in
/// a parameter: the open loops offer a rate and read the queue it makes, the closed loop
/// keeps the worker busy and reads its capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// Open loop: a Poisson process of `rate` handshakes/s over the window, drawn up front
    /// from seeded exponential inter-arrival times.
    Poisson { rate: f64 },
    /// Open loop: a Poisson process of `rate` handshakes/s conditioned on its count,
    /// exactly round(rate x window) arrivals at uniform instants in the window, sorted.
    /// Given its count, a Poisson process's arrival instants are independent and uniform
    /// over the window (the order-statistics property, Ross, *Stochastic Processes*,
    /// Theorem 2.3.1), so the queue sees the same arrival law, but the load a run offers
    /// no longer carries the count's sqrt(N) noise: a calibrated point lands on its target
    /// utilisation instead of a few percent beside it.
    PoissonExactCount { rate: f64 },
    /// Closed loop: keep `clients` handshakes in flight, each new one starting when one
    /// ends, until the window closes; `key_pool` ephemeral keys (or key shares) are
    /// prepared before the run. This measures capacity at saturation: the worker never
    /// runs dry, yet the queue stays bounded (an open loop above capacity grows its queue
    /// until retransmissions and timeouts waste the worker's time, and measures that
    /// collapse instead of the capacity).
    ///
    /// The loop is a fixed population of N clients: one that completed a handshake starts
    /// its next full handshake from the same address (the gateway runs it beside the
    /// finished connection and ends that one when it completes), so the gateway holds
    /// about N peers, as it would for N real clients reconnecting. With `fresh_addresses`
    /// every handshake comes from a new address instead, and the gateway keeps one more
    /// established peer per handshake.
    Closed {
        clients: usize,
        fresh_addresses: bool,
        key_pool: usize,
    },
}

impl Arrivals {
    /// The offered rate (handshakes/s) of an open loop; `None` for a closed one.
    pub fn offered_rate(&self) -> Option<f64> {
        match *self {
            Arrivals::Poisson { rate } | Arrivals::PoissonExactCount { rate } => Some(rate),
            Arrivals::Closed { .. } => None,
        }
    }

    /// The open loop's arrival instants (ns from the window's start, sorted), at most
    /// `max` of them; empty for a closed loop, whose handshakes start as others end.
    pub fn schedule(&self, window_ns: u64, max: usize, seed: u64) -> anyhow::Result<Vec<u64>> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        match *self {
            Arrivals::Poisson { rate } => {
                let exp = Exp::new(rate)?;
                let mut offsets = Vec::new();
                let mut t = 0.0f64;
                while offsets.len() < max {
                    t += exp.sample(&mut rng);
                    let ns = (t * 1e9) as u64;
                    if ns >= window_ns {
                        break;
                    }
                    offsets.push(ns);
                }
                Ok(offsets)
            }
            Arrivals::PoissonExactCount { rate } => {
                let n = ((rate * window_ns as f64 / 1e9).round() as usize).min(max);
                let mut offsets: Vec<u64> = (0..n)
                    .map(|_| (rng.random::<f64>() * window_ns as f64) as u64)
                    .collect();
                offsets.sort_unstable();
                Ok(offsets)
            }
            Arrivals::Closed { .. } => Ok(Vec::new()),
        }
    }
}

/// Latency percentiles over completed handshakes, ms from the intended start.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub mean: f64,
}

/// The gateway's queue as its job records show it (in-process runs only).
#[derive(Debug, Clone, Default, Serialize)]
pub struct GatewayQueueStats {
    pub jobs: u64,
    pub mean_wait_us: f64,
    /// Second moment E[W^2] of the waiting time.
    pub wait_m2_us2: f64,
    pub mean_service_us: f64,
    /// Second moment E[S^2] of the service time (the P-K formula's input).
    pub service_m2_us2: f64,
    pub mean_service_cpu_us: f64,
    /// Busy time over (span of the jobs x workers).
    pub utilisation: f64,
    /// Service time summed over jobs, per completed handshake.
    pub per_handshake_service_us: f64,
    /// Share of jobs whose arrival is the kernel's receive timestamp.
    pub kernel_timestamp_share: f64,
    /// Jobs that found the worker idle (arrived after every earlier job had ended): their
    /// share, and their mean and median wait. That wait is no queueing: it is the path
    /// from the kernel's timestamp to the worker starting on the datagram, plus whatever
    /// the worker was doing between jobs.
    pub idle_arrival_share: f64,
    pub idle_arrival_wait_mean_us: f64,
    pub idle_arrival_wait_median_us: f64,
}

/// Result of one load run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LoadReport {
    /// `wtls`, `dtls1.2` or `edhoc`.
    pub protocol: String,
    /// The WTLS case, or the DTLS 1.2 / EDHOC suite.
    pub case: String,
    pub auth: String,
    pub workers: usize,
    pub offered_rate: f64,
    /// Handshakes completed within the arrival window per second of it.
    pub achieved_rate: f64,
    pub started: u64,
    pub completed: u64,
    pub failed: u64,
    pub resumed: u64,
    pub success_ratio: f64,
    pub latency_ms: Latency,
    pub retransmissions: u64,
    /// How late the generator sent what it had scheduled (new handshakes, and answers
    /// held for the emulated round trip): the share sent more than 1 ms after their
    /// time, and the 99th percentile of the delay (ms). A generator that stalls turns
    /// the Poisson stream into bursts, which the gateway then queues.
    pub late_share: f64,
    pub lag_p99_ms: f64,
    pub gateway: Option<GatewayQueueStats>,
    /// CPU used by the generator (its event loop and key-pool thread).
    pub loadgen_cpu_s: f64,
    /// CPU used by the in-process gateway's workers.
    pub gateway_cpu_s: f64,
    pub wall_s: f64,
    /// Median server CPU per handshake measured in memory, and the capacity it implies
    /// (workers / that); set with `measure_capacity`.
    pub server_cpu_per_handshake_us: Option<f64>,
    /// That median over the half measured before the run and over the half after (on
    /// the worker's core when pinned): how far the machine drifted meanwhile.
    pub server_cpu_before_us: Option<f64>,
    pub server_cpu_after_us: Option<f64>,
    pub capacity_rate: Option<f64>,
    /// achieved_rate / capacity_rate.
    pub capacity_ratio: Option<f64>,
    /// Intervals in which the in-process gateway's worker did not run although it had
    /// nothing to wait for ([`Stall`]): how many, and their summed length (ms).
    pub worker_stalls: usize,
    pub worker_stall_ms: f64,
    /// Intervals in which the pinned generator's thread was not running although it
    /// never sleeps (a loop turn whose wall time exceeds its thread CPU time by more than
    /// [`STALL_NS`]): how many, and their summed length (ms). Such a stall holds back
    /// every send due in it, so the arrivals that follow come in a burst.
    pub generator_stalls: usize,
    pub generator_stall_ms: f64,
    /// Sends that left more than [`STALL_NS`] after their time, for whatever reason (a
    /// generator stall, or just more work due at once than the generator did in time):
    /// how many.
    pub late_sends_over_stall: usize,
    /// Datagrams held on their way to a free worker for over [`STALL_NS`] (see
    /// [`delivery_stalls`]): how many, and their summed length (ms).
    pub delivery_stalls: usize,
    pub delivery_stall_ms: f64,
    /// What the scheduler and the hypervisor took from the worker and the generator over
    /// the arrival window ([`sched`]); `None` for a run against a gateway elsewhere.
    pub window_load: Option<WindowLoad>,
    /// What the interference injector did, when one ran.
    pub interference: Option<InjectorTally>,
    /// The worker stalls themselves (not serialised; the queue study reads around them).
    #[serde(skip)]
    pub stalls: Vec<Stall>,
    /// The late sends themselves as (scheduled, sent) on the process clock, ns.
    #[serde(skip)]
    pub late_sends: Vec<(u64, u64)>,
    /// The generator's stalls as (start, end) on the process clock, ns.
    #[serde(skip)]
    pub generator_stall_log: Vec<(u64, u64)>,
    /// The delivery path's stalls as (start, end) on the process clock, ns.
    #[serde(skip)]
    pub delivery_stall_log: Vec<(u64, u64)>,
    /// Every handshake's outcome, with `record_outcomes` (not serialised).
    #[serde(skip)]
    pub outcomes: Vec<outcomes::Outcome>,
    /// The in-process gateway's job log (not serialised; the evaluation models from it).
    #[serde(skip)]
    pub jobs: Vec<JobRecord>,
}

/// The run's arrival schedule, checked and drawn up front.
fn schedule(spec: &LoadSpec) -> anyhow::Result<Run<'_>> {
    if let Some(rate) = spec.arrivals.offered_rate() {
        anyhow::ensure!(rate > 0.0 && rate.is_finite(), "rate must be > 0");
    }
    anyhow::ensure!(
        (0.0..=1.0).contains(&spec.resume_ratio),
        "resume ratio in [0, 1]"
    );
    // The arrival schedule, drawn up front: the open loop is open by construction.
    let offsets = spec.arrivals.schedule(
        spec.duration.as_nanos() as u64,
        spec.max_handshakes,
        spec.seed,
    )?;
    let expected = match spec.arrivals {
        Arrivals::Closed { key_pool, .. } => key_pool.min(spec.max_handshakes),
        _ => offsets.len(),
    };
    let run = Run {
        spec,
        offsets,
        expected,
    };
    Ok(run)
}

/// Runs the load and reports it. A WTLS case runs against the engine's own endpoint
/// with clients that keep caches, key pools and sessions ([`run_wtls`]); every other
/// configuration with the sides its registry entry gives ([`run_spine`]).
pub fn run_load(spec: &LoadSpec, store: &PkiStore) -> anyhow::Result<LoadReport> {
    match spec.contender.downcast::<WtlsCase>() {
        Some(w) => run_wtls(spec, store, w.case, w.mode()),
        None => run_spine(spec, spec.contender.load_sides(Bench { store })?),
    }
}

/// A WTLS load run: the engine's own endpoint, and clients with their caches, key pool
/// and resumed sessions.
fn run_wtls(
    spec: &LoadSpec,
    store: &PkiStore,
    case: Case,
    auth: AuthMode,
) -> anyhow::Result<LoadReport> {
    let run = schedule(spec)?;
    let expected_full = ((run.expected as f64) * (1.0 - spec.resume_ratio)).ceil() as usize;
    let pool_target = (expected_full + 64).min(MAX_POOL);
    let (cfg, pool) = cheap_client_config(store, spec, case, auth, pool_target)?;
    let clients = WtlsClients::new(cfg, auth, spec.resume_ratio);
    let server = match spec.target {
        Some(_) => None,
        // The gateway packs its own flights as the clients do.
        None => Some(Arc::new(setup::gateway_server_config(
            store,
            spec.client_auth,
            &Options {
                packing: spec.packing,
                ..Options::default()
            },
        )?)),
    };
    run.with(clients, server, pool, |cpu, runs| {
        server_cpu_samples_on(cpu, store, spec, case, auth, runs)
    })
}

/// A load run of a protocol on the spine: fresh clients, a server per address.
fn run_spine(spec: &LoadSpec, sides: LoadSides) -> anyhow::Result<LoadReport> {
    let run = schedule(spec)?;
    let LoadSides {
        client,
        servers,
        mut server_cpu_us,
    } = sides;
    let server = spec.target.is_none().then_some(servers);
    let clients = SpineClients {
        make: client,
        next: spec.seed << 32,
    };
    run.with(clients, server, None, |_, runs| server_cpu_us(runs))
}

/// The report's `auth` value (`server`, `mutual`), as the WTLS modes are named.
fn auth_name(auth: Authentication) -> &'static str {
    match auth {
        Authentication::Mutual => AuthMode::Mutual.name(),
        _ => AuthMode::ServerAuth.name(),
    }
}

/// A load run's schedule, before its protocol is chosen.
struct Run<'a> {
    spec: &'a LoadSpec,
    offsets: Vec<u64>,
    expected: usize,
}

impl Run<'_> {
    /// The run with `clients` against `server` started in process (or the spec's
    /// target), the key pool topped up meanwhile, and the capacity bound measured
    /// around it by `bound` (on a core, in-memory handshakes) when asked.
    fn with<L: LoadClients, P: ServeProtocol>(
        self,
        clients: L,
        server: Option<P>,
        pool: Option<Arc<EphemeralPool>>,
        mut bound: impl FnMut(Option<usize>, usize) -> anyhow::Result<Vec<f64>>,
    ) -> anyhow::Result<LoadReport> {
        let spec = self.spec;
        // The capacity bound's first half, measured on the worker's core before the
        // gateway starts (the second half follows its shutdown): the machine's speed
        // drifts, and the bound should see the same machine as the run between them.
        let worker_core =
            (spec.pin_cores && spec.target.is_none() && setup::available_cpus() >= 2).then_some(1);
        let bound_before = if spec.measure_capacity {
            bound(worker_core, CAPACITY_BOUND_RUNS / 2)?
        } else {
            Vec::new()
        };
        let (gateway, target) = match (server, spec.target) {
            (_, Some(t)) => (None, t),
            (Some(server), None) => {
                let g = start_gateway(spec, server)?;
                let addr = g.local_addr();
                (Some(g), addr)
            }
            (None, None) => anyhow::bail!("no gateway to offer load to"),
        };
        // The injector takes the worker's core from the gateway's start to the run's end,
        // as a hypervisor would, and never outlives the run by more than its window.
        let injector = match (spec.interference, &gateway) {
            (Some(cfg), Some(_)) => Some(interference::Injector::start(
                cfg,
                worker_core,
                spec.duration + spec.handshake_timeout * 2 + Duration::from_secs(10),
            )?),
            _ => None,
        };
        let worker_tid = gateway
            .as_ref()
            .and_then(|g| g.worker_tids().first().copied().flatten());
        // The generator's own core (the gateway's workers have the others).
        let pinned = (spec.pin_cores && spec.target.is_none() && setup::available_cpus() >= 2)
            .then(|| setup::pin_current_thread(0).ok())
            .flatten();
        let _restore = RestoreAffinity(pinned);
        let refill = PoolRefill::start(pool);
        // A closed population needs one socket per client; the open loop one per
        // handshake.
        let wanted = match spec.arrivals {
            Arrivals::Closed {
                clients,
                fresh_addresses: false,
                ..
            } => clients,
            _ => self.expected,
        };
        let sockets = open_sockets(target, wanted)?;
        let gateway_cpu0 = gateway.as_ref().map_or(0, |g| g.stats().worker_cpu_ns);
        let loop_cpu0 = setup::thread_cpu_ns();
        let mut generator = Generator::new(spec, clients, sockets, self.offsets, pinned.is_some())?;
        let generator_tid = sched::ThreadSched::current_tid();
        let sched0 = sched::SchedSnapshot::take(worker_tid, generator_tid, worker_core);
        let wall_ns = generator.run()?;
        let sched1 = sched::SchedSnapshot::take(worker_tid, generator_tid, worker_core);
        let loop_cpu = setup::thread_cpu_ns() - loop_cpu0;
        let refill_cpu = refill.stop();
        let mut report = report_of(spec, generator.tally, wall_ns, loop_cpu + refill_cpu);
        report.interference = injector.map(interference::Injector::stop);
        if gateway.is_some() {
            report.window_load = Some(WindowLoad::between(&sched0, &sched1, sched::ticks_per_s()));
        }
        if let Some(g) = gateway {
            read_gateway(&mut report, g, gateway_cpu0, spec.workers);
        }
        if spec.measure_capacity {
            let after = bound(worker_core, CAPACITY_BOUND_RUNS / 2)?;
            add_capacity(&mut report, spec.workers, &bound_before, &after)?;
        }
        Ok(report)
    }
}

/// The in-process gateway's part of the report: its job and stall logs and the CPU its
/// workers used since `cpu0`.
fn read_gateway(report: &mut LoadReport, mut g: GatewayHandle, cpu0: u64, workers: usize) {
    // Stop the workers first: a client can see its handshake complete before the worker
    // has logged the job that completed it (the log is written after the batch), so a
    // log taken from a running gateway can miss the last jobs.
    let stats = g.stop();
    let jobs = g.take_jobs();
    report.gateway_cpu_s = stats.worker_cpu_ns.saturating_sub(cpu0) as f64 / 1e9;
    report.gateway = Some(queue_stats(&jobs, stats.handshakes(), workers.max(1)));
    report.delivery_stall_log = delivery_stalls(&jobs);
    report.jobs = jobs;
    report.stalls = g.take_stalls();
    report.delivery_stalls = report.delivery_stall_log.len();
    report.delivery_stall_ms = summed_ms(report.delivery_stall_log.iter().copied());
    report.worker_stalls = report.stalls.len();
    report.worker_stall_ms = summed_ms(report.stalls.iter().map(|s| (s.start_ns, s.end_ns)));
}

/// The capacity bound from the in-memory samples before and after the run.
fn add_capacity(
    report: &mut LoadReport,
    workers: usize,
    before: &[f64],
    after: &[f64],
) -> anyhow::Result<()> {
    report.server_cpu_before_us = median(before);
    report.server_cpu_after_us = median(after);
    let all: Vec<f64> = before.iter().chain(after).copied().collect();
    let us = median(&all).context("no in-memory handshake for the capacity bound")?;
    let capacity = workers.max(1) as f64 * 1e6 / us;
    report.server_cpu_per_handshake_us = Some(us);
    report.capacity_rate = Some(capacity);
    report.capacity_ratio = Some(report.achieved_rate / capacity);
    Ok(())
}

/// The gateway started in process for a run, with job records, and pinned to the cores
/// the generator leaves when asked.
fn start_gateway<P: ServeProtocol>(spec: &LoadSpec, server: P) -> anyhow::Result<GatewayHandle> {
    // The generator's clients share a few /24 prefixes at rates far above any per-prefix
    // budget: the run measures capacity, not the limiter.
    let mut g = GatewayConfig::lab("127.0.0.1:0".parse()?, server);
    g.workers = spec.workers.max(1);
    g.record_jobs = true;
    g.handshake_timeout = spec.handshake_timeout * 2;
    // An established peer of a load run sends nothing more: forgetting it soon keeps the
    // table (and, for DTLS, OpenSSL's per-connection state) small over a long run.
    g.idle_timeout = spec.handshake_timeout * 2;
    let cpus = setup::available_cpus();
    if spec.pin_cores && cpus >= 2 {
        g.cpu_affinity = (0..g.workers).map(|i| 1 + i % (cpus - 1)).collect();
        g.busy_poll = g.workers < cpus;
    }
    spawn_gateway(g)
}

/// Background top-up of the key pool, so a long run never generates keys inline.
struct PoolRefill {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl PoolRefill {
    fn start(pool: Option<Arc<EphemeralPool>>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = pool.map(|p| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let cpu0 = setup::thread_cpu_ns();
                while !stop.load(Ordering::Relaxed) {
                    if let Err(e) = p.refill() {
                        tracing::warn!(error = %e, "ephemeral pool refill failed");
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                setup::thread_cpu_ns() - cpu0
            })
        });
        PoolRefill { stop, thread }
    }

    /// Stops the thread; returns the CPU time it used (ns).
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.map_or(0, |t| t.join().unwrap_or(0))
    }
}

/// Sockets are bound, connected and registered before the clock starts, as many as
/// `wanted` and the descriptor limit allow: per-handshake setup is not the protocol's
/// cost.
fn open_sockets(target: SocketAddr, wanted: usize) -> anyhow::Result<Sockets> {
    let poll = Poll::new()?;
    let budget = raise_fd_limit().saturating_sub(1024).min(wanted);
    let mut spare = VecDeque::with_capacity(budget);
    for k in 0..budget {
        match open_client_socket(&poll, k, target) {
            Ok(sock) => spare.push_back((k, sock)),
            Err(_) => break,
        }
    }
    let slots = spare.len();
    Ok(Sockets {
        poll,
        target,
        spare,
        slots,
    })
}

/// The report of a run from the generator's tally (the gateway's part is added after).
fn report_of(spec: &LoadSpec, tally: Tally, wall_ns: u64, loadgen_cpu_ns: u64) -> LoadReport {
    let Tally {
        started,
        completed,
        failed,
        resumed,
        in_window,
        retransmissions,
        mut latencies_ms,
        lags_ns,
        late_sends,
        generator_stalls,
        outcomes,
    } = tally;
    let mut report = LoadReport {
        protocol: spec.protocol().name().into(),
        case: spec.contender.configuration(),
        auth: auth_name(spec.contender.auth()).into(),
        workers: if spec.target.is_some() {
            0
        } else {
            spec.workers.max(1)
        },
        offered_rate: spec.arrivals.offered_rate().unwrap_or(0.0),
        achieved_rate: in_window as f64 / spec.duration.as_secs_f64(),
        started,
        completed,
        failed,
        resumed,
        success_ratio: if started > 0 {
            completed as f64 / started as f64
        } else {
            0.0
        },
        retransmissions,
        loadgen_cpu_s: loadgen_cpu_ns as f64 / 1e9,
        wall_s: wall_ns as f64 / 1e9,
        outcomes,
        ..Default::default()
    };
    if !lags_ns.is_empty() {
        let late = lags_ns.iter().filter(|&&l| l > 1_000_000).count();
        report.late_share = late as f64 / lags_ns.len() as f64;
        let lags_ms: Vec<f64> = lags_ns.iter().map(|&l| l as f64 / 1e6).collect();
        report.lag_p99_ms = percentile(&lags_ms, 99.0, Rank::Nearest).unwrap_or(0.0);
    }
    latencies_ms.sort_by(f64::total_cmp);
    if let Some(mean) = mean(&latencies_ms) {
        let p = |q: f64| percentile(&latencies_ms, q, Rank::Nearest).unwrap_or(f64::NAN);
        report.latency_ms = Latency {
            p50: p(50.0),
            p95: p(95.0),
            p99: p(99.0),
            mean,
        };
    }
    report.generator_stalls = generator_stalls.len();
    report.generator_stall_ms = summed_ms(generator_stalls.iter().copied());
    report.generator_stall_log = generator_stalls;
    report.late_sends_over_stall = late_sends.len();
    report.late_sends = late_sends;
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_count_schedule_offers_its_rate_exactly() {
        let window = 2_000_000_000;
        let a = Arrivals::PoissonExactCount { rate: 250.5 };
        let s = a.schedule(window, usize::MAX, 7).unwrap();
        assert_eq!(s.len(), 501);
        assert!(s.windows(2).all(|w| w[0] <= w[1]) && s.iter().all(|&t| t < window));
        // Seeded, and capped by the handshake limit.
        assert_eq!(a.schedule(window, usize::MAX, 7).unwrap(), s);
        assert_eq!(a.schedule(window, 10, 7).unwrap().len(), 10);
        // The plain Poisson schedule stays in the window; a closed loop has none.
        let p = Arrivals::Poisson { rate: 250.0 }
            .schedule(window, usize::MAX, 7)
            .unwrap();
        assert!(!p.is_empty() && p.iter().all(|&t| t < window));
        let closed = Arrivals::Closed {
            clients: 4,
            fresh_addresses: false,
            key_pool: 10,
        };
        assert!(closed.schedule(window, 100, 7).unwrap().is_empty());
        assert_eq!(closed.offered_rate(), None);
    }

    /// Every protocol on the spine through the same open loop and gateway worker, as
    /// its registry entry gives its sides: every handshake completes (nothing is lost on
    /// loopback and the rate is far below capacity) and the worker records their jobs
    /// (wolfSSL's server connections are made and driven on the worker's thread, its
    /// clients on the generator's).
    #[test]
    fn every_spine_protocol_runs_the_open_loop_against_its_own_gateway() {
        let dir = tempfile::tempdir().unwrap();
        let case = Case::parse("160p/160p").unwrap();
        let store = PkiStore::create(
            dir.path(),
            true,
            crate::pki_store::unix_now().unwrap(),
            &[case],
        )
        .unwrap();
        let spine = crate::registry::available().filter(|p| p.id() != wtls::handshake::WTLS);
        for entry in spine {
            let all = entry.configurations();
            // The lightest configuration: a PSK one where the protocol has it.
            let contender = all
                .iter()
                .find(|c| !c.traits().uses_p256)
                .unwrap_or(&all[0])
                .clone();
            let mut spec = LoadSpec::offering(contender.clone(), 50.0, Duration::from_millis(300));
            spec.arrivals = Arrivals::PoissonExactCount { rate: 50.0 };
            let r = run_load(&spec, &store).unwrap();
            assert_eq!(r.protocol, entry.id().name());
            assert_eq!(r.case, contender.configuration());
            assert_eq!((r.started, r.completed), (15, 15), "{contender}");
            // Every handshake brings its server at least two jobs (DTLS: ClientHello,
            // cookie ClientHello, final flight; EDHOC: message 1 and 3).
            let jobs = r.gateway.unwrap().jobs;
            assert!(jobs >= 30, "{contender}: {jobs} jobs");
        }
    }

    /// A client whose last step sends (a resumed WTLS client's Finished, after the
    /// server's Finished) has that answer held for the emulated round trip like every
    /// other, and delivered: each handshake, full or resumed, brings its server its two
    /// jobs.
    #[test]
    fn a_clients_last_answer_reaches_the_server_after_the_emulated_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let case = Case::parse("160p/160p").unwrap();
        let now = crate::pki_store::unix_now().unwrap();
        let store = PkiStore::create(dir.path(), true, now, &[case]).unwrap();
        let mut spec = LoadSpec::new(case, AuthMode::ServerAuth, 50.0, Duration::from_millis(400));
        spec.arrivals = Arrivals::PoissonExactCount { rate: 50.0 };
        spec.resume_ratio = 1.0;
        spec.round_trip = Some(Duration::from_millis(5));
        let r = run_load(&spec, &store).unwrap();
        assert_eq!((r.started, r.completed), (20, 20));
        assert!(r.resumed > 0, "{} resumed", r.resumed);
        assert_eq!(r.gateway.unwrap().jobs, 2 * r.completed);
    }
}
