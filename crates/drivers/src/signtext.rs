//! What WMLScript's signText costs the signer: the private-key signature of a
//! transaction's digest, timed on this machine (the m-commerce part of the evaluation,
//! after Herwono-Liebhardt 2001, ICICS section 3.3).

use std::time::Instant;

use wtls::crypto::pk::{self, KeyPair, SHA1_LEN};

/// The median time (ms) of `reps` signatures of `digest` under `key`, and the last
/// signature, verified under the key's public half before it is returned (a figure of
/// a signature that does not verify would be no figure).
pub fn median_sign_ms(
    key: &KeyPair,
    digest: &[u8; SHA1_LEN],
    reps: usize,
) -> anyhow::Result<(f64, Vec<u8>)> {
    let mut times = Vec::with_capacity(reps);
    let mut sig = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        sig = pk::sign_digest(key, digest)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    pk::verify_digest(&key.public_key()?, digest, &sig)?;
    Ok((wtlsperf_models::stats::median(&times).unwrap_or(0.0), sig))
}
