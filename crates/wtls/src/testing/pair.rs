//! A client and a server connection joined by an in-memory network under virtual time.
//!
//! Modelled on quinn-proto's test `Pair` (its `tests/util.rs`): both endpoints live on
//! the calling thread, datagrams move between them in rounds (everything queued for the
//! server, then everything queued for the client), and nothing reads a clock: time moves
//! only when [`Pair::fire_client_timer`] jumps it to the client's deadline. With the
//! thread's random source seeded ([`crate::crypto::random`]) and keys from
//! [`super::fixtures`], a run is a pure function of its inputs, so a failing handshake
//! replays exactly.
//!
//! A network hook sees every datagram as it is sent, with its direction and its index in
//! that direction, may change its bytes and decides its [`Fate`]: delivered, dropped,
//! duplicated, or delayed behind the next datagram in the same direction (reordering).
//!
//! The endpoint calls go through small never-inlined functions ([`server_receives`],
//! [`client_receives`], [`client_starts`]) so that an instruction counter (callgrind's
//! `--toggle-collect`, `wtlsperf count`) can attribute work to each side by name.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::handshake::{
    AuthMode, Client, ClientConfig, Now, Output, ProtocolError, ServerConfig, ServerConnection,
    StoredSession,
};
use crate::msgs::enums::AlertDescription;
use crate::probe::Probe;

use super::fixtures::now;

/// Rounds [`Pair::run`] allows by default: a full or resumed handshake needs two (a
/// round carries a flight to the server and the server's answer back); the rest is room
/// for duplicates and reordering.
pub const DEFAULT_ROUND_LIMIT: usize = 16;

/// Which way a datagram travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ToServer,
    ToClient,
}

impl Direction {
    fn index(self) -> usize {
        match self {
            Direction::ToServer => 0,
            Direction::ToClient => 1,
        }
    }
}

/// What the network does with one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Deliver,
    Drop,
    /// Delivered twice in a row.
    Duplicate,
    /// Delivered after the next datagram in the same direction (or at the end of the
    /// round if none follows).
    Delay,
}

type Hook<'a> = Box<dyn FnMut(Direction, usize, &mut Vec<u8>) -> Fate + 'a>;

/// How [`Pair::run`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    pub rounds: usize,
    /// Nothing was left in flight (false: the round limit stopped it).
    pub quiet: bool,
}

/// A client, a server and the network between them.
pub struct Pair<'a> {
    pub client: Client,
    pub server: ServerConnection,
    /// The virtual time both endpoints are called with.
    pub now: Now,
    /// Every output of the client (its start, datagrams handled, timers fired), in order.
    pub client_out: Vec<Output>,
    /// Every output of the server, in order.
    pub server_out: Vec<Output>,
    /// Every datagram the client sent, after the hook (dropped ones included).
    pub client_sent: Vec<Vec<u8>>,
    /// Every datagram the server sent, after the hook (dropped ones included).
    pub server_sent: Vec<Vec<u8>>,
    in_flight: [VecDeque<Vec<u8>>; 2],
    delayed: [Option<Vec<u8>>; 2],
    hook: Option<Hook<'a>>,
}

/// The server handles one datagram (never inlined: the counts' server side).
#[inline(never)]
pub fn server_receives(server: &mut ServerConnection, datagram: &[u8], now: Now) -> Output {
    server.handle_datagram(datagram, now)
}

/// The client handles one datagram (never inlined: part of the counts' client side).
#[inline(never)]
pub fn client_receives(client: &mut Client, datagram: &[u8], now: Now) -> Output {
    client.handle_datagram(datagram, now)
}

/// The client builds its first flight (never inlined: part of the counts' client side).
#[inline(never)]
pub fn client_starts(client: &mut Client, now: Now) -> Result<Output, ProtocolError> {
    client.start(now)
}

impl<'a> Pair<'a> {
    /// Joins two endpoints made by the caller (at [`now`]).
    pub fn new(client: Client, server: ServerConnection) -> Pair<'a> {
        Pair {
            client,
            server,
            now: now(),
            client_out: Vec::new(),
            server_out: Vec::new(),
            client_sent: Vec::new(),
            server_sent: Vec::new(),
            in_flight: [VecDeque::new(), VecDeque::new()],
            delayed: [None, None],
            hook: None,
        }
    }

    /// Two fresh endpoints on these configurations, probes off; `resume` is a session
    /// the client offers to resume.
    pub fn from_configs(
        client: Arc<ClientConfig>,
        server: Arc<ServerConfig>,
        auth: AuthMode,
        resume: Option<StoredSession>,
    ) -> Pair<'a> {
        let client = Client::new(client, auth, resume, Probe::off(), now());
        let server = ServerConnection::new(server, Probe::off(), now());
        Pair::new(client, server)
    }

    /// Sets the network hook (see the module's documentation).
    pub fn with_hook(
        mut self,
        hook: impl FnMut(Direction, usize, &mut Vec<u8>) -> Fate + 'a,
    ) -> Pair<'a> {
        self.hook = Some(Box::new(hook));
        self
    }

    /// Starts the client (its first flight goes in flight) and runs to quiet or to
    /// [`DEFAULT_ROUND_LIMIT`] rounds.
    pub fn handshake(&mut self) -> Result<RunOutcome, ProtocolError> {
        self.start()?;
        Ok(self.run(DEFAULT_ROUND_LIMIT))
    }

    /// The client's first flight, put in flight.
    pub fn start(&mut self) -> Result<(), ProtocolError> {
        let out = client_starts(&mut self.client, self.now)?;
        self.client_output(out);
        Ok(())
    }

    /// Rounds until nothing is in flight, at most `limit`.
    pub fn run(&mut self, limit: usize) -> RunOutcome {
        for rounds in 0..limit {
            if !self.round() {
                return RunOutcome {
                    rounds,
                    quiet: true,
                };
            }
        }
        RunOutcome {
            rounds: limit,
            quiet: !self.in_flight(),
        }
    }

    /// One round: everything in flight to the server is delivered, then everything in
    /// flight to the client (including what the server just answered). False if
    /// nothing was in flight.
    pub fn round(&mut self) -> bool {
        if !self.in_flight() {
            return false;
        }
        while let Some(d) = self.next(Direction::ToServer) {
            let out = server_receives(&mut self.server, &d, self.now);
            self.server_output(out);
        }
        while let Some(d) = self.next(Direction::ToClient) {
            let out = client_receives(&mut self.client, &d, self.now);
            self.client_output(out);
        }
        true
    }

    /// Moves virtual time to the client's retransmission deadline and fires it. False
    /// if the client has no timer running.
    pub fn fire_client_timer(&mut self) -> Result<bool, crate::handshake::TimedOut> {
        let Some(deadline) = self.client.deadline_ns() else {
            return Ok(false);
        };
        self.now.mono_ns = self.now.mono_ns.max(deadline);
        let out = self.client.on_timeout(self.now)?;
        self.client_output(out);
        Ok(true)
    }

    /// Datagram `datagram` is handed to the server now, outside the network (no hook).
    pub fn deliver_to_server(&mut self, datagram: &[u8]) -> &Output {
        let out = server_receives(&mut self.server, datagram, self.now);
        self.server_output(out);
        self.server_out.last().expect("just pushed")
    }

    /// Datagram `datagram` is handed to the client now, outside the network (no hook).
    pub fn deliver_to_client(&mut self, datagram: &[u8]) -> &Output {
        let out = client_receives(&mut self.client, datagram, self.now);
        self.client_output(out);
        self.client_out.last().expect("just pushed")
    }

    /// The two endpoints, the network (and its hook, with whatever it borrowed) dropped.
    pub fn into_endpoints(self) -> (Client, ServerConnection) {
        (self.client, self.server)
    }

    /// Both ends completed their handshake.
    pub fn is_established(&self) -> bool {
        self.client.is_established() && self.server.is_established()
    }

    /// The first alert the server sent.
    pub fn server_alert(&self) -> Option<AlertDescription> {
        self.server_out.iter().find_map(Output::alert_sent)
    }

    /// The first alert the client sent.
    pub fn client_alert(&self) -> Option<AlertDescription> {
        self.client_out.iter().find_map(Output::alert_sent)
    }

    fn in_flight(&self) -> bool {
        self.in_flight.iter().any(|q| !q.is_empty()) || self.delayed.iter().any(Option::is_some)
    }

    fn next(&mut self, dir: Direction) -> Option<Vec<u8>> {
        let i = dir.index();
        self.in_flight[i]
            .pop_front()
            .or_else(|| self.delayed[i].take())
    }

    fn client_output(&mut self, out: Output) {
        for d in &out.datagrams {
            self.send(Direction::ToServer, d.clone());
        }
        self.client_out.push(out);
    }

    fn server_output(&mut self, out: Output) {
        for d in &out.datagrams {
            self.send(Direction::ToClient, d.clone());
        }
        self.server_out.push(out);
    }

    fn send(&mut self, dir: Direction, mut datagram: Vec<u8>) {
        let log = match dir {
            Direction::ToServer => &mut self.client_sent,
            Direction::ToClient => &mut self.server_sent,
        };
        let index = log.len();
        let fate = match &mut self.hook {
            Some(hook) => hook(dir, index, &mut datagram),
            None => Fate::Deliver,
        };
        log.push(datagram.clone());
        let i = dir.index();
        match fate {
            Fate::Drop => return,
            Fate::Deliver => self.in_flight[i].push_back(datagram),
            Fate::Duplicate => {
                self.in_flight[i].push_back(datagram.clone());
                self.in_flight[i].push_back(datagram);
            }
            Fate::Delay => {
                // A datagram delayed before is released first, so none is held twice.
                if let Some(old) = self.delayed[i].replace(datagram) {
                    self.in_flight[i].push_back(old);
                }
                return;
            }
        }
        if let Some(old) = self.delayed[i].take() {
            self.in_flight[i].push_back(old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgs::common::CipherSuite;
    use crate::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};
    use crate::testing::CaseKeys;

    fn pair<'a>(auth: AuthMode) -> Pair<'a> {
        let keys = CaseKeys::shared("160p/160p");
        let suites = [CipherSuite::new(
            BulkCipherAlgorithm::Rc5Cbc,
            MacAlgorithm::Sha,
        )];
        Pair::from_configs(
            Arc::new(keys.client_config(&suites)),
            Arc::new(keys.server_config(auth, &suites)),
            auth,
            None,
        )
    }

    #[test]
    fn a_clean_network_completes_in_two_rounds() {
        let mut p = pair(AuthMode::Mutual);
        let outcome = p.handshake().unwrap();
        assert!(p.is_established());
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
            let mut p = pair(AuthMode::Mutual);
            p.handshake().unwrap();
            assert!(p.is_established());
            (p.client_sent, p.server_sent)
        };
        assert_eq!(wire(7), wire(7));
        assert_ne!(wire(7), wire(8));
    }

    #[test]
    fn duplicates_and_reordering_still_complete() {
        let mut p = pair(AuthMode::ServerAuth).with_hook(|dir, i, _| match (dir, i) {
            (Direction::ToServer, 0) => Fate::Duplicate,
            (Direction::ToClient, _) => Fate::Delay,
            _ => Fate::Deliver,
        });
        p.handshake().unwrap();
        assert!(p.is_established());
    }

    #[test]
    fn a_lost_hello_is_recovered_by_the_clients_timer_in_virtual_time() {
        let mut p = pair(AuthMode::ServerAuth).with_hook(|dir, i, _| {
            if dir == Direction::ToServer && i == 0 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        let first = p.handshake().unwrap();
        assert_eq!(first.rounds, 0, "nothing reached the server");
        let before = p.now.mono_ns;
        assert!(p.fire_client_timer().unwrap());
        assert!(p.now.mono_ns > before);
        p.run(DEFAULT_ROUND_LIMIT);
        assert!(p.is_established());
        assert_eq!(p.client_sent[0], p.client_sent[1], "the same hello again");
    }
}
