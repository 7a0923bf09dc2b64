//! `wtlsperf evaluate --only robustness`: the Poisson premise's test run on its own
//! writes its points and `part.json` with the finding, and nothing that passes for a
//! whole evaluation (no report, no `summary.json`).

use std::process::Command;

#[test]
fn the_premise_runs_alone_with_its_baseline_and_its_finding() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("run");
    let status = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(["evaluate", "--smoke", "--only", "robustness", "--out"])
        .arg(&out)
        .env("RUST_LOG", "warn")
        .status()
        .expect("run wtlsperf");
    assert!(status.success(), "evaluate --only robustness failed");
    assert!(!out.join("summary.json").exists() && !out.join("report.html").exists());

    let rows = std::fs::read_to_string(out.join("queue_robustness.csv")).expect("csv");
    let laws: Vec<&str> = rows
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap_or(""))
        .collect();
    // The baseline is measured in the same run as the law it is compared with.
    assert!(laws.contains(&"exponential"), "{laws:?}");
    assert!(laws.iter().any(|l| *l != "exponential"), "{laws:?}");

    let part: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("part.json")).expect("json"))
            .expect("part.json parses");
    assert_eq!(part["only"], "robustness");
    let findings = part["findings"].as_array().expect("findings");
    assert!(
        findings
            .iter()
            .any(|f| f["claim"].as_str().unwrap_or("").contains("Eq. 3.12")),
        "{findings:?}"
    );
}
