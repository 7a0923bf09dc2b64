//! The client's processing time of a DTLS 1.3 handshake on a device profile: its P-256
//! operations priced as for DTLS 1.2 ([`super::model::op_ms`]), its ML-KEM and ML-DSA
//! operations from the published costs of `data/devices/operations.csv` (pqm4 on the Cortex-M4
//! profile), and "not available" where the device has no published number for an
//! operation the handshake needs. Nothing is extrapolated from elliptic-curve numbers:
//! lattice arithmetic does not scale with them.

use wtlsperf_models::device::executed::{PqPrimitive, PqScheme};
use wtlsperf_models::device::published_pq::{profile_cost, PublishedPqCost};
use wtlsperf_models::device::{DeviceProfile, Primitive};

use super::dtls13::{Credential, Dtls13Suite, Group, MlDsa, Signature};
use super::model::op_ms;
use crate::device::ClientSteps;

/// Handshake messages the client handles: it sends ClientHello twice (the cookie
/// exchange) and Finished, and receives HelloRetryRequest, ServerHello,
/// EncryptedExtensions, Finished and the server's ACK; with certificates also the
/// server's Certificate and CertificateVerify, and when mutual sends its own two.
pub fn client_messages(suite: Dtls13Suite) -> u32 {
    let base = 3 + 5;
    match suite.credential {
        Credential::Certificate { mutual } => base + 2 + if mutual { 2 } else { 0 },
        Credential::Psk | Credential::PskDhe => base,
    }
}

/// The ML-KEM parameter set inside a group, if any.
fn kem_scheme(group: Group) -> Option<PqScheme> {
    match group {
        Group::P256 => None,
        Group::MlKem512 => Some(PqScheme::MlKem512),
        Group::MlKem768 | Group::X25519MlKem768 | Group::P256MlKem768 => Some(PqScheme::MlKem768),
        Group::MlKem1024 => Some(PqScheme::MlKem1024),
    }
}

/// The client's time on `device` (ms), or why it is not available.
pub fn client_ms(
    suite: Dtls13Suite,
    device: &DeviceProfile,
    published: &[PublishedPqCost],
) -> Result<f64, String> {
    let p256 = |p: Primitive| op_ms(device, p).map_err(|e| format!("not available: {e}"));
    let pq =
        |p: PqPrimitive, s: PqScheme| profile_cost(published, &device.name, p, s).map(|c| c.ms);
    let mut ms = f64::from(client_messages(suite)) * device.per_message_ms();
    let exchanges = !matches!(suite.credential, Credential::Psk);
    if exchanges {
        if suite.group == Group::X25519MlKem768 {
            return Err(format!(
                "not available: no published X25519 cost for {} (the profiles price P-256 only)",
                device.name
            ));
        }
        if matches!(suite.group, Group::P256 | Group::P256MlKem768) {
            ms += p256(Primitive::Keygen)? + p256(Primitive::Ecdh)?;
        }
        // the client generates the key pair and decapsulates the server's ciphertext
        if let Some(kem) = kem_scheme(suite.group) {
            ms += pq(PqPrimitive::KemKeygen, kem)? + pq(PqPrimitive::KemDecaps, kem)?;
        }
    }
    if let Credential::Certificate { mutual } = suite.credential {
        // the CA's signature on the server's certificate and its CertificateVerify (a CA
        // certificate the server sends too is the client's trust anchor: not verified)
        let (verify, sign) = match suite.signature {
            Signature::EcdsaP256 => (
                p256(Primitive::EcdsaVerify)?,
                if mutual {
                    p256(Primitive::EcdsaSign)?
                } else {
                    0.0
                },
            ),
            Signature::MlDsa(level) => {
                let scheme = ml_dsa_scheme(level);
                (
                    pq(PqPrimitive::SigVerify, scheme)?,
                    if mutual {
                        pq(PqPrimitive::SigSign, scheme)?
                    } else {
                        0.0
                    },
                )
            }
        };
        ms += 2.0 * verify + sign;
    }
    Ok(ms)
}

/// The device-cost scheme of an ML-DSA parameter set.
fn ml_dsa_scheme(level: MlDsa) -> PqScheme {
    match level {
        MlDsa::MlDsa44 => PqScheme::MlDsa44,
        MlDsa::MlDsa65 => PqScheme::MlDsa65,
    }
}

/// The client's time per flight on `device`, for the UDP driver's holds: its first
/// ClientHello, its second (after the cookie), its last flight (Finished, after the
/// server's flight), and the server's ACK. The key pair is priced where wolfSSL makes
/// it: with the first ClientHello, except ML-KEM-768 and larger, alone or in a hybrid,
/// whose first ClientHello goes without a key share (docs/dtls13.md, "Measured sizes").
/// The operations on the server's flight go to the last flight. The holds add up to
/// [`client_ms`].
pub fn client_steps(
    suite: Dtls13Suite,
    device: &DeviceProfile,
    published: &[PublishedPqCost],
) -> Result<ClientSteps, String> {
    let total = client_ms(suite, device, published)?;
    let per = device.per_message_ms();
    let keygen = match (suite.credential, kem_scheme(suite.group)) {
        (Credential::Psk, _) => 0.0,
        (_, None) => op_ms(device, Primitive::Keygen).map_err(|e| e.to_string())?,
        (_, Some(kem)) => profile_cost(published, &device.name, PqPrimitive::KemKeygen, kem)?.ms,
    };
    let late_share = !matches!(suite.group, Group::P256 | Group::MlKem512)
        && !matches!(suite.credential, Credential::Psk);
    let (first, second) = if late_share {
        (per, 2.0 * per + keygen)
    } else {
        (per + keygen, 2.0 * per)
    };
    let finish = per;
    Ok(ClientSteps {
        flights: vec![first, second, total - first - second - finish],
        finish,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtlsperf_models::device::published_pq::published_pq_costs;

    fn profile(name: &str) -> DeviceProfile {
        wtlsperf_models::device::profiles()
            .unwrap()
            .into_iter()
            .find(|p| p.name == name)
            .unwrap()
    }

    #[test]
    fn ml_kem_on_the_cortex_m4_adds_pqm4s_keygen_and_decaps_and_elsewhere_is_not_available() {
        let published = published_pq_costs().unwrap();
        let m4 = profile("nrf52840");
        let classical = Dtls13Suite::new(
            Credential::Certificate { mutual: false },
            Group::P256,
            false,
        );
        let mlkem = Dtls13Suite::new(
            Credential::Certificate { mutual: false },
            Group::MlKem768,
            false,
        );
        let c = client_ms(classical, &m4, &published).unwrap();
        let k = client_ms(mlkem, &m4, &published).unwrap();
        let p256 = op_ms(&m4, Primitive::Keygen).unwrap() + op_ms(&m4, Primitive::Ecdh).unwrap();
        // pqm4 m4fspeed ML-KEM-768 keygen + decaps at 64 MHz
        let expected = (642_096.0 + 707_827.0) / 64_000.0;
        assert!((k - c + p256 - expected).abs() < 1e-3, "{k} {c}");
        let esp = profile("esp32");
        let e = client_ms(mlkem, &esp, &published).unwrap_err();
        assert!(e.starts_with("not available"), "{e}");
        let hybrid = Dtls13Suite::new(
            Credential::Certificate { mutual: false },
            Group::X25519MlKem768,
            false,
        );
        assert!(client_ms(hybrid, &m4, &published)
            .unwrap_err()
            .contains("X25519"));
        let steps = client_steps(mlkem, &m4, &published).unwrap();
        assert!((steps.total_ms() - k).abs() < 1e-9 && steps.flights.len() == 3);
        // ML-KEM-768's key pair goes with the second ClientHello, P-256's with the first
        assert!(steps.flights[1] > steps.flights[0]);
        let c_steps = client_steps(classical, &m4, &published).unwrap();
        assert!(c_steps.flights[0] > c_steps.flights[1]);
        let psk = Dtls13Suite::new(Credential::Psk, Group::P256, false);
        assert!(
            client_ms(psk, &esp, &published).unwrap()
                < client_ms(classical, &esp, &published).unwrap()
        );
    }

    #[test]
    fn ml_dsa_replaces_the_ecdsa_operations_by_pqm4s_verify_and_sign() {
        let published = published_pq_costs().unwrap();
        let m4 = profile("nrf52840");
        let mutual = Credential::Certificate { mutual: true };
        let ms = |s| client_ms(s, &m4, &published).unwrap();
        let ecdsa = |op| op_ms(&m4, op).unwrap();
        let cycles = |c: f64| c / 64_000.0;
        // pqm4 m4f: ML-DSA-44 verify 1421623 and sign 3943121 cycles; ML-DSA-65 verify
        // 2415944 and sign 6193171; ML-KEM-1024 m4fspeed keygen 1018976, decaps 1094008
        let cases = [
            (Group::MlKem768, MlDsa::MlDsa44, 1_421_623.0, 3_943_121.0),
            (Group::MlKem1024, MlDsa::MlDsa65, 2_415_944.0, 6_193_171.0),
        ];
        for (group, level, verify, sign) in cases {
            let classical = Dtls13Suite::new(mutual, group, false);
            let pq = classical.signed_with(Signature::MlDsa(level));
            let ecdsa_ops = 2.0 * ecdsa(Primitive::EcdsaVerify) + ecdsa(Primitive::EcdsaSign);
            let want = ms(classical) - ecdsa_ops + cycles(2.0 * verify + sign);
            // operations.csv keeps six significant digits of each cycles/64 MHz
            assert!(
                (ms(pq) - want).abs() < 1e-3,
                "{}: {} {want}",
                pq.name(),
                ms(pq)
            );
        }
        let kem1024 = Dtls13Suite::new(mutual, Group::MlKem1024, false);
        let kem768 = Dtls13Suite::new(mutual, Group::MlKem768, false);
        let kem = cycles(1_018_976.0 + 1_094_008.0) - cycles(642_096.0 + 707_827.0);
        assert!((ms(kem1024) - ms(kem768) - kem).abs() < 1e-3);
        let steps = client_steps(kem1024, &m4, &published).unwrap();
        assert!(
            steps.flights[1] > steps.flights[0],
            "ML-KEM-1024's share goes late"
        );
        let esp = profile("esp32");
        let e = client_ms(
            kem768.signed_with(Signature::MlDsa(MlDsa::MlDsa44)),
            &esp,
            &published,
        );
        assert!(e.unwrap_err().starts_with("not available"));
    }
}
