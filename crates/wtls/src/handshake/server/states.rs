//! The server's handshake, one state at a time, in wire order (thesis Tables 3.5 and
//! 3.7; notes §9):
//!
//! ```text
//!                        <- ClientHello
//! ServerHello Certificate | ServerKeyExchange  CertificateRequest?  ServerHelloDone ->
//!   [abbreviated: ServerHello ChangeCipherSpec Finished ->]
//!   [optimised:   ServerHello Certificate ChangeCipherSpec Finished ->]
//!                        <- Certificate? ClientKeyExchange? CertificateVerify?
//!                        <- ChangeCipherSpec, Finished
//! [full: ChangeCipherSpec Finished ->]
//! ```
//!
//! Each state holds exactly what the handshake knows at that point; each transition
//! takes its state by value and returns the next. A failing transition leaves the
//! connection to the record loop, which restores the state the datagram found (or,
//! at a server that has sent nothing yet, answers with the alert).

use std::sync::Arc;

use zeroize::Zeroizing;

use super::negotiate::{KeyExchangeChoice, CERTIFICATE_SEQ};
use super::{validate_client, ServerConnection};
use crate::codec::Codec;
use crate::crypto::pk::{self, KeyPair, PeerKey};
use crate::handshake::client::rsa_pre_master;
use crate::handshake::conn::KeySchedule;
use crate::handshake::error::{
    HandshakeState, HsResult, LocalError, PeerMisbehaved, ProtocolError,
};
use crate::handshake::{AuthMode, Event, HandshakeKind, Negotiated, Output, StoredSession};
use crate::msgs::alert::ChangeCipherSpec;
use crate::msgs::certificate::{CertificateChain, CertificateEntry, PublicKey, WtlsCertificate};
use crate::msgs::common::{KeyExchangeId, SessionId};
use crate::msgs::enums::{CompressionMethod, HandshakeType, KeyExchangeSuite, SequenceNumberMode};
use crate::msgs::handshake::{
    CertificateRequest, CertificateVerify, ClientHello, ClientKeyExchange, Finished,
    HandshakeMessage, ServerHello, ServerKeyExchange, ServerKeyExchangeKey,
};
use crate::probe::{Message, Operation};
use crate::suite::Specifier;

/// Most records of a server flight: ServerHello, Certificate, ServerKeyExchange,
/// CertificateRequest, ServerHelloDone (the abbreviated flight has three).
const FLIGHT_RECORDS: usize = 5;

/// What the server settled from ClientHello.
#[derive(Clone)]
pub(super) struct Chosen {
    suite: KeyExchangeSuite,
    spec: Specifier,
    keys: KeySchedule,
    session_id: SessionId,
    credential: Option<usize>,
}

/// A full handshake after our first flight: our ephemeral key (ECDH_anon) and the
/// client's certified key once its Certificate came.
#[derive(Clone)]
pub(super) struct Pending {
    chosen: Chosen,
    ephemeral: Option<KeyPair>,
    client_key: Option<PeerKey>,
}

/// The keys are agreed; the client's ChangeCipherSpec and Finished are due.
#[derive(Clone)]
pub(super) struct Agreed {
    chosen: Chosen,
    kind: HandshakeKind,
    client_certified: bool,
}

/// A completed handshake.
#[derive(Clone)]
pub(super) struct Done {
    pub(super) kind: HandshakeKind,
    pub(super) client_certified: bool,
    pub(super) session_id: SessionId,
    suite: KeyExchangeSuite,
}

#[derive(Clone)]
pub(super) enum ServerState {
    WaitClientHello,
    /// ClientHello taken in: the choice and our first flight come next.
    ClientHelloReceived(Box<ClientHello>),
    /// CertificateRequest sent: the client's Certificate is next.
    WaitClientCertificate(Pending),
    WaitClientKeyExchange(Pending),
    /// Mutual RSA: the client's CertificateVerify proves it holds its certified key.
    WaitCertificateVerify {
        chosen: Chosen,
        client_key: PeerKey,
    },
    WaitClientCcs(Agreed),
    WaitClientFinished(Agreed),
    /// Full: the client's Finished verified; our ChangeCipherSpec and Finished go next.
    SendFinished(Agreed),
    Established(Done),
    Closed,
}

impl ServerState {
    pub(super) fn name(&self) -> HandshakeState {
        match self {
            ServerState::WaitClientHello => HandshakeState::WaitClientHello,
            ServerState::ClientHelloReceived(_) => HandshakeState::ClientHelloReceived,
            ServerState::WaitClientCertificate(_) => HandshakeState::WaitClientCertificate,
            ServerState::WaitClientKeyExchange(_) => HandshakeState::WaitClientKeyExchange,
            ServerState::WaitCertificateVerify { .. } => HandshakeState::WaitCertificateVerify,
            ServerState::WaitClientCcs(_) => HandshakeState::WaitClientCcs,
            ServerState::WaitClientFinished(_) => HandshakeState::WaitClientFinished,
            ServerState::SendFinished(_) => HandshakeState::SendFinished,
            ServerState::Established(_) => HandshakeState::Established,
            ServerState::Closed => HandshakeState::Closed,
        }
    }

    /// The handshake message types that may come next.
    pub(super) fn expects(&self, typ: HandshakeType) -> bool {
        use HandshakeType as T;
        match self {
            ServerState::WaitClientHello | ServerState::Established(_) => typ == T::ClientHello,
            ServerState::WaitClientCertificate(_) => typ == T::Certificate,
            ServerState::WaitClientKeyExchange(_) => typ == T::ClientKeyExchange,
            ServerState::WaitCertificateVerify { .. } => typ == T::CertificateVerify,
            ServerState::WaitClientFinished(_) => typ == T::Finished,
            _ => false,
        }
    }

    fn chosen(&self) -> Option<&Chosen> {
        match self {
            ServerState::WaitClientCertificate(p) | ServerState::WaitClientKeyExchange(p) => {
                Some(&p.chosen)
            }
            ServerState::WaitCertificateVerify { chosen, .. } => Some(chosen),
            ServerState::WaitClientCcs(a)
            | ServerState::WaitClientFinished(a)
            | ServerState::SendFinished(a) => Some(&a.chosen),
            _ => None,
        }
    }

    /// The negotiated key exchange, needed to read the key exchange messages.
    pub(super) fn key_exchange(&self) -> Option<KeyExchangeSuite> {
        match self {
            ServerState::Established(done) => Some(done.suite),
            other => other.chosen().map(|c| c.suite),
        }
    }

    pub(super) fn kind(&self) -> Option<HandshakeKind> {
        match self {
            ServerState::Established(done) => Some(done.kind),
            ServerState::WaitClientCcs(a)
            | ServerState::WaitClientFinished(a)
            | ServerState::SendFinished(a) => Some(a.kind),
            other => other.chosen().map(|_| HandshakeKind::Full),
        }
    }

    pub(super) fn client_certified(&self) -> bool {
        match self {
            ServerState::Established(done) => done.client_certified,
            ServerState::WaitClientCcs(a)
            | ServerState::WaitClientFinished(a)
            | ServerState::SendFinished(a) => a.client_certified,
            ServerState::WaitCertificateVerify { .. } => true,
            ServerState::WaitClientKeyExchange(p) => p.client_key.is_some(),
            _ => false,
        }
    }
}

impl ServerConnection {
    /// A handshake message the state expects (the record loop checked the type).
    pub(super) fn on_handshake(&mut self, msg: HandshakeMessage, out: &mut Output) -> HsResult<()> {
        use HandshakeMessage as M;
        use ServerState as S;
        if let (S::Established(_), M::ClientHello(_)) = (&self.state, &msg) {
            return Err(PeerMisbehaved::Renegotiation.into());
        }
        let state = std::mem::replace(&mut self.state, S::Closed);
        self.state = match (state, msg) {
            (S::WaitClientHello, M::ClientHello(ch)) => S::ClientHelloReceived(Box::new(ch)),
            (S::WaitClientCertificate(pending), M::Certificate(chain)) => {
                self.on_client_certificate(pending, chain)?
            }
            (S::WaitClientKeyExchange(pending), M::ClientKeyExchange(cke)) => {
                self.on_client_key_exchange(pending, cke)?
            }
            (S::WaitCertificateVerify { chosen, client_key }, M::CertificateVerify(cv)) => {
                self.on_certificate_verify(chosen, &client_key, &cv)?
            }
            (S::WaitClientFinished(agreed), M::Finished(fin)) => {
                self.on_client_finished(agreed, &fin, out)?
            }
            (state, other) => {
                let unexpected = PeerMisbehaved::UnexpectedMessage {
                    message: other.typ(),
                    state: state.name(),
                };
                self.state = state;
                return Err(unexpected.into());
            }
        };
        Ok(())
    }

    /// After a message was taken in: the flights the server sends in answer.
    pub(super) fn after_message(&mut self, out: &mut Output) -> HsResult<()> {
        use ServerState as S;
        self.state = match std::mem::replace(&mut self.state, S::Closed) {
            S::ClientHelloReceived(ch) => self.send_first_flight(*ch, out)?,
            S::SendFinished(agreed) => {
                let records = self
                    .core
                    .change_cipher_spec_and_finished(&agreed.chosen.keys)?;
                out.send(self.core.pack(records));
                self.complete(agreed, out)
            }
            other => other,
        };
        Ok(())
    }

    /// Our answer to ClientHello: the abbreviated flight for a session we still hold,
    /// the optimised flight for a client whose certificate we hold, or the full one.
    fn send_first_flight(&mut self, ch: ClientHello, out: &mut Output) -> HsResult<ServerState> {
        if ch.client_version != 1 {
            return Err(PeerMisbehaved::UnsupportedVersion(ch.client_version).into());
        }
        if !ch.compression_methods.contains(&CompressionMethod::Null) {
            return Err(PeerMisbehaved::NoNullCompression.into());
        }
        let cipher = self.choose_cipher(&ch.cipher_suites)?;
        let key_refresh = ch.key_refresh.min(self.config.max_key_refresh);
        if let Some(s) = self.resumable(&ch) {
            return self.send_abbreviated_flight(&ch, s, key_refresh, out);
        }
        let keys = KeySchedule {
            cipher,
            key_refresh,
            client_random: ch.random,
            server_random: self.server_random,
        };
        self.core.transcript.settle(keys.hash());
        let choice = self.choose_key_exchange(&ch)?;
        let chosen = Chosen {
            suite: choice.suite,
            spec: choice.spec,
            keys,
            session_id: self.new_session_id(),
            credential: choice.credential,
        };
        // A full flight is at most five records: one allocation for the list.
        let mut records = Vec::with_capacity(FLIGHT_RECORDS);
        records.push(self.server_hello(&chosen, choice.index)?);
        if let Some(i) = chosen.credential.filter(|_| chosen.suite.is_certified()) {
            self.push_certificate(i, &mut records)?;
        }
        if let Some(client_cert) = &choice.optimised {
            return self.send_optimised_flight(chosen, client_cert, records, out);
        }
        let mut ephemeral = None;
        if chosen.suite.is_anonymous() {
            let (msg, eph) = self.server_key_exchange(&chosen, &choice)?;
            ephemeral = eph;
            records.push(self.core.handshake_record(&msg)?);
        }
        let request =
            self.config.client_auth == AuthMode::Mutual || self.config.thesis_certificate_request;
        let request = request && !chosen.suite.is_anonymous();
        if request {
            let msg = self.certificate_request(chosen.suite);
            self.push_certificate_request(&msg, &mut records)?;
        }
        records.push(
            self.core
                .handshake_record(&HandshakeMessage::ServerHelloDone)?,
        );
        out.send(self.core.pack(records));
        let pending = Pending {
            chosen,
            ephemeral,
            client_key: None,
        };
        Ok(if request {
            ServerState::WaitClientCertificate(pending)
        } else {
            ServerState::WaitClientKeyExchange(pending)
        })
    }

    /// The session the client names, if we still hold it and it fits the offer.
    fn resumable(&self, ch: &ClientHello) -> Option<StoredSession> {
        if ch.session_id.is_empty() {
            return None;
        }
        let cache = self.config.session_cache.as_ref()?;
        let found = cache.lookup(ch.session_id.as_bytes(), self.now);
        found.filter(|s| ch.cipher_suites.contains(&s.cipher_suite))
    }

    fn server_hello(&mut self, chosen: &Chosen, index: usize) -> HsResult<Vec<u8>> {
        let client_key_id =
            u8::try_from(index + 1).map_err(|_| PeerMisbehaved::TooManyKeyExchangeIds)?;
        let hello = HandshakeMessage::ServerHello(ServerHello {
            server_version: 1,
            random: self.server_random,
            session_id: chosen.session_id.clone(),
            client_key_id,
            cipher_suite: chosen.keys.cipher,
            compression_method: CompressionMethod::Null,
            sequence_number_mode: SequenceNumberMode::Explicit,
            key_refresh: chosen.keys.key_refresh,
        });
        self.core.handshake_record(&hello)
    }

    /// Our Certificate: the record shared by every connection when it lands at its
    /// usual place (sequence number 1), encoded here otherwise.
    fn push_certificate(&mut self, i: usize, records: &mut Vec<Vec<u8>>) -> HsResult<()> {
        let shared = (self.core.records.next_write_seq() == CERTIFICATE_SEQ)
            .then(|| self.certificate_record(i))
            .flatten();
        if let Some(record) = shared {
            self.core
                .prebuilt_handshake_record(HandshakeType::Certificate, &record);
            records.push(record.to_vec());
            // Its place in the flight: record index, and byte offset in one datagram.
            let offset = records[..records.len() - 1].iter().map(Vec::len).sum();
            self.shared_records[0] = Some((records.len() - 1, offset, record));
            return Ok(());
        }
        let cert = self
            .config
            .credentials
            .get(i)
            .map(|c| c.cert.clone())
            .ok_or(ProtocolError::from(LocalError::NoSuchCredential))?;
        let msg =
            HandshakeMessage::Certificate(CertificateChain(vec![CertificateEntry::Wtls(cert)]));
        records.push(self.core.handshake_record(&msg)?);
        Ok(())
    }

    /// Anonymous suites: our RSA key, or a fresh ephemeral EC key (compressed when the
    /// client chose a suite 11-14).
    fn server_key_exchange(
        &self,
        chosen: &Chosen,
        choice: &KeyExchangeChoice,
    ) -> HsResult<(HandshakeMessage, Option<KeyPair>)> {
        let (key, ephemeral) = if chosen.suite.is_rsa() {
            let cred = chosen
                .credential
                .and_then(|i| self.config.credentials.get(i))
                .ok_or(ProtocolError::from(LocalError::RsaAnonWithoutKey))?;
            match cred.key.public_wire()? {
                PublicKey::Rsa(k) => (ServerKeyExchangeKey::Rsa(k), None),
                PublicKey::Ec(_) => {
                    return Err(ProtocolError::from(LocalError::RsaCredentialHoldsEcKey))
                }
            }
        } else {
            let eph = pk::ephemeral_ec(chosen.spec)?;
            let PublicKey::Ec(mut point) = eph.public_wire()? else {
                return Err(LocalError::EcKeyWithoutPoint.into());
            };
            if choice.compressed {
                point.0 = pk::compress_point(chosen.spec, &point.0)?;
            }
            (ServerKeyExchangeKey::Ec(point), Some(eph))
        };
        let msg = HandshakeMessage::ServerKeyExchange(ServerKeyExchange {
            parameters: chosen.spec.parameter_specifier(self.config.numbering),
            key,
        });
        Ok((msg, ephemeral))
    }

    /// Our CertificateRequest, its record shared by every connection when it follows the
    /// shared Certificate (the same bytes there for every connection of this config).
    fn push_certificate_request(
        &mut self,
        msg: &HandshakeMessage,
        records: &mut Vec<Vec<u8>>,
    ) -> HsResult<()> {
        let usual_place = self.shared_records[0].is_some()
            && self.core.records.next_write_seq() == CERTIFICATE_SEQ + 1;
        let record = self.core.handshake_record(msg)?;
        if usual_place {
            let shared = {
                let mut interned = self
                    .config
                    .certificate_request_records
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                match interned.get(&record[..]) {
                    Some(r) => r.clone(),
                    None => {
                        let r: Arc<[u8]> = record.as_slice().into();
                        interned.insert(r.clone());
                        r
                    }
                }
            };
            let offset = records.iter().map(Vec::len).sum();
            self.shared_records[1] = Some((records.len(), offset, shared));
        }
        records.push(record);
        Ok(())
    }

    fn certificate_request(&self, suite: KeyExchangeSuite) -> HandshakeMessage {
        let trusted_authorities = self
            .config
            .trusted_client_cas
            .iter()
            .map(|(spec, cert)| KeyExchangeId {
                suite,
                parameters: spec.parameter_specifier(self.config.numbering),
                identifier: cert.tbs.subject.clone(),
            })
            .collect();
        HandshakeMessage::CertificateRequest(CertificateRequest {
            trusted_authorities,
        })
    }

    /// Optimised (notes §9.4): the client's certified key from our store, then straight
    /// to ChangeCipherSpec and Finished.
    fn send_optimised_flight(
        &mut self,
        chosen: Chosen,
        client_cert: &WtlsCertificate,
        mut records: Vec<Vec<u8>>,
        out: &mut Output,
    ) -> HsResult<ServerState> {
        let (config, unix) = (&self.config, self.now.unix_secs);
        let client_key = self
            .core
            .probe
            .operation(Message::CCERT, Operation::CERTCHECK, || {
                validate_client(config, unix, client_cert)
            })?;
        self.static_ecdh(&chosen, &client_key)?;
        self.core.probe.end_message(Message::CKX, 0);
        records.extend(self.core.change_cipher_spec_and_finished(&chosen.keys)?);
        out.send(self.core.pack(records));
        Ok(ServerState::WaitClientCcs(Agreed {
            chosen,
            kind: HandshakeKind::Optimised,
            client_certified: true,
        }))
    }

    /// Abbreviated (§9.2): ServerHello with the session's id, ChangeCipherSpec,
    /// Finished, under the session's master secret.
    fn send_abbreviated_flight(
        &mut self,
        ch: &ClientHello,
        s: StoredSession,
        key_refresh: u8,
        out: &mut Output,
    ) -> HsResult<ServerState> {
        let spec = ch
            .client_key_ids
            .first()
            .and_then(|k| Specifier::named_by(&k.parameters, self.config.numbering).ok())
            .and_then(|named| named.resolve(None))
            .unwrap_or(Specifier::Nist256p);
        let keys = KeySchedule {
            cipher: s.cipher_suite,
            key_refresh,
            client_random: ch.random,
            server_random: self.server_random,
        };
        self.core.transcript.settle(keys.hash());
        let chosen = Chosen {
            suite: s.key_exchange,
            spec,
            keys,
            session_id: SessionId::new(&s.id)?,
            credential: None,
        };
        let mut records = Vec::with_capacity(FLIGHT_RECORDS);
        records.push(self.server_hello(&chosen, 0)?);
        self.core.install_master(&keys, s.master_secret.clone());
        records.extend(self.core.change_cipher_spec_and_finished(&keys)?);
        out.send(self.core.pack(records));
        Ok(ServerState::WaitClientCcs(Agreed {
            chosen,
            kind: HandshakeKind::Abbreviated,
            client_certified: false,
        }))
    }

    fn on_client_certificate(
        &mut self,
        mut pending: Pending,
        chain: CertificateChain,
    ) -> HsResult<ServerState> {
        let leaf = match chain.0.into_iter().next() {
            None if self.config.client_auth == AuthMode::Mutual => {
                return Err(PeerMisbehaved::ClientCertificateRequired.into())
            }
            // The thesis' server-authenticated flow: an empty answer to our request.
            None => return Ok(ServerState::WaitClientKeyExchange(pending)),
            Some(CertificateEntry::Wtls(c)) => c,
            Some(_) => return Err(PeerMisbehaved::NotAWtlsCertificate.into()),
        };
        let (config, unix) = (&self.config, self.now.unix_secs);
        let key = self
            .core
            .probe
            .operation(Message::CCERT, Operation::CERTCHECK, || {
                validate_client(config, unix, &leaf)
            })?;
        if pending.chosen.suite.is_rsa() != key.spec().is_rsa() {
            return Err(PeerMisbehaved::KeyDoesNotFitSuite.into());
        }
        pending.client_key = Some(key);
        Ok(ServerState::WaitClientKeyExchange(pending))
    }

    fn on_client_key_exchange(
        &mut self,
        pending: Pending,
        cke: ClientKeyExchange,
    ) -> HsResult<ServerState> {
        let Pending {
            chosen,
            ephemeral,
            client_key,
        } = pending;
        match (cke, &client_key) {
            (ClientKeyExchange::Rsa(ciphertext), _) if chosen.suite.is_rsa() => {
                self.rsa_key_exchange(&chosen, &ciphertext)?;
            }
            (ClientKeyExchange::Ec(point), Some(certified)) if chosen.suite.is_ecdh() => {
                // Mutual ECDH_ECDSA with a ClientKeyExchange (the handset client sends
                // one): it must carry the certified key, because without
                // CertificateVerify only the static-static secret proves that the client
                // holds its certificate's key.
                if PeerKey::from_ec_point(certified.spec(), &point.0)? != *certified {
                    return Err(PeerMisbehaved::PointNotCertified.into());
                }
                self.static_ecdh(&chosen, certified)?;
            }
            (ClientKeyExchange::Ec(point), None) if chosen.suite.is_ecdh() => {
                let own = match (ephemeral, chosen.credential) {
                    (Some(e), _) => e,
                    (None, Some(i)) => self
                        .config
                        .credentials
                        .get(i)
                        .map(|c| c.key.clone())
                        .ok_or(ProtocolError::from(LocalError::NoSuchCredential))?,
                    (None, None) => return Err(ProtocolError::from(LocalError::NoEcdhKey)),
                };
                if own.spec() != chosen.spec {
                    return Err(PeerMisbehaved::PointOnAnotherCurve.into());
                }
                // The client's point is uncertified and meets our static key: cofactor
                // Diffie-Hellman keeps a small-subgroup point from leaking the key.
                let shared = self
                    .core
                    .probe
                    .operation(Message::CKX, Operation::ECDH, || {
                        pk::ecdh_untrusted(&own, &point.0)
                    })?;
                self.core.agree(&chosen.keys, &shared);
            }
            _ => return Err(PeerMisbehaved::KeyDoesNotFitSuite.into()),
        }
        Ok(match client_key {
            Some(client_key) if chosen.suite.is_rsa() => {
                ServerState::WaitCertificateVerify { chosen, client_key }
            }
            certified => ServerState::WaitClientCcs(Agreed {
                chosen,
                kind: HandshakeKind::Full,
                client_certified: certified.is_some(),
            }),
        })
    }

    /// RSA: decrypt the client's secret. Any failure (padding, length, version byte)
    /// continues with a random secret, so the Finished check fails later in the same
    /// way and time: no padding oracle (Bleichenbacher 1998).
    fn rsa_key_exchange(&mut self, chosen: &Chosen, ciphertext: &[u8]) -> HsResult<()> {
        let cred = chosen
            .credential
            .and_then(|i| self.config.credentials.get(i))
            .ok_or(ProtocolError::from(LocalError::RsaKeyExchangeWithoutKey))?;
        let key = cred.key.clone();
        let decrypted = self
            .core
            .probe
            .operation(Message::CKX, Operation::RSADEC, || {
                pk::rsa_decrypt(&key, ciphertext)
            });
        let mut secret = Zeroizing::new(vec![0u8; 20]);
        crate::crypto::random::fill(&mut secret);
        if let Ok(d) = decrypted {
            if d.len() == 20 && d[0] == 1 {
                secret.copy_from_slice(&d);
            }
        }
        // The pre-master secret carries our RSAPublicKey encoding: take it from our
        // certificate (RSA_anon: from the key) rather than re-extract it.
        let public = match &cred.cert.tbs.public_key {
            PublicKey::Rsa(k) if !chosen.suite.is_anonymous() => k.clone(),
            _ => match key.public_wire()? {
                PublicKey::Rsa(k) => k,
                PublicKey::Ec(_) => {
                    return Err(ProtocolError::from(LocalError::RsaCredentialHoldsEcKey))
                }
            },
        };
        self.core
            .agree(&chosen.keys, &rsa_pre_master(&secret, &public));
        Ok(())
    }

    /// The pre-master secret from our certified ECDH key and the client's (mutual and
    /// optimised ECDH_ECDSA), booked under CKX as the thesis does.
    fn static_ecdh(&mut self, chosen: &Chosen, client_key: &PeerKey) -> HsResult<()> {
        let own = chosen
            .credential
            .and_then(|i| self.config.credentials.get(i))
            .map(|c| c.key.clone())
            .ok_or(ProtocolError::from(LocalError::NoServerKey))?;
        if client_key.spec() != own.spec() {
            return Err(PeerMisbehaved::PointOnAnotherCurve.into());
        }
        let shared = self
            .core
            .probe
            .operation(Message::CKX, Operation::ECDH, || pk::ecdh(&own, client_key))?;
        self.core.agree(&chosen.keys, &shared);
        Ok(())
    }

    /// Mutual RSA: the client signed the transcript hash of the MAC family (MD5 for
    /// the MD5 MACs), as the PRF and Finished hash.
    fn on_certificate_verify(
        &mut self,
        chosen: Chosen,
        client_key: &PeerKey,
        cv: &CertificateVerify,
    ) -> HsResult<ServerState> {
        let digest = self
            .core
            .transcript
            .digest(chosen.keys.hash())
            .ok_or(ProtocolError::from(LocalError::TranscriptHashDropped))?;
        self.core
            .probe
            .operation(Message::CERTVRFY, Operation::CVVERIFY, || {
                pk::rsa_verify_digest(client_key, &digest, &cv.signature)
            })
            .map_err(PeerMisbehaved::BadCertificateVerify)?;
        Ok(ServerState::WaitClientCcs(Agreed {
            chosen,
            kind: HandshakeKind::Full,
            client_certified: true,
        }))
    }

    pub(super) fn on_change_cipher_spec(&mut self, body: &[u8]) -> HsResult<()> {
        use ServerState as S;
        ChangeCipherSpec::read_exact(body, "ChangeCipherSpec")?;
        self.state = match std::mem::replace(&mut self.state, S::Closed) {
            S::WaitClientKeyExchange(Pending {
                chosen,
                client_key: Some(client_key),
                ..
            }) if chosen.suite.is_ecdh() => {
                // Mutual ECDH_ECDSA without ClientKeyExchange (the thesis' flow): the
                // pre-master secret comes from our certified key and the client's,
                // booked as T_M_S_CKX.
                self.static_ecdh(&chosen, &client_key)?;
                self.core.probe.end_message(Message::CKX, 0);
                self.core.records.install_read()?;
                S::WaitClientFinished(Agreed {
                    chosen,
                    kind: HandshakeKind::Full,
                    client_certified: true,
                })
            }
            S::WaitClientCcs(agreed) => {
                self.core.records.install_read()?;
                S::WaitClientFinished(agreed)
            }
            other => {
                let name = other.name();
                self.state = other;
                return Err(PeerMisbehaved::UnexpectedChangeCipherSpec(name).into());
            }
        };
        Ok(())
    }

    fn on_client_finished(
        &mut self,
        agreed: Agreed,
        fin: &Finished,
        out: &mut Output,
    ) -> HsResult<ServerState> {
        self.core.check_finished(&agreed.chosen.keys, fin)?;
        Ok(match agreed.kind {
            // Full: our ChangeCipherSpec and Finished come last.
            HandshakeKind::Full => ServerState::SendFinished(agreed),
            HandshakeKind::Abbreviated | HandshakeKind::Optimised => self.complete(agreed, out),
        })
    }

    fn complete(&mut self, agreed: Agreed, out: &mut Output) -> ServerState {
        self.store_session(&agreed);
        out.events.push(Event::HandshakeComplete(agreed.kind));
        self.negotiated = Some(Negotiated {
            kind: agreed.kind,
            cipher_suite: agreed.chosen.keys.cipher,
            key_exchange: agreed.chosen.suite,
            client_authenticated: agreed.client_certified,
        });
        ServerState::Established(Done {
            kind: agreed.kind,
            client_certified: agreed.client_certified,
            session_id: agreed.chosen.session_id,
            suite: agreed.chosen.suite,
        })
    }

    /// Keep a full (or optimised) handshake's session for abbreviated ones later.
    fn store_session(&mut self, agreed: &Agreed) {
        let chosen = &agreed.chosen;
        let (Some(cache), Some(ms)) = (&self.config.session_cache, &self.core.master_secret) else {
            return;
        };
        if chosen.session_id.is_empty() || agreed.kind == HandshakeKind::Abbreviated {
            return;
        }
        let session = StoredSession {
            id: chosen.session_id.as_bytes().to_vec(),
            master_secret: ms.clone(),
            cipher_suite: chosen.keys.cipher,
            key_exchange: chosen.suite,
            key_refresh: chosen.keys.key_refresh,
            created_ns: self.now.mono_ns,
        };
        cache.insert(session, self.now);
    }
}
