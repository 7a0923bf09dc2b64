//! EDHOC (RFC 9528) through lakers, carried by CoAP confirmable POSTs (RFC 9528
//! Appendix A.2): method 3 (static DH both ways), cipher suite 2 ([`crate::protocols::edhoc`]
//! has the adapter, [`crate::protocols::coap_retransmit`] the carrier's timers).

use std::sync::Arc;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{AnyHandshake, ProtocolId};

use super::{serve_spine, Bench, Configuration, Contender, NotPriced, ProtocolEntry, Served};
use super::{LoadSides, Timers, Traits};
use crate::device::ClientSteps;
use crate::gateway::HandshakeServers;
use crate::protocols::coap_retransmit::CoapTimers;
use crate::protocols::edhoc::EdhocConfig;
use crate::protocols::{measure_suite, model, Suite, SuiteMeasurement, EDHOC};

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
    fn timers(&self, _: &LinkProfile) -> Timers {
        let coap = CoapTimers::default();
        Timers {
            initial: coap.ack_timeout,
            backoff: 2.0,
            ceiling: None,
            max_retransmissions: coap.max_retransmit,
            source: "RFC 7252 section 4.8 (ACK_TIMEOUT 2 s x random 1-1.5, doubling, MAX_RETRANSMIT 4)",
        }
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
    fn suite(self) -> Suite {
        Suite::EdhocMethod3Suite2
    }
}

impl Configuration for EdhocSuite {
    fn entry(&self) -> &'static dyn ProtocolEntry {
        &Edhoc
    }
    fn name(&self) -> String {
        self.suite().name().to_owned()
    }
    fn auth(&self) -> Authentication {
        Authentication::Mutual
    }
    fn traits(&self) -> Traits {
        Traits {
            level: super::P256_LEVEL.to_owned(),
            forward_secrecy: true,
            post_quantum_key_exchange: false,
            uses_p256: true,
        }
    }
    fn measure_in_memory(
        &self,
        _: Bench<'_>,
        reps: usize,
        warmup: usize,
    ) -> anyhow::Result<SuiteMeasurement> {
        measure_suite(self.suite(), reps, warmup)
    }
    fn serve(&self, _: Bench<'_>, _payload_limit: u16) -> anyhow::Result<Arc<dyn Served>> {
        let cfg = EdhocConfig::new()?;
        let server = cfg.clone();
        serve_spine(
            HandshakeServers {
                protocol: EDHOC,
                make: Arc::new(move || server.server()),
            },
            move |_, seed| Ok(AnyHandshake::new(cfg.client(seed)?)),
        )
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        _: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        model::client_steps(self.suite(), device).map_err(|e| format!("not available: {e}"))
    }
    /// Each initiator gets its own seed: its CoAP timer draws and its connection
    /// identifier.
    fn load_sides(&self) -> anyhow::Result<LoadSides> {
        let cfg = Arc::new(EdhocConfig::new()?);
        let server = Arc::clone(&cfg);
        let suite = self.suite();
        Ok(LoadSides {
            client: Box::new(move |seed| Ok(AnyHandshake::new(cfg.client(seed)?))),
            servers: HandshakeServers {
                protocol: EDHOC,
                make: Arc::new(move || Ok(AnyHandshake::new(server.server()?))),
            },
            server_cpu_us: Box::new(move |runs| {
                Ok(vec![measure_suite(suite, runs.max(1), 0)?.server_cpu_us])
            }),
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
