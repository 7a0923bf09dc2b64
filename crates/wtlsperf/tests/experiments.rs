//! `wtlsperf run FILE.toml`: a bad file exits 2 before anything runs, naming the file,
//! the line and the key; a tiny experiment runs end to end and writes every file and
//! section and renders in Chromium; every shipped example passes `--check` (and, run
//! with `--ignored`, runs in full and renders).

use std::path::Path;
use std::process::{Command, Output};

fn wtlsperf(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(args)
        .current_dir(dir)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run wtlsperf")
}

/// One contender over the fastest bearer and an inline one, two runs a point, every
/// measurement, a short load point.
const TINY: &str = r#"title = "tiny"
description = "the whole pipeline on minimal inputs"
contenders = ["dtls1.2:psk-ccm8"]
bearers = ["loopback", { name = "quick", up_kbps = 1000, down_kbps = 1000, delay_ms = 2, mtu = 600 }]
devices = ["this-machine"]
loss = [0.0, 0.2]
runs = 2
seed = 3

[measure]
loss_curves = true
load = { rho = [0.3], seconds = 0.3 }
"#;

fn refused(dir: &Path, name: &str, text: &str) -> String {
    std::fs::write(dir.join(name), text).unwrap();
    let out = wtlsperf(&["run", name], dir);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{name}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    // nothing ran: no results directory
    assert!(!dir.join("results").exists(), "{name} made results");
    err
}

#[test]
fn a_bad_file_exits_2_naming_the_file_the_line_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let err = refused(
        d,
        "bearer.toml",
        &TINY.replace(r#"["loopback", "#, r#"["loopback", "carrier-pigeon", "#),
    );
    assert!(
        err.contains("bearer.toml:4: bearers[1]: unknown bearer \"carrier-pigeon\""),
        "{err}"
    );
    assert!(err.contains("nb-iot") && err.contains("gsm-csd"), "{err}");
    let err = refused(
        d,
        "loss.toml",
        &TINY.replace("loss = [0.0, 0.2]", "loss = [0.0, 1.5]"),
    );
    assert!(
        err.contains("loss.toml:6: loss[1]: 1.5") && err.contains("[0, 1)"),
        "{err}"
    );
    let err = refused(d, "key.toml", &TINY.replace("runs = 2", "repetitions = 2"));
    assert!(
        err.contains("key.toml:7: repetitions: unknown field"),
        "{err}"
    );
    assert!(err.contains("`runs`"), "{err}");
    let err = refused(d, "contender.toml", &TINY.replace("psk-ccm8", "rsa-kx"));
    assert!(
        err.contains("contender.toml:3: contenders[0]: ") && err.contains("\"rsa-kx\""),
        "{err}"
    );
    assert!(err.contains("psk-ccm8"), "{err}");
    let err = refused(d, "device.toml", &TINY.replace("this-machine", "pdp11"));
    assert!(
        err.contains("device.toml:5: devices[0]: unknown device \"pdp11\""),
        "{err}"
    );
    assert!(err.contains("nrf52840"), "{err}");
    let err = refused(
        d,
        "inline.toml",
        &TINY.replace("mtu = 600", "mtu = 600, duty = 1"),
    );
    assert!(
        err.contains("inline.toml:4:") && err.contains("duty_cycle_percent"),
        "{err}"
    );
}

#[test]
fn a_tiny_experiment_writes_every_file_and_section() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.toml"), TINY).unwrap();
    let out = wtlsperf(&["run", "tiny.toml", "--out", "out"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let o = dir.path().join("out");
    let header = |f: &str| {
        let text = std::fs::read_to_string(o.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(text.lines().count() >= 2, "{f} has no row");
        text.lines().next().unwrap().to_owned()
    };
    assert!(header("flights.csv")
        .starts_with("contender,protocol,suite,auth,bearer,payload_limit,flight,direction"));
    assert!(header("bearer_runs.csv").starts_with(
        "contender,protocol,suite,auth,bearer,device,status,runs,completed,median_ms,p95_ms"
    ));
    assert!(header("loss_curves.csv")
        .starts_with("protocol,suite,bearer,loss,runs,completed,median_ms,p95_ms"));
    assert!(header("load_points.csv").starts_with("contender,protocol,suite,auth,target_rho"));
    let runs = std::fs::read_to_string(o.join("bearer_runs.csv")).unwrap();
    // two bearers, both completed twice
    assert_eq!(
        runs.lines()
            .filter(|l| l.contains(",measured,2,2,"))
            .count(),
        2,
        "{runs}"
    );
    for f in [
        "experiment.toml",
        "figures/flights_model.svg",
        "figures/bearer_runs_quick.png",
        "figures/loss_curves_quick.svg",
        "figures/load_points.svg",
        "tables/bearers.csv",
    ] {
        assert!(o.join(f).is_file(), "{f} missing");
    }
    let html = std::fs::read_to_string(o.join("report.html")).unwrap();
    for section in [
        "sec-experiment",
        "sec-flights",
        "sec-bearer_runs",
        "sec-loss_curves",
        "sec-load_points",
    ] {
        assert!(html.contains(section), "{section} missing from the page");
    }
    assert!(html.contains("<svg"), "no inline figure");
    assert!(
        html.contains("modelled (virtual time on protocol timers + Eq. 3.84)")
            || html.contains("Modelled (virtual time on protocol timers + Eq. 3.84)")
    );
    renders_in_chromium(
        &html,
        &o,
        "a_tiny_experiment_writes_every_file_and_section",
        4,
    );
}

/// The page opens in headless Chromium at 1280 px with no console error, no horizontal
/// overflow and every figure's legend matching its series, with at least `figures`
/// figures (skipped where Chromium is missing, failed under CI).
fn renders_in_chromium(html: &str, dir: &Path, test: &str, figures: usize) {
    if !wtlsperf_testtools::tool_runs("chromium", &format!("{test} (browser)")) {
        return;
    }
    let found =
        wtlsperf_report::browser::check_in_chromium(html, dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(found.figures >= figures, "{} figures", found.figures);
    assert!(found.problems.is_empty(), "{:#?}", found.problems);
}

/// Every shipped example run in full (minutes each: `cargo test --release --features
/// wtlsperf/dtls13 --test experiments -- --ignored`), its files written and its page
/// clean in Chromium.
#[test]
#[ignore = "runs every shipped example in full: minutes"]
fn every_shipped_example_runs_and_its_page_renders() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let out_dir = dir.path().join(&name);
        let started = std::time::Instant::now();
        let out = wtlsperf(
            &[
                "run",
                path.to_str().unwrap(),
                "--out",
                out_dir.to_str().unwrap(),
            ],
            dir.path(),
        );
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let csvs = std::fs::read_dir(&out_dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "csv")
            })
            .count();
        assert!(csvs >= 1, "{name}: no CSV");
        assert!(out_dir.join("figures").is_dir(), "{name}: no figures");
        let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
        renders_in_chromium(&html, &out_dir, &name, 1);
        eprintln!(
            "{name}: {csvs} CSV files, {:.0} s",
            started.elapsed().as_secs_f64()
        );
    }
}

#[test]
fn every_shipped_example_passes_the_check() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut seen = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        seen += 1;
        let out = wtlsperf(&["run", "--check", path.to_str().unwrap()], &examples);
        let err = String::from_utf8_lossy(&out.stderr);
        // DTLS 1.3 is one registry entry a build without `dtls13` lacks
        let lacks_dtls13 = err.contains("not in this build");
        assert!(
            out.status.success() || lacks_dtls13,
            "{}: {err}",
            path.display()
        );
    }
    assert!(seen >= 4, "{seen} examples");
}
