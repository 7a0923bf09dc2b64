//! DTLS 1.3 (RFC 9147) through wolfSSL, on the handshake spine ([`Handshake`]), with
//! classical and ML-KEM (FIPS 203) key exchange. Built only with the `dtls13` cargo
//! feature: wolfSSL is GPL-2.0-or-later (README; docs/dtls13.md says why wolfSSL).
//!
//! Why these settings:
//! * Cipher suite TLS_AES_128_CCM_8_SHA256 throughout: the RFC 7925 profile's AEAD
//!   (8-byte tag), as the DTLS 1.2 rows use AES-128-CCM-8.
//! * Certificates: the same small P-256 chain as DTLS 1.2
//!   ([`P256Pki`](super::dtls::P256Pki)), ECDSA with SHA-256, or an ML-DSA-44/65 chain
//!   of the same shape ([`MlDsaPki`](crate::protocols::ml_dsa::MlDsaPki): FIPS 204, the
//!   certificate's signature and the CertificateVerify alike); server-authenticated or
//!   mutual; each side sends its leaf alone (RFC 7925's profile) or its leaf and the CA.
//! * PSK: external PSK, either `psk_ke` (no key exchange: the lightest case) or
//!   `psk_dhe_ke` with P-256 (forward secrecy). A PSK authenticates both sides.
//! * Connection ID (RFC 9147 section 9): when on, the server asks for a 1-byte CID in the
//!   records it receives and the client for none (a zero-length CID): the constrained
//!   client's traffic carries the byte that lets the server survive a NAT rebinding.
//! * The key share the client sends is exactly the configured group, so no
//!   HelloRetryRequest is needed for the group; wolfSSL's server does the stateless
//!   cookie exchange (a HelloRetryRequest with a cookie) by default, as RFC 9147
//!   section 5.1 recommends, which costs one round trip as DTLS 1.2's HelloVerifyRequest.
//! * Retransmission: wolfSSL's own (RFC 9147 section 5.8): the whole flight at the long
//!   timer, ACKs at a quarter of it, partial retransmission of what the peer has not
//!   acknowledged. Its timer starts at [`RFC7925_INITIAL_TIMER_S`] (as the DTLS 1.2
//!   adapter's), doubling up to wolfSSL's 64 s ceiling, then the handshake times out.
//!
//! ## wolfSSL's timer under virtual time
//!
//! wolfSSL's DTLS timer is a number of seconds it exposes
//! (`wolfSSL_dtls_get_current_timeout`, and `wolfSSL_dtls13_use_quick_timeout` for the
//! quarter-length ACK timer) and an entry point the application calls when it expires
//! (`wolfSSL_dtls_got_timeout`): it never waits on its own. The adapter turns the
//! timer into a deadline in the caller's time each time wolfSSL has run (a flight left
//! or a datagram came in: wolfSSL's own receive waits that long for the next datagram),
//! and calls `wolfSSL_dtls_got_timeout` when the caller fires it. The clocks wolfSSL does read
//! (its minimum interval between retransmissions, certificate dates) are answered from
//! the same caller's time ([`super::dtls13_wolf`]), so, unlike OpenSSL's DTLS 1.2 timer,
//! no real time passes for a virtual retransmission.
//!
//! wolfSSL handles a whole received flight in one call, so per-message timing is not
//! exposed: per datagram (the jobs) and per handshake only, as for DTLS 1.2.

use std::ffi::{c_char, c_int, c_uint, CStr};
use std::sync::OnceLock;

use wolfssl_sys as w;
use wtlsperf_spine::{Failure, Handshake, Now, ProtocolId, Role, Status, Step};

use super::dtls13_wolf::{check, set_clock, Connection, Context, WolfError};
pub use crate::protocols::ml_dsa::MlDsa;

#[path = "dtls13_certs.rs"]
mod certs;
#[path = "dtls13_suite.rs"]
mod suite;
use certs::Credentials;
pub use certs::{
    certificate_alternatives, priced_flight, CertificateAlternatives, CertificateItems,
    CACHED_INFO_CLIENT_HELLO, CACHED_INFO_SERVER, FRAGMENT_FRAMING,
};
pub use suite::{Chain, Credential, Dtls13Suite, Group, Signature};

/// The initial retransmission timer (seconds) recommended for constrained links
/// (RFC 7925 section 11), as for DTLS 1.2.
pub const RFC7925_INITIAL_TIMER_S: u32 = 9;

/// wolfSSL's largest retransmission timer (`DTLS_TIMEOUT_MAX` in its internal.h,
/// seconds): a timeout that finds the timer there ends the handshake.
const WOLFSSL_TIMEOUT_MAX_S: u32 = 64;

/// DTLS 1.3's timers as the bench runs them from a first timer of `initial_s` seconds:
/// wolfSSL doubles the timer on each retransmission while it is below its maximum and
/// fails the handshake at the first timeout past it.
pub fn retransmission_timers(initial_s: u32) -> super::RetransmissionTimers {
    let mut retransmissions = 0;
    let mut t = initial_s.max(1);
    while t < WOLFSSL_TIMEOUT_MAX_S {
        t *= 2;
        retransmissions += 1;
    }
    super::RetransmissionTimers {
        initial_s: f64::from(initial_s),
        initial_max_s: f64::from(initial_s),
        backoff: 2.0,
        ceiling_s: Some(f64::from(WOLFSSL_TIMEOUT_MAX_S)),
        max_retransmissions: retransmissions,
        source: "RFC 9147 section 5.8 (the timer, doubling) and section 7 (ACKs, and partial retransmission of what was not acknowledged) with RFC 7925 section 11's 9 s first timer; wolfSSL ends the handshake at the first timeout past its 64 s maximum, and sends ACKs at a quarter of the timer; each timer runs from the last datagram wolfSSL sent or took in, as its own receive waits",
    }
}

/// Datagram payload limit by default: the IPv6 minimum MTU, as for DTLS 1.2.
pub const DEFAULT_MTU: u16 = 1280;

/// wolfSSL's name of TLS_AES_128_CCM_8_SHA256.
const CCM8: &CStr = c"TLS13-AES128-CCM-8-SHA256";

/// The PSK identity both sides use.
const PSK_IDENTITY: &CStr = c"wtlsperf";

/// The process's pre-shared key: random, drawn once (a bench credential, never logged).
fn psk() -> &'static [u8; 16] {
    static KEY: OnceLock<[u8; 16]> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut k = [0u8; 16];
        // A failing system RNG leaves the key all zero, which still works for a bench
        // whose two sides share it; openssl's RNG does not fail on Linux.
        let _ = openssl::rand::rand_bytes(&mut k);
        k
    })
}

/// Copies the PSK into wolfSSL's buffer; 0 (no PSK) when it does not fit.
fn put_psk(key: *mut u8, key_max_len: c_uint) -> c_uint {
    let k = psk();
    if (key_max_len as usize) < k.len() {
        return 0;
    }
    // SAFETY: wolfSSL's key buffer holds key_max_len bytes.
    unsafe { std::ptr::copy_nonoverlapping(k.as_ptr(), key, k.len()) };
    k.len() as c_uint
}

unsafe extern "C" fn psk_client_cb(
    _ssl: *mut w::WOLFSSL,
    _hint: *const c_char,
    identity: *mut c_char,
    id_max_len: c_uint,
    key: *mut u8,
    key_max_len: c_uint,
    cipher: *mut *const c_char,
) -> c_uint {
    let id = PSK_IDENTITY.to_bytes_with_nul();
    if (id_max_len as usize) < id.len() {
        return 0;
    }
    // SAFETY: wolfSSL's identity buffer holds id_max_len bytes; `cipher` points to
    // where it reads the suite's static name from.
    unsafe {
        std::ptr::copy_nonoverlapping(id.as_ptr().cast::<c_char>(), identity, id.len());
        *cipher = CCM8.as_ptr();
    }
    put_psk(key, key_max_len)
}

unsafe extern "C" fn psk_server_cb(
    _ssl: *mut w::WOLFSSL,
    identity: *const c_char,
    key: *mut u8,
    key_max_len: c_uint,
    cipher: *mut *const c_char,
) -> c_uint {
    // SAFETY: wolfSSL passes the NUL-terminated identity the client sent.
    if identity.is_null() || unsafe { CStr::from_ptr(identity) } != PSK_IDENTITY {
        return 0;
    }
    // SAFETY: as in the client's callback.
    unsafe { *cipher = CCM8.as_ptr() };
    put_psk(key, key_max_len)
}

/// One side's wolfSSL context for `suite`.
fn context(suite: Dtls13Suite, creds: &Credentials, server: bool) -> anyhow::Result<Context> {
    let ctx = Context::new(server)?;
    let c = ctx.as_ptr();
    // SAFETY: every call below configures our live context with valid buffers.
    unsafe {
        check(
            "set_cipher_list",
            w::wolfSSL_CTX_set_cipher_list(c, CCM8.as_ptr()),
        )?;
        let mut groups = [suite.group.code()];
        check(
            "set_groups",
            w::wolfSSL_CTX_set_groups(c, groups.as_mut_ptr(), 1),
        )?;
        match suite.credential {
            Credential::Certificate { mutual } => {
                certificates(c, creds, server, mutual, suite.chain)?
            }
            Credential::Psk | Credential::PskDhe => {
                if server {
                    w::wolfSSL_CTX_set_psk_server_tls13_callback(c, Some(psk_server_cb));
                } else {
                    w::wolfSSL_CTX_set_psk_client_tls13_callback(c, Some(psk_client_cb));
                }
                // This one answers 0 on success.
                if suite.credential == Credential::Psk && w::wolfSSL_CTX_no_dhe_psk(c) != 0 {
                    return Err(WolfError::new("no_dhe_psk", -1).into());
                }
                w::wolfSSL_CTX_set_verify(c, w::WOLFSSL_VERIFY_NONE as c_int, None);
            }
        }
    }
    Ok(ctx)
}

/// DER buffers into a context: the CA to verify with, this side's chain and key.
///
/// # Safety
/// `c` is a live context.
unsafe fn certificates(
    c: *mut w::WOLFSSL_CTX,
    creds: &Credentials,
    server: bool,
    mutual: bool,
    chain: Chain,
) -> anyhow::Result<()> {
    let der = w::WOLFSSL_FILETYPE_ASN1 as c_int;
    let ca = &creds.ca;
    // SAFETY: the caller's context; each buffer lives across its call.
    unsafe {
        // The CA's dates are not checked here, where no caller's time is known yet; the
        // peer's chain is checked in the handshake, at the caller's time.
        check(
            "load_verify_buffer",
            w::wolfSSL_CTX_load_verify_buffer_ex(
                c,
                ca.as_ptr(),
                ca.len() as _,
                der,
                0,
                w::WOLFSSL_LOAD_FLAG_DATE_ERR_OKAY as _,
            ),
        )?;
        if server || mutual {
            let me = if server { &creds.server } else { &creds.client };
            match chain {
                Chain::Leaf => check(
                    "use_certificate_buffer",
                    w::wolfSSL_CTX_use_certificate_buffer(
                        c,
                        me.cert.as_ptr(),
                        me.cert.len() as _,
                        der,
                    ),
                )?,
                Chain::LeafAndCa => {
                    // wolfSSL reads a DER chain as certificates back to back, leaf first.
                    let both = [me.cert.as_slice(), ca].concat();
                    check(
                        "use_certificate_chain_buffer_format",
                        w::wolfSSL_CTX_use_certificate_chain_buffer_format(
                            c,
                            both.as_ptr(),
                            both.len() as _,
                            der,
                        ),
                    )?
                }
            }
            check(
                "use_PrivateKey_buffer",
                w::wolfSSL_CTX_use_PrivateKey_buffer(c, me.key.as_ptr(), me.key.len() as _, der),
            )?;
        }
        let mode = match (server, mutual) {
            (false, _) => w::WOLFSSL_VERIFY_PEER,
            (true, true) => w::WOLFSSL_VERIFY_PEER | w::WOLFSSL_VERIFY_FAIL_IF_NO_PEER_CERT,
            (true, false) => w::WOLFSSL_VERIFY_NONE,
        };
        w::wolfSSL_CTX_set_verify(c, mode as c_int, None);
    }
    Ok(())
}

/// Server and client contexts of one configuration, built once for many handshakes.
pub struct Dtls13Config {
    pub suite: Dtls13Suite,
    client_ctx: Context,
    server_ctx: Context,
    /// Initial retransmission timer of both sides (seconds: wolfSSL's unit).
    pub initial_timer_s: u32,
    /// Datagram payload limit wolfSSL fragments to.
    pub mtu: u16,
    /// The certificates (DER, leaf first) the server and the client send; empty where
    /// a side sends none.
    server_chain: Vec<Vec<u8>>,
    client_chain: Vec<Vec<u8>>,
    /// Whether the server answers a first ClientHello with a stateless
    /// HelloRetryRequest carrying a cookie (wolfSSL's default for a DTLS 1.3 server,
    /// RFC 9147 section 5.1); without it the server answers the first ClientHello's key
    /// share at once.
    pub cookie_exchange: bool,
}

impl Dtls13Config {
    /// Contexts for `suite` with a fresh certificate chain of its signature scheme, the
    /// RFC 7925 initial timer and the 1280-byte MTU.
    pub fn new(suite: Dtls13Suite) -> anyhow::Result<Dtls13Config> {
        let creds = Credentials::issue(suite.signature)?;
        let sends = |server| match suite.credential {
            Credential::Certificate { mutual } if server || mutual => {
                creds.chain(server, suite.chain)
            }
            _ => Vec::new(),
        };
        Ok(Dtls13Config {
            suite,
            client_ctx: context(suite, &creds, false)?,
            server_ctx: context(suite, &creds, true)?,
            initial_timer_s: RFC7925_INITIAL_TIMER_S,
            mtu: DEFAULT_MTU,
            server_chain: sends(true),
            client_chain: sends(false),
            cookie_exchange: true,
        })
    }

    /// The same contexts without the cookie exchange: the server's connections call
    /// `wolfSSL_disable_hrr_cookie`, so no HelloRetryRequest round trip and no second
    /// ClientHello (with its key share again) precede the handshake.
    pub fn without_cookie_exchange(mut self) -> Dtls13Config {
        self.cookie_exchange = false;
        self
    }

    /// The certificates the server (or the client) sends, leaf first; `None` where that
    /// side sends none.
    fn chain_sent(&self, server: bool) -> Option<&[Vec<u8>]> {
        let chain = if server {
            &self.server_chain
        } else {
            &self.client_chain
        };
        (!chain.is_empty()).then_some(chain.as_slice())
    }

    /// What the server's (or the client's) Certificate and CertificateVerify carry,
    /// itemised, for an ML-DSA configuration ([`certs::certificate_items`]); `None`
    /// where that side sends no certificate or signs with ECDSA.
    pub fn certificate_items(&self, server: bool) -> anyhow::Result<Option<CertificateItems>> {
        match self.chain_sent(server) {
            Some(chain) => certs::certificate_items(chain, self.suite.signature),
            None => Ok(None),
        }
    }

    /// The server's (or the client's) Certificate body priced with RFC 8879 compression
    /// and RFC 7924 cached information; `None` where that side sends no certificate.
    pub fn certificate_alternatives(
        &self,
        server: bool,
    ) -> anyhow::Result<Option<CertificateAlternatives>> {
        self.chain_sent(server)
            .map(certs::certificate_alternatives)
            .transpose()
    }

    /// The same contexts fragmenting to another MTU (a bearer's).
    pub fn with_mtu(mut self, mtu: u16) -> Dtls13Config {
        self.mtu = mtu;
        self
    }

    /// The same contexts with another initial timer.
    pub fn with_initial_timer_s(mut self, s: u32) -> Dtls13Config {
        self.initial_timer_s = s.max(1);
        self
    }

    fn endpoint(&self, server: bool) -> anyhow::Result<Dtls13Endpoint> {
        let ctx = if server {
            &self.server_ctx
        } else {
            &self.client_ctx
        };
        let conn = Connection::new(ctx)?;
        let ssl = conn.as_ptr();
        // SAFETY: our live connection; the CID buffer lives across the call.
        unsafe {
            check("dtls_set_mtu", w::wolfSSL_dtls_set_mtu(ssl, self.mtu))?;
            check(
                "dtls_set_timeout_init",
                w::wolfSSL_dtls_set_timeout_init(ssl, self.initial_timer_s as c_int),
            )?;
            if server && !self.cookie_exchange {
                check("disable_hrr_cookie", w::wolfSSL_disable_hrr_cookie(ssl))?;
            }
            match (server, self.suite.credential) {
                (true, _) => {}
                // psk_ke: no key share at all (wolfSSL would send one by default).
                (false, Credential::Psk) => {
                    check("NoKeyShares", w::wolfSSL_NoKeyShares(ssl))?;
                }
                (false, _) => check(
                    "UseKeyShare",
                    w::wolfSSL_UseKeyShare(ssl, self.suite.group.code() as _),
                )?,
            }
            if self.suite.cid {
                check("dtls_cid_use", w::wolfSSL_dtls_cid_use(ssl))?;
                let mut cid = [0x2a_u8];
                let len = if server { 1 } else { 0 };
                check(
                    "dtls_cid_set",
                    w::wolfSSL_dtls_cid_set(ssl, cid.as_mut_ptr(), len),
                )?;
            }
        }
        Ok(Dtls13Endpoint {
            conn,
            suite: self.suite,
            server,
            complete: false,
            failed: None,
            retransmissions: 0,
            deadline_ns: None,
            flights_sent: 0,
        })
    }

    /// A fresh client connection.
    pub fn client(&self) -> anyhow::Result<Dtls13Endpoint> {
        self.endpoint(false)
    }

    /// A fresh server connection.
    pub fn server(&self) -> anyhow::Result<Dtls13Endpoint> {
        self.endpoint(true)
    }
}

/// Why a DTLS 1.3 handshake failed: wolfSSL's error code, and whose side saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dtls13Error {
    pub server: bool,
    pub wolf: WolfError,
}

impl std::fmt::Display for Dtls13Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let who = if self.server { "server" } else { "client" };
        write!(f, "DTLS 1.3 {who}: {}", self.wolf)
    }
}

/// wolfSSL's "received a fatal alert" error (`FATAL_ERROR` in error-ssl.h).
const PEER_ALERT: i32 = w::wolfSSL_ErrorCodes_FATAL_ERROR;

/// One DTLS 1.3 connection over an in-memory datagram pipe.
pub struct Dtls13Endpoint {
    conn: Connection,
    suite: Dtls13Suite,
    server: bool,
    complete: bool,
    failed: Option<Failure<Dtls13Error>>,
    retransmissions: u32,
    deadline_ns: Option<u64>,
    /// Flights this side sent (a server's first is the stateless cookie exchange,
    /// which it does not retransmit: the client does).
    flights_sent: u32,
}

impl Dtls13Endpoint {
    /// Drives wolfSSL once at `now`: the handshake until it completes, then a read,
    /// which answers a retransmitted flight of the peer and takes ACKs.
    fn drive(&mut self, now: Now) -> Result<Vec<Vec<u8>>, Dtls13Error> {
        set_clock(now);
        let ssl = self.conn.as_ptr();
        // SAFETY: our live connection; the read buffer lives across the call.
        let ret = unsafe {
            if self.complete {
                let mut buf = [0u8; 64];
                w::wolfSSL_read(ssl, buf.as_mut_ptr().cast(), buf.len() as c_int)
            } else if self.server {
                w::wolfSSL_accept(ssl)
            } else {
                w::wolfSSL_connect(ssl)
            }
        };
        if !self.complete && ret == w::WOLFSSL_SUCCESS as c_int {
            self.complete = true;
        } else if ret <= 0 {
            // SAFETY: as above.
            let err = unsafe { w::wolfSSL_get_error(ssl, ret) };
            let waiting = [w::WOLFSSL_ERROR_WANT_READ, w::WOLFSSL_ERROR_WANT_WRITE]
                .map(|e| e as c_int)
                .contains(&err);
            if !waiting {
                return Err(self.error("handshake", err));
            }
        }
        Ok(self.conn.pipe().take_outbox())
    }

    fn error(&self, during: &'static str, code: c_int) -> Dtls13Error {
        Dtls13Error {
            server: self.server,
            wolf: WolfError::new(during, code),
        }
    }

    /// wolfSSL's current timer as a duration from now (the quarter-length ACK timer
    /// when wolfSSL asks for it).
    fn timer_ns(&self) -> u64 {
        let ssl = self.conn.as_ptr();
        // SAFETY: read-only queries of our live connection.
        let (secs, quick) = unsafe {
            (
                w::wolfSSL_dtls_get_current_timeout(ssl),
                w::wolfSSL_dtls13_use_quick_timeout(ssl),
            )
        };
        let ns = u64::try_from(secs.max(1)).unwrap_or(1) * 1_000_000_000;
        if quick != 0 {
            ns / 4
        } else {
            ns
        }
    }

    /// A step after wolfSSL ran at `now`: a failure ends the handshake; completion
    /// stops the timer; anything else (re)starts it, a datagram taken in as a flight
    /// sent: wolfSSL's own receive (`EmbedReceive`, wolfio.c) waits the current timer (a
    /// quarter of it while its ACK timer is on) for each datagram, so it ACKs a partial
    /// flight after that long *without a datagram*. Armed only as a flight left, the
    /// timer made the client ACK a flight still crossing a slow bearer, and wolfSSL's
    /// server resend its rest (docs/dtls13.md, "ML-DSA over the slow bearers").
    fn step(&mut self, result: Result<Vec<Vec<u8>>, Dtls13Error>, now: Now) -> Step {
        let datagrams = match result {
            Ok(d) => d,
            Err(e) => {
                self.failed = Some(if e.wolf.code == PEER_ALERT {
                    Failure::Peer(e)
                } else {
                    Failure::Local(e)
                });
                self.deadline_ns = None;
                return Step::send(self.conn.pipe().take_outbox());
            }
        };
        if !datagrams.is_empty() {
            self.flights_sent += 1;
        }
        let stateless = self.server && self.flights_sent <= 1;
        self.deadline_ns = if self.complete || stateless {
            None
        } else {
            Some(now.mono_ns.saturating_add(self.timer_ns()))
        };
        Step::send(datagrams)
    }

    /// The cipher suite wolfSSL negotiated (its name), once complete.
    pub fn negotiated_cipher(&self) -> Option<String> {
        // SAFETY: wolfSSL returns a static string or null.
        let p = unsafe { w::wolfSSL_get_cipher_name(self.conn.as_ptr()) };
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// The named group of the key exchange (wolfSSL's name), once complete; `None` for
    /// a PSK-only handshake.
    pub fn negotiated_group(&self) -> Option<String> {
        // SAFETY: as above.
        let p = unsafe { w::wolfSSL_get_curve_name(self.conn.as_ptr()) };
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

impl Handshake for Dtls13Endpoint {
    /// The configured suite (each context offers exactly one).
    type Negotiated = Dtls13Suite;
    type Error = Dtls13Error;
    /// wolfSSL takes a whole flight in one call: no per-message timing.
    type Records = ();

    fn protocol(&self) -> ProtocolId {
        super::DTLS13
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
        let result = self.drive(now);
        self.step(result, now)
    }

    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        if self.failed.is_some() {
            return Step::dropped();
        }
        self.conn.pipe().inbox.push_back(datagram.to_vec());
        let result = self.drive(now);
        self.step(result, now)
    }

    fn deadline(&self) -> Option<u64> {
        self.deadline_ns
    }

    fn handle_timeout(&mut self, now: Now) -> Step {
        match self.deadline_ns {
            Some(d) if now.mono_ns >= d && self.failed.is_none() => {}
            _ => return Step::default(),
        }
        set_clock(now);
        let ssl = self.conn.as_ptr();
        // SAFETY: our live connection.
        if unsafe { w::wolfSSL_dtls_got_timeout(ssl) } != w::WOLFSSL_SUCCESS as c_int {
            // SAFETY: as above.
            let err = unsafe { w::wolfSSL_get_error(ssl, -1) };
            self.deadline_ns = None;
            // wolfSSL's own "timer at its ceiling" is a bare fatal error (-1).
            self.failed = Some(if err == w::wolfSSL_ErrorCodes_WOLFSSL_FATAL_ERROR {
                Failure::TimedOut {
                    retransmissions: self.retransmissions,
                }
            } else {
                Failure::Local(self.error("dtls_got_timeout", err))
            });
            return Step::send(self.conn.pipe().take_outbox());
        }
        let out = self.conn.pipe().take_outbox();
        self.retransmissions += out.len() as u32;
        self.deadline_ns = Some(now.mono_ns.saturating_add(self.timer_ns()));
        Step::send(out)
    }

    fn delay_timers(&mut self, by_ns: u64) {
        self.deadline_ns = self.deadline_ns.map(|d| d.saturating_add(by_ns));
    }

    fn status(&self) -> Status<Dtls13Suite, Dtls13Error> {
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
#[path = "dtls13_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "dtls13_link_tests.rs"]
mod link_tests;
