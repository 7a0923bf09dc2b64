//! `loss_curves.csv`: completion and time to complete a handshake at 0, 1, 5, 10 and
//! 20 % datagram loss, per protocol and bearer, as the post-quantum TLS benchmarks
//! report it (median, p95, p99), each protocol with its own retransmission rules: WTLS's
//! client timer (scaled to the bearer, as the bearer runs use it), DTLS 1.2's whole
//! flights at RFC 7925's 9 s (OpenSSL), DTLS 1.3's ACKs and partial retransmission
//! (wolfSSL, RFC 9147 section 5.8), EDHOC over CoAP's confirmable retransmission.
//!
//! Each run goes through the spine's in-memory [`Pair`] in virtual time, with a network
//! hook that drops each datagram, either way, with the level's probability from a
//! seeded stream: a run is a function of its seed, whatever the machine's load, and
//! hundreds of runs whose real counterparts would wait minutes on timers take
//! milliseconds. The pair moves datagrams without delay and jumps to the next timer
//! when quiet, so a run's time is
//!
//!   time = (virtual time spent waiting on timers) + Eq. 3.84 over the flights that
//!          were delivered (each flight one traversal plus its serialisation),
//!
//! which at 0 % loss is the model of `protocols.csv` without the processing terms. A
//! lost flight costs its timer (which runs from the moment it was sent, so its own
//! traversal is inside the wait) and then the traversal of what is sent again.
//!
//! DTLS 1.3 fragments to the bearer's MTU (`data/bearers/profiles.csv`), so ML-KEM-768's
//! flights cross it in more datagrams, each one a chance to be lost.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::stats::{median, percentile, Rank};
use wtlsperf_report::{Axis, Cell, Column, Figure, LineChart, Provenance, Section, Series, Table};
use wtlsperf_spine::pair::{Ended, Fate};
use wtlsperf_spine::{Handshake, Now, Pair, Protocol};

use super::context::{Ctx, Mode};
use super::csv_file::write_csv;
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::protocols::bearer_jobs::run_concurrently;
use wtlsperf_drivers::protocols::coap_retransmit::CoapTimers;
use wtlsperf_drivers::protocols::dtls::DtlsConfig;
use wtlsperf_drivers::protocols::edhoc::EdhocConfig;
use wtlsperf_drivers::protocols::{flights_of, wtls_client_with_timer, Logged, Suite};
use wtlsperf_drivers::setup::{gateway_server_config, ClientAuth, Options};

/// The loss levels (probability per datagram, each direction).
pub const LEVELS: [f64; 5] = [0.0, 0.01, 0.05, 0.10, 0.20];

/// The bearers: the 2001 handset link and the two cellular IoT links of today.
pub const BEARERS: [&str; 3] = ["gsm-csd", "lte-m", "nb-iot"];

/// The bearer of the equal-timer variant: LTE-M, where the protocols' own first timers
/// differ most (DTLS's 9 s against WTLS's bearer-scaled 0.8 s or so).
pub const EQUAL_TIMER_BEARER: &str = "lte-m";

/// The equal-timer variant's first timer over `profile` (whole seconds): WTLS's
/// bearer-scaled timer (the longest round trip a handshake flight can take there, with
/// its processing allowance, so no protocol retransmits spuriously) rounded up to
/// wolfSSL's unit, the whole second. Over LTE-M that is 1 s, the first timer RFC 6347
/// (section 4.2.4.1) and RFC 9147 (section 5.8) recommend. Every protocol doubles it.
pub fn equal_first_timer_s(profile: &LinkProfile) -> u32 {
    let s = wtlsperf_drivers::bearer_runs::bearer_retransmit_timeout(profile).as_secs_f64();
    (s.ceil() as u32).max(1)
}

/// The `timers` value of the equal-timer variant's rows (no comma: a CSV value).
pub fn equal_label(first_s: u32) -> String {
    format!("equal: {first_s} s doubling")
}

/// The WTLS case: category 3's level (P-256), server-authenticated.
const WTLS_CASE: &str = "256p/256p";

/// Timers the in-memory driver fires at most per run: past every protocol's own
/// retransmission budget, so a run ends by its protocol's rules.
const DEADLINE_LIMIT: usize = 64;

/// Runs at once. Most of a DTLS 1.2 run's real time is the adapter's wait for OpenSSL's
/// real-time timer to agree at each retransmission (up to 500 ms, `protocols/dtls.rs`),
/// which sleeps: many runs share the two cores. Virtual time makes the results the same
/// at any parallelism.
const PARALLEL_RUNS: usize = 16;

/// One handshake configuration of the curves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Curve {
    Wtls,
    Dtls12,
    Edhoc,
    /// DTLS 1.3 with P-256 (false) or ML-KEM-768 (true), server-authenticated.
    #[cfg(feature = "dtls13")]
    Dtls13 {
        ml_kem: bool,
    },
}

impl Curve {
    fn all() -> Vec<Curve> {
        #[allow(unused_mut)]
        let mut v = vec![Curve::Wtls, Curve::Dtls12, Curve::Edhoc];
        #[cfg(feature = "dtls13")]
        v.extend([
            Curve::Dtls13 { ml_kem: false },
            Curve::Dtls13 { ml_kem: true },
        ]);
        v
    }

    fn protocol(self) -> Protocol {
        match self {
            Curve::Wtls => Protocol::Wtls,
            Curve::Dtls12 => Protocol::Dtls12,
            Curve::Edhoc => Protocol::Edhoc,
            #[cfg(feature = "dtls13")]
            Curve::Dtls13 { .. } => Protocol::Dtls13,
        }
    }

    fn suite(self) -> String {
        match self {
            Curve::Wtls => WTLS_CASE.to_owned(),
            Curve::Dtls12 => Suite::DtlsEcdheEcdsa { mutual: false }.name().to_owned(),
            Curve::Edhoc => Suite::EdhocMethod3Suite2.name().to_owned(),
            #[cfg(feature = "dtls13")]
            Curve::Dtls13 { ml_kem } => dtls13_suite(ml_kem).name(),
        }
    }
}

#[cfg(feature = "dtls13")]
fn dtls13_suite(ml_kem: bool) -> wtlsperf_drivers::protocols::dtls13::Dtls13Suite {
    use wtlsperf_drivers::protocols::dtls13::{Credential, Dtls13Suite, Group};
    let group = if ml_kem { Group::MlKem768 } else { Group::P256 };
    Dtls13Suite::new(Credential::Certificate { mutual: false }, group, false)
}

/// One point of a curve (columns documented in docs/results.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LossCurveRow {
    pub protocol: &'static str,
    pub suite: String,
    pub bearer: String,
    /// Loss probability per datagram, each direction.
    pub loss: f64,
    pub runs: usize,
    pub completed: usize,
    /// Over the completed runs (ms).
    pub median_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Datagrams either side sent again on its timer, median over the completed runs.
    pub median_retransmissions: Option<f64>,
    /// `default` (each protocol's own timers) or the equal-timer variant's schedule,
    /// `equal: 1 s doubling`.
    pub timers: String,
}

/// The curves of one run.
#[derive(Debug, Clone, Default)]
pub struct LossCurves {
    pub rows: Vec<LossCurveRow>,
    pub runs_per_point: usize,
}

/// Runs per point: at least 40 in the full evaluation.
fn runs_per_point(mode: Mode) -> usize {
    match mode {
        Mode::Smoke => 2,
        Mode::Quick => 10,
        Mode::Full => 40,
    }
}

/// What one run gave: completion time (ms) and retransmissions, or `None` when the
/// handshake failed or timed out.
type RunResult = Option<(f64, u32)>;

/// The configurations every run draws its sides from, built once.
struct Sides<'a> {
    store: &'a PkiStore,
    /// The equal-timer variant's first timer (s), or `None` for each protocol's own.
    first_timer_s: Option<u32>,
    wtls_server: Arc<wtls::handshake::ServerConfig>,
    dtls12: DtlsConfig,
    edhoc: EdhocConfig,
    #[cfg(feature = "dtls13")]
    dtls13: Vec<(bool, u16, wtlsperf_drivers::protocols::dtls13::Dtls13Config)>,
}

impl<'a> Sides<'a> {
    fn new(
        store: &'a PkiStore,
        bearers: &[LinkProfile],
        first_timer_s: Option<u32>,
    ) -> anyhow::Result<Sides<'a>> {
        let server = gateway_server_config(store, ClientAuth::Optional, &Options::default())?;
        #[cfg(feature = "dtls13")]
        let mut dtls13 = Vec::new();
        #[cfg(feature = "dtls13")]
        for ml_kem in [false, true] {
            for p in bearers {
                let mtu = p.datagram_payload_limit();
                if !dtls13.iter().any(|(k, m, _)| *k == ml_kem && *m == mtu) {
                    let mut cfg = wtlsperf_drivers::protocols::dtls13::Dtls13Config::new(
                        dtls13_suite(ml_kem),
                    )?
                    .with_mtu(mtu);
                    if let Some(t) = first_timer_s {
                        cfg = cfg.with_initial_timer_s(t);
                    }
                    dtls13.push((ml_kem, mtu, cfg));
                }
            }
        }
        #[cfg(not(feature = "dtls13"))]
        let _ = bearers;
        let mut dtls12 = DtlsConfig::new(Suite::DtlsEcdheEcdsa { mutual: false })?;
        let mut edhoc = EdhocConfig::new()?;
        if let Some(t) = first_timer_s {
            let first = Duration::from_secs(u64::from(t));
            dtls12 = dtls12.with_initial_timer(first);
            // CoAP's first timer fixed (no random factor), doubling, as every other's.
            edhoc = edhoc.with_timers(CoapTimers {
                ack_timeout: first,
                random_factor: 1.0,
                ..CoapTimers::default()
            });
        }
        Ok(Sides {
            store,
            first_timer_s,
            wtls_server: Arc::new(server),
            dtls12,
            edhoc,
            #[cfg(feature = "dtls13")]
            dtls13,
        })
    }

    /// One run of `curve` over `profile` at `loss`, seeded with `seed`.
    fn run(&self, curve: Curve, profile: &LinkProfile, loss: f64, seed: u64) -> RunResult {
        let now = wtlsperf_drivers::setup::now();
        match curve {
            Curve::Wtls => {
                let case = WTLS_CASE.parse().ok()?;
                let client = wtls_client_with_timer(
                    self.store,
                    case,
                    wtls::handshake::AuthMode::ServerAuth,
                    profile,
                    self.first_timer_s
                        .map(|t| Duration::from_secs(u64::from(t))),
                )
                .ok()?;
                let server = wtls::handshake::ServerConnection::new(
                    Arc::clone(&self.wtls_server),
                    wtls::probe::Probe::off(),
                    now,
                );
                lossy(client, server, now, profile, loss, seed)
            }
            Curve::Dtls12 => lossy(
                self.dtls12.client().ok()?,
                self.dtls12.server().ok()?,
                now,
                profile,
                loss,
                seed,
            ),
            Curve::Edhoc => lossy(
                self.edhoc.client(seed).ok()?,
                self.edhoc.server().ok()?,
                now,
                profile,
                loss,
                seed,
            ),
            #[cfg(feature = "dtls13")]
            Curve::Dtls13 { ml_kem } => {
                let mtu = profile.datagram_payload_limit();
                let (_, _, cfg) = self
                    .dtls13
                    .iter()
                    .find(|(k, m, _)| *k == ml_kem && *m == mtu)?;
                lossy(
                    cfg.client().ok()?,
                    cfg.server().ok()?,
                    now,
                    profile,
                    loss,
                    seed,
                )
            }
        }
    }
}

/// One handshake through the pair with seeded loss `loss`; its time as the module's
/// documentation defines it.
fn lossy<C: Handshake, S: Handshake>(
    client: C,
    server: S,
    now: Now,
    profile: &LinkProfile,
    loss: f64,
    seed: u64,
) -> RunResult {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pair = Pair::new(client, server, now).with_hook(move |_, _, _| {
        if rng.random::<f64>() < loss {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    pair.start();
    if pair.drive(wtlsperf_spine::pair::DEFAULT_ROUND_LIMIT, DEADLINE_LIMIT) != Ended::Complete {
        return None;
    }
    let waited_ms = pair.now.mono_ns.saturating_sub(now.mono_ns) as f64 / 1e6;
    let delivered: Vec<Logged> = pair
        .log
        .iter()
        .filter(|l| l.fate != Fate::Drop)
        .map(|l| Logged {
            up: l.up(),
            bytes: l.bytes,
        })
        .collect();
    let link_ms = wtlsperf_drivers::bearer_runs::predicted_ms(&flights_of(&delivered), profile);
    let rtx = pair.client.retransmissions() + pair.server.retransmissions();
    Some((waited_ms + link_ms, rtx))
}

/// One run to make: which curve, bearer, level and repetition.
#[derive(Debug, Clone, Copy)]
struct Job {
    curve: usize,
    bearer: usize,
    level: usize,
    rep: usize,
    /// The equal-timer variant (over [`EQUAL_TIMER_BEARER`] only).
    equal: bool,
}

/// Runs every curve at every level on every bearer.
pub fn run(ctx: &Ctx, store: &PkiStore) -> anyhow::Result<LossCurves> {
    let bearers: Vec<LinkProfile> = BEARERS
        .iter()
        .filter(|b| ctx.mode != Mode::Smoke || **b == "lte-m")
        .map(|b| ctx.catalogue.bearer(b).cloned())
        .collect::<anyhow::Result<_>>()?;
    let sides = Sides::new(store, &bearers, None)?;
    let equal_bearer = bearers.iter().position(|b| b.name == EQUAL_TIMER_BEARER);
    let equal_first_s = equal_bearer.map(|b| equal_first_timer_s(&bearers[b]));
    let equal_sides = match equal_bearer {
        Some(b) => Some(Sides::new(
            store,
            std::slice::from_ref(&bearers[b]),
            equal_first_s,
        )?),
        None => None,
    };
    let curves = Curve::all();
    let reps = runs_per_point(ctx.mode);
    let mut jobs = Vec::new();
    for equal in [false, true] {
        for curve in 0..curves.len() {
            for bearer in 0..bearers.len() {
                if equal && Some(bearer) != equal_bearer {
                    continue;
                }
                for level in 0..LEVELS.len() {
                    for rep in 0..reps {
                        jobs.push(Job {
                            curve,
                            bearer,
                            level,
                            rep,
                            equal,
                        });
                    }
                }
            }
        }
    }
    ctx.step(&format!(
        "loss curves: {} handshakes in virtual time",
        jobs.len()
    ));
    let results = run_concurrently(&jobs, PARALLEL_RUNS, |_, j| {
        // the same seeds for every protocol: each meets the same loss stream
        let seed = 90_000 + (j.bearer * 1000 + j.level * 100 + j.rep) as u64;
        let p = &bearers[j.bearer];
        let sides = match (&equal_sides, j.equal) {
            (Some(e), true) => e,
            _ => &sides,
        };
        sides.run(curves[j.curve], p, LEVELS[j.level], seed)
    });
    let mut rows = Vec::new();
    for equal in [false, true] {
        let timers = match (equal, equal_first_s) {
            (false, _) => "default".to_owned(),
            (true, Some(t)) => equal_label(t),
            (true, None) => continue,
        };
        for (ci, curve) in curves.iter().enumerate() {
            for (bi, p) in bearers.iter().enumerate() {
                for (li, &loss) in LEVELS.iter().enumerate() {
                    let mine: Vec<&RunResult> = jobs
                        .iter()
                        .zip(&results)
                        .filter(|(j, _)| {
                            j.equal == equal && j.curve == ci && j.bearer == bi && j.level == li
                        })
                        .map(|(_, r)| r)
                        .collect();
                    if !mine.is_empty() {
                        rows.push(point(*curve, &p.name, loss, &mine, &timers));
                    }
                }
            }
        }
    }
    Ok(LossCurves {
        rows,
        runs_per_point: reps,
    })
}

fn point(curve: Curve, bearer: &str, loss: f64, runs: &[&RunResult], timers: &str) -> LossCurveRow {
    let ok: Vec<(f64, u32)> = runs.iter().filter_map(|r| **r).collect();
    let ms: Vec<f64> = ok.iter().map(|x| x.0).collect();
    let rtx: Vec<f64> = ok.iter().map(|x| f64::from(x.1)).collect();
    LossCurveRow {
        protocol: curve.protocol().name(),
        suite: curve.suite(),
        bearer: bearer.to_owned(),
        loss,
        runs: runs.len(),
        completed: ok.len(),
        median_ms: median(&ms),
        p95_ms: percentile(&ms, 95.0, Rank::Nearest),
        p99_ms: percentile(&ms, 99.0, Rank::Nearest),
        median_retransmissions: median(&rtx),
        timers: timers.to_owned(),
    }
}

impl LossCurves {
    /// Writes `loss_curves.csv`.
    pub fn write_csv(&self, dir: &Path) -> anyhow::Result<()> {
        write_csv(&dir.join("loss_curves.csv"), &self.rows)
    }

    /// The report section: one figure per bearer (median and p95 against loss) and the
    /// table of every point.
    pub fn section(&self, ctx: &Ctx) -> Section {
        let mut intro = format!(
            "Each protocol with its own retransmission rules, {} runs a point, in virtual time \
             through the in-memory pair with seeded loss on every datagram both ways (the same \
             loss stream for every protocol). Time = the timers waited + Eq. 3.84 over the \
             flights delivered; percentiles (nearest rank) over the completed runs. DTLS 1.3 \
             fragments to each bearer's MTU.",
            self.runs_per_point
        );
        // The curves over the modern bearers rest on nominal rates: say so where they
        // are drawn.
        if let Some(note) = ctx.catalogue.typical_bearer_note() {
            intro.push(' ');
            intro.push_str(&note);
        }
        let mut s = Section::new("loss_curves", "Completion under loss, 0 to 20 %").intro(intro);
        let mut bearers: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !bearers.contains(&r.bearer.as_str()) {
                bearers.push(&r.bearer);
            }
        }
        for b in bearers {
            s = s.figure(self.figure(ctx, b, "default"));
        }
        let mut equal: Vec<(&str, &str)> = Vec::new();
        for r in self.rows.iter().filter(|r| r.timers != "default") {
            if !equal.contains(&(r.bearer.as_str(), r.timers.as_str())) {
                equal.push((&r.bearer, &r.timers));
            }
        }
        for (b, timers) in equal {
            s = s.paragraph(format!(
                "Equal timers over {b} ({timers}): every protocol's first retransmission timer set to the same value and doubled, its retransmission limit its own. The value is WTLS's bearer-scaled timer (the longest round trip a handshake flight can take over the bearer, with a processing allowance, so that no protocol retransmits spuriously) rounded up to whole seconds, wolfSSL's unit; over LTE-M that is 1 s, the first timer RFC 6347 section 4.2.4.1 and RFC 9147 section 5.8 recommend. Each protocol's own timers are in protocols_timers.csv."
            ));
            s = s.figure(self.figure(ctx, b, timers));
        }
        s.table(self.table(ctx))
    }

    fn figure(&self, ctx: &Ctx, bearer: &str, timers: &str) -> Figure {
        let mut chart = LineChart::new(
            Axis::new("datagram loss", "%"),
            Axis::new("time to complete", "ms").log(),
        );
        let mut labels: Vec<(&'static str, &str)> = Vec::new();
        for r in self
            .rows
            .iter()
            .filter(|r| r.bearer == bearer && r.timers == timers)
        {
            if !labels.contains(&(r.protocol, r.suite.as_str())) {
                labels.push((r.protocol, &r.suite));
            }
        }
        for (i, (protocol, suite)) in labels.into_iter().enumerate() {
            let mine = || {
                self.rows.iter().filter(move |r| {
                    r.bearer == bearer
                        && r.timers == timers
                        && r.protocol == protocol
                        && r.suite == suite
                })
            };
            let med: Vec<(f64, f64)> = mine()
                .filter_map(|r| r.median_ms.map(|m| (r.loss * 100.0, m)))
                .collect();
            let p95: Vec<(f64, f64)> = mine()
                .filter_map(|r| r.p95_ms.map(|m| (r.loss * 100.0, m)))
                .collect();
            chart = chart
                .series(
                    Series::new(format!("{protocol} {suite} median"), ctx.measured(), med)
                        .colour(i),
                )
                .series(
                    Series::new(format!("{protocol} {suite} p95"), ctx.measured(), p95).colour(i),
                );
        }
        let (id, title, caption) = if timers == "default" {
            (
                format!("loss_curves_{bearer}"),
                format!("Time to complete a handshake against loss over {bearer}"),
                "Median and p95 of the completed runs; each protocol's own retransmission timers."
                    .to_owned(),
            )
        } else {
            (
                format!("loss_curves_{bearer}_equal_timers"),
                format!("Time to complete a handshake against loss over {bearer}, equal timers"),
                format!("Median and p95 of the completed runs; every protocol's timers {timers}."),
            )
        };
        Figure::new(id, title, chart).caption(caption)
    }

    fn table(&self, ctx: &Ctx) -> Table {
        let m = ctx.measured();
        let mut t = Table::new("loss_curves", "Completion and time to complete under loss")
            .column(Column::label("protocol"))
            .column(Column::label("suite"))
            .column(Column::label("bearer"))
            .column(Column::label("timers"))
            .column(Column::new(
                "loss",
                Some("%"),
                Provenance::derived("the hook's probability"),
            ))
            .column(Column::new("completed", None, m.clone()))
            .column(Column::new("runs", None, m.clone()))
            .column(Column::new("median", Some("ms"), m.clone()))
            .column(Column::new("p95", Some("ms"), m.clone()))
            .column(Column::new("p99", Some("ms"), m.clone()))
            .column(Column::new("retransmissions (median)", None, m));
        for r in &self.rows {
            t = t.row(vec![
                Cell::text(r.protocol),
                Cell::text(&r.suite),
                Cell::text(&r.bearer),
                Cell::text(&r.timers),
                Cell::num(r.loss * 100.0, 0),
                Cell::num(r.completed as f64, 0),
                Cell::num(r.runs as f64, 0),
                Cell::opt(r.median_ms, 0),
                Cell::opt(r.p95_ms, 0),
                Cell::opt(r.p99_ms, 0),
                Cell::opt(r.median_retransmissions, 0),
            ]);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_completed_runs_and_failures_are_counted() {
        let runs = [Some((100.0, 0)), None, Some((300.0, 2)), Some((200.0, 1))];
        let refs: Vec<&RunResult> = runs.iter().collect();
        let row = point(Curve::Dtls12, "lte-m", 0.1, &refs, "default");
        assert_eq!((row.runs, row.completed), (4, 3));
        assert_eq!(row.median_ms, Some(200.0));
        assert_eq!(row.p95_ms, Some(300.0));
        assert_eq!(row.median_retransmissions, Some(1.0));
    }

    #[test]
    fn a_lossless_run_takes_the_link_model_and_loss_costs_the_protocols_timer() {
        let lte = wtlsperf_bearer::profile("lte-m").unwrap();
        let cfg = DtlsConfig::new(Suite::DtlsPsk).unwrap();
        let now = wtlsperf_drivers::setup::now();
        let (clean, rtx) = lossy(
            cfg.client().unwrap(),
            cfg.server().unwrap(),
            now,
            &lte,
            0.0,
            1,
        )
        .unwrap();
        assert_eq!(rtx, 0);
        // six flights, each at least one mean traversal
        assert!(clean > 6.0 * 50.0 && clean < 9_000.0, "{clean}");
        // some seed at 20 % loses a datagram: that run then waits RFC 7925's 9 s timer
        let slow = (0..20)
            .filter_map(|seed| {
                lossy(
                    cfg.client().unwrap(),
                    cfg.server().unwrap(),
                    now,
                    &lte,
                    0.2,
                    seed,
                )
            })
            .map(|r| r.0)
            .fold(0.0, f64::max);
        assert!(slow >= clean + 9_000.0, "{slow}");
    }
}
