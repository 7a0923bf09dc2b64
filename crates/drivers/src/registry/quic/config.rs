//! The rustls and quinn-proto configurations of both sides, and the wall clock they
//! read (the caller's).

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, Context as _};
use quinn_proto::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn_proto::{
    ClientConfig, Endpoint, EndpointConfig, IdleTimeout, ServerConfig, TimeSource, TransportConfig,
    ValidationTokenConfig,
};
use rustls::crypto::{aws_lc_rs as provider, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::time_provider::TimeProvider;
use rustls::RootCertStore;

use super::raw::RawWork;
use super::{
    Group, P256Pki, QuicEndpoint, QuicSuite, Signature, ALPN, HANDSHAKE_TIMEOUT, INITIAL_RTT,
    MIN_DATAGRAM, PACKET_THRESHOLD, TIME_THRESHOLD,
};
use crate::protocols::ml_dsa::MlDsaPki;

thread_local! {
    /// The caller's Unix seconds of the call in progress on this thread: the wall clock
    /// rustls (certificate validity) and quinn-proto (token dates) read.
    pub(super) static CALLER_UNIX_SECS: Cell<Option<u32>> = const { Cell::new(None) };
}

/// The wall clock of rustls and quinn-proto: the caller's time, not the machine's.
#[derive(Debug)]
struct CallerClock;

impl TimeProvider for CallerClock {
    fn current_time(&self) -> Option<UnixTime> {
        CALLER_UNIX_SECS
            .get()
            .map(|s| UnixTime::since_unix_epoch(Duration::from_secs(u64::from(s))))
    }
}

impl TimeSource for CallerClock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(u64::from(CALLER_UNIX_SECS.get().unwrap_or(0)))
    }
}

/// The transport settings both sides use (see the module's documentation).
fn transport(initial_rtt: Duration, timeout: Duration) -> anyhow::Result<TransportConfig> {
    let mut t = TransportConfig::default();
    t.initial_rtt(initial_rtt)
        .packet_threshold(PACKET_THRESHOLD)
        .time_threshold(TIME_THRESHOLD)
        .max_idle_timeout(Some(
            IdleTimeout::try_from(timeout).context("idle timeout")?,
        ))
        .initial_mtu(MIN_DATAGRAM)
        .min_mtu(MIN_DATAGRAM)
        .mtu_discovery_config(None)
        .keep_alive_interval(None);
    Ok(t)
}

/// rustls' provider for `group` alone, with QUIC's AEAD alone.
fn crypto_provider(group: Group) -> Arc<CryptoProvider> {
    Arc::new(CryptoProvider {
        cipher_suites: vec![provider::cipher_suite::TLS13_AES_128_GCM_SHA256],
        kx_groups: vec![group.kx()],
        ..provider::default_provider()
    })
}

/// The certificates of a configuration, issued fresh: the DTLS rows' ECDSA P-256 chain
/// or the bench's ML-DSA chain of the same shape (a CA, a server and a client leaf).
pub(super) enum Pki {
    EcdsaP256(P256Pki),
    MlDsa(MlDsaPki),
}

impl Pki {
    fn issue(signature: Signature) -> anyhow::Result<Pki> {
        Ok(match signature.ml_dsa() {
            None => Pki::EcdsaP256(P256Pki::generate()?),
            Some(level) => Pki::MlDsa(MlDsaPki::generate(level)?),
        })
    }

    /// The CA both sides trust, DER.
    fn ca(&self) -> anyhow::Result<CertificateDer<'static>> {
        Ok(CertificateDer::from(match self {
            Pki::EcdsaP256(pki) => pki.ca_cert.to_der()?,
            Pki::MlDsa(pki) => pki.ca_cert.clone(),
        }))
    }

    /// The server's (or the client's) DER chain, leaf only (the peer holds the CA), and
    /// its PKCS#8 key.
    fn identity(
        &self,
        server: bool,
    ) -> anyhow::Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
        let (cert, key) = match self {
            Pki::EcdsaP256(pki) => {
                let (cert, key) = if server {
                    (&pki.server_cert, &pki.server_key)
                } else {
                    (&pki.client_cert, &pki.client_key)
                };
                (cert.to_der()?, key.private_key_to_pkcs8()?)
            }
            Pki::MlDsa(pki) => {
                let leaf = if server { &pki.server } else { &pki.client };
                (leaf.cert.clone(), leaf.key_pkcs8().to_vec())
            }
        };
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key));
        Ok((vec![CertificateDer::from(cert)], key))
    }
}

/// The rustls configurations of both sides for `suite`.
fn tls(
    suite: QuicSuite,
    pki: &Pki,
) -> anyhow::Result<(rustls::ClientConfig, rustls::ServerConfig)> {
    let prov = crypto_provider(suite.group);
    let clock: Arc<CallerClock> = Arc::new(CallerClock);
    let mut roots = RootCertStore::empty();
    roots.add(pki.ca()?)?;
    let roots = Arc::new(roots);
    let client = rustls::ClientConfig::builder_with_details(prov.clone(), clock.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots.clone());
    let mut client = if suite.mutual {
        let (chain, key) = pki.identity(false)?;
        client.with_client_auth_cert(chain, key)?
    } else {
        client.with_no_client_auth()
    };
    client.resumption = rustls::client::Resumption::disabled();
    client.alpn_protocols = vec![ALPN.to_vec()];
    let server = rustls::ServerConfig::builder_with_details(prov.clone(), clock)
        .with_protocol_versions(&[&rustls::version::TLS13])?;
    let server = if suite.mutual {
        let verifier = WebPkiClientVerifier::builder_with_provider(roots, prov).build()?;
        server.with_client_cert_verifier(verifier)
    } else {
        server.with_no_client_auth()
    };
    let (chain, key) = pki.identity(true)?;
    let mut server = server.with_single_cert(chain, key)?;
    server.send_tls13_tickets = 0;
    server.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    server.alpn_protocols = vec![ALPN.to_vec()];
    Ok((client, server))
}

/// Both sides' configurations of one suite, built once for many handshakes.
pub struct QuicConfig {
    pub suite: QuicSuite,
    client: ClientConfig,
    server: Arc<ServerConfig>,
    endpoint: Arc<EndpointConfig>,
    /// The seed of both sides' endpoint randomness, if fixed ([`QuicConfig::with_seed`]).
    pub seed: Option<u64>,
    initial_rtt: Duration,
    handshake_timeout: Duration,
    pki: Pki,
    /// The raw operations of an ECDSA configuration; none is timed for ML-DSA.
    raw: Option<RawWork>,
    /// Clients close their connection once confirmed ([`QuicConfig::closing`]).
    closing: bool,
}

impl QuicConfig {
    /// Configurations for `suite` with a fresh certificate chain and RFC 9002's initial
    /// RTT.
    pub fn new(suite: QuicSuite) -> anyhow::Result<QuicConfig> {
        QuicConfig::build(
            suite,
            Pki::issue(suite.signature)?,
            INITIAL_RTT,
            HANDSHAKE_TIMEOUT,
        )
    }

    /// The same configurations with both sides' endpoint randomness (connection IDs,
    /// and the packet numbers quinn-proto skips at random against optimistic ACKs, RFC
    /// 9000 section 21.4) drawn from `seed`, so that every handshake has the same shape.
    /// Unseeded, about one handshake in 64 has the client skip its first 1-RTT packet
    /// number, which the server acknowledges at once (a gap, RFC 9000 section 13.2.1):
    /// a sixth flight of one small ACK, after both sides have completed. The TLS
    /// randomness (hellos, key shares) stays random; it changes no size.
    pub fn with_seed(mut self, seed: u64) -> QuicConfig {
        self.seed = Some(seed);
        self
    }

    /// The same configurations with clients that close their connection (an
    /// APPLICATION_CLOSE with code 0, RFC 9000 section 19.19) in the datagram that
    /// acknowledges the server's HANDSHAKE_DONE, as a client that has finished does: the
    /// load test's clients, which leave once confirmed. A server whose HANDSHAKE_DONE is
    /// never acknowledged probes for it on its own timer until its idle timeout (RFC 9002
    /// section 6.2), work of the gateway worker outside every handshake; closed, it only
    /// drains (RFC 9000 section 10.2.2). The bearer runs do not close: their flights end
    /// at confirmation.
    pub fn closing(mut self) -> QuicConfig {
        self.closing = true;
        self
    }

    /// The endpoint randomness of one side: seeded per side if a seed is fixed.
    fn rng_seed(&self, server: bool) -> Option<[u8; 32]> {
        self.seed.map(|s| {
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&s.to_le_bytes());
            bytes[8] = u8::from(server);
            bytes
        })
    }

    /// The same certificates with another initial RTT (a bearer's own round trip, so
    /// that the first probe timeout does not fire before a slow link could answer).
    pub fn with_initial_rtt(self, initial_rtt: Duration) -> anyhow::Result<QuicConfig> {
        let (seed, closing) = (self.seed, self.closing);
        let c = QuicConfig::build(
            self.suite,
            self.pki,
            initial_rtt.max(Duration::from_millis(1)),
            self.handshake_timeout,
        )?;
        Ok(QuicConfig { seed, closing, ..c })
    }

    /// The same certificates with another bound on a handshake that hears nothing.
    pub fn with_handshake_timeout(self, timeout: Duration) -> anyhow::Result<QuicConfig> {
        let (seed, closing) = (self.seed, self.closing);
        let c = QuicConfig::build(self.suite, self.pki, self.initial_rtt, timeout)?;
        Ok(QuicConfig { seed, closing, ..c })
    }

    fn build(
        suite: QuicSuite,
        pki: Pki,
        initial_rtt: Duration,
        handshake_timeout: Duration,
    ) -> anyhow::Result<QuicConfig> {
        let transport = Arc::new(transport(initial_rtt, handshake_timeout)?);
        let (client_tls, server_tls) = tls(suite, &pki)?;
        let mut client = ClientConfig::new(Arc::new(
            QuicClientConfig::try_from(client_tls).map_err(|e| anyhow!("QUIC client: {e}"))?,
        ));
        client.transport_config(transport.clone());
        let mut server = ServerConfig::with_crypto(Arc::new(
            QuicServerConfig::try_from(server_tls).map_err(|e| anyhow!("QUIC server: {e}"))?,
        ));
        let mut tokens = ValidationTokenConfig::default();
        tokens.sent(0);
        server
            .transport_config(transport)
            .validation_token_config(tokens)
            .migration(false)
            .time_source(Arc::new(CallerClock));
        Ok(QuicConfig {
            suite,
            client,
            server: Arc::new(server),
            endpoint: Arc::new(EndpointConfig::default()),
            seed: None,
            initial_rtt,
            handshake_timeout,
            raw: match &pki {
                Pki::EcdsaP256(p256) => Some(RawWork::new(suite, p256)?),
                Pki::MlDsa(_) => None,
            },
            pki,
            closing: false,
        })
    }

    /// The certificates both sides load.
    #[cfg(test)]
    pub(super) fn pki(&self) -> &Pki {
        &self.pki
    }

    /// The RTT both sides assume before their first sample.
    pub fn initial_rtt(&self) -> Duration {
        self.initial_rtt
    }

    /// The idle timeout that ends a handshake hearing nothing (both sides).
    pub fn handshake_timeout(&self) -> Duration {
        self.handshake_timeout
    }

    /// Times the raw public-key work of one handshake in aws-lc-rs, server then client:
    /// (server ns, client ns) of thread CPU ([`super::raw`]). ECDSA configurations only:
    /// no raw ML-DSA operation is timed, and a bound without it would flatter them.
    pub fn raw_ops(&self) -> anyhow::Result<(u64, u64)> {
        let raw = self.raw.as_ref().ok_or_else(|| {
            anyhow!(
                "{}: no raw {} operation is timed",
                self.suite,
                self.suite.signature.label()
            )
        })?;
        Ok((raw.server_ns()?, raw.client_ns()?))
    }

    /// A fresh client (it connects when started).
    pub fn client(&self) -> anyhow::Result<QuicEndpoint> {
        let endpoint = Endpoint::new(self.endpoint.clone(), None, false, self.rng_seed(false));
        let mut client = QuicEndpoint::new(self.suite, endpoint, Some(self.client.clone()));
        client.close_once_confirmed = self.closing;
        Ok(client)
    }

    /// A fresh server, waiting for one client.
    pub fn server(&self) -> anyhow::Result<QuicEndpoint> {
        let endpoint = Endpoint::new(
            self.endpoint.clone(),
            Some(self.server.clone()),
            false,
            self.rng_seed(true),
        );
        Ok(QuicEndpoint::new(self.suite, endpoint, None))
    }
}
