//! The discrete-event simulator of the gateway's queue: FIFO servers fed with Poisson
//! arrivals and any service-time law, and handshakes as chains of jobs, which checks the
//! closed forms of the parent module and accepts measured service-time distributions.

use super::{is_valid_time, QueueError};
use crate::stats;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

/// A source of per-job service times for the simulator.
pub trait ServiceSampler {
    /// Draws one service time (ms).
    fn sample_ms(&mut self, rng: &mut StdRng) -> f64;
}

impl<F: FnMut(&mut StdRng) -> f64> ServiceSampler for F {
    fn sample_ms(&mut self, rng: &mut StdRng) -> f64 {
        self(rng)
    }
}

/// Constant service time (M/D/c).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Deterministic {
    /// Service time (ms).
    pub service_ms: f64,
}

impl ServiceSampler for Deterministic {
    fn sample_ms(&mut self, _rng: &mut StdRng) -> f64 {
        self.service_ms
    }
}

/// Exponential service time (M/M/c).
#[derive(Debug, Clone, Copy)]
pub struct Exponential(Exp<f64>);

impl Exponential {
    /// Exponential with the given mean (ms); `None` unless the mean is positive and finite.
    pub fn with_mean_ms(mean_ms: f64) -> Option<Self> {
        if mean_ms <= 0.0 || !is_valid_time(mean_ms) {
            return None;
        }
        Exp::new(1.0 / mean_ms).ok().map(Exponential)
    }
}

impl ServiceSampler for Exponential {
    fn sample_ms(&mut self, rng: &mut StdRng) -> f64 {
        self.0.sample(rng)
    }
}

/// Resampling of observed service times (e.g. measured per-message or per-handshake gateway
/// CPU times), each value equally likely.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Empirical {
    values_ms: Vec<f64>,
}

impl Empirical {
    /// `None` for an empty sample or a negative / non-finite value.
    pub fn new(values_ms: Vec<f64>) -> Option<Self> {
        if values_ms.is_empty() || values_ms.iter().any(|v| !is_valid_time(*v)) {
            return None;
        }
        Some(Empirical { values_ms })
    }
}

impl ServiceSampler for Empirical {
    fn sample_ms(&mut self, rng: &mut StdRng) -> f64 {
        self.values_ms[rng.random_range(0..self.values_ms.len())]
    }
}

/// Largest number of jobs one simulation may run (bounds memory: the waits are kept for
/// the percentiles).
pub const MAX_SIMULATED_JOBS: usize = 5_000_000;

/// Parameters of a simulation run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    /// Poisson arrival rate of jobs (per second).
    pub arrival_rate_per_s: f64,
    /// Number of identical FCFS servers (worker threads of the gateway).
    pub servers: u32,
    /// Jobs whose waits are recorded.
    pub jobs: usize,
    /// Jobs simulated first and discarded, so the queue starts near steady state.
    pub warmup_jobs: usize,
    /// Seed of the random number generator; equal seeds give equal results.
    pub seed: u64,
}

/// What a simulation run measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SimResult {
    /// Recorded jobs.
    pub jobs: usize,
    /// Mean time from arrival to start of service (ms).
    pub mean_wait_ms: f64,
    /// Mean time from arrival to end of service (ms).
    pub mean_response_ms: f64,
    /// Median wait (ms), linear interpolation.
    pub p50_wait_ms: f64,
    /// 95th percentile of the wait (ms).
    pub p95_wait_ms: f64,
    /// 99th percentile of the wait (ms).
    pub p99_wait_ms: f64,
    /// Busy time of the servers over servers × elapsed time of the recorded jobs.
    pub utilisation: f64,
}

impl SimResult {
    /// The summary of the recorded jobs' waits, their summed response times and the
    /// servers' utilisation; an error when no job was recorded.
    fn of(waits: &[f64], response_sum: f64, utilisation: f64) -> Result<SimResult, QueueError> {
        let summary =
            stats::summarize(waits).ok_or(QueueError::EmptyOrInvalid("no jobs".into()))?;
        Ok(SimResult {
            jobs: waits.len(),
            mean_wait_ms: summary.mean,
            mean_response_ms: response_sum / waits.len() as f64,
            p50_wait_ms: summary.p50,
            p95_wait_ms: summary.p95,
            p99_wait_ms: summary.p99,
            utilisation,
        })
    }
}

/// Discrete-event simulation of an M/G/c FCFS queue: Poisson arrivals at
/// `arrival_rate_per_s`, service times from `sampler`, each job taken by the server that
/// frees first. Deterministic for a given seed and sampler.
pub fn simulate(
    config: SimConfig,
    sampler: &mut impl ServiceSampler,
) -> Result<SimResult, QueueError> {
    let invalid = |m: &str| Err(QueueError::EmptyOrInvalid(m.into()));
    if config.servers == 0 {
        return invalid("at least one server");
    }
    if config.jobs == 0 || config.jobs + config.warmup_jobs > MAX_SIMULATED_JOBS {
        return invalid("jobs must be between 1 and MAX_SIMULATED_JOBS");
    }
    let Some(interarrival) = Exponential::with_mean_ms(1000.0 / config.arrival_rate_per_s) else {
        return invalid("arrival rate must be positive and finite");
    };
    let mut rng = StdRng::seed_from_u64(config.seed);
    let mut interarrival = interarrival;
    let mut free_at = vec![0.0f64; config.servers as usize];
    let mut now = 0.0;
    let mut waits = Vec::with_capacity(config.jobs);
    let (mut response_sum, mut busy) = (0.0, 0.0);
    let (mut window_start, mut window_end) = (0.0, 0.0f64);
    for i in 0..config.warmup_jobs + config.jobs {
        now += interarrival.sample_ms(&mut rng);
        let service = sampler.sample_ms(&mut rng);
        if !is_valid_time(service) {
            return invalid("the sampler returned a negative or non-finite service time");
        }
        let (server, free) = free_at
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((0, 0.0));
        let start = free.max(now);
        free_at[server] = start + service;
        if i == config.warmup_jobs {
            window_start = now;
        }
        if i >= config.warmup_jobs {
            waits.push(start - now);
            response_sum += start + service - now;
            busy += service;
            window_end = window_end.max(start + service);
        }
    }
    SimResult::of(
        &waits,
        response_sum,
        busy / (config.servers as f64 * (window_end - window_start)),
    )
}

/// A handshake-aware simulation of one FCFS server (this project's model, beyond the
/// studies): handshakes start as a Poisson process, and each brings a chain of jobs
/// (ClientHello, then the client's flight, ...) in which job i+1 reaches the server
/// `think_ms` after job i's service ends (the round trip and the client's work).
///
/// Why: the P-K model treats the k jobs of a handshake as independent Poisson arrivals.
/// They are not: a handshake's heavy job (the one with the key exchange) cannot arrive
/// before its light first job has been served, so when the server is busy the heavy
/// jobs of new handshakes are held back until it is free. The heavy jobs then queue
/// less than Poisson arrivals would, and P-K overstates the mean wait.
///
/// `chains` are per-handshake job service times (ms), e.g. measured per handshake at the
/// gateway; handshakes draw a chain uniformly at random. `round_trip_mean_ms` adds to
/// every think time an exponential delay of that mean (an emulated bearer's round trip;
/// 0 for none): once it is much longer than a job's sojourn the chain's jobs arrive
/// independently of the queue and the simulation tends to P-K. Returns the per-job waits.
pub fn simulate_chains(
    config: SimConfig,
    chains: &[Vec<f64>],
    think_ms: f64,
    round_trip_mean_ms: f64,
) -> Result<SimResult, QueueError> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let invalid = |m: &str| Err(QueueError::EmptyOrInvalid(m.into()));
    if config.servers != 1 {
        return invalid("the chain simulation has one server");
    }
    if chains.is_empty()
        || chains
            .iter()
            .any(|c| c.is_empty() || !c.iter().all(|&x| is_valid_time(x)))
    {
        return invalid("chains must be non-empty lists of valid service times");
    }
    if !is_valid_time(think_ms) || !is_valid_time(round_trip_mean_ms) {
        return invalid("think time and round trip must be non-negative and finite");
    }
    let mut round_trip = Exponential::with_mean_ms(round_trip_mean_ms);
    let total = config.warmup_jobs + config.jobs;
    if config.jobs == 0 || total > MAX_SIMULATED_JOBS {
        return invalid("jobs must be between 1 and MAX_SIMULATED_JOBS");
    }
    let Some(mut interarrival) = Exponential::with_mean_ms(1000.0 / config.arrival_rate_per_s)
    else {
        return invalid("arrival rate must be positive and finite");
    };
    let mut rng = StdRng::seed_from_u64(config.seed);
    // Pending job arrivals, earliest first: (time in ns as an integer key, handshake,
    // job index). Times are kept in f64 beside the key to avoid rounding the waits.
    let mut pending: BinaryHeap<Reverse<(u64, usize, usize)>> = BinaryHeap::new();
    let mut times: Vec<f64> = Vec::new();
    let mut chain_of: Vec<usize> = Vec::new();
    let mut next_start = 0.0f64;
    let mut free_at = 0.0f64;
    let (mut seen, mut waits) = (0usize, Vec::with_capacity(config.jobs));
    let (mut response_sum, mut busy) = (0.0, 0.0);
    let (mut window_start, mut window_end) = (0.0, 0.0f64);
    let key = |t: f64| (t * 1e6) as u64;
    while seen < total {
        // Start handshakes until the next one would come after the earliest pending job.
        while pending
            .peek()
            .is_none_or(|Reverse((k, _, _))| key(next_start) <= *k)
        {
            let h = chain_of.len();
            chain_of.push(rng.random_range(0..chains.len()));
            times.push(next_start);
            pending.push(Reverse((key(next_start), h, 0)));
            next_start += interarrival.sample_ms(&mut rng);
        }
        let Some(Reverse((_, h, j))) = pending.pop() else {
            break;
        };
        let arrival = times[h];
        let service = chains[chain_of[h]][j];
        let start = free_at.max(arrival);
        let end = start + service;
        free_at = end;
        if seen == config.warmup_jobs {
            window_start = arrival;
        }
        if seen >= config.warmup_jobs {
            waits.push(start - arrival);
            response_sum += end - arrival;
            busy += service;
            window_end = window_end.max(end);
        }
        seen += 1;
        if j + 1 < chains[chain_of[h]].len() {
            let extra = round_trip
                .as_mut()
                .map_or(0.0, |law| law.sample_ms(&mut rng));
            let t = end + think_ms + extra;
            times[h] = t;
            pending.push(Reverse((key(t), h, j + 1)));
        }
    }
    SimResult::of(&waits, response_sum, busy / (window_end - window_start))
}

#[cfg(test)]
mod tests {
    use super::super::pk_mean_wait_ms;
    use super::*;

    fn run(rate: f64, servers: u32, sampler: &mut impl ServiceSampler) -> SimResult {
        let cfg = SimConfig {
            arrival_rate_per_s: rate,
            servers,
            jobs: 200_000,
            warmup_jobs: 5_000,
            seed: 7,
        };
        simulate(cfg, sampler).unwrap()
    }

    #[test]
    fn simulation_agrees_with_pollaczek_khinchin() {
        // M/D/1, rho = 0.5, E[X] = 1 ms: W = 0.5 ms.
        let d = run(500.0, 1, &mut Deterministic { service_ms: 1.0 });
        assert!((d.mean_wait_ms - 0.5).abs() / 0.5 < 0.03, "{d:?}");
        assert!((d.mean_response_ms - d.mean_wait_ms - 1.0).abs() < 1e-9);
        assert!((d.utilisation - 0.5).abs() < 0.02, "{d:?}");
        // M/M/1, rho = 0.5: W = 1 ms; P(W > t) = rho·e^{-(1-rho)t}, so p95 = 2 ln 10 ms.
        let m = run(500.0, 1, &mut Exponential::with_mean_ms(1.0).unwrap());
        assert!((m.mean_wait_ms - 1.0).abs() < 0.05, "{m:?}");
        assert!(
            (m.p95_wait_ms - 2.0 * 10f64.ln()).abs() / (2.0 * 10f64.ln()) < 0.05,
            "{m:?}"
        );
        assert_eq!(m.p50_wait_ms, 0.0);
    }

    #[test]
    fn simulation_agrees_with_erlang_c_and_is_reproducible() {
        // M/M/2 at rho = 0.5 (a = 1): Wq = 1/3 ms.
        let m = run(1000.0, 2, &mut Exponential::with_mean_ms(1.0).unwrap());
        assert!(
            (m.mean_wait_ms - 1.0 / 3.0).abs() / (1.0 / 3.0) < 0.05,
            "{m:?}"
        );
        // Empirical two-point service (1 or 3 ms, E[X] = 2, E[X^2] = 5) at 250/s: P-K 1.25 ms.
        let mut emp = Empirical::new(vec![1.0, 3.0]).unwrap();
        let e = run(250.0, 1, &mut emp);
        let pk = pk_mean_wait_ms(250.0, 2.0, 5.0).unwrap();
        assert!((e.mean_wait_ms - pk).abs() / pk < 0.05, "{e:?} vs {pk}");
        let again = run(250.0, 1, &mut Empirical::new(vec![1.0, 3.0]).unwrap());
        assert_eq!(e, again);
    }

    #[test]
    fn simulation_rejects_bad_input() {
        let cfg = SimConfig {
            arrival_rate_per_s: 1.0,
            servers: 0,
            jobs: 10,
            warmup_jobs: 0,
            seed: 1,
        };
        assert!(simulate(cfg, &mut Deterministic { service_ms: 1.0 }).is_err());
        let cfg = SimConfig {
            servers: 1,
            arrival_rate_per_s: 0.0,
            ..cfg
        };
        assert!(simulate(cfg, &mut Deterministic { service_ms: 1.0 }).is_err());
        let cfg = SimConfig {
            arrival_rate_per_s: 1.0,
            jobs: 0,
            ..cfg
        };
        assert!(simulate(cfg, &mut Deterministic { service_ms: 1.0 }).is_err());
        let cfg = SimConfig { jobs: 10, ..cfg };
        assert!(simulate(cfg, &mut |_: &mut StdRng| -1.0).is_err());
        assert!(Empirical::new(vec![]).is_none());
        assert!(Exponential::with_mean_ms(0.0).is_none());
    }

    #[test]
    fn one_job_chains_are_the_m_g_1_queue() {
        // A chain of one job is a plain Poisson job stream: M/D/1 at rho = 0.5.
        let cfg = SimConfig {
            arrival_rate_per_s: 500.0,
            servers: 1,
            jobs: 100_000,
            warmup_jobs: 5_000,
            seed: 7,
        };
        let sim = simulate_chains(cfg, &[vec![1.0]], 0.0, 0.0).unwrap();
        let pk = pk_mean_wait_ms(500.0, 1.0, 1.0).unwrap();
        assert!(
            (sim.mean_wait_ms - pk).abs() / pk < 0.05,
            "{} vs {pk}",
            sim.mean_wait_ms
        );
    }

    #[test]
    fn chained_heavy_jobs_wait_less_than_independent_arrivals() {
        // A light job then a heavy one, at the same load: the chain queues less than
        // P-K with the two jobs as independent Poisson arrivals says.
        let (light, heavy) = (0.01, 1.0);
        let rate = 600.0;
        let (sim, pk) = light_heavy_chain(rate, 100_000, 5_000, 11, 0.0);
        assert!(sim.mean_wait_ms < 0.9 * pk, "{} vs {pk}", sim.mean_wait_ms);
        assert!((sim.utilisation - rate * (light + heavy) / 1000.0).abs() < 0.03);
    }

    #[test]
    fn a_long_random_round_trip_restores_pollaczek_khinchin() {
        // The chain of the previous test, but each answer comes after an exponential
        // round trip 50x a heavy job: the jobs arrive independently of the queue again.
        let (sim, pk) = light_heavy_chain(300.0, 200_000, 20_000, 12, 50.0);
        assert!(
            (sim.mean_wait_ms - pk).abs() / pk < 0.06,
            "{} vs {pk}",
            sim.mean_wait_ms
        );
        let cfg = SimConfig {
            arrival_rate_per_s: 300.0,
            servers: 1,
            jobs: 10,
            warmup_jobs: 0,
            seed: 12,
        };
        assert!(simulate_chains(cfg, &[vec![1.0]], 0.0, -1.0).is_err());
    }

    /// Handshakes of a 0.01 ms job then a 1 ms job, 0.05 ms apart plus an exponential
    /// round trip of `round_trip_ms`: the simulation, and P-K with the two jobs as
    /// independent Poisson arrivals at the same load.
    fn light_heavy_chain(
        rate: f64,
        jobs: usize,
        warmup_jobs: usize,
        seed: u64,
        round_trip_ms: f64,
    ) -> (SimResult, f64) {
        let (light, heavy) = (0.01, 1.0);
        let cfg = SimConfig {
            arrival_rate_per_s: rate,
            servers: 1,
            jobs,
            warmup_jobs,
            seed,
        };
        let sim = simulate_chains(cfg, &[vec![light, heavy]], 0.05, round_trip_ms).unwrap();
        let mean = (light + heavy) / 2.0;
        let m2 = (light * light + heavy * heavy) / 2.0;
        (sim, pk_mean_wait_ms(2.0 * rate, mean, m2).unwrap())
    }

    #[test]
    fn chain_simulation_refuses_bad_input() {
        let cfg = SimConfig {
            arrival_rate_per_s: 10.0,
            servers: 1,
            jobs: 10,
            warmup_jobs: 0,
            seed: 1,
        };
        assert!(simulate_chains(cfg, &[], 0.0, 0.0).is_err());
        assert!(simulate_chains(cfg, &[vec![]], 0.0, 0.0).is_err());
        assert!(simulate_chains(cfg, &[vec![1.0]], -1.0, 0.0).is_err());
    }
}
