//! Wall time of the OpenSSL-backed SHA-1 (`wtls::crypto::sha1::Sha1`) against the
//! `sha1` crate the engine used before, in the shapes a handshake uses them.
//!
//! The engine took SHA-1 from OpenSSL for its instruction count (valgrind hides the SHA
//! extensions, so the `sha1` crate runs its portable code there); this bench checks that
//! real time does not get worse on the CPU at hand, where both may use SHA-NI. The two
//! run in the same process, interleaved in batches with alternating order, and the
//! ratio is the median of the per-round ratios ours/RustCrypto (a paired comparison, as
//! in the `pk` bench). Target: a ratio at most 1.05 in every row.
//!
//! Run: `cargo bench -p wtls --bench sha1`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use sha1::Digest;
use wtls::crypto::sha1::Sha1 as OpenSslSha1;

const ROUNDS: usize = 31;
const BATCH_TARGET: Duration = Duration::from_millis(4);
const TARGET_RATIO: f64 = 1.05;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Nanoseconds per call of `f` over a batch of `n` calls.
fn batch(n: usize, f: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

/// (ours ns, RustCrypto ns, median ratio)
fn compare(mut ours: impl FnMut(), mut theirs: impl FnMut()) -> (f64, f64, f64) {
    let single = batch(100, &mut ours).max(batch(100, &mut theirs));
    let n = ((BATCH_TARGET.as_nanos() as f64 / single) as usize).max(1);
    let (mut o_ns, mut t_ns, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (o, t) = if round % 2 == 0 {
            let o = batch(n, &mut ours);
            (o, batch(n, &mut theirs))
        } else {
            let t = batch(n, &mut theirs);
            (batch(n, &mut ours), t)
        };
        o_ns.push(o);
        t_ns.push(t);
        ratios.push(o / t);
    }
    (median(&mut o_ns), median(&mut t_ns), median(&mut ratios))
}

/// A keyed HMAC state cloned and run over `message` (the PRF's and the record MAC's use).
fn hmac_row<'a, M: Mac + Clone>(keyed: &'a M, message: &'a [u8]) -> impl FnMut() + 'a {
    move || {
        let mut m = keyed.clone();
        m.update(black_box(message));
        black_box(m.finalize().into_bytes());
    }
}

fn main() {
    let key = [0x5au8; 20];
    let ours_keyed = <Hmac<OpenSslSha1> as KeyInit>::new_from_slice(&key).expect("key");
    let theirs_keyed = <Hmac<sha1::Sha1> as KeyInit>::new_from_slice(&key).expect("key");
    let mut rows = Vec::new();
    for (what, len) in [
        ("HMAC, PRF A(i) 20 B", 20),
        ("HMAC, PRF block 70 B", 70),
        ("HMAC, record 1 KiB", 1024),
    ] {
        let msg = vec![0x33u8; len];
        let r = compare(hmac_row(&ours_keyed, &msg), hmac_row(&theirs_keyed, &msg));
        rows.push((what, r));
    }
    let r = compare(
        || {
            black_box(
                <Hmac<OpenSslSha1> as KeyInit>::new_from_slice(black_box(&key)).expect("key"),
            );
        },
        || {
            black_box(<Hmac<sha1::Sha1> as KeyInit>::new_from_slice(black_box(&key)).expect("key"));
        },
    );
    rows.push(("HMAC keying", r));
    let transcript = vec![0x11u8; 600];
    let r = compare(
        || {
            black_box(OpenSslSha1::digest(black_box(&transcript)));
        },
        || {
            black_box(sha1::Sha1::digest(black_box(&transcript)));
        },
    );
    rows.push(("digest, transcript 600 B", r));

    println!(
        "{:<26} {:>10} {:>12} {:>7}",
        "shape", "ours ns", "sha1 crate", "ratio"
    );
    let mut worst: f64 = 0.0;
    for (what, (o, t, ratio)) in &rows {
        println!("{what:<26} {o:>10.1} {t:>12.1} {ratio:>7.3}");
        worst = worst.max(*ratio);
    }
    println!(
        "worst ratio {worst:.3} (target at most {TARGET_RATIO}): {}",
        if worst <= TARGET_RATIO {
            "met"
        } else {
            "NOT met"
        }
    );
}
