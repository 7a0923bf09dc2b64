//! The address-keyed endpoint for any server [`Handshake`] (DTLS 1.2, EDHOC): a peer
//! table by source address, one server handshake per address, the same bound on peers
//! and the same two time-outs as WTLS's endpoint (a handshake not complete in time is
//! forgotten; an established peer silent too long is forgotten), and the handshake's own
//! retransmission timers run from the worker's sweep. What WTLS's endpoint adds beyond
//! that (the response-rate limiter, re-answer bounds, parallel handshakes per address)
//! guards the open network and is not part of the queue the load test measures.
//!
//! A datagram is a job of the queue model when the address's handshake was still
//! running as it arrived (a new address included), as in WTLS's endpoint. The protocols
//! behind this endpoint do not report their records, so each job counts as one message.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;

use wtls::endpoint::{EndpointConfig, ResponseLimiter, Transmit};
use wtlsperf_spine::{Handshake, Now, ProtocolId, Status};

use super::serve::{ServeProtocol, Served, ServerEndpoint};
use super::GatewayStats;

/// Most timer entries examined per sweep: a sweep stays short however many are due.
const SWEEP_BUDGET: usize = 4096;

/// Makes a fresh server handshake for each new address.
pub type MakeServer<S> = Arc<dyn Fn() -> anyhow::Result<S> + Send + Sync>;

/// The server side of a protocol on the spine, as a gateway serves it.
pub struct HandshakeServers<S> {
    pub protocol: ProtocolId,
    pub make: MakeServer<S>,
}

impl<S> Clone for HandshakeServers<S> {
    fn clone(&self) -> Self {
        HandshakeServers {
            protocol: self.protocol,
            make: Arc::clone(&self.make),
        }
    }
}

impl<S: Handshake + Send + 'static> ServeProtocol for HandshakeServers<S> {
    type Endpoint = HandshakeEndpoint<S>;
    /// The response limiter is WTLS's (see the module documentation): not consulted.
    fn endpoint(&self, policy: EndpointConfig, _: &Arc<ResponseLimiter>) -> HandshakeEndpoint<S> {
        HandshakeEndpoint::new(self.clone(), policy)
    }
}

/// Counters (since start) and gauges (now) of a [`HandshakeEndpoint`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HandshakeEndpointStats {
    pub connections: u64,
    pub established: u64,
    pub handshakes: u64,
    pub failed: u64,
    pub datagrams_received: u64,
    pub datagrams_sent: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Datagrams the handshake dropped as a whole, and datagrams of refused peers.
    pub dropped: u64,
    /// New addresses that got no state because `max_peers` were held.
    pub refused: u64,
    /// Peers forgotten by a time-out.
    pub expired: u64,
    /// Datagrams the server sent again on its own timer.
    pub retransmissions: u64,
}

struct Peer<S> {
    handshake: S,
    generation: u64,
    started_ns: u64,
    last_ns: u64,
    complete: bool,
    /// The handshake's deadline last put on the timer heap, so that a step that leaves
    /// it where it was adds no entry.
    armed: Option<u64>,
    /// When the entry that checks an established peer's idle time comes due: only that
    /// entry arms the next check, not every stale retransmission entry.
    idle_check_ns: u64,
}

/// One worker's peers of one protocol (see the module documentation).
pub struct HandshakeEndpoint<S> {
    servers: HandshakeServers<S>,
    policy: EndpointConfig,
    peers: HashMap<SocketAddr, Peer<S>>,
    /// (due, generation, address): retransmission deadlines and time-outs, earliest
    /// first; an entry whose peer is gone or renewed is skipped when it comes up.
    timers: BinaryHeap<Reverse<(u64, u64, SocketAddr)>>,
    generation: u64,
    stats: HandshakeEndpointStats,
}

impl<S: Handshake> HandshakeEndpoint<S> {
    pub fn new(servers: HandshakeServers<S>, policy: EndpointConfig) -> Self {
        HandshakeEndpoint {
            servers,
            policy,
            peers: HashMap::new(),
            timers: BinaryHeap::new(),
            generation: 0,
            stats: HandshakeEndpointStats::default(),
        }
    }

    /// The peer of `from`, made for a new address while the table has room.
    fn peer(&mut self, from: SocketAddr, now: Now) -> Option<&mut Peer<S>> {
        if !self.peers.contains_key(&from) {
            if self.peers.len() >= self.policy.max_peers {
                self.stats.refused += 1;
                return None;
            }
            let mut handshake = match (self.servers.make)() {
                Ok(h) => h,
                Err(e) => {
                    tracing::debug!(peer = %from, error = %e, "no server handshake");
                    return None;
                }
            };
            // A server's start sends nothing.
            let _ = handshake.start(now);
            self.generation += 1;
            let due = now.mono_ns.saturating_add(self.policy.handshake_timeout_ns);
            self.timers.push(Reverse((due, self.generation, from)));
            self.peers.insert(
                from,
                Peer {
                    handshake,
                    generation: self.generation,
                    started_ns: now.mono_ns,
                    last_ns: now.mono_ns,
                    complete: false,
                    armed: None,
                    idle_check_ns: u64::MAX,
                },
            );
            self.stats.connections += 1;
        }
        self.peers.get_mut(&from)
    }

    /// After a step of `from`'s handshake: its datagrams out, its completion or failure
    /// counted, its next timer armed.
    fn after_step(
        &mut self,
        from: SocketAddr,
        datagrams: Vec<Vec<u8>>,
        now: Now,
        out: &mut Served,
    ) {
        for d in datagrams {
            self.stats.datagrams_sent += 1;
            self.stats.bytes_sent += d.len() as u64;
            out.transmits.push(Transmit {
                destination: from,
                payload: d,
            });
        }
        let Some(p) = self.peers.get_mut(&from) else {
            return;
        };
        match p.handshake.status() {
            Status::Running => {}
            Status::Complete(_) => {
                if !p.complete {
                    p.complete = true;
                    self.stats.handshakes += 1;
                    self.stats.established += 1;
                    let due = now.mono_ns.saturating_add(self.policy.idle_timeout_ns);
                    p.idle_check_ns = due;
                    self.timers.push(Reverse((due, p.generation, from)));
                }
            }
            Status::Failed(f) => {
                tracing::debug!(peer = %from, failure = %f, "handshake failed");
                self.stats.failed += 1;
                self.remove(from);
                return;
            }
        }
        let deadline = p.handshake.deadline();
        if let Some(d) = deadline.filter(|d| p.armed != Some(*d)) {
            self.timers.push(Reverse((d, p.generation, from)));
        }
        p.armed = deadline;
    }

    fn remove(&mut self, addr: SocketAddr) {
        if let Some(p) = self.peers.remove(&addr) {
            self.stats.connections -= 1;
            self.stats.established -= u64::from(p.complete);
        }
    }

    /// Whatever a timer entry of `addr` (generation `g`, due at `due`) makes due at
    /// `now`.
    fn on_timer(&mut self, addr: SocketAddr, g: u64, due: u64, now: Now, out: &mut Served) {
        let Some(p) = self.peers.get_mut(&addr).filter(|p| p.generation == g) else {
            return;
        };
        let expired = if p.complete {
            now.mono_ns >= p.last_ns.saturating_add(self.policy.idle_timeout_ns)
        } else {
            now.mono_ns
                >= p.started_ns
                    .saturating_add(self.policy.handshake_timeout_ns)
        };
        if expired {
            self.stats.expired += 1;
            self.remove(addr);
            return;
        }
        if p.complete && due >= p.idle_check_ns {
            // Active since: look again when its idle time could have run out.
            p.idle_check_ns = p.last_ns.saturating_add(self.policy.idle_timeout_ns);
            self.timers.push(Reverse((p.idle_check_ns, g, addr)));
        }
        if p.handshake.deadline().is_some_and(|d| d <= now.mono_ns) {
            p.armed = None;
            let before = p.handshake.retransmissions();
            let step = p.handshake.handle_timeout(now);
            self.stats.retransmissions +=
                u64::from(p.handshake.retransmissions().saturating_sub(before));
            self.after_step(addr, step.datagrams, now, out);
        }
    }
}

impl<S: Handshake + Send + 'static> ServerEndpoint for HandshakeEndpoint<S> {
    type Stats = HandshakeEndpointStats;

    fn protocol(&self) -> ProtocolId {
        self.servers.protocol
    }

    fn serve(&mut self, now: Now, from: SocketAddr, datagram: &[u8], out: &mut Served) {
        out.clear();
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += datagram.len() as u64;
        let Some(p) = self.peer(from, now) else {
            self.stats.dropped += 1;
            return;
        };
        out.handshake_job = !p.complete;
        out.messages = 1;
        p.last_ns = now.mono_ns;
        let step = p.handshake.handle_datagram(datagram, now);
        if step.dropped {
            self.stats.dropped += 1;
        }
        self.after_step(from, step.datagrams, now, out);
    }

    fn handle_timeout(&mut self, now: Now, out: &mut Served) {
        out.clear();
        for _ in 0..SWEEP_BUDGET {
            match self.timers.peek() {
                Some(Reverse((due, _, _))) if *due <= now.mono_ns => {}
                _ => break,
            }
            let Some(Reverse((due, g, addr))) = self.timers.pop() else {
                break;
            };
            self.on_timer(addr, g, due, now, out);
        }
    }

    fn stats(&self) -> &HandshakeEndpointStats {
        &self.stats
    }

    fn add_stats(e: &HandshakeEndpointStats, s: &mut GatewayStats) {
        s.peers += e.connections;
        s.half_open += e.connections - e.established;
        s.established += e.established;
        if e.handshakes > 0 {
            *s.handshakes_completed.entry("full".to_owned()).or_default() += e.handshakes;
        }
        s.handshakes_failed += e.failed;
        s.datagrams_received += e.datagrams_received;
        s.datagrams_sent += e.datagrams_sent;
        s.bytes_received += e.bytes_received;
        s.bytes_sent += e.bytes_sent;
        s.dropped += e.dropped;
        s.refused += e.refused;
        s.evicted += e.expired;
        s.expired += e.expired;
        s.server_retransmissions += e.retransmissions;
    }
}
