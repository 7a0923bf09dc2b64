//! The clients and servers of each protocol a load run offers: WTLS with its caches and
//! resumed sessions, DTLS 1.2 and EDHOC with fresh connections of one suite. The
//! generator and the gateway worker are the same for all of them.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::RngExt;
use wtls::handshake::{AuthMode, Client, ClientConfig, Negotiated, StoredSession};
use wtls::probe::Probe;
use wtlsperf_spine::Now;

use super::generator::LoadClients;
use crate::gateway::HandshakeServers;
use crate::protocols::dtls::DtlsConfig;
use crate::protocols::edhoc::EdhocConfig;
use crate::protocols::Suite;

/// Sessions kept for resumption.
const SESSION_POOL: usize = 1024;

/// WTLS clients of one configuration; a share of them resumes a session kept from an
/// earlier completed handshake.
pub(crate) struct WtlsClients {
    cfg: Arc<ClientConfig>,
    auth: AuthMode,
    resume_ratio: f64,
    sessions: Vec<StoredSession>,
}

impl WtlsClients {
    pub(crate) fn new(cfg: Arc<ClientConfig>, auth: AuthMode, resume_ratio: f64) -> Self {
        WtlsClients {
            cfg,
            auth,
            resume_ratio,
            sessions: Vec::new(),
        }
    }
}

impl LoadClients for WtlsClients {
    type Client = Client;

    fn client(&mut self, now: Now, rng: &mut StdRng) -> Option<(Client, bool)> {
        let resume = (!self.sessions.is_empty() && rng.random::<f64>() < self.resume_ratio)
            .then(|| self.sessions[rng.random_range(0..self.sessions.len())].clone());
        let resumed = resume.is_some();
        let client = Client::new(self.cfg.clone(), self.auth, resume, Probe::off(), now);
        Some((client, resumed))
    }

    fn kind(negotiated: &Negotiated) -> &'static str {
        wtls::endpoint::kind_name(negotiated.kind)
    }

    fn completed(&mut self, client: &Client, rng: &mut StdRng) {
        if self.resume_ratio <= 0.0 {
            return;
        }
        if let Some(s) = client.session() {
            if self.sessions.len() < SESSION_POOL {
                self.sessions.push(s);
            } else {
                let j = rng.random_range(0..SESSION_POOL);
                self.sessions[j] = s;
            }
        }
    }
}

/// Fresh DTLS 1.2 client connections of one suite (no resumption).
pub(crate) struct DtlsClients(pub(crate) Arc<DtlsConfig>);

impl LoadClients for DtlsClients {
    type Client = crate::protocols::dtls::DtlsEndpoint;

    fn client(&mut self, _now: Now, _rng: &mut StdRng) -> Option<(Self::Client, bool)> {
        self.0.client().ok().map(|c| (c, false))
    }
}

/// Fresh EDHOC initiators, each with its own seed (its connection identifier).
pub(crate) struct EdhocClients {
    pub(crate) cfg: Arc<EdhocConfig>,
    pub(crate) next_seed: u64,
}

impl LoadClients for EdhocClients {
    type Client = crate::protocols::edhoc::EdhocClient;

    fn client(&mut self, _now: Now, _rng: &mut StdRng) -> Option<(Self::Client, bool)> {
        self.next_seed += 1;
        self.cfg.client(self.next_seed).ok().map(|c| (c, false))
    }
}

/// The DTLS 1.2 server of a configuration, one connection per address.
pub(crate) fn dtls_servers(
    cfg: Arc<DtlsConfig>,
) -> HandshakeServers<crate::protocols::dtls::DtlsEndpoint> {
    HandshakeServers {
        protocol: wtlsperf_spine::Protocol::Dtls12,
        make: Arc::new(move || cfg.server()),
    }
}

/// The EDHOC responder of a configuration, one per address.
pub(crate) fn edhoc_servers(
    cfg: Arc<EdhocConfig>,
) -> HandshakeServers<crate::protocols::edhoc::EdhocServer> {
    HandshakeServers {
        protocol: wtlsperf_spine::Protocol::Edhoc,
        make: Arc::new(move || cfg.server()),
    }
}

/// Whether a suite's protocol runs on DTLS (else EDHOC).
pub(crate) fn is_dtls(suite: Suite) -> bool {
    suite.protocol() == crate::protocols::Protocol::Dtls12
}

/// Server CPU per handshake of a modern suite in memory (us), `runs` handshakes
/// measured through the suite's own bench: the capacity bound of a load run.
pub(super) fn modern_server_cpu_us(suite: Suite, runs: usize) -> anyhow::Result<Vec<f64>> {
    let m = crate::protocols::measure_suite(suite, runs.max(1), 0)?;
    Ok(vec![m.server_cpu_us])
}

/// Fresh DTLS 1.3 client connections of one configuration (wolfSSL; no resumption).
#[cfg(feature = "dtls13")]
pub(super) struct Dtls13Clients(pub(super) Arc<crate::protocols::dtls13::Dtls13Config>);

#[cfg(feature = "dtls13")]
impl LoadClients for Dtls13Clients {
    type Client = crate::protocols::dtls13::Dtls13Endpoint;

    fn client(&mut self, _now: Now, _rng: &mut StdRng) -> Option<(Self::Client, bool)> {
        self.0.client().ok().map(|c| (c, false))
    }
}

/// The DTLS 1.3 server of a configuration, one connection per address.
#[cfg(feature = "dtls13")]
pub(super) fn dtls13_servers(
    cfg: Arc<crate::protocols::dtls13::Dtls13Config>,
) -> HandshakeServers<crate::protocols::dtls13::Dtls13Endpoint> {
    HandshakeServers {
        protocol: wtlsperf_spine::Protocol::Dtls13,
        make: Arc::new(move || cfg.server()),
    }
}

/// Server CPU per DTLS 1.3 handshake in memory (us): the median of `runs` handshakes
/// through the spine's pair, as [`modern_server_cpu_us`] gives for the others.
#[cfg(feature = "dtls13")]
pub(super) fn dtls13_server_cpu_us(
    cfg: &crate::protocols::dtls13::Dtls13Config,
    runs: usize,
) -> anyhow::Result<Vec<f64>> {
    let mut cpu = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let run = crate::protocols::run_in_memory(cfg.client()?, || cfg.server())?;
        cpu.push(run.server_cpu_ns as f64 / 1e3);
    }
    let median = wtlsperf_models::stats::median(&cpu)
        .ok_or_else(|| anyhow::anyhow!("no DTLS 1.3 handshake ran"))?;
    Ok(vec![median])
}
