//! `wtlsperf gateway --wap` as an operator runs it: a process with an access log and a
//! statistics file. SIGHUP leaves it serving and reopens the access log (what logrotate
//! expects); the statistics file has every port's counters while it runs; SIGTERM stops
//! it cleanly. Its own loopback address (127.0.37.1) keeps it clear of other gateways.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use wtls::suite::Case;
use wtlsperf_drivers::pki_store::{unix_now, PkiStore};
use wtlsperf_drivers::wap_client::{self, Limits, Socket, UdpPipe, WspMode};
use wtlsperf_drivers::wap_gateway::lab_origin::LabOrigin;
use wtlsperf_wap::wsp::Status;

const IP: &str = "127.0.37.1";

/// The gateway's stderr, line by line, on a channel.
fn lines(stderr: ChildStderr) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for a line containing `needle` (at most 60 s); returns what came before.
fn wait_for(rx: &Receiver<String>, needle: &str) -> Vec<String> {
    let end = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return seen,
            Ok(line) => seen.push(line),
            Err(_) => break,
        }
    }
    panic!("no line with {needle:?} in 60 s; saw {seen:?}")
}

fn get(port: u16, url: &str) -> Status {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let peer: SocketAddr = format!("{IP}:{port}").parse().unwrap();
    let mut pipe = UdpPipe(Socket::new(&sock, peer, None).unwrap());
    let limits = Limits {
        retry: Duration::from_secs(1),
        deadline: Instant::now() + Duration::from_secs(10),
    };
    wap_client::fetch(&mut pipe, WspMode::Connection, url, 1, limits)
        .unwrap()
        .status
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

#[test]
fn sighup_reopens_the_access_log_and_the_gateway_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    PkiStore::create(
        &pki,
        true,
        unix_now().unwrap(),
        &[Case::parse("160p/160p").unwrap()],
    )
    .unwrap();
    let (log, stats) = (
        dir.path().join("access.log"),
        dir.path().join("stats.jsonl"),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(["gateway", "--wap", "--listen", &format!("{IP}:9200")])
        .args([
            "--wap-off",
            "9202",
            "--wap-off",
            "9203",
            "--duration-s",
            "120",
        ])
        .args(["--pki", pki.to_str().unwrap()])
        .args(["--access-log", log.to_str().unwrap()])
        .args([
            "--stats-file",
            stats.to_str().unwrap(),
            "--stats-every-s",
            "0.2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines(child.stderr.take().unwrap());
    wait_for(&rx, "connection-mode WSP on");
    let origin = LabOrigin::start().unwrap();
    assert_eq!(get(9201, &origin.url()), Status::OK);
    assert_eq!(line_count(&log), 1);
    // logrotate moves the file away, then signals.
    std::fs::rename(&log, dir.path().join("access.log.1")).unwrap();
    signal(&child, "HUP");
    wait_for(&rx, "SIGHUP, access log reopened");
    assert!(
        child.try_wait().unwrap().is_none(),
        "SIGHUP ended the gateway"
    );
    assert_eq!(get(9201, &origin.url()), Status::OK);
    assert_eq!(line_count(&dir.path().join("access.log.1")), 1);
    assert_eq!(line_count(&log), 1);
    // A sample of the statistics file shows both ports and the two requests.
    let end = Instant::now() + Duration::from_secs(30);
    let requests = loop {
        let text = std::fs::read_to_string(&stats).unwrap_or_default();
        let last: Option<serde_json::Value> = text
            .lines()
            .last()
            .and_then(|l| serde_json::from_str(l).ok());
        let requests: u64 = last
            .iter()
            .flat_map(|v| v["ports"].as_array().cloned().unwrap_or_default())
            .map(|p| p["service"]["requests"].as_u64().unwrap_or(0))
            .sum();
        if requests >= 2 || Instant::now() > end {
            let ports = last.as_ref().and_then(|v| v["ports"].as_array().cloned());
            assert_eq!(ports.map(|p| p.len()), Some(2), "{text}");
            break requests;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(requests, 2);
    signal(&child, "TERM");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ports"].as_array().map(Vec::len), Some(2));
}
