//! WTLS certificates (wire-format notes §6) and the Certificate handshake body (§3.6).
//!
//! A WTLS certificate carries no overall length: the reader walks its fields, which is
//! why the Certificate message has only a list length. The encoding is canonical (every
//! field has exactly one encoding), so re-encoding a parsed certificate reproduces the
//! received bytes; [`WtlsCertificate::tbs_bytes`] therefore yields the exact signed data.

use crate::codec::{
    put_u16_prefixed, put_u32, put_vec_u16, put_vec_u8, Codec, DecodeError, Reader,
};
use crate::msgs::common::{read_list, EcPublicKey, Identifier, ParameterSpecifier, RsaPublicKey};
use crate::msgs::enums::{CertificateFormat, PublicKeyType, SignatureAlgorithm};

/// The subject's public key. RSA keys travel as `RSAPublicKey`; both ECDH and ECDSA keys
/// as an `ECPublicKey` point (§6).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PublicKey {
    Rsa(RsaPublicKey),
    Ec(EcPublicKey),
}

impl PublicKey {
    /// Whether this kind of key may stand under the given `public_key_type`.
    pub fn fits(&self, typ: PublicKeyType) -> bool {
        matches!(
            (self, typ),
            (PublicKey::Rsa(_), PublicKeyType::Rsa)
                | (PublicKey::Ec(_), PublicKeyType::Ecdh | PublicKeyType::Ecdsa)
        )
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            PublicKey::Rsa(k) => k.encode(out),
            PublicKey::Ec(k) => k.encode(out),
        }
    }

    /// The key layout is chosen by `public_key_type`, so a key of the other kind fails
    /// to parse rather than being silently accepted.
    fn read_for(r: &mut Reader<'_>, typ: PublicKeyType) -> Result<Self, DecodeError> {
        Ok(match typ {
            PublicKeyType::Rsa => PublicKey::Rsa(RsaPublicKey::read(r)?),
            PublicKeyType::Ecdh | PublicKeyType::Ecdsa => PublicKey::Ec(EcPublicKey::read(r)?),
        })
    }
}

/// The signed part of a WTLS certificate (§6), field order and widths as S1, S2, S4 and
/// S5 agree.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToBeSignedCertificate {
    /// Always 1; anything else is rejected as `Illegal` when reading.
    pub version: u8,
    pub signature_algorithm: SignatureAlgorithm,
    pub issuer: Identifier,
    /// Unix time, seconds, UTC.
    pub valid_not_before: u32,
    pub valid_not_after: u32,
    pub subject: Identifier,
    pub public_key_type: PublicKeyType,
    /// Index 0 for RSA; a curve index or explicit parameters for EC keys.
    pub parameters: ParameterSpecifier,
    pub public_key: PublicKey,
}

impl ToBeSignedCertificate {
    /// The only certificate version WTLS 1.0 defines.
    pub const VERSION: u8 = 1;
}

impl Codec for ToBeSignedCertificate {
    /// Encodes the fields as given. A `public_key` that does not fit `public_key_type`
    /// is a programming error: it would not read back (checked in debug builds).
    fn encode(&self, out: &mut Vec<u8>) {
        debug_assert!(
            self.public_key.fits(self.public_key_type),
            "public key kind contradicts public_key_type"
        );
        out.push(self.version);
        self.signature_algorithm.encode(out);
        self.issuer.encode(out);
        put_u32(out, self.valid_not_before);
        put_u32(out, self.valid_not_after);
        self.subject.encode(out);
        self.public_key_type.encode(out);
        self.parameters.encode(out);
        self.public_key.encode(out);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let version = r.u8("WTLSCertificate.certificate_version")?;
        if version != Self::VERSION {
            return Err(DecodeError::Illegal {
                field: "WTLSCertificate.certificate_version",
                defect: crate::codec::IllegalValue::UndefinedCertificateVersion,
            });
        }
        let signature_algorithm = SignatureAlgorithm::read(r)?;
        let issuer = Identifier::read(r)?;
        let valid_not_before = r.u32("WTLSCertificate.valid_not_before")?;
        let valid_not_after = r.u32("WTLSCertificate.valid_not_after")?;
        let subject = Identifier::read(r)?;
        let public_key_type = PublicKeyType::read(r)?;
        let parameters = ParameterSpecifier::read(r)?;
        let public_key = PublicKey::read_for(r, public_key_type)?;
        Ok(ToBeSignedCertificate {
            version,
            signature_algorithm,
            issuer,
            valid_not_before,
            valid_not_after,
            subject,
            public_key_type,
            parameters,
            public_key,
        })
    }
}

/// A WTLS certificate: the signed part and the signature over its exact bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WtlsCertificate {
    pub tbs: ToBeSignedCertificate,
    /// Empty for `anonymous`; otherwise the signature bytes (for rsa_sha, a PKCS#1
    /// type-1 block over the bare SHA-1 hash, §6). On the wire: nothing for anonymous,
    /// a 2-byte length plus the bytes otherwise (§4.5).
    pub signature: Vec<u8>,
}

impl WtlsCertificate {
    /// The bytes the issuer signed: ToBeSignedCertificate from certificate_version
    /// through the end of public_key.
    pub fn tbs_bytes(&self) -> Vec<u8> {
        self.tbs.to_bytes()
    }
}

impl Codec for WtlsCertificate {
    /// An anonymous certificate writes no signature; a non-empty `signature` with
    /// `anonymous` is a programming error (checked in debug builds).
    fn encode(&self, out: &mut Vec<u8>) {
        self.tbs.encode(out);
        match self.tbs.signature_algorithm {
            SignatureAlgorithm::Anonymous => debug_assert!(
                self.signature.is_empty(),
                "anonymous certificate with a signature"
            ),
            SignatureAlgorithm::EcdsaSha | SignatureAlgorithm::RsaSha => {
                put_vec_u16(out, &self.signature)
            }
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let tbs = ToBeSignedCertificate::read(r)?;
        let signature = match tbs.signature_algorithm {
            SignatureAlgorithm::Anonymous => Vec::new(),
            SignatureAlgorithm::EcdsaSha | SignatureAlgorithm::RsaSha => r
                .vec_u16(1, u16::MAX as usize, "WTLSCertificate.signature")?
                .to_vec(),
        };
        Ok(WtlsCertificate { tbs, signature })
    }
}

/// One entry of a Certificate message, tagged by its format (§3.6).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CertificateEntry {
    /// Format 1: inline, no length prefix.
    Wtls(WtlsCertificate),
    /// Format 2: DER X.509 certificate, 2-byte length.
    X509(Vec<u8>),
    /// Format 3: ANSI X9.68 compact certificate, 2-byte length.
    X968(Vec<u8>),
    /// Format 4: URL from which the peer fetches the certificate, 1-byte length.
    Url(Vec<u8>),
}

impl CertificateEntry {
    pub fn format(&self) -> CertificateFormat {
        match self {
            CertificateEntry::Wtls(_) => CertificateFormat::Wtls,
            CertificateEntry::X509(_) => CertificateFormat::X509,
            CertificateEntry::X968(_) => CertificateFormat::X968,
            CertificateEntry::Url(_) => CertificateFormat::Url,
        }
    }
}

impl Codec for CertificateEntry {
    fn encode(&self, out: &mut Vec<u8>) {
        self.format().encode(out);
        match self {
            CertificateEntry::Wtls(c) => c.encode(out),
            CertificateEntry::X509(b) | CertificateEntry::X968(b) => put_vec_u16(out, b),
            CertificateEntry::Url(u) => put_vec_u8(out, u),
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match CertificateFormat::read(r)? {
            CertificateFormat::Wtls => CertificateEntry::Wtls(WtlsCertificate::read(r)?),
            CertificateFormat::X509 => CertificateEntry::X509(
                r.vec_u16(1, u16::MAX as usize, "Certificate.x509")?
                    .to_vec(),
            ),
            CertificateFormat::X968 => CertificateEntry::X968(
                r.vec_u16(1, u16::MAX as usize, "Certificate.x968")?
                    .to_vec(),
            ),
            CertificateFormat::Url => {
                CertificateEntry::Url(r.vec_u8(1, 255, "Certificate.url")?.to_vec())
            }
        })
    }
}

/// The Certificate handshake body: a 2-byte list length and the entries, leaf first.
/// An empty chain (`00 00`) is valid; the thesis' server-authenticated flow sends one as
/// the client Certificate.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CertificateChain(pub Vec<CertificateEntry>);

impl CertificateChain {
    /// The leaf (first) certificate, if any.
    pub fn leaf(&self) -> Option<&CertificateEntry> {
        self.0.first()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Codec for CertificateChain {
    fn encode(&self, out: &mut Vec<u8>) {
        put_u16_prefixed(out, |o| self.0.iter().for_each(|e| e.encode(o)));
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(CertificateChain(read_list(
            r.sub_u16("Certificate.certificate_list")?,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rsa_cert() -> WtlsCertificate {
        WtlsCertificate {
            tbs: ToBeSignedCertificate {
                version: 1,
                signature_algorithm: SignatureAlgorithm::RsaSha,
                issuer: Identifier::text("CA"),
                valid_not_before: 0x0102_0304,
                valid_not_after: 0x0506_0708,
                subject: Identifier::text("gw"),
                public_key_type: PublicKeyType::Rsa,
                parameters: ParameterSpecifier::Index(0),
                public_key: PublicKey::Rsa(RsaPublicKey {
                    exponent: vec![3],
                    modulus: vec![0xC5, 0x01],
                }),
            },
            signature: vec![0xAA, 0xBB],
        }
    }

    const RSA_CERT_BYTES: &[u8] = &[
        1, 2, // version, rsa_sha
        1, 0, 106, 2, b'C', b'A', // issuer text
        1, 2, 3, 4, 5, 6, 7, 8, // validity
        1, 0, 106, 2, b'g', b'w', // subject
        2, 0, // rsa, parameter index 0
        0, 1, 3, 0, 2, 0xC5, 0x01, // RSAPublicKey
        0, 2, 0xAA, 0xBB, // signature
    ];

    #[test]
    fn rsa_certificate_hand_made_bytes() {
        let cert = rsa_cert();
        assert_eq!(cert.to_bytes(), RSA_CERT_BYTES);
        assert_eq!(
            WtlsCertificate::read_exact(RSA_CERT_BYTES, "t").unwrap(),
            cert
        );
        assert_eq!(
            cert.tbs_bytes(),
            &RSA_CERT_BYTES[..RSA_CERT_BYTES.len() - 4]
        );
    }

    #[test]
    fn anonymous_ec_certificate_has_no_signature() {
        let cert = WtlsCertificate {
            tbs: ToBeSignedCertificate {
                signature_algorithm: SignatureAlgorithm::Anonymous,
                public_key_type: PublicKeyType::Ecdh,
                parameters: ParameterSpecifier::Index(7),
                public_key: PublicKey::Ec(EcPublicKey(vec![2, 9, 9])),
                ..rsa_cert().tbs
            },
            signature: vec![],
        };
        let bytes = cert.to_bytes();
        assert_eq!(bytes, cert.tbs_bytes());
        assert_eq!(&bytes[bytes.len() - 6..], &[3, 7, 3, 2, 9, 9]);
        assert_eq!(WtlsCertificate::read_exact(&bytes, "t").unwrap(), cert);
    }

    #[test]
    fn version_other_than_one_is_illegal() {
        let mut bytes = RSA_CERT_BYTES.to_vec();
        bytes[0] = 2;
        let err = WtlsCertificate::read_exact(&bytes, "t").unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Illegal {
                field: "WTLSCertificate.certificate_version",
                ..
            }
        ));
    }

    #[test]
    fn key_kind_must_match_public_key_type() {
        // Declare ecdsa but carry an RSAPublicKey: the 1-byte EC length (0) is rejected.
        let mut bytes = RSA_CERT_BYTES.to_vec();
        bytes[22] = 4;
        let err = WtlsCertificate::read_exact(&bytes, "t").unwrap_err();
        assert_eq!(err.field(), "ECPublicKey.point");
        // Unknown public_key_type.
        bytes[22] = 5;
        let err = WtlsCertificate::read_exact(&bytes, "t").unwrap_err();
        assert_eq!(
            err,
            DecodeError::UnknownValue {
                field: "public_key_type",
                value: 5
            }
        );
        assert!(PublicKey::Ec(EcPublicKey(vec![4])).fits(PublicKeyType::Ecdsa));
        assert!(!PublicKey::Ec(EcPublicKey(vec![4])).fits(PublicKeyType::Rsa));
    }

    #[test]
    fn truncated_certificate_names_the_field() {
        let err = WtlsCertificate::read_exact(&RSA_CERT_BYTES[..10], "t").unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Truncated {
                field: "WTLSCertificate.valid_not_before",
                ..
            }
        ));
        let err = WtlsCertificate::read_exact(&RSA_CERT_BYTES[..RSA_CERT_BYTES.len() - 1], "t")
            .unwrap_err();
        assert_eq!(err.field(), "WTLSCertificate.signature");
    }

    #[test]
    fn chain_with_every_format() {
        let chain = CertificateChain(vec![
            CertificateEntry::Wtls(rsa_cert()),
            CertificateEntry::X509(vec![0x30, 0x00]),
            CertificateEntry::X968(vec![1]),
            CertificateEntry::Url(b"http://x".to_vec()),
        ]);
        let bytes = chain.to_bytes();
        let body_len = RSA_CERT_BYTES.len() + 1 + 5 + 4 + 10;
        assert_eq!(&bytes[..2], &(body_len as u16).to_be_bytes());
        assert_eq!(bytes[2], 1);
        assert_eq!(&bytes[3..3 + RSA_CERT_BYTES.len()], RSA_CERT_BYTES);
        assert_eq!(CertificateChain::read_exact(&bytes, "t").unwrap(), chain);
        assert_eq!(chain.leaf().unwrap().format(), CertificateFormat::Wtls);
    }

    #[test]
    fn empty_chain_is_valid() {
        let chain = CertificateChain::read_exact(&[0, 0], "t").unwrap();
        assert!(chain.is_empty());
        assert_eq!(chain.to_bytes(), [0, 0]);
    }

    #[test]
    fn chain_errors() {
        let err = CertificateChain::read_exact(&[0, 3, 5, 0, 0], "t").unwrap_err();
        assert_eq!(
            err,
            DecodeError::UnknownValue {
                field: "Certificate.certificate_format",
                value: 5
            }
        );
        let err = CertificateChain::read_exact(&[0, 4, 2, 0, 1], "t").unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Truncated {
                field: "Certificate.certificate_list",
                ..
            }
        ));
        // The list length covers only part of an entry.
        let err = CertificateChain::read_exact(&[0, 3, 2, 0, 1, 9], "t").unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Truncated {
                field: "Certificate.x509",
                ..
            }
        ));
        let err = CertificateChain::read_exact(&[0, 0, 0], "Certificate").unwrap_err();
        assert!(matches!(err, DecodeError::TrailingBytes { .. }));
    }
}
