//! WTLS on the laboratory's handshake spine: [`Client`] and [`ServerConnection`]
//! implement [`wtlsperf_spine::Handshake`] directly, so every driver (the in-memory
//! pair, the UDP client, the gateway worker, the load generator) runs WTLS exactly as
//! it runs DTLS and EDHOC.
//!
//! The engine's own API stays richer (events, application data, the endpoint's
//! routing); this is the part every protocol shares: datagrams in and out at the
//! caller's time, the retransmission deadline, and a typed end.

use wtlsperf_spine::{Failure, Handshake, Now, ProtocolId, Role, Status, Step};

use super::{Client, Event, HandshakeKind, LocalError, Output, ProtocolError, ServerConnection};
use crate::msgs::common::CipherSuite;
use crate::msgs::enums::{AlertLevel, KeyExchangeSuite};
use crate::probe::HandshakeProbe;

/// WTLS's identity on the bench: first in every report, `wtls` in every CSV.
pub const WTLS: ProtocolId = ProtocolId::new(0, "wtls");

/// What a completed WTLS handshake agreed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub kind: HandshakeKind,
    pub cipher_suite: CipherSuite,
    /// The key exchange suite as negotiated (its base code, whatever the wire said
    /// about point compression).
    pub key_exchange: KeyExchangeSuite,
    /// The client proved its certified key (mutual full handshake) or the server took
    /// its certificate from its store (optimised). False for an abbreviated handshake:
    /// nobody authenticates again on a resumed session.
    pub client_authenticated: bool,
}

/// Why a connection that just closed before completing ended, read from the alerts of
/// the output that closed it: the peer's closing alert, or the one we sent.
pub(crate) fn ending(out: &Output) -> Failure<ProtocolError> {
    let closing = |level: AlertLevel| level != AlertLevel::Warning;
    let found = out.events.iter().rev().find_map(|e| match e {
        Event::AlertReceived(a) if closing(a.level) => {
            Some(Failure::Peer(ProtocolError::PeerAlert(a.description)))
        }
        Event::AlertSent(a, why) if closing(a.level) => Some(Failure::Local(why.clone())),
        _ => None,
    });
    found.unwrap_or_else(|| Failure::Local(LocalError::ClosedWithoutAlert.into()))
}

fn step(out: Output) -> Step {
    Step {
        datagrams: out.datagrams,
        dropped: out.dropped,
    }
}

/// The status of a connection from what it kept: a failure first (it is final), then
/// completion, else still running.
fn status(
    failure: Option<&Failure<ProtocolError>>,
    negotiated: Option<Negotiated>,
) -> Status<Negotiated, ProtocolError> {
    match (failure, negotiated) {
        (Some(f), _) => Status::Failed(f.clone()),
        (None, Some(n)) => Status::Complete(n),
        (None, None) => Status::Running,
    }
}

impl Handshake for Client {
    type Negotiated = Negotiated;
    type Error = ProtocolError;
    type Records = HandshakeProbe;

    fn protocol(&self) -> ProtocolId {
        WTLS
    }

    fn role(&self) -> Role {
        Role::Client
    }

    /// The ClientHello; a configuration that cannot make one fails the handshake
    /// ([`Status::Failed`] with [`Failure::Local`]) and sends nothing.
    fn start(&mut self, now: Now) -> Step {
        Client::start(self, now).map(step).unwrap_or_default()
    }

    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        step(Client::handle_datagram(self, datagram, now))
    }

    fn deadline(&self) -> Option<u64> {
        self.deadline_ns()
    }

    /// Retransmits the last flight, or ends with [`Failure::TimedOut`] once the
    /// configured retransmissions are spent.
    fn handle_timeout(&mut self, now: Now) -> Step {
        self.on_timeout(now).map(step).unwrap_or_default()
    }

    fn delay_timers(&mut self, by_ns: u64) {
        self.delay_timer(by_ns);
    }

    fn status(&self) -> Status<Negotiated, ProtocolError> {
        status(self.failure(), self.negotiated())
    }

    fn retransmissions(&self) -> u32 {
        self.resent_datagrams()
    }

    fn take_records(&mut self) -> HandshakeProbe {
        self.take_probe()
    }

    fn exposes_message_timing(&self) -> bool {
        true
    }
}

/// The server has no timer of its own: a lost answer is sent again when the client's
/// retransmission arrives (from its answer cache, without new public-key work).
impl Handshake for ServerConnection {
    type Negotiated = Negotiated;
    type Error = ProtocolError;
    type Records = HandshakeProbe;

    fn protocol(&self) -> ProtocolId {
        WTLS
    }

    fn role(&self) -> Role {
        Role::Server
    }

    fn start(&mut self, _now: Now) -> Step {
        Step::default()
    }

    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        step(ServerConnection::handle_datagram(self, datagram, now))
    }

    fn deadline(&self) -> Option<u64> {
        None
    }

    fn handle_timeout(&mut self, _now: Now) -> Step {
        Step::default()
    }

    fn delay_timers(&mut self, _by_ns: u64) {}

    fn status(&self) -> Status<Negotiated, ProtocolError> {
        status(self.failure(), self.negotiated())
    }

    fn retransmissions(&self) -> u32 {
        0
    }

    fn take_records(&mut self) -> HandshakeProbe {
        self.take_probe()
    }

    fn exposes_message_timing(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::fixtures::{now, CaseKeys};
    use crate::handshake::AuthMode;
    use crate::msgs::enums::{AlertDescription, BulkCipherAlgorithm, MacAlgorithm};
    use crate::probe::Probe;

    const SUITE: CipherSuite = CipherSuite {
        bulk: BulkCipherAlgorithm::Rc5Cbc,
        mac: MacAlgorithm::Sha,
    };

    fn ends(auth: AuthMode) -> (Client, ServerConnection) {
        let keys = CaseKeys::shared("160p/160p");
        let mut client = keys.client_config(&[SUITE]);
        client.max_retransmissions = 2;
        let server = keys.server_config(auth, &[SUITE]);
        (
            Client::new(Arc::new(client), auth, None, Probe::off(), now()),
            ServerConnection::new(Arc::new(server), Probe::off(), now()),
        )
    }

    /// Moves every datagram of `step` to `to`, and the answers back, until quiet.
    fn exchange(a: &mut dyn FnMut(&[u8]) -> Step, b: &mut dyn FnMut(&[u8]) -> Step, s: Step) {
        let mut to_b = s.datagrams;
        while !to_b.is_empty() {
            let to_a: Vec<Vec<u8>> = to_b.iter().flat_map(|d| b(d).datagrams).collect();
            to_b = to_a.iter().flat_map(|d| a(d).datagrams).collect();
        }
    }

    #[test]
    fn both_ends_complete_through_the_trait_and_agree() {
        let (mut c, mut s) = ends(AuthMode::Mutual);
        assert!(Handshake::start(&mut s, now()).datagrams.is_empty());
        let first = Handshake::start(&mut c, now());
        assert_eq!(Handshake::status(&c), Status::Running);
        exchange(
            &mut |d| Handshake::handle_datagram(&mut c, d, now()),
            &mut |d| Handshake::handle_datagram(&mut s, d, now()),
            first,
        );
        let (Status::Complete(cn), Status::Complete(sn)) =
            (Handshake::status(&c), Handshake::status(&s))
        else {
            panic!("not complete: {:?} {:?}", Handshake::status(&c), s.status());
        };
        assert_eq!(cn, sn);
        assert_eq!(cn.kind, HandshakeKind::Full);
        assert_eq!(cn.cipher_suite, SUITE);
        assert!(cn.client_authenticated);
        assert_eq!(Handshake::deadline(&c), None);
        assert!(c.exposes_message_timing());
    }

    #[test]
    fn a_server_authenticated_handshake_says_the_client_did_not_authenticate() {
        let (mut c, mut s) = ends(AuthMode::ServerAuth);
        let first = Handshake::start(&mut c, now());
        exchange(
            &mut |d| Handshake::handle_datagram(&mut c, d, now()),
            &mut |d| Handshake::handle_datagram(&mut s, d, now()),
            first,
        );
        let Status::Complete(n) = Handshake::status(&s) else {
            panic!("server: {:?}", s.status());
        };
        assert!(!n.client_authenticated);
    }

    #[test]
    fn silence_ends_in_a_local_time_out_not_a_peer_alert() {
        let (mut c, _) = ends(AuthMode::ServerAuth);
        let first = Handshake::start(&mut c, now());
        assert_eq!(first.datagrams.len(), 1);
        let mut t = now();
        let mut resent = 0;
        while let Some(d) = Handshake::deadline(&c) {
            t = Now::new(d, t.unix_secs);
            resent += Handshake::handle_timeout(&mut c, t).datagrams.len();
        }
        assert_eq!(resent, 2);
        assert_eq!(Handshake::retransmissions(&c), 2);
        assert_eq!(
            Handshake::status(&c),
            Status::Failed(Failure::TimedOut { retransmissions: 2 })
        );
    }

    #[test]
    fn a_delayed_flight_moves_the_deadline_with_it() {
        let (mut c, _) = ends(AuthMode::ServerAuth);
        Handshake::start(&mut c, now());
        let due = Handshake::deadline(&c).unwrap();
        c.delay_timers(5);
        assert_eq!(Handshake::deadline(&c), Some(due + 5));
    }

    #[test]
    fn a_refused_hello_is_a_local_failure_at_the_server_and_a_peer_one_at_the_client() {
        let keys = CaseKeys::shared("160p/160p");
        let other = CipherSuite {
            bulk: BulkCipherAlgorithm::Rc5Cbc,
            mac: MacAlgorithm::Md5,
        };
        let client = keys.client_config(&[SUITE]);
        let server = keys.server_config(AuthMode::ServerAuth, &[other]);
        let mut c = Client::new(
            Arc::new(client),
            AuthMode::ServerAuth,
            None,
            Probe::off(),
            now(),
        );
        let mut s = ServerConnection::new(Arc::new(server), Probe::off(), now());
        let first = Handshake::start(&mut c, now());
        exchange(
            &mut |d| Handshake::handle_datagram(&mut c, d, now()),
            &mut |d| Handshake::handle_datagram(&mut s, d, now()),
            first,
        );
        let Status::Failed(Failure::Local(e)) = Handshake::status(&s) else {
            panic!("server: {:?}", s.status());
        };
        assert_eq!(e.alert(), AlertDescription::HandshakeFailure);
        // The alert's checksum matches the client's hello: the client takes it as the
        // server's word, not as its own failure.
        let Status::Failed(Failure::Peer(e)) = Handshake::status(&c) else {
            panic!("client: {:?}", c.status());
        };
        assert_eq!(e.alert(), AlertDescription::HandshakeFailure);
        assert_eq!(Handshake::deadline(&c), None);
    }
}
