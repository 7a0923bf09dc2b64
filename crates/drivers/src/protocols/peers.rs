//! Peer performance anchors: what a user would run instead of a hand-built gateway.
//! OpenSSL's own TLS 1.2 server (ECDHE-ECDSA on P-256, and RSA-2048 key transport),
//! OpenSSL's DTLS 1.2 server (ECDHE-ECDSA P-256, see [`super::dtls`]) and rustls (TLS 1.2
//! and 1.3, ECDHE-ECDSA P-256, the *ring* provider).
//!
//! Each is measured as our WTLS gateway is: in memory, client and server in one thread,
//! server thread CPU summed over its calls per handshake, the median over the reps. Its
//! bound ratio divides that by the median thread CPU of the same library's raw
//! public-key operations for one handshake (OpenSSL's for OpenSSL, *ring*'s for rustls),
//! timed after every handshake so that drift in the machine's speed touches both alike.
//! Full handshakes only: session caches and tickets are off on every server.

use std::sync::Arc;

use anyhow::{anyhow, bail};
use openssl::ecdsa::EcdsaSig;
use openssl::encrypt::Decrypter;
use openssl::pkey::{PKey, Private};
use openssl::rsa::{Padding, Rsa};
use openssl::ssl::{
    ErrorCode, Ssl, SslContext, SslMethod, SslOptions, SslSessionCacheMode, SslStream,
    SslVerifyMode, SslVersion,
};
use ring::agreement;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};
use rustls::crypto::ring as provider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};
use wtlsperf_models::stats::median;

use super::dtls::{ecdhe, ephemeral_point, issue, DtlsConfig, P256Pki};
use super::pipe::StreamPipe;
use super::{run_in_memory, Suite};
use crate::setup::thread_cpu_ns;

/// The anchors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Peer {
    /// OpenSSL TLS 1.2, ECDHE-ECDSA-AES128-GCM-SHA256 on P-256.
    OpensslTls12EcdheP256,
    /// OpenSSL DTLS 1.2, ECDHE-ECDSA-AES128-CCM8 on P-256 (with the cookie exchange).
    OpensslDtls12EcdheP256,
    /// OpenSSL TLS 1.2, AES128-GCM-SHA256 with RSA-2048 key transport.
    OpensslTls12Rsa2048,
    /// rustls TLS 1.2, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 on P-256.
    RustlsTls12EcdheP256,
    /// rustls TLS 1.3, TLS13_AES_128_GCM_SHA256, ECDSA P-256 certificate, P-256 group.
    RustlsTls13EcdheP256,
}

impl Peer {
    /// Every anchor, in report order.
    pub const ALL: [Peer; 5] = [
        Peer::OpensslTls12EcdheP256,
        Peer::OpensslDtls12EcdheP256,
        Peer::OpensslTls12Rsa2048,
        Peer::RustlsTls12EcdheP256,
        Peer::RustlsTls13EcdheP256,
    ];

    /// The `summary.json` key suffix and table label.
    pub fn key(self) -> &'static str {
        match self {
            Peer::OpensslTls12EcdheP256 => "openssl_tls12_ecdhe_p256",
            Peer::OpensslDtls12EcdheP256 => "openssl_dtls12_ecdhe_p256",
            Peer::OpensslTls12Rsa2048 => "openssl_tls12_rsa2048",
            Peer::RustlsTls12EcdheP256 => "rustls_tls12_ecdhe_p256",
            Peer::RustlsTls13EcdheP256 => "rustls_tls13_ecdhe_p256",
        }
    }

    /// The WTLS case whose bound ratio sits beside this anchor (`256p/256p` for the
    /// P-256 ones, `rsa2048/rsa2048` for RSA key transport), server-authenticated.
    pub fn wtls_counterpart(self) -> &'static str {
        match self {
            Peer::OpensslTls12Rsa2048 => "rsa2048/rsa2048",
            _ => "256p/256p",
        }
    }
}

/// One anchor's medians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeerMeasurement {
    /// Which anchor.
    pub peer: Peer,
    /// Median server thread CPU per handshake (µs).
    pub server_cpu_us: f64,
    /// Median thread CPU of the library's raw public-key operations for one handshake.
    pub raw_pk_us: f64,
    /// Handshakes measured.
    pub reps: usize,
}

impl PeerMeasurement {
    /// Server CPU over raw public-key work.
    pub fn bound_ratio(&self) -> f64 {
        self.server_cpu_us / self.raw_pk_us
    }
}

/// Measures one anchor: `warmup` unmeasured handshakes, then `reps` handshakes each
/// followed by the raw operations.
pub fn measure(peer: Peer, reps: usize, warmup: usize) -> anyhow::Result<PeerMeasurement> {
    if reps == 0 {
        bail!("at least one rep is needed");
    }
    let bench = AnchorBench::new(peer)?;
    bench.sample(warmup)?;
    let mut samples = PeerSamples::new(peer);
    samples.extend(bench.sample(reps)?);
    samples.summary()
}

/// Per-handshake samples of one anchor (µs), collected over several blocks so that the
/// anchors (and our gateway) can be measured interleaved.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerSamples {
    /// Which anchor.
    pub peer: Peer,
    /// Server thread CPU per handshake.
    pub cpu_us: Vec<f64>,
    /// Raw public-key operations per handshake.
    pub raw_us: Vec<f64>,
}

impl PeerSamples {
    /// No samples yet.
    pub fn new(peer: Peer) -> PeerSamples {
        PeerSamples {
            peer,
            cpu_us: Vec::new(),
            raw_us: Vec::new(),
        }
    }

    /// Adds a block of (server CPU, raw) pairs.
    pub fn extend(&mut self, block: Vec<(f64, f64)>) {
        for (c, r) in block {
            self.cpu_us.push(c);
            self.raw_us.push(r);
        }
    }

    /// The medians.
    pub fn summary(&self) -> anyhow::Result<PeerMeasurement> {
        Ok(PeerMeasurement {
            peer: self.peer,
            server_cpu_us: median(&self.cpu_us).ok_or_else(|| anyhow!("no sample"))?,
            raw_pk_us: median(&self.raw_us).ok_or_else(|| anyhow!("no sample"))?,
            reps: self.cpu_us.len(),
        })
    }
}

/// An anchor's configuration, built once for all its blocks.
pub struct AnchorBench(Bench);

impl AnchorBench {
    /// Builds the anchor's keys, certificates and contexts.
    pub fn new(peer: Peer) -> anyhow::Result<AnchorBench> {
        Ok(AnchorBench(Bench::new(peer)?))
    }

    /// `n` handshakes, each followed by the raw operations: (server CPU, raw) in µs.
    pub fn sample(&self, n: usize) -> anyhow::Result<Vec<(f64, f64)>> {
        (0..n)
            .map(|_| {
                let cpu = self.0.handshake()? as f64 / 1e3;
                let raw = self.0.raw()? as f64 / 1e3;
                Ok((cpu, raw))
            })
            .collect()
    }
}

/// A prepared anchor.
enum Bench {
    Dtls(DtlsConfig),
    Openssl {
        client: SslContext,
        server: SslContext,
        raw: OpensslRaw,
    },
    Rustls {
        client: Arc<ClientConfig>,
        server: Arc<ServerConfig>,
        raw: RingRaw,
    },
}

/// OpenSSL's raw server work for one TLS 1.2 handshake.
enum OpensslRaw {
    /// Ephemeral key, ECDH with the client's point, ECDSA signature (ServerKeyExchange).
    Ecdhe { key: PKey<Private> },
    /// RSA PKCS#1 v1.5 decryption of the 48-byte premaster secret.
    Rsa {
        key: PKey<Private>,
        ciphertext: Vec<u8>,
    },
}

/// *ring*'s raw server work: ephemeral P-256 key, ECDH, ECDSA P-256 signature.
struct RingRaw {
    key: EcdsaKeyPair,
    rng: SystemRandom,
}

impl Bench {
    fn new(peer: Peer) -> anyhow::Result<Bench> {
        let pki = P256Pki::generate()?;
        match peer {
            Peer::OpensslTls12EcdheP256 => Ok(Bench::Openssl {
                client: tls12_context(&pki.ca_cert, None, "ECDHE-ECDSA-AES128-GCM-SHA256")?,
                server: tls12_context(
                    &pki.ca_cert,
                    Some((&pki.server_key, &pki.server_cert)),
                    "ECDHE-ECDSA-AES128-GCM-SHA256",
                )?,
                raw: OpensslRaw::Ecdhe {
                    key: pki.server_key.clone(),
                },
            }),
            Peer::OpensslTls12Rsa2048 => rsa_bench(),
            Peer::RustlsTls12EcdheP256 => rustls_bench(&pki, false),
            Peer::RustlsTls13EcdheP256 => rustls_bench(&pki, true),
            Peer::OpensslDtls12EcdheP256 => {
                Ok(Bench::Dtls(DtlsConfig::new(Suite::DtlsEcdheEcdsa {
                    mutual: false,
                })?))
            }
        }
    }

    /// One handshake; returns the server's thread CPU (ns).
    fn handshake(&self) -> anyhow::Result<u64> {
        match self {
            Bench::Dtls(c) => Ok(run_in_memory(c.client()?, || c.server())?.server_cpu_ns),
            Bench::Openssl { client, server, .. } => openssl_handshake(client, server),
            Bench::Rustls { client, server, .. } => rustls_handshake(client, server),
        }
    }

    /// The raw operations once; returns their thread CPU (ns).
    fn raw(&self) -> anyhow::Result<u64> {
        match self {
            Bench::Dtls(c) => c
                .raw_ops()?
                .map(|(server, _client)| server)
                .ok_or_else(|| anyhow!("DTLS ECDHE has raw operations")),
            Bench::Openssl {
                raw: OpensslRaw::Ecdhe { key },
                ..
            } => {
                let point = ephemeral_point()?;
                let t0 = thread_cpu_ns();
                ecdhe(&point)?;
                std::hint::black_box(EcdsaSig::sign(&[0x44u8; 32], &*key.ec_key()?)?);
                Ok(thread_cpu_ns().saturating_sub(t0))
            }
            Bench::Openssl {
                raw: OpensslRaw::Rsa { key, ciphertext },
                ..
            } => {
                let t0 = thread_cpu_ns();
                let mut d = Decrypter::new(key)?;
                d.set_rsa_padding(Padding::PKCS1)?;
                let mut out = vec![0u8; d.decrypt_len(ciphertext)?];
                let n = d.decrypt(ciphertext, &mut out)?;
                std::hint::black_box(&out[..n]);
                Ok(thread_cpu_ns().saturating_sub(t0))
            }
            Bench::Rustls { raw, .. } => raw.run(),
        }
    }
}

impl RingRaw {
    fn run(&self) -> anyhow::Result<u64> {
        let alg = &agreement::ECDH_P256;
        let peer_key = agreement::EphemeralPrivateKey::generate(alg, &self.rng)
            .map_err(|_| anyhow!("ring keygen"))?;
        let peer_pub = peer_key
            .compute_public_key()
            .map_err(|_| anyhow!("ring public key"))?;
        let t0 = thread_cpu_ns();
        let ours = agreement::EphemeralPrivateKey::generate(alg, &self.rng)
            .map_err(|_| anyhow!("ring keygen"))?;
        std::hint::black_box(
            ours.compute_public_key()
                .map_err(|_| anyhow!("ring public key"))?,
        );
        let peer = agreement::UnparsedPublicKey::new(alg, peer_pub.as_ref());
        agreement::agree_ephemeral(ours, &peer, |k| {
            std::hint::black_box(k.len());
        })
        .map_err(|_| anyhow!("ring ECDH"))?;
        let sig = self
            .key
            .sign(&self.rng, &[0x55u8; 96])
            .map_err(|_| anyhow!("ring sign"))?;
        std::hint::black_box(sig.as_ref());
        Ok(thread_cpu_ns().saturating_sub(t0))
    }
}

/// An OpenSSL TLS 1.2 context: a server when `identity` is given, else a client that
/// trusts `ca`.
fn tls12_context(
    ca: &openssl::x509::X509,
    identity: Option<(&PKey<Private>, &openssl::x509::X509)>,
    ciphers: &str,
) -> anyhow::Result<SslContext> {
    let mut b = SslContext::builder(SslMethod::tls())?;
    b.set_min_proto_version(Some(SslVersion::TLS1_2))?;
    b.set_max_proto_version(Some(SslVersion::TLS1_2))?;
    b.set_cipher_list(ciphers)?;
    b.set_groups_list("P-256")?;
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    b.set_options(SslOptions::NO_TICKET);
    b.cert_store_mut().add_cert(ca.clone())?;
    match identity {
        Some((key, cert)) => {
            b.set_private_key(key)?;
            b.set_certificate(cert)?;
            b.set_verify(SslVerifyMode::NONE);
        }
        None => b.set_verify(SslVerifyMode::PEER),
    }
    Ok(b.build())
}

fn rsa_bench() -> anyhow::Result<Bench> {
    let ca_key = PKey::from_rsa(Rsa::generate(2048)?)?;
    let ca = issue("ca", &ca_key, None, None)?;
    let key = PKey::from_rsa(Rsa::generate(2048)?)?;
    let cert = issue("srv", &key, Some((&ca, &ca_key)), None)?;
    let mut premaster = [0x5Au8; 48];
    premaster[..2].copy_from_slice(&[3, 3]);
    let ciphertext = {
        let mut e = openssl::encrypt::Encrypter::new(&key)?;
        e.set_rsa_padding(Padding::PKCS1)?;
        let mut ct = vec![0u8; e.encrypt_len(&premaster)?];
        let n = e.encrypt(&premaster, &mut ct)?;
        ct.truncate(n);
        ct
    };
    Ok(Bench::Openssl {
        client: tls12_context(&ca, None, "AES128-GCM-SHA256")?,
        server: tls12_context(&ca, Some((&key, &cert)), "AES128-GCM-SHA256")?,
        raw: OpensslRaw::Rsa { key, ciphertext },
    })
}

/// Moves what one side wrote into the other's inbox.
fn carry(from: &mut SslStream<StreamPipe>, to: &mut SslStream<StreamPipe>) -> bool {
    let bytes = std::mem::take(&mut from.get_mut().outbox);
    let moved = !bytes.is_empty();
    to.get_mut().inbox.extend(bytes);
    moved
}

/// Drives `r` unless the side is done: Ok(true) once complete.
fn advance(r: Result<(), openssl::ssl::Error>) -> anyhow::Result<bool> {
    match r {
        Ok(()) => Ok(true),
        Err(e) if e.code() == ErrorCode::WANT_READ => Ok(false),
        Err(e) => Err(anyhow!("TLS: {e}")),
    }
}

/// Most exchanges an in-memory TLS 1.2 handshake may take (it needs 2 round trips).
const MAX_ROUNDS: usize = 8;

fn openssl_handshake(client: &SslContext, server: &SslContext) -> anyhow::Result<u64> {
    let mut c = SslStream::new(Ssl::new(client)?, StreamPipe::default())?;
    let t0 = thread_cpu_ns();
    let mut s = SslStream::new(Ssl::new(server)?, StreamPipe::default())?;
    let mut server_ns = thread_cpu_ns().saturating_sub(t0);
    let (mut c_done, mut s_done) = (advance(c.connect())?, false);
    for _ in 0..MAX_ROUNDS {
        if c_done && s_done {
            return Ok(server_ns);
        }
        carry(&mut c, &mut s);
        let t0 = thread_cpu_ns();
        s_done = s_done || advance(s.accept())?;
        server_ns += thread_cpu_ns().saturating_sub(t0);
        carry(&mut s, &mut c);
        c_done = c_done || advance(c.connect())?;
    }
    bail!("OpenSSL TLS handshake did not complete in {MAX_ROUNDS} rounds")
}

fn rustls_bench(pki: &P256Pki, tls13: bool) -> anyhow::Result<Bench> {
    let suite = if tls13 {
        provider::cipher_suite::TLS13_AES_128_GCM_SHA256
    } else {
        provider::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
    };
    let version: &'static rustls::SupportedProtocolVersion = if tls13 {
        &rustls::version::TLS13
    } else {
        &rustls::version::TLS12
    };
    let prov = Arc::new(rustls::crypto::CryptoProvider {
        cipher_suites: vec![suite],
        kx_groups: vec![provider::kx_group::SECP256R1],
        ..provider::default_provider()
    });
    let pkcs8 = pki.server_key.private_key_to_pkcs8()?;
    let chain = vec![CertificateDer::from(pki.server_cert.to_der()?)];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8.clone()));
    let mut server = ServerConfig::builder_with_provider(prov.clone())
        .with_protocol_versions(&[version])?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    server.send_tls13_tickets = 0;
    server.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    let mut roots = RootCertStore::empty();
    roots.add(CertificateDer::from(pki.ca_cert.to_der()?))?;
    let mut client = ClientConfig::builder_with_provider(prov)
        .with_protocol_versions(&[version])?
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.resumption = rustls::client::Resumption::disabled();
    let rng = SystemRandom::new();
    let ring_key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &pkcs8, &rng)
        .map_err(|e| anyhow!("ring key: {e}"))?;
    Ok(Bench::Rustls {
        client: Arc::new(client),
        server: Arc::new(server),
        raw: RingRaw { key: ring_key, rng },
    })
}

fn rustls_handshake(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) -> anyhow::Result<u64> {
    let name = ServerName::try_from("localhost")?;
    let mut c = ClientConnection::new(Arc::clone(client), name)?;
    let t0 = thread_cpu_ns();
    let mut s = ServerConnection::new(Arc::clone(server))?;
    let mut server_ns = thread_cpu_ns().saturating_sub(t0);
    let (mut up, mut down) = (Vec::new(), Vec::new());
    for _ in 0..MAX_ROUNDS {
        if !c.is_handshaking() && !s.is_handshaking() {
            return Ok(server_ns);
        }
        server_ns += rustls_round(&mut c, &mut s, &mut up, &mut down)?;
    }
    bail!("rustls handshake did not complete in {MAX_ROUNDS} rounds")
}

/// One round of an in-memory rustls handshake: what the client has to say goes to the
/// server (through `up`), the server's answer back to the client (through `down`); both
/// buffers are cleared first and keep the flights for a caller that reads them. Returns
/// the server's thread CPU for its part (ns).
pub(super) fn rustls_round(
    c: &mut ClientConnection,
    s: &mut ServerConnection,
    up: &mut Vec<u8>,
    down: &mut Vec<u8>,
) -> anyhow::Result<u64> {
    up.clear();
    down.clear();
    while c.wants_write() {
        c.write_tls(up)?;
    }
    let t0 = thread_cpu_ns();
    let mut rd = &up[..];
    while !rd.is_empty() {
        s.read_tls(&mut rd)?;
        s.process_new_packets()?;
    }
    while s.wants_write() {
        s.write_tls(down)?;
    }
    let server_ns = thread_cpu_ns().saturating_sub(t0);
    let mut rd = &down[..];
    while !rd.is_empty() {
        c.read_tls(&mut rd)?;
        c.process_new_packets()?;
    }
    Ok(server_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_anchor_completes_and_its_raw_operations_are_timed() {
        for peer in Peer::ALL {
            let m = measure(peer, 2, 1).unwrap_or_else(|e| panic!("{peer:?}: {e:#}"));
            assert!(m.server_cpu_us > 0.0 && m.raw_pk_us > 0.0, "{m:?}");
        }
    }

    #[test]
    fn counterparts_name_wtls_cases() {
        assert_eq!(
            Peer::OpensslTls12Rsa2048.wtls_counterpart(),
            "rsa2048/rsa2048"
        );
        assert!(Peer::ALL.iter().all(|p| p.key().contains('_')));
    }
}
