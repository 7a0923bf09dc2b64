//! DTLS 1.3 through wolfSSL on the spine's pair: every configuration completes, a
//! dropped flight is recovered at the virtual deadline, fragmentation follows the MTU.

use super::*;
use crate::protocols::run_in_memory;
use wtlsperf_spine::pair::{Direction, Ended, Fate};
use wtlsperf_spine::Pair;

/// Virtual time from zero, on today's date: the certificates are valid from their issue
/// (the adapter reads no clock; the test gives it the date).
fn t0() -> Now {
    Now::new(0, crate::setup::now().unix_secs)
}

const NINE_S: u64 = RFC7925_INITIAL_TIMER_S as u64 * 1_000_000_000;

fn completed_pair(cfg: &Dtls13Config) -> Pair<'static, Dtls13Endpoint, Dtls13Endpoint> {
    let mut pair = Pair::new(cfg.client().unwrap(), cfg.server().unwrap(), t0());
    assert_eq!(pair.handshake(), Ended::Complete, "{}", cfg.suite.name());
    pair
}

#[test]
fn every_configuration_completes_in_memory_with_ccm8_and_its_group() {
    for suite in Dtls13Suite::all() {
        let cfg = Dtls13Config::new(suite).unwrap();
        let pair = completed_pair(&cfg);
        let (c, s) = (&pair.client, &pair.server);
        assert_eq!(
            c.negotiated_cipher().as_deref(),
            Some("TLS13-AES128-CCM-8-SHA256")
        );
        assert_eq!(s.negotiated_cipher(), c.negotiated_cipher());
        assert_eq!(c.status(), Status::Complete(suite));
        assert_eq!(s.protocol(), Protocol::Dtls13);
        if suite.credential != Credential::Psk {
            let want = match suite.group {
                Group::P256 => "SECP256R1",
                Group::MlKem512 => "ML_KEM_512",
                Group::MlKem768 => "ML_KEM_768",
                Group::X25519MlKem768 => "X25519MLKEM768",
                Group::P256MlKem768 => "SecP256r1MLKEM768",
            };
            assert_eq!(
                c.negotiated_group().as_deref(),
                Some(want),
                "{}",
                suite.name()
            );
        }
        assert_eq!(pair.deadlines_fired, 0, "{}", suite.name());
    }
}

#[test]
fn suite_names_round_trip_and_are_distinct() {
    let all = Dtls13Suite::all();
    for s in &all {
        assert_eq!(Dtls13Suite::parse(&s.name()).unwrap(), *s);
    }
    let mut names: Vec<String> = all.iter().map(|s| s.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len());
    assert!(Dtls13Suite::parse("rsa")
        .unwrap_err()
        .to_string()
        .contains("psk-ccm8"));
}

fn bytes_of(suite: Dtls13Suite) -> usize {
    let cfg = Dtls13Config::new(suite).unwrap();
    run_in_memory(cfg.client().unwrap(), || cfg.server())
        .unwrap()
        .bytes()
}

#[test]
fn psk_is_lightest_mutual_heavier_and_a_cid_costs_bytes() {
    let cert = |mutual| Dtls13Suite::new(Credential::Certificate { mutual }, Group::P256, false);
    let psk = Dtls13Suite::new(Credential::Psk, Group::P256, false);
    let psk_dhe = Dtls13Suite::new(Credential::PskDhe, Group::P256, false);
    let (sa, mu, p, pd) = (
        bytes_of(cert(false)),
        bytes_of(cert(true)),
        bytes_of(psk),
        bytes_of(psk_dhe),
    );
    assert!(p < pd && pd < sa && sa < mu, "{p} {pd} {sa} {mu}");
    let with_cid = Dtls13Suite { cid: true, ..psk };
    assert!(bytes_of(with_cid) > p);
}

fn drop_one(dir: Direction, n: usize) -> impl FnMut(Direction, usize, &mut Vec<u8>) -> Fate {
    move |d, i, _| {
        if d == dir && i == n {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    }
}

#[test]
fn a_dropped_flight_is_recovered_at_the_virtual_deadline() {
    for suite in [
        Dtls13Suite::new(
            Credential::Certificate { mutual: false },
            Group::P256,
            false,
        ),
        Dtls13Suite::new(Credential::Psk, Group::P256, true),
        Dtls13Suite::new(
            Credential::Certificate { mutual: true },
            Group::MlKem768,
            false,
        ),
    ] {
        let cfg = Dtls13Config::new(suite).unwrap();
        // The first ClientHello; the server's main flight (after the cookie exchange).
        for (dir, n) in [(Direction::ToServer, 0), (Direction::ToClient, 1)] {
            let (client, server) = (cfg.client().unwrap(), cfg.server().unwrap());
            let mut pair = Pair::new(client, server, t0()).with_hook(drop_one(dir, n));
            assert_eq!(
                pair.handshake(),
                Ended::Complete,
                "{} {dir:?}",
                suite.name()
            );
            // Nothing could happen before a deadline; wolfSSL's timer repaired it in
            // virtual time (its ACK timer is a quarter of the 9 s one).
            assert!(pair.now.mono_ns >= NINE_S / 4, "{} {dir:?}", suite.name());
            assert!(pair.deadlines_fired >= 1);
            let re = pair.client.retransmissions() + pair.server.retransmissions();
            assert!(re >= 1, "{} {dir:?}", suite.name());
        }
    }
}

#[test]
fn silence_ends_in_a_time_out_not_a_wolfssl_error() {
    let cfg = Dtls13Config::new(Dtls13Suite::new(Credential::Psk, Group::P256, false))
        .unwrap()
        .with_initial_timer_s(1);
    let mut client = cfg.client().unwrap();
    assert_eq!(client.start(t0()).datagrams.len(), 1);
    assert_eq!(client.deadline(), Some(1_000_000_000));
    let mut fired = 0;
    while let Some(d) = client.deadline() {
        client.handle_timeout(Now::new(d, t0().unix_secs));
        fired += 1;
        assert!(fired <= 20, "no end to the retransmissions");
    }
    assert!(
        matches!(client.status(), Status::Failed(Failure::TimedOut { retransmissions }) if retransmissions >= 1),
        "{:?}",
        client.status()
    );
}

#[test]
fn a_garbage_datagram_is_not_a_panic() {
    let cfg = Dtls13Config::new(Dtls13Suite::new(Credential::Psk, Group::P256, false)).unwrap();
    let mut server = cfg.server().unwrap();
    server.handle_datagram(&[0x16, 0xfe, 0xfd, 0, 0, 0], t0());
    server.handle_datagram(&[0xff; 3], t0());
    assert!(!server.status().is_complete());
}

#[test]
fn ml_kem_flights_fragment_to_the_mtu() {
    let suite = Dtls13Suite::new(
        Credential::Certificate { mutual: false },
        Group::MlKem768,
        false,
    );
    let cfg = Dtls13Config::new(suite).unwrap().with_mtu(1500);
    let wide = run_in_memory(cfg.client().unwrap(), || cfg.server()).unwrap();
    let cfg = cfg.with_mtu(1024);
    let narrow = run_in_memory(cfg.client().unwrap(), || cfg.server()).unwrap();
    assert!(
        narrow.log.iter().all(|d| d.bytes <= 1024),
        "{:?}",
        narrow.log
    );
    assert!(wide.log.iter().all(|d| d.bytes <= 1500));
    // ML-KEM-768's 1184-byte share (second ClientHello) and 1088-byte ciphertext (server
    // flight) each take more datagrams at the narrower MTU.
    let (w, n) = (wide.flights(), narrow.flights());
    assert_eq!(w.len(), n.len());
    assert!(n[2].datagrams > w[2].datagrams, "{w:?} {n:?}");
    assert!(n[3].datagrams > w[3].datagrams, "{w:?} {n:?}");
}

/// Drops the server's `n`-th datagram; returns (virtual ms to completion, datagrams
/// the server sent beyond a lossless run: on its timer or answering an ACK).
fn lose_server_datagram(cfg: &Dtls13Config, n: usize) -> (u64, usize) {
    let lossless = completed_pair(cfg).server_sent.len();
    let (c, s) = (cfg.client().unwrap(), cfg.server().unwrap());
    let mut pair = Pair::new(c, s, t0()).with_hook(drop_one(Direction::ToClient, n));
    let ended = pair.handshake();
    assert_eq!(ended, Ended::Complete, "{} {n}", cfg.suite.name());
    let ms = pair.now.mono_ns / 1_000_000;
    (ms, pair.server_sent.len() - lossless)
}

#[test]
fn a_lost_fragment_costs_an_ack_round_unless_it_carries_the_server_hello() {
    let quarter_ms = NINE_S / 4 / 1_000_000;
    let cert = |g| Dtls13Suite::new(Credential::Certificate { mutual: false }, g, false);
    // P-256 at 1280: the server's flight is ServerHello (datagram 1), then encrypted
    // records (2..=4). A lost encrypted record: the client ACKs what it has at the
    // quarter timer and the server resends that one record.
    let p256 = Dtls13Config::new(cert(Group::P256)).unwrap();
    for n in 2..=4 {
        assert_eq!(
            lose_server_datagram(&p256, n),
            (quarter_ms, 1),
            "P-256, datagram {n}"
        );
    }
    // A lost ServerHello: the client has no keys to read the rest, nothing to ACK; the
    // whole flight goes again after the long timer.
    let (ms, again) = lose_server_datagram(&p256, 1);
    assert!(ms >= NINE_S / 1_000_000 && again >= 5, "{ms} ms, {again}");
    // ML-KEM-768 at 1024: the ServerHello (its 1088-byte ciphertext) is three fragments,
    // so three of the flight's datagrams now cost the long timer; after them, the ACK.
    let kem = Dtls13Config::new(cert(Group::MlKem768))
        .unwrap()
        .with_mtu(1024);
    for n in 1..=3 {
        let (ms, _) = lose_server_datagram(&kem, n);
        assert!(
            ms >= NINE_S / 1_000_000,
            "ML-KEM-768, datagram {n}: {ms} ms"
        );
    }
    assert_eq!(lose_server_datagram(&kem, 4).0, quarter_ms);
}

/// wolfSSL doubles the timer while it is below 64 s and fails at the first timeout past
/// it: from 9 s, three retransmissions (9, 18, 36, then 72 ends it); from 1 s, six.
#[test]
fn the_timer_schedule_follows_wolfssl_s_ceiling() {
    let t = super::retransmission_timers(RFC7925_INITIAL_TIMER_S);
    assert_eq!((t.initial_s, t.max_retransmissions), (9.0, 3));
    assert_eq!(super::retransmission_timers(1).max_retransmissions, 6);
    assert!(t.source.contains("RFC 9147 section 5.8"));
}

#[test]
fn only_psk_ke_lacks_forward_secrecy() {
    for s in Dtls13Suite::all() {
        assert_eq!(
            s.forward_secrecy().holds,
            s.credential != Credential::Psk,
            "{}",
            s.name()
        );
    }
}

/// Without the cookie exchange the server answers a first ClientHello that carries its
/// key share: at a 1472-byte payload limit (GSM CSD's), where ML-KEM-768's ClientHello
/// fits one datagram, one round trip and one ClientHello with the 1184-byte key share
/// fewer. At 1280 bytes wolfSSL's first ClientHello carries no key share (it would not
/// fit), so a HelloRetryRequest asks for it either way, and the cookie costs its bytes
/// only.
#[test]
fn the_cookie_exchange_can_be_left_out() {
    let suite = Dtls13Suite::new(
        Credential::Certificate { mutual: false },
        Group::MlKem768,
        false,
    );
    let run = |mtu: u16, cookie: bool| {
        let mut cfg = Dtls13Config::new(suite).unwrap().with_mtu(mtu);
        if !cookie {
            cfg = cfg.without_cookie_exchange();
        }
        crate::protocols::run_in_memory(cfg.client().unwrap(), || cfg.server()).unwrap()
    };
    let (on, off) = (run(1472, true), run(1472, false));
    assert_eq!(
        on.flights().len(),
        off.flights().len() + 2,
        "{:?} vs {:?}",
        on.log,
        off.log
    );
    assert!(
        on.bytes() - off.bytes() > super::super::key_shares::ML_KEM_768_EK,
        "{} vs {}",
        on.bytes(),
        off.bytes()
    );
    let (on, off) = (run(1280, true), run(1280, false));
    assert_eq!(on.flights().len(), off.flights().len());
    assert!(on.bytes() > off.bytes() && on.bytes() - off.bytes() < 200);
}
