//! Real handshakes through the emulated bearers (thesis Table 4.12 measured again): an
//! in-process gateway with the thesis flow, one relay per handshake, many at once, so the
//! 48 cases over GSM CSD take about as long as one of them.

use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_bearer::profile;
use wtlsperf_models::stats::median;
use wtlsperf_models::Authentication;

use crate::evaluate::context::{Ctx, Mode};
use crate::evaluate::processing::{auth_mode, cases_for, ProcessingResults};
use crate::evaluate::vocabulary::BearerName;
use wtlsperf_drivers::bearer_runs::{run_batches, BearerBatch, BearerRun};
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_models::reference;

/// Which profiles, cases and how many runs of each a mode does.
pub fn plan(mode: Mode) -> Vec<(&'static str, Vec<Case>, usize)> {
    let all = cases_for(mode);
    let handful: Vec<Case> = all
        .iter()
        .copied()
        .filter(|c| {
            matches!(
                c.to_string().as_str(),
                "160p/160p" | "256p/256p" | "283k/283k" | "rsa1024/rsa1024" | "rsa3072/rsa2048"
            )
        })
        .collect();
    // Herwono-Liebhardt's two full handshakes, measured through their symmetric links.
    let herwono: Vec<Case> = handful
        .iter()
        .copied()
        .filter(|c| matches!(c.to_string().as_str(), "160p/160p" | "rsa1024/rsa1024"))
        .collect();
    match mode {
        Mode::Smoke => vec![("gsm-csd", all.into_iter().take(1).collect(), 1)],
        Mode::Quick => vec![
            ("gsm-csd", handful.clone(), 1),
            ("gprs-avg", handful, 2),
            ("herwono-5kbps", herwono.clone(), 1),
            ("herwono-15kbps", herwono, 1),
        ],
        Mode::Full => {
            let mut plan = vec![("gsm-csd", all.clone(), 3), ("gprs-avg", all, 3)];
            for rate in [
                "herwono-2kbps",
                "herwono-5kbps",
                "herwono-10kbps",
                "herwono-20kbps",
            ] {
                plan.push((rate, herwono.clone(), 2));
            }
            plan
        }
    }
}

/// Runs the plan through the drivers' bearer runs and returns one row per case, mode
/// and bearer, the flight model's median beside the measured one.
pub fn run(
    ctx: &Ctx,
    store: &PkiStore,
    _processing: &ProcessingResults,
) -> anyhow::Result<Vec<BearerRow>> {
    let mut batches = Vec::new();
    let mut planned = Vec::new();
    for (name, cases, runs) in plan(ctx.mode) {
        let mut work: Vec<(Case, AuthMode)> = Vec::new();
        for c in &cases {
            for auth in Authentication::ALL {
                for _ in 0..runs {
                    work.push((*c, auth_mode(auth)));
                }
            }
        }
        batches.push(BearerBatch {
            link: profile(name)?,
            work,
        });
        planned.push(cases);
    }
    let measured = run_batches(store, &batches, |b| {
        ctx.step(&format!(
            "transmission: {} handshakes over {} at once",
            b.work.len(),
            b.link.name
        ))
    })?;
    let mut rows = Vec::new();
    for ((batch, cases), results) in batches.iter().zip(&planned).zip(&measured) {
        rows.extend(rows_of(batch, cases, results));
    }
    anyhow::ensure!(
        !rows.is_empty(),
        "no handshake over the emulated bearers completed"
    );
    Ok(rows)
}

/// The rows of one bearer's batch: per case and authentication, the medians of the runs
/// that completed; none for a pair whose every run failed.
fn rows_of(
    batch: &BearerBatch,
    cases: &[Case],
    results: &[anyhow::Result<BearerRun>],
) -> Vec<BearerRow> {
    let mut rows = Vec::new();
    for c in cases {
        for auth in Authentication::ALL {
            let ok: Vec<_> = batch
                .work
                .iter()
                .zip(results)
                .filter(|((wc, wa), _)| wc == c && *wa == auth_mode(auth))
                .filter_map(|(_, r)| r.as_ref().ok())
                .collect();
            let Some(first) = ok.first() else { continue };
            let measured: Vec<f64> = ok.iter().map(|r| r.duration_ms).collect();
            let predicted: Vec<f64> = ok.iter().map(|r| r.predicted_ms).collect();
            rows.push(BearerRow {
                case: *c,
                auth,
                bearer: BearerName::of(&batch.link),
                bytes: (first.bytes_up + first.bytes_down) as usize,
                datagrams: (first.datagrams_up + first.datagrams_down) as usize,
                runs: ok.len(),
                measured_ms: median(&measured).unwrap_or(f64::NAN),
                modelled_ms: median(&predicted).unwrap_or(f64::NAN),
                published_ms: (batch.link.name == "gsm-csd")
                    .then(|| published_ttd(c, auth))
                    .flatten(),
            });
        }
    }
    rows
}

/// One real handshake run over an emulated bearer (median over the runs of one case).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BearerRow {
    /// Case.
    #[serde(serialize_with = "crate::evaluate::csv_file::display")]
    pub case: Case,
    /// Mode.
    pub auth: Authentication,
    /// Link profile.
    pub bearer: BearerName,
    /// Handshake bytes both ways (UDP payload).
    pub bytes: usize,
    /// Datagrams both ways.
    pub datagrams: usize,
    /// Runs.
    pub runs: usize,
    /// Median measured duration (ms).
    pub measured_ms: f64,
    /// Flight model (ms).
    pub modelled_ms: f64,
    /// Published T_TD of the same case (Table 4.12), GSM CSD only (ms).
    pub published_ms: Option<f64>,
}

/// Published T_TD of a case over GSM CSD.
pub fn published_ttd(case: &Case, auth: Authentication) -> Option<f64> {
    reference::gsm_csd_transmission()
        .ok()?
        .into_iter()
        .find(|r| r.ca_cert == case.ca.short() && r.leaf_cert == case.leaf.short())
        .map(|r| r.ttd_ms(auth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_plan_stays_small_and_full_plan_covers_every_case() {
        let quick = plan(Mode::Quick);
        assert!(quick
            .iter()
            .all(|(_, cases, runs)| cases.len() * runs <= 10));
        let full = plan(Mode::Full);
        assert!(full
            .iter()
            .any(|(n, c, _)| *n == "gsm-csd" && c.len() == cases_for(Mode::Full).len()));
    }
}
