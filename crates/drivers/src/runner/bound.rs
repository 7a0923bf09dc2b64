//! The raw-crypto bound: the server's own public-key operations, timed on their own, and
//! the statistics that decide whether a run supports a bound ratio at all.
//!
//! Why paired: this machine's speed drifts 10-20 % within minutes, and a quick run's
//! three reps per case gave ratios of medians as low as 0.80, which no server can
//! reach (it cannot spend less than its own public-key work). Each probe-off handshake
//! is therefore timed right beside one run of the raw operations, on the same thread and
//! core, in alternating order, and the bound is the median of the per-pair ratios: drift
//! slower than one pair cancels out of every ratio. Its 95 % interval is the
//! distribution-free one of the median (order statistics, binomial ranks), so one
//! descheduled pair cannot move it. A ratio is only reported as a value when that
//! interval lies above 1 + [`BOUND_MARGIN`]; otherwise the run could not measure the bound
//! ([`BoundRatio::Failed`]), and says so with its pairs and spread.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::Serialize;
use wtls::crypto::pk::{self, KeyPair, PeerKey};
use wtls::crypto::prf::PrfHash;
use wtls::handshake::AuthMode;
use wtls::msgs::certificate::WtlsCertificate;
use wtls::pki;
use wtls::probe::Operation;
use wtlsperf_models::stats::{self, median_ci95_ranks};

use super::Variant;
use crate::pki_store::CaseCredentials;
use crate::setup;

/// How far above 1 the lower end of the ratio's 95 % interval must lie for the run to
/// report the ratio as a value. Small on purpose: for the RSA-3072 leaves the engine's
/// own work is under 1 % of the decryption, so a larger margin would fail cases whose
/// bound is real; large enough that an interval touching 1 does not pass.
pub const BOUND_MARGIN: f64 = 0.002;

/// Fewest pairs that give a 95 % interval of the median at all (with 5, the widest
/// order-statistic interval covers only 94 %).
pub const MIN_PAIRS_FOR_INTERVAL: usize = 6;

/// One probe-off handshake and one run of the raw public-key operations, timed next to
/// each other on one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BoundPair {
    /// Server thread CPU around its engine calls in a handshake with the probe off.
    pub server_cpu_ns: u64,
    /// Thread CPU of [`RawServerOps::run`].
    pub raw_pk_ns: u64,
}

impl BoundPair {
    /// Server CPU over its raw public-key work, for this pair.
    pub fn ratio(&self) -> Option<f64> {
        (self.raw_pk_ns > 0).then(|| self.server_cpu_ns as f64 / self.raw_pk_ns as f64)
    }
}

/// Why a run could not give a bound ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundFailure {
    /// Fewer than [`MIN_PAIRS_FOR_INTERVAL`] pairs: no 95 % interval exists.
    TooFewPairs,
    /// The 95 % interval of the median paired ratio lies wholly below 1: physically
    /// impossible, so the measurement failed (the machine moved between the two halves
    /// of the pairs).
    BelowOne,
    /// The 95 % interval reaches 1 + [`BOUND_MARGIN`] (a median below 1 whose interval
    /// reaches 1 included): not shown either way, the raw operations' own set-up can
    /// account for a ratio that close.
    NotSeparated,
}

impl BoundFailure {
    /// The name in `cases.csv` and JSON (`bound_status`).
    pub fn name(self) -> &'static str {
        match self {
            BoundFailure::TooFewPairs => "too_few_pairs",
            BoundFailure::BelowOne => "below_one",
            BoundFailure::NotSeparated => "not_separated",
        }
    }

    /// What went wrong, in words.
    pub fn describe(self) -> &'static str {
        match self {
            BoundFailure::TooFewPairs => "too few pairs for a 95 % interval",
            BoundFailure::BelowOne => {
                "the median paired ratio's whole interval below 1 (physically impossible)"
            }
            BoundFailure::NotSeparated => "95 % interval does not clear 1 by the margin",
        }
    }
}

/// How the paired ratios spread, reported beside a value and instead of one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BoundSpread {
    /// Pairs measured.
    pub pairs: usize,
    /// Distribution-free 95 % interval of the median ratio, when there are enough pairs.
    pub ci95: Option<(f64, f64)>,
    /// Lower and upper quartile of the paired ratios.
    pub quartiles: (f64, f64),
}

/// The bound ratio of one case, as far as the run supports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BoundRatio {
    /// The median paired ratio, whose 95 % interval lies above 1 + [`BOUND_MARGIN`].
    Bounded { ratio: f64, spread: BoundSpread },
    /// A measurement failure: no value, only why and how the pairs spread.
    Failed {
        failure: BoundFailure,
        spread: BoundSpread,
    },
}

impl BoundRatio {
    /// Decides a case's bound from its pairs; `None` without a usable pair.
    pub fn assess(pairs: &[BoundPair]) -> Option<BoundRatio> {
        let mut ratios: Vec<f64> = pairs.iter().filter_map(BoundPair::ratio).collect();
        ratios.sort_by(f64::total_cmp);
        let median = stats::median(&ratios)?;
        let spread = BoundSpread {
            pairs: ratios.len(),
            ci95: median_ci95_ranks(ratios.len()).map(|(lo, hi)| (ratios[lo - 1], ratios[hi - 1])),
            quartiles: (
                stats::percentile(&ratios, 25.0, stats::Rank::Linear)?,
                stats::percentile(&ratios, 75.0, stats::Rank::Linear)?,
            ),
        };
        let failure = match spread.ci95 {
            None => Some(BoundFailure::TooFewPairs),
            Some((_, hi)) if hi < 1.0 => Some(BoundFailure::BelowOne),
            Some((lo, _)) if lo <= 1.0 + BOUND_MARGIN => Some(BoundFailure::NotSeparated),
            Some(_) => None,
        };
        Some(match failure {
            None => BoundRatio::Bounded {
                ratio: median,
                spread,
            },
            Some(failure) => BoundRatio::Failed { failure, spread },
        })
    }

    /// The ratio, only when the run supports it.
    pub fn value(&self) -> Option<f64> {
        match self {
            BoundRatio::Bounded { ratio, .. } => Some(*ratio),
            BoundRatio::Failed { .. } => None,
        }
    }

    pub fn spread(&self) -> &BoundSpread {
        match self {
            BoundRatio::Bounded { spread, .. } | BoundRatio::Failed { spread, .. } => spread,
        }
    }

    /// `bounded`, or the failure's name.
    pub fn status(&self) -> &'static str {
        match self {
            BoundRatio::Bounded { .. } => "bounded",
            BoundRatio::Failed { failure, .. } => failure.name(),
        }
    }

    /// The failure's pairs and spread in one phrase, for reports.
    pub fn failure_text(&self) -> Option<String> {
        let BoundRatio::Failed { failure, spread } = self else {
            return None;
        };
        let ci = spread
            .ci95
            .map(|(lo, hi)| format!(", 95 % interval of the median {lo:.3}-{hi:.3}"))
            .unwrap_or_default();
        let what = match failure {
            BoundFailure::NotSeparated => "not shown",
            BoundFailure::TooFewPairs | BoundFailure::BelowOne => "measurement failure",
        };
        Some(format!(
            "{what} ({}): {} pairs, paired ratios' quartiles {:.3}-{:.3}{ci}",
            failure.describe(),
            spread.pairs,
            spread.quartiles.0,
            spread.quartiles.1
        ))
    }
}

/// More pairs after the reps, for runs whose reps alone cannot decide the bound (the
/// evaluation's quick mode has three reps per case), or not precisely.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundExtension {
    /// Pairs in all (reps' pairs included) after which the run stops adding.
    pub max_pairs: usize,
    /// Time the added pairs of one case may take.
    pub budget: Duration,
    /// Once bounded, the widest 95 % interval accepted, relative to the ratio (0.05: the
    /// interval spans at most 5 % of the ratio). Six pairs can clear 1 with an interval
    /// of [1.09, 1.42]; this keeps the value worth reading where the budget allows.
    pub relative_width: f64,
}

impl BoundExtension {
    /// Runs `pair(i)` (i counting on from the `existing` pairs) until
    /// [`BoundRatio::assess`] says bounded with an interval no wider than
    /// `relative_width`, or the extension's limits are reached, and
    /// returns the pairs it added. They come in batches of a quarter of those so far (at
    /// least enough to reach an interval), so the interval is looked at a few times, not
    /// after every pair.
    pub fn extend(
        &self,
        existing: &[BoundPair],
        mut pair: impl FnMut(usize) -> Result<BoundPair>,
    ) -> Result<Vec<BoundPair>> {
        let started = Instant::now();
        let mut all = existing.to_vec();
        loop {
            let n = all.len();
            let precise = match BoundRatio::assess(&all) {
                Some(BoundRatio::Bounded { ratio, spread }) => spread
                    .ci95
                    .is_some_and(|(lo, hi)| hi - lo <= self.relative_width * ratio),
                _ => false,
            };
            if precise || n >= self.max_pairs || started.elapsed() >= self.budget {
                break;
            }
            let batch = (n / 4).max(MIN_PAIRS_FOR_INTERVAL.saturating_sub(n)).max(1);
            for _ in 0..batch.min(self.max_pairs - n) {
                all.push(pair(all.len())?);
            }
        }
        Ok(all.split_off(existing.len()))
    }
}

/// Keeps the calling thread on the CPU it is running on until dropped, so both halves
/// of every pair run on one core (a migration between them would charge one half with
/// a cold cache). Best effort: where the affinity cannot be read or set, nothing changes.
pub(super) struct PinnedToCurrentCpu(Option<libc::cpu_set_t>);

impl PinnedToCurrentCpu {
    pub(super) fn new() -> Self {
        // SAFETY: sched_getcpu takes no arguments and only reads the calling thread's CPU.
        let cpu = unsafe { libc::sched_getcpu() };
        let previous = usize::try_from(cpu)
            .ok()
            .and_then(|cpu| setup::pin_current_thread(cpu).ok());
        PinnedToCurrentCpu(previous)
    }
}

impl Drop for PinnedToCurrentCpu {
    fn drop(&mut self) {
        if let Some(previous) = &self.0 {
            setup::restore_affinity(previous);
        }
    }
}

fn sha1(data: &[u8]) -> [u8; 20] {
    let mut out = [0u8; 20];
    out.copy_from_slice(&PrfHash::Sha1.digest(data));
    out
}

/// The server's raw public-key work in one case, prepared once on the case's keys.
///
/// The operations run on keys as the server has them: the client's public key arrives
/// with each handshake (its certificate, or its ClientKeyExchange point), so every rep
/// builds it anew from its wire form, as the engine must (for RSA that includes
/// OpenSSL's Montgomery set-up for the new modulus, for EC the point decoding and curve
/// check); the CA's key is long-lived and parsed once, as the engine caches it.
pub(crate) struct RawServerOps {
    server_key: KeyPair,
    /// RSA ClientKeyExchange ciphertext under the server's key.
    rsa_ciphertext: Option<Vec<u8>>,
    /// The client key the server runs ECDH with.
    ecdh: Option<EcdhPeer>,
    /// The client certificate's signature under the CA: key, digest, signature.
    ca_verify: Option<(PeerKey, [u8; 20], Vec<u8>)>,
    /// CertificateVerify under the client's certified key: certificate, digest, signature.
    client_verify: Option<(WtlsCertificate, [u8; 20], Vec<u8>)>,
    /// The ParameterIndex numbering the certificates are read under.
    numbering: wtls::params::ParameterNumbering,
}

/// Where the server's ECDH peer key comes from.
enum EcdhPeer {
    /// An ephemeral point from ClientKeyExchange (server-authenticated): cofactor ECDH
    /// on the received point.
    Untrusted(Vec<u8>),
    /// The client's certificate (mutual, optimised).
    Certified(WtlsCertificate),
}

impl RawServerOps {
    /// The operations of `variant`; `None` for the variants without a bound (anonymous,
    /// resumed).
    ///
    /// The optimised ECDH_ECDSA server (Herwono's flow, `send_optimised_flight`) takes
    /// the client's certificate from its own store and still validates it on every
    /// handshake (`validate_client`: the CA's signature over it), in both
    /// authentication modes, before its ECDH with the certified key: the bound counts
    /// that verification too.
    pub(super) fn prepare(
        creds: &CaseCredentials,
        auth: AuthMode,
        variant: Variant,
    ) -> Result<Option<Self>> {
        let rsa = creds.case.leaf.is_rsa();
        let optimised_ec = variant == Variant::Optimised && !rsa;
        match variant {
            Variant::Full | Variant::Optimised => {}
            Variant::Anonymous | Variant::Resumed => return Ok(None),
        }
        let mut ops = RawServerOps {
            server_key: creds.server_key.clone(),
            rsa_ciphertext: None,
            ecdh: None,
            ca_verify: None,
            client_verify: None,
            numbering: creds.numbering,
        };
        if rsa {
            // The WTLS RSA secret: version byte 1 and 19 secret bytes. Their values do
            // not change the cost of a private-key decryption.
            let mut secret = [0x5Au8; 20];
            secret[0] = 1;
            ops.rsa_ciphertext = Some(pk::rsa_encrypt(&creds.server_key.public_key()?, &secret)?);
        } else if auth == AuthMode::Mutual || optimised_ec {
            ops.ecdh = Some(EcdhPeer::Certified(creds.client_cert.clone()));
        } else {
            let point = match pk::ephemeral_ec(creds.case.leaf)?.public_wire()? {
                wtls::msgs::certificate::PublicKey::Ec(p) => p.0,
                wtls::msgs::certificate::PublicKey::Rsa(_) => bail!("an EC key has an EC point"),
            };
            ops.ecdh = Some(EcdhPeer::Untrusted(point));
        }
        if auth == AuthMode::Mutual || optimised_ec {
            let ca_key = pki::certificate_key(&creds.ca_cert, creds.numbering)?;
            let digest = sha1(&creds.client_cert.tbs_bytes());
            ops.ca_verify = Some((ca_key, digest, creds.client_cert.signature.clone()));
        }
        if auth == AuthMode::Mutual && rsa {
            let digest = sha1(b"handshake messages so far");
            let sig = pk::sign_digest(&creds.client_key, &digest)?;
            ops.client_verify = Some((creds.client_cert.clone(), digest, sig));
        }
        Ok(Some(ops))
    }

    /// The operations, under the names the server's probe books them by: RSADEC, ECDH,
    /// CERTCHECK (the CA's signature over the client's certificate), CVVERIFY. A test
    /// holds them equal to the public-key operations the server's probe recorded, so the
    /// denominator cannot miss one the server does (as it once missed the optimised
    /// flow's CERTCHECK).
    pub(super) fn operations(&self) -> Vec<Operation> {
        [
            (self.rsa_ciphertext.is_some(), Operation::RSADEC),
            (self.ecdh.is_some(), Operation::ECDH),
            (self.ca_verify.is_some(), Operation::CERTCHECK),
            (self.client_verify.is_some(), Operation::CVVERIFY),
        ]
        .into_iter()
        .filter_map(|(present, op)| present.then_some(op))
        .collect()
    }

    /// Runs the operations once; returns their thread CPU time. Every result is
    /// checked, so a failing operation cannot pass for a fast one. Never inlined, so that
    /// `scripts/bench-counts.sh` finds it by name in a callgrind profile.
    #[inline(never)]
    pub(crate) fn run(&self) -> Result<u64> {
        let t0 = setup::thread_cpu_ns();
        if let Some(ct) = &self.rsa_ciphertext {
            let secret = pk::rsa_decrypt(&self.server_key, ct)?;
            std::hint::black_box(&secret);
        }
        match &self.ecdh {
            Some(EcdhPeer::Untrusted(point)) => {
                std::hint::black_box(pk::ecdh_untrusted(&self.server_key, point)?);
            }
            Some(EcdhPeer::Certified(cert)) => {
                let peer = pki::certificate_key(cert, self.numbering)?;
                std::hint::black_box(pk::ecdh(&self.server_key, &peer)?);
            }
            None => {}
        }
        if let Some((key, digest, sig)) = &self.ca_verify {
            pk::verify_digest(key, digest, sig)?;
        }
        if let Some((cert, digest, sig)) = &self.client_verify {
            let key = pki::certificate_key(cert, self.numbering)?;
            pk::verify_digest(&key, digest, sig)?;
        }
        Ok(setup::thread_cpu_ns().saturating_sub(t0))
    }
}

/// The symmetric work a WTLS server cannot skip in a full handshake with the
/// experiments' suite (RC5_CBC with SHA-1, [`setup::default_cipher_suite`]), timed on
/// its own with the library's own functions: the transcript hash over
/// `transcript_bytes` bytes of handshake messages, the master secret, the key blocks
/// and cipher states of both directions (keys are derived on first use), the client's
/// Finished record decrypted and checked and its verify data computed, the server's
/// verify data computed and its Finished record sealed. Returns its thread CPU time.
///
/// Why: it is the floor under the bound ratio besides the public-key operations. Where
/// (raw public-key time + this floor) / raw public-key time already exceeds 1.10, no
/// implementation of the protocol can meet the 1.10 bound.
pub fn symmetric_floor_ns(transcript_bytes: usize) -> Result<u64> {
    use wtls::crypto::keys::{self, Direction};
    use wtls::crypto::prf::{self, TranscriptHash};
    use wtls::record::{CipherState, ProtectionParams};
    let suite = setup::default_cipher_suite();
    let hash = PrfHash::for_mac(suite.mac);
    let (client_random, server_random) = ([0x11u8; 16], [0x22u8; 16]);
    let messages = vec![0x5Au8; transcript_bytes];
    let params = |master: &[u8; 20]| ProtectionParams {
        bulk: suite.bulk,
        mac: suite.mac,
        key_refresh: 3,
        master_secret: zeroize::Zeroizing::new(*master),
        client_random,
        server_random,
    };
    // The client's Finished record, sealed outside the timed region.
    let master0 = keys::master_secret(hash, &[0x01; 20], &client_random, &server_random);
    let fin = prf::finished_verify_data(hash, &master0, prf::CLIENT_FINISHED, &[0; 20]);
    let mut client_write = CipherState::new(params(&master0), Direction::ClientWrite);
    let sealed = client_write.protect(2, 0x12, &fin)?;

    let t0 = setup::thread_cpu_ns();
    let mut transcript = TranscriptHash::new(hash);
    transcript.update(&messages);
    let master = keys::master_secret(hash, &[0x01; 20], &client_random, &server_random);
    let mut from_client = CipherState::new(params(&master), Direction::ClientWrite);
    let opened = from_client.unprotect(2, 0x12, &sealed)?;
    let expected =
        prf::finished_verify_data(hash, &master, prf::CLIENT_FINISHED, &transcript.current());
    std::hint::black_box((&opened, &expected));
    transcript.update(&opened);
    let ours =
        prf::finished_verify_data(hash, &master, prf::SERVER_FINISHED, &transcript.current());
    let mut to_client = CipherState::new(params(&master), Direction::ServerWrite);
    let record = to_client.protect(2, 0x12, &ours)?;
    std::hint::black_box(&record);
    Ok(setup::thread_cpu_ns().saturating_sub(t0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(ratios: &[f64]) -> Vec<BoundPair> {
        ratios
            .iter()
            .map(|r| BoundPair {
                server_cpu_ns: (r * 1e6) as u64,
                raw_pk_ns: 1_000_000,
            })
            .collect()
    }

    #[test]
    fn a_clear_interval_is_a_value_and_anything_else_a_failure() {
        let clear = BoundRatio::assess(&pairs(&[1.10, 1.12, 1.09, 1.11, 1.13, 1.10, 1.12]));
        assert!(matches!(clear, Some(BoundRatio::Bounded { .. })));
        assert!((clear.unwrap().value().unwrap() - 1.11).abs() < 1e-9);

        let few = BoundRatio::assess(&pairs(&[1.1, 1.2, 1.3])).unwrap();
        assert_eq!(few.status(), "too_few_pairs");
        assert_eq!(few.value(), None);

        let below = BoundRatio::assess(&pairs(&[0.8, 0.9, 0.85, 0.92, 0.95, 0.9, 0.93])).unwrap();
        assert_eq!(below.status(), "below_one");
        assert!(below.failure_text().unwrap().contains("7 pairs"));
        assert!(below
            .failure_text()
            .unwrap()
            .starts_with("measurement failure"));

        // A median just below 1 whose interval reaches 1: not shown either way.
        let close = BoundRatio::assess(&pairs(&[0.8, 0.9, 0.85, 1.2, 0.95, 0.9, 1.3])).unwrap();
        assert_eq!(close.status(), "not_separated");
        assert!(close.failure_text().unwrap().starts_with("not shown"));

        let straddling = BoundRatio::assess(&pairs(&[0.99, 1.05, 1.02, 1.08, 1.01, 1.06])).unwrap();
        assert_eq!(straddling.status(), "not_separated");
        assert_eq!(straddling.value(), None);
        assert_eq!(straddling.spread().ci95, Some((0.99, 1.08)));
        assert_eq!(BoundRatio::assess(&[]), None);
    }

    #[test]
    fn the_extension_stops_once_bounded_or_at_its_limit() {
        let ext = BoundExtension {
            max_pairs: 50,
            budget: Duration::from_secs(60),
            relative_width: 0.05,
        };
        let added = ext
            .extend(&pairs(&[1.1, 1.1, 1.1]), |i| {
                assert!(i >= 3);
                Ok(pairs(&[1.1])[0])
            })
            .unwrap();
        assert_eq!(added.len() + 3, MIN_PAIRS_FOR_INTERVAL);

        let alternating = |i: usize| Ok(pairs(&[if i.is_multiple_of(2) { 0.9 } else { 1.1 }])[0]);
        assert_eq!(ext.extend(&pairs(&[1.0]), alternating).unwrap().len(), 49);

        // Bounded from the first six, but 1.1-1.5 is too wide: more until it narrows.
        let wide = pairs(&[1.1, 1.5, 1.2, 1.3, 1.25, 1.2]);
        assert!(matches!(
            BoundRatio::assess(&wide),
            Some(BoundRatio::Bounded { .. })
        ));
        let added = ext.extend(&wide, |_| Ok(pairs(&[1.2])[0])).unwrap();
        assert!(!added.is_empty() && added.len() < 44, "{}", added.len());
    }
}
