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

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::stats::{median, percentile, Rank};
use wtlsperf_report::{Axis, Cell, Column, Figure, LineChart, Provenance, Section, Series, Table};
use wtlsperf_spine::{Handshake, Now};

use super::context::{Ctx, Mode};
use super::csv_file::write_csv;
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::pool::run_concurrently;
use wtlsperf_drivers::protocols::run_with_loss;
use wtlsperf_drivers::registry::{self, Bench, Contender, Sides, TimeBase};
use wtlsperf_drivers::wire_log::flights_of;

/// The loss levels (probability per datagram, each direction).
pub const LEVELS: [f64; 5] = [0.0, 0.01, 0.05, 0.10, 0.20];

/// The bearers: the 2001 handset link and the two cellular IoT links of today.
pub const BEARERS: [&str; 3] = ["gsm-csd", "lte-m", "nb-iot"];

/// The curves: WTLS's category 3 case (P-256) and each successor's certificate
/// configuration at the same level, server-authenticated, and DTLS 1.3 with ML-KEM-768;
/// a protocol the registry adds beyond these by its default configuration.
pub const CURVES: [&str; 6] = [
    "wtls:256p/256p",
    "dtls1.2:ecdhe-ecdsa-p256-ccm8",
    "edhoc:method3-suite2",
    "dtls1.3:ecdhe-p256-ecdsa-ccm8",
    "dtls1.3:mlkem768-ecdsa-ccm8",
    "dtls1.3:mlkem768-mldsa44-ccm8",
];

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
    /// Over the completed runs (ms): lower bounds of the percentiles over all runs when
    /// some failed.
    pub median_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Datagrams either side sent again on its timer, median over the completed runs.
    pub median_retransmissions: Option<f64>,
    /// Over all runs, a failed run counted as beyond every time (ms); empty where the
    /// percentile falls on a failed run (then unbounded: beyond every time observed).
    pub median_all_runs_ms: Option<f64>,
    pub p95_all_runs_ms: Option<f64>,
    pub p99_all_runs_ms: Option<f64>,
    /// `exact` (the all-runs percentile is a completed run's time) or `unbounded` (it
    /// falls on a failed run); empty when no run was made.
    pub median_bound: Option<Bound>,
    pub p95_bound: Option<Bound>,
    pub p99_bound: Option<Bound>,
    /// The largest completed time (ms): an unbounded percentile is above it.
    pub max_completed_ms: Option<f64>,
    /// `default` (each protocol's own timers) or the equal-timer variant's schedule,
    /// `equal: 1 s doubling`.
    pub timers: String,
}

/// Whether a percentile over all runs is a time or lies beyond every observed time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Exact,
    Unbounded,
}

/// Percentile `p` over all runs, failures (`None`) counted as beyond every time: the
/// time and whether it is one (median by linear interpolation, p95 and p99 by nearest
/// rank, as over the completed runs).
pub(crate) fn over_all_runs(runs: &[Option<f64>], p: f64) -> (Option<f64>, Option<Bound>) {
    let all: Vec<f64> = runs.iter().map(|r| r.unwrap_or(f64::INFINITY)).collect();
    let value = if p == 50.0 {
        median(&all)
    } else {
        percentile(&all, p, Rank::Nearest)
    };
    match value {
        None => (None, None),
        Some(v) if v.is_finite() => (Some(v), Some(Bound::Exact)),
        Some(_) => (None, Some(Bound::Unbounded)),
    }
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

/// A curve's sides at one payload limit, each protocol's own timers or (`first`) the
/// equal-timer variant's first timer; `None` where the protocol has no such variant.
fn sides_of(
    bench: Bench<'_>,
    c: &Contender,
    limit: u16,
    first: Option<Duration>,
) -> anyhow::Result<Option<Arc<dyn Sides>>> {
    match first {
        None => c.sides(bench, limit, TimeBase::Virtual).map(Some),
        Some(t) => c.sides_with_first_timer(bench, limit, t),
    }
}

impl Prepared {
    fn new(
        bench: Bench<'_>,
        curves: &[Contender],
        bearers: &[LinkProfile],
        first_timer: Option<Duration>,
    ) -> anyhow::Result<Prepared> {
        let mut sides = Vec::new();
        for (ci, c) in curves.iter().enumerate() {
            for p in bearers {
                let limit = p.datagram_payload_limit();
                if sides.iter().any(|(i, l, _)| *i == ci && *l == limit) {
                    continue;
                }
                if let Some(s) = sides_of(bench, c, limit, first_timer)? {
                    sides.push((ci, limit, s));
                }
            }
        }
        Ok(Prepared { sides })
    }

    /// Whether curve `ci` has sides at `profile`'s payload limit.
    fn has(&self, ci: usize, profile: &LinkProfile) -> bool {
        let limit = profile.datagram_payload_limit();
        self.sides.iter().any(|(i, l, _)| *i == ci && *l == limit)
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
/// documentation defines it: the virtual time the protocols' timers waited, plus Eq.
/// 3.84 over the datagrams that crossed.
fn lossy<C: Handshake, S: Handshake>(
    client: C,
    server: S,
    now: Now,
    profile: &LinkProfile,
    loss: f64,
    seed: u64,
) -> RunResult {
    let run = run_with_loss(client, server, now, loss, seed, DEADLINE_LIMIT)?;
    let link_ms =
        wtlsperf_models::transmission::link_ms(&flights_of(&run.delivered), &profile.rates());
    Some((
        run.waited.as_secs_f64() * 1e3 + link_ms,
        run.retransmissions,
    ))
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
    /// Every protocol's first retransmission timer fixed at this, doubling (the
    /// equal-timer variant), or each protocol's own (`None`).
    pub first_timer: Option<Duration>,
    /// The rows' `timers` value: `default`, or the variant's [`equal_label`].
    pub timers: String,
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
        let prepared = Prepared::new(
            Bench { store },
            self.contenders,
            self.bearers,
            self.first_timer,
        )?;
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
                // a protocol without the variant's setting has no curve of it
                if !prepared.has(ci, p) {
                    continue;
                }
                for (li, &loss) in self.levels.iter().enumerate() {
                    let mine: Vec<&RunResult> = jobs
                        .iter()
                        .zip(&results)
                        .filter(|(j, _)| j.curve == ci && j.bearer == bi && j.level == li)
                        .map(|(_, r)| r)
                        .collect();
                    rows.push(point(curve, &p.name, loss, &mine, &self.timers));
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
        first_timer: None,
        timers: "default".to_owned(),
    };
    // the same seeds for every protocol: each meets the same loss stream
    let seed = |bearer: usize, j: &Job| 90_000 + (bearer * 1000 + j.level * 100 + j.rep) as u64;
    let mut rows = study.run(ctx, store, |j| seed(j.bearer, j))?;
    if let Some(bi) = bearers.iter().position(|b| b.name == EQUAL_TIMER_BEARER) {
        let first_s = equal_first_timer_s(&bearers[bi]);
        let equal = LossStudy {
            bearers: std::slice::from_ref(&bearers[bi]),
            first_timer: Some(Duration::from_secs(u64::from(first_s))),
            timers: equal_label(first_s),
            ..study
        };
        // the default curves' loss streams over the same bearer
        rows.extend(equal.run(ctx, store, |j| seed(bi, j))?);
    }
    Ok(LossCurves {
        rows,
        runs_per_point: reps,
    })
}

fn point(
    curve: &Contender,
    bearer: &str,
    loss: f64,
    runs: &[&RunResult],
    timers: &str,
) -> LossCurveRow {
    let ok: Vec<(f64, u32)> = runs.iter().filter_map(|r| **r).collect();
    let ms: Vec<f64> = ok.iter().map(|x| x.0).collect();
    let rtx: Vec<f64> = ok.iter().map(|x| f64::from(x.1)).collect();
    let times: Vec<Option<f64>> = runs.iter().map(|r| r.map(|x| x.0)).collect();
    let (median_all_runs_ms, median_bound) = over_all_runs(&times, 50.0);
    let (p95_all_runs_ms, p95_bound) = over_all_runs(&times, 95.0);
    let (p99_all_runs_ms, p99_bound) = over_all_runs(&times, 99.0);
    LossCurveRow {
        median_all_runs_ms,
        p95_all_runs_ms,
        p99_all_runs_ms,
        median_bound,
        p95_bound,
        p99_bound,
        max_completed_ms: ms.iter().copied().max_by(f64::total_cmp),
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
    /// table of every point. Every time here is modelled (virtual time on the protocols'
    /// timers plus Eq. 3.84), and the percentiles are over all runs, a failed run counted
    /// as beyond every time.
    pub fn section(&self, ctx: &Ctx) -> Section {
        let mut intro = format!(
            "Modelled, not measured: each protocol with its own retransmission rules, {} runs a \
             point, in virtual time through the in-memory pair with seeded loss on every \
             datagram both ways (the same loss stream for every protocol). A run's time is \
             {LABEL}: the timers waited plus Eq. 3.84 over the flights delivered. Percentiles \
             are over all runs, a run that did not complete counted as beyond every time: where \
             more than 5 % of the runs failed, the p95 is unbounded and shown as \"> max\" (the \
             largest completed time, a lower bound). DTLS 1.3 fragments to each bearer's MTU.",
            self.runs_per_point
        );
        // The curves over the modern bearers rest on nominal rates: say so where they
        // are drawn.
        if let Some(note) = ctx.catalogue.typical_bearer_note() {
            intro.push(' ');
            intro.push_str(&note);
        }
        let mut s =
            Section::new("loss_curves", "Completion under loss, 0 to 20 % (modelled)").intro(intro);
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

    /// Per protocol: the median over all runs (solid), the p95 (dashed, hollow markers),
    /// and the p95s that are unbounded drawn apart at the largest completed time, the
    /// lower bound they are above.
    pub(crate) fn figure(&self, ctx: &Ctx, bearer: &str, timers: &str) -> Figure {
        let mut chart = LineChart::new(
            Axis::new("datagram loss", "%"),
            Axis::new("time to complete (modelled)", "ms").log(),
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
        let model = modelled(ctx, self.runs_per_point);
        for (i, (protocol, suite)) in labels.into_iter().enumerate() {
            let mine = || {
                self.rows.iter().filter(move |r| {
                    r.bearer == bearer
                        && r.timers == timers
                        && r.protocol == protocol
                        && r.suite == suite
                })
            };
            let at = |v: Option<f64>, r: &LossCurveRow| v.map(|m| (r.loss * 100.0, m));
            let med: Vec<(f64, f64)> = mine().filter_map(|r| at(r.median_all_runs_ms, r)).collect();
            let p95: Vec<(f64, f64)> = mine().filter_map(|r| at(r.p95_all_runs_ms, r)).collect();
            let beyond: Vec<(f64, f64)> = mine()
                .filter(|r| r.p95_bound == Some(Bound::Unbounded))
                .filter_map(|r| at(r.max_completed_ms, r))
                .collect();
            chart = chart
                .series(
                    Series::new(format!("{protocol} {suite} median"), model.clone(), med).colour(i),
                )
                .series(
                    Series::new(format!("{protocol} {suite} p95"), model.clone(), p95)
                        .colour(i)
                        .secondary(),
                )
                .series(
                    Series::new(
                        format!("{protocol} {suite} p95 unbounded (> max completed)"),
                        model.clone(),
                        beyond,
                    )
                    .colour(i)
                    .apart(),
                );
        }
        let (id, title, whose) = if timers == "default" {
            (
                format!("loss_curves_{bearer}"),
                format!("Time to complete a handshake against loss over {bearer} (modelled)"),
                "Each protocol's own retransmission timers.".to_owned(),
            )
        } else {
            (
                format!("loss_curves_{bearer}_equal_timers"),
                format!(
                    "Time to complete a handshake against loss over {bearer}, equal timers (modelled)"
                ),
                format!("Every protocol's timers {timers}."),
            )
        };
        Figure::new(id, title, chart).caption(format!(
            "Modelled ({LABEL}), not measured. Median (solid) and p95 (dashed, hollow markers) \
             over all runs, a failed run counted as beyond every time; where the p95 is \
             unbounded, a hollow marker without a line stands at the largest completed time, \
             which the p95 exceeds. {whose}"
        ))
    }

    pub(crate) fn table(&self, ctx: &Ctx) -> Table {
        let m = modelled(ctx, self.runs_per_point);
        let counted = Provenance::derived("runs of the virtual-time model, counted");
        let mut t = Table::new(
            "loss_curves",
            "Completion and time to complete under loss (modelled)",
        )
        .caption(format!(
            "Modelled ({LABEL}). Median, p95 and p99 over all runs, a failed run counted as \
             beyond every time: \"> max\" marks a percentile that falls on a failed run, \
             unbounded, above the largest completed time shown. The p95 over the completed \
             runs alone is a lower bound of the p95 over all runs wherever a run failed."
        ))
        .column(Column::label("protocol"))
        .column(Column::label("suite"))
        .column(Column::label("bearer"))
        .column(Column::label("timers"))
        .column(Column::new(
            "loss",
            Some("%"),
            Provenance::derived("the hook's probability"),
        ))
        .column(Column::new("completed", None, counted.clone()))
        .column(Column::new("runs", None, counted))
        .column(Column::new("median, all runs", Some("ms"), m.clone()))
        .column(Column::new("p95, all runs", Some("ms"), m.clone()))
        .column(Column::new("p99, all runs", Some("ms"), m.clone()))
        .column(Column::new(
            "p95, completed runs only",
            Some("ms"),
            m.clone(),
        ))
        .column(Column::new("retransmissions (median)", None, m));
        for r in &self.rows {
            let all = |v: Option<f64>, b: Option<Bound>| match b {
                Some(Bound::Unbounded) => Cell::text(match r.max_completed_ms {
                    Some(max) => format!("> {max:.0}"),
                    None => "unbounded".to_owned(),
                }),
                _ => Cell::opt(v, 0),
            };
            let completed_p95 = match r.p95_ms {
                Some(v) if r.completed < r.runs => Cell::num(v, 0)
                    .flag("a lower bound: runs failed, and the p95 over all runs is at least this"),
                v => Cell::opt(v, 0),
            };
            t = t.row(vec![
                Cell::text(r.protocol),
                Cell::text(&r.suite),
                Cell::text(&r.bearer),
                Cell::text(&r.timers),
                Cell::num(r.loss * 100.0, 0),
                Cell::num(r.completed as f64, 0),
                Cell::num(r.runs as f64, 0),
                all(r.median_all_runs_ms, r.median_bound),
                all(r.p95_all_runs_ms, r.p95_bound),
                all(r.p99_all_runs_ms, r.p99_bound),
                completed_p95,
                Cell::opt(r.median_retransmissions, 0),
            ]);
        }
        t
    }
}

/// What a run's time is, in the words every label of the section uses.
const LABEL: &str = "virtual time on protocol timers plus Eq. 3.84";

/// The provenance of every time of the section: modelled, not measured.
fn modelled(ctx: &Ctx, runs: usize) -> Provenance {
    Provenance::modelled(
        LABEL,
        format!(
            "seeded loss, {runs} runs a point, each protocol's timers; flights from the \
             in-memory runs of run {}",
            ctx.run_id
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_completed_runs_and_failures_are_counted() {
        let runs = [Some((100.0, 0)), None, Some((300.0, 2)), Some((200.0, 1))];
        let refs: Vec<&RunResult> = runs.iter().collect();
        let curve = registry::contender("dtls1.2:ecdhe-ecdsa-p256-ccm8").unwrap();
        let row = point(&curve, "lte-m", 0.1, &refs, "default");
        assert_eq!((row.runs, row.completed), (4, 3));
        assert_eq!(row.median_ms, Some(200.0));
        assert_eq!(row.p95_ms, Some(300.0));
        assert_eq!(row.median_retransmissions, Some(1.0));
        // Over all runs, the failure is beyond every time: the median moves up to the
        // mean of 200 and 300, and the p95 is unbounded, above the largest time.
        assert_eq!(row.median_all_runs_ms, Some(250.0));
        assert_eq!(row.median_bound, Some(Bound::Exact));
        assert_eq!(
            (row.p95_all_runs_ms, row.p95_bound),
            (None, Some(Bound::Unbounded))
        );
        assert_eq!(row.max_completed_ms, Some(300.0));
    }

    /// The figure and table of a point where runs failed: modelled, the unbounded p95
    /// drawn apart and printed as "> max", and the legend in agreement with the series.
    #[test]
    fn failed_runs_make_an_unbounded_p95_that_is_labelled_and_drawn_apart() {
        let ctx = Ctx {
            mode: Mode::Smoke,
            catalogue: super::super::vocabulary::Catalogue::shipped().unwrap(),
            run_id: "r1".into(),
            machine: "testbox".into(),
            progress: indicatif::ProgressBar::hidden(),
            job_logs: None,
            interference: None,
        };
        let mut rows = Vec::new();
        for (loss, failed) in [(0.0, 0), (0.1, 1), (0.2, 3)] {
            let runs: Vec<RunResult> = (0..20)
                .map(|i| (i >= failed).then_some((1000.0 + 100.0 * f64::from(i as u32), 1)))
                .collect();
            let refs: Vec<&RunResult> = runs.iter().collect();
            let curve = registry::contender("dtls1.2:ecdhe-ecdsa-p256-ccm8").unwrap();
            rows.push(point(&curve, "lte-m", loss, &refs, "default"));
        }
        let curves = LossCurves {
            rows,
            runs_per_point: 20,
        };
        assert_eq!(curves.rows[2].p95_bound, Some(Bound::Unbounded));
        let figure = curves.figure(&ctx, "lte-m", "default");
        assert!(
            figure.title.contains("modelled")
                && figure
                    .caption
                    .starts_with("Modelled (virtual time on protocol timers plus Eq. 3.84)")
        );
        let svg = figure.to_svg().unwrap();
        let check = wtlsperf_report::svg_series_and_legend(&svg);
        assert!(check.disagreements().is_empty(), "{check:?}");
        assert!(check
            .series
            .iter()
            .any(|s| s.ends_with("p95 unbounded (> max completed)")));
        assert!(svg.contains("data-trace=\"apart\"") && svg.contains("data-trace=\"secondary\""));
        let table = curves.table(&ctx);
        let csv = table.to_csv().unwrap();
        assert!(csv.contains("> 2900"), "{csv}");
        // protocol, suite, bearer, timers, loss, completed, runs; then the times
        assert!(table
            .columns
            .iter()
            .skip(7)
            .all(|c| c.provenance.kind() == wtlsperf_report::ProvenanceKind::Modelled));
    }

    #[test]
    fn a_p95_is_bounded_while_at_most_5_percent_of_runs_fail() {
        // 40 runs: two failures leave the p95 (38th of 40) on a completed run, three
        // put it on a failure.
        let times = |failed: usize| -> Vec<Option<f64>> {
            (0..40)
                .map(|i| (i >= failed).then(|| f64::from(i as u32)))
                .collect()
        };
        assert_eq!(
            over_all_runs(&times(2), 95.0),
            (Some(39.0), Some(Bound::Exact))
        );
        assert_eq!(
            over_all_runs(&times(3), 95.0),
            (None, Some(Bound::Unbounded))
        );
        assert_eq!(
            over_all_runs(&times(0), 50.0),
            (Some(19.5), Some(Bound::Exact))
        );
        assert_eq!(over_all_runs(&[], 95.0), (None, None));
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
