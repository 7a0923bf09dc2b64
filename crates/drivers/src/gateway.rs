//! The UDP WTLS gateway: N worker threads, each owning one `SO_REUSEPORT` socket bound to
//! the same address and the per-peer state of the peers the kernel hashes to it.
//!
//! Why `SO_REUSEPORT` rather than one receiver dispatching to worker queues: Linux picks
//! the socket of a reuseport group by a hash of the datagram's 4-tuple, so every datagram
//! of one peer reaches the same worker for as long as the group is unchanged, which is
//! exactly the affinity the per-peer [`wtls::handshake::ServerConnection`] needs. No
//! thread hands datagrams to another, so there is no extra queue whose waiting time would
//! hide inside the measured service time, and a worker's waiting time is the kernel
//! socket queue only (what the thesis' M/G/1 model of the gateway describes).
//!
//! Each worker drives one [`wtls::endpoint::Endpoint`], which holds the per-peer policy:
//! the peer table (at most `max_peers` connections per gateway, split evenly over the
//! workers), expiry, eviction and the bound on re-answered ClientHellos. The response-rate
//! limiter is the gateway's, one for all workers ([`wtls::endpoint::ResponseLimiter`],
//! sharded locks): a forger who varies its source port reaches several workers but one
//! budget per address, and a client proven on one worker is proven on all. The worker
//! only moves datagrams, echoes application data and keeps the job log.
//!
//! Jobs: every datagram processed while its peer was handshaking is a job of the queue
//! model. Its arrival is the kernel receive timestamp (`SO_TIMESTAMPNS`, CLOCK_REALTIME),
//! moved to the process clock's monotonic base by the offset between the two clocks read
//! back to back when `recvmmsg` returns; start is when processing begins, end when the last
//! answer datagram was handed to the kernel.
//!
//! A worker reads up to [`RECV_BATCH`] datagrams per `recvmmsg` call and reads its thread
//! CPU clock (a system call on Linux, unlike the wall clock) once before and once after
//! the batch; each job's CPU time is the batch's CPU apportioned by the jobs' wall service
//! times. At light load a batch holds one datagram and that is the job's own CPU time; at
//! saturation it saves the worker two system calls and two receive calls per job.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;
use wtls::endpoint::{EndpointConfig, ResponseLimit, ResponseLimiter};
use wtls::handshake::ServerConfig;

pub mod handshakes;
pub mod operator;
mod recv;
pub mod serve;
pub mod stats_log;
mod worker;

pub use handshakes::{HandshakeEndpoint, HandshakeServers, MakeServer};
pub use operator::gateway_options;
pub use serve::{ServeProtocol, Served, ServerEndpoint, WtlsServer};
use worker::{Worker, POLL_INTERVAL};

/// Largest datagram the gateway reads.
const MAX_DATAGRAM: usize = 65_535;
/// Most datagrams one `recvmmsg` call returns.
pub const RECV_BATCH: usize = 32;
/// Most job records kept over all workers (about 100 MB at most).
pub const MAX_JOB_RECORDS: usize = 1_000_000;
/// A worker that was not running for longer than this while it had nothing else to do
/// (a gap between two polls of a busy-polling worker, or a batch whose wall time exceeds
/// its thread CPU time by this much) logs a [`Stall`]. 200 us is above every preemption by
/// the guest's own kernel threads seen on the 2-core test machine (at most 0.19 ms in a
/// `perf sched` trace) and below the hypervisor's descheduling of the virtual CPU (1-30
/// ms), which is what the stall log is for.
pub const STALL_NS: u64 = 200_000;
/// Everything a gateway needs. `P` is what it serves: WTLS (its server configuration)
/// by default, or any server handshake on the spine ([`HandshakeServers`]).
#[derive(Clone)]
pub struct GatewayConfig<P = Arc<ServerConfig>> {
    pub listen: SocketAddr,
    pub workers: usize,
    pub server: P,
    pub max_peers: usize,
    pub handshake_timeout: Duration,
    pub idle_timeout: Duration,
    /// Keep a log of every job (bounded by [`MAX_JOB_RECORDS`]); the running moments in
    /// [`GatewayStats`] are kept either way.
    pub record_jobs: bool,
    /// Pin worker i to CPU `cpu_affinity[i % len]` (none when empty). Load tests give
    /// the worker a core of its own, so jobs wait only behind other jobs.
    pub cpu_affinity: Vec<usize>,
    /// Poll the socket without sleeping: no wake-up latency is added to a job's waiting
    /// time (the scheduler's wake-up of a blocked thread takes tens of microseconds,
    /// comparable to a fast handshake job). Only sensible with a pinned worker.
    pub busy_poll: bool,
    /// Byte budgets toward unverified addresses (shared by all workers).
    pub response_limit: ResponseLimit,
    /// Join a port other sockets already listen on (`SO_REUSEPORT`), e.g. a second
    /// gateway sharing the traffic. Off: a port in use is an error.
    pub reuse_port: bool,
    /// The address of the UDP balancer in front (its clients' budgets are per balancer
    /// session: [`EndpointConfig::balancer`]).
    pub balancer: Option<IpAddr>,
}

impl<P> std::fmt::Debug for GatewayConfig<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayConfig")
            .field("listen", &self.listen)
            .field("workers", &self.workers)
            .field("max_peers", &self.max_peers)
            .field("handshake_timeout", &self.handshake_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("record_jobs", &self.record_jobs)
            .field("cpu_affinity", &self.cpu_affinity)
            .field("busy_poll", &self.busy_poll)
            .field("response_limit", &self.response_limit)
            .field("reuse_port", &self.reuse_port)
            .field("balancer", &self.balancer)
            .finish_non_exhaustive()
    }
}

impl<P> GatewayConfig<P> {
    /// Defaults around a server configuration: one worker, 100 000 peers, 10 s to finish
    /// a handshake, 60 s idle, no job log, the default response limit, a port of its own.
    pub fn new(listen: SocketAddr, server: P) -> Self {
        GatewayConfig {
            listen,
            workers: 1,
            server,
            max_peers: 100_000,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            record_jobs: false,
            cpu_affinity: Vec::new(),
            busy_poll: false,
            response_limit: ResponseLimit::default(),
            reuse_port: false,
            balancer: None,
        }
    }

    /// A gateway for the laboratory's own runs (load, bearer and device runs): their
    /// clients are sockets and relays on loopback that share one address and prefix at
    /// rates far above any per-source budget, so the response limiter, which guards the
    /// open network, would take them for one reflecting source and drop their answers.
    pub fn lab(listen: SocketAddr, server: P) -> Self {
        GatewayConfig {
            response_limit: ResponseLimit::OFF,
            ..GatewayConfig::new(listen, server)
        }
    }

    /// The policy of each worker's endpoint.
    fn endpoint_config(&self) -> EndpointConfig {
        EndpointConfig {
            max_peers: self.max_peers.div_ceil(self.workers.max(1)),
            handshake_timeout_ns: duration_ns(self.handshake_timeout),
            idle_timeout_ns: duration_ns(self.idle_timeout),
            response_limit: self.response_limit,
            balancer: self.balancer,
            ..EndpointConfig::default()
        }
    }
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// An interval in which a worker was not running although its thread was not waiting for
/// anything (see [`STALL_NS`]): the virtual CPU descheduled by the hypervisor, or the
/// thread preempted. No queue model of the gateway describes such an interval, so the
/// queue study reads the queue apart from them. Nanoseconds on the process clock. Only a
/// job-logging gateway keeps them, and idle gaps only with busy polling (a blocking
/// worker's gaps are its sleep).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Stall {
    pub start_ns: u64,
    pub end_ns: u64,
    pub worker: usize,
}

/// One datagram that carried handshake messages, as the gateway's queue saw it. Times are
/// nanoseconds on the process clock ([`ProcessClock::shared`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobRecord {
    /// Kernel receive timestamp (or the time `recvmsg` returned without one).
    pub arrival_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Worker thread CPU time spent on the job.
    pub cpu_ns: u64,
    pub bytes: usize,
    /// Records (one handshake message, ChangeCipherSpec or alert each) in the datagram.
    pub messages: usize,
    pub peer: SocketAddr,
    pub worker: usize,
    /// Whether the kernel timestamp was available for `arrival_ns`.
    pub kernel_timestamp: bool,
}

impl JobRecord {
    pub fn wait_ns(&self) -> u64 {
        self.start_ns.saturating_sub(self.arrival_ns)
    }
    pub fn service_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// The queue models read a load run's jobs through this view (the steady window, the
/// undisturbed jobs, the job chains).
impl wtlsperf_models::queue::trace::TracedJob for JobRecord {
    fn arrival_ns(&self) -> u64 {
        self.arrival_ns
    }
    fn start_ns(&self) -> u64 {
        self.start_ns
    }
    fn end_ns(&self) -> u64 {
        self.end_ns
    }
    fn source(&self) -> Option<SocketAddr> {
        Some(self.peer)
    }
}

/// Counters and gauges of a gateway, summed over its workers.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GatewayStats {
    /// Connections holding state now (an address may hold an established connection
    /// and, beside it, handshakes it started since).
    pub peers: u64,
    pub half_open: u64,
    pub established: u64,
    /// Completed handshakes by kind (`full`, `abbreviated`, `optimised`).
    pub handshakes_completed: BTreeMap<String, u64>,
    /// Alerts sent, by description name.
    pub alerts_sent: BTreeMap<String, u64>,
    pub datagrams_received: u64,
    pub datagrams_sent: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Bytes sent by handshakes whose peer had not yet proved it reads them (what a
    /// forged source can make the gateway send).
    pub bytes_sent_unverified: u64,
    /// Records the engine dropped without an answer, plus refused datagrams.
    pub dropped: u64,
    /// Handshakes that ended without completing (the endpoint for protocols on the
    /// spine; WTLS counts its failures by the alert sent).
    pub handshakes_failed: u64,
    /// Datagrams the server sent again on its own retransmission timer (the endpoint for
    /// protocols on the spine).
    pub server_retransmissions: u64,
    /// New peers that got no state because `max_peers` were held.
    pub refused: u64,
    /// Peers whose state expired or was evicted (the four below together).
    pub evicted: u64,
    pub expired: u64,
    pub evicted_half_open: u64,
    pub evicted_idle: u64,
    pub evicted_per_address: u64,
    /// Handshakes started beside a connection the address already held.
    pub parallel_handshakes: u64,
    /// Connections ended because a newer handshake of the same address completed.
    pub replaced: u64,
    /// Echoed application-data records.
    pub echoed: u64,
    /// Retransmitted flights answered from the engine's cache.
    pub retransmissions_answered: u64,
    /// Copies of a ClientHello not answered again.
    pub reanswers_suppressed: u64,
    /// Answers not sent because the response budget toward their address was spent.
    pub rate_limited: u64,
    pub rate_limited_bytes: u64,
    /// Estimated bytes of per-peer state: connection heap + per-entry overhead.
    pub state_bytes: u64,
    /// Jobs (handshake datagrams) seen, and the moments of their waiting and service
    /// times (service: wall and worker CPU), in microseconds.
    pub jobs: u64,
    pub mean_wait_us: f64,
    pub wait_m2_us2: f64,
    pub mean_service_us: f64,
    pub service_m2_us2: f64,
    pub mean_service_cpu_us: f64,
    /// Jobs whose arrival came from the kernel timestamp.
    pub kernel_timestamps: u64,
    /// CPU time of the worker threads so far, ns (updated at every sweep).
    pub worker_cpu_ns: u64,
    /// The shared session store's counters (`gateway --session-store`; absent with the
    /// in-process cache).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_store: Option<crate::session_store::SessionStoreStats>,
}

impl GatewayStats {
    pub fn handshakes(&self) -> u64 {
        self.handshakes_completed.values().sum()
    }

    /// Mean heap bytes per peer holding state (0 with no peers).
    pub fn bytes_per_peer(&self) -> f64 {
        if self.peers == 0 {
            0.0
        } else {
            self.state_bytes as f64 / self.peers as f64
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Counters stay meaningful even if a worker panicked while holding the lock.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running gateway. Dropping it stops the workers too.
pub struct GatewayHandle {
    local_addr: SocketAddr,
    shared: Arc<dyn worker::SharedView>,
    threads: Vec<JoinHandle<()>>,
    /// The workers' kernel thread ids, in worker order (`None` for one that had not
    /// started within [`TID_WAIT`]): where a load run reads each worker's scheduler
    /// counters (`/proc/self/task/<tid>/schedstat`).
    worker_tids: Vec<Option<i32>>,
}

/// How long [`spawn_gateway`] waits for a worker thread to report its id.
const TID_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

impl std::fmt::Debug for GatewayHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayHandle")
            .field("local_addr", &self.local_addr)
            .field("workers", &self.threads.len())
            .finish()
    }
}

impl GatewayHandle {
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn stats(&self) -> GatewayStats {
        self.shared.stats()
    }

    /// The workers' kernel thread ids (see the field).
    pub fn worker_tids(&self) -> &[Option<i32>] {
        &self.worker_tids
    }

    /// The job log so far (emptied).
    pub fn take_jobs(&self) -> Vec<JobRecord> {
        std::mem::take(&mut *lock(&self.shared.logs().jobs))
    }

    /// The stall log so far (emptied), in no particular order across workers.
    pub fn take_stalls(&self) -> Vec<Stall> {
        std::mem::take(&mut *lock(&self.shared.logs().stalls))
    }

    /// Stops accepting, waits for the workers to finish and returns the final stats.
    pub fn shutdown(mut self) -> GatewayStats {
        self.stop()
    }

    /// [`GatewayHandle::shutdown`] that keeps the handle, so that the job and stall
    /// logs can be taken afterwards, complete.
    pub fn stop(&mut self) -> GatewayStats {
        self.stop_and_join();
        self.shared.stats()
    }

    fn stop_and_join(&mut self) {
        self.shared.logs().stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                tracing::error!("gateway worker panicked");
            }
        }
    }
}

impl Drop for GatewayHandle {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

/// Binds `workers` reuseport sockets to `cfg.listen` and starts one worker per socket,
/// each serving its own endpoint of `cfg.server`'s protocol. A port another socket
/// already holds is refused unless `cfg.reuse_port`.
pub fn spawn_gateway<P: ServeProtocol>(cfg: GatewayConfig<P>) -> anyhow::Result<GatewayHandle> {
    anyhow::ensure!(cfg.workers >= 1, "a gateway needs at least one worker");
    anyhow::ensure!(cfg.max_peers >= 1, "max_peers must be at least 1");
    if !cfg.reuse_port && cfg.listen.port() != 0 {
        ensure_port_free(cfg.listen)?;
    }
    let first = bind_reuseport(cfg.listen)?;
    // With port 0 the kernel picked one: the other workers join that port.
    let local_addr = first.local_addr()?;
    let mut sockets = vec![first];
    for _ in 1..cfg.workers {
        sockets.push(bind_reuseport(local_addr)?);
    }
    let shared = Arc::new(worker::Shared::new_with(
        cfg.workers,
        cfg.record_jobs,
        <P::Endpoint as ServerEndpoint>::add_stats,
    ));
    let endpoint_config = cfg.endpoint_config();
    // One limiter for every worker; its proofs last as long as an idle connection.
    let limiter = Arc::new(ResponseLimiter::new(
        cfg.response_limit,
        endpoint_config.idle_timeout_ns,
    ));
    let mut threads = Vec::new();
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    for (index, socket) in sockets.into_iter().enumerate() {
        let cpu = (!cfg.cpu_affinity.is_empty())
            .then(|| cfg.cpu_affinity[index % cfg.cpu_affinity.len()]);
        let worker = Worker::new(
            index,
            socket,
            shared.clone(),
            cfg.server.endpoint(endpoint_config, &limiter),
            cpu,
            cfg.busy_poll,
        );
        let tid_tx = tid_tx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("gw-worker-{index}"))
            .spawn(move || {
                // SAFETY: gettid has no preconditions.
                let _ = tid_tx.send((index, unsafe { libc::gettid() }));
                drop(tid_tx);
                worker.run()
            });
        match spawned {
            Ok(t) => threads.push(t),
            Err(e) => {
                shared.logs.stop.store(true, Ordering::SeqCst);
                for t in threads {
                    let _ = t.join();
                }
                return Err(e).context("spawning a gateway worker");
            }
        }
    }
    drop(tid_tx);
    let mut worker_tids = vec![None; threads.len()];
    while let Ok((index, tid)) = tid_rx.recv_timeout(TID_WAIT) {
        worker_tids[index] = Some(tid);
    }
    tracing::info!(%local_addr, workers = cfg.workers, max_peers = cfg.max_peers, "gateway listening");
    Ok(GatewayHandle {
        local_addr,
        shared,
        threads,
        worker_tids,
    })
}

/// Refuses an address another socket is bound to. Why a probe: our own sockets set
/// `SO_REUSEPORT` so that the workers share the port, and the kernel would let any other
/// reuseport socket of the same user join them and take a share of the traffic (a
/// second gateway started by mistake). A socket without the option cannot bind a port
/// in use, whoever holds it.
fn ensure_port_free(addr: SocketAddr) -> anyhow::Result<()> {
    match UdpSocket::bind(addr) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => anyhow::bail!(
            "{addr} is already in use (another gateway?); pass --reuse-port to share it"
        ),
        Err(e) => Err(e).with_context(|| format!("binding the gateway to {addr}")),
    }
}

fn bind_reuseport(addr: SocketAddr) -> anyhow::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    socket.set_reuse_port(true)?;
    // Bursts of ClientHellos under load must queue in the kernel, not be dropped there.
    let _ = socket.set_recv_buffer_size(4 << 20);
    socket
        .bind(&addr.into())
        .with_context(|| format!("binding the gateway to {addr}"))?;
    let socket: UdpSocket = socket.into();
    socket.set_read_timeout(Some(POLL_INTERVAL))?;
    enable_kernel_timestamps(&socket);
    Ok(socket)
}

fn enable_kernel_timestamps(socket: &UdpSocket) {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt reads an int we own for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        tracing::warn!("SO_TIMESTAMPNS unavailable: job arrival times are taken in user space");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Arc<ServerConfig> {
        Arc::new(ServerConfig::new(Vec::new(), Vec::new()))
    }

    #[test]
    fn a_second_gateway_on_the_same_port_is_refused_unless_asked() {
        let first =
            spawn_gateway(GatewayConfig::new("127.0.0.1:0".parse().unwrap(), server())).unwrap();
        let mut cfg = GatewayConfig::new(first.local_addr(), server());
        let err = spawn_gateway(cfg.clone()).unwrap_err();
        assert!(err.to_string().contains("already in use"), "{err:#}");
        assert!(err.to_string().contains("--reuse-port"), "{err:#}");
        cfg.reuse_port = true;
        let second = spawn_gateway(cfg).unwrap();
        assert_eq!(second.local_addr(), first.local_addr());
    }

    #[test]
    fn workers_split_the_peer_bound() {
        let mut cfg = GatewayConfig::new("127.0.0.1:0".parse().unwrap(), server());
        cfg.max_peers = 10;
        cfg.workers = 3;
        assert_eq!(cfg.endpoint_config().max_peers, 4);
    }
}
