//! The one UDP client driver: any client [`Handshake`] over one blocking socket, its
//! retransmission deadline bounding each wait, with an emulated device's holds.
//!
//! Device emulation ([`ClientSteps`]): the real computation runs on this machine, then
//! the driver holds the flight until the device's time for that step has passed since
//! the step began, and tells the handshake ([`Handshake::delay_timers`]) that the flight
//! left that much later, so its retransmission timer starts when the flight leaves.

use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{anyhow, bail, Context};
use wtls::probe::Clock;
use wtlsperf_spine::{Failure, Handshake, Status};

use super::{source_address, MAX_DATAGRAM};
use crate::pcap::PcapWriter;
use crate::setup::{self, ProcessClock};
use crate::wire_log::WireDatagram;
use wtlsperf_models::device::ClientSteps;

/// What one handshake over UDP cost, whatever the protocol.
#[derive(Debug, Clone)]
pub struct HandshakeRun<R> {
    /// From the first flight's computation to the handshake completing at the client.
    pub duration: Duration,
    pub retransmissions: u32,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Every datagram of the handshake in order, as the client's socket saw it.
    pub wire: Vec<WireDatagram>,
    /// The handshake's per-message records (empty where the protocol has none).
    pub records: R,
    /// Time the emulated device held flights beyond the real computation.
    pub held: Duration,
}

/// Counts datagrams and optionally records them, with the addresses as on the wire.
pub(super) struct Wire<'a, 'p> {
    sock: &'a UdpSocket,
    pub(super) peer: SocketAddr,
    local: SocketAddr,
    pub(super) pcap: Option<&'p mut PcapWriter>,
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

/// The error for an ICMP port unreachable: nothing listens at `peer`.
fn refused(peer: SocketAddr) -> anyhow::Error {
    anyhow!("{peer} refused the datagram (ECONNREFUSED): nothing listens on that UDP port")
}

impl<'a, 'p> Wire<'a, 'p> {
    pub(super) fn new(
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

    pub(super) fn send_all(&mut self, datagrams: &[Vec<u8>]) -> anyhow::Result<()> {
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
                up: true,
                bytes: d.len(),
                at: self.started.elapsed(),
            });
            self.capture(self.local, self.peer, d)?;
        }
        Ok(())
    }

    /// One datagram from the peer, or `None` once `until` passed.
    pub(super) fn recv(&mut self, buf: &mut [u8], until: Instant) -> anyhow::Result<Option<usize>> {
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
                        up: false,
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

/// The instant of a handshake deadline on the process clock.
fn instant_of(deadline_ns: u64) -> Instant {
    let now_ns = ProcessClock::shared().wall_ns();
    Instant::now() + Duration::from_nanos(deadline_ns.saturating_sub(now_ns))
}

/// How the peer went quiet, for the "no answer" message.
struct Silence {
    peer: SocketAddr,
    received: u64,
    started: Instant,
}

impl Silence {
    fn describe(&self, retransmissions: u32, why: Option<String>) -> String {
        let peer = self.peer;
        let waited = format!(
            "{retransmissions} retransmissions over {:.1} s",
            self.started.elapsed().as_secs_f64()
        );
        match (why, self.received) {
            (Some(why), _) => format!("{why} ({waited})"),
            (None, 0) => format!("no answer from {peer} ({waited})"),
            (None, n) => {
                format!("{peer} stopped answering after {n} datagrams: no answer ({waited})")
            }
        }
    }
}

/// The driver's state for one handshake.
pub struct Driver<'w, 'a, 'p, H> {
    wire: &'w mut Wire<'a, 'p>,
    handshake: &'w mut H,
    steps: Option<&'w ClientSteps>,
    flights_sent: usize,
    held: Duration,
    /// What the handshake's last dropped input says about the peer's silence (a
    /// protocol's own words, e.g. WTLS's unauthenticated alert), if anything.
    explain: &'w dyn Fn(&H) -> Option<String>,
}

impl<H: Handshake> Driver<'_, '_, '_, H> {
    /// Holds a computed step until the device's time for it has passed since `began`;
    /// the flight's retransmission timer then starts as it leaves.
    fn hold(&mut self, began: Instant, device_ms: Option<f64>) {
        let Some(ms) = device_ms else { return };
        let due = began + Duration::from_secs_f64(ms.max(0.0) / 1e3);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
            self.held += due - now;
            self.handshake
                .delay_timers(u64::try_from((due - now).as_nanos()).unwrap_or(u64::MAX));
        }
    }

    /// Sends a flight; a fresh one (not a retransmission) is held for the device's time
    /// of the next client step first.
    fn send(&mut self, datagrams: &[Vec<u8>], began: Instant, fresh: bool) -> anyhow::Result<()> {
        if datagrams.is_empty() {
            return Ok(());
        }
        if fresh {
            let device = self
                .steps
                .and_then(|s| s.flights.get(self.flights_sent).copied());
            self.hold(began, device);
            self.flights_sent += 1;
        }
        self.wire.send_all(datagrams)
    }

    fn failed(&self, f: Failure<H::Error>, silence: &Silence) -> anyhow::Error {
        let why = (self.explain)(self.handshake);
        match f {
            Failure::TimedOut { retransmissions } => {
                anyhow!(
                    "handshake failed: {}",
                    silence.describe(retransmissions, why)
                )
            }
            Failure::Peer(e) => anyhow!("{} ended the handshake: {e}", silence.peer),
            Failure::Local(e) => anyhow!("the client ended the handshake: {e}"),
        }
    }

    /// The handshake's loop: every datagram from the peer goes to the handshake, every
    /// flight it returns goes out (held on a device), and its deadline bounds each wait.
    /// Ends when it completes, fails, or `deadline` passes.
    fn run(&mut self, deadline: Instant) -> anyhow::Result<()> {
        let mut silence = Silence {
            peer: self.wire.peer,
            received: 0,
            started: self.wire.started,
        };
        let began = Instant::now();
        let first = self.handshake.start(setup::now());
        self.send(&first.datagrams, began, true)?;
        let mut buf = vec![0u8; MAX_DATAGRAM];
        loop {
            match self.handshake.status() {
                Status::Complete(_) => return Ok(()),
                Status::Failed(f) => return Err(self.failed(f, &silence)),
                Status::Running => {}
            }
            let timer = self.handshake.deadline().map(instant_of);
            let until = timer.map_or(deadline, |t| t.min(deadline));
            match self.wire.recv(&mut buf, until)? {
                Some(n) => {
                    silence.received += 1;
                    let began = Instant::now();
                    let step = self.handshake.handle_datagram(&buf[..n], setup::now());
                    if self.handshake.status().is_complete() {
                        self.hold(began, self.steps.map(|s| s.finish));
                    }
                    self.send(&step.datagrams, began, true)?;
                }
                None if Instant::now() >= deadline => bail!(
                    "handshake timed out: {}",
                    silence.describe(
                        self.handshake.retransmissions(),
                        (self.explain)(self.handshake)
                    )
                ),
                None => {
                    let step = self.handshake.handle_timeout(setup::now());
                    self.send(&step.datagrams, Instant::now(), false)?;
                }
            }
        }
    }
}

/// Runs one handshake of `handshake` with the peer at `peer` on `sock`, its client steps
/// held to an emulated device's `steps` if given, until it completes, fails or
/// `deadline` passes. `explain` names what the protocol knows about a silent peer.
pub fn run_handshake<H: Handshake>(
    sock: &UdpSocket,
    peer: SocketAddr,
    handshake: &mut H,
    steps: Option<&ClientSteps>,
    pcap: Option<&mut PcapWriter>,
    deadline: Instant,
    explain: &dyn Fn(&H) -> Option<String>,
) -> anyhow::Result<HandshakeRun<H::Records>> {
    let mut wire = Wire::new(sock, peer, pcap)?;
    let started = wire.started;
    let mut driver = Driver {
        wire: &mut wire,
        handshake,
        steps,
        flights_sent: 0,
        held: Duration::ZERO,
        explain,
    };
    driver.run(deadline)?;
    let held = driver.held;
    let duration = started.elapsed();
    if let Some(p) = wire.pcap.as_deref_mut() {
        p.flush()?;
    }
    Ok(HandshakeRun {
        duration,
        retransmissions: handshake.retransmissions(),
        datagrams_sent: wire.sent,
        datagrams_received: wire.received,
        bytes_sent: wire.bytes_sent,
        bytes_received: wire.bytes_received,
        wire: wire.log,
        records: handshake.take_records(),
        held,
    })
}
