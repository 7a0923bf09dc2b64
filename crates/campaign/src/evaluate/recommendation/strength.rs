//! Levi-Savas' ECC-against-RSA claim on pairs of equal strength. Levi-Savas 2003 compare
//! ECC and RSA at matched security (their Table 1: 160-bit curves with RSA-1024, 224/233
//! with RSA-2048, 256/283 with RSA-3072); NIST SP 800-57 Part 1 (Table 2: ECC 160-223 ~
//! RSA 1024, 80 bits; 224-255 ~ RSA 2048, 112 bits; 256-383 ~ RSA 3072, 128 bits) pairs
//! the thesis' keys alike. The fastest ECC case against the fastest RSA case of a
//! category compares a 224-bit leaf with a 1024-bit one where RSA's fastest case is
//! rsa2048/rsa1024; here each ECC case meets the RSA case of the same CA and leaf level.

use wtls::suite::Specifier;
use wtlsperf_models::{reference, Authentication};
use wtlsperf_report::Finding;
use wtlsperf_report::ProvenanceKind;

use super::{devices_of, Candidate, Recommendation};
use crate::evaluate::passages;
use crate::evaluate::verdict::{self, Tally, MODEL_TOLERANCE};
use crate::evaluate::vocabulary::auth_name;

/// One equal-strength comparison of a row: the fastest ECC case whose leaf is of
/// `leaf_level`, against the RSA case of the same CA and leaf level.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StrengthPair {
    /// Strength level of both leaves (Levi-Savas Table 1; the CA's is the category).
    pub leaf_level: u8,
    pub ecc: Candidate,
    pub rsa: Candidate,
}

impl StrengthPair {
    /// Either side prices a client operation with another device's ratio.
    pub fn borrowed(&self) -> bool {
        self.ecc.borrowed || self.rsa.borrowed
    }

    /// "ECC below RSA" beyond the model's tolerance (`None` within it).
    fn decision(&self) -> Option<bool> {
        verdict::below(self.ecc.th_ms, self.rsa.th_ms, MODEL_TOLERANCE)
    }
}

/// The strength level Levi-Savas' Table 1 gives a key (`None` for a key it lists not).
pub fn levi_savas_level(key: Specifier) -> Option<u8> {
    let table = reference::levi_savas_strength_levels().ok()?;
    let row = match key.rsa_bits() {
        Some(bits) => table.iter().find(|r| r.rsa_modulus_bits == bits),
        None => table.iter().find(|r| {
            r.curves()
                .iter()
                .any(|c| c.eq_ignore_ascii_case(key.short()))
        }),
    }?;
    Some(row.strength_level)
}

/// The security strength in bits NIST SP 800-57 Part 1 (Table 2) gives a key: RSA by its
/// modulus, ECC by its field size f (160-223: 80, 224-255: 112, 256-383: 128).
pub fn sp800_57_bits(key: Specifier) -> Option<u32> {
    match key.rsa_bits() {
        Some(1024) => Some(80),
        Some(2048) => Some(112),
        Some(3072) => Some(128),
        Some(_) => None,
        None => match key.field_bits()? {
            160..=223 => Some(80),
            224..=255 => Some(112),
            256..=383 => Some(128),
            _ => None,
        },
    }
}

/// The equal-strength pairs among a row's candidates (all of one category, so of one CA
/// level): for each leaf level that both families offer, the fastest ECC case of that
/// leaf level against the RSA case of it.
pub fn pairs(cands: &[Candidate]) -> Vec<StrengthPair> {
    let level = |c: &Candidate| levi_savas_level(c.case.leaf);
    let mut out = Vec::new();
    for leaf_level in 1..=3u8 {
        let of = |rsa: bool| {
            cands
                .iter()
                .filter(|c| (c.group == 4) == rsa && level(c) == Some(leaf_level))
                .min_by(|a, b| a.th_ms.total_cmp(&b.th_ms))
        };
        if let (Some(ecc), Some(rsa)) = (of(false), of(true)) {
            out.push(StrengthPair {
                leaf_level,
                ecc: ecc.clone(),
                rsa: rsa.clone(),
            });
        }
    }
    out
}

/// Levi-Savas: ECC beats RSA in WTLS, judged on pairs of equal strength by model T_H
/// where the device offers both and prices both from its own numbers; the comparison of
/// the fastest case of each family, whatever their strengths, is reported beside it.
pub fn ecc_against_rsa(rows: &[Recommendation]) -> Finding {
    let mut judged: Vec<(&Recommendation, Option<bool>)> = Vec::new();
    let mut per_level: [Vec<Option<bool>>; 3] = Default::default();
    let mut borrowed = 0;
    for r in rows {
        for p in &r.equal_strength {
            if p.borrowed() {
                borrowed += 1;
                continue;
            }
            judged.push((r, p.decision()));
            per_level[usize::from(p.leaf_level - 1)].push(p.decision());
        }
    }
    let tally = Tally::of(judged.iter().map(|(_, d)| *d));
    let unpaired = devices_of(rows.iter().filter(|r| r.equal_strength.is_empty()));
    let levels: Vec<String> = per_level
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.is_empty())
        .map(|(i, d)| {
            let t = Tally::of(d.iter().copied());
            format!(
                "leaves of level {} ({}): {}",
                i + 1,
                level_keys(i as u8 + 1),
                t.text()
            )
        })
        .collect();
    // Levi-Savas find RSA's client times reasonable with server-only authentication
    // (section 4.1, observation 2) and rest ECC's advantage there on the server: each
    // authentication's tally is given apart.
    let per_auth: Vec<String> = Authentication::ALL
        .into_iter()
        .filter_map(|a| {
            let d: Vec<Option<bool>> = judged
                .iter()
                .filter(|(r, _)| r.auth == a)
                .map(|(_, d)| *d)
                .collect();
            (!d.is_empty()).then(|| format!("{}: {}", auth_name(a), Tally::of(d).text()))
        })
        .collect();
    let fastest = Tally::of(rows.iter().filter(|r| !r.ecc_rsa_borrowed).map(|r| {
        match (r.best_ecc_ms, r.best_rsa_ms) {
            (Some(e), Some(rsa)) => verdict::below(e, rsa, MODEL_TOLERANCE),
            _ => None,
        }
    }));
    Finding::new(
        format!("Levi-Savas 2003's conclusion ({}: \"{}\"; the study's claim itself is judged on the client's time, as they measured it, in the finding on their executed devices) carries over to whole handshakes on the catalogue's devices and bearers: judged at equal strength (the fastest ECDH_ECDSA case of each level against the RSA case whose CA and leaf are of the same level, as Levi-Savas' Table 1 pairs levels and NIST SP 800-57 Part 1 pairs them alike) by model T_H, on every device profile whose library offers both and prices both from its own numbers (where a profile publishes fewer key sizes, its other costs are scaled by key size: devices.csv, source_kind scaled).", passages::ECC_BEATS_RSA.place, passages::ECC_BEATS_RSA.quote),
        format!(
            "Model T_H per device, bearer, category, authentication and leaf level, the fastest ECDH_ECDSA case of the level against the RSA case of the same CA and leaf levels: {} overall; per authentication: {}; per level: {}. Per device: {}.{} Not judged: {borrowed} pairs whose ECC or RSA cost is borrowed from another device's ratios, and the rows of {} with no pair of equal strength. Beside it, not judged: the fastest ECC case against the fastest RSA case of each category whatever their strengths (a 224-bit leaf can meet a 1024-bit one there), {}.",
            tally.text(),
            per_auth.join("; "),
            levels.join("; "),
            super::per_device(&judged).join("; "),
            super::decided_by(&judged),
            if unpaired.is_empty() { "no device".to_owned() } else { unpaired.join(", ") },
            fastest.text(),
        ),
        tally.verdict(),
    )
    .rests_on(&[ProvenanceKind::Modelled])
    .rule(format!(
        "each judged pair of equal strength holds when the ECC case's T_H is more than {:.0} % (modelled numbers) below the RSA case's and fails when more than that above; confirmed when every pair holds, contradicted when one fails (a counterexample to a claim over every one), otherwise inconclusive with each device's and each level's verdict; pairs priced with a borrowed cost are not judged, and the fastest-against-fastest comparison is reported, not judged.",
        100.0 * MODEL_TOLERANCE
    ))
}

/// `160P, 163K, 163R ~ RSA-1024`: the keys of one level, from Levi-Savas' Table 1.
fn level_keys(level: u8) -> String {
    reference::levi_savas_strength_levels()
        .ok()
        .and_then(|t| {
            let r = t.into_iter().find(|r| r.strength_level == level)?;
            Some(format!(
                "{} ~ RSA-{}",
                r.curves().join(", "),
                r.rsa_modulus_bits
            ))
        })
        .unwrap_or_default()
}

/// One row of `recommendations_equal_strength.csv` (columns in docs/results.md).
#[derive(serde::Serialize)]
struct PairCsv<'a> {
    device: &'a str,
    bearer: &'a str,
    category: u8,
    auth: wtlsperf_models::Authentication,
    leaf_level: u8,
    security_bits: Option<u32>,
    ecc_case: String,
    ecc_ms: f64,
    rsa_case: String,
    rsa_ms: f64,
    borrowed: bool,
}

/// Writes `recommendations_equal_strength.csv`: every equal-strength pair of every row.
pub fn write_csv(path: &std::path::Path, rows: &[Recommendation]) -> anyhow::Result<()> {
    crate::evaluate::csv_file::write_csv(
        path,
        rows.iter().flat_map(|r| {
            r.equal_strength.iter().map(move |p| PairCsv {
                device: r.device.as_str(),
                bearer: r.bearer.as_str(),
                category: r.category,
                auth: r.auth,
                leaf_level: p.leaf_level,
                security_bits: sp800_57_bits(p.rsa.case.leaf),
                ecc_case: p.ecc.case.to_string(),
                ecc_ms: p.ecc.th_ms,
                rsa_case: p.rsa.case.to_string(),
                rsa_ms: p.rsa.th_ms,
                borrowed: p.borrowed(),
            })
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtls::suite::Case;

    #[test]
    fn levi_savas_and_nist_pair_the_thesis_keys_alike() {
        let keys = [
            "160p", "163k", "163r", "224p", "233k", "233r", "256p", "283k", "283r", "rsa1024",
            "rsa2048", "rsa3072",
        ];
        for k in keys {
            let s = Specifier::from_short(k).unwrap();
            let level = levi_savas_level(s).unwrap_or_else(|| panic!("{k}"));
            assert_eq!(level, s.strength_level(), "{k}");
            let bits = sp800_57_bits(s).unwrap();
            assert_eq!(bits, [80, 112, 128][usize::from(level - 1)], "{k}");
        }
    }

    fn cand(case: &str, th_ms: f64) -> Candidate {
        let case = Case::parse(case).unwrap();
        Candidate {
            case,
            group: case.group,
            th_ms,
            client_ms: th_ms,
            borrowed: false,
        }
    }

    #[test]
    fn each_ecc_case_meets_the_rsa_case_of_its_own_strength() {
        // Category 2: RSA's fastest case is rsa2048/rsa1024 (a 1024-bit leaf); ECC's a
        // 224-bit leaf. The pairs match the leaves instead.
        let cands = vec![
            cand("rsa2048/rsa1024", 100.0),
            cand("224p/224p", 150.0),
            cand("224p/160p", 120.0),
            cand("233k/163k", 110.0),
            cand("rsa2048/rsa2048", 400.0),
        ];
        let p = pairs(&cands);
        assert_eq!(p.len(), 2);
        assert_eq!(
            (
                p[0].leaf_level,
                p[0].ecc.case.to_string(),
                p[0].rsa.case.to_string()
            ),
            (1, "233k/163k".into(), "rsa2048/rsa1024".into())
        );
        assert_eq!(
            (p[1].ecc.case.to_string(), p[1].rsa.case.to_string()),
            ("224p/224p".into(), "rsa2048/rsa2048".into())
        );
        // 110 against 100 at level 1: RSA ahead beyond 5 %; 150 against 400: ECC ahead.
        assert_eq!(p[0].decision(), Some(false));
        assert_eq!(p[1].decision(), Some(true));
    }
}
