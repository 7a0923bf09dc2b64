//! The time to a secure channel of the three handshakes the post-quantum question turns
//! on, per device and bearer, and where each crosses the budget: the classical one (the
//! table's baseline), a hybrid key exchange (a classical group with ML-KEM, classical
//! certificates) and a fully post-quantum one (ML-KEM alone, ML-DSA certificates). Read
//! off the table's rows: the measured mean where the handshake ran over the emulated
//! bearer on the device, else its modelled T_H, else not available.

use serde::Serialize;

use super::{Affordability, PqCost, PqCostRow, BUDGET_MS};
use crate::evaluate::verdict::{self as rule, MODEL_TOLERANCE};

/// Which handshake of the three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Classical,
    HybridKeyExchange,
    FullyPostQuantum,
}

impl Channel {
    pub const ALL: [Channel; 3] = [
        Channel::Classical,
        Channel::HybridKeyExchange,
        Channel::FullyPostQuantum,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Channel::Classical => "classical",
            Channel::HybridKeyExchange => "hybrid key exchange",
            Channel::FullyPostQuantum => "fully post-quantum",
        }
    }

    /// The post-quantum handshake of `row`, if it is one of the two post-quantum kinds.
    fn of_row(row: &PqCostRow) -> Option<Channel> {
        match (row.post_quantum_part.as_str(), row.hybrid_key_exchange) {
            ("key exchange", true) => Some(Channel::HybridKeyExchange),
            ("both", false) => Some(Channel::FullyPostQuantum),
            _ => None,
        }
    }
}

/// One handshake's time on a device and bearer (ms), whether a run gave it, and the
/// margin about the budget its row was decided with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub ms: f64,
    pub measured: bool,
    pub margin_ms: f64,
}

impl Timed {
    fn of(measured: Option<f64>, modelled: Option<f64>, row: &PqCostRow) -> Option<Timed> {
        let (ms, measured) = match (measured, modelled) {
            (Some(ms), _) => (ms, true),
            (None, Some(ms)) => (ms, false),
            (None, None) => return None,
        };
        Some(Timed {
            ms,
            measured,
            margin_ms: row
                .margin_ms
                .unwrap_or_else(|| Affordability::margin_ms(0.0)),
        })
    }

    /// Over the budget beyond the row's margin (`Some(true)`), within it beyond the
    /// margin (`Some(false)`), within the margin (`None`): the budget rule's decision.
    pub fn over_budget(self) -> Option<bool> {
        rule::below_by(self.ms, BUDGET_MS, self.margin_ms).map(|within| !within)
    }

    /// `3.9 s` measured, `3.9 s*` modelled.
    fn text(self) -> String {
        format!("{:.1} s{}", self.ms / 1e3, self.mark())
    }

    /// `3.9` run, `3.9*` modelled: a table cell in seconds.
    pub fn seconds_text(self) -> String {
        format!("{:.1}{}", self.ms / 1e3, self.mark())
    }

    fn mark(self) -> &'static str {
        if self.measured {
            ""
        } else {
            "*"
        }
    }
}

/// The three handshakes of one protocol on one device and bearer: each one's suite and
/// time (`None` where the device has no price for an operation it needs, or where the
/// protocol has no such configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelTimes {
    pub protocol: String,
    pub device: String,
    pub bearer: String,
    pub times: [Option<(String, Option<Timed>)>; 3],
}

impl ChannelTimes {
    pub fn time(&self, c: Channel) -> Option<Timed> {
        self.times[c as usize].as_ref().and_then(|(_, t)| *t)
    }
}

/// Where one handshake crosses the budget: `device/bearer` over it and within its margin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Crossings {
    pub over: Vec<String>,
    pub at_the_budget: Vec<String>,
}

/// `summary.json`'s statement of it: per handshake, the device/bearer pairs of the
/// protocol with a fully post-quantum configuration where it exceeds the budget.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChannelHeadline {
    pub pq_budget_protocol: Option<String>,
    pub pq_budget_over_classical: Vec<String>,
    pub pq_budget_over_hybrid_key_exchange: Vec<String>,
    pub pq_budget_over_fully_post_quantum: Vec<String>,
}

impl PqCost {
    /// The three handshakes on every device and bearer of each protocol that has a fully
    /// post-quantum configuration in the table, in the table's order.
    pub fn channel_times(&self) -> Vec<ChannelTimes> {
        let full: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| Channel::of_row(r) == Some(Channel::FullyPostQuantum))
            .map(|r| r.protocol.as_str())
            .collect();
        let mut out: Vec<ChannelTimes> = Vec::new();
        for r in self
            .rows
            .iter()
            .filter(|r| full.contains(&r.protocol.as_str()))
        {
            let i = match out.iter().position(|t| {
                (t.protocol.as_str(), t.device.as_str(), t.bearer.as_str())
                    == (r.protocol.as_str(), r.device.as_str(), r.bearer.as_str())
            }) {
                Some(i) => i,
                None => {
                    let classical = Timed::of(r.classical_measured_ms, r.classical_modelled_ms, r);
                    out.push(ChannelTimes {
                        protocol: r.protocol.clone(),
                        device: r.device.clone(),
                        bearer: r.bearer.clone(),
                        times: [Some((r.classical_suite.clone(), classical)), None, None],
                    });
                    out.len() - 1
                }
            };
            let Some(kind) = Channel::of_row(r) else {
                continue;
            };
            let t = Timed::of(r.pq_measured_ms, r.pq_modelled_ms, r);
            // the first configuration of the kind with a time on this row (a hybrid the
            // device cannot price gives way to one it can)
            let slot = &mut out[i].times[kind as usize];
            if slot
                .as_ref()
                .is_none_or(|(_, old)| old.is_none() && t.is_some())
            {
                *slot = Some((r.pq_suite.clone(), t));
            }
        }
        out
    }

    /// Where `channel` crosses the budget among `times`.
    pub fn crossings(times: &[ChannelTimes], channel: Channel) -> Crossings {
        let mut c = Crossings::default();
        for t in times {
            let place = format!("{}/{}", t.device, t.bearer);
            match t.time(channel).map(Timed::over_budget) {
                Some(Some(true)) => c.over.push(place),
                Some(None) => c.at_the_budget.push(place),
                _ => {}
            }
        }
        c
    }

    /// The finding's paragraph: each device's times on each bearer, then where each
    /// handshake crosses the budget; `None` without a fully post-quantum row.
    pub fn channel_paragraph(&self) -> Option<String> {
        let times = self.channel_times();
        let protocol = times.first()?.protocol.clone();
        let times: Vec<ChannelTimes> = times
            .into_iter()
            .filter(|t| t.protocol == protocol)
            .collect();
        let suites = |c: Channel| {
            let mut v: Vec<&str> = Vec::new();
            for t in &times {
                if let Some((s, _)) = &t.times[c as usize] {
                    if !v.contains(&s.as_str()) {
                        v.push(s);
                    }
                }
            }
            if v.is_empty() {
                "none in the table".to_owned()
            } else {
                v.join(" or ")
            }
        };
        let mut devices: Vec<&str> = Vec::new();
        for t in &times {
            if !devices.contains(&t.device.as_str()) {
                devices.push(&t.device);
            }
        }
        let per_device: Vec<String> = devices
            .iter()
            .map(|d| {
                let cells: Vec<String> = times
                    .iter()
                    .filter(|t| t.device == *d)
                    .map(|t| {
                        let each: Vec<String> = Channel::ALL
                            .iter()
                            .map(|&c| t.time(c).map_or("n/a".to_owned(), Timed::text))
                            .collect();
                        format!("{} {}", t.bearer, each.join(" / "))
                    })
                    .collect();
                format!("{d}: {}", cells.join(", "))
            })
            .collect();
        let crossing: Vec<String> = Channel::ALL
            .iter()
            .map(|&c| {
                let x = PqCost::crossings(&times, c);
                let list = |v: &[String]| {
                    if v.is_empty() {
                        "nowhere".to_owned()
                    } else {
                        v.join(", ")
                    }
                };
                format!(
                    "{} over it on {} (within its margin on {})",
                    c.label(),
                    list(&x.over),
                    list(&x.at_the_budget)
                )
            })
            .collect();
        Some(format!(
            "Time to a secure channel, {protocol}, per device and bearer: classical ({}) / hybrid key exchange ({}) / fully post-quantum ({}); the run's mean where the handshake ran over the emulated bearer on the device (measured on this machine; on another profile an emulated device, its modelled compute held in the real run), * where modelled, n/a where the device has no published or executed price for an operation the handshake needs. {}. Against the {:.0} s budget (beyond its margin: {:.0} % of the budget, widened as the rule widens each row's): {}.",
            suites(Channel::Classical),
            suites(Channel::HybridKeyExchange),
            suites(Channel::FullyPostQuantum),
            per_device.join("; "),
            BUDGET_MS / 1e3,
            100.0 * MODEL_TOLERANCE,
            crossing.join("; "),
        ))
    }

    /// `summary.json`'s crossings (empty without a fully post-quantum row).
    pub fn channel_headline(&self) -> ChannelHeadline {
        let times = self.channel_times();
        let Some(protocol) = times.first().map(|t| t.protocol.clone()) else {
            return ChannelHeadline::default();
        };
        let times: Vec<ChannelTimes> = times
            .into_iter()
            .filter(|t| t.protocol == protocol)
            .collect();
        let over = |c| PqCost::crossings(&times, c).over;
        ChannelHeadline {
            pq_budget_protocol: Some(protocol),
            pq_budget_over_classical: over(Channel::Classical),
            pq_budget_over_hybrid_key_exchange: over(Channel::HybridKeyExchange),
            pq_budget_over_fully_post_quantum: over(Channel::FullyPostQuantum),
        }
    }
}
