//! The WAP stack against itself and against Kannel 1.4.5, on loopback:
//! - `wtlsperf client` fetches a page through `wtlsperf gateway --wap` on all four WAP
//!   ports (connectionless and connection mode, bare and over WTLS), and the gateway
//!   answers 502 and 504 when the origin fails or is slow;
//! - our client against Kannel's wapbox on its unsecured ports 9200 and 9201 (Debian's
//!   Kannel has no WTLS: its libcrypto lacks RC5);
//! - Kannel's own WTP/WSP test client `fakewap` against our connection-mode port;
//! - Kannel's `decompile` on the WMLC our compiler makes of Kannel's `hello.wml`.
//!
//! Kannel comes from Debian's `kannel` and `kannel-extras` packages (scripts/setup.sh).
//! Without them these tests fail when `CI=true` and skip with a message otherwise.
//! The origin is a small HTTP server in the test. Every daemon is started here with a
//! temporary configuration and stopped by its pid.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wtls::suite::Case;
use wtlsperf_drivers::gateway::gateway_options;
use wtlsperf_drivers::pki_store::{unix_now, PkiStore};
use wtlsperf_drivers::setup::{self, ClientAuth};
use wtlsperf_drivers::wap_client::WspMode;
use wtlsperf_drivers::wap_gateway::{self, WapGateway, WapGatewayConfig, ROLES};
use wtlsperf_wap::wbxml::wml;
use wtlsperf_wap::wtp::{Timers, WtpBearer};

const RSA: &str = "rsa1024/rsa1024";
const PAGE: &str =
    "<?xml version=\"1.0\"?>\n<!DOCTYPE wml PUBLIC \"-//WAPFORUM//DTD WML 1.1//EN\" \
\"http://www.wapforum.org/DTD/wml_1.1.xml\">\n<wml><card id=\"start\" title=\"Lab\"><p>A page \
from the origin.</p></card></wml>\n";
const KANNEL_TEST: &str = "/usr/lib/kannel/test";
const BEARERBOX: &str = "/usr/sbin/bearerbox";
const WAPBOX: &str = "/usr/sbin/wapbox";

/// Whether a Kannel program these tests need is installed. Missing, it skips the test
/// with a message, or fails it when CI is true or `WTLSPERF_REQUIRE_KANNEL` is set (the
/// rule of `wtlsperf_testtools`; Kannel's test programs are not on PATH, so the file is
/// looked for where Debian installs it).
fn have(tool: &str) -> bool {
    if Path::new(tool).exists() {
        return true;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
    let switch = wtlsperf_testtools::switch("kannel");
    assert!(
        !ci && std::env::var_os(&switch).is_none(),
        "{tool} is required (CI is true or {switch} is set): install Debian's kannel and \
         kannel-extras with {}",
        wtlsperf_testtools::SETUP_SCRIPT
    );
    eprintln!(
        "SKIPPED: {tool} not installed (install Debian's kannel and kannel-extras with {})",
        wtlsperf_testtools::SETUP_SCRIPT
    );
    false
}

fn pki_dir() -> PathBuf {
    std::env::temp_dir().join(format!("wtlsperf-wap-{}", std::process::id()))
}

fn store() -> &'static PkiStore {
    static STORE: OnceLock<PkiStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let cases = [Case::parse(RSA).unwrap()];
        PkiStore::create(&pki_dir(), true, unix_now().unwrap(), &cases).unwrap()
    })
}

/// A small HTTP/1.0 origin: `/page.wml` is [`PAGE`] as WML, `/slow` answers after 3 s,
/// anything else 404. Stops when dropped (and after two minutes in any case).
struct Origin {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Origin {
    fn start() -> Origin {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let end = Instant::now() + Duration::from_secs(120);
            while !flag.load(Ordering::SeqCst) && Instant::now() < end {
                match listener.accept() {
                    Ok((stream, _)) => {
                        std::thread::spawn(move || serve_http(stream));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Origin {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve_http(mut stream: TcpStream) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&request).into_owned();
    let path = text.split_whitespace().nth(1).unwrap_or("/");
    let (status, content_type, body) = match path {
        "/page.wml" => ("200 OK", "text/vnd.wap.wml", PAGE.to_string()),
        "/slow" => {
            std::thread::sleep(Duration::from_secs(3));
            ("200 OK", "text/plain", "late".to_string())
        }
        "/post" => {
            let received = read_body(&mut stream, &text, &request);
            ("200 OK", "text/plain", format!("{received} bytes"))
        }
        // The same count as a deck: what a gateway passes to a browser that accepts
        // compiled WML and not text/plain (Kannel answers the latter 406).
        "/post.wml" => {
            let received = read_body(&mut stream, &text, &request);
            ("200 OK", "text/vnd.wap.wml", posted_deck(received))
        }
        _ => match path
            .strip_prefix("/deck-")
            .and_then(|p| p.strip_suffix(".wml"))
            .and_then(|kb| kb.parse().ok())
        {
            Some(kb) => ("200 OK", "text/vnd.wap.wml", deck(kb)),
            None => ("404 Not Found", "text/plain", "no such page".to_string()),
        },
    };
    let answer = format!(
        "HTTP/1.0 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes());
}

/// The length of a request's body (by its Content-Length), read to the end.
fn read_body(stream: &mut TcpStream, head: &str, request: &[u8]) -> usize {
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    let start = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let mut got = request.len() - start;
    let mut buf = [0u8; 4096];
    while got < length {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    got
}

/// The deck `/post.wml` answers: how many bytes of body the origin read.
fn posted_deck(received: usize) -> String {
    format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE wml PUBLIC \"-//WAPFORUM//DTD WML 1.1//EN\" \
         \"http://www.wapforum.org/DTD/wml_1.1.xml\">\n<wml><card id=\"posted\">\
         <p>{received} bytes</p></card></wml>\n"
    )
}

/// The lab origin's deck of at least `kb` KiB of text.
fn deck(kb: usize) -> String {
    wap_gateway::lab_origin::sized_deck(kb)
}

fn last_line(kb: usize) -> String {
    let text = deck(kb);
    let start = text.rfind("<p>").unwrap();
    text[start..text.rfind("</p>").unwrap() + 4].to_string()
}

fn wtlsperf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(args)
        .output()
        .unwrap()
}

/// `wtlsperf client` fetching `url` from `connect`; returns stdout after checking success.
fn fetch(connect: SocketAddr, mode: WspMode, secure: bool, url: &str) -> String {
    fetch_with(connect, mode, secure, url, &[])
}

fn fetch_with(
    connect: SocketAddr,
    mode: WspMode,
    secure: bool,
    url: &str,
    extra: &[&str],
) -> String {
    let addr = connect.to_string();
    let mode = match mode {
        WspMode::Connectionless => "connectionless",
        WspMode::Connection => "connection",
    };
    let mut args = vec![
        "client",
        "--connect",
        &addr,
        "--wsp-mode",
        mode,
        "--wsp-get",
        url,
        "--timeout-ms",
        "15000",
    ];
    if secure {
        args.extend(["--anonymous", "--case", RSA, "--trusted-ids", "none"]);
    } else {
        args.push("--no-wtls");
    }
    args.extend(extra);
    let out = wtlsperf(&args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{mode} secure={secure}: {stdout}\n{stderr}"
    );
    stdout
}

fn our_gateway(ip: &str, origin_timeout: Duration) -> WapGateway {
    let opts = gateway_options(true, Default::default());
    let creds = store().case(&Case::parse(RSA).unwrap()).unwrap();
    let server = setup::case_server_config(&creds, ClientAuth::None, &opts);
    wap_gateway::spawn(WapGatewayConfig {
        ip: ip.parse::<IpAddr>().unwrap(),
        base_port: 9200,
        roles: ROLES.to_vec(),
        server: Arc::new(server),
        origin_timeout,
        timers: Timers::default(),
        limits: wap_gateway::WapLimits::default(),
        access_log: None,
        port_timers: Vec::new(),
    })
    .unwrap()
}

#[test]
fn our_client_fetches_through_our_gateway_on_all_four_ports() {
    let origin = Origin::start();
    let gateway = our_gateway("127.0.3.1", Duration::from_secs(10));
    let url = origin.url("/page.wml");
    for (role, addr) in gateway.addrs.clone() {
        let out = fetch(addr, role.mode, role.secure, &url);
        assert!(
            out.contains(&format!(
                "WSP GET {url}: status 200, content type application/vnd.wap.wmlc"
            )),
            "{role:?}: {out}"
        );
        assert!(
            out.contains("<p>A page from the origin.</p>"),
            "{role:?}: {out}"
        );
        assert_eq!(
            out.contains("WSP Connect: session"),
            role.mode == WspMode::Connection
        );
    }
    // The job log covers the WAP work: handshake datagrams on the secure ports, WSP/WTP
    // datagrams, and one Reply job per page.
    // The gateway logs a Reply just after sending it, so the last page can reach the
    // client first: wait for the fourth Reply (bounded), not for a duration.
    let mut jobs = gateway.take_jobs();
    let replies = |jobs: &[wap_gateway::WapJob]| {
        jobs.iter()
            .filter(|j| j.kind == wap_gateway::JobKind::Reply)
            .count()
    };
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while replies(&jobs) < 4 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
        jobs.extend(gateway.take_jobs());
    }
    let count = |k: wap_gateway::JobKind| jobs.iter().filter(|j| j.kind == k).count();
    assert!(count(wap_gateway::JobKind::Handshake) >= 2, "{jobs:?}");
    assert!(count(wap_gateway::JobKind::Request) >= 4, "{jobs:?}");
    assert_eq!(count(wap_gateway::JobKind::Reply), 4, "{jobs:?}");
    assert!(jobs.iter().all(|j| j.end_ns >= j.start_ns));
    let reports = gateway.shutdown().ports;
    assert_eq!(reports.len(), 4);
    for r in &reports {
        assert_eq!(
            (
                r.service.requests,
                r.service.replies - r.service.sessions_opened
            ),
            (1, 1),
            "{r:?}"
        );
    }
}

#[test]
fn keylog_records_each_handshake_in_nss_format() {
    let origin = Origin::start();
    let gateway = our_gateway("127.0.3.5", Duration::from_secs(10));
    let addr = gateway.addr(WspMode::Connection, true).unwrap();
    let dir = temp_dir("keylog");
    let keylog = dir.join("keys.txt");
    let keylog_arg = keylog.to_str().unwrap();
    let url = origin.url("/page.wml");
    fetch_with(
        addr,
        WspMode::Connection,
        true,
        &url,
        &["--keylog", keylog_arg, "--count", "2"],
    );
    let text = std::fs::read_to_string(&keylog).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for line in &lines {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields[0], "CLIENT_RANDOM", "{line}");
        // A WTLS client random is 16 octets and its master secret 20.
        assert_eq!((fields[1].len(), fields[2].len()), (32, 40), "{line}");
        assert!(fields[1..]
            .iter()
            .all(|f| f.chars().all(|c| c.is_ascii_hexdigit())));
    }
    assert_ne!(
        lines[0], lines[1],
        "each handshake has its own random and secret"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&keylog).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the key log holds secrets");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn origin_failure_is_502_and_slowness_504() {
    let origin = Origin::start();
    let gateway = our_gateway("127.0.3.3", Duration::from_millis(500));
    let addr = gateway.addr(WspMode::Connection, false).unwrap();
    let slow = origin.url("/slow");
    let out = fetch(addr, WspMode::Connection, false, &slow);
    assert!(out.contains("status 504"), "{out}");
    // A port where nothing listens: the origin cannot be reached.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let gone = format!("http://{closed}/page.wml");
    let plain = gateway.addr(WspMode::Connectionless, false).unwrap();
    let out = fetch(plain, WspMode::Connectionless, false, &gone);
    assert!(out.contains("status 502"), "{out}");
    let out = fetch(
        plain,
        WspMode::Connectionless,
        false,
        &origin.url("/missing"),
    );
    assert!(out.contains("status 404"), "{out}");
    drop(gateway);
}

/// A daemon started by a test and stopped by its pid when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (at most 30 s) until `file` contains `needle`.
fn wait_for_line(file: &Path, needle: &str) {
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        if std::fs::read_to_string(file).is_ok_and(|t| t.contains(needle)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "{} never said {needle:?}:\n{}",
        file.display(),
        std::fs::read_to_string(file).unwrap_or_default()
    );
}

fn free_tcp_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Kannel's bearerbox and wapbox with WDP on `ip` (ports 9200 and 9201).
fn kannel(ip: &str, dir: &Path) -> (Daemon, Daemon) {
    let conf = dir.join("kannel.conf");
    let bearer_log = dir.join("bearerbox.log");
    let wap_log = dir.join("wapbox.log");
    std::fs::write(
        &conf,
        format!(
            "group = core\nadmin-port = {}\nadmin-password = test\nadmin-allow-ip = \"127.0.0.1\"\n\
             wapbox-port = {}\nwdp-interface-name = \"{ip}\"\nbox-allow-ip = \"127.0.0.1\"\n\
             udp-allow-ip = \"127.0.0.1\"\nlog-file = \"{}\"\nlog-level = 0\n\n\
             group = wapbox\nbearerbox-host = \"127.0.0.1\"\nlog-file = \"{}\"\nlog-level = 0\n\
             syslog-level = none\n",
            free_tcp_port(),
            free_tcp_port(),
            bearer_log.display(),
            wap_log.display()
        ),
    )
    .unwrap();
    let start = |bin: &str| {
        Daemon(
            Command::new(bin)
                .arg(&conf)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    };
    let bearerbox = start(BEARERBOX);
    wait_for_line(&bearer_log, "starting wapbox connection module");
    let wapbox = start(WAPBOX);
    wait_for_line(&wap_log, "Connected to bearerbox");
    (bearerbox, wapbox)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wtlsperf-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn our_client_fetches_through_kannel_wapbox_on_9200_and_9201() {
    if !have(BEARERBOX) || !have(WAPBOX) {
        return;
    }
    let origin = Origin::start();
    let dir = temp_dir("kannel");
    let ip = "127.0.3.2";
    let (_bearerbox, _wapbox) = kannel(ip, &dir);
    let url = origin.url("/page.wml");
    for (port, mode) in [(9200, WspMode::Connectionless), (9201, WspMode::Connection)] {
        let addr: SocketAddr = format!("{ip}:{port}").parse().unwrap();
        let out = fetch(addr, mode, false, &url);
        // Kannel compiled the page because the browser accepts WMLC and not WML text.
        assert!(
            out.contains(&format!(
                "WSP GET {url}: status 200, content type application/vnd.wap.wmlc"
            )),
            "{mode:?}: {out}"
        );
        assert!(
            out.contains("<p>A page from the origin.</p>"),
            "{mode:?}: {out}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kannel's fakewap, an origin and our gateway on `ip` with its connection-mode port's
/// address; `None` (the test skips) without fakewap.
fn fakewap_and_our_gateway(ip: &str) -> Option<(String, Origin, WapGateway, SocketAddr)> {
    let fakewap = format!("{KANNEL_TEST}/fakewap");
    if !have(&fakewap) {
        return None;
    }
    let origin = Origin::start();
    let gateway = our_gateway(ip, Duration::from_secs(10));
    let addr = gateway.addr(WspMode::Connection, false).unwrap();
    Some((fakewap, origin, gateway, addr))
}

#[test]
fn kannel_fakewap_completes_against_our_connection_mode_port() {
    let Some((fakewap, origin, gateway, addr)) = fakewap_and_our_gateway("127.0.3.4") else {
        return;
    };
    let out = Command::new(&fakewap)
        .args(["-g", &addr.ip().to_string(), "-p", &addr.port().to_string()])
        .args(["-m", "3", "-i", "0.05"])
        .arg(origin.url("/page.wml"))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert_eq!(
        log.matches("Received WSP Reply with status code 200")
            .count(),
        3,
        "{log}"
    );
    assert!(log.contains("made total 3 transactions"), "{log}");
    let reports = gateway.shutdown().ports;
    let connection = reports.iter().find(|r| r.port == 9201).unwrap();
    assert_eq!(connection.service.requests, 3, "{connection:?}");
    assert_eq!(connection.service.sessions_opened, 3, "{connection:?}");
}

#[test]
fn kannel_decompile_reads_our_wmlc_of_its_hello_wml() {
    let decompile = format!("{KANNEL_TEST}/decompile");
    let hello = format!("{KANNEL_TEST}/hello.wml");
    if !have(&decompile) || !have(&hello) {
        return;
    }
    let text = std::fs::read_to_string(&hello).unwrap();
    let wmlc = wml::compile(&text).unwrap();
    let mut child = Command::new(&decompile)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&wmlc).unwrap();
    let out = child.wait_with_output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Kannel's decompiler indents differently (white space around text too); without
    // white space the two prints are the same document.
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    assert_eq!(
        squash(&printed),
        squash(&wml::print(&wml::parse(&text).unwrap())),
        "{printed}"
    );
    assert!(
        printed.contains("-//WAPFORUM//DTD WML 1.1//EN"),
        "{printed}"
    );
}

/// A WAP port that is switched off is not bound.
#[test]
fn wap_off_leaves_a_port_closed() {
    let args = wap_gateway::WapPorts {
        wap_off: vec![9202, 9203],
        wap_base_port: 9200,
        origin_timeout_ms: 1000,
        limits: wap_gateway::WapLimits::default(),
        access_log: None,
        stats_file: None,
        wtp_bearer: Vec::new(),
        wtp_retry_ms: Vec::new(),
        wtp_group_retry_ms: Vec::new(),
        wtp_ack_ms: Vec::new(),
        wtp_max_retransmissions: Vec::new(),
        wtp_mpl_ms: Vec::new(),
    };
    let roles = wap_gateway::open_roles(&args).unwrap();
    assert_eq!(roles.len(), 2);
    assert!(roles.iter().all(|r| !r.secure));
    let bad = wap_gateway::WapPorts {
        wap_off: vec![80],
        ..args.clone()
    };
    assert!(wap_gateway::open_roles(&bad)
        .unwrap_err()
        .to_string()
        .contains("--wap-off 80"));
    let all = wap_gateway::WapPorts {
        wap_off: vec![9200, 9201, 9202, 9203],
        ..args
    };
    assert!(wap_gateway::open_roles(&all).is_err());
}

/// WTP's timers: both connection-mode ports, or one by its number; errors name the option.
#[test]
fn wtp_timers_are_set_for_both_connection_ports_or_one() {
    let setting = |s: &str| s.parse::<wap_gateway::PortSetting>().unwrap();
    let args = wap_gateway::WapPorts {
        wap_off: vec![],
        wap_base_port: 9200,
        origin_timeout_ms: 1000,
        limits: wap_gateway::WapLimits::default(),
        access_log: None,
        stats_file: None,
        wtp_bearer: vec!["9203=gsm-sms".parse().unwrap()],
        wtp_retry_ms: vec![setting("9203=5000"), setting("2000")],
        wtp_group_retry_ms: vec![setting("9201=6000")],
        wtp_ack_ms: vec![setting("9201=300")],
        wtp_max_retransmissions: vec![setting("4")],
        wtp_mpl_ms: vec![setting("9201=500")],
    };
    let timers = wap_gateway::port_timers(&args).unwrap();
    let of = |offset: u16| timers.iter().find(|(o, _)| *o == offset).unwrap().1;
    let ms = 1_000_000;
    // The port's own value wins over the one for both, whatever their order.
    assert_eq!(of(1).retry_interval_ns, 2000 * ms);
    assert_eq!(of(3).retry_interval_ns, 5000 * ms);
    assert_eq!(of(1).ack_interval_ns, 300 * ms);
    // 9203 starts from WAP-224 Appendix A's GSM SMS table (hold-on Ack 10 s, packet
    // groups 45 s, W 300 s), 9201 from the IP bearer's; single values change after.
    assert_eq!(of(3).ack_interval_ns, 10_000 * ms);
    assert_eq!(of(3).group_retry_interval_ns, 45_000 * ms);
    assert_eq!(of(1).group_retry_interval_ns, 6_000 * ms);
    assert_eq!(of(3).wait_timeout_ns, 300_000 * ms);
    assert_eq!(of(1).wait_timeout_ns, Timers::default().wait_timeout_ns);
    assert_eq!(
        (of(1).max_retransmissions, of(3).max_retransmissions),
        (4, 4)
    );
    // The MPL: 9201's own, 9203's the GSM SMS table's maximum round trip (40 s).
    assert_eq!((of(1).mpl_ns, of(3).mpl_ns), (500 * ms, 40_000 * ms));
    let connectionless = wap_gateway::WapPorts {
        wtp_retry_ms: vec![setting("9200=100")],
        ..args.clone()
    };
    let err = wap_gateway::port_timers(&connectionless)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--wtp-retry-ms 9200=100"), "{err}");
    let zero = wap_gateway::WapPorts {
        wtp_ack_ms: vec![setting("0")],
        ..args.clone()
    };
    let err = wap_gateway::port_timers(&zero).unwrap_err().to_string();
    assert!(err.contains("--wtp-ack-ms 0"), "{err}");
    assert!("9201=x".parse::<wap_gateway::PortSetting>().is_err());
    let gprs = "gprs".parse::<wap_gateway::PortSetting<WtpBearer>>();
    assert!(gprs.unwrap_err().contains("gsm-sms, gsm-ussd or ip"));
    let bearer_on_9200 = wap_gateway::WapPorts {
        wtp_bearer: vec!["9200=ip".parse().unwrap()],
        ..args
    };
    let err = wap_gateway::port_timers(&bearer_on_9200)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--wtp-bearer 9200=ip"), "{err}");
}

/// Decks of 1, 10 and 30 KB from Kannel's wapbox to our client: Kannel segments the
/// result (WTP SAR, 1400-octet packets in groups of 3), our initiator reassembles it.
#[test]
fn our_client_reassembles_1_to_30_kb_decks_from_kannel_wapbox() {
    if !have(BEARERBOX) || !have(WAPBOX) {
        return;
    }
    let origin = Origin::start();
    let dir = temp_dir("kannel-sar");
    let ip = "127.0.3.6";
    let (_bearerbox, _wapbox) = kannel(ip, &dir);
    let addr: SocketAddr = format!("{ip}:9201").parse().unwrap();
    for kb in [1, 10, 30] {
        let url = origin.url(&format!("/deck-{kb}.wml"));
        let out = fetch(addr, WspMode::Connection, false, &url);
        assert!(
            out.contains(&format!("WSP GET {url}: status 200")),
            "{kb} KB: {out}"
        );
        assert!(
            out.contains(&last_line(kb)),
            "{kb} KB: the last paragraph: {out}"
        );
        let body: usize = out
            .split(" B body")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        // Kannel's WMLC of the deck, larger than one 1400-octet packet from 10 KB on.
        assert!(kb == 1 || body > 1400 * 3, "{kb} KB: {body} B");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kannel's fakewap against our connection-mode port, both directions of WTP SAR: it
/// fetches decks of 1, 10 and 30 KB (our responder segments the result, fakewap
/// reassembles and acknowledges each group) and posts bodies of the same sizes (fakewap
/// segments its invoke in groups of 4, our responder acknowledges each group).
#[test]
fn fakewap_gets_and_posts_1_to_30_kb_through_our_wtp_sar() {
    let Some((fakewap, origin, _gateway, addr)) = fakewap_and_our_gateway("127.0.3.7") else {
        return;
    };
    let dir = temp_dir("fakewap-sar");
    let run = |extra: &[&str], url: &str, out: &Path| {
        let status = Command::new(&fakewap)
            .args(["-g", &addr.ip().to_string(), "-p", &addr.port().to_string()])
            .args(["-M", "1", "-m", "1", "-w"])
            .arg(out)
            .args(extra)
            .arg(url)
            .output()
            .unwrap();
        let log = String::from_utf8_lossy(&status.stderr).into_owned();
        assert!(status.status.success(), "{url}: {log}");
        assert!(
            log.contains("Received WSP Reply with status code 200"),
            "{url}: {log}"
        );
        std::fs::read(out).unwrap()
    };
    for kb in [1, 10, 30] {
        let got = run(
            &[],
            &origin.url(&format!("/deck-{kb}.wml")),
            &dir.join("get"),
        );
        assert_eq!(got, wml::compile(&deck(kb)).unwrap(), "{kb} KB deck");
        let body = dir.join(format!("post-{kb}"));
        std::fs::write(&body, vec![b'x'; kb * 1024]).unwrap();
        let post = ["-P", body.to_str().unwrap(), "-C", "text"];
        let got = run(&post, &origin.url("/post"), &dir.join("posted"));
        assert_eq!(
            got,
            format!("{} bytes", kb * 1024).into_bytes(),
            "{kb} KB post"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `wtlsperf client --post FILE`: the body reaches the origin whole, and the Reply is the
/// origin's count of what it read.
fn post(connect: SocketAddr, mode: WspMode, secure: bool, url: &str, body: &Path) -> String {
    let file = body.to_str().unwrap();
    fetch_with(
        connect,
        mode,
        secure,
        url,
        &["--post", file, "--content-type", "text/plain"],
    )
}

/// Our client's WSP Post through our gateway: 1 KB in one datagram (connectionless and in
/// connection mode), 30 KB as a segmented invoke (WTP SAR, 22 packets in groups of 3)
/// on the unsecured and the WTLS connection-mode ports.
#[test]
fn our_client_posts_1_and_30_kb_through_our_gateway() {
    let origin = Origin::start();
    let gateway = our_gateway("127.0.3.8", Duration::from_secs(10));
    let dir = temp_dir("post-ours");
    let url = origin.url("/post");
    for kb in [1, 30] {
        let body = dir.join(format!("body-{kb}"));
        std::fs::write(&body, vec![b'x'; kb * 1024]).unwrap();
        for (role, addr) in gateway.addrs.clone() {
            if kb > 1 && role.mode == WspMode::Connectionless {
                continue;
            }
            let out = post(addr, role.mode, role.secure, &url, &body);
            assert!(
                out.contains(&format!(
                    "WSP POST {url} ({} B of text/plain sent): status 200",
                    kb * 1024
                )),
                "{kb} KB {role:?}: {out}"
            );
            assert!(
                out.contains(&format!("{} bytes", kb * 1024)),
                "{kb} KB {role:?}: {out}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Connectionless WSP has no segmentation: a body over one datagram is refused by the
/// client, naming connection mode; a missing file names --post.
#[test]
fn a_post_too_large_for_connectionless_or_missing_names_the_way_out() {
    let dir = temp_dir("post-errors");
    let big = dir.join("big");
    std::fs::write(&big, vec![b'x'; 70_000]).unwrap();
    let target = "127.0.3.10:9200";
    let run = |file: &Path| {
        wtlsperf(&[
            "client",
            "--no-wtls",
            "--connect",
            target,
            "--wsp-get",
            "http://o/p",
            "--post",
            file.to_str().unwrap(),
            "--timeout-ms",
            "2000",
        ])
    };
    let out = run(&big);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--wsp-mode connection"),
        "{err}"
    );
    let out = run(&dir.join("absent"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--post"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Our client's WSP Post to Kannel's wapbox (connection mode, 9201): Kannel reassembles a
/// segmented invoke, forwards the body to the origin and compiles its deck. (A text/plain
/// answer it refuses with 406: the browser accepts compiled WML, not text.)
#[test]
fn our_client_posts_1_and_30_kb_to_kannel_wapbox() {
    if !have(BEARERBOX) || !have(WAPBOX) {
        return;
    }
    let origin = Origin::start();
    let dir = temp_dir("kannel-post");
    let ip = "127.0.3.9";
    let (_bearerbox, _wapbox) = kannel(ip, &dir);
    let addr: SocketAddr = format!("{ip}:9201").parse().unwrap();
    let url = origin.url("/post.wml");
    for kb in [1, 30] {
        let body = dir.join(format!("body-{kb}"));
        std::fs::write(&body, vec![b'x'; kb * 1024]).unwrap();
        let out = post(addr, WspMode::Connection, false, &url, &body);
        assert!(out.contains("status 200"), "{kb} KB: {out}");
        assert!(
            out.contains(&format!("<p>{} bytes</p>", kb * 1024)),
            "{kb} KB: {out}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
