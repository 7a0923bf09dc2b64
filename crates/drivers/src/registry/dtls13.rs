//! DTLS 1.3 (RFC 9147) through wolfSSL on the bench: certificates (ECDSA P-256) or an
//! external PSK, with classical or ML-KEM (FIPS 203) key exchange, with or without a
//! Connection ID ([`crate::protocols::dtls13`] has the adapter and the configurations'
//! text forms). In a build without the `dtls13` feature this entry is not compiled and
//! the registry lists DTLS 1.3 as unavailable.

use std::sync::Arc;
use std::time::Duration;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{AnyHandshake, ProtocolId, UnknownName};

use super::{Bench, Configuration, Contender, NotPriced, ProtocolEntry, RawOps, Sides};
use super::{CertificateItems, TimeBase, Timers, Traits};
use crate::device::ClientSteps;
use crate::protocols::dtls::DtlsConfig;
use crate::protocols::dtls13::RFC7925_INITIAL_TIMER_S;
use crate::protocols::dtls13::{Credential, Dtls13Config, Dtls13Suite, Group, Signature};
use crate::protocols::{model_dtls13, Suite, DTLS13};

/// wolfSSL's ceiling of the doubling timer (`DTLS_TIMEOUT_MAX`, seconds): the expiry
/// at the ceiling fails the handshake.
const WOLFSSL_TIMEOUT_MAX_S: u64 = 64;

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
        Dtls13Suite::all().into_iter().map(Contender::new).collect()
    }
    fn parse(&self, text: &str) -> Result<Contender, UnknownName> {
        Dtls13Suite::parse(text).map(Contender::new).map_err(|_| {
            let names: Vec<&'static str> = Dtls13Suite::all()
                .into_iter()
                .map(|s| &*Box::leak(s.name().into_boxed_str()))
                .collect();
            UnknownName::new("dtls1.3 configuration", text, names)
        })
    }
    fn timers(&self, _: &LinkProfile) -> Timers {
        // 9 s, 18 s, 36 s, then 64 s (the ceiling), whose expiry fails the handshake.
        let initial = u64::from(RFC7925_INITIAL_TIMER_S);
        let mut retransmissions = 0;
        let mut t = initial;
        while t < WOLFSSL_TIMEOUT_MAX_S {
            t = (t * 2).min(WOLFSSL_TIMEOUT_MAX_S);
            retransmissions += 1;
        }
        Timers {
            initial: Duration::from_secs(initial),
            backoff: 2.0,
            ceiling: Some(Duration::from_secs(WOLFSSL_TIMEOUT_MAX_S)),
            max_retransmissions: retransmissions,
            source: "RFC 9147 section 5.8 (doubling; ACKs at a quarter); RFC 7925 section 11 \
                     (9 s initial); wolfSSL's 64 s DTLS_TIMEOUT_MAX",
        }
    }
}

impl Configuration for Dtls13Suite {
    fn entry(&self) -> &'static dyn ProtocolEntry {
        &Dtls13
    }
    fn name(&self) -> String {
        Dtls13Suite::name(*self)
    }
    fn auth(&self) -> Authentication {
        if self.mutual() {
            Authentication::Mutual
        } else {
            Authentication::ServerAuth
        }
    }
    fn traits(&self) -> Traits {
        let level = match (self.credential, self.group, self.signature) {
            (Credential::Psk, _, _) => "PSK 128-bit (category 3)".to_owned(),
            (_, Group::P256, Signature::EcdsaP256) => super::P256_LEVEL.to_owned(),
            (_, g, sig) => format!("{} key exchange, {}", g.name(), sig.label()),
        };
        Traits {
            level,
            forward_secrecy: self.credential != Credential::Psk,
            post_quantum_key_exchange: self.credential != Credential::Psk
                && self.group.post_quantum(),
            post_quantum_signature: matches!(self.credential, Credential::Certificate { .. })
                && self.signature.post_quantum(),
            uses_p256: self.credential != Credential::Psk,
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
        Ok(Arc::new(Dtls13Sides(
            Dtls13Config::new(*self)?.with_mtu(payload_limit),
        )))
    }
    fn fragments_to_bearer(&self) -> bool {
        true
    }
    fn client_steps(
        &self,
        device: &DeviceProfile,
        published: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced> {
        model_dtls13::client_steps(*self, device, published).map_err(NotPriced::listed)
    }
    /// The raw P-256 work of the server's side timed with OpenSSL (ECDHE and the ECDSA
    /// signature, as for the DTLS 1.2 server), for the classical certificate
    /// configurations only: no raw ML-KEM operation is timed here (OpenSSL 3.0 has
    /// none), and a P-256-only bound would flatter the ML-KEM groups. The handshake is
    /// wolfSSL's, so the ratio also carries the two libraries' difference in speed.
    fn raw_ops(&self) -> anyhow::Result<Option<RawOps>> {
        let classical_cert =
            self.group == Group::P256 && matches!(self.credential, Credential::Certificate { .. });
        if !classical_cert {
            return Ok(None);
        }
        let raw = DtlsConfig::new(Suite::DtlsEcdheEcdsa { mutual: false })?;
        Ok(Some(Box::new(move || raw.raw_ops())))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Both sides' wolfSSL contexts.
struct Dtls13Sides(Dtls13Config);

impl Sides for Dtls13Sides {
    fn client(&self, _: &LinkProfile, _: u64) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(self.0.client()?))
    }
    fn server(&self) -> anyhow::Result<AnyHandshake> {
        Ok(AnyHandshake::new(self.0.server()?))
    }
    fn certificate_items(&self, server: bool) -> anyhow::Result<Option<CertificateItems>> {
        self.0.certificate_items(server)
    }
}
