//! Bearer link profiles: data rates, one-way traversal delay and impairments, each with the
//! study or standard its numbers come from.
//!
//! The thesis (Bayoglu 2004, §3.3) models a WAP bearer by two quantities only: a channel
//! rate `R` and a one-way "traversal delay" `T_traversal` that every datagram pays once per
//! direction regardless of its size (Eq. 3.84). A [`LinkProfile`] carries exactly those two
//! quantities per direction, plus the impairments (loss, duplication, reordering) the studies
//! did not model but a real datagram transport must survive.

use std::time::Duration;
use wtlsperf_models::transmission::{DatagramOverhead, LinkRates};

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
    /// Largest IP packet the bearer carries (bytes): a protocol that fragments its own
    /// flights (DTLS) fits each datagram, headers included, into it.
    pub mtu_bytes: u16,
    /// Where the MTU comes from.
    pub mtu_source: String,
    /// Whether the campaign's comparisons across devices and protocols list this bearer
    /// (the `compared` column of the catalogue): the handset links, not the control,
    /// the single GPRS time slots or the swept rates.
    pub compared: bool,
    /// Where the numbers come from.
    pub source: String,
    /// What the rates are: a study's figure, a field measurement, or a nominal figure
    /// of the bearer class (peak or typical): serialisation at a peak rate is a lower
    /// bound, at a typical rate a typical figure.
    pub rate_kind: RateKind,
}

/// What a profile's `up_bps`/`down_bps` are. Serialisation at a nominal peak rate is a
/// lower bound on what a real link of the class gives, and at a typical rate a typical
/// figure; the report must say which. The catalogue's `rate_kind` column names it, one
/// word per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKind {
    /// No rate limit: the loopback control.
    Control,
    /// A source study's own rate (measured on its link, or the channel rate it models
    /// or sweeps).
    Study,
    /// Effective throughput measured on a network, by the field measurement the
    /// `source` column names.
    Measured,
    /// A typical achieved rate of the bearer class, not a measurement we can cite.
    Typical,
    /// The nominal peak rate of the bearer class, from the 3GPP document the `source`
    /// column names.
    Peak,
}

impl RateKind {
    /// The catalogue's spelling.
    pub fn parse(text: &str) -> Result<RateKind, String> {
        Ok(match text {
            "control" => RateKind::Control,
            "study" => RateKind::Study,
            "measured" => RateKind::Measured,
            "typical" => RateKind::Typical,
            "peak" => RateKind::Peak,
            other => {
                return Err(format!(
                    "rate_kind is {other:?}; known: control, study, measured, typical, peak"
                ))
            }
        })
    }

    /// Whether the rate is a nominal figure of the class rather than one measured or
    /// taken from a study: the report says what a duration over it is.
    pub fn is_nominal(self) -> bool {
        matches!(self, RateKind::Typical | RateKind::Peak)
    }

    /// How the report names it.
    pub fn describe(self) -> &'static str {
        match self {
            RateKind::Control => "no rate limit (control)",
            RateKind::Study => "the study's own rate",
            RateKind::Measured => "effective rate measured on a network",
            RateKind::Typical => "typical achieved rate of the class, not measured",
            RateKind::Peak => "nominal 3GPP peak rate of the class, not an effective rate",
        }
    }
}

impl LinkProfile {
    /// Control profile: infinite rate, zero delay, no overhead, no impairment (the
    /// catalogue's `loopback` row; also built here so a control run needs no data file).
    pub fn loopback() -> LinkProfile {
        LinkProfile {
            name: "loopback".into(),
            up_bps: f64::INFINITY,
            down_bps: f64::INFINITY,
            traversal: DelayDistribution::ZERO,
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            per_datagram_overhead_bytes: 0,
            mtu_bytes: 1500,
            mtu_source: "control profile: Ethernet MTU".into(),
            compared: false,
            source: "control profile: no rate limit, no delay, no impairment".into(),
            rate_kind: RateKind::Control,
        }
    }

    /// The largest UDP payload that fits the MTU: what a DTLS stack fragments its
    /// flights to (the MTU less the per-datagram IP and UDP overhead).
    pub fn datagram_payload_limit(&self) -> u16 {
        let overhead = u16::try_from(self.per_datagram_overhead_bytes).unwrap_or(u16::MAX);
        self.mtu_bytes.saturating_sub(overhead)
    }

    /// What Eq. 3.84 per flight needs of this link: the rates, the per-datagram UDP (8
    /// bytes) and network headers, and the mean traversal.
    pub fn rates(&self) -> LinkRates {
        let overhead = u32::try_from(self.per_datagram_overhead_bytes).unwrap_or(u32::MAX);
        LinkRates {
            up_bps: self.up_bps,
            down_bps: self.down_bps,
            overhead: DatagramOverhead {
                transport_bytes: 8.min(overhead),
                network_bytes: overhead.saturating_sub(8),
                link_bytes: 0,
            },
            traversal_mean_ms: self.traversal.mean_ms(),
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

/// The bearer catalogue as shipped, compiled in so that every command has it.
const SHIPPED: (&str, &str) = (
    "data/bearers/profiles.csv",
    include_str!("../../../data/bearers/profiles.csv"),
);

/// A row of a bearer catalogue file (`data/bearers/profiles.csv`; columns in
/// docs/results.md).
#[derive(Debug, serde::Deserialize)]
struct ProfileRow {
    bearer: String,
    /// bit/s; `inf` for no serialisation time.
    up_bps: f64,
    down_bps: f64,
    /// `none`, `fixed`, `normal` or `log_normal`.
    traversal: String,
    traversal_mean_ms: Option<f64>,
    traversal_sd_ms: Option<f64>,
    overhead_bytes: usize,
    /// Largest IP packet (bytes), and where that number comes from.
    mtu_bytes: u16,
    mtu_source: String,
    /// `yes` or `no`.
    compared: String,
    source: String,
    /// `control`, `study`, `measured`, `typical` or `peak` ([`RateKind`]).
    rate_kind: String,
}

impl ProfileRow {
    fn profile(self) -> Result<LinkProfile, String> {
        let mean = self.traversal_mean_ms;
        let sd = self.traversal_sd_ms;
        let traversal = match (self.traversal.as_str(), mean, sd) {
            ("none", None, None) => DelayDistribution::ZERO,
            ("fixed", Some(ms), None) => DelayDistribution::Fixed(ms),
            ("normal", Some(mean_ms), Some(sd_ms)) => DelayDistribution::Normal { mean_ms, sd_ms },
            ("log_normal", Some(mean_ms), Some(sd_ms)) => {
                DelayDistribution::LogNormal { mean_ms, sd_ms }
            }
            (law @ ("none" | "fixed" | "normal" | "log_normal"), ..) => {
                return Err(format!(
                    "traversal {law} takes {}",
                    match law {
                        "none" => "neither traversal_mean_ms nor traversal_sd_ms",
                        "fixed" => "traversal_mean_ms alone",
                        _ => "traversal_mean_ms and traversal_sd_ms",
                    }
                ))
            }
            (other, ..) => {
                return Err(format!(
                    "unknown traversal {other:?}; known: none, fixed, normal, log_normal"
                ))
            }
        };
        let compared = match self.compared.as_str() {
            "yes" => true,
            "no" => false,
            other => return Err(format!("compared is {other:?}, not yes or no")),
        };
        if self.bearer.trim().is_empty() || self.source.trim().is_empty() {
            return Err("a bearer needs a name and a source".into());
        }
        if self.mtu_source.trim().is_empty() {
            return Err("mtu_bytes needs its source in mtu_source".into());
        }
        // IPv6's minimum link MTU (RFC 8200 sec. 5): below it no IP stack runs unchanged.
        if self.mtu_bytes < 1280 {
            return Err(format!("mtu_bytes {} is below IPv6's 1280", self.mtu_bytes));
        }
        let profile = LinkProfile {
            name: self.bearer,
            up_bps: self.up_bps,
            down_bps: self.down_bps,
            traversal,
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            per_datagram_overhead_bytes: self.overhead_bytes,
            mtu_bytes: self.mtu_bytes,
            mtu_source: self.mtu_source,
            compared,
            source: self.source,
            rate_kind: RateKind::parse(&self.rate_kind)?,
        };
        profile.validate().map_err(|e| e.to_string())?;
        Ok(profile)
    }
}

/// Every named bearer profile, read from a catalogue file and validated once: rates
/// positive, delays meaningful, names unique, each with its source.
#[derive(Debug, Clone, PartialEq)]
pub struct BearerCatalogue {
    profiles: Vec<LinkProfile>,
}

impl BearerCatalogue {
    /// Parses and validates a catalogue; `file` names it in every error.
    pub fn parse(file: &str, text: &str) -> Result<BearerCatalogue, ProfileError> {
        let bad = |line: u64, message: String| ProfileError::Catalogue {
            file: file.to_owned(),
            line,
            message,
        };
        let mut profiles: Vec<LinkProfile> = Vec::new();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let headers = reader.headers().map_err(|e| bad(1, e.to_string()))?.clone();
        for record in reader.records() {
            let record = record.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                bad(line, e.to_string())
            })?;
            let line = record.position().map_or(0, |p| p.line());
            let row: ProfileRow = record
                .deserialize(Some(&headers))
                .map_err(|e| bad(line, e.to_string()))?;
            let name = row.bearer.clone();
            let profile = row
                .profile()
                .map_err(|m| bad(line, format!("{name}: {m}")))?;
            if profiles.iter().any(|p| p.name == profile.name) {
                return Err(bad(line, format!("{name}: named twice")));
            }
            profiles.push(profile);
        }
        if profiles.is_empty() {
            return Err(bad(0, "no bearer profile".into()));
        }
        Ok(BearerCatalogue { profiles })
    }

    /// Reads a catalogue file.
    pub fn load(path: &std::path::Path) -> Result<BearerCatalogue, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|e| ProfileError::Catalogue {
            file: path.display().to_string(),
            line: 0,
            message: e.to_string(),
        })?;
        BearerCatalogue::parse(&path.display().to_string(), &text)
    }

    /// The shipped catalogue (`data/bearers/profiles.csv`), parsed and validated on first
    /// use only.
    pub fn shipped() -> Result<&'static BearerCatalogue, ProfileError> {
        static SHIPPED_CATALOGUE: std::sync::OnceLock<Result<BearerCatalogue, ProfileError>> =
            std::sync::OnceLock::new();
        SHIPPED_CATALOGUE
            .get_or_init(|| BearerCatalogue::parse(SHIPPED.0, SHIPPED.1))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Every profile, in file order (control, thesis, other studies, modern bearers).
    pub fn profiles(&self) -> &[LinkProfile] {
        &self.profiles
    }

    /// The bearers the comparisons across devices and protocols list, in file order.
    pub fn compared(&self) -> impl Iterator<Item = &LinkProfile> + Clone {
        self.profiles.iter().filter(|p| p.compared)
    }

    /// Looks a profile up by name; the error lists the names that exist.
    pub fn get(&self, name: &str) -> Result<&LinkProfile, ProfileError> {
        self.profiles
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ProfileError::UnknownProfile {
                name: name.to_string(),
                known: self
                    .profiles
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// Every profile of the shipped catalogue, in file order.
pub fn profiles() -> Result<Vec<LinkProfile>, ProfileError> {
    Ok(BearerCatalogue::shipped()?.profiles().to_vec())
}

/// Looks a profile of the shipped catalogue up by its name; the error lists the names
/// that exist.
pub fn profile(name: &str) -> Result<LinkProfile, ProfileError> {
    BearerCatalogue::shipped()?.get(name).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::SeedableRng;

    #[test]
    fn every_registered_profile_resolves_and_is_valid() {
        let all = profiles().unwrap();
        // loopback, gsm-csd, 7 GPRS slots, 3 GPRS cases, 2 Levi-Savas, 20 Herwono, 4 modern,
        // NB-IoT over a GEO satellite.
        assert_eq!(all.len(), 1 + 1 + 7 + 3 + 2 + 20 + 4 + 1);
        for p in &all {
            let found = profile(&p.name).expect("registered name resolves");
            assert_eq!(&found, p);
            p.validate().expect("registered profile is valid");
            assert!(p.up_bps > 0.0 && p.down_bps > 0.0, "{}", p.name);
            assert!(!p.source.is_empty(), "{}", p.name);
        }
        assert_eq!(
            all[0],
            LinkProfile::loopback(),
            "the control row is the built one"
        );
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

    /// Every figure the catalogue held when it was code, before it became a data file:
    /// (name, up bit/s, down bit/s, traversal, overhead bytes).
    #[test]
    fn the_data_file_keeps_every_figure() {
        let normal = |mean_ms, sd_ms| DelayDistribution::Normal { mean_ms, sd_ms };
        let mut expected = vec![("gsm-csd".to_owned(), 9600.0, 9600.0, normal(391.3, 90.0))];
        for (slot, up_kbps, down_kbps, mean_ms, sd_ms) in [
            ("12pm", 10.5, 18.77, 376.1, 141.2),
            ("2pm", 11.2, 18.96, 364.1, 115.8),
            ("4pm", 10.99, 10.42, 397.0, 213.9),
            ("6pm", 10.92, 16.3, 384.5, 175.7),
            ("8pm", 11.33, 19.0, 398.4, 213.9),
            ("10pm", 12.59, 28.68, 367.9, 151.4),
            ("12am", 12.76, 28.89, 351.4, 120.1),
        ] {
            expected.push((
                format!("gprs-cs2-{slot}"),
                up_kbps * 1000.0,
                down_kbps * 1000.0,
                normal(mean_ms, sd_ms),
            ));
        }
        for (name, up, down, law) in [
            ("gprs-worst", 11_330.0, 19_000.0, normal(398.4, 213.9)),
            ("gprs-avg", 10_500.0, 18_770.0, normal(376.1, 141.2)),
            ("gprs-best", 12_760.0, 28_890.0, normal(351.4, 120.1)),
            ("levi-best", 56_000.0, 56_000.0, DelayDistribution::ZERO),
            ("levi-worst", 6_000.0, 6_000.0, DelayDistribution::ZERO),
        ] {
            expected.push((name.to_owned(), up, down, law));
        }
        for kbps in 1..=20u32 {
            let bps = f64::from(kbps) * 1000.0;
            expected.push((
                format!("herwono-{kbps}kbps"),
                bps,
                bps,
                DelayDistribution::ZERO,
            ));
        }
        expected.extend([
            ("edge".to_owned(), 60_000.0, 120_000.0, normal(150.0, 40.0)),
            (
                "umts-r99".to_owned(),
                64_000.0,
                384_000.0,
                normal(90.0, 20.0),
            ),
            ("lte-m".to_owned(), 375_000.0, 300_000.0, normal(50.0, 15.0)),
            (
                "nb-iot".to_owned(),
                62_500.0,
                26_000.0,
                DelayDistribution::LogNormal {
                    mean_ms: 800.0,
                    sd_ms: 400.0,
                },
            ),
            // the nb-iot row plus 3GPP TR 38.821's 270.73 ms one-way GEO propagation
            (
                "nb-iot-ntn-geo".to_owned(),
                62_500.0,
                26_000.0,
                DelayDistribution::LogNormal {
                    mean_ms: 1070.73,
                    sd_ms: 400.0,
                },
            ),
        ]);
        let all = profiles().unwrap();
        assert_eq!(all.len(), expected.len() + 1);
        for (p, (name, up, down, law)) in all[1..].iter().zip(expected) {
            assert_eq!(
                (&p.name, p.up_bps, p.down_bps, p.traversal),
                (&name, up, down, law)
            );
            assert_eq!(p.per_datagram_overhead_bytes, UDP_IPV4_OVERHEAD_BYTES);
            assert_eq!((p.loss, p.duplicate, p.reorder), (0.0, 0.0, 0.0));
        }
        let compared: Vec<&str> = BearerCatalogue::shipped()
            .unwrap()
            .compared()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(
            compared,
            ["gsm-csd", "gprs-avg", "edge", "umts-r99", "lte-m", "nb-iot"]
        );
    }

    #[test]
    fn a_bad_catalogue_row_is_named() {
        let header = "bearer,up_bps,down_bps,traversal,traversal_mean_ms,traversal_sd_ms,overhead_bytes,mtu_bytes,mtu_source,compared,source,rate_kind\n";
        let parse = |row: &str| BearerCatalogue::parse("t.csv", &format!("{header}{row}\n"));
        let ok = parse("x,1000,2000,fixed,5,,28,1500,rfc,yes,a study,study").unwrap();
        assert_eq!(
            ok.get("x").unwrap().traversal,
            DelayDistribution::Fixed(5.0)
        );
        for (row, says) in [
            ("x,0,2000,none,,,28,1500,rfc,no,s,study", "up_bps"),
            (
                "x,1000,2000,normal,5,,28,1500,rfc,no,s,study",
                "traversal_sd_ms",
            ),
            ("x,1000,2000,gamma,5,1,28,1500,rfc,no,s,study", "gamma"),
            ("x,1000,2000,none,,,28,1500,rfc,maybe,s,study", "maybe"),
            ("x,1000,2000,none,,,28,1500,rfc,no,,study", "source"),
            ("x,1000,2000,none,,,28,1500,rfc,no,s,effective", "rate_kind"),
            ("x,1000,2000,normal,5,-1,28,1500,rfc,no,s,study", "sd"),
            ("x,1000,2000,none,,,28,1500,,no,s,study", "mtu_source"),
            ("x,1000,2000,none,,,28,576,rfc,no,s,study", "mtu_bytes 576"),
        ] {
            let e = parse(row).unwrap_err().to_string();
            assert!(
                e.contains("t.csv, line 2") && e.contains(says),
                "{row}: {e}"
            );
        }
        let twice = BearerCatalogue::parse(
            "t.csv",
            &format!(
                "{header}x,1,1,none,,,0,1500,rfc,no,s,study\nx,1,1,none,,,0,1500,rfc,no,s,study\n"
            ),
        );
        assert!(twice
            .unwrap_err()
            .to_string()
            .contains("line 3: x: named twice"));
        assert!(BearerCatalogue::parse("t.csv", header).is_err());
    }

    #[test]
    fn every_shipped_bearer_has_an_mtu_and_a_dtls_payload_limit_below_it() {
        let c = BearerCatalogue::shipped().unwrap();
        for p in c.profiles() {
            assert!(
                p.mtu_bytes >= 1280 && !p.mtu_source.is_empty(),
                "{}",
                p.name
            );
            assert_eq!(
                usize::from(p.datagram_payload_limit()) + p.per_datagram_overhead_bytes,
                usize::from(p.mtu_bytes),
                "{}",
                p.name
            );
        }
        // the 3GPP packet bearers give 1358 - 28 = 1330 bytes to a DTLS record
        assert_eq!(c.get("nb-iot").unwrap().datagram_payload_limit(), 1330);
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
