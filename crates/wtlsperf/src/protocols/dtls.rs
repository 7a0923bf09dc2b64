//! DTLS 1.2 through OpenSSL (`SslMethod::dtls()`), as a datagram [`Endpoint`].
//!
//! Why these settings:
//! * Suites: TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8 (P-256, certificates) and
//!   TLS_PSK_WITH_AES_128_CCM_8, the two mandatory-to-implement suites of RFC 7925 (the
//!   TLS/DTLS IoT profile). OpenSSL 3.0 cannot do raw public keys (RFC 7250 arrived in
//!   3.2), so the certificate case uses a small chain: one P-256 CA, leaf certificates
//!   with a short subject and no extensions beyond what verification needs.
//! * Cookie exchange (HelloVerifyRequest) on: RFC 6347 section 4.2.1 says servers SHOULD
//!   use it, and deployed CoAP servers do; it costs one round trip, which WTLS does not pay.
//! * No session cache or tickets: every handshake is a full one, as in the WTLS runs.
//! * Retransmission: OpenSSL's own DTLS timer, doubling from its initial value up to 60 s
//!   (RFC 6347 section 4.2.4.1). The initial value is set through `DTLS_set_timer_cb`:
//!   RFC 7925 section 11 recommends 9 s for constrained links instead of the 1 s default,
//!   which would fire spuriously on GSM CSD and NB-IoT.
//! * MTU 1280 (the IPv6 minimum; every flight here fits in one datagram).
//!
//! OpenSSL processes a whole received flight in one call and does not expose per-message
//! timing, so per-message costs are not reported for DTLS: only per datagram (the jobs)
//! and per handshake.

use std::ffi::{c_long, c_uint, c_void};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{anyhow, bail};
use foreign_types::ForeignTypeRef;
use openssl::bn::{BigNum, BigNumContext, MsbOption};
use openssl::derive::Deriver;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::ecdsa::EcdsaSig;
use openssl::ex_data::Index;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private, Public};
use openssl::ssl::{
    ErrorCode, Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode,
    SslStream, SslVerifyMode,
};
use openssl::x509::extension::{BasicConstraints, SubjectAlternativeName};
use openssl::x509::{X509Name, X509};

use super::pipe::DatagramPipe;
use super::{Endpoint, Suite};
use crate::setup::thread_cpu_ns;

/// UDP payload limit OpenSSL fragments to.
pub const DTLS_MTU: u32 = 1280;

/// Initial DTLS retransmission timer recommended for constrained links (RFC 7925
/// section 11).
pub const RFC7925_INITIAL_TIMER: Duration = Duration::from_secs(9);

/// Ceiling of the doubling timer (RFC 6347 section 4.2.4.1: at least 60 s).
const MAX_TIMER: Duration = Duration::from_secs(60);

/// `DTLS_CTRL_GET_TIMEOUT` and `DTLS_CTRL_HANDLE_TIMEOUT` of OpenSSL's ssl.h: the
/// `DTLSv1_get_timeout`/`DTLSv1_handle_timeout` macros are `SSL_ctrl` calls with these.
const DTLS_CTRL_GET_TIMEOUT: i32 = 73;
const DTLS_CTRL_HANDLE_TIMEOUT: i32 = 74;

extern "C" {
    /// OpenSSL >= 1.1.1: the callback that chooses each next DTLS timer value (µs).
    fn DTLS_set_timer_cb(
        s: *mut openssl_sys::SSL,
        cb: Option<unsafe extern "C" fn(*mut openssl_sys::SSL, c_uint) -> c_uint>,
    );
}

/// Where each connection keeps its initial timer for [`timer_cb`].
fn timer_index() -> anyhow::Result<Index<Ssl, Duration>> {
    static INDEX: OnceLock<Index<Ssl, Duration>> = OnceLock::new();
    if let Some(i) = INDEX.get() {
        return Ok(*i);
    }
    let i = Ssl::new_ex_index::<Duration>()?;
    Ok(*INDEX.get_or_init(|| i))
}

/// OpenSSL asks for the first timer with `timer_us == 0` and for each next one with the
/// previous value: the connection's initial value, then doubling up to [`MAX_TIMER`].
unsafe extern "C" fn timer_cb(ssl: *mut openssl_sys::SSL, timer_us: c_uint) -> c_uint {
    let initial = timer_index()
        .ok()
        .and_then(|i| {
            // SAFETY: OpenSSL calls this with a live SSL of one of our connections.
            unsafe { openssl::ssl::SslRef::from_ptr(ssl) }
                .ex_data(i)
                .copied()
        })
        .unwrap_or(Duration::from_secs(1));
    let next = if timer_us == 0 {
        initial.as_micros() as u64
    } else {
        (u64::from(timer_us) * 2).min(MAX_TIMER.as_micros() as u64)
    };
    next.min(u64::from(c_uint::MAX)) as c_uint
}

/// A P-256 key pair.
fn p256_key() -> anyhow::Result<PKey<Private>> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    Ok(PKey::from_ec_key(EcKey::generate(&group)?)?)
}

/// A small P-256 certificate chain: one CA, a server and a client leaf.
#[derive(Clone)]
pub struct P256Pki {
    pub ca_key: PKey<Private>,
    pub ca_cert: X509,
    pub server_key: PKey<Private>,
    pub server_cert: X509,
    pub client_key: PKey<Private>,
    pub client_cert: X509,
}

impl P256Pki {
    /// Issues the chain. The server leaf names `localhost` in its subjectAltName, which
    /// rustls' WebPKI verifier requires; nothing else is added.
    pub fn generate() -> anyhow::Result<P256Pki> {
        let ca_key = p256_key()?;
        let ca_cert = issue("ca", &ca_key, None, None)?;
        let server_key = p256_key()?;
        let server_cert = issue(
            "srv",
            &server_key,
            Some((&ca_cert, &ca_key)),
            Some("localhost"),
        )?;
        let client_key = p256_key()?;
        let client_cert = issue("cli", &client_key, Some((&ca_cert, &ca_key)), None)?;
        Ok(P256Pki {
            ca_key,
            ca_cert,
            server_key,
            server_cert,
            client_key,
            client_cert,
        })
    }
}

/// One X.509 v3 certificate: self-signed CA when `issuer` is `None`.
pub fn issue(
    cn: &str,
    key: &PKey<Private>,
    issuer: Option<(&X509, &PKey<Private>)>,
    dns: Option<&str>,
) -> anyhow::Result<X509> {
    let mut name = X509Name::builder()?;
    name.append_entry_by_nid(Nid::COMMONNAME, cn)?;
    let name = name.build();
    let mut b = X509::builder()?;
    b.set_version(2)?;
    let mut serial = BigNum::new()?;
    serial.rand(63, MsbOption::MAYBE_ZERO, false)?;
    let serial = serial.to_asn1_integer()?;
    b.set_serial_number(&serial)?;
    b.set_subject_name(&name)?;
    b.set_pubkey(key)?;
    let (from, until) = (
        openssl::asn1::Asn1Time::days_from_now(0)?,
        openssl::asn1::Asn1Time::days_from_now(365)?,
    );
    b.set_not_before(&from)?;
    b.set_not_after(&until)?;
    match issuer {
        None => {
            b.set_issuer_name(&name)?;
            b.append_extension(BasicConstraints::new().critical().ca().build()?)?;
        }
        Some((ca, _)) => b.set_issuer_name(ca.subject_name())?,
    }
    if let Some(dns) = dns {
        let san = SubjectAlternativeName::new()
            .dns(dns)
            .build(&b.x509v3_context(issuer.map(|i| &**i.0), None))?;
        b.append_extension(san)?;
    }
    let signer = issuer.map(|i| i.1).unwrap_or(key);
    b.sign(signer, MessageDigest::sha256())?;
    Ok(b.build())
}

/// The pre-shared key and identity of the PSK suite.
const PSK_IDENTITY: &[u8] = b"wtlsperf";

/// Server and client contexts of one suite, built once for many handshakes.
pub struct DtlsConfig {
    pub suite: Suite,
    client_ctx: SslContext,
    server_ctx: SslContext,
    pki: P256Pki,
    /// Initial retransmission timer of both sides.
    pub initial_timer: Duration,
}

impl DtlsConfig {
    /// Contexts for `suite` with the RFC 7925 initial timer.
    pub fn new(suite: Suite) -> anyhow::Result<DtlsConfig> {
        let pki = P256Pki::generate()?;
        let mut psk = [0u8; 16];
        openssl::rand::rand_bytes(&mut psk)?;
        let mut cookie = [0u8; 16];
        openssl::rand::rand_bytes(&mut cookie)?;
        Ok(DtlsConfig {
            suite,
            client_ctx: context(suite, &pki, false, psk, cookie)?,
            server_ctx: context(suite, &pki, true, psk, cookie)?,
            pki,
            initial_timer: RFC7925_INITIAL_TIMER,
        })
    }

    /// The same contexts with another initial timer (tests on a fast lossy link).
    pub fn with_initial_timer(mut self, t: Duration) -> DtlsConfig {
        self.initial_timer = t;
        self
    }

    fn endpoint(&self, server: bool) -> anyhow::Result<DtlsEndpoint> {
        let ctx = if server {
            &self.server_ctx
        } else {
            &self.client_ctx
        };
        let mut ssl = Ssl::new(ctx)?;
        ssl.set_mtu(DTLS_MTU)?;
        ssl.set_ex_data(timer_index()?, self.initial_timer);
        // SAFETY: the SSL is live and ours; the callback only reads its ex_data.
        unsafe { DTLS_set_timer_cb(ssl.as_ptr(), Some(timer_cb)) };
        let stream = SslStream::new(ssl, DatagramPipe::default())?;
        Ok(DtlsEndpoint {
            stream,
            server,
            complete: false,
            retransmissions: 0,
            timer_shift: Duration::ZERO,
        })
    }

    /// A fresh client connection.
    pub fn client(&self) -> anyhow::Result<DtlsEndpoint> {
        self.endpoint(false)
    }

    /// A fresh server connection.
    pub fn server(&self) -> anyhow::Result<DtlsEndpoint> {
        self.endpoint(true)
    }

    /// Times the raw P-256 operations of one handshake through OpenSSL, server then
    /// client: (server ns, client ns). `None` for PSK, which has none.
    pub fn raw_ops(&self) -> anyhow::Result<Option<(u64, u64)>> {
        match self.suite {
            Suite::DtlsEcdheEcdsa { mutual } => {
                Ok(Some((self.raw_server(mutual)?, self.raw_client(mutual)?)))
            }
            _ => Ok(None),
        }
    }

    fn raw_server(&self, mutual: bool) -> anyhow::Result<u64> {
        let peer_point = ephemeral_point()?;
        let (cert_digest, cv_digest) = ([0x11u8; 32], [0x22u8; 32]);
        let cv_sig = EcdsaSig::sign(&cv_digest, &*self.pki.client_key.ec_key()?)?;
        let t0 = thread_cpu_ns();
        ecdhe(&peer_point)?;
        let ske = EcdsaSig::sign(&cert_digest, &*self.pki.server_key.ec_key()?)?;
        std::hint::black_box(&ske);
        if mutual {
            verify_chain_and_signature(
                &self.pki.client_cert,
                &self.pki.ca_cert,
                &cv_digest,
                &cv_sig,
            )?;
        }
        Ok(thread_cpu_ns().saturating_sub(t0))
    }

    fn raw_client(&self, mutual: bool) -> anyhow::Result<u64> {
        let peer_point = ephemeral_point()?;
        let digest = [0x33u8; 32];
        let ske_sig = EcdsaSig::sign(&digest, &*self.pki.server_key.ec_key()?)?;
        let t0 = thread_cpu_ns();
        verify_chain_and_signature(&self.pki.server_cert, &self.pki.ca_cert, &digest, &ske_sig)?;
        ecdhe(&peer_point)?;
        if mutual {
            let cv = EcdsaSig::sign(&digest, &*self.pki.client_key.ec_key()?)?;
            std::hint::black_box(&cv);
        }
        Ok(thread_cpu_ns().saturating_sub(t0))
    }
}

/// A peer's ephemeral P-256 point as it arrives on the wire (uncompressed).
pub fn ephemeral_point() -> anyhow::Result<Vec<u8>> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    let key = EcKey::generate(&group)?;
    let mut ctx = BigNumContext::new()?;
    Ok(key
        .public_key()
        .to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)?)
}

/// ECDHE as a server or client does it: a fresh key pair, the peer's point decoded and
/// checked, the shared secret derived.
pub fn ecdhe(peer_point: &[u8]) -> anyhow::Result<()> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    let ours = PKey::from_ec_key(EcKey::generate(&group)?)?;
    let mut ctx = BigNumContext::new()?;
    let point = EcPoint::from_bytes(&group, peer_point, &mut ctx)?;
    let peer: PKey<Public> = PKey::from_ec_key(EcKey::from_public_key(&group, &point)?)?;
    let mut d = Deriver::new(&ours)?;
    d.set_peer(&peer)?;
    std::hint::black_box(d.derive_to_vec()?);
    Ok(())
}

/// The certificate's CA signature and a handshake signature under its key, verified.
fn verify_chain_and_signature(
    cert: &X509,
    ca: &X509,
    digest: &[u8],
    sig: &EcdsaSig,
) -> anyhow::Result<()> {
    if !cert.verify(&*ca.public_key()?)? {
        bail!("certificate signature did not verify");
    }
    if !sig.verify(digest, &*cert.public_key()?.ec_key()?)? {
        bail!("handshake signature did not verify");
    }
    Ok(())
}

/// One side's OpenSSL context for `suite`.
fn context(
    suite: Suite,
    pki: &P256Pki,
    server: bool,
    psk: [u8; 16],
    cookie: [u8; 16],
) -> anyhow::Result<SslContext> {
    let mut b = SslContext::builder(SslMethod::dtls())?;
    b.set_min_proto_version(Some(openssl::ssl::SslVersion::DTLS1_2))?;
    b.set_max_proto_version(Some(openssl::ssl::SslVersion::DTLS1_2))?;
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    // NO_QUERY_MTU: use the MTU set on each connection instead of asking the BIO, which
    // in memory knows none (OpenSSL would fall back to its 256-byte minimum).
    b.set_options(SslOptions::NO_TICKET | SslOptions::NO_QUERY_MTU);
    match suite {
        Suite::DtlsEcdheEcdsa { mutual } => certificate_mode(&mut b, pki, server, mutual)?,
        Suite::DtlsPsk => psk_mode(&mut b, server, psk)?,
        Suite::EdhocMethod3Suite2 => bail!("EDHOC is not a DTLS suite"),
    }
    if server {
        b.set_options(SslOptions::COOKIE_EXCHANGE);
        b.set_cookie_generate_cb(move |_, buf| {
            let n = cookie.len().min(buf.len());
            buf[..n].copy_from_slice(&cookie[..n]);
            Ok(n)
        });
        b.set_cookie_verify_cb(move |_, got| got == cookie);
    }
    Ok(b.build())
}

fn certificate_mode(
    b: &mut SslContextBuilder,
    pki: &P256Pki,
    server: bool,
    mutual: bool,
) -> anyhow::Result<()> {
    b.set_cipher_list("ECDHE-ECDSA-AES128-CCM8")?;
    b.set_groups_list("P-256")?;
    b.set_sigalgs_list("ECDSA+SHA256")?;
    b.cert_store_mut().add_cert(pki.ca_cert.clone())?;
    let (key, cert) = if server {
        (&pki.server_key, &pki.server_cert)
    } else {
        (&pki.client_key, &pki.client_cert)
    };
    if server || mutual {
        b.set_private_key(key)?;
        b.set_certificate(cert)?;
    }
    let mode = match (server, mutual) {
        (false, _) => SslVerifyMode::PEER,
        (true, true) => SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT,
        (true, false) => SslVerifyMode::NONE,
    };
    b.set_verify(mode);
    Ok(())
}

fn psk_mode(b: &mut SslContextBuilder, server: bool, psk: [u8; 16]) -> anyhow::Result<()> {
    b.set_cipher_list("PSK-AES128-CCM8")?;
    if server {
        b.set_psk_server_callback(move |_, identity, out| {
            if identity != Some(PSK_IDENTITY) {
                return Ok(0);
            }
            out[..psk.len()].copy_from_slice(&psk);
            Ok(psk.len())
        });
    } else {
        b.set_psk_client_callback(move |_, _hint, identity, out| {
            identity[..PSK_IDENTITY.len()].copy_from_slice(PSK_IDENTITY);
            identity[PSK_IDENTITY.len()] = 0;
            out[..psk.len()].copy_from_slice(&psk);
            Ok(psk.len())
        });
    }
    Ok(())
}

/// One DTLS connection over a [`DatagramPipe`].
pub struct DtlsEndpoint {
    stream: SslStream<DatagramPipe>,
    server: bool,
    complete: bool,
    retransmissions: u32,
    /// How much later than OpenSSL's own clock says the running timer is due: the
    /// driver held the flight that started it (see [`Endpoint::delay_timers`]).
    timer_shift: Duration,
}

impl DtlsEndpoint {
    /// Drives OpenSSL once: the handshake until it completes, then a read, which makes
    /// OpenSSL answer a retransmitted final flight of the peer.
    fn step(&mut self) -> anyhow::Result<Vec<Vec<u8>>> {
        let r = if self.complete {
            let mut buf = [0u8; 64];
            self.stream.ssl_read(&mut buf).map(|_| ())
        } else if self.server {
            self.stream.accept()
        } else {
            self.stream.connect()
        };
        match r {
            Ok(()) => self.complete = true,
            Err(e) if e.code() == ErrorCode::WANT_READ => {}
            Err(e) => {
                let who = if self.server { "server" } else { "client" };
                return Err(anyhow!("DTLS {who}: {e}"));
            }
        }
        Ok(self.stream.get_mut().take_outbox())
    }

    fn ctrl(&self, cmd: i32, parg: *mut c_void) -> c_long {
        // SAFETY: SSL_ctrl on our live SSL with a command that reads or writes at most
        // the timeval `parg` points to (or nothing for a null pointer).
        unsafe { openssl_sys::SSL_ctrl(self.stream.ssl().as_ptr(), cmd, 0, parg) }
    }
}

impl Endpoint for DtlsEndpoint {
    fn start(&mut self, _now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        if self.server {
            return Ok(Vec::new());
        }
        self.step()
    }

    fn on_datagram(&mut self, datagram: &[u8], _now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        self.stream.get_mut().inbox.push_back(datagram.to_vec());
        self.step()
    }

    fn next_timeout(&mut self, now: Duration) -> Option<Duration> {
        let mut tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        };
        let running = self.ctrl(
            DTLS_CTRL_GET_TIMEOUT,
            (&mut tv as *mut libc::timeval).cast(),
        );
        (running > 0).then(|| {
            now + self.timer_shift
                + Duration::from_secs(tv.tv_sec.max(0) as u64)
                + Duration::from_micros(tv.tv_usec.max(0) as u64)
        })
    }

    fn on_timer(&mut self, _now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        if self.ctrl(DTLS_CTRL_HANDLE_TIMEOUT, std::ptr::null_mut()) < 0 {
            bail!("DTLS retransmission limit reached");
        }
        // OpenSSL restarts its (doubled) timer now, as the datagrams leave.
        self.timer_shift = Duration::ZERO;
        let out = self.stream.get_mut().take_outbox();
        self.retransmissions += out.len() as u32;
        Ok(out)
    }

    fn delay_timers(&mut self, by: Duration) {
        self.timer_shift = by;
    }

    fn is_complete(&self) -> bool {
        self.complete
    }

    fn retransmissions(&self) -> u32 {
        self.retransmissions
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::run_in_memory;

    fn in_memory(suite: Suite) -> crate::protocols::MemoryRun {
        let cfg = DtlsConfig::new(suite).unwrap();
        run_in_memory(cfg.client().unwrap(), || cfg.server()).unwrap()
    }

    #[test]
    fn ecdhe_ecdsa_handshake_completes_in_memory_with_the_cookie_round_trip() {
        let run = in_memory(Suite::DtlsEcdheEcdsa { mutual: false });
        // CH, HVR, CH+cookie, server flight, client flight, server CCS+Finished.
        assert_eq!(run.flights().len(), 6, "{:?}", run.log);
        assert!(run.server_cpu_ns > 0);
    }

    #[test]
    fn mutual_and_psk_handshakes_complete_in_memory() {
        let mutual = in_memory(Suite::DtlsEcdheEcdsa { mutual: true });
        let psk = in_memory(Suite::DtlsPsk);
        assert_eq!(psk.flights().len(), 6);
        // The certificates and signatures make the mutual handshake several times
        // larger than the PSK one.
        assert!(
            mutual.bytes() > 2 * psk.bytes(),
            "{} vs {}",
            mutual.bytes(),
            psk.bytes()
        );
    }

    #[test]
    fn raw_operations_are_timed_for_certificates_only() {
        let cfg = DtlsConfig::new(Suite::DtlsEcdheEcdsa { mutual: true }).unwrap();
        let (s, c) = cfg.raw_ops().unwrap().unwrap();
        assert!(s > 0 && c > 0);
        let psk = DtlsConfig::new(Suite::DtlsPsk).unwrap();
        assert_eq!(psk.raw_ops().unwrap(), None);
    }

    #[test]
    fn the_first_timer_is_rfc_7925s_and_a_held_flight_shifts_it() {
        let cfg = DtlsConfig::new(Suite::DtlsPsk).unwrap();
        let mut client = cfg.client().unwrap();
        assert_eq!(client.next_timeout(Duration::ZERO), None);
        client.start(Duration::ZERO).unwrap();
        let due = client.next_timeout(Duration::ZERO).unwrap();
        assert!(
            due > Duration::from_secs(8) && due <= RFC7925_INITIAL_TIMER,
            "{due:?}"
        );
        client.delay_timers(Duration::from_secs(3));
        let shifted = client.next_timeout(Duration::ZERO).unwrap();
        assert!(shifted > Duration::from_secs(11), "{shifted:?}");
    }

    #[test]
    fn every_flight_fits_one_datagram_at_the_1280_byte_mtu() {
        // Without SSL_OP_NO_QUERY_MTU OpenSSL asks the memory BIO, gets nothing and falls
        // back to 256-byte datagrams; a reordered fragment then stalls the handshake
        // until a retransmission.
        let run = in_memory(Suite::DtlsEcdheEcdsa { mutual: true });
        assert_eq!(run.log.len(), run.flights().len(), "{:?}", run.log);
        assert!(run.log.iter().all(|d| d.bytes <= DTLS_MTU as usize));
    }

    #[test]
    fn a_garbage_datagram_is_an_error_not_a_panic() {
        let cfg = DtlsConfig::new(Suite::DtlsPsk).unwrap();
        let mut server = cfg.server().unwrap();
        let _ = server.on_datagram(&[0x16, 0xfe, 0xfd, 0, 0, 0], Duration::ZERO);
        assert!(!server.is_complete());
    }
}
#[cfg(test)]
mod probe_tiny {
    use super::*;
    #[test]
    fn tiny_timer() {
        let cfg = DtlsConfig::new(Suite::DtlsPsk)
            .unwrap()
            .with_initial_timer(Duration::from_micros(1));
        let mut client = cfg.client().unwrap();
        let r = client.start(Duration::ZERO);
        eprintln!(
            "start: {:?}",
            r.map(|v| v.iter().map(|d| d.len()).collect::<Vec<_>>())
        );
    }
}
