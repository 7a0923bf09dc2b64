//! Fleet sizing (`fleet_sizing.csv`): how many gateway nodes a handshake rate needs so
//! that a handshake's mean queueing delay stays under a target, from the measured job
//! service times of each group's equal mixture (server-authenticated).
//!
//! Two fleets bound the answer. **Pooled**: one M/G/c queue over every worker of every
//! node (c = nodes x workers, Allen-Cunneen), what a balancer that always picks an idle
//! worker would give. **Hashed**: what the laboratory's fleet does: nginx hashes the
//! client address to a node and the kernel's `SO_REUSEPORT` hashes the 4-tuple to a
//! worker, a random split of a Poisson stream, so every worker is its own M/G/1 queue fed
//! lambda / (nodes x workers) (Pollaczek-Khinchin). The hashed fleet needs more nodes at a
//! tight target; the discrete-event simulator checks both at the sizes chosen, with the
//! measured job times resampled (not their two moments). No size loads a worker beyond
//! [`MAX_UTILISATION`].

use serde::Serialize;
use wtlsperf_models::queue::{
    allen_cunneen_wait_ms, simulate, Empirical, GroupLoad, SimConfig, Variant,
};
use wtlsperf_models::Authentication;

use super::modelled::{category3_groups, measured_load, mixtures, pooled_jobs};
use crate::evaluate::processing::ProcessingResults;

/// Handshake rates sized for (per second).
pub const RATES: [f64; 4] = [1_000.0, 10_000.0, 100_000.0, 1_000_000.0];
/// Targets for a handshake's mean queueing delay (ms).
pub const WAIT_TARGETS_MS: [f64; 3] = [0.5, 2.0, 10.0];
/// Worker threads per node.
pub const WORKERS: [u32; 2] = [1, 4];
/// Jobs per simulation: at least 20 000, and 100 per server so that a large pool fills
/// up before the waits are read; at most 50 000 (the table takes a few seconds).
const SIM_JOBS: usize = 20_000;
const SIM_JOBS_PER_SERVER: usize = 100;
const MAX_SIM_JOBS: usize = 50_000;
/// Highest utilisation a worker may be sized for. A large pool meets any wait target at a
/// utilisation near 1 (its wait scales with E[S] / (c - a)), where one more client or a
/// node's loss overloads it; operators keep headroom, and so does the table.
pub const MAX_UTILISATION: f64 = 0.8;
/// Largest fleet considered.
const MAX_NODES: u32 = 100_000;

/// One row of `fleet_sizing.csv`.
#[derive(Debug, Clone, Serialize)]
pub struct FleetSizingRow {
    pub group: String,
    pub mixture: String,
    pub auth: String,
    pub handshakes_per_s: f64,
    pub wait_target_ms: f64,
    pub workers_per_node: u32,
    /// Server time per handshake (ms) and jobs (datagrams served) per handshake.
    pub service_per_handshake_ms: f64,
    pub jobs_per_handshake: f64,
    /// Nodes needed, pooled (M/G/c) and hashed (M/G/1 per worker).
    pub nodes_pooled: u32,
    pub nodes_hashed: u32,
    /// A handshake's mean queueing delay at those sizes: model, and simulation.
    pub delay_pooled_ms: f64,
    pub delay_pooled_des_ms: Option<f64>,
    pub delay_hashed_ms: f64,
    pub delay_hashed_des_ms: Option<f64>,
    /// Utilisation of a worker at the hashed size.
    pub utilisation_hashed: f64,
}

/// A handshake's mean queueing delay (ms): jobs per handshake times a job's mean wait in
/// an M/G/c queue of `servers` fed `job_rate` jobs per second.
fn delay_ms(load: &GroupLoad, job_rate: f64, servers: u32) -> Option<f64> {
    allen_cunneen_wait_ms(
        job_rate,
        servers,
        load.mean_service_ms,
        load.second_moment_ms2,
    )
    .map(|w| w * load.jobs_per_handshake)
}

/// The fewest nodes whose delay, by `delay(nodes)`, is within `target` (a `None` delay:
/// not enough nodes).
fn fewest_nodes(target: f64, delay: impl Fn(u32) -> Option<f64>) -> Option<u32> {
    // The delay falls as nodes are added, so the first that meets the target is the
    // answer; doubling then bisecting keeps the search short at a million per second.
    let ok = |n: u32| delay(n).is_some_and(|d| d <= target);
    let mut hi = 1;
    while !ok(hi) {
        hi = hi.checked_mul(2).filter(|&h| h <= MAX_NODES)?;
    }
    let mut lo = hi / 2;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// A handshake's mean queueing delay in the simulator (ms), for `servers` FIFO servers fed
/// `job_rate` jobs per second with service times resampled from `samples`.
fn simulated_delay_ms(samples: &[f64], job_rate: f64, servers: u32, k: f64) -> Option<f64> {
    let mut sampler = Empirical::new(samples.to_vec())?;
    let jobs = (servers as usize)
        .saturating_mul(SIM_JOBS_PER_SERVER)
        .clamp(SIM_JOBS, MAX_SIM_JOBS);
    let cfg = SimConfig {
        arrival_rate_per_s: job_rate,
        servers,
        jobs,
        warmup_jobs: jobs / 5,
        seed: 2004,
    };
    simulate(cfg, &mut sampler).ok().map(|r| r.mean_wait_ms * k)
}

/// The table, from the measured service times.
pub fn rows(processing: &ProcessingResults) -> Vec<FleetSizingRow> {
    let auth = Authentication::ServerAuth;
    let mut out = Vec::new();
    for group in category3_groups() {
        let Some((mix, mixture)) = mixtures(&group).into_iter().find(|(m, _)| m == "equal") else {
            continue;
        };
        let Some(load) = measured_load(processing, auth, &mixture, Variant::Corrected) else {
            continue;
        };
        let samples = pooled_jobs(processing, auth, &mixture);
        let k = load.jobs_per_handshake;
        for rate in RATES {
            let job_rate = rate * k;
            for target in WAIT_TARGETS_MS {
                for workers in WORKERS {
                    let per_worker = |n: u32| job_rate / f64::from(n.saturating_mul(workers));
                    let headroom =
                        |n: u32| per_worker(n) * load.mean_service_ms / 1000.0 <= MAX_UTILISATION;
                    let pooled = |n: u32| {
                        delay_ms(&load, job_rate, n.saturating_mul(workers)).filter(|_| headroom(n))
                    };
                    let hashed = |n: u32| delay_ms(&load, per_worker(n), 1).filter(|_| headroom(n));
                    let (Some(np), Some(nh)) =
                        (fewest_nodes(target, pooled), fewest_nodes(target, hashed))
                    else {
                        continue;
                    };
                    out.push(FleetSizingRow {
                        group: group.id(),
                        mixture: mix.clone(),
                        auth: super::auth_name(auth).to_owned(),
                        handshakes_per_s: rate,
                        wait_target_ms: target,
                        workers_per_node: workers,
                        service_per_handshake_ms: load.mean_service_ms * k,
                        jobs_per_handshake: k,
                        nodes_pooled: np,
                        nodes_hashed: nh,
                        delay_pooled_ms: pooled(np).unwrap_or(f64::NAN),
                        delay_pooled_des_ms: simulated_delay_ms(
                            &samples,
                            job_rate,
                            np * workers,
                            k,
                        ),
                        delay_hashed_ms: hashed(nh).unwrap_or(f64::NAN),
                        delay_hashed_des_ms: simulated_delay_ms(&samples, per_worker(nh), 1, k),
                        utilisation_hashed: per_worker(nh) * load.mean_service_ms / 1000.0,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(mean: f64, m2: f64, k: f64) -> GroupLoad {
        GroupLoad {
            variant: Variant::Corrected,
            jobs_per_handshake: k,
            mean_service_ms: mean,
            second_moment_ms2: m2,
        }
    }

    #[test]
    fn the_fewest_nodes_meet_the_target_and_one_fewer_does_not() {
        // Deterministic 0.1 ms jobs, 4 per handshake, 100 000 handshakes/s: 40 Erlangs.
        let l = load(0.1, 0.01, 4.0);
        let job_rate = 400_000.0;
        let hashed = |n: u32| delay_ms(&l, job_rate / f64::from(n), 1);
        let pooled = |n: u32| delay_ms(&l, job_rate, n);
        let nh = fewest_nodes(0.5, hashed).unwrap();
        let np = fewest_nodes(0.5, pooled).unwrap();
        assert!(hashed(nh).unwrap() <= 0.5);
        assert!(hashed(nh - 1).is_none_or(|d| d > 0.5));
        assert!(pooled(np).unwrap() <= 0.5);
        assert!(pooled(np - 1).is_none_or(|d| d > 0.5));
        // At least the offered load, and pooling never needs more nodes than hashing.
        assert!(np >= 41 && np <= nh, "pooled {np}, hashed {nh}");
    }

    #[test]
    fn an_unreachable_target_has_no_size() {
        // A target below zero cannot be met by any fleet.
        assert_eq!(fewest_nodes(-1.0, |_| Some(0.0)), None);
    }

    #[test]
    fn the_simulator_agrees_with_pollaczek_khinchin_for_one_worker() {
        // Exponential-like spread: samples 0.05 and 0.15 ms, mean 0.1, at rho = 0.5.
        let samples: Vec<f64> = (0..1000)
            .map(|i| if i % 2 == 0 { 0.05 } else { 0.15 })
            .collect();
        let l = load(0.1, (0.05f64.powi(2) + 0.15f64.powi(2)) / 2.0, 1.0);
        let model = delay_ms(&l, 5_000.0, 1).unwrap();
        let des = simulated_delay_ms(&samples, 5_000.0, 1, 1.0).unwrap();
        assert!(
            (des - model).abs() / model < 0.15,
            "model {model}, des {des}"
        );
    }
}
