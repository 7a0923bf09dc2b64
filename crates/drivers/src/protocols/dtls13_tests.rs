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
        assert_eq!(s.protocol(), crate::protocols::DTLS13);
        if suite.credential != Credential::Psk {
            let want = match suite.group {
                Group::P256 => "SECP256R1",
                Group::MlKem512 => "ML_KEM_512",
                Group::MlKem768 => "ML_KEM_768",
                Group::MlKem1024 => "ML_KEM_1024",
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

/// DTLS 1.3 (wolfSSL) over an emulated bearer through the gateway's worker threads:
/// each server connection is made on one thread and driven on another (the `Send`
/// argument in `dtls13_wolf.rs`). Classical and ML-KEM-768, both sides fragmenting to
/// LTE-M's 1358-byte MTU (1330-byte UDP payload): ML-KEM-768's second ClientHello
/// (1426 B) crosses it, and no datagram exceeds it.
#[test]
fn classical_and_ml_kem_complete_over_emulated_lte_m_through_the_gateway() {
    use crate::gateway::{spawn_gateway, GatewayConfig, HandshakeServers};
    use crate::protocols::udp::client_over_bearer;
    use std::sync::Arc;
    use std::time::Duration;
    let lte = wtlsperf_bearer::profile("lte-m").unwrap();
    let limit = lte.datagram_payload_limit();
    assert_eq!(limit, 1330);
    let cert = Credential::Certificate { mutual: false };
    for (i, group) in [Group::P256, Group::MlKem768].into_iter().enumerate() {
        // A timer no answer outlasts on a lossless link: no spurious retransmission.
        let cfg = Dtls13Config::new(Dtls13Suite::new(cert, group, false))
            .unwrap()
            .with_mtu(limit)
            .with_initial_timer_s(30);
        let cfg = Arc::new(cfg);
        let server_cfg = Arc::clone(&cfg);
        let servers = HandshakeServers {
            protocol: super::super::DTLS13,
            make: Arc::new(move || server_cfg.server()),
        };
        let gw =
            spawn_gateway(GatewayConfig::lab("127.0.0.1:0".parse().unwrap(), servers)).unwrap();
        let deadline = Duration::from_secs(60);
        let client = cfg.client().unwrap();
        let run = client_over_bearer(client, gw.local_addr(), &lte, 10 + i as u64, None, deadline)
            .unwrap();
        gw.shutdown();
        // The relay keeps each direction in order and the adapter's ACK timer waits a
        // quarter of the timer without a datagram: the flights of a lossless run (their
        // directions and datagrams: an ECDSA signature's length varies by a byte).
        let shape = |f: Vec<wtlsperf_models::transmission::Flight>| {
            f.iter()
                .map(|f| (f.direction, f.datagrams))
                .collect::<Vec<_>>()
        };
        let memory = shape(flights_of_suite(&cfg));
        assert_eq!(shape(run.flights()), memory, "{group:?}: {:?}", run.log);
        let largest = run.log.iter().map(|d| d.bytes).max().unwrap();
        assert!(largest <= usize::from(limit), "{group:?}: {largest}");
        let up: usize = run.log.iter().filter(|d| d.up).map(|d| d.bytes).sum();
        // the client's key share: 65 B for P-256, the 1184-byte ML-KEM-768 key
        assert_eq!(up > 1184, group == Group::MlKem768, "{group:?}: {up}");
        if group == Group::MlKem768 {
            assert!(run.bytes() > 3000, "{}", run.bytes());
        }
    }
}

/// The flights of one lossless in-memory handshake.
fn flights_of_suite(cfg: &Dtls13Config) -> Vec<wtlsperf_models::transmission::Flight> {
    run_in_memory(cfg.client().unwrap(), || cfg.server())
        .unwrap()
        .flights()
}

#[test]
fn ml_dsa_items_are_fips_204_sizes_with_their_encoding() {
    let cert = |mutual| Credential::Certificate { mutual };
    for (level, pk, sig) in [(MlDsa::MlDsa44, 1312, 2420), (MlDsa::MlDsa65, 1952, 3309)] {
        let suite =
            Dtls13Suite::new(cert(true), Group::P256, false).signed_with(Signature::MlDsa(level));
        for (chain, certs) in [(Chain::Leaf, 1), (Chain::LeafAndCa, 2)] {
            let cfg = Dtls13Config::new(suite.sending(chain)).unwrap();
            for server in [true, false] {
                let i = cfg.certificate_items(server).unwrap().unwrap();
                assert_eq!((i.public_keys, i.signatures), (certs * pk, certs * sig));
                assert_eq!((i.verify_signature, i.verify_encoding), (sig, 4));
                // X.509 around each key and signature: names, validity, OIDs, DER headers
                // (one to two hundred bytes), and TLS 1.3's 5 per certificate
                let per_cert = (i.certificate_encoding - 4) / certs;
                assert!((100..300).contains(&per_cert), "{level:?} {chain:?}: {i:?}");
            }
        }
    }
    let server_only = Dtls13Config::new(
        Dtls13Suite::new(cert(false), Group::P256, false)
            .signed_with(Signature::MlDsa(MlDsa::MlDsa44)),
    )
    .unwrap();
    assert!(server_only.certificate_items(false).unwrap().is_none());
    let ecdsa = Dtls13Config::new(Dtls13Suite::new(cert(true), Group::P256, false)).unwrap();
    assert!(ecdsa.certificate_items(true).unwrap().is_none());
}

/// The itemised messages tied to the wire: between two configurations that differ in
/// their certificates alone, each certificate flight grows by exactly the difference of
/// the itemised bodies plus one fragment's framing per added datagram.
#[test]
fn ml_dsa_flights_grow_by_their_itemised_certificates_and_fragment_framing() {
    let mutual = Dtls13Suite::new(Credential::Certificate { mutual: true }, Group::P256, false);
    let ml44 = mutual.signed_with(Signature::MlDsa(MlDsa::MlDsa44));
    let pairs = [
        (ml44, mutual.signed_with(Signature::MlDsa(MlDsa::MlDsa65))),
        (ml44, ml44.sending(Chain::LeafAndCa)),
    ];
    for (a, b) in pairs {
        let (ca, cb) = (Dtls13Config::new(a).unwrap(), Dtls13Config::new(b).unwrap());
        let (fa, fb) = (flights_of_suite(&ca), flights_of_suite(&cb));
        assert_eq!(fa.len(), fb.len());
        // the server's flight (after the cookie exchange) and the client's last one
        for (flight, server) in [(3, true), (4, false)] {
            let items = |c: &Dtls13Config| c.certificate_items(server).unwrap().unwrap().total();
            let grown = fb[flight].bytes - fa[flight].bytes;
            let added = fb[flight].datagrams - fa[flight].datagrams;
            assert_eq!(
                grown,
                items(&cb) - items(&ca) + FRAGMENT_FRAMING * added,
                "{} -> {}, flight {}",
                a.name(),
                b.name(),
                flight + 1
            );
        }
    }
}

/// RFC 8879 with zlib and RFC 7924, priced (wolfSSL has neither): an ML-DSA leaf does
/// not compress (its key and signature are as random as zlib's input can be), a leaf and
/// CA chain by its repeated names and OIDs only; cached information leaves a 33-byte hash
/// and the flight model drops the whole fragments that saves.
#[test]
fn ml_dsa_certificates_do_not_compress_and_cached_information_drops_whole_fragments() {
    let suite = Dtls13Suite::new(
        Credential::Certificate { mutual: true },
        Group::MlKem768,
        false,
    )
    .signed_with(Signature::MlDsa(MlDsa::MlDsa44));
    for chain in [Chain::Leaf, Chain::LeafAndCa] {
        let cfg = Dtls13Config::new(suite.sending(chain)).unwrap();
        for server in [true, false] {
            let alt = cfg.certificate_alternatives(server).unwrap().unwrap();
            let items = cfg.certificate_items(server).unwrap().unwrap();
            assert_eq!(alt.body, items.certificate_body());
            assert_eq!(alt.cached, 33);
            let saved = i64::from(alt.body) - i64::from(alt.zlib);
            match chain {
                Chain::Leaf => assert!(saved <= 0, "{alt:?}"),
                Chain::LeafAndCa => assert!(saved > 0 && saved < i64::from(alt.body) / 20),
            }
        }
    }
    // the server flight of mlkem768-mldsa44-ccm8-mutual at the 1280-byte MTU, as
    // measured: ServerHello, two small records, then the certificate's and the
    // CertificateVerify's fragments (780 B datagrams) and the Finished
    let sizes = [
        1175, 36, 75, 780, 780, 780, 780, 780, 162, 780, 780, 780, 188, 58,
    ];
    let total: u32 = sizes.iter().sum();
    let saved = 3906 - 33;
    let fewer = saved / (780 - FRAGMENT_FRAMING);
    assert_eq!(fewer, 5);
    assert_eq!(
        priced_flight(&sizes, saved),
        (total - saved - FRAGMENT_FRAMING * fewer, 14 - fewer)
    );
    assert_eq!(priced_flight(&sizes, 0), (total, 14));
}

/// The same ML-DSA chains are usable by rustls (TLS 1.3 through its aws-lc-rs provider,
/// which verifies and signs ML-DSA-44/65 with FIPS 204's OIDs and draft-ietf-tls-mldsa's
/// code points): a mutual handshake with X25519MLKEM768 completes in memory and
/// each side verifies the other's ML-DSA leaf and CertificateVerify, so an entry on
/// rustls can take them.
#[test]
fn rustls_completes_a_mutual_handshake_with_the_ml_dsa_chains() {
    use crate::protocols::ml_dsa::MlDsaPki;
    use rustls::crypto::aws_lc_rs as provider;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
    use rustls::server::WebPkiClientVerifier;
    use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};
    use std::sync::Arc;
    for level in MlDsa::ALL {
        let pki = MlDsaPki::generate(level).unwrap();
        let prov = Arc::new(rustls::crypto::CryptoProvider {
            kx_groups: vec![provider::kx_group::X25519MLKEM768],
            ..provider::default_provider()
        });
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from(pki.ca_cert.clone()))
            .unwrap();
        let roots = Arc::new(roots);
        let key = |k: &[u8]| PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(k.to_vec()));
        let verifier = WebPkiClientVerifier::builder_with_provider(roots.clone(), prov.clone())
            .build()
            .unwrap();
        let server = ServerConfig::builder_with_provider(prov.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                vec![CertificateDer::from(pki.server.cert.clone())],
                key(pki.server.key_pkcs8()),
            )
            .unwrap();
        let client = ClientConfig::builder_with_provider(prov)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots)
            .with_client_auth_cert(
                vec![CertificateDer::from(pki.client.cert.clone())],
                key(pki.client.key_pkcs8()),
            )
            .unwrap();
        let name = ServerName::try_from("localhost").unwrap();
        let mut c = ClientConnection::new(Arc::new(client), name).unwrap();
        let mut s = ServerConnection::new(Arc::new(server)).unwrap();
        let (mut up, mut down) = (Vec::new(), Vec::new());
        for _ in 0..4 {
            if !c.is_handshaking() && !s.is_handshaking() {
                break;
            }
            crate::protocols::peers::rustls_round(&mut c, &mut s, &mut up, &mut down).unwrap();
        }
        assert!(!c.is_handshaking() && !s.is_handshaking(), "{level:?}");
        assert_eq!(
            c.negotiated_key_exchange_group().map(|g| g.name()),
            Some(rustls::NamedGroup::X25519MLKEM768)
        );
        // each side verified the other's ML-DSA leaf and its CertificateVerify
        let leaf = |p: Option<&[CertificateDer<'_>]>| p.map(|p| p[0].to_vec());
        assert_eq!(leaf(c.peer_certificates()), Some(pki.server.cert.clone()));
        assert_eq!(leaf(s.peer_certificates()), Some(pki.client.cert.clone()));
    }
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
