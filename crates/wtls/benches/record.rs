//! Record-layer throughput: protect and unprotect, every bulk cipher with the MD5 and
//! SHA MACs, payloads of 256 to 8192 bytes (the shape of Herwono and Liebhardt's
//! record-layer tables 1 and 2).
//!
//! Self-contained on purpose: the `wtls` crate has no clocks, and the evaluation runs
//! its own loop over the same public API. Each cell is the median of several rounds;
//! a round repeats the operation until it has run for at least `MIN_ROUND` so that the
//! clock's resolution does not matter.
//!
//! `cargo bench -p wtls --bench record` prints a CSV table on stdout. Environment:
//! `WTLS_BENCH_ROUNDS` (default 7) rounds per cell, `WTLS_BENCH_MS` (default 20)
//! minimum milliseconds per round.

use std::hint::black_box;
use std::time::{Duration, Instant};

use wtls::crypto::keys::Direction;
use wtls::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};
use wtls::record::{CipherState, ProtectionParams};
use zeroize::Zeroizing;

const PAYLOADS: [usize; 6] = [256, 512, 1024, 2048, 4096, 8192];
const APP_DATA: u8 = 0xE4;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn params(bulk: BulkCipherAlgorithm, mac: MacAlgorithm) -> ProtectionParams {
    ProtectionParams {
        bulk,
        mac,
        // No refresh inside a measurement: the table is about the steady-state cost.
        key_refresh: 16,
        master_secret: Zeroizing::new([0x42; 20]),
        client_random: [1; 16],
        server_random: [2; 16],
    }
}

/// Median over `rounds` of the operations per second of `op`, each round lasting at
/// least `min_round`.
fn median_ops_per_sec(rounds: u64, min_round: Duration, mut op: impl FnMut(u16)) -> f64 {
    let mut rates = Vec::new();
    let mut seq = 0u16;
    for _ in 0..rounds {
        let start = Instant::now();
        let mut n = 0u64;
        loop {
            for _ in 0..16 {
                op(seq);
                seq = seq.wrapping_add(1);
            }
            n += 16;
            let elapsed = start.elapsed();
            if elapsed >= min_round {
                rates.push(n as f64 / elapsed.as_secs_f64());
                break;
            }
        }
    }
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

fn main() {
    let rounds = env_number("WTLS_BENCH_ROUNDS", 7).max(1);
    let min_round = Duration::from_millis(env_number("WTLS_BENCH_MS", 20));
    println!("bulk,mac,payload_bytes,protect_mbit_s,unprotect_mbit_s");
    for bulk in BulkCipherAlgorithm::ALL {
        for mac in [MacAlgorithm::Md5, MacAlgorithm::Sha] {
            for payload in PAYLOADS {
                let content: Vec<u8> = (0..payload).map(|i| i as u8).collect();
                let mut tx = CipherState::new(params(*bulk, mac), Direction::ClientWrite);
                let mut rx = CipherState::new(params(*bulk, mac), Direction::ClientWrite);

                let protect = median_ops_per_sec(rounds, min_round, |seq| {
                    black_box(tx.protect(seq, APP_DATA, black_box(&content)).ok());
                });

                // Unprotect a fixed set of genuine records, cycling through them.
                let records: Vec<(u16, Vec<u8>)> = (0..16u16)
                    .filter_map(|seq| Some((seq, tx.protect(seq, APP_DATA, &content).ok()?)))
                    .collect();
                let unprotect = median_ops_per_sec(rounds, min_round, |i| {
                    let (seq, fragment) = &records[usize::from(i) % records.len()];
                    let out = rx.unprotect(*seq, APP_DATA, black_box(fragment));
                    assert!(out.is_ok(), "{bulk}/{mac}: genuine record rejected");
                    black_box(out.ok());
                });

                let mbit = |ops: f64| ops * payload as f64 * 8.0 / 1e6;
                println!(
                    "{},{},{},{:.1},{:.1}",
                    bulk.name(),
                    mac.name(),
                    payload,
                    mbit(protect),
                    mbit(unprotect)
                );
            }
        }
    }
}
