//! One WAP port's protocol state, without I/O: WSP datagrams in (already out of WTLS on
//! the secure ports), datagrams and origin requests out. Connectionless ports answer a
//! Get or Post by transaction id; connection-mode ports run a WTP responder per
//! transaction and a WSP session per client address.
//!
//! Every table is bounded ([`ServiceLimits`], docs/security.md): a full transaction or
//! session table evicts its least recently active entry, the TID cache forgets its least
//! recently seen peer, and a segmented invoke (SAR) is refused with a provider abort when
//! it would exceed the segments or bytes of one reassembly, or the reassemblies one peer
//! or the port may have under way.
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
use std::num::NonZeroUsize;

use lru::LruCache;

use wtlsperf_wap::wsp::{self, Capabilities, Headers};
use wtlsperf_wap::wtp::{
    self, Direction, Event, Now, Responder, Tid, TidCache, TidVerdict, Timers, TransactionClass,
};

use super::origin::OriginRequest;
use crate::wap_client::WspMode;

/// The bounds of one port's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceLimits {
    /// WTP transactions held at once; a new one beyond them evicts the least recently
    /// active.
    pub max_transactions: usize,
    /// WSP sessions held at once; a Connect beyond them evicts the least recently used.
    pub max_sessions: usize,
    /// Transactions, and sessions, one client address (all its ports) may hold; beyond
    /// them its own least recently active one goes, so one address cannot push the
    /// others out of a table. As large as the tables by default: a carrier's NAT, or a
    /// load generator (Kannel's fakewap runs all its threads from one address), puts
    /// many clients behind one address, and a class 2 transaction whose Result is never
    /// acknowledged stays until WTP's retransmissions end (up to a minute), so a lower
    /// bound evicts such an address's live transactions under load (docs/security.md).
    pub max_per_client: usize,
    /// Peers whose last TID is kept for the TID test (WAP-224 §9.2); the least recently
    /// seen is forgotten, as a restart of the gateway would forget it.
    pub max_tid_peers: usize,
    pub sar: SarLimits,
}

impl Default for ServiceLimits {
    fn default() -> Self {
        ServiceLimits {
            max_transactions: 4096,
            max_sessions: 4096,
            max_per_client: 4096,
            max_tid_peers: 16_384,
            sar: SarLimits::default(),
        }
    }
}

/// The bounds of segmented invokes (WAP-224 §9.6) under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SarLimits {
    /// Packets of one message (PSN 0 to this minus one; WTP itself allows 256).
    pub max_segments: u16,
    /// Octets of one message once reassembled.
    pub max_bytes: usize,
    /// Reassemblies one peer (address and port) may have under way.
    pub per_peer: usize,
    /// Reassemblies the port has under way.
    pub total: usize,
}

impl Default for SarLimits {
    /// 64 packets, 64 KiB, 4 per peer, 256 in all: a WAP 1.x Post of a form or a
    /// picture fits; 256 x 64 KiB is the most a port holds.
    fn default() -> Self {
        SarLimits {
            max_segments: 64,
            max_bytes: 64 * 1024,
            per_peer: 4,
            total: 256,
        }
    }
}

/// A segmented invoke under way: its octets so far and the packets seen.
#[derive(Debug, Clone, Default)]
struct Reassembling {
    bytes: usize,
    seen: [u64; 4],
}

impl Reassembling {
    /// Counts a packet once; false when it was seen before.
    fn add(&mut self, psn: u8, len: usize) -> bool {
        let (word, bit) = (usize::from(psn / 64), psn % 64);
        if self.seen[word] & (1 << bit) != 0 {
            return false;
        }
        self.seen[word] |= 1 << bit;
        self.bytes += len;
        true
    }
}

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
    /// The peer finished a WTP exchange only a reader of our answers could (a TID
    /// verification confirmed, a class 2 Result acknowledged): the reflection bound's
    /// proof of address.
    Proven {
        peer: SocketAddr,
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
    /// Transactions dropped to make room for a new one (the table was full).
    pub transactions_evicted: u64,
    /// Sessions dropped to make room for a new one.
    pub sessions_evicted: u64,
    /// Segmented invokes refused (a SAR limit) with a provider abort.
    pub sar_refused: u64,
    /// Held now: transactions, sessions, reassemblies under way, peers in the TID cache.
    pub transactions: usize,
    pub sessions: usize,
    pub reassemblies: usize,
    pub tid_peers: usize,
}

/// The key of `ip`'s least recently used entry when it holds `max` or more: the one to
/// evict before it takes another. A scan of the table, done only when an entry is made.
fn oldest_of_client<K: Copy + std::hash::Hash + Eq, V>(
    table: &LruCache<K, V>,
    ip: std::net::IpAddr,
    max: usize,
    ip_of: impl Fn(&K) -> std::net::IpAddr,
) -> Option<K> {
    let mut held = table.iter().filter(|(k, _)| ip_of(k) == ip);
    // The iterator runs from the most to the least recently used.
    let oldest = held.by_ref().nth(max.max(1) - 1).map(|(k, _)| *k);
    oldest.map(|first| held.last().map_or(first, |(k, _)| *k))
}

/// The protocol state of one port.
#[derive(Debug)]
pub struct WapService {
    mode: WspMode,
    timers: Timers,
    limits: ServiceLimits,
    server_caps: Capabilities,
    /// Ordered by activity: the least recently active is evicted first.
    responders: LruCache<(SocketAddr, Tid), Responder>,
    reassemblies: HashMap<(SocketAddr, Tid), Reassembling>,
    /// Each transaction's serial number (unique in the port's life; see
    /// [`ReplyTo::Transaction`]).
    serials: HashMap<(SocketAddr, Tid), u64>,
    /// What each transaction's opening invoke was: a digest, to tell a duplicate of it
    /// from a new invoke reusing the TID (see [`WapService::reuses_tid`]), and whether it
    /// carried TIDnew (its initiator's TIDs restarted or wrapped, WAP-224 §7.8.3.2).
    invokes: HashMap<(SocketAddr, Tid), OpeningInvoke>,
    next_serial: u64,
    /// Every deadline a transaction has set, earliest first; an entry whose transaction
    /// has since moved its timer or ended is skipped when it comes due.
    timers_due: BinaryHeap<Reverse<(u64, SocketAddr, Tid)>>,
    tids: TidCache<SocketAddr>,
    tid_peers: LruCache<SocketAddr, ()>,
    sessions: LruCache<SocketAddr, Session>,
    next_session: u32,
    pub stats: ServiceStats,
}

impl WapService {
    pub fn new(mode: WspMode, timers: Timers) -> WapService {
        WapService::with_limits(mode, timers, ServiceLimits::default())
    }

    pub fn with_limits(mode: WspMode, timers: Timers, limits: ServiceLimits) -> WapService {
        WapService {
            mode,
            timers,
            limits,
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
            responders: LruCache::unbounded(),
            reassemblies: HashMap::new(),
            serials: HashMap::new(),
            invokes: HashMap::new(),
            next_serial: 0,
            timers_due: BinaryHeap::new(),
            tids: TidCache::new(timers.tid_lifetime_ns()),
            tid_peers: LruCache::new(
                NonZeroUsize::new(limits.max_tid_peers).unwrap_or(NonZeroUsize::MIN),
            ),
            sessions: LruCache::unbounded(),
            next_session: 1,
            stats: ServiceStats::default(),
        }
    }

    /// The counters, with the tables' occupancy now.
    pub fn stats(&self) -> ServiceStats {
        ServiceStats {
            transactions: self.responders.len(),
            sessions: self.sessions.len(),
            reassemblies: self.reassemblies.len(),
            tid_peers: self.tids.len(),
            ..self.stats.clone()
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
        self.responders.put((peer, tid), responder);
        self.next_serial += 1;
        self.serials.insert((peer, tid), self.next_serial);
        self.schedule(peer, tid);
    }

    /// Ends the transaction (peer, tid) in every table: its responder, serial, invoke
    /// digest and reassembly. Its timer entries stay in the heap and are skipped.
    fn forget(&mut self, peer: SocketAddr, tid: Tid) {
        self.responders.pop(&(peer, tid));
        self.serials.remove(&(peer, tid));
        self.invokes.remove(&(peer, tid));
        self.reassemblies.remove(&(peer, tid));
    }

    /// `(tid, serial)` of the transaction running as (peer, tid), if any.
    fn running(&self, peer: SocketAddr, tid: Tid) -> Option<(Tid, u64)> {
        self.serials.get(&(peer, tid)).map(|s| (tid, *s))
    }

    fn schedule(&mut self, peer: SocketAddr, tid: Tid) {
        if let Some(at) = self
            .responders
            .peek(&(peer, tid))
            .and_then(Responder::deadline)
        {
            self.timers_due.push(Reverse((at, peer, tid)));
        }
        // Entries of evicted, ended or rescheduled transactions wait in the heap until
        // they come due; past twice the live transactions they are swept, so that the
        // heap stays within the transaction table's bound.
        if self.timers_due.len() > 2 * self.responders.len() + 64 {
            let responders = &self.responders;
            self.timers_due.retain(|Reverse((at, peer, tid))| {
                responders
                    .peek(&(*peer, *tid))
                    .and_then(Responder::deadline)
                    == Some(*at)
            });
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
            if let Some(r) = self.responders.peek_mut(&(peer, tid)) {
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

    /// Drops, without an Abort, those of an evicted session's transactions still running
    /// (counted as evicted). The eviction is caused by another address's Connect, and
    /// the port answers only a datagram's source (docs/security.md); dropped, they no
    /// longer retransmit a Result into that client's next session either.
    fn drop_transactions(&mut self, peer: SocketAddr, transactions: Vec<(Tid, u64)>) {
        for (tid, serial) in transactions {
            if self.serials.get(&(peer, tid)) == Some(&serial) {
                self.forget(peer, tid);
                self.stats.transactions_evicted += 1;
            }
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
        self.tids.heard(&peer, now);
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
            if !self.sar_admits(key, &pdu, &mut actions) {
                continue;
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

    /// Whether an invoke for a running transaction's TID starts a new transaction: a
    /// first transmission (RID clear) that is not a copy of the running transaction's
    /// own invoke (a duplicate the network made), when
    /// - it carries TIDnew: the initiator's TIDs restarted or wrapped (WAP-224 §9.2), so
    ///   the running one is an old transaction it has forgotten; or
    /// - the running one still waits on a TID test: its invoke, an old copy, never reached
    ///   the user, and the initiator's Tok, meant for its new transaction, would deliver
    ///   the old invoke's request in its place.
    ///
    /// Otherwise WTP's rule holds: an invoke for a running transaction is a duplicate and
    /// is ignored.
    fn reuses_tid(&self, peer: SocketAddr, pdu: &wtp::Pdu) -> bool {
        let wtp::Body::Invoke { tid_new, .. } = &pdu.body else {
            return false;
        };
        let key = (peer, pdu.tid);
        let another = self
            .invokes
            .get(&key)
            .is_some_and(|o| o.digest != invoke_digest(pdu));
        let unverified = || {
            self.responders
                .peek(&key)
                .is_some_and(Responder::is_verifying_tid)
        };
        !pdu.rid && another && (*tid_new || unverified())
    }

    /// A transaction for an Invoke that matches none running.
    fn open(&mut self, peer: SocketAddr, pdu: &wtp::Pdu, now: Now) -> Option<wtp::Output> {
        let wtp::Body::Invoke { class, tid_new, .. } = &pdu.body else {
            return None;
        };
        // Class 0 keeps no state to protect (Kannel's fakewap reuses the Get's TID for
        // its Disconnect); the TID test guards the reliable classes.
        let verdict = if *class == TransactionClass::Zero {
            TidVerdict::Accept
        } else {
            self.remember_tid_peer(peer);
            self.tids.verdict(peer, pdu.tid, *tid_new, now)
        };
        let (responder, out) = Responder::on_invoke(pdu, verdict, self.timers, now)?;
        let max = self.limits.max_per_client;
        if let Some(key) = oldest_of_client(&self.responders, peer.ip(), max, |k| k.0.ip()) {
            self.forget(key.0, key.1);
            self.stats.transactions_evicted += 1;
        }
        while self.responders.len() >= self.limits.max_transactions.max(1) {
            let Some(((old_peer, old_tid), _)) = self.responders.peek_lru() else {
                break;
            };
            let (old_peer, old_tid) = (*old_peer, *old_tid);
            self.forget(old_peer, old_tid);
            self.stats.transactions_evicted += 1;
        }
        self.insert(peer, pdu.tid, responder);
        let opening = OpeningInvoke {
            digest: invoke_digest(pdu),
            tid_new: *tid_new,
        };
        self.invokes.insert((peer, pdu.tid), opening);
        Some(out)
    }

    /// Keeps `peer` among the TID cache's peers, forgetting the least recently seen one
    /// when they are too many.
    fn remember_tid_peer(&mut self, peer: SocketAddr) {
        if let Some((old, ())) = self.tid_peers.push(peer, ()) {
            if old != peer {
                self.tids.forget(&old);
            }
        }
    }

    /// The SAR limits: whether a PDU may go on to its transaction. A segmented invoke
    /// that would break one is aborted (CAPTEMPEXCEEDED for too many under way,
    /// MESSAGETOOLARGE for too many packets or octets) and its transaction dropped.
    fn sar_admits(
        &mut self,
        key: (SocketAddr, Tid),
        pdu: &wtp::Pdu,
        actions: &mut Vec<Action>,
    ) -> bool {
        let sar = self.limits.sar;
        let refusal = match &pdu.body {
            wtp::Body::Invoke { trailer, data, .. }
                if !trailer.ends_message()
                    && self
                        .responders
                        .peek(&key)
                        .is_none_or(Responder::is_finished) =>
            {
                let of_peer = self.reassemblies.keys().filter(|k| k.0 == key.0).count();
                if of_peer >= sar.per_peer || self.reassemblies.len() >= sar.total {
                    Some(wtp::ProviderReason::CapacityTemporarilyExceeded)
                } else if data.len() > sar.max_bytes {
                    Some(wtp::ProviderReason::MessageTooLarge)
                } else {
                    let mut r = Reassembling::default();
                    r.add(0, data.len());
                    self.reassemblies.insert(key, r);
                    None
                }
            }
            wtp::Body::SegmentedInvoke { psn, data, .. } => {
                let over = self.reassemblies.get_mut(&key).is_some_and(|r| {
                    u16::from(*psn) >= sar.max_segments
                        || (r.add(*psn, data.len()) && r.bytes > sar.max_bytes)
                });
                over.then_some(wtp::ProviderReason::MessageTooLarge)
            }
            _ => None,
        };
        let Some(reason) = refusal else {
            return true;
        };
        self.stats.sar_refused += 1;
        self.forget(key.0, key.1);
        let abort = wtp::Pdu {
            tid: key.1,
            direction: Direction::FromResponder,
            rid: false,
            tpis: vec![],
            body: wtp::Body::Abort(wtp::AbortReason::Provider(reason)),
        };
        actions.push(Action::Send {
            to: key.0,
            bytes: abort.encode(),
        });
        false
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
        let class = self.responders.peek(&(peer, tid)).map(Responder::class);
        for event in out.events {
            match event {
                Event::Invoke { data, .. } => {
                    self.reassemblies.remove(&(peer, tid));
                    self.on_invoke(peer, tid, &data, now, actions)
                }
                Event::TidConfirmed => {
                    self.remember_tid_peer(peer);
                    self.tids.confirm(peer, tid, now);
                    actions.push(Action::Proven { peer });
                }
                // A class 2 transaction completes when the initiator acknowledges its
                // Result: the peer read it.
                Event::Completed if class == Some(TransactionClass::Two) => {
                    actions.push(Action::Proven { peer })
                }
                Event::Aborted { .. } => self.stats.transactions_aborted += 1,
                _ => {}
            }
        }
        if self
            .responders
            .peek(&(peer, tid))
            .is_some_and(Responder::is_finished)
        {
            // A copy of its invoke sent before the end may still be on its way.
            self.tids.heard(&peer, now);
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
                if self
                    .sessions
                    .peek(&peer)
                    .is_some_and(|s| s.id == session_id)
                {
                    if let Some(ended) = self.sessions.pop(&peer) {
                        self.end_transactions(peer, ended.transactions, actions);
                    }
                }
                self.no_result(peer, tid, actions);
            }
            wsp::Pdu::Suspend { session_id } => {
                if let Some(s) = self.sessions.peek_mut(&peer).filter(|s| s.id == session_id) {
                    s.suspended = true;
                    let ended = std::mem::take(&mut s.transactions);
                    self.end_transactions(peer, ended, actions);
                }
                self.no_result(peer, tid, actions);
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

    /// Disconnect and Suspend have no result: WSP sends them in class 0 (WAP-230
    /// §8.2.2.4, §8.2.2.5). In a class 2 transaction, which waits for a result that will
    /// never come, they are a protocol error: done, then aborted with PROTOERR.
    fn no_result(&mut self, peer: SocketAddr, tid: Tid, actions: &mut Vec<Action>) {
        let class = self.responders.peek(&(peer, tid)).map(Responder::class);
        if class == Some(TransactionClass::Two) {
            self.abort(peer, tid, wsp::AbortReason::ProtocolError, actions);
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
        if !self.sessions.contains(&peer) {
            let max = self.limits.max_per_client;
            // An evicted session's transactions end with it, silently (see
            // `drop_transactions`).
            if let Some(key) = oldest_of_client(&self.sessions, peer.ip(), max, SocketAddr::ip) {
                if let Some(evicted) = self.sessions.pop(&key) {
                    self.drop_transactions(key, evicted.transactions);
                }
                self.stats.sessions_evicted += 1;
            }
            while self.sessions.len() >= self.limits.max_sessions.max(1) {
                let Some((key, evicted)) = self.sessions.pop_lru() else {
                    break;
                };
                self.drop_transactions(key, evicted.transactions);
                self.stats.sessions_evicted += 1;
            }
        }
        // The client's earlier session, if any, ends here with its transactions: aborted
        // (DISCONNECT), unless this Connect said its initiator's TIDs restarted (TIDnew).
        // Then they are an earlier incarnation's, whose TIDs the new one is about to take
        // again, and an Abort carrying one would end the new transaction: dropped (and
        // counted with the evicted).
        if let Some(ended) = self.sessions.pop(&peer) {
            if self.invokes.get(&(peer, tid)).is_some_and(|o| o.tid_new) {
                self.drop_transactions(peer, ended.transactions);
            } else {
                self.end_transactions(peer, ended.transactions, actions);
            }
        }
        let id = self.next_session;
        self.next_session = self.next_session.wrapping_add(1).max(1);
        self.sessions.put(
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
        if let Some(r) = self.responders.peek_mut(&(peer, tid)) {
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
        let Some(r) = self.responders.peek_mut(&(peer, tid)) else {
            return; // the transaction ended meanwhile (aborted, timed out or evicted)
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
            // A timer is not the client's activity: the LRU order stays as it is.
            let Some(r) = self.responders.peek_mut(&(peer, tid)) else {
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

/// A transaction's opening invoke, as [`WapService`] keeps it.
#[derive(Debug, Clone, Copy)]
struct OpeningInvoke {
    digest: u64,
    tid_new: bool,
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

    /// The first PDU the gateway answers a new initiator's Connect (TID `tid`) with.
    fn first_answer_to_connect(svc: &mut WapService, tid: u16, now: Now) -> Pdu {
        let (_, out) = Initiator::start(
            Tid::new(tid),
            TransactionClass::Two,
            connect_pdu(),
            Timers::default(),
            now,
        )
        .unwrap();
        let peer: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let answer = svc
            .on_datagram(peer, &out.send[0], now)
            .into_iter()
            .find_map(|a| match a {
                Action::Send { bytes, .. } => Some(Pdu::decode(&bytes).unwrap()),
                _ => None,
            });
        answer.expect("an answer")
    }

    /// A service on which one initiator's session (Connect, TID 500) ended at time 0.
    fn after_one_session(timers: Timers) -> WapService {
        let mut svc = WapService::new(WspMode::Connection, timers);
        let (mut init, out) = Initiator::start(
            Tid::new(500),
            TransactionClass::Two,
            connect_pdu(),
            timers,
            at(0),
        )
        .unwrap();
        let (_, events) = exchange(&mut svc, &mut init, out.send, at(0));
        assert!(matches!(result_of(&events), wsp::Pdu::ConnectReply { .. }));
        svc
    }

    #[test]
    fn an_address_reused_after_the_mpl_is_a_new_initiator_without_a_tid_test() {
        // A new initiator on the same address and port starts again from a low TID, as a
        // restarted client (or Kannel's fakewap on a reused port) does.
        let timers = Timers::default();
        let mpl_ms = timers.tid_lifetime_ns() / 1_000_000;
        // Within the MPL the low TID may be an old duplicate: WAP-224's TID test asks.
        let mut svc = after_one_session(timers);
        let early = first_answer_to_connect(&mut svc, 2, at(mpl_ms));
        assert!(matches!(
            early.body,
            wtp::Body::Ack {
                tid_verification: true
            }
        ));
        // After the MPL in silence the new initiator is served at once.
        let mut svc = after_one_session(timers);
        let late = first_answer_to_connect(&mut svc, 2, at(mpl_ms + 1));
        assert!(matches!(late.body, wtp::Body::Result { .. }), "{late:?}");
        assert_eq!(svc.stats.sessions_opened, 2);
    }

    fn connect_pdu() -> Vec<u8> {
        wsp::Pdu::Connect {
            version: wsp::Version::V1_0,
            capabilities: Capabilities::default(),
            headers: Headers::default(),
        }
        .encode()
    }

    /// An initiator of `data` in packets of 10 octets, groups of 3.
    fn segmented(tid: u16, data: Vec<u8>) -> (Initiator, wtp::Output) {
        let timers = Timers {
            segment_size: 10,
            group_size: 3,
            ..Timers::default()
        };
        Initiator::start(Tid::new(tid), TransactionClass::Two, data, timers, at(0)).unwrap()
    }

    fn aborted_with(events: &[Event]) -> Option<wtp::AbortReason> {
        events.iter().find_map(|e| match e {
            Event::Aborted { reason, .. } => Some(*reason),
            _ => None,
        })
    }

    fn sar(limits: SarLimits) -> WapService {
        let limits = ServiceLimits {
            sar: limits,
            ..ServiceLimits::default()
        };
        WapService::with_limits(WspMode::Connection, Timers::default(), limits)
    }

    /// A class 2 Connect from `peer` with TID `tid` at `t` ms, whose ConnectReply is
    /// never acknowledged.
    fn unacknowledged_connect(
        svc: &mut WapService,
        peer: SocketAddr,
        tid: u16,
        t: u64,
    ) -> Vec<Action> {
        let (_, out) = Initiator::start(
            Tid::new(tid),
            TransactionClass::Two,
            connect_pdu(),
            Timers::default(),
            at(t),
        )
        .unwrap();
        svc.on_datagram(peer, &out.send[0], at(t))
    }

    /// A connection-mode service whose tables hold `transactions` and `sessions`.
    fn small_tables(transactions: usize, sessions: usize) -> WapService {
        let limits = ServiceLimits {
            max_transactions: transactions,
            max_sessions: sessions,
            ..ServiceLimits::default()
        };
        WapService::with_limits(WspMode::Connection, Timers::default(), limits)
    }

    #[test]
    fn a_full_transaction_table_evicts_the_least_recently_active() {
        let mut svc = small_tables(2, 2);
        // Three clients' Connects whose ConnectReplies are never acknowledged: each
        // transaction waits for its Ack, and the third pushes the first out. (Three
        // Connects from one client would not: each ends the client's earlier session and
        // its transactions.)
        let peers: Vec<SocketAddr> = (1..=3u8)
            .map(|i| SocketAddr::from(([127, 0, 0, i], 4000)))
            .collect();
        for (tid, peer) in (1..).zip(&peers) {
            unacknowledged_connect(&mut svc, *peer, tid, u64::from(tid));
        }
        let stats = svc.stats();
        assert_eq!((stats.transactions, stats.transactions_evicted), (2, 1));
        assert!(svc.running(peers[0], Tid::new(1)).is_none());
        assert!(!svc.invokes.contains_key(&(peers[0], Tid::new(1))));
        // Two sessions held at most: the third Connect's pushed the first out.
        assert_eq!((stats.sessions, stats.sessions_opened), (2, 3));
        assert_eq!(stats.sessions_evicted, 1);
        let other: SocketAddr = "127.0.0.9:4000".parse().unwrap();
        unacknowledged_connect(&mut svc, other, 9, 9);
        let stats = svc.stats();
        assert_eq!(stats.sessions_evicted, 2);
        assert_eq!((stats.transactions, stats.transactions_evicted), (2, 2));
    }

    #[test]
    fn evicted_transactions_leave_no_live_timer_and_the_heap_stays_bounded() {
        let mut svc = small_tables(2, 2);
        let peers: Vec<SocketAddr> = (0..500u16)
            .map(|i| SocketAddr::from(([127, 0, 1, (i % 250) as u8], 4000 + i / 250)))
            .collect();
        for (tid, peer) in (1..).zip(&peers) {
            unacknowledged_connect(&mut svc, *peer, tid, u64::from(tid));
        }
        assert_eq!(svc.transactions(), 2);
        assert!(svc.timers_due.len() <= 2 * 2 + 64 + 1);
        assert_eq!((svc.serials.len(), svc.invokes.len()), (2, 2));
        // The retry timer R: only the two live transactions retransmit their replies.
        let later = at(Timers::default().retry_interval_ns / 1_000_000 + 1_000);
        let sent: Vec<SocketAddr> = svc
            .on_timeout(later)
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, .. } => Some(*to),
                _ => None,
            })
            .collect();
        assert_eq!(sent, vec![peers[498], peers[499]]);
    }

    #[test]
    fn an_evicted_session_ends_its_transactions_without_a_datagram_to_it() {
        let mut svc = small_tables(ServiceLimits::default().max_transactions, 1);
        let first: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let second: SocketAddr = "127.0.0.2:4000".parse().unwrap();
        unacknowledged_connect(&mut svc, first, 1, 1);
        assert_eq!(svc.transactions(), 1);
        let to = |actions: &[Action]| -> Vec<SocketAddr> {
            actions
                .iter()
                .filter_map(|a| match a {
                    Action::Send { to, .. } => Some(*to),
                    _ => None,
                })
                .collect()
        };
        // Only the second client is answered: the first's transaction is dropped, not
        // aborted toward it.
        let actions = unacknowledged_connect(&mut svc, second, 2, 2);
        assert_eq!(to(&actions), vec![second]);
        let stats = svc.stats();
        assert_eq!((stats.sessions, stats.sessions_evicted), (1, 1));
        assert_eq!((stats.transactions, stats.transactions_evicted), (1, 1));
        assert!(svc.running(first, Tid::new(1)).is_none());
        // Its ConnectReply is not retransmitted (timer R) into a later session.
        let later = at(Timers::default().retry_interval_ns / 1_000_000 + 1_000);
        assert_eq!(to(&svc.on_timeout(later)), vec![second]);
    }

    #[test]
    fn one_client_cannot_hold_more_than_its_share() {
        let limits = ServiceLimits {
            max_per_client: 2,
            ..ServiceLimits::default()
        };
        let mut svc = WapService::with_limits(WspMode::Connection, Timers::default(), limits);
        // One address, three ports: three Connects whose replies stay unacknowledged.
        for port in 1..=3u16 {
            let (_, out) = Initiator::start(
                Tid::new(port),
                TransactionClass::Two,
                connect_pdu(),
                Timers::default(),
                at(u64::from(port)),
            )
            .unwrap();
            let peer = SocketAddr::from(([127, 0, 0, 5], port));
            svc.on_datagram(peer, &out.send[0], at(u64::from(port)));
        }
        let stats = svc.stats();
        assert_eq!((stats.transactions, stats.transactions_evicted), (2, 1));
        assert_eq!((stats.sessions, stats.sessions_evicted), (2, 1));
        // Another address is not touched by that one's share.
        let (_, out) = Initiator::start(
            Tid::new(9),
            TransactionClass::Two,
            connect_pdu(),
            Timers::default(),
            at(9),
        )
        .unwrap();
        svc.on_datagram(SocketAddr::from(([127, 0, 0, 6], 1)), &out.send[0], at(9));
        let stats = svc.stats();
        assert_eq!((stats.transactions, stats.transactions_evicted), (3, 1));
    }

    #[test]
    fn a_disconnect_in_class_2_is_aborted_not_left_waiting() {
        let mut svc = WapService::new(WspMode::Connection, Timers::default());
        let disconnect = wsp::Pdu::Disconnect { session_id: 1 }.encode();
        let (mut init, out) = Initiator::start(
            Tid::new(7),
            TransactionClass::Two,
            disconnect,
            Timers::default(),
            at(0),
        )
        .unwrap();
        let (_, events) = exchange(&mut svc, &mut init, out.send, at(0));
        assert_eq!(aborted_with(&events), Some(wtp::AbortReason::User(0xE0)));
        assert_eq!(svc.stats().transactions, 0);
    }

    #[test]
    fn a_result_acknowledged_proves_the_address() {
        let mut svc = WapService::new(WspMode::Connection, Timers::default());
        let (mut init, out) = Initiator::start(
            Tid::new(1),
            TransactionClass::Two,
            connect_pdu(),
            Timers::default(),
            at(0),
        )
        .unwrap();
        let (actions, events) = exchange(&mut svc, &mut init, out.send, at(0));
        assert!(matches!(result_of(&events), wsp::Pdu::ConnectReply { .. }));
        let peer: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        assert_eq!(actions, vec![Action::Proven { peer }]);
    }

    #[test]
    fn sar_over_its_segments_or_bytes_is_aborted_message_too_large() {
        // 100 octets in 10 packets: the fifth (PSN 4) is over a limit of 4 packets.
        let mut svc = sar(SarLimits {
            max_segments: 4,
            ..SarLimits::default()
        });
        let (mut init, out) = segmented(1, vec![0x40; 100]);
        let (_, events) = exchange(&mut svc, &mut init, out.send, at(0));
        let too_large = wtp::AbortReason::Provider(wtp::ProviderReason::MessageTooLarge);
        assert_eq!(aborted_with(&events), Some(too_large));
        // 25 octets at most: the third packet brings 30.
        let mut svc = sar(SarLimits {
            max_bytes: 25,
            ..SarLimits::default()
        });
        let (mut init, out) = segmented(2, vec![0x40; 100]);
        let (_, events) = exchange(&mut svc, &mut init, out.send, at(0));
        assert_eq!(aborted_with(&events), Some(too_large));
        let stats = svc.stats();
        assert_eq!(
            (stats.sar_refused, stats.reassemblies, stats.transactions),
            (1, 0, 0)
        );
        // Within the limits the same message goes through (a Get outside a session is
        // then refused by WSP, which shows it was reassembled and decoded).
        let mut svc = sar(SarLimits::default());
        let get = wsp::Pdu::Get {
            method: wsp::GetMethod::Get,
            uri: format!("http://o/{}", "p".repeat(80)),
            headers: Headers::default(),
        };
        let (mut init, out) = segmented(3, get.encode());
        let (_, events) = exchange(&mut svc, &mut init, out.send, at(0));
        assert_eq!(aborted_with(&events), Some(wtp::AbortReason::User(0xE0)));
        assert_eq!(svc.stats().sar_refused, 0);
    }

    #[test]
    fn reassemblies_under_way_are_bounded_per_peer_and_in_all() {
        let mut svc = sar(SarLimits {
            per_peer: 1,
            total: 2,
            ..SarLimits::default()
        });
        let busy = wtp::AbortReason::Provider(wtp::ProviderReason::CapacityTemporarilyExceeded);
        // The first group of a message of 10 packets, never finished, from one peer and
        // then from others.
        let first_group = |svc: &mut WapService, peer: &str, tid: u16| {
            let (_, out) = segmented(tid, vec![0x40; 100]);
            let mut back = Vec::new();
            for d in &out.send {
                for a in svc.on_datagram(peer.parse().unwrap(), d, at(0)) {
                    if let Action::Send { bytes, .. } = a {
                        back.extend(wtp::decode_datagram(&bytes).unwrap());
                    }
                }
            }
            back.into_iter().find_map(|p| match p.body {
                wtp::Body::Abort(reason) => Some(reason),
                _ => None,
            })
        };
        assert_eq!(first_group(&mut svc, "127.0.0.1:1", 1), None);
        assert_eq!(first_group(&mut svc, "127.0.0.1:1", 2), Some(busy));
        assert_eq!(first_group(&mut svc, "127.0.0.2:1", 3), None);
        assert_eq!(first_group(&mut svc, "127.0.0.3:1", 4), Some(busy));
        let stats = svc.stats();
        assert_eq!((stats.reassemblies, stats.sar_refused), (2, 2));
    }
}
