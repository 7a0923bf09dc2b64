//! Sub-structures shared by several handshake messages and by WTLS certificates
//! (wire-format notes §3.2-3.3, §4.1-4.4, §5.3): randoms, session ids, identifiers,
//! parameter specifiers, key exchange ids, public keys and cipher suites.
//!
//! Every reader is strict: lengths are checked against the bounds of the structure,
//! unknown code points are errors, and each error names the structure and field.

use crate::codec::{put_u16, put_vec_u16, put_vec_u8, Codec, DecodeError, Reader};
use crate::msgs::enums::{BulkCipherAlgorithm, IdentifierType, KeyExchangeSuite, MacAlgorithm};

/// The 16-byte hello random (§3.2): a 4-byte `gmt_unix_time` followed by 12 random
/// bytes. The whole 16 bytes enter the PRF seeds, so it is kept as one array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Random(pub [u8; 16]);

impl Random {
    /// Length on the wire.
    pub const LEN: usize = 16;

    pub fn new(gmt_unix_time: u32, bytes: [u8; 12]) -> Self {
        let mut out = [0u8; 16];
        out[..4].copy_from_slice(&gmt_unix_time.to_be_bytes());
        out[4..].copy_from_slice(&bytes);
        Random(out)
    }

    /// The sender's clock in seconds since 1970. Handsets that do not know GMT put 0 in
    /// the first byte (§3.2), so this is informative only, never a freshness check.
    pub fn gmt_unix_time(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }
}

impl Codec for Random {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Random(r.array("Random")?))
    }
}

/// `opaque SessionID<0..8>` (§3.3). Empty in a ClientHello asks for a new session;
/// empty in a ServerHello says the session cannot be resumed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SessionId(Vec<u8>);

impl SessionId {
    /// Longest session id the protocol allows.
    pub const MAX_LEN: usize = 8;

    /// A session id from its bytes; more than [`Self::MAX_LEN`] bytes is `BadLength`.
    pub fn new(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.len() > Self::MAX_LEN {
            return Err(DecodeError::BadLength {
                field: "SessionID",
                length: bytes.len(),
                min: 0,
                max: Self::MAX_LEN,
            });
        }
        Ok(SessionId(bytes.to_vec()))
    }

    pub fn empty() -> Self {
        SessionId(Vec::new())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Codec for SessionId {
    fn encode(&self, out: &mut Vec<u8>) {
        put_vec_u8(out, &self.0);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(SessionId(r.vec_u8(0, Self::MAX_LEN, "SessionID")?.to_vec()))
    }
}

/// Names a key or an authority (§4.3).
///
/// Layout follows the handset client and the dissector, not Kannel (§11 items 1-2):
/// the text character set is a 2-byte IANA MIBenum and `key_hash_sha` is a bare 20-byte
/// SHA-1 hash without a length prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Identifier {
    Null,
    /// `uint16 character_set` + `uint8` length + name bytes in that character set.
    Text {
        character_set: u16,
        name: Vec<u8>,
    },
    /// `uint8` length + opaque identifier bytes.
    Binary(Vec<u8>),
    /// SHA-1 hash of the named public key, fixed 20 bytes.
    KeyHashSha([u8; 20]),
    /// `uint8` length + DER-encoded X.501 DistinguishedName.
    X509Name(Vec<u8>),
}

impl Identifier {
    /// IANA MIBenum of UTF-8, the character set this project writes for text names.
    /// UTF-8 is a superset of the ASCII names the studies used and needs no table.
    pub const CHARSET_UTF8: u16 = 106;

    /// A text identifier in UTF-8 (MIBenum 106).
    ///
    /// Panics if `name` is longer than 255 bytes, the most a 1-byte length can carry:
    /// names come from local configuration, so an over-long one is a setup error that
    /// must surface at once rather than as a silently shortened identity.
    pub fn text(name: &str) -> Self {
        assert!(
            name.len() <= u8::MAX as usize,
            "text identifier longer than 255 bytes"
        );
        Identifier::Text {
            character_set: Self::CHARSET_UTF8,
            name: name.as_bytes().to_vec(),
        }
    }

    /// IANA MIBenum of ISO-8859-1 (Latin-1), what real WTLS certificates use
    /// (Entrust.net, VeriSign).
    pub const CHARSET_LATIN1: u16 = 4;
    /// IANA MIBenum of US-ASCII.
    pub const CHARSET_ASCII: u16 = 3;

    /// Whether two identifiers name the same entity: equal, or two `text` names that
    /// spell the same characters in character sets we can read (US-ASCII, ISO-8859-1,
    /// UTF-8). A CA named in ISO-8859-1 in its certificate and in UTF-8 in a peer's
    /// trusted_key_ids is one CA.
    pub fn same_name(&self, other: &Identifier) -> bool {
        if self == other {
            return true;
        }
        match (self, other) {
            (
                Identifier::Text {
                    character_set: a,
                    name: na,
                },
                Identifier::Text {
                    character_set: b,
                    name: nb,
                },
            ) => match (decode_text(*a, na), decode_text(*b, nb)) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            },
            _ => false,
        }
    }

    pub fn identifier_type(&self) -> IdentifierType {
        match self {
            Identifier::Null => IdentifierType::Null,
            Identifier::Text { .. } => IdentifierType::Text,
            Identifier::Binary(_) => IdentifierType::Binary,
            Identifier::KeyHashSha(_) => IdentifierType::KeyHashSha,
            Identifier::X509Name(_) => IdentifierType::X509Name,
        }
    }
}

/// The characters of a text name in a character set we can read, `None` otherwise.
fn decode_text(character_set: u16, name: &[u8]) -> Option<String> {
    match character_set {
        Identifier::CHARSET_UTF8 => std::str::from_utf8(name).ok().map(str::to_owned),
        Identifier::CHARSET_LATIN1 => Some(name.iter().map(|&b| char::from(b)).collect()),
        Identifier::CHARSET_ASCII if name.is_ascii() => {
            Some(name.iter().map(|&b| char::from(b)).collect())
        }
        _ => None,
    }
}

impl Codec for Identifier {
    fn encode(&self, out: &mut Vec<u8>) {
        self.identifier_type().encode(out);
        match self {
            Identifier::Null => {}
            Identifier::Text {
                character_set,
                name,
            } => {
                put_u16(out, *character_set);
                put_vec_u8(out, name);
            }
            Identifier::Binary(b) | Identifier::X509Name(b) => put_vec_u8(out, b),
            Identifier::KeyHashSha(h) => out.extend_from_slice(h),
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match IdentifierType::read(r)? {
            IdentifierType::Null => Identifier::Null,
            IdentifierType::Text => Identifier::Text {
                character_set: r.u16("Identifier.character_set")?,
                name: r.vec_u8(0, 255, "Identifier.name")?.to_vec(),
            },
            IdentifierType::Binary => {
                Identifier::Binary(r.vec_u8(0, 255, "Identifier.identifier")?.to_vec())
            }
            IdentifierType::KeyHashSha => Identifier::KeyHashSha(r.array("Identifier.key_hash")?),
            IdentifierType::X509Name => {
                Identifier::X509Name(r.vec_u8(0, 255, "Identifier.distinguished_name")?.to_vec())
            }
        })
    }
}

/// Raw public-key parameters carried inline after parameter index 255 (§4.2), with a
/// 2-byte length (S1, S3, S5; Kannel's 1-byte length is a bug, §11 item 3).
///
/// The contents depend on the key exchange suite (empty for RSA, [`DhParameters`] for
/// DH, [`EcParameters`] for EC), so they stay opaque here and are parsed on demand.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ParameterSet(pub Vec<u8>);

impl ParameterSet {
    /// Parse the contents as explicit elliptic-curve domain parameters.
    pub fn ec_parameters(&self) -> Result<EcParameters, DecodeError> {
        EcParameters::read_exact(&self.0, "ECParameters")
    }

    /// Parse the contents as Diffie-Hellman group parameters.
    pub fn dh_parameters(&self) -> Result<DhParameters, DecodeError> {
        DhParameters::read_exact(&self.0, "DHParameters")
    }
}

impl From<&EcParameters> for ParameterSet {
    fn from(p: &EcParameters) -> Self {
        ParameterSet(p.to_bytes())
    }
}

impl From<&DhParameters> for ParameterSet {
    fn from(p: &DhParameters) -> Self {
        ParameterSet(p.to_bytes())
    }
}

impl Codec for ParameterSet {
    fn encode(&self, out: &mut Vec<u8>) {
        put_vec_u16(out, &self.0);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(ParameterSet(
            r.vec_u16(0, u16::MAX as usize, "ParameterSet.params")?
                .to_vec(),
        ))
    }
}

/// Which public-key parameters apply (§4.2): a predefined set by index, or explicit
/// parameters. Index 0 means "not applicable / take them from elsewhere" (RSA keys, and
/// a ServerKeyExchange that defers to the client's KeyExchangeId); for the EC suites the
/// index is read as the WTLS curve number (an uncertain mapping, §4.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ParameterSpecifier {
    /// A predefined parameter set, 0..=254. 255 is reserved for [`Self::Set`] and
    /// encoding `Index(255)` is a programming error (it would read back as a set).
    Index(u8),
    /// Explicit parameters (wire index 255).
    Set(ParameterSet),
}

impl ParameterSpecifier {
    /// The wire index that announces explicit parameters.
    pub const EXPLICIT: u8 = 255;
}

impl Codec for ParameterSpecifier {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            ParameterSpecifier::Index(i) => {
                assert!(
                    *i != Self::EXPLICIT,
                    "ParameterSpecifier::Index(255) is not encodable; use Set"
                );
                out.push(*i);
            }
            ParameterSpecifier::Set(set) => {
                out.push(Self::EXPLICIT);
                set.encode(out);
            }
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        match r.u8("ParameterSpecifier.parameter_index")? {
            Self::EXPLICIT => Ok(ParameterSpecifier::Set(ParameterSet::read(r)?)),
            i => Ok(ParameterSpecifier::Index(i)),
        }
    }
}

/// Basis of a characteristic-two field (§4.2; ec_basis_onb = 1, trinomial = 2,
/// pentanomial = 3, polynomial = 4, on which S2 and S5 agree).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EcBasis {
    /// Optimal normal basis: no further data.
    Onb,
    /// x^m + x^k + 1.
    Trinomial { k: u16 },
    /// x^m + x^k3 + x^k2 + x^k1 + 1.
    Pentanomial { k1: u16, k2: u16, k3: u16 },
    /// Any other irreducible polynomial, as an opaque `uint8`-length octet string.
    Polynomial { irreducible: Vec<u8> },
}

/// The field an explicit curve lives over (§4.2). Code points prime = 1,
/// characteristic-two = 2 follow S5's transcription of the specification; Kannel's C
/// enum starts at 0 but never exercises EC (§11 item 4), so this choice is **uncertain**.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EcField {
    /// GF(p): the prime as an unsigned big-endian integer (`uint8` length).
    Prime { p: Vec<u8> },
    /// GF(2^m) with the given basis.
    CharacteristicTwo { m: u16, basis: EcBasis },
}

const EC_FIELD_PRIME: u8 = 1;
const EC_FIELD_CHAR2: u8 = 2;
const EC_BASIS_ONB: u8 = 1;
const EC_BASIS_TRINOMIAL: u8 = 2;
const EC_BASIS_PENTANOMIAL: u8 = 3;
const EC_BASIS_POLYNOMIAL: u8 = 4;

/// Explicit elliptic-curve domain parameters (`ECParameters`, §4.2): field, curve
/// coefficients a and b with an optional seed, base point (X9.62 octet string), order and
/// cofactor. All octet strings carry a 1-byte length.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EcParameters {
    pub field: EcField,
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    /// May be empty.
    pub seed: Vec<u8>,
    pub base: Vec<u8>,
    pub order: Vec<u8>,
    pub cofactor: Vec<u8>,
}

impl Codec for EcParameters {
    fn encode(&self, out: &mut Vec<u8>) {
        match &self.field {
            EcField::Prime { p } => {
                out.push(EC_FIELD_PRIME);
                put_vec_u8(out, p);
            }
            EcField::CharacteristicTwo { m, basis } => {
                out.push(EC_FIELD_CHAR2);
                put_u16(out, *m);
                match basis {
                    EcBasis::Onb => out.push(EC_BASIS_ONB),
                    EcBasis::Trinomial { k } => {
                        out.push(EC_BASIS_TRINOMIAL);
                        put_u16(out, *k);
                    }
                    EcBasis::Pentanomial { k1, k2, k3 } => {
                        out.push(EC_BASIS_PENTANOMIAL);
                        put_u16(out, *k1);
                        put_u16(out, *k2);
                        put_u16(out, *k3);
                    }
                    EcBasis::Polynomial { irreducible } => {
                        out.push(EC_BASIS_POLYNOMIAL);
                        put_vec_u8(out, irreducible);
                    }
                }
            }
        }
        put_vec_u8(out, &self.a);
        put_vec_u8(out, &self.b);
        put_vec_u8(out, &self.seed);
        put_vec_u8(out, &self.base);
        put_vec_u8(out, &self.order);
        put_vec_u8(out, &self.cofactor);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let field = match r.u8("ECParameters.field")? {
            EC_FIELD_PRIME => EcField::Prime {
                p: r.vec_u8(1, 255, "ECParameters.prime_p")?.to_vec(),
            },
            EC_FIELD_CHAR2 => {
                let m = r.u16("ECParameters.m")?;
                let basis = match r.u8("ECParameters.basis")? {
                    EC_BASIS_ONB => EcBasis::Onb,
                    EC_BASIS_TRINOMIAL => EcBasis::Trinomial {
                        k: r.u16("ECParameters.k")?,
                    },
                    EC_BASIS_PENTANOMIAL => EcBasis::Pentanomial {
                        k1: r.u16("ECParameters.k1")?,
                        k2: r.u16("ECParameters.k2")?,
                        k3: r.u16("ECParameters.k3")?,
                    },
                    EC_BASIS_POLYNOMIAL => EcBasis::Polynomial {
                        irreducible: r.vec_u8(1, 255, "ECParameters.irreducible")?.to_vec(),
                    },
                    other => {
                        return Err(DecodeError::UnknownValue {
                            field: "ECParameters.basis",
                            value: other.into(),
                        })
                    }
                };
                EcField::CharacteristicTwo { m, basis }
            }
            other => {
                return Err(DecodeError::UnknownValue {
                    field: "ECParameters.field",
                    value: other.into(),
                })
            }
        };
        Ok(EcParameters {
            field,
            a: r.vec_u8(0, 255, "ECParameters.curve.a")?.to_vec(),
            b: r.vec_u8(0, 255, "ECParameters.curve.b")?.to_vec(),
            seed: r.vec_u8(0, 255, "ECParameters.curve.seed")?.to_vec(),
            base: r.vec_u8(1, 255, "ECParameters.base")?.to_vec(),
            order: r.vec_u8(1, 255, "ECParameters.order")?.to_vec(),
            cofactor: r.vec_u8(1, 255, "ECParameters.cofactor")?.to_vec(),
        })
    }
}

/// Diffie-Hellman group parameters (`DHParameters`, §4.2): `uint8 dh_e` (the exponent
/// size; its exact meaning is unknown, so it is carried as-is), then p and g with
/// 2-byte lengths.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DhParameters {
    pub dh_e: u8,
    pub p: Vec<u8>,
    pub g: Vec<u8>,
}

impl Codec for DhParameters {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.dh_e);
        put_vec_u16(out, &self.p);
        put_vec_u16(out, &self.g);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(DhParameters {
            dh_e: r.u8("DHParameters.dh_e")?,
            p: r.vec_u16(1, u16::MAX as usize, "DHParameters.dh_p")?
                .to_vec(),
            g: r.vec_u16(1, u16::MAX as usize, "DHParameters.dh_g")?
                .to_vec(),
        })
    }
}

/// One key exchange a client offers or one authority it trusts (§4.1): suite,
/// parameters, identifier, in the order S1 and S3 agree on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyExchangeId {
    pub suite: KeyExchangeSuite,
    pub parameters: ParameterSpecifier,
    pub identifier: Identifier,
}

impl Codec for KeyExchangeId {
    fn encode(&self, out: &mut Vec<u8>) {
        self.suite.encode(out);
        self.parameters.encode(out);
        self.identifier.encode(out);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(KeyExchangeId {
            suite: KeyExchangeSuite::read(r)?,
            parameters: ParameterSpecifier::read(r)?,
            identifier: Identifier::read(r)?,
        })
    }
}

/// Read a list of `T` that fills `r` completely (the inside of a length-prefixed list).
pub(crate) fn read_list<T: Codec>(mut r: Reader<'_>) -> Result<Vec<T>, DecodeError> {
    let mut out = Vec::new();
    while !r.is_empty() {
        out.push(T::read(&mut r)?);
    }
    Ok(out)
}

/// `RSAPublicKey` (§4.4): exponent and modulus as unsigned big-endian integers, each
/// with a 2-byte length. Empty integers are rejected: no RSA key has them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RsaPublicKey {
    pub exponent: Vec<u8>,
    pub modulus: Vec<u8>,
}

impl Codec for RsaPublicKey {
    fn encode(&self, out: &mut Vec<u8>) {
        put_vec_u16(out, &self.exponent);
        put_vec_u16(out, &self.modulus);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(RsaPublicKey {
            exponent: r
                .vec_u16(1, u16::MAX as usize, "RSAPublicKey.rsa_exponent")?
                .to_vec(),
            modulus: r
                .vec_u16(1, u16::MAX as usize, "RSAPublicKey.rsa_modulus")?
                .to_vec(),
        })
    }
}

/// `ECPublicKey` (§4.4): an X9.62 point octet string (`04||X||Y` or `02/03||X`) with a
/// 1-byte length. The point is not validated here; that needs the curve.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EcPublicKey(pub Vec<u8>);

impl Codec for EcPublicKey {
    fn encode(&self, out: &mut Vec<u8>) {
        put_vec_u8(out, &self.0);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(EcPublicKey(r.vec_u8(1, 255, "ECPublicKey.point")?.to_vec()))
    }
}

/// `DHPublicKey` (§4.4): the public value Y with a 2-byte length.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DhPublicKey(pub Vec<u8>);

impl Codec for DhPublicKey {
    fn encode(&self, out: &mut Vec<u8>) {
        put_vec_u16(out, &self.0);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(DhPublicKey(
            r.vec_u16(1, u16::MAX as usize, "DHPublicKey.dh_Y")?
                .to_vec(),
        ))
    }
}

/// A cipher suite on the wire: two bytes, bulk cipher then MAC (§5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CipherSuite {
    pub bulk: BulkCipherAlgorithm,
    pub mac: MacAlgorithm,
}

impl CipherSuite {
    pub fn new(bulk: BulkCipherAlgorithm, mac: MacAlgorithm) -> Self {
        CipherSuite { bulk, mac }
    }
}

impl Codec for CipherSuite {
    fn encode(&self, out: &mut Vec<u8>) {
        self.bulk.encode(out);
        self.mac.encode(out);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(CipherSuite {
            bulk: BulkCipherAlgorithm::read(r)?,
            mac: MacAlgorithm::read(r)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latin1_and_a_utf8_name_of_the_same_text_are_one_name() {
        let latin1 = |n: &[u8]| Identifier::Text {
            character_set: Identifier::CHARSET_LATIN1,
            name: n.to_vec(),
        };
        assert!(latin1(b"Entrust.net WAP CA").same_name(&Identifier::text("Entrust.net WAP CA")));
        assert!(Identifier::text("M\u{fc}nchen").same_name(&latin1(b"M\xfcnchen")));
        assert!(!latin1(b"CA one").same_name(&Identifier::text("CA two")));
        let other_charset = Identifier::Text {
            character_set: 1000,
            name: b"CA one".to_vec(),
        };
        assert!(!other_charset.same_name(&latin1(b"CA one")));
        assert!(!Identifier::Null.same_name(&latin1(b"")));
    }

    #[test]
    fn random_splits_time_and_bytes() {
        let r = Random::new(0x3B9A_CA00, [0x11; 12]);
        assert_eq!(r.gmt_unix_time(), 1_000_000_000);
        assert_eq!(&r.0[..4], &[0x3B, 0x9A, 0xCA, 0x00]);
        assert_eq!(Random::read_exact(&r.to_bytes(), "t").unwrap(), r);
        assert_eq!(
            Random::read_exact(&[0; 15], "t").unwrap_err().field(),
            "Random"
        );
    }

    #[test]
    fn session_id_is_at_most_eight_bytes() {
        assert!(SessionId::new(&[1; 8]).is_ok());
        assert!(matches!(
            SessionId::new(&[1; 9]),
            Err(DecodeError::BadLength { length: 9, .. })
        ));
        let s = SessionId::new(&[7, 8]).unwrap();
        assert_eq!(s.to_bytes(), [2, 7, 8]);
        assert!(SessionId::empty().is_empty());
        assert_eq!(SessionId::empty().to_bytes(), [0]);
        let err = SessionId::read_exact(&[9, 0, 0, 0, 0, 0, 0, 0, 0, 0], "t").unwrap_err();
        assert_eq!(err.field(), "SessionID");
        assert!(matches!(err, DecodeError::BadLength { .. }));
    }

    #[test]
    fn identifiers_have_the_handset_layout() {
        let text = Identifier::text("CA");
        assert_eq!(text.to_bytes(), [1, 0, 106, 2, b'C', b'A']);
        assert_eq!(Identifier::Null.to_bytes(), [0]);
        assert_eq!(Identifier::Binary(vec![9]).to_bytes(), [2, 1, 9]);
        assert_eq!(Identifier::X509Name(vec![]).to_bytes(), [255, 0]);
        let hash = Identifier::KeyHashSha([0xAB; 20]);
        let bytes = hash.to_bytes();
        assert_eq!(bytes.len(), 21);
        assert_eq!(bytes[0], 254);
        for id in [text, Identifier::Null, hash, Identifier::Binary(vec![1, 2])] {
            assert_eq!(Identifier::read_exact(&id.to_bytes(), "t").unwrap(), id);
        }
    }

    #[test]
    fn identifier_errors_name_their_field() {
        let err = Identifier::read_exact(&[3], "t").unwrap_err();
        assert_eq!(
            err,
            DecodeError::UnknownValue {
                field: "Identifier.identifier_type",
                value: 3
            }
        );
        let err = Identifier::read_exact(&[254, 0, 0], "t").unwrap_err();
        assert_eq!(err.field(), "Identifier.key_hash");
        let err = Identifier::read_exact(&[1, 0, 106, 3, b'a'], "t").unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Truncated {
                field: "Identifier.name",
                ..
            }
        ));
        let err = Identifier::read_exact(&[0, 0], "Identifier").unwrap_err();
        assert!(matches!(err, DecodeError::TrailingBytes { .. }));
    }

    #[test]
    fn parameter_specifier_index_or_explicit_set() {
        assert_eq!(ParameterSpecifier::Index(7).to_bytes(), [7]);
        let set = ParameterSpecifier::Set(ParameterSet(vec![1, 2, 3]));
        assert_eq!(set.to_bytes(), [255, 0, 3, 1, 2, 3]);
        assert_eq!(
            ParameterSpecifier::read_exact(&set.to_bytes(), "t").unwrap(),
            set
        );
        let err = ParameterSpecifier::read_exact(&[255, 0, 4, 1], "t").unwrap_err();
        assert_eq!(err.field(), "ParameterSet.params");
    }

    #[test]
    #[should_panic(expected = "Index(255)")]
    fn index_255_is_not_encodable() {
        ParameterSpecifier::Index(255).to_bytes();
    }

    fn wtls1_like() -> EcParameters {
        EcParameters {
            field: EcField::CharacteristicTwo {
                m: 113,
                basis: EcBasis::Trinomial { k: 9 },
            },
            a: vec![1],
            b: vec![1],
            seed: vec![],
            base: vec![4, 1, 2],
            order: vec![0xFF, 0xFD],
            cofactor: vec![2],
        }
    }

    #[test]
    fn ec_parameters_layout_and_round_trip() {
        let p = wtls1_like();
        let bytes = p.to_bytes();
        assert_eq!(
            bytes,
            [2, 0, 113, 2, 0, 9, 1, 1, 1, 1, 0, 3, 4, 1, 2, 2, 0xFF, 0xFD, 1, 2]
        );
        let set = ParameterSet::from(&p);
        assert_eq!(set.ec_parameters().unwrap(), p);
        let prime = EcParameters {
            field: EcField::Prime {
                p: vec![0xDB, 0x7C],
            },
            ..wtls1_like()
        };
        assert_eq!(ParameterSet::from(&prime).ec_parameters().unwrap(), prime);
        for basis in [
            EcBasis::Onb,
            EcBasis::Pentanomial {
                k1: 1,
                k2: 2,
                k3: 3,
            },
            EcBasis::Polynomial {
                irreducible: vec![1, 0, 1],
            },
        ] {
            let p = EcParameters {
                field: EcField::CharacteristicTwo { m: 163, basis },
                ..wtls1_like()
            };
            assert_eq!(EcParameters::read_exact(&p.to_bytes(), "t").unwrap(), p);
        }
    }

    #[test]
    fn ec_parameters_reject_unknown_field_and_basis() {
        let err = ParameterSet(vec![0, 1, 5]).ec_parameters().unwrap_err();
        assert_eq!(
            err,
            DecodeError::UnknownValue {
                field: "ECParameters.field",
                value: 0
            }
        );
        let err = ParameterSet(vec![2, 0, 113, 5])
            .ec_parameters()
            .unwrap_err();
        assert_eq!(err.field(), "ECParameters.basis");
        let mut bytes = wtls1_like().to_bytes();
        bytes.push(0);
        assert!(matches!(
            ParameterSet(bytes).ec_parameters(),
            Err(DecodeError::TrailingBytes { .. })
        ));
    }

    #[test]
    fn dh_parameters_layout() {
        let p = DhParameters {
            dh_e: 2,
            p: vec![0xFF, 0xFB],
            g: vec![2],
        };
        assert_eq!(p.to_bytes(), [2, 0, 2, 0xFF, 0xFB, 0, 1, 2]);
        assert_eq!(ParameterSet::from(&p).dh_parameters().unwrap(), p);
        let err = ParameterSet(vec![2, 0, 0]).dh_parameters().unwrap_err();
        assert!(matches!(
            err,
            DecodeError::BadLength {
                field: "DHParameters.dh_p",
                ..
            }
        ));
    }

    #[test]
    fn key_exchange_id_of_the_worked_example() {
        let id = KeyExchangeId {
            suite: KeyExchangeSuite::Rsa,
            parameters: ParameterSpecifier::Index(0),
            identifier: Identifier::Null,
        };
        assert_eq!(id.to_bytes(), [8, 0, 0]);
        assert_eq!(KeyExchangeId::read_exact(&[8, 0, 0], "t").unwrap(), id);
        let err = KeyExchangeId::read_exact(&[19, 0, 0], "t").unwrap_err();
        assert_eq!(err.field(), "KeyExchangeId.key_exchange_suite");
    }

    #[test]
    fn public_keys() {
        let rsa = RsaPublicKey {
            exponent: vec![1, 0, 1],
            modulus: vec![0xC0, 0x01],
        };
        assert_eq!(rsa.to_bytes(), [0, 3, 1, 0, 1, 0, 2, 0xC0, 0x01]);
        assert_eq!(RsaPublicKey::read_exact(&rsa.to_bytes(), "t").unwrap(), rsa);
        let err = RsaPublicKey::read_exact(&[0, 0, 0, 1, 1], "t").unwrap_err();
        assert_eq!(err.field(), "RSAPublicKey.rsa_exponent");
        let err = RsaPublicKey::read_exact(&[0, 1, 3, 0, 9, 1], "t").unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Truncated {
                field: "RSAPublicKey.rsa_modulus",
                ..
            }
        ));

        let ec = EcPublicKey(vec![2, 0xAA]);
        assert_eq!(ec.to_bytes(), [2, 2, 0xAA]);
        assert_eq!(EcPublicKey::read_exact(&[2, 2, 0xAA], "t").unwrap(), ec);
        assert_eq!(
            EcPublicKey::read_exact(&[0], "t").unwrap_err().field(),
            "ECPublicKey.point"
        );

        let dh = DhPublicKey(vec![5]);
        assert_eq!(dh.to_bytes(), [0, 1, 5]);
        assert_eq!(DhPublicKey::read_exact(&[0, 1, 5], "t").unwrap(), dh);
    }

    #[test]
    fn cipher_suite_is_two_bytes() {
        let cs = CipherSuite::new(BulkCipherAlgorithm::DesCbc, MacAlgorithm::Sha80);
        assert_eq!(cs.to_bytes(), [5, 2]);
        assert_eq!(CipherSuite::read_exact(&[5, 2], "t").unwrap(), cs);
        assert_eq!(
            CipherSuite::read_exact(&[12, 2], "t").unwrap_err().field(),
            "CipherSuite.bulk_cipher_algorithm"
        );
        assert_eq!(
            CipherSuite::read_exact(&[5, 8], "t").unwrap_err().field(),
            "CipherSuite.mac_algorithm"
        );
    }
}
