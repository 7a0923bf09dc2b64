//! Reading a benchmark directory and summarising it, on small directories written here
//! (round numbers chosen so each median and ratio can be checked by hand).

use std::path::Path;

use super::*;

const RUNS_HEADER: &str = "gateway,threads,run,sessions,completed,wall_s,sessions_per_s,p50_ms,p95_ms,p99_ms,max_ms,unanswered,not_reply,not_200,panics,fakewap_worst_s,fakewap_rc";
const WTLS_HEADER: &str =
    "port,run,pages,ok,wall_s,pages_per_s,get_p50_ms,get_p95_ms,get_p99_ms,handshake_p50_ms";

/// Ours three runs at 8 threads (rates 100, 300, 200: median 200), Kannel two
/// (10 and 30: median 20); at 64 threads ours alone, one run without any latency.
fn runs_csv() -> String {
    [
        RUNS_HEADER,
        "ours,8,1,100,100,1.0,100.0,1.00,2.00,3.00,9.00,0,0,0,0,0.1,0",
        "kannel,8,1,100,100,10.0,10.0,50.00,60.00,70.00,80.00,1,4,0,0,7.0,0",
        "ours,8,3,100,100,0.5,200.0,2.00,3.00,5.00,6.00,0,0,0,0,0.0,0",
        "ours,8,2,100,100,0.33,300.0,3.00,4.00,4.00,12.00,0,2,0,0,0.2,0",
        "kannel,8,2,100,100,3.3,30.0,30.00,40.00,50.00,60.00,0,0,1,0,0.3,0",
        "ours,64,1,100,0,2.0,0.0,,,,,100,0,0,0,,1",
    ]
    .join("\n")
        + "\n"
}

/// The origin at 0.20 and 0.40 ms (median 0.30); port 9202 at 1.0, 0.5 and 0.8 (median
/// 0.8, so 0.5 over the origin), with handshakes.
fn wtls_csv() -> String {
    [
        WTLS_HEADER,
        "origin,1,10,10,0.01,,0.20,0.30,0.40,",
        "9202,1,10,10,0.02,500.0,1.00,2.00,3.00,0.70",
        "origin,2,10,10,0.01,,0.40,0.50,0.60,",
        "9202,2,10,9,0.02,450.0,0.50,1.00,1.50,0.60",
        "9202,3,10,10,0.02,400.0,0.80,1.20,1.30,0.50",
    ]
    .join("\n")
        + "\n"
}

fn write_dir(dir: &Path, runs: &str, wtls: &str) {
    std::fs::write(dir.join("runs.csv"), runs).unwrap();
    std::fs::write(dir.join("wtls.csv"), wtls).unwrap();
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn medians_over_runs_and_the_ratios_ours_over_kannel() {
    let dir = tempfile::tempdir().unwrap();
    write_dir(dir.path(), &runs_csv(), &wtls_csv());
    let bench = WapBench::load(dir.path()).unwrap();
    assert_eq!((bench.runs.len(), bench.client.len()), (6, 5));
    assert!(bench.meta.is_none() && bench.runs_written.is_some());
    let s = bench.summary();

    let cells: Vec<(u32, Gateway)> = s.gateways.iter().map(|g| (g.threads, g.gateway)).collect();
    assert_eq!(
        cells,
        [
            (8, Gateway::Ours),
            (8, Gateway::Kannel),
            (64, Gateway::Ours)
        ]
    );
    let ours = &s.gateways[0];
    assert_eq!(ours.runs, 3);
    assert!(close(ours.sessions_per_s, 200.0));
    assert!(close(ours.p50_ms, 2.0) && close(ours.p95_ms, 3.0) && close(ours.p99_ms, 4.0));
    assert!(close(ours.max_ms, 12.0), "the worst session of all runs");
    // Per run, in run order (the file lists run 3 before run 2).
    assert_eq!(ours.not_reply_per_run, "0/2/0");
    assert!(close(ours.fakewap_worst_s, 0.2));
    let kannel = &s.gateways[1];
    // Two runs: the median is their mean.
    assert!(close(kannel.sessions_per_s, 20.0) && close(kannel.p99_ms, 60.0));
    assert_eq!(
        (
            kannel.not_reply_per_run.as_str(),
            kannel.not_200_per_run.as_str(),
            kannel.unanswered_per_run.as_str()
        ),
        ("4/0", "0/1", "1/0")
    );
    let silent = &s.gateways[2];
    assert!(silent.p99_ms.is_none() && silent.max_ms.is_none());
    assert!(close(silent.sessions_per_s, 0.0));

    // A ratio only where both gateways ran: 200 / 20 and 4 / 60.
    assert_eq!(s.ratios.len(), 1);
    let r = &s.ratios[0];
    assert_eq!(r.threads, 8);
    assert!(close(r.sessions_per_s_ratio, 10.0));
    assert!(close(r.p99_ratio, 4.0 / 60.0));
}

#[test]
fn the_get_overhead_is_the_port_median_minus_the_origin_median() {
    let dir = tempfile::tempdir().unwrap();
    write_dir(dir.path(), &runs_csv(), &wtls_csv());
    let s = WapBench::load(dir.path()).unwrap().summary();
    let ports: Vec<String> = s.client.iter().map(|c| c.port.label()).collect();
    assert_eq!(ports, ["9202 (connectionless WSP, WTLS)", "origin (curl)"]);
    let (port, origin) = (&s.client[0], &s.client[1]);
    assert!(close(port.get_p50_ms, 0.8) && close(origin.get_p50_ms, 0.3));
    assert!(close(port.get_overhead_ms, 0.5));
    assert!(
        origin.get_overhead_ms.is_none(),
        "the origin is the baseline"
    );
    assert!(close(port.pages_per_s, 450.0) && close(port.handshake_p50_ms, 0.6));
    assert!(origin.pages_per_s.is_none());
    assert_eq!(port.ok_per_run, "10/9/10 of 10");

    // Without the origin's runs there is nothing to subtract.
    let no_origin: String = wtls_csv()
        .lines()
        .filter(|l| !l.starts_with("origin"))
        .map(|l| format!("{l}\n"))
        .collect();
    write_dir(dir.path(), &runs_csv(), &no_origin);
    let s = WapBench::load(dir.path()).unwrap().summary();
    assert!(s.client[0].get_overhead_ms.is_none());
}

/// The refusal for a directory whose files are `runs` and `wtls` (None: absent).
fn refused(runs: Option<&str>, wtls: Option<&str>, meta: Option<&str>) -> (PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("runs.csv", runs), ("wtls.csv", wtls), ("meta.json", meta)] {
        if let Some(text) = text {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
    }
    match WapBench::load(dir.path()).unwrap_err() {
        WapBenchError::File { file, message } => {
            let name = file.strip_prefix(dir.path()).unwrap().to_path_buf();
            (name, message)
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_bad_directory_is_refused_naming_the_file_the_line_and_the_column() {
    let (runs, wtls) = (runs_csv(), wtls_csv());
    let (file, _) = refused(None, Some(&wtls), None);
    assert_eq!(file, Path::new("runs.csv"));
    let (file, _) = refused(Some(&runs), None, None);
    assert_eq!(file, Path::new("wtls.csv"));
    let (file, message) = refused(Some(&format!("{RUNS_HEADER}\n")), Some(&wtls), None);
    assert_eq!(file, Path::new("runs.csv"));
    assert!(message.contains("no rows"), "{message}");

    let bad_number = runs.replace("3.00,9.00", "3.00,fast");
    let (file, message) = refused(Some(&bad_number), Some(&wtls), None);
    assert_eq!(file, Path::new("runs.csv"));
    assert!(
        message.contains("line 2") && message.contains("column max_ms"),
        "{message}"
    );
    let unknown_gateway = runs.replace("kannel,8,2", "wapbox,8,2");
    let (_, message) = refused(Some(&unknown_gateway), Some(&wtls), None);
    assert!(
        message.contains("line 6") && message.contains("`wapbox`"),
        "{message}"
    );
    let missing_column = runs.replace(",p99_ms", ",p98_ms");
    let (_, message) = refused(Some(&missing_column), Some(&wtls), None);
    assert!(message.contains("p99_ms"), "{message}");
    let twice = format!("{runs}ours,8,1,100,100,1.0,100.0,1,2,3,9,0,0,0,0,0.1,0\n");
    let (_, message) = refused(Some(&twice), Some(&wtls), None);
    assert!(message.contains("listed twice"), "{message}");
    for bad in ["NaN", "-1.0", "inf"] {
        let (_, message) = refused(
            Some(&runs.replace("1.0,100.0", &format!("1.0,{bad}"))),
            Some(&wtls),
            None,
        );
        assert!(
            message.contains("column sessions_per_s"),
            "{bad}: {message}"
        );
    }
    let bad_port = wtls.replace("9202,2", "nginx,2");
    let (file, message) = refused(Some(&runs), Some(&bad_port), None);
    assert_eq!(file, Path::new("wtls.csv"));
    assert!(message.contains("\"nginx\""), "{message}");
    let (file, _) = refused(Some(&runs), Some(&wtls), Some("{\"commit\": 7"));
    assert_eq!(file, Path::new("meta.json"));

    let not_there = Path::new("/nonexistent/bench-wap");
    let e = WapBench::load(not_there).unwrap_err().to_string();
    assert!(e.starts_with("--wap-bench: /nonexistent/bench-wap"), "{e}");
}

#[test]
fn meta_json_says_when_and_what_was_run() {
    let dir = tempfile::tempdir().unwrap();
    write_dir(dir.path(), &runs_csv(), &wtls_csv());
    let meta = r#"{"started_utc": "2030-01-02T03:04:05Z", "finished_utc": "2030-01-02T03:09:00Z",
        "commit": "abc1234", "binary": "target/debug/wtlsperf",
        "options": "--threads '8 64' --runs 3 --sessions 100", "machine": "a test CPU (2 cores)"}"#;
    std::fs::write(dir.path().join("meta.json"), meta).unwrap();
    let bench = WapBench::load(dir.path()).unwrap();
    let sentence = bench.provenance_sentence();
    for part in [
        "2030-01-02T03:04:05Z",
        "abc1234",
        "target/debug/wtlsperf",
        "--runs 3",
    ] {
        assert!(sentence.contains(part), "{part}: {sentence}");
    }
    assert_eq!(
        bench.provenance().to_string(),
        "measured: run scripts/bench-wap-kannel.sh 2030-01-02T03:04:05Z on a test CPU (2 cores)"
    );
}

#[test]
fn the_section_has_three_tables_a_figure_of_both_gateways_and_its_files() {
    let dir = tempfile::tempdir().unwrap();
    write_dir(dir.path(), &runs_csv(), &wtls_csv());
    let bench = WapBench::load(dir.path()).unwrap();
    let summary = bench.summary();
    let report = wtlsperf_report::Report::new("t").section(bench.section(&summary));
    report.validate().unwrap();
    let items = &report.sections[0].items;
    let figure = items
        .iter()
        .find_map(|i| match i {
            wtlsperf_report::Item::Figure(f) => Some(f),
            _ => None,
        })
        .unwrap();
    let wtlsperf_report::Chart::Line(chart) = &figure.chart else {
        panic!("a line chart")
    };
    let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, [Gateway::Ours.label(), Gateway::Kannel.label()]);
    // 300 / 10 is beyond the spread a linear axis shows.
    assert!(chart.y.log);
    assert!(chart
        .series
        .iter()
        .all(|s| s.provenance.kind().name() == "measured"));
    // Kannel ran at 8 threads only; ours' 64-thread point has a rate of 0, which the
    // log axis leaves out but the series keeps.
    assert_eq!(chart.series[1].points.len(), 1);

    let out = tempfile::tempdir().unwrap();
    bench.write_csv(&summary, out.path()).unwrap();
    let header = |f: &str| {
        let text = std::fs::read_to_string(out.path().join(f)).unwrap();
        text.lines().next().unwrap().to_owned()
    };
    assert!(header("wap_bench_gateways.csv").starts_with("threads,gateway,runs,sessions_per_s,"));
    assert!(header("wap_bench_ratios.csv").starts_with("threads,ours_sessions_per_s,"));
    assert!(header("wap_bench_client.csv").ends_with(",get_overhead_ms"));
}
