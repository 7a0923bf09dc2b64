//! The transmission model against a real bearer: thesis Eq. 3.84 validated out of sample
//! on Table 4.12, the 48 handshakes measured over live GSM CSD in 2004.
//!
//! Checking Eq. 3.84 against our own bearer emulator checks the emulator (it enforces the
//! model's parameters). Table 4.12 is the one data set from a real network. For each case
//! the traversal delay is estimated from the *other* 47 cases (Eq. 4.1 per case, their
//! mean, as the thesis estimated it from all 48), and the left-out case's transmission
//! time is predicted with Eq. 3.84. Two ways of counting traversals are compared:
//!
//! * the thesis': 2 x the applicable messages (each WTP message and its acknowledgement);
//! * ours: one per datagram crossing the link, as our client and gateway exchange them.
//!
//! Whichever predicts the left-out cases better is the counting the real bearer supports.

use crate::reference::{gsm_csd_transmission, handshake_bytes, ReferenceError};
use crate::stats::{mean, median};
use crate::transmission::{applicable_messages, serialisation_ms};
use crate::{Authentication, SuiteFamily};
use serde::Serialize;

/// How traversals are counted per handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TraversalCount {
    /// Thesis Eq. 3.84: 2 x applicable messages.
    ThesisMessages,
    /// One per datagram crossing the link.
    DatagramCrossings,
}

impl TraversalCount {
    /// Both.
    pub const ALL: [TraversalCount; 2] = [
        TraversalCount::ThesisMessages,
        TraversalCount::DatagramCrossings,
    ];

    /// Name in reports.
    pub fn name(self) -> &'static str {
        match self {
            TraversalCount::ThesisMessages => "2 x applicable messages (thesis)",
            TraversalCount::DatagramCrossings => "datagram crossings (ours)",
        }
    }
}

/// One live GSM CSD handshake of Table 4.12 with what Eq. 3.84 needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveHandshake {
    /// `rsa1024/rsa1024 mutual`.
    pub case: String,
    /// Measured transmission time T_TD (ms), Table 4.12.
    pub measured_ms: f64,
    /// Handshake bytes including acknowledgements, Table 4.11.
    pub bytes: f64,
    /// Traversals by the thesis' count.
    pub thesis_traversals: u32,
    /// Traversals by datagram crossings.
    pub datagram_traversals: u32,
}

impl LiveHandshake {
    fn traversals(&self, count: TraversalCount) -> u32 {
        match count {
            TraversalCount::ThesisMessages => self.thesis_traversals,
            TraversalCount::DatagramCrossings => self.datagram_traversals,
        }
    }
}

/// The 48 live handshakes. `datagrams(ca, leaf, auth)` gives the datagrams our
/// implementation exchanges in that case (both directions); cases without are skipped.
pub fn live_handshakes(
    datagrams: impl Fn(&str, &str, Authentication) -> Option<u32>,
) -> Result<Vec<LiveHandshake>, ReferenceError> {
    let bytes = handshake_bytes()?;
    let mut out = Vec::new();
    for row in gsm_csd_transmission()? {
        let Some(b) = bytes
            .iter()
            .find(|b| b.ca_cert.eq_ignore_ascii_case(&row.ca_cert) && b.leaf_cert == row.leaf_cert)
        else {
            continue;
        };
        let family = SuiteFamily::from_cert_short(&row.leaf_cert);
        for auth in Authentication::ALL {
            let Some(d) = datagrams(&row.ca_cert, &row.leaf_cert, auth) else {
                continue;
            };
            let label = match auth {
                Authentication::Mutual => "mutual",
                Authentication::ServerAuth => "server",
            };
            out.push(LiveHandshake {
                case: format!(
                    "{}/{} {label}",
                    row.ca_cert.to_ascii_lowercase(),
                    row.leaf_cert
                ),
                measured_ms: row.ttd_ms(auth),
                bytes: f64::from(b.bytes(auth)),
                thesis_traversals: 2 * applicable_messages(auth, family),
                datagram_traversals: d,
            });
        }
    }
    Ok(out)
}

/// One out-of-sample prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// Case.
    pub case: String,
    /// Measured T_TD (ms).
    pub measured_ms: f64,
    /// Traversal delay fitted on the other cases (ms).
    pub traversal_ms: f64,
    /// Eq. 3.84 prediction (ms).
    pub predicted_ms: f64,
    /// predicted / measured - 1.
    pub error: f64,
}

/// Leave-one-out validation of Eq. 3.84 under one traversal count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeaveOneOut {
    /// Counting.
    pub count: TraversalCount,
    /// Every case.
    pub predictions: Vec<Prediction>,
    /// Median |error|.
    pub median_abs_error: f64,
    /// Largest |error|.
    pub worst_abs_error: f64,
    /// Traversal delay fitted on all cases (ms).
    pub traversal_all_ms: f64,
}

/// Eq. 4.1 per case, averaged over `cases`.
fn fitted_traversal_ms(
    cases: &[&LiveHandshake],
    rate_bps: f64,
    count: TraversalCount,
) -> Option<f64> {
    let per_case: Vec<f64> = cases
        .iter()
        .filter(|c| c.traversals(count) > 0)
        .map(|c| {
            (c.measured_ms - serialisation_ms(c.bytes, rate_bps)) / f64::from(c.traversals(count))
        })
        .collect();
    mean(&per_case)
}

/// Eq. 3.84 with `n` traversals: L/R + n · T_traversal.
fn predicted_ms(c: &LiveHandshake, rate_bps: f64, count: TraversalCount, traversal_ms: f64) -> f64 {
    serialisation_ms(c.bytes, rate_bps) + f64::from(c.traversals(count)) * traversal_ms
}

/// Fits on all but one case and predicts it, for every case.
pub fn leave_one_out(cases: &[LiveHandshake], rate_bps: f64, count: TraversalCount) -> LeaveOneOut {
    let mut predictions = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let rest: Vec<&LiveHandshake> = cases
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, c)| c)
            .collect();
        let Some(t) = fitted_traversal_ms(&rest, rate_bps, count) else {
            continue;
        };
        let p = predicted_ms(c, rate_bps, count, t);
        predictions.push(Prediction {
            case: c.case.clone(),
            measured_ms: c.measured_ms,
            traversal_ms: t,
            predicted_ms: p,
            error: p / c.measured_ms - 1.0,
        });
    }
    let abs: Vec<f64> = predictions.iter().map(|p| p.error.abs()).collect();
    let all: Vec<&LiveHandshake> = cases.iter().collect();
    LeaveOneOut {
        count,
        median_abs_error: median(&abs).unwrap_or(f64::NAN),
        worst_abs_error: abs.iter().copied().fold(0.0, f64::max),
        traversal_all_ms: fitted_traversal_ms(&all, rate_bps, count).unwrap_or(f64::NAN),
        predictions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thesis_counting_recovers_the_published_traversal_mean() {
        let cases = live_handshakes(|_, _, _| Some(4)).unwrap();
        assert_eq!(cases.len(), 48);
        let loo = leave_one_out(&cases, 9600.0, TraversalCount::ThesisMessages);
        assert_eq!(loo.predictions.len(), 48);
        // Table 4.15: 391.3 ms estimated from the 48 handshakes with Eq. 4.1.
        assert!(
            (loo.traversal_all_ms - 391.3).abs() < 5.0,
            "{}",
            loo.traversal_all_ms
        );
        assert!(loo.median_abs_error < loo.worst_abs_error + 1e-12);
    }

    #[test]
    fn a_perfect_model_predicts_exactly() {
        let mk = |n: u32, bytes: f64| LiveHandshake {
            case: format!("{n}"),
            measured_ms: bytes * 8.0 / 9600.0 * 1000.0 + f64::from(n) * 100.0,
            bytes,
            thesis_traversals: n,
            datagram_traversals: n,
        };
        let cases = vec![mk(8, 1000.0), mk(10, 1500.0), mk(12, 2000.0)];
        let loo = leave_one_out(&cases, 9600.0, TraversalCount::DatagramCrossings);
        assert!(loo.worst_abs_error < 1e-12);
    }
}
