//! What a WAP user of 2004 waited for: the time from the first ClientHello to the first
//! page's last byte, over the emulated bearers, beside the handshake alone. The drivers
//! ([`wtlsperf_drivers::page_load`]) fetch the page through `gateway --wap` (its secure
//! ports) from a loopback origin, connectionless (one Get and its Reply) and in
//! connection mode over WTP (Connect, then Get; WTP's acknowledgements really on the
//! link), each run through its own bearer relay. Beside them, decks of 1 to 30 KB in
//! connection mode, the Reply segmented by WTP SAR ([`super::page_load_decks`]); here the
//! plan, the summaries and the tables.

use std::path::Path;

use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_bearer::profile;
use wtlsperf_models::stats::median;
use wtlsperf_models::Authentication;
use wtlsperf_report::{Cell, Column, Provenance, Section, Table};

use super::context::{Ctx, Mode};
use super::csv_file::write_csv;
use super::page_load_decks::{self, DeckRow};
use wtlsperf_drivers::auth::auth_mode;
use wtlsperf_drivers::page_load::{self, PageBatch, PageJob, PageRun};
pub use wtlsperf_drivers::page_load::{Fetch, LinkTally};
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::wap_gateway;

/// One row of `page_load.csv`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PageLoadRow {
    pub bearer: String,
    pub case: String,
    pub auth: String,
    /// `handshake`, `connectionless` or `connection`.
    pub fetch: String,
    /// Runs that completed.
    pub runs: usize,
    /// Median time from the first ClientHello to the handshake's end (`handshake`) or
    /// to the page's last byte (ms).
    pub median_ms: f64,
    /// The handshake-alone median of the same bearer and case (ms).
    pub handshake_median_ms: f64,
    /// `median_ms - handshake_median_ms`: what the page adds (ms).
    pub page_extra_ms: f64,
    /// Datagrams on the link, both ways, of the first completed run.
    pub datagrams: u64,
    /// Bytes on the link, both ways, of the first completed run.
    pub bytes: u64,
    /// Size of the page's body as delivered (WMLC), 0 for the handshake alone.
    pub body_bytes: usize,
    /// Every completed run's time (ms), for the interval of the WTP model check.
    #[serde(skip)]
    pub run_ms: Vec<f64>,
    /// The first completed run's link counts per direction.
    #[serde(skip)]
    pub link: LinkTally,
}

/// One row of `page_load_gateway.csv`: what each kind of job cost the gateway over the
/// whole part (every bearer, case and fetch).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GatewayCostRow {
    /// `handshake` (a WTLS handshake datagram), `request` (a datagram carrying WSP or
    /// WTP, record decryption included) or `reply` (the origin's answer made a WSP Reply:
    /// WML compiled, sealed, sent).
    pub kind: String,
    pub jobs: usize,
    /// Median and 95th percentile (nearest rank) of the job's service time (µs).
    pub median_service_us: f64,
    pub p95_service_us: f64,
    /// Mean service time E[S] (µs) and its second moment E[S^2] (µs^2): what the
    /// Pollaczek-Khinchin formula takes of this kind of job.
    pub mean_service_us: f64,
    pub second_moment_us2: f64,
    /// Median size of the datagram (or the Reply's body) (B).
    pub median_bytes: f64,
}

/// The part's results.
#[derive(Debug, Clone, Default)]
pub struct PageLoadResults {
    pub rows: Vec<PageLoadRow>,
    pub gateway: Vec<GatewayCostRow>,
    /// Decks by size in connection mode (`page_load_decks.csv`).
    pub decks: Vec<DeckRow>,
}

/// The gateway's jobs summarised by kind.
fn gateway_costs(jobs: &[wap_gateway::WapJob]) -> Vec<GatewayCostRow> {
    use wap_gateway::JobKind;
    let rank = |v: &[f64], p: f64| {
        wtlsperf_models::stats::percentile(v, p, wtlsperf_models::stats::Rank::Nearest)
            .unwrap_or(f64::NAN)
    };
    [
        (JobKind::Handshake, "handshake"),
        (JobKind::Request, "request"),
        (JobKind::Reply, "reply"),
    ]
    .into_iter()
    .filter_map(|(kind, name)| {
        let of: Vec<&wap_gateway::WapJob> = jobs.iter().filter(|j| j.kind == kind).collect();
        let us: Vec<f64> = of.iter().map(|j| j.service_ns() as f64 / 1e3).collect();
        let bytes: Vec<f64> = of.iter().map(|j| j.bytes as f64).collect();
        let moments = wtlsperf_models::stats::Moments::of(&us)?;
        Some(GatewayCostRow {
            kind: name.to_owned(),
            jobs: of.len(),
            median_service_us: rank(&us, 50.0),
            p95_service_us: rank(&us, 95.0),
            mean_service_us: moments.mean,
            second_moment_us2: moments.m2,
            median_bytes: rank(&bytes, 50.0),
        })
    })
    .collect()
}

/// Bearers, cases and runs per mode.
fn plan(mode: Mode) -> (Vec<&'static str>, Vec<&'static str>, usize) {
    match mode {
        Mode::Smoke => (vec!["gsm-csd"], vec!["rsa1024/rsa1024"], 1),
        Mode::Quick => (
            vec!["gsm-csd", "gprs-avg"],
            vec!["rsa1024/rsa1024", "160p/160p"],
            2,
        ),
        Mode::Full => (
            vec!["gsm-csd", "gprs-avg"],
            vec!["rsa1024/rsa1024", "160p/160p"],
            4,
        ),
    }
}

/// Plans every (case, fetch, repetition) of each bearer, and the deck series, for the
/// drivers to run against one in-process WAP gateway and origin; summarises what they
/// measured.
pub fn run(ctx: &Ctx, store: &PkiStore) -> anyhow::Result<PageLoadResults> {
    let (bearers, cases, runs) = plan(ctx.mode);
    let (deck_kbs, deck_runs) = page_load_decks::plan(ctx.mode);
    let auth = auth_mode(Authentication::ServerAuth);
    let mut batches = Vec::new();
    for name in bearers {
        let mut work = Vec::new();
        for case in &cases {
            for fetch in Fetch::ALL {
                for _ in 0..runs {
                    work.push(PageJob {
                        case: Case::parse(case)?,
                        fetch,
                        deck_kb: None,
                    });
                }
            }
        }
        // The deck series with the first case: the WTLS handshake is not what it varies.
        for kb in &deck_kbs {
            for _ in 0..deck_runs {
                work.push(PageJob {
                    case: Case::parse(cases[0])?,
                    fetch: Fetch::Connection,
                    deck_kb: Some(*kb),
                });
            }
        }
        batches.push(PageBatch {
            link: profile(name)?,
            work,
        });
    }
    let measured = page_load::measure(store, &batches, &deck_kbs, auth, |b| {
        ctx.step(&format!(
            "page load: {} runs over {} at once",
            b.work.len(),
            b.link.name
        ))
    })?;
    let (mut rows, mut decks) = (Vec::new(), Vec::new());
    for (batch, results) in batches.iter().zip(&measured.runs) {
        rows.extend(summarise(
            &batch.link.name,
            auth,
            &cases,
            &batch.work,
            results,
        ));
        decks.extend(page_load_decks::summarise(
            &batch.link,
            &batch.work,
            results,
        ));
    }
    anyhow::ensure!(
        !rows.is_empty(),
        "no page load over the emulated bearers completed"
    );
    Ok(PageLoadResults {
        rows,
        gateway: gateway_costs(&measured.gateway_jobs),
        decks,
    })
}

fn summarise(
    bearer: &str,
    auth: AuthMode,
    cases: &[&str],
    work: &[PageJob],
    results: &[anyhow::Result<PageRun>],
) -> Vec<PageLoadRow> {
    let mut rows = Vec::new();
    for case in cases {
        let ok = |fetch: Fetch| -> Vec<&PageRun> {
            work.iter()
                .zip(results)
                .filter(|(j, _)| j.deck_kb.is_none())
                .filter(|(j, _)| j.case.to_string() == *case && j.fetch == fetch)
                .filter_map(|(_, r)| r.as_ref().ok())
                .collect()
        };
        let med = |runs: &[&PageRun]| median(&runs.iter().map(|r| r.ms).collect::<Vec<_>>());
        let handshake = med(&ok(Fetch::Handshake)).unwrap_or(f64::NAN);
        for fetch in Fetch::ALL {
            let runs = ok(fetch);
            let (Some(first), Some(m)) = (runs.first(), med(&runs)) else {
                continue;
            };
            rows.push(PageLoadRow {
                bearer: bearer.to_owned(),
                case: (*case).to_owned(),
                auth: auth.name().to_owned(),
                fetch: fetch.name().to_owned(),
                runs: runs.len(),
                median_ms: m,
                handshake_median_ms: handshake,
                page_extra_ms: m - handshake,
                datagrams: first.datagrams,
                bytes: first.bytes,
                body_bytes: first.body_bytes,
                run_ms: runs.iter().map(|r| r.ms).collect(),
                link: first.link,
            });
        }
    }
    rows
}

impl PageLoadResults {
    pub fn section(&self, ctx: &Ctx) -> Section {
        let m = ctx.measured();
        let mut t = Table::new("page_load", "First page: handshake plus WSP over the emulated bearers")
            .caption("From the first ClientHello to the page's last byte, through gateway --wap's WTLS ports; handshake = the handshake alone on the same bearer.")
            .column(Column::label("bearer"))
            .column(Column::label("case"))
            .column(Column::label("fetch"))
            .column(Column::new("runs", None, m.clone()))
            .column(Column::new("median", Some("ms"), m.clone()))
            .column(Column::new("page adds", Some("ms"), Provenance::derived("median - handshake median")))
            .column(Column::new("datagrams", None, m.clone()))
            .column(Column::new("bytes", Some("B"), m.clone()))
            .column(Column::new("body", Some("B"), m));
        for r in &self.rows {
            t = t.row(vec![
                Cell::text(&r.bearer),
                Cell::text(&r.case),
                Cell::text(&r.fetch),
                Cell::num(r.runs as f64, 0),
                Cell::num(r.median_ms, 1),
                Cell::num(r.page_extra_ms, 1),
                Cell::num(r.datagrams as f64, 0),
                Cell::num(r.bytes as f64, 0),
                Cell::num(r.body_bytes as f64, 0),
            ]);
        }
        let mut cost = Table::new("page_load_gateway", "What a page costs the gateway beside a handshake")
            .caption("Service time of the gateway's jobs during the page loads above (one port thread each; the origin's own time is not the gateway's).")
            .column(Column::label("job"))
            .column(Column::new("jobs", None, ctx.measured()))
            .column(Column::new("median service", Some("µs"), ctx.measured()))
            .column(Column::new("p95 service", Some("µs"), ctx.measured()))
            .column(Column::new("median size", Some("B"), ctx.measured()));
        for r in &self.gateway {
            cost = cost.row(vec![
                Cell::text(&r.kind),
                Cell::num(r.jobs as f64, 0),
                Cell::num(r.median_service_us, 1),
                Cell::num(r.p95_service_us, 1),
                Cell::num(r.median_bytes, 0),
            ]);
        }
        let section = Section::new("page_load", "What the user waited for: the first page")
            .intro("The studies measured the handshake; a 2004 user waited for the handshake and the first deck. Connection mode adds WSP Connect (a WTP class 2 transaction) before the Get, and WTP's acknowledgements travel the bearer too; connectionless WSP sends one Get and takes one Reply.")
            .table(t);
        // The deck series runs in the quick and full modes only.
        let section = if self.decks.is_empty() {
            section
        } else {
            section.table(page_load_decks::table(ctx, &self.decks))
        };
        section.table(cost)
    }

    pub fn write_csv(&self, dir: &Path) -> anyhow::Result<()> {
        write_csv(&dir.join("page_load.csv"), &self.rows)?;
        write_csv(&dir.join("page_load_decks.csv"), &self.decks)?;
        write_csv(&dir.join("page_load_gateway.csv"), &self.gateway)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_measures_each_fetch_beside_the_handshake() {
        for mode in [Mode::Smoke, Mode::Quick, Mode::Full] {
            let (bearers, cases, runs) = plan(mode);
            assert!(!bearers.is_empty() && !cases.is_empty() && runs >= 1);
            for b in bearers {
                assert!(profile(b).is_ok(), "{b}");
            }
            for c in cases {
                assert!(Case::parse(c).is_ok(), "{c}");
            }
        }
    }

    #[test]
    fn gateway_costs_summarise_each_kind_it_saw() {
        use wap_gateway::{JobKind, WapJob};
        let job = |kind, start_ns, end_ns, bytes| WapJob {
            kind,
            start_ns,
            end_ns,
            bytes,
        };
        let jobs = [
            job(JobKind::Handshake, 0, 3_000, 100),
            job(JobKind::Handshake, 10, 1_010, 60),
            job(JobKind::Handshake, 20, 2_020, 80),
            job(JobKind::Reply, 5, 505, 483),
        ];
        let rows = gateway_costs(&jobs);
        assert_eq!(rows.len(), 2, "no row for a kind without jobs");
        assert_eq!(rows[0].kind, "handshake");
        assert_eq!(rows[0].jobs, 3);
        assert_eq!(rows[0].median_service_us, 2.0);
        assert_eq!(rows[0].p95_service_us, 3.0);
        assert_eq!(rows[0].median_bytes, 80.0);
        assert_eq!(rows[0].mean_service_us, 2.0);
        assert!((rows[0].second_moment_us2 - 14.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            (rows[1].kind.as_str(), rows[1].median_service_us),
            ("reply", 0.5)
        );
    }
}
