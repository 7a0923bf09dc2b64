//! A gateway worker: one socket, one endpoint (of whatever protocol, see
//! [`super::serve::ServerEndpoint`]), the batch CPU accounting, the job and stall logs
//! and the counters it publishes. See the gateway module for the model behind it.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wtls::probe::Clock;
use wtlsperf_spine::Now;

use super::recv::{realtime_ns, Received, RecvBatch};
use super::serve::{Served, ServerEndpoint};
use super::{lock, GatewayStats, JobRecord, Stall, MAX_JOB_RECORDS, RECV_BATCH, STALL_NS};
use crate::setup::{self, ProcessClock};

/// How long a worker blocks in `recvmsg` before it checks the stop flag and sweeps.
pub(super) const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// How often a busy worker sweeps its endpoint's timers. A sweep is work outside every
/// job of the queue model: swept every poll interval, a few thousand handshakes a second
/// leave a few hundred timer entries due at once, a sweep of about half a millisecond
/// that the jobs arriving meanwhile wait out (and the delivery-stall rule of
/// `load::delivery_stalls` takes for a held datagram). Swept every millisecond, each
/// sweep stays within tens of microseconds.
const SWEEP_INTERVAL: Duration = Duration::from_millis(1);
/// Most stalls kept over all workers.
const MAX_STALL_RECORDS: usize = 100_000;

/// One worker's published counters: its endpoint's (copied once per batch) and the job
/// moments (raw sums, turned into means when [`GatewayStats`] is assembled).
#[derive(Debug, Default, Clone)]
pub(super) struct WorkerCounters<T> {
    endpoint: T,
    echoed: u64,
    jobs: u64,
    kernel_timestamps: u64,
    wait_sum: f64,
    wait_sq: f64,
    service_sum: f64,
    service_sq: f64,
    cpu_sum: f64,
    cpu_ns: u64,
}

impl<T> WorkerCounters<T> {
    fn add_job(&mut self, job: &JobRecord) {
        let wait = job.wait_ns() as f64 / 1e3;
        let service = job.service_ns() as f64 / 1e3;
        self.jobs += 1;
        self.kernel_timestamps += u64::from(job.kernel_timestamp);
        self.wait_sum += wait;
        self.wait_sq += wait * wait;
        self.service_sum += service;
        self.service_sq += service * service;
        self.cpu_sum += job.cpu_ns as f64 / 1e3;
    }
}

/// What every worker shares whatever it serves: the stop flag and the logs.
pub(super) struct Logs {
    pub stop: AtomicBool,
    pub jobs: Mutex<Vec<JobRecord>>,
    pub stalls: Mutex<Vec<Stall>>,
    pub record_jobs: bool,
}

/// The gateway's view of its workers' shared state, whatever their endpoint's counters.
pub(super) trait SharedView: Send + Sync {
    fn logs(&self) -> &Logs;
    fn stats(&self) -> GatewayStats;
}

/// The workers' shared state: the logs and each worker's counters.
pub(super) struct Shared<T> {
    pub logs: Logs,
    counters: Vec<Mutex<WorkerCounters<T>>>,
    add: fn(&T, &mut GatewayStats),
}

impl<T: Default> Shared<T> {
    pub(super) fn new_with(
        workers: usize,
        record_jobs: bool,
        add: fn(&T, &mut GatewayStats),
    ) -> Self {
        Shared {
            logs: Logs {
                stop: AtomicBool::new(false),
                // Room for a typical load run up front: no large reallocation
                // mid-measurement.
                jobs: Mutex::new(if record_jobs {
                    Vec::with_capacity(1 << 17)
                } else {
                    Vec::new()
                }),
                stalls: Mutex::new(Vec::new()),
                record_jobs,
            },
            counters: (0..workers).map(|_| Mutex::default()).collect(),
            add,
        }
    }
}

impl<T: Send> SharedView for Shared<T> {
    fn logs(&self) -> &Logs {
        &self.logs
    }

    fn stats(&self) -> GatewayStats {
        let mut s = GatewayStats::default();
        let (mut ws, mut wq, mut ss, mut sq, mut cs) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for c in &self.counters {
            let c = lock(c);
            (self.add)(&c.endpoint, &mut s);
            s.echoed += c.echoed;
            s.jobs += c.jobs;
            s.kernel_timestamps += c.kernel_timestamps;
            s.worker_cpu_ns += c.cpu_ns;
            ws += c.wait_sum;
            wq += c.wait_sq;
            ss += c.service_sum;
            sq += c.service_sq;
            cs += c.cpu_sum;
        }
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

/// One worker: a socket and the endpoint of the peers the kernel hashes to it.
pub(super) struct Worker<E: ServerEndpoint> {
    index: usize,
    socket: UdpSocket,
    shared: Arc<Shared<E::Stats>>,
    endpoint: E,
    /// What the endpoint made of the last datagram (reused: no allocation per datagram).
    served: Served,
    job_cap: usize,
    cpu: Option<usize>,
    busy_poll: bool,
    clock: Arc<ProcessClock>,
    /// Job moments and echo count of the batch being served, merged into the shared
    /// counters once per batch.
    pending: WorkerCounters<E::Stats>,
    /// Jobs of the batch being served, waiting for their share of the batch's CPU time.
    batch_jobs: Vec<JobRecord>,
    /// Wall service time of every datagram of the batch (jobs or not), ns.
    batch_wall_ns: u64,
}

impl<E: ServerEndpoint> Worker<E> {
    pub(super) fn new(
        index: usize,
        socket: UdpSocket,
        shared: Arc<Shared<E::Stats>>,
        endpoint: E,
        cpu: Option<usize>,
        busy_poll: bool,
    ) -> Self {
        Worker {
            index,
            socket,
            shared,
            endpoint,
            served: Served::default(),
            job_cap: MAX_JOB_RECORDS,
            cpu,
            busy_poll,
            clock: ProcessClock::shared(),
            pending: WorkerCounters::default(),
            batch_jobs: Vec::with_capacity(RECV_BATCH),
            batch_wall_ns: 0,
        }
    }

    pub(super) fn run(mut self) {
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
        while !self.shared.logs.stop.load(Ordering::Relaxed) {
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
            if now.saturating_sub(last_sweep) >= SWEEP_INTERVAL.as_nanos() as u64 {
                last_sweep = now;
                self.sweep(now);
                self.pending.cpu_ns = setup::thread_cpu_ns();
                self.merge();
                turn_end = clock.wall_ns();
            }
        }
        self.pending.cpu_ns = setup::thread_cpu_ns();
        self.merge();
        tracing::debug!(
            worker = self.index,
            protocol = %self.endpoint.protocol(),
            "worker stopped"
        );
    }

    /// Logs `[from, to]` as a stall when it exceeds the `cpu_ns` the thread ran in it by
    /// more than [`STALL_NS`].
    fn note_stall(&self, from: u64, to: u64, cpu_ns: u64) {
        if !self.shared.logs.record_jobs || to.saturating_sub(from) <= cpu_ns + STALL_NS {
            return;
        }
        let mut stalls = lock(&self.shared.logs.stalls);
        if stalls.len() < MAX_STALL_RECORDS {
            stalls.push(Stall {
                start_ns: from,
                end_ns: to,
                worker: self.index,
            });
        }
    }

    /// Gives each job of the batch its share of the batch's CPU time (by wall service
    /// time), records the jobs and publishes the counters.
    fn finish_batch(&mut self, cpu_ns: u64) {
        let wall = self.batch_wall_ns.max(1) as f64;
        let mut jobs = std::mem::take(&mut self.batch_jobs);
        for job in jobs.iter_mut() {
            job.cpu_ns = (cpu_ns as f64 * job.service_ns() as f64 / wall).round() as u64;
            self.pending.add_job(job);
        }
        if self.shared.logs.record_jobs {
            let mut log = lock(&self.shared.logs.jobs);
            let room = self.job_cap.saturating_sub(log.len());
            log.extend(jobs.drain(..).take(room));
        }
        jobs.clear();
        self.batch_jobs = jobs;
        self.batch_wall_ns = 0;
        self.merge();
    }

    /// Serves one datagram: the endpoint decides, the worker sends and logs the job.
    fn on_datagram(&mut self, datagram: &[u8], rx: &Received) {
        let start_ns = self.clock.wall_ns();
        let now = Now::new(start_ns, setup::unix_secs());
        self.endpoint
            .serve(now, rx.peer, datagram, &mut self.served);
        self.send_served();
        self.pending.echoed += self.served.echoed;
        let end_ns = self.clock.wall_ns();
        self.batch_wall_ns += end_ns.saturating_sub(start_ns);
        if self.served.handshake_job {
            // CPU time comes with the batch's share in `finish_batch`.
            self.batch_jobs.push(JobRecord {
                arrival_ns: rx.arrival_ns.min(start_ns),
                start_ns,
                end_ns,
                cpu_ns: 0,
                bytes: datagram.len(),
                messages: self.served.messages,
                peer: rx.peer,
                worker: self.index,
                kernel_timestamp: rx.kernel_timestamp,
            });
        }
    }

    /// Time-outs and the endpoint's own timers, and what they send.
    fn sweep(&mut self, now_ns: u64) {
        self.endpoint
            .handle_timeout(Now::new(now_ns, setup::unix_secs()), &mut self.served);
        self.send_served();
    }

    fn send_served(&mut self) {
        for t in &self.served.transmits {
            if let Err(e) = self.socket.send_to(&t.payload, t.destination) {
                tracing::debug!(peer = %t.destination, error = %e, "send failed");
            }
        }
    }

    /// Publishes the endpoint's counters and the pending job moments (one lock per batch
    /// or sweep).
    fn merge(&mut self) {
        let d = std::mem::take(&mut self.pending);
        let mut c = lock(&self.shared.counters[self.index]);
        c.endpoint.clone_from(self.endpoint.stats());
        c.echoed += d.echoed;
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
