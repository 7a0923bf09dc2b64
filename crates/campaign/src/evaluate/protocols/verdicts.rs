//! The findings of the protocols part, each decided by the findings' verdict rule
//! (`crate::evaluate::verdict`): a comparison between two modelled or measured
//! durations decides only beyond the stated tolerance, and a claim over the bearers is
//! judged on every device's modelled and measured rows, with the subsets named.

use wtlsperf_models::Authentication;
use wtlsperf_report::ProvenanceKind;
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

    /// How far a row's reading may stray unseen (ms): nothing for the model; for a run,
    /// whose mean of a few runs the part keeps without an interval, the gap between it
    /// and the row's model stands in for its scatter, as in the post-quantum findings.
    fn unsure_ms(self, r: &ProtocolRow) -> f64 {
        match self {
            Reading::Modelled => 0.0,
            Reading::Measured => rule::run_gap_ms(r.measured_ms, r.modelled_ms),
        }
    }

    /// The reading's name for a device's rows: a run with this machine's client is
    /// measured; on any other device the client holds each flight for the profile's
    /// modelled compute in a real run, an emulated device.
    fn name(self, device: &DeviceName) -> &'static str {
        match self {
            Reading::Modelled => "modelled",
            Reading::Measured => run_kind(device),
        }
    }
}

/// `a` below `b` beyond the model's tolerance of `b` widened by `unsure_ms`.
fn below_widened(a: f64, b: f64, unsure_ms: f64) -> Option<bool> {
    rule::below_by(a, b, MODEL_TOLERANCE * b.abs() + unsure_ms)
}

/// What a run over the emulated bearers is on a device: measured with this machine's
/// client; otherwise an emulated device, its modelled compute held in the real run.
fn run_kind(device: &DeviceName) -> &'static str {
    if *device == DeviceName::this_machine() {
        "measured"
    } else {
        "emulated device: modelled compute held in a real run"
    }
}

impl Config {
    /// Whether the configuration's session keys survive a later theft of a long-term
    /// key, from the protocol's own module.
    pub fn forward_secrecy(&self) -> wtlsperf_drivers::protocols::ForwardSecrecy {
        self.contender.traits().forward_secrecy
    }
}

/// How a comparison of WTLS with DTLS states the forward-secrecy difference; a test holds
/// every such finding to it.
pub(crate) const FORWARD_SECRECY: &str = "Forward secrecy:";

/// `Forward secrecy: wtls 256p/256p none (...); dtls1.2 ecdhe-ecdsa-p256-ccm8 yes (...).`
fn forward_secrecy_clause(configs: &[&Config]) -> String {
    let parts: Vec<String> = configs
        .iter()
        .map(|c| {
            format!(
                "{} {} {}",
                c.protocol().name(),
                c.suite(),
                c.forward_secrecy().text()
            )
        })
        .collect();
    format!("\n\n{FORWARD_SECRECY} {}.", parts.join("; "))
}

/// The forward secrecy of a peer anchor's handshake, by its key: ECDHE and TLS 1.3 have
/// it, RSA key transport has not.
fn peer_forward_secrecy(key: &str) -> &'static str {
    if key.contains("ecdhe") || key.contains("tls13") {
        "yes (ephemeral ECDHE keys)"
    } else {
        "none (RSA key transport)"
    }
}

/// "Ours is as close to its bound as theirs (or closer)": an equivalence decided within
/// the model's tolerance of their ratio, with no interval to widen it.
fn as_close_as(ours: f64, theirs: f64) -> Verdict {
    if ours <= theirs * (1.0 + MODEL_TOLERANCE) {
        Verdict::Confirmed
    } else {
        Verdict::Contradicted
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
        out.extend(self.model_finding());
        out
    }

    /// Each protocol's signed errors measured / modelled - 1 on each bearer (rule 5's
    /// input, one group per protocol and bearer, as `quic on nb-iot`): pooled over
    /// protocols, one protocol's bias could hide behind the others'.
    pub(crate) fn bearer_model_errors(&self) -> Vec<(String, Vec<f64>)> {
        let mut protocols: Vec<wtlsperf_spine::ProtocolId> = Vec::new();
        for r in &self.rows {
            if !protocols.contains(&r.protocol) {
                protocols.push(r.protocol);
            }
        }
        let mut out = Vec::new();
        for p in &protocols {
            for b in &self.bearers {
                let errors = self.signed_model_errors(*p, b.as_str());
                if !errors.is_empty() {
                    out.push((format!("{p} on {b}"), errors));
                }
            }
        }
        out
    }

    /// `protocol`'s signed errors measured / modelled - 1 over its runs on `bearer`.
    fn signed_model_errors(&self, protocol: wtlsperf_spine::ProtocolId, bearer: &str) -> Vec<f64> {
        self.rows
            .iter()
            .filter(|r| r.protocol == protocol && r.bearer.as_str() == bearer)
            .filter_map(|r| r.signed_model_error())
            .collect()
    }

    /// How far the flight model of `protocol` can be trusted on `bearer`: the |median
    /// signed error| of its runs there, or, on a bearer the protocols part did not run
    /// it over, the largest over the bearers it did (0 where it ran nowhere). A row
    /// decided on the model alone widens its margin by this share of its duration.
    pub(crate) fn model_bias_bound(
        &self,
        protocol: wtlsperf_spine::ProtocolId,
        bearer: &str,
    ) -> f64 {
        let bias = |b: &str| {
            wtlsperf_models::stats::median(&self.signed_model_errors(protocol, b)).map(f64::abs)
        };
        bias(bearer).unwrap_or_else(|| {
            self.bearers
                .iter()
                .filter_map(|b| bias(b.as_str()))
                .fold(0.0, f64::max)
        })
    }

    /// Eq. 3.84 over each protocol's flights against the runs over the emulated bearers,
    /// judged on the model's bias per protocol and bearer, by rule 5 as the WTLS emulator
    /// findings are: a median pooled over bearers or protocols that disagree does not
    /// decide. The medians per protocol and per device are reported beside it.
    fn model_finding(&self) -> Option<Finding> {
        let pooled = self.model_median_error()?;
        let rows: Vec<&ProtocolRow> = self
            .rows
            .iter()
            .filter(|r| r.model_error().is_some())
            .collect();
        let median_of = |pick: &dyn Fn(&ProtocolRow) -> bool| {
            wtlsperf_models::stats::median(
                &rows
                    .iter()
                    .filter(|r| pick(r))
                    .filter_map(|r| r.model_error())
                    .collect::<Vec<_>>(),
            )
        };
        let groups = self.bearer_model_errors();
        let (tally, per_bearer) =
            rule::per_bearer_target(groups.iter().map(|(g, e)| (g.as_str(), e.as_slice())));
        let mut protocols: Vec<wtlsperf_spine::ProtocolId> = Vec::new();
        for r in &rows {
            if !protocols.contains(&r.protocol) {
                protocols.push(r.protocol);
            }
        }
        let by_protocol: Vec<String> = protocols
            .iter()
            .filter_map(|p| {
                let m = median_of(&|r: &ProtocolRow| r.protocol == *p)?;
                Some(format!("{p} {:.1} %", 100.0 * m))
            })
            .collect();
        let by_device: Vec<String> = self
            .devices()
            .iter()
            .filter_map(|d| {
                let m = median_of(&|r: &ProtocolRow| r.device == *d)?;
                Some(format!("{d} ({}) {:.1} %", run_kind(d), 100.0 * m))
            })
            .collect();
        Some(
            Finding::new(
                "Eq. 3.84 with one bearer traversal per flight (the thesis counts two per WTLS message, WTP's acknowledgements included) over each protocol's own flights, plus the client's processing on its device, predicts the real handshake duration over the emulated bearers without a bias beyond 5 % (the median signed error), judged for each protocol on each bearer by the rule the WTLS emulator findings follow per bearer, on every device and configuration the protocols part ran over each bearer (this machine's client measured; the other devices emulated: their modelled compute held in the real run). These are the protocols part's own runs, WTLS's among them: a sample apart from the transmission part's WTLS runs, which the finding on the emulator judges by the same rule, and from the devices part's Nokia 7650 runs.",
                format!(
                    "Over {} bearer/device/suite combinations, per protocol and bearer, the model's bias (median measured / modelled - 1; positive: slower than modelled): {}; {} (target: bias within +-5 % for each protocol on each bearer). Reported, not judged: median |measured / modelled - 1| pooled {:.1} %; per protocol {}; per device {}.",
                    rows.len(),
                    per_bearer.join("; "),
                    tally.target_text(),
                    100.0 * pooled,
                    by_protocol.join(", "),
                    by_device.join(", "),
                ),
                tally.verdict(),
            )
            // Each protocol's flight model against its real stack over the emulated
            // bearers: where one protocol fails and the others hold on the same bearer,
            // the miss is that protocol's model or stack, not the emulator's.
            .kind(FindingKind::ModelAgainstRun)
            .rule(format!("{}; here each protocol on each bearer is one group of the rule (a bearer pooled over protocols would hide one protocol's bias behind the others'), the signed error measured / modelled - 1, over every protocol and bearer the protocols part ran. The emulator is the same for every protocol (the findings on the emulator judge it), so a group that fails where the other protocols hold on the same bearer is that protocol's flight model or stack, not the emulator.", rule::PER_BEARER_RULE)),
        )
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
    /// modelled and measured apart, decided beyond [`MODEL_TOLERANCE`]: the tally, one
    /// clause per device and reading, naming under `not_below` the rows where `a` is not
    /// below beyond the margin, and the rows left out because a client price among them
    /// is an estimate (an estimate decides nothing).
    fn below_everywhere(
        &self,
        a: &dyn Fn(&Config) -> bool,
        others: &[&dyn Fn(&Config) -> bool],
        not_below: &str,
    ) -> (Tally, Vec<String>, usize) {
        let mut all = Vec::new();
        let mut clauses = Vec::new();
        let mut borrowed = 0;
        for reading in [Reading::Modelled, Reading::Measured] {
            for device in self.devices() {
                let mut decisions = Vec::new();
                let mut fails = Vec::new();
                for b in &self.bearers {
                    let Some(ra) = self.row(a, b, &device) else {
                        continue;
                    };
                    let Some(x) = reading.of(ra) else {
                        continue;
                    };
                    let rs: Option<Vec<&ProtocolRow>> =
                        others.iter().map(|o| self.row(o, b, &device)).collect();
                    let Some(rs) = rs else { continue };
                    let ys: Option<Vec<f64>> = rs.iter().map(|r| reading.of(r)).collect();
                    let Some(ys) = ys else { continue };
                    if ra.borrowed || rs.iter().any(|r| r.borrowed) {
                        borrowed += 1;
                        continue;
                    }
                    let (best, best_other) = ys
                        .iter()
                        .copied()
                        .enumerate()
                        .min_by(|p, q| p.1.total_cmp(&q.1))
                        .unwrap_or((0, f64::INFINITY));
                    let unsure =
                        reading.unsure_ms(ra) + rs.get(best).map_or(0.0, |r| reading.unsure_ms(r));
                    let d = below_widened(x, best_other, unsure);
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
                    reading.name(&device),
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
        (Tally::of(all), clauses, borrowed)
    }

    fn edhoc_finding(&self) -> Option<Finding> {
        let edhoc = |c: &Config| c.contender.to_string() == "edhoc:method3-suite2";
        let dtls = |c: &Config| c.contender.to_string() == "dtls1.2:ecdhe-ecdsa-p256-ccm8-mutual";
        let wtls = |c: &Config| c.is_wtls_p256() && c.auth() == Authentication::Mutual;
        let (tally, clauses, borrowed) =
            self.below_everywhere(&edhoc, &[&dtls, &wtls], "not faster beyond the margin");
        if tally.rows() == 0 && borrowed == 0 {
            return None;
        }
        let e = self.configs.iter().find(|c| edhoc(c))?;
        let d = self.configs.iter().find(|c| dtls(c))?;
        Some(
            Finding::new(
                "EDHOC's small messages make it the fastest mutually authenticated P-256 handshake on every compared bearer (against DTLS 1.2 ECDHE-ECDSA with its cookie exchange and WTLS 256p/256p), on every device profile, modelled and run over the emulated bearers (measured with this machine's client; on the other profiles an emulated device, its modelled compute held in the real run).",
                format!(
                    "{} B in {} round trips against DTLS 1.2 ECDHE-ECDSA mutual's {} B in {}. EDHOC against the faster of the two, per device x bearer row, modelled and run: {} overall. Per device: {}.{}{}",
                    e.bytes, e.round_trips(), d.bytes, d.round_trips(), tally.text(), clauses.join("; "),
                    borrowed_clause(borrowed),
                    self.typical_clause()
                ) + &forward_secrecy_clause(&self.configs.iter().filter(|c| edhoc(c) || dtls(c) || wtls(c)).collect::<Vec<_>>()),
                tally.verdict(),
            )
            .rests_on(&[ProvenanceKind::Measured, ProvenanceKind::Modelled])
            .rule(format!(
                "each device x bearer row, modelled and run apart, decides only when EDHOC's duration is more than {:.0} % (the model's tolerance) below or above the faster of DTLS and WTLS, a run row's margin widened by the gap between each of its two run means and its model (the part keeps only the mean of a row's runs, no interval: the gap stands in for the mean's scatter, as in the post-quantum findings); confirmed when every row holds, contradicted when one row fails (a counterexample to a claim over every row), otherwise inconclusive with the devices where it holds and where not; rows where a client's price is an estimate (a borrowed cost or a P-256 stand-in) are not judged.",
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
        let (slower, clauses, borrowed) = self.below_everywhere(
            &dtls,
            &[&wtls],
            "DTLS not faster beyond the margin, so WTLS competitive",
        );
        if slower.rows() == 0 && borrowed == 0 {
            return None;
        }
        // DTLS ahead beyond the margin is the claim failing; within it or WTLS ahead, holding.
        let with_cookie = Tally {
            holds: slower.fails + slower.undecided,
            fails: slower.holds,
            undecided: 0,
        };
        let w = self.configs.iter().find(|c| wtls(c))?;
        let d = self.configs.iter().find(|c| dtls(c))?;
        let (without_cookie, price, borrowed_free) = self.against_cookie_free(w, d);
        let (wap261, wap261_clause, borrowed_wap261) =
            self.against_wap261(w, d).unwrap_or_default();
        let tally = Tally {
            holds: with_cookie.holds + without_cookie.holds + wap261.holds,
            fails: with_cookie.fails + without_cookie.fails + wap261.fails,
            undecided: 0,
        };
        Some(Finding::new(
            "2001's WTLS is still competitive with DTLS 1.2 for a server-authenticated P-256 handshake (WTLS 256p/256p against ECDHE-ECDSA P-256): no slower on any compared bearer and device profile, against DTLS with the cookie exchange (RFC 6347 recommends it; on in the bench's DTLS servers) and without it; WTLS encoded as the thesis did (a one-byte index for P-256, its Table 3.2 numbering: modelled, and run over the emulated bearers where run: measured with this machine's client, on the other profiles an emulated device, its modelled compute held in the real run) and as WAP-261 specifies (explicit P-256 parameters: modelled). WTLS's static ECDH has no forward secrecy, which DTLS's ECDHE pays for.",
            format!(
                "WTLS {} in the thesis' encoding ({} B, {} round trips, {:.0} handshakes/s/core: ECDH_ECDSA with the server's certified static key, one ECDH and no signature per handshake) against DTLS ECDHE-ECDSA ({} B, {} round trips with the cookie exchange, {:.0} handshakes/s/core). With the cookie exchange (on in the bench's DTLS servers, as RFC 6347 recommends): WTLS no slower than DTLS beyond the tolerance in {} of {} device x bearer rows (modelled and run; {}). The opposite statement, DTLS faster than WTLS beyond the tolerance (its holds would be this claim's failures), per device (DTLS ms vs WTLS ms): {}. Without the cookie exchange (no HelloVerifyRequest round trip, which WTLS does not have; modelled rows, and measured ones with this machine's client, protocols_cookie.csv): WTLS no slower in {} of {} rows ({}); the cookie exchange costs DTLS {} with this machine's client (modelled).{}{}{}",
                w.suite(), w.bytes, w.round_trips(), w.handshakes_per_core_s(), d.bytes, d.round_trips(), d.handshakes_per_core_s(),
                with_cookie.holds, with_cookie.rows(), with_cookie.verdict().name(), clauses.join("; "),
                without_cookie.holds, without_cookie.rows(), without_cookie.verdict().name(),
                if price.is_empty() { "nothing measured".to_owned() } else { price.join(", ") },
                wap261_clause,
                borrowed_clause(borrowed + borrowed_free + borrowed_wap261),
                self.typical_clause()
            ) + &forward_secrecy_clause(&[w, d]),
            tally.verdict(),
        )
        .rests_on(&[ProvenanceKind::Measured, ProvenanceKind::Modelled])
        .rule(format!(
            "a row fails when DTLS is more than {:.0} % (the model's tolerance) faster than WTLS, and holds otherwise, a run row's margin widened by the gap between each of its two run means and its model (no interval is kept: the gap stands in for the means' scatter, as in the post-quantum findings); over every modelled and run device x bearer row against DTLS with the cookie exchange and without it, WTLS in the thesis' encoding and, modelled, in WAP-261's: confirmed when every row holds, contradicted when one row fails (a counterexample to a claim over every row), otherwise inconclusive with each subset's verdict; rows where a client's price is an estimate (a borrowed cost or a P-256 stand-in) are not judged.",
            100.0 * MODEL_TOLERANCE
        )))
    }

    /// WTLS `w` priced with WAP-261's encoding of the same handshake (explicit
    /// parameters for P-256, which WAP-261 does not number) against DTLS `d` with the
    /// cookie exchange and without it, modelled, per device x bearer row: the tally of
    /// "WTLS no slower beyond the tolerance" over both, the clause, and the rows left out
    /// as borrowed. `None` when the run has no WAP-261 flights for `w`.
    fn against_wap261(&self, w: &Config, d: &Config) -> Option<(Tally, String, usize)> {
        let wap_bytes: u32 = w.flights_wap261.as_ref()?.iter().map(|f| f.bytes).sum();
        let (mut with, mut without, mut fails, mut borrowed) =
            (Vec::new(), Vec::new(), Vec::new(), 0);
        for r in self
            .rows
            .iter()
            .filter(|r| r.protocol == w.protocol() && r.suite == w.suite() && r.auth == w.auth())
        {
            let Some(x) = r.modelled_wap261_ms else {
                continue;
            };
            let dtls = self.rows.iter().find(|y| {
                y.protocol == d.protocol()
                    && y.suite == d.suite()
                    && y.auth == d.auth()
                    && y.bearer == r.bearer
                    && y.device == r.device
            });
            let free = self.cookie.iter().find(|y| {
                !y.cookie_exchange
                    && y.protocol == d.protocol()
                    && y.suite == d.suite()
                    && y.bearer == r.bearer
                    && y.device == r.device
            });
            let estimate = r.borrowed || dtls.is_some_and(|y| y.borrowed);
            for (ys, out, label) in [
                (
                    dtls.and_then(|y| y.modelled_ms),
                    &mut with,
                    "with the cookie",
                ),
                (free.and_then(|y| y.modelled_ms), &mut without, "without it"),
            ] {
                let Some(y) = ys else { continue };
                if estimate {
                    borrowed += 1;
                    continue;
                }
                let holds = rule::below(y, x, MODEL_TOLERANCE) != Some(true);
                if !holds {
                    fails.push(format!(
                        "{} {} (DTLS {label} {y:.0} vs WTLS {x:.0} ms)",
                        r.device, r.bearer
                    ));
                }
                out.push(Some(holds));
            }
        }
        let (with, without) = (Tally::of(with), Tally::of(without));
        let clause = format!(
            " With WAP-261's encoding of the same handshake ({wap_bytes} B against {} B: WAP-261 numbers no P-256 curve, so its parameters go explicit in every message that names them; modelled, each side's CPU as measured with the one-byte index): WTLS no slower than DTLS with the cookie exchange in {} of {} rows ({}), without it in {} of {} ({}){}.",
            w.bytes,
            with.holds, with.rows(), with.verdict().name(),
            without.holds, without.rows(), without.verdict().name(),
            if fails.is_empty() { String::new() } else { format!("; DTLS faster beyond the tolerance: {}", fails.join(", ")) },
        );
        let all = Tally {
            holds: with.holds + without.holds,
            fails: with.fails + without.fails,
            undecided: 0,
        };
        Some((all, clause, borrowed))
    }

    /// WTLS `w` against the cookie-free twin of DTLS `d`, modelled and measured, per
    /// device x bearer row: the tally of "WTLS no slower beyond the tolerance" and the cookie's price per
    /// bearer with this machine's client (`gsm-csd 918 ms`).
    fn against_cookie_free(&self, w: &Config, d: &Config) -> (Tally, Vec<String>, usize) {
        let mut decisions = Vec::new();
        let mut price = Vec::new();
        let mut borrowed = 0;
        for r in self
            .cookie
            .iter()
            .filter(|r| !r.cookie_exchange && r.suite == d.suite() && r.protocol == d.protocol())
        {
            let row_of = |c: &Config| {
                self.rows.iter().find(|x| {
                    x.protocol == c.protocol()
                        && x.suite == c.suite()
                        && x.auth == c.auth()
                        && x.bearer == r.bearer
                        && x.device == r.device
                })
            };
            let wtls = row_of(w);
            // The cookie-free twin prices its client as DTLS with the cookie does.
            let estimate = [wtls, row_of(d)].iter().flatten().any(|x| x.borrowed);
            let run_unsure = rule::run_gap_ms(r.measured_ms, r.modelled_ms)
                + wtls.map_or(0.0, |x| Reading::Measured.unsure_ms(x));
            let pairs = [
                (r.modelled_ms, wtls.and_then(|x| x.modelled_ms), 0.0),
                (r.measured_ms, wtls.and_then(|x| x.measured_ms), run_unsure),
            ];
            for (y, x, unsure) in pairs {
                let (Some(y), Some(x)) = (y, x) else { continue };
                if estimate {
                    borrowed += 1;
                    continue;
                }
                // DTLS faster beyond the margin fails the claim.
                decisions.push(Some(below_widened(y, x, unsure) != Some(true)));
            }
        }
        for with in self.cookie.iter().filter(|r| {
            r.cookie_exchange && r.suite == d.suite() && r.device == DeviceName::this_machine()
        }) {
            if let Some(p) = super::cookie::price_ms(&self.cookie, with) {
                price.push(format!("{} {p:.0} ms", with.bearer));
            }
        }
        (Tally::of(decisions), price, borrowed)
    }

    fn peer_findings(&self) -> Vec<Finding> {
        let rule_text = format!(
            "the bound ratios are medians without a measured interval in this run, so two ratios decide only when they differ by more than {:.0} % of the anchor's; within that, inconclusive with the margin.",
            100.0 * MODEL_TOLERANCE
        );
        // Which measurement "ours" is: the anchor block times our gateway interleaved with
        // each anchor, so its ratio is not the processing part's paired bound ratio of the
        // same case (cases.csv), a separate measurement of the same quantity.
        let ours_is = "timed interleaved with the anchor in the same block; the processing part's paired bound ratio of the case (cases.csv, bound_ratio) is a separate measurement";
        let mut out = Vec::new();
        for (key, claim) in [
            ("openssl_tls12_ecdhe_p256", "For ECDHE-ECDSA P-256, OpenSSL's TLS 1.2 server spends more than its raw public-key work relative to our WTLS gateway on 256p/256p; judged on this machine, both measured interleaved in this run."),
            ("openssl_tls12_rsa2048", "For RSA-2048 key transport, OpenSSL's TLS 1.2 server is further from its public-key bound than our gateway; judged on this machine, both measured interleaved in this run."),
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
                    "This run, {} handshakes each, interleaved: {} {:.2}x ({:.0} µs server CPU over {:.0} µs raw), our WTLS {} {:.3}x ({ours_is}), a margin of {:+.1} %{}.",
                    p.reps, p.peer.key(), p.bound_ratio(), p.server_cpu_us, p.raw_pk_us, p.peer.wtls_counterpart(), ours,
                    (ours / p.bound_ratio() - 1.0) * 100.0,
                    if others.is_empty() { String::new() } else { format!("; other anchors, reported, not judged here (the claim names one anchor): {}", others.join(", ")) }
                ) + &format!("\n\n{FORWARD_SECRECY} {} {}; our WTLS {} none (the server's key is its certified static key).", p.peer.key(), peer_forward_secrecy(p.peer.key()), p.peer.wtls_counterpart()),
                Tally::of([d]).verdict(),
            ).rule(rule_text.clone()));
        }
        let tls13 = self
            .peers
            .iter()
            .find(|(p, _)| p.peer.key() == "rustls_tls13_ecdhe_p256");
        if let Some((p, Some(ours))) = tls13 {
            out.push(Finding::new(
                "Our WTLS gateway is as close to its public-key bound as rustls' TLS 1.3 server (ECDHE-ECDSA P-256; rustls' TLS 1.2 handshake is beside it in the peers table), or closer; judged on this machine, both measured interleaved in this run.",
                format!(
                    "rustls TLS 1.3 {:.3}x ({:.0} µs server CPU over {:.0} µs of ring's P-256 operations), our WTLS 256p/256p {ours:.3}x ({ours_is}): ours is {:+.1} % of rustls' ratio.",
                    p.bound_ratio(), p.server_cpu_us, p.raw_pk_us,
                    (ours / p.bound_ratio() - 1.0) * 100.0
                ) + &format!("\n\n{FORWARD_SECRECY} rustls TLS 1.3 {}; our WTLS 256p/256p none (ECDH with the server's certified static key).", peer_forward_secrecy(p.peer.key())),
                as_close_as(*ours, p.bound_ratio()),
            ).rule(format!(
                "an equivalence claim: the bound ratios are medians without a measured interval in this run, so the equivalence margin is {:.0} % of rustls' ratio; confirmed when ours is at most that much above rustls' (as close, or closer), contradicted when more than that above.",
                100.0 * MODEL_TOLERANCE
            )));
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
                    l.median_text()
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

/// ` Not judged: 12 rows whose client price ...`: the rows an estimate would decide.
fn borrowed_clause(rows: usize) -> String {
    match rows {
        0 => String::new(),
        n => format!(" Not judged: {n} device x bearer rows (modelled and run counted apart, with the cookie exchange and without it where the finding has both) where a client's price is an estimate: a cost the profile borrows from another device's ratios, or a P-256 key generation or signature the profile does not price, taken as one of its ECDH (protocols.csv, client_cost)."),
    }
}

#[cfg(test)]
mod tests {
    use super::super::cookie::{self, CookieFree};
    use super::super::{rows, ProtocolResults};
    use super::*;
    use crate::evaluate::vocabulary::{BearerName, Catalogue};
    use wtlsperf_bearer::LinkProfile;
    use wtlsperf_drivers::protocols::model::Device;
    use wtlsperf_models::transmission::{Direction, Flight};

    fn flights(n: usize, bytes: u32) -> Vec<Flight> {
        (0..n)
            .map(|i| Flight {
                direction: if i % 2 == 0 {
                    Direction::Up
                } else {
                    Direction::Down
                },
                bytes,
                datagrams: 1,
            })
            .collect()
    }

    fn config(contender: &str, n: usize) -> Config {
        Config {
            contender: wtlsperf_drivers::registry::contender(contender).unwrap(),
            level: super::super::WTLS_P256_LEVEL.to_owned(),
            bytes: 300 * n,
            datagrams: n,
            flights: flights(n, 300),
            flights_by_payload_limit: Vec::new(),
            server_cpu_us: 500.0,
            client_cpu_us: 500.0,
            bound_ratio: None,
            flights_wap261: None,
        }
    }

    /// WTLS in 3 flights, DTLS in 6 with the cookie exchange and 4 without, EDHOC in 4,
    /// over GSM CSD with this machine's client.
    fn results() -> ProtocolResults {
        let catalogue = Catalogue::shipped().unwrap();
        let dtls = "dtls1.2:ecdhe-ecdsa-p256-ccm8";
        let configs = vec![
            config("wtls:256p/256p", 3),
            config("wtls:256p/256p-mutual", 3),
            config(dtls, 6),
            config("dtls1.2:ecdhe-ecdsa-p256-ccm8-mutual", 6),
            config("edhoc:method3-suite2", 4),
        ];
        let bearer = catalogue.bearer("gsm-csd").unwrap();
        let bearers: Vec<&LinkProfile> = vec![bearer];
        let rows = rows(&configs, &[Device::ThisMachine], &bearers, &[], &[]);
        let of = wtlsperf_drivers::registry::contender(dtls).unwrap();
        let free = vec![CookieFree {
            twin: of.without_cookie().unwrap(),
            of,
            bytes: 1200,
            datagrams: 4,
            flights: flights(4, 300),
            flights_by_payload_limit: Vec::new(),
            server_cpu_us: 500.0,
            measured: Vec::new(),
        }];
        let cookie = cookie::rows(&configs, &free, &rows, &catalogue);
        ProtocolResults {
            configs,
            rows,
            loss: Vec::new(),
            peers: Vec::new(),
            measured_devices: Vec::new(),
            bearers: vec![BearerName::of(bearer)],
            loss_bearer: BearerName::of(bearer),
            typical_bearer_note: None,
            hybrid_anchor: None,
            stage_seconds: Vec::new(),
            cookie,
            timers: Vec::new(),
        }
    }

    /// Every verdict that compares WTLS with DTLS states both sides' forward secrecy.
    #[test]
    fn every_wtls_against_dtls_verdict_states_forward_secrecy() {
        let findings = results().findings();
        let compared: Vec<&Finding> = findings
            .iter()
            .filter(|f| f.claim.contains("WTLS") && f.claim.contains("DTLS"))
            .collect();
        assert!(compared.len() >= 2, "{}", findings.len());
        for f in compared {
            assert!(
                f.evidence.contains(FORWARD_SECRECY)
                    && f.evidence.contains("wtls 256p/256p none")
                    && f.evidence
                        .contains("yes (ephemeral ECDHE keys on both sides)"),
                "{}: {}",
                f.claim,
                f.evidence
            );
        }
    }

    /// A row decided on the model alone is widened by the bias the runs show for its
    /// protocol on its bearer, and on an unrun bearer by the protocol's worst.
    #[test]
    fn the_model_bias_bound_is_the_runs_bias_on_the_bearer_or_the_worst() {
        let mut r = results();
        for x in r.rows.iter_mut() {
            let by = if x.protocol == wtlsperf_drivers::protocols::EDHOC {
                0.86
            } else {
                1.02
            };
            x.measured_ms = x.modelled_ms.map(|m| m * by);
        }
        let edhoc = r.model_bias_bound(wtlsperf_drivers::protocols::EDHOC, "gsm-csd");
        assert!((edhoc - 0.14).abs() < 1e-9, "{edhoc}");
        let unrun = r.model_bias_bound(wtlsperf_drivers::protocols::EDHOC, "nb-iot-ntn-geo");
        assert!((unrun - 0.14).abs() < 1e-9, "{unrun}");
        let wtls = r.model_bias_bound(wtls::handshake::WTLS, "gsm-csd");
        assert!((wtls - 0.02).abs() < 1e-9, "{wtls}");
        // a protocol never run has nothing to widen by
        assert_eq!(
            r.model_bias_bound(wtlsperf_drivers::protocols::DTLS13, "gsm-csd"),
            0.0
        );
    }

    #[test]
    fn the_flight_model_is_judged_per_bearer() {
        let mut r = results();
        // Six rows or more give the bias its interval.
        let more: Vec<ProtocolRow> = r.rows.clone();
        r.rows.extend(more);
        let scale = |r: &mut ProtocolResults, by: f64| {
            for x in r.rows.iter_mut() {
                x.measured_ms = x.modelled_ms.map(|m| m * by);
            }
        };
        scale(&mut r, 1.03);
        let f = r.model_finding().unwrap();
        assert_eq!(f.verdict, Verdict::Confirmed, "{}", f.evidence);
        for clause in ["gsm-csd bias +3.0 %", "this-machine (measured) 3.0 %"] {
            assert!(f.evidence.contains(clause), "{clause}: {}", f.evidence);
        }
        scale(&mut r, 1.08);
        assert_eq!(r.model_finding().unwrap().verdict, Verdict::Contradicted);
    }

    #[test]
    fn as_close_as_is_an_equivalence_within_the_tolerance() {
        assert_eq!(as_close_as(1.213, 1.217), Verdict::Confirmed);
        assert_eq!(as_close_as(1.0, 1.2), Verdict::Confirmed);
        assert_eq!(as_close_as(1.30, 1.217), Verdict::Contradicted);
    }

    #[test]
    fn wtls_is_judged_against_dtls_with_and_without_the_cookie() {
        let r = results();
        let f = r.wtls_finding().unwrap();
        assert!(f.claim.contains("without it"), "{}", f.claim);
        // 3 flights against 6 with the cookie and 4 without: WTLS faster either way.
        assert_eq!(f.verdict, Verdict::Confirmed, "{}", f.evidence);
        assert!(
            f.evidence.contains("Without the cookie exchange")
                && f.evidence.contains("WTLS no slower in 1 of 1 rows"),
            "{}",
            f.evidence
        );
        // The cookie's two flights cost two traversals of GSM CSD (391.3 ms each) and
        // the serialisation of 600 bytes at 9600 bit/s (500 ms), plus headers.
        let price = r.cookie.iter().find(|c| c.cookie_exchange).unwrap();
        let p = cookie::price_ms(&r.cookie, price).unwrap();
        assert!((1280.0..1400.0).contains(&p), "{p}");
        // Without the cookie, DTLS's 4 flights in 2 round trips beat WTLS's 3 flights
        // only if WTLS were slower: make WTLS's flights heavy and the claim fails there.
        let mut heavy = results();
        heavy
            .rows
            .iter_mut()
            .filter(|x| x.protocol == wtls::handshake::WTLS)
            .for_each(|x| {
                x.modelled_ms = x.modelled_ms.map(|m| m * 1.5);
            });
        let f = heavy.wtls_finding().unwrap();
        assert_eq!(f.verdict, Verdict::Contradicted, "{}", f.evidence);
        // A row priced with a borrowed cost decides nothing: with the heavy WTLS row
        // marked so, only the cookie-free comparison is left to judge.
        heavy.rows.iter_mut().for_each(|x| x.borrowed = true);
        let f = heavy.wtls_finding().unwrap();
        assert!(
            f.evidence
                .contains("Not judged: 2 device x bearer rows (modelled and run counted apart"),
            "{}",
            f.evidence
        );
    }

    /// WAP-261 numbers no P-256 curve: priced with its explicit parameters, the same
    /// handshake is heavier, and the claim is judged on that encoding too.
    fn with_wap261_flights(bytes: u32) -> ProtocolResults {
        let mut r = results();
        let catalogue = Catalogue::shipped().unwrap();
        let bearer = catalogue.bearer("gsm-csd").unwrap();
        for c in r
            .configs
            .iter_mut()
            .filter(|c| c.contender.to_string() == "wtls:256p/256p")
        {
            c.flights_wap261 = Some(flights(3, bytes));
        }
        r.rows = rows(&r.configs, &[Device::ThisMachine], &[bearer], &[], &[]);
        r
    }

    #[test]
    fn wtls_is_judged_in_the_encoding_wap261_specifies_too() {
        // 3 flights of 300 B as WAP-261 encodes them: WTLS still ahead either way.
        let f = with_wap261_flights(300).wtls_finding().unwrap();
        assert_eq!(f.verdict, Verdict::Confirmed, "{}", f.evidence);
        assert!(
            f.evidence.contains("With WAP-261's encoding of the same handshake (900 B against 900 B")
                && f.evidence.contains("with the cookie exchange in 1 of 1 rows (confirmed), without it in 1 of 1 (confirmed)"),
            "{}",
            f.evidence
        );
        // 3 flights of 700 B: 2100 B at 9600 bit/s lose to DTLS's 4 flights of 300 B
        // without the cookie, and the claim over every encoding fails there.
        let f = with_wap261_flights(700).wtls_finding().unwrap();
        assert_eq!(f.verdict, Verdict::Contradicted, "{}", f.evidence);
        assert!(
            f.evidence.contains(
                "DTLS faster beyond the tolerance: this-machine gsm-csd (DTLS without it"
            ),
            "{}",
            f.evidence
        );
    }

    /// A run row keeps no interval: the gap between its mean and its model widens the
    /// margin, so a run that strays from its model decides less than the model does.
    #[test]
    fn a_run_rows_gap_to_its_model_widens_the_margin() {
        assert_eq!(below_widened(900.0, 1000.0, 0.0), Some(true));
        assert_eq!(rule::run_gap_ms(Some(960.0), Some(900.0)), 60.0);
        assert_eq!(below_widened(900.0, 1000.0, 60.0), None);
        assert_eq!(rule::run_gap_ms(None, Some(900.0)), 0.0);
        assert_eq!(below_widened(1200.0, 1000.0, 60.0), Some(false));
    }
}
