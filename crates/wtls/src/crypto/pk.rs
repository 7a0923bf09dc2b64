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
//!
//! The module is split along its seams: [`KeyPair`] and [`PeerKey`] with their encodings
//! (`keys`), ECDH with the cofactor handling of the binary curves (`ecdh`), ECDSA
//! (`ecdsa`), RSA (`rsa`), ephemeral keys (`ephemeral`), the self-check (`check`) and
//! the typed failures (`error`);
//! everything public is re-exported here, so callers name `crypto::pk::X` only.

mod check;
mod ecdh;
mod ecdsa;
mod ephemeral;
mod error;
mod keys;
mod rsa;

pub use check::{self_check, self_check_with, SelfCheck};
pub use ecdh::{ecdh, ecdh_untrusted};
pub use ecdsa::{ecdsa_sign, ecdsa_sign_digest, ecdsa_verify, ecdsa_verify_digest};
pub use ephemeral::{ephemeral_ec, EphemeralPool};
pub use error::{Curve, KeyDefect, KeyFamily, LibraryError, PkError, PkOperation, SelfCheckStep};
pub use keys::{compress_point, KeyPair, PeerKey};
pub use rsa::{rsa_decrypt, rsa_encrypt, rsa_sign_digest, rsa_verify_digest};

use error::lib;

use super::random::sha1;
use crate::codec::Codec;
use crate::msgs::certificate::PublicKey;
use crate::msgs::enums::SignatureAlgorithm;
use crate::suite::Specifier;

/// Length of the SHA-1 digest that rsa_sha and ecdsa_sha sign.
pub const SHA1_LEN: usize = 20;

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

#[cfg(test)]
pub(crate) mod tests;
