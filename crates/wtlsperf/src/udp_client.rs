//! The UDP WTLS client: one blocking socket, the sans-IO [`Client`] driven by the socket's
//! read timeout, which is always the earlier of the engine's retransmission deadline and
//! the caller's overall deadline.
//!
//! Retransmission timer: the engine sends its last flight again when
//! `ClientConfig::retransmit_timeout_ns` passes without an answer, doubling it each time.
//! The first timeout must exceed one round trip plus the gateway's processing of the
//! flight, or every handshake pays a spurious retransmission (and the measured duration
//! is no longer the protocol's). On loopback the default of 1 s is ~100x the slowest
//! (RSA-2048 mutual, debug build) flight; over an emulated bearer
//! [`crate::bearer_cmd::bearer_retransmit_timeout`] derives it from the link profile.

use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{anyhow, bail, Context};
use wtls::handshake::{
    AuthMode, Client, ClientConfig, Event, HandshakeKind, Output, StoredSession,
};
use wtls::msgs::common::CipherSuite;
use wtls::probe::{Clock, HandshakeProbe, Message, Operation, Probe, ProbeLevel};
use wtls::suite::Case;

use crate::cli_args::{HandshakeArgs, PackingArgs, PkiArgs};
use crate::client_offer::{self, TrustedIdsArg};
use crate::pcap::PcapWriter;
use crate::setup::{self, Options, ProcessClock};

/// Largest datagram the client reads.
const MAX_DATAGRAM: usize = 65_535;

/// What one handshake over UDP cost.
#[derive(Debug, Clone)]
pub struct ClientRun {
    /// From the ClientHello leaving to the handshake completing at the client.
    pub duration: Duration,
    pub kind: HandshakeKind,
    pub probe: HandshakeProbe,
    pub retransmissions: u32,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub session: Option<StoredSession>,
    /// Every datagram of the handshake in order, as the client's socket saw it.
    pub wire: Vec<WireDatagram>,
}

/// One datagram sent or received by the client, with its time since the ClientHello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireDatagram {
    pub sent: bool,
    pub bytes: usize,
    pub at: Duration,
}

/// Counts datagrams and optionally records them, with the addresses as on the wire.
struct Wire<'a, 'p> {
    sock: &'a UdpSocket,
    peer: SocketAddr,
    local: SocketAddr,
    pcap: Option<&'p mut PcapWriter>,
    sent: u64,
    received: u64,
    bytes_sent: u64,
    bytes_received: u64,
    started: Instant,
    log: Vec<WireDatagram>,
}

fn v4(a: SocketAddr) -> Option<SocketAddrV4> {
    match a {
        SocketAddr::V4(a) => Some(a),
        SocketAddr::V6(_) => None,
    }
}

/// The source address datagrams to `peer` leave from. A socket bound to 0.0.0.0
/// reports that as its address; the kernel's route to `peer` says which one is used, as
/// a connected probe socket shows without sending anything.
pub fn source_address(sock: &UdpSocket, peer: SocketAddr) -> std::io::Result<SocketAddr> {
    let local = sock.local_addr()?;
    if !local.ip().is_unspecified() {
        return Ok(local);
    }
    let probe = UdpSocket::bind(SocketAddr::new(local.ip(), 0))?;
    probe.connect(peer)?;
    Ok(SocketAddr::new(probe.local_addr()?.ip(), local.port()))
}

/// The error for an ICMP port unreachable: nothing listens at `peer`.
fn refused(peer: SocketAddr) -> anyhow::Error {
    anyhow!("{peer} refused the datagram (ECONNREFUSED): nothing listens on that UDP port")
}

impl<'a, 'p> Wire<'a, 'p> {
    fn new(
        sock: &'a UdpSocket,
        peer: SocketAddr,
        pcap: Option<&'p mut PcapWriter>,
    ) -> anyhow::Result<Self> {
        Ok(Wire {
            sock,
            peer,
            local: source_address(sock, peer)?,
            pcap,
            sent: 0,
            received: 0,
            bytes_sent: 0,
            bytes_received: 0,
            started: Instant::now(),
            log: Vec::new(),
        })
    }
}

impl Wire<'_, '_> {
    fn capture(&mut self, src: SocketAddr, dst: SocketAddr, d: &[u8]) -> anyhow::Result<()> {
        if let Some(p) = self.pcap.as_deref_mut() {
            if let (Some(s), Some(t)) = (v4(src), v4(dst)) {
                p.write_udp(SystemTime::now(), s, t, d)?;
            }
        }
        Ok(())
    }

    fn send_all(&mut self, datagrams: &[Vec<u8>]) -> anyhow::Result<()> {
        for d in datagrams {
            match self.sock.send_to(d, self.peer) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Err(refused(self.peer))
                }
                Err(e) => return Err(e).with_context(|| format!("sending to {}", self.peer)),
            }
            self.sent += 1;
            self.bytes_sent += d.len() as u64;
            self.log.push(WireDatagram {
                sent: true,
                bytes: d.len(),
                at: self.started.elapsed(),
            });
            self.capture(self.local, self.peer, d)?;
        }
        Ok(())
    }

    /// One datagram from the peer, or `None` once `until` passed.
    fn recv(&mut self, buf: &mut [u8], until: Instant) -> anyhow::Result<Option<usize>> {
        loop {
            let now = Instant::now();
            if now >= until {
                return Ok(None);
            }
            // A zero read timeout means "block forever": keep at least 1 ms.
            let wait = (until - now).max(Duration::from_millis(1));
            self.sock.set_read_timeout(Some(wait))?;
            match self.sock.recv_from(buf) {
                Ok((n, from)) if from == self.peer => {
                    self.received += 1;
                    self.bytes_received += n as u64;
                    self.log.push(WireDatagram {
                        sent: false,
                        bytes: n,
                        at: self.started.elapsed(),
                    });
                    let d = buf[..n].to_vec();
                    self.capture(self.peer, self.local, &d)?;
                    return Ok(Some(n));
                }
                Ok(_) => continue, // not our gateway: ignore
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    continue
                }
                // A connected socket reports an ICMP port unreachable as ECONNREFUSED on
                // the next call: nothing listens there, and waiting would not change it.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Err(refused(self.peer))
                }
                Err(e) => return Err(e).context("receiving"),
            }
        }
    }
}

/// The instant of an engine deadline on the process clock.
fn instant_of(deadline_ns: u64) -> Instant {
    let now_ns = ProcessClock::shared().wall_ns();
    Instant::now() + Duration::from_nanos(deadline_ns.saturating_sub(now_ns))
}

/// Fails on a fatal event of an engine output.
fn check(out: &Output) -> anyhow::Result<()> {
    for e in &out.events {
        match e {
            Event::AlertReceived(a) if a.level != wtls::msgs::enums::AlertLevel::Warning => {
                bail!("gateway sent alert {}", a.description.name())
            }
            Event::AlertSent(a, reason) if a.level != wtls::msgs::enums::AlertLevel::Warning => {
                bail!("client sent alert {}: {reason}", a.description.name())
            }
            _ => {}
        }
    }
    Ok(())
}

/// What the gateway did before it went quiet, for the "no answer" message: an alert
/// the client could not authenticate (which never ends the handshake, because anyone
/// can forge one) is the likely reason it stopped.
#[derive(Debug, Default)]
struct Silence {
    received: u64,
    /// The last such alert's name and why it was not authenticated.
    unauthenticated_alert: Option<(&'static str, wtls::handshake::UnauthenticatedAlert)>,
}

impl Silence {
    fn note(&mut self, out: &Output) {
        for e in &out.events {
            if let Event::AlertIgnored { alert, why } = e {
                self.unauthenticated_alert = Some((alert.description.name(), *why));
            }
        }
    }

    fn describe(&self, peer: SocketAddr, retransmissions: u32, waited: Duration) -> String {
        let waited = format!(
            "{retransmissions} retransmissions over {:.1} s",
            waited.as_secs_f64()
        );
        match (&self.unauthenticated_alert, self.received) {
            (Some((alert, why)), _) => format!(
                "the gateway {peer} sent {alert} (unauthenticated), then stopped answering \
                 ({waited}; the alert was not acted on: {why})"
            ),
            (None, 0) => format!("no answer from {peer} ({waited})"),
            (None, n) => {
                format!("{peer} stopped answering after {n} datagrams: no answer ({waited})")
            }
        }
    }
}

/// Runs one handshake on `sock` with the gateway at `peer` and returns the client, ready
/// for application data, with what the handshake cost.
pub fn connect(
    sock: &UdpSocket,
    peer: SocketAddr,
    cfg: Arc<ClientConfig>,
    auth: AuthMode,
    resume: Option<StoredSession>,
    pcap: Option<&mut PcapWriter>,
    deadline: Instant,
) -> anyhow::Result<(ClientRun, Client)> {
    let mut wire = Wire::new(sock, peer, pcap)?;
    let probe = Probe::new(ProcessClock::shared(), ProbeLevel::Full);
    let started = wire.started;
    let mut client = Client::new(cfg, auth, resume, probe, setup::now());
    let first = client.start(setup::now())?;
    wire.send_all(&first.datagrams)?;
    let kind = drive_handshake(&mut wire, &mut client, deadline)?;
    let duration = started.elapsed();
    if let Some(p) = wire.pcap.as_deref_mut() {
        p.flush()?;
    }
    let run = ClientRun {
        duration,
        kind,
        probe: client.probe().clone(),
        retransmissions: client.retransmissions(),
        datagrams_sent: wire.sent,
        datagrams_received: wire.received,
        bytes_sent: wire.bytes_sent,
        bytes_received: wire.bytes_received,
        session: client.session(),
        wire: wire.log,
    };
    Ok((run, client))
}

/// The handshake's send loop: every datagram from the gateway goes to the engine, every
/// datagram the engine returns goes out, and the engine's retransmission timer bounds
/// each wait. Ends when the handshake completes, fails, or `deadline` passes.
fn drive_handshake(
    wire: &mut Wire<'_, '_>,
    client: &mut Client,
    deadline: Instant,
) -> anyhow::Result<HandshakeKind> {
    let peer = wire.peer;
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut silence = Silence::default();
    loop {
        let timer = client.deadline_ns().map(instant_of);
        let until = timer.map_or(deadline, |t| t.min(deadline));
        match wire.recv(&mut buf, until)? {
            Some(n) => {
                silence.received += 1;
                let out = client.handle_datagram(&buf[..n], setup::now());
                // An emulated device (client --device) holds its answer for the
                // device's processing time (its `DeviceProfile`; no-op otherwise).
                crate::device::hold_for_device(client.probe());
                silence.note(&out);
                wire.send_all(&out.datagrams)?;
                check(&out)?;
                if let Some(kind) = out.completed() {
                    return Ok(kind);
                }
                if client.is_closed() {
                    bail!("the connection closed during the handshake");
                }
            }
            None if Instant::now() >= deadline => bail!(
                "handshake timed out: {}",
                silence.describe(peer, client.retransmissions(), wire.started.elapsed())
            ),
            // The engine gives up after its last retransmission: that is silence, not a
            // refusal by the gateway, whatever alert the engine would have sent.
            None => match client.on_timeout(setup::now()) {
                Ok(out) => wire.send_all(&out.datagrams)?,
                Err(_) => bail!(
                    "handshake failed: {}",
                    silence.describe(peer, client.retransmissions(), wire.started.elapsed())
                ),
            },
        }
    }
}

/// One handshake (see [`connect`]); the connection is dropped afterwards.
pub fn handshake_once(
    sock: &UdpSocket,
    peer: SocketAddr,
    cfg: Arc<ClientConfig>,
    auth: AuthMode,
    resume: Option<StoredSession>,
    pcap: Option<&mut PcapWriter>,
    deadline: Instant,
) -> anyhow::Result<ClientRun> {
    connect(sock, peer, cfg, auth, resume, pcap, deadline).map(|(run, _)| run)
}

/// Where protected application data goes, and how long to keep asking: the request is
/// sent again every `retry` (it or its answer may be lost) until `deadline`.
struct Exchange<'a, 'p> {
    sock: &'a UdpSocket,
    peer: SocketAddr,
    pcap: Option<&'p mut PcapWriter>,
    retry: Duration,
    deadline: Instant,
}

impl Exchange<'_, '_> {
    /// Sends `data` and hands every application datagram that comes back to `accept`
    /// until it returns a value. Returns the value and the round trip of the attempt
    /// that was answered, or `None` at the deadline.
    fn run<T>(
        &mut self,
        client: &mut Client,
        data: &[u8],
        mut accept: impl FnMut(&[u8]) -> anyhow::Result<Option<T>>,
    ) -> anyhow::Result<Option<(T, Duration)>> {
        let mut buf = vec![0u8; MAX_DATAGRAM];
        while Instant::now() < self.deadline {
            let sealed = client.seal_application_data(data)?;
            let mut wire = Wire::new(self.sock, self.peer, self.pcap.as_deref_mut())?;
            let sent_at = Instant::now();
            wire.send_all(&[sealed])?;
            let until = (sent_at + self.retry).min(self.deadline);
            while let Some(n) = wire.recv(&mut buf, until)? {
                let out = client.handle_datagram(&buf[..n], setup::now());
                check(&out)?;
                for e in &out.events {
                    if let Event::ApplicationData(back) = e {
                        if let Some(v) = accept(back)? {
                            return Ok(Some((v, sent_at.elapsed())));
                        }
                    }
                }
            }
        }
        Ok(None)
    }
}

/// Sends `data` as protected application data and waits for the gateway's echo, sending
/// again every `retry` (the datagram or its echo may be lost). Returns the round trip of
/// the attempt that was answered.
pub fn echo(
    sock: &UdpSocket,
    peer: SocketAddr,
    client: &mut Client,
    data: &[u8],
    pcap: Option<&mut PcapWriter>,
    retry: Duration,
    deadline: Instant,
) -> anyhow::Result<Duration> {
    let mut exchange = Exchange {
        sock,
        peer,
        pcap,
        retry,
        deadline,
    };
    exchange
        .run(client, data, same_as(data))?
        .map(|((), rtt)| rtt)
        .ok_or_else(|| anyhow!("no echo from {peer} before the deadline"))
}

/// Accepts the echo of `data`; anything else is an error.
fn same_as(data: &[u8]) -> impl FnMut(&[u8]) -> anyhow::Result<Option<()>> + '_ {
    move |back| {
        anyhow::ensure!(back == data, "the echo differs from what was sent");
        Ok(Some(()))
    }
}

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
    #[arg(long, value_enum, default_value = "name")]
    pub trusted_ids: TrustedIdsArg,
    /// Keys are refreshed every 2^N records (WTLS key_refresh, 0 to 15).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=15))]
    pub key_refresh: u8,
    /// After each handshake, fetch this URL with a connectionless WSP Get through the
    /// secure channel, instead of the echo, and print the Reply's status, content type
    /// and body size.
    #[arg(long, value_name = "URL", value_parser = parse_wsp_url)]
    pub wsp_get: Option<String>,
    #[command(flatten)]
    pub wap: crate::wap_client::WapArgs,
    /// Emulate this client device (e.g. nokia7650): each flight is held for the device's
    /// processing time; an unknown name lists the profiles.
    #[arg(long)]
    pub device: Option<String>,
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

/// Median and 95th percentile (nearest rank) of durations in ms.
pub fn median_p95_ms(durations: &[Duration]) -> (f64, f64) {
    let ms: Vec<f64> = durations.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    let rank = |p: f64| {
        wtlsperf_models::stats::percentile(&ms, p, wtlsperf_models::stats::Rank::Nearest)
            .unwrap_or(f64::NAN)
    };
    (rank(50.0), rank(95.0))
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

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.wap.no_wtls {
        return crate::wap_client::run_unsecured(&args);
    }
    let case = args.handshake.case;
    // The capture's synthetic headers are IPv4 (see `pcap`).
    anyhow::ensure!(
        args.pcap.is_none() || args.connect.is_ipv4(),
        "--pcap records IPv4 datagrams only, and --connect {} is IPv6",
        args.connect
    );
    let mut cfg = command_config(&args, &case)?;
    let auth = args.handshake.auth;
    let device = crate::device::client_device(args.device.as_deref(), case, auth, &mut cfg)?;
    let cfg = Arc::new(cfg);
    let mut pcap = match &args.pcap {
        Some(path) => Some(PcapWriter::create(path).context("--pcap")?),
        None => None,
    };
    let mut session: Option<StoredSession> = None;
    let mut durations = Vec::new();
    for i in 0..args.count {
        // A fresh socket (so a fresh peer entry at the gateway) per handshake.
        let sock = open_socket(args.connect)?;
        let resume = if args.resume { session.clone() } else { None };
        let pacer = device.clone();
        let deadline = Instant::now()
            + Duration::from_millis(args.timeout_ms)
            + pacer
                .as_ref()
                .map_or(Duration::ZERO, crate::device::retransmit_allowance);
        let (connected, pacer) = crate::device::with_device(pacer, || {
            connect(
                &sock,
                args.connect,
                cfg.clone(),
                auth,
                resume,
                pcap.as_mut(),
                deadline,
            )
        });
        let (run, mut client) = match connected {
            // A gateway serving several CAs picks its certificate by them.
            Err(e) if args.trusted_ids == TrustedIdsArg::None && !args.anonymous => {
                return Err(e.context(
                    "with --trusted-ids none the gateway cannot tell which CA the client trusts",
                ))
            }
            other => other?,
        };
        println!(
            "handshake {} {:?} {} {}: {:.3} ms, {} retransmissions, {} datagrams / {} B sent, {} / {} B received",
            i + 1,
            run.kind,
            case,
            if args.anonymous {
                "anonymous"
            } else {
                auth.name()
            },
            run.duration.as_secs_f64() * 1e3,
            run.retransmissions,
            run.datagrams_sent,
            run.bytes_sent,
            run.datagrams_received,
            run.bytes_received
        );
        print_probe(&run.probe);
        if let Some(path) = &args.wap.keylog {
            crate::wap_client::write_keylog(path, &client)?;
        }
        if let Some(p) = &pacer {
            crate::device::print_emulation(p);
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
        if session.is_none() {
            session = run.session.clone();
        }
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

/// What the command does with a fresh connection: fetch --wsp-get as a WAP browser if
/// given, otherwise one echo; prints the result.
fn after_handshake(
    exchange: &mut Exchange<'_, '_>,
    client: &mut Client,
    args: &Args,
    tid: u16,
) -> anyhow::Result<()> {
    let peer = exchange.peer;
    match args.wsp_get.as_deref() {
        Some(uri) => {
            let socket =
                crate::wap_client::Socket::new(exchange.sock, peer, exchange.pcap.as_deref_mut())?;
            let mut pipe = crate::wap_client::WtlsPipe::new(socket, client);
            let limits = crate::wap_client::Limits {
                retry: exchange.retry,
                deadline: exchange.deadline,
            };
            let page = crate::wap_client::fetch(&mut pipe, args.wap.wsp_mode, uri, tid, limits)?;
            crate::wap_client::print_page(uri, &page);
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
    let mut cfg = if args.anonymous && args.trusted_ids == TrustedIdsArg::None {
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
    cfg.trusted_key_ids = args.trusted_ids.into();
    cfg.key_refresh = args.key_refresh;
    cfg.retransmit_timeout_ns = args.rto_ms * 1_000_000;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p95_by_nearest_rank() {
        let d: Vec<Duration> = (1..=20).map(Duration::from_millis).collect();
        let (m, p) = median_p95_ms(&d);
        assert_eq!(m, 10.0);
        assert_eq!(p, 19.0);
        assert!(median_p95_ms(&[]).0.is_nan());
    }

    #[test]
    fn the_source_address_of_a_wildcard_socket_is_the_routed_one() {
        let wildcard = UdpSocket::bind("0.0.0.0:0").unwrap();
        let port = wildcard.local_addr().unwrap().port();
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let source = source_address(&wildcard, peer).unwrap();
        assert_eq!(source, SocketAddr::from(([127, 0, 0, 1], port)));
        // A socket bound to a specific address reports it unchanged.
        let bound = UdpSocket::bind("127.0.0.2:0").unwrap();
        let local = bound.local_addr().unwrap();
        assert_eq!(source_address(&bound, peer).unwrap(), local);
    }

    #[test]
    fn a_handshake_with_nobody_listening_times_out() {
        let mut cfg = ClientConfig::new(
            vec![wtls::handshake::KeyExchangeOffer {
                suite: Case::parse("160p/160p").unwrap().key_exchange_suite(),
                spec: Case::parse("160p/160p").unwrap().leaf,
                identifier: wtls::msgs::common::Identifier::Null,
            }],
            vec![setup::default_cipher_suite()],
        );
        cfg.retransmit_timeout_ns = 20_000_000;
        // The deadline, not the retransmission budget, must end it however the thread is
        // scheduled (4 retransmissions from 20 ms would otherwise also end near 620 ms).
        cfg.max_retransmissions = u32::MAX;
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        // A bound socket that never answers.
        let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
        let err = handshake_once(
            &sock,
            silent.local_addr().unwrap(),
            Arc::new(cfg),
            AuthMode::ServerAuth,
            None,
            None,
            Instant::now() + Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(err.to_string().contains("no answer from"), "{err}");
        assert!(!err.to_string().contains("handshake_failure"), "{err}");
    }
}
