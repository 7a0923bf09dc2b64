//! One WAP port's protocol state, without I/O: WSP datagrams in (already out of WTLS on
//! the secure ports), datagrams and origin requests out. Connectionless ports answer a
//! Get or Post by transaction id; connection-mode ports run a WTP responder per
//! transaction and a WSP session per client address.
//!
//! A session's end ends its transactions. WSP's server session state table (WAP-230)
//! aborts the Connect transaction and every method transaction with DISCONNECT when the
//! client disconnects, and a new Connect from the same client disconnects its other
//! sessions first (Kannel's wapbox does both: `wsp_server_session_states.def`,
//! `disconnect_other_sessions`). Without that, a result whose
//! acknowledgement never arrived stays in WTP's retransmission (timer R) after the
//! session is gone, and reaches the next session of the same address, whose client may
//! take it for the answer to its own request: Kannel's `fakewap` matches results by PDU
//! type, not TID, and acknowledges with a TID that its threads share (docs/wap.md).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;

use wtlsperf_wap::wsp::{self, Capabilities, Headers};
use wtlsperf_wap::wtp::{
    self, Direction, Event, Now, Responder, Tid, TidCache, TidVerdict, Timers, TransactionClass,
};

use super::origin::OriginRequest;
use crate::wap_client::WspMode;

/// Most WTP transactions one port keeps at once; an Invoke beyond them is aborted with
/// CAPTEMPEXCEEDED.
const MAX_TRANSACTIONS: usize = 4096;
/// Most sessions one port keeps.
const MAX_SESSIONS: usize = 4096;

/// Where an origin's answer goes back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplyTo {
    Connectionless {
        peer: SocketAddr,
        tid: u8,
    },
    /// `serial` names the transaction itself: the address and TID may belong to a newer
    /// transaction by the time a slow origin answers (the old one aborted, the client's
    /// TIDs restarted), and that one must not get the old request's answer.
    Transaction {
        peer: SocketAddr,
        tid: Tid,
        serial: u64,
    },
}

/// What the port's driver must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Send {
        to: SocketAddr,
        bytes: Vec<u8>,
    },
    Fetch {
        request: OriginRequest,
        reply_to: ReplyTo,
    },
}

#[derive(Debug, Clone)]
struct Session {
    id: u32,
    headers: Headers,
    suspended: bool,
    /// Its transactions (the Connect and each method), by TID and serial: the session's
    /// end aborts those still running, and no transaction of a newer session.
    transactions: Vec<(Tid, u64)>,
}

/// Counters of what the port did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ServiceStats {
    pub requests: u64,
    pub replies: u64,
    pub sessions_opened: u64,
    pub transactions_aborted: u64,
    pub undecodable: u64,
}

/// The protocol state of one port.
#[derive(Debug)]
pub struct WapService {
    mode: WspMode,
    timers: Timers,
    server_caps: Capabilities,
    responders: HashMap<(SocketAddr, Tid), Responder>,
    /// Each transaction's serial number (unique in the port's life; see
    /// [`ReplyTo::Transaction`]).
    serials: HashMap<(SocketAddr, Tid), u64>,
    /// A digest of the invoke that opened each transaction, to tell a duplicate of it
    /// from a new invoke reusing the TID (see [`WapService::reuses_tid`]).
    invokes: HashMap<(SocketAddr, Tid), u64>,
    next_serial: u64,
    /// Every deadline a transaction has set, earliest first; an entry whose transaction
    /// has since moved its timer or ended is skipped when it comes due.
    timers_due: BinaryHeap<Reverse<(u64, SocketAddr, Tid)>>,
    tids: TidCache<SocketAddr>,
    sessions: HashMap<SocketAddr, Session>,
    next_session: u32,
    pub stats: ServiceStats,
}

impl WapService {
    pub fn new(mode: WspMode, timers: Timers) -> WapService {
        WapService {
            mode,
            timers,
            // What this gateway takes and gives: SDUs up to one UDP datagram, one
            // outstanding method at a time per session, no push.
            server_caps: Capabilities {
                client_sdu_size: Some(65_535),
                server_sdu_size: Some(65_535),
                protocol_options: Some(0),
                method_mor: Some(1),
                push_mor: Some(0),
                other: Vec::new(),
            },
            responders: HashMap::new(),
            serials: HashMap::new(),
            invokes: HashMap::new(),
            next_serial: 0,
            timers_due: BinaryHeap::new(),
            tids: TidCache::default(),
            sessions: HashMap::new(),
            next_session: 1,
            stats: ServiceStats::default(),
        }
    }

    /// The earliest WTP timer, in the virtual time's nanoseconds (possibly one that has
    /// been moved since: [`WapService::on_timeout`] then finds nothing due).
    pub fn deadline(&self) -> Option<u64> {
        self.timers_due.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Transactions running (not yet ended).
    pub fn transactions(&self) -> usize {
        self.responders.len()
    }

    fn insert(&mut self, peer: SocketAddr, tid: Tid, responder: Responder) {
        self.responders.insert((peer, tid), responder);
        self.next_serial += 1;
        self.serials.insert((peer, tid), self.next_serial);
        self.schedule(peer, tid);
    }

    fn forget(&mut self, peer: SocketAddr, tid: Tid) {
        self.responders.remove(&(peer, tid));
        self.serials.remove(&(peer, tid));
        self.invokes.remove(&(peer, tid));
    }

    /// `(tid, serial)` of the transaction running as (peer, tid), if any.
    fn running(&self, peer: SocketAddr, tid: Tid) -> Option<(Tid, u64)> {
        self.serials.get(&(peer, tid)).map(|s| (tid, *s))
    }

    fn schedule(&mut self, peer: SocketAddr, tid: Tid) {
        if let Some(at) = self
            .responders
            .get(&(peer, tid))
            .and_then(Responder::deadline)
        {
            self.timers_due.push(Reverse((at, peer, tid)));
        }
    }

    /// Aborts with DISCONNECT those of an ended session's transactions still running
    /// (a TID since taken by a newer transaction has another serial and is left alone).
    fn end_transactions(
        &mut self,
        peer: SocketAddr,
        transactions: Vec<(Tid, u64)>,
        actions: &mut Vec<Action>,
    ) {
        for (tid, serial) in transactions {
            if self.serials.get(&(peer, tid)) != Some(&serial) {
                continue;
            }
            if let Some(r) = self.responders.get_mut(&(peer, tid)) {
                let out = r.user_abort(wsp::AbortReason::Disconnect as u8);
                if !out.send.is_empty() {
                    self.stats.transactions_aborted += 1;
                }
                actions.extend(
                    out.send
                        .into_iter()
                        .map(|bytes| Action::Send { to: peer, bytes }),
                );
            }
            self.forget(peer, tid);
        }
    }

    pub fn on_datagram(&mut self, peer: SocketAddr, bytes: &[u8], now: Now) -> Vec<Action> {
        match self.mode {
            WspMode::Connectionless => self.connectionless(peer, bytes),
            WspMode::Connection => self.wtp_datagram(peer, bytes, now),
        }
    }

    fn connectionless(&mut self, peer: SocketAddr, bytes: &[u8]) -> Vec<Action> {
        let Ok((tid, pdu)) = wsp::decode_connectionless(bytes) else {
            self.stats.undecodable += 1;
            return Vec::new();
        };
        match OriginRequest::from_pdu(&pdu, &Headers::default()) {
            Some(request) => {
                self.stats.requests += 1;
                vec![Action::Fetch {
                    request,
                    reply_to: ReplyTo::Connectionless { peer, tid },
                }]
            }
            // Connectionless WSP has no session PDUs; others are ignored.
            None => Vec::new(),
        }
    }

    fn wtp_datagram(&mut self, peer: SocketAddr, bytes: &[u8], now: Now) -> Vec<Action> {
        let Ok(pdus) = wtp::decode_datagram(bytes) else {
            self.stats.undecodable += 1;
            return Vec::new();
        };
        let mut actions = Vec::new();
        for pdu in pdus {
            if pdu.direction != Direction::FromInitiator {
                continue;
            }
            let key = (peer, pdu.tid);
            if self.reuses_tid(peer, &pdu) {
                // The old transaction is dropped without an Abort: one would carry this
                // TID and reach the new transaction's initiator.
                self.forget(peer, pdu.tid);
            }
            let out = match self.responders.get_mut(&key) {
                Some(r) if !r.is_finished() => r.handle(&pdu, now),
                _ => match self.open(peer, &pdu, now) {
                    Some(out) => out,
                    None => continue,
                },
            };
            self.apply(peer, pdu.tid, out, now, &mut actions);
        }
        actions
    }

    /// Whether an invoke for a running transaction's TID starts a new transaction. A
    /// first transmission (RID clear) that carries TIDnew comes from an initiator whose
    /// TIDs restarted or wrapped (WAP-224 §9.2): if it is not a copy of the running
    /// transaction's own invoke (a duplicate the network made), the running one is an
    /// old transaction that the initiator has forgotten. Without TIDnew, WTP's rule holds:
    /// an invoke for a running transaction is a duplicate and is ignored.
    fn reuses_tid(&self, peer: SocketAddr, pdu: &wtp::Pdu) -> bool {
        match &pdu.body {
            wtp::Body::Invoke { tid_new: true, .. } if !pdu.rid => self
                .invokes
                .get(&(peer, pdu.tid))
                .is_some_and(|d| *d != invoke_digest(pdu)),
            _ => false,
        }
    }

    /// A transaction for an Invoke that matches none running.
    fn open(&mut self, peer: SocketAddr, pdu: &wtp::Pdu, now: Now) -> Option<wtp::Output> {
        let wtp::Body::Invoke { class, tid_new, .. } = &pdu.body else {
            return None;
        };
        if self.responders.len() >= MAX_TRANSACTIONS {
            let abort = wtp::Pdu {
                tid: pdu.tid,
                direction: Direction::FromResponder,
                rid: false,
                tpis: vec![],
                body: wtp::Body::Abort(wtp::AbortReason::Provider(
                    wtp::ProviderReason::CapacityTemporarilyExceeded,
                )),
            };
            return Some(wtp::Output {
                send: vec![abort.encode()],
                events: vec![],
            });
        }
        // Class 0 keeps no state to protect (Kannel's fakewap reuses the Get's TID for
        // its Disconnect); the TID test guards the reliable classes.
        let verdict = if *class == TransactionClass::Zero {
            TidVerdict::Accept
        } else {
            self.tids.verdict(peer, pdu.tid, *tid_new)
        };
        let (responder, out) = Responder::on_invoke(pdu, verdict, self.timers, now)?;
        self.insert(peer, pdu.tid, responder);
        self.invokes.insert((peer, pdu.tid), invoke_digest(pdu));
        Some(out)
    }

    fn apply(
        &mut self,
        peer: SocketAddr,
        tid: Tid,
        out: wtp::Output,
        now: Now,
        actions: &mut Vec<Action>,
    ) {
        actions.extend(
            out.send
                .into_iter()
                .map(|bytes| Action::Send { to: peer, bytes }),
        );
        for event in out.events {
            match event {
                Event::Invoke { data, .. } => self.on_invoke(peer, tid, &data, now, actions),
                Event::TidConfirmed => self.tids.confirm(peer, tid),
                Event::Aborted { .. } => self.stats.transactions_aborted += 1,
                _ => {}
            }
        }
        if self
            .responders
            .get(&(peer, tid))
            .is_some_and(Responder::is_finished)
        {
            self.forget(peer, tid);
        } else {
            self.schedule(peer, tid);
        }
    }

    /// A WSP PDU that arrived in a transaction.
    fn on_invoke(
        &mut self,
        peer: SocketAddr,
        tid: Tid,
        data: &[u8],
        now: Now,
        actions: &mut Vec<Action>,
    ) {
        let pdu = match wsp::Pdu::decode(data) {
            Ok(p) => p,
            Err(_) => {
                self.stats.undecodable += 1;
                return self.abort(peer, tid, wsp::AbortReason::ProtocolError, actions);
            }
        };
        match pdu {
            wsp::Pdu::Connect {
                capabilities,
                headers,
                ..
            } => self.connect(peer, tid, &capabilities, headers, now, actions),
            wsp::Pdu::Disconnect { session_id } => {
                if self.sessions.get(&peer).is_some_and(|s| s.id == session_id) {
                    if let Some(ended) = self.sessions.remove(&peer) {
                        self.end_transactions(peer, ended.transactions, actions);
                    }
                }
            }
            wsp::Pdu::Suspend { session_id } => {
                if let Some(s) = self.sessions.get_mut(&peer).filter(|s| s.id == session_id) {
                    s.suspended = true;
                    let ended = std::mem::take(&mut s.transactions);
                    self.end_transactions(peer, ended, actions);
                }
            }
            wsp::Pdu::Resume { session_id, .. } => self.resume(peer, tid, session_id, now, actions),
            method => {
                let running = self.running(peer, tid);
                let serials = &self.serials;
                let Some(session) = self.sessions.get_mut(&peer).filter(|s| !s.suspended) else {
                    // A method outside a session (WAP-230 §8.3.1) is refused.
                    return self.abort(peer, tid, wsp::AbortReason::ProtocolError, actions);
                };
                // The method is the session's; those that ended leave its list.
                session
                    .transactions
                    .retain(|(t, s)| serials.get(&(peer, *t)) == Some(s));
                session.transactions.extend(running);
                let serial = running.map_or(0, |(_, s)| s);
                match OriginRequest::from_pdu(&method, &session.headers) {
                    Some(request) => {
                        self.stats.requests += 1;
                        actions.push(Action::Fetch {
                            request,
                            reply_to: ReplyTo::Transaction { peer, tid, serial },
                        });
                    }
                    None => self.abort(peer, tid, wsp::AbortReason::ProtocolError, actions),
                }
            }
        }
    }

    fn connect(
        &mut self,
        peer: SocketAddr,
        tid: Tid,
        caps: &Capabilities,
        headers: Headers,
        now: Now,
        actions: &mut Vec<Action>,
    ) {
        if self.sessions.len() >= MAX_SESSIONS && !self.sessions.contains_key(&peer) {
            return self.abort(peer, tid, wsp::AbortReason::Congestion, actions);
        }
        // The client's earlier session, if any, ends here with its transactions.
        if let Some(ended) = self.sessions.remove(&peer) {
            self.end_transactions(peer, ended.transactions, actions);
        }
        let id = self.next_session;
        self.next_session = self.next_session.wrapping_add(1).max(1);
        self.sessions.insert(
            peer,
            Session {
                id,
                headers,
                suspended: false,
                transactions: self.running(peer, tid).into_iter().collect(),
            },
        );
        self.stats.sessions_opened += 1;
        let reply = wsp::Pdu::ConnectReply {
            session_id: id,
            capabilities: caps.negotiate(&self.server_caps),
            headers: Headers::default(),
        };
        self.result(peer, tid, reply, now, actions);
    }

    fn resume(
        &mut self,
        peer: SocketAddr,
        tid: Tid,
        session_id: u32,
        now: Now,
        actions: &mut Vec<Action>,
    ) {
        match self.sessions.get_mut(&peer).filter(|s| s.id == session_id) {
            Some(s) => {
                s.suspended = false;
                let reply = wsp::Pdu::Reply {
                    status: wsp::Status::OK,
                    content_type: wsp::ContentType::ANY,
                    headers: Headers::default(),
                    body: Vec::new(),
                };
                self.result(peer, tid, reply, now, actions);
            }
            None => self.abort(peer, tid, wsp::AbortReason::ProtocolError, actions),
        }
    }

    fn abort(
        &mut self,
        peer: SocketAddr,
        tid: Tid,
        reason: wsp::AbortReason,
        actions: &mut Vec<Action>,
    ) {
        if let Some(r) = self.responders.get_mut(&(peer, tid)) {
            let out = r.user_abort(reason as u8);
            actions.extend(
                out.send
                    .into_iter()
                    .map(|bytes| Action::Send { to: peer, bytes }),
            );
            self.stats.transactions_aborted += 1;
        }
    }

    fn result(
        &mut self,
        peer: SocketAddr,
        tid: Tid,
        pdu: wsp::Pdu,
        now: Now,
        actions: &mut Vec<Action>,
    ) {
        let Some(r) = self.responders.get_mut(&(peer, tid)) else {
            return; // the transaction ended meanwhile (aborted or timed out)
        };
        if let Ok(out) = r.result(pdu.encode(), now) {
            self.stats.replies += 1;
            self.apply(peer, tid, out, now, actions);
        }
    }

    /// The origin's answer for a request.
    pub fn on_reply(&mut self, to: ReplyTo, reply: wsp::Pdu, now: Now) -> Vec<Action> {
        let mut actions = Vec::new();
        match to {
            ReplyTo::Connectionless { peer, tid } => {
                self.stats.replies += 1;
                actions.push(Action::Send {
                    to: peer,
                    bytes: wsp::encode_connectionless(tid, &reply),
                });
            }
            ReplyTo::Transaction { peer, tid, serial } => {
                if self.serials.get(&(peer, tid)) == Some(&serial) {
                    self.result(peer, tid, reply, now, &mut actions);
                }
                // Otherwise the transaction has ended: the answer has nobody to go to.
            }
        }
        actions
    }

    /// Runs the WTP timers that are due.
    pub fn on_timeout(&mut self, now: Now) -> Vec<Action> {
        let mut actions = Vec::new();
        while let Some(Reverse((at, peer, tid))) = self.timers_due.peek().copied() {
            if at > now.mono_ns {
                break;
            }
            self.timers_due.pop();
            let Some(r) = self.responders.get_mut(&(peer, tid)) else {
                continue; // ended meanwhile
            };
            if r.deadline() != Some(at) {
                continue; // moved meanwhile: its current deadline has its own entry
            }
            let out = r.on_timeout(now);
            self.apply(peer, tid, out, now, &mut actions);
        }
        actions
    }
}

/// A digest of an invoke's class, flags and user data.
fn invoke_digest(pdu: &wtp::Pdu) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    if let wtp::Body::Invoke {
        class,
        tid_new,
        user_ack,
        data,
        ..
    } = &pdu.body
    {
        (*class as u8, *tid_new, *user_ack, data).hash(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtlsperf_wap::wtp::{Initiator, Pdu};

    fn at(ms: u64) -> Now {
        Now::new(ms * 1_000_000, 0)
    }

    /// Feeds an initiator's datagrams to the service and the service's answers back,
    /// until nothing moves; returns the fetches asked for and the initiator's events.
    fn exchange(
        svc: &mut WapService,
        init: &mut Initiator,
        mut to_gateway: Vec<Vec<u8>>,
        now: Now,
    ) -> (Vec<Action>, Vec<Event>) {
        let peer: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let (mut fetches, mut events) = (Vec::new(), Vec::new());
        while !to_gateway.is_empty() {
            let mut back = Vec::new();
            for d in to_gateway.drain(..) {
                for a in svc.on_datagram(peer, &d, now) {
                    match a {
                        Action::Send { bytes, .. } => back.push(bytes),
                        fetch => fetches.push(fetch),
                    }
                }
            }
            for d in back {
                for pdu in wtp::decode_datagram(&d).unwrap() {
                    let out = init.handle(&pdu, now);
                    to_gateway.extend(out.send);
                    events.extend(out.events);
                }
            }
        }
        (fetches, events)
    }

    fn result_of(events: &[Event]) -> wsp::Pdu {
        events
            .iter()
            .find_map(|e| match e {
                Event::Result(d) => Some(wsp::Pdu::decode(d).unwrap()),
                _ => None,
            })
            .expect("a result")
    }

    #[test]
    fn a_session_is_connected_and_its_get_goes_to_the_origin() {
        let mut svc = WapService::new(WspMode::Connection, Timers::default());
        let get = wsp::Pdu::Get {
            method: wsp::GetMethod::Get,
            uri: "http://o/p.wml".into(),
            headers: Headers::default(),
        };
        // A Get before any Connect is aborted (WSP PROTOERR).
        let (mut init, out) = Initiator::start(
            Tid::new(1),
            TransactionClass::Two,
            get.encode(),
            Timers::default(),
            at(0),
        )
        .unwrap();
        let (fetches, events) = exchange(&mut svc, &mut init, out.send, at(0));
        assert!(fetches.is_empty());
        assert!(matches!(
            events.last(),
            Some(Event::Aborted {
                reason: wtp::AbortReason::User(0xE0),
                by_peer: true
            })
        ));
        // Connect: a ConnectReply with the negotiated capabilities.
        let connect = wsp::Pdu::Connect {
            version: wsp::Version::V1_0,
            capabilities: Capabilities {
                method_mor: Some(4),
                ..Capabilities::default()
            },
            headers: Headers::browser("t"),
        };
        let (mut init, out) = Initiator::start(
            Tid::new(2),
            TransactionClass::Two,
            connect.encode(),
            Timers::default(),
            at(1),
        )
        .unwrap();
        let (_, events) = exchange(&mut svc, &mut init, out.send, at(1));
        let wsp::Pdu::ConnectReply { capabilities, .. } = result_of(&events) else {
            panic!("not a ConnectReply")
        };
        assert_eq!(capabilities.method_mor, Some(1));
        // The Get now becomes an origin request carrying the session's Accept headers.
        let (mut init, out) = Initiator::start(
            Tid::new(3),
            TransactionClass::Two,
            get.encode(),
            Timers::default(),
            at(2),
        )
        .unwrap();
        let (fetches, _) = exchange(&mut svc, &mut init, out.send, at(2));
        let [Action::Fetch { request, reply_to }] = fetches.as_slice() else {
            panic!("{fetches:?}")
        };
        assert_eq!(request.uri, "http://o/p.wml");
        assert!(request.accepts_wmlc && !request.accepts_wml);
        // The origin's answer is the transaction's result.
        let reply = wsp::Pdu::Reply {
            status: wsp::Status::OK,
            content_type: wsp::ContentType::WMLC,
            headers: Headers::default(),
            body: vec![1, 2],
        };
        let back: Vec<Vec<u8>> = svc
            .on_reply(*reply_to, reply.clone(), at(3))
            .into_iter()
            .map(|a| match a {
                Action::Send { bytes, .. } => bytes,
                other => panic!("{other:?}"),
            })
            .collect();
        let pdu = Pdu::decode(&back[0]).unwrap();
        let out = init.handle(&pdu, at(3));
        assert_eq!(result_of(&out.events), reply);
        assert_eq!(svc.stats.requests, 1);
        assert_eq!(svc.stats.sessions_opened, 1);
    }
}
