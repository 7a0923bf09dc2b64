//! Handshake messages (wire-format notes §3).
//!
//! Each message is `msg_type (1) ‖ length (2, NOT 3 as in TLS) ‖ body`, and every
//! implementation puts exactly one message in each handshake record, so
//! [`split_handshake_record`] insists that the header length covers the record exactly.
//!
//! ServerKeyExchange and ClientKeyExchange bodies do not say which key they carry: the
//! reader needs the negotiated key exchange suite (`read_for`). The codec decodes by key
//! *family* (RSA, DH, ECDH) only; whether the message is expected at all for that suite
//! (S3 answers unexpected_message to a ServerKeyExchange under RSA, §3.7) is the
//! handshake state machine's decision, not the codec's.

use crate::codec::{put_u16_prefixed, put_u8_prefixed, put_vec_u16, Codec, DecodeError, Reader};
use crate::msgs::certificate::CertificateChain;
use crate::msgs::common::{
    read_list, CipherSuite, DhPublicKey, EcPublicKey, KeyExchangeId, ParameterSpecifier, Random,
    RsaPublicKey, SessionId,
};
use crate::msgs::enums::{CompressionMethod, HandshakeType, KeyExchangeSuite, SequenceNumberMode};

/// Initial capacity of [`HandshakeMessage::to_bytes`]: above ServerHello, Finished,
/// ClientKeyExchange and a CertificateRequest naming a few CAs.
const ENCODE_CAPACITY: usize = 256;

/// The key families the suite-dependent messages distinguish.
enum KeyFamily {
    Rsa,
    Dh,
    Ec,
}

/// Map a suite to the family of key its exchange messages carry, or fail for the suites
/// (null, shared_secret) that send no key exchange messages at all (§3.10).
fn key_family(suite: KeyExchangeSuite, field: &'static str) -> Result<KeyFamily, DecodeError> {
    use KeyExchangeSuite as S;
    match suite {
        _ if suite.is_rsa() => Ok(KeyFamily::Rsa),
        _ if suite.is_ecdh() => Ok(KeyFamily::Ec),
        S::DhAnon | S::DhAnon512 | S::DhAnon768 => Ok(KeyFamily::Dh),
        _ => Err(DecodeError::Illegal {
            field,
            defect: crate::codec::IllegalValue::NoKeyExchangeMessage,
        }),
    }
}

/// ClientHello (§3.4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientHello {
    /// 1 for WTLS 1.0.
    pub client_version: u8,
    pub random: Random,
    /// Non-empty asks to resume that session.
    pub session_id: SessionId,
    /// Key exchanges the client supports, in preference order (2-byte byte length).
    pub client_key_ids: Vec<KeyExchangeId>,
    /// Authorities the client trusts (2-byte byte length; may be empty).
    pub trusted_key_ids: Vec<KeyExchangeId>,
    /// Offered suites; on the wire a 1-byte length in bytes, `<2..2^8-1>`.
    pub cipher_suites: Vec<CipherSuite>,
    /// On the wire a 1-byte *count*, then one byte each; at least one.
    pub compression_methods: Vec<CompressionMethod>,
    pub sequence_number_mode: SequenceNumberMode,
    /// Keys are refreshed every 2^key_refresh records (§7.6).
    pub key_refresh: u8,
}

impl Codec for ClientHello {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.client_version);
        self.random.encode(out);
        self.session_id.encode(out);
        put_u16_prefixed(out, |o| {
            self.client_key_ids.iter().for_each(|k| k.encode(o))
        });
        put_u16_prefixed(out, |o| {
            self.trusted_key_ids.iter().for_each(|k| k.encode(o))
        });
        put_u8_prefixed(out, |o| self.cipher_suites.iter().for_each(|c| c.encode(o)));
        let count = u8::try_from(self.compression_methods.len())
            .expect("more than 255 compression methods");
        out.push(count);
        self.compression_methods.iter().for_each(|c| c.encode(out));
        self.sequence_number_mode.encode(out);
        out.push(self.key_refresh);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let client_version = r.u8("ClientHello.client_version")?;
        let random = Random::read(r)?;
        let session_id = SessionId::read(r)?;
        let client_key_ids = read_list(r.sub_u16("ClientHello.client_key_ids")?)?;
        let trusted_key_ids = read_list(r.sub_u16("ClientHello.trusted_key_ids")?)?;
        let suites = r.vec_u8(2, 255, "ClientHello.cipher_suites")?;
        if suites.len() % 2 != 0 {
            return Err(DecodeError::Illegal {
                field: "ClientHello.cipher_suites",
                defect: crate::codec::IllegalValue::OddSuiteListLength,
            });
        }
        let cipher_suites = read_list(Reader::new(suites))?;
        let count = r.u8("ClientHello.compression_methods")? as usize;
        if count == 0 {
            return Err(DecodeError::BadLength {
                field: "ClientHello.compression_methods",
                length: 0,
                min: 1,
                max: 255,
            });
        }
        let methods = r.take(count, "ClientHello.compression_methods")?;
        let compression_methods = read_list(Reader::new(methods))?;
        Ok(ClientHello {
            client_version,
            random,
            session_id,
            client_key_ids,
            trusted_key_ids,
            cipher_suites,
            compression_methods,
            sequence_number_mode: SequenceNumberMode::read(r)?,
            key_refresh: r.u8("ClientHello.key_refresh")?,
        })
    }
}

/// ServerHello (§3.5). Semantic checks (version equal to the client's, client_key_id
/// non-zero in a full handshake, key_refresh not above the client's) belong to the
/// state machine; the codec accepts any byte values there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServerHello {
    pub server_version: u8,
    pub random: Random,
    /// Echo of the client's id means an abbreviated (resumed) handshake.
    pub session_id: SessionId,
    /// **1-based** index into the client's `client_key_ids`.
    pub client_key_id: u8,
    pub cipher_suite: CipherSuite,
    pub compression_method: CompressionMethod,
    pub sequence_number_mode: SequenceNumberMode,
    pub key_refresh: u8,
}

impl Codec for ServerHello {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.server_version);
        self.random.encode(out);
        self.session_id.encode(out);
        out.push(self.client_key_id);
        self.cipher_suite.encode(out);
        self.compression_method.encode(out);
        self.sequence_number_mode.encode(out);
        out.push(self.key_refresh);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(ServerHello {
            server_version: r.u8("ServerHello.server_version")?,
            random: Random::read(r)?,
            session_id: SessionId::read(r)?,
            client_key_id: r.u8("ServerHello.client_key_id")?,
            cipher_suite: CipherSuite::read(r)?,
            compression_method: CompressionMethod::read(r)?,
            sequence_number_mode: SequenceNumberMode::read(r)?,
            key_refresh: r.u8("ServerHello.key_refresh")?,
        })
    }
}

/// The server key carried by a ServerKeyExchange (§3.7).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ServerKeyExchangeKey {
    Rsa(RsaPublicKey),
    Dh(DhPublicKey),
    Ec(EcPublicKey),
}

/// ServerKeyExchange (§3.7): parameters, then the key in the layout of the suite's family.
/// A parameter index of 0 means the parameters of the client's chosen KeyExchangeId apply.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServerKeyExchange {
    pub parameters: ParameterSpecifier,
    pub key: ServerKeyExchangeKey,
}

impl ServerKeyExchange {
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.parameters.encode(out);
        match &self.key {
            ServerKeyExchangeKey::Rsa(k) => k.encode(out),
            ServerKeyExchangeKey::Dh(k) => k.encode(out),
            ServerKeyExchangeKey::Ec(k) => k.encode(out),
        }
    }

    /// Read the body under the negotiated `suite`: RSA* suites carry an RSAPublicKey,
    /// DH_anon* a DHPublicKey, ECDH* an ECPublicKey. null and shared_secret are
    /// `Illegal` (they never send this message).
    pub fn read_for(r: &mut Reader<'_>, suite: KeyExchangeSuite) -> Result<Self, DecodeError> {
        let family = key_family(suite, "ServerKeyExchange")?;
        let parameters = ParameterSpecifier::read(r)?;
        let key = match family {
            KeyFamily::Rsa => ServerKeyExchangeKey::Rsa(RsaPublicKey::read(r)?),
            KeyFamily::Dh => ServerKeyExchangeKey::Dh(DhPublicKey::read(r)?),
            KeyFamily::Ec => ServerKeyExchangeKey::Ec(EcPublicKey::read(r)?),
        };
        Ok(ServerKeyExchange { parameters, key })
    }
}

/// CertificateRequest (§3.8): acceptable authorities, 2-byte total length.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CertificateRequest {
    pub trusted_authorities: Vec<KeyExchangeId>,
}

impl Codec for CertificateRequest {
    fn encode(&self, out: &mut Vec<u8>) {
        put_u16_prefixed(out, |o| {
            self.trusted_authorities.iter().for_each(|k| k.encode(o))
        });
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(CertificateRequest {
            trusted_authorities: read_list(r.sub_u16("CertificateRequest.trusted_authorities")?)?,
        })
    }
}

/// ClientKeyExchange (§3.10), by the family of the negotiated suite.
///
/// RSA: the handset client always writes a 2-byte length before the ciphertext, while
/// Kannel's server accepts it with or without one, so field clients evidently varied
/// (§11 item 5). This codec always *sends* the length and *accepts* both: when the
/// first two bytes equal the number of bytes after them they are taken as the prefix,
/// otherwise the whole body is the ciphertext. A bare ciphertext whose first two bytes
/// happen to equal its length minus 2 would be misread; for the ≥ 64-byte ciphertexts of
/// real RSA keys that needs the leading 16 bits to be a value below 2^9, which a
/// PKCS#1 ciphertext almost never has, and the decryption would then fail cleanly.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ClientKeyExchange {
    /// PKCS#1 v1.5 encryption of the 20-byte RSASecret.
    Rsa(Vec<u8>),
    /// The client's Diffie-Hellman Y (2-byte length).
    Dh(Vec<u8>),
    /// The client's ECDH point (1-byte length).
    Ec(EcPublicKey),
}

impl ClientKeyExchange {
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            ClientKeyExchange::Rsa(c) | ClientKeyExchange::Dh(c) => put_vec_u16(out, c),
            ClientKeyExchange::Ec(p) => p.encode(out),
        }
    }

    /// Read the body under the negotiated `suite`. For RSA this consumes everything left
    /// in `r` (the body is the rest of the message); see the type's documentation for
    /// how an absent length prefix is recognised. null and shared_secret are `Illegal`.
    pub fn read_for(r: &mut Reader<'_>, suite: KeyExchangeSuite) -> Result<Self, DecodeError> {
        Ok(match key_family(suite, "ClientKeyExchange")? {
            KeyFamily::Rsa => {
                let body = r.take_rest();
                let ciphertext = match body {
                    [hi, lo, rest @ ..]
                        if usize::from(u16::from_be_bytes([*hi, *lo])) == rest.len() =>
                    {
                        rest
                    }
                    _ => body,
                };
                if ciphertext.is_empty() || ciphertext.len() > usize::from(u16::MAX) {
                    return Err(DecodeError::BadLength {
                        field: "ClientKeyExchange.rsa_ciphertext",
                        length: ciphertext.len(),
                        min: 1,
                        max: u16::MAX as usize,
                    });
                }
                ClientKeyExchange::Rsa(ciphertext.to_vec())
            }
            KeyFamily::Dh => ClientKeyExchange::Dh(
                r.vec_u16(1, u16::MAX as usize, "ClientKeyExchange.dh_Y")?
                    .to_vec(),
            ),
            KeyFamily::Ec => ClientKeyExchange::Ec(EcPublicKey::read(r)?),
        })
    }
}

/// CertificateVerify (§3.11): the client's signature over the handshake hash, 2-byte
/// length.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CertificateVerify {
    pub signature: Vec<u8>,
}

impl Codec for CertificateVerify {
    fn encode(&self, out: &mut Vec<u8>) {
        put_vec_u16(out, &self.signature);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(CertificateVerify {
            signature: r
                .vec_u16(1, u16::MAX as usize, "CertificateVerify.signature")?
                .to_vec(),
        })
    }
}

/// Finished (§3.12): 12 bytes of verify_data, no length prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Finished {
    pub verify_data: VerifyData,
}

/// The 12 bytes of Finished.verify_data. Its only comparison is constant-time (`==`
/// goes through `subtle`), and it gives no access to its bytes to compare otherwise:
/// checking a peer's Finished cannot leak, through timing, how many of its leading bytes
/// were right, whoever writes the check and however it is formatted.
#[derive(Debug, Clone, Copy)]
pub struct VerifyData([u8; 12]);

impl VerifyData {
    pub fn new(bytes: [u8; 12]) -> Self {
        VerifyData(bytes)
    }
}

impl PartialEq for VerifyData {
    fn eq(&self, other: &Self) -> bool {
        use subtle::ConstantTimeEq;
        self.0.ct_eq(&other.0).into()
    }
}

impl Eq for VerifyData {}

/// Equal values have equal bytes, so hashing the bytes agrees with the equality.
impl std::hash::Hash for VerifyData {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl Codec for Finished {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.verify_data.0);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Finished {
            verify_data: VerifyData(r.array("Finished.verify_data")?),
        })
    }
}

/// The 3-byte handshake message header (§3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandshakeHeader {
    pub typ: HandshakeType,
    /// Number of body bytes that follow.
    pub length: u16,
}

impl HandshakeHeader {
    pub const LEN: usize = 3;
}

impl Codec for HandshakeHeader {
    fn encode(&self, out: &mut Vec<u8>) {
        self.typ.encode(out);
        out.extend_from_slice(&self.length.to_be_bytes());
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(HandshakeHeader {
            typ: HandshakeType::read(r)?,
            length: r.u16("Handshake.length")?,
        })
    }
}

/// Split the fragment of a handshake record into its header and body. Strict: the
/// header length must cover the rest of the record exactly, because a record carries
/// one handshake message (§3.1); a shorter body is `Truncated`, a longer record
/// `TrailingBytes`.
pub fn split_handshake_record(fragment: &[u8]) -> Result<(HandshakeHeader, &[u8]), DecodeError> {
    let mut r = Reader::new(fragment);
    let header = HandshakeHeader::read(&mut r)?;
    let body = r.take(header.length.into(), "Handshake.body")?;
    r.expect_end("Handshake record")?;
    Ok((header, body))
}

/// Any handshake message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HandshakeMessage {
    HelloRequest,
    ClientHello(ClientHello),
    ServerHello(ServerHello),
    Certificate(CertificateChain),
    ServerKeyExchange(ServerKeyExchange),
    CertificateRequest(CertificateRequest),
    ServerHelloDone,
    CertificateVerify(CertificateVerify),
    ClientKeyExchange(ClientKeyExchange),
    Finished(Finished),
}

impl HandshakeMessage {
    pub fn typ(&self) -> HandshakeType {
        match self {
            HandshakeMessage::HelloRequest => HandshakeType::HelloRequest,
            HandshakeMessage::ClientHello(_) => HandshakeType::ClientHello,
            HandshakeMessage::ServerHello(_) => HandshakeType::ServerHello,
            HandshakeMessage::Certificate(_) => HandshakeType::Certificate,
            HandshakeMessage::ServerKeyExchange(_) => HandshakeType::ServerKeyExchange,
            HandshakeMessage::CertificateRequest(_) => HandshakeType::CertificateRequest,
            HandshakeMessage::ServerHelloDone => HandshakeType::ServerHelloDone,
            HandshakeMessage::CertificateVerify(_) => HandshakeType::CertificateVerify,
            HandshakeMessage::ClientKeyExchange(_) => HandshakeType::ClientKeyExchange,
            HandshakeMessage::Finished(_) => HandshakeType::Finished,
        }
    }

    /// Append the body only (no header).
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        match self {
            HandshakeMessage::HelloRequest | HandshakeMessage::ServerHelloDone => {}
            HandshakeMessage::ClientHello(m) => m.encode(out),
            HandshakeMessage::ServerHello(m) => m.encode(out),
            HandshakeMessage::Certificate(m) => m.encode(out),
            HandshakeMessage::ServerKeyExchange(m) => m.encode(out),
            HandshakeMessage::CertificateRequest(m) => m.encode(out),
            HandshakeMessage::CertificateVerify(m) => m.encode(out),
            HandshakeMessage::ClientKeyExchange(m) => m.encode(out),
            HandshakeMessage::Finished(m) => m.encode(out),
        }
    }

    /// Append the full message, header included: these are the bytes that enter the
    /// Finished and CertificateVerify hashes (§7.10).
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.typ().encode(out);
        put_u16_prefixed(out, |o| self.encode_body(o));
    }

    /// The full message, header included, as a fresh vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Sized for every message a handshake sends but a certificate chain, so that
        // encoding one does not grow the vector through 8, 16, 32, 64 bytes (a
        // reallocation each: the larger part of encoding a short message).
        let mut out = Vec::with_capacity(ENCODE_CAPACITY);
        self.encode(&mut out);
        out
    }

    /// Read one message (header and body) from `r`. `ctx` is the negotiated key
    /// exchange suite, needed to read ServerKeyExchange and ClientKeyExchange; with
    /// `None` those two are `Illegal`. The body must be consumed exactly.
    pub fn read(r: &mut Reader<'_>, ctx: Option<KeyExchangeSuite>) -> Result<Self, DecodeError> {
        let header = HandshakeHeader::read(r)?;
        let body = r.take(header.length.into(), "Handshake.body")?;
        Self::read_body(header.typ, body, ctx)
    }

    /// Parse a complete handshake record fragment (exactly one message).
    pub fn read_record(
        fragment: &[u8],
        ctx: Option<KeyExchangeSuite>,
    ) -> Result<Self, DecodeError> {
        let (header, body) = split_handshake_record(fragment)?;
        Self::read_body(header.typ, body, ctx)
    }

    /// Parse a body of the given type; the body must be consumed exactly.
    pub fn read_body(
        typ: HandshakeType,
        body: &[u8],
        ctx: Option<KeyExchangeSuite>,
    ) -> Result<Self, DecodeError> {
        let mut r = Reader::new(body);
        let suite = |field: &'static str| {
            ctx.ok_or(DecodeError::Illegal {
                field,
                defect: crate::codec::IllegalValue::NoSuiteNegotiated,
            })
        };
        let msg = match typ {
            HandshakeType::HelloRequest => HandshakeMessage::HelloRequest,
            HandshakeType::ClientHello => HandshakeMessage::ClientHello(ClientHello::read(&mut r)?),
            HandshakeType::ServerHello => HandshakeMessage::ServerHello(ServerHello::read(&mut r)?),
            HandshakeType::Certificate => {
                HandshakeMessage::Certificate(CertificateChain::read(&mut r)?)
            }
            HandshakeType::ServerKeyExchange => HandshakeMessage::ServerKeyExchange(
                ServerKeyExchange::read_for(&mut r, suite("ServerKeyExchange")?)?,
            ),
            HandshakeType::CertificateRequest => {
                HandshakeMessage::CertificateRequest(CertificateRequest::read(&mut r)?)
            }
            HandshakeType::ServerHelloDone => HandshakeMessage::ServerHelloDone,
            HandshakeType::CertificateVerify => {
                HandshakeMessage::CertificateVerify(CertificateVerify::read(&mut r)?)
            }
            HandshakeType::ClientKeyExchange => HandshakeMessage::ClientKeyExchange(
                ClientKeyExchange::read_for(&mut r, suite("ClientKeyExchange")?)?,
            ),
            HandshakeType::Finished => HandshakeMessage::Finished(Finished::read(&mut r)?),
        };
        r.expect_end(body_field(typ))?;
        Ok(msg)
    }
}

/// Field name used when a body has bytes left over.
fn body_field(typ: HandshakeType) -> &'static str {
    match typ {
        HandshakeType::HelloRequest => "HelloRequest",
        HandshakeType::ClientHello => "ClientHello",
        HandshakeType::ServerHello => "ServerHello",
        HandshakeType::Certificate => "Certificate",
        HandshakeType::ServerKeyExchange => "ServerKeyExchange",
        HandshakeType::CertificateRequest => "CertificateRequest",
        HandshakeType::ServerHelloDone => "ServerHelloDone",
        HandshakeType::CertificateVerify => "CertificateVerify",
        HandshakeType::ClientKeyExchange => "ClientKeyExchange",
        HandshakeType::Finished => "Finished",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgs::common::Identifier;
    use crate::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};

    /// The handshake message of the worked example §12.1 (record header stripped).
    pub(super) const CLIENT_HELLO_12_1: &[u8] = &[
        0x01, 0x00, 0x22, 0x01, 0x3b, 0x9a, 0xca, 0x00, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
        0x11, 0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x03, 0x08, 0x00, 0x00, 0x00, 0x00, 0x04, 0x03,
        0x03, 0x05, 0x02, 0x01, 0x00, 0x02, 0x03,
    ];

    pub(super) fn client_hello_12_1() -> ClientHello {
        ClientHello {
            client_version: 1,
            random: Random::new(0x3B9A_CA00, [0x11; 12]),
            session_id: SessionId::empty(),
            client_key_ids: vec![KeyExchangeId {
                suite: KeyExchangeSuite::Rsa,
                parameters: ParameterSpecifier::Index(0),
                identifier: Identifier::Null,
            }],
            trusted_key_ids: vec![],
            cipher_suites: vec![
                CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha),
                CipherSuite::new(BulkCipherAlgorithm::DesCbc, MacAlgorithm::Sha80),
            ],
            compression_methods: vec![CompressionMethod::Null],
            sequence_number_mode: SequenceNumberMode::Explicit,
            key_refresh: 3,
        }
    }

    #[test]
    fn client_hello_known_answer() {
        let msg = HandshakeMessage::read_record(CLIENT_HELLO_12_1, None).unwrap();
        assert_eq!(msg, HandshakeMessage::ClientHello(client_hello_12_1()));
        assert_eq!(msg.to_bytes(), CLIENT_HELLO_12_1);
    }

    #[test]
    fn client_hello_errors_name_their_field() {
        let body = &CLIENT_HELLO_12_1[3..];
        // cipher_suites with an odd byte length.
        let mut odd = body.to_vec();
        odd[25] = 3;
        odd.remove(26);
        let err = ClientHello::read_exact(&odd, "ClientHello").unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Illegal {
                field: "ClientHello.cipher_suites",
                ..
            }
        ));
        // No compression method.
        let mut none = body.to_vec();
        none[30] = 0;
        none.remove(31);
        let err = ClientHello::read_exact(&none, "ClientHello").unwrap_err();
        assert!(matches!(
            err,
            DecodeError::BadLength {
                field: "ClientHello.compression_methods",
                ..
            }
        ));
        // Unknown sequence-number mode.
        let mut mode = body.to_vec();
        mode[32] = 3;
        let err = ClientHello::read_exact(&mode, "ClientHello").unwrap_err();
        assert_eq!(
            err,
            DecodeError::UnknownValue {
                field: "sequence_number_mode",
                value: 3
            }
        );
        // Truncated just before key_refresh.
        let err = ClientHello::read_exact(&body[..body.len() - 1], "ClientHello").unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Truncated {
                field: "ClientHello.key_refresh",
                ..
            }
        ));
        // Key-exchange list whose length cuts an entry in half.
        let mut cut = body.to_vec();
        cut[19] = 2;
        cut.remove(22);
        let err = ClientHello::read_exact(&cut, "ClientHello").unwrap_err();
        assert_eq!(err.field(), "Identifier.identifier_type");
    }

    #[test]
    fn server_hello_layout() {
        let sh = ServerHello {
            server_version: 1,
            random: Random([7; 16]),
            session_id: SessionId::new(&[1, 2, 3, 4]).unwrap(),
            client_key_id: 1,
            cipher_suite: CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha),
            compression_method: CompressionMethod::Null,
            sequence_number_mode: SequenceNumberMode::Explicit,
            key_refresh: 3,
        };
        let bytes = sh.to_bytes();
        assert_eq!(bytes.len(), 24 + 4);
        assert_eq!(&bytes[17..], &[4, 1, 2, 3, 4, 1, 3, 3, 0, 2, 3]);
        assert_eq!(ServerHello::read_exact(&bytes, "t").unwrap(), sh);
        let err = ServerHello::read_exact(&bytes[..25], "t").unwrap_err();
        assert_eq!(err.field(), "compression_method");
    }

    #[test]
    fn empty_bodies() {
        assert_eq!(HandshakeMessage::HelloRequest.to_bytes(), [0, 0, 0]);
        assert_eq!(HandshakeMessage::ServerHelloDone.to_bytes(), [14, 0, 0]);
        assert_eq!(
            HandshakeMessage::read_record(&[14, 0, 0], None).unwrap(),
            HandshakeMessage::ServerHelloDone
        );
        let err = HandshakeMessage::read_record(&[14, 0, 1, 0], None).unwrap_err();
        assert_eq!(
            err,
            DecodeError::TrailingBytes {
                field: "ServerHelloDone",
                extra: 1
            }
        );
    }

    #[test]
    fn record_must_hold_exactly_one_message() {
        let (h, body) = split_handshake_record(&[20, 0, 2, 9, 9]).unwrap();
        assert_eq!(
            h,
            HandshakeHeader {
                typ: HandshakeType::Finished,
                length: 2
            }
        );
        assert_eq!(body, [9, 9]);
        assert!(matches!(
            split_handshake_record(&[20, 0, 3, 9, 9]),
            Err(DecodeError::Truncated {
                field: "Handshake.body",
                ..
            })
        ));
        assert!(matches!(
            split_handshake_record(&[14, 0, 0, 14, 0, 0]),
            Err(DecodeError::TrailingBytes {
                field: "Handshake record",
                extra: 3
            })
        ));
        assert_eq!(
            split_handshake_record(&[3, 0, 0]).unwrap_err(),
            DecodeError::UnknownValue {
                field: "Handshake.msg_type",
                value: 3
            }
        );
        assert!(matches!(
            split_handshake_record(&[20, 0]),
            Err(DecodeError::Truncated {
                field: "Handshake.length",
                ..
            })
        ));
    }

    #[test]
    fn server_key_exchange_by_suite() {
        let ske = ServerKeyExchange {
            parameters: ParameterSpecifier::Index(0),
            key: ServerKeyExchangeKey::Rsa(RsaPublicKey {
                exponent: vec![3],
                modulus: vec![0xAB, 0xCD],
            }),
        };
        let msg = HandshakeMessage::ServerKeyExchange(ske.clone());
        let bytes = msg.to_bytes();
        assert_eq!(bytes, [12, 0, 8, 0, 0, 1, 3, 0, 2, 0xAB, 0xCD]);
        assert_eq!(
            HandshakeMessage::read_record(&bytes, Some(KeyExchangeSuite::RsaAnon768)).unwrap(),
            msg
        );
        // The same bytes under an ECDH suite do not parse as an EC point + nothing.
        assert!(HandshakeMessage::read_record(&bytes, Some(KeyExchangeSuite::EcdhAnon)).is_err());
        let err = HandshakeMessage::read_record(&bytes, None).unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Illegal {
                field: "ServerKeyExchange",
                ..
            }
        ));
        let err = HandshakeMessage::read_record(&bytes, Some(KeyExchangeSuite::SharedSecret))
            .unwrap_err();
        assert_eq!(err.field(), "ServerKeyExchange");

        let ec = ServerKeyExchange {
            parameters: ParameterSpecifier::Index(7),
            key: ServerKeyExchangeKey::Ec(EcPublicKey(vec![2, 1, 1])),
        };
        let mut r = Reader::new(&[7, 3, 2, 1, 1]);
        assert_eq!(
            ServerKeyExchange::read_for(&mut r, KeyExchangeSuite::EcdhAnon).unwrap(),
            ec
        );
        let dh = ServerKeyExchange {
            parameters: ParameterSpecifier::Index(1),
            key: ServerKeyExchangeKey::Dh(DhPublicKey(vec![5, 6])),
        };
        let mut out = vec![];
        dh.encode(&mut out);
        assert_eq!(out, [1, 0, 2, 5, 6]);
        let mut r = Reader::new(&out);
        assert_eq!(
            ServerKeyExchange::read_for(&mut r, KeyExchangeSuite::DhAnon512).unwrap(),
            dh
        );
    }

    #[test]
    fn rsa_client_key_exchange_with_and_without_prefix() {
        let ct = vec![0xC1; 64];
        let cke = HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Rsa(ct.clone()));
        let with = cke.to_bytes();
        assert_eq!(&with[..5], &[16, 0, 66, 0, 64]);
        assert_eq!(
            HandshakeMessage::read_record(&with, Some(KeyExchangeSuite::Rsa)).unwrap(),
            cke
        );
        let mut without = vec![16, 0, 64];
        without.extend_from_slice(&ct);
        assert_eq!(
            HandshakeMessage::read_record(&without, Some(KeyExchangeSuite::Rsa)).unwrap(),
            cke
        );
        let err = HandshakeMessage::read_record(&[16, 0, 2, 0, 0], Some(KeyExchangeSuite::Rsa))
            .unwrap_err();
        assert_eq!(err.field(), "ClientKeyExchange.rsa_ciphertext");
        let err =
            HandshakeMessage::read_record(&[16, 0, 0], Some(KeyExchangeSuite::Null)).unwrap_err();
        assert_eq!(err.field(), "ClientKeyExchange");
    }

    #[test]
    fn dh_and_ec_client_key_exchange() {
        let dh = HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Dh(vec![1, 2, 3]));
        assert_eq!(dh.to_bytes(), [16, 0, 5, 0, 3, 1, 2, 3]);
        assert_eq!(
            HandshakeMessage::read_record(&dh.to_bytes(), Some(KeyExchangeSuite::DhAnon)).unwrap(),
            dh
        );
        let ec =
            HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Ec(EcPublicKey(vec![4, 1, 2])));
        assert_eq!(ec.to_bytes(), [16, 0, 4, 3, 4, 1, 2]);
        assert_eq!(
            HandshakeMessage::read_record(&ec.to_bytes(), Some(KeyExchangeSuite::EcdhEcdsa))
                .unwrap(),
            ec
        );
        let err = HandshakeMessage::read_record(
            &[16, 0, 5, 3, 4, 1, 2, 9],
            Some(KeyExchangeSuite::EcdhEcdsa),
        )
        .unwrap_err();
        assert_eq!(
            err,
            DecodeError::TrailingBytes {
                field: "ClientKeyExchange",
                extra: 1
            }
        );
    }

    #[test]
    fn certificate_request_verify_and_finished() {
        let cr = HandshakeMessage::CertificateRequest(CertificateRequest {
            trusted_authorities: vec![KeyExchangeId {
                suite: KeyExchangeSuite::Rsa,
                parameters: ParameterSpecifier::Index(0),
                identifier: Identifier::text("CA"),
            }],
        });
        assert_eq!(
            cr.to_bytes(),
            [13, 0, 10, 0, 8, 8, 0, 1, 0, 106, 2, b'C', b'A']
        );
        assert_eq!(
            HandshakeMessage::read_record(&cr.to_bytes(), None).unwrap(),
            cr
        );

        let cv = HandshakeMessage::CertificateVerify(CertificateVerify {
            signature: vec![1, 2],
        });
        assert_eq!(cv.to_bytes(), [15, 0, 4, 0, 2, 1, 2]);
        assert_eq!(
            HandshakeMessage::read_record(&cv.to_bytes(), None).unwrap(),
            cv
        );
        let err = HandshakeMessage::read_record(&[15, 0, 2, 0, 0], None).unwrap_err();
        assert_eq!(err.field(), "CertificateVerify.signature");

        let fin = HandshakeMessage::Finished(Finished {
            verify_data: VerifyData::new([0x5A; 12]),
        });
        let bytes = fin.to_bytes();
        assert_eq!(&bytes[..3], &[20, 0, 12]);
        assert_eq!(HandshakeMessage::read_record(&bytes, None).unwrap(), fin);
        let err =
            HandshakeMessage::read_record(&[20, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], None)
                .unwrap_err();
        assert_eq!(err.field(), "Finished.verify_data");
    }

    #[test]
    fn certificate_message_with_empty_chain() {
        let msg = HandshakeMessage::read_record(&[11, 0, 2, 0, 0], None).unwrap();
        assert_eq!(
            msg,
            HandshakeMessage::Certificate(CertificateChain::default())
        );
        assert_eq!(msg.typ(), HandshakeType::Certificate);
    }

    #[test]
    fn read_leaves_the_rest_of_the_reader() {
        let mut bytes = HandshakeMessage::ServerHelloDone.to_bytes();
        bytes.extend_from_slice(&[0, 0, 0]);
        let mut r = Reader::new(&bytes);
        assert_eq!(
            HandshakeMessage::read(&mut r, None).unwrap(),
            HandshakeMessage::ServerHelloDone
        );
        assert_eq!(
            HandshakeMessage::read(&mut r, None).unwrap(),
            HandshakeMessage::HelloRequest
        );
        assert!(r.is_empty());
    }
}
