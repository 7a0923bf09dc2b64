use std::path::Path;

use super::file::Device;
use super::*;

fn catalogue() -> Catalogue {
    Catalogue::shipped().unwrap()
}

fn parse(text: &str) -> Result<Experiment, FileError> {
    Experiment::parse(Path::new("x.toml"), text, &catalogue())
}

/// A valid file, each line of which a test may replace.
const GOOD: &str = r#"title = "a test"
contenders = ["dtls1.2:psk-ccm8", "edhoc:method3-suite2"]
bearers = ["lte-m", { name = "slow", up_kbps = 5.5, down_bps = 5500, delay_ms = 100, jitter_ms = 20, mtu = 242, duty_cycle_percent = 1 }]
devices = ["nrf52840", "this-machine"]
loss = [0, 0.05]
runs = 2
seed = 7

[measure]
loss_curves = true
load = { rho = [0.3], seconds = 0.5 }
"#;

fn with(line: usize, replacement: &str) -> String {
    let mut lines: Vec<&str> = GOOD.lines().collect();
    lines[line - 1] = replacement;
    lines.join("\n")
}

fn refused(text: &str) -> FileError {
    parse(text).expect_err("the file should be refused")
}

#[test]
fn a_good_file_gives_the_typed_plan() {
    let x = parse(GOOD).unwrap();
    assert_eq!(x.contenders.len(), 2);
    assert_eq!(x.contenders[1].to_string(), "edhoc:method3-suite2");
    assert_eq!(x.bearers[0].profile.name, "lte-m");
    let slow = &x.bearers[1];
    assert_eq!(slow.nominal_bps, (5500.0, 5500.0));
    assert_eq!(slow.profile.up_bps, 55.0);
    assert_eq!(slow.profile.mtu_bytes, 242);
    assert_eq!(
        x.devices.iter().map(Device::name).collect::<Vec<_>>(),
        ["nrf52840", "this-machine"]
    );
    assert_eq!(x.levels, [0.0, 0.05]);
    assert_eq!((x.runs, x.seed), (2, 7));
    assert!(x.measure.flights && x.measure.bearer_runs && x.measure.loss_curves);
    assert_eq!(
        x.measure.load,
        Some(file::LoadPlan {
            rho: vec![0.3],
            seconds: 0.5,
            warmups: file::DEFAULT_WARMUPS,
        })
    );
}

#[test]
fn an_unknown_bearer_is_named_with_its_line_and_the_catalogue() {
    let e = refused(&with(3, r#"bearers = ["lte-m", "carrier-pigeon"]"#));
    assert_eq!((e.line, e.key.as_str()), (Some(3), "bearers[1]"));
    assert!(
        e.message.contains("carrier-pigeon")
            && e.message.contains("nb-iot")
            && e.message.contains("gsm-csd"),
        "{e}"
    );
    assert!(e.to_string().starts_with("x.toml:3: bearers[1]: "), "{e}");
}

#[test]
fn a_loss_outside_zero_to_one_is_refused_where_it_stands() {
    let e = refused(&with(5, "loss = [0, 1.5]"));
    assert_eq!((e.line, e.key.as_str()), (Some(5), "loss[1]"));
    assert!(e.message.contains("[0, 1)"), "{e}");
    let e = refused(&with(
        3,
        r#"bearers = [{ name = "l", up_bps = 1, down_bps = 1, delay_ms = 1, mtu = 300, loss = 1.5 }]"#,
    ));
    assert_eq!((e.line, e.key.as_str()), (Some(3), "bearers[0].loss"));
}

#[test]
fn an_unknown_key_is_named_with_the_keys_expected() {
    let e = refused(&with(6, "repetitions = 2"));
    assert_eq!((e.line, e.key.as_str()), (Some(6), "repetitions"));
    assert!(
        e.message.contains("unknown field")
            && e.message.contains("runs")
            && e.message.contains("contenders"),
        "{e}"
    );
    // in a table, with its table's name
    let e = refused(&GOOD.replace("loss_curves = true", "loss_curve = true"));
    assert_eq!((e.line, e.key.as_str()), (Some(10), "measure.loss_curve"));
    assert!(e.message.contains("loss_curves"), "{e}");
    // in an inline bearer
    let e = refused(&GOOD.replace("mtu = 242", "mtu_bytes = 242"));
    assert_eq!(e.line, Some(3));
    assert!(
        e.message.contains("mtu_bytes") && e.message.contains("duty_cycle_percent"),
        "{e}"
    );
}

#[test]
fn an_unknown_contender_lists_the_registry() {
    let e = refused(&with(
        2,
        r#"contenders = ["dtls1.2:psk-ccm8", "dtls1.2:rsa-kx"]"#,
    ));
    assert_eq!((e.line, e.key.as_str()), (Some(2), "contenders[1]"));
    assert!(
        e.message.contains("rsa-kx") && e.message.contains("psk-ccm8"),
        "{e}"
    );
    let e = refused(&with(2, r#"contenders = ["tls1.3:x"]"#));
    assert!(
        e.message.contains("edhoc") && e.message.contains("wtls"),
        "{e}"
    );
    let e = refused(&with(2, r#"contenders = ["edhoc"]"#));
    assert!(e.message.contains("protocol:configuration"), "{e}");
}

#[test]
fn an_unknown_device_lists_the_catalogue_and_this_machine() {
    let e = refused(&with(4, r#"devices = ["pdp11"]"#));
    assert_eq!((e.line, e.key.as_str()), (Some(4), "devices[0]"));
    assert!(
        e.message.contains("nrf52840") && e.message.contains("this-machine"),
        "{e}"
    );
}

#[test]
fn values_out_of_range_and_wrong_types_are_named() {
    let e = refused(&with(6, "runs = 0"));
    assert_eq!((e.line, e.key.as_str()), (Some(6), "runs"));
    let e = refused(&with(6, r#"runs = "three""#));
    assert_eq!((e.line, e.key.as_str()), (Some(6), "runs"));
    let e = refused(&with(7, "seed = 1.5"));
    assert_eq!((e.line, e.key.as_str()), (Some(7), "seed"));
    let e = refused(&GOOD.replace("loss_curves = true", "loss_curves = 1"));
    assert_eq!((e.line, e.key.as_str()), (Some(10), "measure.loss_curves"));
    let e = refused(&GOOD.replace("rho = [0.3]", "rho = [1.2]"));
    assert_eq!((e.line, e.key.as_str()), (Some(11), "measure.load.rho[0]"));
    let e = refused(&with(1, r#"title = " ""#));
    assert_eq!(e.key, "title");
    let e = refused(&with(3, r#"bearers = ["lte-m", "lte-m"]"#));
    assert!(e.message.contains("twice"), "{e}");
    let e = refused(&with(
        3,
        r#"bearers = [{ name = "gsm-csd", up_bps = 1, down_bps = 1, delay_ms = 1, mtu = 300 }]"#,
    ));
    assert_eq!(e.key, "bearers[0].name");
}

#[test]
fn loss_curves_need_loss_levels_bearers_are_needed_and_a_file_must_measure_something() {
    let e = refused(&with(5, ""));
    assert_eq!(e.key, "loss");
    let none = "title = \"t\"\ncontenders = [\"dtls1.2:psk-ccm8\"]\nbearers = [\"lte-m\"]\n[measure]\nflights = false\nbearer_runs = false\n";
    assert_eq!(refused(none).key, "measure");
    let e = refused(&with(3, ""));
    assert_eq!(e.key, "bearers");
    assert!(e.message.contains("nb-iot"), "{e}");
    // the load points alone need no bearer
    let load = "title = \"t\"\ncontenders = [\"dtls1.2:psk-ccm8\"]\n[measure]\nflights = false\nbearer_runs = false\nload = { rho = [0.5] }\n";
    let x = parse(load).unwrap();
    assert!(x.bearers.is_empty());
    assert_eq!(x.measure.load.unwrap().seconds, file::DEFAULT_LOAD_SECONDS);
}

#[test]
fn a_syntax_error_names_its_line() {
    let e = refused(&with(6, "runs = = 2"));
    assert_eq!(e.line, Some(6));
    // multi-byte text before the error
    let e = refused(&with(
        1,
        "title = \"Übertragung über GSM — 2001\"\nrüns = 2",
    ));
    assert_eq!(e.line, Some(2));
    let e = refused("\u{feff}title = [");
    assert_eq!(e.line, Some(1));
}

#[test]
fn an_inline_table_may_span_lines() {
    let text = GOOD.replace(
        r#"{ name = "slow", up_kbps = 5.5,"#,
        "{\n  name = \"slow\",\n  up_kbps = 5.5,",
    );
    let x = parse(&text).unwrap();
    assert_eq!(x.bearers[1].profile.name, "slow");
}

#[test]
fn seeds_differ_per_coordinate_and_repeat_per_file() {
    let a = measure::seed_of(&[1, 0, 0, 1]);
    assert_eq!(a, measure::seed_of(&[1, 0, 0, 1]));
    assert_ne!(a, measure::seed_of(&[1, 0, 1, 0]));
    assert_ne!(a, measure::seed_of(&[2, 0, 0, 1]));
}

#[test]
fn every_example_in_experiments_parses_and_validates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            match Experiment::load(&path, &catalogue()) {
                Ok(x) => assert!(
                    !x.description.is_empty(),
                    "{}: no description",
                    path.display()
                ),
                // a contender this build lacks (DTLS 1.3 without the feature) is the
                // only thing a shipped example may stumble on
                Err(e) => assert!(e.message.contains("not in this build"), "{e}"),
            }
            seen += 1;
        }
    }
    assert!(seen >= 4, "{seen} examples in {}", dir.display());
}

#[test]
fn the_page_has_a_section_per_measurement_and_lists_what_failed() {
    let x = parse(GOOD).unwrap();
    let ctx = Ctx {
        mode: Mode::Full,
        catalogue: catalogue(),
        run_id: "20260101T000000Z".into(),
        machine: "test".into(),
        progress: indicatif::ProgressBar::hidden(),
        job_logs: None,
        interference: None,
    };
    let r = Results {
        failures: vec![Failure {
            measurement: "flights",
            contender: "dtls1.2:psk-ccm8".into(),
            bearer: "slow".into(),
            error: "too small".into(),
        }],
        ..Results::default()
    };
    let html = page(&ctx, &x, &r, &MachineInfo::collect())
        .to_html()
        .unwrap();
    for id in [
        "sec-experiment",
        "sec-flights",
        "sec-bearer_runs",
        "sec-loss_curves",
        "sec-load_points",
    ] {
        assert!(html.contains(id), "{id}");
    }
    assert!(html.contains("Not measured, and why") && html.contains("too small"));
    assert!(html.contains("Modelled (virtual time on protocol timers + Eq. 3.84)"));
    // a file that measures flights only has that section alone
    let flights_only = GOOD
        .replace(
            "loss_curves = true",
            "bearer_runs = false\nloss_curves = false",
        )
        .replace("load = { rho = [0.3], seconds = 0.5 }", "");
    let x = parse(&flights_only).unwrap();
    let html = page(&ctx, &x, &Results::default(), &MachineInfo::collect())
        .to_html()
        .unwrap();
    assert!(
        html.contains("sec-flights")
            && !html.contains("sec-bearer_runs")
            && !html.contains("sec-load_points")
    );
}
