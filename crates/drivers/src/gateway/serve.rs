//! What a gateway worker serves: any endpoint that takes a datagram from an address and
//! says what to send, whether the datagram was a handshake job, and how many messages it
//! carried. The worker ([`super::Worker`]) owns the socket, the clock, the batch CPU
//! accounting and the job log; the endpoint owns the peer table, its time-outs and the
//! protocol. WTLS's own [`wtls::endpoint::Endpoint`] is one ([`WtlsServer`]); any server
//! [`wtlsperf_spine::Handshake`] behind the address-keyed table of
//! [`super::handshakes::HandshakeEndpoint`] is another, so DTLS 1.2 and EDHOC are served,
//! timed out and recorded the way WTLS is.

use std::net::SocketAddr;
use std::sync::Arc;

use wtls::endpoint::{
    Endpoint, EndpointConfig, EndpointEvent, EndpointStats, Handled, ResponseLimiter, Transmit,
};
use wtls::handshake::ServerConfig;
use wtlsperf_spine::{Now, ProtocolId};

use super::GatewayStats;

/// What one datagram produced. Reused across calls (cleared by the endpoint), so serving
/// allocates nothing the protocol does not.
#[derive(Debug, Default)]
pub struct Served {
    pub transmits: Vec<Transmit>,
    /// A connection that was handshaking took the datagram: a job of the queue model.
    pub handshake_job: bool,
    /// Messages (records) the datagram carried, where the protocol frames them; 1 where
    /// it does not say (the datagram is the unit).
    pub messages: usize,
    /// Application-data records echoed back.
    pub echoed: u64,
}

impl Served {
    pub fn clear(&mut self) {
        self.transmits.clear();
        self.handshake_job = false;
        self.messages = 0;
        self.echoed = 0;
    }
}

/// The server side a gateway worker drives: one per worker, fed every datagram the
/// kernel hashes to that worker's socket.
pub trait ServerEndpoint: Send + 'static {
    /// The endpoint's counters, copied to the shared statistics once per batch.
    type Stats: Clone + Default + Send + 'static;

    fn protocol(&self) -> ProtocolId;
    /// Serves one datagram from `from` at `now`; fills `out` (cleared first).
    fn serve(&mut self, now: Now, from: SocketAddr, datagram: &[u8], out: &mut Served);
    /// Expires what is past its time and runs due retransmission timers; what that sends
    /// goes to `out` (cleared first). Called every few tens of milliseconds.
    fn handle_timeout(&mut self, now: Now, out: &mut Served);
    fn stats(&self) -> &Self::Stats;
    /// Adds one worker's counters to the gateway's.
    fn add_stats(stats: &Self::Stats, into: &mut GatewayStats);
}

/// How a gateway makes the endpoint of each worker from the per-worker policy and the
/// gateway's one response limiter, which every worker's endpoint consults so that a
/// forger's reach does not grow with the workers (an endpoint that does not limit
/// responses ignores it).
pub trait ServeProtocol: Send + Sync + 'static {
    type Endpoint: ServerEndpoint;
    fn endpoint(&self, policy: EndpointConfig, limiter: &Arc<ResponseLimiter>) -> Self::Endpoint;
}

/// WTLS's endpoint as a worker serves it: the engine's endpoint decides, and application
/// data is echoed to its sender (the laboratory's service).
pub struct WtlsServer {
    endpoint: Endpoint,
    /// What the endpoint made of the last datagram (reused).
    handled: Handled,
}

impl WtlsServer {
    /// A worker's endpoint, consulting the gateway's shared response limiter.
    pub fn new(
        server: Arc<ServerConfig>,
        policy: EndpointConfig,
        limiter: Arc<ResponseLimiter>,
    ) -> Self {
        WtlsServer {
            // Sized for the bound up front (see `Endpoint::new`).
            endpoint: Endpoint::with_limiter(server, policy, limiter),
            handled: Handled::default(),
        }
    }
}

impl ServeProtocol for Arc<ServerConfig> {
    type Endpoint = WtlsServer;
    fn endpoint(&self, policy: EndpointConfig, limiter: &Arc<ResponseLimiter>) -> WtlsServer {
        WtlsServer::new(self.clone(), policy, limiter.clone())
    }
}

impl ServerEndpoint for WtlsServer {
    type Stats = EndpointStats;

    fn protocol(&self) -> ProtocolId {
        wtls::handshake::WTLS
    }

    fn serve(&mut self, now: Now, from: SocketAddr, datagram: &[u8], out: &mut Served) {
        out.clear();
        let now = wtls::handshake::Now::new(now.mono_ns, now.unix_secs);
        // Application data is echoed on the connection it came in on, in the same pass.
        let mut echo = |_, data: &[u8]| Some(data.to_vec());
        self.endpoint
            .handle_and_reply(now, from, datagram, &mut self.handled, &mut echo);
        for event in self.handled.events.drain(..) {
            match event {
                EndpointEvent::HandshakeComplete { peer, kind } => {
                    tracing::debug!(%peer, kind = wtls::endpoint::kind_name(kind), "handshake complete");
                }
                EndpointEvent::ApplicationData { .. } => out.echoed += 1,
            }
        }
        out.transmits.append(&mut self.handled.transmits);
        out.handshake_job = self.handled.handshake_job;
        out.messages = self.handled.records_in;
    }

    fn handle_timeout(&mut self, now: Now, out: &mut Served) {
        out.clear();
        self.endpoint.handle_timeout(now.mono_ns);
    }

    fn stats(&self) -> &EndpointStats {
        self.endpoint.stats()
    }

    fn add_stats(e: &EndpointStats, s: &mut GatewayStats) {
        s.peers += e.connections;
        s.half_open += e.half_open;
        s.established += e.established;
        s.state_bytes += e.state_bytes;
        for (k, v) in e.handshakes_by_kind() {
            *s.handshakes_completed.entry(k.to_owned()).or_default() += v;
        }
        for (k, v) in e.alerts_by_name() {
            *s.alerts_sent.entry(k.to_owned()).or_default() += v;
        }
        s.datagrams_received += e.datagrams_received;
        s.datagrams_sent += e.datagrams_sent;
        s.bytes_received += e.bytes_received;
        s.bytes_sent += e.bytes_sent;
        s.bytes_sent_unverified += e.bytes_sent_unverified;
        s.dropped += e.dropped;
        s.refused += e.refused;
        s.evicted += e.evicted();
        s.expired += e.expired;
        s.evicted_half_open += e.evicted_half_open;
        s.evicted_idle += e.evicted_idle;
        s.evicted_per_address += e.evicted_per_address;
        s.parallel_handshakes += e.parallel_handshakes;
        s.replaced += e.replaced;
        s.retransmissions_answered += e.retransmissions_answered;
        s.reanswers_suppressed += e.reanswers_suppressed;
        s.rate_limited += e.rate_limited;
        s.rate_limited_bytes += e.rate_limited_bytes;
    }
}
