//! `wtlsperf evaluate --wap-bench DIR`: a directory of scripts/bench-wap-kannel.sh that
//! cannot be read is refused with exit 2 naming the option and the file, before anything
//! is written; `--only wap_bench` renders the section alone from a directory written
//! here, with the result files of tests/result_columns.txt, and the page passes the
//! browser check.

use std::path::Path;
use std::process::{Command, Output};

fn evaluate(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .arg("evaluate")
        .args(args)
        .current_dir(dir)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run wtlsperf")
}

/// A benchmark directory as the script writes it: two thread counts, both gateways,
/// two runs each; our client on two ports and curl on the origin.
fn write_bench(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut runs = String::from("gateway,threads,run,sessions,completed,wall_s,sessions_per_s,p50_ms,p95_ms,p99_ms,max_ms,unanswered,not_reply,not_200,panics,fakewap_worst_s,fakewap_rc\n");
    for threads in [4, 16] {
        for run in 1..=2 {
            let rate = 1000 * run;
            runs.push_str(&format!(
                "ours,{threads},{run},100,100,0.1,{rate}.0,1.00,2.00,3.00,4.00,0,0,0,0,0.0,0\n"
            ));
            runs.push_str(&format!(
                "kannel,{threads},{run},100,100,2.0,{}.0,100.00,110.00,120.00,130.00,0,{run},0,0,0.2,0\n",
                10 * run
            ));
        }
    }
    std::fs::write(dir.join("runs.csv"), runs).unwrap();
    let mut wtls = String::from(
        "port,run,pages,ok,wall_s,pages_per_s,get_p50_ms,get_p95_ms,get_p99_ms,handshake_p50_ms\n",
    );
    for run in 1..=2 {
        wtls.push_str(&format!("origin,{run},20,20,0.01,,0.20,0.30,0.40,\n"));
        wtls.push_str(&format!("9201,{run},20,20,0.02,900.0,0.50,0.60,0.70,\n"));
        wtls.push_str(&format!(
            "9203,{run},20,20,0.04,400.0,0.70,0.80,0.90,0.30\n"
        ));
    }
    std::fs::write(dir.join("wtls.csv"), wtls).unwrap();
}

#[test]
fn a_bad_benchmark_directory_exits_2_naming_the_option_and_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let bench = tmp.path().join("bench");
    write_bench(&bench);
    // A latency that is not a number.
    let runs = std::fs::read_to_string(bench.join("runs.csv")).unwrap();
    std::fs::write(bench.join("runs.csv"), runs.replacen("3.00", "slow", 1)).unwrap();
    let missing = tmp.path().join("no-such-bench");
    let cases: [(&Path, &[&str], &str); 2] = [
        (&bench, &[], "runs.csv: line 2: column p99_ms"),
        (&missing, &["--only", "wap_bench"], "no-such-bench"),
    ];
    for (dir, extra, names) in cases {
        let out_dir = tmp.path().join("out");
        let mut args = vec!["--smoke", "--wap-bench", dir.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.extend(["--out", out_dir.to_str().unwrap()]);
        let out = evaluate(&args, tmp.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--wap-bench") && err.contains(names), "{err}");
        assert!(!out_dir.exists(), "nothing is written before the refusal");
    }
    // `--only wap_bench` has nothing to read without the option.
    let out = evaluate(&["--only", "wap_bench"], tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--wap-bench"), "{err}");
}

#[test]
fn only_wap_bench_renders_the_section_alone_with_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let bench = tmp.path().join("bench");
    write_bench(&bench);
    let out_dir = tmp.path().join("out");
    let out = evaluate(
        &[
            "--only",
            "wap_bench",
            "--wap-bench",
            bench.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("id=\"sec-wap_bench\""));
    assert_eq!(html.matches("<section id=\"sec-").count(), 1, "one section");
    // The ratio of the median rates at each thread count: 1500 / 15.
    assert!(html.contains(">100.0<"), "the rate ratio");
    assert!(
        !out_dir.join("pki").exists(),
        "no PKI for reading a directory"
    );
    assert!(out_dir.join("part.json").exists());

    // Every file the section writes is in the checked-in column list, columns first.
    let list = include_str!("result_columns.txt");
    for file in [
        "wap_bench_gateways.csv",
        "wap_bench_ratios.csv",
        "wap_bench_client.csv",
    ] {
        let listed = list
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{file}: ")))
            .unwrap_or_else(|| panic!("{file} is not in result_columns.txt"));
        let text = std::fs::read_to_string(out_dir.join(file)).unwrap();
        let header = text.lines().next().unwrap();
        assert!(
            header.starts_with(listed),
            "{file}: {header} against {listed}"
        );
        assert!(text.lines().count() >= 2, "{file} has no rows");
    }

    if wtlsperf_testtools::tool_runs(
        "chromium",
        "only_wap_bench_renders_the_section_alone_with_its_files (browser)",
    ) {
        let found = wtlsperf_report::browser::check_in_chromium(&html, &out_dir)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found.figures, 1);
        assert!(found.problems.is_empty(), "{:#?}", found.problems);
    }
}
