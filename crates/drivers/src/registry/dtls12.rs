//! DTLS 1.2 (RFC 6347) through OpenSSL on the bench: the RFC 7925 profile's
//! certificate suite (ECDHE-ECDSA on P-256, AES-128-CCM-8, server-authenticated or
//! mutual) and its PSK suite ([`crate::protocols::dtls`] has the adapter).

use std::sync::Arc;
use std::time::Duration;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{AnyHandshake, ProtocolId, UnknownName};

use super::{serve_spine, Bench, Configuration, Contender, NotPriced, ProtocolEntry, Served};
use super::{LoadSides, Timers, Traits};
use crate::device::ClientSteps;
use crate::gateway::HandshakeServers;
use crate::protocols::dtls::{DtlsConfig, RFC7925_INITIAL_TIMER};
use crate::protocols::{measure_suite, model, Suite, SuiteMeasurement, DTLS12};

/// The entry.
pub struct Dtls12;

impl ProtocolEntry for Dtls12 {
    fn id(&self) -> ProtocolId {
        DTLS12
    }
    fn title(&self) -> &'static str {
        "DTLS 1.2 (RFC 6347) through OpenSSL"
    }
    fn configurations(&self) -> Vec<Contender> {
        Suite::ALL
            .into_iter()
            .filter(|s| s.protocol() == DTLS12)
            .map(|s| Contender::new(Dtls12Suite(s)))
            .collect()
    }
    fn parse(&self, text: &str) -> Result<Contender, UnknownName> {
        let known = self.configurations();
        known
            .iter()
            .find(|c| c.configuration() == text)
            .cloned()
            .ok_or_else(|| {
                let names = Suite::ALL
                    .into_iter()
                    .filter(|s| s.protocol() == DTLS12)
                    .map(Suite::name);
                UnknownName::new("dtls1.2 configuration", text, names)
            })
    }
    fn timers(&self, _: &LinkProfile) -> Timers {
        Timers {
            initial: RFC7925_INITIAL_TIMER,
            backoff: 2.0,
            ceiling: Some(Duration::from_secs(60)),
            max_retransmissions: crate::protocols::dtls::MAX_RETRANSMISSIONS,
            source: "RFC 6347 section 4.2.4.1 (doubling, 60 s ceiling); RFC 7925 section 11 (9 s initial)",
        }
    }
}

/// A DTLS 1.2 suite of [`Suite`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtls12Suite(pub Suite);

impl Configuration for Dtls12Suite {
    fn entry(&self) -> &'static dyn ProtocolEntry {
        &Dtls12
    }
    fn name(&self) -> String {
        self.0.name().to_owned()
    }
    fn auth(&self) -> Authentication {
        if self.0.mutual() {
            Authentication::Mutual
        } else {
            Authentication::ServerAuth
        }
    }
    fn traits(&self) -> Traits {
        let psk = self.0 == Suite::DtlsPsk;
        Traits {
            level: if psk {
                "PSK 128-bit (category 3)".to_owned()
            } else {
                super::P256_LEVEL.to_owned()
            },
            forward_secrecy: !psk,
            post_quantum_key_exchange: false,
            uses_p256: !psk,
        }
    }
    fn measure_in_memory(
        &self,
        _: Bench<'_>,
        reps: usize,
        warmup: usize,
    ) -> anyhow::Result<SuiteMeasurement> {
        measure_suite(self.0, reps, warmup)
    }
    fn serve(&self, _: Bench<'_>, _payload_limit: u16) -> anyhow::Result<Arc<dyn Served>> {
        // OpenSSL fragments to its own 1280-byte MTU on every bearer (DTLS_MTU).
        let cfg = Arc::new(DtlsConfig::new(self.0)?.in_real_time());
        let server = Arc::clone(&cfg);
        serve_spine(
            HandshakeServers {
                protocol: DTLS12,
                make: Arc::new(move || server.server()),
            },
            move |_, _| Ok(AnyHandshake::new(cfg.client()?)),
        )
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        _: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        model::client_steps(self.0, device).map_err(|e| format!("not available: {e}"))
    }
    fn load_sides(&self) -> anyhow::Result<LoadSides> {
        let cfg = Arc::new(DtlsConfig::new(self.0)?.in_real_time());
        let server = Arc::clone(&cfg);
        let suite = self.0;
        Ok(LoadSides {
            client: Box::new(move |_| Ok(AnyHandshake::new(cfg.client()?))),
            servers: HandshakeServers {
                protocol: DTLS12,
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
