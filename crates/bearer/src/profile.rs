//! Bearer link profiles: data rates, one-way traversal delay and impairments, each with the
//! study or standard its numbers come from.
//!
//! The thesis (Bayoglu 2004, §3.3) models a WAP bearer by two quantities only: a channel
//! rate `R` and a one-way "traversal delay" `T_traversal` that every datagram pays once per
//! direction regardless of its size (Eq. 3.84). A [`LinkProfile`] carries exactly those two
//! quantities per direction, plus the impairments (loss, duplication, reordering) the studies
//! did not model but a real datagram transport must survive.

use std::time::Duration;

use rand::{Rng, RngExt};
use rand_distr::{Distribution, LogNormal, Normal};

use crate::ProfileError;

/// Bytes a UDP/IPv4 datagram adds to its payload (20-byte IPv4 header + 8-byte UDP header).
///
/// Herwono-Liebhardt's message-group sizes include "WDP and IP overhead", i.e. this amount,
/// so every profile that models a real IP bearer charges it to the serialisation time.
pub const UDP_IPV4_OVERHEAD_BYTES: usize = 28;

/// Distribution of the one-way traversal delay a datagram experiences after it left the
/// bottleneck link. Parameters are in milliseconds because that is how every source reports
/// them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DelayDistribution {
    /// The same delay for every datagram (no jitter).
    Fixed(f64),
    /// Gaussian, truncated at zero by resampling (a delay cannot be negative). The thesis
    /// reports traversal delay as mean and standard deviation only (Tables 4.14, 4.15), so
    /// the normal law is the least-assumption reading of those two numbers. When `sd_ms` is
    /// large compared with `mean_ms` the truncation raises the realised mean slightly (for
    /// the 4 PM GPRS slot, 397.0 ± 213.9 ms, about 3 % of the mass lies below zero).
    Normal {
        /// Mean of the untruncated normal, ms.
        mean_ms: f64,
        /// Standard deviation of the untruncated normal, ms.
        sd_ms: f64,
    },
    /// Log-normal with the given mean and standard deviation of the delay itself (not of its
    /// logarithm): a right-skewed alternative for cellular latency, never negative.
    LogNormal {
        /// Mean delay, ms.
        mean_ms: f64,
        /// Standard deviation of the delay, ms.
        sd_ms: f64,
    },
    /// Uniform between two bounds, ms.
    Uniform {
        /// Smallest delay, ms.
        min_ms: f64,
        /// Largest delay, ms.
        max_ms: f64,
    },
}

/// How many times a truncated normal is redrawn before giving up and returning zero; only
/// reachable with absurd parameters (mean many standard deviations below zero).
const MAX_TRUNCATION_REDRAWS: usize = 64;

impl DelayDistribution {
    /// The zero delay used for control runs and for studies that model rate only.
    pub const ZERO: DelayDistribution = DelayDistribution::Fixed(0.0);

    /// Mean of the distribution as parameterised, ms (for `Normal`, the untruncated mean).
    pub fn mean_ms(&self) -> f64 {
        match *self {
            DelayDistribution::Fixed(ms) => ms,
            DelayDistribution::Normal { mean_ms, .. } => mean_ms,
            DelayDistribution::LogNormal { mean_ms, .. } => mean_ms,
            DelayDistribution::Uniform { min_ms, max_ms } => (min_ms + max_ms) / 2.0,
        }
    }

    /// Checks the parameters are finite and meaningful.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let bad = |why: &str| Err(ProfileError::InvalidDelay(format!("{self:?}: {why}")));
        match *self {
            DelayDistribution::Fixed(ms) => {
                if !(ms.is_finite() && ms >= 0.0) {
                    return bad("delay must be finite and >= 0");
                }
            }
            DelayDistribution::Normal { mean_ms, sd_ms } => {
                if !(mean_ms.is_finite() && sd_ms.is_finite() && sd_ms >= 0.0) {
                    return bad("mean must be finite and sd finite and >= 0");
                }
            }
            DelayDistribution::LogNormal { mean_ms, sd_ms } => {
                if !(mean_ms.is_finite() && mean_ms > 0.0 && sd_ms.is_finite() && sd_ms >= 0.0) {
                    return bad("mean must be > 0 and sd >= 0");
                }
            }
            DelayDistribution::Uniform { min_ms, max_ms } => {
                if !(min_ms.is_finite() && max_ms.is_finite() && 0.0 <= min_ms && min_ms <= max_ms)
                {
                    return bad("need 0 <= min <= max");
                }
            }
        }
        Ok(())
    }

    /// Draws one traversal delay. Parameters must have passed [`validate`](Self::validate);
    /// invalid ones yield zero rather than a panic.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        let ms = match *self {
            DelayDistribution::Fixed(ms) => ms,
            DelayDistribution::Normal { mean_ms, sd_ms } => match Normal::new(mean_ms, sd_ms) {
                Ok(normal) => (0..MAX_TRUNCATION_REDRAWS)
                    .map(|_| normal.sample(rng))
                    .find(|ms| *ms >= 0.0)
                    .unwrap_or(0.0),
                Err(_) => 0.0,
            },
            DelayDistribution::LogNormal { mean_ms, sd_ms } => {
                // Moment matching: for X = exp(N(mu, sigma^2)), E[X] = exp(mu + sigma^2/2)
                // and Var[X] = (exp(sigma^2) - 1) E[X]^2.
                let sigma2 = (1.0 + (sd_ms / mean_ms).powi(2)).ln();
                let mu = mean_ms.ln() - sigma2 / 2.0;
                match LogNormal::new(mu, sigma2.sqrt()) {
                    Ok(log_normal) => log_normal.sample(rng),
                    Err(_) => 0.0,
                }
            }
            DelayDistribution::Uniform { min_ms, max_ms } => {
                if max_ms > min_ms {
                    rng.random_range(min_ms..=max_ms)
                } else {
                    min_ms
                }
            }
        };
        if ms.is_finite() && ms > 0.0 {
            Duration::from_secs_f64(ms / 1000.0)
        } else {
            Duration::ZERO
        }
    }
}

/// One emulated bearer: rates per direction, one-way traversal delay and impairments.
///
/// "Up" is client → gateway, "down" is gateway → client. Rates are in bit/s; `f64::INFINITY`
/// means the link adds no serialisation time (the `loopback` control profile).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkProfile {
    /// Registry name, e.g. `gsm-csd`.
    pub name: String,
    /// Client → gateway rate, bit/s.
    pub up_bps: f64,
    /// Gateway → client rate, bit/s.
    pub down_bps: f64,
    /// One-way traversal delay, drawn independently per datagram and direction.
    pub traversal: DelayDistribution,
    /// Probability a datagram is lost (after it has occupied the link: radio loss).
    pub loss: f64,
    /// Probability a datagram is delivered twice.
    pub duplicate: f64,
    /// Probability a datagram is held back and delivered right after the next one in the same
    /// direction.
    pub reorder: f64,
    /// Bytes added to each payload when computing its serialisation time (28 = UDP + IPv4).
    pub per_datagram_overhead_bytes: usize,
    /// Where the numbers come from.
    pub source: &'static str,
}

const SRC_LOOPBACK: &str = "control profile: no rate limit, no delay, no impairment";
const SRC_GSM_CSD: &str = "Bayoglu 2004 thesis: GSM CSD 9600 bit/s (Sec. 4.3.1); traversal \
     391.3 +/- 90.0 ms estimated from 48 measured handshakes with Eq. 4.1 (Table 4.15); \
     overhead 28 B = UDP + IPv4";
const SRC_GPRS_SLOT: &str = "Bayoglu 2004 thesis: GPRS CS-2, Nokia 7650 (1 up / 3 down slots); \
     measured up/down rates of the time slot (Table 4.13) and traversal mean/sd from ping RTT \
     with Eq. 4.2 (Table 4.14); overhead 28 B = UDP + IPv4";
const SRC_GPRS_WORST: &str = "Bayoglu 2004 thesis Table 4.15 GPRS worst case = 8 PM slot: \
     rates 11.33 up / 19.0 down kbit/s (Table 4.13), traversal 398.4 +/- 213.9 ms; overhead 28 B";
const SRC_GPRS_AVG: &str = "Bayoglu 2004 thesis Table 4.15 GPRS average case = 12 PM slot: \
     rates 10.5 up / 18.77 down kbit/s (Table 4.13), traversal 376.1 +/- 141.2 ms; overhead 28 B";
const SRC_GPRS_BEST: &str = "Bayoglu 2004 thesis Table 4.15 GPRS best case = 12 AM slot: \
     rates 12.76 up / 28.89 down kbit/s (Table 4.13), traversal 351.4 +/- 120.1 ms; overhead 28 B";
const SRC_LEVI_BEST: &str = "Levi & Savas 2003 best case: 56 kbit/s channel; their model is \
     T_data = 8L/R with no latency term, so no traversal delay is added; overhead 28 B \
     (set 0 with with_overhead to match their L exactly)";
const SRC_LEVI_WORST: &str = "Levi & Savas 2003 worst case: 6 kbit/s channel; their model is \
     T_data = 8L/R with no latency term, so no traversal delay is added; overhead 28 B \
     (set 0 with with_overhead to match their L exactly)";
const SRC_HERWONO: &str = "Herwono & Liebhardt 2001 Fig. 4: symmetric effective throughput \
     swept 1-20 kbit/s (uplink = downlink, their footnote 6); latency not reported, so no \
     traversal delay; overhead 28 B (their message sizes include WDP + IP)";
const SRC_EDGE: &str = "typical figures, not measurements: EGPRS (EDGE) multislot class 10 \
     device, ~120 kbit/s down / ~60 kbit/s up achieved of 236.8/118.4 kbit/s peak (3GPP TS \
     45.002/45.003 MCS-9, 59.2 kbit/s per slot); one-way latency ~150 ms (GSMA/3GPP typical \
     EGPRS RTT ~300 ms); overhead 28 B";
const SRC_UMTS: &str = "typical figures, not measurements: UMTS Release 99 DCH 384 kbit/s down \
     / 64 kbit/s up (3GPP TS 25.306 bearer classes); one-way latency ~90 ms (typical R99 RTT \
     150-200 ms); overhead 28 B";
const SRC_LTE_M: &str = "typical figures, not measurements: LTE-M Cat-M1 (3GPP Rel-13) \
     half-duplex FDD ~300 kbit/s down / ~375 kbit/s up peak; one-way latency ~50 ms (GSMA \
     LTE-M deployment guide quotes 10-15 ms radio latency; deployed networks show RTT \
     ~100 ms); overhead 28 B";
const SRC_NB_IOT: &str = "typical figures, not measurements: NB-IoT Cat-NB1 (3GPP Rel-13) \
     ~26 kbit/s down / ~62.5 kbit/s up (multi-tone) peak; one-way latency ~800 ms log-normal \
     (3GPP TR 45.820 targets < 10 s for exception reports; normal coverage RTT ~1.5 s); \
     overhead 28 B";

/// GPRS time slots of thesis Tables 4.13 and 4.14:
/// (name suffix, upload kbit/s, download kbit/s, traversal mean ms, traversal sd ms).
const GPRS_SLOTS: [(&str, f64, f64, f64, f64); 7] = [
    ("12pm", 10.5, 18.77, 376.1, 141.2),
    ("2pm", 11.2, 18.96, 364.1, 115.8),
    ("4pm", 10.99, 10.42, 397.0, 213.9),
    ("6pm", 10.92, 16.3, 384.5, 175.7),
    ("8pm", 11.33, 19.0, 398.4, 213.9),
    ("10pm", 12.59, 28.68, 367.9, 151.4),
    ("12am", 12.76, 28.89, 351.4, 120.1),
];

/// Symmetric rates of the Herwono-Liebhardt sweep, kbit/s.
const HERWONO_KBPS: std::ops::RangeInclusive<u32> = 1..=20;

impl LinkProfile {
    /// A profile without impairments and with UDP/IPv4 overhead.
    fn clean(
        name: impl Into<String>,
        up_bps: f64,
        down_bps: f64,
        traversal: DelayDistribution,
        source: &'static str,
    ) -> LinkProfile {
        LinkProfile {
            name: name.into(),
            up_bps,
            down_bps,
            traversal,
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            per_datagram_overhead_bytes: UDP_IPV4_OVERHEAD_BYTES,
            source,
        }
    }

    /// Control profile: infinite rate, zero delay, no overhead, no impairment.
    pub fn loopback() -> LinkProfile {
        LinkProfile {
            per_datagram_overhead_bytes: 0,
            ..LinkProfile::clean(
                "loopback",
                f64::INFINITY,
                f64::INFINITY,
                DelayDistribution::ZERO,
                SRC_LOOPBACK,
            )
        }
    }

    /// Overrides the loss probability.
    pub fn with_loss(mut self, probability: f64) -> LinkProfile {
        self.loss = probability;
        self
    }

    /// Overrides the duplication probability.
    pub fn with_duplicate(mut self, probability: f64) -> LinkProfile {
        self.duplicate = probability;
        self
    }

    /// Overrides the reordering probability.
    pub fn with_reorder(mut self, probability: f64) -> LinkProfile {
        self.reorder = probability;
        self
    }

    /// Overrides both rates, bit/s.
    pub fn with_rates(mut self, up_bps: f64, down_bps: f64) -> LinkProfile {
        self.up_bps = up_bps;
        self.down_bps = down_bps;
        self
    }

    /// Overrides the traversal delay distribution.
    pub fn with_traversal(mut self, traversal: DelayDistribution) -> LinkProfile {
        self.traversal = traversal;
        self
    }

    /// Overrides the per-datagram overhead charged to serialisation.
    pub fn with_overhead(mut self, bytes: usize) -> LinkProfile {
        self.per_datagram_overhead_bytes = bytes;
        self
    }

    /// Checks rates are positive, probabilities lie in [0, 1] and the delay is valid.
    pub fn validate(&self) -> Result<(), ProfileError> {
        for (what, rate) in [("up_bps", self.up_bps), ("down_bps", self.down_bps)] {
            if rate.is_nan() || rate <= 0.0 {
                return Err(ProfileError::InvalidRate {
                    profile: self.name.clone(),
                    field: what,
                    value: rate,
                });
            }
        }
        for (what, p) in [
            ("loss", self.loss),
            ("duplicate", self.duplicate),
            ("reorder", self.reorder),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(ProfileError::InvalidProbability {
                    profile: self.name.clone(),
                    field: what,
                    value: p,
                });
            }
        }
        self.traversal.validate()
    }
}

/// Every named profile, in a stable order (control, thesis, other studies, modern bearers).
pub fn profiles() -> Vec<LinkProfile> {
    let normal = |mean_ms, sd_ms| DelayDistribution::Normal { mean_ms, sd_ms };
    let mut all = vec![
        LinkProfile::loopback(),
        LinkProfile::clean("gsm-csd", 9600.0, 9600.0, normal(391.3, 90.0), SRC_GSM_CSD),
    ];
    for (slot, up_kbps, down_kbps, mean_ms, sd_ms) in GPRS_SLOTS {
        all.push(LinkProfile::clean(
            format!("gprs-cs2-{slot}"),
            up_kbps * 1000.0,
            down_kbps * 1000.0,
            normal(mean_ms, sd_ms),
            SRC_GPRS_SLOT,
        ));
    }
    all.extend([
        LinkProfile::clean(
            "gprs-worst",
            11_330.0,
            19_000.0,
            normal(398.4, 213.9),
            SRC_GPRS_WORST,
        ),
        LinkProfile::clean(
            "gprs-avg",
            10_500.0,
            18_770.0,
            normal(376.1, 141.2),
            SRC_GPRS_AVG,
        ),
        LinkProfile::clean(
            "gprs-best",
            12_760.0,
            28_890.0,
            normal(351.4, 120.1),
            SRC_GPRS_BEST,
        ),
        LinkProfile::clean(
            "levi-best",
            56_000.0,
            56_000.0,
            DelayDistribution::ZERO,
            SRC_LEVI_BEST,
        ),
        LinkProfile::clean(
            "levi-worst",
            6_000.0,
            6_000.0,
            DelayDistribution::ZERO,
            SRC_LEVI_WORST,
        ),
    ]);
    for kbps in HERWONO_KBPS {
        let bps = f64::from(kbps) * 1000.0;
        all.push(LinkProfile::clean(
            format!("herwono-{kbps}kbps"),
            bps,
            bps,
            DelayDistribution::ZERO,
            SRC_HERWONO,
        ));
    }
    all.extend([
        LinkProfile::clean("edge", 60_000.0, 120_000.0, normal(150.0, 40.0), SRC_EDGE),
        LinkProfile::clean(
            "umts-r99",
            64_000.0,
            384_000.0,
            normal(90.0, 20.0),
            SRC_UMTS,
        ),
        LinkProfile::clean("lte-m", 375_000.0, 300_000.0, normal(50.0, 15.0), SRC_LTE_M),
        LinkProfile::clean(
            "nb-iot",
            62_500.0,
            26_000.0,
            DelayDistribution::LogNormal {
                mean_ms: 800.0,
                sd_ms: 400.0,
            },
            SRC_NB_IOT,
        ),
    ]);
    all
}

/// Looks a profile up by its registry name; the error lists the names that exist.
pub fn profile(name: &str) -> Result<LinkProfile, ProfileError> {
    let all = profiles();
    let names: Vec<String> = all.iter().map(|p| p.name.clone()).collect();
    all.into_iter()
        .find(|p| p.name == name)
        .ok_or_else(|| ProfileError::UnknownProfile {
            name: name.to_string(),
            known: names.join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::SeedableRng;

    #[test]
    fn every_registered_profile_resolves_and_is_valid() {
        let all = profiles();
        // loopback, gsm-csd, 7 GPRS slots, 3 GPRS cases, 2 Levi-Savas, 20 Herwono, 4 modern.
        assert_eq!(all.len(), 1 + 1 + 7 + 3 + 2 + 20 + 4);
        for p in &all {
            let found = profile(&p.name).expect("registered name resolves");
            assert_eq!(&found, p);
            p.validate().expect("registered profile is valid");
            assert!(p.up_bps > 0.0 && p.down_bps > 0.0, "{}", p.name);
            assert!(!p.source.is_empty(), "{}", p.name);
        }
        let mut names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "names are unique");
    }

    #[test]
    fn expected_names_exist() {
        for name in [
            "loopback",
            "gsm-csd",
            "gprs-cs2-12pm",
            "gprs-cs2-2pm",
            "gprs-cs2-4pm",
            "gprs-cs2-6pm",
            "gprs-cs2-8pm",
            "gprs-cs2-10pm",
            "gprs-cs2-12am",
            "gprs-worst",
            "gprs-avg",
            "gprs-best",
            "levi-best",
            "levi-worst",
            "herwono-1kbps",
            "herwono-20kbps",
            "edge",
            "umts-r99",
            "lte-m",
            "nb-iot",
        ] {
            profile(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn thesis_numbers_carry_over() {
        let csd = profile("gsm-csd").unwrap();
        assert_eq!(csd.up_bps, 9600.0);
        assert_eq!(csd.down_bps, 9600.0);
        assert_eq!(
            csd.traversal,
            DelayDistribution::Normal {
                mean_ms: 391.3,
                sd_ms: 90.0
            }
        );
        let four_pm = profile("gprs-cs2-4pm").unwrap();
        assert_eq!((four_pm.up_bps, four_pm.down_bps), (10_990.0, 10_420.0));
        // Table 4.15 worst case is the 8 PM slot: same numbers as that slot.
        let worst = profile("gprs-worst").unwrap();
        let eight_pm = profile("gprs-cs2-8pm").unwrap();
        assert_eq!(worst.traversal, eight_pm.traversal);
        assert_eq!(
            (worst.up_bps, worst.down_bps),
            (eight_pm.up_bps, eight_pm.down_bps)
        );
        assert_eq!(profile("levi-worst").unwrap().up_bps, 6000.0);
        assert_eq!(profile("herwono-7kbps").unwrap().down_bps, 7000.0);
    }

    #[test]
    fn unknown_name_lists_known_ones() {
        let err = profile("gprs-cs4").unwrap_err().to_string();
        assert!(err.contains("gprs-cs4") && err.contains("gsm-csd"), "{err}");
    }

    #[test]
    fn builder_overrides_and_validation() {
        let p = profile("gsm-csd")
            .unwrap()
            .with_loss(0.1)
            .with_duplicate(0.2)
            .with_reorder(0.3)
            .with_rates(1000.0, 2000.0)
            .with_overhead(0)
            .with_traversal(DelayDistribution::Fixed(5.0));
        assert_eq!((p.loss, p.duplicate, p.reorder), (0.1, 0.2, 0.3));
        assert_eq!((p.up_bps, p.down_bps), (1000.0, 2000.0));
        assert_eq!(p.per_datagram_overhead_bytes, 0);
        p.validate().unwrap();
        assert!(p.clone().with_loss(1.5).validate().is_err());
        assert!(p.clone().with_reorder(f64::NAN).validate().is_err());
        assert!(p.clone().with_rates(0.0, 1.0).validate().is_err());
        assert!(p
            .clone()
            .with_traversal(DelayDistribution::Uniform {
                min_ms: 5.0,
                max_ms: 1.0
            })
            .validate()
            .is_err());
    }

    #[test]
    fn delay_samples_respect_their_law() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let fixed = DelayDistribution::Fixed(12.5);
        assert_eq!(fixed.sample(&mut rng), Duration::from_micros(12_500));

        let uniform = DelayDistribution::Uniform {
            min_ms: 10.0,
            max_ms: 20.0,
        };
        for _ in 0..1000 {
            let d = uniform.sample(&mut rng).as_secs_f64() * 1000.0;
            assert!((10.0..=20.0).contains(&d), "{d}");
        }

        // Truncation: a normal centred at zero never yields a negative (i.e. zero) sample
        // more often than by chance, and the sample mean matches the half-normal mean
        // sd * sqrt(2/pi) within a wide tolerance.
        let half = DelayDistribution::Normal {
            mean_ms: 0.0,
            sd_ms: 100.0,
        };
        let n = 20_000;
        let mean: f64 = (0..n)
            .map(|_| half.sample(&mut rng).as_secs_f64() * 1000.0)
            .sum::<f64>()
            / f64::from(n);
        let expected = 100.0 * (2.0 / std::f64::consts::PI).sqrt();
        assert!((mean - expected).abs() < 3.0, "{mean} vs {expected}");

        let log_normal = DelayDistribution::LogNormal {
            mean_ms: 800.0,
            sd_ms: 400.0,
        };
        let samples: Vec<f64> = (0..n)
            .map(|_| log_normal.sample(&mut rng).as_secs_f64() * 1000.0)
            .collect();
        let mean = samples.iter().sum::<f64>() / f64::from(n);
        let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / f64::from(n);
        assert!((mean - 800.0).abs() < 20.0, "{mean}");
        assert!((var.sqrt() - 400.0).abs() < 40.0, "{}", var.sqrt());
    }

    #[test]
    fn sampling_is_reproducible_for_a_seed() {
        let law = DelayDistribution::Normal {
            mean_ms: 391.3,
            sd_ms: 90.0,
        };
        let draw = |seed| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            (0..16).map(|_| law.sample(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw(42), draw(42));
        assert_ne!(draw(42), draw(43));
    }
}
