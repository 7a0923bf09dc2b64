//! `wtlsperf flood`: a bounded ClientHello flood against a gateway while legitimate
//! clients keep handshaking, to measure what half-open state costs and whether the
//! gateway's peer bound protects the clients that finish their handshakes.
//!
//! The flood and its legitimate clients are any protocol on the spine: WTLS's `--case`,
//! or a DTLS 1.2 or EDHOC `--suite` against that protocol's own server behind the same
//! gateway worker. Every flood datagram is a real first flight (a ClientHello, or EDHOC's
//! message_1) from a fresh client of the protocol, and comes from a fresh source: `--sources` loopback addresses across 127.0.0.0/8,
//! and a new ephemeral port for every datagram, so each one makes the gateway create
//! state for a new peer, exactly what a spoofed-source flood does. The flood never
//! completes a handshake and never answers the server, so every entry stays half-open
//! until the gateway's handshake timeout or its peer bound removes it.
//!
//! With `--in-process` the gateway runs inside this process with the given `max_peers`
//! bound; its statistics give the peak state bytes, the bytes per half-open handshake
//! (`state_bytes / half_open`, target at most 2 KiB), and the peers refused or evicted.
//! The process's resident set (from /proc/self/statm) is a cross-check of the state
//! estimate. Everything stops by itself: the flood after `--duration` seconds (at most
//! 300; a longer one is refused) and `rate x duration` datagrams, the legitimate clients
//! with it.
//!
//! With `--fill-established N`, N clients first complete handshakes from addresses of
//! their own and stay idle: the table-filling attack of completed handshakes. The
//! legitimate clients that follow show whether newcomers still get in.
//!
//! `--reflection` measures the other abuse of a forged source instead: see
//! [`reflection`].

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rand::rngs::StdRng;
use rand::SeedableRng;
use wtls::endpoint::ResponseLimit;
use wtls::handshake::{AuthMode, Client, ClientConfig};
use wtls::probe::Probe;
use wtls::suite::Case;
use wtlsperf_spine::Handshake;

use crate::gateway::operator::check_max_peers;
use crate::gateway::{spawn_gateway, GatewayConfig, GatewayHandle, GatewayStats, ServeProtocol};
use crate::load::protocols::{SpineClients, WtlsClients};
use crate::load::LoadClients;
use crate::pki_store::{PkiSource, PkiStore};
use crate::registry::{Bench, Contender};
use crate::setup::{self, ClientAuth, Options};

pub mod reflection;

/// Longest flood the command runs; a longer `--duration` is refused.
pub const MAX_DURATION_S: f64 = 300.0;
/// Most flood datagrams per second the command sends.
pub const MAX_RATE: f64 = 1e6;
/// Most idle established peers `--fill-established` makes.
const MAX_FILL: usize = 100_000;
/// Distinct first flights made before a flood at most; a longer flood sends them again,
/// each from a fresh source, where it opens fresh state just the same (every server
/// behind the worker keys its state by address). Making them up front keeps the flood's
/// pace free of the client's work (an EDHOC message_1 costs a key generation).
const FLIGHT_POOL: u64 = 16_384;
/// Seed of the flood's own clients (EDHOC connection identifiers, resumption draws).
const FLOOD_SEED: u64 = 0xF100D;
/// Offset of the 12 random bytes after gmt_unix_time in a ClientHello datagram whose
/// record carries L and S: record header (5), handshake header (3), version (1), time (4).
const RANDOM_BYTES_AT: usize = 5 + 3 + 1 + 4;

/// What `wtlsperf flood` runs: the command line's options, parsed and typed (the
/// `wtlsperf` crate's `flood_cmd` checks each value alone; [`run`] checks the rest).
#[derive(Debug, Clone)]
pub struct FloodConfig {
    /// A gateway already running at this address, or `None` with `in_process`.
    pub connect: Option<SocketAddr>,
    /// Start a gateway inside this process (and report its state statistics).
    pub in_process: bool,
    /// Worker threads of the in-process gateway.
    pub workers: usize,
    /// Peer bound of the in-process gateway.
    pub max_peers: usize,
    /// Handshake timeout of the in-process gateway, in milliseconds.
    pub handshake_timeout_ms: u64,
    /// Flood ClientHellos per second (at most [`MAX_RATE`]).
    pub rate: f64,
    /// Flood duration in seconds (at most [`MAX_DURATION_S`]).
    pub duration: f64,
    /// Distinct loopback source addresses (each datagram also gets a fresh port).
    pub sources: usize,
    /// Clients that complete handshakes before the flood and stay idle.
    pub fill_established: usize,
    /// Measure reflection instead (see [`reflection`]).
    pub reflection: bool,
    /// With `reflection`: source ports the victim's ClientHellos come from, in turn.
    pub source_ports: usize,
    /// In-process gateway: response budget per unverified address, bytes/s (0: none).
    pub rrl_address_bytes: u64,
    /// In-process gateway: response budget per unverified /24 prefix, bytes/s (0: none).
    pub rrl_prefix_bytes: u64,
    /// Legitimate handshakes started per second during the flood.
    pub legit_rate: f64,
    /// A configuration of another protocol on the spine flooded instead of the WTLS
    /// case (`dtls1.2:psk-ccm8`).
    pub contender: Option<Contender>,
    /// The case of every client (flood and legitimate).
    pub case: Case,
    /// The authentication of the legitimate clients.
    pub auth: AuthMode,
    pub pki: PkiSource,
}

/// Most source ports `--source-ports` opens.
pub const MAX_SOURCE_PORTS: usize = 1024;

impl FloodConfig {
    fn response_limit(&self) -> ResponseLimit {
        ResponseLimit {
            address_bytes_per_s: self.rrl_address_bytes,
            prefix_bytes_per_s: self.rrl_prefix_bytes,
            ..ResponseLimit::default()
        }
    }
}

/// What one flood run measured.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FloodReport {
    pub flood_sent: u64,
    pub flood_send_errors: u64,
    pub duration_s: f64,
    pub legit_attempted: u64,
    pub legit_completed: u64,
    pub legit_p50_ms: f64,
    pub legit_p95_ms: f64,
    /// In-process only: the largest state estimate and the half-open count at that time.
    pub peak_state_bytes: u64,
    pub peak_half_open: u64,
    pub bytes_per_half_open: f64,
    pub refused: u64,
    pub evicted: u64,
    /// In-process only: datagrams the gateway's workers took (flood and legitimate).
    pub gateway_datagrams_received: u64,
    /// Idle established peers made before the flood, and how many of them were
    /// evicted for newcomers (in process).
    pub filled: u64,
    pub evicted_idle: u64,
    pub rss_start_bytes: u64,
    pub rss_peak_bytes: u64,
    /// RSS growth divided by the peak half-open count.
    pub rss_bytes_per_half_open: f64,
}

pub fn run(args: FloodConfig) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.fill_established <= MAX_FILL,
        "--fill-established {}: at most {MAX_FILL}",
        args.fill_established
    );
    anyhow::ensure!(
        args.legit_rate.is_finite() && args.legit_rate >= 0.0,
        "--legit-rate must be a rate of 0 or more per second, got {}",
        args.legit_rate
    );
    if args.in_process {
        check_max_peers(args.max_peers)?;
    }
    if args.reflection {
        let runs = reflection::run(&args)?;
        reflection::print(&runs);
        return Ok(());
    }
    let report = flood(&args)?;
    print_report(&args, &report);
    Ok(())
}

/// The PKI, the client configuration of `--case` and the first ClientHello datagram.
fn prepare(args: &FloodConfig) -> anyhow::Result<(PkiStore, Arc<ClientConfig>, Vec<u8>)> {
    let store = args.pki.open()?;
    let creds = store.case(&args.case)?;
    let client_cfg = Arc::new(setup::client_config(&creds, &Options::default(), false));
    let auth = args.auth;
    let mut template = Client::new(client_cfg.clone(), auth, None, Probe::off(), setup::now());
    let hello = template
        .start(setup::now())?
        .datagrams
        .into_iter()
        .next()
        .context("the client sent no ClientHello")?;
    anyhow::ensure!(
        hello.len() > RANDOM_BYTES_AT + 12,
        "unexpected ClientHello layout"
    );
    Ok((store, client_cfg, hello))
}

/// An in-process WTLS gateway for the flood, with `limit` toward unverified addresses.
fn in_process_gateway(
    args: &FloodConfig,
    store: &PkiStore,
    limit: ResponseLimit,
) -> anyhow::Result<GatewayHandle> {
    let server = setup::gateway_server_config(store, ClientAuth::Optional, &Options::default())?;
    spawn_in_process(args, Arc::new(server), limit)
}

/// An in-process gateway of any protocol's `server`, with the flood's bounds and `limit`
/// toward unverified addresses (where the protocol's endpoint has a limiter).
fn spawn_in_process<P: ServeProtocol>(
    args: &FloodConfig,
    server: P,
    limit: ResponseLimit,
) -> anyhow::Result<GatewayHandle> {
    let mut cfg = GatewayConfig::new("127.0.0.1:0".parse()?, server);
    cfg.workers = args.workers;
    cfg.max_peers = args.max_peers;
    cfg.handshake_timeout = Duration::from_millis(args.handshake_timeout_ms);
    cfg.idle_timeout = Duration::from_secs(MAX_DURATION_S as u64);
    cfg.response_limit = limit;
    spawn_gateway(cfg)
}

/// The address of legitimate client `k`: 127.0.x.y, apart from the flood's sources and
/// the fillers', one each so that no budget toward an address is shared.
fn legit_ip(k: u64) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, ((k / 250) % 250) as u8, (2 + k % 250) as u8)
}

/// Completes `n` handshakes of `clients` from addresses of their own (127.255.x.y) that
/// then stay idle; returns how many completed.
fn fill_established<L: LoadClients>(target: SocketAddr, clients: &mut L, n: usize) -> u64 {
    let mut rng = StdRng::seed_from_u64(FLOOD_SEED ^ 1);
    let mut done = 0;
    for k in 0..n {
        let ip = Ipv4Addr::new(127, 255, (k / 250) as u8, (2 + k % 250) as u8);
        let Some((mut client, _)) = clients.client(setup::now(), &mut rng) else {
            continue;
        };
        let ok = UdpSocket::bind((ip, 0))
            .is_ok_and(|sock| legitimate_handshake(&sock, target, &mut client).is_ok());
        done += u64::from(ok);
    }
    done
}

/// One handshake of `client` with the gateway at `target`, through the one UDP driver.
fn legitimate_handshake<H: Handshake>(
    sock: &UdpSocket,
    target: SocketAddr,
    client: &mut H,
) -> anyhow::Result<Duration> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let run = crate::udp_client::drive::run_handshake(
        sock,
        target,
        client,
        None,
        None,
        deadline,
        &|_| None,
    )?;
    Ok(run.duration)
}

/// Resident set size of this process, from /proc/self/statm (pages x page size).
pub fn rss_bytes() -> u64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * u64::try_from(page).unwrap_or(4096)
}

/// The flood source for datagram `n`: one of `sources` loopback addresses spread over
/// 127.1.0.0-127.254.255.255 (never 127.0.x.y, which the legitimate clients use).
fn source_ip(n: u64, sources: usize) -> Ipv4Addr {
    let i = (n % sources.max(1) as u64) as u32;
    Ipv4Addr::new(
        127,
        (1 + (i / 62_500) % 254) as u8,
        ((i / 250) % 250) as u8,
        (2 + i % 250) as u8,
    )
}

/// Handshake durations of the legitimate clients (`None`: failed).
type LegitTimes = Arc<Mutex<Vec<Option<Duration>>>>;

/// Legitimate clients: one new handshake of `clients` every 1/`rate` s until `end`, each
/// on its own thread (so a slow one does not delay the next start) and from its own
/// address.
fn spawn_legitimate<L>(
    target: SocketAddr,
    mut clients: L,
    rate: f64,
    stop: Arc<AtomicBool>,
    end: Instant,
) -> (std::thread::JoinHandle<()>, LegitTimes)
where
    L: LoadClients + Send + 'static,
    L::Client: Send + 'static,
{
    let legit_times: LegitTimes = Arc::default();
    let times = legit_times.clone();
    let period = Duration::from_secs_f64(1.0 / rate.max(0.01));
    let enabled = rate > 0.0;
    let thread = std::thread::spawn(move || {
        let mut rng = StdRng::seed_from_u64(FLOOD_SEED ^ 2);
        let mut handles = Vec::new();
        let mut next = Instant::now();
        let mut k = 0;
        while enabled && !stop.load(Ordering::SeqCst) && Instant::now() < end {
            let times = times.clone();
            let ip = legit_ip(k);
            k += 1;
            let client = clients.client(setup::now(), &mut rng);
            handles.push(std::thread::spawn(move || {
                let outcome = client
                    .context("the protocol made no client")
                    .and_then(|(mut client, _)| {
                        let sock = UdpSocket::bind((ip, 0))?;
                        legitimate_handshake(&sock, target, &mut client)
                    });
                if let Err(e) = &outcome {
                    tracing::warn!(client = %ip, error = %format!("{e:#}"), "legitimate handshake failed");
                }
                let mut t = times.lock().unwrap_or_else(|p| p.into_inner());
                t.push(outcome.ok());
            }));
            next += period;
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        for h in handles {
            let _ = h.join();
        }
    });
    (thread, legit_times)
}

/// `n` distinct first flights of `clients` (each client's first datagram), made before
/// the flood.
fn first_flights<L: LoadClients>(clients: &mut L, n: u64) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut rng = StdRng::seed_from_u64(FLOOD_SEED);
    (0..n.max(1))
        .map(|_| {
            let now = setup::now();
            let (mut client, _) = clients
                .client(now, &mut rng)
                .context("the protocol made no client")?;
            client
                .start(now)
                .datagrams
                .into_iter()
                .next()
                .context("the client's first flight is empty")
        })
        .collect()
}

/// What the paced flood sent and the peaks sampled meanwhile.
struct Paced {
    sent: u64,
    errors: u64,
    /// Peak table state (bytes) and the half-open count at that peak.
    peak: (u64, u64),
    rss_peak: u64,
}

/// The flood itself, paced in 1 ms steps: the first `flights` in turn, from ever new
/// source ports, until `total` are sent or `end`; samples the in-process gateway's state
/// and the process's RSS every 100 ms.
#[allow(clippy::too_many_arguments)]
fn send_flood(
    args: &FloodConfig,
    flights: &[Vec<u8>],
    target: SocketAddr,
    gateway: Option<&GatewayHandle>,
    total: u64,
    started: Instant,
    end: Instant,
    rss_start: u64,
) -> Paced {
    let mut sent = 0u64;
    let mut errors = 0u64;
    let mut peak = (0u64, 0u64);
    let mut rss_peak = rss_start;
    let mut last_sample = Instant::now();
    while sent < total && Instant::now() < end {
        let due = ((started.elapsed().as_secs_f64() * args.rate) as u64).min(total);
        while sent < due {
            let datagram = &flights[(sent % flights.len() as u64) as usize];
            let ok = UdpSocket::bind((source_ip(sent, args.sources), 0))
                .and_then(|s| s.send_to(datagram, target));
            if ok.is_err() {
                errors += 1;
            }
            sent += 1;
        }
        if last_sample.elapsed() >= Duration::from_millis(100) {
            last_sample = Instant::now();
            if let Some(g) = gateway {
                let s = g.stats();
                // Where the protocol's endpoint estimates no state (DTLS 1.2, EDHOC), the
                // half-open count alone marks the peak; RSS then prices it.
                let higher = s.state_bytes > peak.0 || (s.state_bytes == 0 && s.half_open > peak.1);
                if higher {
                    peak = (s.state_bytes, s.half_open);
                }
            }
            rss_peak = rss_peak.max(rss_bytes());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Paced {
        sent,
        errors,
        peak,
        rss_peak,
    }
}

/// The flood's report from what was sent, the legitimate handshakes' times and the
/// gateway's final counters.
fn report_of(
    times: &[Option<Duration>],
    paced: Paced,
    flood_time: Duration,
    rss_start: u64,
    filled: u64,
    final_stats: Option<GatewayStats>,
) -> FloodReport {
    let Paced {
        sent,
        errors,
        peak,
        rss_peak,
    } = paced;
    let ok: Vec<Duration> = times.iter().flatten().copied().collect();
    let (p50, p95) = wtlsperf_models::stats::median_p95_ms(&ok);
    let mut report = FloodReport {
        flood_sent: sent,
        flood_send_errors: errors,
        duration_s: flood_time.as_secs_f64(),
        legit_attempted: times.len() as u64,
        legit_completed: ok.len() as u64,
        legit_p50_ms: p50,
        legit_p95_ms: p95,
        peak_state_bytes: peak.0,
        peak_half_open: peak.1,
        bytes_per_half_open: if peak.1 > 0 {
            peak.0 as f64 / peak.1 as f64
        } else {
            0.0
        },
        rss_start_bytes: rss_start,
        rss_peak_bytes: rss_peak,
        filled,
        ..FloodReport::default()
    };
    if peak.1 > 0 {
        report.rss_bytes_per_half_open = rss_peak.saturating_sub(rss_start) as f64 / peak.1 as f64;
    }
    if let Some(s) = final_stats {
        report.refused = s.refused;
        report.gateway_datagrams_received = s.datagrams_received;
        report.evicted = s.evicted;
        report.evicted_idle = s.evicted_idle;
    }
    report
}

/// Runs the flood and the legitimate clients of the WTLS case or of `--suite`; returns
/// the measurements.
pub fn flood(args: &FloodConfig) -> anyhow::Result<FloodReport> {
    let Some(contender) = &args.contender else {
        let (store, client_cfg, _) = prepare(args)?;
        let clients = WtlsClients::new(client_cfg, args.auth, 0.0);
        let server = if args.in_process {
            let cfg =
                setup::gateway_server_config(&store, ClientAuth::Optional, &Options::default())?;
            Some(Arc::new(cfg))
        } else {
            None
        };
        return flood_with(args, clients, server);
    };
    let store = args.pki.open()?;
    let sides = contender.load_sides(Bench { store: &store })?;
    let server = args.in_process.then_some(sides.servers);
    let clients = SpineClients {
        make: sides.client,
        next: FLOOD_SEED << 32,
    };
    flood_with(args, clients, server)
}

/// The flood of `clients`' first flights against `server` in process (or `--connect`),
/// with legitimate handshakes of the same protocol meanwhile.
fn flood_with<L, P>(
    args: &FloodConfig,
    mut clients: L,
    server: Option<P>,
) -> anyhow::Result<FloodReport>
where
    L: LoadClients + Send + 'static,
    L::Client: Send + 'static,
    P: ServeProtocol,
{
    let duration =
        Duration::try_from_secs_f64(args.duration.min(MAX_DURATION_S)).context("--duration")?;
    let total = (args.rate * duration.as_secs_f64()).ceil() as u64;
    let flights = first_flights(&mut clients, total.min(FLIGHT_POOL))?;

    let rss_start = rss_bytes();
    let gateway = match server {
        Some(server) => Some(spawn_in_process(args, server, args.response_limit())?),
        None => None,
    };
    let target = match (&gateway, args.connect) {
        (Some(g), _) => g.local_addr(),
        (None, Some(a)) => a,
        (None, None) => bail!("give --connect ADDR or --in-process"),
    };
    let filled = fill_established(target, &mut clients, args.fill_established);

    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let end = started + duration;
    let (legit, legit_times) =
        spawn_legitimate(target, clients, args.legit_rate, stop.clone(), end);
    let paced = send_flood(
        args,
        &flights,
        target,
        gateway.as_ref(),
        total,
        started,
        end,
        rss_start,
    );
    let flood_time = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    let _ = legit.join();

    let final_stats: Option<GatewayStats> = gateway.map(|g| g.shutdown());
    let times = legit_times
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Ok(report_of(
        &times,
        paced,
        flood_time,
        rss_start,
        filled,
        final_stats,
    ))
}

fn print_report(args: &FloodConfig, r: &FloodReport) {
    println!(
        "flood: {} ClientHellos in {:.1} s ({:.0}/s) from {} source addresses, {} send errors",
        r.flood_sent,
        r.duration_s,
        r.flood_sent as f64 / r.duration_s.max(1e-9),
        args.sources,
        r.flood_send_errors
    );
    let ratio = if r.legit_attempted > 0 {
        100.0 * r.legit_completed as f64 / r.legit_attempted as f64
    } else {
        0.0
    };
    let offered = match &args.contender {
        Some(c) => c.to_string(),
        None => format!(
            "{}, {}",
            args.case,
            match args.auth {
                AuthMode::ServerAuth => "server-auth",
                AuthMode::Mutual => "mutual",
            }
        ),
    };
    println!(
        "legitimate ({offered}): {}/{} completed ({ratio:.1} %), p50 {:.2} ms, p95 {:.2} ms",
        r.legit_completed, r.legit_attempted, r.legit_p50_ms, r.legit_p95_ms
    );
    if r.filled > 0 {
        println!(
            "table filled first with {} idle established peers; {} of them evicted for newcomers",
            r.filled, r.evicted_idle
        );
    }
    if args.in_process && r.filled > 0 {
        println!(
            "gateway (max_peers {}): peak state {} B, established fillers included (run \
             without --fill-established for the bytes per half-open handshake)",
            args.max_peers, r.peak_state_bytes
        );
    } else if args.in_process && r.peak_state_bytes == 0 {
        println!(
            "gateway (max_peers {}, handshake timeout {} ms): peak {} half-open; this \
             protocol's endpoint gives no state estimate, the RSS line below prices them",
            args.max_peers, args.handshake_timeout_ms, r.peak_half_open
        );
    } else if args.in_process {
        println!(
            "gateway (max_peers {}, handshake timeout {} ms): peak state {} B over {} half-open = {:.0} B per half-open handshake (target <= 2048)",
            args.max_peers,
            args.handshake_timeout_ms,
            r.peak_state_bytes,
            r.peak_half_open,
            r.bytes_per_half_open
        );
    }
    if args.in_process {
        println!(
            "refused {} peers, evicted {}; RSS {} -> {} KiB (+{:.0} B per half-open)",
            r.refused,
            r.evicted,
            r.rss_start_bytes / 1024,
            r.rss_peak_bytes / 1024,
            r.rss_bytes_per_half_open
        );
    }
    if let Ok(json) = serde_json::to_string(r) {
        println!("{json}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flood_sources_spread_over_loopback_and_avoid_the_legitimate_address() {
        let mut seen = std::collections::HashSet::new();
        for n in 0..100_000u64 {
            let ip = source_ip(n, 70_000);
            assert_eq!(ip.octets()[0], 127);
            assert_ne!(ip, Ipv4Addr::LOCALHOST);
            seen.insert(ip);
        }
        assert_eq!(seen.len(), 70_000);
        assert_eq!(source_ip(5, 1), source_ip(9, 1));
        for k in 0..100_000 {
            assert_eq!(legit_ip(k).octets()[1], 0);
        }
    }

    #[test]
    fn rss_is_read_from_proc() {
        assert!(rss_bytes() > 0);
    }
}
