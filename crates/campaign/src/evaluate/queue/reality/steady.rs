//! The queue over a load run's steady window, whole and undisturbed (see the `reality`
//! module notes), and the handshakes' job chains. The reading itself is model code
//! ([`wtlsperf_models::queue::trace`]); this side feeds it the gateway's job records and
//! the stall logs.

pub use wtlsperf_models::queue::trace::{
    settle_ns, CalmJob, SteadyQueue, TracedJob, UndisturbedQueue,
};

use wtlsperf_drivers::gateway::Stall;

/// The intervals (process clock, ns; sorted, disjoint) whose arrivals the undisturbed
/// reading leaves out: each stall of the gateway's workers, and every other disturbance
/// (the generator's stalls, the delivery path's), from its start to its end plus
/// [`settle_ns`].
pub fn disturbed_intervals(
    worker_stalls: &[Stall],
    generator_stalls: &[(u64, u64)],
) -> Vec<(u64, u64)> {
    wtlsperf_models::queue::trace::disturbed_intervals(
        worker_stalls
            .iter()
            .map(|s| (s.start_ns, s.end_ns))
            .chain(generator_stalls.iter().copied()),
    )
}

/// The gateway's jobs grouped by handshake (each handshake comes from its own client
/// address), in arrival order, as service-time chains (ms, wall time from the start to
/// the end of a job's service), and the median think time between consecutive jobs of
/// a handshake (ms). Handshakes cut by the run's start or end are kept as they are.
pub fn job_chains(jobs: &[wtlsperf_drivers::gateway::JobRecord]) -> (Vec<Vec<f64>>, f64) {
    let (chains, think, _) = job_chains_and_first_wait(jobs);
    (chains, think)
}

/// The delivery delay (ms): the median wait of jobs that found the worker idle
/// (arrived after every earlier job had ended): no queueing, but the time from the
/// kernel's receive timestamp to the worker starting on the datagram.
pub fn delivery_delay_ms(jobs: &[wtlsperf_drivers::gateway::JobRecord]) -> f64 {
    wtlsperf_drivers::load::idle_arrival_waits_us(jobs).2 / 1000.0
}

/// [`job_chains`], plus the mean wait (ms) of the first job of each handshake: those
/// jobs arrive as the Poisson process itself, so by PASTA they see the time-average
/// queue that the Pollaczek-Khinchin formula describes.
pub fn job_chains_and_first_wait(
    jobs: &[wtlsperf_drivers::gateway::JobRecord],
) -> (Vec<Vec<f64>>, f64, Option<f64>) {
    use std::collections::HashMap;
    let mut by_peer: HashMap<std::net::SocketAddr, Vec<&wtlsperf_drivers::gateway::JobRecord>> =
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
    use wtlsperf_drivers::gateway::JobRecord;

    /// The gateway's records go into the model as they are: a worker stall and a
    /// generator stall are one disturbance list, and a record's times are the job's.
    #[test]
    fn the_gateway_records_feed_the_trace_model() {
        let stall = Stall {
            start_ns: 1_000_000,
            end_ns: 3_000_000,
            worker: 0,
        };
        let generator = [(200_000_000, 200_300_000)];
        assert_eq!(
            disturbed_intervals(&[stall], &generator),
            vec![
                (1_000_000, 3_000_000 + settle_ns(2_000_000)),
                (200_000_000, 200_300_000 + settle_ns(300_000)),
            ]
        );
        let job = JobRecord {
            arrival_ns: 10,
            start_ns: 15,
            end_ns: 40,
            cpu_ns: 20,
            bytes: 100,
            messages: 1,
            peer: std::net::SocketAddr::from(([127, 0, 0, 1], 9)),
            worker: 0,
            kernel_timestamp: true,
        };
        assert_eq!(
            (TracedJob::wait_ns(&job), TracedJob::service_ns(&job)),
            (5, 25)
        );
    }
}
