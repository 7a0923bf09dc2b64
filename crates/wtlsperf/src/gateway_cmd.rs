//! `wtlsperf gateway` on the command line: its arguments, the checks that need more than
//! one of them, and the run until it is stopped or its `--duration-s` is over.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wtls::endpoint::ResponseLimit;
use wtlsperf_drivers::gateway::operator::{check_max_peers, gateway_options};
use wtlsperf_drivers::gateway::stats_log::StatsLog;
use wtlsperf_drivers::gateway::{spawn_gateway, GatewayConfig};
use wtlsperf_drivers::session_store::SessionStoreOptions;
use wtlsperf_drivers::setup::{self, ClientAuth};
use wtlsperf_drivers::wap_gateway::reflection::ReflectionLimit;
use wtlsperf_drivers::wap_gateway::service::{SarLimits, ServiceLimits};
use wtlsperf_drivers::wap_gateway::{self, PortSetting, WapLimits, WapPorts, WtpBearer};

use crate::cli_args::{
    self, at_least_one, positive_seconds, run_length, PackingArgs, RunLength, ServedPkiArgs,
};

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
    #[arg(long, default_value = "optional", value_parser = cli_args::choice(&CLIENT_AUTHS))]
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
    /// handshake (shared by all workers; 0: no limit). An address that completed one
    /// within the idle time-out is paid from the credit that earned it first.
    #[arg(long, default_value_t = ResponseLimit::default().address_bytes_per_s)]
    pub rrl_address_bytes: u64,
    /// Bytes per second toward one such /24 (IPv4) or /56 (IPv6) prefix (shared by all
    /// workers; 0: no limit).
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
    pub session: SessionStoreArgs,
    #[command(flatten)]
    pub wap: WapArgs,
}

/// `--client-auth`: the gateway's policies by their command-line names.
const CLIENT_AUTHS: [(ClientAuth, &str, &str); 3] = [
    (
        ClientAuth::None,
        "none",
        "No CertificateRequest: the plain WTLS server-authenticated flow",
    ),
    (
        ClientAuth::Optional,
        "optional",
        "CertificateRequest sent; an empty client Certificate is accepted. This is the thesis' server-authenticated flow (Table 3.7), and lets one gateway serve both server-authenticated and mutual clients",
    ),
    (
        ClientAuth::Required,
        "required",
        "CertificateRequest sent; a client certificate is required (mutual)",
    ),
];

/// The gateway's store options.
#[derive(Debug, Clone, clap::Args)]
pub struct SessionStoreArgs {
    /// Keep sessions in this Redis server (`redis://HOST:PORT`), shared with every
    /// gateway naming it, instead of in this process. Needs --session-key.
    #[arg(long, value_name = "URL", requires = "session_key")]
    pub session_store: Option<String>,
    /// A file of 32 random bytes (`head -c 32 /dev/urandom > FILE`) that seals the
    /// store's entries; repeat it to rotate: the first seals, all open.
    #[arg(long, value_name = "FILE", requires = "session_store")]
    pub session_key: Vec<PathBuf>,
    /// Longest a store call (a lookup, an insert) may take; past it the client gets a
    /// full handshake.
    #[arg(long, value_name = "MS", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub session_store_timeout_ms: u64,
}

impl SessionStoreArgs {
    fn options(&self) -> SessionStoreOptions {
        SessionStoreOptions {
            session_store: self.session_store.clone(),
            session_key: self.session_key.clone(),
            session_store_timeout_ms: self.session_store_timeout_ms,
        }
    }
}

/// The `--wap` options of `wtlsperf gateway`.
#[derive(Debug, Clone, clap::Args)]
pub struct WapArgs {
    /// Serve WSP on the four WAP ports of --listen's address (its port is ignored)
    /// instead of echoing on --listen.
    #[arg(long)]
    pub wap: bool,
    /// With --wap, leave this port closed (9200, 9201, 9202 or 9203, counted from
    /// --wap-base-port); repeat for several.
    #[arg(long = "wap-off", value_name = "PORT")]
    pub wap_off: Vec<u16>,
    /// With --wap, the first of the four ports (9200 by the standard).
    #[arg(long, default_value_t = 9200, value_parser = clap::value_parser!(u16).range(1..=65532))]
    pub wap_base_port: u16,
    /// With --wap, time allowed for the origin's whole answer before 504.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub origin_timeout_ms: u64,
    /// With --wap, time allowed for the TCP connect to the origin (within
    /// --origin-timeout-ms).
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub origin_connect_timeout_ms: u64,
    /// With --wap, time allowed for each read of the origin's answer (its head, each
    /// part of its body).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub origin_read_timeout_ms: u64,
    /// With --wap, the largest page (Reply body, after WML compilation) the gateway
    /// sends; a larger one is answered 502.
    #[arg(long, default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..=16_000_000))]
    pub wap_max_page_bytes: u64,
    /// With --wap, WTP transactions held per port; beyond them the least recently
    /// active is evicted.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub wap_max_transactions: u64,
    /// With --wap, WSP sessions held per port; beyond them the least recently used is
    /// evicted.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub wap_max_sessions: u64,
    /// With --wap, WTP transactions, and WSP sessions, one client address may hold per
    /// port; beyond them its own least recently active one is evicted.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub wap_max_per_client: u64,
    /// With --wap, packets of one segmented invoke (WTP SAR; WTP allows 256).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub wap_sar_max_segments: u16,
    /// With --wap, octets of one segmented invoke once reassembled.
    #[arg(long, default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1..=16_000_000))]
    pub wap_sar_max_bytes: u64,
    /// With --wap, segmented invokes one client (address and port) may have under way.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub wap_sar_per_peer: u64,
    /// With --wap, segmented invokes a port may have under way.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub wap_sar_total: u64,
    /// With --wap, most bytes sent toward an address that has not proven it reads the
    /// gateway's answers, per byte received from it, on 9200 and 9201 (0: no bound;
    /// docs/security.md says what proves an address).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub wap_reflection_factor: u64,
    /// With --wap, prove an address only by a WTLS handshake, not by a WTP exchange (a
    /// TID verification, an acknowledged Result), which a blind forger can finish: for
    /// unsecured ports on a network where forged sources are expected.
    #[arg(long)]
    pub wap_proof_wtls_only: bool,
    /// With --wap, bytes of compiled decks cached (0: no cache).
    #[arg(long, default_value_t = 4 << 20, value_parser = clap::value_parser!(u64).range(0..=1 << 34))]
    pub wap_cache_bytes: u64,
    /// With --wap, append one line per request answered to FILE (Common Log Format;
    /// SIGHUP reopens it).
    #[arg(long, value_name = "FILE")]
    pub access_log: Option<PathBuf>,
    /// With --wap, the bearer whose WTP timers and counters (WAP-224 Appendix A) the
    /// connection-mode ports (9201, 9203) start from: ip (the default), gsm-sms or
    /// gsm-ussd. PORT=BEARER sets one port; repeat for several (docs/wap.md, "WTP's
    /// timers"). The options below change single values after it.
    #[arg(long, value_name = "[PORT=]BEARER")]
    pub wtp_bearer: Vec<PortSetting<WtpBearer>>,
    /// With --wap, WTP's retry interval R on the connection-mode ports: how long a
    /// result waits for its acknowledgement before it is sent again. [PORT=]MS as
    /// --wtp-bearer.
    #[arg(long, value_name = "[PORT=]MS")]
    pub wtp_retry_ms: Vec<PortSetting>,
    /// With --wap, WTP's group retry interval G_R: how long a packet group of a segmented
    /// result (before its last) waits for its Ack before its last packet goes again.
    /// [PORT=]MS as --wtp-bearer.
    #[arg(long, value_name = "[PORT=]MS")]
    pub wtp_group_retry_ms: Vec<PortSetting>,
    /// With --wap, WTP's acknowledgement interval A: how long a request's result may take
    /// before the gateway sends a hold-on Ack. [PORT=]MS as --wtp-bearer.
    #[arg(long, value_name = "[PORT=]MS")]
    pub wtp_ack_ms: Vec<PortSetting>,
    /// With --wap, WTP's retransmission limit RCR_MAX: retransmissions of a result before
    /// the transaction is aborted (NORESPONSE). [PORT=]N as --wtp-bearer.
    #[arg(long, value_name = "[PORT=]N")]
    pub wtp_max_retransmissions: Vec<PortSetting>,
    /// With --wap, the network's Maximum Packet Lifetime on the connection-mode ports:
    /// the gateway keeps a client's last TID for RCR_MAX x R plus it after last hearing
    /// from it, and so asks a lower TID from the same address to prove itself (WAP-224
    /// §7.8). The bearer's maximum round trip by default (ip 3 s); 0 for a network that
    /// makes no duplicates. [PORT=]MS as --wtp-bearer.
    #[arg(long, value_name = "[PORT=]MS")]
    pub wtp_mpl_ms: Vec<PortSetting>,
}

impl WapArgs {
    fn ports(&self, stats_file: Option<(PathBuf, Duration)>) -> WapPorts {
        let limits = WapLimits {
            service: ServiceLimits {
                max_transactions: self.wap_max_transactions as usize,
                max_sessions: self.wap_max_sessions as usize,
                max_per_client: self.wap_max_per_client as usize,
                sar: SarLimits {
                    max_segments: self.wap_sar_max_segments,
                    max_bytes: self.wap_sar_max_bytes as usize,
                    per_peer: self.wap_sar_per_peer as usize,
                    total: self.wap_sar_total as usize,
                },
                ..ServiceLimits::default()
            },
            reflection: ReflectionLimit {
                factor: self.wap_reflection_factor,
                wtp_proves: !self.wap_proof_wtls_only,
                ..ReflectionLimit::default()
            },
            max_page_bytes: self.wap_max_page_bytes as usize,
            origin_connect_timeout: Duration::from_millis(self.origin_connect_timeout_ms),
            origin_read_timeout: Duration::from_millis(self.origin_read_timeout_ms),
            cache_bytes: self.wap_cache_bytes as usize,
            ..WapLimits::default()
        };
        WapPorts {
            wap_off: self.wap_off.clone(),
            wap_base_port: self.wap_base_port,
            origin_timeout_ms: self.origin_timeout_ms,
            limits,
            access_log: self.access_log.clone(),
            stats_file,
            wtp_bearer: self.wtp_bearer.clone(),
            wtp_retry_ms: self.wtp_retry_ms.clone(),
            wtp_group_retry_ms: self.wtp_group_retry_ms.clone(),
            wtp_ack_ms: self.wtp_ack_ms.clone(),
            wtp_max_retransmissions: self.wtp_max_retransmissions.clone(),
            wtp_mpl_ms: self.wtp_mpl_ms.clone(),
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    check_max_peers(args.max_peers)?;
    let store = args.pki.open()?;
    let opts = gateway_options(args.allow_weak, args.packing.packing);
    let mut server = setup::gateway_server_config(&store, args.client_auth, &opts)?;
    let lifetime = Duration::from_nanos(opts.session_lifetime_ns);
    let session_store = args.session.options().open(args.workers, lifetime)?;
    if let Some(shared) = &session_store {
        server.session_cache = Some(shared.clone());
    }
    if args.wap.wap {
        let run_for = args.duration_s.and_then(|r| r.0);
        let stats_file = args
            .stats_file
            .clone()
            .map(|p| (p, Duration::from_secs_f64(args.stats_every_s)));
        let ports = args.wap.ports(stats_file);
        return wap_gateway::run(args.listen, &ports, Arc::new(server), run_for);
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
        log.write_shutdown(args.max_peers, &stats)?;
    }
    println!("{}", serde_json::to_string_pretty(&stats)?);
    Ok(())
}
