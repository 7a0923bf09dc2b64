//! Operator input to the gateway, load and flood commands, through the built binary:
//! every operator mistake gives an error that names what was wrong and a
//! non-zero exit status, and nothing panics.

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use wtls::suite::Case;
use wtlsperf_drivers::pki_store::{unix_now, PkiStore};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wtlsperf"));
    c.env_remove("RUST_BACKTRACE").env("RUST_LOG", "warn");
    c
}

/// A small PKI the commands can load.
fn pki() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("wtlsperf-cli-{}", std::process::id()));
        PkiStore::create(
            &dir,
            true,
            unix_now().unwrap(),
            &[Case::parse("160p/160p").unwrap()],
        )
        .unwrap();
        dir
    })
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

/// Asserts a refusal: non-zero status, `needle` in the message, no panic or backtrace.
fn refused(args: &[&str], needle: &str) -> String {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} exited 0: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{args:?}: {err}"
    );
    err
}

#[test]
fn counts_of_zero_are_refused_with_the_option_named() {
    refused(&["load", "--closed", "0"], "--closed");
    refused(&["load", "--workers", "0"], "--workers");
    refused(&["gateway", "--workers", "0"], "--workers");
    refused(&["flood", "--in-process", "--sources", "0"], "--sources");
    refused(&["flood", "--in-process", "--workers", "0"], "--workers");
    refused(
        &["gateway", "--handshake-timeout-ms", "0"],
        "--handshake-timeout-ms",
    );
    refused(&["gateway", "--idle-timeout-ms", "0"], "--idle-timeout-ms");
    refused(&["gateway", "--max-peers", "0"], "--max-peers");
}

/// The shared arguments (`cli_args`) are typed in every command that takes them: a bad
/// case, authentication or packing is refused before anything runs, naming the option.
#[test]
fn shared_arguments_are_refused_with_the_option_named() {
    for command in ["client", "load", "flood", "handshake"] {
        refused(&[command, "--case", "160p"], "--case");
        refused(
            &[command, "--case", "160p/160p", "--auth", "both"],
            "--auth",
        );
    }
    for command in ["client", "gateway", "handshake"] {
        refused(&[command, "--packing", "datagram"], "--packing");
    }
    refused(&["bearer", "--check-case", "x/y"], "--check-case");
    refused(&["bearer", "--check-auth", "both"], "--check-auth");
}

#[test]
fn durations_that_are_not_positive_numbers_are_refused() {
    for bad in ["NaN", "-1", "0", "nonsense"] {
        refused(&["gateway", "--duration-s", bad], "--duration-s");
        refused(&["load", "--duration", bad], "--duration");
    }
    refused(&["load", "--duration", "inf"], "--duration");
    refused(&["load", "--rate", "NaN"], "--rate");
    let err = refused(
        &["flood", "--in-process", "--duration", "1e12"],
        "--duration",
    );
    assert!(err.contains("at most 300"), "{err}");
    refused(&["flood", "--in-process", "--rate", "inf"], "--rate");
}

#[test]
fn a_peer_bound_the_memory_cannot_hold_is_refused() {
    let p = pki().to_str().unwrap();
    let err = refused(
        &["gateway", "--pki", p, "--max-peers", "1000000000000"],
        "--max-peers",
    );
    assert!(err.contains("at most"), "{err}");
}

#[test]
fn a_missing_pki_is_not_created_without_the_flag() {
    let missing = std::env::temp_dir()
        .join(format!("wtlsperf-cli-missing-{}", std::process::id()))
        .join("pki");
    let m = missing.to_str().unwrap();
    let err = refused(&["gateway", "--pki", m, "--duration-s", "1"], m);
    assert!(err.contains("--create-pki"), "{err}");
    refused(&["load", "--pki", m, "--in-process"], m);
    refused(&["flood", "--pki", m, "--in-process"], m);
    assert!(!missing.exists(), "no PKI was created");
}

/// Starts `gateway` with `args` and waits for its "listening" line.
fn start_gateway(args: &[&str]) -> Child {
    let mut child = bin()
        .arg("gateway")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.contains("listening on") => break,
            Some(Ok(_)) => continue,
            other => panic!("the gateway did not start: {other:?}"),
        }
    }
    child
}

/// Ends a gateway the way an operator does (SIGTERM); it must exit 0 with its stats.
fn stop(child: Child) {
    // SAFETY: kill sends a signal to the child process we started and still own.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("datagrams_received"));
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn an_endless_duration_runs_until_stopped_and_a_taken_port_is_refused() {
    let p = pki().to_str().unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    for endless in ["inf", "1e300"] {
        let first = start_gateway(&["--pki", p, "--listen", &listen, "--duration-s", endless]);
        let err = refused(
            &["gateway", "--pki", p, "--listen", &listen],
            "already in use",
        );
        assert!(err.contains("--reuse-port"), "{err}");
        let shared = start_gateway(&["--pki", p, "--listen", &listen, "--reuse-port"]);
        stop(shared);
        stop(first);
    }
}

/// The flood is one driver for every protocol on the spine: each floods its own server
/// in process with its real first flights, and the gateway takes them.
#[test]
fn flood_offers_every_protocol_its_own_first_flights() {
    let p = pki().to_str().unwrap();
    for suite in [
        None,
        Some("dtls1.2:ecdhe-ecdsa-p256-ccm8"),
        Some("edhoc:method3-suite2"),
    ] {
        let mut args = vec![
            "flood",
            "--in-process",
            "--pki",
            p,
            "--rate",
            "50",
            "--duration",
            "0.2",
            "--legit-rate",
            "0",
        ];
        args.extend(suite.iter().flat_map(|s| ["--contender", *s]));
        let out = run(&args);
        assert!(out.status.success(), "{suite:?}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let json = text
            .lines()
            .find(|l| l.starts_with('{'))
            .expect("a JSON report");
        let report: serde_json::Value = serde_json::from_str(json).unwrap();
        // Paced against the clock: how many fit in 0.2 s is not fixed, but never none.
        assert!(
            report["flood_sent"].as_u64().unwrap() > 0,
            "{suite:?}: {text}"
        );
        assert!(
            report["gateway_datagrams_received"].as_u64().unwrap() > 0,
            "{suite:?}: {text}"
        );
    }
    refused(
        &[
            "flood",
            "--in-process",
            "--reflection",
            "--contender",
            "dtls1.2:psk-ccm8",
        ],
        "--reflection",
    );
    refused(
        &["flood", "--in-process", "--contender", "nonsense"],
        "--contender",
    );
}

#[test]
fn flood_reports_reflection_with_and_without_the_limiter() {
    let p = pki().to_str().unwrap();
    let out = run(&[
        "flood",
        "--in-process",
        "--reflection",
        "--pki",
        p,
        "--rate",
        "50",
        "--duration",
        "0.2",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    for line in [
        "reflection (fresh, limiter off)",
        "reflection (duplicate, limiter off)",
        "reflection (fresh, limiter 4096 B/s per address",
    ] {
        assert!(text.contains(line), "{text}");
    }
}
