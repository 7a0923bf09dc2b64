//! DTLS 1.2 through OpenSSL (`SslMethod::dtls()`), on the handshake spine
//! ([`Handshake`]).
//!
//! Why these settings:
//! * Suites: TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8 (P-256, certificates) and
//!   TLS_PSK_WITH_AES_128_CCM_8, the two mandatory-to-implement suites of RFC 7925 (the
//!   TLS/DTLS IoT profile). OpenSSL 3.0 cannot do raw public keys (RFC 7250 arrived in
//!   3.2), so the certificate case uses a small chain: one P-256 CA, leaf certificates
//!   with a short subject and no extensions beyond what verification needs. Each side
//!   sends its leaf certificate only, as RFC 7925 section 4.4.2 has a constrained
//!   deployment do: the trust anchor is provisioned, so the CA's certificate is not
//!   sent (OpenSSL would otherwise build the chain from its store and send the
//!   self-signed CA in every Certificate message: `SSL_MODE_NO_AUTO_CHAIN` stops it).
//! * Cookie exchange (HelloVerifyRequest) on by default: RFC 6347 section 4.2.1 says
//!   servers SHOULD use it, and deployed CoAP servers do; it costs one round trip, which
//!   WTLS does not pay. [`DtlsConfig::without_cookie_exchange`] leaves it out, so both
//!   ways are measured.
//! * No session cache or tickets: every handshake is a full one, as in the WTLS runs.
//! * Retransmission: RFC 6347 section 4.2.4.1's schedule, doubling from its initial
//!   value up to 60 s, kept by the adapter in the caller's (virtual) time. RFC 7925
//!   section 11 recommends 9 s initially for constrained links instead of the 1 s
//!   default, which would fire spuriously on GSM CSD and NB-IoT; that is the default
//!   here ([`RFC7925_INITIAL_TIMER`]).
//!
//! ## OpenSSL's timer under virtual time
//!
//! OpenSSL 3.0 keeps its DTLS timer in real time: `dtls1_start_timer` sets
//! `next_timeout` to the wall clock plus a duration, `dtls1_get_timeout` reads the wall
//! clock again (and calls anything within 15 ms expired), and nothing in the public
//! API sets `next_timeout`. Two places act on expiry: `DTLSv1_handle_timeout` (which
//! does nothing unless the real timer expired), and `dtls1_read_failed`, which
//! retransmits by itself whenever a read finds no datagram while the real timer has
//! expired. That second path rules out the obvious mapping (a `DTLS_set_timer_cb`
//! duration of a microsecond, so that the real timer is always expired): every call
//! that ends waiting would retransmit, again and again, until OpenSSL's limit of 12
//! fails the handshake (tried: the first `SSL_connect` ends in "read timeout expired").
//!
//! A caller passing real time ([`TimeBase::Real`], the UDP drivers) has none of this:
//! OpenSSL's timer then runs the protocol's schedule itself, as it always did, and
//! the adapter's deadline only tells the driver when to call. Under virtual time
//! ([`TimeBase::Virtual`], the in-memory pair) the adapter keeps two timers. The protocol's deadline is its own, in the
//! caller's time ([`Handshake::deadline`]): set when a flight leaves, doubled at each
//! retransmission, dropped when OpenSSL stops its own timer (the peer's flight
//! arrived). OpenSSL's timer only has to agree on when it may act: `DTLS_set_timer_cb`
//! gives it [`OPENSSL_TIMER`], 15 ms plus [`CALL_GUARD`] (500 ms), every time. Within one call
//! (a flight computed and sent, then the read that finds nothing) it is then never
//! expired, so OpenSSL never retransmits on its own; at the protocol's deadline the
//! adapter calls `DTLSv1_handle_timeout`, and if less than [`CALL_GUARD`] of real time
//! has passed since the flight left (a virtual clock jumps; a real one at a 1 s
//! deadline never does), it waits in steps of a millisecond until OpenSSL agrees. No
//! clock is read here; OpenSSL reads its own. What OpenSSL retransmits is its own
//! flight with fresh record numbers, as on a real network. The price: a run under
//! virtual time waits up to [`CALL_GUARD`] of real time per retransmission, and a stale
//! datagram arriving more than [`OPENSSL_TIMER`] after a flight left (a duplicate, in a
//! real run) makes OpenSSL retransmit early, as its own timer would have had it been
//! that short.
//! * MTU 1280 (the IPv6 minimum; every flight here fits in one datagram).
//!
//! OpenSSL processes a whole received flight in one call and does not expose per-message
//! timing, so per-message costs are not reported for DTLS: only per datagram (the jobs)
//! and per handshake.

use std::ffi::{c_long, c_uint, c_void};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::bail;
use foreign_types::ForeignTypeRef;
use openssl::bn::{BigNum, BigNumContext, MsbOption};
use openssl::derive::Deriver;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::ecdsa::EcdsaSig;
use openssl::error::ErrorStack;
use openssl::ex_data::Index;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private, Public};
use openssl::ssl::{
    ErrorCode, Ssl, SslContext, SslContextBuilder, SslMethod, SslMode, SslOptions,
    SslSessionCacheMode, SslStream, SslVerifyMode,
};
use openssl::x509::extension::{BasicConstraints, SubjectAlternativeName};
use openssl::x509::{X509Name, X509};

use wtlsperf_spine::{Failure, Handshake, Now, ProtocolId, Role, Status, Step};

use super::pipe::DatagramPipe;
use super::Suite;
use crate::setup::thread_cpu_ns;

/// UDP payload limit OpenSSL fragments to.
pub const DTLS_MTU: u32 = 1280;

/// Initial DTLS retransmission timer recommended for constrained links (RFC 7925
/// section 11).
pub const RFC7925_INITIAL_TIMER: Duration = Duration::from_secs(9);

/// Ceiling of the doubling timer (RFC 6347 section 4.2.4.1: at least 60 s).
const MAX_TIMER: Duration = Duration::from_secs(60);

/// Retransmissions OpenSSL makes before a DTLS handshake fails: its `DTLS1_MAX_TIMEOUTS`
/// (12; the 13th expiry fails the handshake).
pub const MAX_RETRANSMISSIONS: u32 = 12;

/// DTLS 1.2's timers as the bench runs them (`DtlsConfig::new`; the loss curves'
/// equal-timer variant changes the first timer with [`DtlsConfig::with_initial_timer`]).
pub fn retransmission_timers() -> super::RetransmissionTimers {
    super::RetransmissionTimers {
        initial_s: RFC7925_INITIAL_TIMER.as_secs_f64(),
        initial_max_s: RFC7925_INITIAL_TIMER.as_secs_f64(),
        backoff: 2.0,
        ceiling_s: Some(MAX_TIMER.as_secs_f64()),
        max_retransmissions: MAX_RETRANSMISSIONS,
        source: "RFC 6347 section 4.2.4.1 (whole flights, doubling, a ceiling of at least 60 s) with RFC 7925 section 11's 9 s first timer for constrained links; OpenSSL 3.0 fails the handshake after 12 timeouts",
    }
}

/// DTLS 1.2's forward secrecy: the ECDHE suite's ephemeral keys give it; the PSK suite
/// derives every key from the pre-shared key alone.
pub fn forward_secrecy(suite: Suite) -> super::ForwardSecrecy {
    match suite {
        Suite::DtlsPsk => super::ForwardSecrecy {
            holds: false,
            why: "PSK without (EC)DHE: every key derives from the pre-shared key",
        },
        _ => super::ForwardSecrecy {
            holds: true,
            why: "ephemeral ECDHE keys on both sides",
        },
    }
}

/// Real time that may pass between a flight leaving and the read that finds no answer
/// without OpenSSL calling its timer expired (see the module's documentation). Under
/// the in-memory pair that span holds the peer's whole turn, so it is sized for a debug
/// build on a loaded 2-core machine (25 ms was exceeded there, and OpenSSL then
/// retransmitted on its own until the handshake failed); a virtual retransmission
/// waits for it in real time.
pub const CALL_GUARD: Duration = Duration::from_millis(500);

/// The real duration OpenSSL's timer always gets: OpenSSL calls anything within 15 ms
/// of its expiry expired already.
pub const OPENSSL_TIMER: Duration = Duration::from_millis(15 + 500);

/// How long a retransmission waits at most for OpenSSL to agree its timer expired.
const EXPIRY_WAIT_LIMIT: u32 = 1_000;

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

/// Whose clock the caller's time is, which decides what OpenSSL's timer is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBase {
    /// The caller passes real readings (a UDP driver): OpenSSL's timer runs the
    /// protocol's own schedule, so its expiry and the caller's deadline agree.
    Real,
    /// The caller's time is virtual (the in-memory pair): OpenSSL's timer is always
    /// [`OPENSSL_TIMER`] (see the module's documentation).
    Virtual,
}

/// What [`timer_cb`] needs of a connection.
#[derive(Debug, Clone, Copy)]
struct TimerSetting {
    base: TimeBase,
    initial: Duration,
}

/// Where each connection keeps its [`TimerSetting`] for [`timer_cb`].
fn timer_index() -> anyhow::Result<Index<Ssl, TimerSetting>> {
    static INDEX: OnceLock<Index<Ssl, TimerSetting>> = OnceLock::new();
    if let Some(i) = INDEX.get() {
        return Ok(*i);
    }
    let i = Ssl::new_ex_index::<TimerSetting>()?;
    Ok(*INDEX.get_or_init(|| i))
}

/// OpenSSL asks for the first timer of a flight with `timer_us == 0` and for each next
/// one with the previous value. Under [`TimeBase::Real`]: the initial value, then
/// doubling up to [`MAX_TIMER`]; under [`TimeBase::Virtual`]: [`OPENSSL_TIMER`].
unsafe extern "C" fn timer_cb(ssl: *mut openssl_sys::SSL, timer_us: c_uint) -> c_uint {
    let setting = timer_index().ok().and_then(|i| {
        // SAFETY: OpenSSL calls this with a live SSL of one of our connections.
        unsafe { openssl::ssl::SslRef::from_ptr(ssl) }
            .ex_data(i)
            .copied()
    });
    let next = match setting {
        Some(TimerSetting {
            base: TimeBase::Real,
            initial,
        }) if timer_us == 0 => initial.as_micros() as u64,
        Some(TimerSetting {
            base: TimeBase::Real,
            ..
        }) => (u64::from(timer_us) * 2).min(MAX_TIMER.as_micros() as u64),
        _ => OPENSSL_TIMER.as_micros() as u64,
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
    // Valid from an hour back, as CAs backdate: a handshake whose time was read a moment
    // before the certificate was made (the evaluation reads its `Now` once, then builds
    // configurations) must not find it not yet valid when a second boundary falls
    // between the two (wolfSSL's ASN_BEFORE_DATE_E, seen under load).
    let issued = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let from =
        openssl::asn1::Asn1Time::from_unix(i64::try_from(issued)?.saturating_sub(3600) as _)?;
    let until = openssl::asn1::Asn1Time::days_from_now(365)?;
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
    /// Whose time the callers pass ([`TimeBase::Virtual`] unless set).
    pub time_base: TimeBase,
}

impl DtlsConfig {
    /// Contexts for `suite` with the RFC 7925 initial timer and the cookie exchange.
    pub fn new(suite: Suite) -> anyhow::Result<DtlsConfig> {
        DtlsConfig::build(suite, true)
    }

    /// The same, with a server that answers the first ClientHello at once (no
    /// HelloVerifyRequest): one round trip less, and no defence against spoofed sources.
    pub fn without_cookie_exchange(suite: Suite) -> anyhow::Result<DtlsConfig> {
        DtlsConfig::build(suite, false)
    }

    fn build(suite: Suite, cookie_exchange: bool) -> anyhow::Result<DtlsConfig> {
        let pki = P256Pki::generate()?;
        let mut psk = [0u8; 16];
        openssl::rand::rand_bytes(&mut psk)?;
        let mut cookie = [0u8; 16];
        openssl::rand::rand_bytes(&mut cookie)?;
        Ok(DtlsConfig {
            suite,
            client_ctx: context(suite, &pki, false, psk, None)?,
            server_ctx: context(suite, &pki, true, psk, cookie_exchange.then_some(cookie))?,
            pki,
            initial_timer: RFC7925_INITIAL_TIMER,
            time_base: TimeBase::Virtual,
        })
    }

    /// The server leaf's DER length: what its Certificate message carries, beside the
    /// length prefixes, in RFC 7925's configuration.
    pub fn server_leaf_der_len(&self) -> anyhow::Result<usize> {
        Ok(self.pki.server_cert.to_der()?.len())
    }

    /// The same contexts with another initial timer (tests on a fast lossy link).
    pub fn with_initial_timer(mut self, t: Duration) -> DtlsConfig {
        self.initial_timer = t;
        self
    }

    /// The same contexts for callers passing real time (a UDP driver).
    pub fn in_real_time(mut self) -> DtlsConfig {
        self.time_base = TimeBase::Real;
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
        let setting = TimerSetting {
            base: self.time_base,
            initial: self.initial_timer,
        };
        ssl.set_ex_data(timer_index()?, setting);
        // SAFETY: the SSL is live and ours; the callback only reads its ex_data.
        unsafe { DTLS_set_timer_cb(ssl.as_ptr(), Some(timer_cb)) };
        let stream = SslStream::new(ssl, DatagramPipe::default())?;
        Ok(DtlsEndpoint {
            stream,
            suite: self.suite,
            server,
            complete: false,
            failed: None,
            retransmissions: 0,
            initial_ns: self.initial_timer.as_nanos() as u64,
            interval_ns: self.initial_timer.as_nanos() as u64,
            deadline_ns: None,
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
    cookie: Option<[u8; 16]>,
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
    if let Some(cookie) = cookie {
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
        // the leaf alone (the module's documentation)
        b.set_mode(SslMode::NO_AUTO_CHAIN);
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

/// Why a DTLS handshake failed: OpenSSL's verdict (its error code and error stack),
/// or its timer never expiring when the protocol's did.
#[derive(Debug, Clone)]
pub enum DtlsError {
    OpenSsl {
        server: bool,
        code: ErrorCode,
        stack: Option<ErrorStack>,
    },
    /// OpenSSL still called its timer running [`EXPIRY_WAIT_LIMIT`] ms after the
    /// protocol's deadline (see the module's documentation).
    TimerStuck,
}

impl std::fmt::Display for DtlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DtlsError::OpenSsl {
                server,
                code,
                stack,
            } => {
                let who = if *server { "server" } else { "client" };
                write!(f, "DTLS {who}: OpenSSL error code {}", code.as_raw())?;
                match stack {
                    Some(s) => write!(f, ": {s}"),
                    None => Ok(()),
                }
            }
            DtlsError::TimerStuck => f.write_str("OpenSSL's DTLS timer did not expire"),
        }
    }
}

/// One DTLS connection over a [`DatagramPipe`].
pub struct DtlsEndpoint {
    stream: SslStream<DatagramPipe>,
    suite: Suite,
    server: bool,
    complete: bool,
    failed: Option<Failure<DtlsError>>,
    retransmissions: u32,
    /// The protocol's timer, in the caller's time: its first value, the current one,
    /// and when it is next due (see the module's documentation).
    initial_ns: u64,
    interval_ns: u64,
    deadline_ns: Option<u64>,
}

impl DtlsEndpoint {
    /// Drives OpenSSL once: the handshake until it completes, then a read, which makes
    /// OpenSSL answer a retransmitted final flight of the peer.
    fn drive(&mut self) -> Result<Vec<Vec<u8>>, DtlsError> {
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
                return Err(DtlsError::OpenSsl {
                    server: self.server,
                    code: e.code(),
                    stack: e.ssl_error().cloned(),
                })
            }
        }
        Ok(self.stream.get_mut().take_outbox())
    }

    /// A step after OpenSSL ran at `now`: a failure ends the handshake; a new flight
    /// starts the protocol's timer afresh; OpenSSL's timer stopping stops it.
    fn step(&mut self, result: Result<Vec<Vec<u8>>, DtlsError>, now: Now) -> Step {
        let datagrams = match result {
            Ok(d) => d,
            Err(e) => {
                self.failed = Some(Failure::Local(e));
                self.deadline_ns = None;
                return Step::send(self.stream.get_mut().take_outbox());
            }
        };
        if self.complete || !self.openssl_timer_running() {
            self.deadline_ns = None;
        } else if !datagrams.is_empty() || self.deadline_ns.is_none() {
            self.interval_ns = self.initial_ns;
            self.deadline_ns = Some(now.mono_ns.saturating_add(self.interval_ns));
        }
        Step::send(datagrams)
    }

    /// Whether OpenSSL's own timer runs (its real value is not ours to read).
    fn openssl_timer_running(&self) -> bool {
        let mut tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        };
        self.ctrl(
            DTLS_CTRL_GET_TIMEOUT,
            (&mut tv as *mut libc::timeval).cast(),
        ) > 0
    }

    /// `DTLSv1_handle_timeout`, once OpenSSL agrees its timer expired: 1 when it
    /// retransmitted, negative when its retransmission limit is reached.
    fn openssl_timeout(&mut self) -> Result<c_long, DtlsError> {
        for _ in 0..EXPIRY_WAIT_LIMIT {
            match self.ctrl(DTLS_CTRL_HANDLE_TIMEOUT, std::ptr::null_mut()) {
                0 => std::thread::sleep(Duration::from_millis(1)),
                r => return Ok(r),
            }
        }
        Err(DtlsError::TimerStuck)
    }

    fn ctrl(&self, cmd: i32, parg: *mut c_void) -> c_long {
        // SAFETY: SSL_ctrl on our live SSL with a command that reads or writes at most
        // the timeval `parg` points to (or nothing for a null pointer).
        unsafe { openssl_sys::SSL_ctrl(self.stream.ssl().as_ptr(), cmd, 0, parg) }
    }
}

impl Handshake for DtlsEndpoint {
    /// The configured suite (each context offers exactly one).
    type Negotiated = Suite;
    type Error = DtlsError;
    /// OpenSSL takes a whole flight in one call: no per-message timing.
    type Records = ();

    fn protocol(&self) -> ProtocolId {
        super::DTLS12
    }

    fn role(&self) -> Role {
        if self.server {
            Role::Server
        } else {
            Role::Client
        }
    }

    fn start(&mut self, now: Now) -> Step {
        if self.server {
            return Step::default();
        }
        let result = self.drive();
        self.step(result, now)
    }

    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        if self.failed.is_some() {
            return Step::dropped();
        }
        self.stream.get_mut().inbox.push_back(datagram.to_vec());
        let result = self.drive();
        self.step(result, now)
    }

    fn deadline(&self) -> Option<u64> {
        self.deadline_ns
    }

    fn handle_timeout(&mut self, now: Now) -> Step {
        match self.deadline_ns {
            Some(d) if now.mono_ns >= d => {}
            _ => return Step::default(),
        }
        match self.openssl_timeout() {
            Ok(r) if r > 0 => {}
            Ok(_) => {
                self.failed = Some(Failure::TimedOut {
                    retransmissions: self.retransmissions,
                });
                self.deadline_ns = None;
                return Step::default();
            }
            Err(e) => return self.step(Err(e), now),
        }
        let out = self.stream.get_mut().take_outbox();
        self.retransmissions += out.len() as u32;
        self.interval_ns = (self.interval_ns * 2).min(MAX_TIMER.as_nanos() as u64);
        self.deadline_ns = Some(now.mono_ns.saturating_add(self.interval_ns));
        Step::send(out)
    }

    fn delay_timers(&mut self, by_ns: u64) {
        self.deadline_ns = self.deadline_ns.map(|d| d.saturating_add(by_ns));
    }

    fn status(&self) -> Status<Suite, DtlsError> {
        match (&self.failed, self.complete) {
            (Some(f), _) => Status::Failed(f.clone()),
            (None, true) => Status::Complete(self.suite),
            (None, false) => Status::Running,
        }
    }

    fn retransmissions(&self) -> u32 {
        self.retransmissions
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::run_in_memory;
    use wtlsperf_spine::pair::{Direction, Ended, Fate};
    use wtlsperf_spine::Pair;

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

    const T0: Now = Now {
        mono_ns: 0,
        unix_secs: 1_700_000_000,
    };

    #[test]
    fn the_first_timer_is_rfc_7925s_in_the_callers_time_and_a_held_flight_shifts_it() {
        let cfg = DtlsConfig::new(Suite::DtlsPsk).unwrap();
        let mut client = cfg.client().unwrap();
        assert_eq!(client.deadline(), None);
        assert_eq!(client.start(T0).datagrams.len(), 1);
        let nine = RFC7925_INITIAL_TIMER.as_nanos() as u64;
        assert_eq!(client.deadline(), Some(nine));
        client.delay_timers(3_000_000_000);
        assert_eq!(client.deadline(), Some(nine + 3_000_000_000));
        // Before its deadline a time-out does nothing.
        assert!(client.handle_timeout(T0).datagrams.is_empty());
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
    fn a_garbage_datagram_is_not_a_panic() {
        let cfg = DtlsConfig::new(Suite::DtlsPsk).unwrap();
        let mut server = cfg.server().unwrap();
        server.handle_datagram(&[0x16, 0xfe, 0xfd, 0, 0, 0], T0);
        assert!(!server.status().is_complete());
    }

    /// Drops the `n`-th datagram in `dir`, delivers the rest.
    fn drop_one(dir: Direction, n: usize) -> impl FnMut(Direction, usize, &mut Vec<u8>) -> Fate {
        move |d, i, _| {
            if d == dir && i == n {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        }
    }

    #[test]
    fn a_dropped_flight_is_recovered_at_the_virtual_deadline_by_openssls_own_retransmission() {
        let cfg = DtlsConfig::new(Suite::DtlsEcdheEcdsa { mutual: false }).unwrap();
        let nine = RFC7925_INITIAL_TIMER.as_nanos() as u64;
        // The first ClientHello, then the server's certificate flight.
        for (dir, n) in [(Direction::ToServer, 0), (Direction::ToClient, 1)] {
            let (client, server) = (cfg.client().unwrap(), cfg.server().unwrap());
            let mut pair = Pair::new(client, server, T0).with_hook(drop_one(dir, n));
            assert_eq!(pair.handshake(), Ended::Complete, "{dir:?} {n}");
            // Nothing happened before the 9 s deadline; one deadline repaired it.
            assert_eq!(pair.now.mono_ns, nine, "{dir:?} {n}");
            assert!(pair.deadlines_fired >= 1);
            let retransmitted = pair.client.retransmissions() + pair.server.retransmissions();
            assert!(retransmitted >= 1, "{dir:?} {n}");
            // OpenSSL's retransmission carries fresh record numbers: not a byte copy.
            let sent = match dir {
                Direction::ToServer => &pair.client_sent,
                Direction::ToClient => &pair.server_sent,
            };
            assert!(sent.iter().filter(|d| **d == sent[n]).count() == 1);
        }
    }

    #[test]
    fn silence_ends_in_a_time_out_not_an_openssl_error() {
        let cfg = DtlsConfig::new(Suite::DtlsPsk)
            .unwrap()
            .with_initial_timer(Duration::from_secs(1));
        let mut client = cfg.client().unwrap();
        client.start(T0);
        let mut fired = 0;
        while let Some(d) = client.deadline() {
            client.handle_timeout(Now::new(d, T0.unix_secs));
            fired += 1;
            assert!(fired <= 13, "no end to the retransmissions");
        }
        // OpenSSL's limit: 12 retransmissions, the 13th expiry fails.
        assert!(
            matches!(
                client.status(),
                Status::Failed(Failure::TimedOut {
                    retransmissions: 12
                })
            ),
            "{:?}",
            client.status()
        );
    }
}
