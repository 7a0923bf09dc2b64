//! The answer users want: for each device, bearer, security level (thesis Table 3.3
//! categories) and authentication, the fastest full handshake and its margin over the
//! runner-up; and where the studies' conclusions hold on today's devices.
//!
//! Every duration is the model T_H = T_PD_C (device profile) + T_PD_S (our gateway,
//! measured) + T_TD (Eq. 3.84 per flight of our measured handshake, the bearer profile's
//! rates and mean traversal) + T_QD (0, an idle gateway). The model is checked end to end
//! against real emulated handshakes in [`super::device`].
//!
//! A device competes only with the suites its library offers (`offers` in
//! `data/devices/profiles.csv`): a P-256-only library offers no other curve and no RSA,
//! wolfSSL and micro-ecc no binary curves; Levi-Savas implemented every curve and RSA size
//! on their ARM7 (section 4). The cost of an offered operation may still be scaled or
//! borrowed where its benchmark was not published; the profile table says which.

use wtls::suite::Case;
use wtlsperf_bearer::LinkProfile;
use wtlsperf_drivers::protocols::ForwardSecrecy;
use wtlsperf_models::device::{DeviceProfile, WtlsCase};
use wtlsperf_models::reference::{categories_groups, processing_times};
use wtlsperf_models::Authentication;
use wtlsperf_report::Finding;
use wtlsperf_report::ProvenanceKind;

use super::csv_file;
use super::passages;
use super::pq_prices::pq_prices;
use super::processing::{CaseResult, ProcessingResults};
use super::protocols::{Config, Estimate};
use super::transmission::modelled_duration_ms;
use super::verdict::{self, Tally, MODEL_TOLERANCE};
use super::vocabulary::{BearerName, DeviceName};
pub use strength::StrengthPair;

mod strength;
use wtlsperf_drivers::device::model_case;
use wtlsperf_drivers::protocols::model::{self, Device};
use wtlsperf_models::device::KeyType;

/// One modelled handshake.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Candidate {
    /// `283k/163k`.
    #[serde(serialize_with = "crate::evaluate::csv_file::display")]
    pub case: Case,
    /// Thesis group 1-4 (prime, Koblitz, random, RSA).
    pub group: u8,
    /// Model T_H (ms).
    pub th_ms: f64,
    /// The device's client processing time T_PD_C (ms), the quantity the thesis ranks
    /// its groups by.
    pub client_ms: f64,
    /// Some client operation is priced with another device's ratio (an estimate).
    pub borrowed: bool,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Recommendation {
    /// Device profile.
    pub device: DeviceName,
    /// Bearer profile.
    pub bearer: BearerName,
    /// Security category 1-3 (thesis Table 3.3).
    pub category: u8,
    /// Authentication mode.
    pub auth: Authentication,
    /// Fastest case the device offers.
    pub best: Candidate,
    /// Runner-up, when the device offers a second suite in the category.
    pub runner_up: Option<Candidate>,
    /// runner-up T_H / best T_H - 1.
    pub margin: Option<f64>,
    /// Fastest ECDH_ECDSA T_H the device offers (ms).
    pub best_ecc_ms: Option<f64>,
    /// Fastest RSA T_H the device offers (ms).
    pub best_rsa_ms: Option<f64>,
    /// The fastest ECC or RSA case prices a client operation with another device's
    /// ratio: the ECC-RSA comparison is an estimate and is not judged.
    pub ecc_rsa_borrowed: bool,
    /// The ECC-RSA comparisons at equal strength (Levi-Savas' Table 1, NIST SP 800-57):
    /// per leaf level both families offer, the fastest ECC case against the RSA case.
    pub equal_strength: Vec<StrengthPair>,
    /// Fastest client processing time T_PD_C of the thesis' fastest group among the
    /// suites the device offers (ms); `None` when its library does not offer that group
    /// (e.g. no binary curves).
    pub thesis_group_ms: Option<f64>,
    /// Fastest client processing time T_PD_C of the other groups the device offers (ms).
    pub other_group_ms: Option<f64>,
    /// The group the thesis measured fastest (lowest published client T_PD) in this
    /// category.
    pub thesis_best_group: Option<u8>,
    /// The fastest client of the thesis' group or of the other groups prices an
    /// operation with another device's ratio: the ranking is an estimate there and is
    /// not judged.
    pub group_borrowed: bool,
    /// Category 3: the fastest DTLS 1.2, EDHOC or classical DTLS 1.3 suite of the mode
    /// the device runs (`super::device::modern`, then [`add_dtls13`]).
    pub best_modern: Option<ModernCandidate>,
    /// Category 3: the fastest post-quantum DTLS 1.3 handshake (ML-KEM-768 key
    /// exchange) the device is priced for, or why none is ([`add_dtls13`]).
    pub best_post_quantum: Result<ModernCandidate, String>,
}

/// A DTLS 1.2, EDHOC or DTLS 1.3 suite's modelled handshake.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModernCandidate {
    #[serde(serialize_with = "protocol_name")]
    pub protocol: wtlsperf_spine::ProtocolId,
    /// The suite's name in `protocols.csv`.
    pub suite: String,
    /// Model T_H (ms).
    pub th_ms: f64,
    /// Whether its session keys survive a later theft of a long-term key, which no
    /// WTLS case of the row offers.
    #[serde(serialize_with = "forward_secrecy_text")]
    pub forward_secrecy: ForwardSecrecy,
    /// The client's price rests on an estimate (a borrowed cost or a P-256 stand-in),
    /// not on the device's own numbers.
    #[serde(serialize_with = "estimate_text")]
    pub estimate: Option<Estimate>,
}

fn estimate_text<S: serde::Serializer>(e: &Option<Estimate>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(e.map_or("", Estimate::words))
}

fn forward_secrecy_text<S: serde::Serializer>(f: &ForwardSecrecy, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&f.text())
}

fn protocol_name<S: serde::Serializer>(
    p: &wtlsperf_spine::ProtocolId,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name())
}

impl Recommendation {
    /// Levi-Savas: ECC beats RSA; `None` when the device does not offer both.
    pub fn ecc_beats_rsa(&self) -> Option<bool> {
        Some(self.best_ecc_ms? < self.best_rsa_ms?)
    }

    /// best ECC / best RSA T_H, when both are offered.
    pub fn ecc_over_rsa(&self) -> Option<f64> {
        Some(self.best_ecc_ms? / self.best_rsa_ms?)
    }
}

/// The group of a (category, ca, leaf) from Table 3.3.
fn candidates_of(category: u8) -> Vec<(u8, String, String)> {
    categories_groups()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.category == category)
        .map(|r| (r.group, r.ca_cert, r.leaf_cert))
        .collect()
}

/// The group whose published client processing time (Tables 4.1/4.2) is lowest: the
/// ranking of the thesis' section 4.1, which is by the client's side (its server
/// ranking is the reverse, prime curves first).
fn thesis_best_group(category: u8, auth: Authentication) -> Option<u8> {
    processing_times()
        .ok()?
        .into_iter()
        .filter(|r| r.category == category && r.authentication == auth)
        .min_by(|a, b| a.client_ms.total_cmp(&b.client_ms))
        .map(|r| r.group)
}

/// The group section 4.1 names fastest on the client in each category: group 3 (the
/// 163-bit random curve) in category 1, group 2 (Koblitz) in categories 2 and 3.
const STATED_FASTEST: [(u8, u8); 3] = [(1, 3), (2, 2), (3, 2)];

/// Section 4.1's ranking on the thesis' own published client times (Tables 4.1/4.2),
/// per (category, authentication): the stated group's lowest time against the lowest
/// of the other groups, decided with the model tolerance, as `category 3 mutual: group
/// 2 1207 ms vs group 3 1293 ms (-6.6 %)`.
fn published_ranking() -> Vec<(String, Option<bool>)> {
    let Ok(rows) = processing_times() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (category, stated) in STATED_FASTEST {
        for auth in [Authentication::Mutual, Authentication::ServerAuth] {
            let of = |pick: &dyn Fn(u8) -> bool| {
                rows.iter()
                    .filter(|r| r.category == category && r.authentication == auth && pick(r.group))
                    .min_by(|a, b| a.client_ms.total_cmp(&b.client_ms))
            };
            let (Some(best), Some(other)) = (of(&|g| g == stated), of(&|g| g != stated)) else {
                continue;
            };
            out.push((
                format!(
                    "category {category} {}: group {stated} {:.0} ms vs group {} {:.0} ms ({:+.1} %)",
                    super::vocabulary::auth_name(auth),
                    best.client_ms,
                    other.group,
                    other.client_ms,
                    100.0 * (best.client_ms / other.client_ms - 1.0)
                ),
                verdict::below(best.client_ms, other.client_ms, MODEL_TOLERANCE),
            ));
        }
    }
    out
}

/// Model T_H of a measured case on a device over a bearer (ms).
pub fn model_th_ms(
    c: &CaseResult,
    device: &DeviceProfile,
    bearer: &wtlsperf_bearer::LinkProfile,
) -> Option<f64> {
    let case: WtlsCase = model_case(c.case, super::processing::auth_mode(c.auth)).ok()?;
    let client = device.client_processing_ms(case).ok()?;
    let ttd = modelled_duration_ms(
        c,
        bearer.up_bps,
        bearer.down_bps,
        bearer.traversal.mean_ms(),
    );
    Some(client + c.server_wall_ms.median + ttd)
}

/// The candidates of one category the device offers, fastest first.
fn offered_candidates(
    processing: &ProcessingResults,
    device: &DeviceProfile,
    bearer: &wtlsperf_bearer::LinkProfile,
    category: u8,
    auth: Authentication,
) -> Vec<Candidate> {
    let mut cands: Vec<Candidate> = candidates_of(category)
        .into_iter()
        .filter_map(|(group, ca, leaf)| {
            let c = processing.cases.iter().find(|c| {
                c.auth == auth
                    && c.case.ca.short() == ca.to_ascii_lowercase()
                    && c.case.leaf.short() == leaf
            })?;
            let case = model_case(c.case, super::processing::auth_mode(auth)).ok()?;
            if !device.supports(case) {
                return None;
            }
            Some(Candidate {
                case: c.case,
                group,
                th_ms: model_th_ms(c, device, bearer)?,
                client_ms: device.client_processing_ms(case).ok()?,
                borrowed: device.borrows_for(case),
            })
        })
        .collect();
    cands.sort_by(|a, b| a.th_ms.total_cmp(&b.th_ms));
    cands
}

/// The whole table: every device over every bearer the catalogue compares.
pub fn build<'a>(
    processing: &ProcessingResults,
    devices: &[DeviceProfile],
    bearers: impl Iterator<Item = &'a LinkProfile> + Clone,
) -> Vec<Recommendation> {
    let mut out = Vec::new();
    for device in devices {
        for bearer in bearers.clone() {
            for category in 1..=3u8 {
                for auth in Authentication::ALL {
                    let cands = offered_candidates(processing, device, bearer, category, auth);
                    if let Some(row) = recommend(device, bearer, category, auth, cands) {
                        out.push(row);
                    }
                }
            }
        }
    }
    out
}

/// The row of one device, bearer, category and mode: its fastest candidate, the
/// runner-up and the best of each key family.
fn recommend(
    device: &DeviceProfile,
    bearer: &LinkProfile,
    category: u8,
    auth: Authentication,
    cands: Vec<Candidate>,
) -> Option<Recommendation> {
    let best = cands.first().cloned()?;
    let first = |rsa: bool| cands.iter().find(|c| (c.group == 4) == rsa);
    let best_of = |rsa: bool| first(rsa).map(|c| c.th_ms);
    let ecc_rsa_borrowed =
        first(false).is_some_and(|c| c.borrowed) || first(true).is_some_and(|c| c.borrowed);
    let thesis_group = thesis_best_group(category, auth);
    // The thesis ranks groups by the client's processing time (section 4.1), which
    // does not depend on the bearer: the fastest client of each side.
    let group_best = |in_group: bool| {
        cands
            .iter()
            .filter(|c| (Some(c.group) == thesis_group) == in_group)
            .min_by(|a, b| a.client_ms.total_cmp(&b.client_ms))
    };
    let group_ms = |in_group: bool| group_best(in_group).map(|c| c.client_ms);
    let group_borrowed = [true, false]
        .into_iter()
        .any(|in_group| group_best(in_group).is_some_and(|c| c.borrowed));
    let runner_up = cands.get(1).cloned();
    Some(Recommendation {
        device: DeviceName::of(device),
        bearer: BearerName::of(bearer),
        category,
        auth,
        margin: runner_up.as_ref().map(|r| r.th_ms / best.th_ms - 1.0),
        best_ecc_ms: best_of(false),
        best_rsa_ms: best_of(true),
        ecc_rsa_borrowed,
        equal_strength: strength::pairs(&cands),
        thesis_group_ms: group_ms(true),
        other_group_ms: group_ms(false),
        best,
        runner_up,
        thesis_best_group: thesis_group,
        group_borrowed,
        best_modern: None,
        // Set for the category-3 rows by `add_dtls13`; empty elsewhere.
        best_post_quantum: Err(String::new()),
    })
}

/// The key family name of a thesis group (1 prime, 2 Koblitz, 3 random, 4 RSA).
pub fn group_name(group: u8) -> &'static str {
    match group {
        1 => "prime",
        2 => "Koblitz",
        3 => "random binary",
        _ => "RSA",
    }
}

/// One finding per conclusion, each clause computed from the table. `bearer_note`, the
/// catalogue's sentence on the bearers whose rates are typical figures, goes with the
/// finding judged on model T_H over those bearers (ECC against RSA), not with the
/// ranking, which judges the client's time alone.
pub fn findings(rows: &[Recommendation], bearer_note: Option<&str>) -> Vec<Finding> {
    if rows.is_empty() {
        return Vec::new();
    }
    let mut ecc = strength::ecc_against_rsa(rows);
    if let Some(n) = bearer_note {
        ecc.evidence = format!("{}\n\n{n}", ecc.evidence);
    }
    vec![ecc, thesis_ranking(rows)]
}

/// Distinct device names of some rows, sorted.
fn devices_of<'a>(rows: impl Iterator<Item = &'a Recommendation>) -> Vec<&'a str> {
    let mut names: Vec<&str> = rows.map(|r| r.device.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Writes `recommendations_equal_strength.csv` (columns in docs/results.md).
pub fn write_strength_csv(path: &std::path::Path, rows: &[Recommendation]) -> anyhow::Result<()> {
    strength::write_csv(path, rows)
}

/// Writes `recommendations.csv` (columns in docs/results.md).
pub fn write_csv(path: &std::path::Path, rows: &[Recommendation]) -> anyhow::Result<()> {
    #[derive(serde::Serialize)]
    struct RecCsv<'a> {
        device: &'a DeviceName,
        bearer: &'a BearerName,
        category: u8,
        auth: Authentication,
        best_case: String,
        best_ms: f64,
        runner_up_case: Option<String>,
        runner_up_ms: Option<f64>,
        margin: Option<f64>,
        best_ecc_ms: Option<f64>,
        best_rsa_ms: Option<f64>,
        ecc_beats_rsa: Option<bool>,
        ecc_rsa_borrowed: bool,
        thesis_group_ms: Option<f64>,
        other_group_ms: Option<f64>,
        best_modern_protocol: &'a str,
        best_modern_suite: &'a str,
        best_modern_ms: Option<f64>,
        best_modern_forward_secrecy: Option<String>,
        best_modern_estimate: Option<&'static str>,
        best_post_quantum_suite: String,
        best_post_quantum_ms: Option<f64>,
    }
    csv_file::write_csv(
        path,
        rows.iter().map(|r| RecCsv {
            device: &r.device,
            bearer: &r.bearer,
            category: r.category,
            auth: r.auth,
            best_case: r.best.case.to_string(),
            best_ms: r.best.th_ms,
            runner_up_case: r.runner_up.as_ref().map(|c| c.case.to_string()),
            runner_up_ms: r.runner_up.as_ref().map(|c| c.th_ms),
            margin: r.margin,
            best_ecc_ms: r.best_ecc_ms,
            best_rsa_ms: r.best_rsa_ms,
            ecc_beats_rsa: r.ecc_beats_rsa(),
            ecc_rsa_borrowed: r.ecc_rsa_borrowed,
            thesis_group_ms: r.thesis_group_ms,
            other_group_ms: r.other_group_ms,
            best_modern_protocol: r.best_modern.as_ref().map_or("", |m| m.protocol.name()),
            best_modern_suite: r.best_modern.as_ref().map_or("", |m| m.suite.as_str()),
            best_modern_ms: r.best_modern.as_ref().map(|m| m.th_ms),
            best_modern_forward_secrecy: r.best_modern.as_ref().map(|m| m.forward_secrecy.text()),
            best_modern_estimate: r
                .best_modern
                .as_ref()
                .and_then(|m| m.estimate.map(Estimate::words)),
            best_post_quantum_suite: match &r.best_post_quantum {
                Ok(m) => m.suite.clone(),
                Err(reason) => reason.clone(),
            },
            best_post_quantum_ms: r.best_post_quantum.as_ref().ok().map(|m| m.th_ms),
        }),
    )
}

/// One clause per device: its rows' tally, `esp32: holds ... of 30`.
fn per_device(rows: &[(&Recommendation, Option<bool>)]) -> Vec<String> {
    devices_of(rows.iter().map(|(r, _)| *r))
        .into_iter()
        .map(|d| {
            let t = Tally::of(
                rows.iter()
                    .filter(|(r, _)| r.device.as_str() == d)
                    .map(|(_, x)| *x),
            );
            format!("{d}: {} ({})", t.text(), t.verdict().name())
        })
        .collect()
}

/// "Decided by one profile": the devices whose rows fail, when there is exactly one.
fn decided_by(rows: &[(&Recommendation, Option<bool>)]) -> String {
    let failing = devices_of(
        rows.iter()
            .filter(|(_, x)| *x == Some(false))
            .map(|(r, _)| *r),
    );
    match failing.as_slice() {
        [] => String::new(),
        [one] => format!(
            " Every failing row is on one profile, {one}: the failures are decided by that profile's benchmark alone."
        ),
        many => format!(" Failing rows are on {}.", many.join(", ")),
    }
}

/// Bayoglu: the per-category ranking by the client's processing time (the group with
/// the lowest published client T_PD wins), on the thesis' own device and on today's
/// devices, judged only where the device's library offers that group. A client's time
/// does not depend on the bearer, so each (device, category, authentication) counts once.
fn thesis_ranking(rows: &[Recommendation]) -> Finding {
    let mut with_group: Vec<&Recommendation> = Vec::new();
    for r in rows.iter().filter(|r| r.thesis_best_group.is_some()) {
        let seen = with_group
            .iter()
            .any(|w| w.device == r.device && w.category == r.category && w.auth == r.auth);
        if !seen {
            with_group.push(r);
        }
    }
    let not_offered = with_group
        .iter()
        .filter(|r| r.thesis_group_ms.is_none())
        .count();
    // Rule 3: a ranking priced with another device's ratio is an estimate, not judged.
    let borrowed = devices_of(
        with_group
            .iter()
            .filter(|r| r.thesis_group_ms.is_some() && r.group_borrowed)
            .copied(),
    );
    let borrowed_rows = with_group
        .iter()
        .filter(|r| r.thesis_group_ms.is_some() && r.group_borrowed)
        .count();
    let judged: Vec<(&Recommendation, Option<bool>)> = with_group
        .iter()
        .filter(|r| !r.group_borrowed)
        .filter_map(|r| {
            let ours = r.thesis_group_ms?;
            let d = r
                .other_group_ms
                .and_then(|o| verdict::below(ours, o, MODEL_TOLERANCE));
            Some((*r, d))
        })
        .collect();
    let subset = |pick: &dyn Fn(&Recommendation) -> bool| {
        let rows: Vec<(&Recommendation, Option<bool>)> =
            judged.iter().copied().filter(|(r, _)| pick(r)).collect();
        rows
    };
    let nokia = subset(&|r| r.device.is_thesis_device());
    let today = subset(&|r| !r.device.is_study_device());
    let (tn, tt, all) = (
        Tally::of(nokia.iter().map(|(_, d)| *d)),
        Tally::of(today.iter().map(|(_, d)| *d)),
        Tally::of(judged.iter().map(|(_, d)| *d)),
    );
    let margins: Vec<f64> = nokia
        .iter()
        .filter(|(_, d)| d.is_none())
        .filter_map(|(r, _)| Some((r.other_group_ms? / r.thesis_group_ms? - 1.0).abs() * 100.0))
        .collect();
    let margin_text = match (
        margins.iter().copied().min_by(f64::total_cmp),
        margins.iter().copied().max_by(f64::total_cmp),
    ) {
        (Some(lo), Some(hi)) => format!(", its undecided rows differing by {lo:.1} to {hi:.1} %"),
        _ => String::new(),
    };
    let (c2, c3) = (
        passages::FASTEST_GROUP_CATEGORY2,
        passages::FASTEST_GROUP_CATEGORY3,
    );
    let published = published_ranking();
    let tp = Tally::of(published.iter().map(|(_, d)| *d));
    let published_rows: Vec<&str> = published.iter().map(|(t, _)| t.as_str()).collect();
    Finding::new(
        format!(
            "Bayoglu 2004, section 4.1: within each category one group gives the lowest client processing time, group 3 (the 163-bit random curve) in category 1 (the passage quoted), group 2 (Koblitz) in category 2 ({}: \"{}\") and in category 3 ({}: \"{}\"), judged on the thesis' own published client T_PD (Tables 4.1/4.2), each group by its fastest case. Beside it, not judged: the Nokia 7650 priced by our per-operation fit to those times (devices.csv, source fitted; the fit's own finding checks it out of sample), and today's device profiles whose library offers that group and prices it from its own numbers: the thesis ranked its handset's groups, and another library's ranking is not a test of that statement.",
            c2.place, c2.quote, c3.place, c3.quote,
        ),
        format!(
            "Judged, the published client times, the stated group's fastest case against the fastest case of the other groups: {} ({}); {}. Reported, not judged, the model's client time of the thesis' fastest group against the fastest other group the device offers, per (device, category, authentication; a client's time does not depend on the bearer): the Nokia 7650 by our fit, {} ({}){}; {}; over every device {}. Per device: {}.{} Not judged either: {} combinations whose device's library does not offer the thesis' fastest group (no binary curves, or P-256 only), and {borrowed_rows} whose fastest client of either side prices an operation with another device's ratio ({}; devices.csv, source `borrowed`). The thesis' server ranking is the reverse (prime curves lowest) and is not judged here.",
            tp.text(),
            tp.verdict().name(),
            published_rows.join("; "),
            tn.text(),
            tn.verdict().name(),
            margin_text,
            today_clause(&today, &tt),
            all.text(),
            per_device(&judged).join("; "),
            decided_by(&judged),
            not_offered,
            if borrowed.is_empty() { "none".to_owned() } else { borrowed.join(", ") },
        ),
        tp.verdict(),
    )
    .study(passages::FASTEST_GROUP)
    .rests_on(&[ProvenanceKind::Published])
    .rule(format!(
        "each (category, authentication) of Tables 4.1/4.2 holds when the stated group's fastest published client time is more than {:.0} % (published numbers, no interval) below the fastest of every other group and fails when more than that above; confirmed when every combination holds, contradicted when one fails (a counterexample to a claim over every category), otherwise inconclusive; the Nokia 7650 by our fit and today's devices are decided by the same test on the model's times and reported, not judged; devices whose library lacks the group, and combinations whose fastest client on either side is priced with a borrowed cost, are left out of those.",
        100.0 * MODEL_TOLERANCE
    ))
}

/// Today's devices' subset of the ranking, scoped to the profiles that decide it: a
/// subset judged on one profile is that profile's result, not "today's devices'".
fn today_clause(today: &[(&Recommendation, Option<bool>)], t: &Tally) -> String {
    let judged = devices_of(today.iter().map(|(r, _)| *r));
    match judged.as_slice() {
        [] => "today's devices: none offers the thesis' group, not judged".to_owned(),
        [one] => format!(
            "today's devices: one profile alone offers the thesis' group, so this subset is {one}'s and not today's devices' in general: {} ({} on {one})",
            t.text(),
            t.verdict().name()
        ),
        many => format!(
            "today's devices ({} profiles: {}): {} ({}){}",
            many.len(),
            many.join(", "),
            t.text(),
            t.verdict().name(),
            decided_by(today)
        ),
    }
}

/// The security category of the compared configurations: P-256, ML-KEM-768 and
/// 128-bit PSKs.
const DTLS13_CATEGORY: u8 = 3;

/// Adds the protocols part's configurations beyond WTLS to the category-3 rows, by the
/// same model T_H (flights at each bearer's MTU, this machine's server CPU): a
/// classical one becomes the modern candidate where it is faster than the others, and
/// the fastest post-quantum one fills [`Recommendation::best_post_quantum`], or the
/// reason none is priced on the device.
pub fn add_dtls13<'a>(
    rows: &mut [Recommendation],
    configs: &[Config],
    devices: &[DeviceProfile],
    bearers: impl Iterator<Item = &'a LinkProfile> + Clone,
) {
    let published = pq_prices();
    for r in rows.iter_mut().filter(|r| r.category == DTLS13_CATEGORY) {
        let (Some(device), Some(bearer)) = (
            devices.iter().find(|d| DeviceName::of(d) == r.device),
            bearers.clone().find(|b| BearerName::of(b) == r.bearer),
        ) else {
            continue;
        };
        let p256 = device.offers.is_empty() || device.offers.contains(&KeyType::P256);
        let on_device = Device::Profile(Box::new(device.clone()));
        // The fastest priced post-quantum candidate; unpriced, the first reason (ML-KEM
        // alone comes before the hybrid's X25519).
        let mut post_quantum: Option<Result<ModernCandidate, String>> = None;
        for c in configs
            .iter()
            .filter(|c| !c.is_wtls() && c.auth() == r.auth && (p256 || !c.uses_p256()))
        {
            let th = c.client_time(&on_device, &published).map(|client| {
                client.map(|client_ms| ModernCandidate {
                    protocol: c.protocol(),
                    suite: c.suite(),
                    th_ms: model::duration_ms(
                        c.flights_over(bearer),
                        bearer,
                        client_ms,
                        c.server_cpu_us / 1e3,
                    ),
                    forward_secrecy: c.forward_secrecy(),
                    estimate: c.estimate_on(&on_device, &published),
                })
            });
            let Some(th) = th else { continue };
            if c.is_post_quantum() {
                post_quantum = Some(match (post_quantum, th) {
                    (Some(Ok(best)), Ok(m)) if m.th_ms >= best.th_ms => Ok(best),
                    (Some(Ok(best)), Err(_)) => Ok(best),
                    (Some(Err(first)), Err(_)) => Err(first),
                    (_, th) => th,
                });
            } else if let Ok(m) = th {
                if r.best_modern.as_ref().is_none_or(|b| m.th_ms < b.th_ms) {
                    r.best_modern = Some(m);
                }
            }
        }
        r.best_post_quantum = post_quantum.unwrap_or_else(|| {
            Err(format!(
                "not available: no {} post-quantum configuration in this run",
                match r.auth {
                    Authentication::Mutual => "mutually authenticated",
                    Authentication::ServerAuth => "server-authenticated",
                }
            ))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(device: &str, ecc: f64, rsa: f64, best_group: u8) -> Recommendation {
        let cand = |group: u8, th_ms: f64| Candidate {
            case: Case::parse(if group == 4 {
                "rsa1024/rsa1024"
            } else {
                "160p/160p"
            })
            .unwrap(),
            group,
            th_ms,
            client_ms: th_ms / 2.0,
            borrowed: false,
        };
        let catalogue = crate::evaluate::vocabulary::Catalogue::shipped().unwrap();
        let device = catalogue.devices.iter().find(|d| d.name == device).unwrap();
        Recommendation {
            device: DeviceName::of(device),
            bearer: BearerName::of(catalogue.bearer("nb-iot").unwrap()),
            category: 1,
            auth: Authentication::ServerAuth,
            best: cand(best_group, ecc.min(rsa)),
            runner_up: Some(cand(4, ecc.max(rsa))),
            margin: Some(ecc.max(rsa) / ecc.min(rsa) - 1.0),
            best_ecc_ms: Some(ecc),
            best_rsa_ms: Some(rsa),
            ecc_rsa_borrowed: false,
            equal_strength: vec![StrengthPair {
                leaf_level: 1,
                ecc: cand(1, ecc),
                rsa: cand(4, rsa),
            }],
            thesis_group_ms: (best_group == 2).then_some(ecc),
            other_group_ms: Some(rsa),
            thesis_best_group: Some(2),
            group_borrowed: false,
            best_modern: None,
            best_post_quantum: Err(String::new()),
        }
    }

    #[test]
    fn findings_name_where_the_conclusions_turn() {
        use wtlsperf_report::Verdict;
        let rows = vec![
            rec("esp32", 600.0, 300.0, 4),
            rec("nrf52840", 100.0, 300.0, 2),
        ];
        let f = findings(&rows, None);
        assert_eq!(f.len(), 2);
        // One device for, one against: per device, and the device against refutes a
        // claim over every device.
        assert_eq!(f[0].verdict, Verdict::Contradicted);
        assert!(
            f[0].evidence
                .contains("esp32: holds beyond the margin in 0, fails beyond it in 1")
                && f[0].evidence.contains("one profile, esp32"),
            "{}",
            f[0].evidence
        );
        // The ESP32 row does not offer the thesis' group: left out. The ranking is the
        // thesis' statement about its handset, judged on its published client times
        // (categories 1 and 2 within the margin, category 3 beyond it: inconclusive),
        // whatever the model's rows say, which are reported beside.
        assert!(
            f[1].evidence.contains("Not judged either: 1 ")
                && f[1]
                    .evidence
                    .contains("category 3 mutual: group 2 1207 ms vs group 3 1293 ms (-6.6 %)"),
            "{}",
            f[1].evidence
        );
        assert_eq!(f[1].verdict, Verdict::Inconclusive);
        let with_nokia = [rows.clone(), vec![rec("nokia7650", 100.0, 300.0, 2)]].concat();
        let f = findings(&with_nokia, None);
        assert_eq!(f[1].verdict, Verdict::Inconclusive, "{}", f[1].evidence);
        assert!(
            f[1].evidence
                .contains("the Nokia 7650 by our fit, holds beyond the margin in 1"),
            "{}",
            f[1].evidence
        );
        let mut slower = with_nokia.clone();
        slower[2].thesis_group_ms = Some(400.0);
        let f = findings(&slower, None);
        assert_eq!(f[1].verdict, Verdict::Inconclusive);
        assert!(
            f[1].evidence.contains(
                "the Nokia 7650 by our fit, holds beyond the margin in 0, fails beyond it in 1"
            ),
            "{}",
            f[1].evidence
        );
        let ok = findings(&rows[1..], None);
        assert_eq!(ok[0].verdict, Verdict::Confirmed);
        // A borrowed cost takes the row out of the judgement.
        let mut borrowed = rows.clone();
        borrowed[0].ecc_rsa_borrowed = true;
        borrowed[0].equal_strength[0].rsa.borrowed = true;
        let f = findings(&borrowed, None);
        assert_eq!(f[0].verdict, Verdict::Confirmed);
        assert!(
            f[0].evidence.contains("Not judged: 1 pairs"),
            "{}",
            f[0].evidence
        );
        // A ranking priced with a borrowed cost is not judged, and counted apart.
        let mut ranked = rows.clone();
        ranked[1].group_borrowed = true;
        let f = findings(&ranked, None);
        assert!(
            f[1].evidence.contains("and 1 whose fastest client of either side prices an operation with another device's ratio (nrf52840;"),
            "{}",
            f[1].evidence
        );
        assert_eq!(f[1].verdict, wtlsperf_report::Verdict::Inconclusive);
        // Only the ECC-against-RSA finding, judged over the bearers, carries their note.
        let f = findings(&rows, Some("Nominal bearer rates: nb-iot."));
        assert!(f[0].evidence.ends_with("Nominal bearer rates: nb-iot."));
        assert!(!f[1].evidence.contains("Nominal bearer rates"));
        // Within the tolerance: inconclusive, with the margin.
        let close = vec![rec("nokia7650", 100.0, 101.0, 2)];
        let f = findings(&close, None);
        assert_eq!(f[0].verdict, Verdict::Inconclusive);
        assert_eq!(f[1].verdict, Verdict::Inconclusive);
        assert!(
            f[1].evidence.contains("differing by 1.0 to 1.0 %"),
            "{}",
            f[1].evidence
        );
        assert!(findings(&[], None).is_empty());
    }

    #[test]
    fn every_category_has_four_groups_of_candidates() {
        for category in 1..=3 {
            let groups: std::collections::BTreeSet<u8> =
                candidates_of(category).into_iter().map(|c| c.0).collect();
            assert_eq!(groups.len(), 4, "category {category}");
        }
        assert_eq!(group_name(4), "RSA");
        // Section 4.1's ranking by the client's side: the 163-bit random curve in
        // category 1 and the Koblitz curves in category 3, both modes.
        for auth in Authentication::ALL {
            assert_eq!(thesis_best_group(1, auth), Some(3), "{auth:?}");
            assert_eq!(thesis_best_group(3, auth), Some(2), "{auth:?}");
        }
    }

    #[test]
    fn a_borrowed_cost_is_marked_and_a_missing_group_left_unjudged() {
        use crate::evaluate::processing::tests::synthetic;
        let catalogue = crate::evaluate::vocabulary::Catalogue::shipped().unwrap();
        let processing = ProcessingResults {
            cases: ["160p/160p", "163k/163k", "163r/163r", "rsa1024/rsa1024"]
                .into_iter()
                .flat_map(|c| Authentication::ALL.map(|a| synthetic(c, a, 1.0)))
                .collect(),
            variants: vec![],
            skipped: vec![],
        };
        let rows = build(
            &processing,
            &catalogue.devices,
            catalogue.compared_bearers(),
        );
        let of = |device: &'static str| rows.iter().filter(move |r| r.device.as_str() == device);
        // The ARM7's RSA costs are the Nokia's ratios: its ECC-RSA rows are estimates.
        assert!(of("arm7tdmi-25mhz").any(|r| r.ecc_rsa_borrowed));
        assert!(of("nokia7650").all(|r| !r.ecc_rsa_borrowed));
        // wolfSSL on the ESP32 runs no binary curve: the thesis' group is not offered.
        assert!(of("esp32").all(|r| r.thesis_group_ms.is_none()));
        assert!(of("nokia7650").all(|r| r.thesis_group_ms.is_some()));
        // The ARM7's binary curves are the Nokia's ratios: its group ranking is an
        // estimate, not judged; the Nokia prices its own.
        assert!(of("arm7tdmi-25mhz").any(|r| r.group_borrowed));
        assert!(of("nokia7650").all(|r| !r.group_borrowed));
    }

    #[test]
    fn a_new_device_or_bearer_row_gets_its_recommendations() {
        use crate::evaluate::processing::tests::synthetic;
        let dir = crate::evaluate::vocabulary::tests::fixture_data();
        let catalogue = crate::evaluate::vocabulary::Catalogue::load(dir.path()).unwrap();
        let processing = ProcessingResults {
            cases: ["256p/256p", "rsa1024/rsa1024", "160p/160p"]
                .into_iter()
                .flat_map(|c| Authentication::ALL.map(|a| synthetic(c, a, 1.0)))
                .collect(),
            variants: vec![],
            skipped: vec![],
        };
        let rows = build(
            &processing,
            &catalogue.devices,
            catalogue.compared_bearers(),
        );
        let on = |device: &str, bearer: &str| {
            rows.iter()
                .filter(|r| r.device.as_str() == device && r.bearer.as_str() == bearer)
                .count()
        };
        assert!(on("fixture-m33", "gsm-csd") > 0, "the new device");
        assert!(on("nokia7650", "fixture-5g") > 0, "the new bearer");
        assert!(on("fixture-m33", "fixture-5g") > 0, "both");
        assert!(
            rows.iter()
                .filter(|r| r.device.as_str() == "fixture-m33")
                .all(|r| r.best.case.to_string() == "256p/256p"),
            "it offers P-256 only"
        );
    }

    #[test]
    fn todays_subset_judged_on_one_profile_says_so() {
        let n = rec("nrf52840", 100.0, 300.0, 2);
        let rows = vec![(&n, Some(false))];
        let text = today_clause(&rows, &Tally::of([Some(false)]));
        assert!(
            text.contains("one profile alone")
                && text.contains("nrf52840's and not today's devices'"),
            "{text}"
        );
        let a = rec("nrf52840", 100.0, 300.0, 2);
        let b = rec("esp32", 100.0, 300.0, 2);
        let two = vec![(&a, Some(true)), (&b, Some(false))];
        let text = today_clause(&two, &Tally::of([Some(true), Some(false)]));
        assert!(
            text.contains("2 profiles") && text.contains("one profile, esp32"),
            "{text}"
        );
    }
}
