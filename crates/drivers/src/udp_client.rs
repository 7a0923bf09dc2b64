//! The UDP client: [`drive::run_handshake`], the one driver of any client handshake
//! over a blocking socket (the engine's retransmission deadline and the caller's overall
//! deadline bound each read; an emulated device's holds), and around it WTLS's own uses:
//! a handshake ready for application data, the echo, a WSP Get.
//!
//! Retransmission timer: the engine sends its last flight again when
//! `ClientConfig::retransmit_timeout_ns` passes without an answer, doubling it each time.
//! The first timeout must exceed one round trip plus the gateway's processing of the
//! flight, or every handshake pays a spurious retransmission (and the measured duration
//! is no longer the protocol's). On loopback the default of 1 s is ~100x the slowest
//! (RSA-2048 mutual, debug build) flight; over an emulated bearer
//! [`crate::registry::wtls::bearer_retransmit_timeout`] derives it from the link profile.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use wtls::handshake::{
    AuthMode, Client, ClientConfig, Event, HandshakeKind, ProtocolError, StoredSession,
};
use wtls::probe::{HandshakeProbe, Probe, ProbeLevel};
use wtlsperf_spine::{Handshake, Now, ProtocolId, Role, Status, Step};

use crate::pcap::PcapWriter;
use crate::setup::{self, ProcessClock};
use crate::wire_log::WireDatagram;
use wtlsperf_models::device::ClientSteps;

pub mod drive;

use drive::Wire;

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
    /// Time an emulated device held the client's flights beyond the real computation.
    pub held: Duration,
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

/// The WTLS client as the UDP driver runs it: the engine's client, remembering the last
/// alert it could not authenticate. Such an alert never ends a handshake (anyone can
/// forge one), but when the gateway then goes quiet it is the likely reason, and the
/// "no answer" message names it.
pub struct WtlsUdpClient {
    client: Client,
    /// The last unauthenticated alert's name and why it was not acted on.
    ignored_alert: Option<(&'static str, wtls::handshake::UnauthenticatedAlert)>,
}

impl WtlsUdpClient {
    pub fn new(client: Client) -> Self {
        WtlsUdpClient {
            client,
            ignored_alert: None,
        }
    }

    pub fn into_inner(self) -> Client {
        self.client
    }

    /// What the client knows about a gateway that went quiet.
    fn explain(&self, peer: SocketAddr) -> Option<String> {
        self.ignored_alert.map(|(alert, why)| {
            format!(
                "the gateway {peer} sent {alert} (unauthenticated), then stopped answering \
                 (the alert was not acted on: {why})"
            )
        })
    }
}

impl Handshake for WtlsUdpClient {
    type Negotiated = <Client as Handshake>::Negotiated;
    type Error = ProtocolError;
    type Records = HandshakeProbe;

    fn protocol(&self) -> ProtocolId {
        wtls::handshake::WTLS
    }
    fn role(&self) -> Role {
        Role::Client
    }
    fn start(&mut self, now: Now) -> Step {
        Handshake::start(&mut self.client, now)
    }
    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        let out = self.client.handle_datagram(datagram, now);
        for e in &out.events {
            if let Event::AlertIgnored { alert, why } = e {
                self.ignored_alert = Some((alert.description.name(), *why));
            }
        }
        let dropped = out.datagrams.is_empty()
            && out
                .events
                .iter()
                .any(|e| matches!(e, Event::Dropped(_) | Event::AlertIgnored { .. }));
        Step {
            datagrams: out.datagrams,
            dropped,
        }
    }
    fn deadline(&self) -> Option<u64> {
        Handshake::deadline(&self.client)
    }
    fn handle_timeout(&mut self, now: Now) -> Step {
        Handshake::handle_timeout(&mut self.client, now)
    }
    fn delay_timers(&mut self, by_ns: u64) {
        Handshake::delay_timers(&mut self.client, by_ns)
    }
    fn status(&self) -> Status<Self::Negotiated, ProtocolError> {
        Handshake::status(&self.client)
    }
    fn retransmissions(&self) -> u32 {
        Handshake::retransmissions(&self.client)
    }
    fn take_records(&mut self) -> HandshakeProbe {
        Handshake::take_records(&mut self.client)
    }
    fn exposes_message_timing(&self) -> bool {
        true
    }
}

/// Runs one handshake of `client` on `sock` with the gateway at `peer`, its flights held
/// to an emulated device's `steps` if given, and returns the client, ready for
/// application data, with what the handshake cost.
pub fn connect_client(
    sock: &UdpSocket,
    peer: SocketAddr,
    client: Client,
    steps: Option<&ClientSteps>,
    pcap: Option<&mut PcapWriter>,
    deadline: Instant,
) -> anyhow::Result<(ClientRun, Client)> {
    let mut client = WtlsUdpClient::new(client);
    let explain = move |c: &WtlsUdpClient| c.explain(peer);
    let run = drive::run_handshake(sock, peer, &mut client, steps, pcap, deadline, &explain)?;
    let client = client.into_inner();
    let kind = match Handshake::status(&client) {
        Status::Complete(n) => n.kind,
        _ => bail!("the handshake ended without completing"),
    };
    let run = ClientRun {
        duration: run.duration,
        kind,
        probe: run.records,
        retransmissions: run.retransmissions,
        datagrams_sent: run.datagrams_sent,
        datagrams_received: run.datagrams_received,
        bytes_sent: run.bytes_sent,
        bytes_received: run.bytes_received,
        session: client.session(),
        wire: run.wire,
        held: run.held,
    };
    Ok((run, client))
}

/// A client of `cfg` with the full probe (per-message timing on the process clock).
pub fn probed_client(
    cfg: Arc<ClientConfig>,
    auth: AuthMode,
    resume: Option<StoredSession>,
) -> Client {
    let probe = Probe::new(ProcessClock::shared(), ProbeLevel::Full);
    Client::new(cfg, auth, resume, probe, setup::now())
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
    let client = probed_client(cfg, auth, resume);
    connect_client(sock, peer, client, None, pcap, deadline)
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

/// Fails on a fatal alert either way in an engine output.
fn check(out: &wtls::handshake::Output) -> anyhow::Result<()> {
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

/// Where protected application data goes, and how long to keep asking: the request is
/// sent again every `retry` (it or its answer may be lost) until `deadline`.
pub struct Exchange<'a, 'p> {
    pub sock: &'a UdpSocket,
    pub peer: SocketAddr,
    pub pcap: Option<&'p mut PcapWriter>,
    pub retry: Duration,
    pub deadline: Instant,
}

impl Exchange<'_, '_> {
    /// Sends `data` and hands every application datagram that comes back to `accept`
    /// until it returns a value. Returns the value and the round trip of the attempt
    /// that was answered, or `None` at the deadline.
    pub fn run<T>(
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
pub fn same_as(data: &[u8]) -> impl FnMut(&[u8]) -> anyhow::Result<Option<()>> + '_ {
    move |back| {
        anyhow::ensure!(back == data, "the echo differs from what was sent");
        Ok(Some(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtls::suite::Case;

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
