//! `wtlsperf client`: the command line around the UDP client, one handshake (or
//! `--count` of them) and an echo or a WAP fetch through each.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use wtls::handshake::{AuthMode, Client, ClientConfig, HandshakeKind, TrustedKeyIds};
use wtls::msgs::common::CipherSuite;
use wtls::probe::{HandshakeProbe, Message, Operation};
use wtls::suite::Case;

use wtlsperf_models::stats::median_p95_ms;

use wtlsperf_drivers::client_offer;
use wtlsperf_drivers::pcap::PcapWriter;
use wtlsperf_drivers::setup::{self, Options};
use wtlsperf_drivers::udp_client::{connect_client, probed_client, same_as, Exchange};
use wtlsperf_drivers::wap_client::{self, WspMode};

use crate::cli_args::{self, HandshakeArgs, PackingArgs, PkiArgs};
use crate::session_file::{self, SavedSession};

/// `wtlsperf client` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Gateway (or bearer relay) address.
    #[arg(long, default_value = "127.0.0.1:9202")]
    pub connect: SocketAddr,
    // The gateway's PKI; not read by an anonymous client that sends no trusted key ids.
    #[command(flatten)]
    pub pki: PkiArgs,
    #[command(flatten)]
    pub handshake: HandshakeArgs,
    /// Handshakes to run (1 to 1,000,000).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub count: u32,
    /// After the first full handshake, resume its session (abbreviated handshakes).
    #[arg(long)]
    pub resume: bool,
    /// Save the session of the last handshake to this file (mode 0600: it holds the
    /// master secret), for --sess-in later, on this gateway or another.
    #[arg(long, value_name = "FILE")]
    pub sess_out: Option<PathBuf>,
    /// Resume the session saved in this file (by --sess-out) against --connect; the
    /// output says whether the handshake was abbreviated.
    #[arg(long, value_name = "FILE")]
    pub sess_in: Option<PathBuf>,
    /// Write every datagram sent and received to this pcap file.
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// Overall time allowed per handshake.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub timeout_ms: u64,
    /// First retransmission timeout (doubles on each retransmission).
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub rto_ms: u64,
    /// Anonymous key exchange (RSA_anon / ECDH_anon on the leaf's parameters).
    #[arg(long)]
    pub anonymous: bool,
    #[command(flatten)]
    pub packing: PackingArgs,
    /// A cipher suite to offer, BULK/MAC (e.g. RC5_CBC/SHA, DES_CBC/SHA,
    /// RC5_CBC_56/SHA); repeat it to offer several, most preferred first. A weak suite
    /// named here is offered, with a warning. Default: RC5_CBC/SHA.
    #[arg(long = "cipher", value_name = "BULK/MAC", value_parser = client_offer::parse_cipher)]
    pub ciphers: Vec<CipherSuite>,
    /// What the ClientHello lists as trusted key ids: none, each CA's name, or each CA's
    /// key hash. With --anonymous and none, no PKI is needed.
    #[arg(long, default_value = "name", value_parser = cli_args::choice(&TRUSTED_IDS))]
    pub trusted_ids: TrustedKeyIds,
    /// Keys are refreshed every 2^N records (WTLS key_refresh, 0 to 15).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=15))]
    pub key_refresh: u8,
    /// After each handshake, fetch this URL with a connectionless WSP Get through the
    /// secure channel, instead of the echo, and print the Reply's status, content type
    /// and body size.
    #[arg(long, value_name = "URL", value_parser = parse_wsp_url)]
    pub wsp_get: Option<String>,
    #[command(flatten)]
    pub wap: WapArgs,
    /// Emulate this client device (e.g. nokia7650): each flight is held for the device's
    /// processing time; an unknown name lists the profiles.
    #[arg(long)]
    pub device: Option<String>,
}

/// The browser's options of `wtlsperf client`.
#[derive(Debug, Clone, clap::Args)]
pub struct WapArgs {
    /// WSP mode of --wsp-get.
    #[arg(long, default_value = "connectionless", value_parser = cli_args::choice(&WSP_MODES))]
    pub wsp_mode: WspMode,
    /// Fetch --wsp-get over bare UDP, without a WTLS handshake (the unsecured ports
    /// 9200 and 9201).
    #[arg(long, requires = "wsp_get")]
    pub no_wtls: bool,
    /// Append the client random and master secret of each handshake to FILE in the NSS
    /// key-log format (`CLIENT_RANDOM <random> <master secret>`, see docs/wap.md).
    #[arg(long, value_name = "FILE")]
    pub keylog: Option<PathBuf>,
    /// Send FILE to --wsp-get's URL as the body of a WSP Post instead of a Get. In
    /// connection mode a body over one 1400-octet packet goes as a segmented invoke
    /// (WTP SAR); connectionless WSP takes one datagram.
    #[arg(long, value_name = "FILE", requires = "wsp_get")]
    pub post: Option<PathBuf>,
    /// The media type of --post's body.
    #[arg(
        long,
        value_name = "TYPE",
        default_value = "application/x-www-form-urlencoded",
        requires = "post"
    )]
    pub content_type: String,
    /// The request --wsp-get and --post make (set by `run` from them).
    #[arg(skip)]
    pub request: Option<wap_client::Request>,
}

/// Largest --post body: WTP segments a message into at most 256 packets of 1400 octets,
/// and the Post's URI and headers travel with it.
const MAX_POST_BYTES: u64 = 256 * 1400 - 20_000;

/// The request of `--wsp-get` (and `--post`), its file read and checked once.
fn wsp_request(args: &Args) -> anyhow::Result<Option<wap_client::Request>> {
    let Some(uri) = args.wsp_get.clone() else {
        return Ok(None);
    };
    let Some(path) = &args.wap.post else {
        return Ok(Some(wap_client::Request::Get { uri }));
    };
    let len = std::fs::metadata(path)
        .with_context(|| format!("--post {}", path.display()))?
        .len();
    anyhow::ensure!(
        len <= MAX_POST_BYTES,
        "--post {}: {len} bytes, more than WTP carries in one message ({MAX_POST_BYTES})",
        path.display()
    );
    let body = std::fs::read(path).with_context(|| format!("--post {}", path.display()))?;
    let media = args.wap.content_type.trim();
    anyhow::ensure!(
        !media.is_empty() && media.is_ascii() && !media.chars().any(|c| c.is_ascii_control()),
        "--content-type {media:?}: not a media type"
    );
    Ok(Some(wap_client::Request::post(uri, media, body)))
}

/// `--wsp-mode`: the browser's WSP modes by their command-line names.
const WSP_MODES: [(WspMode, &str, &str); 2] = [
    (
        WspMode::Connectionless,
        "connectionless",
        "One Get and its Reply, no WTP (ports 9200 and 9202)",
    ),
    (
        WspMode::Connection,
        "connection",
        "Connect, Get and Disconnect as WTP transactions (ports 9201 and 9203)",
    ),
];

/// `--trusted-ids`: what the ClientHello lists as trusted key ids, by name.
const TRUSTED_IDS: [(TrustedKeyIds, &str, &str); 3] = [
    (
        TrustedKeyIds::None,
        "none",
        "An empty list: the server picks its certificate by itself (what Kannel needs)",
    ),
    (
        TrustedKeyIds::Name,
        "name",
        "Each trusted CA by its subject name (a `text` identifier)",
    ),
    (
        TrustedKeyIds::KeyHash,
        "key-hash",
        "Each trusted CA by the SHA-1 hash of its public key (`key_hash_sha`)",
    ),
];

/// What a failed handshake says when the gateway may have refused the trusted-key list.
const TRUSTED_IDS_HINT: &str = "the gateway refused the handshake: if it does not accept \
     the trusted key ids the ClientHello lists (Kannel's WTLS answers handshake_failure to \
     --trusted-ids name, the default), try --trusted-ids none";

/// Whether a failed handshake ended with the gateway's handshake_failure: what a gateway
/// that rejects the trusted-key list answers.
fn refuses_trusted_ids(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.to_string().contains("handshake_failure"))
}

/// A URL for `--wsp-get`: non-empty, printable, and small enough for one datagram.
fn parse_wsp_url(text: &str) -> Result<String, String> {
    const MAX: usize = 16_384;
    if text.is_empty() || text.len() > MAX || text.chars().any(char::is_control) {
        return Err(format!(
            "{text:?} is not a URL (1 to {MAX} bytes, no control characters)"
        ));
    }
    Ok(text.to_string())
}

fn print_probe(probe: &HandshakeProbe) {
    for m in Message::ALL {
        if let Some(t) = probe.message(m) {
            print!(
                "  {:<9} {:>9.3} ms wall {:>9.3} ms cpu {:>5} B",
                m.name(),
                t.wall_ns as f64 / 1e6,
                t.cpu_ns as f64 / 1e6,
                t.bytes
            );
            let ops: Vec<String> = probe
                .operations
                .iter()
                .filter(|o| o.message == m)
                .map(|o| format!("{} {:.3} ms", o.operation.name(), o.wall_ns as f64 / 1e6))
                .collect();
            if !ops.is_empty() {
                print!("  [{}]", ops.join(", "));
            }
            println!();
        }
    }
    let pk: u64 = probe
        .operations
        .iter()
        .filter(|o| Operation::is_public_key(o.operation))
        .map(|o| o.wall_ns)
        .sum();
    println!(
        "  client processing {:.3} ms (public-key {:.3} ms)",
        probe.total_wall_ns() as f64 / 1e6,
        pk as f64 / 1e6
    );
}

pub fn run(mut args: Args) -> anyhow::Result<()> {
    args.wap.request = wsp_request(&args)?;
    if args.wap.no_wtls {
        return run_unsecured(&args);
    }
    let case = args.handshake.case;
    // The capture's synthetic headers are IPv4 (see `pcap`).
    anyhow::ensure!(
        args.pcap.is_none() || args.connect.is_ipv4(),
        "--pcap records IPv4 datagrams only, and --connect {} is IPv6",
        args.connect
    );
    let cfg = Arc::new(command_config(&args, &case)?);
    let auth = args.handshake.auth;
    let device = wtlsperf_drivers::device::client_device(args.device.as_deref(), case, auth)?;
    let mut pcap = match &args.pcap {
        Some(path) => Some(PcapWriter::create(path).context("--pcap")?),
        None => None,
    };
    let loaded = match &args.sess_in {
        Some(path) => Some(session_file::read(path, "--sess-in", setup::now())?),
        None => None,
    };
    let mut session: Option<SavedSession> = loaded.clone();
    let mut durations = Vec::new();
    for i in 0..args.count {
        // A fresh socket (so a fresh peer entry at the gateway) per handshake.
        let sock = open_socket(args.connect)?;
        let resume = if args.resume || loaded.is_some() {
            session.as_ref().map(|s| s.session.clone())
        } else {
            None
        };
        let offered = resume.as_ref().map(|s| s.id.clone());
        // The device's holds come on top of the time allowed.
        let deadline = Instant::now()
            + Duration::from_millis(args.timeout_ms)
            + device.as_ref().map_or(Duration::ZERO, |d| {
                Duration::from_secs_f64(d.steps.total_ms() / 1e3)
            });
        let connected = connect_client(
            &sock,
            args.connect,
            probed_client(cfg.clone(), auth, resume),
            device.as_ref().map(|d| &d.steps),
            pcap.as_mut(),
            deadline,
        );
        let (run, mut client) = match connected {
            // A gateway serving several CAs picks its certificate by them.
            Err(e) if args.trusted_ids == TrustedKeyIds::None && !args.anonymous => {
                return Err(e.context(
                    "with --trusted-ids none the gateway cannot tell which CA the client trusts",
                ))
            }
            Err(e) if refuses_trusted_ids(&e) && args.trusted_ids != TrustedKeyIds::None => {
                return Err(e.context(TRUSTED_IDS_HINT))
            }
            other => other?,
        };
        print_handshake(i, &run, &args);
        print_probe(&run.probe);
        if let Some(id) = &offered {
            let from_file = loaded.as_ref().filter(|l| &l.session.id == id);
            print_resumption(id, run.kind, from_file.and(args.sess_in.as_deref()));
        }
        if let Some(made) = &run.session {
            keep_session(&args, made, &mut session, loaded.is_some())?;
        }
        if let Some(path) = &args.wap.keylog {
            wap_client::write_keylog(path, &client)?;
        }
        if let Some(d) = &device {
            wtlsperf_drivers::device::print_emulation(d, run.held);
        }
        let mut exchange = Exchange {
            sock: &sock,
            peer: args.connect,
            pcap: pcap.as_mut(),
            retry: Duration::from_millis(args.rto_ms),
            deadline: deadline + Duration::from_millis(args.timeout_ms),
        };
        let tid = (i % 256) as u16 * 3 + 1;
        after_handshake(&mut exchange, &mut client, &args, tid)?;
        durations.push(run.duration);
    }
    if let Some(p) = pcap.as_mut() {
        p.flush()?;
    }
    if durations.len() > 1 {
        let (p50, p95) = median_p95_ms(&durations);
        println!(
            "{} handshakes: median {p50:.3} ms, p95 {p95:.3} ms",
            durations.len()
        );
    }
    Ok(())
}

/// The line of handshake `i`: its kind, case, time and traffic.
fn print_handshake(i: u32, run: &wtlsperf_drivers::udp_client::ClientRun, args: &Args) {
    println!(
        "handshake {} {:?} {} {}: {:.3} ms, {} retransmissions, {} datagrams / {} B sent, {} / {} B received",
        i + 1,
        run.kind,
        args.handshake.case,
        if args.anonymous {
            "anonymous"
        } else {
            args.handshake.auth.name()
        },
        run.duration.as_secs_f64() * 1e3,
        run.retransmissions,
        run.datagrams_sent,
        run.bytes_sent,
        run.datagrams_received,
        run.bytes_received
    );
}

/// Keeps the session `made` for the next handshake and writes it to `--sess-out`: a
/// session loaded from `--sess-in` (`from_file`) gives way to what each handshake made.
fn keep_session(
    args: &Args,
    made: &wtls::handshake::StoredSession,
    session: &mut Option<SavedSession>,
    from_file: bool,
) -> anyhow::Result<()> {
    // A resumed session keeps the time it was first made.
    let created_unix_s = match &*session {
        Some(s) if s.session.id == made.id => s.created_unix_s,
        _ => u64::from(setup::now().unix_secs),
    };
    let saved = SavedSession {
        session: made.clone(),
        created_unix_s,
    };
    if let Some(path) = &args.sess_out {
        session_file::write(path, &saved, "--sess-out")?;
    }
    if session.is_none() || from_file {
        *session = Some(saved);
    }
    Ok(())
}

/// Says whether the session offered (`id`) was resumed: an operator carrying a session
/// to another gateway reads here whether that gateway found it.
fn print_resumption(id: &[u8], kind: HandshakeKind, from: Option<&std::path::Path>) {
    let source = from.map_or(String::new(), |p| format!(" from {}", p.display()));
    if kind == HandshakeKind::Abbreviated {
        println!(
            "  session {}{source} resumed: abbreviated handshake",
            hex::encode(id)
        );
    } else {
        println!(
            "  session {}{source} not resumed: the gateway made a {} handshake",
            hex::encode(id),
            wtls::endpoint::kind_name(kind)
        );
    }
}

/// What the command does with a fresh connection: fetch --wsp-get as a WAP browser if
/// given, otherwise one echo; prints the result.
fn after_handshake(
    exchange: &mut Exchange<'_, '_>,
    client: &mut Client,
    args: &Args,
    tid: u16,
) -> anyhow::Result<()> {
    let peer = exchange.peer;
    match args.wap.request.as_ref() {
        Some(req) => {
            let socket =
                wap_client::Socket::new(exchange.sock, peer, exchange.pcap.as_deref_mut())?;
            let mut pipe = wap_client::WtlsPipe::new(socket, client);
            let limits = wap_client::Limits {
                retry: exchange.retry,
                deadline: exchange.deadline,
            };
            let page = wap_client::request(&mut pipe, args.wap.wsp_mode, req, tid, limits)?;
            wap_client::print_reply(req, &page);
        }
        None => {
            let data = b"wtlsperf echo";
            let ((), rtt) = exchange.run(client, data, same_as(data))?.ok_or_else(|| {
                anyhow!(
                    "no echo from {peer} before the deadline (only wtlsperf gateway \
                         echoes; fetch a page from a WAP gateway with --wsp-get URL)"
                )
            })?;
            println!("  echo ok in {:.3} ms", rtt.as_secs_f64() * 1e3);
        }
    }
    Ok(())
}

/// A socket for talking to `peer`, connected to it so that the kernel reports an ICMP
/// port unreachable (ECONNREFUSED) instead of the client waiting out its time-out.
fn open_socket(peer: SocketAddr) -> anyhow::Result<UdpSocket> {
    let bind: SocketAddr = if peer.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let sock = UdpSocket::bind(bind).context("binding the client's UDP socket")?;
    sock.connect(peer)
        .with_context(|| format!("--connect {peer}"))?;
    Ok(sock)
}

/// The client configuration the command line asks for. An anonymous client that sends
/// no trusted key ids authenticates nobody and needs no PKI, so it does not read (or
/// create) `--pki`; every other client needs the gateway's PKI.
fn command_config(args: &Args, case: &Case) -> anyhow::Result<ClientConfig> {
    anyhow::ensure!(
        !(args.anonymous && args.handshake.auth == AuthMode::Mutual),
        "--auth mutual needs a client certificate, and --anonymous uses none"
    );
    let packing = args.packing.packing;
    let mut cfg = if args.anonymous && args.trusted_ids == TrustedKeyIds::None {
        client_offer::anonymous_config(case, packing)
    } else {
        // Only this case's CA certificate and client credentials (not the whole PKI).
        let creds = args.pki.load_client(case)?;
        let opts = Options {
            packing,
            ..Options::default()
        };
        if args.anonymous {
            setup::anonymous_client_config_for(&creds, &opts)
        } else {
            setup::client_config_for(&creds, &opts, false)
        }
    };
    for warning in client_offer::apply_ciphers(&mut cfg, &args.ciphers) {
        eprintln!("wtlsperf: {warning}");
    }
    cfg.trusted_key_ids = args.trusted_ids;
    cfg.key_refresh = args.key_refresh;
    cfg.retransmit_timeout_ns = args.rto_ms * 1_000_000;
    Ok(cfg)
}

/// `wtlsperf client --no-wtls --wsp-get URL`: the page over bare UDP, `--count` times.
fn run_unsecured(args: &Args) -> anyhow::Result<()> {
    let req = args
        .wap
        .request
        .as_ref()
        .ok_or_else(|| anyhow!("--no-wtls needs --wsp-get URL"))?;
    anyhow::ensure!(
        args.pcap.is_none() || args.connect.is_ipv4(),
        "--pcap records IPv4 datagrams only, and --connect {} is IPv6",
        args.connect
    );
    let mut pcap = match &args.pcap {
        Some(path) => Some(PcapWriter::create(path).context("--pcap")?),
        None => None,
    };
    let mut first_tid: u16 = 1;
    for _ in 0..args.count {
        let bind = if args.connect.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        };
        let sock = UdpSocket::bind(bind).context("binding the client socket")?;
        sock.connect(args.connect)
            .with_context(|| format!("--connect {}", args.connect))?;
        let limits = wap_client::Limits {
            retry: Duration::from_millis(args.rto_ms),
            deadline: Instant::now() + Duration::from_millis(args.timeout_ms),
        };
        let mut pipe =
            wap_client::UdpPipe(wap_client::Socket::new(&sock, args.connect, pcap.as_mut())?);
        let page = wap_client::request(&mut pipe, args.wap.wsp_mode, req, first_tid, limits)?;
        wap_client::print_reply(req, &page);
        first_tid = first_tid.wrapping_add(3);
    }
    if let Some(p) = pcap.as_mut() {
        p.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handshake_failure_names_trusted_ids_none() {
        let quiet = anyhow::anyhow!(
            "the gateway 127.0.0.1:9202 sent handshake_failure (unauthenticated), then \
             stopped answering (the alert was not acted on: unauthenticated)"
        );
        assert!(refuses_trusted_ids(&quiet.context("handshake")));
        assert!(TRUSTED_IDS_HINT.contains("--trusted-ids none"));
        let other = anyhow::anyhow!("127.0.0.1:9202 stopped answering after 3 datagrams");
        assert!(!refuses_trusted_ids(&other));
    }
}
