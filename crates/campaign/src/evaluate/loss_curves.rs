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

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::stats::{median, percentile, Rank};
use wtlsperf_report::{Axis, Cell, Column, Figure, LineChart, Provenance, Section, Series, Table};
use wtlsperf_spine::pair::{Ended, Fate};
use wtlsperf_spine::{Handshake, Now, Pair};

use super::context::{Ctx, Mode};
use super::csv_file::write_csv;
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::pool::run_concurrently;
use wtlsperf_drivers::protocols::{flights_of, Logged};
use wtlsperf_drivers::registry::{self, Bench, Contender, Sides, TimeBase};

/// The loss levels (probability per datagram, each direction).
pub const LEVELS: [f64; 5] = [0.0, 0.01, 0.05, 0.10, 0.20];

/// The bearers: the 2001 handset link and the two cellular IoT links of today.
pub const BEARERS: [&str; 3] = ["gsm-csd", "lte-m", "nb-iot"];

/// The curves: WTLS's category 3 case (P-256) and each successor's certificate
/// configuration at the same level, server-authenticated, and DTLS 1.3 with ML-KEM-768;
/// a protocol the registry adds beyond these by its default configuration.
pub const CURVES: [&str; 5] = [
    "wtls:256p/256p",
    "dtls1.2:ecdhe-ecdsa-p256-ccm8",
    "edhoc:method3-suite2",
    "dtls1.3:ecdhe-p256-ecdsa-ccm8",
    "dtls1.3:mlkem768-ecdsa-ccm8",
];

/// Timers the in-memory driver fires at most per run: past every protocol's own
/// retransmission budget, so a run ends by its protocol's rules.
const DEADLINE_LIMIT: usize = 64;

/// Runs at once. Most of a DTLS 1.2 run's real time is the adapter's wait for OpenSSL's
/// real-time timer to agree at each retransmission (up to 500 ms, `protocols/dtls.rs`),
/// which sleeps: many runs share the two cores. Virtual time makes the results the same
/// at any parallelism.
const PARALLEL_RUNS: usize = 16;

/// The curves' contenders this build has, WTLS's first.
pub fn curves() -> Vec<Contender> {
    let mut out: Vec<Contender> = registry::contender(CURVES[0]).into_iter().collect();
    out.extend(super::contenders::with_every_protocol(&CURVES[1..]));
    out
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

/// Every curve's sides at every payload limit its bearers need, built once and shared
/// by all runs (a configuration may cost a certificate chain and two contexts).
struct Prepared {
    sides: Vec<(usize, u16, Arc<dyn Sides>)>,
}

impl Prepared {
    fn new(
        bench: Bench<'_>,
        curves: &[Contender],
        bearers: &[LinkProfile],
    ) -> anyhow::Result<Prepared> {
        let mut sides = Vec::new();
        for (ci, c) in curves.iter().enumerate() {
            for p in bearers {
                let limit = p.datagram_payload_limit();
                if !sides.iter().any(|(i, l, _)| *i == ci && *l == limit) {
                    sides.push((ci, limit, c.sides(bench, limit, TimeBase::Virtual)?));
                }
            }
        }
        Ok(Prepared { sides })
    }

    /// One run of curve `ci` over `profile` at `loss`, seeded with `seed`.
    fn run(&self, ci: usize, profile: &LinkProfile, loss: f64, seed: u64) -> RunResult {
        let limit = profile.datagram_payload_limit();
        let (_, _, sides) = self
            .sides
            .iter()
            .find(|(i, l, _)| *i == ci && *l == limit)?;
        let now = wtlsperf_drivers::setup::now();
        let client = sides.client(profile, seed).ok()?;
        lossy(client, sides.server().ok()?, now, profile, loss, seed)
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

/// One run to make: which curve, bearer, level and repetition (indices into a
/// [`LossStudy`]'s lists).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Job {
    pub curve: usize,
    pub bearer: usize,
    pub level: usize,
    pub rep: usize,
}

/// What a loss study runs: every contender on every bearer at every level, `reps` runs
/// a point. The evaluation's curves are one; an experiment file's are another.
pub(crate) struct LossStudy<'a> {
    pub contenders: &'a [Contender],
    pub bearers: &'a [LinkProfile],
    pub levels: &'a [f64],
    pub reps: usize,
}

impl LossStudy<'_> {
    /// Every run of the study, contender by contender.
    fn jobs(&self) -> Vec<Job> {
        let mut jobs = Vec::new();
        for curve in 0..self.contenders.len() {
            for bearer in 0..self.bearers.len() {
                for level in 0..self.levels.len() {
                    for rep in 0..self.reps {
                        jobs.push(Job {
                            curve,
                            bearer,
                            level,
                            rep,
                        });
                    }
                }
            }
        }
        jobs
    }

    /// Runs the study, each run seeded with `seed_of(job)` (give every contender of a
    /// point the same seed: each then meets the same loss stream), one row per point.
    pub(crate) fn run(
        &self,
        ctx: &Ctx,
        store: &PkiStore,
        seed_of: impl Fn(&Job) -> u64 + Sync,
    ) -> anyhow::Result<Vec<LossCurveRow>> {
        let prepared = Prepared::new(Bench { store }, self.contenders, self.bearers)?;
        let jobs = self.jobs();
        ctx.step(&format!(
            "loss curves: {} handshakes in virtual time",
            jobs.len()
        ));
        let results = run_concurrently(&jobs, PARALLEL_RUNS, |_, j| {
            let p = &self.bearers[j.bearer];
            prepared.run(j.curve, p, self.levels[j.level], seed_of(j))
        });
        let mut rows = Vec::new();
        for (ci, curve) in self.contenders.iter().enumerate() {
            for (bi, p) in self.bearers.iter().enumerate() {
                for (li, &loss) in self.levels.iter().enumerate() {
                    let mine: Vec<&RunResult> = jobs
                        .iter()
                        .zip(&results)
                        .filter(|(j, _)| j.curve == ci && j.bearer == bi && j.level == li)
                        .map(|(_, r)| r)
                        .collect();
                    rows.push(point(curve, &p.name, loss, &mine));
                }
            }
        }
        Ok(rows)
    }
}

/// Runs every curve at every level on every bearer.
pub fn run(ctx: &Ctx, store: &PkiStore) -> anyhow::Result<LossCurves> {
    let bearers: Vec<LinkProfile> = BEARERS
        .iter()
        .filter(|b| ctx.mode != Mode::Smoke || **b == "lte-m")
        .map(|b| ctx.catalogue.bearer(b).cloned())
        .collect::<anyhow::Result<_>>()?;
    let curves = curves();
    let reps = runs_per_point(ctx.mode);
    let study = LossStudy {
        contenders: &curves,
        bearers: &bearers,
        levels: &LEVELS,
        reps,
    };
    // the same seeds for every protocol: each meets the same loss stream
    let rows = study.run(ctx, store, |j| {
        90_000 + (j.bearer * 1000 + j.level * 100 + j.rep) as u64
    })?;
    Ok(LossCurves {
        rows,
        runs_per_point: reps,
    })
}

fn point(curve: &Contender, bearer: &str, loss: f64, runs: &[&RunResult]) -> LossCurveRow {
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
            s = s.figure(self.figure(ctx, b));
        }
        s.table(self.table(ctx))
    }

    fn figure(&self, ctx: &Ctx, bearer: &str) -> Figure {
        let mut chart = LineChart::new(
            Axis::new("datagram loss", "%"),
            Axis::new("time to complete", "ms").log(),
        );
        let mut labels: Vec<(&'static str, &str)> = Vec::new();
        for r in self.rows.iter().filter(|r| r.bearer == bearer) {
            if !labels.contains(&(r.protocol, r.suite.as_str())) {
                labels.push((r.protocol, &r.suite));
            }
        }
        for (i, (protocol, suite)) in labels.into_iter().enumerate() {
            let mine = || {
                self.rows.iter().filter(move |r| {
                    r.bearer == bearer && r.protocol == protocol && r.suite == suite
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
        Figure::new(
            format!("loss_curves_{bearer}"),
            format!("Time to complete a handshake against loss over {bearer}"),
            chart,
        )
        .caption("Median and p95 of the completed runs; each protocol's own retransmission timers.")
    }

    fn table(&self, ctx: &Ctx) -> Table {
        let m = ctx.measured();
        let mut t = Table::new("loss_curves", "Completion and time to complete under loss")
            .column(Column::label("protocol"))
            .column(Column::label("suite"))
            .column(Column::label("bearer"))
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
        let curve = registry::contender("dtls1.2:ecdhe-ecdsa-p256-ccm8").unwrap();
        let row = point(&curve, "lte-m", 0.1, &refs);
        assert_eq!((row.runs, row.completed), (4, 3));
        assert_eq!(row.median_ms, Some(200.0));
        assert_eq!(row.p95_ms, Some(300.0));
        assert_eq!(row.median_retransmissions, Some(1.0));
    }

    #[test]
    fn a_lossless_run_takes_the_link_model_and_loss_costs_the_protocols_timer() {
        let lte = wtlsperf_bearer::profile("lte-m").unwrap();
        let cfg = wtlsperf_drivers::protocols::dtls::DtlsConfig::new(
            wtlsperf_drivers::protocols::Suite::DtlsPsk,
        )
        .unwrap();
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
