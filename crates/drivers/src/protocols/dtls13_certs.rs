//! The certificates a DTLS 1.3 configuration loads, and what its Certificate and
//! CertificateVerify messages carry, itemised: the public keys and signatures FIPS 204
//! fixes, and their encoding (X.509's fields and DER headers, TLS 1.3's length
//! prefixes). wolfSSL encrypts both messages (RFC 8446 section 4.4), so the items are
//! derived from the DER the configuration loaded and the message layouts of RFC 8446
//! sections 4.4.2 and 4.4.3; the test
//! `ml_dsa_flights_grow_by_their_itemised_certificates_and_fragment_framing` ties them to
//! the bytes on the wire.

use openssl::x509::X509;
use zeroize::Zeroizing;

use super::{Chain, Signature};
use crate::protocols::dtls::P256Pki;
use crate::protocols::ml_dsa::{Leaf, MlDsaPki};

/// One side's certificate and PKCS#8 private key, DER (the key zeroed when dropped).
pub(super) struct Identity {
    pub cert: Vec<u8>,
    pub key: Zeroizing<Vec<u8>>,
}

/// The DER credentials a configuration's contexts load: the CA both sides trust, and
/// the server's and the client's identities, all of the configuration's signature.
pub(super) struct Credentials {
    pub ca: Vec<u8>,
    pub server: Identity,
    pub client: Identity,
}

impl Credentials {
    /// Issues a fresh chain signed with `signature`.
    pub fn issue(signature: Signature) -> anyhow::Result<Credentials> {
        Ok(match signature {
            Signature::EcdsaP256 => {
                let pki = P256Pki::generate()?;
                let id = |cert: &X509,
                          key: &openssl::pkey::PKey<openssl::pkey::Private>|
                 -> anyhow::Result<Identity> {
                    Ok(Identity {
                        cert: cert.to_der()?,
                        key: Zeroizing::new(key.private_key_to_der()?),
                    })
                };
                Credentials {
                    ca: pki.ca_cert.to_der()?,
                    server: id(&pki.server_cert, &pki.server_key)?,
                    client: id(&pki.client_cert, &pki.client_key)?,
                }
            }
            Signature::MlDsa(level) => {
                let pki = MlDsaPki::generate(level)?;
                let id = |leaf: &Leaf| Identity {
                    cert: leaf.cert.clone(),
                    key: Zeroizing::new(leaf.key_pkcs8().to_vec()),
                };
                Credentials {
                    server: id(&pki.server),
                    client: id(&pki.client),
                    ca: pki.ca_cert,
                }
            }
        })
    }

    /// The certificates one side sends, leaf first.
    pub fn chain(&self, server: bool, chain: Chain) -> Vec<Vec<u8>> {
        let leaf = if server {
            &self.server.cert
        } else {
            &self.client.cert
        };
        match chain {
            Chain::Leaf => vec![leaf.clone()],
            Chain::LeafAndCa => vec![leaf.clone(), self.ca.clone()],
        }
    }
}

pub use crate::registry::CertificateItems;

/// Itemises the messages of a side sending `chain` (DER, leaf first) and signing with
/// ML-DSA; `None` for ECDSA, whose DER signature length varies by a byte or two per
/// handshake and cannot be read off the encrypted CertificateVerify.
pub fn certificate_items(
    chain: &[Vec<u8>],
    signature: Signature,
) -> anyhow::Result<Option<CertificateItems>> {
    let Signature::MlDsa(level) = signature else {
        return Ok(None);
    };
    let (pk, sig) = (level.public_key_len() as u32, level.signature_len() as u32);
    let mut items = CertificateItems {
        // certificate_request_context (empty: its length byte), certificate_list's length
        certificate_encoding: 1 + 3,
        verify_signature: sig,
        verify_encoding: 2 + 2,
        ..CertificateItems::default()
    };
    for der in chain {
        // OpenSSL 3.0 parses a certificate whose algorithms it does not implement.
        let signed = X509::from_der(der)?.signature().as_slice().len() as u32;
        anyhow::ensure!(
            signed == sig,
            "an {} certificate signed with {signed} B",
            level.name()
        );
        items.public_keys += pk;
        items.signatures += sig;
        // cert_data's 3-byte length and the entry's empty extensions (2 bytes)
        items.certificate_encoding += der.len() as u32 - pk - sig + 3 + 2;
    }
    Ok(Some(items))
}

/// What one side's Certificate message would be with RFC 8879 certificate compression
/// or RFC 7924 cached information: wolfSSL 5.9 implements neither (its extension list,
/// `TLSXT_*` in internal.h, has no `compress_certificate` (27) nor `cached_info` (25)),
/// so they are priced here on the measured messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CertificateAlternatives {
    /// The Certificate body as sent.
    pub body: u32,
    /// RFC 8879's CompressedCertificate body with zlib (algorithm 1) at its best level:
    /// algorithm (2), uncompressed_length (3), the compressed body with its 3-byte length.
    pub zlib: u32,
    /// RFC 7924 section 4.1: the Certificate message holds only the SHA-256 hash of the
    /// cached certificate chain the client named, as `hash_value<1..255>` (33 B).
    pub cached: u32,
}

/// Bytes RFC 7924's cached_info adds to each ClientHello (the extension's type and
/// length, the CachedObject list's length, one object: the `cert` type and its SHA-256
/// hash_value, RFC 7924 section 3), and to the server's EncryptedExtensions (the same
/// with the type alone).
pub const CACHED_INFO_CLIENT_HELLO: u32 = 2 + 2 + 2 + 1 + 1 + 32;
pub const CACHED_INFO_SERVER: u32 = 2 + 2 + 2 + 1;

/// Prices the alternatives for a side sending `chain` (DER, leaf first): the body is
/// rebuilt as TLS 1.3 encodes it (RFC 8446 section 4.4.2, empty context and extensions)
/// and compressed with zlib (flate2).
pub fn certificate_alternatives(chain: &[Vec<u8>]) -> anyhow::Result<CertificateAlternatives> {
    use std::io::Write;
    let u24 = |n: usize| -> [u8; 3] { [(n >> 16) as u8, (n >> 8) as u8, n as u8] };
    let mut list = Vec::new();
    for der in chain {
        list.extend(u24(der.len()));
        list.extend(der);
        list.extend([0, 0]);
    }
    let mut body = vec![0];
    body.extend(u24(list.len()));
    body.extend(list);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&body)?;
    let compressed = z.finish()?.len() as u32;
    Ok(CertificateAlternatives {
        body: body.len() as u32,
        zlib: 2 + 3 + 3 + compressed,
        cached: 1 + 32,
    })
}

/// A certificate flight, measured as `datagrams` (their payload sizes, in order), priced
/// with a Certificate body `saved` bytes smaller: one datagram and its framing
/// ([`FRAGMENT_FRAMING`]) fewer per whole fragment's worth saved, a whole fragment being
/// the flight's most frequent datagram size (wolfSSL fills every fragment of a message
/// but the last to the same size). Returns (bytes, datagrams).
pub fn priced_flight(datagrams: &[u32], saved: u32) -> (u32, u32) {
    let bytes: u32 = datagrams.iter().sum();
    let count = datagrams.len() as u32;
    let full = datagrams
        .iter()
        .max_by_key(|&&size| (datagrams.iter().filter(|&&d| d == size).count(), size))
        .copied()
        .unwrap_or(0);
    let per_fragment = full.saturating_sub(FRAGMENT_FRAMING).max(1);
    let fewer = (saved / per_fragment).min(count.saturating_sub(1));
    (
        bytes.saturating_sub(saved + FRAGMENT_FRAMING * fewer),
        count - fewer,
    )
}

/// What one more handshake fragment costs in an encrypted DTLS 1.3 flight as wolfSSL
/// writes it: the unified header (flags, a 2-byte sequence number, a 2-byte length:
/// RFC 9147 section 4), the inner content type, CCM_8's 8-byte tag and the fragment's
/// 12-byte handshake header (RFC 9147 section 5.2).
pub const FRAGMENT_FRAMING: u32 = 5 + 1 + 8 + 12;
