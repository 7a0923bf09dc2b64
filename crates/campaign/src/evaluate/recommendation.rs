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
use wtlsperf_models::device::{DeviceProfile, WtlsCase};
use wtlsperf_models::reference::{categories_groups, processing_times};
use wtlsperf_models::Authentication;
use wtlsperf_report::{Finding, Verdict};

use super::processing::{CaseResult, ProcessingResults};
use super::transmission::modelled_duration_ms;
use super::vocabulary::{auth_name, BearerName, DeviceName};
use wtlsperf_drivers::device::model_case;

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
    /// The group the thesis measured fastest (lowest published T_PD) in this category.
    pub thesis_best_group: Option<u8>,
    /// Category 3: the fastest DTLS 1.2 or EDHOC suite of the mode the device runs
    /// (`super::device::modern`).
    pub best_modern: Option<ModernCandidate>,
}

/// A DTLS 1.2 or EDHOC suite's modelled handshake.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModernCandidate {
    #[serde(serialize_with = "protocol_name")]
    pub protocol: wtlsperf_spine::Protocol,
    #[serde(serialize_with = "suite_name")]
    pub suite: wtlsperf_drivers::protocols::Suite,
    /// Model T_H (ms).
    pub th_ms: f64,
}

fn protocol_name<S: serde::Serializer>(
    p: &wtlsperf_spine::Protocol,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name())
}

fn suite_name<S: serde::Serializer>(
    suite: &wtlsperf_drivers::protocols::Suite,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(suite.name())
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

/// The group whose published T_PD (client + server, Tables 4.1/4.2) is lowest.
fn thesis_best_group(category: u8, auth: Authentication) -> Option<u8> {
    processing_times()
        .ok()?
        .into_iter()
        .filter(|r| r.category == category && r.authentication == auth)
        .min_by(|a, b| (a.client_ms + a.server_ms).total_cmp(&(b.client_ms + b.server_ms)))
        .map(|r| r.group)
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
    let best_of = |rsa: bool| {
        cands
            .iter()
            .find(|c| (c.group == 4) == rsa)
            .map(|c| c.th_ms)
    };
    let runner_up = cands.get(1).cloned();
    Some(Recommendation {
        device: DeviceName::of(device),
        bearer: BearerName::of(bearer),
        category,
        auth,
        margin: runner_up.as_ref().map(|r| r.th_ms / best.th_ms - 1.0),
        best_ecc_ms: best_of(false),
        best_rsa_ms: best_of(true),
        best,
        runner_up,
        thesis_best_group: thesis_best_group(category, auth),
        best_modern: None,
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

/// One finding per conclusion, each clause computed from the table.
pub fn findings(rows: &[Recommendation]) -> Vec<Finding> {
    if rows.is_empty() {
        return Vec::new();
    }
    vec![ecc_against_rsa(rows), thesis_ranking(rows)]
}

/// Distinct device names of some rows, sorted.
fn devices_of<'a>(rows: impl Iterator<Item = &'a Recommendation>) -> Vec<&'a str> {
    let mut names: Vec<&str> = rows.map(|r| r.device.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Levi-Savas: ECC beats RSA in WTLS (judged where the device offers both).
fn ecc_against_rsa(rows: &[Recommendation]) -> Finding {
    let judged: Vec<&Recommendation> = rows
        .iter()
        .filter(|r| r.ecc_beats_rsa().is_some())
        .collect();
    let holds = judged
        .iter()
        .filter(|r| r.ecc_beats_rsa() == Some(true))
        .count();
    let turns: Vec<&Recommendation> = judged
        .iter()
        .copied()
        .filter(|r| r.ecc_beats_rsa() == Some(false))
        .collect();
    let worst = turns.iter().max_by(|a, b| {
        a.ecc_over_rsa()
            .unwrap_or(0.0)
            .total_cmp(&b.ecc_over_rsa().unwrap_or(0.0))
    });
    let devices_turning = devices_of(turns.iter().copied());
    let unjudged = devices_of(rows.iter().filter(|r| r.ecc_beats_rsa().is_none()));
    let scope = format!(
        "Model T_H per device, bearer, category and authentication, among the suites each device's library offers ({} offer no RSA or no ECC suite and are not judged)",
        if unjudged.is_empty() { "all devices".to_owned() } else { unjudged.join(", ") }
    );
    Finding::new(
        "Levi-Savas 2003, section 5: ECC performs better than RSA in WTLS (at each security level, for both handshake protocols).",
        match worst {
            Some(w) => format!(
                "{scope}: the fastest ECDH_ECDSA case beats the fastest RSA case in {holds} of {} combinations; it turns in {} ({}), most on {} over {} category {} {}: best ECC {:.0} ms vs best RSA {:.0} ms ({:+.0} %).",
                judged.len(),
                turns.len(),
                devices_turning.join(", "),
                w.device,
                w.bearer,
                w.category,
                auth_name(w.auth),
                w.best_ecc_ms.unwrap_or(f64::NAN),
                w.best_rsa_ms.unwrap_or(f64::NAN),
                (w.ecc_over_rsa().unwrap_or(f64::NAN) - 1.0) * 100.0
            ),
            None => format!(
                "{scope}: the fastest ECDH_ECDSA case beats the fastest RSA case in all {} combinations.",
                judged.len()
            ),
        },
        if turns.is_empty() {
            Verdict::Confirmed
        } else {
            Verdict::Contradicted
        },
    )
}

/// Bayoglu: the per-category ranking (the group with the lowest published T_PD wins),
/// on the thesis' own device and bearer and on today's devices.
fn thesis_ranking(rows: &[Recommendation]) -> Finding {
    let judged: Vec<&Recommendation> = rows
        .iter()
        .filter(|r| r.thesis_best_group.is_some())
        .collect();
    let holds = |rs: &[&Recommendation]| {
        rs.iter()
            .filter(|r| r.thesis_best_group == Some(r.best.group))
            .count()
    };
    let nokia_gsm: Vec<&Recommendation> = judged
        .iter()
        .copied()
        .filter(|r| r.device.is_thesis_device() && r.bearer.is_thesis_bearer())
        .collect();
    let today: Vec<&Recommendation> = judged
        .iter()
        .copied()
        .filter(|r| !r.device.is_study_device())
        .collect();
    let mut turned: Vec<String> = today
        .iter()
        .filter(|r| r.thesis_best_group != Some(r.best.group))
        .map(|r| {
            format!(
                "{} category {} {}: {} ({}, thesis: {})",
                r.device,
                r.category,
                auth_name(r.auth),
                r.best.case,
                group_name(r.best.group),
                r.thesis_best_group.map(group_name).unwrap_or("?")
            )
        })
        .collect();
    turned.sort();
    turned.dedup();
    let shown: Vec<String> = turned.iter().take(5).cloned().collect();
    let (nokia_holds, today_holds) = (holds(&nokia_gsm), holds(&today));
    Finding::new(
        "Bayoglu 2004, section 4.1: within each category one group is fastest (by the published T_PD: random binary or Koblitz curves first, RSA last).",
        format!(
            "The group with the lowest published T_PD is also the fastest by model T_H for the Nokia 7650 over GSM CSD in {} of {} (category, authentication) pairs, and on today's devices in {} of {} (device, bearer, category, authentication) combinations; where it turns (distinct winners, {} in all): {}.",
            nokia_holds,
            nokia_gsm.len(),
            today_holds,
            today.len(),
            turned.len(),
            if shown.is_empty() { "nowhere".to_owned() } else { shown.join("; ") }
        ),
        if today_holds == today.len() {
            Verdict::Confirmed
        } else {
            Verdict::Contradicted
        },
    )
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
            thesis_best_group: Some(2),
            best_modern: None,
        }
    }

    #[test]
    fn findings_name_where_the_conclusions_turn() {
        let rows = vec![
            rec("esp32", 600.0, 300.0, 4),
            rec("nrf52840", 100.0, 300.0, 2),
        ];
        let f = findings(&rows);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].verdict, Verdict::Contradicted);
        assert!(
            f[0].evidence.contains("1 of 2") && f[0].evidence.contains("esp32"),
            "{}",
            f[0].evidence
        );
        assert!(f[1].evidence.contains("1 of 2"), "{}", f[1].evidence);
        let ok = findings(&rows[1..]);
        assert_eq!(ok[0].verdict, Verdict::Confirmed);
        assert!(findings(&[]).is_empty());
    }

    #[test]
    fn every_category_has_four_groups_of_candidates() {
        for category in 1..=3 {
            let groups: std::collections::BTreeSet<u8> =
                candidates_of(category).into_iter().map(|c| c.0).collect();
            assert_eq!(groups.len(), 4, "category {category}");
        }
        assert_eq!(group_name(4), "RSA");
        assert!(thesis_best_group(1, Authentication::ServerAuth).is_some());
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
}
