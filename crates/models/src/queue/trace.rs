//! The gateway's queue read from its job trace: the steady window of a load run, whole
//! and without the jobs that a stall of the worker or of the load generator disturbed,
//! with the occupancy moments the Pollaczek-Khinchin models take, a FIFO replay of the
//! run's own arrivals (Lindley's recursion) and batch-means intervals.
//!
//! The trace is any sequence of [`TracedJob`]s: a job's kernel arrival timestamp and the
//! start and end of its service, on one clock in nanoseconds. The reasons for the window,
//! the settling time and the undisturbed reading are given where the evaluation runs the
//! load tests (`wtlsperf` `evaluate::queue::reality`).

use crate::stats::{batch_mean_ci95, mean, Moments};

mod flights;
pub use flights::FlightLoad;
use flights::Flights;

/// What is cut at each end of the arrival span before the queue is read: a tenth of it,
/// at most [`EDGE_MAX_NS`]. The queue starts empty and the answer stream of a 20 ms
/// bearer ramps up within some five round trips, and ends as the last handshakes' answers
/// trickle in over as long, so a quarter of a second is steady on either side; cutting a
/// tenth of a 45 s run would throw away 9 s of steady queue.
pub const EDGE: f64 = 0.1;
/// At most this much (ns) is cut at each end of the arrival span.
pub const EDGE_MAX_NS: f64 = 250e6;

/// Batches (of equal job counts, in arrival order) of the batch-means interval of the
/// undisturbed mean wait: each batch spans at least a tenth of a second, hundreds of the
/// queue's correlation times at rho <= 0.8, so batch means are nearly independent.
pub const BATCHES: usize = 20;

/// Fewest jobs, and smallest share of the window, from which the undisturbed part of a
/// run is read at all.
pub const MIN_UNDISTURBED_JOBS: usize = 200;
/// See [`MIN_UNDISTURBED_JOBS`].
pub const MIN_UNDISTURBED_SHARE: f64 = 0.2;

/// A window needs at least this many jobs to be read.
const MIN_WINDOW_JOBS: usize = 10;

/// One job of a gateway's trace (one clock, ns).
pub trait TracedJob {
    /// The kernel's receive timestamp of the job's datagram.
    fn arrival_ns(&self) -> u64;
    /// When the worker started on it.
    fn start_ns(&self) -> u64;
    /// When the worker was done with it.
    fn end_ns(&self) -> u64;
    /// Arrival to start of service.
    fn wait_ns(&self) -> u64 {
        self.start_ns().saturating_sub(self.arrival_ns())
    }
    /// Start to end of service.
    fn service_ns(&self) -> u64 {
        self.end_ns().saturating_sub(self.start_ns())
    }
    /// The address the job's datagram came from, which groups the jobs of one flight
    /// (see [`Flights`]); `None` (the default) makes every job a flight of its own.
    fn source(&self) -> Option<std::net::SocketAddr> {
        None
    }
}

/// How long after a stall or late send of length `len_ns` its effect on the queue is
/// taken to last: the backlog it built clears at the rate the worker outpaces arrivals,
/// (1 - rho)/rho of real time, which for rho <= 0.8 is at least a quarter; ten times the
/// stall plus 20 ms (a hundred jobs of the measured cases) covers that with margin.
pub fn settle_ns(len_ns: u64) -> u64 {
    20_000_000 + 10 * len_ns
}

/// The intervals (ns; sorted, disjoint) whose arrivals the undisturbed reading leaves
/// out: each disturbance `(start, end)` (a stall of the gateway's worker, of the
/// generator, of the delivery path) from its start to its end plus [`settle_ns`].
pub fn disturbed_intervals(disturbances: impl IntoIterator<Item = (u64, u64)>) -> Vec<(u64, u64)> {
    let mut raw: Vec<(u64, u64)> = disturbances
        .into_iter()
        .map(|(a, b)| {
            let b = b.max(a);
            (a, b + settle_ns(b - a))
        })
        .collect();
    raw.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(raw.len());
    for (a, b) in raw {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// Whether [from, to] meets one of the sorted, disjoint `intervals` (half-open).
fn meets(intervals: &[(u64, u64)], from: u64, to: u64) -> bool {
    // Disjoint and sorted by start, so sorted by end too: only the last interval that
    // starts by `to` can still be open at `from`.
    let i = intervals.partition_point(|&(a, _)| a <= to);
    i > 0 && from < intervals[i - 1].1
}

/// Length of [from, to) covered by the sorted, disjoint `intervals` (ns).
fn covered_length(intervals: &[(u64, u64)], from: u64, to: u64) -> u64 {
    intervals
        .iter()
        .map(|&(a, b)| b.min(to).saturating_sub(a.max(from)))
        .sum()
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The gateway's queue over the steady window of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyQueue {
    /// Jobs that arrived in the window.
    pub jobs: usize,
    /// Jobs arriving per second in the window.
    pub job_rate_per_s: f64,
    /// Mean wait from the kernel's timestamp to the start of service.
    pub mean_wait_ms: f64,
    /// Mean queueing wait: the wait of a job that arrived while the worker was busy
    /// with earlier jobs, zero for one that found it idle. This is what the queue models
    /// predict (P-K's W_q is zero for an arrival that finds the server idle).
    pub queueing_wait_ms: f64,
    /// Half-width (ms) of its 95 % interval by [`BATCHES`] batch means in service order.
    pub queueing_wait_ci95_ms: Option<f64>,
    /// Share of the window's jobs that found the worker idle: the path from the kernel
    /// to the worker, plus any time the worker was not running (the virtual CPU
    /// descheduled, an interrupt): no queueing, measured apart.
    pub idle_share: f64,
    /// The mean wait of those jobs.
    pub idle_wait_mean_ms: f64,
    /// E[X] of the occupancy (ms).
    pub service_mean_ms: f64,
    /// E[X^2] of the occupancy (ms^2).
    pub service_m2_ms2: f64,
    /// Service time of the window's jobs over the window's length.
    pub utilisation: f64,
    /// Every occupancy of the window (ms), in service order.
    pub service_samples_ms: Vec<f64>,
    /// The median time (ms) the worker spends between the end of a job and the start of
    /// the next one that was already waiting.
    pub typical_gap_ms: f64,
    /// Trace replay: the mean queueing wait (ms) of the window's jobs in a FIFO single
    /// server fed with the run's own arrival instants and each job's own occupancy
    /// (Lindley's recursion). It assumes nothing about the arrival process: where it
    /// matches the measurement and P-K does not, the gateway is the queue the models
    /// describe and the difference lies in the arrivals.
    pub replay_wait_ms: f64,
    /// The window's jobs as batch-Poisson flights (see [`FlightLoad`]): what the
    /// corrected model of the window takes.
    pub flights: FlightLoad,
    /// Share of the window's jobs that arrived outside every disturbed interval.
    pub undisturbed_share: f64,
    /// The queue over those jobs (`None` when fewer than [`MIN_UNDISTURBED_JOBS`] or less
    /// than [`MIN_UNDISTURBED_SHARE`] of the window are left).
    pub undisturbed: Option<UndisturbedQueue>,
}

/// The queue over the undisturbed part of a steady window: the jobs that arrived outside
/// every disturbed interval, their rate over the window's undisturbed time, their mean
/// queueing wait with its batch-means interval, their occupancy moments, and the delivery
/// of those that found the worker idle (arrival to start of service), which the job
/// opening a busy period holds the worker for on top of its occupancy (the exceptional
/// first service of [`crate::queue::pk_exceptional_first_wait_ms`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UndisturbedQueue {
    /// Jobs in the undisturbed part.
    pub jobs: usize,
    /// Their rate over the undisturbed time (per second).
    pub job_rate_per_s: f64,
    /// Their mean queueing wait (ms).
    pub queueing_wait_ms: f64,
    /// Half-width (ms) of the 95 % confidence interval of `queueing_wait_ms` by
    /// [`BATCHES`] batch means.
    pub queueing_wait_ci95_ms: Option<f64>,
    /// E[X] of their occupancy (ms).
    pub service_mean_ms: f64,
    /// E[X^2] of their occupancy (ms^2).
    pub service_m2_ms2: f64,
    /// Share of the jobs that found the worker idle.
    pub opening_share: f64,
    /// E[D] of those jobs' delivery (ms).
    pub opening_delivery_ms: f64,
    /// E[D^2] of those jobs' delivery (ms^2).
    pub opening_delivery_m2_ms2: f64,
    /// The jobs as batch-Poisson flights, which the models take.
    pub flights: FlightLoad,
}

/// One job of a steady window's undisturbed part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalmJob {
    /// Kernel timestamp (ns).
    pub arrival_ns: u64,
    /// Queueing wait (ms): zero for a job that found the worker idle.
    pub queueing_ms: f64,
    /// The worker's occupancy by the job (ms).
    pub occupancy_ms: f64,
    /// Arrival to start of service (ms) of a job that found the worker idle.
    pub delivery_ms: Option<f64>,
    /// The job's flight (see [`FlightLoad`]).
    pub flight: usize,
    /// Its wait behind the earlier jobs of its flight (ms).
    pub within_flight_ms: f64,
}

impl UndisturbedQueue {
    /// From the undisturbed jobs, in any order, and the undisturbed time (ms). `None`
    /// for an empty part or time.
    pub fn of(mut calm: Vec<CalmJob>, calm_ms: f64) -> Option<Self> {
        if calm.is_empty() || calm_ms <= 0.0 {
            return None;
        }
        calm.sort_by_key(|c| c.arrival_ns);
        let m = calm.len() as f64;
        let occupancies: Vec<f64> = calm.iter().map(|c| c.occupancy_ms).collect();
        let deliveries: Vec<f64> = calm.iter().filter_map(|c| c.delivery_ms).collect();
        let opening_share = deliveries.len() as f64 / m;
        let waits: Vec<f64> = calm.iter().map(|c| c.queueing_ms).collect();
        let occupancy = Moments::of(&occupancies)?;
        let delivery = Moments::of(&deliveries);
        let flights = FlightLoad::of(
            calm.iter()
                .map(|c| (c.flight, c.occupancy_ms, c.within_flight_ms)),
            calm_ms,
        )?;
        Some(UndisturbedQueue {
            jobs: calm.len(),
            job_rate_per_s: m / (calm_ms / 1e3),
            queueing_wait_ms: mean(&waits)?,
            queueing_wait_ci95_ms: batch_mean_ci95(&waits, BATCHES),
            service_mean_ms: occupancy.mean,
            service_m2_ms2: occupancy.m2,
            opening_share,
            opening_delivery_ms: delivery.map_or(0.0, |d| d.mean),
            opening_delivery_m2_ms2: delivery.map_or(0.0, |d| d.m2),
            flights,
        })
    }

    /// Corrected P-K (Eq. 3.12) over the flights, with one occupancy law for every
    /// flight, plus the wait behind a job's own flight (see [`FlightLoad`]).
    pub fn pk_ms(&self) -> Option<f64> {
        self.flights.pk_ms()
    }

    /// Corrected P-K with the busy period's opening job apart: it holds the worker for
    /// its delivery D on top of its occupancy X, D independent of X, so its moments are
    /// E[X] + E[D] and E[X^2] + 2E[X]E[D] + E[D^2]. One occupancy law for every job
    /// beyond that: the occupancy of jobs that found the worker busy alone is a smaller
    /// sample, and at high load its mean moves the model by several times its own error.
    ///
    /// The flights are the arrivals ([`FlightLoad::exceptional_first_ms`]): X is a
    /// flight's occupancy, and a job waits besides behind its own flight. With one job
    /// per flight that is the job-level formula.
    pub fn exceptional_first_ms(&self) -> Option<f64> {
        self.flights
            .exceptional_first_ms(self.opening_delivery_ms, self.opening_delivery_m2_ms2)
    }
}

/// The trace in service order, with each job's occupancy of the worker.
struct Occupancy<'t, J> {
    by_start: Vec<&'t J>,
    /// Every job's occupancy (ns), in service order.
    occupancy_ns: Vec<u64>,
    /// The median gap (ns) between a job's end and the start of the next one that was
    /// already waiting.
    typical_gap_ns: u64,
    /// The jobs' flights, in service order.
    flights: Flights,
}

impl<'t, J: TracedJob> Occupancy<'t, J> {
    /// A job occupies the worker from its start to the start of the next one when that
    /// one was already waiting (so the worker's own bookkeeping between jobs, the next
    /// `recvmmsg` and any interruption of the worker count, as they delay the queue),
    /// and otherwise for its service plus the median of those gaps.
    fn of(jobs: &'t [J]) -> Self {
        let mut by_start: Vec<&J> = jobs.iter().collect();
        by_start.sort_by_key(|j| j.start_ns());
        let mut gaps: Vec<u64> = by_start
            .windows(2)
            .filter(|w| w[1].arrival_ns() <= w[0].end_ns())
            .map(|w| w[1].start_ns().saturating_sub(w[0].end_ns()))
            .collect();
        gaps.sort_unstable();
        let typical_gap_ns = gaps.get(gaps.len() / 2).copied().unwrap_or(0);
        let occupancy_ns = by_start
            .iter()
            .enumerate()
            .map(|(i, j)| match by_start.get(i + 1) {
                Some(next) if next.arrival_ns() <= j.end_ns() => {
                    next.start_ns().saturating_sub(j.start_ns())
                }
                _ => j.service_ns() + typical_gap_ns,
            })
            .collect::<Vec<u64>>();
        let flights = Flights::of(&by_start, &occupancy_ns);
        Occupancy {
            by_start,
            occupancy_ns,
            typical_gap_ns,
            flights,
        }
    }

    /// The mean queueing wait (ms) of the jobs arriving in `window` when the run's own
    /// arrivals and occupancies go through a FIFO single server (Lindley's recursion).
    fn replay_wait_ms(&self, window: &std::ops::Range<f64>) -> f64 {
        let mut order: Vec<usize> = (0..self.by_start.len()).collect();
        order.sort_by_key(|&i| self.by_start[i].arrival_ns());
        let (mut free_at, mut sum, mut n) = (0u64, 0.0, 0usize);
        for i in order {
            let arrival = self.by_start[i].arrival_ns();
            let start = free_at.max(arrival);
            free_at = start + self.occupancy_ns[i];
            if window.contains(&(arrival as f64)) {
                sum += ms(start - arrival);
                n += 1;
            }
        }
        if n > 0 {
            sum / n as f64
        } else {
            0.0
        }
    }
}

/// The window's jobs, each read once: waits, queueing waits, occupancies and the
/// undisturbed ones.
#[derive(Default)]
struct WindowJobs {
    occupancy_ms: Vec<f64>,
    waits_ms: Vec<f64>,
    queueing_ms: Vec<f64>,
    idle_waits_ms: Vec<f64>,
    calm: Vec<CalmJob>,
    /// (flight, occupancy ms, wait behind the flight ms) of every job.
    flight_jobs: Vec<(usize, f64, f64)>,
}

impl WindowJobs {
    fn of<J: TracedJob>(
        occ: &Occupancy<'_, J>,
        window: &std::ops::Range<f64>,
        disturbed: &[(u64, u64)],
    ) -> Self {
        let mut w = WindowJobs::default();
        let mut busy_until = 0u64;
        for (i, j) in occ.by_start.iter().enumerate() {
            let found_idle = j.arrival_ns() >= busy_until;
            busy_until = busy_until.max(j.end_ns());
            if !window.contains(&(j.arrival_ns() as f64)) {
                continue;
            }
            let wait = ms(j.wait_ns());
            let queueing = if found_idle {
                w.idle_waits_ms.push(wait);
                0.0
            } else {
                wait
            };
            let occupancy_ns = occ.occupancy_ns[i];
            let (flight, within_flight_ms) = (occ.flights.id[i], ms(occ.flights.within_ns[i]));
            w.flight_jobs
                .push((flight, ms(occupancy_ns), within_flight_ms));
            w.queueing_ms.push(queueing);
            w.occupancy_ms.push(ms(occupancy_ns));
            w.waits_ms.push(wait);
            // A job is undisturbed when nothing disturbed it from its arrival to the end
            // of its occupancy: one that arrived before a stall and was still waiting
            // or in service when it came has a wait or an occupancy that holds the stall.
            if !meets(disturbed, j.arrival_ns(), j.start_ns() + occupancy_ns) {
                w.calm.push(CalmJob {
                    arrival_ns: j.arrival_ns(),
                    queueing_ms: queueing,
                    occupancy_ms: ms(occupancy_ns),
                    delivery_ms: found_idle.then_some(wait),
                    flight,
                    within_flight_ms,
                });
            }
        }
        w
    }
}

impl SteadyQueue {
    /// The queue over the steady window of `jobs` (see [`EDGE`]); `None` with fewer than
    /// 10 jobs in the window.
    ///
    /// The service time the models get is the worker's *occupancy* per job: from the
    /// start of a job to the start of the next one when that one was already waiting
    /// (so the worker's own bookkeeping between jobs, the next `recvmmsg` and any
    /// interruption of the worker count, as they delay the queue), and otherwise the
    /// job's service plus the median of those gaps. The wall time from start to end of a
    /// job alone leaves out what the worker does between jobs, which the queue waits for
    /// all the same.
    ///
    /// `disturbed` are the sorted, disjoint intervals of [`disturbed_intervals`].
    pub fn of<J: TracedJob>(jobs: &[J], disturbed: &[(u64, u64)]) -> Option<Self> {
        let first = jobs.iter().map(J::arrival_ns).min()?;
        let last = jobs.iter().map(J::arrival_ns).max()?;
        let span = last.saturating_sub(first) as f64;
        let edge = (EDGE * span).min(EDGE_MAX_NS);
        let window = (first as f64 + edge)..(last as f64 - edge);
        let occ = Occupancy::of(jobs);
        let w = WindowJobs::of(&occ, &window, disturbed);
        if w.occupancy_ms.len() < MIN_WINDOW_JOBS || window.is_empty() {
            return None;
        }
        let n = w.occupancy_ms.len() as f64;
        let occupancy = Moments::of(&w.occupancy_ms)?;
        let length_ms = (window.end - window.start) / 1e6;
        let undisturbed_share = w.calm.len() as f64 / n;
        let covered = covered_length(disturbed, window.start as u64, window.end as u64);
        let calm_ms = length_ms - ms(covered);
        let flights = FlightLoad::of(w.flight_jobs, length_ms)?;
        let undisturbed = (w.calm.len() >= MIN_UNDISTURBED_JOBS
            && undisturbed_share >= MIN_UNDISTURBED_SHARE)
            .then(|| UndisturbedQueue::of(w.calm, calm_ms))
            .flatten();
        Some(SteadyQueue {
            jobs: w.occupancy_ms.len(),
            job_rate_per_s: n / (length_ms / 1e3),
            mean_wait_ms: w.waits_ms.iter().sum::<f64>() / n,
            queueing_wait_ms: w.queueing_ms.iter().sum::<f64>() / n,
            queueing_wait_ci95_ms: batch_mean_ci95(&w.queueing_ms, BATCHES),
            idle_share: w.idle_waits_ms.len() as f64 / n,
            idle_wait_mean_ms: mean(&w.idle_waits_ms).unwrap_or(0.0),
            service_mean_ms: occupancy.mean,
            service_m2_ms2: occupancy.m2,
            utilisation: w.occupancy_ms.iter().sum::<f64>() / length_ms,
            service_samples_ms: w.occupancy_ms,
            typical_gap_ms: ms(occ.typical_gap_ns),
            replay_wait_ms: occ.replay_wait_ms(&window),
            flights,
            undisturbed_share,
            undisturbed,
        })
    }
}

#[cfg(test)]
mod tests;
