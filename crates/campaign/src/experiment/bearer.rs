//! The bearers of an experiment: a catalogue profile (`data/bearers/profiles.csv`), or
//! one defined in the file, built into the same [`LinkProfile`] the catalogue builds, so
//! the relay, the model and the loss curves read it alike.
//!
//! A duty cycle (the share of time a transmitter may be on air, as ETSI EN 300 220
//! limits LoRaWAN's EU868 sub-bands to 1 %) is modelled by stretching every flight's
//! serialisation time by 100 / duty: each direction's rate is divided by that factor, so
//! a flight pays its time on air plus the silence the rule then imposes. That charges
//! the silence to the flight that causes it, which is an upper bound: on air a sender
//! waits out its silence only before its next transmission, and part of it may pass
//! while the peer answers.

use serde::Deserialize;
use wtlsperf_bearer::{DelayDistribution, LinkProfile, RateKind, UDP_IPV4_OVERHEAD_BYTES};

/// A bearer of an experiment and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Bearer {
    /// What the relay and the models run on (with the duty cycle in its rates).
    pub profile: LinkProfile,
    /// The rates as written, before the duty cycle (bit/s, up and down).
    pub nominal_bps: (f64, f64),
    /// Share of time on air, in per cent, where the file sets one.
    pub duty_cycle_percent: Option<f64>,
    /// `catalogue` or `inline`.
    pub origin: &'static str,
}

impl Bearer {
    /// A catalogue profile as it is.
    pub fn catalogue(profile: LinkProfile) -> Bearer {
        Bearer {
            nominal_bps: (profile.up_bps, profile.down_bps),
            profile,
            duty_cycle_percent: None,
            origin: "catalogue",
        }
    }
}

/// A bearer defined in the file (keys documented in docs/experiments.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InlineBearer {
    pub name: String,
    up_bps: Option<f64>,
    up_kbps: Option<f64>,
    down_bps: Option<f64>,
    down_kbps: Option<f64>,
    /// Mean one-way traversal delay (ms).
    delay_ms: f64,
    /// Its standard deviation (ms).
    #[serde(default)]
    jitter_ms: f64,
    /// `normal` (the default with jitter), `log_normal` or `fixed` (the default without).
    delay_law: Option<String>,
    /// Largest packet (bytes) with its IP and UDP headers.
    mtu: u16,
    /// Bytes each datagram adds to its payload on the link (default 28: UDP + IPv4).
    overhead_bytes: Option<usize>,
    /// Datagram loss probability of the relay in the bearer runs.
    #[serde(default)]
    loss: f64,
    /// Share of time on air (%), in (0, 100].
    duty_cycle_percent: Option<f64>,
    /// Where the numbers come from, for the report.
    source: Option<String>,
}

/// The delay laws an inline bearer may name.
const LAWS: &str = "normal, log_normal, fixed";

impl InlineBearer {
    /// One rate given exactly once, as bit/s or kbit/s.
    fn rate(bps: Option<f64>, kbps: Option<f64>, dir: &str) -> Result<f64, (String, String)> {
        let key = |unit: &str| format!("{dir}_{unit}");
        let rate = match (bps, kbps) {
            (Some(b), None) => (b, key("bps")),
            (None, Some(k)) => (k * 1e3, key("kbps")),
            (None, None) => {
                return Err((
                    key("bps"),
                    format!(
                        "the {dir} rate is missing: give {} or {}",
                        key("bps"),
                        key("kbps")
                    ),
                ))
            }
            (Some(_), Some(_)) => {
                return Err((
                    key("kbps"),
                    format!("give {} or {}, not both", key("bps"), key("kbps")),
                ))
            }
        };
        if !(rate.0.is_finite() && rate.0 > 0.0) {
            return Err((
                rate.1,
                format!("{} bit/s: a rate must be finite and > 0", rate.0),
            ));
        }
        Ok(rate.0)
    }

    fn traversal(&self) -> Result<DelayDistribution, (String, String)> {
        let (mean_ms, sd_ms) = (self.delay_ms, self.jitter_ms);
        if !(mean_ms.is_finite() && mean_ms >= 0.0) {
            return Err((
                "delay_ms".into(),
                format!("{mean_ms} ms: must be finite and >= 0"),
            ));
        }
        if !(sd_ms.is_finite() && sd_ms >= 0.0) {
            return Err((
                "jitter_ms".into(),
                format!("{sd_ms} ms: must be finite and >= 0"),
            ));
        }
        let law = self
            .delay_law
            .as_deref()
            .unwrap_or(if sd_ms > 0.0 { "normal" } else { "fixed" });
        let d = match law {
            "fixed" if sd_ms == 0.0 => DelayDistribution::Fixed(mean_ms),
            "fixed" => return Err(("jitter_ms".into(), "a fixed delay has no jitter".into())),
            "normal" => DelayDistribution::Normal { mean_ms, sd_ms },
            "log_normal" if mean_ms > 0.0 => DelayDistribution::LogNormal { mean_ms, sd_ms },
            "log_normal" => {
                return Err((
                    "delay_ms".into(),
                    "a log-normal delay needs a mean > 0".into(),
                ))
            }
            other => {
                return Err((
                    "delay_law".into(),
                    format!("unknown law {other:?}; known: {LAWS}"),
                ))
            }
        };
        Ok(d)
    }

    /// The profile, or the key at fault and why.
    pub fn profile(&self) -> Result<Bearer, (String, String)> {
        // the name becomes figure ids and file names: letters, digits, '-', '_', '.'
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
        if self.name.is_empty() || !self.name.chars().all(allowed) {
            return Err((
                "name".into(),
                format!(
                    "{:?}: a name of letters, digits, '-', '_' and '.' only",
                    self.name
                ),
            ));
        }
        let up = Self::rate(self.up_bps, self.up_kbps, "up")?;
        let down = Self::rate(self.down_bps, self.down_kbps, "down")?;
        let overhead = self.overhead_bytes.unwrap_or(UDP_IPV4_OVERHEAD_BYTES);
        // A payload limit below 64 bytes leaves no room for any handshake message.
        if usize::from(self.mtu) < overhead + 64 {
            return Err((
                "mtu".into(),
                format!("{} bytes leave less than 64 bytes of payload after {overhead} bytes of overhead", self.mtu),
            ));
        }
        if !(0.0..1.0).contains(&self.loss) {
            return Err((
                "loss".into(),
                format!("{}: must lie in [0, 1) (0.05 is 5 %)", self.loss),
            ));
        }
        let stretch = match self.duty_cycle_percent {
            None => 1.0,
            Some(d) if d > 0.0 && d <= 100.0 => 100.0 / d,
            Some(d) => {
                return Err((
                    "duty_cycle_percent".into(),
                    format!("{d} %: must lie in (0, 100]"),
                ))
            }
        };
        let profile = LinkProfile {
            name: self.name.clone(),
            up_bps: up / stretch,
            down_bps: down / stretch,
            traversal: self.traversal()?,
            loss: self.loss,
            duplicate: 0.0,
            reorder: 0.0,
            per_datagram_overhead_bytes: overhead,
            mtu_bytes: self.mtu,
            mtu_source: "the experiment file".into(),
            compared: false,
            source: self
                .source
                .clone()
                .unwrap_or_else(|| "defined in the experiment file".into()),
            rate_kind: RateKind::Typical,
        };
        profile
            .validate()
            .map_err(|e| ("(profile)".to_owned(), e.to_string()))?;
        Ok(Bearer {
            profile,
            nominal_bps: (up, down),
            duty_cycle_percent: self.duty_cycle_percent,
            origin: "inline",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lorawan() -> InlineBearer {
        toml::from_str(
            "name = 'lora'\nup_kbps = 5.5\ndown_kbps = 5.5\ndelay_ms = 100\nmtu = 242\nduty_cycle_percent = 1",
        )
        .unwrap()
    }

    #[test]
    fn a_duty_cycle_stretches_the_serialisation_time_by_its_inverse() {
        let b = lorawan().profile().unwrap();
        assert_eq!(b.nominal_bps, (5500.0, 5500.0));
        assert!((b.profile.up_bps - 55.0).abs() < 1e-9);
        assert_eq!(b.profile.datagram_payload_limit(), 242 - 28);
        assert_eq!(b.profile.traversal, DelayDistribution::Fixed(100.0));
        let no_duty = InlineBearer {
            duty_cycle_percent: None,
            ..lorawan()
        };
        assert_eq!(no_duty.profile().unwrap().profile.up_bps, 5500.0);
    }

    #[test]
    fn each_bad_field_is_named() {
        let field = |b: InlineBearer| b.profile().unwrap_err().0;
        assert_eq!(
            field(InlineBearer {
                name: "lora/eu".into(),
                ..lorawan()
            }),
            "name"
        );
        assert_eq!(
            field(InlineBearer {
                up_bps: Some(1.0),
                ..lorawan()
            }),
            "up_kbps"
        );
        assert_eq!(
            field(InlineBearer {
                down_kbps: None,
                ..lorawan()
            }),
            "down_bps"
        );
        assert_eq!(
            field(InlineBearer {
                mtu: 80,
                ..lorawan()
            }),
            "mtu"
        );
        assert_eq!(
            field(InlineBearer {
                loss: 1.5,
                ..lorawan()
            }),
            "loss"
        );
        assert_eq!(
            field(InlineBearer {
                duty_cycle_percent: Some(0.0),
                ..lorawan()
            }),
            "duty_cycle_percent"
        );
        let law = InlineBearer {
            delay_law: Some("pareto".into()),
            ..lorawan()
        };
        assert!(law.profile().unwrap_err().1.contains("log_normal"));
    }
}
