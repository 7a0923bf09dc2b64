//! The post-quantum findings: where ML-KEM stops being affordable (our hypothesis,
//! decided by the budget rule of the parent module), and whether the flight model
//! predicts the increment the runs measure (our model against our run).

use wtlsperf_report::ProvenanceKind;
use wtlsperf_report::{Finding, FindingKind};

use super::{Affordability, PqCost, PqCostRow, BUDGET_MS, BUDGET_SOURCE};
use crate::evaluate::verdict::{self as rule, Tally, MODEL_TOLERANCE};

/// `min-max` of some values, `-` when there are none.
fn range(values: impl Iterator<Item = f64>, digits: usize) -> String {
    let v: Vec<f64> = values.collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if v.is_empty() {
        "-".to_owned()
    } else if (hi - lo).abs() < 0.5 * 10f64.powi(-(digits as i32)) {
        format!("{lo:.digits$}")
    } else {
        format!("{lo:.digits$} to {hi:.digits$}")
    }
}

/// The affordability rule in words, as the finding and docs/results.md state it.
pub fn budget_rule() -> String {
    format!(
        "each device x bearer row is decided on its measured means where both handshakes ran over the emulated bearer on that device (on a device profile other than this machine the run is real but the client's compute is the profile's modelled price held in it: an emulated device), else on the model; the budget is {:.0} s ({BUDGET_SOURCE}); the margin is {:.0} % of the budget (the verdict rule's model tolerance); the protocols part keeps only the mean of its runs, so a measured row's margin is widened by the gap between its measured and modelled post-quantum increments, which stands in for the means' scatter; a modelled row's margin is widened by the bias the protocol's flight model shows in this run over the same bearer (|median measured / modelled - 1| of the flight-model finding's group; over a bearer the protocols part did not run, the protocol's largest) times the longer of its two handshakes (pq_cost.csv margin_ms). A post-quantum configuration stops being affordable on a row where its classical counterpart is within the budget beyond the margin and the post-quantum handshake exceeds it beyond the margin; a row holds when both are within it; where either lies within the margin of the budget, undecided. Rows whose classical handshake is over the budget beyond the margin (the bearer or device, not the post-quantum half, rules the handshake out) and rows with an operation the device has no published or executed price for are not judged and are counted apart. Confirmed when every judged row holds, contradicted when one fails (a counterexample to a claim over every one), otherwise inconclusive with the rows where it stops being affordable named.",
        BUDGET_MS / 1e3,
        100.0 * MODEL_TOLERANCE,
    )
}

impl PqCost {
    /// The double key share's paragraph, then the nominal-rate note, as paragraphs of a
    /// finding's evidence.
    fn note_paragraph(&self) -> String {
        self.key_share_note.clone().unwrap_or_default()
            + &self
                .nominal_note
                .as_ref()
                .map_or(String::new(), |n| format!("\n\n{n}"))
    }

    /// The findings of this part (none without post-quantum rows).
    pub fn findings(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        for part in &PARTS {
            // the per-device times of all three handshakes once, in the first of them
            let first = out.is_empty();
            out.extend(self.budget_finding(part, first));
        }
        out.extend(self.increment_model_finding());
        out
    }

    /// What each post-quantum suite adds, in bytes, datagrams, client compute and time.
    fn cost_clause(&self, suite: &str) -> String {
        let rows: Vec<&PqCostRow> = self.rows.iter().filter(|r| r.pq_suite == suite).collect();
        let mut limits: Vec<(u16, i64, i64)> = Vec::new();
        for r in &rows {
            if !limits.iter().any(|l| l.0 == r.payload_limit) {
                limits.push((r.payload_limit, r.extra_bytes, r.extra_datagrams));
            }
        }
        let per_limit: Vec<String> = limits
            .iter()
            .map(|(l, b, d)| format!("{b:+} B and {d:+} datagrams at a {l}-byte payload limit"))
            .collect();
        let devices: Vec<String> = {
            let mut v: Vec<String> = Vec::new();
            for r in rows.iter().filter(|r| r.extra_client_ms.is_some()) {
                let s = format!("{} {:+.1} ms", r.device, r.extra_client_ms.unwrap_or(0.0));
                if !v.contains(&s) {
                    v.push(s);
                }
            }
            v
        };
        let unavailable = {
            let mut v: Vec<&str> = Vec::new();
            for r in rows.iter().filter(|r| r.extra_client_ms.is_none()) {
                if !v.contains(&r.device.as_str()) {
                    v.push(&r.device);
                }
            }
            v
        };
        format!(
            "{suite} against {}: {}; extra client compute {} (not available: {}); extra time to a secure channel modelled {} ms, measured {} ms",
            rows.first().map_or("", |r| r.classical_suite.as_str()),
            per_limit.join(", "),
            if devices.is_empty() { "nowhere priced".to_owned() } else { devices.join(", ") },
            if unavailable.is_empty() { "none".to_owned() } else { unavailable.join(", ") },
            range(rows.iter().filter_map(|r| r.extra_modelled_ms), 0),
            range(rows.iter().filter_map(|r| r.extra_measured_ms), 0),
        )
    }

    /// Our hypothesis, for the configurations whose post-quantum half is `part`: they fit
    /// the budget wherever their classical counterpart does. `with_times` puts the
    /// per-device times of the classical, hybrid and fully post-quantum handshakes in
    /// its evidence.
    fn budget_finding(&self, part: &Part, with_times: bool) -> Option<Finding> {
        let rows: Vec<&PqCostRow> = self
            .rows
            .iter()
            .filter(|r| r.post_quantum_part == part.name)
            .collect();
        if rows.is_empty() {
            return None;
        }
        let judged: Vec<&PqCostRow> = rows
            .iter()
            .copied()
            .filter(|r| r.affordable.decision().is_some())
            .collect();
        let tally = Tally::of(judged.iter().filter_map(|r| r.affordable.decision()));
        let listed = |a: &Affordability| -> Vec<String> {
            judged
                .iter()
                .filter(|r| &r.affordable == a)
                .filter_map(|r| {
                    let (c, p) = r.deciding_ms()?;
                    Some(format!(
                        "{} {}/{} ({}: {c:.0} -> {p:.0} ms)",
                        r.pq_suite,
                        r.device,
                        r.bearer,
                        r.basis_words()
                    ))
                })
                .collect()
        };
        let stops = listed(&Affordability::NotAffordable);
        let at = listed(&Affordability::AtTheBudget);
        let classical_over = rows
            .iter()
            .filter(|r| r.affordable == Affordability::ClassicalNotWithin)
            .count();
        let unavailable = rows
            .iter()
            .filter(|r| matches!(r.affordable, Affordability::NotAvailable(_)))
            .count();
        let costs: Vec<String> = suites_of(&rows)
            .iter()
            .map(|s| self.cost_clause(s))
            .collect();
        let times = if with_times {
            self.channel_paragraph()
                .map_or(String::new(), |p| p + "\n\n")
        } else {
            String::new()
        };
        Some(
            Finding::new(
                format!(
                    "{} ({}) keeps the handshake within a {:.0} s time-to-secure-channel budget wherever its classical counterpart (P-256 key exchange, ECDSA P-256 certificates) is within it, on this machine (its costs measured) and every device whose post-quantum costs come from pqm4's published cycle counts (measured on pqm4's NUCLEO-L4R5ZI board and priced at the device's clock: that the cycles carry over between boards of one core is our assumption; devices.csv, source_kind transferred) or were executed on its core model (PQClean, the *-executed profiles), and every bearer of the table (the compared bearers and the 2001-to-today axes); judged on {}'s configurations of this kind.{}",
                    part.claim,
                    suites_of(&rows).join(", "),
                    BUDGET_MS / 1e3,
                    protocols_of(&rows).join(" and "),
                    if with_times { " The evidence gives, per device and bearer, the time to a secure channel of the classical, the hybrid key exchange and the fully post-quantum handshake, and where each crosses the budget." } else { "" },
                ),
                times + &format!(
                    "{}. Judged rows: {}. Stops being affordable (classical -> post-quantum): {}. Within the margin of the budget (the post-quantum handshake, or the classical one itself): {}. Not judged: {classical_over} rows whose classical handshake is over the budget beyond the margin, {unavailable} rows with an operation the device has no published or executed price for (pq_cost.csv, column affordable).",
                    costs.join(". "),
                    tally.text(),
                    if stops.is_empty() { "nowhere".to_owned() } else { stops.join(", ") },
                    if at.is_empty() { "none".to_owned() } else { at.join(", ") },
                ) + &self.note_paragraph(),
                tally.verdict(),
            )
            .rests_on(&[ProvenanceKind::Measured, ProvenanceKind::Modelled])
            .rule(budget_rule()),
        )
    }
}

/// Which half of a handshake is post-quantum, as `pq_cost.csv`'s `post_quantum_part`
/// names it, and how a claim about it reads.
pub struct Part {
    name: &'static str,
    claim: &'static str,
}

/// The budget findings, one per post-quantum half: the key exchange costs bytes in the
/// hellos, the signature in the certificates and CertificateVerify, and pooling them
/// would let one half's rows decide the other's verdict.
const PARTS: [Part; 3] = [
    Part {
        name: "key exchange",
        claim: "Post-quantum key exchange (ML-KEM alone or in a hybrid with a classical group) with classical certificates",
    },
    Part {
        name: "signature",
        claim: "Post-quantum authentication (ML-DSA certificates and signatures) with a classical key exchange",
    },
    Part {
        name: "both",
        claim: "A fully post-quantum handshake (ML-KEM key exchange and ML-DSA certificates)",
    },
];

/// One field of `rows`, each value once, in first-seen order.
fn distinct<'a>(rows: &[&'a PqCostRow], field: impl Fn(&'a PqCostRow) -> &'a str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        let v = field(r);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The post-quantum suites of `rows`, in first-seen order.
fn suites_of<'a>(rows: &[&'a PqCostRow]) -> Vec<&'a str> {
    distinct(rows, |r| &r.pq_suite)
}

/// The protocols of `rows` (their registry names), in first-seen order.
fn protocols_of<'a>(rows: &[&'a PqCostRow]) -> Vec<&'a str> {
    distinct(rows, |r| &r.protocol)
}

impl PqCost {
    /// Our model against our run: the modelled increment against the measured one.
    fn increment_model_finding(&self) -> Option<Finding> {
        let pairs: Vec<(&PqCostRow, f64, f64, f64)> = self
            .rows
            .iter()
            .filter_map(|r| {
                Some((
                    r,
                    r.extra_modelled_ms?,
                    r.extra_measured_ms?,
                    r.pq_modelled_ms?,
                ))
            })
            .collect();
        if pairs.is_empty() {
            return None;
        }
        // "The measured increment is not above the modelled one beyond the margin", and
        // not below it beyond the margin either: a two-sided check, each side by the rule.
        let decisions = pairs.iter().map(|&(_, modelled, measured, pq)| {
            let margin = MODEL_TOLERANCE * pq;
            match (
                rule::below_by(measured, modelled, margin),
                rule::below_by(modelled, measured, margin),
            ) {
                (None, None) => Some(true),
                _ => Some(false),
            }
        });
        let tally = Tally::of(decisions);
        let rows: Vec<String> = pairs
            .iter()
            .map(|(r, modelled, measured, _)| {
                format!(
                    "{} {}/{} modelled {modelled:+.0} ms, measured {measured:+.0} ms ({} runs)",
                    r.pq_suite, r.device, r.bearer, r.measured_runs
                )
            })
            .collect();
        let judged: Vec<&PqCostRow> = pairs.iter().map(|p| p.0).collect();
        Some(
            Finding::new(
                format!(
                    "The flight model (Eq. 3.84 with one bearer traversal per flight, where the thesis counts two per WTLS message, over each handshake's flights at the bearer's MTU, plus the device's published or executed operation costs) predicts what each post-quantum configuration ({}: key exchange, signature or both post-quantum) adds to {}'s time to a secure channel over the emulated bearers, judged on every device and bearer where both handshakes ran, with the cookie exchange where the protocol has one (its default). On a device profile the run is real but the client's compute is the profile's modelled price, held in the run; only this machine's rows are measured throughout.",
                    suites_of(&judged).join(", "),
                    protocols_of(&judged).join(" and "),
                ),
                format!("Post-quantum minus classical, per device/bearer with both handshakes run: {}. {}.", rows.join("; "), tally.text()) + &self.note_paragraph(),
                tally.verdict(),
            )
            .kind(FindingKind::ModelAgainstRun)
            .rule(format!(
                "a row holds when the measured increment lies within {:.0} % of the post-quantum handshake's modelled duration of the modelled increment (the model's tolerance, taken of the whole handshake because the increment is the difference of two durations each carrying it), and fails otherwise; confirmed (the model holds) when every row holds, contradicted when one row fails (a counterexample to a claim over every row), otherwise inconclusive.",
                100.0 * MODEL_TOLERANCE
            )),
        )
    }
}
