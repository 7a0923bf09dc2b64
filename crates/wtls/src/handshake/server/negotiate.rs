//! What the server chooses from a ClientHello: the cipher suite, the key exchange and
//! credential, the session id; and the shared Certificate record of each credential.

use std::sync::Arc;

use super::{ServerConfig, ServerConnection, ServerCredential};
use crate::codec::Codec;
use crate::handshake::error::{HsResult, PeerMisbehaved};
use crate::msgs::certificate::{CertificateChain, CertificateEntry, WtlsCertificate};
use crate::msgs::common::{CipherSuite, Identifier, KeyExchangeId, SessionId};
use crate::msgs::enums::{ContentType, KeyExchangeSuite};
use crate::msgs::handshake::{ClientHello, HandshakeMessage};
use crate::msgs::record::{OwnedRecord, RecordHeader};
use crate::params::NamedParameters;
use crate::suite::Specifier;

/// The Certificate record is the second record of a full handshake's server flight.
pub(super) const CERTIFICATE_SEQ: u16 = 1;

/// The key exchange the server chose from the client's list.
pub(super) struct KeyExchangeChoice {
    /// Its place in client_key_ids (ServerHello's client_key_id is this plus one).
    pub(super) index: usize,
    /// The suite without its point format ([`KeyExchangeSuite::base`]).
    pub(super) suite: KeyExchangeSuite,
    pub(super) spec: Specifier,
    /// Our credential (certified suites and RSA_anon).
    pub(super) credential: Option<usize>,
    /// Optimised flow: the client's certificate from our store.
    pub(super) optimised: Option<WtlsCertificate>,
    /// Our points travel compressed (the client chose a suite 11-14 under WAP-261).
    pub(super) compressed: bool,
}

impl ServerConnection {
    /// The first cipher suite in the client's order that we accept (§3.4).
    pub(super) fn choose_cipher(&self, offered: &[CipherSuite]) -> HsResult<CipherSuite> {
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
            PeerMisbehaved::OnlyWeakCipherSuites.into()
        } else {
            PeerMisbehaved::NoCommonCipherSuite.into()
        })
    }

    /// The first key exchange in the client's order for which we hold a key from a CA
    /// the client trusts (any CA if it names none).
    pub(super) fn choose_key_exchange(&self, ch: &ClientHello) -> HsResult<KeyExchangeChoice> {
        let config = &self.config;
        let mut anonymous_refused = false;
        let mut unknown_index = false;
        for (index, kid) in ch.client_key_ids.iter().enumerate() {
            // 14 and 18 (11 and 15) are one key exchange; the code only says how the
            // points travel, and we read both forms.
            let suite = kid.suite.base();
            let supported = matches!(
                suite,
                KeyExchangeSuite::Rsa
                    | KeyExchangeSuite::EcdhEcdsa
                    | KeyExchangeSuite::RsaAnon
                    | KeyExchangeSuite::EcdhAnon
            );
            if !supported {
                continue;
            }
            if suite.is_anonymous() && !config.policy.allow_anonymous {
                anonymous_refused = true;
                continue;
            }
            let Ok(named) = Specifier::named_by(&kid.parameters, config.numbering) else {
                unknown_index = true;
                continue;
            };
            if suite.is_rsa() != named.is_rsa() {
                continue;
            }
            let trusted = |c: &ServerCredential| {
                ch.trusted_key_ids.is_empty()
                    || ch
                        .trusted_key_ids
                        .iter()
                        .any(|t| c.issued_by(&t.identifier))
            };
            let credential = config
                .credentials
                .iter()
                .position(|c| named.admits(c.spec) && (suite.is_anonymous() || trusted(c)));
            let compressed = crate::handshake::compressed_points(kid.suite, config.numbering);
            if let (KeyExchangeSuite::EcdhAnon, NamedParameters::Key(spec)) = (suite, named) {
                return Ok(KeyExchangeChoice {
                    index,
                    suite,
                    spec,
                    credential,
                    optimised: None,
                    compressed,
                });
            }
            let Some((credential, c)) =
                credential.and_then(|i| Some((i, config.credentials.get(i)?)))
            else {
                continue;
            };
            return Ok(KeyExchangeChoice {
                index,
                suite,
                spec: c.spec,
                credential: Some(credential),
                optimised: optimised_certificate(config, suite, kid),
                compressed,
            });
        }
        Err(if anonymous_refused {
            PeerMisbehaved::AnonymousKeyExchange.into()
        } else if unknown_index {
            PeerMisbehaved::UnknownParameters.into()
        } else {
            PeerMisbehaved::NoCommonKeyExchange.into()
        })
    }

    /// A fresh session id, or none when the server keeps no sessions.
    pub(super) fn new_session_id(&self) -> SessionId {
        if self.config.session_cache.is_none() {
            return SessionId::empty();
        }
        let mut id = [0u8; 8];
        crate::crypto::random::fill(&mut id);
        SessionId::new(&id).unwrap_or_else(|_| SessionId::empty())
    }

    /// The shared Certificate record of credential `i` (made on first use): clear text,
    /// L and S set, sequence number 1, as the second record of every full handshake.
    pub(super) fn certificate_record(&self, i: usize) -> Option<Arc<[u8]>> {
        let cert = &self.config.credentials.get(i)?.cert;
        let mut cache = self
            .config
            .certificate_records
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Looked up by reference first: the entry API would copy the signature for the
        // key on every handshake, only to drop the copy when the record is cached.
        if let Some(record) = cache.get(cert.signature.as_slice()) {
            return Some(record.clone());
        }
        let record = cache.entry(cert.signature.clone()).or_insert_with(|| {
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
        });
        Some(record.clone())
    }
}

/// The client's certificate from our store when it names itself in an ECDH_ECDSA
/// KeyExchangeId: the optimised flow (notes §9.4).
fn optimised_certificate(
    config: &ServerConfig,
    suite: KeyExchangeSuite,
    kid: &KeyExchangeId,
) -> Option<WtlsCertificate> {
    if suite != KeyExchangeSuite::EcdhEcdsa || kid.identifier == Identifier::Null {
        return None;
    }
    config
        .client_certificates
        .get(&kid.identifier.to_bytes())
        .cloned()
}
