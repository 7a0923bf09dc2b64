use super::draw::{axis_range, fit_label, log_ticks, tick};
use super::legend::wrap;
use super::*;
use crate::provenance::Provenance;

fn measured() -> Provenance {
    Provenance::measured("r1", "testbox")
}

fn line_figure() -> Figure {
    let chart = LineChart::new(
        Axis::new("arrival rate", "handshakes/s"),
        Axis::new("mean wait", "ms").log(),
    )
    .series(Series::new(
        "M/G/1 model",
        Provenance::modelled("Bayoglu 2004, Eq. 3.12", "measured service times"),
        (1..=10).map(|i| (f64::from(i), 2.0 * f64::from(i).powi(2))),
    ))
    .series(Series::from_points(
        "load test",
        measured(),
        (1..=10)
            .map(|i| Point::with_sym_err(f64::from(i), 2.2 * f64::from(i).powi(2), 5.0))
            .collect(),
    ))
    .series(Series::new(
        "thesis <figure 4.13>",
        Provenance::published("Bayoglu 2004, Figure 4.13"),
        [(2.0, 9.0), (5.0, 49.0), (8.0, 0.0)],
    ));
    Figure::new("wait", "Queue wait & load", chart)
}

#[test]
fn a_unitless_axis_has_no_empty_brackets() {
    assert_eq!(Axis::new("utilisation rho", "").title(), "utilisation rho");
    assert_eq!(Axis::new("wait", "ms").title(), "wait [ms]");
}

#[test]
fn svg_contains_axis_titles_legend_and_escaped_names() {
    let svg = line_figure().to_svg().unwrap();
    assert!(svg.contains("<svg"));
    assert!(svg.contains("mean wait [ms]"));
    assert!(svg.contains("arrival rate [handshakes/s]"));
    assert!(svg.contains("MODELLED"));
    assert!(svg.contains("Queue wait &amp; load"));
    assert!(!svg.contains("<figure 4.13>"));
}

#[test]
fn png_has_the_png_signature() {
    let png = line_figure().size(640, 400).to_png().unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn mismatched_bar_series_is_an_error() {
    let chart = GroupedBarChart::new(
        "case",
        vec!["a".into(), "b".into()],
        Axis::new("time", "ms"),
    )
    .series(BarSeries::new("x", measured(), vec![Some(1.0)]));
    let err = Figure::new("bars", "t", chart).to_svg().unwrap_err();
    assert!(err.to_string().contains("1 values"), "{err}");
}

#[test]
fn inverted_error_bar_is_an_error() {
    let chart = LineChart::new(Axis::new("x", "1"), Axis::new("y", "ms")).series(
        Series::from_points("s", measured(), vec![Point::with_err(1.0, 2.0, 3.0, 1.0)]),
    );
    assert!(Figure::new("f", "t", chart).validate().is_err());
}

#[test]
fn empty_and_degenerate_charts_still_render() {
    let empty = LineChart::new(Axis::new("x", "1"), Axis::new("y", "ms").log());
    assert!(Figure::new("e", "empty", empty)
        .to_svg()
        .unwrap()
        .contains("no data"));
    let single = ScatterChart::new(Axis::new("x", "ms"), Axis::new("y", "ms"))
        .identity_line()
        .series(Series::new(
            "one",
            measured(),
            [(5.0, 5.0), (f64::NAN, 1.0)],
        ));
    assert!(Figure::new("s", "one point", single).to_png().is_ok());
}

#[test]
fn ranges_and_ticks() {
    assert_eq!(axis_range([2.0, 4.0].into_iter(), false, true), (0.0, 4.2));
    let (lo, hi) = axis_range([4.0, 900.0, -1.0].into_iter(), true, true);
    assert!(lo > 0.0 && lo < 4.0 && hi > 900.0);
    assert_eq!(axis_range(std::iter::empty(), true, true), (1.0, 10.0));
    let (lo, hi) = axis_range([3.0, 3.0].into_iter(), false, false);
    assert!(lo < 3.0 && hi > 3.0);
    let (lo, hi) = axis_range([0.43].into_iter(), false, false);
    assert!(lo > 0.3 && hi < 0.6, "{lo}..{hi}");
    assert_eq!(tick(0.0), "0");
    assert_eq!(tick(-1e-16), "0");
    assert_eq!(tick(250.0), "250");
    assert_eq!(tick(12.5), "12.5");
    assert_eq!(tick(2.0), "2");
    assert_eq!(tick(0.125), "0.125");
    assert_eq!(tick(2e7), "2e7");
    assert_eq!(log_ticks(3.0, 1200.0).0, vec![10.0, 100.0, 1000.0]);
    assert_eq!(log_ticks(4.0, 120.0).0, vec![5.0, 10.0, 20.0, 50.0, 100.0]);
    let (bold, light) = log_ticks(31.0, 117.0);
    assert_eq!(bold, vec![40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]);
    assert!(light.is_empty());
    // Within one mantissa step: round values all the same.
    assert_eq!(log_ticks(11.4, 19.2).0, vec![12.0, 14.0, 16.0, 18.0]);
}

#[test]
fn labels_are_shortened_and_wrapped_to_fit() {
    let measure = |t: &str| t.chars().count() as u32 * 10;
    assert_eq!(fit_label("short", 100, &measure), "short");
    assert_eq!(fit_label("much too long", 50, &measure), "much\u{2026}");
    assert_eq!(
        wrap("ECDH 163 mutual authentication", 100, &measure),
        vec!["ECDH 163", "mutual", "authentic\u{2026}"]
    );
}

#[test]
fn data_csv_lists_every_bar_with_provenance() {
    let chart = GroupedBarChart::new(
        "case",
        vec!["RSA 1024".into(), "ECDH 163".into()],
        Axis::new("client time", "ms"),
    )
    .series(
        BarSeries::new("measured", measured(), vec![Some(4.5), None]).errors(vec![
            Some(ErrorBar {
                low: 4.0,
                high: 5.0,
            }),
            None,
        ]),
    );
    let csv = Figure::new("b", "t", chart).data_csv().unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "series,provenance,case,client time [ms],client time low [ms],client time high [ms]"
    );
    assert_eq!(
        lines[1],
        "measured,measured: run r1 on testbox,RSA 1024,4.5,4,5"
    );
    assert_eq!(lines[2], "measured,measured: run r1 on testbox,ECDH 163,,,");
}

#[test]
fn the_legend_lists_exactly_the_series_with_data_and_the_svg_says_so() {
    let run = measured();
    let mut chart = LineChart::new(Axis::new("x", "1"), Axis::new("y", "ms").log())
        .series(Series::new("median", run.clone(), [(1.0, 2.0), (2.0, 3.0)]).colour(0))
        .series(
            Series::new("p95", run.clone(), [(1.0, 4.0), (2.0, 6.0)])
                .colour(0)
                .secondary(),
        )
        .series(Series::new("missed", run.clone(), [(3.0, 9.0)]).apart())
        .series(Series::new(
            "nothing on a log axis",
            run.clone(),
            [(1.0, 0.0), (2.0, -1.0)],
        ));
    for i in 0..14 {
        chart = chart.series(Series::new(
            format!("a long series name number {i} that wraps"),
            run.clone(),
            [(1.0, 1.0 + f64::from(i))],
        ));
    }
    let figure = Figure::new("many", "Many series", chart).size(800, 300);
    let names: Vec<String> = figure
        .legend_entries()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names.len(), 17);
    assert!(!names.iter().any(|n| n == "nothing on a log axis"));
    // 17 wrapped entries do not fit 300 px: the figure grows to hold them.
    assert!(figure.drawn_height() > 300);
    let svg = figure.to_svg().unwrap();
    assert!(svg.contains(&format!("height=\"{}\"", figure.drawn_height())));
    let check = svg_series_and_legend(&svg);
    assert_eq!(check.legend, names);
    assert!(check.disagreements().is_empty(), "{check:?}");
    assert!(!svg.contains("@@wtlsperf-mark"));
    // A removed legend entry is a disagreement.
    let at = svg
        .find("<g class=\"legend-entry\" data-series=\"missed\"")
        .unwrap();
    let end = svg[at..].find("</g>").unwrap() + at + 4;
    let broken = format!("{}{}", &svg[..at], &svg[end..]);
    assert_eq!(
        svg_series_and_legend(&broken).disagreements(),
        vec!["series \"missed\" is drawn but has no legend entry".to_string()]
    );
}

#[test]
fn a_second_quantity_and_points_set_apart_look_different_from_the_first() {
    use super::look::Look;
    use crate::provenance::ProvenanceKind::*;
    for kind in [Measured, Modelled, Published, Derived] {
        let primary = Look::of(kind, Trace::Primary, false, false);
        let secondary = Look::of(kind, Trace::Secondary, false, false);
        let apart = Look::of(kind, Trace::Apart, false, false);
        assert_ne!(primary.line, secondary.line, "{kind:?}");
        assert!(apart.line.is_none() && apart.marker.is_some_and(|m| !m.filled));
    }
    assert_eq!(
        Look::of(Measured, Trace::Secondary, false, false).describe(),
        "dashed line, hollow circles"
    );
}
