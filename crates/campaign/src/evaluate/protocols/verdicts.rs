//! The findings of the protocols part, each decided by the findings' verdict rule
//! (`crate::evaluate::verdict`): a comparison between two modelled or measured
//! durations decides only beyond the stated tolerance, and a claim over the bearers is
//! judged on every device's modelled and measured rows, with the subsets named.

use wtlsperf_models::Authentication;
use wtlsperf_report::{Finding, FindingKind, Verdict};

use super::{Config, ProtocolResults, ProtocolRow, LOSS};
use crate::evaluate::verdict::{self as rule, Tally, MODEL_TOLERANCE};
use crate::evaluate::vocabulary::DeviceName;

/// Which duration of a row a comparison reads.
#[derive(Clone, Copy)]
enum Reading {
    Modelled,
    Measured,
}

impl Reading {
    fn of(self, r: &ProtocolRow) -> Option<f64> {
        match self {
            Reading::Modelled => r.modelled_ms,
            Reading::Measured => r.measured_ms,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Reading::Modelled => "modelled",
            Reading::Measured => "measured",
        }
    }
}

impl ProtocolResults {
    /// The findings, each with the numbers that decide it.
    pub fn findings(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        out.extend(self.edhoc_finding());
        out.extend(self.wtls_finding());
        out.extend(self.peer_findings());
        out.extend(self.loss_finding());
        if let Some(e) = self.model_median_error() {
            let n = self.rows.iter().filter(|r| r.measured_runs > 0).count();
            out.push(Finding::new(
                "Eq. 3.84 over each protocol's own flights, plus the client's processing on its device, predicts the real handshake duration within 5 % (median), as for WTLS.",
                format!("Median |measured / modelled - 1| over {n} bearer/device/suite combinations: {:.1} %.", 100.0 * e),
                if e <= 0.05 { Verdict::Confirmed } else { Verdict::Contradicted },
            )
            // Measured through the emulated bearers, which enforce the model's rates.
            .kind(FindingKind::EmulatorAgainstModel)
            .rule("confirmed (the emulator is consistent with the model) when the median |measured / modelled - 1| over every measured row is at most 5 % (the target), contradicted above."));
        }
        out
    }

    /// The typical-figure sentence, as a paragraph of the evidence.
    fn typical_clause(&self) -> String {
        self.typical_bearer_note
            .as_ref()
            .map_or(String::new(), |n| format!("\n\n{n}"))
    }

    /// The devices with rows, in first-seen order.
    fn devices(&self) -> Vec<DeviceName> {
        let mut out: Vec<DeviceName> = Vec::new();
        for r in &self.rows {
            if !out.contains(&r.device) {
                out.push(r.device.clone());
            }
        }
        out
    }

    /// "`a` is below every one of `others`" on each device x bearer row where all exist,
    /// modelled and measured apart, decided beyond [`MODEL_TOLERANCE`]: the tally, and
    /// one clause per device and reading, naming under `not_below` the rows where `a` is
    /// not below beyond the margin.
    fn below_everywhere(
        &self,
        a: &dyn Fn(&Config) -> bool,
        others: &[&dyn Fn(&Config) -> bool],
        not_below: &str,
    ) -> (Tally, Vec<String>) {
        let mut all = Vec::new();
        let mut clauses = Vec::new();
        for reading in [Reading::Modelled, Reading::Measured] {
            for device in self.devices() {
                let mut decisions = Vec::new();
                let mut fails = Vec::new();
                for b in &self.bearers {
                    let Some(x) = self.row(a, b, &device).and_then(|r| reading.of(r)) else {
                        continue;
                    };
                    let ys: Option<Vec<f64>> = others
                        .iter()
                        .map(|o| self.row(o, b, &device).and_then(|r| reading.of(r)))
                        .collect();
                    let Some(ys) = ys else { continue };
                    let best_other = ys.iter().copied().fold(f64::INFINITY, f64::min);
                    let d = rule::below(x, best_other, MODEL_TOLERANCE);
                    if d != Some(true) {
                        fails.push(format!("{b} {x:.0} vs {best_other:.0} ms"));
                    }
                    decisions.push(d);
                }
                if decisions.is_empty() {
                    continue;
                }
                let t = Tally::of(decisions.iter().copied());
                clauses.push(format!(
                    "{device} ({}): {}{}",
                    reading.name(),
                    t.text(),
                    if fails.is_empty() {
                        String::new()
                    } else {
                        format!(" ({not_below}: {})", fails.join(", "))
                    }
                ));
                all.extend(decisions);
            }
        }
        (Tally::of(all), clauses)
    }

    fn edhoc_finding(&self) -> Option<Finding> {
        let edhoc = |c: &Config| c.contender.to_string() == "edhoc:method3-suite2";
        let dtls = |c: &Config| c.contender.to_string() == "dtls1.2:ecdhe-ecdsa-p256-ccm8-mutual";
        let wtls = |c: &Config| c.is_wtls_p256() && c.auth() == Authentication::Mutual;
        let (tally, clauses) =
            self.below_everywhere(&edhoc, &[&dtls, &wtls], "not faster beyond the margin");
        if tally.rows() == 0 {
            return None;
        }
        let e = self.configs.iter().find(|c| edhoc(c))?;
        let d = self.configs.iter().find(|c| dtls(c))?;
        Some(
            Finding::new(
                "EDHOC's small messages make it the fastest mutually authenticated P-256 handshake on every bearer (against DTLS 1.2 ECDHE-ECDSA and WTLS 256p/256p), on every device profile.",
                format!(
                    "{} B in {} round trips against DTLS 1.2 ECDHE-ECDSA mutual's {} B in {}. EDHOC against the faster of the two, per device x bearer row, modelled and measured: {} overall. Per device: {}.{}",
                    e.bytes, e.round_trips(), d.bytes, d.round_trips(), tally.text(), clauses.join("; "),
                    self.typical_clause()
                ),
                tally.verdict(),
            )
            .rule(format!(
                "each device x bearer row, modelled and measured apart, decides only when EDHOC's duration is more than {:.0} % (the model's tolerance) below or above the faster of DTLS and WTLS; confirmed when every row holds, contradicted when every row fails, otherwise inconclusive with the devices where it holds and where not.",
                100.0 * MODEL_TOLERANCE
            )),
        )
    }

    fn wtls_finding(&self) -> Option<Finding> {
        let dtls = |c: &Config| c.contender.to_string() == "dtls1.2:ecdhe-ecdsa-p256-ccm8";
        let wtls = |c: &Config| c.is_wtls_p256() && c.auth() == Authentication::ServerAuth;
        // "Competitive": WTLS no slower than DTLS beyond the tolerance, row by row.
        // The per-device clauses tally "DTLS faster than WTLS": their holds are the
        // claim's failures, and the rows they list are those where the claim holds.
        let (slower, clauses) = self.below_everywhere(
            &dtls,
            &[&wtls],
            "DTLS not faster beyond the margin, so WTLS competitive",
        );
        if slower.rows() == 0 {
            return None;
        }
        // DTLS ahead beyond the margin is the claim failing; within it or WTLS ahead, holding.
        let tally = Tally {
            holds: slower.fails + slower.undecided,
            fails: slower.holds,
            undecided: 0,
        };
        let w = self.configs.iter().find(|c| wtls(c))?;
        let d = self.configs.iter().find(|c| dtls(c))?;
        Some(Finding::new(
            "2001's WTLS is still competitive with DTLS 1.2 for a server-authenticated P-256 handshake (WTLS 256p/256p against ECDHE-ECDSA P-256): no slower on any bearer and device profile.",
            format!(
                "WTLS {} ({} B, {} round trips, {:.0} handshakes/s/core: ECDH_ECDSA with the server's certified static key, one ECDH and no signature per handshake, and so no forward secrecy) against DTLS ECDHE-ECDSA ({} B, {} round trips with the cookie exchange, {:.0} handshakes/s/core). WTLS no slower than DTLS beyond the tolerance in {} of {} device x bearer rows (modelled and measured). The opposite statement, DTLS faster than WTLS beyond the tolerance (its holds would be this claim's failures), per device (DTLS ms vs WTLS ms): {}.{}",
                w.suite(), w.bytes, w.round_trips(), w.handshakes_per_core_s(), d.bytes, d.round_trips(), d.handshakes_per_core_s(),
                tally.holds, tally.rows(), clauses.join("; "), self.typical_clause()
            ),
            tally.verdict(),
        )
        .rule(format!(
            "a row fails when DTLS is more than {:.0} % (the model's tolerance) faster than WTLS, and holds otherwise; confirmed when every modelled and measured device x bearer row holds, contradicted when every row fails, otherwise inconclusive with the subsets named.",
            100.0 * MODEL_TOLERANCE
        )))
    }

    fn peer_findings(&self) -> Vec<Finding> {
        let rule_text = format!(
            "the bound ratios are medians without a measured interval in this run, so two ratios decide only when they differ by more than {:.0} % of the anchor's; within that, inconclusive with the margin.",
            100.0 * MODEL_TOLERANCE
        );
        let mut out = Vec::new();
        for (key, claim, published) in [
            ("openssl_tls12_ecdhe_p256", "For ECDHE-ECDSA P-256, OpenSSL's TLS 1.2 server spends more than its raw public-key work relative to our WTLS gateway on 256p/256p (our first measurement: 1.6-1.7x against 1.24-1.29x).", "1.6-1.7x vs 1.24-1.29x"),
            ("openssl_tls12_rsa2048", "For RSA-2048 key transport, OpenSSL's TLS 1.2 server is further from its public-key bound than our gateway (our first measurement: 1.28-1.44x against 1.03x).", "1.28-1.44x vs 1.03x"),
        ] {
            let Some((p, Some(ours))) = self.peers.iter().find(|(p, _)| p.peer.key() == key) else { continue };
            let others: Vec<String> = self
                .peers
                .iter()
                .filter(|(q, _)| q.peer.key() != key && q.peer.wtls_counterpart() == p.peer.wtls_counterpart())
                .map(|(q, _)| format!("{} {:.2}x", q.peer.key(), q.bound_ratio()))
                .collect();
            let d = rule::below(*ours, p.bound_ratio(), MODEL_TOLERANCE);
            out.push(Finding::new(
                claim,
                format!(
                    "This run, {} handshakes each, interleaved: {} {:.2}x ({:.0} µs server CPU over {:.0} µs raw), our WTLS {} {:.2}x, a margin of {:+.1} % (first measurement, docs/results.md: {published}){}.",
                    p.reps, p.peer.key(), p.bound_ratio(), p.server_cpu_us, p.raw_pk_us, p.peer.wtls_counterpart(), ours,
                    (ours / p.bound_ratio() - 1.0) * 100.0,
                    if others.is_empty() { String::new() } else { format!("; other anchors: {}", others.join(", ")) }
                ),
                Tally::of([d]).verdict(),
            ).rule(rule_text.clone()));
        }
        let tls13 = self
            .peers
            .iter()
            .find(|(p, _)| p.peer.key() == "rustls_tls13_ecdhe_p256");
        if let Some((p, Some(ours))) = tls13 {
            // "As close as": ours not above rustls' ratio beyond the margin.
            let d = rule::below(*ours, p.bound_ratio(), MODEL_TOLERANCE);
            out.push(Finding::new(
                "Our WTLS gateway is as close to its public-key bound as rustls, the fastest maintained TLS handshake we know of (TLS 1.3, ECDHE-ECDSA P-256).",
                format!(
                    "rustls TLS 1.3 {:.3}x ({:.0} µs server CPU over {:.0} µs of ring's P-256 operations), our WTLS 256p/256p {ours:.3}x: ours is {:+.1} % of rustls' ratio.",
                    p.bound_ratio(), p.server_cpu_us, p.raw_pk_us,
                    (ours / p.bound_ratio() - 1.0) * 100.0
                ),
                Tally::of([d]).verdict(),
            ).rule(rule_text.clone()));
        }
        out
    }

    fn loss_finding(&self) -> Option<Finding> {
        if self.loss.is_empty() {
            return None;
        }
        let all = self.loss.iter().all(|l| l.completed == l.runs);
        let parts: Vec<String> = self
            .loss
            .iter()
            .map(|l| {
                format!(
                    "{} {} {}/{} (median {})",
                    l.protocol,
                    l.suite,
                    l.completed,
                    l.runs,
                    l.median_ms.map_or("-".into(), |m| format!("{m:.0} ms"))
                )
            })
            .collect();
        Some(
            Finding::new(
                // One bearer profile decides: the claim says which.
                format!(
                    "Each protocol completes its handshake over a {:.0} % loss link with its own retransmission, judged on one bearer profile ({}) and the configurations listed.",
                    100.0 * LOSS,
                    self.loss_bearer
                ),
                format!(
                    "Over {} with {:.0} % loss: {}.{}",
                    self.loss_bearer,
                    100.0 * LOSS,
                    parts.join("; "),
                    self.typical_clause()
                ),
                if all { Verdict::Confirmed } else { Verdict::Contradicted },
            )
            .rule("confirmed when every run of every protocol completes; contradicted when any run does not (a count, no margin)."),
        )
    }
}
