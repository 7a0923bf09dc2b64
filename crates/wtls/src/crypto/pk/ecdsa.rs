//! ECDSA over SHA-1, as X9.62 DER signatures (canonical encoding required on input).

use openssl::ecdsa::EcdsaSig;

use super::super::random::sha1;
use super::{lib, KeyPair, PeerKey, PkError, PkOperation, SHA1_LEN};
use crate::msgs::enums::SignatureAlgorithm;

/// ECDSA over SHA-1(message), DER-encoded (module docs).
pub fn ecdsa_sign(own: &KeyPair, message: &[u8]) -> Result<Vec<u8>, PkError> {
    ecdsa_sign_digest(own, &sha1(message))
}

/// ECDSA over a precomputed SHA-1 digest (CertificateVerify signs a transcript hash).
pub fn ecdsa_sign_digest(own: &KeyPair, digest: &[u8; SHA1_LEN]) -> Result<Vec<u8>, PkError> {
    let (ec, _) = own.ec(PkOperation::EcdsaSigning)?;
    EcdsaSig::sign(digest, ec)
        .and_then(|sig| sig.to_der())
        .map_err(lib(PkOperation::EcdsaSigning))
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
    const ALG: SignatureAlgorithm = SignatureAlgorithm::EcdsaSha;
    let (ec, _) = peer.ec(PkOperation::EcdsaVerification)?;
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
