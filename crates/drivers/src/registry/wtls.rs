//! WAP WTLS 1.0, the project's own engine, on the bench: the 24 CA/leaf key cases of
//! the thesis' Table 3.3 (`256p/256p`: CA and leaf on P-256), server-authenticated or
//! mutual (`256p/256p-mutual`), served by the real gateway with the case's own server
//! configuration ([`WtlsCase::server_config`]).

use std::sync::Arc;

use std::time::Duration;

use wtls::handshake::{AuthMode, Client, ServerConfig, ServerConnection};
use wtls::probe::Probe;
use wtls::suite::Case;
use wtlsperf_bearer::{DelayDistribution, LinkProfile};
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{AnyHandshake, ProtocolId, UnknownName};

use super::served::bearer_gateway;
use super::{Bench, Configuration, Contender, NotPriced, ProtocolEntry, Served, Sides};
use super::{ForwardSecrecy, RetransmissionTimers, TimeBase, Traits};
use crate::device::ClientSteps;
use crate::gateway::GatewayHandle;
use crate::pki_store::CaseCredentials;
use crate::pki_store::PkiStore;
use crate::protocols::model;
use crate::setup::{self, ClientAuth, Options};

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
            let names = Case::ALL
                .into_iter()
                .filter(Case::is_available)
                .map(|c| &*Box::leak(c.to_string().into_boxed_str()));
            UnknownName::new("wtls configuration (CA/leaf, -mutual)", text, names)
        };
        let case = Case::parse(case).map_err(|_| unknown())?;
        if !case.is_available() {
            return Err(unknown());
        }
        Ok(Contender::new(WtlsCase { case, auth }))
    }
    fn timers(&self, bearer: &LinkProfile) -> RetransmissionTimers {
        wtls_timers(bearer)
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

    /// The server of this case alone, as the processing part's in-memory runs have it
    /// (the thesis' flow: a CertificateRequest in a server-authenticated handshake too),
    /// so that a run over a bearer sends the flights the case's model prices. A server
    /// of every case of the store (`wtlsperf gateway`'s) names every one of the store's
    /// CAs in its CertificateRequest: some 250 bytes more with the full PKI, a lab
    /// artefact no model of the case counts (about 200 ms on GSM CSD).
    pub fn server_config(&self, store: &PkiStore) -> anyhow::Result<ServerConfig> {
        let creds = store.case(&self.case)?;
        let client_auth = match self.auth {
            Authentication::Mutual => ClientAuth::Required,
            _ => ClientAuth::Optional,
        };
        Ok(setup::case_server_config(
            &creds,
            client_auth,
            &Options::default(),
        ))
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
    fn suite(&self) -> String {
        self.case.to_string()
    }
    fn auth(&self) -> Authentication {
        self.auth
    }
    fn traits(&self) -> Traits {
        Traits {
            level: format!("category {}", self.case.category),
            forward_secrecy: wtls_forward_secrecy(self.case),
            post_quantum_key_exchange: false,
            hybrid_key_exchange: false,
            post_quantum_signature: false,
            uses_p256: true,
        }
    }
    /// The engine's sides: the case's server ([`WtlsCase::server_config`]) and clients
    /// of the case with the bearer's timer.
    fn sides(&self, bench: Bench<'_>, _: u16, _: TimeBase) -> anyhow::Result<Arc<dyn Sides>> {
        Ok(Arc::new(WtlsSides {
            creds: bench.store.case(&self.case)?,
            server: Arc::new(self.server_config(bench.store)?),
            mode: self.mode(),
            first_timer: None,
        }))
    }
    /// Our client's first timer fixed at `first`, doubling (the gateway retransmits
    /// nothing of its own: the client's timer drives every repair).
    fn sides_with_first_timer(
        &self,
        bench: Bench<'_>,
        _: u16,
        first: Duration,
    ) -> anyhow::Result<Option<Arc<dyn Sides>>> {
        Ok(Some(Arc::new(WtlsSides {
            creds: bench.store.case(&self.case)?,
            server: Arc::new(self.server_config(bench.store)?),
            mode: self.mode(),
            first_timer: Some(first),
        })))
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        _: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        model::wtls_steps(self.case, self.auth, device).map_err(NotPriced::unmodelled)
    }
    /// The real gateway (the engine's own endpoint) with the case's server
    /// configuration and two workers: the bearer runs' clients are many, their jobs
    /// short.
    fn serve(&self, bench: Bench<'_>, _payload_limit: u16) -> anyhow::Result<Arc<dyn Served>> {
        let gateway = bearer_gateway(Arc::new(self.server_config(bench.store)?), 2)?;
        Ok(Arc::new(WtlsServed {
            gateway,
            creds: bench.store.case(&self.case)?,
            mode: self.mode(),
        }))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The real WTLS gateway serving one case, and that case's clients.
struct WtlsServed {
    gateway: GatewayHandle,
    creds: CaseCredentials,
    mode: AuthMode,
}

impl Served for WtlsServed {
    fn addr(&self) -> std::net::SocketAddr {
        self.gateway.local_addr()
    }
    fn client(&self, bearer: &LinkProfile, _seed: u64) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(wtls_client(
            &self.creds,
            self.mode,
            bearer,
        )))
    }
}

/// One case's server configuration and client credentials.
struct WtlsSides {
    creds: CaseCredentials,
    server: Arc<ServerConfig>,
    mode: AuthMode,
    /// The equal-timer variant's first timer, instead of the bearer's.
    first_timer: Option<Duration>,
}

impl Sides for WtlsSides {
    fn client(&self, bearer: &LinkProfile, _: u64) -> anyhow::Result<AnyHandshake> {
        let mut cfg = wtls_bearer_config(&self.creds, bearer);
        if let Some(t) = self.first_timer {
            cfg.retransmit_timeout_ns = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
        }
        let client = Client::new(Arc::new(cfg), self.mode, None, Probe::off(), setup::now());
        Ok(AnyHandshake::new(client))
    }
    fn server(&self) -> anyhow::Result<AnyHandshake> {
        let now = setup::now();
        Ok(AnyHandshake::new(ServerConnection::new(
            Arc::clone(&self.server),
            Probe::off(),
            now,
        )))
    }
}

/// Retransmissions our WTLS client allows before giving up over a bearer.
pub const WTLS_MAX_RETRANSMISSIONS: u32 = 6;

/// Our WTLS client of a case's credentials, with the retransmission timer suited to
/// `profile` (the one `wtlsperf bearer` runs use:
/// [`bearer_retransmit_timeout`]).
pub fn wtls_client(creds: &CaseCredentials, auth: AuthMode, profile: &LinkProfile) -> Client {
    let cfg = wtls_bearer_config(creds, profile);
    Client::new(Arc::new(cfg), auth, None, Probe::off(), setup::now())
}

/// Our WTLS client configuration over a bearer: the first retransmission timer suited
/// to `profile` ([`bearer_retransmit_timeout`]), doubling, and
/// [`WTLS_MAX_RETRANSMISSIONS`]; every WTLS run over an emulated bearer takes it (the
/// registry's WTLS entry states it as its timers).
pub fn wtls_bearer_config(
    creds: &CaseCredentials,
    profile: &LinkProfile,
) -> wtls::handshake::ClientConfig {
    let mut cfg = setup::client_config(creds, &Options::default(), false);
    cfg.retransmit_timeout_ns =
        u64::try_from(bearer_retransmit_timeout(profile).as_nanos()).unwrap_or(u64::MAX);
    cfg.max_retransmissions = WTLS_MAX_RETRANSMISSIONS;
    cfg
}

/// The standard deviation of a traversal distribution (ms), for the timeout margin.
fn traversal_spread_ms(d: &DelayDistribution) -> f64 {
    match *d {
        DelayDistribution::Fixed(_) => 0.0,
        DelayDistribution::Normal { sd_ms, .. } | DelayDistribution::LogNormal { sd_ms, .. } => {
            sd_ms
        }
        DelayDistribution::Uniform { min_ms, max_ms } => (max_ms - min_ms) / 2.0,
    }
}

/// Largest flight the retransmission timer has to allow for (an RSA-2048 mutual
/// server flight with CertificateRequest is about 1.1 kB).
const LARGEST_FLIGHT_BYTES: f64 = 2_000.0;
/// Gateway plus client processing allowance for one round trip (debug builds, RSA-2048).
const PROCESSING_ALLOWANCE_MS: f64 = 500.0;

/// First retransmission timeout for a profile: 2 x (traversal mean + 4 sd + serialisation
/// of the largest flight at the slower rate) + processing. A spurious retransmission
/// would both add a flight and queue behind the real answer on the slow link, so the
/// timer errs long: on GSM CSD it is about 5.4 s.
pub fn bearer_retransmit_timeout(p: &LinkProfile) -> Duration {
    let rate = p.up_bps.min(p.down_bps);
    let ser_ms = if rate.is_finite() && rate > 0.0 {
        (LARGEST_FLIGHT_BYTES + p.per_datagram_overhead_bytes as f64) * 8.0 / rate * 1e3
    } else {
        0.0
    };
    let one_way = p.traversal.mean_ms() + 4.0 * traversal_spread_ms(&p.traversal) + ser_ms;
    Duration::from_secs_f64((2.0 * one_way + PROCESSING_ALLOWANCE_MS) / 1e3)
}

/// WTLS's session keys: in the key exchanges the thesis measures the server's key is its
/// certified static key, so whoever later takes that key opens past sessions.
pub fn wtls_forward_secrecy(case: Case) -> ForwardSecrecy {
    if case.leaf.is_rsa() {
        ForwardSecrecy {
            holds: false,
            why: "RSA key transport: the server's certified RSA key decrypts the premaster secret",
        }
    } else {
        ForwardSecrecy {
            holds: false,
            why: "ECDH with the server's certified static key (the client's key is fresh each handshake when server-authenticated, its certified key when mutual): the server's key opens past sessions",
        }
    }
}

/// Our WTLS client's timers over `profile`. WAP-261 (WTLS over datagrams) has the side
/// that sent the last flight retransmit it on a timeout and leaves the values to the
/// implementation; ours is scaled to the bearer
/// ([`bearer_retransmit_timeout`]) and doubles, and the doubled
/// timer carries over to the client's next flight.
pub fn wtls_timers(profile: &LinkProfile) -> RetransmissionTimers {
    let initial = bearer_retransmit_timeout(profile).as_secs_f64();
    RetransmissionTimers {
        initial_s: initial,
        initial_max_s: initial,
        backoff: 2.0,
        ceiling_s: None,
        max_retransmissions: WTLS_MAX_RETRANSMISSIONS,
        source: "WAP-261: the sender of the last flight retransmits it on a timeout, values left to the implementation; ours: 2 x (mean traversal + 4 sd + a 2 kB flight's serialisation) + 500 ms per bearer, doubling, the doubled timer kept for the next flight",
    }
}
