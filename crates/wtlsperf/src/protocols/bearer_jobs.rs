//! Many handshakes of the modern suites over emulated bearers at once: the
//! configurations are built once and shared, each run gets its own relay, server thread
//! and seed, and `parallelism` runs go on at a time (most of a run is waiting on the
//! emulated link, so dozens share two cores without disturbing each other's timing).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use wtlsperf_bearer::LinkProfile;

use super::dtls::DtlsConfig;
use super::edhoc::EdhocConfig;
use super::udp::{handshake_over_bearer, ClientSteps, UdpRun};
use super::Suite;

/// Every modern suite's configuration, shared by all runs.
pub struct ModernConfigs {
    dtls: Vec<(Suite, Arc<DtlsConfig>)>,
    edhoc: EdhocConfig,
}

impl ModernConfigs {
    /// Builds the configurations with the protocols' standard timers (RFC 7925 for
    /// DTLS, RFC 7252 for CoAP).
    pub fn new() -> anyhow::Result<ModernConfigs> {
        let dtls = Suite::ALL
            .into_iter()
            .filter(|s| matches!(s, Suite::DtlsEcdheEcdsa { .. } | Suite::DtlsPsk))
            .map(|s| Ok((s, Arc::new(DtlsConfig::new(s)?.in_real_time()))))
            .collect::<anyhow::Result<_>>()?;
        Ok(ModernConfigs {
            dtls,
            edhoc: EdhocConfig::new()?,
        })
    }

    /// One handshake of `suite` over `profile`.
    pub fn run(
        &self,
        suite: Suite,
        profile: &LinkProfile,
        seed: u64,
        steps: Option<&ClientSteps>,
        deadline: Duration,
    ) -> anyhow::Result<UdpRun> {
        if suite == Suite::EdhocMethod3Suite2 {
            let server = self.edhoc.clone();
            let client = self.edhoc.client(seed)?;
            return handshake_over_bearer(
                client,
                move || server.server(),
                profile,
                seed,
                steps,
                deadline,
            );
        }
        let cfg = self
            .dtls
            .iter()
            .find(|(s, _)| *s == suite)
            .map(|(_, c)| Arc::clone(c))
            .ok_or_else(|| anyhow::anyhow!("no configuration for {suite:?}"))?;
        let server = Arc::clone(&cfg);
        handshake_over_bearer(
            cfg.client()?,
            move || server.server(),
            profile,
            seed,
            steps,
            deadline,
        )
    }
}

/// One handshake of `suite` with freshly built configurations.
pub fn run_modern(
    suite: Suite,
    profile: &LinkProfile,
    seed: u64,
    steps: Option<&ClientSteps>,
    deadline: Duration,
) -> anyhow::Result<UdpRun> {
    ModernConfigs::new()?.run(suite, profile, seed, steps, deadline)
}

/// Runs `work` items through `run`, `parallelism` at a time; results in `work`'s order.
pub fn run_concurrently<J: Sync, T: Send>(
    work: &[J],
    parallelism: usize,
    run: impl Fn(usize, &J) -> T + Sync,
) -> Vec<T> {
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..work.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..parallelism.clamp(1, work.len().max(1)) {
            s.spawn(|| loop {
                let i = {
                    let mut g = next.lock().unwrap_or_else(|e| e.into_inner());
                    let i = *g;
                    *g += 1;
                    i
                };
                let Some(job) = work.get(i) else { break };
                let r = run(i, job);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order() {
        let out = run_concurrently(&[3, 1, 2], 2, |i, x| i * 10 + x);
        assert_eq!(out, vec![3, 11, 22]);
    }
}
