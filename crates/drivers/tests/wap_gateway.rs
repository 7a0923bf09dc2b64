//! The WAP gateway's hardening and operator features over loopback, against an HTTP
//! origin in the test (tiny_http, HTTP/1.1 with keep-alive):
//! - connectionless Gets of a 20 KB deck from eight forged sources (sockets bound to
//!   127.0.0.2 to 127.0.0.9 that never talked to the gateway) draw at most twice the
//!   bytes they sent; the same run without the bound draws hundreds of times more; a
//!   connection-mode session proves an address, which then gets the whole deck;
//! - a page over the limit is a 502, a silent origin a 504 within the read time-out, the
//!   deck cache answers within max-age and revalidates by ETag, the origin's
//!   connections are reused, and the access log has a line per request.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wtls::fixtures::CaseKeys;
use wtls::handshake::AuthMode;
use wtlsperf_drivers::setup;
use wtlsperf_drivers::wap_client::{self, Limits, Socket, UdpPipe, WspMode};
use wtlsperf_drivers::wap_gateway::access_log::AccessLog;
use wtlsperf_drivers::wap_gateway::reflection::ReflectionLimit;
use wtlsperf_drivers::wap_gateway::{self, WapGateway, WapGatewayConfig, WapLimits, ROLES};
use wtlsperf_wap::wsp::{self, Headers};
use wtlsperf_wap::wtp::Timers;

/// A WML deck of about `bytes` octets of text, which compiles to about as many.
fn deck(bytes: usize) -> String {
    let line = "The cup final goes to extra time; rain in the north. ";
    let text: String = line.chars().cycle().take(bytes).collect();
    format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE wml PUBLIC \"-//WAPFORUM//DTD WML 1.1//EN\" \
         \"http://www.wapforum.org/DTD/wml_1.1.xml\">\n<wml><card id=\"c\" title=\"News\">\
         <p>{text}</p></card></wml>\n"
    )
}

/// One request as the origin saw it.
#[derive(Debug, Clone)]
struct Seen {
    from: SocketAddr,
    path: String,
    if_none_match: Option<String>,
}

/// The origin: `/deck.wml` (20 KB, not to be stored), `/big.wml` (30 KB),
/// `/cached.wml` (max-age 60, ETag "v1"), `/revalidate.wml` (no-cache, ETag "v2"; 304
/// when asked with it), `/silent` (holds the request 5 s, then drops it).
struct TestOrigin {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl TestOrigin {
    fn start() -> TestOrigin {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let addr = server.server_addr().to_ip().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (srv, log) = (server.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            for request in srv.incoming_requests() {
                let if_none_match = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("If-None-Match"))
                    .map(|h| h.value.to_string());
                log.lock().unwrap().push(Seen {
                    from: *request.remote_addr().unwrap(),
                    path: request.url().to_string(),
                    if_none_match: if_none_match.clone(),
                });
                answer(request, if_none_match);
            }
        });
        TestOrigin {
            addr,
            seen,
            server,
            thread: Some(thread),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn seen(&self, path: &str) -> Vec<Seen> {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|s| s.path == path).cloned().collect()
    }
}

fn answer(request: tiny_http::Request, if_none_match: Option<String>) {
    let header = |name: &str, value: &str| tiny_http::Header::from_bytes(name, value).unwrap();
    let wml = header("Content-Type", "text/vnd.wap.wml");
    let (body, extra): (String, Vec<tiny_http::Header>) = match request.url() {
        "/deck.wml" => (deck(20_000), vec![header("Cache-Control", "no-store")]),
        "/big.wml" => (deck(30_000), vec![]),
        "/cached.wml" => (
            deck(500),
            vec![
                header("Cache-Control", "max-age=60"),
                header("ETag", "\"v1\""),
            ],
        ),
        "/revalidate.wml" if if_none_match.as_deref() == Some("\"v2\"") => {
            let _ = request.respond(tiny_http::Response::empty(304));
            return;
        }
        "/revalidate.wml" => (
            deck(500),
            vec![
                header("Cache-Control", "no-cache"),
                header("ETag", "\"v2\""),
            ],
        ),
        "/silent" => {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(5));
                drop(request);
            });
            return;
        }
        _ => {
            let _ = request.respond(tiny_http::Response::empty(404));
            return;
        }
    };
    let mut response = tiny_http::Response::from_string(body).with_header(wml);
    for h in extra {
        response.add_header(h);
    }
    let _ = request.respond(response);
}

impl Drop for TestOrigin {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A gateway on 127.0.0.1's system-chosen ports, the two unsecured roles.
fn gateway(limits: WapLimits, access_log: Option<&std::path::Path>) -> WapGateway {
    let keys = CaseKeys::shared("160p/160p");
    let server = keys.server_config(AuthMode::ServerAuth, &[setup::default_cipher_suite()]);
    wap_gateway::spawn(WapGatewayConfig {
        ip: "127.0.0.1".parse().unwrap(),
        base_port: 0,
        roles: ROLES.iter().filter(|r| !r.secure).copied().collect(),
        server: Arc::new(server),
        origin_timeout: Duration::from_secs(30),
        timers: Timers::default(),
        limits,
        access_log: access_log.map(|p| Arc::new(Mutex::new(AccessLog::open(p).unwrap()))),
        port_timers: Vec::new(),
    })
    .unwrap()
}

/// Waits until the connectionless port has answered `n` requests (its counters are
/// published every 200 ms); at most 30 s.
fn wait_for_replies(gw: &WapGateway, n: u64) {
    let port = gw.addr(WspMode::Connectionless, false).unwrap().port();
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let stats = gw.stats();
        let replies = stats
            .ports
            .iter()
            .find(|p| p.port == port)
            .map_or(0, |p| p.service.replies);
        if replies >= n {
            return;
        }
        assert!(Instant::now() < end, "{replies} of {n} replies after 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The reflection guard's refused pages once it has counted `n` (or after 30 s): it
/// publishes them apart from the port's replies, which can be counted first.
fn refused_pages_reaching(gw: &WapGateway, n: u64) -> u64 {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let refused = gw.stats().reflection.refused_pages;
        if refused >= n || Instant::now() >= end {
            return refused;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Bytes waiting on a socket, read without blocking.
fn drain(sock: &UdpSocket) -> usize {
    let mut buf = vec![0u8; 65_536];
    let mut total = 0;
    while let Ok(n) = sock.recv(&mut buf) {
        total += n;
    }
    total
}

/// `rounds` connectionless Gets of `uri` from each of 127.0.0.2 to 127.0.0.9: the bytes
/// those addresses sent, and the bytes that came back to them.
fn forged_gets(gw: &WapGateway, uri: &str, rounds: usize) -> (usize, usize) {
    let target = gw.addr(WspMode::Connectionless, false).unwrap();
    let sources: Vec<UdpSocket> = (2..=9u8)
        .map(|i| {
            let s = UdpSocket::bind((IpAddr::from([127, 0, 0, i]), 0)).unwrap();
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    let get = wsp::Pdu::Get {
        method: wsp::GetMethod::Get,
        uri: uri.into(),
        headers: Headers::default(),
    };
    let (mut sent, mut received) = (0, 0);
    for round in 0..rounds {
        for s in &sources {
            sent += s
                .send_to(&wsp::encode_connectionless(round as u8, &get), target)
                .unwrap();
        }
        // Each round's answers are in the sockets once the gateway counts its replies
        // (loopback delivers as it sends): drain them before the buffers fill.
        wait_for_replies(gw, ((round + 1) * sources.len()) as u64);
        received += sources.iter().map(drain).sum::<usize>();
    }
    (sent, received)
}

fn fetch(gw: &WapGateway, from: IpAddr, mode: WspMode, uri: &str) -> wap_client::Page {
    let sock = UdpSocket::bind((from, 0)).unwrap();
    let peer = gw.addr(mode, false).unwrap();
    let mut pipe = UdpPipe(Socket::new(&sock, peer, None).unwrap());
    let limits = Limits {
        retry: Duration::from_secs(2),
        deadline: Instant::now() + Duration::from_secs(4),
    };
    wap_client::fetch(&mut pipe, mode, uri, 1, limits).unwrap()
}

#[test]
fn forged_connectionless_gets_draw_at_most_twice_what_they_sent() {
    let origin = TestOrigin::start();
    let uri = origin.url("/deck.wml");
    // Without the bound: each 35-odd-byte Get draws the whole deck.
    let open = gateway(
        WapLimits {
            reflection: ReflectionLimit::OFF,
            ..WapLimits::default()
        },
        None,
    );
    let (sent, received) = forged_gets(&open, &uri, 10);
    assert!(
        received > 100 * sent,
        "without the bound: {received} B for {sent} B"
    );
    drop(open);
    // With it: at most 2x, every large page replaced by a small 403.
    let guarded = gateway(WapLimits::default(), None);
    let (sent, received) = forged_gets(&guarded, &uri, 10);
    eprintln!(
        "forged sources: {sent} B sent, {received} B back ({:.2}x)",
        received as f64 / sent as f64
    );
    assert!(received <= 2 * sent, "{received} B for {sent} B");
    assert_eq!(refused_pages_reaching(&guarded, 80), 80);
    // A connection-mode session proves 127.0.0.9 (its Result acknowledged); from then
    // on its connectionless Gets get the whole deck.
    let page = fetch(&guarded, [127, 0, 0, 9].into(), WspMode::Connection, &uri);
    assert_eq!(page.status, wsp::Status::OK);
    let page = fetch(
        &guarded,
        [127, 0, 0, 9].into(),
        WspMode::Connectionless,
        &uri,
    );
    assert_eq!(page.status, wsp::Status::OK);
    assert!(page.body.len() > 19_000, "{}", page.body.len());
    // 127.0.0.8 never proved itself: a 403 that fits its allowance.
    let page = fetch(
        &guarded,
        [127, 0, 0, 8].into(),
        WspMode::Connectionless,
        &uri,
    );
    assert_eq!(page.status.http(), Some(403));
    let stats = guarded.shutdown();
    assert!(stats.reflection.proofs >= 1, "{:?}", stats.reflection);
    // Where only WTLS proves an address, a connection-mode session does not: its Get
    // of the deck is a 403 too.
    let strict = gateway(
        WapLimits {
            reflection: ReflectionLimit {
                wtp_proves: false,
                ..ReflectionLimit::default()
            },
            ..WapLimits::default()
        },
        None,
    );
    let page = fetch(&strict, [127, 0, 0, 7].into(), WspMode::Connection, &uri);
    assert_eq!(page.status.http(), Some(403));
}

#[test]
fn limits_cache_keep_alive_and_access_log() {
    let origin = TestOrigin::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let limits = WapLimits {
        max_page_bytes: 25_000,
        origin_read_timeout: Duration::from_millis(300),
        ..WapLimits::default()
    };
    let gw = gateway(limits, Some(&log));
    let local: IpAddr = [127, 0, 0, 1].into();
    let get = |path: &str| fetch(&gw, local, WspMode::Connection, &origin.url(path));
    // Over the page limit: a 502 saying why, not a truncated deck.
    let big = get("/big.wml");
    assert_eq!(big.status.http(), Some(502));
    assert!(String::from_utf8_lossy(&big.body).contains("limit of 25000"));
    // The origin holds its answer 5 s: the 300 ms read time-out answers 504 well
    // before the 30 s of the whole call (and before this client's 4 s deadline).
    assert_eq!(get("/silent").status.http(), Some(504));
    // Within max-age the cache answers; the origin sees one request.
    assert_eq!(get("/cached.wml").body, get("/cached.wml").body);
    assert_eq!(origin.seen("/cached.wml").len(), 1);
    // no-cache: asked again each time, with the ETag; its 304 keeps the compiled deck.
    let first = get("/revalidate.wml");
    let second = get("/revalidate.wml");
    assert_eq!(second.status, wsp::Status::OK);
    assert_eq!(first.body, second.body);
    let asked = origin.seen("/revalidate.wml");
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[1].if_none_match.as_deref(), Some("\"v2\""));
    // Keep-alive: the requests that reached the origin came over fewer connections
    // than there were requests (ureq's pool, shared by the origin threads).
    let all = origin.seen.lock().unwrap().clone();
    let connections: std::collections::HashSet<SocketAddr> = all.iter().map(|s| s.from).collect();
    assert!(
        connections.len() < all.len(),
        "{} connections for {} requests",
        connections.len(),
        all.len()
    );
    let stats = gw.shutdown();
    let port = stats
        .ports
        .iter()
        .find(|p| p.role.is_some_and(|r| r.mode == WspMode::Connection));
    let port = port.unwrap();
    assert_eq!(port.pages_over_limit, 1);
    assert_eq!(port.cache_answers, 2, "{port:?}");
    assert_eq!(stats.deck_cache.revalidated, 1);
    // One access-log line per request answered, in Common Log Format.
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    let big_line = format!("\"GET {} WSP/CO\" 502 ", origin.url("/big.wml"));
    assert!(lines[0].starts_with("127.0.0.1 - - ["), "{}", lines[0]);
    assert!(lines[0].contains(&big_line), "{}", lines[0]);
    assert!(lines[1].contains("\" 504 "), "{}", lines[1]);
}
