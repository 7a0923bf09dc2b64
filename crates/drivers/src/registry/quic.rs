//! QUIC v1 (RFC 9000, with TLS 1.3 as RFC 9001 maps it) through quinn-proto and rustls,
//! on the handshake spine ([`Handshake`]). Built with the `quic` cargo feature (which
//! `dtls13` turns on): its post-quantum key exchange needs AWS-LC.
//!
//! quinn-proto is sans IO as the spine is: the caller passes every datagram and the
//! time, and the connection says what to send and when it next wants to be woken. The
//! adapter turns the caller's monotonic nanoseconds into `Instant`s from an origin taken
//! at construction, so a run under the spine's virtual time never waits, and it answers
//! the wall clock rustls and quinn-proto ask for (certificate validity, token dates) from
//! the caller's Unix seconds.
//!
//! Why these settings:
//! * Key exchange: one TLS named group per configuration, and exactly that key share in
//!   the ClientHello (no HelloRetryRequest): X25519 (what QUIC stacks offer first),
//!   X25519MLKEM768 (draft-ietf-tls-ecdhe-mlkem, rustls' aws-lc-rs provider), and the
//!   P-256 pair of each (secp256r1, SecP256r1MLKEM768), which the device profiles can
//!   price: they publish no X25519 cost.
//! * Certificates: the same small P-256 chain as the DTLS rows ([`P256Pki`]), ECDSA with
//!   SHA-256, or the bench's ML-DSA-44 chain of the same shape
//!   ([`MlDsaPki`](crate::protocols::ml_dsa::MlDsaPki), FIPS 204), which rustls'
//!   aws-lc-rs provider verifies and signs (`mldsa44`, draft-ietf-tls-mldsa); the leaf
//!   alone goes on the wire; server-authenticated, or mutual. An ML-DSA-44 server flight
//!   (a 1312-byte key and two 2420-byte signatures) is larger than three times the
//!   client's Initial, so it waits for the client's address validation (below).
//! * AEAD: TLS_AES_128_GCM_SHA256, the suite QUIC's Initial packets use anyway (RFC 9001
//!   section 5.2). The DTLS rows' AES-128-CCM-8 is not allowed in QUIC (section 5.3).
//! * No session tickets and no NEW_TOKEN: a first contact, as the other rows. No Retry
//!   either: the server validates the client's address by its Handshake packet, and
//!   until then sends at most three times what it received (RFC 9000 section 8.1; quinn-
//!   proto lets the last datagram pass that by less than one datagram), which is what
//!   QUIC pays on a slow bearer instead of the DTLS rows' cookie round trip.
//! * Datagrams: at most 1200 bytes, QUIC's smallest allowed maximum (RFC 9000 section
//!   14), and no path MTU discovery (its probes would follow the handshake). A bearer
//!   whose MTU is below 1228 bytes (with IPv4 and UDP) cannot carry QUIC unfragmented.
//!   The client pads every datagram that carries an Initial packet to 1200 bytes, even
//!   one that only acknowledges; the server pads those with an ack-eliciting Initial
//!   (section 14.1).
//! * ALPN `wtlsperf`: QUIC requires an application protocol (RFC 9001 section 8.1).
//! * Complete: for the client, the handshake is confirmed (HANDSHAKE_DONE received,
//!   RFC 9001 section 4.1.2); for the server, the TLS handshake is complete. No
//!   application data is exchanged.
//!
//! Retransmission is QUIC's own (RFC 9002): a probe timeout from the RTT estimate, which
//! starts at [`INITIAL_RTT`], doubling on every expiry. RFC 9002 sets no count of probes
//! after which to give up; the idle timeout does (RFC 9000 section 10.1), here
//! [`HANDSHAKE_TIMEOUT`], so a handshake on a lossy link ends by itself.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use quinn_proto::{
    ClientConfig, ConnectError, Connection, ConnectionError, ConnectionHandle, DatagramEvent,
    Endpoint, Event, VarInt,
};
use wtlsperf_spine::{Failure, Handshake, Now, ProtocolId, Role, Status, Step};

use crate::protocols::dtls::P256Pki;

mod config;
mod entry;
mod pricing;
mod raw;
mod suite;

pub use config::QuicConfig;
use config::CALLER_UNIX_SECS;
pub use entry::Quic;
pub use pricing::{client_messages, client_ms, client_ops, client_steps, ClientOps};
pub use suite::{Group, QuicSuite, Signature};

/// QUIC's identity on the bench: after DTLS 1.3 in reports, `quic` in every CSV.
pub const QUIC: ProtocolId = ProtocolId::new(4, NAME);

/// The name of the protocol in tables, CSV and on the command line.
pub const NAME: &str = "quic";

/// kInitialRtt, the RTT assumed before the first sample (RFC 9002 section 6.2.2): the
/// first probe timeout is 333 ms + 4 x 166.5 ms = 999 ms (section 6.2.1; no ack delay
/// in the Initial and Handshake spaces).
pub const INITIAL_RTT: Duration = Duration::from_millis(333);

/// kPacketThreshold (RFC 9002 section 6.1.1).
pub const PACKET_THRESHOLD: u32 = 3;

/// kTimeThreshold, 9/8 of the RTT (RFC 9002 section 6.1.2).
pub const TIME_THRESHOLD: f32 = 9.0 / 8.0;

/// The idle timeout both sides advertise (RFC 9000 section 10.1), which bounds a
/// handshake that hears nothing: with the probe timeout doubling from 999 ms, a client
/// that hears nothing probes five times (at 1, 3, 7, 15 and 31 s), two datagrams each
/// (RFC 9002 section 6.2.4), then gives up at 60 s. quinn-proto raises it to three probe
/// timeouts if that is longer (RFC 9000 section 10.1).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// QUIC's smallest allowed maximum datagram payload (RFC 9000 section 14): the largest
/// datagram here, and what every datagram with a client's Initial packet is padded to
/// (section 14.1).
pub const MIN_DATAGRAM: u16 = 1200;

/// The application protocol both sides name in ALPN.
const ALPN: &[u8] = b"wtlsperf";

/// The name the client asks for; the server leaf of [`P256Pki`] carries it.
const SERVER_NAME: &str = "localhost";

/// The addresses each side gives quinn-proto for its peer. They never reach a socket:
/// a driver carries the datagrams, and a side has exactly one peer.
const SERVER_ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 4433);
const CLIENT_ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 5683);

/// Why a QUIC handshake failed, in quinn-proto's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuicError {
    /// The client could not begin (before anything was sent).
    Connect(ConnectError),
    /// The connection was lost, as `server` or client saw it.
    Lost {
        server: bool,
        reason: ConnectionError,
    },
}

impl fmt::Display for QuicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuicError::Connect(e) => write!(f, "QUIC client cannot connect: {e}"),
            QuicError::Lost { server, reason } => {
                let who = if *server { "server" } else { "client" };
                write!(f, "QUIC {who}: {reason}")
            }
        }
    }
}

/// One side of one QUIC handshake: a quinn-proto endpoint and its one connection.
pub struct QuicEndpoint {
    suite: QuicSuite,
    endpoint: Endpoint,
    /// The client's configuration until it connects; `None` for a server.
    connect: Option<ClientConfig>,
    is_server: bool,
    conn: Option<(ConnectionHandle, Connection)>,
    /// The connection's next timer, read after every call into it.
    timeout: Option<Instant>,
    /// `Instant` of the caller's monotonic zero.
    origin: Instant,
    /// How far quinn-proto's clock runs behind the caller's: the flights held by
    /// [`Handshake::delay_timers`], so their timers start when they leave.
    lag_ns: u64,
    /// The latest time given to quinn-proto, which never goes back.
    last: Instant,
    complete: bool,
    failed: Option<Failure<QuicError>>,
    retransmissions: u32,
    /// A client that closes its connection once confirmed ([`QuicConfig::closing`]).
    close_once_confirmed: bool,
}

impl QuicEndpoint {
    fn new(suite: QuicSuite, endpoint: Endpoint, connect: Option<ClientConfig>) -> QuicEndpoint {
        let origin = Instant::now();
        QuicEndpoint {
            suite,
            endpoint,
            is_server: connect.is_none(),
            connect,
            conn: None,
            timeout: None,
            origin,
            lag_ns: 0,
            last: origin,
            complete: false,
            failed: None,
            retransmissions: 0,
            close_once_confirmed: false,
        }
    }

    /// The caller's `now` as quinn-proto's `Instant`; the caller's Unix seconds become
    /// the wall clock of this thread's call.
    fn instant(&mut self, now: Now) -> Instant {
        CALLER_UNIX_SECS.set(Some(now.unix_secs));
        let t = self.origin + Duration::from_nanos(now.mono_ns.saturating_sub(self.lag_ns));
        self.last = self.last.max(t);
        self.last
    }

    fn peer(&self) -> SocketAddr {
        if self.is_server {
            CLIENT_ADDR
        } else {
            SERVER_ADDR
        }
    }

    /// Everything the connection has to say at `t`: events to and from the endpoint,
    /// datagrams (one per transmit), then whether it completed or was lost; a closing
    /// client's CONNECTION_CLOSE once it is confirmed.
    fn pump(&mut self, t: Instant) -> Vec<Vec<u8>> {
        let mut out = self.transmits(t);
        let Some((_, conn)) = self.conn.as_mut() else {
            return out;
        };
        while let Some(ev) = conn.poll() {
            match ev {
                Event::ConnectionLost { reason } if !self.complete => {
                    let f = failure(reason, self.is_server, self.retransmissions);
                    self.failed.get_or_insert(f);
                }
                _ => {}
            }
        }
        if !self.complete && self.failed.is_none() && !conn.is_handshaking() {
            // The client waits for the server's HANDSHAKE_DONE (its confirmation).
            self.complete = self.is_server || conn.stats().frame_rx.handshake_done > 0;
            if self.complete && !self.is_server && self.close_once_confirmed {
                conn.close(t, VarInt::from_u32(0), Bytes::new());
                out.extend(self.transmits(t));
            }
        }
        if let Some((_, conn)) = self.conn.as_mut() {
            self.timeout = conn.poll_timeout();
        }
        out
    }

    /// The connection's events to and from the endpoint and its datagrams (one per
    /// transmit), until it has nothing more to say at `t`.
    fn transmits(&mut self, t: Instant) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let Some((ch, conn)) = self.conn.as_mut() else {
            return out;
        };
        let mut buf = Vec::new();
        loop {
            let mut busy = false;
            while let Some(ev) = conn.poll_endpoint_events() {
                busy = true;
                if let Some(back) = self.endpoint.handle_event(*ch, ev) {
                    conn.handle_event(back);
                }
            }
            buf.clear();
            while let Some(tx) = conn.poll_transmit(t, 1, &mut buf) {
                busy = true;
                out.push(buf[..tx.size.min(buf.len())].to_vec());
                buf.clear();
            }
            if !busy {
                break;
            }
        }
        out
    }

    /// Takes one datagram from the peer through the endpoint.
    fn receive(&mut self, datagram: &[u8], t: Instant) -> Step {
        let mut buf = Vec::new();
        let event = self.endpoint.handle(
            t,
            self.peer(),
            None,
            None,
            BytesMut::from(datagram),
            &mut buf,
        );
        let mut out = Vec::new();
        match event {
            None => return Step::dropped(),
            // A version negotiation or stateless reset: the endpoint's own answer.
            Some(DatagramEvent::Response(tx)) => out.push(buf[..tx.size.min(buf.len())].to_vec()),
            Some(DatagramEvent::NewConnection(incoming)) => {
                if self.conn.is_some() || !self.is_server {
                    self.endpoint.ignore(incoming);
                    return Step::dropped();
                }
                match self.endpoint.accept(incoming, t, &mut buf, None) {
                    Ok(conn) => self.conn = Some(conn),
                    // A first Initial that does not open a connection (one that fails
                    // its AEAD check, RFC 9001 section 5.2, or that the endpoint
                    // refuses) leaves the server waiting for another, as a lost one
                    // would; a refusal's CONNECTION_CLOSE goes out.
                    Err(e) => {
                        tracing::debug!(cause = %e.cause, "QUIC server: first Initial not accepted");
                        return match e.response {
                            Some(tx) => Step::send(vec![buf[..tx.size.min(buf.len())].to_vec()]),
                            None => Step::dropped(),
                        };
                    }
                }
            }
            Some(DatagramEvent::ConnectionEvent(ch, ev)) => match self.conn.as_mut() {
                Some((mine, conn)) if *mine == ch => conn.handle_event(ev),
                _ => return Step::dropped(),
            },
        }
        out.extend(self.pump(t));
        Step::send(out)
    }
}

/// A lost connection as the spine's failure: a silent peer is a time-out; a close the
/// peer sent is the peer's; anything else is ours.
fn failure(reason: ConnectionError, server: bool, retransmissions: u32) -> Failure<QuicError> {
    let kind = reason.clone();
    let e = QuicError::Lost { server, reason };
    match kind {
        ConnectionError::TimedOut => Failure::TimedOut { retransmissions },
        ConnectionError::ConnectionClosed(_)
        | ConnectionError::ApplicationClosed(_)
        | ConnectionError::Reset
        | ConnectionError::VersionMismatch => Failure::Peer(e),
        ConnectionError::TransportError(_)
        | ConnectionError::LocallyClosed
        | ConnectionError::CidsExhausted => Failure::Local(e),
    }
}

impl Handshake for QuicEndpoint {
    /// The configured suite (each side offers exactly one group).
    type Negotiated = QuicSuite;
    type Error = QuicError;
    /// quinn-proto handles a whole datagram in one call: no per-message timing.
    type Records = ();

    fn protocol(&self) -> ProtocolId {
        QUIC
    }

    fn role(&self) -> Role {
        if self.is_server {
            Role::Server
        } else {
            Role::Client
        }
    }

    fn start(&mut self, now: Now) -> Step {
        let Some(config) = self.connect.take() else {
            return Step::default();
        };
        let t = self.instant(now);
        match self.endpoint.connect(t, config, SERVER_ADDR, SERVER_NAME) {
            Ok(conn) => self.conn = Some(conn),
            Err(e) => {
                self.failed = Some(Failure::Local(QuicError::Connect(e)));
                return Step::default();
            }
        }
        Step::send(self.pump(t))
    }

    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        if self.failed.is_some() {
            return Step::dropped();
        }
        let t = self.instant(now);
        self.receive(datagram, t)
    }

    /// None for a confirmed client, and for a completed server whose client closed the
    /// connection: draining, it sends nothing more (RFC 9000 section 10.2.2), and the
    /// gateway forgets it at its idle time-out without waking it again.
    fn deadline(&self) -> Option<u64> {
        let closed = self.conn.as_ref().is_some_and(|(_, c)| c.is_closed());
        if self.failed.is_some() || (self.complete && (!self.is_server || closed)) {
            return None;
        }
        let due = self.timeout?;
        let ns = u64::try_from(due.saturating_duration_since(self.origin).as_nanos())
            .unwrap_or(u64::MAX);
        Some(ns.saturating_add(self.lag_ns))
    }

    fn handle_timeout(&mut self, now: Now) -> Step {
        if self.failed.is_some() {
            return Step::default();
        }
        let t = self.instant(now);
        let Some((_, conn)) = self.conn.as_mut() else {
            return Step::default();
        };
        conn.handle_timeout(t);
        let was_complete = self.complete;
        let out = self.pump(t);
        if !was_complete {
            self.retransmissions += out.len() as u32;
        }
        if let Some(Failure::TimedOut { retransmissions }) = self.failed.as_mut() {
            *retransmissions = self.retransmissions;
        }
        Step::send(out)
    }

    fn delay_timers(&mut self, by_ns: u64) {
        self.lag_ns = self.lag_ns.saturating_add(by_ns);
    }

    fn status(&self) -> Status<QuicSuite, QuicError> {
        match (&self.failed, self.complete) {
            (_, true) => Status::Complete(self.suite),
            (Some(f), false) => Status::Failed(f.clone()),
            (None, false) => Status::Running,
        }
    }

    fn retransmissions(&self) -> u32 {
        self.retransmissions
    }
}

#[cfg(test)]
mod tests;
