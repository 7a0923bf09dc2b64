//! The law of the emulated bearer round trip before each client answer.
//!
//! Why more than one: the Poisson premise of the thesis' Eq. 3.12 was first tested with
//! exponential round trips, and a Poisson stream delayed by independent exponential
//! delays is Poisson by construction. A real bearer's round trips are not exponential:
//! the thesis measured GSM CSD traversals of 391.3 ms mean and 90 ms standard deviation
//! (Bayoglu 2004, section 4.3.1, the result of Eq. 4.1: "Expected value of T_traversal =
//! 391.3 ms", "Standard deviation of T_traversal = 90 ms"), nearly deterministic beside
//! an exponential law. The other laws put the premise to the test: an answer whose delay
//! is nearly fixed, or heavy-tailed, or sometimes immediate, arrives on a clock that is
//! not a Poisson one.
//!
//! Every law has the same mean, so the points differ in the law's shape alone.

use rand::rngs::StdRng;
use rand::RngExt;
use rand_distr::{Distribution, Exp, Normal, Pareto};

/// GSM CSD's one-way traversal, thesis section 4.3.1 (Eq. 4.1 over the 48 handshakes of
/// Table 4.12): mean and standard deviation, ms.
pub const GSM_CSD_TRAVERSAL_MEAN_MS: f64 = 391.3;
pub const GSM_CSD_TRAVERSAL_SD_MS: f64 = 90.0;

/// Half-width of the jitter around a fixed round trip, as a share of the mean.
const JITTER_SHARE: f64 = 0.1;
/// Tail index of the heavy-tailed law: below 2 its variance is infinite.
const PARETO_SHAPE: f64 = 1.5;
/// Share of the bimodal law's answers that leave at once.
const IMMEDIATE_SHARE: f64 = 0.5;

/// The law of each emulated round trip, all of the same mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RoundTripLaw {
    /// Exponential: the memoryless law the load test started with.
    #[default]
    Exponential,
    /// The mean plus a uniform jitter of +-10 % of it: a nearly deterministic bearer.
    Jittered,
    /// Two traversals of the thesis' GSM CSD law (normal, 391.3 ms mean, 90 ms standard
    /// deviation, truncated at zero), scaled so that the round trip has the given mean:
    /// the measured law's shape, coefficient of variation 0.16 per round trip.
    GsmCsd,
    /// Pareto with tail index 1.5 (infinite variance), scale a third of the mean: most
    /// answers come after a third to a half of the mean, a few after many means.
    Pareto,
    /// Half the answers at once, the other half after twice the mean: a bearer that
    /// sometimes answers within the gateway's own service time, as bare loopback does.
    Bimodal,
}

impl RoundTripLaw {
    pub const ALL: [RoundTripLaw; 5] = [
        RoundTripLaw::Exponential,
        RoundTripLaw::Jittered,
        RoundTripLaw::GsmCsd,
        RoundTripLaw::Pareto,
        RoundTripLaw::Bimodal,
    ];

    /// The command-line and CSV name.
    pub fn name(self) -> &'static str {
        match self {
            RoundTripLaw::Exponential => "exponential",
            RoundTripLaw::Jittered => "fixed-jitter",
            RoundTripLaw::GsmCsd => "gsm-csd",
            RoundTripLaw::Pareto => "pareto",
            RoundTripLaw::Bimodal => "bimodal",
        }
    }

    /// The law in words, for the report.
    pub fn describe(self) -> &'static str {
        match self {
            RoundTripLaw::Exponential => "exponential",
            RoundTripLaw::Jittered => "fixed, +-10 % uniform jitter",
            RoundTripLaw::GsmCsd => {
                "two GSM CSD traversals (normal, sd/mean 90/391.3, thesis 4.3.1), scaled"
            }
            RoundTripLaw::Pareto => "Pareto, tail index 1.5 (infinite variance)",
            RoundTripLaw::Bimodal => "half at once, half after twice the mean",
        }
    }

    /// The law of the name `name`, or an error listing the names.
    pub fn parse(name: &str) -> anyhow::Result<Self> {
        Self::ALL
            .into_iter()
            .find(|l| l.name() == name)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "unknown round-trip law {name:?} (one of {})",
                    Self::ALL.map(Self::name).join(", ")
                )
            })
    }

    /// A sampler of this law with mean `mean_s` seconds (positive and finite).
    pub fn sampler(self, mean_s: f64) -> anyhow::Result<RoundTripSampler> {
        anyhow::ensure!(
            mean_s.is_finite() && mean_s > 0.0,
            "a round trip's mean must be positive, got {mean_s} s"
        );
        let half = mean_s / 2.0;
        let shape = match self {
            RoundTripLaw::Exponential => Shape::Exponential(Exp::new(1.0 / mean_s)?),
            RoundTripLaw::Jittered => Shape::Jittered(mean_s),
            RoundTripLaw::GsmCsd => Shape::GsmCsd(Normal::new(
                half,
                half * GSM_CSD_TRAVERSAL_SD_MS / GSM_CSD_TRAVERSAL_MEAN_MS,
            )?),
            RoundTripLaw::Pareto => Shape::Pareto(Pareto::new(
                mean_s * (PARETO_SHAPE - 1.0) / PARETO_SHAPE,
                PARETO_SHAPE,
            )?),
            RoundTripLaw::Bimodal => Shape::Bimodal(mean_s / (1.0 - IMMEDIATE_SHARE)),
        };
        Ok(RoundTripSampler { shape })
    }
}

impl std::fmt::Display for RoundTripLaw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Draws round trips (seconds) of one law and mean.
#[derive(Debug, Clone)]
pub struct RoundTripSampler {
    shape: Shape,
}

#[derive(Debug, Clone)]
enum Shape {
    Exponential(Exp<f64>),
    Jittered(f64),
    /// One traversal's law; a round trip is two.
    GsmCsd(Normal<f64>),
    Pareto(Pareto<f64>),
    /// The slow mode's delay.
    Bimodal(f64),
}

impl RoundTripSampler {
    /// One round trip, seconds (never negative).
    pub fn sample(&self, rng: &mut StdRng) -> f64 {
        match &self.shape {
            Shape::Exponential(law) => law.sample(rng),
            Shape::Jittered(mean) => mean * (1.0 + JITTER_SHARE * rng.random_range(-1.0..=1.0f64)),
            Shape::GsmCsd(traversal) => {
                traversal.sample(rng).max(0.0) + traversal.sample(rng).max(0.0)
            }
            Shape::Pareto(law) => law.sample(rng),
            Shape::Bimodal(slow) => {
                if rng.random_bool(IMMEDIATE_SHARE) {
                    0.0
                } else {
                    *slow
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn draws(law: RoundTripLaw, n: usize) -> Vec<f64> {
        let s = law.sampler(0.02).unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        (0..n).map(|_| s.sample(&mut rng)).collect()
    }

    #[test]
    fn every_law_but_the_heavy_tail_has_the_given_mean() {
        for law in RoundTripLaw::ALL {
            if law == RoundTripLaw::Pareto {
                continue;
            }
            let d = draws(law, 200_000);
            let mean = d.iter().sum::<f64>() / d.len() as f64;
            assert!((mean / 0.02 - 1.0).abs() < 0.01, "{law}: mean {mean}");
            assert!(d.iter().all(|x| *x >= 0.0), "{law}");
        }
    }

    #[test]
    fn the_laws_have_their_shapes() {
        let sorted = |law| {
            let mut d = draws(law, 100_000);
            d.sort_by(f64::total_cmp);
            d
        };
        // Jitter: within +-10 % of the mean, always.
        let j = sorted(RoundTripLaw::Jittered);
        assert!(j[0] >= 0.018 && j[j.len() - 1] <= 0.022);
        // GSM CSD: sd/mean of a round trip 90/391.3/sqrt(2).
        let g = sorted(RoundTripLaw::GsmCsd);
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        let sd = (g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / g.len() as f64).sqrt();
        let cv = 90.0 / 391.3 / 2f64.sqrt();
        assert!((sd / mean / cv - 1.0).abs() < 0.03, "cv {}", sd / mean);
        // Pareto: median scale x 2^(1/1.5), nothing below the scale.
        let p = sorted(RoundTripLaw::Pareto);
        let scale = 0.02 / 3.0;
        assert!(p[0] >= scale);
        assert!((p[p.len() / 2] / (scale * 2f64.powf(1.0 / 1.5)) - 1.0).abs() < 0.02);
        // Bimodal: half at once, half at twice the mean.
        let b = sorted(RoundTripLaw::Bimodal);
        let at_once = b.iter().filter(|x| **x == 0.0).count() as f64 / b.len() as f64;
        assert!((at_once - 0.5).abs() < 0.01);
        assert_eq!(b[b.len() - 1], 0.04);
    }

    #[test]
    fn names_parse_back_and_bad_input_is_refused() {
        for law in RoundTripLaw::ALL {
            assert_eq!(RoundTripLaw::parse(law.name()).unwrap(), law);
        }
        let e = RoundTripLaw::parse("gauss").unwrap_err().to_string();
        assert!(e.contains("gauss") && e.contains("gsm-csd"), "{e}");
        assert!(RoundTripLaw::Jittered.sampler(0.0).is_err());
        assert!(RoundTripLaw::Jittered.sampler(f64::NAN).is_err());
    }
}
