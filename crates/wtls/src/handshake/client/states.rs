//! The client's handshake, one state at a time, in wire order (thesis Tables 3.5 and
//! 3.7; notes §9):
//!
//! ```text
//! ClientHello            ->
//!                        <- ServerHello  [abbreviated: ChangeCipherSpec, Finished]
//!                        <- Certificate | ServerKeyExchange
//!                        <- CertificateRequest?
//!                        <- ServerHelloDone  [optimised: ChangeCipherSpec, Finished]
//! Certificate? ClientKeyExchange? CertificateVerify? ChangeCipherSpec Finished ->
//!                        <- ChangeCipherSpec, Finished
//! [abbreviated, optimised: ChangeCipherSpec Finished ->]
//! ```
//!
//! Each state holds exactly what the handshake knows at that point; each transition
//! takes its state by value and returns the next. A failing transition leaves the
//! connection to the record loop, which restores the state the datagram found.

use zeroize::Zeroizing;

use super::{ske_spec, validate_against, Client, PeerMisbehaved};
use crate::codec::Codec;
use crate::crypto::pk::{self, KeyPair, PeerKey};
use crate::handshake::conn::KeySchedule;
use crate::handshake::error::{HandshakeState, HsResult, LocalError, ProtocolError};
use crate::handshake::{AuthMode, Event, HandshakeKind, Negotiated, Output};
use crate::msgs::alert::ChangeCipherSpec;
use crate::msgs::certificate::{CertificateChain, CertificateEntry, PublicKey};
use crate::msgs::common::{EcPublicKey, Identifier, SessionId};
use crate::msgs::enums::{HandshakeType, KeyExchangeSuite, SequenceNumberMode};
use crate::msgs::handshake::{
    CertificateVerify, ClientKeyExchange, Finished, HandshakeMessage, ServerHello,
    ServerKeyExchange, ServerKeyExchangeKey,
};
use crate::probe::{Message, Operation};
use crate::suite::Specifier;

/// What ServerHello settled: the key exchange (without its point format), the key's
/// specifier, the key schedule and the session id.
#[derive(Clone)]
pub(super) struct Chosen {
    pub(super) suite: KeyExchangeSuite,
    pub(super) spec: Specifier,
    pub(super) keys: KeySchedule,
    pub(super) session_id: SessionId,
}

/// The server's key, from its Certificate or ServerKeyExchange.
#[derive(Clone)]
pub(super) struct ServerKey {
    chosen: Chosen,
    key: PeerKey,
    public: PublicKey,
}

/// The keys are agreed; the server's ChangeCipherSpec and Finished are due.
#[derive(Clone)]
pub(super) struct Agreed {
    chosen: Chosen,
    kind: HandshakeKind,
    /// We sent our certificate (or, optimised, the server took it from its store).
    client_certified: bool,
}

#[derive(Clone)]
pub(super) enum ClientState {
    /// ClientHello sent.
    WaitServerHello,
    /// Full handshake on a certified suite: the server's Certificate is next.
    WaitCertificate(Chosen),
    /// Anonymous suite: ServerKeyExchange is next.
    WaitServerKeyExchange(Chosen),
    /// The server's key is known: CertificateRequest (once) or ServerHelloDone.
    WaitRequestOrDone {
        server: ServerKey,
        requested: bool,
    },
    /// ECDH_ECDSA with our identifier offered and our certified key on the server's
    /// curve: as above, or the server's ChangeCipherSpec of the optimised flow (the
    /// server took our certificate from its store, notes §9.4).
    WaitDoneOrOptimisedCcs(ServerKey),
    /// ServerHelloDone arrived: our key exchange flight goes out next.
    SendKeyExchange {
        server: ServerKey,
        requested: bool,
    },
    WaitServerCcs(Agreed),
    WaitServerFinished(Agreed),
    /// Abbreviated and optimised: the server's Finished verified; our ChangeCipherSpec
    /// and Finished go out next and cover it.
    SendFinished(Agreed),
    Established(Chosen),
    Closed,
}

impl ClientState {
    pub(super) fn name(&self) -> HandshakeState {
        match self {
            ClientState::WaitServerHello => HandshakeState::WaitServerHello,
            ClientState::WaitCertificate(_) => HandshakeState::WaitCertificate,
            ClientState::WaitServerKeyExchange(_) => HandshakeState::WaitServerKeyExchange,
            ClientState::WaitRequestOrDone { .. } => HandshakeState::WaitRequestOrDone,
            ClientState::WaitDoneOrOptimisedCcs(_) => HandshakeState::WaitDoneOrOptimisedCcs,
            ClientState::SendKeyExchange { .. } => HandshakeState::SendKeyExchange,
            ClientState::WaitServerCcs(_) => HandshakeState::WaitServerCcs,
            ClientState::WaitServerFinished(_) => HandshakeState::WaitServerFinished,
            ClientState::SendFinished(_) => HandshakeState::SendFinished,
            ClientState::Established(_) => HandshakeState::Established,
            ClientState::Closed => HandshakeState::Closed,
        }
    }

    /// The handshake message types that may come next (HelloRequest may come any time).
    pub(super) fn expects(&self, typ: HandshakeType) -> bool {
        use HandshakeType as T;
        match self {
            _ if typ == T::HelloRequest => true,
            ClientState::WaitServerHello => typ == T::ServerHello,
            ClientState::WaitCertificate(_) => typ == T::Certificate,
            ClientState::WaitServerKeyExchange(_) => typ == T::ServerKeyExchange,
            ClientState::WaitRequestOrDone {
                requested: false, ..
            }
            | ClientState::WaitDoneOrOptimisedCcs(_) => {
                matches!(typ, T::CertificateRequest | T::ServerHelloDone)
            }
            ClientState::WaitRequestOrDone { .. } => typ == T::ServerHelloDone,
            ClientState::WaitServerFinished(_) => typ == T::Finished,
            _ => false,
        }
    }

    /// The negotiated key exchange, needed to read the key exchange messages.
    pub(super) fn key_exchange(&self) -> Option<KeyExchangeSuite> {
        let chosen = match self {
            ClientState::WaitCertificate(c)
            | ClientState::WaitServerKeyExchange(c)
            | ClientState::Established(c) => c,
            ClientState::WaitRequestOrDone { server, .. }
            | ClientState::SendKeyExchange { server, .. }
            | ClientState::WaitDoneOrOptimisedCcs(server) => &server.chosen,
            ClientState::WaitServerCcs(a)
            | ClientState::WaitServerFinished(a)
            | ClientState::SendFinished(a) => &a.chosen,
            ClientState::WaitServerHello | ClientState::Closed => return None,
        };
        Some(chosen.suite)
    }
}

impl Client {
    /// A handshake message the state expects (the record loop checked the type).
    pub(super) fn on_handshake(&mut self, msg: HandshakeMessage, out: &mut Output) -> HsResult<()> {
        use ClientState as S;
        use HandshakeMessage as M;
        if let M::HelloRequest = msg {
            // We do not renegotiate (§9.5); the state stays as it is.
            let refused = ProtocolError::from(PeerMisbehaved::Renegotiation);
            let (alert, bytes) = self.core.records.alert(refused.alert());
            out.datagrams.push(bytes);
            out.events.push(Event::AlertSent(alert, refused));
            return Ok(());
        }
        let state = std::mem::replace(&mut self.state, S::Closed);
        self.state = match (state, msg) {
            (S::WaitServerHello, M::ServerHello(sh)) => self.on_server_hello(sh)?,
            (S::WaitCertificate(chosen), M::Certificate(chain)) => {
                self.on_server_certificate(chosen, chain)?
            }
            (S::WaitServerKeyExchange(chosen), M::ServerKeyExchange(ske)) => {
                self.on_server_key_exchange(chosen, ske)?
            }
            (
                S::WaitRequestOrDone {
                    server,
                    requested: false,
                }
                | S::WaitDoneOrOptimisedCcs(server),
                M::CertificateRequest(_),
            ) => S::WaitRequestOrDone {
                server,
                requested: true,
            },
            (S::WaitRequestOrDone { server, requested }, M::ServerHelloDone) => {
                S::SendKeyExchange { server, requested }
            }
            (S::WaitDoneOrOptimisedCcs(server), M::ServerHelloDone) => S::SendKeyExchange {
                server,
                requested: false,
            },
            (S::WaitServerFinished(agreed), M::Finished(fin)) => {
                self.on_server_finished(agreed, &fin, out)?
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

    /// After a message was taken in: the flights the client sends in answer.
    pub(super) fn after_message(&mut self, out: &mut Output) -> HsResult<()> {
        use ClientState as S;
        self.state = match std::mem::replace(&mut self.state, S::Closed) {
            S::SendKeyExchange { server, requested } => {
                self.send_key_exchange_flight(server, requested, out)?
            }
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

    fn on_server_hello(&mut self, sh: ServerHello) -> HsResult<ClientState> {
        if sh.server_version != 1 {
            return Err(PeerMisbehaved::UnsupportedVersion(sh.server_version).into());
        }
        let c = sh.cipher_suite;
        if !self.config.cipher_suites.contains(&c)
            || !self.config.policy.accepts_cipher(c.bulk, c.mac)
        {
            return Err(PeerMisbehaved::CipherSuiteNotOffered.into());
        }
        if sh.key_refresh > self.config.key_refresh {
            return Err(PeerMisbehaved::KeyRefreshTooRare.into());
        }
        if sh.sequence_number_mode != SequenceNumberMode::Explicit {
            return Err(PeerMisbehaved::SequenceNumberMode.into());
        }
        let keys = KeySchedule {
            cipher: c,
            key_refresh: sh.key_refresh,
            client_random: self.client_random,
            server_random: sh.random,
        };
        self.core.transcript.settle(keys.hash());
        let resumed = self
            .resume
            .as_ref()
            .filter(|s| !sh.session_id.is_empty() && sh.session_id.as_bytes() == s.id.as_slice());
        if let Some(s) = resumed {
            // Abbreviated (§9.2): the session's master secret, the server's
            // ChangeCipherSpec and Finished follow.
            if s.cipher_suite != c {
                return Err(PeerMisbehaved::ResumedWithAnotherCipherSuite.into());
            }
            let spec = self
                .config
                .offers
                .first()
                .map(|o| o.spec)
                .ok_or(ProtocolError::from(LocalError::NoKeyExchangeOffered))?;
            let chosen = Chosen {
                suite: s.key_exchange,
                spec,
                keys,
                session_id: sh.session_id,
            };
            self.core.install_master(&keys, s.master_secret.clone());
            return Ok(ClientState::WaitServerCcs(Agreed {
                chosen,
                kind: HandshakeKind::Abbreviated,
                client_certified: false,
            }));
        }
        let offer = usize::from(sh.client_key_id)
            .checked_sub(1)
            .and_then(|i| self.offered.get(i))
            .ok_or(PeerMisbehaved::UnknownKeyExchangeChoice(sh.client_key_id))?;
        if offer.suite.is_anonymous() && !self.config.policy.allow_anonymous {
            return Err(PeerMisbehaved::AnonymousKeyExchange.into());
        }
        let chosen = Chosen {
            suite: offer.suite.base(),
            spec: offer.spec,
            keys,
            session_id: sh.session_id,
        };
        Ok(if chosen.suite.is_anonymous() {
            ClientState::WaitServerKeyExchange(chosen)
        } else {
            ClientState::WaitCertificate(chosen)
        })
    }

    fn on_server_certificate(
        &mut self,
        mut chosen: Chosen,
        chain: CertificateChain,
    ) -> HsResult<ClientState> {
        let leaf = match chain.0.into_iter().next() {
            Some(CertificateEntry::Wtls(c)) => c,
            Some(_) => return Err(PeerMisbehaved::NotAWtlsCertificate.into()),
            None => return Err(PeerMisbehaved::NoCertificate.into()),
        };
        let (config, now) = (&self.config, self.now.unix_secs);
        let key = self
            .core
            .probe
            .operation(Message::SCERT, Operation::CERTCHECK, || {
                validate_against(config, &leaf, config.expected_server.as_ref(), now)
            })?;
        // What our KeyExchangeId named on the wire: under WAP-261 an RSA offer says
        // only "RSA" (index 0), so the certificate's modulus decides the size.
        let numbering = self.config.numbering;
        let named = Specifier::named_by(&chosen.spec.parameter_specifier(numbering), numbering)?;
        if !named.admits(key.spec()) {
            return Err(PeerMisbehaved::KeyOnOtherParameters {
                found: key.spec(),
                named: chosen.spec,
            }
            .into());
        }
        chosen.spec = key.spec();
        let server = ServerKey {
            chosen,
            key,
            public: leaf.tbs.public_key,
        };
        Ok(if self.optimised_possible(&server) {
            ClientState::WaitDoneOrOptimisedCcs(server)
        } else {
            ClientState::WaitRequestOrDone {
                server,
                requested: false,
            }
        })
    }

    /// Whether the server may run the optimised flow with us: ECDH_ECDSA, our certified
    /// key on the server's curve, and our identifier offered.
    fn optimised_possible(&self, server: &ServerKey) -> bool {
        server.chosen.suite == KeyExchangeSuite::EcdhEcdsa
            && self
                .config
                .credential
                .as_ref()
                .is_some_and(|(_, key)| key.spec() == server.chosen.spec)
            && self
                .config
                .offers
                .iter()
                .any(|o| o.identifier != Identifier::Null)
    }

    fn on_server_key_exchange(
        &mut self,
        mut chosen: Chosen,
        ske: ServerKeyExchange,
    ) -> HsResult<ClientState> {
        let public = match (ske.key, chosen.suite.is_rsa()) {
            (ServerKeyExchangeKey::Rsa(k), true) => PublicKey::Rsa(k),
            (ServerKeyExchangeKey::Ec(p), false) if chosen.suite.is_ecdh() => PublicKey::Ec(p),
            _ => return Err(PeerMisbehaved::KeyDoesNotFitSuite.into()),
        };
        let spec = ske_spec(&ske.parameters, chosen.spec, &public, self.config.numbering)?;
        let key = PeerKey::from_wire(spec, &public)?;
        chosen.spec = spec;
        Ok(ClientState::WaitRequestOrDone {
            server: ServerKey {
                chosen,
                key,
                public,
            },
            requested: false,
        })
    }

    /// After ServerHelloDone: Certificate*, ClientKeyExchange*, CertificateVerify*,
    /// ChangeCipherSpec, Finished, in one flight (thesis Tables 3.5 and 3.7).
    fn send_key_exchange_flight(
        &mut self,
        server: ServerKey,
        requested: bool,
        out: &mut Output,
    ) -> HsResult<ClientState> {
        let ServerKey {
            chosen,
            key: server_key,
            public,
        } = server;
        let (suite, spec, keys) = (chosen.suite, chosen.spec, chosen.keys);
        let mut records = Vec::new();

        let mut static_ecdh = None;
        if requested {
            let (record, certified) = self.client_certificate(suite, spec)?;
            records.push(record);
            static_ecdh = certified;
        }

        // The pre-master secret, and ClientKeyExchange where the flow has one.
        match (suite.is_rsa(), static_ecdh) {
            (true, _) => records.push(self.rsa_key_exchange(&keys, &server_key, &public)?),
            (false, Some((certified, own))) => {
                // Mutual ECDH_ECDSA: both certified keys; the thesis sends no
                // ClientKeyExchange but books this computation under T_M_C_CKX.
                let shared = self
                    .core
                    .probe
                    .operation(Message::CKX, Operation::ECDH, || {
                        pk::ecdh(&own, &server_key)
                    })?;
                self.core.agree(&keys, &shared);
                match (self.config.mutual_ecdh_key_exchange, certified) {
                    (true, PublicKey::Ec(point)) => {
                        let msg = HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Ec(point));
                        records.push(self.core.handshake_record(&msg)?);
                    }
                    _ => self.core.probe.end_message(Message::CKX, 0),
                }
            }
            (false, None) => records.push(self.ecdh_key_exchange(&keys, spec, &server_key)?),
        }

        // CertificateVerify: a signature over the transcript hash of the MAC family
        // (MD5 for the MD5 MACs), as the PRF and Finished hash.
        if let (AuthMode::Mutual, true, true, Some((_, key))) = (
            self.auth,
            suite.is_rsa(),
            requested,
            &self.config.credential,
        ) {
            let digest = self
                .core
                .transcript
                .digest(keys.hash())
                .ok_or(ProtocolError::from(LocalError::TranscriptHashDropped))?;
            let signature =
                self.core
                    .probe
                    .operation(Message::CERTVRFY, Operation::CVSIGN, || {
                        pk::rsa_sign_digest(key, &digest)
                    })?;
            let msg = HandshakeMessage::CertificateVerify(CertificateVerify { signature });
            records.push(self.core.handshake_record(&msg)?);
        }

        records.extend(self.core.change_cipher_spec_and_finished(&keys)?);
        self.send_flight(records, out);
        let client_certified =
            requested && self.auth == AuthMode::Mutual && self.config.credential.is_some();
        Ok(ClientState::WaitServerCcs(Agreed {
            chosen,
            kind: HandshakeKind::Full,
            client_certified,
        }))
    }

    /// Our Certificate when asked: ours in mutual authentication, an empty list
    /// otherwise (the thesis' server-authenticated flow answers its CertificateRequest
    /// so). Returns the record and, when our certified key is an ECDH key on the
    /// server's curve (mutual ECDH_ECDSA), that key: the pre-master secret comes from it.
    #[allow(clippy::type_complexity)]
    fn client_certificate(
        &mut self,
        suite: KeyExchangeSuite,
        spec: Specifier,
    ) -> HsResult<(Vec<u8>, Option<(PublicKey, KeyPair)>)> {
        let mut static_ecdh = None;
        let entries = match (&self.config.credential, self.auth) {
            (Some((cert, key)), AuthMode::Mutual) => {
                if suite.is_ecdh() && key.spec() == spec && !suite.is_anonymous() {
                    static_ecdh = Some((cert.tbs.public_key.clone(), key.clone()));
                }
                vec![CertificateEntry::Wtls(cert.clone())]
            }
            _ => Vec::new(),
        };
        let msg = HandshakeMessage::Certificate(CertificateChain(entries));
        Ok((self.core.handshake_record(&msg)?, static_ecdh))
    }

    /// RSA: a 20-byte secret (version byte 1) under the server's key (§7.2).
    fn rsa_key_exchange(
        &mut self,
        keys: &KeySchedule,
        server_key: &PeerKey,
        public: &PublicKey,
    ) -> HsResult<Vec<u8>> {
        let PublicKey::Rsa(rsa_public) = public else {
            return Err(PeerMisbehaved::KeyDoesNotFitSuite.into());
        };
        let mut secret = Zeroizing::new(vec![0u8; 20]);
        crate::crypto::random::fill(&mut secret[1..]);
        secret[0] = 1; // client_version
        let ciphertext = self
            .core
            .probe
            .operation(Message::CKX, Operation::RSAENC, || {
                pk::rsa_encrypt(server_key, &secret)
            })?;
        self.core
            .agree(keys, &super::rsa_pre_master(&secret, rsa_public));
        let msg = HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Rsa(ciphertext));
        self.core.handshake_record(&msg)
    }

    /// ECDH with an ephemeral key of ours (or a share a load generator computed before
    /// its clock started).
    fn ecdh_key_exchange(
        &mut self,
        keys: &KeySchedule,
        spec: Specifier,
        server_key: &PeerKey,
    ) -> HsResult<Vec<u8>> {
        let precomputed = self
            .config
            .key_share_source
            .as_ref()
            .and_then(|source| source(server_key))
            .transpose()?;
        let (point, shared) = match precomputed {
            Some(share) => share,
            None => {
                let config = &self.config;
                let ephemeral =
                    self.core
                        .probe
                        .operation(Message::CKX, Operation::KEYGEN, || {
                            match &config.ephemeral_source {
                                Some(source) => source(spec),
                                None => pk::ephemeral_ec(spec),
                            }
                        })?;
                let shared = self
                    .core
                    .probe
                    .operation(Message::CKX, Operation::ECDH, || {
                        pk::ecdh(&ephemeral, server_key)
                    })?;
                let point = match ephemeral.public_wire()? {
                    PublicKey::Ec(p) => p,
                    PublicKey::Rsa(_) => EcPublicKey(Vec::new()),
                };
                (point, shared)
            }
        };
        self.core.agree(keys, &shared);
        let msg = HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Ec(point));
        self.core.handshake_record(&msg)
    }

    pub(super) fn on_change_cipher_spec(&mut self, body: &[u8]) -> HsResult<()> {
        use ClientState as S;
        ChangeCipherSpec::read_exact(body, "ChangeCipherSpec")?;
        self.state = match std::mem::replace(&mut self.state, S::Closed) {
            S::WaitDoneOrOptimisedCcs(server) => {
                // Optimised flow (§9.4): the server took our certificate from its store,
                // so both sides derive the pre-master secret from the two certified
                // keys. There is no ClientKeyExchange; the thesis books the work as CKX.
                let own = self
                    .config
                    .credential
                    .as_ref()
                    .map(|(_, key)| key.clone())
                    .ok_or(LocalError::OptimisedWithoutCredential)?;
                let shared = self
                    .core
                    .probe
                    .operation(Message::CKX, Operation::ECDH, || {
                        pk::ecdh(&own, &server.key)
                    })?;
                self.core.agree(&server.chosen.keys, &shared);
                self.core.probe.end_message(Message::CKX, 0);
                self.core.records.install_read()?;
                S::WaitServerFinished(Agreed {
                    chosen: server.chosen,
                    kind: HandshakeKind::Optimised,
                    client_certified: true,
                })
            }
            S::WaitServerCcs(agreed) => {
                self.core.records.install_read()?;
                S::WaitServerFinished(agreed)
            }
            other => {
                let name = other.name();
                self.state = other;
                return Err(PeerMisbehaved::UnexpectedChangeCipherSpec(name).into());
            }
        };
        Ok(())
    }

    fn on_server_finished(
        &mut self,
        agreed: Agreed,
        fin: &Finished,
        out: &mut Output,
    ) -> HsResult<ClientState> {
        self.core.check_finished(&agreed.chosen.keys, fin)?;
        Ok(match agreed.kind {
            HandshakeKind::Full => self.complete(agreed, out),
            // Abbreviated and optimised: our ChangeCipherSpec and Finished come last.
            HandshakeKind::Abbreviated | HandshakeKind::Optimised => {
                ClientState::SendFinished(agreed)
            }
        })
    }

    fn complete(&mut self, agreed: Agreed, out: &mut Output) -> ClientState {
        self.stop_timer();
        out.events.push(Event::HandshakeComplete(agreed.kind));
        self.negotiated = Some(Negotiated {
            kind: agreed.kind,
            cipher_suite: agreed.chosen.keys.cipher,
            key_exchange: agreed.chosen.suite,
            client_authenticated: agreed.client_certified,
        });
        ClientState::Established(agreed.chosen)
    }
}
