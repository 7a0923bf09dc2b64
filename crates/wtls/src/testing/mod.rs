//! Test support for the engine's own tests and the fuzz targets: the spine's in-memory
//! pair ([`wtlsperf_spine::Pair`]) over WTLS ends that keep every engine [`Output`], so
//! a test can read the events (alerts, application data, drops) the spine's steps do
//! not carry.
//!
//! Why a cargo feature (`testing`) and not a `tests/common` module: the crate's
//! integration tests and `fuzz/` both need it, and a module under `tests/` cannot be
//! reached from another crate. The seeded fixtures are not here: production uses them
//! ([`crate::fixtures`]).

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

pub use crate::fixtures::{now, CaseKeys, FixtureError, UNIX_NOW};
pub use wtlsperf_spine::pair::{Direction, Ended, Fate, RunOutcome, DEFAULT_ROUND_LIMIT};
use wtlsperf_spine::{Handshake, Now, ProtocolId, Role, Status, Step};

use crate::handshake::{
    AuthMode, Client, ClientConfig, Negotiated, Output, ProtocolError, ServerConfig,
    ServerConnection, StoredSession,
};
use crate::msgs::enums::AlertDescription;
use crate::probe::{HandshakeProbe, Probe};

/// The spine's pair over two recording WTLS ends.
pub type Pair<'a> = wtlsperf_spine::Pair<'a, Recorded<Client>, Recorded<ServerConnection>>;

/// A WTLS end that keeps every output of the engine (its start, datagrams handled,
/// timers fired), in order. It dereferences to the end itself.
pub struct Recorded<T> {
    pub end: T,
    pub outputs: Vec<Output>,
}

impl<T> Recorded<T> {
    pub fn new(end: T) -> Self {
        Recorded {
            end,
            outputs: Vec::new(),
        }
    }

    /// The first alert this end sent.
    pub fn alert_sent(&self) -> Option<AlertDescription> {
        self.outputs.iter().find_map(Output::alert_sent)
    }

    fn keep(&mut self, out: Output) -> Step {
        let step = Step {
            datagrams: out.datagrams.clone(),
            dropped: out.dropped,
        };
        self.outputs.push(out);
        step
    }
}

impl<T> Deref for Recorded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.end
    }
}

impl<T> DerefMut for Recorded<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.end
    }
}

/// The parts every recorded end shares with the end itself.
macro_rules! delegate {
    () => {
        type Negotiated = Negotiated;
        type Error = ProtocolError;
        type Records = HandshakeProbe;
        fn protocol(&self) -> ProtocolId {
            Handshake::protocol(&self.end)
        }
        fn role(&self) -> Role {
            Handshake::role(&self.end)
        }
        fn deadline(&self) -> Option<u64> {
            Handshake::deadline(&self.end)
        }
        fn delay_timers(&mut self, by_ns: u64) {
            Handshake::delay_timers(&mut self.end, by_ns)
        }
        fn status(&self) -> Status<Negotiated, ProtocolError> {
            Handshake::status(&self.end)
        }
        fn retransmissions(&self) -> u32 {
            Handshake::retransmissions(&self.end)
        }
        fn take_records(&mut self) -> HandshakeProbe {
            Handshake::take_records(&mut self.end)
        }
        fn exposes_message_timing(&self) -> bool {
            true
        }
    };
}

impl Handshake for Recorded<Client> {
    delegate!();

    fn start(&mut self, now: Now) -> Step {
        match self.end.start(now) {
            Ok(out) => self.keep(out),
            Err(_) => Step::default(),
        }
    }

    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        let out = self.end.handle_datagram(datagram, now);
        self.keep(out)
    }

    fn handle_timeout(&mut self, now: Now) -> Step {
        match self.end.on_timeout(now) {
            Ok(out) => self.keep(out),
            Err(_) => Step::default(),
        }
    }
}

impl Handshake for Recorded<ServerConnection> {
    delegate!();

    fn start(&mut self, _now: Now) -> Step {
        Step::default()
    }

    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        let out = self.end.handle_datagram(datagram, now);
        self.keep(out)
    }

    fn handle_timeout(&mut self, _now: Now) -> Step {
        Step::default()
    }
}

/// A pair of two ends made by the caller, at [`now`].
pub fn pair<'a>(client: Client, server: ServerConnection) -> Pair<'a> {
    Pair::new(Recorded::new(client), Recorded::new(server), now())
}

/// Two fresh ends on these configurations, probes off; `resume` is a session the
/// client offers to resume.
pub fn pair_from_configs<'a>(
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
    auth: AuthMode,
    resume: Option<StoredSession>,
) -> Pair<'a> {
    pair(
        Client::new(client, auth, resume, Probe::off(), now()),
        ServerConnection::new(server, Probe::off(), now()),
    )
}

/// The first flight and rounds until quiet, no timer fired: what a handshake does on a
/// network that loses nothing, or how far it gets before its timer would matter.
pub fn run_to_quiet(pair: &mut Pair<'_>) -> RunOutcome {
    pair.start();
    pair.run(DEFAULT_ROUND_LIMIT)
}

/// Both WTLS ends established.
pub fn established(pair: &Pair<'_>) -> bool {
    pair.client.is_established() && pair.server.is_established()
}

/// The two ends, the network dropped.
pub fn into_endpoints(pair: Pair<'_>) -> (Client, ServerConnection) {
    let (c, s) = pair.into_parts();
    (c.end, s.end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handshake::Event;
    use crate::msgs::common::CipherSuite;
    use crate::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};

    fn wtls_pair<'a>(auth: AuthMode) -> Pair<'a> {
        let keys = CaseKeys::shared("160p/160p");
        let suites = [CipherSuite::new(
            BulkCipherAlgorithm::Rc5Cbc,
            MacAlgorithm::Sha,
        )];
        pair_from_configs(
            Arc::new(keys.client_config(&suites)),
            Arc::new(keys.server_config(auth, &suites)),
            auth,
            None,
        )
    }

    #[test]
    fn a_clean_network_completes_in_two_rounds() {
        let mut p = wtls_pair(AuthMode::Mutual);
        let outcome = run_to_quiet(&mut p);
        assert!(established(&p));
        assert_eq!(
            outcome,
            RunOutcome {
                rounds: 2,
                quiet: true
            }
        );
    }

    #[test]
    fn a_seeded_handshake_replays_byte_for_byte() {
        let wire = |seed| {
            let _seeded = crate::crypto::random::seed_thread(seed).unwrap();
            let mut p = wtls_pair(AuthMode::Mutual);
            assert_eq!(p.handshake(), Ended::Complete);
            (p.client_sent, p.server_sent)
        };
        assert_eq!(wire(7), wire(7));
        assert_ne!(wire(7), wire(8));
    }

    #[test]
    fn duplicates_and_reordering_still_complete() {
        let mut p = wtls_pair(AuthMode::ServerAuth).with_hook(|dir, i, _| match (dir, i) {
            (Direction::ToServer, 0) => Fate::Duplicate,
            (Direction::ToClient, _) => Fate::Delay,
            _ => Fate::Deliver,
        });
        assert_eq!(p.handshake(), Ended::Complete);
        let answered_again = p.server.outputs.iter().flat_map(|o| &o.events);
        assert!(answered_again
            .into_iter()
            .any(|e| *e == Event::Retransmitted));
    }

    #[test]
    fn a_lost_hello_is_recovered_at_the_clients_deadline_in_virtual_time() {
        let mut p = wtls_pair(AuthMode::ServerAuth).with_hook(|dir, i, _| {
            if dir == Direction::ToServer && i == 0 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        let first = run_to_quiet(&mut p);
        assert_eq!(first.rounds, 0, "nothing reached the server");
        let due = p.client.deadline_ns().unwrap();
        assert_eq!(p.drive(DEFAULT_ROUND_LIMIT, 1), Ended::Complete);
        assert_eq!(p.now.mono_ns, due, "fired exactly at the deadline");
        assert_eq!(p.client_sent[0], p.client_sent[1], "the same hello again");
        assert_eq!(Handshake::retransmissions(&p.client), 1);
    }

    #[test]
    fn silence_ends_in_the_clients_time_out() {
        let mut p = wtls_pair(AuthMode::ServerAuth).with_hook(|dir, _, _| match dir {
            Direction::ToServer => Fate::Drop,
            Direction::ToClient => Fate::Deliver,
        });
        assert_eq!(p.handshake(), Ended::Failed);
        assert_eq!(
            p.client.status(),
            Status::Failed(wtlsperf_spine::Failure::TimedOut { retransmissions: 4 })
        );
        // 1 + 2 + 4 + 8 s of retransmissions, then 16 s of waiting for the last.
        assert_eq!(p.now.mono_ns - now().mono_ns, 31_000_000_000);
    }
}
