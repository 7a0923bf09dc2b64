//! `wtlsperf gateway` on the command line, and the checks of operator input that the
//! gateway, load and flood commands share. Every check names the option and what was
//! wrong: clap prints `error: invalid value 'X' for '--option <OPTION>': why` and exits
//! with status 2; checks that need more than one value return an error that `main`
//! prints and exits 1 on.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wtls::endpoint::{entry_overhead_bytes, ResponseLimit};
use wtls::handshake::{Packing, Policy};

use super::stats_log::StatsLog;
use super::{spawn_gateway, GatewayConfig};
use crate::cli_args::{PackingArgs, ServedPkiArgs};
use crate::setup::{self, ClientAuth, Options};

/// Per-peer state a gateway must be able to hold: a table entry plus one half-open
/// handshake, whose state the flood measurements keep under 2 KiB (docs/security.md).
pub fn bytes_per_peer() -> u64 {
    (entry_overhead_bytes() + 2048) as u64
}

/// A count that must be at least 1 (workers, clients, sources).
pub fn at_least_one(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("not a whole number ({e})"))?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    Ok(n)
}

/// A number that must be positive and finite (a rate).
pub fn positive_number(s: &str) -> Result<f64, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("must be a positive finite number, got {x}"));
    }
    Ok(x)
}

/// A number of seconds that must be positive and finite.
pub fn positive_seconds(s: &str) -> Result<f64, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("must be a positive number of seconds, got {x}"));
    }
    Ok(x)
}

/// How long a command runs: `None` until it is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLength(pub Option<Duration>);

/// A run length: positive; a length too long to represent (e.g. `inf`, `1e300`) runs
/// until the process is stopped.
pub fn run_length(s: &str) -> Result<RunLength, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if x.is_nan() || x <= 0.0 {
        return Err(format!("must be a positive number of seconds, got {x}"));
    }
    Ok(RunLength(
        Duration::try_from_secs_f64(x)
            .ok()
            .filter(|d| Instant::now().checked_add(*d).is_some()),
    ))
}

/// Refuses a peer bound whose table could not fit in the memory available now
/// (`MemAvailable` of /proc/meminfo), naming the largest that would.
pub fn check_max_peers(max_peers: usize) -> anyhow::Result<()> {
    let need = (max_peers as u128) * u128::from(bytes_per_peer());
    let Some(available) = mem_available_bytes() else {
        return Ok(());
    };
    if need > u128::from(available) {
        anyhow::bail!(
            "--max-peers {max_peers}: each peer may hold up to {} bytes (table entry and a \
             half-open handshake), {:.1} GB in all, but only {:.1} GB of memory are \
             available; at most {} peers fit",
            bytes_per_peer(),
            need as f64 / 1e9,
            available as f64 / 1e9,
            available / bytes_per_peer()
        );
    }
    Ok(())
}

/// Memory this process may still use: `MemAvailable`, or less if a cgroup (v2) limit
/// leaves less (a container sees the host's meminfo).
fn mem_available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let cgroup = || -> Option<u64> {
        let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok();
        let max: u64 = read("memory.max")?.trim().parse().ok()?;
        let current: u64 = read("memory.current")?.trim().parse().ok()?;
        Some(max.saturating_sub(current))
    };
    Some(cgroup().map_or(kib * 1024, |c| c.min(kib * 1024)))
}

/// `wtlsperf gateway` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:9202")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub pki: ServedPkiArgs,
    /// Worker threads (each with its own SO_REUSEPORT socket).
    #[arg(long, default_value = "1", value_parser = at_least_one, allow_negative_numbers = true)]
    pub workers: usize,
    /// Share the port with sockets already bound to it (e.g. another gateway).
    #[arg(long)]
    pub reuse_port: bool,
    /// How client certificates are treated.
    #[arg(long, value_enum, default_value = "optional")]
    pub client_auth: ClientAuth,
    /// Most connections holding state at once (bounded by the memory available: about
    /// 2.3 KB each).
    #[arg(long, default_value = "100000", value_parser = at_least_one, allow_negative_numbers = true)]
    pub max_peers: usize,
    /// A handshake not finished this long after its first datagram is forgotten.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub handshake_timeout_ms: u64,
    /// An established peer silent this long is forgotten.
    #[arg(long, default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_ms: u64,
    /// Bytes per second the gateway sends toward one address that has not completed a
    /// handshake (per worker; 0: no limit).
    #[arg(long, default_value_t = ResponseLimit::default().address_bytes_per_s)]
    pub rrl_address_bytes: u64,
    /// Bytes per second toward one such /24 (IPv4) or /56 (IPv6) prefix (per worker; 0: no
    /// limit).
    #[arg(long, default_value_t = ResponseLimit::default().prefix_bytes_per_s)]
    pub rrl_prefix_bytes: u64,
    /// The address of a UDP balancer in front of this gateway (e.g. nginx): answers toward
    /// it are charged per source socket (one client behind it), not to one budget shared
    /// by every client; the per-address and per-prefix limits are then the balancer's
    /// (docs/security.md).
    #[arg(long)]
    pub balancer: Option<IpAddr>,
    /// Append the gateway's statistics, with its RSS and table occupancy, to FILE as one
    /// JSON line every --stats-every-s seconds and once at shutdown.
    #[arg(long)]
    pub stats_file: Option<PathBuf>,
    /// Interval of --stats-file, seconds.
    #[arg(long, default_value = "10", value_parser = positive_seconds, allow_negative_numbers = true)]
    pub stats_every_s: f64,
    /// Accept weak (export, NULL, truncated-MAC) cipher suites and anonymous key exchange.
    #[arg(long)]
    pub allow_weak: bool,
    #[command(flatten)]
    pub packing: PackingArgs,
    /// Pin worker i to the i-th of these CPUs (comma-separated), e.g. `--cpus 1`.
    #[arg(long, value_delimiter = ',')]
    pub cpus: Vec<usize>,
    /// Poll the socket without sleeping (only with pinned workers).
    #[arg(long)]
    pub busy_poll: bool,
    /// Stop by itself after this many seconds (`inf`: run until stopped).
    #[arg(long, value_parser = run_length, allow_negative_numbers = true)]
    pub duration_s: Option<RunLength>,
    #[command(flatten)]
    pub session: crate::session_store::SessionStoreArgs,
    #[command(flatten)]
    pub wap: crate::wap_gateway::WapArgs,
}

/// The server options of the gateway command.
pub fn gateway_options(allow_weak: bool, packing: Packing) -> Options {
    let mut opts = Options {
        packing,
        ..Options::default()
    };
    if allow_weak {
        opts.policy = Policy::permissive();
        opts.cipher_suites = setup::all_cipher_suites();
    }
    opts
}

pub fn run(args: Args) -> anyhow::Result<()> {
    check_max_peers(args.max_peers)?;
    let store = args.pki.open()?;
    let opts = gateway_options(args.allow_weak, args.packing.packing);
    let mut server = setup::gateway_server_config(&store, args.client_auth, &opts)?;
    let lifetime = Duration::from_nanos(opts.session_lifetime_ns);
    let session_store = args.session.open(args.workers, lifetime)?;
    if let Some(shared) = &session_store {
        server.session_cache = Some(shared.clone());
    }
    if args.wap.wap {
        let run_for = args.duration_s.and_then(|r| r.0);
        return crate::wap_gateway::run(args.listen, &args.wap, Arc::new(server), run_for);
    }
    let cfg = GatewayConfig {
        listen: args.listen,
        workers: args.workers,
        server: Arc::new(server),
        max_peers: args.max_peers,
        handshake_timeout: Duration::from_millis(args.handshake_timeout_ms),
        idle_timeout: Duration::from_millis(args.idle_timeout_ms),
        record_jobs: false,
        cpu_affinity: args.cpus.clone(),
        busy_poll: args.busy_poll,
        response_limit: ResponseLimit {
            address_bytes_per_s: args.rrl_address_bytes,
            prefix_bytes_per_s: args.rrl_prefix_bytes,
            ..ResponseLimit::default()
        },
        reuse_port: args.reuse_port,
        balancer: args.balancer,
    };
    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, stop.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.clone())?;
    let mut stats_log = match &args.stats_file {
        Some(path) => Some(StatsLog::create(
            path,
            Duration::from_secs_f64(args.stats_every_s),
        )?),
        None => None,
    };
    let handle = spawn_gateway(cfg)?;
    eprintln!("wtlsperf gateway listening on {}", handle.local_addr());
    let deadline = args
        .duration_s
        .and_then(|r| r.0)
        .and_then(|d| Instant::now().checked_add(d));
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        std::thread::sleep(Duration::from_millis(50));
        if let Some(log) = &mut stats_log {
            log.tick(args.max_peers, || {
                let mut stats = handle.stats();
                stats.session_store = session_store.as_ref().map(|s| s.stats());
                stats
            })?;
        }
    }
    tracing::info!("gateway stopping");
    let mut stats = handle.shutdown();
    stats.session_store = session_store.as_ref().map(|s| s.stats());
    if let Some(log) = &mut stats_log {
        log.write(args.max_peers, &stats)?;
    }
    println!("{}", serde_json::to_string_pretty(&stats)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_numbers_are_checked() {
        assert_eq!(at_least_one("3"), Ok(3));
        assert!(at_least_one("0").is_err());
        assert!(at_least_one("-1").is_err());
        assert!(positive_seconds("NaN").is_err());
        assert!(positive_seconds("inf").is_err());
        assert!(positive_seconds("-1").is_err());
        assert_eq!(positive_seconds("2.5"), Ok(2.5));
        assert_eq!(run_length("inf"), Ok(RunLength(None)));
        assert_eq!(run_length("1e300"), Ok(RunLength(None)));
        assert_eq!(run_length("2"), Ok(RunLength(Some(Duration::from_secs(2)))));
        assert!(run_length("NaN").is_err());
        assert!(run_length("-1").is_err());
        assert!(run_length("0").is_err());
    }

    #[test]
    fn a_peer_bound_beyond_memory_is_refused_with_the_largest_that_fits() {
        let err = check_max_peers(usize::MAX / 4096).unwrap_err().to_string();
        assert!(
            err.contains("--max-peers") && err.contains("at most"),
            "{err}"
        );
        assert!(check_max_peers(1000).is_ok());
    }
}
