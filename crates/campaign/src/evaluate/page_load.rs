//! What a WAP user of 2004 waited for: the time from the first ClientHello to the first
//! page's last byte, over the emulated bearers, beside the handshake alone. The page is
//! fetched through `gateway --wap` (its secure ports) from a loopback origin
//! ([`LabOrigin`]), connectionless (one Get and its Reply) and in connection mode over
//! WTP (Connect, then Get; WTP's acknowledgements really on the link), each run through
//! its own bearer relay. Beside them, decks of 1 to 30 KB in connection mode, the
//! Reply segmented by WTP SAR ([`super::page_load_decks`]).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_bearer::profile;
use wtlsperf_bearer::LinkProfile;
use wtlsperf_bearer::RelayOptions;
use wtlsperf_models::stats::median;
use wtlsperf_models::Authentication;
use wtlsperf_report::{Cell, Column, Provenance, Section, Table};
use wtlsperf_wap::wtp::Timers;

use super::context::{Ctx, Mode};
use super::csv_file::write_csv;
use super::page_load_decks::{self, DeckRow};
use wtlsperf_drivers::auth::auth_mode;
use wtlsperf_drivers::bearer_runs::bearer_retransmit_timeout;
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::relay_run::through_relay;
use wtlsperf_drivers::setup::{gateway_server_config, ClientAuth, Options};
use wtlsperf_drivers::wap_client::{self, Limits, Socket, WspMode, WtlsPipe};
use wtlsperf_drivers::wap_gateway::{self, lab_origin::LabOrigin, WapGatewayConfig, ROLES};

/// What one run does after the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// Nothing: the handshake alone.
    Handshake,
    /// One connectionless Get (port 9202's role).
    Connectionless,
    /// Connect and Get as WTP transactions (port 9203's role).
    Connection,
}

impl Fetch {
    pub const ALL: [Fetch; 3] = [Fetch::Handshake, Fetch::Connectionless, Fetch::Connection];

    pub fn name(self) -> &'static str {
        match self {
            Fetch::Handshake => "handshake",
            Fetch::Connectionless => "connectionless",
            Fetch::Connection => "connection",
        }
    }
}

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

/// Datagrams and bytes one run put on the link, per direction, as the relay counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkTally {
    pub up_datagrams: u64,
    pub down_datagrams: u64,
    pub up_bytes: u64,
    pub down_bytes: u64,
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

/// One run to make: a case and fetch, and for the deck series the deck's size (KiB of
/// WML at the origin).
#[derive(Debug, Clone, Copy)]
pub(super) struct Job {
    pub case: Case,
    pub fetch: Fetch,
    pub deck_kb: Option<usize>,
}

/// One measured run.
#[derive(Debug, Clone)]
pub(super) struct Run {
    ms: f64,
    datagrams: u64,
    bytes: u64,
    link: LinkTally,
    pub body_bytes: usize,
    /// The page alone, after the handshake: from the first WSP datagram to the Reply's
    /// last byte (ms), and what it put on the link.
    pub page_ms: f64,
    pub page_link: LinkTally,
}

#[cfg(test)]
impl Run {
    /// A run with only what the deck series reads.
    pub(super) fn for_test(page_ms: f64, body_bytes: usize, page_link: LinkTally) -> Run {
        Run {
            ms: page_ms,
            datagrams: 0,
            bytes: 0,
            link: page_link,
            body_bytes,
            page_ms,
            page_link,
        }
    }
}

/// Runs the plan: every (case, fetch, repetition) of a bearer at once, each on its own
/// relay, against one in-process WAP gateway and origin.
pub fn run(ctx: &Ctx, store: &PkiStore) -> anyhow::Result<PageLoadResults> {
    let origin = LabOrigin::start().context("starting the lab origin")?;
    let server = gateway_server_config(store, ClientAuth::Optional, &Options::default())?;
    let gateway = wap_gateway::spawn(WapGatewayConfig {
        ip: "127.0.0.1".parse()?,
        base_port: 0,
        roles: ROLES.iter().filter(|r| r.secure).copied().collect(),
        server: Arc::new(server),
        origin_timeout: Duration::from_secs(30),
        timers: Timers::default(),
        // The secure ports only: every client proves its address by its handshake.
        limits: wap_gateway::WapLimits::default(),
        access_log: None,
        port_timers: Vec::new(),
    })?;
    let (bearers, cases, runs) = plan(ctx.mode);
    let (deck_kbs, deck_runs) = page_load_decks::plan(ctx.mode);
    let targets = Targets {
        connectionless: gateway
            .addr(WspMode::Connectionless, true)
            .context("the gateway's connectionless WTLS port")?,
        connection: gateway
            .addr(WspMode::Connection, true)
            .context("the gateway's connection-mode WTLS port")?,
        url: origin.url(),
        sized: deck_kbs
            .iter()
            .map(|kb| (*kb, origin.sized_url(*kb)))
            .collect(),
    };
    let auth = auth_mode(Authentication::ServerAuth);
    let (mut rows, mut decks) = (Vec::new(), Vec::new());
    for name in bearers {
        let link = profile(name)?;
        let mut work = Vec::new();
        for case in &cases {
            for fetch in Fetch::ALL {
                for _ in 0..runs {
                    work.push(Job {
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
                work.push(Job {
                    case: Case::parse(cases[0])?,
                    fetch: Fetch::Connection,
                    deck_kb: Some(*kb),
                });
            }
        }
        ctx.step(&format!(
            "page load: {} runs over {name} at once",
            work.len()
        ));
        let results = run_all(store, &targets, &link, auth, &work);
        rows.extend(summarise(name, auth, &cases, &work, &results));
        decks.extend(page_load_decks::summarise(&link, &work, &results));
    }
    let gateway_jobs = gateway.take_jobs();
    drop(gateway);
    anyhow::ensure!(
        !rows.is_empty(),
        "no page load over the emulated bearers completed"
    );
    Ok(PageLoadResults {
        rows,
        gateway: gateway_costs(&gateway_jobs),
        decks,
    })
}

/// Where the runs go.
struct Targets {
    connectionless: SocketAddr,
    connection: SocketAddr,
    url: String,
    /// The sized decks' URLs by size (KiB).
    sized: Vec<(usize, String)>,
}

impl Targets {
    fn url_of(&self, job: &Job) -> anyhow::Result<&str> {
        match job.deck_kb {
            None => Ok(&self.url),
            Some(kb) => self
                .sized
                .iter()
                .find(|(k, _)| *k == kb)
                .map(|(_, u)| u.as_str())
                .with_context(|| format!("no URL for the {kb} KB deck")),
        }
    }
}

fn run_all(
    store: &PkiStore,
    targets: &Targets,
    link: &LinkProfile,
    auth: AuthMode,
    work: &[Job],
) -> Vec<anyhow::Result<Run>> {
    // Many at once: each run mostly waits on its emulated link.
    wtlsperf_drivers::pool::run_concurrently(work, 48, |i, job| {
        one_run(store, targets, link.clone(), job, auth, 31 + i as u64)
    })
}

/// One handshake (and page) through a fresh relay.
fn one_run(
    store: &PkiStore,
    targets: &Targets,
    link: LinkProfile,
    job: &Job,
    auth: AuthMode,
    seed: u64,
) -> anyhow::Result<Run> {
    let (case, fetch) = (job.case, job.fetch);
    let url = targets.url_of(job)?;
    let creds = store.case(&case)?;
    let cfg = wtlsperf_drivers::registry::wtls::wtls_bearer_config(&creds, &link);
    let rto = bearer_retransmit_timeout(&link);
    let upstream = match fetch {
        Fetch::Connection => targets.connection,
        _ => targets.connectionless,
    };
    let deadline = Instant::now() + rto * 70;
    let fetched = through_relay(
        upstream,
        &link,
        seed,
        RelayOptions::default(),
        |sock, peer| {
            let (run, mut client) = wtlsperf_drivers::udp_client::connect(
                sock,
                peer,
                Arc::new(cfg),
                auth,
                None,
                None,
                deadline,
            )?;
            // What the handshake put on the link, as the client counted it (the
            // emulated bearers lose nothing): the rest of the relay's counts is the page's.
            let handshake = LinkTally {
                up_datagrams: run.datagrams_sent,
                down_datagrams: run.datagrams_received,
                up_bytes: run.bytes_sent,
                down_bytes: run.bytes_received,
            };
            let mode = match fetch {
                Fetch::Handshake => return Ok((run.duration, Duration::ZERO, 0, handshake)),
                Fetch::Connectionless => WspMode::Connectionless,
                Fetch::Connection => WspMode::Connection,
            };
            let started = Instant::now();
            let mut pipe = WtlsPipe::new(Socket::new(sock, peer, None)?, &mut client);
            let limits = Limits {
                retry: rto,
                deadline,
            };
            let page = wap_client::fetch(&mut pipe, mode, url, 1, limits)?;
            let page_time = started.elapsed();
            anyhow::ensure!(
                page.status.http() == Some(200),
                "the page came back {}",
                page.status
            );
            Ok((run.duration, page_time, page.body.len(), handshake))
        },
    );
    let ((handshake, page_time, body_bytes, until_page), stats) =
        fetched.with_context(|| format!("{case} {} of {url} over {}", fetch.name(), link.name))?;
    let all = LinkTally {
        up_datagrams: stats.up.datagrams_in,
        down_datagrams: stats.down.datagrams_in,
        up_bytes: stats.up.bytes_in,
        down_bytes: stats.down.bytes_in,
    };
    Ok(Run {
        ms: (handshake + page_time).as_secs_f64() * 1e3,
        datagrams: stats.up.datagrams_in + stats.down.datagrams_in,
        bytes: stats.up.bytes_in + stats.down.bytes_in,
        link: all,
        body_bytes,
        page_ms: page_time.as_secs_f64() * 1e3,
        page_link: LinkTally {
            up_datagrams: all.up_datagrams.saturating_sub(until_page.up_datagrams),
            down_datagrams: all.down_datagrams.saturating_sub(until_page.down_datagrams),
            up_bytes: all.up_bytes.saturating_sub(until_page.up_bytes),
            down_bytes: all.down_bytes.saturating_sub(until_page.down_bytes),
        },
    })
}

fn summarise(
    bearer: &str,
    auth: AuthMode,
    cases: &[&str],
    work: &[Job],
    results: &[anyhow::Result<Run>],
) -> Vec<PageLoadRow> {
    let mut rows = Vec::new();
    for case in cases {
        let ok = |fetch: Fetch| -> Vec<&Run> {
            work.iter()
                .zip(results)
                .filter(|(j, _)| j.deck_kb.is_none())
                .filter(|(j, _)| j.case.to_string() == *case && j.fetch == fetch)
                .filter_map(|(_, r)| r.as_ref().ok())
                .collect()
        };
        let med = |runs: &[&Run]| median(&runs.iter().map(|r| r.ms).collect::<Vec<_>>());
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
        assert_eq!(
            Fetch::ALL.map(Fetch::name),
            ["handshake", "connectionless", "connection"]
        );
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
