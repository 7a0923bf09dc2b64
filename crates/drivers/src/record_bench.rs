//! The record layer's throughput harness: WTLS record protection
//! (`wtls::record::CipherState`) and, for the ciphers WTLS never defined (Serpent,
//! Twofish, as Herwono-Liebhardt 2001 measured them), raw CBC + HMAC-SHA-1 through
//! RustCrypto. The evaluation's record-layer part and `cargo bench -p wtlsperf-campaign
//! --bench record` both measure through it, so their figures are taken the same way.
//!
//! Each cell repeats the operation in rounds of a fixed minimum duration and keeps the
//! median round, so the clock's resolution and one-off interruptions do not matter.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cbc::cipher::consts::U16;
use cbc::cipher::{Array, BlockCipherEncrypt, BlockModeEncrypt, BlockSizeUser, InnerIvInit};
use hmac::{Hmac, KeyInit, Mac};
use sha1::Sha1;
use wtls::crypto::keys::Direction;
use wtls::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};
use wtls::record::{CipherState, ProtectionParams};
use zeroize::Zeroizing;

/// Record type byte of application data.
const APP_DATA: u8 = 0xE4;

fn params(bulk: BulkCipherAlgorithm, mac: MacAlgorithm) -> ProtectionParams {
    ProtectionParams {
        bulk,
        mac,
        // No key refresh inside a measurement: the table is about the steady state.
        key_refresh: 16,
        master_secret: Zeroizing::new([0x42; 20]),
        client_random: [1; 16],
        server_random: [2; 16],
    }
}

/// Median operations per second over `rounds` rounds of at least `round` each.
fn ops_per_s(rounds: usize, round: Duration, mut op: impl FnMut(u16)) -> f64 {
    let mut rates = Vec::with_capacity(rounds);
    let mut seq = 0u16;
    for _ in 0..rounds {
        let start = Instant::now();
        let mut n = 0u64;
        loop {
            op(seq);
            seq = seq.wrapping_add(1);
            n += 1;
            let e = start.elapsed();
            if e >= round {
                rates.push(n as f64 / e.as_secs_f64());
                break;
            }
        }
    }
    wtlsperf_models::stats::median(&rates).unwrap_or(0.0)
}

/// Operations per second of `protect` and of `unprotect` (median rounds) for one cell:
/// `payload`-byte records of application data under `bulk` and `mac`, through
/// `wtls::record::CipherState`. Unprotect cycles through 16 genuine records; one that is
/// rejected is an error, not a figure.
pub fn measure_cell(
    bulk: BulkCipherAlgorithm,
    mac: MacAlgorithm,
    payload: usize,
    rounds: usize,
    round: Duration,
) -> anyhow::Result<(f64, f64)> {
    let content: Vec<u8> = (0..payload).map(|i| i as u8).collect();
    let mut tx = CipherState::new(params(bulk, mac), Direction::ClientWrite);
    let mut rx = CipherState::new(params(bulk, mac), Direction::ClientWrite);
    let protect = ops_per_s(rounds, round, |seq| {
        black_box(tx.protect(seq, APP_DATA, black_box(&content)).ok());
    });
    let records: Vec<(u16, Vec<u8>)> = (0..16u16)
        .filter_map(|seq| Some((seq, tx.protect(seq, APP_DATA, &content).ok()?)))
        .collect();
    anyhow::ensure!(
        !records.is_empty(),
        "{}/{}: protect failed",
        bulk.name(),
        mac.name()
    );
    let mut failures = 0usize;
    let unprotect = ops_per_s(rounds, round, |i| {
        let (seq, fragment) = &records[usize::from(i) % records.len()];
        if rx.unprotect(*seq, APP_DATA, black_box(fragment)).is_err() {
            failures += 1;
        }
    });
    anyhow::ensure!(
        failures == 0,
        "{}/{}: genuine records rejected",
        bulk.name(),
        mac.name()
    );
    Ok((protect, unprotect))
}

/// A block cipher WTLS never defined, measured raw (CBC + HMAC-SHA-1), as Herwono and
/// Liebhardt compared it with the WTLS ciphers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawCipher {
    Serpent,
    Twofish,
}

impl RawCipher {
    pub const ALL: [RawCipher; 2] = [RawCipher::Serpent, RawCipher::Twofish];

    /// The name of its rows (`record_layer.csv`'s `cipher`).
    pub fn name(self) -> &'static str {
        match self {
            RawCipher::Serpent => "Serpent (raw CBC)",
            RawCipher::Twofish => "Twofish (raw CBC)",
        }
    }
}

/// Operations per second (median round) of HMAC-SHA-1 then CBC encryption of
/// `payload`-byte records under `cipher`, keyed once, as a connection keys its cipher
/// once (WTLS refreshes keys every 2^key_refresh records, not every record).
pub fn raw_protect_ops(
    cipher: RawCipher,
    payload: usize,
    rounds: usize,
    round: Duration,
) -> anyhow::Result<f64> {
    let key_error = |_| anyhow::anyhow!("{}: a 16-byte key", cipher.name());
    Ok(match cipher {
        RawCipher::Serpent => {
            let c = serpent::Serpent::new_from_slice(&RAW_KEY).map_err(key_error)?;
            raw_cbc_hmac(payload, rounds, round, &|b| cbc_encrypt(&c, b))
        }
        RawCipher::Twofish => {
            let c = twofish::Twofish::new_from_slice(&RAW_KEY).map_err(key_error)?;
            raw_cbc_hmac(payload, rounds, round, &|b| cbc_encrypt(&c, b))
        }
    })
}

/// The 128-bit key of the raw ciphers (Herwono-Liebhardt's key length).
const RAW_KEY: [u8; 16] = [7; 16];

/// What a raw cipher costs apart from the record: its key schedule and one 16-byte
/// block, so that a low throughput is traced to one or the other
/// (`record_layer_raw_ciphers.csv`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RawCipherCost {
    pub cipher: String,
    /// One key schedule (µs), median round.
    pub key_schedule_us: f64,
    /// One block encryption with the key kept (ns), median round.
    pub block_ns: f64,
}

impl RawCipherCost {
    /// The key schedule and block cost of `cipher`.
    pub fn measure(cipher: RawCipher, rounds: usize, round: Duration) -> anyhow::Result<Self> {
        match cipher {
            RawCipher::Serpent => {
                Self::measure_one::<serpent::Serpent>(cipher.name(), rounds, round)
            }
            RawCipher::Twofish => {
                Self::measure_one::<twofish::Twofish>(cipher.name(), rounds, round)
            }
        }
    }

    fn measure_one<C: KeyInit + BlockCipherEncrypt + BlockSizeUser<BlockSize = U16>>(
        name: &str,
        rounds: usize,
        round: Duration,
    ) -> anyhow::Result<RawCipherCost> {
        let cipher = C::new_from_slice(&RAW_KEY).map_err(|_| anyhow::anyhow!("{name}: key"))?;
        let keys = ops_per_s(rounds, round, |_| {
            black_box(C::new_from_slice(black_box(&RAW_KEY)).ok());
        });
        let mut block = Array::<u8, U16>::default();
        let blocks = ops_per_s(rounds, round, |_| {
            cipher.encrypt_block(black_box(&mut block));
        });
        Ok(RawCipherCost {
            cipher: name.to_owned(),
            key_schedule_us: 1e6 / keys,
            block_ns: 1e9 / blocks,
        })
    }
}

/// CBC-encrypts whole 16-byte blocks in place under an already keyed `cipher` and a
/// fixed IV.
fn cbc_encrypt<C>(cipher: &C, buf: &mut [u8]) -> bool
where
    C: Clone + BlockCipherEncrypt + BlockSizeUser<BlockSize = U16>,
    cbc::Encryptor<C>: InnerIvInit<Inner = C> + BlockModeEncrypt + BlockSizeUser<BlockSize = U16>,
{
    let Ok(mut enc) = cbc::Encryptor::<C>::inner_iv_slice_init(cipher.clone(), &[9u8; 16]) else {
        return false;
    };
    let (blocks, tail) = Array::<u8, U16>::slice_as_chunks_mut(buf);
    if !tail.is_empty() {
        return false;
    }
    enc.encrypt_blocks(blocks);
    true
}

/// Operations per second of HMAC-SHA-1 then CBC encryption (padded to the block) of
/// `payload` bytes: what a WTLS record with that cipher would cost.
fn raw_cbc_hmac(
    payload: usize,
    rounds: usize,
    round: Duration,
    encrypt: &dyn Fn(&mut [u8]) -> bool,
) -> f64 {
    let content: Vec<u8> = (0..payload).map(|i| i as u8).collect();
    let mac_key = [5u8; 20];
    ops_per_s(rounds, round, |_| {
        let Ok(mut mac) = <Hmac<Sha1> as KeyInit>::new_from_slice(&mac_key) else {
            return;
        };
        mac.update(&content);
        let tag = mac.finalize().into_bytes();
        let mut buf = Vec::with_capacity(payload + 40);
        buf.extend_from_slice(&content);
        buf.extend_from_slice(&tag);
        let pad = (16 - (buf.len() + 1) % 16) % 16;
        buf.resize(buf.len() + pad + 1, pad as u8);
        black_box(encrypt(&mut buf));
        black_box(&buf);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_measures_both_directions_of_genuine_records() {
        let (protect, unprotect) = measure_cell(
            BulkCipherAlgorithm::Rc5Cbc,
            MacAlgorithm::Sha,
            256,
            1,
            Duration::from_millis(1),
        )
        .unwrap();
        assert!(protect > 0.0 && unprotect > 0.0);
    }

    #[test]
    fn raw_cbc_throughput_is_positive() {
        assert!(
            raw_protect_ops(RawCipher::Serpent, 256, 1, Duration::from_millis(1)).unwrap() > 0.0
        );
    }

    #[test]
    fn raw_costs_are_measured_apart_from_the_record() {
        let c = RawCipherCost::measure(RawCipher::Twofish, 1, Duration::from_millis(1)).unwrap();
        assert!(c.key_schedule_us > 0.0 && c.block_ns > 0.0);
    }
}
