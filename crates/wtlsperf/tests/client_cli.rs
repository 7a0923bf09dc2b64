//! `wtlsperf client` as an operator runs it: the built binary against a gateway on
//! loopback. The options that make it a test tool for other WAP gateways (`--cipher`,
//! `--trusted-ids`, `--key-refresh`, `--wsp-get`) and every operator-input error
//! (docs/security.md, "Robustness tests"): each error names the option or file, exits non-zero, and never
//! panics.
//!
//! `wtlsperf gateway` echoes application data, so a WSP Get sent to it comes back as the
//! request. To see a real Reply, [`WspResponder`] is a tiny WAP gateway written over the
//! engine: it answers every Get with a WSP Reply (status 200, WML), as Kannel's wapbox
//! does on port 9202.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use wtls::handshake::{Event, ServerConfig, ServerConnection};
use wtls::probe::Probe;
use wtls::suite::Case;
use wtlsperf_drivers::gateway::{gateway_options, spawn_gateway, GatewayConfig, GatewayHandle};
use wtlsperf_drivers::pki_store::{unix_now, PkiStore};
use wtlsperf_drivers::setup::{self, ClientAuth};
use wtlsperf_drivers::wsp;

const RSA: &str = "rsa1024/rsa1024";
const WML: &[u8] = b"<?xml version=\"1.0\"?><wml><card><p>hello</p></card></wml>";

fn pki_dir() -> PathBuf {
    std::env::temp_dir().join(format!("wtlsperf-client-cli-{}", std::process::id()))
}

/// A PKI with the cases these tests use, issued once per test binary.
fn store() -> &'static PkiStore {
    static STORE: OnceLock<PkiStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let cases = [Case::parse(RSA).unwrap(), Case::parse("160p/160p").unwrap()];
        PkiStore::create(&pki_dir(), true, unix_now().unwrap(), &cases).unwrap()
    })
}

/// `wtlsperf gateway --allow-weak` in-process: every suite, anonymous ones included.
fn echo_gateway() -> GatewayHandle {
    let opts = gateway_options(true, Default::default());
    let server = setup::gateway_server_config(store(), ClientAuth::Optional, &opts).unwrap();
    spawn_gateway(GatewayConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(server),
    ))
    .unwrap()
}

/// A WAP gateway in miniature: WTLS by the engine, and a WSP Reply for every Get.
struct WspResponder {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<String>>>,
}

impl WspResponder {
    fn start() -> WspResponder {
        let opts = gateway_options(true, Default::default());
        let creds = store().case(&Case::parse(RSA).unwrap()).unwrap();
        let server = Arc::new(setup::case_server_config(&creds, ClientAuth::None, &opts));
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        // The stop flag is looked at between reads.
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let addr = sock.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || serve(&sock, &server, &flag));
        WspResponder {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the responder and returns the URIs it was asked for.
    fn finish(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap()
    }
}

fn serve(sock: &UdpSocket, server: &Arc<ServerConfig>, stop: &AtomicBool) -> Vec<String> {
    let mut conns: HashMap<SocketAddr, ServerConnection> = HashMap::new();
    let mut asked = Vec::new();
    let mut buf = vec![0u8; 65_535];
    // Bounded: the tests finish within seconds; this is the backstop.
    let end = std::time::Instant::now() + Duration::from_secs(120);
    while !stop.load(Ordering::SeqCst) && std::time::Instant::now() < end {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let conn = conns
            .entry(from)
            .or_insert_with(|| ServerConnection::new(server.clone(), Probe::off(), setup::now()));
        let out = conn.handle_datagram(&buf[..n], setup::now());
        for d in &out.datagrams {
            sock.send_to(d, from).unwrap();
        }
        for e in &out.events {
            let Event::ApplicationData(pdu) = e else {
                continue;
            };
            // Like a WAP gateway, ignore what is not a WSP Get.
            let Ok((tid, wsp::Pdu::Get { uri, .. })) = wsp::decode_connectionless(pdu) else {
                continue;
            };
            asked.push(uri);
            let reply = wsp::Pdu::Reply {
                status: wsp::Status::from_http(200).unwrap(),
                content_type: wsp::ContentType::well_known("text/vnd.wap.wml").unwrap(),
                headers: wsp::Headers::default(),
                body: WML.to_vec(),
            };
            let sealed = conn
                .seal_application_data(&wsp::encode_connectionless(tid, &reply))
                .unwrap();
            sock.send_to(&sealed, from).unwrap();
        }
    }
    asked
}

fn wtlsperf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An operator error: non-zero exit, the message names `what`, no panic or backtrace.
fn assert_clean_error(out: &Output, what: &str) {
    let (stdout, stderr) = text(out);
    assert!(!out.status.success(), "succeeded: {stdout}{stderr}");
    assert!(stderr.contains(what), "{what:?} not named: {stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("stack backtrace"),
        "{stderr}"
    );
}

#[test]
fn kannel_style_wsp_get_completes_with_status_200_without_a_pki() {
    let responder = WspResponder::start();
    let addr = responder.addr.to_string();
    let no_pki = std::env::temp_dir().join(format!("wtlsperf-no-pki-{}", std::process::id()));
    let url = "http://127.0.0.1:8080/hello.wml";
    for cipher in ["RC5_CBC/SHA", "DES_CBC/SHA"] {
        let out = wtlsperf(&[
            "client",
            "--connect",
            &addr,
            "--anonymous",
            "--case",
            RSA,
            "--cipher",
            cipher,
            "--trusted-ids",
            "none",
            "--key-refresh",
            "2",
            "--pki",
            no_pki.to_str().unwrap(),
            "--wsp-get",
            url,
        ]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{cipher}: {stdout}\n{stderr}");
        let expected = format!(
            "WSP GET {url}: status 200, content type text/vnd.wap.wml, {} B body",
            WML.len()
        );
        assert!(stdout.contains(&expected), "{cipher}: {stdout}");
        assert_eq!(
            stderr.contains("is weak"),
            cipher == "DES_CBC/SHA",
            "{stderr}"
        );
    }
    assert!(!no_pki.exists(), "an anonymous client created a PKI");
    assert_eq!(responder.finish(), vec![url.to_string(); 2]);
}

#[test]
fn a_wap_gateway_that_does_not_echo_points_at_wsp_get() {
    let responder = WspResponder::start();
    let out = wtlsperf(&[
        "client",
        "--connect",
        &responder.addr.to_string(),
        "--anonymous",
        "--case",
        RSA,
        "--trusted-ids",
        "none",
        // Ample for a loopback handshake on a loaded machine; the echo is then
        // awaited until twice this from the start.
        "--timeout-ms",
        "1500",
        "--rto-ms",
        "200",
    ]);
    assert_clean_error(&out, "--wsp-get URL");
    assert!(responder.finish().is_empty());
}

#[test]
fn a_wsp_get_to_the_echo_gateway_is_reported_as_echoed() {
    let gw = echo_gateway();
    let out = wtlsperf(&[
        "client",
        "--connect",
        &gw.local_addr().to_string(),
        "--anonymous",
        "--case",
        RSA,
        "--trusted-ids",
        "none",
        "--wsp-get",
        "http://x/",
    ]);
    gw.shutdown();
    assert_clean_error(&out, "echoed the WSP GET back");
}

#[test]
fn several_ciphers_resumption_and_echo_work() {
    let gw = echo_gateway();
    let pki = pki_dir();
    store();
    let out = wtlsperf(&[
        "client",
        "--connect",
        &gw.local_addr().to_string(),
        "--pki",
        pki.to_str().unwrap(),
        "--case",
        RSA,
        "--cipher",
        "RC5_CBC_56/SHA",
        "--cipher",
        "RC5_CBC/SHA",
        "--trusted-ids",
        "key-hash",
        "--count",
        "2",
        "--resume",
    ]);
    gw.shutdown();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("handshake 2 Abbreviated"), "{stdout}");
    assert_eq!(stdout.matches("echo ok").count(), 2, "{stdout}");
    assert!(stderr.contains("RC5_CBC_56/SHA is weak"), "{stderr}");
}

#[test]
fn bad_option_values_are_refused_with_their_name() {
    for (args, what) in [
        (&["--count", "0"][..], "--count"),
        (&["--cipher", "RC4/SHA"], "RC5_CBC_56"),
        (&["--cipher", "RC5_CBC"], "--cipher"),
        (&["--trusted-ids", "all"], "--trusted-ids"),
        (&["--key-refresh", "16"], "--key-refresh"),
        (&["--rto-ms", "0"], "--rto-ms"),
        (&["--timeout-ms", "0"], "--timeout-ms"),
        (&["--wsp-get", ""], "--wsp-get"),
        (&["--case", "rsa1024/999x"], "--case"),
        (&["--anonymous", "--auth", "mutual"], "--auth mutual"),
        (&["--connect", "[::1]:9202", "--pcap", "x.pcap"], "IPv4"),
    ] {
        let mut all = vec!["client"];
        all.extend_from_slice(args);
        assert_clean_error(&wtlsperf(&all), what);
    }
}

#[test]
fn a_missing_pki_is_named_and_not_created() {
    let missing = std::env::temp_dir().join(format!("wtlsperf-missing-{}/pki", std::process::id()));
    let out = wtlsperf(&[
        "client",
        "--connect",
        "127.0.0.1:9",
        "--pki",
        missing.to_str().unwrap(),
    ]);
    assert_clean_error(&out, &format!("--pki {}", missing.display()));
    assert!(!missing.exists() && !missing.parent().unwrap().exists());
}

/// A loopback port with nothing behind it.
fn closed_port() -> String {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.local_addr().unwrap().to_string()
}

#[test]
fn a_closed_port_is_reported_as_refused() {
    let port = closed_port();
    let out = wtlsperf(&[
        "client",
        "--connect",
        &port,
        "--anonymous",
        "--trusted-ids",
        "none",
        "--case",
        RSA,
    ]);
    assert_clean_error(&out, "ECONNREFUSED");
}

#[test]
fn silence_is_reported_as_no_answer() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let out = wtlsperf(&[
        "client",
        "--connect",
        &silent.local_addr().unwrap().to_string(),
        "--anonymous",
        "--trusted-ids",
        "none",
        "--case",
        RSA,
        "--rto-ms",
        "5",
    ]);
    assert_clean_error(&out, "no answer from");
    let (_, stderr) = text(&out);
    assert!(!stderr.contains("handshake_failure"), "{stderr}");
    // The ClientHello and its retransmissions did arrive.
    silent.set_nonblocking(true).unwrap();
    assert!(silent.recv(&mut [0u8; 512]).is_ok());
}

#[test]
fn pcap_errors_name_the_file_and_the_capture_has_real_addresses() {
    let gw = echo_gateway();
    let addr = gw.local_addr().to_string();
    let anonymous = ["--anonymous", "--trusted-ids", "none", "--case", RSA];
    let run = |pcap: &str| {
        let mut args = vec!["client", "--connect", &addr, "--pcap", pcap];
        args.extend_from_slice(&anonymous);
        wtlsperf(&args)
    };
    assert_clean_error(&run("/dev/full"), "/dev/full");
    let missing = "/nonexistent-wtlsperf-dir/hs.pcap";
    assert_clean_error(&run(missing), missing);
    let path = pki_dir().with_extension("pcap");
    let out = run(path.to_str().unwrap());
    gw.shutdown();
    assert!(out.status.success(), "{:?}", text(&out));
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    // First record: 24-byte file header, 16-byte record header, then IPv4: the source
    // address at offset 12 of the IP header.
    assert!(bytes.len() > 24 + 16 + 20);
    assert_eq!(&bytes[24 + 16 + 12..24 + 16 + 16], &[127, 0, 0, 1]);
}

#[test]
fn a_closed_stdout_ends_the_client_quietly() {
    let gw = echo_gateway();
    let (reader, writer) = std::io::pipe().unwrap();
    // Nobody reads: the first line already meets a broken pipe, as after `| head -0`.
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(["client", "--connect", &gw.local_addr().to_string()])
        .args(["--anonymous", "--trusted-ids", "none", "--case", RSA])
        .args(["--count", "3"])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    gw.shutdown();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    // Ended by SIGPIPE, like `yes | head -1`.
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
}

/// Kannel 1.4.5 refuses with an alert that carries no sequence number and checksum 0000:
/// the client cannot authenticate it, so it must not end the handshake on it (anyone
/// can forge one), but when the gateway then goes quiet the alert is the explanation.
#[test]
fn an_unauthenticated_alert_then_silence_is_reported_with_the_alert() {
    let kannel = UdpSocket::bind("127.0.0.1:0").unwrap();
    // Short reads only so that the stop flag is looked at; how long the client takes to
    // start or to retransmit decides nothing.
    kannel
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let addr = kannel.local_addr().unwrap().to_string();
    let client_done = Arc::new(AtomicBool::new(false));
    let done = client_done.clone();
    let fake = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        // Everything the client sent, read until it has exited and its datagrams are
        // drained (they are all queued on this socket by then).
        let mut next = || loop {
            match kannel.recv_from(&mut buf) {
                Ok((_, from)) => return Some(from),
                Err(_) if done.load(Ordering::SeqCst) => return None,
                Err(_) => {}
            }
        };
        let client = next().expect("the client sent a ClientHello");
        // L bit, no S bit, content type alert; fatal handshake_failure, checksum 0.
        let alert = [0x82, 0x00, 0x06, 3, 40, 0, 0, 0, 0];
        kannel.send_to(&alert, client).unwrap();
        // Then silence: swallow the retransmissions.
        let mut retransmissions = 0;
        while next().is_some() {
            retransmissions += 1;
        }
        retransmissions
    });
    let out = wtlsperf(&[
        "client",
        "--connect",
        &addr,
        "--anonymous",
        "--trusted-ids",
        "none",
        "--case",
        RSA,
        // Retransmissions over 1.5 s: the alert arrives well inside, even on a loaded
        // machine.
        "--rto-ms",
        "50",
    ]);
    client_done.store(true, Ordering::SeqCst);
    assert_clean_error(
        &out,
        "sent handshake_failure (unauthenticated), then stopped answering",
    );
    // The alert did not end the handshake: the client kept retransmitting.
    assert!(fake.join().unwrap() > 0);
}
