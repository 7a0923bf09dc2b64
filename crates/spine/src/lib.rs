//! The handshake spine: one sans-IO interface ([`Handshake`]) that WTLS, DTLS 1.2,
//! EDHOC and every later protocol implement, so that each driver of the laboratory (the
//! in-memory pair, the UDP client, the gateway worker, the load generator, the flood)
//! is written once, generic over it.
//!
//! The shape follows quinn-proto's `Connection`: the caller owns sockets and clocks and
//! passes the time with every input; the implementation returns what to send and says
//! when it next wants to be woken. Nothing here reads a clock, so an in-memory run under
//! virtual time is a pure function of its inputs.

use std::fmt;

pub mod any;
pub mod pair;

pub use any::{AnyError, AnyHandshake, AnyNegotiated};
pub use pair::Pair;

/// The time as the caller sees it: a monotonic reading (nanoseconds from the driver's
/// own origin) for timers and caches, and Unix seconds for certificate validity. A
/// driver under virtual time moves both itself; a real driver reads its clocks once per
/// input and passes the readings in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Now {
    pub mono_ns: u64,
    pub unix_secs: u32,
}

impl Now {
    pub fn new(mono_ns: u64, unix_secs: u32) -> Self {
        Now { mono_ns, unix_secs }
    }

    /// The same instant moved `ns` nanoseconds on (Unix seconds follow whole seconds).
    pub fn plus_ns(self, ns: u64) -> Now {
        let mono_ns = self.mono_ns.saturating_add(ns);
        let whole = (mono_ns / 1_000_000_000).saturating_sub(self.mono_ns / 1_000_000_000);
        Now {
            mono_ns,
            unix_secs: self
                .unix_secs
                .saturating_add(u32::try_from(whole).unwrap_or(u32::MAX)),
        }
    }
}

/// Which protocol a handshake speaks: the identity a protocol's registry entry gives
/// its handshakes and the CSV value of every `protocol` column.
///
/// A value, not an enum: the protocols are listed once, in the drivers' registry, and a
/// protocol added there is named nowhere else. `rank` orders protocols in reports (the
/// registry's order); two ids are equal only if both rank and name are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtocolId {
    rank: u8,
    name: &'static str,
}

impl ProtocolId {
    /// The id of a protocol: its report position and its CSV and command-line name.
    pub const fn new(rank: u8, name: &'static str) -> ProtocolId {
        ProtocolId { rank, name }
    }

    /// The CSV and command-line value (`wtls`, `dtls1.2`, ...).
    pub fn name(self) -> &'static str {
        self.name
    }
}

impl fmt::Display for ProtocolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A name at the edge (command line, CSV, data file) that matches no known value; its
/// message lists the known ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    pub what: &'static str,
    pub given: String,
    pub known: Vec<&'static str>,
}

impl UnknownName {
    pub fn new(
        what: &'static str,
        given: &str,
        known: impl IntoIterator<Item = &'static str>,
    ) -> Self {
        UnknownName {
            what,
            given: given.to_owned(),
            known: known.into_iter().collect(),
        }
    }
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} {:?}; known: {}",
            self.what,
            self.given,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for UnknownName {}

/// Which end of a handshake an implementation plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Sends the first flight.
    Client,
    /// Answers it.
    Server,
}

/// How a handshake ended without completing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure<E> {
    /// Our retransmission budget ran out with no answer: a local time-out, never the
    /// peer's alert.
    TimedOut { retransmissions: u32 },
    /// The peer ended it (an authenticated alert, or its protocol's error message).
    Peer(E),
    /// We ended it: the peer's input failed a check, or we could not go on. Where the
    /// protocol has alerts, the one sent is in the step's datagrams.
    Local(E),
}

impl<E: fmt::Display> fmt::Display for Failure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::TimedOut { retransmissions } => {
                write!(f, "timed out after {retransmissions} retransmissions")
            }
            Failure::Peer(e) => write!(f, "the peer ended the handshake: {e}"),
            Failure::Local(e) => write!(f, "handshake failed: {e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for Failure<E> {}

/// Where a handshake stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status<N, E> {
    /// Still running (or not started).
    Running,
    /// Keys agreed and the peer authenticated: application data may flow.
    Complete(N),
    /// Ended without completing; nothing more will be sent.
    Failed(Failure<E>),
}

impl<N, E> Status<N, E> {
    pub fn is_running(&self) -> bool {
        matches!(self, Status::Running)
    }

    pub fn is_complete(&self) -> bool {
        matches!(self, Status::Complete(_))
    }
}

/// What one input produced: datagrams to send, in order. Completion and failure are
/// read from [`Handshake::status`] after the step, so a driver asks one question in one
/// place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Step {
    pub datagrams: Vec<Vec<u8>>,
    /// The input was dropped as a whole and changed nothing (forged, stale, replayed or
    /// unreadable). A driver counts it; it is not a failure.
    pub dropped: bool,
}

impl Step {
    pub fn send(datagrams: Vec<Vec<u8>>) -> Step {
        Step {
            datagrams,
            dropped: false,
        }
    }

    pub fn dropped() -> Step {
        Step {
            datagrams: Vec::new(),
            dropped: true,
        }
    }
}

/// One side of a handshake of some protocol, sans IO.
///
/// The contract every driver relies on:
/// - [`Handshake::start`] is called once, first (a server returns no datagram);
/// - [`Handshake::handle_datagram`] takes one received datagram at the caller's time;
/// - the caller calls [`Handshake::handle_timeout`] once [`Handshake::deadline`] is
///   reached, and never reads a deadline it did not just ask for;
/// - the step that ends the handshake is followed by a [`Handshake::status`] that is no
///   longer [`Status::Running`]; a step may still carry datagrams then (the last flight,
///   or the alert that ends it).
pub trait Handshake {
    /// What a completed handshake agreed (suite, kind of handshake, who authenticated).
    type Negotiated: Clone + fmt::Debug;
    /// Why it failed, as the protocol's own typed error.
    type Error: Clone + fmt::Debug + fmt::Display;
    /// The protocol's per-message processing records (per-message timing), where the
    /// implementation exposes them; `()` where it cannot (OpenSSL's DTLS, lakers).
    type Records: fmt::Debug + Default;

    fn protocol(&self) -> ProtocolId;
    fn role(&self) -> Role;
    /// The client's first flight; nothing for a server.
    fn start(&mut self, now: Now) -> Step;
    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step;
    /// When [`Handshake::handle_timeout`] is due (monotonic nanoseconds), if ever.
    fn deadline(&self) -> Option<u64>;
    /// A retransmission timer expired: retransmit, or fail with
    /// [`Failure::TimedOut`] once the budget is spent.
    fn handle_timeout(&mut self, now: Now) -> Step;
    /// The flight just produced leaves `by_ns` later than it was computed (an emulated
    /// device's processing): its retransmission timer starts when it leaves.
    fn delay_timers(&mut self, by_ns: u64);
    fn status(&self) -> Status<Self::Negotiated, Self::Error>;
    /// Datagrams sent again because a timer expired.
    fn retransmissions(&self) -> u32;
    /// Takes the per-message records gathered so far (empty where not exposed).
    fn take_records(&mut self) -> Self::Records {
        Self::Records::default()
    }
    /// Whether [`Handshake::take_records`] gives per-message timing at all: a report
    /// says so where it does not.
    fn exposes_message_timing(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_ids_order_by_rank_then_name() {
        let a = ProtocolId::new(0, "wtls");
        let b = ProtocolId::new(1, "dtls1.2");
        assert!(a < b);
        assert_eq!(b.to_string(), "dtls1.2");
        assert_ne!(a, ProtocolId::new(1, "wtls"));
    }

    #[test]
    fn unknown_names_list_the_known() {
        let e = UnknownName::new("protocol", "tls", ["wtls", "dtls1.2"]);
        assert_eq!(e.known, vec!["wtls", "dtls1.2"]);
        assert!(e.to_string().contains("\"tls\""));
    }

    #[test]
    fn now_moves_unix_seconds_with_whole_seconds() {
        let t = Now::new(999_999_999, 100);
        assert_eq!(t.plus_ns(1), Now::new(1_000_000_000, 101));
        assert_eq!(t.plus_ns(0), t);
        assert_eq!(Now::new(u64::MAX - 1, 7).plus_ns(10).mono_ns, u64::MAX);
    }
}
