//! End-to-end check of `wtlsperf evaluate`: every part runs (hidden `--smoke` mode, minimal
//! inputs, so a debug build finishes in seconds) and writes every file with the documented
//! columns; the report has every section and inline SVG figures.

use std::path::Path;
use std::process::Command;

fn header(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().next().unwrap_or_default().to_owned()
}

#[test]
fn smoke_evaluation_writes_every_file_and_section() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("results");
    let status = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(["evaluate", "--smoke", "--out"])
        .arg(&out)
        .env("RUST_LOG", "warn")
        .status()
        .expect("run wtlsperf");
    assert!(
        status.success(),
        "wtlsperf evaluate --smoke failed: {status}"
    );

    check_files(&out);
    check_columns_against_the_list(&out);
    let summary = check_summary(&out);
    check_protocols(&out);
    check_loss_curves(&out);
    let html = check_report(&out);
    check_findings(&out, &html, &summary);
    check_in_browser(&out, &html);
}

/// The whole report in headless Chromium at 1280 px: no console error, no horizontal
/// overflow, every figure's legend and series in agreement (`wtlsperf_report::browser`).
fn check_in_browser(out: &Path, html: &str) {
    if !wtlsperf_testtools::tool_runs(
        "chromium",
        "smoke_evaluation_writes_every_file_and_section (browser)",
    ) {
        return;
    }
    let found =
        wtlsperf_report::browser::check_in_chromium(html, out).unwrap_or_else(|e| panic!("{e}"));
    assert!(found.figures > 10, "{} figures", found.figures);
    assert!(found.problems.is_empty(), "{:#?}", found.problems);
}

/// Every file, with its documented columns first and at least one data row.
fn check_files(out: &Path) {
    let expected = [
        ("cases.csv", "case,category,group,auth,variant,client_cpu_median_ms"),
        ("messages.csv", "case,auth,side,message,operation,median_wall_ms,median_cpu_ms,share_pct,bytes"),
        ("queue.csv", "model,variant,inputs,group,mixture,auth,lambda_hs_per_s,rho,predicted_wait_ms,measured_wait_ms,relative_error"),
        ("queue_load_test.csv", "case,auth,round_trip_ms,target_rho,lambda_hs_per_s"),
        ("queue_robustness.csv", "round_trip_law,round_trip_ms,case,packing,target_rho"),
        ("transmission.csv", "case,auth,bearer,bytes,datagrams,runs,measured_ms,modelled_ms,published_ms"),
        ("record_layer.csv", "cipher,mac,payload_bytes,direction,mbit_s,wtls"),
        ("mcommerce.csv", "signature,key,with_certificate,sign_ms"),
        ("devices.csv", "device,operation,key,ms,source_kind,source"),
        ("device_fit.csv", "case,published_ms,predicted_ms,error,scaled"),
        ("device_runs.csv", "case,auth,bearer,device,runs,measured_ms"),
        ("transmission_loo.csv", "count,case,measured_ms,traversal_ms,predicted_ms,error"),
        ("flights.csv", "protocol,suite,flight,sender,datagrams,protocol_bytes,coap_bytes,udp_payload_bytes,udp_bytes,record_header_bytes,handshake_header_bytes,certificate_bytes,cookie_bytes"),
        ("loss_curves.csv", "protocol,suite,bearer,loss,runs,completed,median_ms,p95_ms,p99_ms,median_retransmissions"),
        ("then_and_now.csv", "era,protocol,suite,auth,bearer,device,modelled_ms,measured_ms,measured_runs,kind"),
        (
            "protocols.csv",
            "protocol,suite,auth,level,bearer,device,bytes,datagrams,round_trips,server_cpu_us,bound_ratio,handshakes_per_core_s,client_ms,modelled_ms,modelled_wap261_ms,measured_ms,measured_runs,client_cost",
        ),
    ];
    for (file, prefix) in expected {
        let h = header(&out.join(file));
        assert!(
            h.starts_with(prefix),
            "{file}: header {h:?} does not start with {prefix:?}"
        );
        let rows = std::fs::read_to_string(out.join(file))
            .unwrap()
            .lines()
            .count();
        assert!(rows >= 2, "{file} has no data rows");
    }
}

/// Result files a smoke run may leave out or write without rows (then unchecked here):
/// fleet sizing reads the quick and full runs' load points; the deck series runs in the
/// quick and full modes; the smoke run has no lossy protocol runs and no device with an
/// equal-strength pair; a build without `dtls13` has no post-quantum rows.
const MAY_BE_EMPTY_IN_SMOKE: [&str; 5] = [
    "fleet_sizing.csv",
    "page_load_decks.csv",
    "pq_cost.csv",
    "protocols_loss.csv",
    "recommendations_equal_strength.csv",
];

/// Result files only `--wap-bench DIR` writes (tests/wap_bench.rs checks their columns):
/// a run without it leaves them out, and its report has no such section.
const ONLY_WITH_WAP_BENCH: [&str; 3] = [
    "wap_bench_client.csv",
    "wap_bench_gateways.csv",
    "wap_bench_ratios.csv",
];

/// The checked-in list of every result file's columns (`tests/result_columns.txt`, one
/// `file: column,column,...` a line): each file the run writes starts with its listed
/// columns, in order, so no existing column changes its name, place or (since the list
/// is reviewed with docs/results.md) meaning; new columns go at the end and into the
/// list. A file of the list this run did not write fails too, except those a smoke run
/// may leave out or empty ([`MAY_BE_EMPTY_IN_SMOKE`]).
fn check_columns_against_the_list(out: &Path) {
    let list = include_str!("result_columns.txt");
    let (mut listed_files, mut checked) = (0, 0);
    for line in list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        listed_files += 1;
        let (file, columns) = line.split_once(": ").unwrap_or_else(|| panic!("{line}"));
        let len = std::fs::metadata(out.join(file)).map_or(0, |m| m.len());
        if len == 0 && MAY_BE_EMPTY_IN_SMOKE.contains(&file) {
            continue;
        }
        if ONLY_WITH_WAP_BENCH.contains(&file) {
            assert!(!out.join(file).exists(), "{file} without --wap-bench");
            continue;
        }
        let written = header(&out.join(file));
        let written: Vec<&str> = written.split(',').collect();
        let listed: Vec<&str> = columns.split(',').collect();
        assert!(
            written.starts_with(&listed),
            "{file}: the columns changed; listed {listed:?}, written {written:?}"
        );
        checked += 1;
    }
    // Only the files a smoke run may leave empty go unchecked (pq_cost.csv needs the
    // dtls13 feature, for one).
    let floor = listed_files - MAY_BE_EMPTY_IN_SMOKE.len() - ONLY_WITH_WAP_BENCH.len();
    assert!(
        checked >= floor,
        "{checked} of {listed_files} files checked"
    );
}

/// `summary.json`: the mode, the machine, and the headline figures in their ranges.
fn check_summary(out: &Path) -> serde_json::Value {
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["mode"], "smoke");
    assert!(summary["machine"]["openssl"]
        .as_str()
        .unwrap()
        .contains("SSL"));
    let mean = summary["headline"]["eq41_traversal_mean_ms"]
        .as_f64()
        .unwrap();
    assert!((mean - 391.3).abs() < 0.05, "Eq. 4.1 mean {mean}");
    for field in [
        "device_leave_one_out_median_error",
        "device_end_to_end_median_error",
        "transmission_leave_one_out_median_error",
    ] {
        let v = summary["headline"][field].as_f64();
        assert!(v.is_some_and(|v| (0.0..1.0).contains(&v)), "{field}: {v:?}");
    }
    for key in [
        "peer_bound_ratio_openssl_tls12_ecdhe_p256",
        "peer_bound_ratio_openssl_dtls12_ecdhe_p256",
        "peer_bound_ratio_openssl_tls12_rsa2048",
        "peer_bound_ratio_rustls_tls13_ecdhe_p256",
        "wtls_bound_ratio_256p",
    ] {
        let r = summary["headline"][key].as_f64();
        assert!(r.is_some_and(|r| r > 0.5), "headline {key}: {r:?}");
    }
    // The load test's design: one designed point in the smoke mode; `degraded` is always
    // written, null or an account whose causes add up to the unjudged points.
    assert_eq!(summary["headline"]["queue_designed_points"], 1);
    let degraded = summary.get("degraded").expect("degraded written");
    if !degraded.is_null() {
        let causes: u64 = ["steal", "stalls", "missed_rho", "not_run"]
            .iter()
            .map(|c| degraded["causes"][c].as_u64().unwrap())
            .sum();
        let (judged, designed) = (degraded["judged"].as_u64(), degraded["designed"].as_u64());
        assert_eq!(Some(causes), designed.zip(judged).map(|(d, j)| d - j));
    }
    summary
}

/// `protocols.csv`: every protocol, and DTLS 1.3 measured and under load with `dtls13`.
fn check_protocols(out: &Path) {
    let csv = std::fs::read_to_string(out.join("protocols.csv")).unwrap();
    // Every protocol of the registry this build has, in each table that compares
    // protocols (the smoke run's loss curves cover LTE-M only).
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    let flights = read("flights.csv");
    let loss = read("loss_curves.csv");
    let load = read("queue_load_test.csv");
    for p in wtlsperf_drivers::registry::available() {
        let name = p.id().name();
        let starts = format!("{name},");
        assert!(
            csv.lines().any(|l| l.starts_with(&starts)),
            "protocols.csv lacks {name}"
        );
        assert!(
            loss.lines().any(|l| l.starts_with(&starts)),
            "loss_curves.csv lacks {name}"
        );
        if name != "wtls" {
            assert!(
                flights.lines().any(|l| l.starts_with(&starts)),
                "flights.csv lacks {name}"
            );
        }
        assert!(
            load.lines()
                .any(|l| l.ends_with(&format!(",{name}")) || l.contains(&format!(",{name},"))),
            "queue_load_test.csv lacks {name}"
        );
    }
    // DTLS 1.3, classical and with ML-KEM, in memory and modelled (feature `dtls13`)
    if cfg!(feature = "dtls13") {
        for suite in [
            "dtls1.3,ecdhe-p256-ecdsa-ccm8,",
            "dtls1.3,psk-ccm8,",
            "dtls1.3,mlkem768-ecdsa-ccm8,",
            "dtls1.3,x25519mlkem768-ecdsa-ccm8,",
        ] {
            assert!(
                csv.lines().any(|l| l.starts_with(suite)),
                "protocols.csv lacks {suite}"
            );
        }
        // measured over an emulated bearer, through the one UDP client
        let runs_column = csv
            .lines()
            .next()
            .and_then(|h| h.split(',').position(|c| c == "measured_runs"))
            .expect("protocols.csv names measured_runs");
        let measured = csv.lines().any(|l| {
            let f: Vec<&str> = l.split(',').collect();
            l.starts_with("dtls1.3,ecdhe-p256-ecdsa-ccm8,")
                && f.get(runs_column)
                    .is_some_and(|runs| runs.parse::<usize>().unwrap_or(0) > 0)
        });
        assert!(measured, "protocols.csv has no real DTLS 1.3 run");
        let load = std::fs::read_to_string(out.join("queue_load_test.csv")).unwrap();
        assert!(
            load.lines()
                .any(|l| l.ends_with(",dtls1.3") || l.contains(",dtls1.3,")),
            "queue_load_test.csv has no DTLS 1.3 point"
        );
    }
}

/// `loss_curves.csv`: the five loss levels, each protocol's timers and the equal-timer
/// variant; `protocols_timers.csv` and `protocols_cookie.csv` beside them.
fn check_loss_curves(out: &Path) {
    let loss = std::fs::read_to_string(out.join("loss_curves.csv")).unwrap();
    assert!(
        loss.lines()
            .any(|l| l.starts_with("wtls,") && l.ends_with(",default"))
            && loss
                .lines()
                .any(|l| l.starts_with("wtls,") && l.contains(",equal: ")),
        "loss_curves.csv lacks the equal-timer variant"
    );
    let timers = std::fs::read_to_string(out.join("protocols_timers.csv")).unwrap();
    assert!(timers
        .lines()
        .any(|l| l.starts_with("dtls1.2,") && l.contains("RFC 6347")));
    let cookie = std::fs::read_to_string(out.join("protocols_cookie.csv")).unwrap();
    for on in ["true", "false"] {
        assert!(
            cookie
                .lines()
                .any(|l| l.starts_with(&format!("dtls1.2,ecdhe-ecdsa-p256-ccm8,{on},"))),
            "protocols_cookie.csv lacks DTLS 1.2 with cookie_exchange {on}"
        );
    }
    for level in ["0.0", "0.01", "0.05", "0.1", "0.2"] {
        assert!(
            loss.lines()
                .any(|l| l.starts_with("dtls1.2,") && l.contains(&format!(",{level},"))),
            "loss_curves.csv lacks {level}"
        );
    }
}

/// `report.html`: every section, an inline figure and both readings of Eq. 4.2.
fn check_report(out: &Path) -> String {
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for section in [
        "sec-processing",
        "sec-queue",
        "sec-transmission",
        "sec-overall",
        "sec-record_layer",
        "sec-mcommerce",
        "sec-devices",
        "sec-protocols",
        "sec-loss_curves",
        "sec-then_and_now",
        "sec-findings",
    ] {
        assert!(html.contains(section), "report.html lacks {section}");
    }
    assert!(html.contains("<svg"), "report.html has no inline figure");
    assert!(
        !html.contains("sec-wap_bench"),
        "the benchmark against Kannel is only read with --wap-bench"
    );
    assert!(
        html.contains("342.9") && html.contains("376.1"),
        "Eq. 4.2 both readings missing"
    );
    html
}

/// Each finding once, in order, with its rule and passage; its audit row in
/// `findings.csv`; a figure and a table file.
fn check_findings(out: &Path, html: &str, summary: &serde_json::Value) {
    // Each finding once, in summary.json's order, with its kind and its rule; every
    // study's claim with its passage; the audit table beside it.
    let findings = summary["findings"].as_array().unwrap();
    assert_eq!(
        html.matches("<div class=\"finding ").count(),
        findings.len(),
        "each finding is shown once"
    );
    for (i, f) in findings.iter().enumerate() {
        let at = html
            .find(&format!("id=\"finding-{}\"", i + 1))
            .expect("numbered finding");
        let claim = f["claim"]
            .as_str()
            .unwrap()
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;");
        assert_eq!(
            html[at..].find(&claim).map(|_| ()),
            Some(()),
            "F{} out of order",
            i + 1
        );
        assert!(
            !f["rule"].as_str().unwrap().is_empty(),
            "F{} has no rule",
            i + 1
        );
        if f["kind"] == "study's claim" {
            assert!(f["passage"].as_str().is_some_and(|p| !p.is_empty()));
        }
        // One verdict vocabulary: the report's word is summary.json's.
        let verdict = f["verdict"].as_str().unwrap();
        assert!(["confirmed", "contradicted", "inconclusive"].contains(&verdict));
        let end = html[at..].find("</p>").unwrap() + at;
        assert!(
            html[at..end].contains(&format!(">{verdict}</span>")),
            "F{}: the report's verdict is not {verdict}",
            i + 1
        );
    }
    let audit = std::fs::read_to_string(out.join("findings.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(audit.as_bytes());
    let header = rows.headers().unwrap().clone();
    let verdict_at = header.iter().position(|h| h == "verdict").unwrap();
    for (row, f) in rows.records().zip(findings) {
        assert_eq!(
            &row.unwrap()[verdict_at],
            f["verdict"].as_str().unwrap(),
            "findings.csv"
        );
    }
    // One row a finding, numbered 1.. in summary.json's order.
    for n in 1..=findings.len() {
        assert!(
            audit.contains(&format!("\n{n},")),
            "findings.csv lacks row {n}"
        );
    }
    assert!(!audit.contains(&format!("\n{},", findings.len() + 1)));
    assert!(out.join("figures/bound_ratio.png").exists());
    assert!(out.join("tables/t4_1_mutual_processing.csv").exists());
}
