//! The server side of a configuration as the bearer runs, device runs and loss curves
//! use it: one gateway on loopback per configuration and payload limit, built on first
//! use and shared by every run ([`ServedCache`]), and [`serve_spine`], the gateway of any
//! protocol whose server is a spine [`Handshake`].

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_spine::{AnyHandshake, Handshake, ProtocolId};

use super::{Bench, CertificateItems, Contender, Served, Sides};
use crate::device::ClientSteps;
use crate::gateway::{spawn_gateway, GatewayConfig, GatewayHandle, HandshakeServers};
use crate::protocols::udp::{client_over_bearer, UdpRun};

/// How long a bearer gateway keeps a handshake: a lossy DTLS run's timers double from
/// 9 s (RFC 7925), so a handshake may take minutes.
pub const BEARER_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(300);

/// A gateway of the lab (no response limiter: [`GatewayConfig::lab`]) that keeps a
/// handshake as long as a lossy bearer run may take.
pub fn bearer_gateway<P: crate::gateway::serve::ServeProtocol>(
    server: P,
    workers: usize,
) -> anyhow::Result<GatewayHandle> {
    let mut cfg = GatewayConfig::lab("127.0.0.1:0".parse()?, server);
    cfg.handshake_timeout = BEARER_HANDSHAKE_TIMEOUT;
    cfg.workers = workers;
    spawn_gateway(cfg)
}

/// A gateway and the sides whose clients reach it.
struct SpineServed {
    gateway: GatewayHandle,
    sides: Arc<dyn Sides>,
}

impl Served for SpineServed {
    fn addr(&self) -> SocketAddr {
        self.gateway.local_addr()
    }
    fn client(&self, bearer: &LinkProfile, seed: u64) -> anyhow::Result<AnyHandshake> {
        self.sides.client(bearer, seed)
    }
}

/// A configuration value whose clients and servers need nothing but itself (an
/// OpenSSL or wolfSSL pair of contexts, for one): its [`Sides`] are [`ConfigSides`].
pub trait Endpoints: Send + Sync + 'static {
    type Client: Handshake + Send + 'static;
    type Server: Handshake + Send + 'static;
    fn client(&self) -> anyhow::Result<Self::Client>;
    fn server(&self) -> anyhow::Result<Self::Server>;
    /// See [`Sides::certificate_items`].
    fn certificate_items(&self, server: bool) -> anyhow::Result<Option<CertificateItems>> {
        let _ = server;
        Ok(None)
    }
}

/// The sides of an [`Endpoints`] value: every client and server comes from it.
pub struct ConfigSides<T>(pub T);

impl<T: Endpoints> Sides for ConfigSides<T>
where
    <T::Client as Handshake>::Negotiated: Send + Sync + 'static,
    <T::Client as Handshake>::Error: Send + Sync + 'static,
    <T::Server as Handshake>::Negotiated: Send + Sync + 'static,
    <T::Server as Handshake>::Error: Send + Sync + 'static,
{
    fn client(&self, _: &LinkProfile, _: u64) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(self.0.client()?))
    }
    fn server(&self) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(self.0.server()?))
    }
    fn certificate_items(&self, server: bool) -> anyhow::Result<Option<CertificateItems>> {
        self.0.certificate_items(server)
    }
}

/// Serves `sides`' servers behind the gateway worker, one per client address, and
/// hands out its clients.
pub fn serve_spine(protocol: ProtocolId, sides: Arc<dyn Sides>) -> anyhow::Result<Arc<dyn Served>> {
    let server = Arc::clone(&sides);
    let servers = HandshakeServers {
        protocol,
        make: Arc::new(move || server.server()),
    };
    let gateway = bearer_gateway(servers, 1)?;
    Ok(Arc::new(SpineServed { gateway, sides }))
}

/// One handshake of `served`'s configuration through a relay emulating `bearer`
/// (seeded with `seed`), the client's flights held to a device's `steps` if given; gives
/// up after `deadline`. The one relay-and-run function of the bench.
pub fn run_over_bearer(
    served: &dyn Served,
    bearer: &LinkProfile,
    seed: u64,
    steps: Option<&ClientSteps>,
    deadline: Duration,
) -> anyhow::Result<UdpRun> {
    let client = served.client(bearer, seed)?;
    client_over_bearer(client, served.addr(), bearer, seed, steps, deadline)
}

/// One handshake a plan asks for over an emulated bearer.
pub struct BearerHandshake<'c> {
    pub contender: &'c Contender,
    /// The bearer, with whatever loss the run is to suffer.
    pub bearer: LinkProfile,
    pub seed: u64,
    /// The device's steps the client's flights are held to; none for this machine.
    pub steps: Option<ClientSteps>,
    pub deadline: Duration,
}

/// Runs each item of `work` as the handshake `plan` makes of it, `at_once` at a time,
/// each configuration served by one gateway per payload limit, started on first use
/// and shared by every run ([`ServedCache`]). Results come in the order of `work`; a
/// plan's error is that item's result.
pub fn run_over_bearers<'c, J: Sync>(
    bench: Bench<'_>,
    work: &[J],
    at_once: usize,
    plan: impl Fn(usize, &J) -> anyhow::Result<BearerHandshake<'c>> + Sync,
) -> Vec<anyhow::Result<UdpRun>> {
    let served = ServedCache::new(bench);
    crate::pool::run_concurrently(work, at_once, |i, item| {
        let h = plan(i, item)?;
        let server = served.get(h.contender, &h.bearer)?;
        run_over_bearer(&*server, &h.bearer, h.seed, h.steps.as_ref(), h.deadline)
    })
}

/// Each configuration's gateway per payload limit, started on first use and kept for
/// every later run (a configuration may cost a certificate chain and two contexts).
struct ServedCache<'b> {
    bench: Bench<'b>,
    served: Mutex<Vec<ServedAt>>,
}

/// A configuration served at one payload limit.
type ServedAt = (Contender, u16, Arc<dyn Served>);

impl<'b> ServedCache<'b> {
    fn new(bench: Bench<'b>) -> ServedCache<'b> {
        ServedCache {
            bench,
            served: Mutex::new(Vec::new()),
        }
    }

    /// The server side of `contender` fragmenting to `bearer`'s datagram payload limit.
    fn get(&self, contender: &Contender, bearer: &LinkProfile) -> anyhow::Result<Arc<dyn Served>> {
        let limit = bearer.datagram_payload_limit();
        let mut served = self.served.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, s)) = served
            .iter()
            .find(|(c, l, _)| c == contender && *l == limit)
        {
            return Ok(Arc::clone(s));
        }
        let s = contender.serve(self.bench, limit)?;
        served.push((contender.clone(), limit, Arc::clone(&s)));
        Ok(s)
    }
}
