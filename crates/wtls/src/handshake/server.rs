//! The server side of the handshake, one `ServerConnection` per peer, read top to
//! bottom in protocol order.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use zeroize::Zeroizing;

use super::client::rsa_pre_master;
use super::conn::{fail, process_records, Core, CoreState, Endpoint, Role, Verdict};
use super::{
    AuthMode, Event, HandshakeKind, Now, Output, Packing, Policy, ProtocolError, SessionCache,
    StoredSession,
};
use crate::codec::Codec;
use crate::crypto::pk::{self, KeyPair, PeerKey};
use crate::crypto::prf::PrfHash;
use crate::msgs::alert::ChangeCipherSpec;
use crate::msgs::certificate::{CertificateChain, CertificateEntry, PublicKey, WtlsCertificate};
use crate::msgs::common::{CipherSuite, Identifier, KeyExchangeId, Random, SessionId};
use crate::msgs::enums::{
    AlertDescription, AlertLevel, CompressionMethod, ContentType, HandshakeType, KeyExchangeSuite,
    SequenceNumberMode,
};
use crate::msgs::handshake::{
    CertificateRequest, ClientHello, ClientKeyExchange, Finished, HandshakeMessage, ServerHello,
    ServerKeyExchange, ServerKeyExchangeKey,
};
use crate::msgs::record::{OwnedRecord, RecordHeader};
use crate::params::{NamedParameters, ParameterNumbering};
use crate::probe::{HandshakeProbe, Message, Operation, Probe};
use crate::suite::Specifier;

/// Encoded Certificate records by certificate signature.
pub type CertificateRecords = HashMap<Vec<u8>, Arc<[u8]>>;

/// A server certificate and key, with the CA that issued it.
#[derive(Clone)]
pub struct ServerCredential {
    pub spec: Specifier,
    pub cert: WtlsCertificate,
    pub key: KeyPair,
    pub ca_spec: Specifier,
    pub ca_subject: Identifier,
    /// SHA-1 of the issuing CA's public key encoding, so that a client naming its CAs
    /// by `key_hash_sha` in trusted_key_ids finds this credential; `None` matches by
    /// name only.
    pub ca_key_hash: Option<[u8; 20]>,
}

impl ServerCredential {
    /// Whether a trusted_key_ids entry names this credential's CA: by name (in any
    /// character set that spells it the same) or by the hash of its key.
    fn issued_by(&self, id: &Identifier) -> bool {
        match id {
            Identifier::KeyHashSha(h) => self.ca_key_hash.as_ref() == Some(h),
            other => other.same_name(&self.ca_subject),
        }
    }
}

#[derive(Clone)]
pub struct ServerConfig {
    pub credentials: Vec<ServerCredential>,
    /// CAs whose client certificates are accepted (also named in CertificateRequest).
    pub trusted_client_cas: Vec<(Specifier, WtlsCertificate)>,
    pub expected_client: Option<Identifier>,
    /// The ParameterIndex numbering the server writes and reads (certificates too).
    pub numbering: ParameterNumbering,
    /// Mutual: request and require a client certificate.
    pub client_auth: AuthMode,
    /// The thesis' server-authenticated flow sends a CertificateRequest too, answered by
    /// an empty client Certificate (Table 3.7); this reproduces its message counts.
    pub thesis_certificate_request: bool,
    /// Client certificates the server holds itself, by the encoding of the client's
    /// identifier: the optimised handshake takes them from here.
    pub client_certificates: HashMap<Vec<u8>, WtlsCertificate>,
    /// Cipher suites the server accepts; the client's order of preference decides.
    pub cipher_suites: Vec<CipherSuite>,
    pub session_cache: Option<Arc<Mutex<SessionCache>>>,
    pub max_key_refresh: u8,
    pub packing: Packing,
    pub policy: Policy,
    /// Parsed keys of the trusted CAs, filled on first use.
    pub ca_keys: Arc<crate::pki::CaKeyCache>,
    /// The Certificate record of each server certificate, encoded once and shared by
    /// every connection (keyed by the certificate's signature): a half-open connection
    /// then holds no copy of the certificate in its retransmission cache.
    pub certificate_records: Arc<Mutex<CertificateRecords>>,
}

impl ServerConfig {
    pub fn new(credentials: Vec<ServerCredential>, cipher_suites: Vec<CipherSuite>) -> Self {
        ServerConfig {
            credentials,
            trusted_client_cas: Vec::new(),
            expected_client: None,
            numbering: ParameterNumbering::default(),
            client_auth: AuthMode::ServerAuth,
            thesis_certificate_request: false,
            client_certificates: HashMap::new(),
            cipher_suites,
            session_cache: None,
            max_key_refresh: 15,
            packing: Packing::default(),
            policy: Policy::default(),
            ca_keys: Arc::default(),
            certificate_records: Arc::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    WaitClientHello,
    WaitClientCertificate,
    WaitClientKeyExchange,
    WaitCertificateVerify,
    WaitClientCcs,
    WaitClientFinished,
    Established,
    Closed,
}

#[derive(Clone)]
struct Negotiated {
    /// The suite without its point format ([`KeyExchangeSuite::base`]).
    suite: KeyExchangeSuite,
    spec: Specifier,
    cipher: CipherSuite,
    key_refresh: u8,
    kind: HandshakeKind,
    session_id: SessionId,
    credential: Option<usize>,
}

/// How many received datagrams are remembered, with our answer to each, so that a
/// retransmitted flight is answered again without repeating any public-key work.
const REMEMBERED_FLIGHTS: usize = 8;

pub struct ServerConnection {
    config: Arc<ServerConfig>,
    state: State,
    core: Core,
    client_random: Option<Random>,
    server_random: Random,
    negotiated: Option<Negotiated>,
    ephemeral: Option<KeyPair>,
    client_key: Option<PeerKey>,
    client_certified: bool,
    certificate_requested: bool,
    have_pre_master: bool,
    /// Fingerprint of a received datagram ([`datagram_fingerprint`]) and what we
    /// answered to it.
    answered: VecDeque<(u64, Answer)>,
    /// Where the shared Certificate record sits in the flight being built (record
    /// index, byte offset when the flight is one datagram) and the record itself.
    shared_certificate: Option<(usize, usize, Arc<[u8]>)>,
    now: Now,
    /// Why the last dropped input was refused (diagnostics only).
    last_dropped: Option<ProtocolError>,
}

/// What a datagram can change in a [`ServerConnection`], saved before it is taken in.
pub(crate) struct ServerSaved {
    state: State,
    core: CoreState,
    client_random: Option<Random>,
    negotiated: Option<Negotiated>,
    ephemeral: Option<KeyPair>,
    client_key: Option<PeerKey>,
    client_certified: bool,
    certificate_requested: bool,
    have_pre_master: bool,
    shared_certificate: Option<(usize, usize, Arc<[u8]>)>,
    now: Now,
}

impl std::fmt::Debug for ServerConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConnection")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl ServerConnection {
    pub fn new(config: Arc<ServerConfig>, probe: Probe, now: Now) -> Self {
        let mut random = [0u8; 12];
        crate::crypto::random::fill(&mut random);
        let core = Core::new(Role::Server, config.packing, probe);
        ServerConnection {
            config,
            state: State::WaitClientHello,
            core,
            client_random: None,
            server_random: Random::new(now.unix_secs, random),
            negotiated: None,
            ephemeral: None,
            client_key: None,
            client_certified: false,
            certificate_requested: false,
            have_pre_master: false,
            // Usually one answer (ClientHello) or two (and the client's flight).
            answered: VecDeque::with_capacity(2),
            shared_certificate: None,
            now,
            last_dropped: None,
        }
    }

    /// Why the last input the connection dropped was refused (diagnostics only).
    pub fn last_dropped(&self) -> Option<&ProtocolError> {
        self.last_dropped.as_ref()
    }

    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }

    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// A handshake is under way: the connection holds state for a peer that has not
    /// finished (the gateway bounds how long such state may live).
    pub fn is_half_open(&self) -> bool {
        !matches!(self.state, State::Established | State::Closed)
    }

    pub fn handshake_kind(&self) -> Option<HandshakeKind> {
        self.negotiated.as_ref().map(|n| n.kind)
    }

    /// Which authentication the completed handshake had.
    pub fn client_authenticated(&self) -> bool {
        self.client_certified
    }

    pub fn probe(&self) -> &HandshakeProbe {
        &self.core.probe.data
    }

    pub fn take_probe(&mut self) -> HandshakeProbe {
        std::mem::take(&mut self.core.probe.data)
    }

    /// Approximate heap bytes this connection holds (for the memory bound under floods).
    pub fn heap_bytes(&self) -> usize {
        self.answered
            .iter()
            .map(|(_, a)| 8 + a.heap_bytes())
            .sum::<usize>()
            + self.core.probe.data.messages.capacity()
                * std::mem::size_of::<crate::probe::MessageTiming>()
            + self.core.probe.data.operations.capacity()
                * std::mem::size_of::<crate::probe::OperationTiming>()
            + self.core.probe.data.datagrams.capacity()
                * std::mem::size_of::<crate::probe::DatagramTiming>()
    }

    pub fn seal_application_data(&mut self, data: &[u8]) -> Result<Vec<u8>, ProtocolError> {
        if self.state != State::Established {
            return Err(ProtocolError::new(
                AlertDescription::SessionNotReady,
                "application data before the handshake completed",
            ));
        }
        self.core.records.seal(ContentType::ApplicationData, data)
    }

    /// Take in one datagram from the client.
    pub fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Output {
        self.now = now;
        let mut out = Output::default();
        if self.state == State::Closed {
            out.events.push(Event::Dropped("connection closed"));
            return out;
        }
        let digest = datagram_fingerprint(datagram);
        if let Some((_, answer)) = self.answered.iter().find(|(d, _)| *d == digest) {
            // A retransmitted flight: the client lost our answer. Send it again.
            out.datagrams = answer.datagrams();
            out.records_in = answer.records_in;
            out.events.push(Event::Retransmitted);
            return out;
        }
        self.core.probe.begin_job();
        let records = match crate::msgs::record::parse_datagram(datagram) {
            Ok(r) => r,
            Err(e) => {
                if self.state == State::WaitClientHello {
                    // Nothing trustworthy came from this peer yet: tell it why.
                    fail(self, ProtocolError::from(e), &mut out);
                } else {
                    out.events.push(Event::Dropped("unparsable datagram"));
                }
                return out;
            }
        };
        self.core
            .probe
            .datagram(false, datagram.len(), records.len());
        let handshaking = self.state != State::Established;
        out.records_in = records.len();
        let verdict = process_records(self, &records, &mut out);
        self.core.probe.end_job();
        if handshaking && self.state != State::Closed && verdict == Verdict::Kept {
            if self.answered.len() == REMEMBERED_FLIGHTS {
                self.answered.pop_front();
            }
            let answer = Answer::new(
                out.records_in,
                &out.datagrams,
                self.shared_certificate.take(),
                self.config.packing,
            );
            self.answered.push_back((digest, answer));
        }
        out
    }

    fn forget_session(&mut self) {
        if let (Some(cache), Some(n)) = (&self.config.session_cache, &self.negotiated) {
            if !n.session_id.is_empty() {
                cache
                    .lock()
                    .expect("session cache lock")
                    .remove(n.session_id.as_bytes());
            }
        }
    }

    fn on_change_cipher_spec(&mut self, body: &[u8]) -> Result<(), ProtocolError> {
        ChangeCipherSpec::read_exact(body, "ChangeCipherSpec")?;
        match self.state {
            State::WaitClientKeyExchange if self.client_key.is_some() => {
                // Mutual ECDH_ECDSA: no ClientKeyExchange; the pre-master secret comes
                // from our certified key and the client's (booked as T_M_S_CKX).
                self.static_ecdh_pre_master(0)?;
            }
            State::WaitClientCcs => {}
            _ => {
                return Err(ProtocolError::new(
                    AlertDescription::UnexpectedMessage,
                    format!("ChangeCipherSpec while in {:?}", self.state),
                ))
            }
        }
        if !self.have_pre_master && self.core.master_secret.is_none() {
            return Err(ProtocolError::new(
                AlertDescription::UnexpectedMessage,
                "ChangeCipherSpec before the key exchange",
            ));
        }
        self.core.records.install_read()?;
        self.core.probe.end_message(Message::CCCS, 1);
        self.state = State::WaitClientFinished;
        Ok(())
    }

    /// The handshake message types that may come next.
    fn expects(&self, typ: HandshakeType) -> bool {
        use HandshakeType as T;
        matches!(
            (self.state, typ),
            (State::WaitClientHello | State::Established, T::ClientHello)
                | (State::WaitClientCertificate, T::Certificate)
                | (State::WaitClientKeyExchange, T::ClientKeyExchange)
                | (State::WaitCertificateVerify, T::CertificateVerify)
                | (State::WaitClientFinished, T::Finished)
        )
    }

    fn on_handshake(
        &mut self,
        msg: HandshakeMessage,
        body: &[u8],
        out: &mut Output,
    ) -> Result<(), ProtocolError> {
        match (self.state, msg) {
            (State::WaitClientHello, HandshakeMessage::ClientHello(ch)) => {
                self.core.transcript.update(body);
                self.core.probe.end_message(Message::CH, body.len());
                self.on_client_hello(ch, out)?;
            }
            (State::WaitClientCertificate, HandshakeMessage::Certificate(chain)) => {
                self.core.transcript.update(body);
                self.on_client_certificate(chain)?;
                self.core.probe.end_message(Message::CCERT, body.len());
                self.state = State::WaitClientKeyExchange;
            }
            (State::WaitClientKeyExchange, HandshakeMessage::ClientKeyExchange(cke)) => {
                self.core.transcript.update(body);
                self.on_client_key_exchange(cke, body.len())?;
                self.state = if self.client_certified
                    && self.negotiated.as_ref().is_some_and(|n| n.suite.is_rsa())
                {
                    State::WaitCertificateVerify
                } else {
                    State::WaitClientCcs
                };
            }
            (State::WaitCertificateVerify, HandshakeMessage::CertificateVerify(cv)) => {
                // The transcript hash of the MAC family, as the PRF and Finished use.
                let digest = self.core.transcript.digest(PrfHash::for_mac(self.mac()));
                let key = self.client_key.clone().expect("client certified");
                self.core
                    .probe
                    .operation(Message::CERTVRFY, Operation::CVVERIFY, || {
                        pk::rsa_verify_digest(&key, &digest, &cv.signature)
                    })
                    .map_err(|e| {
                        ProtocolError::new(
                            AlertDescription::DecryptError,
                            format!("CertificateVerify: {e}"),
                        )
                    })?;
                self.core.transcript.update(body);
                self.core.probe.end_message(Message::CERTVRFY, body.len());
                self.state = State::WaitClientCcs;
            }
            (State::WaitClientFinished, HandshakeMessage::Finished(fin)) => {
                self.on_client_finished(fin, body, out)?;
            }
            (State::Established, HandshakeMessage::ClientHello(_)) => {
                return Err(ProtocolError::new(
                    AlertDescription::NoRenegotiation,
                    "renegotiation is not supported",
                ))
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

    fn on_client_hello(&mut self, ch: ClientHello, out: &mut Output) -> Result<(), ProtocolError> {
        if ch.client_version != 1 {
            return Err(ProtocolError::new(
                AlertDescription::ProtocolVersion,
                format!("client version {}", ch.client_version),
            ));
        }
        if !ch.compression_methods.contains(&CompressionMethod::Null) {
            return Err(ProtocolError::new(
                AlertDescription::HandshakeFailure,
                "the client does not offer null compression",
            ));
        }
        self.client_random = Some(ch.random);
        let cipher = self.choose_cipher(&ch.cipher_suites)?;
        let key_refresh = ch.key_refresh.min(self.config.max_key_refresh);

        // An abbreviated handshake if the client names a session we still hold.
        if !ch.session_id.is_empty() {
            if let Some(cache) = &self.config.session_cache {
                let found = cache
                    .lock()
                    .expect("session cache lock")
                    .lookup(ch.session_id.as_bytes(), self.now.mono_ns);
                if let Some(s) = found.filter(|s| ch.cipher_suites.contains(&s.cipher_suite)) {
                    return self.resume(ch, s, key_refresh, out);
                }
            }
        }

        self.core.transcript.settle(PrfHash::for_mac(cipher.mac));
        let (index, kid, spec, credential, optimised) = self.choose_key_exchange(&ch)?;
        let session_id = self.new_session_id();
        let kind = if optimised.is_some() {
            HandshakeKind::Optimised
        } else {
            HandshakeKind::Full
        };
        // Our points travel compressed if the client chose a suite 11-14 (WAP-261).
        let compressed = ch
            .client_key_ids
            .get(index)
            .is_some_and(|k| super::compressed_points(k.suite, self.config.numbering));
        self.negotiated = Some(Negotiated {
            suite: kid.suite,
            spec,
            cipher,
            key_refresh,
            kind,
            session_id: session_id.clone(),
            credential,
        });
        let mut records = Vec::new();
        let hello = HandshakeMessage::ServerHello(ServerHello {
            server_version: 1,
            random: self.server_random,
            session_id,
            client_key_id: u8::try_from(index + 1).map_err(|_| {
                ProtocolError::new(AlertDescription::IllegalParameter, "too many key ids")
            })?,
            cipher_suite: cipher,
            compression_method: CompressionMethod::Null,
            sequence_number_mode: SequenceNumberMode::Explicit,
            key_refresh,
        });
        let (record, len) = self.core.handshake_record(&hello)?;
        records.push(record);
        self.core.probe.end_message(Message::SH, len);

        if let Some(i) = credential.filter(|_| kid.suite.is_certified()) {
            let len = if self.core.records.next_write_seq() == CERTIFICATE_SEQ {
                let record = self.certificate_record(i);
                let message = &record[RECORD_HEADER_LEN..];
                self.core.transcript.update(message);
                self.core.records.sent_prebuilt(&record);
                records.push(record.to_vec());
                // Its place in the flight: record index, and byte offset in one datagram.
                let offset = records[..records.len() - 1].iter().map(Vec::len).sum();
                self.shared_certificate = Some((records.len() - 1, offset, record.clone()));
                message.len()
            } else {
                let cert = self.config.credentials[i].cert.clone();
                let msg =
                    HandshakeMessage::Certificate(CertificateChain(vec![CertificateEntry::Wtls(
                        cert,
                    )]));
                let (record, len) = self.core.handshake_record(&msg)?;
                records.push(record);
                len
            };
            self.core.probe.end_message(Message::SCERT, len);
        }

        if let Some(client_cert) = optimised {
            // Optimised: the client's certified key from our store, then straight to
            // ChangeCipherSpec and Finished.
            let (config, unix) = (&self.config, self.now.unix_secs);
            let key = self
                .core
                .probe
                .operation(Message::CCERT, Operation::CERTCHECK, || {
                    validate_client(config, unix, &client_cert)
                })?;
            self.client_key = Some(key);
            self.client_certified = true;
            self.static_ecdh_pre_master(0)?;
            records.push(self.core.change_cipher_spec()?);
            self.core.probe.end_message(Message::SCCS, 1);
            let (record, len) = self.core.finished(self.mac(), b"server finished")?;
            records.push(record);
            self.core.probe.end_message(Message::SFIN, len);
            self.state = State::WaitClientCcs;
            out.datagrams.extend(self.core.pack(records));
            return Ok(());
        }

        if kid.suite.is_anonymous() {
            let key = if kid.suite.is_rsa() {
                let i = credential.expect("RSA_anon needs a key");
                match self.config.credentials[i].key.public_wire()? {
                    PublicKey::Rsa(k) => ServerKeyExchangeKey::Rsa(k),
                    PublicKey::Ec(_) => {
                        return Err(ProtocolError::new(
                            AlertDescription::InternalError,
                            "RSA credential holds an EC key",
                        ))
                    }
                }
            } else {
                let eph = pk::ephemeral_ec(spec)?;
                let mut point = match eph.public_wire()? {
                    PublicKey::Ec(p) => p,
                    PublicKey::Rsa(_) => {
                        return Err(ProtocolError::new(
                            AlertDescription::InternalError,
                            "an EC key pair without an EC public key",
                        ))
                    }
                };
                if compressed {
                    point.0 = pk::compress_point(spec, &point.0)?;
                }
                self.ephemeral = Some(eph);
                ServerKeyExchangeKey::Ec(point)
            };
            let msg = HandshakeMessage::ServerKeyExchange(ServerKeyExchange {
                parameters: spec.parameter_specifier(self.config.numbering),
                key,
            });
            let (record, len) = self.core.handshake_record(&msg)?;
            records.push(record);
            self.core.probe.end_message(Message::SKX, len);
        }

        let request =
            self.config.client_auth == AuthMode::Mutual || self.config.thesis_certificate_request;
        if request && !kid.suite.is_anonymous() {
            let trusted_authorities = self
                .config
                .trusted_client_cas
                .iter()
                .map(|(spec, cert)| KeyExchangeId {
                    suite: kid.suite,
                    parameters: spec.parameter_specifier(self.config.numbering),
                    identifier: cert.tbs.subject.clone(),
                })
                .collect();
            let msg = HandshakeMessage::CertificateRequest(CertificateRequest {
                trusted_authorities,
            });
            let (record, len) = self.core.handshake_record(&msg)?;
            records.push(record);
            self.core.probe.end_message(Message::CERTREQ, len);
            self.certificate_requested = true;
        }

        let (record, len) = self
            .core
            .handshake_record(&HandshakeMessage::ServerHelloDone)?;
        records.push(record);
        self.core.probe.end_message(Message::SHD, len);
        self.state = if self.certificate_requested {
            State::WaitClientCertificate
        } else {
            State::WaitClientKeyExchange
        };
        out.datagrams.extend(self.core.pack(records));
        Ok(())
    }

    /// The shared Certificate record of credential `i` (made on first use): clear text,
    /// L and S set, sequence number 1, as the second record of every full handshake.
    fn certificate_record(&self, i: usize) -> Arc<[u8]> {
        let cert = &self.config.credentials[i].cert;
        let mut cache = self
            .config
            .certificate_records
            .lock()
            .expect("certificate record cache");
        cache
            .entry(cert.signature.clone())
            .or_insert_with(|| {
                let msg =
                    HandshakeMessage::Certificate(CertificateChain(vec![CertificateEntry::Wtls(
                        cert.clone(),
                    )]));
                let record = OwnedRecord {
                    header: RecordHeader {
                        length_present: true,
                        sequence: Some(CERTIFICATE_SEQ),
                        cipher_spec: false,
                        content_type: ContentType::Handshake,
                    },
                    fragment: msg.to_bytes(),
                };
                record.to_bytes().into()
            })
            .clone()
    }

    /// The first cipher suite in the client's order that we accept (§3.4).
    fn choose_cipher(&self, offered: &[CipherSuite]) -> Result<CipherSuite, ProtocolError> {
        let mut weak_refused = false;
        for c in offered {
            if !self.config.cipher_suites.contains(c) {
                continue;
            }
            if !self.config.policy.accepts_cipher(c.bulk, c.mac) {
                weak_refused = true;
                continue;
            }
            return Ok(*c);
        }
        Err(if weak_refused {
            ProtocolError::new(
                AlertDescription::InsufficientSecurity,
                "only weak cipher suites offered (export, truncated MAC or NULL)",
            )
        } else {
            ProtocolError::new(
                AlertDescription::HandshakeFailure,
                "no cipher suite in common",
            )
        })
    }

    /// The first key exchange in the client's order for which we hold a key from a CA
    /// the client trusts. Returns its index, the KeyExchangeId, the specifier of the key
    /// exchange, the credential and, for the optimised flow, the client certificate
    /// from our store.
    #[allow(clippy::type_complexity)]
    fn choose_key_exchange(
        &self,
        ch: &ClientHello,
    ) -> Result<
        (
            usize,
            KeyExchangeId,
            Specifier,
            Option<usize>,
            Option<WtlsCertificate>,
        ),
        ProtocolError,
    > {
        let mut anonymous_refused = false;
        let mut unknown_index = false;
        for (i, kid) in ch.client_key_ids.iter().enumerate() {
            // 14 and 18 (11 and 15) are one key exchange; the code only says how the
            // points travel, and we read both forms.
            let mut kid = kid.clone();
            kid.suite = kid.suite.base();
            let supported = matches!(
                kid.suite,
                KeyExchangeSuite::Rsa
                    | KeyExchangeSuite::EcdhEcdsa
                    | KeyExchangeSuite::RsaAnon
                    | KeyExchangeSuite::EcdhAnon
            );
            if !supported {
                continue;
            }
            if kid.suite.is_anonymous() && !self.config.policy.allow_anonymous {
                anonymous_refused = true;
                continue;
            }
            let Ok(named) = Specifier::named_by(&kid.parameters, self.config.numbering) else {
                unknown_index = true;
                continue;
            };
            if kid.suite.is_rsa() != named.is_rsa() {
                continue;
            }
            let trusted = |c: &ServerCredential| {
                ch.trusted_key_ids.is_empty()
                    || ch
                        .trusted_key_ids
                        .iter()
                        .any(|t| c.issued_by(&t.identifier))
            };
            let credential = self
                .config
                .credentials
                .iter()
                .position(|c| named.admits(c.spec) && (kid.suite.is_anonymous() || trusted(c)));
            if let (KeyExchangeSuite::EcdhAnon, NamedParameters::Key(spec)) = (kid.suite, named) {
                return Ok((i, kid, spec, credential, None));
            }
            let Some(credential) = credential else {
                continue;
            };
            let spec = self.config.credentials[credential].spec;
            let optimised =
                if kid.suite == KeyExchangeSuite::EcdhEcdsa && kid.identifier != Identifier::Null {
                    self.config
                        .client_certificates
                        .get(&kid.identifier.to_bytes())
                        .cloned()
                } else {
                    None
                };
            return Ok((i, kid, spec, Some(credential), optimised));
        }
        Err(if anonymous_refused {
            ProtocolError::new(
                AlertDescription::InsufficientSecurity,
                "anonymous key exchange is disabled",
            )
        } else if unknown_index {
            ProtocolError::new(
                AlertDescription::UnknownParameterIndex,
                "no offered parameter index is known",
            )
        } else {
            ProtocolError::new(
                AlertDescription::HandshakeFailure,
                "no key exchange in common (suite, key size or CA)",
            )
        })
    }

    fn new_session_id(&self) -> SessionId {
        if self.config.session_cache.is_none() {
            return SessionId::empty();
        }
        let mut id = [0u8; 8];
        crate::crypto::random::fill(&mut id);
        SessionId::new(&id).expect("8 bytes fit")
    }

    /// Abbreviated handshake: ServerHello, ChangeCipherSpec, Finished (§9.2).
    fn resume(
        &mut self,
        ch: ClientHello,
        s: StoredSession,
        key_refresh: u8,
        out: &mut Output,
    ) -> Result<(), ProtocolError> {
        let spec = ch
            .client_key_ids
            .first()
            .and_then(|k| Specifier::named_by(&k.parameters, self.config.numbering).ok())
            .and_then(|named| named.resolve(None))
            .unwrap_or(Specifier::Nist256p);
        self.core
            .transcript
            .settle(PrfHash::for_mac(s.cipher_suite.mac));
        let session_id = SessionId::new(&s.id)?;
        self.negotiated = Some(Negotiated {
            suite: s.key_exchange,
            spec,
            cipher: s.cipher_suite,
            key_refresh,
            kind: HandshakeKind::Abbreviated,
            session_id: session_id.clone(),
            credential: None,
        });
        let hello = HandshakeMessage::ServerHello(ServerHello {
            server_version: 1,
            random: self.server_random,
            session_id,
            client_key_id: 1,
            cipher_suite: s.cipher_suite,
            compression_method: CompressionMethod::Null,
            sequence_number_mode: SequenceNumberMode::Explicit,
            key_refresh,
        });
        let mut records = Vec::new();
        let (record, len) = self.core.handshake_record(&hello)?;
        records.push(record);
        self.core.probe.end_message(Message::SH, len);
        self.install_keys(s.master_secret.clone());
        records.push(self.core.change_cipher_spec()?);
        self.core.probe.end_message(Message::SCCS, 1);
        let (record, len) = self.core.finished(self.mac(), b"server finished")?;
        records.push(record);
        self.core.probe.end_message(Message::SFIN, len);
        self.state = State::WaitClientCcs;
        out.datagrams.extend(self.core.pack(records));
        Ok(())
    }
}

/// Validate a client certificate under the CA that issued it.
fn validate_client(
    config: &ServerConfig,
    unix_secs: u32,
    cert: &WtlsCertificate,
) -> Result<PeerKey, ProtocolError> {
    {
        let ca = config
            .trusted_client_cas
            .iter()
            .find(|(_, ca)| ca.tbs.subject.same_name(&cert.tbs.issuer))
            .ok_or_else(|| {
                ProtocolError::new(
                    AlertDescription::UnknownCa,
                    "the client certificate's issuer is not a trusted CA",
                )
            })?;
        Ok(crate::pki::validate_cached(
            cert,
            &ca.1,
            &config.ca_keys,
            config.expected_client.as_ref(),
            unix_secs,
            config.numbering,
        )?)
    }
}

impl ServerConnection {
    fn on_client_certificate(&mut self, chain: CertificateChain) -> Result<(), ProtocolError> {
        let leaf = match chain.0.first() {
            None => {
                if self.config.client_auth == AuthMode::Mutual {
                    return Err(ProtocolError::new(
                        AlertDescription::HandshakeFailure,
                        "a client certificate is required",
                    ));
                }
                return Ok(());
            }
            Some(CertificateEntry::Wtls(c)) => c.clone(),
            Some(_) => {
                return Err(ProtocolError::new(
                    AlertDescription::UnsupportedCertificate,
                    "only WTLS client certificates are supported",
                ))
            }
        };
        let (config, unix) = (&self.config, self.now.unix_secs);
        let key = self
            .core
            .probe
            .operation(Message::CCERT, Operation::CERTCHECK, || {
                validate_client(config, unix, &leaf)
            })?;
        let n = self.negotiated.as_ref().expect("after ClientHello");
        if n.suite.is_rsa() != key.spec().is_rsa() {
            return Err(ProtocolError::new(
                AlertDescription::UnsupportedCertificate,
                "client key type does not fit the key exchange",
            ));
        }
        self.client_key = Some(key);
        self.client_certified = true;
        Ok(())
    }

    fn on_client_key_exchange(
        &mut self,
        cke: ClientKeyExchange,
        len: usize,
    ) -> Result<(), ProtocolError> {
        let n = self.negotiated.as_ref().expect("after ClientHello");
        let (suite, spec) = (n.suite, n.spec);
        let pre_master = match cke {
            ClientKeyExchange::Rsa(ciphertext) if suite.is_rsa() => {
                let cred = &self.config.credentials[n.credential.expect("RSA has a key")];
                let key = cred.key.clone();
                let decrypted = self
                    .core
                    .probe
                    .operation(Message::CKX, Operation::RSADEC, || {
                        pk::rsa_decrypt(&key, &ciphertext)
                    });
                // Any failure (padding, length, version byte) continues with a random
                // secret, so the Finished check fails later with the same alert and
                // timing: no padding oracle (Bleichenbacher 1998).
                let mut secret = Zeroizing::new(vec![0u8; 20]);
                crate::crypto::random::fill(&mut secret);
                if let Ok(d) = decrypted {
                    if d.len() == 20 && d[0] == 1 {
                        secret.copy_from_slice(&d);
                    }
                }
                // The pre-master secret carries our RSAPublicKey encoding: take it from
                // our certificate (RSA_anon: from the key) rather than re-extract it.
                let public = match &cred.cert.tbs.public_key {
                    PublicKey::Rsa(k) if !suite.is_anonymous() => k.clone(),
                    _ => match key.public_wire()? {
                        PublicKey::Rsa(k) => k,
                        PublicKey::Ec(_) => {
                            return Err(ProtocolError::new(
                                AlertDescription::InternalError,
                                "RSA credential holds an EC key",
                            ))
                        }
                    },
                };
                rsa_pre_master(&secret, &public)
            }
            ClientKeyExchange::Ec(point) if suite.is_ecdh() && self.client_certified => {
                // Mutual ECDH_ECDSA with a ClientKeyExchange (the handset client sends
                // one): it must carry the certified key, because without
                // CertificateVerify only the static-static secret proves that the client
                // holds its certificate's key.
                let spec = self.client_key.as_ref().map(|k| k.spec()).unwrap_or(spec);
                let sent = PeerKey::from_ec_point(spec, &point.0)?;
                if self.client_key.as_ref() != Some(&sent) {
                    return Err(ProtocolError::new(
                        AlertDescription::IllegalParameter,
                        "ClientKeyExchange point is not the certified client key",
                    ));
                }
                return self.static_ecdh_pre_master(len);
            }
            ClientKeyExchange::Ec(point) if suite.is_ecdh() => {
                let own = match (&self.ephemeral, n.credential) {
                    (Some(e), _) => e.clone(),
                    (None, Some(i)) => self.config.credentials[i].key.clone(),
                    (None, None) => {
                        return Err(ProtocolError::new(
                            AlertDescription::InternalError,
                            "no ECDH key",
                        ))
                    }
                };
                if own.spec() != spec {
                    return Err(ProtocolError::new(
                        AlertDescription::IllegalParameter,
                        "ClientKeyExchange point on another curve",
                    ));
                }
                // The client's point is uncertified and meets our static key: cofactor
                // Diffie-Hellman keeps a small-subgroup point from leaking the key.
                self.core
                    .probe
                    .operation(Message::CKX, Operation::ECDH, || {
                        pk::ecdh_untrusted(&own, &point.0)
                    })?
            }
            _ => {
                return Err(ProtocolError::new(
                    AlertDescription::IllegalParameter,
                    "ClientKeyExchange does not fit the key exchange suite",
                ))
            }
        };
        self.master_from(pre_master);
        self.core.probe.end_message(Message::CKX, len);
        Ok(())
    }

    /// Pre-master secret from our certified ECDH key and the client's (mutual and
    /// optimised ECDH_ECDSA); `ckx_len` is the size of the ClientKeyExchange that
    /// carried the client's certified point, 0 if none did.
    fn static_ecdh_pre_master(&mut self, ckx_len: usize) -> Result<(), ProtocolError> {
        let n = self.negotiated.as_ref().expect("after ClientHello");
        let own = self.config.credentials[n
            .credential
            .ok_or_else(|| ProtocolError::new(AlertDescription::InternalError, "no server key"))?]
        .key
        .clone();
        let peer = self.client_key.clone().ok_or_else(|| {
            ProtocolError::new(AlertDescription::HandshakeFailure, "no client key")
        })?;
        if peer.spec() != own.spec() {
            return Err(ProtocolError::new(
                AlertDescription::IllegalParameter,
                "client ECDH key is on another curve than ours",
            ));
        }
        let shared = self
            .core
            .probe
            .operation(Message::CKX, Operation::ECDH, || pk::ecdh(&own, &peer))?;
        self.master_from(shared);
        self.core.probe.end_message(Message::CKX, ckx_len);
        Ok(())
    }

    fn master_from(&mut self, pre_master: Zeroizing<Vec<u8>>) {
        let n = self.negotiated.as_ref().expect("after ClientHello");
        let hash = PrfHash::for_mac(n.cipher.mac);
        let cr = self.client_random.expect("after ClientHello");
        let sr = self.server_random;
        let master = self.core.probe.operation(Message::CKX, Operation::MS, || {
            crate::crypto::keys::master_secret(hash, &pre_master, &cr.0, &sr.0)
        });
        self.have_pre_master = true;
        self.install_keys(master);
    }

    fn install_keys(&mut self, master: Zeroizing<[u8; 20]>) {
        let n = self.negotiated.as_ref().expect("after ClientHello");
        self.core
            .records
            .set_pending(crate::record::ProtectionParams {
                bulk: n.cipher.bulk,
                mac: n.cipher.mac,
                key_refresh: n.key_refresh,
                master_secret: master.clone(),
                client_random: self.client_random.expect("after ClientHello").0,
                server_random: self.server_random.0,
            });
        self.core.master_secret = Some(master);
    }

    fn on_client_finished(
        &mut self,
        fin: Finished,
        body: &[u8],
        out: &mut Output,
    ) -> Result<(), ProtocolError> {
        let mac = self.mac();
        self.core
            .check_finished(mac, b"client finished", Message::CFIN, &fin, body)?;
        let kind = self.negotiated.as_ref().expect("after ClientHello").kind;
        if kind == HandshakeKind::Full {
            let mut records = vec![self.core.change_cipher_spec()?];
            self.core.probe.end_message(Message::SCCS, 1);
            let (record, len) = self.core.finished(self.mac(), b"server finished")?;
            records.push(record);
            self.core.probe.end_message(Message::SFIN, len);
            out.datagrams.extend(self.core.pack(records));
        }
        self.state = State::Established;
        self.store_session();
        out.events.push(Event::HandshakeComplete(kind));
        Ok(())
    }

    fn store_session(&mut self) {
        let (Some(cache), Some(n), Some(ms)) = (
            &self.config.session_cache,
            &self.negotiated,
            &self.core.master_secret,
        ) else {
            return;
        };
        if n.session_id.is_empty() || n.kind == HandshakeKind::Abbreviated {
            return;
        }
        cache
            .lock()
            .expect("session cache lock")
            .insert(StoredSession {
                id: n.session_id.as_bytes().to_vec(),
                master_secret: ms.clone(),
                cipher_suite: n.cipher,
                key_exchange: n.suite,
                key_refresh: n.key_refresh,
                created_ns: self.now.mono_ns,
            });
    }

    /// The MAC algorithm of the negotiated cipher suite (it picks the PRF hash).
    fn mac(&self) -> crate::msgs::enums::MacAlgorithm {
        self.negotiated
            .as_ref()
            .expect("after ClientHello")
            .cipher
            .mac
    }
}

impl Endpoint for ServerConnection {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    fn is_established(&self) -> bool {
        self.state == State::Established
    }

    /// A fatal alert invalidates the session, but only a connection that proved it
    /// owns the session (the Finished verified on it) may remove it from the cache: a
    /// ClientHello quoting a session id is no such proof, since the id travels in clear.
    fn close_after_alert(&mut self, level: AlertLevel) {
        let proved = self.state == State::Established;
        self.state = State::Closed;
        if level == AlertLevel::Fatal && proved {
            self.forget_session();
        }
    }

    fn checks_alert_checksum(&self) -> bool {
        self.state != State::WaitClientHello
    }

    fn answers_failures(&self) -> bool {
        matches!(self.state, State::WaitClientHello | State::Established)
    }

    type Saved = ServerSaved;

    fn save(&self) -> ServerSaved {
        ServerSaved {
            state: self.state,
            core: self.core.save(),
            client_random: self.client_random,
            negotiated: self.negotiated.clone(),
            ephemeral: self.ephemeral.clone(),
            client_key: self.client_key.clone(),
            client_certified: self.client_certified,
            certificate_requested: self.certificate_requested,
            have_pre_master: self.have_pre_master,
            shared_certificate: self.shared_certificate.clone(),
            now: self.now,
        }
    }

    fn restore(&mut self, saved: ServerSaved) {
        self.state = saved.state;
        self.core.restore(saved.core);
        self.client_random = saved.client_random;
        self.negotiated = saved.negotiated;
        self.ephemeral = saved.ephemeral;
        self.client_key = saved.client_key;
        self.client_certified = saved.client_certified;
        self.certificate_requested = saved.certificate_requested;
        self.have_pre_master = saved.have_pre_master;
        self.shared_certificate = saved.shared_certificate;
        self.now = saved.now;
    }

    fn note_dropped(&mut self, e: ProtocolError) {
        self.last_dropped = Some(e);
    }

    fn on_change_cipher_spec(&mut self, body: &[u8]) -> Result<(), ProtocolError> {
        ServerConnection::on_change_cipher_spec(self, body)
    }

    fn expects(&self, typ: HandshakeType) -> bool {
        ServerConnection::expects(self, typ)
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
        ServerConnection::on_handshake(self, msg, body, out)
    }

    fn early_application_data(&mut self) -> Option<ProtocolError> {
        Some(ProtocolError::new(
            AlertDescription::UnexpectedMessage,
            "application data before the handshake completed",
        ))
    }
}

/// The Certificate record is the second record of a full handshake's server flight.
const CERTIFICATE_SEQ: u16 = 1;
/// A record header with L and S set: type, sequence number, length.
const RECORD_HEADER_LEN: usize = 5;

/// A fingerprint of a datagram, to recognise a retransmitted one: SipHash-1-3 under keys
/// drawn at random once per process (the standard library's `RandomState`).
///
/// Why not a cryptographic hash: a collision would only make the server answer a new
/// datagram with its answer to an earlier one from the same address, and without the
/// process's keys nobody can aim for one; SipHash costs a third of SHA-1 here, on
/// every datagram of every handshake.
fn datagram_fingerprint(datagram: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(Default::default).hash_one(datagram)
}

/// What we answered to one datagram, kept for retransmissions. The shared Certificate
/// record is cut out and kept by reference, so a half-open connection does not hold a
/// copy of the certificate.
#[derive(Debug)]
struct Answer {
    /// Records of the datagram answered (a retransmission has the same).
    records_in: usize,
    datagrams: Vec<Vec<u8>>,
    /// (datagram index, byte offset, the shared record cut out there)
    splice: Option<(usize, usize, Arc<[u8]>)>,
}

impl Answer {
    fn new(
        records_in: usize,
        datagrams: &[Vec<u8>],
        shared: Option<(usize, usize, Arc<[u8]>)>,
        packing: Packing,
    ) -> Self {
        let mut datagrams = datagrams.to_vec();
        let splice = shared.and_then(|(record_index, flight_offset, record)| {
            // Where the record landed: inside the one flight datagram, after the
            // records before it, or as its own datagram.
            let (d, offset) = match packing {
                Packing::FlightPerDatagram => (0, flight_offset),
                Packing::MessagePerDatagram => (record_index, 0),
            };
            let target = datagrams.get_mut(d)?;
            if target.get(offset..offset + record.len()) != Some(&record[..]) {
                return None;
            }
            target.drain(offset..offset + record.len());
            target.shrink_to_fit();
            Some((d, offset, record))
        });
        Answer {
            records_in,
            datagrams,
            splice,
        }
    }

    fn datagrams(&self) -> Vec<Vec<u8>> {
        let mut out = self.datagrams.clone();
        if let Some((d, offset, record)) = &self.splice {
            if let Some(target) = out.get_mut(*d) {
                let tail = target.split_off(*offset);
                target.extend_from_slice(record);
                target.extend_from_slice(&tail);
            }
        }
        out
    }

    fn heap_bytes(&self) -> usize {
        self.datagrams
            .iter()
            .map(|d| d.capacity() + 24)
            .sum::<usize>()
            + self.splice.as_ref().map_or(0, |_| 32)
    }
}
