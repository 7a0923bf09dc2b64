//! DTLS 1.2 (RFC 6347) through OpenSSL on the bench: the RFC 7925 profile's
//! certificate suite (ECDHE-ECDSA on P-256, AES-128-CCM-8, server-authenticated or
//! mutual) and its PSK suite ([`crate::protocols::dtls`] has the adapter).

use std::sync::Arc;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{ProtocolId, UnknownName};

use super::{Bench, Configuration, Contender, NotPriced, ProtocolEntry, RawOps, Sides};
use super::{ConfigSides, Endpoints, RetransmissionTimers, TimeBase, Traits};
use crate::device::ClientSteps;
use crate::protocols::dtls::{self, DtlsConfig, DtlsEndpoint};
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
        suites()
            .map(|suite| {
                Contender::new(Dtls12Suite {
                    suite,
                    cookie: true,
                })
            })
            .collect()
    }
    fn parse(&self, text: &str) -> Result<Contender, UnknownName> {
        let (base, cookie) = match text.strip_suffix(NO_COOKIE) {
            Some(base) => (base, false),
            None => (text, true),
        };
        suites()
            .find(|s| s.name() == base)
            .map(|suite| Contender::new(Dtls12Suite { suite, cookie }))
            .ok_or_else(|| {
                let known = suites().map(Suite::name);
                UnknownName::new("dtls1.2 configuration (-no-cookie)", text, known)
            })
    }
    fn timers(&self, _: &LinkProfile) -> RetransmissionTimers {
        dtls::retransmission_timers()
    }
}

/// The DTLS 1.2 suites of [`Suite`].
fn suites() -> impl Iterator<Item = Suite> {
    Suite::ALL.into_iter().filter(|s| s.protocol() == DTLS12)
}

/// The suffix of a configuration without the cookie exchange.
const NO_COOKIE: &str = "-no-cookie";

/// A DTLS 1.2 suite of [`Suite`], with the server's cookie exchange (RFC 6347 section
/// 4.2.1, the RFC 7925 profile's default) or without it (`-no-cookie`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtls12Suite {
    pub suite: Suite,
    pub cookie: bool,
}

impl Configuration for Dtls12Suite {
    fn entry(&self) -> &'static dyn ProtocolEntry {
        &Dtls12
    }
    fn name(&self) -> String {
        let name = self.suite.name();
        if self.cookie {
            name.to_owned()
        } else {
            format!("{name}{NO_COOKIE}")
        }
    }
    fn auth(&self) -> Authentication {
        if self.suite.mutual() {
            Authentication::Mutual
        } else {
            Authentication::ServerAuth
        }
    }
    fn traits(&self) -> Traits {
        let psk = self.suite == Suite::DtlsPsk;
        Traits {
            level: if psk {
                "PSK 128-bit (category 3)".to_owned()
            } else {
                super::P256_LEVEL.to_owned()
            },
            forward_secrecy: dtls::forward_secrecy(self.suite),
            post_quantum_key_exchange: false,
            hybrid_key_exchange: false,
            post_quantum_signature: false,
            uses_p256: !psk,
        }
    }
    /// OpenSSL fragments to its own 1280-byte MTU on every bearer (`DTLS_MTU`).
    fn sides(&self, _: Bench<'_>, _: u16, time: TimeBase) -> anyhow::Result<Arc<dyn Sides>> {
        let cfg = if self.cookie {
            DtlsConfig::new(self.suite)?
        } else {
            DtlsConfig::without_cookie_exchange(self.suite)?
        };
        Ok(Arc::new(ConfigSides(match time {
            TimeBase::Virtual => cfg,
            TimeBase::Real => cfg.in_real_time(),
        })))
    }
    fn sides_with_first_timer(
        &self,
        _: Bench<'_>,
        _: u16,
        first: std::time::Duration,
    ) -> anyhow::Result<Option<Arc<dyn Sides>>> {
        let cfg = if self.cookie {
            DtlsConfig::new(self.suite)?
        } else {
            DtlsConfig::without_cookie_exchange(self.suite)?
        };
        Ok(Some(Arc::new(ConfigSides(cfg.with_initial_timer(first)))))
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        _: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        model::client_steps(self.suite, device).map_err(NotPriced::unmodelled)
    }
    fn raw_ops(&self) -> anyhow::Result<Option<RawOps>> {
        let cfg = DtlsConfig::new(self.suite)?;
        Ok(Some(Box::new(move || cfg.raw_ops())))
    }
    fn without_cookie(&self) -> Option<Contender> {
        self.cookie.then(|| {
            Contender::new(Dtls12Suite {
                cookie: false,
                ..*self
            })
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Endpoints for DtlsConfig {
    type Client = DtlsEndpoint;
    type Server = DtlsEndpoint;
    fn client(&self) -> anyhow::Result<DtlsEndpoint> {
        DtlsConfig::client(self)
    }
    fn server(&self) -> anyhow::Result<DtlsEndpoint> {
        DtlsConfig::server(self)
    }
}
