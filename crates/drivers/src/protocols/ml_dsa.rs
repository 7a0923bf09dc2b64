//! ML-DSA (FIPS 204) certificate chains for the rows that sign with ML-DSA: one CA, a
//! server and a client leaf, as the ECDSA P-256 chain of the DTLS rows
//! (`protocols::dtls::P256Pki`) has, so that a post-quantum row differs from a classical
//! one by the signature scheme alone.
//!
//! Issued by `rcgen` through aws-lc-rs (FIPS 204 final: the NIST OIDs
//! 2.16.840.1.101.3.4.3.17/18 of RFC 9881, the 1312/1952-byte public keys as the
//! subjectPublicKey, the 2420/3309-byte signatures as the signatureValue, no
//! parameters). The certificates carry what the P-256 chain carries and nothing more: a
//! one-RDN subject (CN), a 63-bit random serial, validity from an hour back for a year
//! (as `protocols::dtls::issue` backdates), the CA's basicConstraints (rcgen adds its
//! subjectKeyIdentifier) and the server's subjectAltName `localhost`.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    SerialNumber, SignatureAlgorithm,
};
use zeroize::Zeroizing;

/// An ML-DSA parameter set the bench issues certificates with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MlDsa {
    /// ML-DSA-44: NIST security category 2.
    MlDsa44,
    /// ML-DSA-65: NIST security category 3.
    MlDsa65,
}

impl MlDsa {
    pub const ALL: [MlDsa; 2] = [MlDsa::MlDsa44, MlDsa::MlDsa65];

    /// Name in configuration names and tables.
    pub fn name(self) -> &'static str {
        match self {
            MlDsa::MlDsa44 => "mldsa44",
            MlDsa::MlDsa65 => "mldsa65",
        }
    }

    /// Encoded public key, bytes (FIPS 204 Table 2).
    pub fn public_key_len(self) -> usize {
        match self {
            MlDsa::MlDsa44 => 1312,
            MlDsa::MlDsa65 => 1952,
        }
    }

    /// Encoded signature, bytes (FIPS 204 Table 2).
    pub fn signature_len(self) -> usize {
        match self {
            MlDsa::MlDsa44 => 2420,
            MlDsa::MlDsa65 => 3309,
        }
    }

    /// The TLS SignatureScheme code point (draft-ietf-tls-mldsa section 3; wolfSSL's
    /// `MLDSA_44_SA_MAJOR/MINOR` and siblings in internal.h).
    pub fn signature_scheme(self) -> u16 {
        match self {
            MlDsa::MlDsa44 => 0x0904,
            MlDsa::MlDsa65 => 0x0905,
        }
    }

    /// The signature algorithm OID's arcs (RFC 9881 section 2).
    pub fn oid(self) -> [u64; 9] {
        let last = match self {
            MlDsa::MlDsa44 => 17,
            MlDsa::MlDsa65 => 18,
        };
        [2, 16, 840, 1, 101, 3, 4, 3, last]
    }

    fn algorithm(self) -> &'static SignatureAlgorithm {
        match self {
            MlDsa::MlDsa44 => &rcgen::PKCS_ML_DSA_44,
            MlDsa::MlDsa65 => &rcgen::PKCS_ML_DSA_65,
        }
    }
}

/// One side's end-entity credential: its DER certificate and PKCS#8 DER private key
/// (zeroed when dropped, never printed).
#[derive(Clone)]
pub struct Leaf {
    pub cert: Vec<u8>,
    /// The raw ML-DSA public key the certificate carries.
    pub public_key: Vec<u8>,
    key: Zeroizing<Vec<u8>>,
}

impl Leaf {
    /// The private key, PKCS#8 DER as aws-lc writes it, for the TLS stack to load.
    pub fn key_pkcs8(&self) -> &[u8] {
        &self.key
    }
}

impl std::fmt::Debug for Leaf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leaf")
            .field("cert_len", &self.cert.len())
            .finish_non_exhaustive()
    }
}

/// A small ML-DSA chain: a self-signed CA (DER) and a server and a client leaf it
/// signed, all of one parameter set. The CA's key is not kept: nothing is issued later.
#[derive(Debug, Clone)]
pub struct MlDsaPki {
    pub level: MlDsa,
    pub ca_cert: Vec<u8>,
    pub server: Leaf,
    pub client: Leaf,
}

impl MlDsaPki {
    /// Issues a fresh chain of `level`.
    pub fn generate(level: MlDsa) -> Result<MlDsaPki> {
        let ca_key = key_pair(level)?;
        let ca_params = params("ca", None, true)?;
        let ca_cert = ca_params
            .self_signed(&ca_key)
            .with_context(|| format!("self-signing the {} CA", level.name()))?;
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf = |cn: &str, dns: Option<&str>| -> Result<Leaf> {
            let key = key_pair(level)?;
            let cert = params(cn, dns, false)?
                .signed_by(&key, &issuer)
                .with_context(|| format!("issuing the {} {cn} leaf", level.name()))?;
            Ok(Leaf {
                cert: cert.der().to_vec(),
                public_key: key.public_key_raw().to_vec(),
                key: Zeroizing::new(key.serialize_der()),
            })
        };
        Ok(MlDsaPki {
            level,
            ca_cert: ca_cert.der().to_vec(),
            server: leaf("srv", Some("localhost"))?,
            client: leaf("cli", None)?,
        })
    }
}

fn key_pair(level: MlDsa) -> Result<KeyPair> {
    KeyPair::generate_for(level.algorithm())
        .map_err(|e| anyhow!("generating an {} key pair: {e}", level.name()))
}

/// The fields of one certificate (see the module's documentation).
fn params(cn: &str, dns: Option<&str>, ca: bool) -> Result<CertificateParams> {
    let mut p = CertificateParams::new(dns.map(str::to_owned).into_iter().collect::<Vec<_>>())
        .with_context(|| format!("subjectAltName {dns:?}"))?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, cn);
    p.distinguished_name = name;
    let mut serial = [0u8; 8];
    openssl::rand::rand_bytes(&mut serial).context("drawing a certificate serial")?;
    serial[0] &= 0x7f;
    p.serial_number = Some(SerialNumber::from_slice(&serial));
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let now = time::OffsetDateTime::from_unix_timestamp(i64::try_from(now)?)
        .context("the system clock as a certificate date")?;
    p.not_before = now - time::Duration::hours(1);
    p.not_after = now + time::Duration::days(365);
    if ca {
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::x509::X509;

    #[test]
    fn ml_dsa_chains_carry_fips_204_sizes_and_final_oids() {
        for level in MlDsa::ALL {
            let pki = MlDsaPki::generate(level).unwrap();
            let oid = level.oid().map(|a| a.to_string()).join(".");
            for (cert, key) in [
                (&pki.ca_cert, None),
                (&pki.server.cert, Some(&pki.server.public_key)),
                (&pki.client.cert, Some(&pki.client.public_key)),
            ] {
                // OpenSSL 3.0 parses a certificate whose algorithms it does not know.
                let x = X509::from_der(cert).unwrap();
                assert_eq!(x.signature().as_slice().len(), level.signature_len());
                assert_eq!(x.signature_algorithm().object().to_string(), oid);
                if let Some(key) = key {
                    assert_eq!(key.len(), level.public_key_len());
                    assert!(cert.windows(key.len()).any(|w| w == key.as_slice()));
                }
            }
            let name = |c: &[u8]| X509::from_der(c).unwrap().subject_name().to_der().unwrap();
            let issuer = X509::from_der(&pki.server.cert).unwrap();
            assert_eq!(issuer.issuer_name().to_der().unwrap(), name(&pki.ca_cert));
            assert!(!pki.server.key_pkcs8().is_empty());
        }
    }
}
