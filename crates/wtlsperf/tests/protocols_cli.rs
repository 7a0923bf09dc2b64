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
    let (ok, err) = compare(&["--suite", "rsa-kx", "--no-peers"]);
    assert!(
        !ok && err.contains("--suite") && err.contains("method3-suite2"),
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
