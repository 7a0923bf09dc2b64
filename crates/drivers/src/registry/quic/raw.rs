//! The raw public-key work of one QUIC handshake, each side, timed by the thread's CPU
//! clock in the library rustls computes it with (aws-lc-rs): what a side's handshake CPU
//! is divided by for its bound ratio, as the DTLS rows divide by OpenSSL's raw P-256
//! operations.
//!
//! Server: its key pair and agreement, the ML-KEM-768 encapsulation to the client's key
//! (hybrids), its CertificateVerify signature; when mutual, the verification of the CA's
//! signature on the client's certificate and of the client's CertificateVerify.
//! Client: its key pair and agreement, the ML-KEM-768 key pair and decapsulation
//! (hybrids), the verification of the CA's signature on the server's certificate and of
//! the server's CertificateVerify; when mutual, its own signature.

use anyhow::anyhow;
use aws_lc_rs::agreement::{self, EphemeralPrivateKey, UnparsedPublicKey, ECDH_P256, X25519};
use aws_lc_rs::kem::{DecapsulationKey, EncapsulationKey, ML_KEM_768};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};

use super::{P256Pki, QuicSuite};
use crate::setup::thread_cpu_ns;

/// What a signature covers here: the cost of ECDSA does not depend on it.
const SIGNED: &[u8] = b"the transcript hash a CertificateVerify signs";

/// Keys and peer values made once, so that each timing covers only a handshake's work.
pub(super) struct RawWork {
    suite: QuicSuite,
    rng: SystemRandom,
    server_key: EcdsaKeyPair,
    client_key: EcdsaKeyPair,
    /// The CA's key, whose verification key checks a leaf.
    ca_public: Vec<u8>,
    /// A peer's ephemeral public key of the suite's curve.
    peer_public: Vec<u8>,
    /// A client's ML-KEM-768 encapsulation key (the server's encapsulation).
    peer_ek: EncapsulationKey<aws_lc_rs::kem::AlgorithmId>,
    /// A CA signature and a CertificateVerify signature to check.
    signature: Vec<u8>,
}

fn err(what: &'static str) -> impl Fn(aws_lc_rs::error::Unspecified) -> anyhow::Error {
    move |e| anyhow!("{what}: {e}")
}

fn ecdsa(key: &openssl::pkey::PKey<openssl::pkey::Private>) -> anyhow::Result<EcdsaKeyPair> {
    EcdsaKeyPair::from_pkcs8(
        &ECDSA_P256_SHA256_ASN1_SIGNING,
        &key.private_key_to_pkcs8()?,
    )
    .map_err(|e| anyhow!("ECDSA key: {e}"))
}

impl RawWork {
    pub(super) fn new(suite: QuicSuite, pki: &P256Pki) -> anyhow::Result<RawWork> {
        let rng = SystemRandom::new();
        let ca = ecdsa(&pki.ca_key)?;
        let peer = EphemeralPrivateKey::generate(curve(suite), &rng).map_err(err("key pair"))?;
        let peer_public = peer.compute_public_key().map_err(err("public key"))?;
        let dk = DecapsulationKey::generate(&ML_KEM_768).map_err(err("ML-KEM-768"))?;
        Ok(RawWork {
            suite,
            server_key: ecdsa(&pki.server_key)?,
            client_key: ecdsa(&pki.client_key)?,
            ca_public: ca.public_key().as_ref().to_vec(),
            peer_public: peer_public.as_ref().to_vec(),
            peer_ek: dk.encapsulation_key().map_err(err("ML-KEM-768"))?,
            signature: ca
                .sign(&rng, SIGNED)
                .map_err(err("ECDSA"))?
                .as_ref()
                .to_vec(),
            rng,
        })
    }

    /// One ephemeral key pair and its agreement with the peer's public key.
    fn agree(&self) -> anyhow::Result<()> {
        let alg = curve(self.suite);
        let mine = EphemeralPrivateKey::generate(alg, &self.rng).map_err(err("key pair"))?;
        std::hint::black_box(mine.compute_public_key().map_err(err("public key"))?);
        let peer = UnparsedPublicKey::new(alg, &self.peer_public);
        agreement::agree_ephemeral(mine, peer, aws_lc_rs::error::Unspecified, |k| {
            Ok(std::hint::black_box(k.len()))
        })
        .map_err(err("agreement"))?;
        Ok(())
    }

    fn sign(&self, key: &EcdsaKeyPair) -> anyhow::Result<()> {
        std::hint::black_box(key.sign(&self.rng, SIGNED).map_err(err("ECDSA"))?);
        Ok(())
    }

    /// Two verifications: the CA's signature on a leaf and the peer's CertificateVerify
    /// (one key serves for both: the cost is the same).
    fn verify_two(&self) -> anyhow::Result<()> {
        let key =
            signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_ASN1, &self.ca_public);
        for _ in 0..2 {
            key.verify(SIGNED, &self.signature)
                .map_err(err("ECDSA verify"))?;
        }
        Ok(())
    }

    /// The server's raw work of one handshake (thread CPU, ns).
    pub(super) fn server_ns(&self) -> anyhow::Result<u64> {
        let t0 = thread_cpu_ns();
        self.agree()?;
        if self.suite.group.post_quantum() {
            std::hint::black_box(self.peer_ek.encapsulate().map_err(err("ML-KEM-768"))?);
        }
        self.sign(&self.server_key)?;
        if self.suite.mutual {
            self.verify_two()?;
        }
        Ok(thread_cpu_ns().saturating_sub(t0))
    }

    /// The client's raw work of one handshake (thread CPU, ns). The encapsulation to its
    /// ML-KEM key is the server's work and left out of the time.
    pub(super) fn client_ns(&self) -> anyhow::Result<u64> {
        let t0 = thread_cpu_ns();
        self.agree()?;
        let kem = if self.suite.group.post_quantum() {
            let dk = DecapsulationKey::generate(&ML_KEM_768).map_err(err("ML-KEM-768"))?;
            let ek = dk.encapsulation_key().map_err(err("ML-KEM-768"))?;
            Some((dk, ek))
        } else {
            None
        };
        let keygen = thread_cpu_ns().saturating_sub(t0);
        let ct = match &kem {
            Some((_, ek)) => Some(ek.encapsulate().map_err(err("ML-KEM-768"))?.0),
            None => None,
        };
        let t1 = thread_cpu_ns();
        if let (Some((dk, _)), Some(ct)) = (kem, ct) {
            std::hint::black_box(dk.decapsulate(ct).map_err(err("ML-KEM-768"))?);
        }
        self.verify_two()?;
        if self.suite.mutual {
            self.sign(&self.client_key)?;
        }
        Ok(keygen + thread_cpu_ns().saturating_sub(t1))
    }
}

fn curve(suite: QuicSuite) -> &'static agreement::Algorithm {
    if suite.group.p256() {
        &ECDH_P256
    } else {
        &X25519
    }
}
