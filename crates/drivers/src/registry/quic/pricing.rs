//! The client's public-key operations of a QUIC handshake and their price on a device
//! profile, in the shape of the DTLS 1.3 rows: P-256 operations priced as for DTLS 1.2
//! ([`op_ms`]), ML-KEM-768 and ML-DSA-44 from the published costs of
//! `data/devices/operations.csv` (as the DTLS 1.3 rows price them), and "not available"
//! where the device has no published number for an operation the handshake needs (the
//! profiles publish no X25519 cost; nothing is extrapolated from P-256's).

use wtlsperf_models::device::executed::{PqPrimitive, PqScheme};
use wtlsperf_models::device::published_pq::{profile_cost, PublishedPqCost};
use wtlsperf_models::device::{DeviceProfile, Primitive};

use super::{Group, QuicSuite, Signature};
use crate::device::ClientSteps;
use crate::protocols::model::op_ms;
use crate::protocols::PkOps;

/// The client's public-key operations in one handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct ClientOps {
    /// P-256: the ephemeral key pair and ECDH of a P-256 group, and with the ECDSA chain
    /// the signatures (the CA's on the server's certificate and the server's
    /// CertificateVerify verified; the client's own CertificateVerify when mutual).
    pub p256: PkOps,
    /// X25519 key pairs.
    pub x25519_keygen: u32,
    /// X25519 agreements.
    pub x25519_dh: u32,
    /// ML-KEM-768 key pairs (the client's encapsulation key goes in its key share).
    pub mlkem768_keygen: u32,
    /// ML-KEM-768 decapsulations (of the server's ciphertext: the server encapsulates).
    pub mlkem768_decaps: u32,
    /// ML-DSA-44 verifications with the ML-DSA chain (the same two as ECDSA's).
    pub mldsa44_verify: u32,
    /// ML-DSA-44 signatures with the ML-DSA chain (the client's CertificateVerify, when
    /// mutual).
    pub mldsa44_sign: u32,
}

/// What the client computes in one handshake of `suite`.
pub fn client_ops(suite: QuicSuite) -> ClientOps {
    let ec = u32::from(suite.group.p256());
    let x = u32::from(!suite.group.p256());
    let kem = u32::from(suite.group.post_quantum());
    let (verify, sign) = (2, u32::from(suite.mutual));
    let ecdsa = suite.signature == Signature::EcdsaP256;
    let (ecdsa_ops, ml_dsa_ops) = if ecdsa {
        ((verify, sign), (0, 0))
    } else {
        ((0, 0), (verify, sign))
    };
    ClientOps {
        p256: PkOps {
            keygen: ec,
            ecdh: ec,
            verify: ecdsa_ops.0,
            sign: ecdsa_ops.1,
        },
        x25519_keygen: x,
        x25519_dh: x,
        mlkem768_keygen: kem,
        mlkem768_decaps: kem,
        mldsa44_verify: ml_dsa_ops.0,
        mldsa44_sign: ml_dsa_ops.1,
    }
}

/// Handshake messages the client handles: it sends ClientHello and Finished and
/// receives ServerHello, EncryptedExtensions, Certificate, CertificateVerify, Finished
/// and the HANDSHAKE_DONE frame; when mutual it also receives CertificateRequest and
/// sends its Certificate and CertificateVerify.
pub fn client_messages(suite: QuicSuite) -> u32 {
    8 + if suite.mutual { 3 } else { 0 }
}

fn p256_ms(device: &DeviceProfile, p: Primitive) -> Result<f64, String> {
    op_ms(device, p).map_err(|e| format!("not available: {e}"))
}

fn kem_ms(
    device: &DeviceProfile,
    published: &[PublishedPqCost],
    p: PqPrimitive,
) -> Result<f64, String> {
    profile_cost(published, &device.name, p, PqScheme::MlKem768).map(|c| c.ms)
}

/// The client's key pair(s) for its ClientHello on `device` (ms).
fn keygen_ms(
    suite: QuicSuite,
    device: &DeviceProfile,
    published: &[PublishedPqCost],
) -> Result<f64, String> {
    let curve = if suite.group.p256() {
        p256_ms(device, Primitive::Keygen)?
    } else {
        return Err(no_x25519(device));
    };
    let kem = if suite.group.post_quantum() {
        kem_ms(device, published, PqPrimitive::KemKeygen)?
    } else {
        0.0
    };
    Ok(curve + kem)
}

fn no_x25519(device: &DeviceProfile) -> String {
    format!(
        "not available: no published X25519 cost for {} (the profiles price P-256 only)",
        device.name
    )
}

/// The client's time on `device` (ms), or why it is not available.
pub fn client_ms(
    suite: QuicSuite,
    device: &DeviceProfile,
    published: &[PublishedPqCost],
) -> Result<f64, String> {
    let mut ms = f64::from(client_messages(suite)) * device.per_message_ms();
    ms += keygen_ms(suite, device, published)?;
    ms += match suite.group {
        Group::P256 => p256_ms(device, Primitive::Ecdh)?,
        Group::P256MlKem768 => {
            p256_ms(device, Primitive::Ecdh)? + kem_ms(device, published, PqPrimitive::KemDecaps)?
        }
        Group::X25519 | Group::X25519MlKem768 => return Err(no_x25519(device)),
    };
    ms += signatures_ms(suite, device, published)?;
    Ok(ms)
}

/// The client's signature work on `device` (ms): it verifies the CA's signature on the
/// server's leaf and the server's CertificateVerify, and when mutual signs its own.
fn signatures_ms(
    suite: QuicSuite,
    device: &DeviceProfile,
    published: &[PublishedPqCost],
) -> Result<f64, String> {
    // one verification (`true`) or signature (`false`) of the configuration's scheme
    let op = |verify: bool| match suite.signature {
        Signature::EcdsaP256 => {
            let p = if verify {
                Primitive::EcdsaVerify
            } else {
                Primitive::EcdsaSign
            };
            p256_ms(device, p)
        }
        Signature::MlDsa44 => {
            let p = if verify {
                PqPrimitive::SigVerify
            } else {
                PqPrimitive::SigSign
            };
            profile_cost(published, &device.name, p, PqScheme::MlDsa44).map(|c| c.ms)
        }
    };
    let sign = if suite.mutual { op(false)? } else { 0.0 };
    Ok(2.0 * op(true)? + sign)
}

/// The client's time per flight on `device`, for the UDP driver's holds: its Initial
/// (the ClientHello and its key pairs), its Handshake flight (the key agreement, both
/// verifications, Finished, and when mutual its signature), and the HANDSHAKE_DONE that
/// confirms. The holds add up to [`client_ms`]. The driver holds each step that sends:
/// where the server's first flight spans several datagrams (the hybrids), the client's
/// first answer is the acknowledgement of its first part, which then carries the second
/// hold, and the Finished that follows goes without one.
pub fn client_steps(
    suite: QuicSuite,
    device: &DeviceProfile,
    published: &[PublishedPqCost],
) -> Result<ClientSteps, String> {
    let total = client_ms(suite, device, published)?;
    let per = device.per_message_ms();
    let first = per + keygen_ms(suite, device, published)?;
    let finish = per;
    Ok(ClientSteps {
        flights: vec![first, total - first - finish],
        finish,
    })
}
