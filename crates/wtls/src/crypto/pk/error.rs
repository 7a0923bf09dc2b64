//! Why a public-key operation failed, as types: a caller (the handshake, a test, the
//! CLI) matches the defect instead of reading a message, and the messages stay the
//! same wherever the error is logged.

use openssl::error::ErrorStack;
use openssl::nid::Nid;
use openssl::pkey::Id;
use std::fmt;

use crate::msgs::enums::{AlertDescription, SignatureAlgorithm};
use crate::suite::Specifier;

/// Why a public-key operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PkError {
    /// The peer's public key is not a valid key of the expected specifier (not on the
    /// curve, point at infinity, small order, wrong modulus size, ...).
    #[error("{spec} public key rejected: {defect}")]
    BadPublicKey { spec: Specifier, defect: KeyDefect },
    /// The peer sent a key of the other family (an RSA key where a curve was named, or
    /// the reverse).
    #[error("{spec} expects {} key material, got {found}", KeyFamily::of(*spec))]
    KeyTypeMismatch { spec: Specifier, found: KeyFamily },
    /// The peer's key is of the right family but of another specifier (another curve).
    #[error("{spec} expects {} key material, got {}", spec.name(), found.name())]
    SpecifierMismatch { spec: Specifier, found: Specifier },
    /// A stored private key does not parse or is not of the specifier it claims.
    #[error("{spec} private key rejected: {defect}")]
    BadPrivateKey { spec: Specifier, defect: KeyDefect },
    /// The local libcrypto does not offer the curve, or cannot set up what its
    /// arithmetic needs.
    #[error("{spec} is unavailable: {operation}: {source}")]
    Unavailable {
        spec: Specifier,
        operation: PkOperation,
        #[source]
        source: LibraryError,
    },
    /// RSA PKCS#1 v1.5 decryption failed (wrong length, bad padding).
    #[error("RSA decryption failed")]
    RsaDecrypt,
    /// A signature that is not a well-formed encoding (non-DER ECDSA, wrong RSA length).
    #[error("malformed {algorithm} signature")]
    MalformedSignature { algorithm: SignatureAlgorithm },
    /// The signature is well formed but does not match.
    #[error("{algorithm} signature does not verify")]
    BadSignature { algorithm: SignatureAlgorithm },
    /// A local key used for an operation of the other family: a programming error.
    #[error("{operation} needs an {expected} key, but the key is {spec}")]
    WrongKeyKind {
        operation: PkOperation,
        expected: KeyFamily,
        spec: Specifier,
    },
    /// libcrypto failed where it should not (allocation, key generation).
    #[error("{operation}: {source}")]
    Library {
        operation: PkOperation,
        #[source]
        source: LibraryError,
    },
}

impl PkError {
    /// The alert the peer should receive. Keys that parse but are not acceptable are
    /// `illegal_parameter`; a signature or ciphertext that fails the check is
    /// `decrypt_error` (the TLS meaning WTLS inherits); a signature that is not even
    /// well-formed is `decode_error`; local failures are `internal_error`.
    pub fn alert(&self) -> AlertDescription {
        match self {
            PkError::BadPublicKey { .. }
            | PkError::KeyTypeMismatch { .. }
            | PkError::SpecifierMismatch { .. } => AlertDescription::IllegalParameter,
            PkError::Unavailable { .. } => AlertDescription::HandshakeFailure,
            PkError::RsaDecrypt | PkError::BadSignature { .. } => AlertDescription::DecryptError,
            PkError::MalformedSignature { .. } => AlertDescription::DecodeError,
            PkError::BadPrivateKey { .. }
            | PkError::WrongKeyKind { .. }
            | PkError::Library { .. } => AlertDescription::InternalError,
        }
    }

    /// What is wrong with the key, for the two variants that reject one.
    pub fn key_defect(&self) -> Option<&KeyDefect> {
        match self {
            PkError::BadPublicKey { defect, .. } | PkError::BadPrivateKey { defect, .. } => {
                Some(defect)
            }
            _ => None,
        }
    }
}

/// The two families of public keys WTLS suites use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFamily {
    Rsa,
    EllipticCurve,
}

impl KeyFamily {
    /// The family of a specifier's keys.
    pub fn of(spec: Specifier) -> KeyFamily {
        if spec.is_rsa() {
            KeyFamily::Rsa
        } else {
            KeyFamily::EllipticCurve
        }
    }
}

impl fmt::Display for KeyFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyFamily::Rsa => "RSA",
            KeyFamily::EllipticCurve => "elliptic-curve",
        })
    }
}

/// What is wrong with a key: a peer's public key, or a stored private key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyDefect {
    /// An EC point encoding that is empty or the one-byte encoding of infinity.
    #[error("empty point or point at infinity")]
    EmptyOrInfinity,
    /// The point does not decode, or does not satisfy the curve equation.
    #[error("not a point on the curve")]
    NotOnCurve,
    /// The point decodes to the point at infinity.
    #[error("point at infinity")]
    PointAtInfinity,
    /// n·Q is not the point at infinity: the point has a small-order component.
    #[error("point is not in the prime-order subgroup")]
    NotInPrimeOrderSubgroup,
    /// Cofactor Diffie-Hellman annihilated the point: it has small order.
    #[error("point of small order")]
    SmallOrder,
    /// The ECDH product is the point at infinity.
    #[error("shared point at infinity")]
    SharedPointAtInfinity,
    /// The curve's cofactor is neither 1 nor a power of two, which the cofactor
    /// Diffie-Hellman shortcut needs.
    #[error("cofactor is not a power of two")]
    CofactorNotPowerOfTwo,
    /// The RSA modulus has another size than the specifier's.
    #[error("RSA modulus has {found} bits, the specifier needs {needed}")]
    ModulusBits { found: u32, needed: u32 },
    /// An even RSA modulus.
    #[error("modulus is even")]
    EvenModulus,
    /// An RSA exponent that is even, 1, or longer than 64 bits.
    #[error("exponent must be odd, > 1 and at most 64 bits")]
    BadExponent,
    /// The start-up self-check found libcrypto misbehaving at this step.
    #[error("self check: {0}")]
    SelfCheck(SelfCheckStep),
    /// The PEM text does not hold a private key libcrypto can read.
    #[error("not a readable PEM private key: {0}")]
    Unreadable(LibraryError),
    /// A private key of the other family (OpenSSL's key type is kept for the log).
    #[error("not an {expected} key ({found:?})")]
    WrongFamily { expected: KeyFamily, found: Id },
    /// A private EC key on another curve than the specifier's.
    #[error("key is on {found}, the specifier needs another curve")]
    WrongCurve { found: Curve },
    /// libcrypto's consistency check of the private key failed.
    #[error("inconsistent {family} key: {source}")]
    Inconsistent {
        family: KeyFamily,
        source: LibraryError,
    },
}

/// The step of the start-up self-check that failed ([`super::self_check_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SelfCheckStep {
    #[error("tampered RSA signature verified")]
    TamperedRsaSignatureVerified,
    #[error("RSA round trip changed the secret")]
    RsaRoundTripChangedSecret,
    #[error("ECDSA verified the wrong message")]
    EcdsaVerifiedWrongMessage,
    #[error("ECDH directions disagree")]
    EcdhDirectionsDisagree,
    #[error("ECDH secret is not field-sized")]
    EcdhSecretNotFieldSized,
}

/// The curve a key is on, as OpenSSL names it (`None`: explicit, unnamed parameters).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Curve(pub Option<Nid>);

impl fmt::Display for Curve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            self.0
                .and_then(|n| n.short_name().ok())
                .unwrap_or("an unnamed curve"),
        )
    }
}

impl fmt::Debug for Curve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Curve({self})")
    }
}

/// The public-key operation that was under way, named in [`PkError::Library`],
/// [`PkError::Unavailable`] and [`PkError::WrongKeyKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PkOperation {
    Ecdh,
    EcdsaSigning,
    EcdsaVerification,
    RsaEncryption,
    RsaDecryption,
    RsaSigning,
    RsaVerification,
    RsaKeyGeneration,
    EcKeyGeneration,
    EphemeralKeyGeneration,
    Pkcs8Encoding,
    EcKeyImport,
    EcPublicKey,
    RsaPublicKey,
    RsaModulus,
    RsaExponent,
    EcPoint,
    EcPointEncoding,
    CurveLookup,
}

impl fmt::Display for PkOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PkOperation as O;
        f.write_str(match self {
            O::Ecdh => "ECDH",
            O::EcdsaSigning => "ECDSA signing",
            O::EcdsaVerification => "ECDSA verification",
            O::RsaEncryption => "RSA encryption",
            O::RsaDecryption => "RSA decryption",
            O::RsaSigning => "RSA signing",
            O::RsaVerification => "RSA verification",
            O::RsaKeyGeneration => "RSA key generation",
            O::EcKeyGeneration => "EC key generation",
            O::EphemeralKeyGeneration => "ephemeral key generation",
            O::Pkcs8Encoding => "PKCS#8 encoding",
            O::EcKeyImport => "EC key import",
            O::EcPublicKey => "EC public key",
            O::RsaPublicKey => "RSA public key",
            O::RsaModulus => "RSA modulus",
            O::RsaExponent => "RSA exponent",
            O::EcPoint => "EC point",
            O::EcPointEncoding => "EC point encoding",
            O::CurveLookup => "curve lookup",
        })
    }
}

/// libcrypto's error stack, compared by its error codes (what a test or a caller can
/// act on; the file and line OpenSSL recorded differ between builds).
#[derive(Debug, Clone, thiserror::Error)]
#[error(transparent)]
pub struct LibraryError(pub ErrorStack);

impl PartialEq for LibraryError {
    fn eq(&self, other: &Self) -> bool {
        let codes = |s: &ErrorStack| s.errors().iter().map(|e| e.code()).collect::<Vec<_>>();
        codes(&self.0) == codes(&other.0)
    }
}

impl Eq for LibraryError {}

/// Wraps libcrypto's error stack as a [`PkError::Library`] of `operation`.
pub(super) fn lib(operation: PkOperation) -> impl FnOnce(ErrorStack) -> PkError {
    move |source| PkError::Library {
        operation,
        source: LibraryError(source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed errors print what the free-text ones printed, so log lines and CLI
    /// output read the same.
    #[test]
    fn messages_keep_their_wording() {
        let cases = [
            (
                PkError::BadPublicKey {
                    spec: Specifier::Nist163k,
                    defect: KeyDefect::NotInPrimeOrderSubgroup,
                },
                "163k public key rejected: point is not in the prime-order subgroup",
            ),
            (
                PkError::BadPublicKey {
                    spec: Specifier::Nist256p,
                    defect: KeyDefect::SelfCheck(SelfCheckStep::EcdhDirectionsDisagree),
                },
                "256p public key rejected: self check: ECDH directions disagree",
            ),
            (
                PkError::KeyTypeMismatch {
                    spec: Specifier::Nist256p,
                    found: KeyFamily::Rsa,
                },
                "256p expects elliptic-curve key material, got RSA",
            ),
            (
                PkError::SpecifierMismatch {
                    spec: Specifier::Nist163k,
                    found: Specifier::Nist163r,
                },
                "163k expects nist163k key material, got nist163r",
            ),
            (
                PkError::WrongKeyKind {
                    operation: PkOperation::RsaEncryption,
                    expected: KeyFamily::Rsa,
                    spec: Specifier::Nist256p,
                },
                "RSA encryption needs an RSA key, but the key is 256p",
            ),
            (
                PkError::BadSignature {
                    algorithm: SignatureAlgorithm::EcdsaSha,
                },
                "ecdsa_sha signature does not verify",
            ),
            (
                PkError::BadPrivateKey {
                    spec: Specifier::Nist163r,
                    defect: KeyDefect::WrongCurve {
                        found: Curve(Some(Nid::SECT163K1)),
                    },
                },
                "163r private key rejected: key is on sect163k1, the specifier needs another curve",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), text);
        }
    }
}
