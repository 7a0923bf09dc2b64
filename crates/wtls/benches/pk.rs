//! Overhead of the `wtls::crypto::pk` wrappers against direct openssl-crate calls.
//!
//! For every parameter specifier and every public-key operation the handshake performs,
//! the wrapper ("ours") and the equivalent direct OpenSSL call ("direct") run on the
//! same keys in the same process, interleaved in batches (ours, direct, ours, direct,
//! ...) so that frequency scaling and background load hit both alike. Each side's
//! figure is the median over rounds of the per-operation time of a batch; the ratio is
//! the median of the per-round ratios ours/direct (a paired comparison, robust against
//! drift during the run). The target is a ratio below 1.05.
//!
//! Run: `cargo bench -p wtls --bench pk`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use openssl::derive::Deriver;
use openssl::ecdsa::EcdsaSig;
use openssl::rsa::Padding;
use openssl::sha::sha1;
use wtls::crypto::pk::{self, KeyPair, PeerKey};
use wtls::suite::Specifier;

/// Rounds per operation (each round = one batch of each side).
const ROUNDS: usize = 31;
/// Wall time one batch should take; the batch size is calibrated to it.
const BATCH_TARGET: Duration = Duration::from_millis(4);
/// Overhead target: ours/direct below this.
const TARGET_RATIO: f64 = 1.05;

struct Row {
    spec: Specifier,
    op: &'static str,
    ours_us: f64,
    direct_us: f64,
    ratio: f64,
}

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

fn compare(
    spec: Specifier,
    op: &'static str,
    mut ours: impl FnMut(),
    mut direct: impl FnMut(),
) -> Row {
    // Warm up both paths (caches, OpenSSL's lazily exported provider keys), then size
    // the batch from the slower of the two.
    let single = batch(3, &mut ours).max(batch(3, &mut direct));
    let n = ((BATCH_TARGET.as_nanos() as f64 / single) as usize).max(1);
    let mut ours_ns = Vec::with_capacity(ROUNDS);
    let mut direct_ns = Vec::with_capacity(ROUNDS);
    let mut ratios = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        // Alternate which side goes first, so neither always inherits the other's
        // cache state.
        let (o, d) = if round % 2 == 0 {
            let o = batch(n, &mut ours);
            (o, batch(n, &mut direct))
        } else {
            let d = batch(n, &mut direct);
            (batch(n, &mut ours), d)
        };
        ours_ns.push(o);
        direct_ns.push(d);
        ratios.push(o / d);
    }
    Row {
        spec,
        op,
        ours_us: median(&mut ours_ns) / 1000.0,
        direct_us: median(&mut direct_ns) / 1000.0,
        ratio: median(&mut ratios),
    }
}

fn peer(key: &KeyPair) -> PeerKey {
    PeerKey::from_wire(key.spec(), &key.public_wire().expect("public key")).expect("own key parses")
}

fn ec_rows(spec: Specifier, rows: &mut Vec<Row>) {
    let a = KeyPair::generate(spec).expect("key generation");
    let b = KeyPair::generate(spec).expect("key generation");
    let pb = peer(&b);
    let pa = peer(&a);
    let a_pkey = a.openssl_pkey().clone();
    let b_pub = pb.openssl_pkey().clone();
    let a_ec = a_pkey.ec_key().expect("EC key");
    let pa_ec = pa.openssl_pkey().ec_key().expect("EC key");
    let message = [0x42u8; 200];

    rows.push(compare(
        spec,
        "ECDH",
        || {
            black_box(pk::ecdh(&a, &pb).expect("ecdh"));
        },
        || {
            // The peer key was validated when parsed in both cases.
            let mut d = Deriver::new(&a_pkey).expect("deriver");
            d.set_peer_ex(&b_pub, false).expect("peer");
            black_box(d.derive_to_vec().expect("derive"));
        },
    ));
    rows.push(compare(
        spec,
        "ECDSA sign",
        || {
            black_box(pk::ecdsa_sign(&a, black_box(&message)).expect("sign"));
        },
        || {
            let digest = sha1(black_box(&message));
            let sig = EcdsaSig::sign(&digest, &a_ec).expect("sign");
            black_box(sig.to_der().expect("der"));
        },
    ));
    let sig = pk::ecdsa_sign(&a, &message).expect("sign");
    rows.push(compare(
        spec,
        "ECDSA verify",
        || {
            pk::ecdsa_verify(&pa, black_box(&message), &sig).expect("verify");
        },
        || {
            let digest = sha1(black_box(&message));
            let parsed = EcdsaSig::from_der(&sig).expect("der");
            assert!(parsed.verify(&digest, &pa_ec).expect("verify"));
        },
    ));
}

fn rsa_rows(spec: Specifier, rows: &mut Vec<Row>) {
    let a = KeyPair::generate(spec).expect("key generation");
    let pa = peer(&a);
    let rsa = a.openssl_pkey().rsa().expect("RSA key");
    let rsa_pub = pa.openssl_pkey().rsa().expect("RSA key");
    let size = rsa.size() as usize;
    let secret = [0x01u8; 20];
    let digest = sha1(b"ToBeSignedCertificate");

    rows.push(compare(
        spec,
        "RSA encrypt",
        || {
            black_box(pk::rsa_encrypt(&pa, black_box(&secret)).expect("encrypt"));
        },
        || {
            let mut out = vec![0u8; size];
            let n = rsa_pub
                .public_encrypt(black_box(&secret), &mut out, Padding::PKCS1)
                .expect("encrypt");
            out.truncate(n);
            black_box(out);
        },
    ));
    let ct = pk::rsa_encrypt(&pa, &secret).expect("encrypt");
    rows.push(compare(
        spec,
        "RSA decrypt",
        || {
            black_box(pk::rsa_decrypt(&a, black_box(&ct)).expect("decrypt"));
        },
        || {
            let mut out = vec![0u8; size];
            let n = rsa
                .private_decrypt(black_box(&ct), &mut out, Padding::PKCS1)
                .expect("decrypt");
            out.truncate(n);
            black_box(out);
        },
    ));
    rows.push(compare(
        spec,
        "RSA sign",
        || {
            black_box(pk::rsa_sign_digest(&a, black_box(&digest)).expect("sign"));
        },
        || {
            let mut out = vec![0u8; size];
            let n = rsa
                .private_encrypt(black_box(&digest), &mut out, Padding::PKCS1)
                .expect("sign");
            out.truncate(n);
            black_box(out);
        },
    ));
    let sig = pk::rsa_sign_digest(&a, &digest).expect("sign");
    rows.push(compare(
        spec,
        "RSA verify",
        || {
            pk::rsa_verify_digest(&pa, black_box(&digest), &sig).expect("verify");
        },
        || {
            let mut out = vec![0u8; size];
            let n = rsa_pub
                .public_decrypt(&sig, &mut out, Padding::PKCS1)
                .expect("verify");
            assert!(n == 20 && openssl::memcmp::eq(&out[..n], black_box(&digest)));
        },
    ));
}

fn main() {
    // `cargo bench` passes "--bench"; a filter argument selects specifiers by name.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    println!(
        "wtls::crypto::pk vs direct openssl calls ({}), {ROUNDS} interleaved rounds, medians",
        openssl::version::version()
    );
    println!(
        "{:<8} {:<13} {:>11} {:>11} {:>8}",
        "spec", "operation", "ours_us", "direct_us", "ratio"
    );
    let mut rows = Vec::new();
    for spec in Specifier::ALL {
        if !filter.is_empty() && !filter.iter().any(|f| f == spec.short()) {
            continue;
        }
        if let Some(reason) = spec.unavailability() {
            println!("{:<8} skipped: {reason}", spec.short());
            continue;
        }
        let first = rows.len();
        if spec.is_rsa() {
            rsa_rows(spec, &mut rows);
        } else {
            ec_rows(spec, &mut rows);
        }
        for r in &rows[first..] {
            println!(
                "{:<8} {:<13} {:>11.2} {:>11.2} {:>8.3}",
                r.spec.short(),
                r.op,
                r.ours_us,
                r.direct_us,
                r.ratio
            );
        }
    }
    if let Some(worst) = rows.iter().max_by(|a, b| a.ratio.total_cmp(&b.ratio)) {
        println!(
            "worst ratio {:.3} ({} {}): overhead {:+.1} % against the target of < {:.0} %: {}",
            worst.ratio,
            worst.spec.short(),
            worst.op,
            (worst.ratio - 1.0) * 100.0,
            (TARGET_RATIO - 1.0) * 100.0,
            if worst.ratio < TARGET_RATIO {
                "met"
            } else {
                "NOT met"
            }
        );
    }
}
