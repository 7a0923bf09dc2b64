//! An experiment's page: one section per measurement taken, every column and series
//! labelled measured, modelled or derived as in the evaluation's report (the loss curves
//! are modelled: virtual time on the protocols' timers plus Eq. 3.84).

use wtlsperf_report::{
    Axis, BarSeries, Cell, Column, Figure, GroupedBarChart, LineChart, Provenance, Section, Series,
    Table,
};

use super::file::Experiment;
use super::measure::{BearerRunRow, FlightRow, LoadPointRow};
use super::Results;
use crate::evaluate::context::Ctx;
use crate::evaluate::loss_curves::{LossCurveRow, LossCurves};
use crate::evaluate::queue::calibrate::MISS_TOLERANCE;

/// What a loss curve's time is, as the section's intro says it.
pub const LOSS_CURVE_MODEL: &str = "virtual time on protocol timers + Eq. 3.84";

/// A figure or table id from free text (a bearer's name): `[A-Za-z0-9_.-]` only.
fn id(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn eq_384() -> Provenance {
    Provenance::modelled(
        "Bayoglu 2004 Eq. 3.84 per flight",
        "each flight's datagrams at its direction's rate (payload + per-datagram overhead) plus the bearer's mean one-way traversal",
    )
}

/// The experiment as run: its settings, its bearers, and what could not be measured.
pub fn overview(x: &Experiment, r: &Results) -> Section {
    let intro = if x.description.is_empty() {
        x.title.clone()
    } else {
        x.description.clone()
    };
    let mut s = Section::new("experiment", "The experiment")
        .intro(intro)
        .key_values("Settings", settings(x, r));
    if !x.bearers.is_empty() {
        s = s.table(bearers_table(x));
    }
    if !r.failures.is_empty() {
        s = s.table(failures_table(r));
    }
    s
}

/// The file's settings, those the measurements taken use.
fn settings(x: &Experiment, r: &Results) -> Vec<(String, String)> {
    let list = |v: Vec<String>| v.join(", ");
    let m = &x.measure;
    let mut taken = Vec::new();
    for (on, what) in [
        (m.flights, "bytes and flights"),
        (m.bearer_runs, "bearer runs"),
        (m.loss_curves, "loss curves"),
        (m.load.is_some(), "load points"),
    ] {
        if on {
            taken.push(what.to_owned());
        }
    }
    let mut pairs = vec![
        ("file".to_owned(), x.file.display().to_string()),
        ("measurements".to_owned(), list(taken)),
        (
            "contenders".to_owned(),
            list(x.contenders.iter().map(|c| c.to_string()).collect()),
        ),
    ];
    if m.bearer_runs {
        pairs.push((
            "devices".to_owned(),
            list(x.devices.iter().map(|d| d.name().to_owned()).collect()),
        ));
    }
    if m.loss_curves {
        pairs.push((
            "loss levels".to_owned(),
            list(
                x.levels
                    .iter()
                    .map(|l| format!("{} %", l * 100.0))
                    .collect(),
            ),
        ));
    }
    if m.bearer_runs || m.loss_curves {
        pairs.push(("runs per point".to_owned(), x.runs.to_string()));
    }
    if let Some(load) = &m.load {
        let rho = list(load.rho.iter().map(|r| r.to_string()).collect());
        pairs.push((
            "load points".to_owned(),
            format!(
                "rho {rho}; {} s each after up to {} warm-ups",
                load.seconds, load.warmups
            ),
        ));
    }
    pairs.push(("seed".to_owned(), x.seed.to_string()));
    pairs.push(("wall time".to_owned(), format!("{:.1} s", r.seconds)));
    pairs
}

/// The bearers with their nominal and effective rates.
fn bearers_table(x: &Experiment) -> Table {
    let given = Provenance::derived("as the file or data/bearers/profiles.csv gives it");
    let effective = Provenance::derived("rate x duty / 100");
    let mut t = Table::new("bearers", "Bearers")
        .caption("A duty cycle stretches every flight's serialisation time by 100 / duty (the effective rates); docs/experiments.md.")
        .column(Column::label("bearer"))
        .column(Column::label("from"))
        .column(Column::new("up", Some("kbit/s"), given.clone()))
        .column(Column::new("down", Some("kbit/s"), given.clone()))
        .column(Column::new("duty cycle", Some("%"), given.clone()))
        .column(Column::new("effective up", Some("kbit/s"), effective.clone()))
        .column(Column::new("effective down", Some("kbit/s"), effective))
        .column(Column::new("one-way delay", Some("ms"), given.clone()))
        .column(Column::new("MTU", Some("B"), given.clone()))
        .column(Column::new("payload limit", Some("B"), Provenance::derived("MTU - overhead")))
        .column(Column::new("loss", Some("%"), given))
        .column(Column::label("source"));
    for b in &x.bearers {
        let p = &b.profile;
        t = t.row(vec![
            Cell::text(&p.name),
            Cell::text(b.origin),
            Cell::num(b.nominal_bps.0 / 1e3, 1),
            Cell::num(b.nominal_bps.1 / 1e3, 1),
            Cell::opt(b.duty_cycle_percent, 1),
            Cell::num(p.up_bps / 1e3, 3),
            Cell::num(p.down_bps / 1e3, 3),
            Cell::num(p.traversal.mean_ms(), 1),
            Cell::num(f64::from(p.mtu_bytes), 0),
            Cell::num(f64::from(p.datagram_payload_limit()), 0),
            Cell::num(p.loss * 100.0, 1),
            Cell::text(&p.source),
        ]);
    }
    t
}

/// What a measurement could not take, and why (`failures.csv`).
fn failures_table(r: &Results) -> Table {
    let mut t = Table::new("failures", "Not measured, and why")
        .column(Column::label("measurement"))
        .column(Column::label("contender"))
        .column(Column::label("bearer"))
        .column(Column::label("error"));
    for e in &r.failures {
        t = t.row(vec![
            Cell::text(e.measurement),
            Cell::text(&e.contender),
            Cell::text(&e.bearer),
            Cell::text(&e.error),
        ]);
    }
    t
}

/// Bytes and flights, and Eq. 3.84 over them per bearer.
pub fn flights(ctx: &Ctx, rows: &[FlightRow]) -> Section {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.contender.as_str(), r.bearer.as_str())) {
            keys.push((&r.contender, &r.bearer));
        }
    }
    let counted = Provenance::derived(format!(
        "counted in the in-memory handshakes of run {}",
        ctx.run_id
    ));
    let mut t = Table::new("flights", "Bytes and flights per contender and bearer")
        .column(Column::label("contender"))
        .column(Column::label("bearer"))
        .column(Column::new("flights", None, counted.clone()))
        .column(Column::new("datagrams", None, counted.clone()))
        .column(Column::new("bytes up", Some("B"), counted.clone()))
        .column(Column::new("bytes down", Some("B"), counted.clone()))
        .column(Column::new("over payload limit", None, counted))
        .column(Column::new("Eq. 3.84", Some("ms"), eq_384()));
    let mut bearers: Vec<&str> = Vec::new();
    for (c, b) in &keys {
        let mine: Vec<&FlightRow> = rows
            .iter()
            .filter(|r| r.contender == *c && r.bearer == *b)
            .collect();
        let sum = |dir: &str| {
            mine.iter()
                .filter(|r| r.direction == dir)
                .map(|r| f64::from(r.bytes))
                .sum::<f64>()
        };
        t = t.row(vec![
            Cell::text(*c),
            Cell::text(*b),
            Cell::num(mine.len() as f64, 0),
            Cell::num(mine.iter().map(|r| f64::from(r.datagrams)).sum(), 0),
            Cell::num(sum("up"), 0),
            Cell::num(sum("down"), 0),
            Cell::num(mine.iter().map(|r| r.over_payload_limit as f64).sum(), 0),
            Cell::num(mine.iter().map(|r| r.model_ms).sum(), 0),
        ]);
        if !bearers.contains(b) {
            bearers.push(b);
        }
    }
    let contenders: Vec<String> = dedup(rows.iter().map(|r| r.contender.as_str()));
    let mut chart = GroupedBarChart::new(
        "contender",
        contenders.clone(),
        Axis::new("Eq. 3.84 over the flights", "ms").log(),
    );
    for (i, b) in bearers.iter().enumerate() {
        let values = contenders
            .iter()
            .map(|c| {
                let ms: Vec<f64> = rows
                    .iter()
                    .filter(|r| &r.contender == c && r.bearer == *b)
                    .map(|r| r.model_ms)
                    .collect();
                (!ms.is_empty()).then(|| ms.iter().sum())
            })
            .collect();
        chart = chart.series(BarSeries::new(*b, eq_384(), values).colour(i));
    }
    let s = Section::new("flights", "Bytes and flights")
        .intro("Each contender's flights as they crossed in memory, at each bearer's UDP payload limit where the contender fragments to it; flights.csv has one row per flight. Eq. 3.84 charges each flight its serialisation and one mean traversal.");
    // a figure needs a category: none when every contender failed on every bearer
    let s = if contenders.is_empty() {
        s
    } else {
        s.figure(
            Figure::new(
                "flights_model",
                "Transmission time of the handshake's flights (Eq. 3.84)",
                chart,
            )
            .caption("Modelled: Eq. 3.84 over the flights counted in memory, per bearer."),
        )
    };
    s.table(t)
}

fn dedup<'a>(items: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !out.iter().any(|o| o == i) {
            out.push(i.to_owned());
        }
    }
    out
}

/// The handshakes over the relay beside T_H.
pub fn bearer_runs(ctx: &Ctx, rows: &[BearerRunRow]) -> Section {
    let m = ctx.measured();
    let th = Provenance::modelled(
        "T_H = Eq. 3.84 + T_PD (client + gateway)",
        "the flights each run exchanged; the device's priced client time (this machine: in-memory client CPU) and the gateway's in-memory CPU",
    );
    let mut t = Table::new("bearer_runs", "Handshakes over the emulated bearers")
        .column(Column::label("contender"))
        .column(Column::label("bearer"))
        .column(Column::label("device"))
        .column(Column::new("completed", None, m.clone()))
        .column(Column::new(
            "runs",
            None,
            Provenance::derived("the file's runs"),
        ))
        .column(Column::new("median", Some("ms"), m.clone()))
        .column(Column::new("p95", Some("ms"), m.clone()))
        .column(Column::new(
            "client",
            Some("ms"),
            Provenance::modelled(
                "device pricing (data/devices/)",
                "the device's operation costs; this-machine: measured in memory",
            ),
        ))
        .column(Column::new("gateway", Some("ms"), m.clone()))
        .column(Column::new("model T_H", Some("ms"), th.clone()))
        .column(Column::new(
            "measured / model",
            None,
            Provenance::derived("median / model T_H"),
        ))
        .column(Column::label("status"));
    for r in rows {
        t = t.row(vec![
            Cell::text(&r.contender),
            Cell::text(&r.bearer),
            Cell::text(&r.device),
            Cell::num(r.completed as f64, 0),
            Cell::num(r.runs as f64, 0),
            Cell::opt(r.median_ms, 0),
            Cell::opt(r.p95_ms, 0),
            Cell::opt(r.client_ms, 1),
            Cell::opt(r.server_ms, 2),
            Cell::opt(r.model_ms, 0),
            Cell::opt(r.measured_over_model, 2),
            Cell::text(
                r.first_error
                    .as_deref()
                    .map_or(r.status.clone(), |e| format!("{}; failed: {e}", r.status)),
            ),
        ]);
    }
    let mut s = Section::new("bearer_runs", "Handshakes over the emulated bearers")
        .intro("Real handshakes through the bearer relay (rates, one-way delay with its jitter, loss) against the gateway on loopback, the client's flights held to the device's priced time; beside each, T_H of the model for the flights the run exchanged. Times are client start to completion; percentiles by nearest rank over the completed runs.");
    for b in dedup(rows.iter().map(|r| r.bearer.as_str())) {
        let mine: Vec<&BearerRunRow> = rows
            .iter()
            .filter(|r| r.bearer == b && r.completed > 0)
            .collect();
        if !mine.is_empty() {
            s = s.figure(bearer_figure(&b, &mine, &m, &th));
        }
    }
    s.table(t)
}

/// One bearer's measured medians beside T_H, a pair of bars per contender and device.
fn bearer_figure(bearer: &str, rows: &[&BearerRunRow], m: &Provenance, th: &Provenance) -> Figure {
    let cats: Vec<String> = rows
        .iter()
        .map(|r| format!("{} / {}", r.contender, r.device))
        .collect();
    let chart = GroupedBarChart::new(
        "contender / device",
        cats,
        Axis::new("time to complete", "ms").log(),
    )
    .series(
        BarSeries::new(
            "measured median",
            m.clone(),
            rows.iter().map(|r| r.median_ms).collect(),
        )
        .colour(0),
    )
    .series(
        BarSeries::new(
            "model T_H",
            th.clone(),
            rows.iter().map(|r| r.model_ms).collect(),
        )
        .colour(1),
    );
    Figure::new(
        format!("bearer_runs_{}", id(bearer)),
        format!("Measured handshake time beside the model over {bearer}"),
        chart,
    )
    .size(1000, 700)
    .caption("Median of the completed runs (measured) beside T_H (modelled).")
}

/// The loss curves: modelled, drawn and tabled as the evaluation draws and tables its
/// own (one figure per bearer, percentiles over all runs), under the experiment's intro.
pub fn loss_curves(ctx: &Ctx, rows: &[LossCurveRow], runs: usize) -> Section {
    let curves = LossCurves {
        rows: rows.to_vec(),
        runs_per_point: runs,
    };
    let mut s = Section::new("loss_curves", "Completion under loss (modelled)").intro(format!(
        "Modelled ({LOSS_CURVE_MODEL}), not measured: each run is an in-memory handshake whose datagrams are dropped with the level's probability from a seeded stream (the same stream for every contender at a point); its time is the virtual time waited on the protocols' own retransmission timers plus Eq. 3.84 over the flights delivered, so a timer that fires while a slow link still carries a flight does not show here (the bearer runs show it). Percentiles over all runs, a run that did not complete counted as beyond every time: where one falls on a failed run it is unbounded, shown as \"> max\" (the largest completed time). {runs} runs a point."
    ));
    for b in dedup(rows.iter().map(|r| r.bearer.as_str())) {
        // no figure where no run completed: nothing to draw
        if rows.iter().any(|r| r.bearer == b && r.median_ms.is_some()) {
            s = s.figure(curves.figure(ctx, &b, "default"));
        }
    }
    s.table(curves.table(ctx))
}

/// The load points beside P-K.
pub fn load_points(ctx: &Ctx, rows: &[LoadPointRow]) -> Section {
    let m = ctx.measured();
    let pk = Provenance::modelled(
        "Pollaczek-Khinchin, Bayoglu 2004 Eq. 3.12",
        "the run's own job rate and service-time moments over its steady window",
    );
    let mut t = Table::new("load_points", "Load points on the real gateway")
        .column(Column::label("contender"))
        .column(Column::new(
            "target rho",
            None,
            Provenance::derived("the file's rho"),
        ))
        .column(Column::new(
            "offered",
            Some("handshakes/s"),
            Provenance::derived("target rho / in-memory server CPU"),
        ))
        .column(Column::new("measured rho", None, m.clone()))
        .column(Column::new("mean wait", Some("ms"), m.clone()))
        .column(Column::new("P-K wait", Some("ms"), pk.clone()))
        .column(Column::new(
            "measured / P-K - 1",
            None,
            Provenance::derived("mean wait / P-K wait - 1"),
        ))
        .column(Column::new("latency p50", Some("ms"), m.clone()))
        .column(Column::new("latency p95", Some("ms"), m.clone()))
        .column(Column::new("success", None, m.clone()));
    let mut chart = LineChart::new(
        Axis::new("measured utilisation", ""),
        Axis::new("mean queueing wait of a job", "ms"),
    );
    for (i, c) in dedup(rows.iter().map(|r| r.contender.as_str()))
        .iter()
        .enumerate()
    {
        let mine: Vec<&LoadPointRow> = rows.iter().filter(|r| &r.contender == c).collect();
        let at = |f: fn(&LoadPointRow) -> Option<f64>| -> Vec<(f64, f64)> {
            mine.iter()
                .filter_map(|r| r.measured_rho.zip(f(r)))
                .collect()
        };
        chart = chart
            .series(
                Series::new(
                    format!("{c} measured"),
                    m.clone(),
                    at(|r| r.measured_wait_ms),
                )
                .colour(i),
            )
            .series(Series::new(format!("{c} P-K"), pk.clone(), at(|r| r.pk_wait_ms)).colour(i));
    }
    for r in rows {
        t = t.row(vec![
            Cell::text(&r.contender),
            Cell::num(r.target_rho, 2),
            Cell::num(r.offered_hs_per_s, 0),
            match r.measured_rho {
                Some(rho) if (rho - r.target_rho).abs() > MISS_TOLERANCE => Cell::num(rho, 3)
                    .flag("more than 0.05 from its target: read the wait at the measured rho (the machine's stalls: worker_stalls in load_points.csv)"),
                rho => Cell::opt(rho, 3),
            },
            Cell::opt(r.measured_wait_ms, 4),
            Cell::opt(r.pk_wait_ms, 4),
            Cell::opt(r.pk_error, 2),
            Cell::num(r.latency_p50_ms, 2),
            Cell::num(r.latency_p95_ms, 2),
            Cell::num(r.success_ratio, 3),
        ]);
    }
    let s = Section::new("load_points", "Load on the real gateway")
        .intro("Open-loop Poisson arrivals (conditioned on their count) against one pinned gateway worker, first offered at the target utilisation over the contender's in-memory server CPU per handshake, then at the rate the warm-ups' measured utilisation implies. The measured utilisation, wait and service moments are over the recording's steady window; P-K (Eq. 3.12) takes the measured job rate and service moments. On a shared machine the hypervisor's stalls inflate the measured wait (worker_stalls in load_points.csv); a measured rho more than 0.05 from its target is flagged.");
    let s = if rows.iter().all(|r| r.measured_rho.is_none()) {
        s
    } else {
        s.figure(
            Figure::new(
                "load_points",
                "Mean queueing wait against utilisation",
                chart,
            )
            .caption("Measured waits (markers) beside P-K from the same run's moments (lines)."),
        )
    };
    s.table(t)
}
