//! The start-up self-check: every operation of a specifier exercised with two keys.

use super::super::random::sha1;
use super::{
    ecdh, ecdsa_sign, ecdsa_verify, public_key_bytes, rsa_decrypt, rsa_encrypt, rsa_sign_digest,
    rsa_verify_digest, KeyDefect, KeyPair, PeerKey, PkError, SelfCheckStep,
};
use crate::suite::Specifier;

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

fn check_failed(spec: Specifier, step: SelfCheckStep) -> PkError {
    PkError::BadPublicKey {
        spec,
        defect: KeyDefect::SelfCheck(step),
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
            return Err(check_failed(
                spec,
                SelfCheckStep::TamperedRsaSignatureVerified,
            ));
        }
        let secret = [0x5au8; 20];
        let ct = rsa_encrypt(&pub_a, &secret)?;
        if rsa_decrypt(a, &ct)?.as_slice() != secret {
            return Err(check_failed(spec, SelfCheckStep::RsaRoundTripChangedSecret));
        }
        (sig.len(), ct.len())
    } else {
        let sig = ecdsa_sign(a, message)?;
        ecdsa_verify(&pub_a, message, &sig)?;
        if ecdsa_verify(&pub_a, b"another message", &sig).is_ok() {
            return Err(check_failed(spec, SelfCheckStep::EcdsaVerifiedWrongMessage));
        }
        let pub_b = PeerKey::from_wire(spec, &b.public_wire()?)?;
        let ab = ecdh(a, &pub_b)?;
        let ba = ecdh(b, &pub_a)?;
        if ab != ba {
            return Err(check_failed(spec, SelfCheckStep::EcdhDirectionsDisagree));
        }
        if Some(ab.len()) != spec.field_bytes() {
            return Err(check_failed(spec, SelfCheckStep::EcdhSecretNotFieldSized));
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
