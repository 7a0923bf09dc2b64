//! The protocol registry: every protocol on the bench, each implemented once, in one
//! module, behind one trait ([`ProtocolEntry`]), and each of its configurations a typed
//! value behind another ([`Configuration`]) with one text form, `protocol:configuration`
//! (`dtls1.3:mlkem768-ecdsa-ccm8`, `wtls:256p/256p`).
//!
//! Everything that compares protocols (the in-memory pair, the bearer runs, the loss
//! curves, the load test, device pricing, flights, the evaluation's tables and an
//! experiment file's contenders) iterates over [`protocols`] and asks a [`Contender`];
//! nothing outside an entry's module says which protocol it is looking at. A protocol a
//! build lacks (DTLS 1.3 without the `dtls13` feature) is one entry that says so
//! ([`ProtocolEntry::unavailable`]).
//!
//! The shape follows ns-3's modules behind one interface: a new protocol is its module
//! plus one line in [`protocols`].

pub mod dtls12;
#[cfg(feature = "dtls13")]
pub mod dtls13;
pub mod edhoc;
#[cfg(feature = "quic")]
pub mod quic;
mod served;
pub mod wtls;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::Authentication;
use wtlsperf_spine::{AnyHandshake, ProtocolId, UnknownName};

use crate::device::ClientSteps;
use crate::gateway::HandshakeServers;
use crate::pki_store::PkiStore;
use crate::protocols::{measure_in_memory, run_in_memory, MemoryRun, SuiteMeasurement};
pub use served::{
    run_over_bearer, run_over_bearers, serve_spine, BearerHandshake, ConfigSides, Endpoints,
    BEARER_HANDSHAKE_TIMEOUT,
};

/// Every protocol on the bench, in report order. Adding a protocol is adding its entry
/// here.
pub fn protocols() -> &'static [&'static dyn ProtocolEntry] {
    &[
        &wtls::Wtls,
        &dtls12::Dtls12,
        &edhoc::Edhoc,
        #[cfg(feature = "dtls13")]
        &dtls13::Dtls13,
        #[cfg(not(feature = "dtls13"))]
        &dtls13_unavailable::Dtls13Unavailable,
        #[cfg(feature = "quic")]
        &quic::Quic,
    ]
}

/// Every protocol's id, in report order.
pub fn ids() -> impl Iterator<Item = ProtocolId> {
    protocols().iter().map(|p| p.id())
}

/// The protocols this build can run.
pub fn available() -> impl Iterator<Item = &'static dyn ProtocolEntry> {
    protocols()
        .iter()
        .copied()
        .filter(|p| p.unavailable().is_none())
}

/// The entry called `name` (`wtls`, `dtls1.2`, ...); the error lists the names.
pub fn protocol(name: &str) -> Result<&'static dyn ProtocolEntry, UnknownName> {
    protocols()
        .iter()
        .copied()
        .find(|p| p.id().name() == name)
        .ok_or_else(|| {
            UnknownName::new("protocol", name, protocols().iter().map(|p| p.id().name()))
        })
}

/// The entry of a protocol id.
pub fn entry(id: ProtocolId) -> &'static dyn ProtocolEntry {
    protocols()
        .iter()
        .copied()
        .find(|p| p.id() == id)
        .unwrap_or_else(|| unreachable!("every ProtocolId comes from a registry entry"))
}

/// The level label of a P-256 configuration: category 3's 128-bit level, as WTLS's
/// like-for-like case 256p/256p.
pub const P256_LEVEL: &str = "P-256 (category 3)";

/// Why a contender's text does not name one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContenderError {
    #[error("{given:?} is not protocol:configuration (e.g. dtls1.2:psk-ccm8); protocols: {known}", given = .0, known = protocol_names())]
    NoColon(String),
    #[error("{0}")]
    Unknown(UnknownName),
    #[error("{protocol} is not in this build: {why}")]
    Unavailable {
        protocol: &'static str,
        why: &'static str,
    },
}

/// The protocols' names, for messages.
fn protocol_names() -> String {
    ids().map(|p| p.name()).collect::<Vec<_>>().join(", ")
}

/// Parses `protocol:configuration` against the registry.
pub fn contender(text: &str) -> Result<Contender, ContenderError> {
    let (p, c) = text
        .split_once(':')
        .ok_or_else(|| ContenderError::NoColon(text.to_owned()))?;
    let entry = protocol(p.trim()).map_err(ContenderError::Unknown)?;
    if let Some(why) = entry.unavailable() {
        return Err(ContenderError::Unavailable {
            protocol: entry.id().name(),
            why,
        });
    }
    entry.parse(c.trim()).map_err(ContenderError::Unknown)
}

pub use crate::protocols::{ForwardSecrecy, RetransmissionTimers};

/// A protocol on the bench.
pub trait ProtocolEntry: Send + Sync + 'static {
    /// Its identity: the `protocol` column of every CSV and the text before the colon.
    fn id(&self) -> ProtocolId;
    /// A line for tables and `--help`: the protocol and the implementation that runs
    /// it (`DTLS 1.2 (RFC 6347) through OpenSSL`).
    fn title(&self) -> &'static str;
    /// Why this build cannot run it, if it cannot.
    fn unavailable(&self) -> Option<&'static str> {
        None
    }
    /// Every configuration the bench offers, in report order.
    fn configurations(&self) -> Vec<Contender>;
    /// The configurations an evaluation compares when it names none of this protocol's
    /// (its first by default).
    fn compared(&self) -> Vec<Contender> {
        self.configurations().into_iter().take(1).collect()
    }
    /// The configuration whose text form (after the colon) is `text`; the error lists
    /// the known ones.
    fn parse(&self, text: &str) -> Result<Contender, UnknownName> {
        let all = self.configurations();
        if let Some(c) = all.iter().find(|c| c.configuration() == text) {
            return Ok(c.clone());
        }
        let known: Vec<&'static str> = all
            .iter()
            .map(|c| &*Box::leak(c.configuration().into_boxed_str()))
            .collect();
        Err(UnknownName::new("configuration", text, known))
    }
    /// Its retransmission defaults over `bearer` (a protocol whose timer follows the
    /// bearer, as our WTLS client's does, says so in `source`).
    fn timers(&self, bearer: &LinkProfile) -> RetransmissionTimers;
}

impl Traits {
    /// Which half of the channel is post-quantum: `key exchange`, `signature`, `both`,
    /// or `none`.
    pub fn post_quantum_part(&self) -> &'static str {
        match (self.post_quantum_key_exchange, self.post_quantum_signature) {
            (true, true) => "both",
            (true, false) => "key exchange",
            (false, true) => "signature",
            (false, false) => "none",
        }
    }
}

/// Why a device profile cannot price a configuration's client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotPriced {
    /// `not available: ...`, as the tables print it.
    pub reason: String,
    /// Whether the tables list the configuration on the device anyway, as not
    /// available (an operation the device has no published cost for), rather than
    /// leaving the row out (a case its model has no row for).
    pub listed: bool,
}

impl NotPriced {
    /// A row left out: the device's model does not cover the configuration.
    pub fn unmodelled(e: impl fmt::Display) -> NotPriced {
        NotPriced {
            reason: format!("not available: {e}"),
            listed: false,
        }
    }

    /// A row listed as not available, with its reason.
    pub fn listed(reason: impl Into<String>) -> NotPriced {
        NotPriced {
            reason: reason.into(),
            listed: true,
        }
    }
}

impl fmt::Display for NotPriced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// The facts of a configuration a comparison must state (the guide: "a comparison
/// states what differs between the contenders").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traits {
    /// Security level label (`P-256 (category 3)`).
    pub level: String,
    /// Whether a later compromise of a long-term key leaves this session's keys safe,
    /// and why.
    pub forward_secrecy: ForwardSecrecy,
    /// Whether the key exchange includes ML-KEM (alone or in a hybrid).
    pub post_quantum_key_exchange: bool,
    /// Whether the key exchange is a hybrid: a classical group and ML-KEM together
    /// (X25519MLKEM768, SecP256r1MLKEM768: draft-ietf-tls-ecdhe-mlkem), secure while
    /// either half is.
    pub hybrid_key_exchange: bool,
    /// Whether the certificates and their CertificateVerify are signed with ML-DSA.
    pub post_quantum_signature: bool,
    /// Whether the client needs P-256 operations.
    pub uses_p256: bool,
}

/// One configuration of one protocol: a typed value of the protocol's module.
pub trait Configuration: fmt::Debug + Send + Sync + 'static {
    /// Its protocol.
    fn entry(&self) -> &'static dyn ProtocolEntry;
    /// Its text form, after `protocol:`.
    fn name(&self) -> String;
    /// The `suite` column of the CSVs: the text form less what the `auth` column says
    /// (a WTLS case without its `-mutual`).
    fn suite(&self) -> String {
        self.name()
    }
    /// Server-authenticated or mutual.
    fn auth(&self) -> Authentication;
    fn traits(&self) -> Traits;
    /// Both sides of this configuration, built once for many handshakes: both fragment
    /// to `payload_limit` where the protocol fragments to the bearer's MTU, and their
    /// timers run on `time` (the caller's virtual time, or real time over UDP).
    fn sides(
        &self,
        bench: Bench<'_>,
        payload_limit: u16,
        time: TimeBase,
    ) -> anyhow::Result<Arc<dyn Sides>>;
    /// Both sides with every retransmission timer's first value fixed at `first`,
    /// doubling, each protocol keeping its own limit: the loss curves' equal-timer
    /// variant (virtual time). `None` for a protocol without such a setting.
    fn sides_with_first_timer(
        &self,
        bench: Bench<'_>,
        payload_limit: u16,
        first: Duration,
    ) -> anyhow::Result<Option<Arc<dyn Sides>>> {
        let _ = (bench, payload_limit, first);
        Ok(None)
    }
    /// The client's processing per flight on an emulated device: what the UDP driver
    /// holds each flight for. `Err` says why the device cannot price it.
    fn client_steps(
        &self,
        device: &DeviceProfile,
        published: &[PublishedPqCost],
    ) -> Result<ClientSteps, NotPriced>;
    /// Whether both sides fragment to the bearer's MTU in its bearer runs (so its
    /// flights differ per bearer: [`Configuration::shape_at`]).
    fn fragments_to_bearer(&self) -> bool {
        false
    }
    /// The raw public-key work of one handshake on this machine, (server ns, client
    /// ns), timed after each in-memory handshake for the bound ratio; `None` where the
    /// protocol has no such bound here.
    fn raw_ops(&self) -> anyhow::Result<Option<RawOps>> {
        Ok(None)
    }
    /// The same configuration without the server's stateless cookie exchange, where
    /// the protocol has one (DTLS: HelloVerifyRequest, HelloRetryRequest with a cookie):
    /// the comparison with WTLS on equal round trips.
    fn without_cookie(&self) -> Option<Contender> {
        None
    }
    /// The value itself, for the drivers that serve a protocol natively (WTLS's own
    /// endpoint and its load clients).
    fn as_any(&self) -> &dyn std::any::Any;

    /// Repeated in-memory handshakes through the spine's pair (`reps` after `warmup`),
    /// each followed by the raw operations of [`Configuration::raw_ops`].
    fn measure_in_memory(
        &self,
        bench: Bench<'_>,
        reps: usize,
        warmup: usize,
    ) -> anyhow::Result<SuiteMeasurement> {
        let sides = self.sides(bench, DEFAULT_PAYLOAD_LIMIT, TimeBase::Virtual)?;
        let raw = self.raw_ops()?;
        let loopback = LinkProfile::loopback();
        measure_in_memory(
            reps,
            warmup,
            || run_in_memory(sides.client(&loopback, 0)?, || sides.server()),
            || raw.as_ref().map_or(Ok(None), |r| r()),
        )
    }
    /// One in-memory handshake with both sides fragmenting to `payload_limit`, for a
    /// protocol that fragments to the bearer's MTU in its bearer runs; `None` for one
    /// whose flights are the same on every bearer.
    fn shape_at(&self, bench: Bench<'_>, payload_limit: u16) -> anyhow::Result<Option<MemoryRun>> {
        if !self.fragments_to_bearer() {
            return Ok(None);
        }
        let sides = self.sides(bench, payload_limit, TimeBase::Virtual)?;
        let client = sides.client(&LinkProfile::loopback(), 0)?;
        run_in_memory(client, || sides.server()).map(Some)
    }
    /// A gateway serving this configuration on loopback (one server per client
    /// address behind the gateway worker), and its clients.
    fn serve(&self, bench: Bench<'_>, payload_limit: u16) -> anyhow::Result<Arc<dyn Served>> {
        let sides = self.sides(bench, payload_limit, TimeBase::Real)?;
        serve_spine(self.entry().id(), sides)
    }
    /// The sides whose handshakes the load test offers, in real time: the ordinary
    /// sides unless a protocol's clients must do more to leave a server with nothing
    /// left to do for them (QUIC's close).
    fn load_test_sides(&self, bench: Bench<'_>) -> anyhow::Result<Arc<dyn Sides>> {
        self.sides(bench, DEFAULT_PAYLOAD_LIMIT, TimeBase::Real)
    }
    /// The sides the load test runs: fresh clients, a server per address, and the
    /// capacity bound from in-memory handshakes.
    fn load_sides(&self, bench: Bench<'_>) -> anyhow::Result<LoadSides> {
        let real = self.load_test_sides(bench)?;
        let bound = self.sides(bench, DEFAULT_PAYLOAD_LIMIT, TimeBase::Virtual)?;
        let (client, server) = (Arc::clone(&real), real);
        let loopback = LinkProfile::loopback();
        Ok(LoadSides {
            client: Box::new(move |n| client.client(&loopback, n)),
            servers: HandshakeServers {
                protocol: self.entry().id(),
                make: Arc::new(move || server.server()),
            },
            server_cpu_us: Box::new(move |runs| {
                let loopback = LinkProfile::loopback();
                let run = || run_in_memory(bound.client(&loopback, 0)?, || bound.server());
                let m = measure_in_memory(runs.max(1), 0, run, || Ok(None))?;
                Ok(vec![m.server_cpu_us])
            }),
        })
    }
}

/// A configuration's raw public-key work, timed: (server ns, client ns), or `None`
/// where a configuration has none (a PSK without a key exchange).
pub type RawOps = Box<dyn Fn() -> anyhow::Result<Option<(u64, u64)>>>;

/// The datagram payload limit of the in-memory and load runs: the IPv6 minimum MTU
/// (RFC 8200), as DTLS's defaults use it.
pub const DEFAULT_PAYLOAD_LIMIT: u16 = 1280;

/// Whose clock a configuration's timers run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBase {
    /// The caller's time, passed with every input (the in-memory pair, virtual time).
    Virtual,
    /// Real time: sides driven over UDP, where a library that reads its own clock
    /// (OpenSSL's DTLS timer) must agree with the caller's.
    Real,
}

/// Both sides of one configuration, built once.
pub trait Sides: Send + Sync {
    /// A fresh client whose timers suit `bearer`; `seed` distinguishes clients.
    fn client(&self, bearer: &LinkProfile, seed: u64) -> anyhow::Result<AnyHandshake>;
    /// A fresh server for one client.
    fn server(&self) -> anyhow::Result<AnyHandshake>;
    /// What the server's (or the client's) Certificate and CertificateVerify carry, item
    /// by item, where the protocol encrypts them on the wire and the entry can say
    /// (from the loaded certificates); `None` otherwise.
    fn certificate_items(&self, server: bool) -> anyhow::Result<Option<CertificateItems>> {
        let _ = server;
        Ok(None)
    }
}

/// One side's Certificate and CertificateVerify message bodies, itemised (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CertificateItems {
    /// The subject public keys of the certificates sent (FIPS 204: 1312 B for ML-DSA-44,
    /// 1952 B for ML-DSA-65, each).
    pub public_keys: u32,
    /// The issuers' signatures on them (2420 B / 3309 B each).
    pub signatures: u32,
    /// The rest of the Certificate body: each certificate's other fields and DER headers,
    /// and TLS 1.3's request context, list and entry lengths and empty extensions.
    pub certificate_encoding: u32,
    /// The CertificateVerify's signature (2420 B / 3309 B).
    pub verify_signature: u32,
    /// The CertificateVerify's SignatureScheme and signature length (4 B).
    pub verify_encoding: u32,
}

impl CertificateItems {
    /// The Certificate message body.
    pub fn certificate_body(&self) -> u32 {
        self.public_keys + self.signatures + self.certificate_encoding
    }

    /// Both message bodies.
    pub fn total(&self) -> u32 {
        self.certificate_body() + self.verify_signature + self.verify_encoding
    }
}

/// A running server side of one configuration and the clients that reach it.
pub trait Served: Send + Sync {
    /// Where the gateway listens.
    fn addr(&self) -> SocketAddr;
    /// A fresh client whose timers suit `bearer`; `seed` distinguishes runs.
    fn client(&self, bearer: &LinkProfile, seed: u64) -> anyhow::Result<AnyHandshake>;
}

/// What the factories share: the PKI the WTLS cases are issued from.
#[derive(Clone, Copy)]
pub struct Bench<'a> {
    pub store: &'a PkiStore,
}

/// Both sides of a configuration as the load test runs them: a fresh client per arrival
/// (its argument distinguishes clients), a server per address behind the gateway
/// worker, and the capacity bound, the server CPU of `runs` handshakes in memory (us).
pub struct LoadSides {
    pub client: Box<dyn FnMut(u64) -> anyhow::Result<AnyHandshake> + Send>,
    pub servers: HandshakeServers<AnyHandshake>,
    pub server_cpu_us: Box<dyn FnMut(usize) -> anyhow::Result<Vec<f64>> + Send>,
}

/// One configuration of one protocol, as every part of the bench passes it around.
#[derive(Clone)]
pub struct Contender(Arc<dyn Configuration>);

impl Contender {
    pub fn new(c: impl Configuration) -> Contender {
        Contender(Arc::new(c))
    }

    pub fn protocol(&self) -> ProtocolId {
        self.0.entry().id()
    }

    pub fn entry(&self) -> &'static dyn ProtocolEntry {
        self.0.entry()
    }

    /// The text after `protocol:`.
    pub fn configuration(&self) -> String {
        self.0.name()
    }

    /// The typed configuration, where it is a `C`.
    pub fn downcast<C: Configuration>(&self) -> Option<&C> {
        self.0.as_any().downcast_ref::<C>()
    }
}

impl std::ops::Deref for Contender {
    type Target = dyn Configuration;
    fn deref(&self) -> &dyn Configuration {
        &*self.0
    }
}

impl fmt::Display for Contender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.protocol(), self.configuration())
    }
}

impl fmt::Debug for Contender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl PartialEq for Contender {
    fn eq(&self, other: &Contender) -> bool {
        self.protocol() == other.protocol() && self.configuration() == other.configuration()
    }
}

impl Eq for Contender {}

impl std::hash::Hash for Contender {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.protocol().hash(state);
        self.configuration().hash(state);
    }
}

impl std::str::FromStr for Contender {
    type Err = ContenderError;
    fn from_str(s: &str) -> Result<Contender, ContenderError> {
        contender(s)
    }
}

/// DTLS 1.3's entry in a build without the `dtls13` feature: listed, and says why not.
#[cfg(not(feature = "dtls13"))]
mod dtls13_unavailable {
    use super::*;

    pub struct Dtls13Unavailable;

    impl ProtocolEntry for Dtls13Unavailable {
        fn id(&self) -> ProtocolId {
            crate::protocols::DTLS13
        }
        fn title(&self) -> &'static str {
            "DTLS 1.3 (RFC 9147) through wolfSSL"
        }
        fn unavailable(&self) -> Option<&'static str> {
            Some("built without the `dtls13` feature (wolfSSL, GPL-2.0-or-later; README)")
        }
        fn configurations(&self) -> Vec<Contender> {
            Vec::new()
        }
        fn timers(&self, _: &LinkProfile) -> RetransmissionTimers {
            RetransmissionTimers {
                initial_s: 9.0,
                initial_max_s: 9.0,
                backoff: 2.0,
                ceiling_s: Some(64.0),
                max_retransmissions: 3,
                source: "RFC 9147 section 5.8; RFC 7925 section 11 (not in this build)",
            }
        }
    }
}

#[cfg(test)]
mod tests;
