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

pub mod lab_origin;
pub mod origin;
pub mod service;

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token, Waker};
use wtls::endpoint::{Endpoint, EndpointConfig, EndpointEvent, Handled};
use wtls::handshake::ServerConfig;
use wtlsperf_wap::wsp;
use wtlsperf_wap::wtp::{self, Timers};

use crate::setup;
use crate::wap_client::WspMode;
use origin::{Origin, OriginRequest};
use service::{Action, ReplyTo, ServiceStats, WapService};

/// Most origin requests in flight per port; beyond them a request waits its turn.
const MAX_IN_FLIGHT: usize = 64;
/// Most requests waiting for a turn per port; beyond them a request is answered 503. A
/// burst of clients (fakewap's 128 threads each with a Get out) waits a few milliseconds
/// here instead of being refused.
const MAX_WAITING: usize = 1024;
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
    /// WTP's retry interval R, acknowledgement interval A and retransmission limit
    /// RCR_MAX, for both connection-mode ports or one.
    pub wtp_retry_ms: Vec<PortSetting>,
    pub wtp_ack_ms: Vec<PortSetting>,
    pub wtp_max_retransmissions: Vec<PortSetting>,
}

/// A value of a `gateway --wap` option for one port (`PORT=VALUE`) or, without a port,
/// for every port it applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSetting {
    pub port: Option<u16>,
    pub value: u64,
}

impl std::str::FromStr for PortSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<PortSetting, String> {
        let (port, value) = match s.split_once('=') {
            Some((p, v)) => (Some(p.parse().map_err(|e| format!("port {p:?}: {e}"))?), v),
            None => (None, s),
        };
        let value = value
            .parse()
            .map_err(|e| format!("{value:?} is not a whole number ({e})"))?;
        Ok(PortSetting { port, value })
    }
}

/// The WTP timers of each connection-mode port (by role offset) that the options set:
/// WAP-224 leaves the values to the bearer (§9.12), so an operator may tune them per
/// port; unset values keep [`Timers::default`]. Settings without a port come first,
/// then those naming one.
pub fn port_timers(args: &WapPorts) -> anyhow::Result<Vec<(u16, Timers)>> {
    let connection: Vec<u16> = ROLES
        .iter()
        .filter(|r| r.mode == WspMode::Connection)
        .map(|r| r.offset)
        .collect();
    let mut timers: Vec<(u16, Timers)> =
        connection.iter().map(|o| (*o, Timers::default())).collect();
    for (option, settings, range, set) in timer_options(args) {
        let mut ordered: Vec<&PortSetting> = settings.iter().filter(|s| s.port.is_none()).collect();
        ordered.extend(settings.iter().filter(|s| s.port.is_some()));
        for setting in ordered {
            anyhow::ensure!(
                range.contains(&setting.value),
                "{option} {}: must be {} to {}",
                setting.value,
                range.start(),
                range.end()
            );
            let offset = match setting.port {
                None => None,
                Some(p) => Some(
                    p.checked_sub(args.wap_base_port)
                        .filter(|o| connection.contains(o))
                        .ok_or_else(|| {
                            anyhow!(
                                "{option} {p}={}: not a connection-mode WAP port ({} or {})",
                                setting.value,
                                args.wap_base_port + 1,
                                args.wap_base_port + 3
                            )
                        })?,
                ),
            };
            for (_, t) in timers
                .iter_mut()
                .filter(|(o, _)| offset.is_none_or(|x| x == *o))
            {
                set(t, setting.value);
            }
        }
    }
    Ok(timers)
}

/// Each timer option: its name, its settings, the values it takes, and what it sets.
type TimerOption<'a> = (
    &'static str,
    &'a [PortSetting],
    std::ops::RangeInclusive<u64>,
    fn(&mut Timers, u64),
);

fn timer_options(args: &WapPorts) -> [TimerOption<'_>; 3] {
    [
        (
            "--wtp-retry-ms",
            &args.wtp_retry_ms,
            1..=600_000,
            |t, ms| t.retry_interval_ns = ms * 1_000_000,
        ),
        ("--wtp-ack-ms", &args.wtp_ack_ms, 1..=600_000, |t, ms| {
            t.ack_interval_ns = ms * 1_000_000
        }),
        (
            "--wtp-max-retransmissions",
            &args.wtp_max_retransmissions,
            0..=255,
            |t, n| t.max_retransmissions = u8::try_from(n).unwrap_or(u8::MAX),
        ),
    ]
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

/// What one port did, for the stop report.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PortReport {
    pub port: u16,
    pub role: Option<PortRole>,
    pub service: ServiceStats,
    pub origin_failures: u64,
    pub busy_refusals: u64,
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

/// An origin's answer on its way back to the port.
type Answer = (
    ReplyTo,
    OriginRequest,
    Result<origin::OriginAnswer, origin::OriginFailure>,
);

/// Running ports; dropping it stops them.
pub struct WapGateway {
    stop: Arc<AtomicBool>,
    jobs: Arc<Mutex<Vec<WapJob>>>,
    threads: Vec<JoinHandle<PortReport>>,
    pub addrs: Vec<(PortRole, SocketAddr)>,
}

impl WapGateway {
    /// Stops every port and returns their reports.
    pub fn shutdown(mut self) -> Vec<PortReport> {
        self.stop.store(true, Ordering::SeqCst);
        self.threads
            .drain(..)
            .filter_map(|t| t.join().ok())
            .collect()
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
    let mut threads = Vec::new();
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
        let port_state = Port::new(*role, socket, &cfg, jobs.clone())?;
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
        addrs,
    })
}

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
    socket: UdpSocket,
    poll: Poll,
    waker: Arc<Waker>,
    endpoint: Option<Endpoint>,
    handled: Handled,
    service: WapService,
    origin: Origin,
    answers_tx: Sender<Answer>,
    answers: Receiver<Answer>,
    jobs: Arc<Mutex<Vec<WapJob>>>,
    in_flight: Arc<AtomicUsize>,
    /// Requests waiting for one of the [`MAX_IN_FLIGHT`] turns, oldest first.
    waiting: VecDeque<(OriginRequest, ReplyTo)>,
    report: Arc<Mutex<PortReport>>,
}

impl Port {
    fn new(
        role: PortRole,
        socket: UdpSocket,
        cfg: &WapGatewayConfig,
        jobs: Arc<Mutex<Vec<WapJob>>>,
    ) -> anyhow::Result<Port> {
        let (answers_tx, answers) = channel();
        let mut socket = socket;
        let port = socket.local_addr().map_or(0, |a| a.port());
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut socket, SOCKET, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
        Ok(Port {
            socket,
            poll,
            waker,
            endpoint: role
                .secure
                .then(|| Endpoint::new(cfg.server.clone(), EndpointConfig::default())),
            handled: Handled::default(),
            service: WapService::new(role.mode, cfg.timers_for(role)),
            origin: Origin::new(cfg.origin_timeout),
            answers_tx,
            answers,
            jobs,
            in_flight: Arc::new(AtomicUsize::new(0)),
            waiting: VecDeque::new(),
            report: Arc::new(Mutex::new(PortReport {
                port,
                role: Some(role),
                ..PortReport::default()
            })),
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
        }
        let mut report = self.report.lock().map(|r| r.clone()).unwrap_or_default();
        report.service = self.service.stats.clone();
        report
    }

    /// Serves every datagram queued on the socket (edge-triggered: until it would block).
    fn receive_all(&mut self, buf: &mut [u8]) {
        loop {
            match self.socket.recv_from(buf) {
                Ok((n, peer)) => {
                    let datagram = buf[..n].to_vec();
                    let start_ns = setup::now().mono_ns;
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
        while let Ok((to, request, answer)) = self.answers.try_recv() {
            let start_ns = setup::now().mono_ns;
            let reply = origin::reply_for(&request, answer);
            let bytes = match &reply {
                wsp::Pdu::Reply { body, .. } => body.len(),
                _ => 0,
            };
            let actions = self.service.on_reply(to, reply, wtp_now());
            self.run(actions);
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
            let _ = send_to(&self.socket, &t.payload, t.destination);
        }
        let events: Vec<EndpointEvent> = self.handled.events.drain(..).collect();
        for event in events {
            if let EndpointEvent::ApplicationData { peer, data } = event {
                let actions = self.service.on_datagram(peer, &data, wtp_now());
                self.run(actions);
            }
        }
        kind
    }

    fn run(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Send { to, bytes } => self.send(to, &bytes),
                Action::Fetch { request, reply_to } => self.fetch(request, reply_to),
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
            None => bytes.to_vec(),
        };
        if let Err(e) = send_to(&self.socket, &payload, to) {
            tracing::debug!(peer = %to, error = %e, "send failed");
        }
    }

    /// Asks the origin, now if a turn is free, else when one is (answered 503 when too
    /// many wait already).
    fn fetch(&mut self, request: OriginRequest, reply_to: ReplyTo) {
        if self.in_flight.load(Ordering::SeqCst) < MAX_IN_FLIGHT {
            return self.start(request, reply_to);
        }
        if self.waiting.len() < MAX_WAITING {
            return self.waiting.push_back((request, reply_to));
        }
        if let Ok(mut r) = self.report.lock() {
            r.busy_refusals += 1;
        }
        let busy = origin::reply_for(
            &request,
            Err(origin::OriginFailure::Failed("the gateway is busy".into())),
        );
        let busy = match busy {
            wsp::Pdu::Reply {
                content_type,
                headers,
                body,
                ..
            } => wsp::Pdu::Reply {
                status: wsp::Status::from_http_or_class(503),
                content_type,
                headers,
                body,
            },
            other => other,
        };
        let actions = self.service.on_reply(reply_to, busy, wtp_now());
        self.run(actions);
    }

    /// Starts waiting requests while turns are free.
    fn start_waiting(&mut self) {
        while self.in_flight.load(Ordering::SeqCst) < MAX_IN_FLIGHT {
            let Some((request, reply_to)) = self.waiting.pop_front() else {
                return;
            };
            self.start(request, reply_to);
        }
    }

    /// Asks the origin on a thread of its own; the answer comes back by channel.
    fn start(&mut self, request: OriginRequest, reply_to: ReplyTo) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let origin = self.origin.clone();
        let tx = self.answers_tx.clone();
        let in_flight = self.in_flight.clone();
        let report = self.report.clone();
        let waker = self.waker.clone();
        let spawned = std::thread::Builder::new()
            .name("wap-origin".into())
            .spawn(move || {
                let answer = origin.fetch(&request);
                if answer.is_err() {
                    if let Ok(mut r) = report.lock() {
                        r.origin_failures += 1;
                    }
                }
                in_flight.fetch_sub(1, Ordering::SeqCst);
                if tx.send((reply_to, request, answer)).is_ok() {
                    let _ = waker.wake();
                }
            });
        if let Err(e) = spawned {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            tracing::warn!(error = %e, "could not start an origin request");
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

/// The roles `--wap-off` leaves open.
pub fn open_roles(args: &WapPorts) -> anyhow::Result<Vec<PortRole>> {
    for off in &args.wap_off {
        let known = (args.wap_base_port..args.wap_base_port + 4).contains(off);
        anyhow::ensure!(
            known,
            "--wap-off {off}: not one of the WAP ports {}-{}",
            args.wap_base_port,
            args.wap_base_port + 3
        );
    }
    let roles: Vec<PortRole> = ROLES
        .iter()
        .filter(|r| !args.wap_off.contains(&(args.wap_base_port + r.offset)))
        .copied()
        .collect();
    if roles.is_empty() {
        return Err(anyhow!(
            "--wap-off closes all four WAP ports: nothing to serve"
        ));
    }
    Ok(roles)
}

/// `wtlsperf gateway --wap` until SIGINT/SIGTERM or `run_for`.
pub fn run(
    listen: SocketAddr,
    args: &WapPorts,
    server: Arc<ServerConfig>,
    run_for: Option<Duration>,
) -> anyhow::Result<()> {
    let cfg = WapGatewayConfig {
        ip: listen.ip(),
        base_port: args.wap_base_port,
        roles: open_roles(args)?,
        server,
        origin_timeout: Duration::from_millis(args.origin_timeout_ms),
        timers: Timers::default(),
        port_timers: port_timers(args)?,
    };
    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, stop.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.clone())?;
    let gateway = spawn(cfg)?;
    for (role, addr) in &gateway.addrs {
        eprintln!(
            "wtlsperf WAP gateway: {} WSP{} on {addr}",
            if role.mode == WspMode::Connection {
                "connection-mode"
            } else {
                "connectionless"
            },
            if role.secure { " over WTLS" } else { "" }
        );
    }
    let deadline = run_for.and_then(|d| Instant::now().checked_add(d));
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let reports = gateway.shutdown();
    println!("{}", serde_json::to_string_pretty(&reports)?);
    Ok(())
}
