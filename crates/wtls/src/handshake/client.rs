//! The client side of the handshake, read top to bottom in protocol order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use zeroize::Zeroizing;

use super::conn::{process_records, Core, CoreState, Endpoint, Role};
use super::{
    AuthMode, Event, HandshakeKind, Now, Output, Packing, Policy, ProtocolError, StoredSession,
};
use crate::codec::Codec;
use crate::crypto::pk::{self, KeyPair, PeerKey, PkError};
use crate::crypto::prf::PrfHash;
use crate::msgs::alert::ChangeCipherSpec;
use crate::msgs::certificate::{CertificateChain, CertificateEntry, PublicKey, WtlsCertificate};
use crate::msgs::common::{
    CipherSuite, EcPublicKey, Identifier, KeyExchangeId, ParameterSpecifier, Random, RsaPublicKey,
    SessionId,
};
use crate::msgs::enums::{
    AlertDescription, AlertLevel, CompressionMethod, ContentType, HandshakeType, KeyExchangeSuite,
    SequenceNumberMode,
};
use crate::msgs::handshake::{
    CertificateVerify, ClientHello, ClientKeyExchange, Finished, HandshakeMessage,
    ServerKeyExchangeKey,
};
use crate::params::ParameterNumbering;
use crate::probe::{HandshakeProbe, Message, Operation, Probe};
use crate::suite::Specifier;

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
pub type VerifiedServerCache = Arc<Mutex<HashMap<Vec<u8>, PeerKey>>>;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    WaitServerHello,
    WaitCertificate,
    WaitKeyExchange,
    WaitRequestOrDone,
    /// Optimised flow: after the server Certificate, its ChangeCipherSpec follows.
    WaitServerCcs,
    WaitServerFinished,
    Established,
    Closed,
}

/// The result of the key exchange, kept until the Finished messages.
#[derive(Clone)]
struct Negotiated {
    suite: KeyExchangeSuite,
    spec: Specifier,
    cipher: CipherSuite,
    key_refresh: u8,
    kind: HandshakeKind,
    session_id: SessionId,
}

pub struct Client {
    config: Arc<ClientConfig>,
    auth: AuthMode,
    state: State,
    core: Core,
    /// The key exchanges offered in ClientHello; ServerHello's client_key_id indexes it.
    offered: Vec<KeyExchangeOffer>,
    client_random: Random,
    server_random: Option<Random>,
    resume: Option<StoredSession>,
    negotiated: Option<Negotiated>,
    server_key: Option<PeerKey>,
    server_public: Option<PublicKey>,
    certificate_requested: bool,
    last_flight: Vec<Vec<u8>>,
    deadline_ns: Option<u64>,
    retransmissions: u32,
    timeout_ns: u64,
    now: Now,
    /// Why the last dropped input was refused (diagnostics only).
    last_dropped: Option<ProtocolError>,
}

/// What a datagram can change in a [`Client`], saved before it is taken in.
pub(crate) struct ClientSaved {
    state: State,
    core: CoreState,
    server_random: Option<Random>,
    negotiated: Option<Negotiated>,
    server_key: Option<PeerKey>,
    server_public: Option<PublicKey>,
    certificate_requested: bool,
    last_flight: Vec<Vec<u8>>,
    deadline_ns: Option<u64>,
    now: Now,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("state", &self.state)
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
            state: State::WaitServerHello,
            core,
            offered: Vec::new(),
            client_random: Random::new(now.unix_secs, random),
            server_random: None,
            resume,
            negotiated: None,
            server_key: None,
            server_public: None,
            certificate_requested: false,
            last_flight: Vec::new(),
            deadline_ns: None,
            retransmissions: 0,
            timeout_ns,
            now,
            last_dropped: None,
        }
    }

    /// Why the last input the client dropped was refused: unauthenticated input that
    /// does not fit is dropped without an answer, so a driver that times out can say
    /// what the server's last (possibly forged) answer was wrong about.
    pub fn last_dropped(&self) -> Option<&ProtocolError> {
        self.last_dropped.as_ref()
    }

    /// The first flight: ClientHello.
    pub fn start(&mut self, now: Now) -> Result<Output, ProtocolError> {
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
            return Err(ProtocolError::new(
                AlertDescription::InsufficientSecurity,
                "every configured cipher suite is weak (enable weak ciphers to offer them)",
            ));
        }
        if self
            .config
            .offers
            .iter()
            .all(|o| o.suite.is_anonymous() && !policy.allow_anonymous)
        {
            return Err(ProtocolError::new(
                AlertDescription::InsufficientSecurity,
                "only anonymous key exchange configured (enable it to offer it)",
            ));
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
        let trusted_key_ids = trusted_key_ids(&self.config);
        let hello = HandshakeMessage::ClientHello(ClientHello {
            client_version: 1,
            random: self.client_random,
            session_id,
            client_key_ids,
            trusted_key_ids,
            cipher_suites,
            compression_methods: vec![CompressionMethod::Null],
            sequence_number_mode: SequenceNumberMode::Explicit,
            key_refresh: self.config.key_refresh,
        });
        let (record, len) = self.core.handshake_record(&hello)?;
        self.core.probe.end_message(Message::CH, len);
        let mut out = Output::default();
        self.send_flight(vec![record], &mut out);
        self.core.probe.end_job();
        Ok(out)
    }

    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }

    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// When the retransmission timer fires, if it is running.
    pub fn deadline_ns(&self) -> Option<u64> {
        self.deadline_ns
    }

    /// The timer fired: send the last flight again, or give up after the configured
    /// number of retransmissions.
    pub fn on_timeout(&mut self, now: Now) -> Result<Output, ProtocolError> {
        let mut out = Output::default();
        match self.deadline_ns {
            Some(d) if now.mono_ns >= d => {}
            _ => return Ok(out),
        }
        if self.retransmissions >= self.config.max_retransmissions {
            self.state = State::Closed;
            self.deadline_ns = None;
            return Err(ProtocolError::new(
                AlertDescription::HandshakeFailure,
                format!("no answer after {} retransmissions", self.retransmissions),
            ));
        }
        self.retransmissions += 1;
        self.timeout_ns = self.timeout_ns.saturating_mul(2);
        self.deadline_ns = Some(now.mono_ns + self.timeout_ns);
        for d in &self.last_flight {
            self.core.probe.datagram(true, d.len(), 0);
        }
        out.datagrams = self.last_flight.clone();
        out.events.push(Event::Retransmitted);
        Ok(out)
    }

    pub fn retransmissions(&self) -> u32 {
        self.retransmissions
    }

    /// The session, for an abbreviated handshake later.
    pub fn session(&self) -> Option<StoredSession> {
        let n = self.negotiated.as_ref()?;
        let ms = self.core.master_secret.as_ref()?;
        if n.session_id.is_empty() || self.state != State::Established {
            return None;
        }
        Some(StoredSession {
            id: n.session_id.as_bytes().to_vec(),
            master_secret: ms.clone(),
            cipher_suite: n.cipher,
            key_exchange: n.suite,
            key_refresh: n.key_refresh,
            created_ns: self.now.mono_ns,
        })
    }

    pub fn probe(&self) -> &HandshakeProbe {
        &self.core.probe.data
    }

    pub fn take_probe(&mut self) -> HandshakeProbe {
        std::mem::take(&mut self.core.probe.data)
    }

    /// Protect application data for the server (one record, one datagram).
    pub fn seal_application_data(&mut self, data: &[u8]) -> Result<Vec<u8>, ProtocolError> {
        if self.state != State::Established {
            return Err(ProtocolError::new(
                AlertDescription::SessionNotReady,
                "application data before the handshake completed",
            ));
        }
        self.core.records.seal(ContentType::ApplicationData, data)
    }

    /// A close_notify alert for the server.
    pub fn close(&mut self) -> Vec<u8> {
        let (_, bytes) = self
            .core
            .records
            .alert(AlertDescription::ConnectionCloseNotify);
        self.state = State::Closed;
        bytes
    }

    /// Take in one datagram from the server.
    pub fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Output {
        self.now = now;
        let mut out = Output::default();
        if self.state == State::Closed {
            out.events.push(Event::Dropped("connection closed"));
            return out;
        }
        self.core.probe.begin_job();
        let records = match crate::msgs::record::parse_datagram(datagram) {
            Ok(r) => r,
            Err(_) => {
                // The framing cannot be trusted; nothing in it can be answered.
                out.events.push(Event::Dropped("unparsable datagram"));
                return out;
            }
        };
        self.core
            .probe
            .datagram(false, datagram.len(), records.len());
        out.records_in = records.len();
        process_records(self, &records, &mut out);
        self.core.probe.end_job();
        out
    }

    fn on_change_cipher_spec(&mut self, body: &[u8]) -> Result<(), ProtocolError> {
        ChangeCipherSpec::read_exact(body, "ChangeCipherSpec")?;
        if self.state == State::WaitRequestOrDone && self.optimised_possible() {
            // Optimised flow (§9.4): the server took our certificate from its store, so
            // both sides derive the pre-master secret from the two certified keys.
            let own = self.config.credential.clone().expect("checked").1;
            let server_key = self.server_key.clone().expect("checked");
            let shared = self
                .core
                .probe
                .operation(Message::CKX, Operation::ECDH, || {
                    pk::ecdh(&own, &server_key)
                })?;
            if let Some(n) = self.negotiated.as_mut() {
                n.kind = HandshakeKind::Optimised;
            }
            drop(self.finish_key_exchange(shared, 0));
            self.state = State::WaitServerCcs;
        }
        if self.state != State::WaitServerCcs {
            return Err(ProtocolError::new(
                AlertDescription::UnexpectedMessage,
                "ChangeCipherSpec out of order",
            ));
        }
        self.core.records.install_read()?;
        self.core.probe.end_message(Message::SCCS, 1);
        self.state = State::WaitServerFinished;
        Ok(())
    }

    /// The handshake message types that may come next (HelloRequest may come any time).
    fn expects(&self, typ: HandshakeType) -> bool {
        use HandshakeType as T;
        matches!(
            (self.state, typ),
            (_, T::HelloRequest)
                | (State::WaitServerHello, T::ServerHello)
                | (State::WaitCertificate, T::Certificate)
                | (State::WaitKeyExchange, T::ServerKeyExchange)
                | (
                    State::WaitRequestOrDone,
                    T::CertificateRequest | T::ServerHelloDone
                )
                | (State::WaitServerFinished, T::Finished)
        )
    }

    fn on_handshake(
        &mut self,
        msg: HandshakeMessage,
        body: &[u8],
        out: &mut Output,
    ) -> Result<(), ProtocolError> {
        match (self.state, msg) {
            (State::WaitServerHello, HandshakeMessage::ServerHello(sh)) => {
                self.core.transcript.update(body);
                self.on_server_hello(sh)?;
                self.core.probe.end_message(Message::SH, body.len());
            }
            (State::WaitCertificate, HandshakeMessage::Certificate(chain)) => {
                self.core.transcript.update(body);
                self.on_server_certificate(chain)?;
                self.core.probe.end_message(Message::SCERT, body.len());
            }
            (State::WaitKeyExchange, HandshakeMessage::ServerKeyExchange(ske)) => {
                self.core.transcript.update(body);
                self.on_server_key_exchange(ske.parameters, ske.key)?;
                self.core.probe.end_message(Message::SKX, body.len());
            }
            (State::WaitRequestOrDone, HandshakeMessage::CertificateRequest(_))
                if !self.certificate_requested =>
            {
                self.core.transcript.update(body);
                self.certificate_requested = true;
                self.core.probe.end_message(Message::CERTREQ, body.len());
            }
            (State::WaitRequestOrDone, HandshakeMessage::ServerHelloDone) => {
                self.core.transcript.update(body);
                self.core.probe.end_message(Message::SHD, body.len());
                self.send_key_exchange_flight(out)?;
            }
            (State::WaitServerFinished, HandshakeMessage::Finished(fin)) => {
                self.on_server_finished(fin, body, out)?;
            }
            (_, HandshakeMessage::HelloRequest) => {
                // We do not renegotiate (§9.5).
                let (alert, bytes) = self.core.records.alert(AlertDescription::NoRenegotiation);
                out.datagrams.push(bytes);
                out.events.push(Event::AlertSent(
                    alert,
                    "renegotiation is not supported".into(),
                ));
            }
            (state, other) => {
                return Err(ProtocolError::new(
                    AlertDescription::UnexpectedMessage,
                    format!("{} while in {state:?}", other.typ()),
                ))
            }
        }
        Ok(())
    }

    fn on_server_hello(
        &mut self,
        sh: crate::msgs::handshake::ServerHello,
    ) -> Result<(), ProtocolError> {
        if sh.server_version != 1 {
            return Err(ProtocolError::new(
                AlertDescription::ProtocolVersion,
                format!("server version {}", sh.server_version),
            ));
        }
        let c = sh.cipher_suite;
        if !self.config.cipher_suites.contains(&c)
            || !self.config.policy.accepts_cipher(c.bulk, c.mac)
        {
            return Err(ProtocolError::new(
                AlertDescription::IllegalParameter,
                "server chose a cipher suite we did not offer",
            ));
        }
        if sh.key_refresh > self.config.key_refresh {
            return Err(ProtocolError::new(
                AlertDescription::IllegalParameter,
                "server asked for less frequent key refresh than offered",
            ));
        }
        if sh.sequence_number_mode != SequenceNumberMode::Explicit {
            return Err(ProtocolError::new(
                AlertDescription::IllegalParameter,
                "only explicit sequence numbers are supported",
            ));
        }
        self.server_random = Some(sh.random);
        self.core
            .transcript
            .settle(PrfHash::for_mac(sh.cipher_suite.mac));
        let resumed = match &self.resume {
            Some(s) => !sh.session_id.is_empty() && sh.session_id.as_bytes() == s.id.as_slice(),
            None => false,
        };
        if resumed {
            let s = self.resume.clone().expect("checked");
            if s.cipher_suite != sh.cipher_suite {
                return Err(ProtocolError::new(
                    AlertDescription::IllegalParameter,
                    "resumed session with another cipher suite",
                ));
            }
            let spec = self.config.offers.first().map(|o| o.spec).ok_or_else(|| {
                ProtocolError::new(AlertDescription::InternalError, "no key exchange offered")
            })?;
            self.negotiated = Some(Negotiated {
                suite: s.key_exchange,
                spec,
                cipher: sh.cipher_suite,
                key_refresh: sh.key_refresh,
                kind: HandshakeKind::Abbreviated,
                session_id: sh.session_id,
            });
            self.install_keys(s.master_secret.clone());
            self.state = State::WaitServerCcs;
            return Ok(());
        }
        let index = usize::from(sh.client_key_id);
        if index == 0 || index > self.offered.len() {
            return Err(ProtocolError::new(
                AlertDescription::IllegalParameter,
                format!("client_key_id {index} names no offered key exchange"),
            ));
        }
        let offer = &self.offered[index - 1];
        if offer.suite.is_anonymous() && !self.config.policy.allow_anonymous {
            return Err(ProtocolError::new(
                AlertDescription::InsufficientSecurity,
                "anonymous key exchange is disabled",
            ));
        }
        self.negotiated = Some(Negotiated {
            suite: offer.suite.base(),
            spec: offer.spec,
            cipher: sh.cipher_suite,
            key_refresh: sh.key_refresh,
            kind: HandshakeKind::Full,
            session_id: sh.session_id,
        });
        self.state = if offer.suite.is_anonymous() {
            State::WaitKeyExchange
        } else {
            State::WaitCertificate
        };
        Ok(())
    }

    fn on_server_certificate(&mut self, chain: CertificateChain) -> Result<(), ProtocolError> {
        let leaf = match chain.0.first() {
            Some(CertificateEntry::Wtls(c)) => c.clone(),
            Some(_) => {
                return Err(ProtocolError::new(
                    AlertDescription::UnsupportedCertificate,
                    "only WTLS certificates are supported",
                ))
            }
            None => {
                return Err(ProtocolError::new(
                    AlertDescription::BadCertificate,
                    "the server sent no certificate",
                ))
            }
        };
        let n = self.negotiated.as_ref().expect("after ServerHello");
        let expected_spec = n.spec;
        let key = self
            .core
            .probe
            .operation(Message::SCERT, Operation::CERTCHECK, || {
                validate_against(
                    &self.config,
                    &leaf,
                    self.config.expected_server.as_ref(),
                    self.now.unix_secs,
                )
            })?;
        // What our KeyExchangeId named on the wire: under WAP-261 an RSA offer says
        // only "RSA" (index 0), so the certificate's modulus decides the size.
        let numbering = self.config.numbering;
        let named = Specifier::named_by(&expected_spec.parameter_specifier(numbering), numbering)
            .map_err(|e| ProtocolError::new(e.alert(), e.to_string()))?;
        if !named.admits(key.spec()) {
            return Err(ProtocolError::new(
                AlertDescription::IllegalParameter,
                format!(
                    "server key is {}, the chosen key exchange named {}",
                    key.spec().short(),
                    expected_spec.short()
                ),
            ));
        }
        if let Some(n) = self.negotiated.as_mut() {
            n.spec = key.spec();
        }
        self.server_public = Some(leaf.tbs.public_key.clone());
        self.server_key = Some(key);
        // In the optimised flow (§9.4) a ChangeCipherSpec follows instead of
        // ServerHelloDone; `on_change_cipher_spec` recognises it from this state.
        self.state = State::WaitRequestOrDone;
        Ok(())
    }

    /// Whether the server may be running the optimised flow with us: ECDH_ECDSA, a
    /// certified static key on the server's curve, and our identifier offered.
    fn optimised_possible(&self) -> bool {
        let (Some(n), Some(_), Some((_, key))) = (
            self.negotiated.as_ref(),
            self.server_key.as_ref(),
            self.config.credential.as_ref(),
        ) else {
            return false;
        };
        n.suite == KeyExchangeSuite::EcdhEcdsa
            && key.spec() == n.spec
            && self
                .config
                .offers
                .iter()
                .any(|o| o.identifier != Identifier::Null)
    }

    fn on_server_key_exchange(
        &mut self,
        parameters: ParameterSpecifier,
        key: ServerKeyExchangeKey,
    ) -> Result<(), ProtocolError> {
        let n = self.negotiated.as_ref().expect("after ServerHello");
        let public = match (key, n.suite.is_rsa()) {
            (ServerKeyExchangeKey::Rsa(k), true) => PublicKey::Rsa(k),
            (ServerKeyExchangeKey::Ec(p), false) if n.suite.is_ecdh() => PublicKey::Ec(p),
            _ => {
                return Err(ProtocolError::new(
                    AlertDescription::IllegalParameter,
                    "ServerKeyExchange key does not match the key exchange suite",
                ))
            }
        };
        let spec = ske_spec(&parameters, n.spec, &public, self.config.numbering)?;
        self.server_key = Some(PeerKey::from_wire(spec, &public)?);
        if let Some(n) = self.negotiated.as_mut() {
            n.spec = spec;
        }
        self.server_public = Some(public);
        self.state = State::WaitRequestOrDone;
        Ok(())
    }

    /// After ServerHelloDone: Certificate*, ClientKeyExchange*, CertificateVerify*,
    /// ChangeCipherSpec, Finished, in one flight (thesis Tables 3.5 and 3.7).
    fn send_key_exchange_flight(&mut self, out: &mut Output) -> Result<(), ProtocolError> {
        let n = self.negotiated.as_ref().expect("after ServerHello");
        let (suite, spec) = (n.suite, n.spec);
        let server_key = self.server_key.clone().ok_or_else(|| {
            ProtocolError::new(AlertDescription::HandshakeFailure, "no server key")
        })?;
        let mut records = Vec::new();

        // Client Certificate: ours when asked and we have one; an empty list otherwise
        // (the thesis' server-authenticated flow answers its CertificateRequest so).
        let mut static_ecdh = false;
        if self.certificate_requested {
            let entries = match (&self.config.credential, self.auth) {
                (Some((cert, key)), AuthMode::Mutual) => {
                    static_ecdh = suite.is_ecdh() && key.spec() == spec && !suite.is_anonymous();
                    vec![CertificateEntry::Wtls(cert.clone())]
                }
                _ => Vec::new(),
            };
            let msg = HandshakeMessage::Certificate(CertificateChain(entries));
            let (record, len) = self.core.handshake_record(&msg)?;
            records.push(record);
            self.core.probe.end_message(Message::CCERT, len);
        }

        // The pre-master secret, and ClientKeyExchange where the suite needs one.
        let pre_master: Zeroizing<Vec<u8>> = if suite.is_rsa() {
            let mut secret = Zeroizing::new(vec![0u8; 20]);
            secret[0] = 1; // client_version
            openssl::rand::rand_bytes(&mut secret[1..]).expect("the system RNG works");
            let ciphertext = self
                .core
                .probe
                .operation(Message::CKX, Operation::RSAENC, || {
                    pk::rsa_encrypt(&server_key, &secret)
                })?;
            let rsa_public = match &self.server_public {
                Some(PublicKey::Rsa(k)) => k.clone(),
                _ => {
                    return Err(ProtocolError::new(
                        AlertDescription::IllegalParameter,
                        "RSA key exchange without an RSA server key",
                    ))
                }
            };
            let msg = HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Rsa(ciphertext));
            let (record, len) = self.core.handshake_record(&msg)?;
            records.push(record);
            let pre_master = rsa_pre_master(&secret, &rsa_public);
            self.finish_key_exchange(pre_master, len)
        } else if let (true, Some((cert, own))) = (static_ecdh, &self.config.credential) {
            // Mutual ECDH_ECDSA: both certified keys; the thesis sends no
            // ClientKeyExchange but still books this computation under T_M_C_CKX.
            let own = own.clone();
            let mut len = 0;
            if let (true, PublicKey::Ec(point)) =
                (self.config.mutual_ecdh_key_exchange, &cert.tbs.public_key)
            {
                let msg = HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Ec(point.clone()));
                let (record, n) = self.core.handshake_record(&msg)?;
                records.push(record);
                len = n;
            }
            let shared = self
                .core
                .probe
                .operation(Message::CKX, Operation::ECDH, || {
                    pk::ecdh(&own, &server_key)
                })?;
            self.finish_key_exchange(shared, len)
        } else {
            // A load generator may hand in key shares computed before its clock started
            // (ephemeral point and the secret it gives with this server key).
            let precomputed = self
                .config
                .key_share_source
                .as_ref()
                .and_then(|source| source(&server_key))
                .transpose()?;
            let (point, shared) = match precomputed {
                Some(share) => share,
                None => {
                    let ephemeral = self.core.probe.operation(
                        Message::CKX,
                        Operation::KEYGEN,
                        || match &self.config.ephemeral_source {
                            Some(source) => source(spec),
                            None => pk::ephemeral_ec(spec),
                        },
                    )?;
                    let shared =
                        self.core
                            .probe
                            .operation(Message::CKX, Operation::ECDH, || {
                                pk::ecdh(&ephemeral, &server_key)
                            })?;
                    let point = match ephemeral.public_wire()? {
                        PublicKey::Ec(p) => p,
                        PublicKey::Rsa(_) => EcPublicKey(Vec::new()),
                    };
                    (point, shared)
                }
            };
            let msg = HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Ec(point));
            let (record, len) = self.core.handshake_record(&msg)?;
            records.push(record);
            self.finish_key_exchange(shared, len)
        };
        drop(pre_master);

        // CertificateVerify: a signature over the hash of the transcript so far, by
        // the MAC family (MD5 for the MD5 MACs), as the PRF and Finished hash.
        if self.auth == AuthMode::Mutual && suite.is_rsa() && self.certificate_requested {
            if let Some((_, key)) = &self.config.credential {
                let digest = self.core.transcript.digest(PrfHash::for_mac(self.mac()));
                let key = key.clone();
                let signature =
                    self.core
                        .probe
                        .operation(Message::CERTVRFY, Operation::CVSIGN, || {
                            pk::rsa_sign_digest(&key, &digest)
                        })?;
                let msg = HandshakeMessage::CertificateVerify(CertificateVerify { signature });
                let (record, len) = self.core.handshake_record(&msg)?;
                records.push(record);
                self.core.probe.end_message(Message::CERTVRFY, len);
            }
        }

        records.push(self.core.change_cipher_spec()?);
        self.core.probe.end_message(Message::CCCS, 1);
        let (record, len) = self.core.finished(self.mac(), b"client finished")?;
        records.push(record);
        self.core.probe.end_message(Message::CFIN, len);
        self.state = State::WaitServerCcs;
        self.send_flight(records, out);
        Ok(())
    }

    /// Master secret from the pre-master secret; closes the CKX probe.
    fn finish_key_exchange(
        &mut self,
        pre_master: Zeroizing<Vec<u8>>,
        ckx_len: usize,
    ) -> Zeroizing<Vec<u8>> {
        let n = self.negotiated.as_ref().expect("after ServerHello");
        let hash = PrfHash::for_mac(n.cipher.mac);
        let server_random = self.server_random.expect("after ServerHello");
        let master = self.core.probe.operation(Message::CKX, Operation::MS, || {
            crate::crypto::keys::master_secret(
                hash,
                &pre_master,
                &self.client_random.0,
                &server_random.0,
            )
        });
        self.install_keys(master);
        self.core.probe.end_message(Message::CKX, ckx_len);
        pre_master
    }

    fn install_keys(&mut self, master: Zeroizing<[u8; 20]>) {
        let n = self.negotiated.as_ref().expect("after ServerHello");
        self.core
            .records
            .set_pending(crate::record::ProtectionParams {
                bulk: n.cipher.bulk,
                mac: n.cipher.mac,
                key_refresh: n.key_refresh,
                master_secret: master.clone(),
                client_random: self.client_random.0,
                server_random: self.server_random.expect("after ServerHello").0,
            });
        self.core.master_secret = Some(master);
    }

    fn on_server_finished(
        &mut self,
        fin: Finished,
        body: &[u8],
        out: &mut Output,
    ) -> Result<(), ProtocolError> {
        let mac = self.mac();
        self.core
            .check_finished(mac, b"server finished", Message::SFIN, &fin, body)?;
        let kind = self.negotiated.as_ref().expect("after ServerHello").kind;
        if kind != HandshakeKind::Full {
            // Abbreviated and optimised: the client's ChangeCipherSpec and Finished
            // come last and cover the server's Finished.
            let mut records = vec![self.core.change_cipher_spec()?];
            self.core.probe.end_message(Message::CCCS, 1);
            let (record, len) = self.core.finished(mac, b"client finished")?;
            records.push(record);
            self.core.probe.end_message(Message::CFIN, len);
            out.datagrams.extend(self.core.pack(records));
        }
        self.state = State::Established;
        self.deadline_ns = None;
        self.last_flight.clear();
        out.events.push(Event::HandshakeComplete(kind));
        Ok(())
    }

    /// The MAC algorithm of the negotiated cipher suite (it picks the PRF hash).
    fn mac(&self) -> crate::msgs::enums::MacAlgorithm {
        self.negotiated
            .as_ref()
            .expect("after ServerHello")
            .cipher
            .mac
    }

    fn send_flight(&mut self, records: Vec<Vec<u8>>, out: &mut Output) {
        let datagrams = self.core.pack(records);
        self.last_flight = datagrams.clone();
        self.deadline_ns = Some(self.now.mono_ns + self.timeout_ns);
        out.datagrams.extend(datagrams);
    }
}

impl Endpoint for Client {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    fn is_established(&self) -> bool {
        self.state == State::Established
    }

    fn close_after_alert(&mut self, _level: AlertLevel) {
        self.state = State::Closed;
        self.deadline_ns = None;
    }

    fn on_change_cipher_spec(&mut self, body: &[u8]) -> Result<(), ProtocolError> {
        Client::on_change_cipher_spec(self, body)
    }

    fn expects(&self, typ: HandshakeType) -> bool {
        Client::expects(self, typ)
    }

    fn key_exchange(&self) -> Option<KeyExchangeSuite> {
        self.negotiated.as_ref().map(|n| n.suite)
    }

    fn state_name(&self) -> String {
        format!("{:?}", self.state)
    }

    fn on_handshake(
        &mut self,
        msg: HandshakeMessage,
        body: &[u8],
        out: &mut Output,
    ) -> Result<(), ProtocolError> {
        Client::on_handshake(self, msg, body, out)
    }

    fn early_application_data(&mut self) -> Option<ProtocolError> {
        None
    }

    type Saved = ClientSaved;

    fn save(&self) -> ClientSaved {
        ClientSaved {
            state: self.state,
            core: self.core.save(),
            server_random: self.server_random,
            negotiated: self.negotiated.clone(),
            server_key: self.server_key.clone(),
            server_public: self.server_public.clone(),
            certificate_requested: self.certificate_requested,
            last_flight: self.last_flight.clone(),
            deadline_ns: self.deadline_ns,
            now: self.now,
        }
    }

    fn restore(&mut self, saved: ClientSaved) {
        self.state = saved.state;
        self.core.restore(saved.core);
        self.server_random = saved.server_random;
        self.negotiated = saved.negotiated;
        self.server_key = saved.server_key;
        self.server_public = saved.server_public;
        self.certificate_requested = saved.certificate_requested;
        self.last_flight = saved.last_flight;
        self.deadline_ns = saved.deadline_ns;
        self.now = saved.now;
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
) -> Result<Specifier, ProtocolError> {
    let modulus_bits = match public {
        PublicKey::Rsa(k) => Some(
            openssl::bn::BigNum::from_slice(&k.modulus)
                .map_err(|e| ProtocolError::new(AlertDescription::DecodeError, e.to_string()))?
                .num_bits() as u32,
        ),
        PublicKey::Ec(_) => None,
    };
    let spec = match (parameters, modulus_bits) {
        (ParameterSpecifier::Index(0), None) => Some(offered),
        _ => Specifier::named_by(parameters, numbering)
            .map_err(|e| ProtocolError::new(e.alert(), e.to_string()))?
            .resolve(modulus_bits),
    };
    let spec = spec.ok_or_else(|| {
        ProtocolError::new(
            AlertDescription::UnsupportedCertificate,
            format!(
                "RSA key of {} bits (1024, 2048 or 3072 supported)",
                modulus_bits.unwrap_or(0)
            ),
        )
    })?;
    if spec.is_rsa() != offered.is_rsa() || (!spec.is_rsa() && spec != offered) {
        return Err(ProtocolError::new(
            AlertDescription::IllegalParameter,
            format!("ServerKeyExchange key on {spec}, we offered {offered}"),
        ));
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
) -> Result<PeerKey, ProtocolError> {
    let cache = &config.verified_server_cache;
    let encoded = cache.as_ref().map(|_| leaf.to_bytes());
    if let (Some(cache), Some(encoded)) = (cache, &encoded) {
        if let Some(key) = cache.lock().expect("cache lock").get(encoded) {
            return Ok(key.clone());
        }
    }
    let ca = config
        .trusted_cas
        .iter()
        .find(|(_, ca)| ca.tbs.subject.same_name(&leaf.tbs.issuer))
        .ok_or_else(|| {
            ProtocolError::new(
                AlertDescription::UnknownCa,
                "the server certificate's issuer is not a trusted CA",
            )
        })?;
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
            .expect("cache lock")
            .insert(encoded, key.clone());
    }
    Ok(key)
}
