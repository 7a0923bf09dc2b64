//! The report in a real browser: a small report built with this crate's API is opened in
//! headless Chromium (Debian's `chromium`, installed by scripts/setup.sh) at 1280 px
//! (`wtlsperf_report::browser`), and the test fails on a console error, on horizontal
//! overflow, and on a figure whose legend and series disagree, read from the SVG's own
//! groups (`g.series` and `g.legend-entry`, each naming its series). The negative tests take a report apart
//! (a legend entry removed, a block too wide) and check that the same harness catches it.
//!
//! Without chromium the tests skip with a message, except under CI=true or
//! WTLSPERF_REQUIRE_CHROMIUM (scripts/test.sh sets it), where they fail.

use std::path::{Path, PathBuf};
use std::process::Command;

use wtlsperf_report::browser::{check_in_chromium, BrowserFindings};
use wtlsperf_report::{
    svg_series_and_legend, Axis, BarSeries, Caveat, Cell, Column, Figure, Finding, FindingKind,
    GroupedBarChart, HeadlineNumber, LineChart, Point, Provenance, ProvenanceKind, Report,
    RunStatus, ScatterChart, Section, Series, Table, Verdict,
};

fn open_in_chromium(html: &str, dir: &Path) -> BrowserFindings {
    check_in_chromium(html, dir).unwrap_or_else(|e| panic!("{e}"))
}

/// A small report with every kind of figure and series the evaluation uses: a median and
/// its p95, points set apart, a series without data, a scatter with its y = x guide, bars
/// with a series that has no bar, long legends; a degraded-run banner, headline numbers,
/// findings with a shared caveat, and a wide table.
fn small_report() -> Report {
    let caveat = Caveat::new(
        "nominal-rates",
        "Nominal bearer rates",
        "nb-iot (peak): typical figures, not measured on a network.",
    );
    Report::new("browser check")
        .meta("run id", "r1")
        .status(RunStatus {
            degraded: true,
            summary: "13 of the 16 designed load points judged.".into(),
            details: vec![("cause".into(), "steal".into())],
        })
        .headline(HeadlineNumber::new(
            "corrected model within 15 %",
            "10 of 16 designed points",
            ProvenanceKind::Modelled,
            "queue",
        ))
        .section(
            Section::new("queue", "Queue")
                .figure(Figure::new(
                    "queue_load_test",
                    "Load test",
                    load_test_chart(),
                ))
                .figure(Figure::new("loss", "Loss curves", loss_chart()))
                .figure(Figure::new("scatter", "Scatter", scatter_chart()))
                .figure(Figure::new("bars", "Bars", bar_chart()).size(1100, 480))
                .table(wide_table()),
        )
        .section(
            Section::new("findings", "Findings")
                .finding(
                    Finding::new("a", "evidence", Verdict::Confirmed)
                        .kind(FindingKind::EmulatorAgainstModel)
                        .caveat(caveat.clone()),
                )
                .finding(Finding::new("b", "evidence", Verdict::Inconclusive).caveat(caveat)),
        )
}

fn run() -> Provenance {
    Provenance::measured("r1", "testbox")
}

fn model() -> Provenance {
    Provenance::modelled("Eq. 3.12", "service 20 ms")
}

/// Six groups of a model beside its load test, points set apart, a series without data.
fn load_test_chart() -> LineChart {
    let (run, model) = (run(), model());
    let mut line = LineChart::new(
        Axis::new("arrival rate", "handshakes/s"),
        Axis::new("mean wait", "ms").log(),
    );
    for g in 0..6 {
        let f = f64::from(g + 1);
        line = line
            .series(
                Series::new(
                    format!("group {g} model"),
                    model.clone(),
                    (1..9).map(|i| (f64::from(i), f * f64::from(i))),
                )
                .colour(g as usize),
            )
            .series(
                Series::from_points(
                    format!("group {g} load test"),
                    run.clone(),
                    (1..8)
                        .map(|i| Point::with_sym_err(f64::from(i), 1.1 * f * f64::from(i), 0.5))
                        .collect(),
                )
                .colour(g as usize),
            );
    }
    line = line
        .series(
            Series::new(
                "missed their target",
                run.clone(),
                [(8.0, 30.0), (8.5, 44.0)],
            )
            .apart()
            .colour(6),
        )
        .series(Series::new(
            "never completed",
            run.clone(),
            Vec::<(f64, f64)>::new(),
        ));
    line
}

/// A median and its p95 (secondary) in one colour.
fn loss_chart() -> LineChart {
    let model = model();
    LineChart::new(
        Axis::new("datagram loss", "%"),
        Axis::new("time to complete", "ms").log(),
    )
    .series(
        Series::new(
            "DTLS 1.2 median",
            model.clone(),
            [(0.0, 900.0), (5.0, 1500.0), (20.0, 9000.0)],
        )
        .colour(0),
    )
    .series(
        Series::new("DTLS 1.2 p95", model.clone(), [(0.0, 950.0), (5.0, 9900.0)])
            .colour(0)
            .secondary(),
    )
}

/// A scatter with its y = x guide.
fn scatter_chart() -> ScatterChart {
    let run = run();
    ScatterChart::new(Axis::new("modelled", "ms"), Axis::new("measured", "ms"))
        .identity_line()
        .series(Series::new(
            "GPRS",
            run.clone(),
            (0..10).map(|i| (100.0 + 9.0 * f64::from(i), 104.0 + 9.0 * f64::from(i))),
        ))
}

/// Bars with a series that has no bar, and long category labels.
fn bar_chart() -> GroupedBarChart {
    let run = run();
    let cases: Vec<String> = (0..24)
        .map(|i| format!("case {i} mutual authentication"))
        .collect();
    GroupedBarChart::new("case", cases, Axis::new("client time", "ms").log())
        .series(BarSeries::new(
            "ours",
            run.clone(),
            (0..24).map(|i| Some(4.0 + f64::from(i))).collect(),
        ))
        .series(BarSeries::new(
            "X25519MLKEM768 (no value here)",
            run.clone(),
            vec![None; 24],
        ))
        .series(BarSeries::new(
            "published",
            Provenance::published("Bayoglu 2004, Table 4.1"),
            (0..24)
                .map(|i| (i % 3 != 0).then(|| 40.0 * f64::from(i + 1)))
                .collect(),
        ))
}

/// A table wider than the page.
fn wide_table() -> Table {
    let run = run();
    let mut wide = Table::new("wide", "A table with many columns").column(Column::label("case"));
    for c in 0..30 {
        wide = wide.column(Column::new(
            format!("column number {c}"),
            Some("ms"),
            run.clone(),
        ));
    }
    wide = wide.row(
        std::iter::once(Cell::text("RSA 1024"))
            .chain((0..30).map(|c| Cell::num(f64::from(c) * 1234.5, 1)))
            .collect(),
    );
    wide
}

fn written(report: &Report) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = report.write(dir.path()).unwrap();
    let html = std::fs::read_to_string(out.html).unwrap();
    (dir, html)
}

fn chromium_runs(test: &str) -> bool {
    wtlsperf_testtools::tool_runs("chromium", test)
}

#[test]
fn the_report_renders_without_errors_overflow_or_legend_mismatch() {
    if !chromium_runs("the_report_renders_without_errors_overflow_or_legend_mismatch") {
        return;
    }
    let (dir, html) = written(&small_report());
    let found = open_in_chromium(&html, dir.path());
    assert_eq!(found.figures, 4);
    assert!(found.problems.is_empty(), "{:#?}", found.problems);
    // The same agreement, read from the SVG text, without a browser.
    for id in ["queue_load_test", "loss", "scatter", "bars"] {
        let svg = std::fs::read_to_string(dir.path().join(format!("figures/{id}.svg"))).unwrap();
        let check = svg_series_and_legend(&svg);
        assert!(check.disagreements().is_empty(), "{id}: {check:?}");
    }
    screenshot_if_asked(dir.path());
}

#[test]
fn a_removed_legend_entry_is_caught() {
    if !chromium_runs("a_removed_legend_entry_is_caught") {
        return;
    }
    let (dir, html) = written(&small_report());
    let entry = html
        .find("<g class=\"legend-entry\" data-series=\"missed their target\"")
        .expect("the entry");
    let end = html[entry..].find("</g>").unwrap() + entry + "</g>".len();
    let broken = format!("{}{}", &html[..entry], &html[end..]);
    let found = open_in_chromium(&broken, dir.path());
    assert!(
        found.problems.iter().any(|p| p.starts_with("legend\t")
            && p.contains("queue_load_test")
            && p.contains("missed their target")),
        "{:#?}",
        found.problems
    );
    let svg_only = &broken[broken
        .find("<figure class=\"chart\" id=\"figure-queue_load_test\"")
        .unwrap()..];
    assert!(!svg_series_and_legend(svg_only).disagreements().is_empty());
}

#[test]
fn overflow_and_console_errors_are_caught() {
    if !chromium_runs("overflow_and_console_errors_are_caught") {
        return;
    }
    let (dir, html) = written(&small_report());
    let broken = html.replacen(
        "</footer>",
        "</footer><div style=\"width:1900px\">wide</div><img src=\"missing.png\" alt=\"\">",
        1,
    );
    let found = open_in_chromium(&broken, dir.path());
    assert!(
        found.problems.iter().any(|p| p.starts_with("overflow\t")),
        "{:#?}",
        found.problems
    );
    assert!(
        found
            .problems
            .iter()
            .any(|p| p.starts_with("console-error\t") && p.contains("missing.png")),
        "{:#?}",
        found.problems
    );
}

/// With WTLSPERF_SCREENSHOT=<file.png>, a 1280 px screenshot of the checked report, for
/// a person to look at.
fn screenshot_if_asked(dir: &Path) {
    let Some(png) = std::env::var_os("WTLSPERF_SCREENSHOT").map(PathBuf::from) else {
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let status = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", dir.join("report.html").display()))
        .status()
        .unwrap();
    assert!(status.success());
}
