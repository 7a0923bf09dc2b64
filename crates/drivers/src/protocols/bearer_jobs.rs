//! Many handshakes of the modern suites over emulated bearers at once: the
//! configurations are built once and shared, each suite's servers run behind one
//! gateway (the same worker and endpoint model as WTLS's), each run gets its own relay
//! and seed, and `parallelism` runs go on at a time (most of a run is waiting on the
//! emulated link, so dozens share two cores without disturbing each other's timing).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_spine::Protocol;

use super::dtls::DtlsConfig;
use super::edhoc::EdhocConfig;
use super::udp::{client_over_bearer, ClientSteps, UdpRun};
use super::Suite;
use crate::gateway::{spawn_gateway, GatewayConfig, GatewayHandle, HandshakeServers};

/// How long a bearer gateway keeps a handshake: a lossy DTLS run's timers double from
/// 9 s (RFC 7925), so a handshake may take minutes.
const BEARER_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(300);

/// A gateway for the bearer runs, serving `servers` (also a configuration outside
/// [`ModernConfigs`], such as DTLS without the cookie exchange).
pub fn bearer_gateway<S: wtlsperf_spine::Handshake + Send + 'static>(
    servers: HandshakeServers<S>,
) -> anyhow::Result<GatewayHandle> {
    let mut cfg = GatewayConfig::lab("127.0.0.1:0".parse()?, servers);
    cfg.handshake_timeout = BEARER_HANDSHAKE_TIMEOUT;
    spawn_gateway(cfg)
}

/// Every modern suite's configuration and the gateway serving it, shared by all runs.
pub struct ModernConfigs {
    dtls: Vec<(Suite, Arc<DtlsConfig>, GatewayHandle)>,
    edhoc: (EdhocConfig, GatewayHandle),
    /// DTLS 1.3 configurations, built on first use (each costs a certificate chain and
    /// two wolfSSL contexts), per suite and MTU.
    #[cfg(feature = "dtls13")]
    dtls13: Mutex<Vec<Dtls13Served>>,
}

/// A DTLS 1.3 configuration and the gateway serving it.
#[cfg(feature = "dtls13")]
type Dtls13Served = (
    super::dtls13::Dtls13Suite,
    u16,
    Arc<super::dtls13::Dtls13Config>,
    Arc<GatewayHandle>,
);

impl ModernConfigs {
    /// Builds the configurations with the protocols' standard timers (RFC 7925 for
    /// DTLS, RFC 7252 for CoAP) and starts their gateways.
    pub fn new() -> anyhow::Result<ModernConfigs> {
        let dtls = Suite::ALL
            .into_iter()
            .filter(|s| matches!(s, Suite::DtlsEcdheEcdsa { .. } | Suite::DtlsPsk))
            .map(|s| {
                let cfg = Arc::new(DtlsConfig::new(s)?.in_real_time());
                let server = Arc::clone(&cfg);
                let gateway = bearer_gateway(HandshakeServers {
                    protocol: Protocol::Dtls12,
                    make: Arc::new(move || server.server()),
                })?;
                Ok((s, cfg, gateway))
            })
            .collect::<anyhow::Result<_>>()?;
        let edhoc = EdhocConfig::new()?;
        let server = edhoc.clone();
        let gateway = bearer_gateway(HandshakeServers {
            protocol: Protocol::Edhoc,
            make: Arc::new(move || server.server()),
        })?;
        Ok(ModernConfigs {
            dtls,
            edhoc: (edhoc, gateway),
            #[cfg(feature = "dtls13")]
            dtls13: Mutex::new(Vec::new()),
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
            let (cfg, gateway) = &self.edhoc;
            let client = cfg.client(seed)?;
            return client_over_bearer(
                client,
                gateway.local_addr(),
                profile,
                seed,
                steps,
                deadline,
            );
        }
        let (_, cfg, gateway) = self
            .dtls
            .iter()
            .find(|(s, _, _)| *s == suite)
            .ok_or_else(|| anyhow::anyhow!("no configuration for {suite:?}"))?;
        client_over_bearer(
            cfg.client()?,
            gateway.local_addr(),
            profile,
            seed,
            steps,
            deadline,
        )
    }
}

#[cfg(feature = "dtls13")]
impl ModernConfigs {
    /// The configuration of `suite` fragmenting to `mtu` and its gateway, built on
    /// first use.
    fn dtls13(
        &self,
        suite: super::dtls13::Dtls13Suite,
        mtu: u16,
    ) -> anyhow::Result<(Arc<super::dtls13::Dtls13Config>, Arc<GatewayHandle>)> {
        let mut served = self.dtls13.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, c, g)) = served.iter().find(|(s, m, _, _)| *s == suite && *m == mtu) {
            return Ok((Arc::clone(c), Arc::clone(g)));
        }
        let cfg = Arc::new(super::dtls13::Dtls13Config::new(suite)?.with_mtu(mtu));
        let server = Arc::clone(&cfg);
        let gateway = Arc::new(bearer_gateway(HandshakeServers {
            protocol: Protocol::Dtls13,
            make: Arc::new(move || server.server()),
        })?);
        served.push((suite, mtu, Arc::clone(&cfg), Arc::clone(&gateway)));
        Ok((cfg, gateway))
    }

    /// One DTLS 1.3 handshake of `suite` over `profile`, both sides fragmenting to the
    /// largest UDP payload of the profile's MTU.
    pub fn run_dtls13(
        &self,
        suite: super::dtls13::Dtls13Suite,
        profile: &LinkProfile,
        seed: u64,
        steps: Option<&ClientSteps>,
        deadline: Duration,
    ) -> anyhow::Result<UdpRun> {
        let (cfg, gateway) = self.dtls13(suite, profile.datagram_payload_limit())?;
        client_over_bearer(
            cfg.client()?,
            gateway.local_addr(),
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
