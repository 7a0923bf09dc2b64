//! The post-quantum server-CPU peer anchor: rustls TLS 1.3 with the hybrid
//! X25519MLKEM768 group through the aws-lc-rs provider (rustls' `prefer-post-quantum`),
//! an ECDSA P-256 certificate, TLS13_AES_128_GCM_SHA256, in memory on this machine.
//!
//! Its bound ratio divides the server's thread CPU per handshake by the raw public-key
//! work of its side in the same library (aws-lc-rs), timed after every handshake: the
//! X25519 key pair and agreement, the ML-KEM-768 encapsulation, the ECDSA signature. The
//! hellos it sends are also the reference for the hybrid key share's size (1216 B from
//! the client, 1120 B from the server: FIPS 203's ML-KEM-768 key and ciphertext plus
//! X25519's 32 B), which the DTLS 1.3 hybrid of wolfSSL is checked against.
//!
//! Built with the `dtls13` feature only: it is the post-quantum part of the bench, and
//! aws-lc-rs compiles AWS-LC (some minutes) that the classical bench does not need.

use std::sync::Arc;

use anyhow::anyhow;
use aws_lc_rs::agreement::{self, EphemeralPrivateKey, UnparsedPublicKey, X25519};
use aws_lc_rs::kem::{DecapsulationKey, EncapsulationKey, ML_KEM_768};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};
use rustls::crypto::aws_lc_rs as provider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};
use wtlsperf_models::stats::median;

use super::dtls::P256Pki;
use super::key_shares::{client_share, server_share, Wire};
use super::peers::rustls_round;
use super::HybridAnchor;
use crate::setup::thread_cpu_ns;

/// Rounds a handshake may take in memory.
const MAX_ROUNDS: usize = 8;

struct Bench {
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
    key: EcdsaKeyPair,
    rng: SystemRandom,
    /// A client's ML-KEM-768 encapsulation key and X25519 public key, made once: the
    /// server's raw work uses them as a handshake would.
    peer_ek: EncapsulationKey<aws_lc_rs::kem::AlgorithmId>,
    peer_x25519: Vec<u8>,
}

fn bench() -> anyhow::Result<Bench> {
    let pki = P256Pki::generate()?;
    let prov = Arc::new(rustls::crypto::CryptoProvider {
        cipher_suites: vec![provider::cipher_suite::TLS13_AES_128_GCM_SHA256],
        kx_groups: vec![provider::kx_group::X25519MLKEM768],
        ..provider::default_provider()
    });
    let pkcs8 = pki.server_key.private_key_to_pkcs8()?;
    let chain = vec![CertificateDer::from(pki.server_cert.to_der()?)];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8.clone()));
    let mut server = ServerConfig::builder_with_provider(prov.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    server.send_tls13_tickets = 0;
    server.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    let mut roots = RootCertStore::empty();
    roots.add(CertificateDer::from(pki.ca_cert.to_der()?))?;
    let mut client = ClientConfig::builder_with_provider(prov)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.resumption = rustls::client::Resumption::disabled();
    let rng = SystemRandom::new();
    let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &pkcs8)
        .map_err(|e| anyhow!("aws-lc-rs key: {e}"))?;
    let dk = DecapsulationKey::generate(&ML_KEM_768).map_err(|e| anyhow!("ML-KEM: {e}"))?;
    let peer_ek = dk.encapsulation_key().map_err(|e| anyhow!("ML-KEM: {e}"))?;
    let peer = EphemeralPrivateKey::generate(&X25519, &rng).map_err(|e| anyhow!("{e}"))?;
    let peer_x25519 = peer
        .compute_public_key()
        .map_err(|e| anyhow!("{e}"))?
        .as_ref()
        .to_vec();
    Ok(Bench {
        client: Arc::new(client),
        server: Arc::new(server),
        key,
        rng,
        peer_ek,
        peer_x25519,
    })
}

/// One handshake: the server's thread CPU (ns) and the two hellos' key share sizes.
fn handshake(b: &Bench) -> anyhow::Result<(u64, Option<usize>, Option<usize>)> {
    let name = ServerName::try_from("localhost")?;
    let mut c = ClientConnection::new(Arc::clone(&b.client), name)?;
    let t0 = thread_cpu_ns();
    let mut s = ServerConnection::new(Arc::clone(&b.server))?;
    let mut server_ns = thread_cpu_ns().saturating_sub(t0);
    let (mut client_ks, mut server_ks) = (None, None);
    let (mut up, mut down) = (Vec::new(), Vec::new());
    for round in 0..MAX_ROUNDS {
        if !c.is_handshaking() && !s.is_handshaking() {
            return Ok((server_ns, client_ks, server_ks));
        }
        server_ns += rustls_round(&mut c, &mut s, &mut up, &mut down)?;
        if round == 0 {
            client_ks = client_share(Wire::Tls, &up)?;
            server_ks = server_share(Wire::Tls, &down)?;
        }
    }
    anyhow::bail!("rustls handshake did not complete in {MAX_ROUNDS} rounds")
}

/// The server's raw public-key work of one handshake (thread CPU, ns).
fn raw(b: &Bench) -> anyhow::Result<u64> {
    let t0 = thread_cpu_ns();
    let mine = EphemeralPrivateKey::generate(&X25519, &b.rng).map_err(|e| anyhow!("{e}"))?;
    let _public = mine.compute_public_key().map_err(|e| anyhow!("{e}"))?;
    let peer = UnparsedPublicKey::new(&X25519, &b.peer_x25519);
    agreement::agree_ephemeral(mine, peer, aws_lc_rs::error::Unspecified, |k| Ok(k.len()))
        .map_err(|e| anyhow!("X25519: {e}"))?;
    b.peer_ek
        .encapsulate()
        .map_err(|e| anyhow!("ML-KEM-768: {e}"))?;
    b.key
        .sign(&b.rng, b"the server's CertificateVerify content")
        .map_err(|e| anyhow!("ECDSA: {e}"))?;
    Ok(thread_cpu_ns().saturating_sub(t0))
}

/// `reps` handshakes after `warmup`, each followed by the raw operations.
pub fn measure(reps: usize, warmup: usize) -> anyhow::Result<HybridAnchor> {
    let b = bench()?;
    for _ in 0..warmup {
        handshake(&b)?;
        raw(&b)?;
    }
    let (mut server, mut raws) = (Vec::new(), Vec::new());
    let mut shares = (None, None);
    for _ in 0..reps.max(1) {
        let (ns, c, s) = handshake(&b)?;
        server.push(ns as f64 / 1e3);
        raws.push(raw(&b)? as f64 / 1e3);
        shares = (c, s);
    }
    let (Some(client_share_bytes), Some(server_share_bytes)) = shares else {
        anyhow::bail!("rustls sent no X25519MLKEM768 key share");
    };
    Ok(HybridAnchor {
        server_cpu_us: median(&server).unwrap_or(f64::NAN),
        raw_us: median(&raws).unwrap_or(f64::NAN),
        client_share_bytes,
        server_share_bytes,
        reps: reps.max(1),
    })
}

/// wolfSSL's DTLS 1.3 X25519MLKEM768 key shares (client, server), from one lossless
/// handshake at an MTU where no hello is fragmented.
pub fn wolfssl_shares() -> anyhow::Result<(usize, usize)> {
    use super::dtls13::{Credential, Dtls13Config, Dtls13Suite, Group};
    use wtlsperf_spine::pair::Ended;
    use wtlsperf_spine::{Now, Pair};
    let suite = Dtls13Suite::new(
        Credential::Certificate { mutual: false },
        Group::X25519MlKem768,
        false,
    );
    let cfg = Dtls13Config::new(suite)?.with_mtu(1500);
    let now = crate::setup::now();
    let mut pair = Pair::new(cfg.client()?, cfg.server()?, Now::new(0, now.unix_secs));
    if pair.handshake() != Ended::Complete {
        anyhow::bail!("the DTLS 1.3 X25519MLKEM768 handshake did not complete");
    }
    let mut client = None;
    for d in &pair.client_sent {
        if let Ok(Some(n)) = client_share(Wire::Dtls, d) {
            client = Some(n);
        }
    }
    let server = pair
        .server_sent
        .iter()
        .find_map(|d| server_share(Wire::Dtls, d).ok().flatten());
    match (client, server) {
        (Some(c), Some(s)) => Ok((c, s)),
        _ => anyhow::bail!("no X25519MLKEM768 key share in wolfSSL's hellos"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::key_shares::{ML_KEM_768_CT, ML_KEM_768_EK, X25519_KEY};
    use super::*;

    /// rustls (aws-lc-rs) and wolfSSL send the hybrid shares FIPS 203 and X25519 add up
    /// to: 1216 B from the client, 1120 B from the server.
    #[test]
    fn hybrid_key_shares_of_rustls_and_wolfssl_match_fips_203() {
        let a = measure(2, 0).unwrap();
        let expected = (ML_KEM_768_EK + X25519_KEY, ML_KEM_768_CT + X25519_KEY);
        assert_eq!(expected, (1216, 1120));
        assert_eq!((a.client_share_bytes, a.server_share_bytes), expected);
        assert!(a.server_cpu_us > 0.0 && a.raw_us > 0.0);
        assert_eq!(wolfssl_shares().unwrap(), expected);
    }
}
