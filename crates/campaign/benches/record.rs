//! Record-layer throughput: protect and unprotect, every bulk cipher with the MD5 and
//! SHA MACs, payloads of 256 to 8192 bytes (the shape of Herwono and Liebhardt's
//! record-layer tables 1 and 2).
//!
//! The harness is the evaluation's own ([`record_bench::measure_cell`]): this bench only
//! chooses the cells and the rounds, so that its figures and the evaluation's
//! `record_layer.csv` are measured the same way (the harness is the drivers', since the
//! `wtls` crate has no clocks; the bench stays beside the evaluation that reports it).
//!
//! `cargo bench -p wtlsperf-campaign --bench record` prints a CSV table on stdout. Environment:
//! `WTLS_BENCH_ROUNDS` (default 7) rounds per cell, `WTLS_BENCH_MS` (default 20)
//! minimum milliseconds per round.

use std::time::Duration;

use wtls::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};
use wtlsperf_drivers::record_bench;

const PAYLOADS: [usize; 6] = [256, 512, 1024, 2048, 4096, 8192];

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    let rounds = env_number("WTLS_BENCH_ROUNDS", 7).max(1) as usize;
    let round = Duration::from_millis(env_number("WTLS_BENCH_MS", 20));
    println!("bulk,mac,payload_bytes,protect_mbit_s,unprotect_mbit_s");
    for bulk in BulkCipherAlgorithm::ALL {
        for mac in [MacAlgorithm::Md5, MacAlgorithm::Sha] {
            for payload in PAYLOADS {
                let (protect, unprotect) =
                    record_bench::measure_cell(*bulk, mac, payload, rounds, round)?;
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
    Ok(())
}
