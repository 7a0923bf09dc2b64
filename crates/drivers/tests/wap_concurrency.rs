//! Hundreds of WTP initiators against one connection-mode WAP port, in virtual time: no
//! transaction ever receives another's PDU, and no session's result outlives the session.
//!
//! The port's protocol state ([`WapService`]) runs against 160 simulated clients over a
//! link that loses, duplicates and reorders datagrams (seeded, so the run is the same
//! every time), with an origin that answers each Get with its own URI after a random
//! delay. Each client runs three sessions (Connect, Get, Disconnect) with our initiator.
//! A quarter of them start just below the end of the TID space and wrap (setting TIDnew as
//! WAP-224 §9.2 asks), a tenth restart their TIDs at the first value for every session (a
//! rebooted handset, TIDnew set), and a quarter acknowledge results with a wrong TID, as
//! Kannel's `fakewap` does with the TID counter its threads share: their results are never
//! acknowledged, so WTP keeps them for retransmission until the session ends.
//!
//! Checked on every datagram the port sends: a Result for (address, TID) carries the
//! answer to the request that address last sent with that TID (a ConnectReply for a
//! Connect, the Reply with the Get's own URI for a Get); and once a client's Disconnect has
//! reached the port, no Result of that session's transactions leaves it (the
//! retransmission that, with Kannel's `fakewap`, became the "answer" of a later session).
//! At the end, every Get of a client that acknowledges properly got its own Reply.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::net::SocketAddr;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use wtlsperf_drivers::wap_client::WspMode;
use wtlsperf_drivers::wap_gateway::service::{Action, ReplyTo, WapService};
use wtlsperf_wap::wsp::{self, Capabilities, ContentType, Headers};
use wtlsperf_wap::wtp::{
    self, Body, Direction, Event, Initiator, InitiatorOptions, Now, Pdu, Tid, Timers,
    TransactionClass,
};

const MS: u64 = 1_000_000;
const CLIENTS: u16 = 160;
const SESSIONS: u32 = 3;
/// The virtual time the run may take (far beyond what it needs).
const LIMIT_NS: u64 = 900_000 * MS;
/// The longest a datagram stays in the simulated network (the link delays by 1-150 ms),
/// with margin.
const MAX_LIFETIME_NS: u64 = 1_000 * MS;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Request {
    Connect,
    Get(String),
    Disconnect,
}

/// How a client chooses TIDs and acknowledges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Habit {
    Plain,
    Wraps,
    Restarts,
    WrongAckTid,
}

struct Client {
    addr: SocketAddr,
    habit: Habit,
    first_tid: u16,
    next_tid: u16,
    tid_new: bool,
    session: u32,
    /// The session id of the current session's ConnectReply.
    session_id: Option<u32>,
    /// Transactions still running, by TID (finished ones linger to re-acknowledge).
    running: BTreeMap<Tid, (Request, Initiator)>,
    /// The TIDs of the current session's transactions.
    session_tids: Vec<Tid>,
    /// Those whose result has come.
    answered: BTreeSet<Tid>,
    /// When to start the next session (None: waiting for a result, or done).
    start_at: Option<u64>,
    gets_answered: u32,
}

/// Everything that happens at a virtual time: a datagram arriving, an origin answering.
enum Happening {
    ToPort { from: SocketAddr, bytes: Vec<u8> },
    ToClient { index: usize, bytes: Vec<u8> },
    Origin { to: ReplyTo, uri: String },
}

struct World {
    now: u64,
    rng: StdRng,
    port: WapService,
    clients: Vec<Client>,
    by_addr: BTreeMap<SocketAddr, usize>,
    queue: BinaryHeap<Reverse<(u64, u64)>>,
    happenings: BTreeMap<u64, Happening>,
    seq: u64,
    /// The URI of the Get the port last took for (address, TID) (its origin request).
    fetched: BTreeMap<(SocketAddr, Tid), String>,
    /// Transactions of sessions whose Disconnect reached the port.
    ended: BTreeSet<(SocketAddr, Tid)>,
    /// A shared TID counter for the clients that acknowledge with a wrong TID.
    sloppy_tid: u16,
    results_checked: u64,
}

fn at(ns: u64) -> Now {
    Now::new(ns, 0)
}

impl World {
    fn new(seed: u64) -> World {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut clients = Vec::new();
        let mut by_addr = BTreeMap::new();
        for i in 0..CLIENTS {
            let addr: SocketAddr = format!("127.0.{}.{}:{}", i / 200, 1 + i % 200, 4000 + i)
                .parse()
                .unwrap();
            let habit = match i % 20 {
                0..=4 => Habit::Wraps,
                5..=6 => Habit::Restarts,
                7..=11 => Habit::WrongAckTid,
                _ => Habit::Plain,
            };
            let first_tid = match habit {
                Habit::Wraps => 0x7FFF - (i % 3),
                _ => rng.random_range(0..0x7000),
            };
            by_addr.insert(addr, clients.len());
            clients.push(Client {
                addr,
                habit,
                first_tid,
                next_tid: first_tid,
                tid_new: false,
                session: 0,
                session_id: None,
                running: BTreeMap::new(),
                session_tids: Vec::new(),
                answered: BTreeSet::new(),
                start_at: Some(rng.random_range(0..2_000) * MS),
                gets_answered: 0,
            });
        }
        World {
            now: 0,
            rng,
            port: WapService::new(WspMode::Connection, Timers::default()),
            clients,
            by_addr,
            queue: BinaryHeap::new(),
            happenings: BTreeMap::new(),
            seq: 0,
            fetched: BTreeMap::new(),
            ended: BTreeSet::new(),
            sloppy_tid: 0,
            results_checked: 0,
        }
    }

    fn schedule(&mut self, delay_ns: u64, h: Happening) {
        self.seq += 1;
        self.queue.push(Reverse((self.now + delay_ns, self.seq)));
        self.happenings.insert(self.seq, h);
    }

    /// The link: 8% of datagrams lost, 4% duplicated, each copy 1-150 ms late (so
    /// datagrams overtake each other).
    fn transmit(&mut self, h: impl Fn() -> Happening) {
        if self.rng.random_range(0..100) < 8 {
            return;
        }
        let copies = if self.rng.random_range(0..100) < 4 {
            2
        } else {
            1
        };
        for _ in 0..copies {
            let delay = self.rng.random_range(1..150) * MS;
            debug_assert!(delay < MAX_LIFETIME_NS);
            self.schedule(delay, h());
        }
    }

    fn next_time(&self) -> Option<u64> {
        let mut next = self.queue.peek().map(|Reverse((t, _))| *t);
        let mut take = |t: Option<u64>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        take(self.port.deadline());
        for c in &self.clients {
            take(c.start_at);
            for (_, init) in c.running.values() {
                take(init.deadline());
            }
        }
        next
    }

    fn run(&mut self) {
        while let Some(t) = self.next_time() {
            assert!(t <= LIMIT_NS, "still running after {} s", t / 1_000 / MS);
            self.now = self.now.max(t);
            while let Some(Reverse((due, seq))) = self.queue.peek().copied() {
                if due > self.now {
                    break;
                }
                self.queue.pop();
                let h = self.happenings.remove(&seq).unwrap();
                self.happen(h);
            }
            let actions = self.port.on_timeout(at(self.now));
            self.port_actions(actions);
            for i in 0..self.clients.len() {
                self.client_timers(i);
            }
        }
    }

    fn happen(&mut self, h: Happening) {
        match h {
            Happening::ToPort { from, bytes } => {
                self.note_arrival(from, &bytes);
                let actions = self.port.on_datagram(from, &bytes, at(self.now));
                self.port_actions(actions);
            }
            Happening::ToClient { index, bytes } => self.client_receives(index, &bytes),
            Happening::Origin { to, uri } => {
                let reply = wsp::Pdu::Reply {
                    status: wsp::Status::OK,
                    content_type: ContentType::Text("text/plain".into()),
                    headers: Headers::default(),
                    body: uri.into_bytes(),
                };
                let actions = self.port.on_reply(to, reply, at(self.now));
                self.port_actions(actions);
            }
        }
    }

    /// What the port is about to see: a Disconnect naming the client's session ends that
    /// session's transactions.
    fn note_arrival(&mut self, from: SocketAddr, bytes: &[u8]) {
        let index = self.by_addr[&from];
        for pdu in wtp::decode_datagram(bytes).unwrap() {
            let Body::Invoke { data, .. } = &pdu.body else {
                continue;
            };
            let closes = matches!(wsp::Pdu::decode(data), Ok(wsp::Pdu::Disconnect { session_id }) if session_id != 0);
            if closes {
                if let Some(tids) = self.session_of(index, pdu.tid) {
                    self.ended.extend(tids.into_iter().map(|t| (from, t)));
                }
            }
        }
    }

    /// The TIDs of the session a Disconnect with `tid` closes.
    fn session_of(&self, index: usize, tid: Tid) -> Option<Vec<Tid>> {
        let c = &self.clients[index];
        c.session_tids.contains(&tid).then(|| {
            c.session_tids
                .iter()
                .copied()
                .filter(|t| *t != tid)
                .collect()
        })
    }

    fn port_actions(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Send { to, bytes } => {
                    self.check_sent(to, &bytes);
                    let index = self.by_addr[&to];
                    self.transmit(|| Happening::ToClient {
                        index,
                        bytes: bytes.clone(),
                    });
                }
                Action::Fetch { request, reply_to } => {
                    if let ReplyTo::Transaction { peer, tid, .. } = reply_to {
                        self.fetched.insert((peer, tid), request.uri.clone());
                    }
                    let delay = self.rng.random_range(1..40) * MS;
                    self.schedule(
                        delay,
                        Happening::Origin {
                            to: reply_to,
                            uri: request.uri,
                        },
                    );
                }
                // The reflection bound is the port's, not the service's.
                Action::Proven { .. } => {}
            }
        }
    }

    /// The invariants on what the port sends.
    fn check_sent(&mut self, to: SocketAddr, bytes: &[u8]) {
        for pdu in wtp::decode_datagram(bytes).unwrap() {
            assert_eq!(pdu.direction, Direction::FromResponder);
            let Body::Result { data, .. } = &pdu.body else {
                continue;
            };
            let key = (to, pdu.tid);
            assert!(
                !self.ended.contains(&key),
                "{to} TID {}: a result sent after its session's Disconnect reached the port \
                 (rid {})",
                pdu.tid.value(),
                pdu.rid
            );
            // A Reply answers the Get the port took with this TID; whether a ConnectReply
            // reaches a Connect is checked where the client takes it.
            if let wsp::Pdu::Reply { body, .. } = wsp::Pdu::decode(data).unwrap() {
                let uri = &self.fetched[&key];
                assert_eq!(body, uri.as_bytes(), "{to} TID {}", pdu.tid.value());
            }
            self.results_checked += 1;
        }
    }

    fn client_timers(&mut self, i: usize) {
        if self.clients[i].start_at.is_some_and(|t| t <= self.now) {
            self.clients[i].start_at = None;
            self.start_session(i);
        }
        let tids: Vec<Tid> = self.clients[i].running.keys().copied().collect();
        for tid in tids {
            let due = self.clients[i].running[&tid]
                .1
                .deadline()
                .is_some_and(|d| d <= self.now);
            if due {
                let out = self.clients[i]
                    .running
                    .get_mut(&tid)
                    .unwrap()
                    .1
                    .on_timeout(at(self.now));
                self.client_output(i, tid, out);
            }
        }
    }

    fn start_session(&mut self, i: usize) {
        let c = &mut self.clients[i];
        if c.session == SESSIONS {
            return;
        }
        c.session += 1;
        c.session_id = None;
        c.session_tids.clear();
        c.answered.clear();
        if c.habit == Habit::Restarts && c.session > 1 {
            // A rebooted handset starts its TIDs over and says so (TIDnew).
            c.next_tid = c.first_tid;
            c.tid_new = true;
        }
        let connect = wsp::Pdu::Connect {
            version: wsp::Version::V1_0,
            capabilities: Capabilities::default(),
            headers: Headers::browser("vt"),
        };
        self.invoke(i, Request::Connect, connect, TransactionClass::Two);
    }

    fn invoke(&mut self, i: usize, request: Request, pdu: wsp::Pdu, class: TransactionClass) {
        let c = &mut self.clients[i];
        let tid = Tid::new(c.next_tid);
        c.next_tid = (c.next_tid + 1) & 0x7FFF;
        // WAP-224 §9.2: the first invoke after the TID space wraps carries TIDnew.
        let tid_new = std::mem::take(&mut c.tid_new) || tid.value() == 0;
        c.session_tids.push(tid);
        // A TID used again starts a new transaction: its results are no longer stale.
        self.ended.remove(&(c.addr, tid));
        let options = InitiatorOptions {
            tid_new,
            ..InitiatorOptions::default()
        };
        let (init, out) = Initiator::start_with(
            tid,
            class,
            pdu.encode(),
            Timers::default(),
            at(self.now),
            options,
        )
        .unwrap();
        c.running.insert(tid, (request, init));
        self.client_output(i, tid, out);
    }

    fn client_receives(&mut self, i: usize, bytes: &[u8]) {
        for pdu in wtp::decode_datagram(bytes).unwrap() {
            // Our initiator takes only its own TID's PDUs; others are late strays.
            let Some((_, init)) = self.clients[i].running.get_mut(&pdu.tid) else {
                continue;
            };
            let out = init.handle(&pdu, at(self.now));
            self.client_output(i, pdu.tid, out);
        }
    }

    fn client_output(&mut self, i: usize, tid: Tid, out: wtp::Output) {
        let addr = self.clients[i].addr;
        for bytes in out.send {
            let bytes = self.maybe_wrong_ack(i, bytes);
            self.transmit(|| Happening::ToPort {
                from: addr,
                bytes: bytes.clone(),
            });
        }
        for event in out.events {
            self.client_event(i, tid, event);
        }
        let c = &mut self.clients[i];
        if c.running
            .get(&tid)
            .is_some_and(|(_, init)| init.is_finished())
        {
            c.running.remove(&tid);
        }
    }

    /// `fakewap`'s acknowledgement: the TID of whichever transaction its threads started
    /// last, not the one acknowledged.
    fn maybe_wrong_ack(&mut self, i: usize, bytes: Vec<u8>) -> Vec<u8> {
        if self.clients[i].habit != Habit::WrongAckTid {
            return bytes;
        }
        let mut pdu = Pdu::decode(&bytes).unwrap();
        if pdu.body
            != (Body::Ack {
                tid_verification: false,
            })
        {
            return bytes;
        }
        self.sloppy_tid = (self.sloppy_tid + self.rng.random_range(1..50)) & 0x7FFF;
        pdu.tid = Tid::new(self.sloppy_tid);
        pdu.encode()
    }

    fn client_event(&mut self, i: usize, tid: Tid, event: Event) {
        if !self.clients[i].session_tids.contains(&tid) {
            // An earlier session's transaction (ended by the port, or lingering to
            // re-acknowledge): it no longer drives anything.
            return;
        }
        let request = self.clients[i].running[&tid].0.clone();
        match event {
            Event::Result(data) => {
                self.clients[i].answered.insert(tid);
                let reply = wsp::Pdu::decode(&data).unwrap();
                match (&request, reply) {
                    (Request::Connect, wsp::Pdu::ConnectReply { session_id, .. }) => {
                        self.clients[i].session_id = Some(session_id);
                        let uri = format!(
                            "http://origin/{}/{}",
                            self.clients[i].addr, self.clients[i].session
                        );
                        let get = wsp::Pdu::Get {
                            method: wsp::GetMethod::Get,
                            uri: uri.clone(),
                            headers: Headers::default(),
                        };
                        self.invoke(i, Request::Get(uri), get, TransactionClass::Two);
                    }
                    (Request::Get(uri), wsp::Pdu::Reply { body, .. }) => {
                        assert_eq!(body, uri.as_bytes(), "client {i} got another's Reply");
                        self.clients[i].gets_answered += 1;
                        self.disconnect(i);
                    }
                    (request, reply) => panic!("client {i}: {reply:?} for {request:?}"),
                }
            }
            // An abort after the result (the port ended the session before our Ack
            // reached it) changes nothing.
            Event::Aborted { .. }
                if request != Request::Disconnect && !self.clients[i].answered.contains(&tid) =>
            {
                // The session is lost (its transaction gave up or was aborted): next one.
                self.disconnect(i);
            }
            _ => {}
        }
    }

    fn disconnect(&mut self, i: usize) {
        // Without a ConnectReply there is no session to name (0 matches none).
        let session_id = self.clients[i].session_id.unwrap_or(0);
        let disconnect = wsp::Pdu::Disconnect { session_id };
        self.invoke(i, Request::Disconnect, disconnect, TransactionClass::Zero);
        let mut think = self.rng.random_range(0..50) * MS;
        if self.clients[i].habit == Habit::Restarts {
            // A reboot: WAP-224 lets an initiator use a TID again only after the
            // network's maximum packet lifetime (here the link's 150 ms at most).
            think += MAX_LIFETIME_NS;
        }
        self.clients[i].start_at = Some(self.now + think);
    }
}

#[test]
fn no_transaction_receives_another_ones_pdu() {
    // Worlds whose draws once broke a rule: a restarted client's Abort or stale Result
    // (seeds 22, 23, 33: an old invoke's TID test confirmed by the client's new
    // transaction), and a retrying initiator outliving a TID cache kept for the MPL
    // alone (7, 11, 19, 20).
    for seed in [0x5EED_0037, 7, 11, 19, 20, 22, 23, 33] {
        one_world(seed);
    }
}

fn one_world(seed: u64) {
    let mut world = World::new(seed);
    world.run();
    let plain_gets: u32 = world
        .clients
        .iter()
        .filter(|c| c.habit != Habit::WrongAckTid)
        .map(|c| c.gets_answered)
        .sum();
    let proper = world
        .clients
        .iter()
        .filter(|c| c.habit != Habit::WrongAckTid)
        .count() as u32;
    assert_eq!(
        plain_gets,
        proper * SESSIONS,
        "seed {seed}: every Get of a proper client answered"
    );
    assert!(world.results_checked >= u64::from(CLIENTS) * u64::from(SESSIONS) * 2);
    assert_eq!(
        world.port.transactions(),
        0,
        "seed {seed}: the port's table drains"
    );
}
