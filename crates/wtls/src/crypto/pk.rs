//! Public-key operations of the WTLS key exchange suites, through OpenSSL: ECDH and
//! ECDSA over the thesis' curves, RSA PKCS#1 v1.5 encryption and bare-hash signatures.
//!
//! Keys are parsed into OpenSSL objects once ([`KeyPair`], [`PeerKey`]) and reused; every
//! operation below is a thin call into libcrypto, because the point of the laboratory is
//! to measure what the public-key work costs and our wrapper must not add to it (target:
//! under 5 % over direct OpenSSL calls, checked by `cargo bench -p wtls --bench pk`).
//! Both key types are cheap to clone: they hold reference-counted OpenSSL handles.
//!
//! Decisions where the WTLS sources leave a point open (wire-format notes §6, §7.2, §11):
//!
//! * ECDH pre-master secret: the x-coordinate of the shared point as an octet string of
//!   the field size (IEEE 1363 ECSVDP-DH). That is what OpenSSL's plain ECDH derive
//!   returns, what the notes call the most likely reading, and what TLS does with the
//!   same primitive.
//! * ECDSA signature: the X9.62 DER `SEQUENCE { r INTEGER, s INTEGER }`, over SHA-1 of the
//!   message. ANSI X9.62 defines that encoding, OpenSSL and every X.509 stack use it, and
//!   WTLS certificates come from the same X9 family; the notes found no source fixing
//!   it. Non-canonical DER is rejected.
//! * RSA signature (rsa_sha): PKCS#1 v1.5 block type 1 over the bare 20-byte SHA-1 hash,
//!   with no DigestInfo, because the handset certificate verifier (notes §6, S4) accepts
//!   exactly 20 recovered bytes.
//! * EC public keys are sent as uncompressed X9.62 points (`04 || X || Y`), which every
//!   X9.62 decoder must accept; compressed points are accepted on input.

use std::fmt;
use std::sync::Mutex;

use super::random::sha1;
use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::ecdsa::EcdsaSig;
use openssl::error::ErrorStack;
use openssl::pkey::{PKey, Private, Public};
use openssl::rsa::{Padding, Rsa};
use zeroize::Zeroizing;

use crate::codec::Codec;
use crate::msgs::certificate::PublicKey;
use crate::msgs::common::{EcPublicKey, RsaPublicKey};
use crate::msgs::enums::{AlertDescription, SignatureAlgorithm};
use crate::suite::Specifier;

/// Length of the SHA-1 digest that rsa_sha and ecdsa_sha sign.
pub const SHA1_LEN: usize = 20;

/// Why a public-key operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PkError {
    /// The peer's public key is not a valid key of the expected specifier (not on the
    /// curve, point at infinity, small order, wrong modulus size, ...).
    #[error("{spec} public key rejected: {reason}")]
    BadPublicKey { spec: Specifier, reason: String },
    /// The peer sent a key of the other family (an RSA key where a curve was named, or
    /// the reverse).
    #[error("{spec} expects {expected} key material, got {found}")]
    KeyTypeMismatch {
        spec: Specifier,
        expected: &'static str,
        found: &'static str,
    },
    /// A stored private key does not parse or is not of the specifier it claims.
    #[error("{spec} private key rejected: {reason}")]
    BadPrivateKey { spec: Specifier, reason: String },
    /// The local libcrypto does not offer the curve.
    #[error("{spec} is unavailable: {reason}")]
    Unavailable { spec: Specifier, reason: String },
    /// RSA PKCS#1 v1.5 decryption failed (wrong length, bad padding).
    #[error("RSA decryption failed")]
    RsaDecrypt,
    /// A signature that is not a well-formed encoding (non-DER ECDSA, wrong RSA length).
    #[error("malformed {algorithm} signature")]
    MalformedSignature { algorithm: &'static str },
    /// The signature is well formed but does not match.
    #[error("{algorithm} signature does not verify")]
    BadSignature { algorithm: &'static str },
    /// A local key used for an operation of the other family: a programming error.
    #[error("{operation} needs {expected} key, but the key is {spec}")]
    WrongKeyKind {
        operation: &'static str,
        expected: &'static str,
        spec: Specifier,
    },
    /// libcrypto failed where it should not (allocation, key generation).
    #[error("{operation}: {source}")]
    Library {
        operation: &'static str,
        #[source]
        source: LibraryError,
    },
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

impl PkError {
    /// The alert the peer should receive. Keys that parse but are not acceptable are
    /// `illegal_parameter`; a signature or ciphertext that fails the check is
    /// `decrypt_error` (the TLS meaning WTLS inherits); a signature that is not even
    /// well-formed is `decode_error`; local failures are `internal_error`.
    pub fn alert(&self) -> AlertDescription {
        match self {
            PkError::BadPublicKey { .. } | PkError::KeyTypeMismatch { .. } => {
                AlertDescription::IllegalParameter
            }
            PkError::Unavailable { .. } => AlertDescription::HandshakeFailure,
            PkError::RsaDecrypt | PkError::BadSignature { .. } => AlertDescription::DecryptError,
            PkError::MalformedSignature { .. } => AlertDescription::DecodeError,
            PkError::BadPrivateKey { .. }
            | PkError::WrongKeyKind { .. }
            | PkError::Library { .. } => AlertDescription::InternalError,
        }
    }
}

fn lib(operation: &'static str) -> impl FnOnce(ErrorStack) -> PkError {
    move |source| PkError::Library {
        operation,
        source: LibraryError(source),
    }
}

/// The curve group of an EC specifier, or why it cannot be had.
fn group(spec: Specifier) -> Result<EcGroup, PkError> {
    let nid = spec.curve_nid().ok_or(PkError::WrongKeyKind {
        operation: "curve lookup",
        expected: "an elliptic-curve",
        spec,
    })?;
    EcGroup::from_curve_name(nid).map_err(|e| PkError::Unavailable {
        spec,
        reason: e.to_string(),
    })
}

#[derive(Clone)]
enum PrivateMaterial {
    Ec {
        pkey: PKey<Private>,
        ec: EcKey<Private>,
    },
    Rsa {
        pkey: PKey<Private>,
        rsa: Rsa<Private>,
    },
}

/// An own key pair of one specifier, held as OpenSSL objects. Cloning shares the
/// underlying keys (reference counts), so a gateway can hand one to every worker.
#[derive(Clone)]
pub struct KeyPair {
    spec: Specifier,
    material: PrivateMaterial,
    /// The cofactor h and d / h mod n, for cofactor Diffie-Hellman in compatibility
    /// mode; made on first
    /// use and shared by clones.
    compat: std::sync::Arc<std::sync::OnceLock<Result<CofactorDh, String>>>,
}

impl fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material.
        f.debug_struct("KeyPair")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl KeyPair {
    /// A fresh key pair: an EC key on the specifier's curve or an RSA key with
    /// exponent 65537 of the specifier's size.
    pub fn generate(spec: Specifier) -> Result<KeyPair, PkError> {
        let material = match spec.rsa_bits() {
            Some(bits) => {
                let rsa = Rsa::generate(bits).map_err(lib("RSA key generation"))?;
                let pkey = PKey::from_rsa(rsa.clone()).map_err(lib("RSA key generation"))?;
                PrivateMaterial::Rsa { pkey, rsa }
            }
            None => {
                let group = group(spec)?;
                let ec = EcKey::generate(&group).map_err(lib("EC key generation"))?;
                let pkey = PKey::from_ec_key(ec.clone()).map_err(lib("EC key generation"))?;
                PrivateMaterial::Ec { pkey, ec }
            }
        };
        Ok(KeyPair {
            spec,
            material,
            compat: Default::default(),
        })
    }

    pub fn spec(&self) -> Specifier {
        self.spec
    }

    fn pkey(&self) -> &PKey<Private> {
        match &self.material {
            PrivateMaterial::Ec { pkey, .. } | PrivateMaterial::Rsa { pkey, .. } => pkey,
        }
    }

    /// The private key as PKCS#8 PEM, in memory that is wiped when dropped.
    pub fn to_pem_pkcs8(&self) -> Result<Zeroizing<Vec<u8>>, PkError> {
        self.pkey()
            .private_key_to_pem_pkcs8()
            .map(Zeroizing::new)
            .map_err(lib("PKCS#8 encoding"))
    }

    /// Reads a PEM private key (PKCS#8 or traditional) and checks that it really is a
    /// key of `spec`: the same curve, or RSA with exactly the specifier's modulus size.
    pub fn from_pem(spec: Specifier, pem: &[u8]) -> Result<KeyPair, PkError> {
        let bad = |reason: String| PkError::BadPrivateKey { spec, reason };
        let pkey = PKey::private_key_from_pem(pem).map_err(|e| bad(e.to_string()))?;
        let material = match spec.rsa_bits() {
            Some(bits) => {
                let rsa = pkey
                    .rsa()
                    .map_err(|_| bad(format!("not an RSA key ({:?})", pkey.id())))?;
                if rsa.n().num_bits() as u32 != bits {
                    return Err(bad(format!(
                        "RSA modulus has {} bits, {spec} needs {bits}",
                        rsa.n().num_bits()
                    )));
                }
                rsa.check_key()
                    .map_err(|e| bad(format!("inconsistent RSA key: {e}")))?;
                PrivateMaterial::Rsa { pkey, rsa }
            }
            None => {
                let ec = pkey
                    .ec_key()
                    .map_err(|_| bad(format!("not an EC key ({:?})", pkey.id())))?;
                let curve = ec.group().curve_name();
                if curve != spec.curve_nid() {
                    let found = curve
                        .and_then(|n| n.short_name().ok())
                        .unwrap_or("an unnamed curve");
                    return Err(bad(format!(
                        "key is on {found}, {spec} needs another curve"
                    )));
                }
                ec.check_key()
                    .map_err(|e| bad(format!("inconsistent EC key: {e}")))?;
                // Rebuild the EVP key from the checked EC key so both handles share it.
                let pkey = PKey::from_ec_key(ec.clone()).map_err(lib("EC key import"))?;
                PrivateMaterial::Ec { pkey, ec }
            }
        };
        Ok(KeyPair {
            spec,
            material,
            compat: Default::default(),
        })
    }

    /// The public half as a parsed peer key (what the other side would hold).
    pub fn public_key(&self) -> Result<PeerKey, PkError> {
        let material = match &self.material {
            PrivateMaterial::Ec { ec, .. } => {
                let ec = EcKey::from_public_key(ec.group(), ec.public_key())
                    .map_err(lib("EC public key"))?;
                let pkey = PKey::from_ec_key(ec.clone()).map_err(lib("EC public key"))?;
                PublicMaterial::Ec { pkey, ec }
            }
            PrivateMaterial::Rsa { rsa, .. } => {
                let rsa = Rsa::from_public_components(
                    rsa.n().to_owned().map_err(lib("RSA public key"))?,
                    rsa.e().to_owned().map_err(lib("RSA public key"))?,
                )
                .map_err(lib("RSA public key"))?;
                let pkey = PKey::from_rsa(rsa.clone()).map_err(lib("RSA public key"))?;
                PublicMaterial::Rsa { pkey, rsa }
            }
        };
        Ok(PeerKey {
            spec: self.spec,
            material,
        })
    }

    /// The public key as it travels in a certificate: RSA exponent and modulus as
    /// unsigned big-endian integers, or the EC point uncompressed (module docs).
    pub fn public_wire(&self) -> Result<PublicKey, PkError> {
        match &self.material {
            PrivateMaterial::Ec { ec, .. } => {
                Ok(PublicKey::Ec(ec_point_wire(ec.group(), ec.public_key())?))
            }
            PrivateMaterial::Rsa { rsa, .. } => Ok(PublicKey::Rsa(RsaPublicKey {
                exponent: rsa.e().to_vec(),
                modulus: rsa.n().to_vec(),
            })),
        }
    }

    fn ec(&self, operation: &'static str) -> Result<(&EcKey<Private>, &PKey<Private>), PkError> {
        match &self.material {
            PrivateMaterial::Ec { ec, pkey } => Ok((ec, pkey)),
            PrivateMaterial::Rsa { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: "an elliptic-curve",
                spec: self.spec,
            }),
        }
    }

    fn rsa(&self, operation: &'static str) -> Result<&Rsa<Private>, PkError> {
        match &self.material {
            PrivateMaterial::Rsa { rsa, .. } => Ok(rsa),
            PrivateMaterial::Ec { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: "an RSA",
                spec: self.spec,
            }),
        }
    }

    /// The OpenSSL key, for callers (the benchmark) that compare against direct calls.
    pub fn openssl_pkey(&self) -> &PKey<Private> {
        self.pkey()
    }
}

fn ec_point_wire(
    group: &openssl::ec::EcGroupRef,
    point: &openssl::ec::EcPointRef,
) -> Result<EcPublicKey, PkError> {
    let mut ctx = BigNumContext::new().map_err(lib("EC point encoding"))?;
    point
        .to_bytes(group, PointConversionForm::UNCOMPRESSED, &mut ctx)
        .map(EcPublicKey)
        .map_err(lib("EC point encoding"))
}

#[derive(Clone)]
enum PublicMaterial {
    Ec {
        pkey: PKey<Public>,
        ec: EcKey<Public>,
    },
    Rsa {
        pkey: PKey<Public>,
        rsa: Rsa<Public>,
    },
}

/// A validated public key of the other side, parsed once and reused for every
/// operation (cloning shares the OpenSSL objects).
#[derive(Clone)]
pub struct PeerKey {
    spec: Specifier,
    material: PublicMaterial,
}

impl fmt::Debug for PeerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerKey")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl PartialEq for PeerKey {
    fn eq(&self, other: &PeerKey) -> bool {
        self.spec == other.spec && self.material.pkey().public_eq(other.material.pkey())
    }
}

impl PublicMaterial {
    fn pkey(&self) -> &PKey<Public> {
        match self {
            PublicMaterial::Ec { pkey, .. } | PublicMaterial::Rsa { pkey, .. } => pkey,
        }
    }
}

impl PeerKey {
    /// Parses a certificate's (or key exchange's) public key as a key of `spec`.
    ///
    /// RSA: the modulus must have exactly the specifier's size and the exponent must be
    /// odd and greater than 1. EC: see [`PeerKey::from_ec_point`].
    pub fn from_wire(spec: Specifier, key: &PublicKey) -> Result<PeerKey, PkError> {
        match (key, spec.rsa_bits()) {
            (PublicKey::Rsa(rsa), Some(bits)) => Self::from_rsa_components(spec, bits, rsa),
            (PublicKey::Ec(point), None) => Self::from_ec_point(spec, &point.0),
            (PublicKey::Rsa(_), None) => Err(PkError::KeyTypeMismatch {
                spec,
                expected: "elliptic-curve",
                found: "RSA",
            }),
            (PublicKey::Ec(_), Some(_)) => Err(PkError::KeyTypeMismatch {
                spec,
                expected: "RSA",
                found: "elliptic-curve",
            }),
        }
    }

    fn from_rsa_components(
        spec: Specifier,
        bits: u32,
        key: &RsaPublicKey,
    ) -> Result<PeerKey, PkError> {
        let bad = |reason: String| PkError::BadPublicKey { spec, reason };
        let n = BigNum::from_slice(&key.modulus).map_err(lib("RSA modulus"))?;
        let e = BigNum::from_slice(&key.exponent).map_err(lib("RSA exponent"))?;
        if n.num_bits() as u32 != bits {
            return Err(bad(format!("modulus has {} bits", n.num_bits())));
        }
        if !n.is_bit_set(0) {
            return Err(bad("modulus is even".into()));
        }
        if !e.is_bit_set(0) || e.num_bits() < 2 || e.num_bits() > 64 {
            return Err(bad("exponent must be odd, > 1 and at most 64 bits".into()));
        }
        let rsa = Rsa::from_public_components(n, e).map_err(lib("RSA public key"))?;
        let pkey = PKey::from_rsa(rsa.clone()).map_err(lib("RSA public key"))?;
        Ok(PeerKey {
            spec,
            material: PublicMaterial::Rsa { pkey, rsa },
        })
    }

    /// Parses an X9.62 point (uncompressed or compressed) on the specifier's curve.
    ///
    /// This is the full public-key validation of SP 800-56A §5.6.2.3.3, done once here
    /// so that [`ecdh`] need not repeat it on every derivation: the point must decode,
    /// lie on the curve, not be the point at infinity, and (on curves with a cofactor,
    /// i.e. the binary K and B curves) have the group order, so that a peer cannot
    /// confine the shared secret to a small subgroup.
    pub fn from_ec_point(spec: Specifier, point: &[u8]) -> Result<PeerKey, PkError> {
        Self::parse_ec_point(spec, point, true)
    }

    /// A certified public key: [`PeerKey::from_wire`] without the prime-order subgroup
    /// check of [`PeerKey::from_ec_point`].
    ///
    /// Why this is safe: the small-subgroup attack (Lim and Lee, 1997) needs a point the
    /// attacker chose; a certified key was generated by its owner and signed by a CA we
    /// trust, so it cannot be such a point (a certificate whose signature does not verify
    /// is refused before its key is used). The check costs a full scalar multiplication
    /// on the binary curves, as much as the ECDH itself, so skipping it where it protects
    /// nothing keeps a handshake's cost at its real public-key work. Points arriving
    /// uncertified (ClientKeyExchange, ServerKeyExchange) still get the full check.
    pub fn from_certified_wire(spec: Specifier, key: &PublicKey) -> Result<PeerKey, PkError> {
        match key {
            PublicKey::Ec(point) if spec.rsa_bits().is_none() => {
                Self::parse_ec_point(spec, &point.0, false)
            }
            _ => Self::from_wire(spec, key),
        }
    }

    fn parse_ec_point(
        spec: Specifier,
        point: &[u8],
        subgroup_check: bool,
    ) -> Result<PeerKey, PkError> {
        let bad = |reason: &str| PkError::BadPublicKey {
            spec,
            reason: reason.to_string(),
        };
        let group = group(spec)?;
        if point.first().is_none_or(|&tag| tag == 0) {
            return Err(bad("empty point or point at infinity"));
        }
        let mut ctx = BigNumContext::new().map_err(lib("EC point"))?;
        let q = EcPoint::from_bytes(&group, point, &mut ctx)
            .map_err(|_| bad("not a point on the curve"))?;
        if q.is_infinity(&group) {
            return Err(bad("point at infinity"));
        }
        let mut cofactor = BigNum::new().map_err(lib("EC point"))?;
        group
            .cofactor(&mut cofactor, &mut ctx)
            .map_err(lib("EC point"))?;
        if subgroup_check && cofactor > BigNum::from_u32(1).map_err(lib("EC point"))? {
            let mut order = BigNum::new().map_err(lib("EC point"))?;
            group.order(&mut order, &mut ctx).map_err(lib("EC point"))?;
            let mut check = EcPoint::new(&group).map_err(lib("EC point"))?;
            check
                .mul2(&group, &q, &order, &mut ctx)
                .map_err(lib("EC point"))?;
            if !check.is_infinity(&group) {
                return Err(bad("point is not in the prime-order subgroup"));
            }
        }
        let ec = EcKey::from_public_key(&group, &q).map_err(lib("EC public key"))?;
        let pkey = PKey::from_ec_key(ec.clone()).map_err(lib("EC public key"))?;
        Ok(PeerKey {
            spec,
            material: PublicMaterial::Ec { pkey, ec },
        })
    }

    pub fn spec(&self) -> Specifier {
        self.spec
    }

    /// The key in its wire form (uncompressed point for EC).
    pub fn to_wire(&self) -> Result<PublicKey, PkError> {
        match &self.material {
            PublicMaterial::Ec { ec, .. } => {
                Ok(PublicKey::Ec(ec_point_wire(ec.group(), ec.public_key())?))
            }
            PublicMaterial::Rsa { rsa, .. } => Ok(PublicKey::Rsa(RsaPublicKey {
                exponent: rsa.e().to_vec(),
                modulus: rsa.n().to_vec(),
            })),
        }
    }

    /// The OpenSSL key, for the benchmark's direct calls.
    pub fn openssl_pkey(&self) -> &PKey<Public> {
        self.material.pkey()
    }

    fn ec(&self, operation: &'static str) -> Result<(&EcKey<Public>, &PKey<Public>), PkError> {
        match &self.material {
            PublicMaterial::Ec { ec, pkey } => Ok((ec, pkey)),
            PublicMaterial::Rsa { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: "an elliptic-curve",
                spec: self.spec,
            }),
        }
    }

    fn rsa(&self, operation: &'static str) -> Result<&Rsa<Public>, PkError> {
        match &self.material {
            PublicMaterial::Rsa { rsa, .. } => Ok(rsa),
            PublicMaterial::Ec { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: "an RSA",
                spec: self.spec,
            }),
        }
    }
}

/// ECDH with a point nobody vouches for (a ClientKeyExchange arriving at a server
/// whose key is static): the same secret as [`ecdh`], without the cost of the
/// prime-order subgroup check.
///
/// On curves with cofactor h > 1 (the binary K and B curves) a peer could send a point
/// with a small-order component and learn the static key modulo h (Lim and Lee, 1997).
/// Instead of the full check n·Q = O (a scalar multiplication as dear as the ECDH
/// itself), this is IEEE 1363 ECSVDP-DHC in compatibility mode: the secret is
/// x((d·h⁻¹ mod n)·(h·Q)), so that honest points give exactly x(d·Q) and a small-order
/// component is annihilated rather than leaked; a point of small order gives the point
/// at infinity and is refused. Both multiplications are one: the scalar
/// k = h·(d·h⁻¹ mod n), kept unreduced, is worked out once per key, and OpenSSL's
/// ladder for a single point works modulo the group's cardinality h·n, not n, so
/// k·Q = (d·h⁻¹ mod n)·(h·Q) for every point on the curve. (Doubling Q first costs a
/// field inversion per doubling on the binary curves, whose points OpenSSL adds in
/// affine coordinates: several microseconds a handshake.)
pub fn ecdh_untrusted(own: &KeyPair, point: &[u8]) -> Result<Zeroizing<Vec<u8>>, PkError> {
    let (own_ec, _) = own.ec("ECDH")?;
    let group = own_ec.group();
    let mut ctx = BigNumContext::new().map_err(lib("ECDH"))?;
    let bad = |reason: &str| PkError::BadPublicKey {
        spec: own.spec,
        reason: reason.to_string(),
    };
    if point.first().is_none_or(|&tag| tag == 0) {
        return Err(bad("empty point or point at infinity"));
    }
    // Decoding checks that the point lies on the curve.
    let q =
        EcPoint::from_bytes(group, point, &mut ctx).map_err(|_| bad("not a point on the curve"))?;
    let cofactor_dh = own
        .compat
        .get_or_init(|| CofactorDh::new(own_ec).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|reason| PkError::Unavailable {
            spec: own.spec,
            reason: reason.clone(),
        })?;
    let h = cofactor_dh.h;
    let Some(compat) = &cofactor_dh.compat else {
        if h <= 1 {
            return shared_x(group, &q, own_ec.private_key(), &mut ctx, own.spec);
        }
        return Err(bad("cofactor is not a power of two"));
    };
    shared_x(group, &q, compat.private_key(), &mut ctx, own.spec).map_err(|e| match e {
        PkError::BadPublicKey { .. } => bad("point of small order"),
        other => other,
    })
}

/// What cofactor Diffie-Hellman needs of an own key, worked out once per key: the
/// curve's cofactor h and, for h a power of two above 1, a key holding the scalar
/// k = h·(d·h⁻¹ mod n) (see [`ecdh_untrusted`]; an `EcKey` so that it is wiped on drop).
struct CofactorDh {
    h: u32,
    compat: Option<EcKey<Private>>,
}

impl CofactorDh {
    fn new(own: &EcKey<Private>) -> Result<CofactorDh, PkError> {
        let mut ctx = BigNumContext::new().map_err(lib("ECDH"))?;
        let mut cofactor = BigNum::new().map_err(lib("ECDH"))?;
        own.group()
            .cofactor(&mut cofactor, &mut ctx)
            .map_err(lib("ECDH"))?;
        let h = cofactor
            .to_dec_str()
            .map_err(lib("ECDH"))?
            .parse::<u32>()
            .unwrap_or(0);
        let compat = if h > 1 && h.is_power_of_two() {
            Some(compat_key(own, &cofactor)?)
        } else {
            None
        };
        Ok(CofactorDh { h, compat })
    }
}

/// x(scalar · point) as a field-size octet string: exactly what OpenSSL's ECDH derive
/// computes (`ecdh_simple_compute_key` is this multiplication), without building key
/// objects for every handshake. The scalar comes from an `EcKey`, which marks it for
/// constant-time arithmetic.
fn shared_x(
    group: &openssl::ec::EcGroupRef,
    point: &openssl::ec::EcPointRef,
    scalar: &openssl::bn::BigNumRef,
    ctx: &mut BigNumContext,
    spec: Specifier,
) -> Result<Zeroizing<Vec<u8>>, PkError> {
    let mut product = EcPoint::new(group).map_err(lib("ECDH"))?;
    product
        .mul2(group, point, scalar, ctx)
        .map_err(lib("ECDH"))?;
    if product.is_infinity(group) {
        return Err(PkError::BadPublicKey {
            spec,
            reason: "shared point at infinity".into(),
        });
    }
    let mut x = BigNum::new().map_err(lib("ECDH"))?;
    let mut y = BigNum::new().map_err(lib("ECDH"))?;
    product
        .affine_coordinates(group, &mut x, &mut y, ctx)
        .map_err(lib("ECDH"))?;
    let len = group.degree().div_ceil(8) as i32;
    Ok(Zeroizing::new(x.to_vec_padded(len).map_err(lib("ECDH"))?))
}

/// The key of ECSVDP-DHC compatibility mode as one scalar, k = h·(d·h⁻¹ mod n), not
/// reduced modulo n. Its public half is d·G (k ≡ d mod n).
fn compat_key(own: &EcKey<Private>, cofactor: &BigNum) -> Result<EcKey<Private>, PkError> {
    let group = own.group();
    let mut ctx = BigNumContext::new().map_err(lib("ECDH"))?;
    let mut order = BigNum::new().map_err(lib("ECDH"))?;
    group.order(&mut order, &mut ctx).map_err(lib("ECDH"))?;
    let mut h_inv = BigNum::new().map_err(lib("ECDH"))?;
    h_inv
        .mod_inverse(cofactor, &order, &mut ctx)
        .map_err(lib("ECDH"))?;
    let mut d_over_h = BigNum::new().map_err(lib("ECDH"))?;
    d_over_h
        .mod_mul(own.private_key(), &h_inv, &order, &mut ctx)
        .map_err(lib("ECDH"))?;
    let mut k = BigNum::new().map_err(lib("ECDH"))?;
    k.checked_mul(&d_over_h, cofactor, &mut ctx)
        .map_err(lib("ECDH"))?;
    d_over_h.clear();
    EcKey::from_private_components(group, &k, own.public_key()).map_err(lib("ECDH"))
}

/// ECDH: the pre-master secret of ECDH_anon and ECDH_ECDSA, the x-coordinate of
/// own·peer as a field-size octet string (module docs). The peer key was fully
/// validated when it was parsed, so OpenSSL's per-call revalidation is switched off.
pub fn ecdh(own: &KeyPair, peer: &PeerKey) -> Result<Zeroizing<Vec<u8>>, PkError> {
    let (own_ec, _) = own.ec("ECDH")?;
    let (peer_ec, _) = peer.ec("ECDH")?;
    if own.spec != peer.spec {
        return Err(PkError::KeyTypeMismatch {
            spec: own.spec,
            expected: own.spec.name(),
            found: peer.spec.name(),
        });
    }
    let mut ctx = BigNumContext::new().map_err(lib("ECDH"))?;
    shared_x(
        own_ec.group(),
        peer_ec.public_key(),
        own_ec.private_key(),
        &mut ctx,
        own.spec,
    )
}

/// ECDSA over SHA-1(message), DER-encoded (module docs).
pub fn ecdsa_sign(own: &KeyPair, message: &[u8]) -> Result<Vec<u8>, PkError> {
    ecdsa_sign_digest(own, &sha1(message))
}

/// ECDSA over a precomputed SHA-1 digest (CertificateVerify signs a transcript hash).
pub fn ecdsa_sign_digest(own: &KeyPair, digest: &[u8; SHA1_LEN]) -> Result<Vec<u8>, PkError> {
    let (ec, _) = own.ec("ECDSA signing")?;
    EcdsaSig::sign(digest, ec)
        .and_then(|sig| sig.to_der())
        .map_err(lib("ECDSA signing"))
}

/// Verifies an ECDSA signature over SHA-1(message).
pub fn ecdsa_verify(peer: &PeerKey, message: &[u8], signature: &[u8]) -> Result<(), PkError> {
    ecdsa_verify_digest(peer, &sha1(message), signature)
}

/// Verifies an ECDSA signature over a precomputed SHA-1 digest. The signature must be
/// canonical DER: re-encoding it must give back the same bytes.
pub fn ecdsa_verify_digest(
    peer: &PeerKey,
    digest: &[u8; SHA1_LEN],
    signature: &[u8],
) -> Result<(), PkError> {
    const ALG: &str = "ecdsa_sha";
    let (ec, _) = peer.ec("ECDSA verification")?;
    let sig = EcdsaSig::from_der(signature)
        .map_err(|_| PkError::MalformedSignature { algorithm: ALG })?;
    if sig.to_der().ok().as_deref() != Some(signature) {
        return Err(PkError::MalformedSignature { algorithm: ALG });
    }
    match sig.verify(digest, ec) {
        Ok(true) => Ok(()),
        Ok(false) | Err(_) => Err(PkError::BadSignature { algorithm: ALG }),
    }
}

/// RSA PKCS#1 v1.5 block type 2 encryption (the RSA ClientKeyExchange).
pub fn rsa_encrypt(peer: &PeerKey, secret: &[u8]) -> Result<Vec<u8>, PkError> {
    let rsa = peer.rsa("RSA encryption")?;
    let mut out = vec![0u8; rsa.size() as usize];
    let n = rsa
        .public_encrypt(secret, &mut out, Padding::PKCS1)
        .map_err(lib("RSA encryption"))?;
    out.truncate(n);
    Ok(out)
}

/// RSA PKCS#1 v1.5 decryption. Every failure is the same [`PkError::RsaDecrypt`], so the
/// caller learns nothing about where the padding check failed; the handshake layer
/// should still continue with a random pre-master on failure (Bleichenbacher).
pub fn rsa_decrypt(own: &KeyPair, ciphertext: &[u8]) -> Result<Zeroizing<Vec<u8>>, PkError> {
    let rsa = own.rsa("RSA decryption")?;
    if ciphertext.len() != rsa.size() as usize {
        return Err(PkError::RsaDecrypt);
    }
    let mut out = Zeroizing::new(vec![0u8; rsa.size() as usize]);
    let n = rsa
        .private_decrypt(ciphertext, &mut out, Padding::PKCS1)
        .map_err(|_| PkError::RsaDecrypt)?;
    out.truncate(n);
    Ok(out)
}

/// rsa_sha signature: PKCS#1 v1.5 block type 1 over the bare digest, no DigestInfo
/// (module docs), i.e. OpenSSL's raw private "encrypt" with PKCS#1 padding. The digest
/// is SHA-1's 20 bytes, or MD5's 16 in a CertificateVerify under an MD5 MAC (it hashes
/// by MAC family, as the PRF and Finished do).
pub fn rsa_sign_digest(own: &KeyPair, digest: &[u8]) -> Result<Vec<u8>, PkError> {
    let rsa = own.rsa("RSA signing")?;
    let mut out = vec![0u8; rsa.size() as usize];
    let n = rsa
        .private_encrypt(digest, &mut out, Padding::PKCS1)
        .map_err(lib("RSA signing"))?;
    out.truncate(n);
    Ok(out)
}

/// Verifies an rsa_sha signature: the signature must be exactly the modulus length and
/// recover exactly the digest's bytes (20 for SHA-1, 16 for MD5; compared in constant
/// time).
pub fn rsa_verify_digest(peer: &PeerKey, digest: &[u8], signature: &[u8]) -> Result<(), PkError> {
    const ALG: &str = "rsa_sha";
    let rsa = peer.rsa("RSA verification")?;
    if signature.len() != rsa.size() as usize {
        return Err(PkError::MalformedSignature { algorithm: ALG });
    }
    let mut recovered = vec![0u8; rsa.size() as usize];
    let n = rsa
        .public_decrypt(signature, &mut recovered, Padding::PKCS1)
        .map_err(|_| PkError::BadSignature { algorithm: ALG })?;
    if n == digest.len() && openssl::memcmp::eq(&recovered[..n], digest) {
        Ok(())
    } else {
        Err(PkError::BadSignature { algorithm: ALG })
    }
}

/// The WTLS signature algorithm a key of this specifier produces: ecdsa_sha for curves,
/// rsa_sha for RSA.
pub fn signature_algorithm(spec: Specifier) -> SignatureAlgorithm {
    if spec.is_rsa() {
        SignatureAlgorithm::RsaSha
    } else {
        SignatureAlgorithm::EcdsaSha
    }
}

/// Signs a SHA-1 digest with whichever algorithm the key supports
/// ([`signature_algorithm`]): certificate signatures and CertificateVerify.
pub fn sign_digest(own: &KeyPair, digest: &[u8; SHA1_LEN]) -> Result<Vec<u8>, PkError> {
    if own.spec.is_rsa() {
        rsa_sign_digest(own, digest)
    } else {
        ecdsa_sign_digest(own, digest)
    }
}

/// Verifies a signature made by [`sign_digest`] with the peer's key.
pub fn verify_digest(
    peer: &PeerKey,
    digest: &[u8; SHA1_LEN],
    signature: &[u8],
) -> Result<(), PkError> {
    if peer.spec.is_rsa() {
        rsa_verify_digest(peer, digest, signature)
    } else {
        ecdsa_verify_digest(peer, digest, signature)
    }
}

/// SHA-1 over the wire encoding of a public key (RSA: 2-byte-length exponent and
/// modulus; EC: 1-byte-length point), the value of a `key_hash_sha` Identifier.
/// Hashing the encoding rather than some DER form means both sides need nothing but
/// the bytes they already exchange.
pub fn key_hash_sha(key: &PublicKey) -> [u8; SHA1_LEN] {
    sha1(&public_key_bytes(key))
}

/// The wire encoding of a public key as it appears in a certificate.
pub fn public_key_bytes(key: &PublicKey) -> Vec<u8> {
    match key {
        PublicKey::Rsa(k) => k.to_bytes(),
        PublicKey::Ec(k) => k.to_bytes(),
    }
}

/// An X9.62 point in compressed form (`02`/`03` ‖ x), for the key exchange suites
/// 11-14 that carry compressed points (the `_uncomp` suites 15-18 carry them whole).
pub fn compress_point(spec: Specifier, point: &[u8]) -> Result<Vec<u8>, PkError> {
    let group = group(spec)?;
    let mut ctx = BigNumContext::new().map_err(lib("EC point"))?;
    let q = EcPoint::from_bytes(&group, point, &mut ctx).map_err(|_| PkError::BadPublicKey {
        spec,
        reason: "not a point on the curve".into(),
    })?;
    q.to_bytes(&group, PointConversionForm::COMPRESSED, &mut ctx)
        .map_err(lib("EC point"))
}

/// A fresh EC key pair for one handshake (anonymous ECDH or a client's ephemeral key).
pub fn ephemeral_ec(spec: Specifier) -> Result<KeyPair, PkError> {
    if spec.is_rsa() {
        return Err(PkError::WrongKeyKind {
            operation: "ephemeral key generation",
            expected: "an elliptic-curve",
            spec,
        });
    }
    KeyPair::generate(spec)
}

/// Pre-generated ephemeral EC key pairs, so that a load generator's simulated clients do
/// not spend their time on key generation while the gateway is being measured.
/// Thread-safe; generation happens outside the lock.
#[derive(Debug)]
pub struct EphemeralPool {
    spec: Specifier,
    target: usize,
    keys: Mutex<Vec<KeyPair>>,
}

impl EphemeralPool {
    /// A pool filled with `target` key pairs.
    pub fn new(spec: Specifier, target: usize) -> Result<EphemeralPool, PkError> {
        let pool = EphemeralPool {
            spec,
            target,
            keys: Mutex::new(Vec::with_capacity(target)),
        };
        pool.refill()?;
        Ok(pool)
    }

    pub fn spec(&self) -> Specifier {
        self.spec
    }

    /// Key pairs currently waiting.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<KeyPair>> {
        // A panic elsewhere while holding the lock leaves a valid Vec; keep going.
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One key pair, never used before; generated on the spot if the pool ran dry.
    pub fn take(&self) -> Result<KeyPair, PkError> {
        let popped = self.lock().pop();
        match popped {
            Some(key) => Ok(key),
            None => ephemeral_ec(self.spec),
        }
    }

    /// Tops the pool up to its target size; returns how many pairs were generated.
    pub fn refill(&self) -> Result<usize, PkError> {
        let missing = self.target.saturating_sub(self.len());
        let mut fresh = Vec::with_capacity(missing);
        for _ in 0..missing {
            fresh.push(ephemeral_ec(self.spec)?);
        }
        self.lock().extend(fresh);
        Ok(missing)
    }
}

/// What [`self_check`] exercised, with the sizes it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfCheck {
    pub spec: Specifier,
    /// Length of the wire encoding of the public key.
    pub public_key_len: usize,
    /// Length of one signature (ECDSA DER or RSA modulus length).
    pub signature_len: usize,
    /// ECDH shared-secret length (EC) or RSA ciphertext length.
    pub key_exchange_len: usize,
}

/// Exercises every operation of a specifier with two fresh key pairs: see
/// [`self_check_with`].
pub fn self_check(spec: Specifier) -> Result<SelfCheck, PkError> {
    let a = KeyPair::generate(spec)?;
    let b = if spec.is_rsa() {
        a.clone()
    } else {
        KeyPair::generate(spec)?
    };
    self_check_with(&a, &b)
}

fn check_failed(spec: Specifier, what: &str) -> PkError {
    PkError::BadPublicKey {
        spec,
        reason: format!("self check: {what}"),
    }
}

/// Exercises every operation of the specifier of `a` (and `b`, the second party for
/// ECDH): sign and verify, a tampered signature must fail, ECDH agrees in both
/// directions and has the field size, RSA encryption round-trips and the bare-hash
/// signature verifies. Used at start-up to prove the local libcrypto does what the
/// protocol needs, and by the tests for all 12 specifiers.
pub fn self_check_with(a: &KeyPair, b: &KeyPair) -> Result<SelfCheck, PkError> {
    let spec = a.spec();
    let message = b"wtlsperf self check";
    let pub_a = PeerKey::from_wire(spec, &a.public_wire()?)?;
    let public_key_len = public_key_bytes(&a.public_wire()?).len();
    let (signature_len, key_exchange_len) = if spec.is_rsa() {
        let digest = sha1(message);
        let sig = rsa_sign_digest(a, &digest)?;
        rsa_verify_digest(&pub_a, &digest, &sig)?;
        let mut tampered = sig.clone();
        tampered[sig.len() / 2] ^= 0x01;
        if rsa_verify_digest(&pub_a, &digest, &tampered).is_ok() {
            return Err(check_failed(spec, "tampered RSA signature verified"));
        }
        let secret = [0x5au8; 20];
        let ct = rsa_encrypt(&pub_a, &secret)?;
        if rsa_decrypt(a, &ct)?.as_slice() != secret {
            return Err(check_failed(spec, "RSA round trip changed the secret"));
        }
        (sig.len(), ct.len())
    } else {
        let sig = ecdsa_sign(a, message)?;
        ecdsa_verify(&pub_a, message, &sig)?;
        if ecdsa_verify(&pub_a, b"another message", &sig).is_ok() {
            return Err(check_failed(spec, "ECDSA verified the wrong message"));
        }
        let pub_b = PeerKey::from_wire(spec, &b.public_wire()?)?;
        let ab = ecdh(a, &pub_b)?;
        let ba = ecdh(b, &pub_a)?;
        if ab != ba {
            return Err(check_failed(spec, "ECDH directions disagree"));
        }
        if Some(ab.len()) != spec.field_bytes() {
            return Err(check_failed(spec, "ECDH secret is not field-sized"));
        }
        (sig.len(), ab.len())
    };
    Ok(SelfCheck {
        spec,
        public_key_len,
        signature_len,
        key_exchange_len,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use openssl::hash::MessageDigest;
    use openssl::sign::Signer;
    use std::sync::OnceLock;

    /// Two key pairs per specifier, generated once per test binary (RSA-3072 key
    /// generation takes seconds). Shared with the pki tests.
    pub(crate) fn keys(spec: Specifier) -> &'static (KeyPair, KeyPair) {
        static CACHE: OnceLock<Vec<(KeyPair, KeyPair)>> = OnceLock::new();
        let all = CACHE.get_or_init(|| {
            Specifier::ALL
                .iter()
                .map(|&s| (KeyPair::generate(s).unwrap(), KeyPair::generate(s).unwrap()))
                .collect()
        });
        let i = Specifier::ALL.iter().position(|&s| s == spec).unwrap();
        &all[i]
    }

    fn peer(key: &KeyPair) -> PeerKey {
        PeerKey::from_wire(key.spec(), &key.public_wire().unwrap()).unwrap()
    }

    #[test]
    fn self_check_passes_for_all_twelve_specifiers() {
        for spec in Specifier::ALL {
            let (a, b) = keys(spec);
            let check = self_check_with(a, b).unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(check.spec, spec);
            match spec.rsa_bits() {
                Some(bits) => {
                    assert_eq!(check.signature_len as u32 * 8, bits);
                    assert_eq!(check.key_exchange_len as u32 * 8, bits);
                }
                None => {
                    let fb = spec.field_bytes().unwrap();
                    // 1-byte length + 04 || X || Y.
                    assert_eq!(check.public_key_len, 2 + 2 * fb);
                    assert_eq!(check.key_exchange_len, fb);
                }
            }
        }
        // The generating variant works too (cheap specifier only).
        assert!(self_check(Specifier::Nist256p).is_ok());
    }

    #[test]
    fn ecdh_secret_is_the_x_coordinate_of_the_shared_point() {
        for spec in [
            Specifier::Wtls7_160,
            Specifier::Nist163r,
            Specifier::Nist283k,
        ] {
            let (a, b) = keys(spec);
            let secret = ecdh(a, &peer(b)).unwrap();
            // Recompute d_a * Q_b by hand and take X, left-padded to the field size.
            let (ec_a, _) = a.ec("t").unwrap();
            let (ec_b, _) = b.ec("t").unwrap();
            let group = ec_a.group();
            let mut ctx = BigNumContext::new().unwrap();
            let mut shared = EcPoint::new(group).unwrap();
            shared
                .mul2(group, ec_b.public_key(), ec_a.private_key(), &mut ctx)
                .unwrap();
            let mut x = BigNum::new().unwrap();
            let mut y = BigNum::new().unwrap();
            shared
                .affine_coordinates(group, &mut x, &mut y, &mut ctx)
                .unwrap();
            let expected = x.to_vec_padded(spec.field_bytes().unwrap() as i32).unwrap();
            assert_eq!(secret.as_slice(), expected.as_slice(), "{spec}");
        }
    }

    #[test]
    fn ecdh_refuses_mixed_curves_and_rsa_keys() {
        let (a, _) = keys(Specifier::Nist224p);
        let (b, _) = keys(Specifier::Nist256p);
        let err = ecdh(a, &peer(b)).unwrap_err();
        assert_eq!(err.alert(), AlertDescription::IllegalParameter);
        let (r, _) = keys(Specifier::Rsa1024);
        assert!(matches!(
            ecdh(r, &peer(b)),
            Err(PkError::WrongKeyKind { .. })
        ));
    }

    #[test]
    fn ecdsa_signatures_are_der_and_digest_variants_agree() {
        let (a, _) = keys(Specifier::Nist233k);
        let pa = peer(a);
        let msg = b"ToBeSignedCertificate bytes";
        let sig = ecdsa_sign(a, msg).unwrap();
        assert_eq!(sig[0], 0x30, "DER SEQUENCE");
        assert_eq!(sig[1] as usize, sig.len() - 2);
        ecdsa_verify_digest(&pa, &sha1(msg), &sig).unwrap();
        let sig2 = ecdsa_sign_digest(a, &sha1(msg)).unwrap();
        ecdsa_verify(&pa, msg, &sig2).unwrap();

        let err = ecdsa_verify(&pa, b"other", &sig).unwrap_err();
        assert_eq!(err.alert(), AlertDescription::DecryptError);
        // Trailing garbage and an over-long length form are not canonical DER.
        let mut trailing = sig.clone();
        trailing.push(0);
        let err = ecdsa_verify(&pa, msg, &trailing).unwrap_err();
        assert_eq!(err.alert(), AlertDescription::DecodeError);
        let mut long_form = vec![0x30, 0x81, sig[1]];
        long_form.extend_from_slice(&sig[2..]);
        assert!(matches!(
            ecdsa_verify(&pa, msg, &long_form),
            Err(PkError::MalformedSignature { .. })
        ));
        assert!(ecdsa_verify(&pa, msg, &[]).is_err());
        // Another key's signature fails.
        let (_, other) = keys(Specifier::Nist233k);
        let sig_other = ecdsa_sign(other, msg).unwrap();
        assert!(matches!(
            ecdsa_verify(&pa, msg, &sig_other),
            Err(PkError::BadSignature { .. })
        ));
    }

    #[test]
    fn rsa_signature_covers_the_bare_hash() {
        let (a, _) = keys(Specifier::Rsa1024);
        let pa = peer(a);
        let digest = sha1(b"tbs");
        let sig = rsa_sign_digest(a, &digest).unwrap();
        assert_eq!(sig.len(), 128);
        // Raw RSA public operation: 00 01 FF..FF 00 || digest, no DigestInfo.
        let pub_rsa = pa.rsa("t").unwrap();
        let mut raw = vec![0u8; 128];
        pub_rsa
            .public_decrypt(&sig, &mut raw, Padding::NONE)
            .unwrap();
        assert_eq!(&raw[..2], &[0x00, 0x01]);
        assert!(raw[2..128 - 21].iter().all(|&b| b == 0xFF));
        assert_eq!(raw[128 - 21], 0x00);
        assert_eq!(&raw[128 - 20..], &digest);
        rsa_verify_digest(&pa, &digest, &sig).unwrap();

        // A standard PKCS#1 signature (with DigestInfo) recovers 35 bytes: rejected.
        let mut signer = Signer::new(MessageDigest::sha1(), a.openssl_pkey()).unwrap();
        signer.update(b"tbs").unwrap();
        let with_info = signer.sign_to_vec().unwrap();
        let err = rsa_verify_digest(&pa, &digest, &with_info).unwrap_err();
        assert_eq!(err.alert(), AlertDescription::DecryptError);
        // Wrong digest, truncated signature.
        assert!(rsa_verify_digest(&pa, &sha1(b"x"), &sig).is_err());
        assert!(matches!(
            rsa_verify_digest(&pa, &digest, &sig[1..]),
            Err(PkError::MalformedSignature { .. })
        ));
    }

    #[test]
    fn rsa_decrypt_failures_are_decrypt_error() {
        let (a, _) = keys(Specifier::Rsa2048);
        let pa = peer(a);
        let mut ct = rsa_encrypt(&pa, &[1u8; 20]).unwrap();
        assert_eq!(rsa_decrypt(a, &ct).unwrap().as_slice(), &[1u8; 20]);
        assert!(rsa_decrypt(a, &ct[1..]).is_err());
        // Raw value 2 decrypts to a block without valid type-2 padding.
        ct.iter_mut().for_each(|b| *b = 0);
        *ct.last_mut().unwrap() = 2;
        let err = rsa_decrypt(a, &ct).unwrap_err();
        assert!(matches!(err, PkError::RsaDecrypt));
        assert_eq!(err.alert(), AlertDescription::DecryptError);
        // Encrypting under an EC key is a programming error.
        let (e, _) = keys(Specifier::Nist256p);
        assert!(matches!(
            rsa_encrypt(&peer(e), &[0; 20]),
            Err(PkError::WrongKeyKind { .. })
        ));
    }

    #[test]
    fn points_off_the_curve_or_at_infinity_are_rejected() {
        let (a, _) = keys(Specifier::Nist256p);
        let PublicKey::Ec(EcPublicKey(point)) = a.public_wire().unwrap() else {
            panic!("EC key expected")
        };
        assert_eq!(point[0], 0x04, "uncompressed by default");
        let mut off = point.clone();
        *off.last_mut().unwrap() ^= 1;
        let err = PeerKey::from_ec_point(Specifier::Nist256p, &off).unwrap_err();
        assert_eq!(err.alert(), AlertDescription::IllegalParameter);
        for bad in [&[][..], &[0u8][..], &point[..point.len() - 1]] {
            assert!(PeerKey::from_ec_point(Specifier::Nist256p, bad).is_err());
        }
        // The same point is not on another curve of the same size class.
        assert!(PeerKey::from_ec_point(Specifier::Nist224p, &point).is_err());
        // A compressed encoding of the same point is accepted and equal.
        let (ec, _) = a.ec("t").unwrap();
        let mut ctx = BigNumContext::new().unwrap();
        let compressed = ec
            .public_key()
            .to_bytes(ec.group(), PointConversionForm::COMPRESSED, &mut ctx)
            .unwrap();
        assert_eq!(
            PeerKey::from_ec_point(Specifier::Nist256p, &compressed).unwrap(),
            peer(a)
        );
    }

    #[test]
    fn small_order_points_on_binary_curves_are_rejected() {
        // On y^2 + xy = x^3 + ax^2 + b the point (0, sqrt(b)) has order 2; OpenSSL
        // decompresses x = 0 to it.
        for spec in [
            Specifier::Nist163k,
            Specifier::Nist233r,
            Specifier::Nist283k,
        ] {
            let fb = spec.field_bytes().unwrap();
            let mut compressed = vec![0x02];
            compressed.resize(1 + fb, 0);
            let group = group(spec).unwrap();
            let mut ctx = BigNumContext::new().unwrap();
            let p = EcPoint::from_bytes(&group, &compressed, &mut ctx).unwrap();
            let uncompressed = p
                .to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)
                .unwrap();
            let err = PeerKey::from_ec_point(spec, &uncompressed).unwrap_err();
            assert!(err.to_string().contains("subgroup"), "{spec}: {err}");
        }
    }

    #[test]
    fn rsa_public_keys_must_have_the_specified_size() {
        let (a, _) = keys(Specifier::Rsa1024);
        let PublicKey::Rsa(rsa) = a.public_wire().unwrap() else {
            panic!("RSA key expected")
        };
        assert_eq!(rsa.exponent, [1, 0, 1]);
        assert!(PeerKey::from_wire(Specifier::Rsa2048, &PublicKey::Rsa(rsa.clone())).is_err());
        let mut even = rsa.clone();
        even.exponent = vec![2];
        assert!(PeerKey::from_wire(Specifier::Rsa1024, &PublicKey::Rsa(even)).is_err());
        let err = PeerKey::from_wire(Specifier::Nist256p, &PublicKey::Rsa(rsa)).unwrap_err();
        assert!(matches!(err, PkError::KeyTypeMismatch { .. }));
        assert_eq!(err.alert(), AlertDescription::IllegalParameter);
    }

    #[test]
    fn pem_round_trip_checks_the_specifier() {
        for spec in [
            Specifier::Wtls7_160,
            Specifier::Nist163k,
            Specifier::Rsa1024,
        ] {
            let (a, _) = keys(spec);
            let pem = a.to_pem_pkcs8().unwrap();
            assert!(pem.starts_with(b"-----BEGIN PRIVATE KEY-----"));
            let back = KeyPair::from_pem(spec, &pem).unwrap();
            assert_eq!(back.public_key().unwrap(), a.public_key().unwrap());
            // Reusable after reloading: sign with the reloaded, verify with the original.
            let msg = b"m";
            if spec.is_rsa() {
                let sig = rsa_sign_digest(&back, &sha1(msg)).unwrap();
                rsa_verify_digest(&peer(a), &sha1(msg), &sig).unwrap();
            } else {
                let sig = ecdsa_sign(&back, msg).unwrap();
                ecdsa_verify(&peer(a), msg, &sig).unwrap();
            }
        }
        let pem = keys(Specifier::Nist163k).0.to_pem_pkcs8().unwrap();
        for wrong in [Specifier::Nist163r, Specifier::Rsa1024] {
            let err = KeyPair::from_pem(wrong, &pem).unwrap_err();
            assert!(matches!(err, PkError::BadPrivateKey { .. }), "{err}");
        }
        let pem = keys(Specifier::Rsa1024).0.to_pem_pkcs8().unwrap();
        assert!(KeyPair::from_pem(Specifier::Rsa2048, &pem).is_err());
        assert!(KeyPair::from_pem(Specifier::Rsa1024, b"not a key").is_err());
    }

    #[test]
    fn key_hash_sha_hashes_the_wire_encoding() {
        let (a, b) = keys(Specifier::Nist224p);
        let wire = a.public_wire().unwrap();
        let mut expected = vec![wire_len(&wire)];
        if let PublicKey::Ec(EcPublicKey(p)) = &wire {
            expected.extend_from_slice(p);
        }
        assert_eq!(key_hash_sha(&wire), sha1(&expected));
        assert_ne!(key_hash_sha(&wire), key_hash_sha(&b.public_wire().unwrap()));
    }

    fn wire_len(key: &PublicKey) -> u8 {
        match key {
            PublicKey::Ec(EcPublicKey(p)) => p.len() as u8,
            PublicKey::Rsa(_) => unreachable!("EC key in this test"),
        }
    }

    #[test]
    fn ephemeral_pool_hands_out_fresh_keys() {
        let pool = EphemeralPool::new(Specifier::Wtls7_160, 3).unwrap();
        assert_eq!(pool.len(), 3);
        let k1 = pool.take().unwrap().public_key().unwrap();
        let k2 = pool.take().unwrap().public_key().unwrap();
        assert_ne!(k1, k2);
        assert_eq!(pool.len(), 1);
        assert_eq!(pool.refill().unwrap(), 2);
        for _ in 0..4 {
            assert_eq!(pool.take().unwrap().spec(), Specifier::Wtls7_160);
        }
        assert!(pool.is_empty());
        assert!(matches!(
            ephemeral_ec(Specifier::Rsa1024),
            Err(PkError::WrongKeyKind { .. })
        ));
    }

    #[test]
    fn key_pairs_never_print_their_secret() {
        let (a, _) = keys(Specifier::Nist163r);
        assert_eq!(format!("{a:?}"), "KeyPair { spec: Nist163r, .. }");
    }
}

#[cfg(test)]
mod cofactor_tests {
    use super::*;

    #[test]
    fn compatibility_mode_ecdh_equals_plain_ecdh_on_every_curve() {
        for spec in Specifier::ALL
            .into_iter()
            .filter(|s| !s.is_rsa() && s.is_available())
        {
            let server = KeyPair::generate(spec).unwrap();
            let client = KeyPair::generate(spec).unwrap();
            let point = match client.public_wire().unwrap() {
                PublicKey::Ec(p) => p.0,
                PublicKey::Rsa(_) => unreachable!(),
            };
            let plain = ecdh(&server, &PeerKey::from_ec_point(spec, &point).unwrap()).unwrap();
            let compat = ecdh_untrusted(&server, &point).unwrap();
            assert_eq!(*plain, *compat, "{}", spec.short());
            // Twice: the cached d/h key is reused.
            assert_eq!(*plain, *ecdh_untrusted(&server, &point).unwrap());
        }
    }

    /// (0, sqrt(b)), the point of order 2 on a binary curve, uncompressed.
    fn order_two_point(spec: Specifier) -> Vec<u8> {
        let fb = spec.field_bytes().unwrap();
        let mut compressed = vec![0x02];
        compressed.resize(1 + fb, 0);
        let group = group(spec).unwrap();
        let mut ctx = BigNumContext::new().unwrap();
        EcPoint::from_bytes(&group, &compressed, &mut ctx)
            .unwrap()
            .to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)
            .unwrap()
    }

    #[test]
    fn small_order_components_are_annihilated_and_small_order_points_refused() {
        for spec in [
            Specifier::Nist163k,
            Specifier::Nist163r,
            Specifier::Nist233k,
            Specifier::Nist233r,
            Specifier::Nist283k,
            Specifier::Nist283r,
        ] {
            let server = KeyPair::generate(spec).unwrap();
            let err = ecdh_untrusted(&server, &order_two_point(spec)).unwrap_err();
            assert!(err.to_string().contains("small order"), "{spec}: {err}");
            // An honest point plus the order-2 point: the same secret as the honest
            // point alone (the component is annihilated, not leaked).
            let client = KeyPair::generate(spec).unwrap();
            let honest = match client.public_wire().unwrap() {
                PublicKey::Ec(p) => p.0,
                PublicKey::Rsa(_) => unreachable!(),
            };
            let group = group(spec).unwrap();
            let mut ctx = BigNumContext::new().unwrap();
            let q = EcPoint::from_bytes(&group, &honest, &mut ctx).unwrap();
            let t = EcPoint::from_bytes(&group, &order_two_point(spec), &mut ctx).unwrap();
            let mut sum = EcPoint::new(&group).unwrap();
            sum.add(&group, &q, &t, &mut ctx).unwrap();
            let tainted = sum
                .to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)
                .unwrap();
            assert_eq!(
                *ecdh_untrusted(&server, &tainted).unwrap(),
                *ecdh_untrusted(&server, &honest).unwrap(),
                "{spec}"
            );
        }
    }

    #[test]
    fn off_curve_points_are_refused() {
        let server = KeyPair::generate(Specifier::Nist163k).unwrap();
        let mut point = match server.public_wire().unwrap() {
            PublicKey::Ec(p) => p.0,
            PublicKey::Rsa(_) => unreachable!(),
        };
        let last = point.len() - 1;
        point[last] ^= 1;
        assert!(ecdh_untrusted(&server, &point).is_err());
    }
}
