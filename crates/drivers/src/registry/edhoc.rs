//! EDHOC (RFC 9528) through lakers, carried by CoAP confirmable POSTs (RFC 9528
//! Appendix A.2): method 3 (static DH both ways), cipher suite 2
//! ([`crate::protocols::edhoc`] has the adapter, [`crate::protocols::coap_retransmit`]
//! the carrier's timers).

use std::sync::Arc;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{AnyHandshake, ProtocolId};

use super::{Bench, Configuration, Contender, NotPriced, ProtocolEntry, RawOps, Sides};
use super::{RetransmissionTimers, TimeBase, Traits};
use crate::device::ClientSteps;
use crate::protocols::coap_retransmit::CoapTimers;
use crate::protocols::edhoc::{self, EdhocConfig};
use crate::protocols::{model, Suite, EDHOC};

/// The entry.
pub struct Edhoc;

impl ProtocolEntry for Edhoc {
    fn id(&self) -> ProtocolId {
        EDHOC
    }
    fn title(&self) -> &'static str {
        "EDHOC (RFC 9528) through lakers over CoAP"
    }
    fn configurations(&self) -> Vec<Contender> {
        vec![Contender::new(EdhocSuite::Method3Suite2)]
    }
    fn timers(&self, _: &LinkProfile) -> RetransmissionTimers {
        edhoc::retransmission_timers(CoapTimers::default())
    }
}

/// The EDHOC configurations on the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdhocSuite {
    /// Method 3 (StatStat), cipher suite 2 (AES-CCM-16-64-128, SHA-256, P-256),
    /// credentials by reference (kid).
    Method3Suite2,
}

impl EdhocSuite {
    fn modern(self) -> Suite {
        Suite::EdhocMethod3Suite2
    }
}

impl Configuration for EdhocSuite {
    fn entry(&self) -> &'static dyn ProtocolEntry {
        &Edhoc
    }
    fn name(&self) -> String {
        self.modern().name().to_owned()
    }
    fn auth(&self) -> Authentication {
        Authentication::Mutual
    }
    fn traits(&self) -> Traits {
        Traits {
            level: super::P256_LEVEL.to_owned(),
            forward_secrecy: edhoc::FORWARD_SECRECY,
            post_quantum_key_exchange: false,
            hybrid_key_exchange: false,
            post_quantum_signature: false,
            uses_p256: true,
        }
    }
    /// CoAP's timers run on the caller's time either way.
    fn sides(&self, _: Bench<'_>, _: u16, _: TimeBase) -> anyhow::Result<Arc<dyn Sides>> {
        Ok(Arc::new(EdhocSides(EdhocConfig::new()?)))
    }
    /// CoAP's first timer fixed (no random factor), doubling, as every other's.
    fn sides_with_first_timer(
        &self,
        _: Bench<'_>,
        _: u16,
        first: std::time::Duration,
    ) -> anyhow::Result<Option<Arc<dyn Sides>>> {
        let timers = CoapTimers {
            ack_timeout: first,
            random_factor: 1.0,
            ..CoapTimers::default()
        };
        let cfg = EdhocConfig::new()?.with_timers(timers);
        Ok(Some(Arc::new(EdhocSides(cfg))))
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        _: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        model::client_steps(self.modern(), device).map_err(NotPriced::unmodelled)
    }
    fn raw_ops(&self) -> anyhow::Result<Option<RawOps>> {
        let cfg = EdhocConfig::new()?;
        Ok(Some(Box::new(move || cfg.raw_ops().map(Some))))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Both parties' credentials; each initiator draws its CoAP timers and connection
/// identifier from its seed.
struct EdhocSides(EdhocConfig);

impl Sides for EdhocSides {
    fn client(&self, _: &LinkProfile, seed: u64) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(self.0.client(seed)?))
    }
    fn server(&self) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(self.0.server()?))
    }
}
