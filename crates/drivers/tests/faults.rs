//! Faults: handshakes over an impaired link complete through retransmission, a peer
//! that vanishes mid-handshake leaves no state once the handshake timeout has passed,
//! and the gateway stops cleanly.
//!
//! The link is the bearer emulator (`wtlsperf_bearer::Relay`) between the UDP client
//! and the real gateway, with loss, duplication and reordering of 5-20 % and a fixed
//! seed. Nothing here waits for a duration to decide an outcome: the impaired handshakes
//! run against a gateway whose handshake timeout no slow retransmission can reach, and
//! the vanished-peer test waits for the gateway's own count of expired handshakes.

use std::net::{Ipv4Addr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wtls::endpoint::ResponseLimit;
use wtls::handshake::{AuthMode, Client, ClientConfig};
use wtls::probe::Probe;
use wtls::suite::Case;
use wtlsperf_bearer::{LinkProfile, Relay};
use wtlsperf_drivers::gateway::{spawn_gateway, GatewayConfig, GatewayHandle};
use wtlsperf_drivers::pki_store::{unix_now, PkiStore};
use wtlsperf_drivers::setup::{self, ClientAuth, Options};

/// The gateway's handshake timeout where its expiry is what a test checks.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_millis(800);
/// Where it is not: longer than any run of client retransmissions could last, so a slow
/// machine (more retransmissions, later flights) never has a handshake expire under it.
const PATIENT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(120);
/// Upper bound on waiting for an event, so a broken gateway fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(60);

struct Lab {
    dir: std::path::PathBuf,
    store: PkiStore,
}

impl Lab {
    fn new(tag: &str) -> Lab {
        let dir =
            std::env::temp_dir().join(format!("wtlsperf-faults-{tag}-{}", std::process::id()));
        let cases = [
            Case::parse("160p/160p").unwrap(),
            Case::parse("rsa1024/rsa1024").unwrap(),
        ];
        let store = PkiStore::create(&dir, true, unix_now().unwrap(), &cases).unwrap();
        Lab { dir, store }
    }

    fn gateway(&self, handshake_timeout: Duration) -> GatewayHandle {
        let server =
            setup::gateway_server_config(&self.store, ClientAuth::Optional, &Options::default())
                .unwrap();
        spawn_gateway(GatewayConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            workers: 1,
            server: Arc::new(server),
            max_peers: 1000,
            handshake_timeout,
            idle_timeout: Duration::from_secs(2),
            record_jobs: false,
            cpu_affinity: Vec::new(),
            busy_poll: false,
            response_limit: ResponseLimit::default(),
            reuse_port: false,
            balancer: None,
        })
        .unwrap()
    }

    fn client(&self, case: &str, rto: Duration) -> Arc<ClientConfig> {
        let creds = self.store.case(&Case::parse(case).unwrap()).unwrap();
        let mut c = setup::client_config(&creds, &Options::default(), false);
        c.retransmit_timeout_ns = rto.as_nanos() as u64;
        c.max_retransmissions = 8;
        Arc::new(c)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Waits until `done` holds for the gateway's counters (up to [`PATIENCE`], a hang
/// guard), then returns them.
fn wait_for_stats(
    g: &GatewayHandle,
    done: impl Fn(&wtlsperf_drivers::gateway::GatewayStats) -> bool,
) -> wtlsperf_drivers::gateway::GatewayStats {
    let until = Instant::now() + PATIENCE;
    loop {
        let stats = g.stats();
        if done(&stats) || Instant::now() >= until {
            return stats;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn handshakes_complete_over_lossy_duplicating_reordering_links() {
    let lab = Lab::new("impaired");
    let gateway = lab.gateway(PATIENT_HANDSHAKE_TIMEOUT);
    let mut total_retransmissions = 0;
    for (i, (name, profile)) in [
        ("loss 10 %", LinkProfile::loopback().with_loss(0.10)),
        ("loss 20 %", LinkProfile::loopback().with_loss(0.20)),
        (
            "duplicate 20 %",
            LinkProfile::loopback().with_duplicate(0.20),
        ),
        ("reorder 20 %", LinkProfile::loopback().with_reorder(0.20)),
        (
            "loss 5 %, duplicate 10 %, reorder 10 %",
            LinkProfile::loopback()
                .with_loss(0.05)
                .with_duplicate(0.10)
                .with_reorder(0.10),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let mut relay = Relay::start(
            "127.0.0.1:0".parse().unwrap(),
            gateway.local_addr(),
            profile,
            0x5eed + i as u64,
        )
        .unwrap();
        for (j, case) in ["160p/160p", "rsa1024/rsa1024"]
            .iter()
            .cycle()
            .take(6)
            .enumerate()
        {
            let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            let run = wtlsperf_drivers::udp_client::handshake_once(
                &sock,
                relay.local_addr(),
                lab.client(case, Duration::from_millis(150)),
                if j % 2 == 0 {
                    AuthMode::ServerAuth
                } else {
                    AuthMode::Mutual
                },
                None,
                None,
                Instant::now() + PATIENCE,
            );
            let run = run.unwrap_or_else(|e| panic!("{name}, {case}: {e:#}"));
            total_retransmissions += run.retransmissions;
        }
        relay.shutdown();
    }
    println!("client retransmissions over all impaired handshakes: {total_retransmissions}");
    let stats = gateway.shutdown();
    assert!(stats.handshakes() >= 30, "{stats:?}");
}

#[test]
fn vanished_peer_leaves_no_state_after_the_timeout() {
    let lab = Lab::new("vanish");
    let gateway = lab.gateway(HANDSHAKE_TIMEOUT);
    // Ten clients send a ClientHello (some also their second flight) and vanish.
    for i in 0..10u8 {
        let sock = UdpSocket::bind((Ipv4Addr::new(127, 0, 3, 10 + i), 0)).unwrap();
        let mut c = Client::new(
            lab.client("160p/160p", Duration::from_secs(60)),
            AuthMode::ServerAuth,
            None,
            Probe::off(),
            setup::now(),
        );
        let ch = c.start(setup::now()).unwrap();
        sock.send_to(&ch.datagrams[0], gateway.local_addr())
            .unwrap();
        if i % 2 == 0 {
            let mut buf = vec![0u8; 65_535];
            sock.set_read_timeout(Some(PATIENCE)).unwrap();
            let n = sock.recv(&mut buf).unwrap();
            let out = c.handle_datagram(&buf[..n], setup::now());
            // Send only the first record's worth: the handshake cannot finish.
            let f2 = &out.datagrams[0];
            sock.send_to(&f2[..f2.len() / 2], gateway.local_addr())
                .unwrap();
        }
    }
    // Each of the ten got state, and each state ends by the handshake timeout: the
    // gateway counts every expiry, so wait for the ten (whenever the sweep runs) rather
    // than look at the table at some instant.
    let stats = wait_for_stats(&gateway, |s| {
        s.expired >= 10 && s.half_open == 0 && s.state_bytes == 0
    });
    assert_eq!(stats.expired, 10, "{stats:?}");
    assert_eq!(stats.half_open, 0, "half-open peers left: {stats:?}");
    assert_eq!(
        stats.evicted, stats.expired,
        "only expiry removes them: {stats:?}"
    );
    assert_eq!((stats.peers, stats.state_bytes), (0, 0), "{stats:?}");
    let stats = gateway.shutdown();
    assert_eq!(stats.half_open, 0);
}

#[test]
fn gateway_shuts_down_cleanly_and_frees_its_port() {
    let lab = Lab::new("shutdown");
    let gateway = lab.gateway(PATIENT_HANDSHAKE_TIMEOUT);
    let addr = gateway.local_addr();
    let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    wtlsperf_drivers::udp_client::handshake_once(
        &sock,
        addr,
        lab.client("160p/160p", Duration::from_secs(1)),
        AuthMode::ServerAuth,
        None,
        None,
        Instant::now() + PATIENCE,
    )
    .unwrap();
    let started = Instant::now();
    let stats = gateway.shutdown();
    println!(
        "shutdown took {:?}; final stats {stats:?}",
        started.elapsed()
    );
    assert_eq!(stats.handshakes(), 1);
    // Nothing answers any more, and the address can be bound again.
    sock.send_to(&[0xC3, 0, 0, 0, 1, 0], addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 64];
    assert!(sock.recv(&mut buf).is_err(), "a stopped gateway answered");
    UdpSocket::bind(addr).expect("the gateway's port is free after shutdown");
}
