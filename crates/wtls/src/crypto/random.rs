//! Random bytes for the handshake's nonces (the Random structures, session identifiers,
//! the stand-in secret of a failed RSA decryption) and a SHA-1 for hashing on the hot path.
//!
//! Why not OpenSSL for these: in OpenSSL 3 every `RAND_bytes` goes through the default
//! provider's DRBG behind locks, and every one-shot digest fetches its algorithm by name;
//! each costs about a microsecond, which on the fast curves is a few percent of the
//! gateway's whole handshake. `rand`'s thread-local generator is a CSPRNG (ChaCha12,
//! seeded and periodically reseeded from the operating system) and costs tens of
//! nanoseconds; RustCrypto's SHA-1 uses the SHA extensions where the CPU has them.
//! The client's RSA pre-master secret and every private key still come from OpenSSL;
//! the stand-in secret of a failed RSA decryption (which only has to be unpredictable
//! and is thrown away with the handshake) comes from here.
//!
//! For tests and instruction counts a thread can be *seeded* ([`seed_thread`]): then
//! every random byte that thread draws, here and inside OpenSSL, comes from one seeded
//! stream, so the same inputs replay the same handshake exactly.

use digest::Digest;
use rand::Rng;

use super::sha1::Sha1;

mod seeded;

pub use seeded::{seed_thread, SeededThread};

/// Fills `buf` from the thread's CSPRNG, or from its seeded stream while
/// [`seed_thread`]'s guard lives.
pub fn fill(buf: &mut [u8]) {
    if !seeded::fill(buf) {
        rand::rng().fill_bytes(buf);
    }
}

/// SHA-1 of `data`.
pub fn sha1(data: &[u8]) -> [u8; 20] {
    Sha1::digest(data).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_matches_openssl() {
        for data in [&b""[..], b"abc", &[0x5a; 1000]] {
            assert_eq!(sha1(data), openssl::sha::sha1(data));
        }
    }

    #[test]
    fn public_randoms_differ() {
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        fill(&mut a);
        fill(&mut b);
        assert_ne!(a, b);
        assert_ne!(a, [0u8; 16]);
    }
}
