//! The WTLS handshake as two sans-IO state machines: datagrams in, datagrams out.
//!
//! [`client::Client`] and [`server::ServerConnection`] own no socket, timer or clock.
//! The caller passes the time ([`Now`]) with every input, asks the client when its
//! retransmission timer is due, and moves the returned datagrams. That is what lets the
//! in-memory runner, the UDP gateway and the load generator share one implementation.
//!
//! Flows (wire-format notes §9; thesis Tables 3.5 and 3.7):
//! - full server-authenticated, RSA and ECDH_ECDSA;
//! - full mutual, RSA (client Certificate, ClientKeyExchange, CertificateVerify) and
//!   ECDH_ECDSA (client Certificate only: both sides derive the pre-master secret from
//!   the two certified ECDH keys);
//! - anonymous RSA_anon and ECDH_anon (ServerKeyExchange);
//! - abbreviated (session resume);
//! - optimised ECDH_ECDSA: the server takes the client's certificate from its own store
//!   and answers ServerHello, Certificate, ChangeCipherSpec, Finished.

pub mod cache;
pub mod client;
mod conn;
pub mod error;
mod record_layer;
pub mod server;
mod spine;

use crate::msgs::alert::Alert;
use crate::msgs::enums::{
    AlertDescription, AlertLevel, BulkCipherAlgorithm, KeyExchangeSuite, MacAlgorithm,
};

pub use crate::params::ParameterNumbering;
pub use cache::{SessionCache, SessionStore, StoredSession};
pub use client::{Client, ClientConfig, KeyExchangeOffer, KeyShareSource, TimedOut, TrustedKeyIds};
pub use conn::Role;
pub use error::{
    DropReason, HandshakeState, LocalError, PeerMisbehaved, ProtocolError, UnauthenticatedAlert,
};
pub use server::{Datagram, ServerConfig, ServerConnection, ServerCredential};
pub use spine::{Negotiated, WTLS};
/// The time as the caller sees it (the spine's: every protocol shares it).
pub use wtlsperf_spine::Now;

/// Whether the client authenticates too (the thesis' two modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AuthMode {
    ServerAuth,
    Mutual,
}

impl AuthMode {
    pub fn name(self) -> &'static str {
        match self {
            AuthMode::ServerAuth => "server",
            AuthMode::Mutual => "mutual",
        }
    }

    /// The thesis' letter in the probe names (`T_M_...` / `T_S_...`).
    pub fn letter(self) -> char {
        match self {
            AuthMode::ServerAuth => 'S',
            AuthMode::Mutual => 'M',
        }
    }
}

/// Which handshake shape completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandshakeKind {
    Full,
    Abbreviated,
    Optimised,
}

/// How the handshake messages are packed into datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Packing {
    /// Each flight in one datagram (the default, as real stacks do).
    #[default]
    FlightPerDatagram,
    /// One record per datagram: the unit of the thesis' queue and transmission models.
    MessagePerDatagram,
}

/// Which cipher suites a side accepts. WTLS has well-known weaknesses (Saarinen 2001):
/// export ciphers, truncated and XOR MACs, NULL encryption and anonymous key exchange
/// are refused unless explicitly enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    pub allow_weak_ciphers: bool,
    pub allow_anonymous: bool,
}

impl Policy {
    /// Everything enabled: what the evaluation uses to measure every suite.
    pub fn permissive() -> Self {
        Policy {
            allow_weak_ciphers: true,
            allow_anonymous: true,
        }
    }

    pub fn accepts_cipher(&self, bulk: BulkCipherAlgorithm, mac: MacAlgorithm) -> bool {
        self.allow_weak_ciphers || crate::record::is_weak(bulk, mac).is_none()
    }
}

/// Something the caller should know about, besides the datagrams to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The handshake finished; application data may flow.
    HandshakeComplete(HandshakeKind),
    /// Decrypted application data from the peer.
    ApplicationData(Vec<u8>),
    /// The peer sent an alert.
    AlertReceived(Alert),
    /// We sent an alert, for the failure it names; with a critical or fatal level the
    /// connection is closed.
    AlertSent(Alert, ProtocolError),
    /// A record or datagram was dropped without an answer (stale, replayed, unreadable).
    Dropped(DropReason),
    /// The peer's address sent an alert we cannot authenticate (its checksum matches
    /// none of our records, e.g. Kannel's "0000", or it has no sequence number): anyone
    /// can forge one, so it ends nothing, but a driver can still say what the peer
    /// apparently meant ("the gateway sent handshake_failure (unauthenticated), then
    /// stopped answering").
    AlertIgnored {
        alert: Alert,
        why: UnauthenticatedAlert,
    },
    /// A retransmitted flight was answered from the cache, without new crypto work.
    Retransmitted,
}

/// What one input produced.
#[derive(Debug, Default, Clone)]
pub struct Output {
    pub datagrams: Vec<Vec<u8>>,
    pub events: Vec<Event>,
    /// Records the input datagram carried (0 if it could not be framed), so that a
    /// transport need not parse it again to count them.
    pub records_in: usize,
    /// The datagram was dropped as a whole: the connection's state is exactly what it
    /// was before (docs/security.md, "Off-path spoofing: the rule"). An endpoint may then offer it to another connection of
    /// the same address.
    pub dropped: bool,
}

impl Output {
    /// Appends a packed flight. Nothing is queued yet in the usual case, and the
    /// flight's own list is then taken over instead of copied into a new one.
    pub(crate) fn send(&mut self, datagrams: Vec<Vec<u8>>) {
        if self.datagrams.is_empty() {
            self.datagrams = datagrams;
        } else {
            self.datagrams.extend(datagrams);
        }
    }

    pub fn completed(&self) -> Option<HandshakeKind> {
        self.events.iter().find_map(|e| match e {
            Event::HandshakeComplete(k) => Some(*k),
            _ => None,
        })
    }

    pub fn alert_sent(&self) -> Option<AlertDescription> {
        self.events.iter().find_map(|e| match e {
            Event::AlertSent(a, _) => Some(a.description),
            _ => None,
        })
    }

    /// The first alert that arrived but could not be authenticated (and was ignored).
    pub fn alert_ignored(&self) -> Option<AlertDescription> {
        self.events.iter().find_map(|e| match e {
            Event::AlertIgnored { alert, .. } => Some(alert.description),
            _ => None,
        })
    }

    pub fn alert_received(&self) -> Option<AlertDescription> {
        self.events.iter().find_map(|e| match e {
            Event::AlertReceived(a) => Some(a.description),
            _ => None,
        })
    }
}

/// The key exchange suite code we write for `suite` (§5.1): under WAP-261 the code
/// says how the points travel, and we send them uncompressed, so ECDH_ECDSA goes as 18
/// (`ECDH_ECDSA_uncomp`) and ECDH_anon as 15; the thesis profile keeps the thesis' 14
/// and 11 with uncompressed points, as its byte counts were made.
pub(crate) fn wire_suite(
    suite: KeyExchangeSuite,
    numbering: ParameterNumbering,
) -> KeyExchangeSuite {
    match numbering {
        ParameterNumbering::Wap261 => suite.uncompressed(),
        ParameterNumbering::Thesis => suite,
    }
}

/// Whether the points of a key exchange negotiated with wire code `suite` travel
/// compressed: suites 11-14 under WAP-261 (the dissector names 15-18 "…Uncomp").
pub(crate) fn compressed_points(suite: KeyExchangeSuite, numbering: ParameterNumbering) -> bool {
    numbering == ParameterNumbering::Wap261 && suite.is_ecdh() && suite.uncompressed() != suite
}

/// Alert level used for a failure: the session is invalidated on any handshake failure.
pub(crate) fn level_for(desc: AlertDescription) -> AlertLevel {
    match desc {
        AlertDescription::BadRecordMac
        | AlertDescription::DecryptionFailed
        | AlertDescription::DuplicateFinishedReceived
        | AlertDescription::NoRenegotiation => AlertLevel::Warning,
        AlertDescription::ConnectionCloseNotify => AlertLevel::Critical,
        _ => AlertLevel::Fatal,
    }
}
