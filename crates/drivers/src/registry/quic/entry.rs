//! QUIC's entry in the registry: its configurations ([`QuicSuite`]), both sides, its
//! timers (RFC 9002) and its client's price on a device ([`super::pricing`]).

use std::sync::Arc;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{ProtocolId, UnknownName};

use super::HANDSHAKE_TIMEOUT;
use super::{client_steps, QuicConfig, QuicEndpoint, QuicSuite, Signature};
use super::{INITIAL_RTT, QUIC};
use crate::device::ClientSteps;
use crate::registry::{
    Bench, ConfigSides, Configuration, Contender, Endpoints, ForwardSecrecy, NotPriced,
    ProtocolEntry, RawOps, RetransmissionTimers, Sides, TimeBase, Traits, P256_LEVEL,
};

/// The entry.
pub struct Quic;

impl ProtocolEntry for Quic {
    fn id(&self) -> ProtocolId {
        QUIC
    }
    fn title(&self) -> &'static str {
        "QUIC v1 (RFC 9000/9001) through quinn-proto and rustls"
    }
    fn configurations(&self) -> Vec<Contender> {
        QuicSuite::ALL.into_iter().map(Contender::new).collect()
    }
    /// P-256 and its ML-KEM-768 hybrid, server-authenticated: the groups a device
    /// profile can price (none publishes an X25519 cost) beside the DTLS rows' P-256;
    /// and P-256 with ML-DSA-44 certificates, whose server stops at exactly three times
    /// the client's one-datagram Initial (RFC 9000 section 8.1). The hybrid with
    /// ML-DSA-44 is not compared: after its two-datagram Initial, quinn-proto's server
    /// passes that limit by 48 bytes (it starts a datagram while any budget is left).
    fn compared(&self) -> Vec<Contender> {
        ["p256-ecdsa", "p256mlkem768-ecdsa", "p256-mldsa44"]
            .iter()
            .filter_map(|t| self.parse(t).ok())
            .collect()
    }
    fn parse(&self, text: &str) -> Result<Contender, UnknownName> {
        text.parse::<QuicSuite>().map(Contender::new)
    }
    fn timers(&self, _: &LinkProfile) -> RetransmissionTimers {
        // The first probe timeout before any RTT sample: smoothed_rtt + 4 x rttvar
        // with rttvar = initial_rtt / 2 (RFC 9002 section 6.2.2), so 3 x 333 ms.
        let first = (INITIAL_RTT * 3).as_secs_f64();
        RetransmissionTimers {
            initial_s: first,
            initial_max_s: first,
            backoff: 2.0,
            ceiling_s: None,
            max_retransmissions: probes_within(HANDSHAKE_TIMEOUT),
            source: "RFC 9002 section 6.2 (probe timeout from the 333 ms initial RTT of \
                     section 6.2.2, doubling); no probe count: the idle timeout of RFC 9000 \
                     section 10.1 (60 s here) ends it, so the count given is the probes \
                     that fit within it",
        }
    }
}

/// Probe timeouts that expire within `idle`, each twice the one before from the first.
fn probes_within(idle: std::time::Duration) -> u32 {
    let (mut at, mut pto, mut n) = (INITIAL_RTT * 3, INITIAL_RTT * 3, 0);
    while at < idle {
        n += 1;
        pto *= 2;
        at += pto;
    }
    n
}

impl Configuration for QuicSuite {
    fn entry(&self) -> &'static dyn ProtocolEntry {
        &Quic
    }
    fn name(&self) -> String {
        QuicSuite::name(*self).to_owned()
    }
    fn auth(&self) -> Authentication {
        if self.mutual {
            Authentication::Mutual
        } else {
            Authentication::ServerAuth
        }
    }
    fn traits(&self) -> Traits {
        let level = match (self.group, self.signature) {
            (g, Signature::EcdsaP256) if !g.post_quantum() => P256_LEVEL.to_owned(),
            (g, sig) => format!("{} key exchange, {}", g.name(), sig.label()),
        };
        Traits {
            level,
            forward_secrecy: ForwardSecrecy {
                holds: true,
                why: "an ephemeral key share of the group on both sides",
            },
            post_quantum_key_exchange: self.group.post_quantum(),
            // both of QUIC's ML-KEM groups are hybrids
            hybrid_key_exchange: self.group.post_quantum(),
            post_quantum_signature: self.signature.ml_dsa().is_some(),
            // as the DTLS 1.3 rows say of every certificate configuration
            uses_p256: true,
        }
    }
    /// Datagrams of at most 1200 bytes on every bearer (RFC 9000 section 14), and
    /// quinn-proto's timers run on the caller's time either way.
    fn sides(&self, _: Bench<'_>, _: u16, _: TimeBase) -> anyhow::Result<Arc<dyn Sides>> {
        Ok(Arc::new(ConfigSides(QuicConfig::new(*self)?)))
    }
    /// Clients that close their connection once confirmed (see
    /// [`QuicConfig::closing`]).
    fn load_test_sides(&self, _: Bench<'_>) -> anyhow::Result<Arc<dyn Sides>> {
        Ok(Arc::new(ConfigSides(QuicConfig::new(*self)?.closing())))
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        published: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        client_steps(*self, device, published).map_err(NotPriced::listed)
    }
    /// The raw public-key work of each side in aws-lc-rs, rustls' provider, for the
    /// ECDSA configurations only: no raw ML-DSA operation is timed (as for the DTLS 1.3
    /// ML-DSA configurations), and a bound without it would flatter them.
    fn raw_ops(&self) -> anyhow::Result<Option<RawOps>> {
        if self.signature != Signature::EcdsaP256 {
            return Ok(None);
        }
        let cfg = QuicConfig::new(*self)?;
        Ok(Some(Box::new(move || cfg.raw_ops().map(Some))))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Endpoints for QuicConfig {
    type Client = QuicEndpoint;
    type Server = QuicEndpoint;
    fn client(&self) -> anyhow::Result<QuicEndpoint> {
        QuicConfig::client(self)
    }
    fn server(&self) -> anyhow::Result<QuicEndpoint> {
        QuicConfig::server(self)
    }
}
