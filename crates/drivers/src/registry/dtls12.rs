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

use super::{Bench, Configuration, Contender, NotPriced, ProtocolEntry, RawOps, Sides};
use super::{TimeBase, Timers, Traits};
use crate::device::ClientSteps;
use crate::protocols::dtls::{DtlsConfig, MAX_RETRANSMISSIONS, RFC7925_INITIAL_TIMER};
use crate::protocols::{model, Suite, DTLS12};

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
        suites().map(|s| Contender::new(Dtls12Suite(s))).collect()
    }
    fn parse(&self, text: &str) -> Result<Contender, UnknownName> {
        suites()
            .find(|s| s.name() == text)
            .map(|s| Contender::new(Dtls12Suite(s)))
            .ok_or_else(|| {
                UnknownName::new("dtls1.2 configuration", text, suites().map(Suite::name))
            })
    }
    fn timers(&self, _: &LinkProfile) -> Timers {
        Timers {
            initial: RFC7925_INITIAL_TIMER,
            backoff: 2.0,
            ceiling: Some(Duration::from_secs(60)),
            max_retransmissions: MAX_RETRANSMISSIONS,
            source: "RFC 6347 section 4.2.4.1 (doubling, 60 s ceiling); RFC 7925 section 11 \
                     (9 s initial); OpenSSL's 12 retransmissions",
        }
    }
}

/// The DTLS 1.2 suites of [`Suite`].
fn suites() -> impl Iterator<Item = Suite> {
    Suite::ALL.into_iter().filter(|s| s.protocol() == DTLS12)
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
            post_quantum_signature: false,
            uses_p256: !psk,
        }
    }
    /// OpenSSL fragments to its own 1280-byte MTU on every bearer (`DTLS_MTU`).
    fn sides(&self, _: Bench<'_>, _: u16, time: TimeBase) -> anyhow::Result<Arc<dyn Sides>> {
        let cfg = DtlsConfig::new(self.0)?;
        Ok(Arc::new(DtlsSides(match time {
            TimeBase::Virtual => cfg,
            TimeBase::Real => cfg.in_real_time(),
        })))
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        _: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        model::client_steps(self.0, device).map_err(NotPriced::unmodelled)
    }
    fn raw_ops(&self) -> anyhow::Result<Option<RawOps>> {
        let cfg = DtlsConfig::new(self.0)?;
        Ok(Some(Box::new(move || cfg.raw_ops())))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Both sides' OpenSSL contexts.
struct DtlsSides(DtlsConfig);

impl Sides for DtlsSides {
    fn client(&self, _: &LinkProfile, _: u64) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(self.0.client()?))
    }
    fn server(&self) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(self.0.server()?))
    }
}
