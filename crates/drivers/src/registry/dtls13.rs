//! DTLS 1.3 (RFC 9147) through wolfSSL on the bench: certificates (ECDSA P-256 or
//! ML-DSA) or an external PSK, with classical or ML-KEM (FIPS 203) key exchange, with or
//! without a Connection ID ([`crate::protocols::dtls13`] has the adapter and the
//! configurations' text forms), each with the server's cookie exchange (wolfSSL's
//! default, RFC 9147 section 5.1) or without it (`-no-cookie`). In a build without the
//! `dtls13` feature this entry is not compiled and the registry lists DTLS 1.3 as
//! unavailable.

use std::sync::Arc;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{ProtocolId, UnknownName};

use super::{Bench, Configuration, Contender, NotPriced, ProtocolEntry, RawOps, Sides};
use super::{CertificateItems, ConfigSides, Endpoints, RetransmissionTimers, TimeBase, Traits};
use crate::device::ClientSteps;
use crate::protocols::dtls::DtlsConfig;
use crate::protocols::dtls13::Signature;
use crate::protocols::dtls13::{self, RFC7925_INITIAL_TIMER_S};
use crate::protocols::dtls13::{Credential, Dtls13Config, Dtls13Endpoint, Dtls13Suite, Group};
use crate::protocols::{model_dtls13, Suite, DTLS13};

/// The suffix of a configuration without the cookie exchange.
const NO_COOKIE: &str = "-no-cookie";

/// The entry.
pub struct Dtls13;

impl ProtocolEntry for Dtls13 {
    fn id(&self) -> ProtocolId {
        DTLS13
    }
    fn title(&self) -> &'static str {
        "DTLS 1.3 (RFC 9147) through wolfSSL"
    }
    fn configurations(&self) -> Vec<Contender> {
        Dtls13Suite::all()
            .into_iter()
            .map(|suite| {
                Contender::new(Dtls13Contender {
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
        match Dtls13Suite::parse(base) {
            Ok(suite) => Ok(Contender::new(Dtls13Contender { suite, cookie })),
            Err(_) => {
                let names: Vec<&'static str> = Dtls13Suite::all()
                    .into_iter()
                    .map(|s| &*Box::leak(s.name().into_boxed_str()))
                    .collect();
                Err(UnknownName::new(
                    "dtls1.3 configuration (-no-cookie)",
                    text,
                    names,
                ))
            }
        }
    }
    fn timers(&self, _: &LinkProfile) -> RetransmissionTimers {
        dtls13::retransmission_timers(RFC7925_INITIAL_TIMER_S)
    }
}

/// A DTLS 1.3 configuration, with the server's cookie exchange or without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtls13Contender {
    pub suite: Dtls13Suite,
    pub cookie: bool,
}

impl Configuration for Dtls13Contender {
    fn entry(&self) -> &'static dyn ProtocolEntry {
        &Dtls13
    }
    fn name(&self) -> String {
        let name = self.suite.name();
        if self.cookie {
            name
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
        let s = self.suite;
        let level = match (s.credential, s.group, s.signature) {
            (Credential::Psk, _, _) => "PSK 128-bit (category 3)".to_owned(),
            (_, Group::P256, Signature::EcdsaP256) => super::P256_LEVEL.to_owned(),
            (_, g, sig) => format!("{} key exchange, {}", g.name(), sig.label()),
        };
        Traits {
            level,
            forward_secrecy: s.forward_secrecy(),
            post_quantum_key_exchange: s.credential != Credential::Psk && s.group.post_quantum(),
            hybrid_key_exchange: s.credential != Credential::Psk && s.group.hybrid(),
            post_quantum_signature: matches!(s.credential, Credential::Certificate { .. })
                && s.signature.post_quantum(),
            uses_p256: s.credential != Credential::Psk,
        }
    }
    /// wolfSSL fragments to the bearer's MTU (`with_mtu`), as its bearer runs do; its
    /// timer runs on the caller's time either way (`dtls13_wolf`).
    fn sides(
        &self,
        _: Bench<'_>,
        payload_limit: u16,
        _: TimeBase,
    ) -> anyhow::Result<Arc<dyn Sides>> {
        let cfg = Dtls13Config::new(self.suite)?.with_mtu(payload_limit);
        let cfg = if self.cookie {
            cfg
        } else {
            cfg.without_cookie_exchange()
        };
        Ok(Arc::new(ConfigSides(cfg)))
    }
    /// wolfSSL's timer is whole seconds: `first` is rounded up.
    fn sides_with_first_timer(
        &self,
        _: Bench<'_>,
        payload_limit: u16,
        first: std::time::Duration,
    ) -> anyhow::Result<Option<Arc<dyn Sides>>> {
        let seconds = u32::try_from(first.as_secs_f64().ceil() as u64).unwrap_or(u32::MAX);
        let cfg = Dtls13Config::new(self.suite)?
            .with_mtu(payload_limit)
            .with_initial_timer_s(seconds);
        let cfg = if self.cookie {
            cfg
        } else {
            cfg.without_cookie_exchange()
        };
        Ok(Some(Arc::new(ConfigSides(cfg))))
    }
    fn fragments_to_bearer(&self) -> bool {
        true
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        published: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        model_dtls13::client_steps(self.suite, device, published).map_err(NotPriced::listed)
    }
    /// The raw P-256 work of the server's side timed with OpenSSL (ECDHE and the ECDSA
    /// signature, as for the DTLS 1.2 server), for the classical certificate
    /// configurations only: no raw ML-KEM or ML-DSA operation is timed here (OpenSSL 3.0
    /// has none), and a P-256-only bound would flatter them. The handshake is wolfSSL's,
    /// so the ratio also carries the two libraries' difference in speed.
    fn raw_ops(&self) -> anyhow::Result<Option<RawOps>> {
        let s = self.suite;
        let classical_cert = s.group == Group::P256
            && s.signature == Signature::EcdsaP256
            && matches!(s.credential, Credential::Certificate { .. });
        if !classical_cert {
            return Ok(None);
        }
        let raw = DtlsConfig::new(Suite::DtlsEcdheEcdsa { mutual: false })?;
        Ok(Some(Box::new(move || raw.raw_ops())))
    }
    fn without_cookie(&self) -> Option<Contender> {
        self.cookie.then(|| {
            Contender::new(Dtls13Contender {
                cookie: false,
                ..*self
            })
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Endpoints for Dtls13Config {
    type Client = Dtls13Endpoint;
    type Server = Dtls13Endpoint;
    fn client(&self) -> anyhow::Result<Dtls13Endpoint> {
        Dtls13Config::client(self)
    }
    fn server(&self) -> anyhow::Result<Dtls13Endpoint> {
        Dtls13Config::server(self)
    }
    fn certificate_items(&self, server: bool) -> anyhow::Result<Option<CertificateItems>> {
        Dtls13Config::certificate_items(self, server)
    }
}
