//! Seeded randomness for one thread: the replay switch of tests and instruction counts.
//!
//! A handshake draws random bytes in two places: [`super::fill`] (the Random structures,
//! session identifiers) and OpenSSL (ephemeral keys, the RSA pre-master secret, ECDSA
//! nonces, RSA blinding). To replay a handshake exactly, both must come from one seeded
//! stream. OpenSSL 3 still honours a process-wide `RAND_METHOD` (deprecated, but exported
//! by every libcrypto 3.x that was not built with `no-deprecated`): every `RAND_bytes` and
//! `RAND_priv_bytes`, including those its providers make for key generation, nonces and
//! blinding, is answered by the method's `bytes` callback. [`seed_thread`] installs such
//! a method once; the callback serves a thread from its seeded stream while that thread
//! holds a [`SeededThread`] guard, and every other thread from `rand`'s thread-local
//! CSPRNG (ChaCha12 seeded from the operating system), never from a fixed value.
//!
//! Never seed a thread that serves real peers: its keys and nonces become predictable by
//! design. The gateway and the client never call it; tests and `wtlsperf count` do.

use std::cell::RefCell;
use std::os::raw::{c_double, c_int, c_uchar, c_void};
use std::sync::OnceLock;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

thread_local! {
    static STREAM: RefCell<Option<StdRng>> = const { RefCell::new(None) };
}

/// While alive, the thread that made it draws every random byte from the stream of
/// `seed`; dropping it returns the thread to fresh randomness.
#[must_use = "the thread is seeded only while the guard lives"]
pub struct SeededThread {
    // Seeding is per thread: the guard must be dropped on the thread that made it.
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Seeds the calling thread: from now until the guard is dropped, [`super::fill`] and
/// every OpenSSL random draw made on this thread come from a ChaCha stream of `seed`
/// (`rand`'s `StdRng`, fixed by the lockfile), so the same seed, keys and clock give
/// the same bytes on the wire, the same keys and the same instruction counts.
///
/// Fails only if libcrypto refuses the random method (a build without deprecated APIs).
pub fn seed_thread(seed: u64) -> Result<SeededThread, SeedError> {
    install_openssl_method()?;
    STREAM.with(|s| *s.borrow_mut() = Some(StdRng::seed_from_u64(seed)));
    Ok(SeededThread {
        _not_send: std::marker::PhantomData,
    })
}

impl Drop for SeededThread {
    fn drop(&mut self) {
        // `try_with`: the thread-local may already be gone when the thread is exiting.
        let _ = STREAM.try_with(|s| s.borrow_mut().take());
    }
}

/// libcrypto would not take the seeded random method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("libcrypto refused the seeded random method (RAND_set_rand_method)")]
pub struct SeedError;

/// Fills `buf` from the thread's seeded stream; false if the thread is not seeded.
pub(super) fn fill(buf: &mut [u8]) -> bool {
    STREAM
        .try_with(|s| match s.try_borrow_mut() {
            Ok(mut stream) => match stream.as_mut() {
                Some(rng) => {
                    rng.fill_bytes(buf);
                    true
                }
                None => false,
            },
            Err(_) => false,
        })
        .unwrap_or(false)
}

/// OpenSSL's `RAND_METHOD` (`struct rand_meth_st`, include/openssl/rand.h of 3.x).
#[repr(C)]
struct RandMethod {
    seed: Option<unsafe extern "C" fn(*const c_void, c_int) -> c_int>,
    bytes: Option<unsafe extern "C" fn(*mut c_uchar, c_int) -> c_int>,
    cleanup: Option<unsafe extern "C" fn()>,
    add: Option<unsafe extern "C" fn(*const c_void, c_int, c_double) -> c_int>,
    pseudorand: Option<unsafe extern "C" fn(*mut c_uchar, c_int) -> c_int>,
    status: Option<unsafe extern "C" fn() -> c_int>,
}

extern "C" {
    // libcrypto is linked by openssl-sys; this one symbol is not bound there.
    fn RAND_set_rand_method(meth: *const RandMethod) -> c_int;
}

static METHOD: RandMethod = RandMethod {
    seed: Some(ignore_seed),
    bytes: Some(method_bytes),
    cleanup: None,
    add: Some(ignore_add),
    pseudorand: Some(method_bytes),
    status: Some(always_ready),
};

fn install_openssl_method() -> Result<(), SeedError> {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    let installed = *INSTALLED.get_or_init(|| {
        // Make sure libcrypto is initialised before its method is replaced.
        openssl::init();
        // SAFETY: METHOD is a 'static, correctly laid out RAND_METHOD whose callbacks
        // never unwind.
        unsafe { RAND_set_rand_method(&METHOD) == 1 }
    });
    if installed {
        Ok(())
    } else {
        Err(SeedError)
    }
}

/// The `bytes` callback: the thread's seeded stream, else the OS-seeded CSPRNG.
unsafe extern "C" fn method_bytes(buf: *mut c_uchar, num: c_int) -> c_int {
    let Ok(len) = usize::try_from(num) else {
        return 0;
    };
    if len == 0 {
        return 1;
    }
    if buf.is_null() {
        return 0;
    }
    // SAFETY: OpenSSL passes a writable buffer of `num` bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(buf, len) };
    let filled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if !fill(out) {
            rand::rng().fill_bytes(out);
        }
    }));
    c_int::from(filled.is_ok())
}

unsafe extern "C" fn ignore_seed(_buf: *const c_void, _num: c_int) -> c_int {
    1
}

unsafe extern "C" fn ignore_add(_buf: *const c_void, _num: c_int, _entropy: c_double) -> c_int {
    1
}

unsafe extern "C" fn always_ready() -> c_int {
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::ecdsa::EcdsaSig;
    use openssl::nid::Nid;

    fn ec_key_and_signature(seed: u64) -> (Vec<u8>, Vec<u8>) {
        let _seeded = seed_thread(seed).unwrap();
        let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
        let key = EcKey::generate(&group).unwrap();
        let sig = EcdsaSig::sign(&[7u8; 32], &key).unwrap();
        (key.private_key().to_vec(), sig.to_der().unwrap())
    }

    #[test]
    fn the_same_seed_gives_the_same_openssl_keys_and_nonces() {
        let a = ec_key_and_signature(42);
        let b = ec_key_and_signature(42);
        let c = ec_key_and_signature(43);
        assert_eq!(a, b);
        assert_ne!(a.0, c.0);
        assert_ne!(a.1, c.1);
    }

    #[test]
    fn the_same_seed_gives_the_same_rsa_key() {
        let modulus = |seed| {
            let _seeded = seed_thread(seed).unwrap();
            openssl::rsa::Rsa::generate(1024).unwrap().n().to_vec()
        };
        assert_eq!(modulus(5), modulus(5));
        assert_ne!(modulus(5), modulus(6));
    }

    #[test]
    fn fill_follows_the_seed_and_only_while_the_guard_lives() {
        let draw = || {
            let mut b = [0u8; 16];
            super::super::fill(&mut b);
            b
        };
        let first = {
            let _s = seed_thread(7).unwrap();
            (draw(), draw())
        };
        let again = {
            let _s = seed_thread(7).unwrap();
            (draw(), draw())
        };
        assert_eq!(first, again);
        assert_ne!(first.0, first.1);
        assert_ne!(draw(), first.0, "an unseeded thread draws fresh bytes");
    }

    #[test]
    fn unseeded_threads_draw_fresh_openssl_bytes_after_installation() {
        let _s = seed_thread(1).unwrap();
        let other = std::thread::spawn(|| {
            let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
            openssl::rand::rand_bytes(&mut a).unwrap();
            openssl::rand::rand_bytes(&mut b).unwrap();
            (a, b)
        })
        .join()
        .unwrap();
        assert_ne!(other.0, other.1);
        assert_ne!(other.0, [0u8; 32]);
    }
}
