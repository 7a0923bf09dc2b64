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

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};
use serde::Serialize;
use wtls::crypto::pk::{EphemeralPool, KeyPair, PeerKey};
use wtls::handshake::{
    AuthMode, Client, ClientConfig, Event, Output, ServerConnection, StoredSession,
};
use wtls::msgs::common::EcPublicKey;
use wtls::msgs::enums::AlertLevel;
use wtls::probe::{Clock, Probe};
use wtls::suite::Case;
use zeroize::Zeroizing;

use wtlsperf_models::stats::median;

use crate::gateway::cli::{at_least_one, positive_number, positive_seconds};
use crate::gateway::{spawn_gateway, GatewayConfig, JobRecord, Stall, STALL_NS};
use crate::pki_store::PkiStore;
use crate::setup::{self, ClientAuth, Options, ProcessClock};
use crate::udp_client::AuthArg;

/// Most arrivals started per event-loop turn.
const ARRIVAL_BATCH: usize = 32;
/// Sessions kept for resumption.
const SESSION_POOL: usize = 1024;
/// Ephemeral key pairs kept in reserve where the key shares are precomputed.
const SHARE_RESERVE: usize = 64;
/// In-memory handshakes behind the capacity bound, half before the run and half after.
const CAPACITY_BOUND_RUNS: usize = 1000;
/// Most generator stalls and late sends logged.
const MAX_STALL_LOG: usize = 100_000;
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
    pub case: Case,
    pub auth: AuthMode,
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
}

impl LoadSpec {
    pub fn new(case: Case, auth: AuthMode, rate: f64, duration: Duration) -> Self {
        LoadSpec {
            target: None,
            workers: 1,
            arrivals: Arrivals::Poisson { rate },
            duration,
            max_handshakes: 1_000_000,
            case,
            auth,
            resume_ratio: 0.0,
            seed: 1,
            handshake_timeout: Duration::from_secs(5),
            retransmit_timeout: Duration::from_secs(1),
            max_in_flight: 8_000,
            client_auth: ClientAuth::Optional,
            measure_capacity: false,
            pin_cores: false,
            round_trip: None,
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
    /// The in-process gateway's job log (not serialised; the evaluation models from it).
    #[serde(skip)]
    pub jobs: Vec<JobRecord>,
}

/// One handshake in flight.
struct Slot {
    sock: UdpSocket,
    client: Client,
    intended_ns: u64,
    generation: u64,
    resumed: bool,
    /// The client's answer, held back for the emulated round trip until `send_at_ns`.
    held: Vec<Vec<u8>>,
    send_at_ns: u64,
}

/// The client configuration with the caches of the module documentation; the returned
/// flag stops the pool's refill thread.
fn cheap_client_config(
    store: &PkiStore,
    spec: &LoadSpec,
    pool_target: usize,
) -> anyhow::Result<(Arc<ClientConfig>, Option<Arc<EphemeralPool>>)> {
    let creds = store.case(&spec.case)?;
    let mut cfg = setup::client_config(&creds, &Options::default(), false);
    cfg.retransmit_timeout_ns = spec.retransmit_timeout.as_nanos() as u64;
    cfg.verified_server_cache = Some(Arc::new(Mutex::new(HashMap::new())));
    let mut pool = None;
    if !spec.case.leaf.is_rsa() && spec.auth == AuthMode::ServerAuth {
        // The whole ECDH of a server-authenticated handshake, done before the clock
        // starts: the server's certified key is known, so each precomputed ephemeral key
        // comes with its shared secret and the client does no public-key work in the run.
        let server_key = wtls::pki::certificate_key(&creds.server_cert, creds.numbering)?;
        let shares = Arc::new(precompute_shares(&server_key, pool_target)?);
        let expected = server_key.clone();
        cfg.key_share_source = Some(Arc::new(move |key: &PeerKey| {
            if *key != expected {
                return None;
            }
            shares.lock().expect("key shares").pop().map(Ok)
        }));
    }
    if !spec.case.leaf.is_rsa() {
        // With precomputed key shares the pool is only the reserve for a run that
        // outlasts them: filling it to the full target would double the setup time
        // (50 000 K-283 key pairs take about 15 s on one core).
        let size = if cfg.key_share_source.is_some() {
            pool_target.min(SHARE_RESERVE)
        } else {
            pool_target
        };
        let p = Arc::new(EphemeralPool::new(spec.case.leaf, size)?);
        let source = p.clone();
        cfg.ephemeral_source = Some(Arc::new(move |s| {
            if s == source.spec() {
                source.take()
            } else {
                KeyPair::generate(s)
            }
        }));
        pool = Some(p);
    }
    Ok((Arc::new(cfg), pool))
}

/// Gives the calling thread its CPU affinity back when the run ends, however it ends.
struct RestoreAffinity(Option<libc::cpu_set_t>);

impl Drop for RestoreAffinity {
    fn drop(&mut self) {
        if let Some(previous) = &self.0 {
            setup::restore_affinity(previous);
        }
    }
}

/// A precomputed ECDH key share: the ephemeral point and its secret with the server key.
type KeyShare = (EcPublicKey, Zeroizing<Vec<u8>>);

/// `n` key shares for `server_key`, computed on both cores.
fn precompute_shares(server_key: &PeerKey, n: usize) -> anyhow::Result<Mutex<Vec<KeyShare>>> {
    let spec = server_key.spec();
    let threads = 2;
    let parts: Vec<anyhow::Result<Vec<KeyShare>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let count = n / threads + usize::from(t < n % threads);
                scope.spawn(move || {
                    let mut out = Vec::with_capacity(count);
                    for _ in 0..count {
                        let eph = KeyPair::generate(spec)?;
                        let shared = wtls::crypto::pk::ecdh(&eph, server_key)?;
                        let point = match eph.public_wire()? {
                            wtls::msgs::certificate::PublicKey::Ec(p) => p,
                            wtls::msgs::certificate::PublicKey::Rsa(_) => {
                                anyhow::bail!("an EC key pair has an EC public key")
                            }
                        };
                        out.push((point, shared));
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("key share thread panicked")))
            })
            .collect()
    });
    let mut all = Vec::with_capacity(n);
    for part in parts {
        all.extend(part?);
    }
    Ok(Mutex::new(all))
}

/// Binds the `k`-th client socket, connects it to the gateway and registers it as
/// token `k`.
fn open_client_socket(poll: &Poll, k: usize, target: SocketAddr) -> std::io::Result<UdpSocket> {
    let mut sock = UdpSocket::bind(SocketAddr::new(client_ip(k as u64), 0))
        .or_else(|_| UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0))))?;
    sock.connect(target)?;
    poll.registry()
        .register(&mut sock, Token(k), Interest::READABLE)?;
    Ok(sock)
}

/// Raises the soft descriptor limit to the hard one; returns the soft limit now.
fn raise_fd_limit() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the rlimit struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    usize::try_from(lim.rlim_cur)
        .unwrap_or(usize::MAX)
        .min(1 << 20)
}

/// The `k`-th client address: 127.0.0.2 .. 127.0.0.254 in turn (any 127/8 address is
/// local on Linux), so source addresses differ in more than the port.
fn client_ip(k: u64) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + (k % 253) as u8))
}

fn fatal(out: &Output) -> bool {
    out.events.iter().any(|e| match e {
        Event::AlertReceived(a) | Event::AlertSent(a, _) => a.level != AlertLevel::Warning,
        _ => false,
    })
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Queue statistics from job records (`completed` handshakes, `workers` servers).
pub fn queue_stats(jobs: &[JobRecord], completed: u64, workers: usize) -> GatewayQueueStats {
    if jobs.is_empty() {
        return GatewayQueueStats::default();
    }
    let n = jobs.len() as f64;
    let us = |ns: u64| ns as f64 / 1e3;
    let mut s = GatewayQueueStats {
        jobs: jobs.len() as u64,
        ..Default::default()
    };
    let mut busy = 0.0;
    for j in jobs {
        let (w, sv) = (us(j.wait_ns()), us(j.service_ns()));
        s.mean_wait_us += w / n;
        s.wait_m2_us2 += w * w / n;
        s.mean_service_us += sv / n;
        s.service_m2_us2 += sv * sv / n;
        s.mean_service_cpu_us += us(j.cpu_ns) / n;
        s.kernel_timestamp_share += f64::from(u8::from(j.kernel_timestamp)) / n;
        busy += sv;
    }
    let (share, mean, median) = idle_arrival_waits_us(jobs);
    s.idle_arrival_share = share;
    s.idle_arrival_wait_mean_us = mean;
    s.idle_arrival_wait_median_us = median;
    let first = jobs.iter().map(|j| j.arrival_ns).min().unwrap_or(0);
    let last = jobs.iter().map(|j| j.end_ns).max().unwrap_or(0);
    let span = us(last.saturating_sub(first));
    if span > 0.0 {
        s.utilisation = busy / (span * workers.max(1) as f64);
    }
    if completed > 0 {
        s.per_handshake_service_us = busy / completed as f64;
    }
    s
}

/// The delivery path's stalls (process clock, ns; sorted by start): each time a datagram
/// the kernel had stamped reached a free worker more than [`STALL_NS`] later, from the
/// moment both the datagram was there and its worker was free to the start of its
/// service.
///
/// On loopback the kernel stamps a datagram as the generator's send puts it on its core's
/// receive backlog; the backlog is normally drained before that system call returns, but
/// under load the kernel hands it to `ksoftirqd`, which must then wait for a time slice
/// beside the busy-polling generator. Neither thread is off-core meanwhile, so neither
/// stall log sees it, yet the datagrams of a few milliseconds reach the worker together
/// (the test machine showed 14 ms twice in one run at rho = 0.1, and the jobs queued
/// behind them made a quarter of that run's queueing wait). A free worker polls every
/// few microseconds, so a datagram that reaches it later than that was held on the way,
/// whatever the queue's state.
pub fn delivery_stalls(jobs: &[JobRecord]) -> Vec<(u64, u64)> {
    let mut by_start: Vec<&JobRecord> = jobs.iter().collect();
    by_start.sort_by_key(|j| j.start_ns);
    // When each worker is next free.
    let mut free: HashMap<usize, u64> = HashMap::new();
    let mut out = Vec::new();
    for j in by_start {
        let worker_free = free.entry(j.worker).or_insert(0);
        let ready = j.arrival_ns.max(*worker_free);
        if j.start_ns > ready + STALL_NS {
            out.push((ready, j.start_ns));
        }
        *worker_free = (*worker_free).max(j.end_ns);
    }
    out.sort_unstable();
    out
}

/// (share, mean us, median us) of the waits of jobs that found the worker idle (one
/// worker: jobs in order of service start; a job arriving after every earlier job ended).
pub fn idle_arrival_waits_us(jobs: &[JobRecord]) -> (f64, f64, f64) {
    let mut by_start: Vec<&JobRecord> = jobs.iter().collect();
    by_start.sort_by_key(|j| j.start_ns);
    let mut busy_until = 0u64;
    let mut idle: Vec<f64> = Vec::new();
    for j in &by_start {
        if j.arrival_ns >= busy_until {
            idle.push(j.wait_ns() as f64 / 1e3);
        }
        busy_until = busy_until.max(j.end_ns);
    }
    if idle.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mean = idle.iter().sum::<f64>() / idle.len() as f64;
    idle.sort_by(f64::total_cmp);
    (
        idle.len() as f64 / by_start.len() as f64,
        mean,
        idle[idle.len() / 2],
    )
}

/// [`server_cpu_samples_us`], measured by a thread pinned to `cpu` (the
/// gateway worker's core: on a shared virtual machine two cores need not run at the same
/// speed) or by the calling thread when `cpu` is `None` or cannot be had.
fn server_cpu_samples_on(
    cpu: Option<usize>,
    store: &PkiStore,
    spec: &LoadSpec,
    runs: usize,
) -> anyhow::Result<Vec<f64>> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                if let Some(cpu) = cpu {
                    let _ = setup::pin_current_thread(cpu);
                }
                server_cpu_samples_us(store, spec.case, spec.auth, spec.client_auth, runs)
            })
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("in-memory measurement panicked")))
    })
}

/// Server CPU time (us) of each of `runs` handshakes of the case in memory, connection
/// construction included: what one gateway worker spends per handshake when nothing else
/// competes. 1e6 / their median is the worker's capacity.
fn server_cpu_samples_us(
    store: &PkiStore,
    case: Case,
    auth: AuthMode,
    client_auth: ClientAuth,
    runs: usize,
) -> anyhow::Result<Vec<f64>> {
    let creds = store.case(&case)?;
    let server = Arc::new(setup::gateway_server_config(
        store,
        client_auth,
        &Options::default(),
    )?);
    let cfg = Arc::new(setup::client_config(&creds, &Options::default(), false));
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let mut client = Client::new(cfg.clone(), auth, None, Probe::off(), setup::now());
        // The connection's construction is part of the server's work for a handshake.
        let c0 = setup::thread_cpu_ns();
        let mut conn = ServerConnection::new(server.clone(), Probe::off(), setup::now());
        let mut server_cpu = setup::thread_cpu_ns() - c0;
        let mut to_server = client.start(setup::now())?.datagrams;
        for _ in 0..8 {
            let mut to_client = Vec::new();
            for d in to_server.drain(..) {
                let c0 = setup::thread_cpu_ns();
                let out = conn.handle_datagram(&d, setup::now());
                server_cpu += setup::thread_cpu_ns() - c0;
                to_client.extend(out.datagrams);
            }
            for d in to_client {
                to_server.extend(client.handle_datagram(&d, setup::now()).datagrams);
            }
            if to_server.is_empty() {
                break;
            }
        }
        anyhow::ensure!(
            client.is_established() && conn.is_established(),
            "in-memory {case} {} handshake did not complete",
            auth.name()
        );
        samples.push(server_cpu as f64 / 1e3);
    }
    Ok(samples)
}

/// Summed length (ms) of (start, end) intervals in ns.
fn summed_ms(intervals: impl Iterator<Item = (u64, u64)>) -> f64 {
    // Folded from +0: `sum` starts from -0, which an empty log would print as "-0".
    intervals
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e6)
        .fold(0.0, |total, ms| total + ms)
}

/// Runs the load and reports it.
pub fn run_load(spec: &LoadSpec, store: &PkiStore) -> anyhow::Result<LoadReport> {
    if let Some(rate) = spec.arrivals.offered_rate() {
        anyhow::ensure!(rate > 0.0 && rate.is_finite(), "rate must be > 0");
    }
    anyhow::ensure!(
        (0.0..=1.0).contains(&spec.resume_ratio),
        "resume ratio in [0, 1]"
    );
    let clock = ProcessClock::shared();
    // The arrival schedule, drawn up front: the open loop is open by construction.
    let window_ns = spec.duration.as_nanos() as u64;
    let mut offsets = spec
        .arrivals
        .schedule(window_ns, spec.max_handshakes, spec.seed)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(spec.seed ^ 0x5245_5355);
    let round_trip = match spec.round_trip {
        Some(mean) if !mean.is_zero() => Some(Exp::new(1.0 / mean.as_secs_f64())?),
        _ => None,
    };
    let mut delay_rng = rand::rngs::StdRng::seed_from_u64(spec.seed ^ 0x5254_5454);
    let (closed, fresh_addresses) = match spec.arrivals {
        Arrivals::Closed {
            clients,
            fresh_addresses,
            ..
        } => (Some(clients.clamp(1, spec.max_in_flight)), fresh_addresses),
        _ => (None, false),
    };
    if let Some(n) = closed {
        offsets = vec![0; n.min(spec.max_handshakes)];
    }
    let expected = match spec.arrivals {
        Arrivals::Closed { key_pool, .. } => key_pool.min(spec.max_handshakes),
        _ => offsets.len(),
    };
    let expected_full = ((expected as f64) * (1.0 - spec.resume_ratio)).ceil() as usize;
    let (cfg, pool) = cheap_client_config(store, spec, (expected_full + 64).min(MAX_POOL))?;

    // The capacity bound's first half, measured on the worker's core before the gateway
    // starts (the second half follows its shutdown): the machine's speed drifts, and the
    // bound should see the same machine as the run between them.
    let worker_core =
        (spec.pin_cores && spec.target.is_none() && setup::available_cpus() >= 2).then_some(1);
    let bound_before = if spec.measure_capacity {
        server_cpu_samples_on(worker_core, store, spec, CAPACITY_BOUND_RUNS / 2)?
    } else {
        Vec::new()
    };

    // The gateway, in process or remote.
    let mut gateway = None;
    let target = match spec.target {
        Some(t) => t,
        None => {
            let server =
                setup::gateway_server_config(store, spec.client_auth, &Options::default())?;
            // The generator's clients share a few /24 prefixes at rates far above any
            // per-prefix budget: the run measures capacity, not the limiter.
            let mut g = GatewayConfig::lab("127.0.0.1:0".parse()?, Arc::new(server));
            g.workers = spec.workers.max(1);
            g.record_jobs = true;
            g.handshake_timeout = spec.handshake_timeout * 2;
            let cpus = setup::available_cpus();
            if spec.pin_cores && cpus >= 2 {
                g.cpu_affinity = (0..g.workers).map(|i| 1 + i % (cpus - 1)).collect();
                g.busy_poll = g.workers < cpus;
            }
            let h = spawn_gateway(g)?;
            let addr = h.local_addr();
            gateway = Some(h);
            addr
        }
    };

    // The generator's own core (the gateway's workers have the others).
    let pinned = (spec.pin_cores && spec.target.is_none() && setup::available_cpus() >= 2)
        .then(|| setup::pin_current_thread(0).ok())
        .flatten();
    let _restore = RestoreAffinity(pinned);

    // Background top-up of the key pool, so a long run never generates keys inline.
    let stop = Arc::new(AtomicBool::new(false));
    let refill = pool.clone().map(|p| {
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

    // Sockets are bound, connected and registered before the clock starts, as many as
    // the descriptor limit allows: per-handshake setup is not the protocol's cost.
    let mut poll = Poll::new()?;
    let mut events = Events::with_capacity(1024);
    let mut slots: Vec<Option<Box<Slot>>> = Vec::new();
    // A closed population needs one socket per client; the open loop one per handshake.
    let recycle = closed.is_some() && !fresh_addresses;
    let wanted = match closed {
        Some(n) if recycle => n,
        _ => expected,
    };
    let budget = raise_fd_limit().saturating_sub(1024).min(wanted);
    let mut spare: VecDeque<(usize, UdpSocket)> = VecDeque::with_capacity(budget);
    for k in 0..budget {
        match open_client_socket(&poll, k, target) {
            Ok(sock) => spare.push_back((k, sock)),
            Err(_) => break,
        }
        slots.push(None);
    }
    let gateway_cpu0 = gateway.as_ref().map_or(0, |g| g.stats().worker_cpu_ns);
    let loop_cpu0 = setup::thread_cpu_ns();
    let mut timers: BinaryHeap<Reverse<(u64, usize, u64)>> = BinaryHeap::new();
    let mut sessions: Vec<StoredSession> = Vec::new();
    let mut latencies_ms: Vec<f64> = Vec::new();
    let (mut started, mut completed, mut failed, mut resumed, mut in_window) = (0u64, 0, 0, 0, 0);
    let mut retransmissions = 0u64;
    let mut lags_ns: Vec<u64> = Vec::new();
    let mut late_sends: Vec<(u64, u64)> = Vec::new();
    let mut generator_stalls: Vec<(u64, u64)> = Vec::new();
    // (wall, thread CPU) at the top of the previous loop turn, for the stall log of a
    // pinned generator (it polls without sleeping, so wall beyond CPU is time off-core).
    let mut last_turn: Option<(u64, u64)> = None;
    let mut generation = 0u64;
    let mut active = 0usize;
    let mut buf = vec![0u8; 65_535];
    let timeout_ns = spec.handshake_timeout.as_nanos() as u64;
    let origin = clock.wall_ns();
    let hard_stop = origin + window_ns + timeout_ns + 1_000_000_000;
    let mut next = 0usize;

    // A finished handshake's socket stays open until the run ends (closing it is a
    // system call the measured loop need not make), unless descriptors ran short.
    let mut retired: Vec<UdpSocket> = Vec::new();
    // A client of a closed population that completed its handshake puts its socket back
    // for its next one (a failed one does not: a late answer could reach the next).
    let mut finish = |slots: &mut Vec<Option<Box<Slot>>>,
                      spare: &mut VecDeque<(usize, UdpSocket)>,
                      i: usize,
                      completed: bool| {
        if let Some(s) = slots[i].take() {
            if completed && recycle {
                spare.push_front((i, s.sock));
            } else if !spare.is_empty() {
                retired.push(s.sock);
            }
        }
    };

    loop {
        let now = clock.wall_ns();
        if pinned.is_some() {
            let cpu = setup::thread_cpu_ns();
            if let Some((wall0, cpu0)) = last_turn {
                if now.saturating_sub(wall0) > cpu.saturating_sub(cpu0) + STALL_NS
                    && generator_stalls.len() < MAX_STALL_LOG
                {
                    generator_stalls.push((wall0, now));
                }
            }
            last_turn = Some((now, cpu));
        }
        if let Some(n) = closed {
            // A new handshake for each one that ended, while the window is open.
            while active + (offsets.len() - next) < n
                && now < origin + window_ns
                && offsets.len() < spec.max_handshakes
            {
                offsets.push(now - origin);
            }
        }
        if now >= hard_stop || (next >= offsets.len() && active == 0) {
            break;
        }
        // Start the arrivals that are due, at most ARRIVAL_BATCH before the answers of
        // earlier ones are handled, so a generator that fell behind keeps completing
        // handshakes instead of only starting them (their latency still counts the lag).
        let mut batch = 0;
        while next < offsets.len() && origin + offsets[next] <= now && batch < ARRIVAL_BATCH {
            batch += 1;
            let intended = origin + offsets[next];
            next += 1;
            started += 1;
            if closed.is_none() {
                lags_ns.push(now.saturating_sub(intended));
                if now > intended + STALL_NS && late_sends.len() < MAX_STALL_LOG {
                    late_sends.push((intended, now));
                }
            }
            if active >= spec.max_in_flight {
                failed += 1;
                continue;
            }
            let resume = if !sessions.is_empty() && rng.random::<f64>() < spec.resume_ratio {
                Some(sessions[rng.random_range(0..sessions.len())].clone())
            } else {
                None
            };
            let is_resume = resume.is_some();
            let (i, sock) = match spare.pop_front() {
                Some(s) => s,
                None => match open_client_socket(&poll, slots.len(), target) {
                    Ok(sock) => {
                        slots.push(None);
                        (slots.len() - 1, sock)
                    }
                    Err(_) => {
                        failed += 1;
                        continue;
                    }
                },
            };
            let mut client =
                Client::new(cfg.clone(), spec.auth, resume, Probe::off(), setup::now());
            let first = match client.start(setup::now()) {
                Ok(o) => o,
                Err(_) => {
                    failed += 1;
                    continue;
                }
            };
            for d in &first.datagrams {
                let _ = sock.send(d);
            }
            generation += 1;
            timers.push(Reverse((intended + timeout_ns, i, generation)));
            if let Some(d) = client.deadline_ns() {
                timers.push(Reverse((d, i, generation)));
            }
            slots[i] = Some(Box::new(Slot {
                sock,
                client,
                intended_ns: intended,
                generation,
                resumed: is_resume,
                held: Vec::new(),
                send_at_ns: 0,
            }));
            active += 1;
        }
        // Timers: retransmissions and handshake timeouts.
        let now = clock.wall_ns();
        while let Some(&Reverse((due, i, g))) = timers.peek() {
            if due > now {
                break;
            }
            timers.pop();
            let Some(slot) = slots.get_mut(i).and_then(|s| s.as_mut()) else {
                continue;
            };
            if slot.generation != g {
                continue;
            }
            if now >= slot.intended_ns + timeout_ns {
                finish(&mut slots, &mut spare, i, false);
                active -= 1;
                failed += 1;
                continue;
            }
            if !slot.held.is_empty() && slot.send_at_ns <= now {
                lags_ns.push(now - slot.send_at_ns);
                if now > slot.send_at_ns + STALL_NS && late_sends.len() < MAX_STALL_LOG {
                    late_sends.push((slot.send_at_ns, now));
                }
                for d in slot.held.drain(..) {
                    let _ = slot.sock.send(&d);
                }
            }
            if slot.client.deadline_ns().is_some_and(|d| d <= now) {
                match slot.client.on_timeout(setup::now()) {
                    Ok(out) => {
                        retransmissions += 1;
                        for d in &out.datagrams {
                            let _ = slot.sock.send(d);
                        }
                        if let Some(d) = slot.client.deadline_ns() {
                            timers.push(Reverse((d, i, g)));
                        }
                    }
                    Err(_) => {
                        finish(&mut slots, &mut spare, i, false);
                        active -= 1;
                        failed += 1;
                    }
                }
            }
        }
        // Wait for datagrams until the next arrival or timer.
        let now = clock.wall_ns();
        let mut wake = hard_stop;
        if next < offsets.len() {
            wake = wake.min(origin + offsets[next]);
        }
        if let Some(Reverse((due, _, _))) = timers.peek() {
            wake = wake.min(*due);
        }
        let wait = Duration::from_nanos(wake.saturating_sub(now)).min(Duration::from_millis(50));
        // Overdue arrivals left: just collect what is ready.
        // A pinned generator has its core to itself: it polls without sleeping, so the
        // gateway's replies never pay for waking it (an inter-processor interrupt, which
        // costs a virtual machine an exit per datagram).
        let wait = if batch == ARRIVAL_BATCH || pinned.is_some() {
            Duration::ZERO
        } else {
            wait
        };
        poll.poll(&mut events, Some(wait))?;
        for ev in events.iter() {
            let i = ev.token().0;
            while let Some(slot) = slots.get_mut(i).and_then(|s| s.as_mut()) {
                let n = match slot.sock.recv(&mut buf) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => break, // e.g. ECONNREFUSED: retransmission decides
                };
                let out = slot.client.handle_datagram(&buf[..n], setup::now());
                match &round_trip {
                    Some(law) if !out.datagrams.is_empty() => {
                        let delay_ns = (law.sample(&mut delay_rng) * 1e9) as u64;
                        slot.send_at_ns = clock.wall_ns() + delay_ns;
                        slot.held.extend(out.datagrams.iter().cloned());
                        timers.push(Reverse((slot.send_at_ns, i, slot.generation)));
                    }
                    _ => {
                        for d in &out.datagrams {
                            let _ = slot.sock.send(d);
                        }
                    }
                }
                if out.completed().is_some() {
                    let done = clock.wall_ns();
                    let latency = done.saturating_sub(slot.intended_ns);
                    latencies_ms.push(latency as f64 / 1e6);
                    if done <= origin + window_ns {
                        in_window += 1;
                    }
                    if slot.resumed {
                        resumed += 1;
                    }
                    if spec.resume_ratio > 0.0 {
                        if let Some(s) = slot.client.session() {
                            if sessions.len() < SESSION_POOL {
                                sessions.push(s);
                            } else {
                                let j = rng.random_range(0..SESSION_POOL);
                                sessions[j] = s;
                            }
                        }
                    }
                    completed += 1;
                    finish(&mut slots, &mut spare, i, true);
                    active -= 1;
                    break;
                }
                if fatal(&out) || slot.client.is_closed() {
                    failed += 1;
                    finish(&mut slots, &mut spare, i, false);
                    active -= 1;
                    break;
                }
                if let Some(d) = slot.client.deadline_ns() {
                    timers.push(Reverse((d, i, slot.generation)));
                }
            }
        }
    }
    // Whatever is still open when the hard stop came failed.
    failed += active as u64;
    // Close the finished handshakes' sockets now, outside the measured loop.
    drop(retired);
    let wall_ns = clock.wall_ns() - origin;
    let loop_cpu = setup::thread_cpu_ns() - loop_cpu0;
    stop.store(true, Ordering::Relaxed);
    let refill_cpu = refill.map_or(0, |t| t.join().unwrap_or(0));

    let mut report = LoadReport {
        case: spec.case.to_string(),
        auth: spec.auth.name().into(),
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
        loadgen_cpu_s: (loop_cpu + refill_cpu) as f64 / 1e9,
        wall_s: wall_ns as f64 / 1e9,
        ..Default::default()
    };
    if !lags_ns.is_empty() {
        let late = lags_ns.iter().filter(|&&l| l > 1_000_000).count();
        report.late_share = late as f64 / lags_ns.len() as f64;
        lags_ns.sort_unstable();
        let lags_ms: Vec<f64> = lags_ns.iter().map(|&l| l as f64 / 1e6).collect();
        report.lag_p99_ms = percentile(&lags_ms, 0.99);
    }
    latencies_ms.sort_by(f64::total_cmp);
    if !latencies_ms.is_empty() {
        report.latency_ms = Latency {
            p50: percentile(&latencies_ms, 0.50),
            p95: percentile(&latencies_ms, 0.95),
            p99: percentile(&latencies_ms, 0.99),
            mean: latencies_ms.iter().sum::<f64>() / latencies_ms.len() as f64,
        };
    }
    if let Some(mut g) = gateway {
        // Stop the workers first: a client can see its handshake complete before the
        // worker has logged the job that completed it (the log is written after the
        // batch), so a log taken from a running gateway can miss the last jobs.
        let stats = g.stop();
        let jobs = g.take_jobs();
        let g_stalls = g.take_stalls();
        report.gateway_cpu_s = stats.worker_cpu_ns.saturating_sub(gateway_cpu0) as f64 / 1e9;
        report.gateway = Some(queue_stats(&jobs, stats.handshakes(), spec.workers.max(1)));
        report.delivery_stall_log = delivery_stalls(&jobs);
        report.jobs = jobs;
        report.stalls = g_stalls;
    }
    report.delivery_stalls = report.delivery_stall_log.len();
    report.delivery_stall_ms = summed_ms(report.delivery_stall_log.iter().copied());
    report.worker_stalls = report.stalls.len();
    report.worker_stall_ms = summed_ms(report.stalls.iter().map(|s| (s.start_ns, s.end_ns)));
    report.generator_stalls = generator_stalls.len();
    report.generator_stall_ms = summed_ms(generator_stalls.iter().copied());
    report.generator_stall_log = generator_stalls;
    report.late_sends_over_stall = late_sends.len();
    report.late_sends = late_sends;
    if spec.measure_capacity {
        let after = server_cpu_samples_on(worker_core, store, spec, CAPACITY_BOUND_RUNS / 2)?;
        report.server_cpu_before_us = median(&bound_before);
        report.server_cpu_after_us = median(&after);
        let all: Vec<f64> = bound_before.iter().chain(&after).copied().collect();
        let us = median(&all).context("no in-memory handshake for the capacity bound")?;
        let capacity = spec.workers.max(1) as f64 * 1e6 / us;
        report.server_cpu_per_handshake_us = Some(us);
        report.capacity_rate = Some(capacity);
        report.capacity_ratio = Some(report.achieved_rate / capacity);
    }
    Ok(report)
}

/// `wtlsperf load` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A running gateway; without it (or with --in-process) one is started in process.
    #[arg(long)]
    pub connect: Option<SocketAddr>,
    /// Offered handshakes per second.
    #[arg(long, default_value = "100", value_parser = positive_number, allow_negative_numbers = true)]
    pub rate: f64,
    /// Arrival window, seconds.
    #[arg(long, default_value = "10", value_parser = positive_seconds, allow_negative_numbers = true)]
    pub duration: f64,
    #[arg(long, default_value = "256p/256p")]
    pub case: String,
    #[arg(long, value_enum, default_value = "server")]
    pub auth: AuthArg,
    #[arg(long, default_value_t = 0.0)]
    pub resume_ratio: f64,
    /// Start a gateway in this process and read its job records.
    #[arg(long)]
    pub in_process: bool,
    #[arg(long, default_value = "1", value_parser = at_least_one, allow_negative_numbers = true)]
    pub workers: usize,
    #[arg(long, default_value_t = 1_000_000)]
    pub max_handshakes: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 5_000)]
    pub timeout_ms: u64,
    #[arg(long, default_value_t = 1_000)]
    pub rto_ms: u64,
    /// Emulated bearer round trip (mean, ms, exponential): each answer of the client is
    /// held this long on average. 0 answers at once.
    #[arg(long, default_value_t = 0.0)]
    pub round_trip_ms: f64,
    /// Closed loop: keep N handshakes in flight instead of Poisson arrivals (capacity at
    /// saturation; --rate then only sizes the key pool).
    #[arg(long, value_parser = at_least_one, allow_negative_numbers = true)]
    pub closed: Option<usize>,
    /// With --closed: every handshake from a new client address, instead of N clients
    /// each reconnecting from its own.
    #[arg(long)]
    pub fresh_addresses: bool,
    /// Also measure server CPU per handshake in memory and print the capacity ratio.
    #[arg(long)]
    pub capacity: bool,
    /// In-process: pin the generator and the gateway worker(s) to different CPUs.
    #[arg(long)]
    pub pin: bool,
    /// Write the report as CSV (.csv) or JSON (anything else).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// In-process: write the gateway's job log as CSV (one row per job: arrival, start,
    /// end and CPU in ns on the process clock, bytes, records, peer, worker, whether the
    /// arrival is the kernel's timestamp), and beside it FILE with the extension
    /// `disturbances.csv` (kind, start, end: the worker's, the generator's and the
    /// delivery path's stalls, and the generator's late sends).
    #[arg(long)]
    pub jobs: Option<PathBuf>,
    /// PKI directory (must exist: see `wtlsperf pki init`, or pass --create-pki).
    #[arg(long, default_value = "pki")]
    pub pki: PathBuf,
    /// Issue a new PKI into --pki if it holds none.
    #[arg(long)]
    pub create_pki: bool,
}

/// Writes a report as one CSV row (with header) or as JSON.
pub fn write_report(report: &LoadReport, path: &std::path::Path) -> anyhow::Result<()> {
    if path.extension().is_some_and(|e| e == "csv") {
        let g = report.gateway.clone().unwrap_or_default();
        let mut w = csv::Writer::from_path(path)?;
        w.write_record([
            "case",
            "auth",
            "workers",
            "offered_rate",
            "achieved_rate",
            "started",
            "completed",
            "failed",
            "success_ratio",
            "p50_ms",
            "p95_ms",
            "p99_ms",
            "mean_ms",
            "jobs",
            "mean_wait_us",
            "wait_m2_us2",
            "mean_service_us",
            "service_m2_us2",
            "mean_service_cpu_us",
            "utilisation",
            "per_handshake_service_us",
            "loadgen_cpu_s",
            "gateway_cpu_s",
            "wall_s",
        ])?;
        let f = |x: f64| format!("{x}");
        w.write_record([
            report.case.clone(),
            report.auth.clone(),
            report.workers.to_string(),
            f(report.offered_rate),
            f(report.achieved_rate),
            report.started.to_string(),
            report.completed.to_string(),
            report.failed.to_string(),
            f(report.success_ratio),
            f(report.latency_ms.p50),
            f(report.latency_ms.p95),
            f(report.latency_ms.p99),
            f(report.latency_ms.mean),
            g.jobs.to_string(),
            f(g.mean_wait_us),
            f(g.wait_m2_us2),
            f(g.mean_service_us),
            f(g.service_m2_us2),
            f(g.mean_service_cpu_us),
            f(g.utilisation),
            f(g.per_handshake_service_us),
            f(report.loadgen_cpu_s),
            f(report.gateway_cpu_s),
            f(report.wall_s),
        ])?;
        w.flush()?;
    } else {
        std::fs::write(path, serde_json::to_string_pretty(report)?)?;
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let store = PkiStore::open(&args.pki, args.create_pki)?;
    let case = Case::parse(&args.case).map_err(|e| anyhow::anyhow!("--case: {e}"))?;
    let mut spec = LoadSpec::new(
        case,
        args.auth.into(),
        args.rate,
        Duration::try_from_secs_f64(args.duration)
            .map_err(|_| anyhow::anyhow!("--duration {}: too long", args.duration))?,
    );
    spec.target = if args.in_process { None } else { args.connect };
    spec.workers = args.workers;
    spec.max_handshakes = args.max_handshakes;
    spec.resume_ratio = args.resume_ratio;
    spec.seed = args.seed;
    spec.handshake_timeout = Duration::from_millis(args.timeout_ms);
    spec.retransmit_timeout = Duration::from_millis(args.rto_ms.max(1));
    spec.measure_capacity = args.capacity;
    spec.pin_cores = args.pin;
    anyhow::ensure!(
        args.round_trip_ms.is_finite() && args.round_trip_ms >= 0.0,
        "--round-trip-ms must be a non-negative number"
    );
    if let Some(clients) = args.closed {
        spec.arrivals = Arrivals::Closed {
            clients,
            fresh_addresses: args.fresh_addresses,
            // The rate only sizes the key pool of a closed loop.
            key_pool: (args.rate * args.duration) as usize,
        };
    }
    spec.round_trip =
        (args.round_trip_ms > 0.0).then(|| Duration::from_secs_f64(args.round_trip_ms / 1e3));
    let report = run_load(&spec, &store)?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    if let Some(out) = &args.out {
        write_report(&report, out)?;
    }
    if let Some(path) = &args.jobs {
        write_job_log(&report, path)?;
    }
    Ok(())
}

/// Writes a run's job log as CSV at `path` (one row per job, [`JobRecord`]'s fields),
/// and beside it, with the extension `disturbances.csv`, what the queue study reads
/// around: the worker's, the generator's and the delivery path's stalls, and the
/// generator's late sends, one interval per row (`kind`, `start_ns`, `end_ns`, on the process clock).
pub fn write_job_log(report: &LoadReport, path: &std::path::Path) -> anyhow::Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("job log {}", path.display()))?;
    for job in &report.jobs {
        w.serialize(job)?;
    }
    w.flush()?;
    let disturbances = path.with_extension("disturbances.csv");
    let mut w = csv::Writer::from_path(&disturbances)
        .with_context(|| format!("disturbance log {}", disturbances.display()))?;
    w.write_record(["kind", "start_ns", "end_ns"])?;
    for s in &report.stalls {
        w.serialize(("worker_stall", s.start_ns, s.end_ns))?;
    }
    for (from, to) in &report.generator_stall_log {
        w.serialize(("generator_stall", from, to))?;
    }
    for (from, to) in &report.delivery_stall_log {
        w.serialize(("delivery_stall", from, to))?;
    }
    for (scheduled, sent) in &report.late_sends {
        w.serialize(("late_send", scheduled, sent))?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(arrival: u64, start: u64, end: u64) -> JobRecord {
        JobRecord {
            arrival_ns: arrival,
            start_ns: start,
            end_ns: end,
            cpu_ns: end - start,
            bytes: 100,
            messages: 1,
            peer: "127.0.0.1:1".parse().unwrap(),
            worker: 0,
            kernel_timestamp: true,
        }
    }

    #[test]
    fn a_datagram_held_on_its_way_to_a_free_worker_is_a_delivery_stall() {
        let jobs = vec![
            // Reaches the idle worker 5 us after its stamp: no stall.
            job(0, 5_000, 205_000),
            // Arrives while the worker is busy and starts 3 us after it is free: no
            // stall, however long it waited.
            job(100_000, 208_000, 408_000),
            // Stamped at 1 ms, reaches the idle worker at 15 ms: held on the way.
            job(1_000_000, 15_000_000, 15_200_000),
            // Stamped while the worker was busy, reaches it 1 ms after it is free
            // again: held on the way too.
            job(15_100_000, 16_200_000, 16_400_000),
        ];
        assert_eq!(
            delivery_stalls(&jobs),
            vec![(1_000_000, 15_000_000), (15_200_000, 16_200_000)]
        );
        // Each worker is free on its own: an idle second worker that takes a datagram
        // 250 us after its stamp had it held on the way, although the first worker was
        // busy until 50 us before it started.
        let mut other = job(15_050_000, 15_300_000, 15_500_000);
        other.worker = 1;
        let mut two = jobs.clone();
        two.push(other);
        assert_eq!(
            delivery_stalls(&two),
            vec![
                (1_000_000, 15_000_000),
                (15_050_000, 15_300_000),
                (15_200_000, 16_200_000)
            ]
        );
    }

    #[test]
    fn queue_moments_from_jobs() {
        // Waits 0 and 2000 ns, services 1000 and 3000 ns.
        let jobs = [job(0, 0, 1_000), job(1_000, 3_000, 6_000)];
        let q = queue_stats(&jobs, 1, 1);
        assert_eq!(q.jobs, 2);
        assert!((q.mean_wait_us - 1.0).abs() < 1e-12);
        assert!((q.wait_m2_us2 - 2.0).abs() < 1e-12);
        assert!((q.mean_service_us - 2.0).abs() < 1e-12);
        assert!((q.service_m2_us2 - 5.0).abs() < 1e-12);
        // Busy 4 us over a 6 us span.
        assert!((q.utilisation - 4.0 / 6.0).abs() < 1e-12);
        assert!((q.per_handshake_service_us - 4.0).abs() < 1e-12);
        assert_eq!(queue_stats(&[], 0, 1).jobs, 0);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert!(percentile(&[], 0.5).is_nan());
    }

    #[test]
    fn client_addresses_stay_in_loopback() {
        for k in [0u64, 1, 252, 253, 10_000] {
            match client_ip(k) {
                IpAddr::V4(a) => assert!(a.is_loopback() && a.octets()[3] >= 2),
                IpAddr::V6(_) => panic!("v6"),
            }
        }
    }
}
