//! `wtlsperf gateway --wap`: a WAP gateway on the four WAP ports of `--listen`'s address
//! (WAP-230 §7, the WDP port assignments): 9200 connectionless WSP, 9201 connection-mode
//! WSP over WTP, 9202 and 9203 the same over WTLS. Get and Post go to the HTTP origin
//! named in the URL ([`origin`]); WML comes back compiled when the client accepts WMLC;
//! an origin that fails answers 502, one that is too slow 504.
//!
//! Each port is one thread waiting in `mio` on its socket and on a waker; origin requests
//! run on their own threads (bounded in number) and come back through a channel, whose
//! sender wakes the port at once, so a slow origin never stalls a port (connection mode
//! sends WTP's hold-on Ack meanwhile) and a fast one is answered without waiting for a
//! poll interval. The protocol state
//! is the sans-IO [`service::WapService`]; WTLS is the engine's endpoint. Without
//! `--wap` the gateway stays the echo server of the load tests.
//!
//! Hardening ([`WapLimits`], docs/security.md): bounded tables and SAR in the service;
//! on the unsecured ports the [`reflection`] bound (at most twice the bytes received
//! toward an address until it proves it reads our answers; a page that does not fit is
//! answered with a small 403); the secure ports share one WTLS response limiter; origin
//! time-outs for the connect and each read; a page limit (502 over it). For operators:
//! the [`access_log`], the [`deck_cache`], per-port statistics in `--stats-file`, and
//! SIGHUP to reopen the log.

pub mod access_log;
mod command;
pub mod deck_cache;
mod fetch;
pub mod lab_origin;
pub mod origin;
mod port_timers;
pub mod reflection;
pub mod service;

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token, Waker};
use wtls::endpoint::{Endpoint, EndpointConfig, EndpointEvent, Handled, ResponseLimiter};
use wtls::handshake::ServerConfig;
use wtlsperf_wap::wsp;
/// The bearers whose WTP timers `--wtp-bearer` picks (WAP-224 Appendix A).
pub use wtlsperf_wap::wtp::WtpBearer;
use wtlsperf_wap::wtp::{self, Timers};

use crate::setup;
use crate::wap_client::WspMode;
use access_log::AccessLog;
use deck_cache::{CacheStats, DeckCache, DeckKey, Freshness};
use fetch::Fetch;
use origin::{Origin, OriginAnswer, OriginFailure, OriginRequest, OriginTimeouts};
use reflection::{Allowance, ReflectionGuard, ReflectionLimit, ReflectionStats};
use service::{Action, ReplyTo, ServiceLimits, ServiceStats, WapService};

pub use command::{open_roles, run};
pub use port_timers::{port_timers, PortSetting};

/// The gateway's bounds, beyond the WTLS endpoint's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WapLimits {
    pub service: ServiceLimits,
    pub reflection: ReflectionLimit,
    /// Largest Reply body (after WML compilation); a larger page is answered 502.
    pub max_page_bytes: usize,
    /// Largest origin body read; a larger one is answered 502.
    pub origin_max_body: u64,
    /// Origin time-outs for the TCP connect and for each read of the answer (the whole
    /// call has `WapGatewayConfig::origin_timeout`).
    pub origin_connect_timeout: Duration,
    pub origin_read_timeout: Duration,
    /// Origin requests in flight per port; beyond them a request waits its turn (at most
    /// [`MAX_WAITING`] wait), then is answered 503.
    pub max_in_flight: usize,
    /// Bytes of compiled decks cached (0: no cache).
    pub cache_bytes: usize,
}

impl Default for WapLimits {
    fn default() -> Self {
        WapLimits {
            service: ServiceLimits::default(),
            reflection: ReflectionLimit::default(),
            max_page_bytes: 60_000,
            origin_max_body: origin::MAX_BODY,
            origin_connect_timeout: Duration::from_secs(5),
            origin_read_timeout: Duration::from_secs(10),
            max_in_flight: 64,
            cache_bytes: 4 << 20,
        }
    }
}

/// Most requests waiting for a turn per port; beyond them a request is answered 503. A
/// burst of clients (fakewap's 128 threads each with a Get out) waits a few milliseconds
/// here instead of being refused.
pub const MAX_WAITING: usize = 1024;
/// Longest a port sleeps without a datagram, an origin's answer or a WTP timer: how
/// often it looks at its stop flag and sweeps its WTLS endpoint's time-outs.
const POLL: Duration = Duration::from_millis(50);
/// The port's socket and the waker its origin threads use.
const SOCKET: Token = Token(0);
const WAKE: Token = Token(1);
/// The kernel's queue for one port: a burst of clients (each Ack, Disconnect and next
/// Connect back to back) must queue there, not be dropped (capped by net.core.rmem_max).
const RECV_BUFFER: usize = 4 << 20;

/// The ports `wtlsperf gateway --wap` serves, and how long it waits for the origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WapPorts {
    /// Ports left closed (each one of the four, counted from `wap_base_port`).
    pub wap_off: Vec<u16>,
    /// The first of the four ports (9200 by the standard).
    pub wap_base_port: u16,
    /// Time allowed for the origin's whole answer before 504.
    pub origin_timeout_ms: u64,
    pub limits: WapLimits,
    /// `--access-log`: one line per request answered.
    pub access_log: Option<PathBuf>,
    /// `--stats-file` and its interval.
    pub stats_file: Option<(PathBuf, Duration)>,
    /// The bearer whose table of WAP-224 Appendix A a port's timers start from, then
    /// WTP's retry interval R, group retry interval G_R, acknowledgement interval A and
    /// retransmission limit RCR_MAX and the network's MPL, for both connection-mode
    /// ports or one.
    pub wtp_bearer: Vec<PortSetting<WtpBearer>>,
    pub wtp_retry_ms: Vec<PortSetting>,
    pub wtp_group_retry_ms: Vec<PortSetting>,
    pub wtp_ack_ms: Vec<PortSetting>,
    pub wtp_max_retransmissions: Vec<PortSetting>,
    pub wtp_mpl_ms: Vec<PortSetting>,
}

/// One of the four ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PortRole {
    pub offset: u16,
    #[serde(serialize_with = "mode_name")]
    pub mode: WspMode,
    pub secure: bool,
}

fn mode_name<S: serde::Serializer>(m: &WspMode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match m {
        WspMode::Connectionless => "connectionless",
        WspMode::Connection => "connection",
    })
}

/// The WAP port roles in port order (9200 to 9203).
pub const ROLES: [PortRole; 4] = [
    PortRole {
        offset: 0,
        mode: WspMode::Connectionless,
        secure: false,
    },
    PortRole {
        offset: 1,
        mode: WspMode::Connection,
        secure: false,
    },
    PortRole {
        offset: 2,
        mode: WspMode::Connectionless,
        secure: true,
    },
    PortRole {
        offset: 3,
        mode: WspMode::Connection,
        secure: true,
    },
];

/// What to serve.
#[derive(Clone)]
pub struct WapGatewayConfig {
    pub ip: IpAddr,
    /// The first of the four ports; 0 binds each role to a port the system picks (the
    /// evaluation and tests, which must not collide with a gateway already running).
    pub base_port: u16,
    /// Roles to open (a subset of [`ROLES`]).
    pub roles: Vec<PortRole>,
    /// The WTLS server of the secure ports.
    pub server: Arc<ServerConfig>,
    pub origin_timeout: Duration,
    /// WTP's timers on every connection-mode port not in `port_timers`.
    pub timers: Timers,
    pub limits: WapLimits,
    /// Where every port logs the requests it answers.
    pub access_log: Option<Arc<Mutex<AccessLog>>>,
    /// Those of single ports, by role offset (from [`port_timers`]).
    pub port_timers: Vec<(u16, Timers)>,
}

impl WapGatewayConfig {
    fn timers_for(&self, role: PortRole) -> Timers {
        self.port_timers
            .iter()
            .find(|(o, _)| *o == role.offset)
            .map_or(self.timers, |(_, t)| *t)
    }
}

/// What one port did, for the stop report and the statistics file.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PortReport {
    pub port: u16,
    pub role: Option<PortRole>,
    pub service: ServiceStats,
    pub origin_failures: u64,
    pub busy_refusals: u64,
    /// Pages over `--wap-max-page-bytes`, answered 502.
    pub pages_over_limit: u64,
    /// Answers served from the deck cache (fresh, or revalidated by a 304).
    pub cache_answers: u64,
    pub datagrams_received: u64,
    pub bytes_received: u64,
    pub datagrams_sent: u64,
    pub bytes_sent: u64,
}

/// The whole gateway's counters: each port's, and those the ports share.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct WapStats {
    pub ports: Vec<PortReport>,
    pub reflection: ReflectionStats,
    pub deck_cache: CacheStats,
}

/// What one job of a port was: a datagram of a WTLS handshake, a datagram carrying WSP or
/// WTP (a request, an acknowledgement; record decryption included), or turning an
/// origin's answer into the Reply and sending it (WML compile and record encryption
/// included). The origin's own time is not the gateway's work and is not in any job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobKind {
    Handshake,
    Request,
    Reply,
}

/// One job of a port: when it started and ended (process clock, ns) and the datagram's
/// or the Reply's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WapJob {
    pub kind: JobKind,
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes: usize,
}

impl WapJob {
    pub fn service_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// Most jobs a port keeps for [`WapGateway::take_jobs`].
const MAX_JOBS: usize = 200_000;

/// An origin's answer on its way back to the port, with the deck-cache key it is kept
/// under.
type Answer = (
    ReplyTo,
    OriginRequest,
    Option<DeckKey>,
    Result<OriginAnswer, OriginFailure>,
);

/// What the ports of one gateway share.
#[derive(Clone)]
struct Shared {
    guard: Arc<ReflectionGuard>,
    cache: Arc<Mutex<DeckCache>>,
    /// The secure ports' WTLS response limiter: one budget per address for both.
    wtls_limiter: Arc<ResponseLimiter>,
    access_log: Option<Arc<Mutex<AccessLog>>>,
}

/// Running ports; dropping it stops them.
pub struct WapGateway {
    stop: Arc<AtomicBool>,
    jobs: Arc<Mutex<Vec<WapJob>>>,
    threads: Vec<JoinHandle<PortReport>>,
    reports: Vec<Arc<Mutex<PortReport>>>,
    shared: Shared,
    pub addrs: Vec<(PortRole, SocketAddr)>,
}

impl WapGateway {
    /// Stops every port and returns the gateway's counters.
    pub fn shutdown(mut self) -> WapStats {
        self.stop.store(true, Ordering::SeqCst);
        let ports = self
            .threads
            .drain(..)
            .filter_map(|t| t.join().ok())
            .collect();
        WapStats {
            ports,
            ..self.stats()
        }
    }

    /// The counters now (each port publishes its own every [`PUBLISH`]).
    pub fn stats(&self) -> WapStats {
        WapStats {
            ports: self
                .reports
                .iter()
                .filter_map(|r| r.lock().ok().map(|r| r.clone()))
                .collect(),
            reflection: self.shared.guard.stats(),
            deck_cache: self
                .shared
                .cache
                .lock()
                .map(|c| c.stats())
                .unwrap_or_default(),
        }
    }

    /// The jobs every port has recorded since the last call.
    pub fn take_jobs(&self) -> Vec<WapJob> {
        self.jobs
            .lock()
            .map(|mut j| std::mem::take(&mut *j))
            .unwrap_or_default()
    }

    /// The address of the port with `role`'s mode and security, if open.
    pub fn addr(&self, mode: WspMode, secure: bool) -> Option<SocketAddr> {
        self.addrs
            .iter()
            .find(|(r, _)| r.mode == mode && r.secure == secure)
            .map(|(_, a)| *a)
    }
}

impl Drop for WapGateway {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Binds the ports and starts their threads.
pub fn spawn(cfg: WapGatewayConfig) -> anyhow::Result<WapGateway> {
    let stop = Arc::new(AtomicBool::new(false));
    let jobs = Arc::new(Mutex::new(Vec::new()));
    let wtls = EndpointConfig::default();
    let shared = Shared {
        guard: Arc::new(ReflectionGuard::new(cfg.limits.reflection)),
        cache: Arc::new(Mutex::new(DeckCache::new(cfg.limits.cache_bytes))),
        wtls_limiter: Arc::new(ResponseLimiter::new(
            wtls.response_limit,
            wtls.idle_timeout_ns,
        )),
        access_log: cfg.access_log.clone(),
    };
    let mut threads = Vec::new();
    let mut reports = Vec::new();
    let mut addrs = Vec::new();
    for role in &cfg.roles {
        let port = if cfg.base_port == 0 {
            0
        } else {
            cfg.base_port + role.offset
        };
        let addr = SocketAddr::new(cfg.ip, port);
        let socket = bind(addr).with_context(|| {
            format!("binding the WAP port {addr} (--wap-off {port} leaves it closed)")
        })?;
        addrs.push((*role, socket.local_addr()?));
        let port_state = Port::new(*role, socket, &cfg, &shared, jobs.clone())?;
        reports.push(port_state.report.clone());
        let flag = stop.clone();
        threads.push(
            std::thread::Builder::new()
                .name(format!("wap-{port}"))
                .spawn(move || port_state.serve(&flag))?,
        );
    }
    Ok(WapGateway {
        stop,
        jobs,
        threads,
        reports,
        shared,
        addrs,
    })
}

/// How often a port copies its counters where [`WapGateway::stats`] reads them.
const PUBLISH: Duration = Duration::from_millis(200);

fn bind(addr: SocketAddr) -> anyhow::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    let _ = socket.set_recv_buffer_size(RECV_BUFFER);
    socket.bind(&addr.into())?;
    socket.set_nonblocking(true)?;
    Ok(UdpSocket::from_std(socket.into()))
}

/// One port: its socket, its WTLS endpoint (secure ports), its WSP/WTP state.
struct Port {
    role: PortRole,
    socket: UdpSocket,
    poll: Poll,
    waker: Arc<Waker>,
    endpoint: Option<Endpoint>,
    handled: Handled,
    service: WapService,
    origin: Origin,
    limits: WapLimits,
    shared: Shared,
    answers_tx: Sender<Answer>,
    answers: Receiver<Answer>,
    jobs: Arc<Mutex<Vec<WapJob>>>,
    in_flight: Arc<AtomicUsize>,
    /// Requests waiting for one of the `max_in_flight` turns, oldest first.
    waiting: VecDeque<Fetch>,
    /// This port's counters (the origin threads count failures in it too).
    report: Arc<Mutex<PortReport>>,
    /// What the port thread counts alone, published with the service's counters.
    own: PortReport,
    /// WTP's segment size, to price a Result.
    segment_size: usize,
    published: Instant,
}

impl Port {
    fn new(
        role: PortRole,
        socket: UdpSocket,
        cfg: &WapGatewayConfig,
        shared: &Shared,
        jobs: Arc<Mutex<Vec<WapJob>>>,
    ) -> anyhow::Result<Port> {
        let (answers_tx, answers) = channel();
        let mut socket = socket;
        let port = socket.local_addr().map_or(0, |a| a.port());
        let limits = cfg.limits;
        let timeouts = OriginTimeouts {
            total: cfg.origin_timeout,
            connect: limits.origin_connect_timeout.min(cfg.origin_timeout),
            read: limits.origin_read_timeout.min(cfg.origin_timeout),
        };
        let report = PortReport {
            port,
            role: Some(role),
            ..PortReport::default()
        };
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut socket, SOCKET, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
        let timers = cfg.timers_for(role);
        Ok(Port {
            role,
            socket,
            poll,
            waker,
            endpoint: role.secure.then(|| {
                Endpoint::with_limiter(
                    cfg.server.clone(),
                    EndpointConfig::default(),
                    shared.wtls_limiter.clone(),
                )
            }),
            handled: Handled::default(),
            service: WapService::with_limits(role.mode, timers, limits.service),
            origin: Origin::new(timeouts, limits.origin_max_body, limits.max_in_flight),
            limits,
            shared: shared.clone(),
            answers_tx,
            answers,
            jobs,
            in_flight: Arc::new(AtomicUsize::new(0)),
            waiting: VecDeque::new(),
            report: Arc::new(Mutex::new(report.clone())),
            own: report,
            segment_size: timers.segment_size.max(1),
            published: Instant::now(),
        })
    }

    fn serve(mut self, stop: &AtomicBool) -> PortReport {
        let mut buf = vec![0u8; 65_535];
        let mut events = Events::with_capacity(16);
        let mut swept = Instant::now();
        while !stop.load(Ordering::SeqCst) {
            let wait = self.wait();
            if let Err(e) = self.poll.poll(&mut events, Some(wait)) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    tracing::warn!(error = %e, "the WAP port's poll failed");
                    std::thread::sleep(POLL);
                }
            }
            self.receive_all(&mut buf);
            self.answer_all();
            self.start_waiting();
            let actions = self.service.on_timeout(wtp_now());
            self.run(actions);
            if swept.elapsed() >= POLL {
                swept = Instant::now();
                if let Some(e) = &mut self.endpoint {
                    e.handle_timeout(setup::now().mono_ns);
                }
            }
            if self.published.elapsed() >= PUBLISH {
                self.publish();
            }
        }
        self.publish();
        self.report.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Copies the port thread's counters where the gateway reads them.
    fn publish(&mut self) {
        self.published = Instant::now();
        if let Ok(mut r) = self.report.lock() {
            r.service = self.service.stats();
            r.pages_over_limit = self.own.pages_over_limit;
            r.cache_answers = self.own.cache_answers;
            r.datagrams_received = self.own.datagrams_received;
            r.bytes_received = self.own.bytes_received;
            r.datagrams_sent = self.own.datagrams_sent;
            r.bytes_sent = self.own.bytes_sent;
        }
    }

    /// The Reply for an origin's answer: compiled, held to the page limit, kept in the
    /// deck cache when the origin allows it, or the cached deck a 304 confirmed.
    fn reply_of(
        &mut self,
        request: &OriginRequest,
        key: Option<DeckKey>,
        answer: Result<OriginAnswer, OriginFailure>,
    ) -> wsp::Pdu {
        let now_ns = setup::now().mono_ns;
        let Ok(answer) = answer else {
            return origin::reply_for(request, answer);
        };
        if let (304, Some(key)) = (answer.status, &key) {
            let cached = self.cache(|c| c.revalidated(key, &answer.cache, now_ns));
            if let Some(reply) = cached.flatten() {
                self.own.cache_answers += 1;
                return reply;
            }
        }
        let freshness = Freshness::of(&answer.cache);
        let reply = origin::reply_for(request, Ok(answer));
        let size = match &reply {
            wsp::Pdu::Reply { body, .. } => body.len(),
            _ => 0,
        };
        if size > self.limits.max_page_bytes {
            self.own.pages_over_limit += 1;
            return origin::plain(
                502,
                format!(
                    "the page is {size} octets, over the gateway's limit of {}",
                    self.limits.max_page_bytes
                ),
            );
        }
        if let Some(key) = key {
            self.cache(|c| c.store(key, &reply, freshness, now_ns));
        }
        reply
    }

    fn cache<T>(&self, f: impl FnOnce(&mut DeckCache) -> T) -> Option<T> {
        self.shared.cache.lock().ok().map(|mut c| f(&mut c))
    }

    /// Sends `reply` as the answer to `to` (within the reflection bound), logs it, and
    /// says its body's size.
    fn answer(&mut self, to: ReplyTo, request: &OriginRequest, reply: wsp::Pdu) -> usize {
        let reply = self.within_reflection_bound(to, reply);
        let (status, bytes) = match &reply {
            wsp::Pdu::Reply { status, body, .. } => (status.http().unwrap_or(0), body.len()),
            _ => (0, 0),
        };
        if let Some(log) = &self.shared.access_log {
            let (peer, mode) = match to {
                ReplyTo::Connectionless { peer, .. } => (peer, "WSP/CL"),
                ReplyTo::Transaction { peer, .. } => (peer, "WSP/CO"),
            };
            let protocol = if self.role.secure {
                format!("{mode} WTLS")
            } else {
                mode.to_string()
            };
            if let Ok(mut log) = log.lock() {
                log.write(&access_log::Entry {
                    client: peer,
                    method: request.method,
                    uri: &request.uri,
                    protocol: &protocol,
                    status,
                    bytes,
                });
            }
        }
        let actions = self.service.on_reply(to, reply, wtp_now());
        self.run(actions);
        bytes
    }

    /// On an unsecured port, a Reply too large for what an unproven address may still
    /// receive becomes a 403 that fits (its text only if that fits too).
    fn within_reflection_bound(&self, to: ReplyTo, reply: wsp::Pdu) -> wsp::Pdu {
        if self.endpoint.is_some() {
            return reply; // a WTLS peer proved its address by its handshake
        }
        let segment = self.segment_size;
        let (ReplyTo::Connectionless { peer, .. } | ReplyTo::Transaction { peer, .. }) = to;
        let size = wire_size(to, &reply, segment);
        let allowance = self.shared.guard.allowance(peer.ip(), setup::now().mono_ns);
        if allowance.fits(size) {
            return reply;
        }
        self.shared.guard.count_refused_page();
        let text = "this address has not proven it reads the gateway's answers: use \
                    connection mode or WTLS first";
        let refusal = origin::plain(403, text.into());
        let overhead = wire_size(to, &origin::plain(403, String::new()), segment);
        match allowance {
            Allowance::Bytes(b) if (b as usize) < overhead + text.len() => {
                origin::plain(403, String::new())
            }
            _ => refusal,
        }
    }

    /// Serves every datagram queued on the socket (edge-triggered: until it would block).
    fn receive_all(&mut self, buf: &mut [u8]) {
        loop {
            match self.socket.recv_from(buf) {
                Ok((n, peer)) => {
                    let datagram = buf[..n].to_vec();
                    let start_ns = setup::now().mono_ns;
                    self.own.datagrams_received += 1;
                    self.own.bytes_received += n as u64;
                    if self.endpoint.is_none() {
                        self.shared.guard.received(peer.ip(), n, start_ns);
                    }
                    let kind = self.on_datagram(peer, &datagram);
                    self.record(kind, start_ns, n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // An ICMP error for an earlier send (a client gone): nothing to serve.
                Err(_) => {}
            }
        }
    }

    /// Turns every origin answer that has come back into its Reply.
    fn answer_all(&mut self) {
        while let Ok((to, request, key, answer)) = self.answers.try_recv() {
            let start_ns = setup::now().mono_ns;
            let reply = self.reply_of(&request, key, answer);
            let bytes = self.answer(to, &request, reply);
            self.record(JobKind::Reply, start_ns, bytes);
        }
    }

    /// Until the next WTP timer, at most [`POLL`].
    fn wait(&self) -> Duration {
        let now = wtp_now().mono_ns;
        self.service.deadline().map_or(POLL, |d| {
            Duration::from_nanos(d.saturating_sub(now)).min(POLL)
        })
    }

    fn record(&mut self, kind: JobKind, start_ns: u64, bytes: usize) {
        let job = WapJob {
            kind,
            start_ns,
            end_ns: setup::now().mono_ns,
            bytes,
        };
        if let Ok(mut jobs) = self.jobs.lock() {
            if jobs.len() < MAX_JOBS {
                jobs.push(job);
            }
        }
    }

    /// Serves one datagram; says whether it was handshake or WSP/WTP work.
    fn on_datagram(&mut self, peer: SocketAddr, datagram: &[u8]) -> JobKind {
        let Some(endpoint) = &mut self.endpoint else {
            let actions = self.service.on_datagram(peer, datagram, wtp_now());
            self.run(actions);
            return JobKind::Request;
        };
        endpoint.handle(setup::now(), peer, datagram, &mut self.handled);
        let kind = if self.handled.handshake_job {
            JobKind::Handshake
        } else {
            JobKind::Request
        };
        for t in &self.handled.transmits {
            if send_to(&self.socket, &t.payload, t.destination).is_ok() {
                self.own.datagrams_sent += 1;
                self.own.bytes_sent += t.payload.len() as u64;
            }
        }
        let events: Vec<EndpointEvent> = self.handled.events.drain(..).collect();
        for event in events {
            match event {
                EndpointEvent::ApplicationData { peer, data } => {
                    let actions = self.service.on_datagram(peer, &data, wtp_now());
                    self.run(actions);
                }
                // The peer's Finished verified: it read our flight.
                EndpointEvent::HandshakeComplete { peer, .. } => {
                    self.shared.guard.prove(peer.ip(), setup::now().mono_ns)
                }
            }
        }
        kind
    }

    fn run(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Send { to, bytes } => self.send(to, &bytes),
                Action::Fetch { request, reply_to } => self.fetch(request, reply_to),
                Action::Proven { peer } if self.limits.reflection.wtp_proves => {
                    self.shared.guard.prove(peer.ip(), setup::now().mono_ns)
                }
                Action::Proven { .. } => {}
            }
        }
    }

    fn send(&mut self, to: SocketAddr, bytes: &[u8]) {
        let payload = match &mut self.endpoint {
            Some(e) => match e.seal_application_data(to, bytes) {
                Ok(sealed) => sealed,
                Err(err) => {
                    tracing::debug!(peer = %to, error = %err, "no WTLS connection to answer on");
                    return;
                }
            },
            None => {
                // The unsecured ports' reflection bound: the hard stop, whatever the
                // datagram (a Result, its retransmission, an Abort).
                if !self
                    .shared
                    .guard
                    .charge(to.ip(), bytes.len(), setup::now().mono_ns)
                {
                    return;
                }
                bytes.to_vec()
            }
        };
        match send_to(&self.socket, &payload, to) {
            Ok(n) => {
                self.own.datagrams_sent += 1;
                self.own.bytes_sent += n as u64;
            }
            Err(e) => tracing::debug!(peer = %to, error = %e, "send failed"),
        }
    }
}

/// Octets a Reply takes on the wire: one datagram connectionless; in a transaction, the
/// WSP PDU and WTP's 3-octet header per segment.
fn wire_size(to: ReplyTo, reply: &wsp::Pdu, segment: usize) -> usize {
    match to {
        ReplyTo::Connectionless { tid, .. } => wsp::encode_connectionless(tid, reply).len(),
        ReplyTo::Transaction { .. } => {
            let pdu = reply.encode().len();
            pdu + 3 * pdu.div_ceil(segment).max(1)
        }
    }
}

/// Sends one datagram on the non-blocking socket; a full send buffer is waited out
/// briefly (at most [`SEND_RETRIES`] times 1 ms) rather than the answer dropped.
fn send_to(socket: &UdpSocket, payload: &[u8], to: SocketAddr) -> std::io::Result<usize> {
    let mut tries = 0;
    loop {
        match socket.send_to(payload, to) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && tries < SEND_RETRIES => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            other => return other,
        }
    }
}

/// How often [`send_to`] waits for room in the send buffer.
const SEND_RETRIES: u32 = 10;

/// The process clock as WTP's virtual time.
fn wtp_now() -> wtp::Now {
    let now = setup::now();
    wtp::Now::new(now.mono_ns, now.unix_secs)
}
