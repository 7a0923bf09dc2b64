//! The queue over a load run's steady window, whole and undisturbed (see the `reality`
//! module notes), and the handshakes' job chains.

use wtlsperf_models::stats::{mean, Moments};

use crate::gateway::{JobRecord, Stall};

/// What is cut at each end of the arrival span before the queue is read: a tenth of it,
/// at most [`EDGE_MAX_NS`]. The queue starts empty and the answer stream of a 20 ms
/// bearer ramps up within some five round trips, and ends as the last handshakes' answers
/// trickle in over as long, so a quarter of a second is steady on either side; cutting a
/// tenth of a 45 s run would throw away 9 s of steady queue.
const EDGE: f64 = 0.1;
/// At most this much (ns) is cut at each end of the arrival span.
const EDGE_MAX_NS: f64 = 250e6;

/// Batches (of equal job counts, in arrival order) of the batch-means interval of the
/// undisturbed mean wait: each batch spans at least a tenth of a second, hundreds of the
/// queue's correlation times at rho <= 0.8, so batch means are nearly independent.
const BATCHES: usize = 20;

/// Fewest jobs, and smallest share of the window, from which the undisturbed part of a
/// run is read at all.
const MIN_UNDISTURBED_JOBS: usize = 200;
const MIN_UNDISTURBED_SHARE: f64 = 0.2;

/// How long after a stall or late send of length `len_ns` its effect on the queue is
/// taken to last: the backlog it built clears at the rate the worker outpaces arrivals,
/// (1 - rho)/rho of real time, which for rho <= 0.8 is at least a quarter; ten times the
/// stall plus 20 ms (a hundred jobs of the measured cases) covers that with margin.
pub fn settle_ns(len_ns: u64) -> u64 {
    20_000_000 + 10 * len_ns
}

/// The intervals (process clock, ns; sorted, disjoint) whose arrivals the undisturbed
/// reading leaves out: each stall of the gateway's workers, and every other disturbance
/// (the generator's stalls, the delivery path's), from its start to its end plus
/// [`settle_ns`].
pub fn disturbed_intervals(
    worker_stalls: &[Stall],
    generator_stalls: &[(u64, u64)],
) -> Vec<(u64, u64)> {
    let mut raw: Vec<(u64, u64)> = worker_stalls
        .iter()
        .map(|s| (s.start_ns, s.end_ns))
        .chain(generator_stalls.iter().copied())
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

/// The gateway's queue over the steady window of a run (see the module notes).
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyQueue {
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
    /// Share of the window's jobs that found the worker idle, and their mean wait: the
    /// path from the kernel to the worker, plus any time the worker was not running
    /// (the virtual CPU descheduled, an interrupt): no queueing, measured apart.
    pub idle_share: f64,
    pub idle_wait_mean_ms: f64,
    pub service_mean_ms: f64,
    pub service_m2_ms2: f64,
    /// Service time of the window's jobs over the window's length.
    pub utilisation: f64,
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
    /// Share of the window's jobs that arrived outside every disturbed interval, and the
    /// queue over those jobs (`None` when fewer than [`MIN_UNDISTURBED_JOBS`] or less
    /// than [`MIN_UNDISTURBED_SHARE`] of the window are left).
    pub undisturbed_share: f64,
    pub undisturbed: Option<UndisturbedQueue>,
}

/// The queue over the undisturbed part of a steady window (see the module notes): the
/// jobs that arrived outside every disturbed interval, their rate over the window's
/// undisturbed time, their mean queueing wait with its batch-means interval, their
/// occupancy moments, and the delivery of those that found the worker idle (arrival to
/// start of service), which the job opening a busy period holds the worker for on top of
/// its occupancy (the exceptional first service of
/// [`wtlsperf_models::queue::pk_exceptional_first_wait_ms`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UndisturbedQueue {
    pub jobs: usize,
    pub job_rate_per_s: f64,
    pub queueing_wait_ms: f64,
    /// Half-width (ms) of the 95 % confidence interval of `queueing_wait_ms` by
    /// [`BATCHES`] batch means.
    pub queueing_wait_ci95_ms: Option<f64>,
    pub service_mean_ms: f64,
    pub service_m2_ms2: f64,
    /// Share of the jobs that found the worker idle, and the first two moments of their
    /// delivery (ms, ms^2).
    pub opening_share: f64,
    pub opening_delivery_ms: f64,
    pub opening_delivery_m2_ms2: f64,
}

/// One job of a steady window's undisturbed part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalmJob {
    /// Kernel timestamp (process clock, ns).
    pub arrival_ns: u64,
    /// Queueing wait (ms): zero for a job that found the worker idle.
    pub queueing_ms: f64,
    /// The worker's occupancy by the job (ms).
    pub occupancy_ms: f64,
    /// Arrival to start of service (ms) of a job that found the worker idle.
    pub delivery_ms: Option<f64>,
}

impl UndisturbedQueue {
    /// From the undisturbed jobs, in any order, and the undisturbed time (ms). `None`
    /// for an empty part or time.
    fn of(mut calm: Vec<CalmJob>, calm_ms: f64) -> Option<Self> {
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
        Some(UndisturbedQueue {
            jobs: calm.len(),
            job_rate_per_s: m / (calm_ms / 1e3),
            queueing_wait_ms: mean(&waits)?,
            queueing_wait_ci95_ms: wtlsperf_models::stats::batch_mean_ci95(&waits, BATCHES),
            service_mean_ms: occupancy.mean,
            service_m2_ms2: occupancy.m2,
            opening_share,
            opening_delivery_ms: delivery.map_or(0.0, |d| d.mean),
            opening_delivery_m2_ms2: delivery.map_or(0.0, |d| d.m2),
        })
    }

    /// Corrected P-K (Eq. 3.12 at the job rate) with one occupancy law for every job.
    pub fn pk_ms(&self) -> Option<f64> {
        wtlsperf_models::queue::pk_mean_wait_ms(
            self.job_rate_per_s,
            self.service_mean_ms,
            self.service_m2_ms2,
        )
    }

    /// Corrected P-K with the busy period's opening job apart: it holds the worker for
    /// its delivery D on top of its occupancy X, D independent of X, so its moments are
    /// E[X] + E[D] and E[X^2] + 2E[X]E[D] + E[D^2]. One occupancy law for every job
    /// beyond that: the occupancy of jobs that found the worker busy alone is a smaller
    /// sample, and at high load its mean moves the model by several times its own error.
    pub fn exceptional_first_ms(&self) -> Option<f64> {
        let (x, x2) = (self.service_mean_ms, self.service_m2_ms2);
        let (d, d2) = (self.opening_delivery_ms, self.opening_delivery_m2_ms2);
        wtlsperf_models::queue::pk_exceptional_first_wait_ms(
            self.job_rate_per_s,
            x,
            x2,
            x + d,
            x2 + 2.0 * x * d + d2,
        )
    }
}

impl SteadyQueue {
    /// `None` with fewer than 10 jobs in the window.
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
    pub fn of(jobs: &[JobRecord], disturbed: &[(u64, u64)]) -> Option<Self> {
        let first = jobs.iter().map(|j| j.arrival_ns).min()?;
        let last = jobs.iter().map(|j| j.arrival_ns).max()?;
        let span = last.saturating_sub(first) as f64;
        let edge = (EDGE * span).min(EDGE_MAX_NS);
        let (from, to) = (first as f64 + edge, last as f64 - edge);
        let mut by_start: Vec<&JobRecord> = jobs.iter().collect();
        by_start.sort_by_key(|j| j.start_ns);
        let ms = |ns: u64| ns as f64 / 1e6;
        // Gaps between a job's end and the next start while the next one was waiting.
        let mut gaps: Vec<u64> = by_start
            .windows(2)
            .filter(|w| w[1].arrival_ns <= w[0].end_ns)
            .map(|w| w[1].start_ns.saturating_sub(w[0].end_ns))
            .collect();
        gaps.sort_unstable();
        let typical_gap = gaps.get(gaps.len() / 2).copied().unwrap_or(0);
        // Every job's occupancy (ns), in service order, for the replay.
        let occupancy_ns: Vec<u64> = by_start
            .iter()
            .enumerate()
            .map(|(i, j)| match by_start.get(i + 1) {
                Some(next) if next.arrival_ns <= j.end_ns => {
                    next.start_ns.saturating_sub(j.start_ns)
                }
                _ => j.service_ns() + typical_gap,
            })
            .collect();
        let replay_wait_ms = {
            let mut order: Vec<usize> = (0..by_start.len()).collect();
            order.sort_by_key(|&i| by_start[i].arrival_ns);
            let (mut free_at, mut sum, mut n) = (0u64, 0.0, 0usize);
            for i in order {
                let arrival = by_start[i].arrival_ns;
                let start = free_at.max(arrival);
                free_at = start + occupancy_ns[i];
                if (from..to).contains(&(arrival as f64)) {
                    sum += ms(start - arrival);
                    n += 1;
                }
            }
            if n > 0 {
                sum / n as f64
            } else {
                0.0
            }
        };
        let mut occupancy_ms = Vec::new();
        let mut waits_ms = Vec::new();
        let mut queueing_ms = Vec::new();
        let mut idle_waits_ms = Vec::new();
        let mut calm: Vec<CalmJob> = Vec::new();
        let mut busy_until = 0u64;
        for (i, j) in by_start.iter().enumerate() {
            let found_idle = j.arrival_ns >= busy_until;
            busy_until = busy_until.max(j.end_ns);
            if !(from..to).contains(&(j.arrival_ns as f64)) {
                continue;
            }
            let queueing = if found_idle {
                idle_waits_ms.push(ms(j.wait_ns()));
                0.0
            } else {
                ms(j.wait_ns())
            };
            queueing_ms.push(queueing);
            occupancy_ms.push(ms(occupancy_ns[i]));
            waits_ms.push(ms(j.wait_ns()));
            // A job is undisturbed when nothing disturbed it from its arrival to the end
            // of its occupancy: one that arrived before a stall and was still waiting
            // or in service when it came has a wait or an occupancy that holds the stall.
            if !meets(disturbed, j.arrival_ns, j.start_ns + occupancy_ns[i]) {
                let delivery = found_idle.then(|| ms(j.wait_ns()));
                calm.push(CalmJob {
                    arrival_ns: j.arrival_ns,
                    queueing_ms: queueing,
                    occupancy_ms: ms(occupancy_ns[i]),
                    delivery_ms: delivery,
                });
            }
        }
        if occupancy_ms.len() < 10 || to <= from {
            return None;
        }
        let n = occupancy_ms.len() as f64;
        let occupancy = Moments::of(&occupancy_ms)?;
        let (service_mean_ms, service_m2_ms2) = (occupancy.mean, occupancy.m2);
        let length_ms = (to - from) / 1e6;
        let undisturbed_share = calm.len() as f64 / n;
        let calm_ms = length_ms - covered_length(disturbed, from as u64, to as u64) as f64 / 1e6;
        let undisturbed = (calm.len() >= MIN_UNDISTURBED_JOBS
            && undisturbed_share >= MIN_UNDISTURBED_SHARE)
            .then(|| UndisturbedQueue::of(calm, calm_ms))
            .flatten();
        Some(SteadyQueue {
            jobs: occupancy_ms.len(),
            job_rate_per_s: n / (length_ms / 1e3),
            mean_wait_ms: waits_ms.iter().sum::<f64>() / n,
            queueing_wait_ms: queueing_ms.iter().sum::<f64>() / n,
            queueing_wait_ci95_ms: wtlsperf_models::stats::batch_mean_ci95(&queueing_ms, BATCHES),
            idle_share: idle_waits_ms.len() as f64 / n,
            idle_wait_mean_ms: if idle_waits_ms.is_empty() {
                0.0
            } else {
                idle_waits_ms.iter().sum::<f64>() / idle_waits_ms.len() as f64
            },
            service_mean_ms,
            service_m2_ms2,
            utilisation: occupancy_ms.iter().sum::<f64>() / length_ms,
            service_samples_ms: occupancy_ms,
            typical_gap_ms: ms(typical_gap),
            replay_wait_ms,
            undisturbed_share,
            undisturbed,
        })
    }
}

/// The gateway's jobs grouped by handshake (each handshake comes from its own client
/// address), in arrival order, as service-time chains (ms, wall time from the start to
/// the end of a job's service), and the median think time between consecutive jobs of
/// a handshake (ms). Handshakes cut by the run's start or end are kept as they are.
pub fn job_chains(jobs: &[crate::gateway::JobRecord]) -> (Vec<Vec<f64>>, f64) {
    let (chains, think, _) = job_chains_and_first_wait(jobs);
    (chains, think)
}

/// The delivery delay (ms): the median wait of jobs that found the worker idle
/// (arrived after every earlier job had ended): no queueing, but the time from the
/// kernel's receive timestamp to the worker starting on the datagram.
pub fn delivery_delay_ms(jobs: &[crate::gateway::JobRecord]) -> f64 {
    crate::load::idle_arrival_waits_us(jobs).2 / 1000.0
}

/// [`job_chains`], plus the mean wait (ms) of the first job of each handshake: those
/// jobs arrive as the Poisson process itself, so by PASTA they see the time-average
/// queue that the Pollaczek-Khinchin formula describes.
pub fn job_chains_and_first_wait(
    jobs: &[crate::gateway::JobRecord],
) -> (Vec<Vec<f64>>, f64, Option<f64>) {
    use std::collections::HashMap;
    let mut by_peer: HashMap<std::net::SocketAddr, Vec<&crate::gateway::JobRecord>> =
        HashMap::new();
    for j in jobs {
        by_peer.entry(j.peer).or_default().push(j);
    }
    let mut chains = Vec::with_capacity(by_peer.len());
    let mut thinks = Vec::new();
    let (mut first_sum, mut firsts) = (0.0, 0usize);
    for (_, mut js) in by_peer {
        js.sort_by_key(|j| j.arrival_ns);
        if let Some(first) = js.first() {
            first_sum += first.wait_ns() as f64 / 1e6;
            firsts += 1;
        }
        for w in js.windows(2) {
            thinks.push(w[1].arrival_ns.saturating_sub(w[0].end_ns) as f64 / 1e6);
        }
        chains.push(
            js.iter()
                .map(|j| j.end_ns.saturating_sub(j.start_ns) as f64 / 1e6)
                .collect(),
        );
    }
    thinks.sort_by(f64::total_cmp);
    let think = thinks.get(thinks.len() / 2).copied().unwrap_or(0.0);
    let first_wait = (firsts > 0).then(|| first_sum / firsts as f64);
    (chains, think, first_wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(arrival_ms: f64, start_ms: f64, service_ms: f64, peer: u16) -> JobRecord {
        let ns = |ms: f64| (ms * 1e6) as u64;
        JobRecord {
            arrival_ns: ns(arrival_ms),
            start_ns: ns(start_ms),
            end_ns: ns(start_ms + service_ms),
            cpu_ns: ns(service_ms),
            bytes: 100,
            messages: 1,
            peer: std::net::SocketAddr::from(([127, 0, 0, 1], peer)),
            worker: 0,
            kernel_timestamp: true,
        }
    }

    #[test]
    fn disturbances_are_widened_by_their_settling_time_and_merged() {
        let stall = Stall {
            start_ns: 1_000_000,
            end_ns: 3_000_000,
            worker: 0,
        };
        // A generator stall inside the worker stall's settling time merges with it; a
        // later one does not.
        let generator = [(30_000_000, 30_500_000), (200_000_000, 200_300_000)];
        let d = disturbed_intervals(&[stall], &generator);
        assert_eq!(
            d,
            vec![
                (1_000_000, 30_500_000 + settle_ns(500_000)),
                (200_000_000, 200_300_000 + settle_ns(300_000)),
            ]
        );
        assert!(!meets(&d, 0, 999_999));
        assert!(meets(&d, 0, 1_000_000));
        assert!(meets(&d, 55_000_000, 55_000_000));
        assert!(!meets(&d, d[0].1, 199_999_999));
        assert!(meets(&d, d[0].1, 200_000_000));
        assert!(meets(&d, 0, u64::MAX));
        assert_eq!(covered_length(&d, 0, 10_000_000), 9_000_000);
    }

    #[test]
    fn the_undisturbed_part_leaves_out_the_backlog_of_a_stall() {
        // One job per ms, 0.5 ms of service, never waiting, except that a 5 ms stall of
        // the worker at 500 ms makes the jobs arriving in it wait for its end.
        let mut jobs = Vec::new();
        for i in 0..1000u16 {
            let a = f64::from(i);
            let start = if (500.0..505.0).contains(&a) {
                505.0 + (a - 500.0) * 0.5
            } else {
                a
            };
            jobs.push(job(a, start.max(a), 0.5, 1000 + i));
        }
        let stall = Stall {
            start_ns: 500_000_000,
            end_ns: 505_000_000,
            worker: 0,
        };
        let clean = SteadyQueue::of(&jobs, &[]).unwrap();
        assert!(clean.queueing_wait_ms > 0.0);
        assert_eq!(clean.undisturbed_share, 1.0);
        let q = SteadyQueue::of(&jobs, &disturbed_intervals(&[stall], &[])).unwrap();
        // The window's measured wait is unchanged; the undisturbed part has none.
        assert_eq!(q.queueing_wait_ms, clean.queueing_wait_ms);
        let u = q.undisturbed.expect("most of the window is undisturbed");
        assert_eq!(u.queueing_wait_ms, 0.0);
        // 5 ms of stall + 20 + 50 ms settling: 75 of the window's ~800 jobs are out, and
        // the rate is read over the undisturbed time only, so it stays one job per ms.
        assert_eq!(u.jobs, q.jobs - 75);
        assert!(
            (u.job_rate_per_s - 1000.0).abs() < 5.0,
            "{}",
            u.job_rate_per_s
        );
        // A disturbance over most of the window leaves too little to read.
        let long = Stall {
            start_ns: 0,
            end_ns: 200_000_000,
            worker: 0,
        };
        let q = SteadyQueue::of(&jobs, &disturbed_intervals(&[long], &[])).unwrap();
        assert!(q.undisturbed.is_none());
    }

    #[test]
    fn a_job_that_finds_the_worker_idle_holds_it_from_its_arrival() {
        // Every ms a job finds the worker idle and waits 10 us to be polled out (its
        // delivery); a second arrives 5 us after it, during that delivery, and waits
        // for its whole service. The second's wait holds the delivery.
        let mut jobs = Vec::new();
        for i in 0..1000u16 {
            let t = f64::from(i);
            jobs.push(job(t, t + 0.010, 0.2, 2 * i));
            jobs.push(job(t + 0.005, t + 0.210, 0.2, 2 * i + 1));
        }
        let u = SteadyQueue::of(&jobs, &[]).unwrap().undisturbed.unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(close(u.opening_share, 0.5));
        assert!(close(u.opening_delivery_ms, 0.010));
        assert!(close(u.opening_delivery_m2_ms2, 0.0001));
        assert!(close(u.service_mean_ms, 0.200));
        assert!(close(u.queueing_wait_ms, 0.205 / 2.0));
        // A steady pattern: batches differ only where one cuts a pair, so the interval
        // is narrow.
        assert!(u.queueing_wait_ci95_ms.unwrap() < 0.05 * u.queueing_wait_ms);
        // With the delivery counted, the model predicts more wait than with one law.
        assert!(u.exceptional_first_ms().unwrap() > u.pk_ms().unwrap());
    }
}
