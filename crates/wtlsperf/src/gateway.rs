//! The UDP WTLS gateway: N worker threads, each owning one `SO_REUSEPORT` socket bound to
//! the same address and the per-peer state of the peers the kernel hashes to it.
//!
//! Why `SO_REUSEPORT` rather than one receiver dispatching to worker queues: Linux picks
//! the socket of a reuseport group by a hash of the datagram's 4-tuple, so every datagram
//! of one peer reaches the same worker for as long as the group is unchanged, which is
//! exactly the affinity the per-peer [`ServerConnection`] needs. No thread hands datagrams
//! to another, so there is no extra queue whose waiting time would hide inside the
//! measured service time, and a worker's waiting time is the kernel socket queue only
//! (what the thesis' M/G/1 model of the gateway describes).
//!
//! Per-peer state is bounded three ways: at most `max_peers` entries per gateway (split
//! evenly over the workers), half-open handshakes expire `handshake_timeout` after their
//! first datagram, established ones after `idle_timeout` without traffic. A peer beyond the
//! bound gets no state and no answer (counted as `refused`): answering an unauthenticated
//! source would let a spoofed flood reflect alerts at a victim, and a real client simply
//! retransmits its ClientHello until a slot frees up.
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

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::hash::{Hash, Hasher};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;
use wtls::handshake::{Event, HandshakeKind, Packing, Policy, ServerConfig, ServerConnection};
use wtls::msgs::enums::{ContentType, HandshakeType};
use wtls::probe::{Clock, Probe};

use crate::pki_store::PkiStore;
use crate::setup::{self, ClientAuth, Options, ProcessClock};

/// Largest datagram the gateway reads.
const MAX_DATAGRAM: usize = 65_535;
/// Most datagrams one `recvmmsg` call returns.
pub const RECV_BATCH: usize = 32;
/// How long a worker blocks in `recvmsg` before it checks the stop flag and sweeps.
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Most expiry entries one sweep examines, so a sweep never stalls the worker for long
/// even with a million peers; leftover entries are examined by the next sweep.
const SWEEP_BUDGET: usize = 4096;
/// Most job records kept over all workers (about 100 MB at most).
pub const MAX_JOB_RECORDS: usize = 1_000_000;
/// A worker that was not running for longer than this while it had nothing else to do
/// (a gap between two polls of a busy-polling worker, or a batch whose wall time exceeds
/// its thread CPU time by this much) logs a [`Stall`]. 200 us is above every preemption by
/// the guest's own kernel threads seen on the 2-core test machine (at most 0.19 ms in a
/// `perf sched` trace) and below the hypervisor's descheduling of the virtual CPU (1-30
/// ms), which is what the stall log is for.
pub const STALL_NS: u64 = 200_000;
/// Most stalls kept over all workers.
const MAX_STALL_RECORDS: usize = 100_000;
/// Estimated bytes per peer entry besides the connection's heap: the map slot (key,
/// entry struct, hashbrown control byte and load-factor slack), the boxed connection's
/// inline size and one expiry-heap item.
fn entry_overhead_bytes() -> usize {
    let slot = std::mem::size_of::<SocketAddr>() + std::mem::size_of::<Peer>() + 1;
    // hashbrown keeps at most 7/8 of its buckets full.
    slot * 8 / 7
        + std::mem::size_of::<ServerConnection>()
        + std::mem::size_of::<std::cmp::Reverse<(u64, u64, SocketAddr)>>()
}

/// Everything a gateway needs.
#[derive(Clone)]
pub struct GatewayConfig {
    pub listen: SocketAddr,
    pub workers: usize,
    pub server: Arc<ServerConfig>,
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
}

impl std::fmt::Debug for GatewayConfig {
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
            .finish_non_exhaustive()
    }
}

impl GatewayConfig {
    /// Defaults around a server configuration: one worker, 100 000 peers, 10 s to finish
    /// a handshake, 60 s idle, no job log.
    pub fn new(listen: SocketAddr, server: Arc<ServerConfig>) -> Self {
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
        }
    }
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

/// Counters and gauges of a gateway, summed over its workers.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GatewayStats {
    /// Peers holding state now.
    pub peers: u64,
    pub half_open: u64,
    pub established: u64,
    /// Completed handshakes by kind (`full`, `abbreviated`, `optimised`).
    pub handshakes_completed: BTreeMap<String, u64>,
    /// Alerts sent, by description name.
    pub alerts_sent: BTreeMap<String, u64>,
    pub datagrams_received: u64,
    pub datagrams_sent: u64,
    /// Datagrams the engine dropped without an answer, plus refused ones.
    pub dropped: u64,
    /// New peers that got no state because `max_peers` were held.
    pub refused: u64,
    /// Peers whose state expired (handshake or idle timeout).
    pub evicted: u64,
    /// Echoed application-data records.
    pub echoed: u64,
    /// Retransmitted flights answered from the engine's cache.
    pub retransmissions_answered: u64,
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

/// Raw sums per worker, turned into means when [`GatewayStats`] is assembled.
#[derive(Debug, Default, Clone)]
struct WorkerCounters {
    peers: u64,
    half_open: u64,
    established: u64,
    state_bytes: i64,
    // Static names: no allocation on the per-datagram path.
    handshakes: BTreeMap<&'static str, u64>,
    alerts: BTreeMap<&'static str, u64>,
    received: u64,
    sent: u64,
    dropped: u64,
    refused: u64,
    evicted: u64,
    echoed: u64,
    retransmissions: u64,
    jobs: u64,
    kernel_timestamps: u64,
    wait_sum: f64,
    wait_sq: f64,
    service_sum: f64,
    service_sq: f64,
    cpu_sum: f64,
    cpu_ns: u64,
}

struct Shared {
    stop: AtomicBool,
    counters: Vec<Mutex<WorkerCounters>>,
    jobs: Mutex<Vec<JobRecord>>,
    stalls: Mutex<Vec<Stall>>,
    record_jobs: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Counters stay meaningful even if a worker panicked while holding the lock.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn stats(&self) -> GatewayStats {
        let mut s = GatewayStats::default();
        let (mut ws, mut wq, mut ss, mut sq, mut cs) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let mut bytes = 0i64;
        for c in &self.counters {
            let c = lock(c);
            s.peers += c.peers;
            s.half_open += c.half_open;
            s.established += c.established;
            bytes += c.state_bytes;
            for (k, v) in &c.handshakes {
                *s.handshakes_completed.entry((*k).to_owned()).or_default() += v;
            }
            for (k, v) in &c.alerts {
                *s.alerts_sent.entry((*k).to_owned()).or_default() += v;
            }
            s.datagrams_received += c.received;
            s.datagrams_sent += c.sent;
            s.dropped += c.dropped;
            s.refused += c.refused;
            s.evicted += c.evicted;
            s.echoed += c.echoed;
            s.retransmissions_answered += c.retransmissions;
            s.jobs += c.jobs;
            s.kernel_timestamps += c.kernel_timestamps;
            s.worker_cpu_ns += c.cpu_ns;
            ws += c.wait_sum;
            wq += c.wait_sq;
            ss += c.service_sum;
            sq += c.service_sq;
            cs += c.cpu_sum;
        }
        s.state_bytes = bytes.max(0) as u64;
        if s.jobs > 0 {
            let n = s.jobs as f64;
            s.mean_wait_us = ws / n;
            s.wait_m2_us2 = wq / n;
            s.mean_service_us = ss / n;
            s.service_m2_us2 = sq / n;
            s.mean_service_cpu_us = cs / n;
        }
        s
    }
}

/// A running gateway. Dropping it stops the workers too.
pub struct GatewayHandle {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

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

    /// The job log so far (emptied).
    pub fn take_jobs(&self) -> Vec<JobRecord> {
        std::mem::take(&mut *lock(&self.shared.jobs))
    }

    /// The stall log so far (emptied), in no particular order across workers.
    pub fn take_stalls(&self) -> Vec<Stall> {
        std::mem::take(&mut *lock(&self.shared.stalls))
    }

    /// Stops accepting, waits for the workers to finish and returns the final stats.
    pub fn shutdown(mut self) -> GatewayStats {
        self.stop_and_join();
        self.shared.stats()
    }

    fn stop_and_join(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
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

/// Binds `workers` reuseport sockets to `cfg.listen` and starts one worker per socket.
pub fn spawn_gateway(cfg: GatewayConfig) -> anyhow::Result<GatewayHandle> {
    anyhow::ensure!(cfg.workers >= 1, "a gateway needs at least one worker");
    anyhow::ensure!(cfg.max_peers >= 1, "max_peers must be at least 1");
    let first = bind_reuseport(cfg.listen)?;
    // With port 0 the kernel picked one: the other workers join that port.
    let local_addr = first.local_addr()?;
    let mut sockets = vec![first];
    for _ in 1..cfg.workers {
        sockets.push(bind_reuseport(local_addr)?);
    }
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        counters: (0..cfg.workers).map(|_| Mutex::default()).collect(),
        // Room for a typical load run up front: no large reallocation mid-measurement.
        jobs: Mutex::new(if cfg.record_jobs {
            Vec::with_capacity(1 << 17)
        } else {
            Vec::new()
        }),
        stalls: Mutex::new(Vec::new()),
        record_jobs: cfg.record_jobs,
    });
    let per_worker_peers = cfg.max_peers.div_ceil(cfg.workers);
    let mut threads = Vec::new();
    for (index, socket) in sockets.into_iter().enumerate() {
        let worker = Worker {
            index,
            socket,
            server: cfg.server.clone(),
            max_peers: per_worker_peers,
            handshake_timeout_ns: cfg.handshake_timeout.as_nanos() as u64,
            idle_timeout_ns: cfg.idle_timeout.as_nanos() as u64,
            shared: shared.clone(),
            // Sized for the bound up front: a table that doubles under load rehashes
            // every entry at once (milliseconds with 100 000 peers) and leaves the
            // allocator a large free block to consolidate. Untouched pages cost nothing.
            peers: HashMap::with_capacity(per_worker_peers),
            // About two entries per peer: one from the first datagram, one when it is
            // established.
            expiry: BinaryHeap::with_capacity(2 * per_worker_peers),
            next_generation: 0,
            job_cap: MAX_JOB_RECORDS,
            cpu: (!cfg.cpu_affinity.is_empty())
                .then(|| cfg.cpu_affinity[index % cfg.cpu_affinity.len()]),
            busy_poll: cfg.busy_poll,
            clock: ProcessClock::shared(),
            pending: WorkerCounters::default(),
            batch_jobs: Vec::with_capacity(RECV_BATCH),
            batch_wall_ns: 0,
        };
        let spawned = std::thread::Builder::new()
            .name(format!("gw-worker-{index}"))
            .spawn(move || worker.run());
        match spawned {
            Ok(t) => threads.push(t),
            Err(e) => {
                shared.stop.store(true, Ordering::SeqCst);
                for t in threads {
                    let _ = t.join();
                }
                return Err(e).context("spawning a gateway worker");
            }
        }
    }
    tracing::info!(%local_addr, workers = cfg.workers, max_peers = cfg.max_peers, "gateway listening");
    Ok(GatewayHandle {
        local_addr,
        shared,
        threads,
    })
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

fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One datagram as `recvmmsg` returned it.
struct Received {
    peer: SocketAddr,
    /// Arrival on the process clock.
    arrival_ns: u64,
    kernel_timestamp: bool,
}

/// Buffers for one `recvmmsg` call: [`RECV_BATCH`] datagram buffers with their source
/// addresses and `SCM_TIMESTAMPNS` control messages. Boxed slices, so the pointers the
/// headers hold, set once in [`RecvBatch::new`], stay valid however the struct moves.
struct RecvBatch {
    bufs: Box<[u8]>,
    addrs: Box<[libc::sockaddr_storage]>,
    /// Room for one cmsg with a timespec per datagram, 8-byte aligned.
    controls: Box<[[u64; 8]]>,
    iovs: Box<[libc::iovec]>,
    headers: Box<[libc::mmsghdr]>,
}

impl RecvBatch {
    fn new() -> Self {
        // SAFETY (the three `zeroed`): all-zero bytes are valid sockaddr_storage, iovec
        // and mmsghdr values (null pointers, zero lengths); `recv` points them at the
        // buffers before every call.
        let addr = || unsafe { std::mem::zeroed::<libc::sockaddr_storage>() };
        let iov = || unsafe { std::mem::zeroed::<libc::iovec>() };
        let header = || unsafe { std::mem::zeroed::<libc::mmsghdr>() };
        let mut batch = RecvBatch {
            bufs: vec![0u8; RECV_BATCH * MAX_DATAGRAM].into_boxed_slice(),
            addrs: (0..RECV_BATCH).map(|_| addr()).collect(),
            controls: vec![[0u64; 8]; RECV_BATCH].into_boxed_slice(),
            iovs: (0..RECV_BATCH).map(|_| iov()).collect(),
            headers: (0..RECV_BATCH).map(|_| header()).collect(),
        };
        for i in 0..RECV_BATCH {
            batch.iovs[i] = libc::iovec {
                iov_base: batch.bufs[i * MAX_DATAGRAM..].as_mut_ptr().cast(),
                iov_len: MAX_DATAGRAM,
            };
            let h = &mut batch.headers[i].msg_hdr;
            h.msg_name = (&mut batch.addrs[i] as *mut libc::sockaddr_storage).cast();
            h.msg_iov = &mut batch.iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = batch.controls[i].as_mut_ptr().cast();
        }
        batch
    }

    /// Up to [`RECV_BATCH`] datagrams: blocks (or, on a non-blocking socket, returns 0)
    /// until one is there, then takes whatever else is queued (`MSG_WAITFORONE`).
    fn recv(&mut self, socket: &UdpSocket) -> std::io::Result<usize> {
        // The kernel writes back the lengths; the pointers were set once in `new`.
        for header in self.headers.iter_mut() {
            let h = &mut header.msg_hdr;
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_controllen = std::mem::size_of::<[u64; 8]>() as _;
            h.msg_flags = 0;
            header.msg_len = 0;
        }
        // SAFETY: every header points at buffers owned by `self` that outlive the call,
        // with their true sizes; the kernel writes at most RECV_BATCH headers.
        let n = unsafe {
            libc::recvmmsg(
                socket.as_raw_fd(),
                self.headers.as_mut_ptr(),
                RECV_BATCH as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.kind() {
                std::io::ErrorKind::WouldBlock
                | std::io::ErrorKind::TimedOut
                | std::io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        Ok(n as usize)
    }

    /// The i-th datagram of the last `recv`.
    fn datagram(&self, i: usize) -> &[u8] {
        let len = (self.headers[i].msg_len as usize).min(MAX_DATAGRAM);
        &self.bufs[i * MAX_DATAGRAM..i * MAX_DATAGRAM + len]
    }

    /// What the kernel said about the i-th datagram; `mono` and `real` are the process
    /// clock and CLOCK_REALTIME read back to back after the call returned. `None` for a
    /// source address that is not IPv4 or IPv6.
    fn received(&self, i: usize, mono: u64, real: u64) -> Option<Received> {
        let peer = sockaddr_to_std(&self.addrs[i])?;
        let header = &self.headers[i].msg_hdr;
        let mut kernel_real = None;
        // SAFETY: the CMSG macros walk the control buffer the kernel filled, bounded by
        // the msg_controllen it wrote back; the timespec is read unaligned.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(header);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET
                    && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
                {
                    let ts: libc::timespec =
                        std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::timespec>());
                    kernel_real = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                cmsg = libc::CMSG_NXTHDR(header, cmsg);
            }
        }
        // The kernel stamped the datagram `real - kernel` ns before we read the clocks;
        // the same interval before `mono` is its arrival on the monotonic base. A
        // wall-clock step between the readings could make that negative or huge: then
        // fall back to the time the call returned.
        let (arrival_ns, kernel_timestamp) = match kernel_real {
            Some(k) if k <= real && real - k < 60_000_000_000 => {
                (mono.saturating_sub(real - k), true)
            }
            _ => (mono, false),
        };
        Some(Received {
            peer,
            arrival_ns,
            kernel_timestamp,
        })
    }
}

fn sockaddr_to_std(addr: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match addr.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says this storage holds a sockaddr_in.
            let a =
                unsafe { &*(addr as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddr::from((ip, u16::from_be(a.sin_port))))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this storage holds a sockaddr_in6.
            let a =
                unsafe { &*(addr as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            let ip = std::net::Ipv6Addr::from(a.sin6_addr.s6_addr);
            Some(SocketAddr::from((ip, u16::from_be(a.sin6_port))))
        }
        _ => None,
    }
}

/// A peer's state on its worker.
struct Peer {
    conn: Box<ServerConnection>,
    generation: u64,
    created_ns: u64,
    last_activity_ns: u64,
    /// Hash of the ClientHello datagram that created the connection: a different
    /// ClientHello from an established peer starts a new handshake, a duplicate of the
    /// first one (a late copy from the network) does not.
    hello_hash: u64,
    /// What this entry contributes to the gauges, to update them incrementally.
    counted_half_open: bool,
    counted_established: bool,
    counted_bytes: usize,
}

struct Worker {
    index: usize,
    socket: UdpSocket,
    server: Arc<ServerConfig>,
    max_peers: usize,
    handshake_timeout_ns: u64,
    idle_timeout_ns: u64,
    shared: Arc<Shared>,
    peers: HashMap<SocketAddr, Peer>,
    /// (when to look at the entry again, its generation, its peer), earliest first.
    expiry: BinaryHeap<std::cmp::Reverse<(u64, u64, SocketAddr)>>,
    next_generation: u64,
    job_cap: usize,
    cpu: Option<usize>,
    busy_poll: bool,
    clock: Arc<ProcessClock>,
    /// Counter deltas of the batch being served, merged into the shared ones once per
    /// batch.
    pending: WorkerCounters,
    /// Jobs of the batch being served, waiting for their share of the batch's CPU time.
    batch_jobs: Vec<JobRecord>,
    /// Wall service time of every datagram of the batch (jobs or not), ns.
    batch_wall_ns: u64,
}

fn datagram_hash(d: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    d.hash(&mut h);
    h.finish()
}

/// Whether a datagram opens with a plaintext ClientHello.
fn starts_with_client_hello(d: &[u8]) -> bool {
    match wtls::msgs::record::parse_datagram(d) {
        Ok(records) => records.first().is_some_and(|r| {
            !r.header.cipher_spec
                && r.header.content_type == ContentType::Handshake
                && r.fragment.first().copied() == Some(HandshakeType::ClientHello.to_u8())
        }),
        Err(_) => false,
    }
}

fn kind_name(kind: HandshakeKind) -> &'static str {
    match kind {
        HandshakeKind::Full => "full",
        HandshakeKind::Abbreviated => "abbreviated",
        HandshakeKind::Optimised => "optimised",
    }
}

impl Worker {
    fn run(mut self) {
        if let Some(cpu) = self.cpu {
            if let Err(e) = setup::pin_current_thread(cpu) {
                tracing::warn!(worker = self.index, cpu, error = %e, "could not pin the worker");
            }
        }
        if self.busy_poll {
            if let Err(e) = self.socket.set_nonblocking(true) {
                tracing::warn!(worker = self.index, error = %e, "busy polling unavailable");
                self.busy_poll = false;
            }
        }
        let mut batch = RecvBatch::new();
        let clock = self.clock.clone();
        let mut last_sweep = clock.wall_ns();
        // End of the previous loop turn: with busy polling the next turn is one
        // non-blocking receive away, so a longer gap is time the worker did not run.
        let mut turn_end = last_sweep;
        while !self.shared.stop.load(Ordering::Relaxed) {
            match batch.recv(&self.socket) {
                Ok(0) => {
                    if self.busy_poll {
                        self.note_stall(turn_end, clock.wall_ns(), 0);
                        std::hint::spin_loop();
                    }
                }
                Ok(n) => {
                    let (mono, real) = (clock.wall_ns(), realtime_ns());
                    if self.busy_poll {
                        self.note_stall(turn_end, mono, 0);
                    }
                    let cpu_start = setup::thread_cpu_ns();
                    for i in 0..n {
                        if let Some(rx) = batch.received(i, mono, real) {
                            self.on_datagram(batch.datagram(i), &rx);
                        }
                    }
                    let cpu = setup::thread_cpu_ns().saturating_sub(cpu_start);
                    // A batch that took longer than its CPU time: the thread was off
                    // its core somewhere inside it.
                    self.note_stall(mono, clock.wall_ns(), cpu);
                    self.finish_batch(cpu);
                }
                Err(e) => {
                    tracing::warn!(worker = self.index, error = %e, "recvmmsg failed");
                    std::thread::sleep(POLL_INTERVAL);
                }
            }
            let now = clock.wall_ns();
            turn_end = now;
            if now.saturating_sub(last_sweep) >= POLL_INTERVAL.as_nanos() as u64 {
                last_sweep = now;
                self.sweep(now);
                turn_end = clock.wall_ns();
            }
        }
        let mut c = lock(&self.shared.counters[self.index]);
        c.cpu_ns = setup::thread_cpu_ns();
        tracing::debug!(
            worker = self.index,
            peers = self.peers.len(),
            "worker stopped"
        );
    }

    /// Logs `[from, to]` as a stall when it exceeds the `cpu_ns` the thread ran in it by
    /// more than [`STALL_NS`].
    fn note_stall(&self, from: u64, to: u64, cpu_ns: u64) {
        if !self.shared.record_jobs || to.saturating_sub(from) <= cpu_ns + STALL_NS {
            return;
        }
        let mut stalls = lock(&self.shared.stalls);
        if stalls.len() < MAX_STALL_RECORDS {
            stalls.push(Stall {
                start_ns: from,
                end_ns: to,
                worker: self.index,
            });
        }
    }

    /// Gives each job of the batch its share of the batch's CPU time (by wall service
    /// time), records the jobs and merges the batch's counters.
    fn finish_batch(&mut self, cpu_ns: u64) {
        let wall = self.batch_wall_ns.max(1) as f64;
        let mut c = std::mem::take(&mut self.pending);
        for mut job in std::mem::take(&mut self.batch_jobs) {
            job.cpu_ns = (cpu_ns as f64 * job.service_ns() as f64 / wall).round() as u64;
            self.record_job(&mut c, job);
        }
        self.batch_wall_ns = 0;
        self.merge(c);
    }

    fn on_datagram(&mut self, datagram: &[u8], rx: &Received) {
        let start_ns = self.clock.wall_ns();
        let now = wtls::handshake::Now::new(start_ns, setup::unix_secs());
        let mut counters = WorkerCounters {
            received: 1,
            ..WorkerCounters::default()
        };

        // Find or create the peer's state.
        let replace = match self.peers.get(&rx.peer) {
            Some(p) => {
                (p.conn.is_closed() || p.conn.is_established())
                    && starts_with_client_hello(datagram)
                    && datagram_hash(datagram) != p.hello_hash
            }
            None => false,
        };
        if replace {
            self.remove_peer(&rx.peer, &mut counters, false);
        }
        if !self.peers.contains_key(&rx.peer) {
            if self.peers.len() >= self.max_peers && !self.evict_oldest_half_open(&mut counters) {
                counters.refused = 1;
                counters.dropped = 1;
                absorb(&mut self.pending, counters);
                return;
            }
            let generation = self.next_generation;
            self.next_generation += 1;
            let conn = ServerConnection::new(self.server.clone(), Probe::off(), now);
            self.peers.insert(
                rx.peer,
                Peer {
                    conn: Box::new(conn),
                    generation,
                    created_ns: start_ns,
                    last_activity_ns: start_ns,
                    hello_hash: datagram_hash(datagram),
                    counted_half_open: false,
                    counted_established: false,
                    counted_bytes: 0,
                },
            );
            counters.peers = counters.peers.wrapping_add(1);
            counters.state_bytes += entry_overhead_bytes() as i64;
            self.expiry.push(std::cmp::Reverse((
                start_ns + self.handshake_timeout_ns,
                generation,
                rx.peer,
            )));
        }
        let Some(peer) = self.peers.get_mut(&rx.peer) else {
            absorb(&mut self.pending, counters);
            return;
        };
        let handshaking = !peer.conn.is_established();
        let out = peer.conn.handle_datagram(datagram, now);
        peer.last_activity_ns = start_ns;
        let records_in = out.records_in;
        let mut replies = out.datagrams;
        for event in &out.events {
            match event {
                Event::HandshakeComplete(kind) => {
                    *counters.handshakes.entry(kind_name(*kind)).or_default() += 1;
                    tracing::debug!(peer = %rx.peer, kind = kind_name(*kind), "handshake complete");
                }
                Event::ApplicationData(data) => match peer.conn.seal_application_data(data) {
                    Ok(sealed) => {
                        replies.push(sealed);
                        counters.echoed += 1;
                    }
                    Err(e) => tracing::debug!(peer = %rx.peer, error = %e, "echo failed"),
                },
                Event::AlertSent(alert, reason) => {
                    *counters.alerts.entry(alert.description.name()).or_default() += 1;
                    tracing::debug!(peer = %rx.peer, alert = alert.description.name(), %reason, "alert sent");
                }
                Event::AlertReceived(alert) => {
                    tracing::debug!(peer = %rx.peer, alert = alert.description.name(), "alert received");
                }
                Event::Dropped(_) | Event::AlertIgnored { .. } => counters.dropped += 1,
                Event::Retransmitted => counters.retransmissions += 1,
            }
        }
        for reply in &replies {
            match self.socket.send_to(reply, rx.peer) {
                Ok(_) => counters.sent += 1,
                Err(e) => tracing::debug!(peer = %rx.peer, error = %e, "send failed"),
            }
        }
        let end_ns = self.clock.wall_ns();
        self.batch_wall_ns += end_ns.saturating_sub(start_ns);
        // Update the gauges from this entry's new state.
        let closed = peer.conn.is_closed();
        let (half_open, established, bytes) = (
            peer.conn.is_half_open(),
            peer.conn.is_established(),
            peer.conn.heap_bytes(),
        );
        counters.half_open_delta(peer.counted_half_open, half_open);
        counters.established_delta(peer.counted_established, established);
        counters.state_bytes += bytes as i64 - peer.counted_bytes as i64;
        peer.counted_half_open = half_open;
        peer.counted_established = established;
        peer.counted_bytes = bytes;
        if established && !handshaking {
            // Idle expiry now counts from this activity; the heap entry is refreshed
            // lazily when it comes due.
        } else if established {
            self.expiry.push(std::cmp::Reverse((
                end_ns + self.idle_timeout_ns,
                peer.generation,
                rx.peer,
            )));
        }
        if closed {
            self.remove_peer(&rx.peer, &mut counters, false);
        }
        if handshaking {
            // CPU time comes with the batch's share in `finish_batch`.
            self.batch_jobs.push(JobRecord {
                arrival_ns: rx.arrival_ns.min(start_ns),
                start_ns,
                end_ns,
                cpu_ns: 0,
                bytes: datagram.len(),
                messages: records_in,
                peer: rx.peer,
                worker: self.index,
                kernel_timestamp: rx.kernel_timestamp,
            });
        }
        absorb(&mut self.pending, counters);
    }

    fn record_job(&mut self, c: &mut WorkerCounters, job: JobRecord) {
        let wait = job.wait_ns() as f64 / 1e3;
        let service = job.service_ns() as f64 / 1e3;
        c.jobs += 1;
        c.kernel_timestamps += u64::from(job.kernel_timestamp);
        c.wait_sum += wait;
        c.wait_sq += wait * wait;
        c.service_sum += service;
        c.service_sq += service * service;
        c.cpu_sum += job.cpu_ns as f64 / 1e3;
        if self.shared.record_jobs {
            let mut jobs = lock(&self.shared.jobs);
            if jobs.len() < self.job_cap {
                jobs.push(job);
            }
        }
    }

    fn remove_peer(&mut self, peer: &SocketAddr, c: &mut WorkerCounters, evicted: bool) {
        if let Some(p) = self.peers.remove(peer) {
            c.peers = c.peers.wrapping_sub(1);
            c.half_open_delta(p.counted_half_open, false);
            c.established_delta(p.counted_established, false);
            c.state_bytes -= (p.counted_bytes + entry_overhead_bytes()) as i64;
            if evicted {
                c.evicted += 1;
            }
        }
    }

    /// The table is full: make room by dropping the half-open handshake that has waited
    /// longest (the oldest entry due to expire), as SYN-flood defences do. A flood then
    /// pushes out its own stale entries, and a legitimate client keeps its state as long
    /// as its next flight arrives before `max_peers` newer handshakes have started.
    /// Established connections are never evicted for a newcomer.
    fn evict_oldest_half_open(&mut self, c: &mut WorkerCounters) -> bool {
        for _ in 0..64 {
            let Some(std::cmp::Reverse((due, generation, addr))) = self.expiry.pop() else {
                return false;
            };
            let Some(p) = self.peers.get(&addr) else {
                continue;
            };
            if p.generation != generation {
                continue;
            }
            if p.conn.is_established() {
                // An entry made at creation for a handshake that has since completed:
                // file it again under its idle deadline and look further.
                let idle_due = p.last_activity_ns + self.idle_timeout_ns;
                self.expiry
                    .push(std::cmp::Reverse((idle_due.max(due), generation, addr)));
                continue;
            }
            self.remove_peer(&addr, c, true);
            return true;
        }
        false
    }

    /// Expires half-open and idle peers, examining at most [`SWEEP_BUDGET`] heap items.
    fn sweep(&mut self, now_ns: u64) {
        let mut c = WorkerCounters::default();
        for _ in 0..SWEEP_BUDGET {
            match self.expiry.peek() {
                Some(std::cmp::Reverse((due, _, _))) if *due <= now_ns => {}
                _ => break,
            }
            let Some(std::cmp::Reverse((_, generation, addr))) = self.expiry.pop() else {
                break;
            };
            let Some(p) = self.peers.get(&addr) else {
                continue;
            };
            if p.generation != generation {
                continue; // stale item of an earlier connection of this address
            }
            let due = if p.conn.is_established() {
                p.last_activity_ns + self.idle_timeout_ns
            } else {
                p.created_ns + self.handshake_timeout_ns
            };
            if due <= now_ns {
                tracing::debug!(peer = %addr, half_open = p.conn.is_half_open(), "peer state expired");
                self.remove_peer(&addr, &mut c, true);
            } else {
                self.expiry.push(std::cmp::Reverse((due, generation, addr)));
            }
        }
        c.cpu_ns = setup::thread_cpu_ns();
        self.merge(c);
    }

    /// Adds deltas to the shared counters (one lock per batch or sweep).
    fn merge(&self, d: WorkerCounters) {
        let mut c = lock(&self.shared.counters[self.index]);
        absorb(&mut c, d);
    }
}

/// Adds the deltas `d` to the counters `c`.
fn absorb(c: &mut WorkerCounters, d: WorkerCounters) {
    {
        c.peers = c.peers.wrapping_add(d.peers);
        c.half_open = c.half_open.wrapping_add(d.half_open);
        c.established = c.established.wrapping_add(d.established);
        c.state_bytes += d.state_bytes;
        for (k, v) in d.handshakes {
            *c.handshakes.entry(k).or_default() += v;
        }
        for (k, v) in d.alerts {
            *c.alerts.entry(k).or_default() += v;
        }
        c.received += d.received;
        c.sent += d.sent;
        c.dropped += d.dropped;
        c.refused += d.refused;
        c.evicted += d.evicted;
        c.echoed += d.echoed;
        c.retransmissions += d.retransmissions;
        c.jobs += d.jobs;
        c.kernel_timestamps += d.kernel_timestamps;
        c.wait_sum += d.wait_sum;
        c.wait_sq += d.wait_sq;
        c.service_sum += d.service_sum;
        c.service_sq += d.service_sq;
        c.cpu_sum += d.cpu_sum;
        if d.cpu_ns > 0 {
            c.cpu_ns = d.cpu_ns;
        }
    }
}

impl WorkerCounters {
    /// Gauges travel as wrapping deltas: +1 is 1, -1 is u64::MAX.
    fn half_open_delta(&mut self, was: bool, is: bool) {
        self.half_open = self
            .half_open
            .wrapping_add(u64::from(is))
            .wrapping_sub(u64::from(was));
    }
    fn established_delta(&mut self, was: bool, is: bool) {
        self.established = self
            .established
            .wrapping_add(u64::from(is))
            .wrapping_sub(u64::from(was));
    }
}

/// `wtlsperf gateway` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:9202")]
    pub listen: SocketAddr,
    /// PKI directory (created if missing).
    #[arg(long, default_value = "pki")]
    pub pki: PathBuf,
    /// Worker threads (each with its own SO_REUSEPORT socket).
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// How client certificates are treated.
    #[arg(long, value_enum, default_value = "optional")]
    pub client_auth: ClientAuth,
    /// Most peers holding state at once.
    #[arg(long, default_value_t = 100_000)]
    pub max_peers: usize,
    /// A handshake not finished this long after its first datagram is forgotten.
    #[arg(long, default_value_t = 10_000)]
    pub handshake_timeout_ms: u64,
    /// An established peer silent this long is forgotten.
    #[arg(long, default_value_t = 60_000)]
    pub idle_timeout_ms: u64,
    /// Accept weak (export, NULL, truncated-MAC) cipher suites and anonymous key exchange.
    #[arg(long)]
    pub allow_weak: bool,
    /// How handshake messages are packed into datagrams.
    #[arg(long, value_enum, default_value = "flight")]
    pub packing: PackingArg,
    /// Pin worker i to the i-th of these CPUs (comma-separated), e.g. `--cpus 1`.
    #[arg(long, value_delimiter = ',')]
    pub cpus: Vec<usize>,
    /// Poll the socket without sleeping (only with pinned workers).
    #[arg(long)]
    pub busy_poll: bool,
    /// Stop by itself after this many seconds.
    #[arg(long)]
    pub duration_s: Option<f64>,
}

/// Packing on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PackingArg {
    /// One datagram per flight.
    Flight,
    /// One datagram per message.
    Message,
}

impl From<PackingArg> for Packing {
    fn from(p: PackingArg) -> Packing {
        match p {
            PackingArg::Flight => Packing::FlightPerDatagram,
            PackingArg::Message => Packing::MessagePerDatagram,
        }
    }
}

/// The server options of the gateway command.
pub fn gateway_options(allow_weak: bool, packing: Packing) -> Options {
    let mut opts = Options {
        packing,
        ..Options::default()
    };
    if allow_weak {
        opts.policy = Policy::permissive();
        opts.cipher_suites = setup::all_cipher_suites();
    }
    opts
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let store = PkiStore::load_or_init(&args.pki)
        .with_context(|| format!("PKI in {}", args.pki.display()))?;
    let opts = gateway_options(args.allow_weak, args.packing.into());
    let server = setup::gateway_server_config(&store, args.client_auth, &opts)?;
    let cfg = GatewayConfig {
        listen: args.listen,
        workers: args.workers,
        server: Arc::new(server),
        max_peers: args.max_peers,
        handshake_timeout: Duration::from_millis(args.handshake_timeout_ms),
        idle_timeout: Duration::from_millis(args.idle_timeout_ms),
        record_jobs: false,
        cpu_affinity: args.cpus.clone(),
        busy_poll: args.busy_poll,
    };
    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, stop.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.clone())?;
    let handle = spawn_gateway(cfg)?;
    eprintln!("wtlsperf gateway listening on {}", handle.local_addr());
    let deadline = args
        .duration_s
        .map(|s| std::time::Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| std::time::Instant::now() < d) {
        std::thread::sleep(Duration::from_millis(50));
    }
    tracing::info!("gateway stopping");
    let stats = handle.shutdown();
    println!("{}", serde_json::to_string_pretty(&stats)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_hello_is_recognised_and_garbage_is_not() {
        assert!(!starts_with_client_hello(&[]));
        assert!(!starts_with_client_hello(&[0xff, 0x00, 0x01]));
        // Application data header (content type 4 in the low nibble) is not a hello.
        assert!(!starts_with_client_hello(&[0x04, 0x00]));
    }

    #[test]
    fn gauge_deltas_cancel() {
        let mut c = WorkerCounters::default();
        c.half_open_delta(false, true);
        c.half_open_delta(true, false);
        assert_eq!(c.half_open, 0);
        c.established_delta(false, true);
        assert_eq!(c.established, 1);
    }

    #[test]
    fn entry_overhead_includes_the_connection_struct() {
        assert!(entry_overhead_bytes() > std::mem::size_of::<ServerConnection>());
    }
}
