//! RSA PKCS#1 v1.5: key transport (block type 2) and rsa_sha signatures over the bare
//! digest (block type 1).

use openssl::rsa::Padding;
use zeroize::Zeroizing;

use super::{lib, KeyPair, PeerKey, PkError, PkOperation};
use crate::msgs::enums::SignatureAlgorithm;

/// RSA PKCS#1 v1.5 block type 2 encryption (the RSA ClientKeyExchange).
pub fn rsa_encrypt(peer: &PeerKey, secret: &[u8]) -> Result<Vec<u8>, PkError> {
    let rsa = peer.rsa(PkOperation::RsaEncryption)?;
    let mut out = vec![0u8; rsa.size() as usize];
    let n = rsa
        .public_encrypt(secret, &mut out, Padding::PKCS1)
        .map_err(lib(PkOperation::RsaEncryption))?;
    out.truncate(n);
    Ok(out)
}

/// RSA PKCS#1 v1.5 decryption. Every failure is the same [`PkError::RsaDecrypt`], so the
/// caller learns nothing about where the padding check failed; the handshake layer
/// should still continue with a random pre-master on failure (Bleichenbacher).
pub fn rsa_decrypt(own: &KeyPair, ciphertext: &[u8]) -> Result<Zeroizing<Vec<u8>>, PkError> {
    let rsa = own.rsa(PkOperation::RsaDecryption)?;
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
    let rsa = own.rsa(PkOperation::RsaSigning)?;
    let mut out = vec![0u8; rsa.size() as usize];
    let n = rsa
        .private_encrypt(digest, &mut out, Padding::PKCS1)
        .map_err(lib(PkOperation::RsaSigning))?;
    out.truncate(n);
    Ok(out)
}

/// Verifies an rsa_sha signature: the signature must be exactly the modulus length and
/// recover exactly the digest's bytes (20 for SHA-1, 16 for MD5; compared in constant
/// time).
pub fn rsa_verify_digest(peer: &PeerKey, digest: &[u8], signature: &[u8]) -> Result<(), PkError> {
    const ALG: SignatureAlgorithm = SignatureAlgorithm::RsaSha;
    let rsa = peer.rsa(PkOperation::RsaVerification)?;
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
