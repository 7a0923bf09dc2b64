//! WAP WTLS 1.0, the project's own engine, on the bench: the 24 CA/leaf key cases of
//! the thesis' Table 3.3 (`256p/256p`: CA and leaf on P-256), server-authenticated or
//! mutual (`256p/256p-mutual`), served by the real gateway (every case from one PKI).

use std::sync::Arc;

use wtls::handshake::{AuthMode, Client, ServerConnection};
use wtls::probe::Probe;
use wtls::suite::Case;
use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{AnyHandshake, ProtocolId, UnknownName};

use super::served::bearer_gateway;
use super::{Bench, Configuration, Contender, NotPriced, ProtocolEntry, Served};
use super::{LoadSides, Timers, Traits};
use crate::load::{LoadReport, LoadSpec};
use crate::bearer_runs::bearer_retransmit_timeout;
use crate::device::ClientSteps;
use crate::gateway::GatewayHandle;
use crate::protocols::{measure_in_memory, model, run_in_memory, wtls_client, SuiteMeasurement};
use crate::setup::{self, case_server_config, gateway_server_config, ClientAuth, Options};

/// The entry.
pub struct Wtls;

/// Suffix of a mutual configuration's text.
const MUTUAL: &str = "-mutual";

impl ProtocolEntry for Wtls {
    fn id(&self) -> ProtocolId {
        wtls::handshake::WTLS
    }
    fn title(&self) -> &'static str {
        "WAP WTLS 1.0 (WAP-261), the project's engine"
    }
    fn configurations(&self) -> Vec<Contender> {
        let mut out = Vec::new();
        for case in Case::ALL.into_iter().filter(Case::is_available) {
            for auth in [Authentication::ServerAuth, Authentication::Mutual] {
                out.push(Contender::new(WtlsCase { case, auth }));
            }
        }
        out
    }
    fn parse(&self, text: &str) -> Result<Contender, UnknownName> {
        let (case, auth) = match text.strip_suffix(MUTUAL) {
            Some(c) => (c, Authentication::Mutual),
            None => (text, Authentication::ServerAuth),
        };
        let unknown = || {
            let names = Case::ALL.into_iter().filter(Case::is_available).map(|c| {
                &*Box::leak(c.to_string().into_boxed_str())
            });
            UnknownName::new("wtls configuration (CA/leaf, -mutual)", text, names)
        };
        let case = Case::parse(case).map_err(|_| unknown())?;
        if !case.is_available() {
            return Err(unknown());
        }
        Ok(Contender::new(WtlsCase { case, auth }))
    }
    fn timers(&self, bearer: &LinkProfile) -> Timers {
        Timers {
            initial: bearer_retransmit_timeout(bearer),
            backoff: 2.0,
            ceiling: None,
            max_retransmissions: crate::protocols::WTLS_MAX_RETRANSMISSIONS,
            source: "WAP-261 leaves the timer to the transport (WAP-224 WTP or the \
                     application); ours follows the bearer: 2 x (mean + 4 sd traversal + \
                     largest flight's serialisation) + processing, doubling",
        }
    }
}

/// A WTLS case in one authentication mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WtlsCase {
    pub case: Case,
    pub auth: Authentication,
}

impl WtlsCase {
    pub fn mode(&self) -> AuthMode {
        match self.auth {
            Authentication::Mutual => AuthMode::Mutual,
            _ => AuthMode::ServerAuth,
        }
    }
}

impl Configuration for WtlsCase {
    fn entry(&self) -> &'static dyn ProtocolEntry {
        &Wtls
    }
    fn name(&self) -> String {
        match self.auth {
            Authentication::Mutual => format!("{}{MUTUAL}", self.case),
            _ => self.case.to_string(),
        }
    }
    fn auth(&self) -> Authentication {
        self.auth
    }
    fn traits(&self) -> Traits {
        Traits {
            level: format!("category {}", self.case.category),
            // Static ECDH (or RSA key transport): a leaked server key opens every
            // recorded session.
            forward_secrecy: false,
            post_quantum_key_exchange: false,
            uses_p256: true,
        }
    }
    fn measure_in_memory(
        &self,
        bench: Bench<'_>,
        reps: usize,
        warmup: usize,
    ) -> anyhow::Result<SuiteMeasurement> {
        let creds = bench.store.case(&self.case)?;
        let opts = Options::default();
        let server = Arc::new(case_server_config(&creds, ClientAuth::Optional, &opts));
        let client = Arc::new(setup::client_config(&creds, &opts, false));
        let mode = self.mode();
        let handshake = || {
            let now = setup::now();
            let c = Client::new(Arc::clone(&client), mode, None, Probe::off(), now);
            run_in_memory(c, || {
                Ok(ServerConnection::new(Arc::clone(&server), Probe::off(), now))
            })
        };
        measure_in_memory(reps, warmup, handshake, || Ok(None))
    }
    /// The real gateway, serving every case of the store, with two workers (the bearer
    /// runs' clients are many, their jobs short).
    fn serve(&self, bench: Bench<'_>, _payload_limit: u16) -> anyhow::Result<Arc<dyn Served>> {
        let server = gateway_server_config(bench.store, ClientAuth::Optional, &Options::default())?;
        let gateway = bearer_gateway(Arc::new(server), 2)?;
        Ok(Arc::new(WtlsServed {
            gateway,
            creds: bench.store.case(&self.case)?,
            mode: self.mode(),
        }))
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        _: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        model::wtls_steps(self.case, self.auth, device).map_err(|e| format!("not available: {e}"))
    }
    fn load_sides(&self) -> anyhow::Result<LoadSides> {
        anyhow::bail!("WTLS is offered through the engine's own endpoint (offer_load)")
    }
    /// The engine's own endpoint at the gateway, and clients with the caches and key
    /// pools that keep a load generator's work small, and resumed sessions.
    fn offer_load(&self, spec: &LoadSpec, bench: Bench<'_>) -> anyhow::Result<LoadReport> {
        crate::load::run_wtls(spec, bench.store, self.case, self.mode())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The real WTLS gateway (every case of the store) and clients of one case.
struct WtlsServed {
    gateway: GatewayHandle,
    creds: crate::pki_store::CaseCredentials,
    mode: AuthMode,
}

impl Served for WtlsServed {
    fn addr(&self) -> std::net::SocketAddr {
        self.gateway.local_addr()
    }
    fn client(&self, bearer: &LinkProfile, _seed: u64) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(wtls_client(&self.creds, self.mode, bearer)))
    }
}
