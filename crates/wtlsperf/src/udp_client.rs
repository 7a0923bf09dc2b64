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

use anyhow::{bail, Context};
use wtls::handshake::{
    AuthMode, Client, ClientConfig, Event, HandshakeKind, Output, StoredSession,
};
use wtls::probe::{Clock, HandshakeProbe, Message, Operation, Probe, ProbeLevel};
use wtls::suite::Case;

use crate::gateway::PackingArg;
use crate::pcap::PcapWriter;
use crate::pki_store::PkiStore;
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
            self.sock
                .send_to(d, self.peer)
                .with_context(|| format!("sending to {}", self.peer))?;
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
                // Loopback reports an ICMP port unreachable as ECONNREFUSED on the next
                // call: the gateway is not (yet) there; let retransmission deal with it.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    std::thread::sleep(Duration::from_millis(1).min(until - now));
                    continue;
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
    let mut wire = Wire {
        sock,
        peer,
        local: sock.local_addr()?,
        pcap,
        sent: 0,
        received: 0,
        bytes_sent: 0,
        bytes_received: 0,
        started: Instant::now(),
        log: Vec::new(),
    };
    let probe = Probe::new(ProcessClock::shared(), ProbeLevel::Full);
    let started = wire.started;
    let mut client = Client::new(cfg, auth, resume, probe, setup::now());
    let first = client.start(setup::now())?;
    wire.send_all(&first.datagrams)?;
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let kind = loop {
        let timer = client.deadline_ns().map(instant_of);
        let until = timer.map_or(deadline, |t| t.min(deadline));
        match wire.recv(&mut buf, until)? {
            Some(n) => {
                let out = client.handle_datagram(&buf[..n], setup::now());
                crate::device::hold_for_device(client.probe());
                wire.send_all(&out.datagrams)?;
                check(&out)?;
                if let Some(kind) = out.completed() {
                    break kind;
                }
                if client.is_closed() {
                    bail!("the connection closed during the handshake");
                }
            }
            None if Instant::now() >= deadline => {
                bail!(
                    "handshake with {peer} timed out after {:?} ({} retransmissions)",
                    started.elapsed(),
                    client.retransmissions()
                )
            }
            None => {
                let out = client
                    .on_timeout(setup::now())
                    .map_err(|e| anyhow::anyhow!("handshake with {peer} failed: {e}"))?;
                wire.send_all(&out.datagrams)?;
            }
        }
    };
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

/// Sends `data` as protected application data and waits for the gateway's echo, sending
/// again every `retry` (the datagram or its echo may be lost). Returns the round trip of
/// the attempt that was answered.
pub fn echo(
    sock: &UdpSocket,
    peer: SocketAddr,
    client: &mut Client,
    data: &[u8],
    mut pcap: Option<&mut PcapWriter>,
    retry: Duration,
    deadline: Instant,
) -> anyhow::Result<Duration> {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let local = sock.local_addr()?;
    while Instant::now() < deadline {
        let sealed = client.seal_application_data(data)?;
        let mut wire = Wire {
            sock,
            peer,
            local,
            pcap: pcap.as_deref_mut(),
            sent: 0,
            received: 0,
            bytes_sent: 0,
            bytes_received: 0,
            started: Instant::now(),
            log: Vec::new(),
        };
        let sent_at = Instant::now();
        wire.send_all(&[sealed])?;
        let until = (sent_at + retry).min(deadline);
        while let Some(n) = wire.recv(&mut buf, until)? {
            let out = client.handle_datagram(&buf[..n], setup::now());
            check(&out)?;
            for e in &out.events {
                if let Event::ApplicationData(back) = e {
                    if back.as_slice() == data {
                        return Ok(sent_at.elapsed());
                    }
                    bail!("the echo differs from what was sent");
                }
            }
        }
    }
    bail!("no echo from {peer} before the deadline")
}

/// `wtlsperf client` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Gateway (or bearer relay) address.
    #[arg(long, default_value = "127.0.0.1:9202")]
    pub connect: SocketAddr,
    /// PKI directory (created if missing; must be the gateway's).
    #[arg(long, default_value = "pki")]
    pub pki: PathBuf,
    /// CA/leaf case, e.g. 256p/256p or rsa1024/rsa1024.
    #[arg(long, default_value = "160p/160p")]
    pub case: String,
    /// server (server-authenticated) or mutual.
    #[arg(long, value_enum, default_value = "server")]
    pub auth: AuthArg,
    /// Handshakes to run.
    #[arg(long, default_value_t = 1)]
    pub count: usize,
    /// After the first full handshake, resume its session (abbreviated handshakes).
    #[arg(long)]
    pub resume: bool,
    /// Write every datagram sent and received to this pcap file.
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// Overall time allowed per handshake.
    #[arg(long, default_value_t = 20_000)]
    pub timeout_ms: u64,
    /// First retransmission timeout (doubles on each retransmission).
    #[arg(long, default_value_t = 1_000)]
    pub rto_ms: u64,
    /// Anonymous key exchange (RSA_anon / ECDH_anon on the leaf's parameters).
    #[arg(long)]
    pub anonymous: bool,
    /// How handshake messages are packed into datagrams.
    #[arg(long, value_enum, default_value = "flight")]
    pub packing: PackingArg,
    /// Emulate this client device (e.g. nokia7650): each flight is held for the device's
    /// processing time; an unknown name lists the profiles.
    #[arg(long)]
    pub device: Option<String>,
}

/// Authentication mode on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthArg {
    Server,
    Mutual,
}

impl From<AuthArg> for AuthMode {
    fn from(a: AuthArg) -> AuthMode {
        match a {
            AuthArg::Server => AuthMode::ServerAuth,
            AuthArg::Mutual => AuthMode::Mutual,
        }
    }
}

/// Median and 95th percentile (nearest rank) of durations in ms.
pub fn median_p95_ms(durations: &[Duration]) -> (f64, f64) {
    if durations.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mut ms: Vec<f64> = durations.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    let rank = |q: f64| ms[((q * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1];
    (rank(0.5), rank(0.95))
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
    let store = PkiStore::load_or_init(&args.pki)
        .with_context(|| format!("PKI in {}", args.pki.display()))?;
    let case = Case::parse(&args.case).map_err(|e| anyhow::anyhow!("--case: {e}"))?;
    let creds = store.case(&case)?;
    let mut opts = Options {
        packing: args.packing.into(),
        ..Options::default()
    };
    if args.anonymous {
        opts.policy = wtls::handshake::Policy::permissive();
    }
    let mut cfg = if args.anonymous {
        setup::anonymous_client_config(&creds, &opts)
    } else {
        setup::client_config(&creds, &opts, false)
    };
    cfg.retransmit_timeout_ns = args.rto_ms.max(1) * 1_000_000;
    let auth: AuthMode = args.auth.into();
    let device = crate::device::client_device(args.device.as_deref(), case, auth, &mut cfg)?;
    let cfg = Arc::new(cfg);
    let mut pcap = args.pcap.as_ref().map(PcapWriter::create).transpose()?;
    let bind: SocketAddr = if args.connect.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let mut session: Option<StoredSession> = None;
    let mut durations = Vec::new();
    for i in 0..args.count.max(1) {
        // A fresh socket (so a fresh peer entry at the gateway) per handshake.
        let sock = UdpSocket::bind(bind)?;
        let resume = if args.resume { session.clone() } else { None };
        let pacer = device.clone();
        let deadline = Instant::now()
            + Duration::from_millis(args.timeout_ms)
            + pacer
                .as_ref()
                .map_or(Duration::ZERO, crate::device::retransmit_allowance);
        let (result, pacer) = crate::device::with_device(pacer, || {
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
        let (run, mut client) = result?;
        println!(
            "handshake {} {:?} {} {}: {:.3} ms, {} retransmissions, {} datagrams / {} B sent, {} / {} B received",
            i + 1,
            run.kind,
            case,
            auth.name(),
            run.duration.as_secs_f64() * 1e3,
            run.retransmissions,
            run.datagrams_sent,
            run.bytes_sent,
            run.datagrams_received,
            run.bytes_received
        );
        print_probe(&run.probe);
        if let Some(p) = &pacer {
            crate::device::print_emulation(p);
        }
        let rtt = echo(
            &sock,
            args.connect,
            &mut client,
            b"wtlsperf echo",
            pcap.as_mut(),
            Duration::from_millis(args.rto_ms.max(1)),
            deadline + Duration::from_millis(args.timeout_ms),
        )?;
        println!("  echo ok in {:.3} ms", rtt.as_secs_f64() * 1e3);
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
        assert!(err.to_string().contains("timed out") || err.to_string().contains("failed"));
    }
}
