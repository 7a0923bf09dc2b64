//! Queue statistics of an in-process gateway's job records: moments, idle arrivals and
//! the delivery path's stalls.

use std::collections::HashMap;

use wtlsperf_models::stats::{mean, Moments};

use super::GatewayQueueStats;
use crate::gateway::{JobRecord, STALL_NS};

/// Queue statistics from job records (`completed` handshakes, `workers` servers).
pub fn queue_stats(jobs: &[JobRecord], completed: u64, workers: usize) -> GatewayQueueStats {
    if jobs.is_empty() {
        return GatewayQueueStats::default();
    }
    let us = |ns: u64| ns as f64 / 1e3;
    let waits: Vec<f64> = jobs.iter().map(|j| us(j.wait_ns())).collect();
    let services: Vec<f64> = jobs.iter().map(|j| us(j.service_ns())).collect();
    let cpu: Vec<f64> = jobs.iter().map(|j| us(j.cpu_ns)).collect();
    let stamped: Vec<f64> = jobs
        .iter()
        .map(|j| f64::from(u8::from(j.kernel_timestamp)))
        .collect();
    let (Some(w), Some(sv)) = (Moments::of(&waits), Moments::of(&services)) else {
        return GatewayQueueStats::default();
    };
    let mut s = GatewayQueueStats {
        jobs: jobs.len() as u64,
        mean_wait_us: w.mean,
        wait_m2_us2: w.m2,
        mean_service_us: sv.mean,
        service_m2_us2: sv.m2,
        mean_service_cpu_us: mean(&cpu).unwrap_or(0.0),
        kernel_timestamp_share: mean(&stamped).unwrap_or(0.0),
        ..Default::default()
    };
    let busy: f64 = services.iter().sum();
    let (share, mean, median) = idle_arrival_waits_us(jobs);
    s.idle_arrival_share = share;
    s.idle_arrival_wait_mean_us = mean;
    s.idle_arrival_wait_median_us = median;
    let first = jobs.iter().map(|j| j.arrival_ns).min().unwrap_or(0);
    let last = jobs.iter().map(|j| j.end_ns).max().unwrap_or(0);
    let span = us(last.saturating_sub(first));
    if span > 0.0 {
        s.utilisation = busy / (span * workers.max(1) as f64);
    }
    if completed > 0 {
        s.per_handshake_service_us = busy / completed as f64;
    }
    s
}

/// The delivery path's stalls (process clock, ns; sorted by start): each time a datagram
/// the kernel had stamped reached a free worker more than [`STALL_NS`] later, from the
/// moment both the datagram was there and its worker was free to the start of its
/// service.
///
/// On loopback the kernel stamps a datagram as the generator's send puts it on its core's
/// receive backlog; the backlog is normally drained before that system call returns, but
/// under load the kernel hands it to `ksoftirqd`, which must then wait for a time slice
/// beside the busy-polling generator. Neither thread is off-core meanwhile, so neither
/// stall log sees it, yet the datagrams of a few milliseconds reach the worker together
/// (the test machine showed 14 ms twice in one run at rho = 0.1, and the jobs queued
/// behind them made a quarter of that run's queueing wait). A free worker polls every
/// few microseconds, so a datagram that reaches it later than that was held on the way,
/// whatever the queue's state. The worker's own timer sweeps, outside every job, are
/// kept far shorter than [`STALL_NS`] (the worker's `SWEEP_INTERVAL`), so that a job
/// waiting one out is not taken for a held datagram.
pub fn delivery_stalls(jobs: &[JobRecord]) -> Vec<(u64, u64)> {
    let mut by_start: Vec<&JobRecord> = jobs.iter().collect();
    by_start.sort_by_key(|j| j.start_ns);
    // When each worker is next free.
    let mut free: HashMap<usize, u64> = HashMap::new();
    let mut out = Vec::new();
    for j in by_start {
        let worker_free = free.entry(j.worker).or_insert(0);
        let ready = j.arrival_ns.max(*worker_free);
        if j.start_ns > ready + STALL_NS {
            out.push((ready, j.start_ns));
        }
        *worker_free = (*worker_free).max(j.end_ns);
    }
    out.sort_unstable();
    out
}

/// (share, mean us, median us) of the waits of jobs that found the worker idle (one
/// worker: jobs in order of service start; a job arriving after every earlier job ended).
pub fn idle_arrival_waits_us(jobs: &[JobRecord]) -> (f64, f64, f64) {
    let mut by_start: Vec<&JobRecord> = jobs.iter().collect();
    by_start.sort_by_key(|j| j.start_ns);
    let mut busy_until = 0u64;
    let mut idle: Vec<f64> = Vec::new();
    for j in &by_start {
        if j.arrival_ns >= busy_until {
            idle.push(j.wait_ns() as f64 / 1e3);
        }
        busy_until = busy_until.max(j.end_ns);
    }
    if idle.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mean = idle.iter().sum::<f64>() / idle.len() as f64;
    idle.sort_by(f64::total_cmp);
    (
        idle.len() as f64 / by_start.len() as f64,
        mean,
        idle[idle.len() / 2],
    )
}

/// Summed length (ms) of (start, end) intervals in ns.
pub(super) fn summed_ms(intervals: impl Iterator<Item = (u64, u64)>) -> f64 {
    // Folded from +0: `sum` starts from -0, which an empty log would print as "-0".
    intervals
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e6)
        .fold(0.0, |total, ms| total + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(arrival: u64, start: u64, end: u64) -> JobRecord {
        JobRecord {
            arrival_ns: arrival,
            start_ns: start,
            end_ns: end,
            cpu_ns: end - start,
            bytes: 100,
            messages: 1,
            peer: "127.0.0.1:1".parse().unwrap(),
            worker: 0,
            kernel_timestamp: true,
        }
    }

    #[test]
    fn a_datagram_held_on_its_way_to_a_free_worker_is_a_delivery_stall() {
        let jobs = vec![
            // Reaches the idle worker 5 us after its stamp: no stall.
            job(0, 5_000, 205_000),
            // Arrives while the worker is busy and starts 3 us after it is free: no
            // stall, however long it waited.
            job(100_000, 208_000, 408_000),
            // Stamped at 1 ms, reaches the idle worker at 15 ms: held on the way.
            job(1_000_000, 15_000_000, 15_200_000),
            // Stamped while the worker was busy, reaches it 1 ms after it is free
            // again: held on the way too.
            job(15_100_000, 16_200_000, 16_400_000),
        ];
        assert_eq!(
            delivery_stalls(&jobs),
            vec![(1_000_000, 15_000_000), (15_200_000, 16_200_000)]
        );
        // Each worker is free on its own: an idle second worker that takes a datagram
        // 250 us after its stamp had it held on the way, although the first worker was
        // busy until 50 us before it started.
        let mut other = job(15_050_000, 15_300_000, 15_500_000);
        other.worker = 1;
        let mut two = jobs.clone();
        two.push(other);
        assert_eq!(
            delivery_stalls(&two),
            vec![
                (1_000_000, 15_000_000),
                (15_050_000, 15_300_000),
                (15_200_000, 16_200_000)
            ]
        );
    }

    #[test]
    fn queue_moments_from_jobs() {
        // Waits 0 and 2000 ns, services 1000 and 3000 ns.
        let jobs = [job(0, 0, 1_000), job(1_000, 3_000, 6_000)];
        let q = queue_stats(&jobs, 1, 1);
        assert_eq!(q.jobs, 2);
        assert!((q.mean_wait_us - 1.0).abs() < 1e-12);
        assert!((q.wait_m2_us2 - 2.0).abs() < 1e-12);
        assert!((q.mean_service_us - 2.0).abs() < 1e-12);
        assert!((q.service_m2_us2 - 5.0).abs() < 1e-12);
        // Busy 4 us over a 6 us span.
        assert!((q.utilisation - 4.0 / 6.0).abs() < 1e-12);
        assert!((q.per_handshake_service_us - 4.0).abs() < 1e-12);
        assert_eq!(queue_stats(&[], 0, 1).jobs, 0);
    }
}
