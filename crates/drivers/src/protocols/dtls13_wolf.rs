//! The thin layer over wolfSSL (through `wolfssl-sys`) that the DTLS 1.3 adapter
//! ([`super::dtls13`]) stands on: owned context and connection handles, in-memory
//! datagram I/O callbacks, and wolfSSL's clocks answered from the caller's virtual time.
//!
//! ## wolfSSL's clocks
//!
//! wolfSSL reads time in three places during a DTLS 1.3 handshake:
//! * `TimeNowInMilliseconds()`: the minimum interval between two retransmissions
//!   (`DTLS13_MIN_RTX_INTERVAL`, 100 ms in this build) and PSK ticket ages;
//! * `LowResTimer()` (seconds): session lifetimes;
//! * `wc_Time()`: the validity dates of the peer's certificate.
//!
//! The build defines `USER_TICKS` (`.cargo/config.toml`), so wolfSSL does not define the
//! first two itself: they are defined here, and answer from [`CLOCK`], the time the
//! adapter last passed in (set before every call into wolfSSL on this thread). The third
//! goes through `wc_SetTimeCb` to the same reading's Unix seconds. Nothing here reads a
//! real clock: a handshake in memory is a function of the caller's time.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Once;

use wolfssl_sys as w;
use wtlsperf_spine::Now;

use super::pipe::DatagramPipe;

thread_local! {
    /// The caller's time at the current call into wolfSSL on this thread.
    static CLOCK: Cell<Now> = const { Cell::new(Now { mono_ns: 0, unix_secs: 0 }) };
}

/// Sets the time wolfSSL's clocks answer with until the next call.
pub fn set_clock(now: Now) {
    CLOCK.with(|c| c.set(now));
}

/// wolfSSL's seconds clock under `USER_TICKS` (see the module's documentation).
#[no_mangle]
pub extern "C" fn LowResTimer() -> u32 {
    CLOCK.with(|c| (c.get().mono_ns / 1_000_000_000) as u32)
}

/// wolfSSL's millisecond clock under `USER_TICKS` (64-bit: this build does not define
/// `WOLFSSL_32BIT_MILLI_TIME`).
#[no_mangle]
pub extern "C" fn TimeNowInMilliseconds() -> i64 {
    CLOCK.with(|c| (c.get().mono_ns / 1_000_000) as i64)
}

/// The certificate-date clock given to `wc_SetTimeCb`.
unsafe extern "C" fn unix_time(t: *mut w::time_t) -> w::time_t {
    let secs = CLOCK.with(|c| w::time_t::from(c.get().unix_secs));
    if !t.is_null() {
        // SAFETY: wolfSSL passes either null or a valid time_t to fill, as time(2).
        unsafe { *t = secs };
    }
    secs
}

/// `wolfSSL_Init` and the clock callback, once per process.
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // SAFETY: library initialisation, called once before any other wolfSSL call.
        unsafe {
            w::wolfSSL_Init();
            w::wc_SetTimeCb(Some(unix_time));
        }
    });
}

/// A wolfSSL error code (`wolfSSL_get_error`'s value, or a setup call's return), with
/// wolfSSL's own description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WolfError {
    pub code: i32,
    /// What was being done ("set_cipher_list", "connect", ...).
    pub during: &'static str,
}

impl WolfError {
    pub fn new(during: &'static str, code: i32) -> WolfError {
        WolfError { code, during }
    }

    /// wolfSSL's text for the code.
    pub fn description(&self) -> String {
        let mut buf = [0 as c_char; 80];
        // SAFETY: wolfSSL writes at most WOLFSSL_MAX_ERROR_SZ (80) bytes, NUL included.
        unsafe { w::wolfSSL_ERR_error_string_n(self.code as _, buf.as_mut_ptr(), buf.len() as _) };
        let bytes: Vec<u8> = buf
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl std::fmt::Display for WolfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "wolfSSL {}: error {} ({})",
            self.during,
            self.code,
            self.description()
        )
    }
}

impl std::error::Error for WolfError {}

/// `WOLFSSL_SUCCESS` as setup calls return it.
const SUCCESS: c_int = w::WOLFSSL_SUCCESS as c_int;

/// A setup call's return checked against `WOLFSSL_SUCCESS`.
pub fn check(during: &'static str, ret: c_int) -> Result<(), WolfError> {
    if ret == SUCCESS {
        Ok(())
    } else {
        Err(WolfError::new(during, ret))
    }
}

/// An owned `WOLFSSL_CTX`.
pub struct Context(*mut w::WOLFSSL_CTX);

// SAFETY (moving and sharing wolfSSL objects across threads; the gateway's workers and
// the bearer runs' threads need both). wolfSSL's manual (chapter 9, "Thread Safety")
// states that the library keeps no global or static state of a connection, that a
// `WOLFSSL` may be used from several threads provided no two use it at once, and that a
// `WOLFSSL_CTX` may be shared by the threads that create connections from it once its
// certificates and settings are loaded. Checked against this build
// (`wolfssl/options.h`):
// * It is multi-threaded (`SINGLE_THREADED` undefined), so the context's reference
//   count, which `wolfSSL_new` and `wolfSSL_free` change, is behind a mutex
//   (`wolfSSL_RefWithMutex*` in `internal.c`).
// * Its thread-local state (`THREAD_LS_T`: the error queue with
//   `ERROR_QUEUE_PER_THREAD`, wolfCrypt's fixed-point ECC cache, the sniffer's tables,
//   debug counters) belongs to the thread, not to a connection: no connection keeps a
//   pointer into another thread's storage, so a connection may continue on another
//   thread. The adapter reads errors with `wolfSSL_get_error`, which answers from the
//   connection, never from the thread's queue.
// * Our own thread-local, the clock (`CLOCK`), is set before every call into wolfSSL
//   that may read a clock (`Dtls13Endpoint`'s `drive` and `handle_timeout`), on the
//   calling thread, so it never answers with another connection's or thread's time.
// * A `Context` is only configured (`&mut`-free setup calls) before it is shared: every
//   setting is made in `dtls13::context` before the `Context` is returned, and later
//   only `wolfSSL_new` reads it. `Connection` is not `Sync`: `&mut self` serialises
//   every call on one connection, which is the manual's one condition.
unsafe impl Send for Context {}
// SAFETY: see above: after setup, the only calls made through `&Context` are
// `wolfSSL_new` (reads the settings; the reference count is behind a mutex).
unsafe impl Sync for Context {}

impl Context {
    /// A DTLS 1.3-only context for one side, with the in-memory I/O callbacks.
    pub fn new(server: bool) -> Result<Context, WolfError> {
        init();
        // SAFETY: the method constructors return static tables; CTX_new takes ownership
        // of the method and returns null on failure.
        let ctx = unsafe {
            let method = if server {
                w::wolfDTLSv1_3_server_method()
            } else {
                w::wolfDTLSv1_3_client_method()
            };
            w::wolfSSL_CTX_new(method)
        };
        if ctx.is_null() {
            return Err(WolfError::new("CTX_new", 0));
        }
        // SAFETY: ctx is live; the callbacks match wolfSSL's CallbackIORecv/Send.
        unsafe {
            w::wolfSSL_CTX_SetIORecv(ctx, Some(recv_cb));
            w::wolfSSL_CTX_SetIOSend(ctx, Some(send_cb));
        }
        Ok(Context(ctx))
    }

    pub fn as_ptr(&self) -> *mut w::WOLFSSL_CTX {
        self.0
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: we own the context; every connection made from it holds its own
        // reference (wolfSSL counts them), so freeing ours here is sound.
        unsafe { w::wolfSSL_CTX_free(self.0) }
    }
}

/// An owned `WOLFSSL` connection and its in-memory datagram pipe (boxed: wolfSSL keeps
/// its address as the I/O callbacks' context).
pub struct Connection {
    ssl: *mut w::WOLFSSL,
    pipe: Box<DatagramPipe>,
}

impl Connection {
    pub fn new(ctx: &Context) -> Result<Connection, WolfError> {
        // SAFETY: ctx is live; wolfSSL_new returns null on failure.
        let ssl = unsafe { w::wolfSSL_new(ctx.as_ptr()) };
        if ssl.is_null() {
            return Err(WolfError::new("new", 0));
        }
        let mut pipe = Box::<DatagramPipe>::default();
        let p = (&mut *pipe as *mut DatagramPipe).cast::<c_void>();
        // SAFETY: the pipe lives in a box owned with the connection, so it outlives
        // every callback wolfSSL makes with it.
        unsafe {
            w::wolfSSL_SetIOReadCtx(ssl, p);
            w::wolfSSL_SetIOWriteCtx(ssl, p);
        }
        Ok(Connection { ssl, pipe })
    }

    pub fn as_ptr(&self) -> *mut w::WOLFSSL {
        self.ssl
    }

    pub fn pipe(&mut self) -> &mut DatagramPipe {
        &mut self.pipe
    }
}

// SAFETY: see `Context`'s Send: a connection moves between threads, never is used by
// two at once (every call takes `&mut self` or happens inside one such call), and its
// pipe is an owned box.
unsafe impl Send for Connection {}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: we own the connection; the pipe box is dropped after it.
        unsafe { w::wolfSSL_free(self.ssl) }
    }
}

/// wolfSSL's receive callback: one queued datagram, or "would block".
unsafe extern "C" fn recv_cb(
    _ssl: *mut w::WOLFSSL,
    buf: *mut c_char,
    sz: c_int,
    ctx: *mut c_void,
) -> c_int {
    // SAFETY: ctx is the connection's boxed pipe (Connection::new).
    let pipe = unsafe { &mut *ctx.cast::<DatagramPipe>() };
    match pipe.inbox.pop_front() {
        Some(d) => {
            // A datagram longer than the buffer is truncated, as recv(2) would.
            let n = d.len().min(usize::try_from(sz).unwrap_or(0));
            // SAFETY: wolfSSL's buffer holds `sz` bytes.
            unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), buf.cast::<u8>(), n) };
            n as c_int
        }
        None => w::IOerrors_WOLFSSL_CBIO_ERR_WANT_READ as c_int,
    }
}

/// wolfSSL's send callback: each call is one datagram.
unsafe extern "C" fn send_cb(
    _ssl: *mut w::WOLFSSL,
    buf: *mut c_char,
    sz: c_int,
    ctx: *mut c_void,
) -> c_int {
    // SAFETY: ctx is the connection's boxed pipe; buf holds `sz` bytes.
    let pipe = unsafe { &mut *ctx.cast::<DatagramPipe>() };
    let n = usize::try_from(sz).unwrap_or(0);
    let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) };
    pipe.outbox.push(bytes.to_vec());
    sz
}
