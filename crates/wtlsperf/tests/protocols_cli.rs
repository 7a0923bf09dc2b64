//! `wtlsperf compare`: bad operator input names the option and exits non-zero, before
//! anything is measured.

use std::process::Command;

fn compare(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .arg("compare")
        .args(args)
        .output()
        .expect("run wtlsperf");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn unknown_suite_device_and_profile_are_named_with_the_known_ones() {
    let (ok, err) = compare(&["--over", "edhoc:rsa-kx", "--no-peers"]);
    assert!(
        !ok && err.contains("--over") && err.contains("method3-suite2"),
        "{err}"
    );
    let (ok, err) = compare(&["--contender", "tls:x", "--no-peers"]);
    assert!(
        !ok && err.contains("--contender") && err.contains("dtls1.2"),
        "{err}"
    );
    let (ok, err) = compare(&["--device", "pdp11", "--no-peers"]);
    assert!(
        !ok && err.contains("--device") && err.contains("nokia7650"),
        "{err}"
    );
    let (ok, err) = compare(&["--profile", "carrier-pigeon", "--no-peers"]);
    assert!(
        !ok && err.contains("--profile") && err.contains("nb-iot"),
        "{err}"
    );
    let (ok, err) = compare(&["--reps", "0", "--no-peers"]);
    assert!(!ok && err.contains("--reps"), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

#[test]
fn compare_runs_its_contenders_in_memory_and_one_over_a_bearer() {
    let out = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(["compare", "--reps", "2", "--no-peers"])
        .args(["--contender", "dtls1.2:ecdhe-ecdsa-p256-ccm8"])
        .args(["--contender", "dtls1.2:psk-ccm8"])
        .args(["--contender", "edhoc:method3-suite2"])
        .args(["--over", "edhoc:method3-suite2"])
        .args(["--profile", "loopback", "--device", "nrf52840"])
        .output()
        .expect("run wtlsperf");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for suite in ["ecdhe-ecdsa-p256-ccm8", "psk-ccm8", "method3-suite2"] {
        assert!(stdout.contains(suite), "{stdout}");
    }
    assert!(
        stdout.contains("over loopback on nrf52840") && stdout.contains("4 flights"),
        "{stdout}"
    );
}
