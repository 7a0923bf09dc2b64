//! The client side of the handshake: its configuration and the [`Client`] driver
//! (timers, retransmission, the caller's API). The protocol itself, state by state in
//! wire order, is in [`states`].

mod states;

use std::sync::{Arc, Mutex};

use zeroize::Zeroizing;

use super::conn::{process_records, Core, CoreState, RecordSide, Role, Verdict};
use super::error::{
    DropReason, HandshakeState, HsResult, LocalError, PeerMisbehaved, ProtocolError,
};
use super::AuthMode;
use super::{Event, Negotiated, Now, Output, Packing, Policy, StoredSession};
use crate::codec::Codec;
use crate::crypto::pk::{self, KeyPair, PeerKey, PkError};
use crate::msgs::certificate::{PublicKey, WtlsCertificate};
use crate::msgs::common::{
    CipherSuite, EcPublicKey, Identifier, KeyExchangeId, ParameterSpecifier, Random, RsaPublicKey,
    SessionId,
};
use crate::msgs::enums::{
    AlertDescription, AlertLevel, CompressionMethod, ContentType, HandshakeType, KeyExchangeSuite,
    SequenceNumberMode,
};
use crate::msgs::handshake::{ClientHello, HandshakeMessage};
use crate::params::ParameterNumbering;
use crate::probe::{HandshakeProbe, Probe};
use crate::suite::Specifier;
use states::ClientState;
use wtlsperf_spine::Failure;

/// One key exchange the client offers: a suite, the parameters of the key it expects
/// from the server, and the identifier it sends (its own name for the optimised
/// handshake, otherwise null).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyExchangeOffer {
    pub suite: KeyExchangeSuite,
    pub spec: Specifier,
    pub identifier: Identifier,
}

/// Source of ephemeral EC keys: a load generator hands in a pool of precomputed keys so
/// that its own work per handshake stays small.
pub type EphemeralSource = Arc<dyn Fn(Specifier) -> Result<KeyPair, PkError> + Send + Sync>;

/// Precomputed ECDH key shares for a server key: the ephemeral point to send and the
/// shared secret it gives, or `None` when the source has none for that key. Only a load
/// generator uses this: it moves the client's public-key work before its clock starts.
pub type KeyShareSource = Arc<
    dyn Fn(&PeerKey) -> Option<Result<(EcPublicKey, Zeroizing<Vec<u8>>), PkError>> + Send + Sync,
>;

/// Server certificates already validated, keyed by their encoding (load generator only:
/// it saves the client a signature verification per handshake).
pub type VerifiedServerCache = Arc<Mutex<crate::keyed_map::KeyedMap<Vec<u8>, PeerKey>>>;

/// What the ClientHello's trusted_key_ids carry for each trusted CA (§4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrustedKeyIds {
    /// An empty list: the server may use any CA (and an anonymous client needs none).
    /// Kannel 1.4.5 misreads a `text` identifier, so this is what talks to it.
    None,
    /// The CA's subject name, a `text` identifier (what this project always sent).
    #[default]
    Name,
    /// `key_hash_sha` (identifier type 254): SHA-1 of the CA's public key encoding,
    /// 20 bytes with no length prefix.
    KeyHash,
}

#[derive(Clone)]
pub struct ClientConfig {
    /// Key exchanges in order of preference.
    pub offers: Vec<KeyExchangeOffer>,
    /// Cipher suites in order of preference.
    pub cipher_suites: Vec<CipherSuite>,
    /// CA certificates the client trusts; also named in trusted_key_ids.
    pub trusted_cas: Vec<(Specifier, WtlsCertificate)>,
    /// How trusted_key_ids names the trusted CAs (or whether it names any).
    pub trusted_key_ids: TrustedKeyIds,
    /// The ParameterIndex numbering the client writes and reads (certificates too).
    /// Under WAP-261 it also writes the `_uncomp` suite codes (18 for ECDH_ECDSA), since
    /// its points are uncompressed; under the thesis profile 14, as the thesis did.
    pub numbering: ParameterNumbering,
    /// Mutual ECDH_ECDSA: send a ClientKeyExchange carrying our certified point (the
    /// Ericsson/AU-System handset client always sends one; the thesis sends none). The
    /// pre-master secret is the same either way: the two certified keys'.
    pub mutual_ecdh_key_exchange: bool,
    /// The gateway identity the server certificate must name.
    pub expected_server: Option<Identifier>,
    /// Client certificate and key, for mutual authentication and the optimised flow.
    pub credential: Option<(WtlsCertificate, KeyPair)>,
    pub key_refresh: u8,
    pub packing: Packing,
    pub policy: Policy,
    /// First retransmission timeout; doubled after each retransmission.
    pub retransmit_timeout_ns: u64,
    pub max_retransmissions: u32,
    pub ephemeral_source: Option<EphemeralSource>,
    pub key_share_source: Option<KeyShareSource>,
    pub verified_server_cache: Option<VerifiedServerCache>,
    /// Parsed keys of the trusted CAs, filled on first use.
    pub ca_keys: Arc<crate::pki::CaKeyCache>,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("offers", &self.offers)
            .field("cipher_suites", &self.cipher_suites)
            .field("key_refresh", &self.key_refresh)
            .field("packing", &self.packing)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl ClientConfig {
    /// A configuration with the defaults: one flight per datagram, key refresh every
    /// 2^3 records, a 1 s first retransmission timeout, four retransmissions.
    pub fn new(offers: Vec<KeyExchangeOffer>, cipher_suites: Vec<CipherSuite>) -> Self {
        ClientConfig {
            offers,
            cipher_suites,
            trusted_cas: Vec::new(),
            trusted_key_ids: TrustedKeyIds::default(),
            numbering: ParameterNumbering::default(),
            mutual_ecdh_key_exchange: false,
            expected_server: None,
            credential: None,
            key_refresh: 3,
            packing: Packing::default(),
            policy: Policy::default(),
            retransmit_timeout_ns: 1_000_000_000,
            max_retransmissions: 4,
            ephemeral_source: None,
            key_share_source: None,
            verified_server_cache: None,
            ca_keys: Arc::default(),
        }
    }
}

pub struct Client {
    config: Arc<ClientConfig>,
    auth: AuthMode,
    state: ClientState,
    core: Core,
    /// The key exchanges offered in ClientHello; ServerHello's client_key_id indexes it.
    offered: Vec<KeyExchangeOffer>,
    client_random: Random,
    resume: Option<StoredSession>,
    last_flight: Vec<Vec<u8>>,
    deadline_ns: Option<u64>,
    retransmissions: u32,
    /// Datagrams sent again by the timer (a flight may span several).
    resent_datagrams: u32,
    timeout_ns: u64,
    now: Now,
    /// Why the last dropped input was refused (diagnostics only).
    last_dropped: Option<ProtocolError>,
    /// What the completed handshake agreed (kept after the connection closes).
    negotiated: Option<Negotiated>,
    /// Why the handshake ended without completing: our time-out, the peer's alert or
    /// ours. Typed here so that a local time-out is never read as the peer's alert.
    ended: Option<Failure<ProtocolError>>,
}

/// The client gave up: its retransmission budget ran out with no answer. A local
/// time-out, not an alert of the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no answer after {retransmissions} retransmissions")]
pub struct TimedOut {
    pub retransmissions: u32,
}

/// What a datagram can change in a [`Client`], saved before it is taken in.
pub(crate) struct ClientSaved {
    state: ClientState,
    core: CoreState,
    last_flight: Vec<Vec<u8>>,
    deadline_ns: Option<u64>,
    now: Now,
    negotiated: Option<Negotiated>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("state", &self.state.name())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for a new handshake. `resume` asks for an abbreviated handshake on a
    /// session the client kept from an earlier one.
    pub fn new(
        config: Arc<ClientConfig>,
        auth: AuthMode,
        resume: Option<StoredSession>,
        probe: Probe,
        now: Now,
    ) -> Self {
        let mut random = [0u8; 12];
        crate::crypto::random::fill(&mut random);
        let core = Core::new(Role::Client, config.packing, probe);
        let timeout_ns = config.retransmit_timeout_ns;
        Client {
            config,
            auth,
            state: ClientState::WaitServerHello,
            core,
            offered: Vec::new(),
            client_random: Random::new(now.unix_secs, random),
            resume,
            last_flight: Vec::new(),
            deadline_ns: None,
            retransmissions: 0,
            resent_datagrams: 0,
            timeout_ns,
            now,
            last_dropped: None,
            negotiated: None,
            ended: None,
        }
    }

    /// The first flight: ClientHello. A configuration that cannot make one ends the
    /// handshake.
    pub fn start(&mut self, now: Now) -> Result<Output, ProtocolError> {
        let first = self.first_flight(now);
        if let Err(e) = &first {
            self.state = ClientState::Closed;
            self.ended = Some(Failure::Local(e.clone()));
        }
        first
    }

    fn first_flight(&mut self, now: Now) -> Result<Output, ProtocolError> {
        self.now = now;
        self.core.probe.begin_job();
        let session_id = match &self.resume {
            Some(s) => SessionId::new(&s.id)?,
            None => SessionId::empty(),
        };
        // Weak suites and anonymous key exchange are not even offered unless the
        // policy enables them.
        let policy = self.config.policy;
        let cipher_suites: Vec<CipherSuite> = self
            .config
            .cipher_suites
            .iter()
            .copied()
            .filter(|c| policy.accepts_cipher(c.bulk, c.mac))
            .collect();
        if cipher_suites.is_empty() {
            return Err(LocalError::OnlyWeakCipherSuitesConfigured.into());
        }
        if self
            .config
            .offers
            .iter()
            .all(|o| o.suite.is_anonymous() && !policy.allow_anonymous)
        {
            return Err(LocalError::OnlyAnonymousConfigured.into());
        }
        self.offered = self
            .config
            .offers
            .iter()
            .filter(|o| policy.allow_anonymous || !o.suite.is_anonymous())
            .cloned()
            .collect();
        let numbering = self.config.numbering;
        let client_key_ids = self
            .offered
            .iter()
            .map(|o| KeyExchangeId {
                suite: super::wire_suite(o.suite.base(), numbering),
                parameters: o.spec.parameter_specifier(numbering),
                identifier: o.identifier.clone(),
            })
            .collect();
        let hello = HandshakeMessage::ClientHello(ClientHello {
            client_version: 1,
            random: self.client_random,
            session_id,
            client_key_ids,
            trusted_key_ids: trusted_key_ids(&self.config),
            cipher_suites,
            compression_methods: vec![CompressionMethod::Null],
            sequence_number_mode: SequenceNumberMode::Explicit,
            key_refresh: self.config.key_refresh,
        });
        let record = self.core.handshake_record(&hello)?;
        let mut out = Output::default();
        self.send_flight(vec![record], &mut out);
        self.core.probe.end_job();
        Ok(out)
    }

    pub fn is_established(&self) -> bool {
        matches!(self.state, ClientState::Established(_))
    }

    pub fn is_closed(&self) -> bool {
        matches!(self.state, ClientState::Closed)
    }

    /// When the retransmission timer fires, if it is running.
    pub fn deadline_ns(&self) -> Option<u64> {
        self.deadline_ns
    }

    /// The timer fired: send the last flight again, or give up after the configured
    /// number of retransmissions (the connection closes; nothing is sent).
    pub fn on_timeout(&mut self, now: Now) -> Result<Output, TimedOut> {
        let mut out = Output::default();
        match self.deadline_ns {
            Some(d) if now.mono_ns >= d => {}
            _ => return Ok(out),
        }
        if self.retransmissions >= self.config.max_retransmissions {
            let retransmissions = self.retransmissions;
            self.state = ClientState::Closed;
            self.deadline_ns = None;
            self.ended = Some(Failure::TimedOut { retransmissions });
            return Err(TimedOut { retransmissions });
        }
        self.retransmissions += 1;
        self.timeout_ns = self.timeout_ns.saturating_mul(2);
        self.deadline_ns = Some(now.mono_ns + self.timeout_ns);
        for d in &self.last_flight {
            self.core.probe.datagram(true, d.len(), 0);
        }
        self.resent_datagrams = self
            .resent_datagrams
            .saturating_add(u32::try_from(self.last_flight.len()).unwrap_or(u32::MAX));
        out.datagrams = self.last_flight.clone();
        out.events.push(Event::Retransmitted);
        Ok(out)
    }

    pub fn retransmissions(&self) -> u32 {
        self.retransmissions
    }

    /// Datagrams the timer sent again (a flight may span several datagrams).
    pub fn resent_datagrams(&self) -> u32 {
        self.resent_datagrams
    }

    /// The flight just produced leaves `by_ns` later than it was computed: its
    /// retransmission timer starts when it leaves.
    pub fn delay_timer(&mut self, by_ns: u64) {
        self.deadline_ns = self.deadline_ns.map(|d| d.saturating_add(by_ns));
    }

    /// What the completed handshake agreed; kept once the connection closes.
    pub fn negotiated(&self) -> Option<Negotiated> {
        self.negotiated
    }

    /// Why the handshake ended without completing, if it did.
    pub fn failure(&self) -> Option<&Failure<ProtocolError>> {
        self.ended.as_ref()
    }

    /// Why the last input the client dropped was refused: unauthenticated input that
    /// does not fit is dropped without an answer, so a driver that times out can say
    /// what the server's last (possibly forged) answer was wrong about.
    pub fn last_dropped(&self) -> Option<&ProtocolError> {
        self.last_dropped.as_ref()
    }

    /// The session, for an abbreviated handshake later.
    pub fn session(&self) -> Option<StoredSession> {
        let ClientState::Established(done) = &self.state else {
            return None;
        };
        let ms = self.core.master_secret.as_ref()?;
        if done.session_id.is_empty() {
            return None;
        }
        Some(StoredSession {
            id: done.session_id.as_bytes().to_vec(),
            master_secret: ms.clone(),
            cipher_suite: done.keys.cipher,
            key_exchange: done.suite,
            key_refresh: done.keys.key_refresh,
            created_ns: self.now.mono_ns,
        })
    }

    /// The client random and the master secret once they are agreed: what a key log
    /// (`wtlsperf client --keylog`) records so a capture can be decrypted. A secret:
    /// never log it.
    pub fn key_log_entry(&self) -> Option<([u8; 16], Zeroizing<[u8; 20]>)> {
        let ms = self.core.master_secret.as_ref()?;
        Some((self.client_random.0, ms.clone()))
    }

    pub fn probe(&self) -> &HandshakeProbe {
        &self.core.probe.data
    }

    pub fn take_probe(&mut self) -> HandshakeProbe {
        std::mem::take(&mut self.core.probe.data)
    }

    /// Protect application data for the server (one record, one datagram).
    pub fn seal_application_data(&mut self, data: &[u8]) -> Result<Vec<u8>, ProtocolError> {
        if !self.is_established() {
            return Err(LocalError::NotEstablished.into());
        }
        self.core.records.seal(ContentType::ApplicationData, data)
    }

    /// A close_notify alert for the server.
    pub fn close(&mut self) -> Vec<u8> {
        let (_, bytes) = self
            .core
            .records
            .alert(AlertDescription::ConnectionCloseNotify);
        self.state = ClientState::Closed;
        self.deadline_ns = None;
        if self.negotiated.is_none() && self.ended.is_none() {
            self.ended = Some(Failure::Local(LocalError::ClosedByApplication.into()));
        }
        bytes
    }

    /// Take in one datagram from the server.
    pub fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Output {
        // A dropped datagram leaves everything as it found it, the clock and the
        // probe's records included.
        let before = (self.now, self.core.probe.checkpoint());
        self.now = now;
        let mut out = Output::default();
        if self.is_closed() {
            out.events
                .push(Event::Dropped(DropReason::ConnectionClosed));
            out.dropped = true;
            return out;
        }
        self.core.probe.begin_job();
        let records = match crate::msgs::record::parse_datagram(datagram) {
            Ok(r) => r,
            Err(e) => {
                // The framing cannot be trusted; nothing in it can be answered.
                self.now = before.0;
                out.events.push(Event::Dropped(DropReason::Unparsable(e)));
                out.dropped = true;
                return out;
            }
        };
        self.core
            .probe
            .datagram(false, datagram.len(), records.len());
        out.records_in = records.len();
        let verdict = process_records(self, &records, &mut out);
        self.core.probe.end_job();
        if verdict == Verdict::Dropped {
            self.now = before.0;
            self.core.probe.rollback(before.1);
            out.dropped = true;
        }
        if self.is_closed() && self.negotiated.is_none() && self.ended.is_none() {
            self.ended = Some(super::spine::ending(&out));
        }
        out
    }

    /// Pack a flight into datagrams, keep it for retransmission and start the timer.
    fn send_flight(&mut self, records: Vec<Vec<u8>>, out: &mut Output) {
        let datagrams = self.core.pack(records);
        self.last_flight = datagrams.clone();
        self.deadline_ns = Some(self.now.mono_ns + self.timeout_ns);
        out.send(datagrams);
    }

    /// The handshake is complete: no more retransmissions.
    fn stop_timer(&mut self) {
        self.deadline_ns = None;
        self.last_flight.clear();
    }
}

impl RecordSide for Client {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn is_closed(&self) -> bool {
        Client::is_closed(self)
    }

    fn is_established(&self) -> bool {
        Client::is_established(self)
    }

    fn close_after_alert(&mut self, _level: AlertLevel) {
        self.state = ClientState::Closed;
        self.deadline_ns = None;
    }

    fn on_change_cipher_spec(&mut self, body: &[u8]) -> HsResult<()> {
        Client::on_change_cipher_spec(self, body)
    }

    fn expects(&self, typ: HandshakeType) -> bool {
        self.state.expects(typ)
    }

    fn key_exchange(&self) -> Option<KeyExchangeSuite> {
        self.state.key_exchange()
    }

    fn state_name(&self) -> HandshakeState {
        self.state.name()
    }

    fn on_handshake(&mut self, msg: HandshakeMessage, out: &mut Output) -> HsResult<()> {
        Client::on_handshake(self, msg, out)
    }

    fn after_message(&mut self, out: &mut Output) -> HsResult<()> {
        Client::after_message(self, out)
    }

    fn early_application_data(&mut self) -> Option<ProtocolError> {
        None
    }

    type Saved = ClientSaved;

    fn save(&self) -> ClientSaved {
        ClientSaved {
            state: self.state.clone(),
            core: self.core.save(),
            last_flight: self.last_flight.clone(),
            deadline_ns: self.deadline_ns,
            now: self.now,
            negotiated: self.negotiated,
        }
    }

    fn restore(&mut self, saved: ClientSaved) {
        self.state = saved.state;
        self.core.restore(saved.core);
        self.last_flight = saved.last_flight;
        self.deadline_ns = saved.deadline_ns;
        self.now = saved.now;
        self.negotiated = saved.negotiated;
    }

    fn note_dropped(&mut self, e: ProtocolError) {
        self.last_dropped = Some(e);
    }
}

/// The specifier of the key in ServerKeyExchange. Index 0 means "the parameters of
/// the chosen KeyExchangeId" for a curve (§3.7) and "RSA, size from the modulus" for an
/// RSA key (Kannel 1.4.5 sends RSA_anon keys so); other values are read under our
/// numbering and must fit what we offered.
fn ske_spec(
    parameters: &ParameterSpecifier,
    offered: Specifier,
    public: &PublicKey,
    numbering: ParameterNumbering,
) -> HsResult<Specifier> {
    let modulus_bits = match public {
        PublicKey::Rsa(k) => Some(crate::pki::unsigned_bits(&k.modulus)),
        PublicKey::Ec(_) => None,
    };
    let spec = match (parameters, modulus_bits) {
        (ParameterSpecifier::Index(0), None) => Some(offered),
        _ => Specifier::named_by(parameters, numbering)?.resolve(modulus_bits),
    };
    let spec = spec.ok_or(PeerMisbehaved::UnsupportedRsaSize(
        modulus_bits.unwrap_or(0),
    ))?;
    if spec.is_rsa() != offered.is_rsa() || (!spec.is_rsa() && spec != offered) {
        return Err(PeerMisbehaved::KeyOnOtherParameters {
            found: spec,
            named: offered,
        }
        .into());
    }
    Ok(spec)
}

/// The trusted_key_ids of a ClientHello, as the configuration asks (§3.4, §4.3).
fn trusted_key_ids(config: &ClientConfig) -> Vec<KeyExchangeId> {
    let identifier = |cert: &WtlsCertificate| match config.trusted_key_ids {
        TrustedKeyIds::None => None,
        TrustedKeyIds::Name => Some(cert.tbs.subject.clone()),
        TrustedKeyIds::KeyHash => Some(Identifier::KeyHashSha(pk::key_hash_sha(
            &cert.tbs.public_key,
        ))),
    };
    config
        .trusted_cas
        .iter()
        .filter_map(|(spec, cert)| {
            Some(KeyExchangeId {
                suite: if spec.is_rsa() {
                    KeyExchangeSuite::Rsa
                } else {
                    KeyExchangeSuite::EcdhEcdsa
                },
                parameters: spec.parameter_specifier(config.numbering),
                identifier: identifier(cert)?,
            })
        })
        .collect()
}

/// The RSA pre-master secret: the 20-byte RSASecret followed by the server's
/// RSAPublicKey encoding (wire-format notes §7.2, Kannel and the GWC API agree).
pub(crate) fn rsa_pre_master(secret: &[u8], key: &RsaPublicKey) -> Zeroizing<Vec<u8>> {
    let mut pms = Zeroizing::new(Vec::with_capacity(secret.len() + key.modulus.len() + 8));
    pms.extend_from_slice(secret);
    key.encode(&mut pms);
    pms
}

/// Validate the server certificate under whichever trusted CA issued it, consulting the
/// cache of already-validated certificates first.
fn validate_against(
    config: &ClientConfig,
    leaf: &WtlsCertificate,
    expected_subject: Option<&Identifier>,
    now: u32,
) -> HsResult<PeerKey> {
    let cache = &config.verified_server_cache;
    let encoded = cache.as_ref().map(|_| leaf.to_bytes());
    if let (Some(cache), Some(encoded)) = (cache, &encoded) {
        let cache = cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(key) = cache.get(encoded) {
            return Ok(key.clone());
        }
    }
    let ca = config
        .trusted_cas
        .iter()
        .find(|(_, ca)| ca.tbs.subject.same_name(&leaf.tbs.issuer))
        .ok_or(PeerMisbehaved::UntrustedIssuer)?;
    let key = crate::pki::validate_cached(
        leaf,
        &ca.1,
        &config.ca_keys,
        expected_subject,
        now,
        config.numbering,
    )?;
    if let (Some(cache), Some(encoded)) = (cache, encoded) {
        cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(encoded, key.clone());
    }
    Ok(key)
}
