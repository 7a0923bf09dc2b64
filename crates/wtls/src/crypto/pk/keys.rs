//! Own and peer keys as OpenSSL objects, parsed and checked once: generation, PKCS#8
//! PEM, the WTLS wire encodings, and X9.62 point encodings.

use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::pkey::{PKey, Private, Public};
use openssl::rsa::Rsa;
use zeroize::Zeroizing;

use super::ecdh::CofactorDh;
use super::{lib, PkError};
use crate::msgs::certificate::PublicKey;
use crate::msgs::common::{EcPublicKey, RsaPublicKey};
use crate::suite::Specifier;
use std::fmt;

/// The curve group of an EC specifier, or why it cannot be had.
pub(super) fn group(spec: Specifier) -> Result<EcGroup, PkError> {
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
pub(super) enum PrivateMaterial {
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
    pub(super) spec: Specifier,
    pub(super) material: PrivateMaterial,
    /// The cofactor h and d / h mod n, for cofactor Diffie-Hellman in compatibility
    /// mode; made on first
    /// use and shared by clones.
    pub(super) compat: std::sync::Arc<std::sync::OnceLock<Result<CofactorDh, String>>>,
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

    pub(super) fn pkey(&self) -> &PKey<Private> {
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

    pub(super) fn ec(
        &self,
        operation: &'static str,
    ) -> Result<(&EcKey<Private>, &PKey<Private>), PkError> {
        match &self.material {
            PrivateMaterial::Ec { ec, pkey } => Ok((ec, pkey)),
            PrivateMaterial::Rsa { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: "an elliptic-curve",
                spec: self.spec,
            }),
        }
    }

    pub(super) fn rsa(&self, operation: &'static str) -> Result<&Rsa<Private>, PkError> {
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

pub(super) fn ec_point_wire(
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
pub(super) enum PublicMaterial {
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
    pub(super) spec: Specifier,
    pub(super) material: PublicMaterial,
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
    pub(super) fn pkey(&self) -> &PKey<Public> {
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
    /// so that [`ecdh`](super::ecdh()) need not repeat it on every derivation: the point must decode,
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

    pub(super) fn ec(
        &self,
        operation: &'static str,
    ) -> Result<(&EcKey<Public>, &PKey<Public>), PkError> {
        match &self.material {
            PublicMaterial::Ec { ec, pkey } => Ok((ec, pkey)),
            PublicMaterial::Rsa { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: "an elliptic-curve",
                spec: self.spec,
            }),
        }
    }

    pub(super) fn rsa(&self, operation: &'static str) -> Result<&Rsa<Public>, PkError> {
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
