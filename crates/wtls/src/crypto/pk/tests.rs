use super::*;
use crate::crypto::pk::keys::group;
use crate::msgs::certificate::PublicKey;
use crate::msgs::common::EcPublicKey;
use crate::msgs::enums::AlertDescription;
use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcPoint, PointConversionForm};
use openssl::hash::MessageDigest;
use openssl::rsa::Padding;
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
        let (ec_a, _) = a.ec(PkOperation::Ecdh).unwrap();
        let (ec_b, _) = b.ec(PkOperation::Ecdh).unwrap();
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
    let pub_rsa = pa.rsa(PkOperation::RsaSigning).unwrap();
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
    let (ec, _) = a.ec(PkOperation::Ecdh).unwrap();
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
        assert_eq!(
            err.key_defect(),
            Some(&KeyDefect::NotInPrimeOrderSubgroup),
            "{spec}: {err}"
        );
    }
}

#[test]
fn rsa_public_keys_must_have_the_specified_size() {
    let (a, _) = keys(Specifier::Rsa1024);
    let PublicKey::Rsa(rsa) = a.public_wire().unwrap() else {
        panic!("RSA key expected")
    };
    assert_eq!(rsa.exponent, [1, 0, 1]);
    let err = PeerKey::from_wire(Specifier::Rsa2048, &PublicKey::Rsa(rsa.clone())).unwrap_err();
    assert_eq!(
        err.key_defect(),
        Some(&KeyDefect::ModulusBits {
            found: 1024,
            needed: 2048
        })
    );
    let mut even = rsa.clone();
    even.exponent = vec![2];
    let err = PeerKey::from_wire(Specifier::Rsa1024, &PublicKey::Rsa(even)).unwrap_err();
    assert_eq!(err.key_defect(), Some(&KeyDefect::BadExponent));
    let err = PeerKey::from_wire(Specifier::Nist256p, &PublicKey::Rsa(rsa)).unwrap_err();
    assert_eq!(
        err,
        PkError::KeyTypeMismatch {
            spec: Specifier::Nist256p,
            found: KeyFamily::Rsa
        }
    );
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
    let err = KeyPair::from_pem(Specifier::Nist163r, &pem).unwrap_err();
    assert!(
        matches!(
            err,
            PkError::BadPrivateKey {
                defect: KeyDefect::WrongCurve { .. },
                ..
            }
        ),
        "{err}"
    );
    let err = KeyPair::from_pem(Specifier::Rsa1024, &pem).unwrap_err();
    assert!(
        matches!(
            err,
            PkError::BadPrivateKey {
                defect: KeyDefect::WrongFamily {
                    expected: KeyFamily::Rsa,
                    ..
                },
                ..
            }
        ),
        "{err}"
    );
    let pem = keys(Specifier::Rsa1024).0.to_pem_pkcs8().unwrap();
    let err = KeyPair::from_pem(Specifier::Rsa2048, &pem).unwrap_err();
    assert_eq!(
        err.key_defect(),
        Some(&KeyDefect::ModulusBits {
            found: 1024,
            needed: 2048
        })
    );
    let err = KeyPair::from_pem(Specifier::Rsa1024, b"not a key").unwrap_err();
    assert!(
        matches!(err.key_defect(), Some(KeyDefect::Unreadable(_))),
        "{err}"
    );
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
