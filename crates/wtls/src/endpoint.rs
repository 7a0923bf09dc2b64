//! The server side of a WTLS gateway as one sans-IO object: datagrams in, with their
//! source address and the time; datagrams out, with their destination; events for the
//! application. On the pattern of quinn-proto's `Endpoint`, it owns everything that is
//! per-peer policy rather than protocol: the peer table, its bounds, expiry and
//! eviction, the bound on re-answered ClientHellos, the response-rate limiter toward
//! unverified addresses, the session cache handle and the counters. The UDP gateway,
//! the in-process load mode and the flood are drivers around it; its tests drive it in
//! virtual time with as many addresses as they like.
//!
//! The rules, and why (the threat model is in `docs/security.md`):
//!
//! - **Spoofing changes nothing that dropping would not.** Anyone can forge a datagram
//!   with a client's source address. So a ClientHello from an address that holds a
//!   connection starts a new handshake *beside* it; the old connection ends only when
//!   the new handshake completes (its Finished verified). A datagram that is not a new
//!   ClientHello is offered to the address's handshakes (newest first), then to its
//!   established connection, and goes to the first that does not drop it (the engine
//!   drops an unauthenticated record that does not fit its state and leaves the state
//!   unchanged, DTLS's rule, RFC 6347 §4.1.2.7). A session leaves the cache only through
//!   the engine, by a connection that proved it owns it; eviction and expiry never touch
//!   the cache, so an evicted client resumes.
//! - **Reflection is bounded.** A copy of the ClientHello that opened a handshake is
//!   answered again from the retransmission cache at most `max_hello_reanswers` times;
//!   every datagram of a handshake not yet verified is charged to the [`limiter`]'s byte
//!   budget toward its destination address and prefix (DNS RRL), or paid from the credit
//!   its address earned by completing handshakes. The endpoints of a gateway's workers
//!   share one limiter ([`Endpoint::with_limiter`]).
//! - **Room for newcomers.** With `max_peers` connections held, a newcomer evicts the
//!   half-open handshake that has waited longest when half-open handshakes hold an eighth
//!   of the table or more (a SYN-flood defence: a flood pushes out its own stale
//!   entries), and otherwise the established connection that has been quiet longest
//!   (whose session stays resumable). An address holds at most
//!   `max_handshakes_per_address` handshakes; a further ClientHello evicts that
//!   address's oldest one.

pub mod limiter;
mod table;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use crate::handshake::{
    Datagram, Event, HandshakeKind, LocalError, Now, Output, ProtocolError, ServerConfig,
    ServerConnection, SessionStore,
};
use crate::msgs::enums::AlertDescription;
use crate::probe::Probe;

pub use limiter::{ResponseLimit, ResponseLimiter};
pub use table::entry_overhead_bytes;
use table::{Peer, Slot, Table};

/// Most deadline items one [`Endpoint::handle_timeout`] call examines, so that a call
/// never stalls a worker for long even with a million peers; the rest wait for the next.
pub const SWEEP_BUDGET: usize = 4096;
/// Most heap items one eviction examines before it gives up and refuses the newcomer.
const EVICTION_BUDGET: usize = 64;
/// Most connections one address may hold (one established, the rest handshakes).
const MAX_PER_ADDRESS: usize = 8;
/// A full table evicts half-open handshakes first once they hold 1/8 of it.
const HALF_OPEN_SHARE: usize = 8;

/// The endpoint's policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EndpointConfig {
    /// Most connections held at once (half-open and established).
    pub max_peers: usize,
    /// A handshake not complete this long after its first datagram is forgotten.
    pub handshake_timeout_ns: u64,
    /// An established connection silent this long is forgotten.
    pub idle_timeout_ns: u64,
    /// How often a copy of a handshake's ClientHello is answered again.
    pub max_hello_reanswers: u32,
    /// Most handshakes one address may have under way beside its connection (at most 7).
    pub max_handshakes_per_address: usize,
    pub response_limit: ResponseLimit,
    /// The address of a UDP balancer in front of this endpoint (`docs/network.md`).
    /// Every client behind it arrives from this address, one source port per client
    /// socket, so a budget per address would make all of them share one: answers toward
    /// the balancer are charged per source socket instead (one balancer session, one
    /// client), and the per-client-address and per-prefix bounds are the balancer's.
    pub balancer: Option<IpAddr>,
}

impl Default for EndpointConfig {
    /// 100 000 peers, 10 s to finish a handshake, 60 s idle, two re-answers, four
    /// handshakes per address, the default response limit.
    fn default() -> Self {
        EndpointConfig {
            max_peers: 100_000,
            handshake_timeout_ns: 10_000_000_000,
            idle_timeout_ns: 60_000_000_000,
            max_hello_reanswers: 2,
            max_handshakes_per_address: 4,
            response_limit: ResponseLimit::default(),
            balancer: None,
        }
    }
}

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    pub destination: SocketAddr,
    pub payload: Vec<u8>,
}

/// What the application hears about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointEvent {
    HandshakeComplete {
        peer: SocketAddr,
        kind: HandshakeKind,
    },
    ApplicationData {
        peer: SocketAddr,
        data: Vec<u8>,
    },
}

/// What one datagram produced. Reused across calls, so serving allocates nothing the
/// engine does not.
#[derive(Debug, Default)]
pub struct Handled {
    pub transmits: Vec<Transmit>,
    pub events: Vec<EndpointEvent>,
    /// A connection that was handshaking took the datagram: a job of the queue model.
    pub handshake_job: bool,
    /// Records the datagram carried, as the connection that took it framed them.
    pub records_in: usize,
}

impl Handled {
    fn clear(&mut self) {
        self.transmits.clear();
        self.events.clear();
        self.handshake_job = false;
        self.records_in = 0;
    }
}

/// Counters (since start) and gauges (now).
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointStats {
    /// Connections held now, and how many of them are half-open or established.
    pub connections: u64,
    pub half_open: u64,
    pub established: u64,
    /// Estimated bytes of per-peer state: connection heap plus per-entry overhead.
    pub state_bytes: u64,
    /// Completed handshakes: full, abbreviated, optimised.
    pub handshakes: [u64; 3],
    /// Alerts sent, indexed by description code.
    pub alerts_sent: [u64; 256],
    pub datagrams_received: u64,
    pub bytes_received: u64,
    pub datagrams_sent: u64,
    pub bytes_sent: u64,
    /// Of those, to addresses that held no verified connection.
    pub bytes_sent_unverified: u64,
    /// Records the engine dropped without an answer, plus refused datagrams.
    pub dropped: u64,
    /// Newcomers that got no state: the table was full and nothing could be evicted.
    pub refused: u64,
    /// Handshakes and idle connections that ran out of time.
    pub expired: u64,
    /// Half-open handshakes evicted for a newcomer.
    pub evicted_half_open: u64,
    /// Established connections evicted for a newcomer (least recently active first).
    pub evicted_idle: u64,
    /// Handshakes evicted by a newer ClientHello of the same address.
    pub evicted_per_address: u64,
    /// Handshakes started beside a connection the address already held.
    pub parallel_handshakes: u64,
    /// Connections ended because a newer handshake of their address completed.
    pub replaced: u64,
    /// Retransmitted flights answered from the engine's cache.
    pub retransmissions_answered: u64,
    /// Copies of a ClientHello not answered again (over `max_hello_reanswers`).
    pub reanswers_suppressed: u64,
    /// Datagrams not sent, and their bytes, because the response budget was spent.
    pub rate_limited: u64,
    pub rate_limited_bytes: u64,
}

impl Default for EndpointStats {
    fn default() -> Self {
        EndpointStats {
            connections: 0,
            half_open: 0,
            established: 0,
            state_bytes: 0,
            handshakes: [0; 3],
            alerts_sent: [0; 256],
            datagrams_received: 0,
            bytes_received: 0,
            datagrams_sent: 0,
            bytes_sent: 0,
            bytes_sent_unverified: 0,
            dropped: 0,
            refused: 0,
            expired: 0,
            evicted_half_open: 0,
            evicted_idle: 0,
            evicted_per_address: 0,
            parallel_handshakes: 0,
            replaced: 0,
            retransmissions_answered: 0,
            reanswers_suppressed: 0,
            rate_limited: 0,
            rate_limited_bytes: 0,
        }
    }
}

impl EndpointStats {
    /// Every eviction and expiry together.
    pub fn evicted(&self) -> u64 {
        self.expired + self.evicted_half_open + self.evicted_idle + self.evicted_per_address
    }

    pub fn handshakes_completed(&self) -> u64 {
        self.handshakes.iter().sum()
    }

    /// Completed handshakes by kind name, nonzero ones only.
    pub fn handshakes_by_kind(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        [
            HandshakeKind::Full,
            HandshakeKind::Abbreviated,
            HandshakeKind::Optimised,
        ]
        .into_iter()
        .map(|k| (kind_name(k), self.handshakes[kind_index(k)]))
        .filter(|(_, n)| *n > 0)
    }

    /// Alerts sent by description name, nonzero ones only.
    pub fn alerts_by_name(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.alerts_sent
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .filter_map(|(code, n)| {
                let desc = AlertDescription::from_u8(code as u8).ok()?;
                Some((desc.name(), *n))
            })
    }
}

/// The name of a handshake kind in counters and reports.
pub fn kind_name(kind: HandshakeKind) -> &'static str {
    match kind {
        HandshakeKind::Full => "full",
        HandshakeKind::Abbreviated => "abbreviated",
        HandshakeKind::Optimised => "optimised",
    }
}

fn kind_index(kind: HandshakeKind) -> usize {
    match kind {
        HandshakeKind::Full => 0,
        HandshakeKind::Abbreviated => 1,
        HandshakeKind::Optimised => 2,
    }
}

/// Whether a datagram opens with a plaintext ClientHello ([`Datagram::starts_with_client_hello`]).
pub fn starts_with_client_hello(datagram: &[u8]) -> bool {
    Datagram::frame(datagram).starts_with_client_hello()
}

/// What the application answers to data from a peer: a reply to seal on the connection
/// the data came in on, in the same pass, or `None`.
pub type Reply<'r> = &'r mut dyn FnMut(SocketAddr, &[u8]) -> Option<Vec<u8>>;

/// Whether the engine declined a datagram: it dropped it whole, and by the engine's rule
/// the connection's state is exactly what it was ([`Output::dropped`]).
fn declined(out: &Output) -> bool {
    out.dropped
}

/// One datagram as the endpoint took it in, framed once.
struct Arrival<'a> {
    now: Now,
    from: SocketAddr,
    datagram: Datagram<'a>,
    /// It opens with a plaintext ClientHello.
    hello: bool,
}

/// How a datagram finds its connection.
enum Route {
    /// A ClientHello no connection of the address was made from: a new handshake.
    New,
    /// A copy of the ClientHello connection `i` was made from.
    One(usize),
    /// Anything else from a known address: offered to its connections in turn.
    Offer,
}

/// The gateway's per-peer policy around the handshake engine (module docs).
pub struct Endpoint {
    server: Arc<ServerConfig>,
    config: EndpointConfig,
    table: Table,
    limiter: Arc<ResponseLimiter>,
    stats: EndpointStats,
    next_generation: u64,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("config", &self.config)
            .field("connections", &self.table.connections)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint with its table sized for `config.max_peers` up front: a table that
    /// doubles under load rehashes every entry at once (milliseconds with 100 000 peers).
    pub fn new(server: Arc<ServerConfig>, config: EndpointConfig) -> Self {
        let limiter = ResponseLimiter::new(config.response_limit, config.idle_timeout_ns);
        Endpoint::with_limiter(server, config, Arc::new(limiter))
    }

    /// [`Endpoint::new`] with a response limiter shared with other endpoints (a gateway's
    /// workers): its budgets, not `config.response_limit`, apply.
    pub fn with_limiter(
        server: Arc<ServerConfig>,
        mut config: EndpointConfig,
        limiter: Arc<ResponseLimiter>,
    ) -> Self {
        config.response_limit = limiter.limit();
        config.max_peers = config.max_peers.max(1);
        config.max_handshakes_per_address = config
            .max_handshakes_per_address
            .clamp(1, MAX_PER_ADDRESS - 1);
        Endpoint {
            server,
            table: Table::with_capacity(config.max_peers),
            limiter,
            config,
            stats: EndpointStats::default(),
            next_generation: 0,
        }
    }

    pub fn config(&self) -> &EndpointConfig {
        &self.config
    }

    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// The response limiter (perhaps shared with other endpoints).
    pub fn limiter(&self) -> &Arc<ResponseLimiter> {
        &self.limiter
    }

    /// The session store the server configuration resumes from (shared with every
    /// connection of this endpoint).
    pub fn session_cache(&self) -> Option<&Arc<dyn SessionStore>> {
        self.server.session_cache.as_ref()
    }

    /// Connections `addr` holds now.
    pub fn connections_of(&self, addr: &SocketAddr) -> usize {
        self.table.slots.get(addr).map_or(0, Slot::len)
    }

    /// Whether `addr` holds an established connection.
    pub fn is_established(&self, addr: &SocketAddr) -> bool {
        self.table.slots.get(addr).is_some_and(Slot::verified)
    }

    /// Takes in one datagram from `from`; what it produced is in `out` (cleared first).
    pub fn handle(&mut self, now: Now, from: SocketAddr, datagram: &[u8], out: &mut Handled) {
        self.handle_and_reply(now, from, datagram, out, &mut |_, _| None);
    }

    /// [`Endpoint::handle`], and application data is answered by `reply`: its answer is
    /// sealed on the connection the data came in on and queued in `out.transmits`, in
    /// the same pass (the data is still reported as [`EndpointEvent::ApplicationData`]).
    pub fn handle_and_reply(
        &mut self,
        now: Now,
        from: SocketAddr,
        datagram: &[u8],
        out: &mut Handled,
        reply: Reply<'_>,
    ) {
        out.clear();
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += datagram.len() as u64;
        // Framed and fingerprinted once: the route and every connection offered the
        // datagram use the same records.
        let datagram = Datagram::frame(datagram);
        let hello = datagram.starts_with_client_hello();
        let hello_hash = if hello { datagram.fingerprint } else { 0 };
        let route = match self.table.slots.get(&from) {
            None => Route::New,
            Some(_) if !hello => Route::Offer,
            Some(slot) => match slot.position(|p| p.hello_hash == hello_hash) {
                Some(i) => Route::One(i),
                None => Route::New,
            },
        };
        let a = Arrival {
            now,
            from,
            datagram,
            hello,
        };
        match route {
            Route::New => {
                let Some(i) = self.admit(from, hello_hash, now) else {
                    self.stats.refused += 1;
                    self.stats.dropped += 1;
                    return;
                };
                let generation = self.table.peer(&from, i).generation;
                self.serve(&a, i, true, out, reply);
                if !hello {
                    // Only a ClientHello starts a handshake: a connection made for
                    // anything else exists to answer it (or drop it) and no longer.
                    if let Some(i) = self.table.find(&from, generation) {
                        self.remove(&from, i);
                    }
                }
            }
            Route::One(i) => {
                self.serve(&a, i, true, out, reply);
            }
            Route::Offer => self.offer(&a, out, reply),
        }
    }

    /// Offers a datagram to the address's handshakes, newest first, then to its
    /// established connection; the first that does not decline it keeps it.
    fn offer(&mut self, a: &Arrival<'_>, out: &mut Handled, reply: Reply<'_>) {
        let from = a.from;
        let mut order = [0u64; MAX_PER_ADDRESS];
        let mut n = 0;
        if let Some(slot) = self.table.slots.get(&from) {
            let len = slot.len().min(MAX_PER_ADDRESS);
            let half_open = (0..len)
                .rev()
                .filter(|&i| !slot.get(i).conn.is_established());
            let established = (0..len).filter(|&i| slot.get(i).conn.is_established());
            for i in half_open.chain(established) {
                order[n] = slot.get(i).generation;
                n += 1;
            }
        }
        for (k, generation) in order[..n].iter().enumerate() {
            // Serving one connection may remove another (a completed handshake replaces
            // the old connection), so look each up again by its generation.
            let Some(i) = self.table.find(&from, *generation) else {
                continue;
            };
            if self.serve(a, i, k + 1 == n, out, reply) {
                return;
            }
        }
    }

    /// Gives the datagram to connection `i` of `from`. Unless `last`, a datagram the
    /// connection declines is left for the next candidate (returns false).
    fn serve(
        &mut self,
        a: &Arrival<'_>,
        i: usize,
        last: bool,
        out: &mut Handled,
        reply: Reply<'_>,
    ) -> bool {
        let (now, from) = (a.now, a.from);
        let Some(slot) = self.table.slots.get_mut(&from) else {
            return false;
        };
        let peer = slot.get_mut(i);
        let handshaking = !peer.conn.is_established();
        let result = peer.conn.handle_framed(&a.datagram, now);
        let was_declined = declined(&result);
        if !last && was_declined {
            return false;
        }
        if !was_declined {
            // Only what the connection took counts as activity: forged garbage sprayed at
            // an address must not keep its idle connection from expiring or eviction.
            peer.last_activity_ns = now.mono_ns;
        }
        out.handshake_job = handshaking;
        out.records_in = result.records_in;
        let generation = peer.generation;
        let completed = self.absorb_events(a, i, result, out, reply);
        if let Some(kind) = completed {
            self.on_completed(from, generation, kind, now.mono_ns, out);
        }
        if let Some(i) = self.table.find(&from, generation) {
            self.update_gauges(&from, i);
            if self.table.peer(&from, i).conn.is_closed() {
                self.remove(&from, i);
            }
        }
        true
    }

    /// Counts the engine's events, queues the datagrams to send (bounded and
    /// rate-limited while the connection is unverified) and returns the completed
    /// handshake, if any.
    fn absorb_events(
        &mut self,
        a: &Arrival<'_>,
        i: usize,
        result: Output,
        out: &mut Handled,
        reply: Reply<'_>,
    ) -> Option<HandshakeKind> {
        let (from, hello, now_ns) = (a.from, a.hello, a.now.mono_ns);
        let Endpoint {
            table,
            stats,
            config,
            limiter,
            ..
        } = self;
        let slot = table.slots.get_mut(&from)?;
        let mut completed = None;
        let mut send = true;
        let Output {
            mut datagrams,
            events,
            ..
        } = result;
        for event in events {
            let peer = slot.get_mut(i);
            match event {
                Event::HandshakeComplete(kind) => completed = Some(kind),
                Event::ApplicationData(data) => {
                    // Only an established connection delivers data, so it can seal.
                    if let Some(Ok(sealed)) =
                        reply(from, &data).map(|answer| peer.conn.seal_application_data(&answer))
                    {
                        datagrams.push(sealed);
                    }
                    out.events
                        .push(EndpointEvent::ApplicationData { peer: from, data });
                }
                Event::AlertSent(alert, _) => {
                    stats.alerts_sent[usize::from(alert.description.to_u8())] += 1;
                }
                Event::AlertReceived(_) => {}
                // An alert nobody can authenticate is dropped like any forged record.
                Event::Dropped(_) | Event::AlertIgnored { .. } => stats.dropped += 1,
                Event::Retransmitted if hello => {
                    peer.hello_reanswers += 1;
                    if peer.hello_reanswers > config.max_hello_reanswers {
                        stats.reanswers_suppressed += 1;
                        send = false;
                    } else {
                        stats.retransmissions_answered += 1;
                    }
                }
                Event::Retransmitted => stats.retransmissions_answered += 1,
            }
        }
        if !send {
            return completed;
        }
        // Verified: this connection's peer proved, with its Finished, that it reads what
        // we send to this address. Every answer of a handshake not yet there is charged
        // (to the address's credit, else its budgets), even beside an established
        // connection of the same address (whose client a forged ClientHello could
        // otherwise flood).
        let verified = slot.get(i).conn.is_established();
        for payload in datagrams {
            let len = payload.len() as u64;
            if !verified {
                let allowed = if config.balancer == Some(from.ip()) {
                    limiter.allow_balanced(from, payload.len(), now_ns)
                } else {
                    limiter.allow(from.ip(), payload.len(), now_ns)
                };
                if !allowed {
                    stats.rate_limited += 1;
                    stats.rate_limited_bytes += len;
                    continue;
                }
                stats.bytes_sent_unverified += len;
            }
            stats.datagrams_sent += 1;
            stats.bytes_sent += len;
            out.transmits.push(Transmit {
                destination: from,
                payload,
            });
        }
        completed
    }

    /// A handshake completed: count it, credit its address in the limiter (it proved it
    /// reads our answers), file it for idle expiry and end the address's older
    /// established connection (the new one replaces it).
    fn on_completed(
        &mut self,
        from: SocketAddr,
        generation: u64,
        kind: HandshakeKind,
        now_ns: u64,
        out: &mut Handled,
    ) {
        self.stats.handshakes[kind_index(kind)] += 1;
        // Behind a balancer, its address proves nothing about any one client.
        if self.config.balancer != Some(from.ip()) {
            self.limiter.prove(from.ip(), now_ns);
        }
        out.events
            .push(EndpointEvent::HandshakeComplete { peer: from, kind });
        self.table.idle.push(std::cmp::Reverse((
            now_ns.saturating_add(self.config.idle_timeout_ns),
            generation,
            from,
        )));
        while let Some(old) = self
            .table
            .slots
            .get(&from)
            .and_then(|s| s.position(|p| p.generation != generation && p.conn.is_established()))
        {
            self.remove(&from, old);
            self.stats.replaced += 1;
        }
    }

    /// Makes room for a new connection of `from` and creates it; `None` if the table is
    /// full and nothing could be evicted.
    fn admit(&mut self, from: SocketAddr, hello_hash: u64, now: Now) -> Option<usize> {
        let now_ns = now.mono_ns;
        let cap = self.config.max_handshakes_per_address;
        if let Some(slot) = self.table.slots.get(&from) {
            let half_open = slot.iter().filter(|p| !p.conn.is_established()).count();
            if half_open >= cap || slot.len() >= MAX_PER_ADDRESS {
                let oldest = (0..slot.len())
                    .filter(|&i| !slot.get(i).conn.is_established())
                    .min_by_key(|&i| slot.get(i).created_ns);
                if let Some(i) = oldest {
                    self.remove(&from, i);
                    self.stats.evicted_per_address += 1;
                }
            }
            if self.table.slots.contains_key(&from) {
                self.stats.parallel_handshakes += 1;
            }
        }
        if self.table.connections >= self.config.max_peers && !self.make_room() {
            return None;
        }
        let generation = self.next_generation;
        self.next_generation += 1;
        let conn = ServerConnection::new(self.server.clone(), Probe::off(), now);
        let peer = Peer {
            conn: Box::new(conn),
            generation,
            created_ns: now_ns,
            last_activity_ns: now_ns,
            hello_hash,
            hello_reanswers: 0,
            counted_half_open: false,
            counted_established: false,
            counted_bytes: 0,
        };
        self.table.handshakes.push(std::cmp::Reverse((
            now_ns.saturating_add(self.config.handshake_timeout_ns),
            generation,
            from,
        )));
        self.table.connections += 1;
        self.stats.connections += 1;
        self.stats.state_bytes += entry_overhead_bytes() as u64;
        Some(match self.table.slots.get_mut(&from) {
            Some(slot) => {
                slot.push(peer);
                slot.len() - 1
            }
            None => {
                self.table.slots.insert(from, Slot::new(peer));
                0
            }
        })
    }

    /// Frees one place in a full table. While half-open handshakes hold at least an
    /// eighth of it (a ClientHello flood), the one that has waited longest goes, as
    /// SYN-flood defences do: the flood pushes out its own stale entries. With fewer, the
    /// established connection quiet longest goes first: otherwise, in a table full of
    /// established peers, each newcomer would evict the one before it in the middle of
    /// its handshake.
    fn make_room(&mut self) -> bool {
        let flood = self.stats.half_open >= (self.config.max_peers / HALF_OPEN_SHARE).max(1) as u64;
        type Evict = fn(&mut Endpoint) -> bool;
        let (first, then): (Evict, Evict) = if flood {
            (
                Self::evict_oldest_half_open,
                Self::evict_least_recently_active,
            )
        } else {
            (
                Self::evict_least_recently_active,
                Self::evict_oldest_half_open,
            )
        };
        first(self) || then(self)
    }

    /// Evicts the half-open handshake that has waited longest, as SYN-flood defences do.
    fn evict_oldest_half_open(&mut self) -> bool {
        for _ in 0..EVICTION_BUDGET {
            let Some(std::cmp::Reverse((_, generation, addr))) = self.table.handshakes.pop() else {
                return false;
            };
            let Some(i) = self.table.find(&addr, generation) else {
                continue; // gone already
            };
            if self.table.peer(&addr, i).conn.is_established() {
                continue; // completed since: its idle item stands for it
            }
            self.remove(&addr, i);
            self.stats.evicted_half_open += 1;
            return true;
        }
        false
    }

    /// Evicts the established connection that has been quiet longest. Its session stays
    /// in the cache: its client's next handshake is an abbreviated one.
    fn evict_least_recently_active(&mut self) -> bool {
        for _ in 0..EVICTION_BUDGET {
            let Some(std::cmp::Reverse((due, generation, addr))) = self.table.idle.pop() else {
                return false;
            };
            let Some(i) = self.table.find(&addr, generation) else {
                continue;
            };
            let true_due = self
                .table
                .peer(&addr, i)
                .last_activity_ns
                .saturating_add(self.config.idle_timeout_ns);
            if true_due > due {
                // Active since it was filed: file it again where it belongs.
                self.table
                    .idle
                    .push(std::cmp::Reverse((true_due, generation, addr)));
                continue;
            }
            self.remove(&addr, i);
            self.stats.evicted_idle += 1;
            return true;
        }
        false
    }

    /// Expires handshakes past their deadline and connections idle too long, examining
    /// at most [`SWEEP_BUDGET`] deadline items. Call it every few tens of milliseconds.
    pub fn handle_timeout(&mut self, now_ns: u64) {
        let mut budget = SWEEP_BUDGET;
        while budget > 0 {
            match self.table.handshakes.peek() {
                Some(std::cmp::Reverse((due, _, _))) if *due <= now_ns => {}
                _ => break,
            }
            budget -= 1;
            let Some(std::cmp::Reverse((_, generation, addr))) = self.table.handshakes.pop() else {
                break;
            };
            if let Some(i) = self.table.find(&addr, generation) {
                if !self.table.peer(&addr, i).conn.is_established() {
                    self.remove(&addr, i);
                    self.stats.expired += 1;
                }
            }
        }
        while budget > 0 {
            match self.table.idle.peek() {
                Some(std::cmp::Reverse((due, _, _))) if *due <= now_ns => {}
                _ => break,
            }
            budget -= 1;
            let Some(std::cmp::Reverse((_, generation, addr))) = self.table.idle.pop() else {
                break;
            };
            let Some(i) = self.table.find(&addr, generation) else {
                continue;
            };
            let due = self
                .table
                .peer(&addr, i)
                .last_activity_ns
                .saturating_add(self.config.idle_timeout_ns);
            if due <= now_ns {
                self.remove(&addr, i);
                self.stats.expired += 1;
            } else {
                self.table
                    .idle
                    .push(std::cmp::Reverse((due, generation, addr)));
            }
        }
    }

    /// Seals application data for the established connection of `peer`, outside a
    /// datagram pass: for answers that are ready later than the request that asked for
    /// them (a WAP gateway's reply from its origin). Answers within the pass go through
    /// [`Endpoint::handle_and_reply`].
    pub fn seal_application_data(
        &mut self,
        peer: SocketAddr,
        data: &[u8],
    ) -> Result<Vec<u8>, ProtocolError> {
        let conn = self
            .table
            .slots
            .get_mut(&peer)
            .and_then(|slot| {
                let i = slot.position(|p| p.conn.is_established())?;
                Some(&mut slot.get_mut(i).conn)
            })
            .ok_or(ProtocolError::Local(LocalError::NoEstablishedConnection))?;
        let sealed = conn.seal_application_data(data)?;
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += sealed.len() as u64;
        Ok(sealed)
    }

    /// Brings the gauges up to date with connection `i` of `addr`.
    fn update_gauges(&mut self, addr: &SocketAddr, i: usize) {
        let Some(slot) = self.table.slots.get_mut(addr) else {
            return;
        };
        let p = slot.get_mut(i);
        let (half_open, established, bytes) = (
            p.conn.is_half_open(),
            p.conn.is_established(),
            p.conn.heap_bytes(),
        );
        let s = &mut self.stats;
        s.half_open = s.half_open + u64::from(half_open) - u64::from(p.counted_half_open);
        s.established = s.established + u64::from(established) - u64::from(p.counted_established);
        s.state_bytes = s.state_bytes + bytes as u64 - p.counted_bytes as u64;
        p.counted_half_open = half_open;
        p.counted_established = established;
        p.counted_bytes = bytes;
    }

    /// Forgets connection `i` of `addr` and takes it out of the gauges.
    fn remove(&mut self, addr: &SocketAddr, i: usize) {
        if let Some(p) = self.table.remove(addr, i) {
            let s = &mut self.stats;
            s.connections -= 1;
            s.half_open -= u64::from(p.counted_half_open);
            s.established -= u64::from(p.counted_established);
            s.state_bytes -= (p.counted_bytes + entry_overhead_bytes()) as u64;
        }
    }
}

#[cfg(test)]
mod tests;
