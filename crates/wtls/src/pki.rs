//! Issuing and validating WTLS certificates (wire-format notes §6).
//!
//! The laboratory needs one CA per parameter specifier and, for each of the 24 CA/leaf
//! combinations of thesis Table 3.3, a gateway and a client certificate. [`Authority`]
//! issues them; [`validate`] and [`TrustStore`] check them the way a handshake does.
//! Nothing here reads a clock: the current time comes in as `now`, Unix seconds.
//!
//! Certificates carry the key's parameter specifier in the numbering the authority
//! issues with ([`ParameterNumbering`]: WAP-261's by default, RSA keys with
//! ParameterIndex 0 as every real WTLS certificate has; the thesis' Table 3.2 numbers
//! as a compatibility profile), and a reader names the numbering it expects. They are
//! signed over
//! SHA-1 of the exact ToBeSignedCertificate bytes: rsa_sha as PKCS#1 type 1 over the
//! bare hash, ecdsa_sha as DER `SEQUENCE{r,s}` (see [`crate::crypto::pk`]).

use crate::crypto::random::sha1;

use crate::codec::Codec;
use crate::crypto::pk::{self, KeyPair, PeerKey, PkError};
use crate::msgs::certificate::{PublicKey, ToBeSignedCertificate, WtlsCertificate};
use crate::msgs::common::Identifier;
#[cfg(test)]
use crate::msgs::common::ParameterSpecifier;
use crate::msgs::enums::{AlertDescription, PublicKeyType, SignatureAlgorithm};
use crate::params::{NamedParameters, ParameterError, ParameterNumbering};
use crate::suite::Specifier;

/// Subject of every gateway (server) certificate the laboratory issues.
pub const SERVER_SUBJECT: &str = "gateway.wtlsperf";
/// Subject of every client certificate the laboratory issues.
pub const CLIENT_SUBJECT: &str = "client.wtlsperf";

/// Why a certificate was not accepted. Each check has its own variant so that a test or
/// a log says which one failed; [`CertError::alert`] gives the alert for the peer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CertError {
    /// A certificate version other than 1.
    #[error("certificate version {0} is not supported (only 1)")]
    UnsupportedVersion(u8),
    /// An unsigned (anonymous) certificate where a signed one is required.
    #[error("certificate of {subject} is unsigned (signature algorithm anonymous)")]
    Unsigned { subject: String },
    /// No trusted CA has the certificate's issuer as its subject.
    #[error("issuer {issuer} is not a trusted CA")]
    UnknownIssuer { issuer: String },
    /// The trusted CA certificate itself is unusable (its key does not parse, its
    /// self-signature fails).
    #[error("trusted CA {ca} is unusable: {defect}")]
    BadAuthority { ca: String, defect: AuthorityDefect },
    /// The certificate names a signature algorithm the CA's key cannot make.
    #[error("certificate signed with {found} but CA {ca} has a key for {expected}")]
    SignatureAlgorithmMismatch {
        ca: String,
        expected: SignatureAlgorithm,
        found: SignatureAlgorithm,
    },
    /// The signature does not verify under the CA's key.
    #[error("signature of {subject} does not verify under CA {ca}: {source}")]
    BadSignature {
        subject: String,
        ca: String,
        #[source]
        source: PkError,
    },
    /// `now` is after valid_not_after.
    #[error("certificate of {subject} expired at {not_after} (now {now})")]
    Expired {
        subject: String,
        not_after: u32,
        now: u32,
    },
    /// `now` is before valid_not_before.
    #[error("certificate of {subject} is not valid before {not_before} (now {now})")]
    NotYetValid {
        subject: String,
        not_before: u32,
        now: u32,
    },
    /// The subject is not the peer the caller expected.
    #[error("certificate subject {found} is not the expected {expected}")]
    SubjectMismatch { expected: String, found: String },
    /// The public key's ParameterIndex names no specifier this implementation knows, or
    /// explicit parameters are used.
    #[error("public key parameters are not supported: {0}")]
    UnsupportedParameters(ParameterDefect),
    /// The public_key_type does not fit the parameters (e.g. rsa with a curve index).
    #[error("public key type {key_type} does not fit parameters {parameters:?}")]
    KeyTypeMismatch {
        key_type: PublicKeyType,
        parameters: NamedParameters,
    },
    /// The public key does not parse as a key of its specifier.
    #[error("public key of {subject} is unusable: {source}")]
    BadPublicKey {
        subject: String,
        #[source]
        source: PkError,
    },
}

impl CertError {
    /// The alert the peer receives.
    ///
    /// * A certificate that is not yet valid is `bad_certificate`: WTLS, like TLS, has
    ///   only `certificate_expired` for the time window, and a certificate from the
    ///   future is not "expired"; it is simply unacceptable now.
    /// * A subject that is not the expected peer is `bad_certificate` too: the
    ///   certificate is well-formed and trusted but unacceptable for this peer, which is
    ///   what TLS stacks (rustls, Go) send for a name mismatch; `certificate_unknown`
    ///   would hide which check failed.
    /// * Keys on parameters we do not know are `unsupported_certificate`.
    pub fn alert(&self) -> AlertDescription {
        match self {
            CertError::UnsupportedVersion(_)
            | CertError::Unsigned { .. }
            | CertError::UnsupportedParameters(_)
            | CertError::KeyTypeMismatch { .. }
            | CertError::BadPublicKey { .. } => AlertDescription::UnsupportedCertificate,
            CertError::UnknownIssuer { .. } | CertError::BadAuthority { .. } => {
                AlertDescription::UnknownCa
            }
            CertError::SignatureAlgorithmMismatch { .. }
            | CertError::BadSignature { .. }
            | CertError::NotYetValid { .. }
            | CertError::SubjectMismatch { .. } => AlertDescription::BadCertificate,
            CertError::Expired { .. } => AlertDescription::CertificateExpired,
        }
    }
}

/// Why a trusted CA certificate is unusable ([`CertError::BadAuthority`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthorityDefect {
    /// The stored private key is not the one the CA certificate certifies.
    #[error("private key does not match the certificate")]
    KeyMismatch,
    /// The CA's subject is not a text Identifier, so it cannot name itself as issuer.
    #[error("CA subject is not a text identifier")]
    SubjectNotText,
    /// A root CA whose issuer is not its subject.
    #[error("not self-issued")]
    NotSelfIssued,
    /// The CA certificate fails a check of its own (its key, its self-signature).
    #[error("{0}")]
    Certificate(Box<CertError>),
}

/// Why a certificate's public key parameters are not supported
/// ([`CertError::UnsupportedParameters`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParameterDefect {
    /// The ParameterSpecifier names nothing under the numbering in use.
    #[error("{0}")]
    Unnamed(ParameterError),
    /// An RSA key (ParameterIndex 0) with a modulus size no specifier has.
    #[error("RSA modulus of {0} bits (1024, 2048 or 3072 supported)")]
    RsaModulusBits(u32),
}

/// A readable form of an identifier for error messages and logs.
pub fn describe(id: &Identifier) -> String {
    match id {
        Identifier::Null => "(null identifier)".to_string(),
        Identifier::Text { name, .. } => format!("{:?}", String::from_utf8_lossy(name)),
        Identifier::Binary(b) => format!("binary:{}", hex(b)),
        Identifier::KeyHashSha(h) => format!("key_hash_sha:{}", hex(h)),
        Identifier::X509Name(b) => format!("x509_name:{}", hex(b)),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The public_key_type a certificate for this key carries when used as `role`.
fn public_key_type_for(spec: Specifier, ca: bool) -> PublicKeyType {
    match (spec.is_rsa(), ca) {
        (true, _) => PublicKeyType::Rsa,
        // A CA's curve key only signs certificates.
        (false, true) => PublicKeyType::Ecdsa,
        // A leaf's curve key is the fixed ECDH key of ECDH_ECDSA.
        (false, false) => PublicKeyType::Ecdh,
    }
}

/// A certification authority of one specifier: its key and self-signed certificate.
#[derive(Debug, Clone)]
pub struct Authority {
    pub spec: Specifier,
    pub name: String,
    pub key: KeyPair,
    pub cert: WtlsCertificate,
    /// The ParameterIndex numbering of every certificate it issues.
    pub numbering: ParameterNumbering,
}

impl Authority {
    /// The name the laboratory gives the CA of a specifier, e.g. "wtlsperf CA 283k".
    pub fn default_name(spec: Specifier) -> String {
        format!("wtlsperf CA {}", spec.short())
    }

    /// A new root CA with a fresh key: public_key_type ecdsa and signature ecdsa_sha
    /// for curves, rsa and rsa_sha for RSA; self-signed.
    pub fn new_root(
        spec: Specifier,
        name: &str,
        not_before: u32,
        not_after: u32,
    ) -> Result<Authority, PkError> {
        Authority::from_key(KeyPair::generate(spec)?, name, not_before, not_after)
    }

    /// [`Authority::new_root`] issuing under `numbering`.
    pub fn new_root_numbered(
        spec: Specifier,
        name: &str,
        not_before: u32,
        not_after: u32,
        numbering: ParameterNumbering,
    ) -> Result<Authority, PkError> {
        Authority::from_key_numbered(
            KeyPair::generate(spec)?,
            name,
            not_before,
            not_after,
            numbering,
        )
    }

    /// A root CA around an existing key (self-signs a new certificate), issuing under
    /// the default (WAP-261) numbering.
    pub fn from_key(
        key: KeyPair,
        name: &str,
        not_before: u32,
        not_after: u32,
    ) -> Result<Authority, PkError> {
        Self::from_key_numbered(key, name, not_before, not_after, Default::default())
    }

    /// [`Authority::from_key`] issuing under `numbering`.
    pub fn from_key_numbered(
        key: KeyPair,
        name: &str,
        not_before: u32,
        not_after: u32,
        numbering: ParameterNumbering,
    ) -> Result<Authority, PkError> {
        let spec = key.spec();
        let id = Identifier::text(name);
        let tbs = ToBeSignedCertificate {
            version: ToBeSignedCertificate::VERSION,
            signature_algorithm: pk::signature_algorithm(spec),
            issuer: id.clone(),
            valid_not_before: not_before,
            valid_not_after: not_after,
            subject: id,
            public_key_type: public_key_type_for(spec, true),
            parameters: spec.parameter_specifier(numbering),
            public_key: key.public_wire()?,
        };
        let cert = sign(&key, tbs)?;
        Ok(Authority {
            spec,
            name: name.to_string(),
            key,
            cert,
            numbering,
        })
    }

    /// A CA whose key and certificate were stored earlier, issued under `numbering`.
    /// Checks that the key is the one the certificate certifies, so a mixed-up store
    /// fails at load time.
    pub fn from_parts(
        key: KeyPair,
        cert: WtlsCertificate,
        numbering: ParameterNumbering,
    ) -> Result<Authority, CertError> {
        let name = describe(&cert.tbs.subject);
        let certified = certificate_key(&cert, numbering)?;
        let own = key.public_key().map_err(|source| CertError::BadPublicKey {
            subject: name.clone(),
            source,
        })?;
        if certified != own {
            return Err(CertError::BadAuthority {
                ca: name,
                defect: AuthorityDefect::KeyMismatch,
            });
        }
        let Identifier::Text { name, .. } = &cert.tbs.subject else {
            return Err(CertError::BadAuthority {
                ca: name,
                defect: AuthorityDefect::SubjectNotText,
            });
        };
        Ok(Authority {
            spec: key.spec(),
            name: String::from_utf8_lossy(name).into_owned(),
            key,
            cert,
            numbering,
        })
    }

    /// The CA's subject identifier, which is the issuer of everything it signs.
    pub fn identifier(&self) -> &Identifier {
        &self.cert.tbs.subject
    }

    /// Issues a leaf certificate: for a curve key, public_key_type ecdh (the ECDH key
    /// used in the key exchange); for RSA, rsa. Parameters name the leaf's specifier.
    pub fn issue(
        &self,
        subject: &str,
        leaf_key: &KeyPair,
        not_before: u32,
        not_after: u32,
    ) -> Result<WtlsCertificate, PkError> {
        self.issue_as(
            subject,
            leaf_key,
            public_key_type_for(leaf_key.spec(), false),
            not_before,
            not_after,
        )
    }

    /// Issues a leaf certificate with an explicit public_key_type (e.g. ecdsa for a
    /// client key that only signs CertificateVerify).
    pub fn issue_as(
        &self,
        subject: &str,
        leaf_key: &KeyPair,
        public_key_type: PublicKeyType,
        not_before: u32,
        not_after: u32,
    ) -> Result<WtlsCertificate, PkError> {
        let tbs = ToBeSignedCertificate {
            version: ToBeSignedCertificate::VERSION,
            signature_algorithm: pk::signature_algorithm(self.spec),
            issuer: self.identifier().clone(),
            valid_not_before: not_before,
            valid_not_after: not_after,
            subject: Identifier::text(subject),
            public_key_type,
            parameters: leaf_key.spec().parameter_specifier(self.numbering),
            public_key: leaf_key.public_wire()?,
        };
        sign(&self.key, tbs)
    }
}

fn sign(key: &KeyPair, tbs: ToBeSignedCertificate) -> Result<WtlsCertificate, PkError> {
    let digest = sha1(&tbs.to_bytes());
    let signature = pk::sign_digest(key, &digest)?;
    Ok(WtlsCertificate { tbs, signature })
}

/// The specifier a certificate's key is on, from its ParameterSpecifier read under
/// `numbering` (an RSA key with index 0 has the size of its modulus), checked against
/// its public_key_type.
pub fn certificate_spec(
    cert: &WtlsCertificate,
    numbering: ParameterNumbering,
) -> Result<Specifier, CertError> {
    let named = Specifier::named_by(&cert.tbs.parameters, numbering)
        .map_err(|e| CertError::UnsupportedParameters(ParameterDefect::Unnamed(e)))?;
    let key_type = cert.tbs.public_key_type;
    let fits = match key_type {
        PublicKeyType::Rsa => named.is_rsa(),
        PublicKeyType::Ecdh | PublicKeyType::Ecdsa => !named.is_rsa(),
    };
    if !fits {
        return Err(CertError::KeyTypeMismatch {
            key_type,
            parameters: named,
        });
    }
    let modulus_bits = match &cert.tbs.public_key {
        PublicKey::Rsa(k) => Some(unsigned_bits(&k.modulus)),
        PublicKey::Ec(_) => None,
    };
    named.resolve(modulus_bits).ok_or_else(|| {
        CertError::UnsupportedParameters(ParameterDefect::RsaModulusBits(modulus_bits.unwrap_or(0)))
    })
}

/// The bit length of an unsigned big-endian integer.
pub(crate) fn unsigned_bits(bytes: &[u8]) -> u32 {
    let trimmed: &[u8] = match bytes.iter().position(|&b| b != 0) {
        Some(i) => &bytes[i..],
        None => &[],
    };
    match trimmed.first() {
        Some(first) => 8 * trimmed.len() as u32 - first.leading_zeros(),
        None => 0,
    }
}

/// Parses the certified public key (on the curve or modulus size its parameters name
/// under `numbering`).
pub fn certificate_key(
    cert: &WtlsCertificate,
    numbering: ParameterNumbering,
) -> Result<PeerKey, CertError> {
    let spec = certificate_spec(cert, numbering)?;
    PeerKey::from_certified_wire(spec, &cert.tbs.public_key).map_err(|source| {
        CertError::BadPublicKey {
            subject: describe(&cert.tbs.subject),
            source,
        }
    })
}

fn check_window(cert: &WtlsCertificate, now: u32) -> Result<(), CertError> {
    let tbs = &cert.tbs;
    if now < tbs.valid_not_before {
        return Err(CertError::NotYetValid {
            subject: describe(&tbs.subject),
            not_before: tbs.valid_not_before,
            now,
        });
    }
    if now > tbs.valid_not_after {
        return Err(CertError::Expired {
            subject: describe(&tbs.subject),
            not_after: tbs.valid_not_after,
            now,
        });
    }
    Ok(())
}

/// Checks `cert`'s signature, made by the holder of `ca_key` (the key of `ca`).
fn check_signature(
    cert: &WtlsCertificate,
    ca: &WtlsCertificate,
    ca_key: &PeerKey,
) -> Result<(), CertError> {
    let ca_name = || describe(&ca.tbs.subject);
    let expected = pk::signature_algorithm(ca_key.spec());
    let found = cert.tbs.signature_algorithm;
    if found == SignatureAlgorithm::Anonymous {
        return Err(CertError::Unsigned {
            subject: describe(&cert.tbs.subject),
        });
    }
    if found != expected {
        return Err(CertError::SignatureAlgorithmMismatch {
            ca: ca_name(),
            expected,
            found,
        });
    }
    let digest = sha1(&cert.tbs_bytes());
    pk::verify_digest(ca_key, &digest, &cert.signature).map_err(|source| CertError::BadSignature {
        subject: describe(&cert.tbs.subject),
        ca: ca_name(),
        source,
    })
}

/// Validates `cert` as issued by `ca` at time `now` and returns its parsed public key,
/// so the caller keeps it instead of parsing again.
///
/// Checks, in order: version 1; the issuer is the CA's subject (`unknown_ca`); the
/// signature algorithm is the CA key's and the signature verifies (`bad_certificate`);
/// the CA and the certificate are both inside their validity windows; the subject is
/// `expected_subject` if one is given; the public key parses on the curve or modulus
/// size its parameters name under `numbering` (`unsupported_certificate`).
pub fn validate(
    cert: &WtlsCertificate,
    ca: &WtlsCertificate,
    expected_subject: Option<&Identifier>,
    now: u32,
    numbering: ParameterNumbering,
) -> Result<PeerKey, CertError> {
    let ca_key = certificate_key(ca, numbering).map_err(|e| unusable_ca(ca, e))?;
    validate_with_key(cert, ca, &ca_key, expected_subject, now, numbering)
}

/// A trusted CA certificate that fails one of its own checks.
fn unusable_ca(ca: &WtlsCertificate, failure: CertError) -> CertError {
    CertError::BadAuthority {
        ca: describe(&ca.tbs.subject),
        defect: AuthorityDefect::Certificate(Box::new(failure)),
    }
}

/// Parsed CA keys, so that validating a peer certificate does not parse its CA's key
/// again on every handshake. Keyed by the CA certificate's signature (unique per
/// certificate), so configurations cloned from one another can share it safely.
#[derive(Debug, Default)]
pub struct CaKeyCache {
    keys: std::sync::RwLock<crate::keyed_map::KeyedMap<Vec<u8>, PeerKey>>,
}

impl CaKeyCache {
    /// The CA certificate's key, parsed on first use.
    pub fn key(
        &self,
        ca: &WtlsCertificate,
        numbering: ParameterNumbering,
    ) -> Result<PeerKey, CertError> {
        if let Some(k) = self
            .keys
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&ca.signature)
        {
            return Ok(k.clone());
        }
        let key = certificate_key(ca, numbering).map_err(|e| unusable_ca(ca, e))?;
        self.keys
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(ca.signature.clone(), key.clone());
        Ok(key)
    }
}

/// [`validate`] with the CA's key taken from (and kept in) `cache`.
pub fn validate_cached(
    cert: &WtlsCertificate,
    ca: &WtlsCertificate,
    cache: &CaKeyCache,
    expected_subject: Option<&Identifier>,
    now: u32,
    numbering: ParameterNumbering,
) -> Result<PeerKey, CertError> {
    let ca_key = cache.key(ca, numbering)?;
    validate_with_key(cert, ca, &ca_key, expected_subject, now, numbering)
}

fn validate_with_key(
    cert: &WtlsCertificate,
    ca: &WtlsCertificate,
    ca_key: &PeerKey,
    expected_subject: Option<&Identifier>,
    now: u32,
    numbering: ParameterNumbering,
) -> Result<PeerKey, CertError> {
    let tbs = &cert.tbs;
    if tbs.version != ToBeSignedCertificate::VERSION {
        return Err(CertError::UnsupportedVersion(tbs.version));
    }
    if !tbs.issuer.same_name(&ca.tbs.subject) {
        return Err(CertError::UnknownIssuer {
            issuer: describe(&tbs.issuer),
        });
    }
    check_signature(cert, ca, ca_key)?;
    check_window(ca, now)?;
    check_window(cert, now)?;
    if let Some(expected) = expected_subject {
        if !tbs.subject.same_name(expected) {
            return Err(CertError::SubjectMismatch {
                expected: describe(expected),
                found: describe(&tbs.subject),
            });
        }
    }
    certificate_key(cert, numbering)
}

#[derive(Debug, Clone)]
struct TrustAnchor {
    cert: WtlsCertificate,
    key: PeerKey,
}

/// The CA certificates a peer trusts, with their keys parsed once.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    anchors: Vec<TrustAnchor>,
    numbering: ParameterNumbering,
}

impl TrustStore {
    /// An empty store reading certificates under the default (WAP-261) numbering.
    pub fn new() -> TrustStore {
        TrustStore::default()
    }

    /// An empty store reading certificates under `numbering`.
    pub fn with_numbering(numbering: ParameterNumbering) -> TrustStore {
        TrustStore {
            anchors: Vec::new(),
            numbering,
        }
    }

    /// Adds a root CA certificate after checking that its key parses and that it is
    /// correctly self-signed (a corrupted CA file fails here, not in a handshake).
    pub fn add(&mut self, ca: WtlsCertificate) -> Result<(), CertError> {
        let key = certificate_key(&ca, self.numbering).map_err(|e| unusable_ca(&ca, e))?;
        if !ca.tbs.issuer.same_name(&ca.tbs.subject) {
            return Err(CertError::BadAuthority {
                ca: describe(&ca.tbs.subject),
                defect: AuthorityDefect::NotSelfIssued,
            });
        }
        check_signature(&ca, &ca, &key).map_err(|e| unusable_ca(&ca, e))?;
        self.anchors.push(TrustAnchor { cert: ca, key });
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.anchors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }

    /// The trusted CA certificates, in the order they were added.
    pub fn certificates(&self) -> impl Iterator<Item = &WtlsCertificate> {
        self.anchors.iter().map(|a| &a.cert)
    }

    /// The subjects of the trusted CAs (what a ClientHello lists as trusted_key_ids).
    pub fn identifiers(&self) -> impl Iterator<Item = &Identifier> {
        self.anchors.iter().map(|a| &a.cert.tbs.subject)
    }

    /// The trusted CA whose subject is `issuer`.
    pub fn find_issuer(&self, issuer: &Identifier) -> Option<&WtlsCertificate> {
        self.anchor(issuer).map(|a| &a.cert)
    }

    fn anchor(&self, issuer: &Identifier) -> Option<&TrustAnchor> {
        self.anchors
            .iter()
            .find(|a| a.cert.tbs.subject.same_name(issuer))
    }

    /// Validates a leaf against the CA that issued it ([`validate`]); `unknown_ca` when
    /// no trusted CA has its issuer's name.
    pub fn validate_chain(
        &self,
        leaf: &WtlsCertificate,
        expected_subject: Option<&Identifier>,
        now: u32,
    ) -> Result<PeerKey, CertError> {
        let anchor = self
            .anchor(&leaf.tbs.issuer)
            .ok_or_else(|| CertError::UnknownIssuer {
                issuer: describe(&leaf.tbs.issuer),
            })?;
        validate_with_key(
            leaf,
            &anchor.cert,
            &anchor.key,
            expected_subject,
            now,
            self.numbering,
        )
    }
}

#[cfg(test)]
mod tests;
