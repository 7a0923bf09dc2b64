//! ECDH: with a validated peer key, and with a point nobody vouches for, where the
//! binary curves' cofactor is handled by ECSVDP-DHC in compatibility mode.

use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcKey, EcPoint};
use openssl::error::ErrorStack;
use openssl::pkey::Private;
use zeroize::Zeroizing;

use super::{lib, KeyDefect, KeyPair, LibraryError, PeerKey, PkError, PkOperation};
use crate::suite::Specifier;

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
    let (own_ec, _) = own.ec(PkOperation::Ecdh)?;
    let group = own_ec.group();
    let mut ctx = BigNumContext::new().map_err(lib(PkOperation::Ecdh))?;
    let bad = |defect: KeyDefect| PkError::BadPublicKey {
        spec: own.spec,
        defect,
    };
    if point.first().is_none_or(|&tag| tag == 0) {
        return Err(bad(KeyDefect::EmptyOrInfinity));
    }
    // Decoding checks that the point lies on the curve.
    let q = EcPoint::from_bytes(group, point, &mut ctx).map_err(|_| bad(KeyDefect::NotOnCurve))?;
    let cofactor_dh = own
        .compat
        .get_or_init(|| CofactorDh::new(own.spec, own_ec))
        .as_ref()
        .map_err(PkError::clone)?;
    let h = cofactor_dh.h;
    let Some(compat) = &cofactor_dh.compat else {
        if h <= 1 {
            return shared_x(group, &q, own_ec.private_key(), &mut ctx, own.spec);
        }
        return Err(bad(KeyDefect::CofactorNotPowerOfTwo));
    };
    shared_x(group, &q, compat.private_key(), &mut ctx, own.spec).map_err(|e| match e {
        PkError::BadPublicKey { .. } => bad(KeyDefect::SmallOrder),
        other => other,
    })
}

/// What cofactor Diffie-Hellman needs of an own key, worked out once per key: the
/// curve's cofactor h and, for h a power of two above 1, a key holding the scalar
/// k = h·(d·h⁻¹ mod n) (see [`ecdh_untrusted`]; an `EcKey` so that it is wiped on drop).
pub(super) struct CofactorDh {
    h: u32,
    compat: Option<EcKey<Private>>,
}

impl CofactorDh {
    /// Fails with [`PkError::Unavailable`]: a curve whose cofactor arithmetic
    /// libcrypto cannot set up is one this build cannot serve.
    fn new(spec: Specifier, own: &EcKey<Private>) -> Result<CofactorDh, PkError> {
        let unavailable = |source| PkError::Unavailable {
            spec,
            operation: PkOperation::Ecdh,
            source: LibraryError(source),
        };
        let mut ctx = BigNumContext::new().map_err(unavailable)?;
        let mut cofactor = BigNum::new().map_err(unavailable)?;
        own.group()
            .cofactor(&mut cofactor, &mut ctx)
            .map_err(unavailable)?;
        let h = cofactor
            .to_dec_str()
            .map_err(unavailable)?
            .parse::<u32>()
            .unwrap_or(0);
        let compat = if h > 1 && h.is_power_of_two() {
            Some(compat_key(own, &cofactor).map_err(unavailable)?)
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
    let mut product = EcPoint::new(group).map_err(lib(PkOperation::Ecdh))?;
    product
        .mul2(group, point, scalar, ctx)
        .map_err(lib(PkOperation::Ecdh))?;
    if product.is_infinity(group) {
        return Err(PkError::BadPublicKey {
            spec,
            defect: KeyDefect::SharedPointAtInfinity,
        });
    }
    let mut x = BigNum::new().map_err(lib(PkOperation::Ecdh))?;
    let mut y = BigNum::new().map_err(lib(PkOperation::Ecdh))?;
    product
        .affine_coordinates(group, &mut x, &mut y, ctx)
        .map_err(lib(PkOperation::Ecdh))?;
    let len = group.degree().div_ceil(8) as i32;
    Ok(Zeroizing::new(
        x.to_vec_padded(len).map_err(lib(PkOperation::Ecdh))?,
    ))
}

/// The key of ECSVDP-DHC compatibility mode as one scalar, k = h·(d·h⁻¹ mod n), not
/// reduced modulo n. Its public half is d·G (k ≡ d mod n).
fn compat_key(own: &EcKey<Private>, cofactor: &BigNum) -> Result<EcKey<Private>, ErrorStack> {
    let group = own.group();
    let mut ctx = BigNumContext::new()?;
    let mut order = BigNum::new()?;
    group.order(&mut order, &mut ctx)?;
    let mut h_inv = BigNum::new()?;
    h_inv.mod_inverse(cofactor, &order, &mut ctx)?;
    let mut d_over_h = BigNum::new()?;
    d_over_h.mod_mul(own.private_key(), &h_inv, &order, &mut ctx)?;
    let mut k = BigNum::new()?;
    k.checked_mul(&d_over_h, cofactor, &mut ctx)?;
    d_over_h.clear();
    EcKey::from_private_components(group, &k, own.public_key())
}

/// ECDH: the pre-master secret of ECDH_anon and ECDH_ECDSA, the x-coordinate of
/// own·peer as a field-size octet string (module docs). The peer key was fully
/// validated when it was parsed, so OpenSSL's per-call revalidation is switched off.
pub fn ecdh(own: &KeyPair, peer: &PeerKey) -> Result<Zeroizing<Vec<u8>>, PkError> {
    let (own_ec, _) = own.ec(PkOperation::Ecdh)?;
    let (peer_ec, _) = peer.ec(PkOperation::Ecdh)?;
    if own.spec != peer.spec {
        return Err(PkError::SpecifierMismatch {
            spec: own.spec,
            found: peer.spec,
        });
    }
    let mut ctx = BigNumContext::new().map_err(lib(PkOperation::Ecdh))?;
    shared_x(
        own_ec.group(),
        peer_ec.public_key(),
        own_ec.private_key(),
        &mut ctx,
        own.spec,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::bn::BigNumContext;
    use openssl::ec::{EcPoint, PointConversionForm};

    use crate::msgs::certificate::PublicKey;

    use crate::crypto::pk::keys::group;

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
            assert_eq!(
                err.key_defect(),
                Some(&KeyDefect::SmallOrder),
                "{spec}: {err}"
            );
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
        let err = ecdh_untrusted(&server, &point).unwrap_err();
        assert_eq!(err.key_defect(), Some(&KeyDefect::NotOnCurve), "{err}");
    }
}
