//! The off-path attacks of docs/security.md against the real UDP gateway on loopback.
//!
//! Loopback cannot forge a source address. Where an attack needs one, the attacker's
//! datagram is sent through the victim's own socket: the gateway sees exactly what a
//! forged datagram would show it (the victim's address), and the victim's socket
//! discards the answer, as the victim would. The same rules are tested in virtual time,
//! with virtual addresses, in `wtls::endpoint`'s unit tests.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use wtls::endpoint::ResponseLimit;
use wtls::handshake::{AuthMode, Client, ClientConfig, HandshakeKind};
use wtls::probe::Probe;
use wtls::suite::Case;
use wtlsperf_drivers::gateway::{spawn_gateway, GatewayConfig, GatewayHandle};
use wtlsperf_drivers::pki_store::{unix_now, PkiStore};
use wtlsperf_drivers::setup::{self, ClientAuth, Options};
use wtlsperf_drivers::udp_client::{connect, echo};

const CASE: &str = "160p/160p";

/// Upper bound on waiting for an event, so a broken gateway fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(60);

fn store() -> &'static PkiStore {
    static STORE: OnceLock<PkiStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("wtlsperf-spoofing-{}", std::process::id()));
        PkiStore::create(
            &dir,
            true,
            unix_now().unwrap(),
            &[Case::parse(CASE).unwrap()],
        )
        .unwrap()
    })
}

fn gateway(max_peers: usize, limit: ResponseLimit) -> GatewayHandle {
    let server =
        setup::gateway_server_config(store(), ClientAuth::Optional, &Options::default()).unwrap();
    let mut cfg = GatewayConfig::new("127.0.0.1:0".parse().unwrap(), Arc::new(server));
    cfg.max_peers = max_peers;
    cfg.response_limit = limit;
    // Far beyond any test's length: a half-open handshake a test counts at the end is
    // never expired under it by a slow machine.
    cfg.handshake_timeout = Duration::from_secs(120);
    spawn_gateway(cfg).unwrap()
}

fn client_config() -> Arc<ClientConfig> {
    let creds = store().case(&Case::parse(CASE).unwrap()).unwrap();
    Arc::new(setup::client_config(&creds, &Options::default(), false))
}

/// A client's deadline: a hang guard, never what decides a test.
fn soon() -> Instant {
    Instant::now() + PATIENCE
}

/// A fresh ClientHello datagram, as an attacker makes one.
fn forged_hello() -> Vec<u8> {
    let mut c = Client::new(
        client_config(),
        AuthMode::ServerAuth,
        None,
        Probe::off(),
        setup::now(),
    );
    c.start(setup::now()).unwrap().datagrams.swap_remove(0)
}

/// Waits for one datagram on `sock` (the gateway's answer to a forged datagram, which
/// the victim throws away).
fn discard_one(sock: &UdpSocket) -> usize {
    let mut buf = vec![0u8; 65_535];
    sock.set_read_timeout(Some(PATIENCE)).unwrap();
    let n = sock.recv(&mut buf).expect("the gateway answered");
    sock.set_read_timeout(None).unwrap();
    n
}

fn ping(sock: &UdpSocket, gw: SocketAddr, client: &mut Client) -> anyhow::Result<Duration> {
    echo(
        sock,
        gw,
        client,
        b"ping",
        None,
        Duration::from_secs(1),
        soon(),
    )
}

#[test]
fn a_forged_client_hello_after_the_handshake_leaves_the_connection_working() {
    let gw = gateway(1000, ResponseLimit::default());
    let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    sock.connect(gw.local_addr()).unwrap();
    let (_, mut client) = connect(
        &sock,
        gw.local_addr(),
        client_config(),
        AuthMode::ServerAuth,
        None,
        None,
        soon(),
    )
    .unwrap();
    sock.send(&forged_hello()).unwrap();
    discard_one(&sock);
    ping(&sock, gw.local_addr(), &mut client).expect("the echo still works");
    let s = gw.shutdown();
    assert_eq!((s.parallel_handshakes, s.replaced), (1, 0), "{s:?}");
    assert_eq!((s.established, s.half_open), (1, 1));
}

#[test]
fn a_table_full_of_idle_established_peers_lets_newcomers_in() {
    let gw = gateway(4, ResponseLimit::default());
    let join = |ip: Ipv4Addr, resume| {
        let sock = UdpSocket::bind((ip, 0)).unwrap();
        connect(
            &sock,
            gw.local_addr(),
            client_config(),
            AuthMode::ServerAuth,
            resume,
            None,
            soon(),
        )
        .map(|(run, _)| run)
    };
    let fillers: Vec<_> = (0..4)
        .map(|i| join(Ipv4Addr::new(127, 0, 13, 10 + i), None).unwrap())
        .collect();
    let newcomer = join(Ipv4Addr::new(127, 0, 13, 99), None).expect("a newcomer gets in");
    assert_eq!(newcomer.kind, HandshakeKind::Full);
    let s = gw.stats();
    assert_eq!((s.evicted_idle, s.refused, s.peers), (1, 0, 4), "{s:?}");
    // The evicted peer (the least recently active: the first) resumes its session.
    let back = join(Ipv4Addr::new(127, 0, 13, 10), fillers[0].session.clone()).unwrap();
    assert_eq!(back.kind, HandshakeKind::Abbreviated);
}

/// Sends `count` fresh ClientHellos from one socket (the victim's address) and reads
/// answers until `want` datagrams came or `until`; returns (bytes sent, bytes back,
/// seconds from the first send to the last read).
fn reflect(gw: SocketAddr, count: usize, want: usize, until: Instant) -> (u64, u64, f64) {
    let victim = UdpSocket::bind((Ipv4Addr::new(127, 0, 14, 1), 0)).unwrap();
    let (mut sent, mut back, mut got) = (0u64, 0u64, 0);
    let started = Instant::now();
    for _ in 0..count {
        let hello = forged_hello();
        sent += victim.send_to(&hello, gw).unwrap() as u64;
    }
    let mut buf = vec![0u8; 65_535];
    while got < want && Instant::now() < until {
        let left = until.saturating_duration_since(Instant::now());
        victim
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match victim.recv(&mut buf) {
            Ok(n) => {
                back += n as u64;
                got += 1;
            }
            Err(_) => break,
        }
    }
    (sent, back, started.elapsed().as_secs_f64())
}

#[test]
fn reflection_toward_an_unverified_address_stays_within_its_budget() {
    // Without a limiter every ClientHello is answered with a whole flight.
    let open = gateway(1000, ResponseLimit::OFF);
    let (sent, back, _) = reflect(open.local_addr(), 60, 60, soon());
    println!(
        "no limiter: {back} B back for {sent} B ({:.1}x)",
        back as f64 / sent as f64
    );
    assert!(
        back > 3 * sent,
        "a first flight is several times a ClientHello"
    );
    // With 2048 B/s and 2 s of burst, the victim gets at most 2048 x (2 + elapsed) bytes,
    // however many forged ClientHellos arrive. The wait for answers ends when the
    // deadline passes (none of the unanswered ones will come).
    let limit = ResponseLimit {
        address_bytes_per_s: 2048,
        prefix_bytes_per_s: 0,
        burst_s: 2,
    };
    let limited = gateway(1000, limit);
    let (sent, back, elapsed) = reflect(
        limited.local_addr(),
        60,
        60,
        Instant::now() + Duration::from_millis(500),
    );
    println!("limiter: {back} B back for {sent} B in {elapsed:.2} s");
    assert!(back as f64 <= 2048.0 * (2.0 + elapsed), "{back} B");
    // 60 flights of about 1 kB are some 60 kB: the 4 kB burst plus 2 kB/s cannot pass
    // them all unless answering took half a minute. Wait for the refusal, not for a time.
    let until = soon();
    while limited.stats().rate_limited == 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let s = limited.shutdown();
    assert!(s.rate_limited > 0 && s.rate_limited_bytes > 0, "{s:?}");
}

/// A forged 6-byte plaintext ChangeCipherSpec (L and S set, sequence 1).
const FORGED_CCS: [u8; 6] = [0xC1, 0x00, 0x01, 0x00, 0x01, 0x01];

#[test]
fn a_forged_change_cipher_spec_mid_handshake_changes_nothing() {
    let gw = gateway(1000, ResponseLimit::default());
    let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    sock.connect(gw.local_addr()).unwrap();
    sock.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut c = Client::new(
        client_config(),
        AuthMode::ServerAuth,
        None,
        Probe::off(),
        setup::now(),
    );
    let mut buf = vec![0u8; 65_535];
    for d in c.start(setup::now()).unwrap().datagrams {
        sock.send(&d).unwrap();
    }
    let n = sock.recv(&mut buf).unwrap();
    // The attacker's CCS reaches the gateway before the client's second flight.
    sock.send(&FORGED_CCS).unwrap();
    for d in c.handle_datagram(&buf[..n], setup::now()).datagrams {
        sock.send(&d).unwrap();
    }
    while !c.is_established() {
        let n = sock.recv(&mut buf).expect("the handshake goes on");
        c.handle_datagram(&buf[..n], setup::now());
    }
    ping(&sock, gw.local_addr(), &mut c).expect("echo");
    let s = gw.shutdown();
    assert!(s.alerts_sent.is_empty(), "{s:?}");
}

#[test]
fn nobody_but_its_owner_can_cancel_a_session() {
    let gw = gateway(1000, ResponseLimit::default());
    let owner = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let cfg = client_config();
    let (run, _) = connect(
        &owner,
        gw.local_addr(),
        cfg.clone(),
        AuthMode::ServerAuth,
        None,
        None,
        soon(),
    )
    .unwrap();
    let session = run.session.expect("session");
    // The session id travels in clear; the master secret does not.
    let mut quoted = session.clone();
    quoted.master_secret = zeroize::Zeroizing::new([0u8; 20]);
    let attacker = UdpSocket::bind((Ipv4Addr::new(127, 0, 15, 1), 0)).unwrap();
    attacker.connect(gw.local_addr()).unwrap();
    let mut c = Client::new(
        cfg.clone(),
        AuthMode::ServerAuth,
        Some(quoted),
        Probe::off(),
        setup::now(),
    );
    for d in c.start(setup::now()).unwrap().datagrams {
        attacker.send(&d).unwrap();
    }
    discard_one(&attacker);
    // Then a bad record: a plaintext Finished before any ChangeCipherSpec.
    let mut finished = vec![0xC3, 0x00, 0x01, 0x00, 15, 0x14, 0x00, 12];
    finished.extend([0x5a; 12]);
    attacker.send(&finished).unwrap();
    let (resumed, _) = connect(
        &owner,
        gw.local_addr(),
        cfg,
        AuthMode::ServerAuth,
        Some(session),
        None,
        soon(),
    )
    .unwrap();
    assert_eq!(resumed.kind, HandshakeKind::Abbreviated);
}
