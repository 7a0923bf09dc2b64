//! Own and peer keys as OpenSSL objects, parsed and checked once: generation, PKCS#8
//! PEM, the WTLS wire encodings, and X9.62 point encodings.

use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::pkey::{PKey, Private, Public};
use openssl::rsa::Rsa;
use zeroize::Zeroizing;

use super::ecdh::CofactorDh;
use super::{lib, Curve, KeyDefect, KeyFamily, LibraryError, PkError, PkOperation};
use crate::msgs::certificate::PublicKey;
use crate::msgs::common::{EcPublicKey, RsaPublicKey};
use crate::suite::Specifier;
use std::fmt;

/// The curve group of an EC specifier, or why it cannot be had.
pub(super) fn group(spec: Specifier) -> Result<EcGroup, PkError> {
    let Some(nid) = spec.curve_nid() else {
        return Err(PkError::WrongKeyKind {
            operation: PkOperation::CurveLookup,
            expected: KeyFamily::EllipticCurve,
            spec,
        });
    };
    EcGroup::from_curve_name(nid).map_err(|source| PkError::Unavailable {
        spec,
        operation: PkOperation::CurveLookup,
        source: LibraryError(source),
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
    /// mode; made on first use and shared by clones (a failure too, so that it is
    /// reported the same way every time).
    pub(super) compat: std::sync::Arc<std::sync::OnceLock<Result<CofactorDh, PkError>>>,
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
                let rsa = Rsa::generate(bits).map_err(lib(PkOperation::RsaKeyGeneration))?;
                let pkey =
                    PKey::from_rsa(rsa.clone()).map_err(lib(PkOperation::RsaKeyGeneration))?;
                PrivateMaterial::Rsa { pkey, rsa }
            }
            None => {
                let group = group(spec)?;
                let ec = EcKey::generate(&group).map_err(lib(PkOperation::EcKeyGeneration))?;
                let pkey =
                    PKey::from_ec_key(ec.clone()).map_err(lib(PkOperation::EcKeyGeneration))?;
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
            .map_err(lib(PkOperation::Pkcs8Encoding))
    }

    /// Reads a PEM private key (PKCS#8 or traditional) and checks that it really is a
    /// key of `spec`: the same curve, or RSA with exactly the specifier's modulus size.
    pub fn from_pem(spec: Specifier, pem: &[u8]) -> Result<KeyPair, PkError> {
        let bad = |defect: KeyDefect| PkError::BadPrivateKey { spec, defect };
        let pkey = PKey::private_key_from_pem(pem)
            .map_err(|e| bad(KeyDefect::Unreadable(LibraryError(e))))?;
        let family = KeyFamily::of(spec);
        let wrong_family = || {
            bad(KeyDefect::WrongFamily {
                expected: family,
                found: pkey.id(),
            })
        };
        let inconsistent = |e| {
            bad(KeyDefect::Inconsistent {
                family,
                source: LibraryError(e),
            })
        };
        let material = match spec.rsa_bits() {
            Some(bits) => {
                let rsa = pkey.rsa().map_err(|_| wrong_family())?;
                let found = rsa.n().num_bits() as u32;
                if found != bits {
                    return Err(bad(KeyDefect::ModulusBits {
                        found,
                        needed: bits,
                    }));
                }
                rsa.check_key().map_err(inconsistent)?;
                PrivateMaterial::Rsa { pkey, rsa }
            }
            None => {
                let ec = pkey.ec_key().map_err(|_| wrong_family())?;
                let curve = ec.group().curve_name();
                if curve != spec.curve_nid() {
                    return Err(bad(KeyDefect::WrongCurve {
                        found: Curve(curve),
                    }));
                }
                ec.check_key().map_err(inconsistent)?;
                // Rebuild the EVP key from the checked EC key so both handles share it.
                let pkey = PKey::from_ec_key(ec.clone()).map_err(lib(PkOperation::EcKeyImport))?;
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
                    .map_err(lib(PkOperation::EcPublicKey))?;
                let pkey = PKey::from_ec_key(ec.clone()).map_err(lib(PkOperation::EcPublicKey))?;
                PublicMaterial::Ec { pkey, ec }
            }
            PrivateMaterial::Rsa { rsa, .. } => {
                let rsa = Rsa::from_public_components(
                    rsa.n().to_owned().map_err(lib(PkOperation::RsaPublicKey))?,
                    rsa.e().to_owned().map_err(lib(PkOperation::RsaPublicKey))?,
                )
                .map_err(lib(PkOperation::RsaPublicKey))?;
                let pkey = PKey::from_rsa(rsa.clone()).map_err(lib(PkOperation::RsaPublicKey))?;
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
        operation: PkOperation,
    ) -> Result<(&EcKey<Private>, &PKey<Private>), PkError> {
        match &self.material {
            PrivateMaterial::Ec { ec, pkey } => Ok((ec, pkey)),
            PrivateMaterial::Rsa { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: KeyFamily::EllipticCurve,
                spec: self.spec,
            }),
        }
    }

    pub(super) fn rsa(&self, operation: PkOperation) -> Result<&Rsa<Private>, PkError> {
        match &self.material {
            PrivateMaterial::Rsa { rsa, .. } => Ok(rsa),
            PrivateMaterial::Ec { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: KeyFamily::Rsa,
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
    let mut ctx = BigNumContext::new().map_err(lib(PkOperation::EcPointEncoding))?;
    point
        .to_bytes(group, PointConversionForm::UNCOMPRESSED, &mut ctx)
        .map(EcPublicKey)
        .map_err(lib(PkOperation::EcPointEncoding))
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
                found: KeyFamily::Rsa,
            }),
            (PublicKey::Ec(_), Some(_)) => Err(PkError::KeyTypeMismatch {
                spec,
                found: KeyFamily::EllipticCurve,
            }),
        }
    }

    fn from_rsa_components(
        spec: Specifier,
        bits: u32,
        key: &RsaPublicKey,
    ) -> Result<PeerKey, PkError> {
        let bad = |defect: KeyDefect| PkError::BadPublicKey { spec, defect };
        let n = BigNum::from_slice(&key.modulus).map_err(lib(PkOperation::RsaModulus))?;
        let e = BigNum::from_slice(&key.exponent).map_err(lib(PkOperation::RsaExponent))?;
        if n.num_bits() as u32 != bits {
            return Err(bad(KeyDefect::ModulusBits {
                found: n.num_bits() as u32,
                needed: bits,
            }));
        }
        if !n.is_bit_set(0) {
            return Err(bad(KeyDefect::EvenModulus));
        }
        if !e.is_bit_set(0) || e.num_bits() < 2 || e.num_bits() > 64 {
            return Err(bad(KeyDefect::BadExponent));
        }
        let rsa = Rsa::from_public_components(n, e).map_err(lib(PkOperation::RsaPublicKey))?;
        let pkey = PKey::from_rsa(rsa.clone()).map_err(lib(PkOperation::RsaPublicKey))?;
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
        let bad = |defect: KeyDefect| PkError::BadPublicKey { spec, defect };
        let group = group(spec)?;
        if point.first().is_none_or(|&tag| tag == 0) {
            return Err(bad(KeyDefect::EmptyOrInfinity));
        }
        let mut ctx = BigNumContext::new().map_err(lib(PkOperation::EcPoint))?;
        let q =
            EcPoint::from_bytes(&group, point, &mut ctx).map_err(|_| bad(KeyDefect::NotOnCurve))?;
        if q.is_infinity(&group) {
            return Err(bad(KeyDefect::PointAtInfinity));
        }
        let mut cofactor = BigNum::new().map_err(lib(PkOperation::EcPoint))?;
        group
            .cofactor(&mut cofactor, &mut ctx)
            .map_err(lib(PkOperation::EcPoint))?;
        if subgroup_check && cofactor > BigNum::from_u32(1).map_err(lib(PkOperation::EcPoint))? {
            let mut order = BigNum::new().map_err(lib(PkOperation::EcPoint))?;
            group
                .order(&mut order, &mut ctx)
                .map_err(lib(PkOperation::EcPoint))?;
            let mut check = EcPoint::new(&group).map_err(lib(PkOperation::EcPoint))?;
            check
                .mul2(&group, &q, &order, &mut ctx)
                .map_err(lib(PkOperation::EcPoint))?;
            if !check.is_infinity(&group) {
                return Err(bad(KeyDefect::NotInPrimeOrderSubgroup));
            }
        }
        let ec = EcKey::from_public_key(&group, &q).map_err(lib(PkOperation::EcPublicKey))?;
        let pkey = PKey::from_ec_key(ec.clone()).map_err(lib(PkOperation::EcPublicKey))?;
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
        operation: PkOperation,
    ) -> Result<(&EcKey<Public>, &PKey<Public>), PkError> {
        match &self.material {
            PublicMaterial::Ec { ec, pkey } => Ok((ec, pkey)),
            PublicMaterial::Rsa { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: KeyFamily::EllipticCurve,
                spec: self.spec,
            }),
        }
    }

    pub(super) fn rsa(&self, operation: PkOperation) -> Result<&Rsa<Public>, PkError> {
        match &self.material {
            PublicMaterial::Rsa { rsa, .. } => Ok(rsa),
            PublicMaterial::Ec { .. } => Err(PkError::WrongKeyKind {
                operation,
                expected: KeyFamily::Rsa,
                spec: self.spec,
            }),
        }
    }
}

/// An X9.62 point in compressed form (`02`/`03` ‖ x), for the key exchange suites
/// 11-14 that carry compressed points (the `_uncomp` suites 15-18 carry them whole).
pub fn compress_point(spec: Specifier, point: &[u8]) -> Result<Vec<u8>, PkError> {
    let group = group(spec)?;
    let mut ctx = BigNumContext::new().map_err(lib(PkOperation::EcPoint))?;
    let q = EcPoint::from_bytes(&group, point, &mut ctx).map_err(|_| PkError::BadPublicKey {
        spec,
        defect: KeyDefect::NotOnCurve,
    })?;
    q.to_bytes(&group, PointConversionForm::COMPRESSED, &mut ctx)
        .map_err(lib(PkOperation::EcPoint))
}
