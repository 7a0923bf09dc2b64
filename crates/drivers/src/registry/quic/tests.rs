use std::sync::Arc;
use std::time::Duration;

use wtlsperf_models::device::published_pq::published_pq_costs;
use wtlsperf_models::device::Primitive;
use wtlsperf_models::stats::median;
use wtlsperf_spine::pair::{Direction, Ended, Fate};
use wtlsperf_spine::Pair;

use super::*;
use crate::pki_store::unix_now;
use crate::protocols::run_in_memory;
use crate::wire_log::{flights_of, of_pair, WireDatagram};
use wtlsperf_models::transmission::Flight;

/// One configuration's sides, built once per test.
fn config(suite: QuicSuite) -> QuicConfig {
    QuicConfig::new(suite).unwrap()
}

/// The virtual start: one second on the monotonic clock, now on the wall clock (the
/// certificates are valid from an hour back).
fn start() -> Now {
    Now::new(1_000_000_000, unix_now().unwrap())
}

fn pair(c: &QuicConfig) -> Pair<'static, QuicEndpoint, QuicEndpoint> {
    Pair::new(c.client().unwrap(), c.server().unwrap(), start())
}

fn log_of(p: &Pair<'_, QuicEndpoint, QuicEndpoint>) -> Vec<WireDatagram> {
    of_pair(&p.log)
}

/// The flights of a completed handshake: the client's Initial; the server's Initial and
/// Handshake packets; the client's Handshake packet (Finished); the server's
/// HANDSHAKE_DONE; the client's first 1-RTT packet (a NEW_CONNECTION_ID), sent as it is
/// confirmed; and, when the client skipped that packet's number, the server's ACK of
/// the gap ([`QuicConfig::with_seed`]). An ML-DSA server flight exceeds three times
/// what the client's Initial brought (RFC 9000 section 8.1): it stops at the limit, and
/// its rest follows the client's acknowledgement, whose Handshake packet validates the
/// client's address: two flights more.
fn assert_shape(suite: QuicSuite, log: &[WireDatagram]) -> Vec<Flight> {
    let flights = flights_of(log);
    let n = match suite.signature {
        Signature::EcdsaP256 => 5,
        Signature::MlDsa44 => 7,
    };
    let acked_gap = flights.len() == n + 1 && flights[n].bytes < 64;
    assert!(flights.len() == n || acked_gap, "{suite}: {flights:?}");
    flights
}

/// Flights as `bytes/datagrams`, for the test's output.
fn shape(flights: &[Flight]) -> String {
    let each: Vec<String> = flights
        .iter()
        .map(|f| format!("{}B/{}dg", f.bytes, f.datagrams))
        .collect();
    each.join(" ")
}

/// The most the server sends before the client's address is validated, having received
/// `received` bytes: three times that (RFC 9000 section 8.1). quinn-proto starts a
/// datagram while any of that budget is left (quinn-rs/quinn pull request 1148), so a
/// flight that the limit cuts may pass it by less than one datagram: an ML-DSA server
/// flight after a hybrid's two-datagram Initial does, by 48 bytes (the acknowledgement
/// of the first datagram, then six whole ones: 7248 B for 7200). After a one-datagram
/// Initial it stops at 3600 B exactly.
fn limit_3x(suite: QuicSuite, received: usize) -> usize {
    let cut = suite.signature != Signature::EcdsaP256 && suite.group.post_quantum();
    3 * received
        + if cut {
            usize::from(MIN_DATAGRAM) - 1
        } else {
            0
        }
}

/// Datagrams of the client's first flight and of the server's first flight, from a
/// clean run.
fn first_flights(c: &QuicConfig) -> (usize, usize) {
    let mut p = pair(c);
    assert_eq!(p.handshake(), Ended::Complete);
    (
        p.client_steps[0].datagrams.len(),
        p.server_steps
            .iter()
            .find(|s| !s.datagrams.is_empty())
            .unwrap()
            .datagrams
            .len(),
    )
}

#[test]
fn names_round_trip_and_an_unknown_name_lists_the_known() {
    for s in QuicSuite::ALL {
        assert_eq!(s.name().parse::<QuicSuite>().unwrap(), s);
        assert_eq!(s.to_string(), s.name());
    }
    for s in QuicSuite::ALL {
        let mutual = if s.mutual { "-mutual" } else { "" };
        let parts = format!("{}-{}{mutual}", s.group.name(), s.signature.name());
        assert_eq!(s.name(), parts);
    }
    let names: std::collections::BTreeSet<_> = QuicSuite::ALL.map(QuicSuite::name).into();
    assert_eq!(names.len(), QuicSuite::ALL.len());
    let e = "x448-ecdsa".parse::<QuicSuite>().unwrap_err();
    assert!(e.to_string().contains("x25519mlkem768-ecdsa"), "{e}");
    assert!(e.to_string().contains("p256mlkem768-mldsa44-mutual"), "{e}");
}

#[test]
fn every_configuration_completes_in_memory_with_a_padded_initial_and_within_3x() {
    for suite in QuicSuite::ALL {
        let c = config(suite);
        let mut p = pair(&c);
        assert_eq!(p.handshake(), Ended::Complete, "{suite}");
        assert_eq!(p.client.status(), Status::Complete(suite));
        assert_eq!(p.client.retransmissions() + p.server.retransmissions(), 0);
        assert_eq!(p.client.role(), Role::Client);
        assert_eq!(p.server.role(), Role::Server);
        // Every datagram of the client's Initial flight carries at least 1200 bytes
        // (RFC 9000 section 14.1).
        let first = &p.client_steps[0].datagrams;
        assert!(!first.is_empty());
        assert!(first.iter().all(|d| d.len() >= 1200), "{suite}: {first:?}");
        // Until the client's second flight reaches it, the server has received only the
        // first, and may send three times that (RFC 9000 section 8.1).
        let received: usize = first.iter().map(Vec::len).sum();
        let second_up = p.log.iter().skip(first.len()).position(|d| d.up()).unwrap();
        let sent: usize = p.log[first.len()..first.len() + second_up]
            .iter()
            .map(|d| d.bytes)
            .sum();
        assert!(
            sent > 0 && sent <= limit_3x(suite, received),
            "{suite}: {sent} > 3 x {received}"
        );
        let flights = assert_shape(suite, &log_of(&p));
        eprintln!("quic {suite}: {}", shape(&flights));
    }
}

/// quinn-proto sends one more whole datagram while any of the 3x budget is left
/// (quinn-rs/quinn pull request 1148, as quic-go and s2n-quic do), so a server that keeps
/// probing an unvalidated client may pass 3x by less than one datagram.
#[test]
fn the_server_stops_within_a_datagram_of_3x_for_an_unvalidated_client() {
    for suite in [
        QuicSuite::new(Group::X25519, false),
        QuicSuite::new(Group::X25519MlKem768, true),
    ] {
        let c = config(suite);
        let (n_first, _) = first_flights(&c);
        // Nothing after the client's first flight reaches the server, so its address is
        // never validated; the server's probes are then what the limit holds back.
        let mut p = pair(&c).with_hook(move |dir, i, _: &mut Vec<u8>| {
            if dir == Direction::ToServer && i >= n_first {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        let ended = p.handshake();
        assert_eq!(ended, Ended::Failed, "{suite}");
        let received: usize = p.client_sent[..n_first].iter().map(Vec::len).sum();
        let sent: usize = p.server_sent.iter().map(Vec::len).sum();
        assert!(
            p.server.retransmissions() > 0,
            "{suite}: the server never probed"
        );
        let limit = 3 * received + usize::from(MIN_DATAGRAM);
        assert!(sent < limit, "{suite}: {sent} >= 3 x {received} + 1200");
        eprintln!("quic {suite}: unvalidated, received {received} B, sent {sent} B");
    }
}

#[test]
fn a_lost_server_flight_is_recovered_by_the_probe_timeout_in_virtual_time() {
    let c = config(QuicSuite::new(Group::X25519, false));
    let (_, n_server) = first_flights(&c);
    let mut p = pair(&c).with_hook(move |dir, i, _: &mut Vec<u8>| {
        if dir == Direction::ToClient && i < n_server {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    let t0 = p.now.mono_ns;
    assert_eq!(p.handshake(), Ended::Complete);
    assert!(p.deadlines_fired >= 1);
    assert!(p.client.retransmissions() + p.server.retransmissions() > 0);
    // The first probe timeout is 333 ms + 4 x 166.5 ms (RFC 9002 section 6.2.1): the
    // virtual clock moved at least that far, and no real time was waited.
    assert!(p.now.mono_ns - t0 >= 999_000_000, "{}", p.now.mono_ns - t0);
}

#[test]
fn a_client_that_hears_nothing_times_out_by_itself() {
    let c = config(QuicSuite::new(Group::X25519, false));
    let mut p = pair(&c).with_hook(|dir, _, _: &mut Vec<u8>| {
        if dir == Direction::ToServer {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    let t0 = p.now.mono_ns;
    assert_eq!(p.handshake(), Ended::Failed);
    match p.client.status() {
        Status::Failed(Failure::TimedOut { retransmissions }) => {
            // five probe timeouts before 60 s (999 ms doubling), two datagrams each
            assert_eq!(retransmissions, 10);
            assert_eq!(retransmissions, p.client.retransmissions());
        }
        s => panic!("{s:?}"),
    }
    assert!(p.now.mono_ns - t0 >= HANDSHAKE_TIMEOUT.as_nanos() as u64);
    assert_eq!(p.client.deadline(), None);
}

/// Bytes no QUIC packet can start with here: a short header whose fixed bit is clear,
/// and a long header of an unknown version padded to 1200 bytes.
fn garbage() -> [Vec<u8>; 3] {
    let pattern = |n: usize, first: u8| {
        let mut d: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
        d[0] = first;
        d
    };
    [pattern(40, 0x0b), pattern(1200, 0xc3), pattern(3, 0x40)]
}

#[test]
fn garbage_is_dropped_without_harm_and_the_handshake_goes_on() {
    let c = config(QuicSuite::new(Group::X25519, false));
    let mut p = pair(&c);
    for g in garbage() {
        let step = p.deliver_to_server(&g).clone();
        assert!(p.server.status().is_running());
        // A long header of an unknown version may be answered by a version negotiation
        // (RFC 9000 section 6.1); anything else is dropped.
        if g[0] & 0x80 == 0 {
            assert!(step.dropped, "{step:?}");
        }
    }
    p.start();
    p.run(1);
    for g in garbage() {
        let step = p.deliver_to_client(&g).clone();
        assert!(step.dropped && step.datagrams.is_empty(), "{step:?}");
        assert!(p.client.status().is_running());
    }
    assert_eq!(p.drive(16, 64), Ended::Complete);
}

#[test]
fn a_held_flight_starts_its_timer_when_it_leaves() {
    let c = config(QuicSuite::new(Group::X25519, false));
    let mut client = c.client().unwrap();
    assert_eq!(client.deadline(), None);
    let step = client.start(start());
    assert!(!step.datagrams.is_empty());
    let due = client.deadline().unwrap();
    client.delay_timers(5_000_000_000);
    assert_eq!(client.deadline(), Some(due + 5_000_000_000));
    let mut server = c.server().unwrap();
    assert!(server.start(start()).datagrams.is_empty());
    assert_eq!(server.deadline(), None);
}

#[test]
fn client_operations_and_their_price_on_a_device() {
    let published = published_pq_costs().unwrap();
    let m4 = wtlsperf_models::device::profiles()
        .unwrap()
        .into_iter()
        .find(|p| p.name == "nrf52840")
        .unwrap();
    let x = client_ops(QuicSuite::new(Group::X25519MlKem768, false));
    assert_eq!((x.x25519_keygen, x.x25519_dh), (1, 1));
    assert_eq!((x.mlkem768_keygen, x.mlkem768_decaps), (1, 1));
    assert_eq!((x.p256.keygen, x.p256.verify, x.p256.sign), (0, 2, 0));
    assert_eq!(client_ops(QuicSuite::new(Group::P256, true)).p256.sign, 1);
    let e = client_ms(QuicSuite::new(Group::X25519, false), &m4, &published).unwrap_err();
    assert!(
        e.starts_with("not available") && e.contains("X25519"),
        "{e}"
    );
    let classical = QuicSuite::new(Group::P256, false);
    let hybrid = QuicSuite::new(Group::P256MlKem768, false);
    let c = client_ms(classical, &m4, &published).unwrap();
    let h = client_ms(hybrid, &m4, &published).unwrap();
    // pqm4 m4fspeed ML-KEM-768 keygen + decaps at 64 MHz
    let expected = (642_096.0 + 707_827.0) / 64_000.0;
    assert!((h - c - expected).abs() < 1e-3, "{h} {c}");
    let steps = client_steps(hybrid, &m4, &published).unwrap();
    assert!((steps.total_ms() - h).abs() < 1e-9);
    assert_eq!(steps.flights.len(), 2);
}

/// One QUIC handshake over an emulated bearer, client on this thread, server behind the
/// gateway's workers, both in real time.
fn over_bearer(c: QuicConfig, bearer: &str) -> crate::protocols::udp::UdpRun {
    use crate::gateway::{spawn_gateway, GatewayConfig, HandshakeServers};
    let c = Arc::new(c);
    let server_cfg = Arc::clone(&c);
    let servers = HandshakeServers {
        protocol: c.client().unwrap().protocol(),
        make: Arc::new(move || server_cfg.server()),
    };
    let gw = spawn_gateway(GatewayConfig::lab("127.0.0.1:0".parse().unwrap(), servers)).unwrap();
    let profile = wtlsperf_bearer::profile(bearer).unwrap();
    let run = crate::protocols::udp::client_over_bearer(
        c.client().unwrap(),
        gw.local_addr(),
        &profile,
        7,
        None,
        Duration::from_secs(120),
    )
    .unwrap();
    gw.shutdown();
    run
}

/// At 9.6 kbit/s the client's 1200-byte Initial alone takes a second to leave, longer
/// than the first probe timeout from RFC 9002's 333 ms initial RTT (999 ms): the client
/// probes before any answer can arrive. Told the bearer's round trip instead, it does
/// not, and the exchange has the five flights of the in-memory run.
#[test]
fn over_emulated_gsm_csd_the_default_initial_rtt_probes_early_and_a_bearers_does_not() {
    let suite = QuicSuite::new(Group::X25519, false);
    let early = over_bearer(config(suite), "gsm-csd");
    assert!(early.client_retransmissions > 0, "{early:?}");
    let told = config(suite)
        .with_initial_rtt(Duration::from_secs(20))
        .unwrap();
    let run = over_bearer(told, "gsm-csd");
    assert_eq!(run.client_retransmissions, 0, "{run:?}");
    assert_eq!(run.flights().len(), 5, "{run:?}");
    for (what, r) in [("rfc 9002 initial rtt", &early), ("20 s initial rtt", &run)] {
        let shape: Vec<String> = r.flights().iter().map(|f| f.bytes.to_string()).collect();
        eprintln!(
            "quic over gsm-csd, {what}: {:.0} ms, {} client retransmissions, flights {}",
            r.duration_ms,
            r.client_retransmissions,
            shape.join(" ")
        );
    }
}

/// The in-memory measurement the other rows get (`run_in_memory`) runs QUIC too, and
/// the raw public-key work of each side is timed beside it: the bound ratio's parts.
#[test]
fn the_in_memory_runner_and_the_raw_operations_time_each_side() {
    for suite in [
        QuicSuite::new(Group::X25519, false),
        QuicSuite::new(Group::X25519MlKem768, false),
    ] {
        let c = config(suite);
        let (mut server, mut raw) = (Vec::new(), Vec::new());
        for _ in 0..5 {
            let run = run_in_memory(c.client().unwrap(), || c.server()).unwrap();
            assert_shape(suite, &run.log);
            assert!(run.client_cpu_ns > 0 && run.server_cpu_ns > 0);
            server.push(run.server_cpu_ns as f64);
            let (s, cl) = c.raw_ops().unwrap();
            assert!(s > 0 && cl > 0);
            raw.push(s as f64);
        }
        let (s, r) = (median(&server).unwrap(), median(&raw).unwrap());
        eprintln!(
            "quic {suite}: server {:.0} us, raw {:.0} us, ratio {:.1} (5 runs, debug build)",
            s / 1e3,
            r / 1e3,
            s / r
        );
    }
}

/// A seeded configuration gives every handshake the same shape, datagram for datagram,
/// and the seed is what decides whether the server acknowledges a skipped packet
/// number: among enough seeds both shapes occur.
#[test]
fn a_seed_fixes_the_shape_of_every_handshake() {
    let suite = QuicSuite::new(Group::X25519, false);
    let mut c = Some(config(suite));
    let mut shapes = std::collections::BTreeSet::new();
    for seed in 0..256 {
        let seeded = c.take().unwrap().with_seed(seed);
        let logs: Vec<Vec<WireDatagram>> = (0..2)
            .map(|_| {
                let mut p = pair(&seeded);
                assert_eq!(p.handshake(), Ended::Complete);
                log_of(&p)
            })
            .collect();
        assert_eq!(logs[0], logs[1], "seed {seed}");
        shapes.insert(assert_shape(suite, &logs[0]).len());
        c = Some(seeded);
    }
    assert_eq!(shapes.into_iter().collect::<Vec<_>>(), vec![5, 6]);
}

/// A client Initial with one byte changed fails its AEAD check (RFC 9001 section 5):
/// the server drops it as if lost, and the client's probe repairs the loss.
#[test]
fn a_corrupted_initial_is_dropped_and_the_probe_repairs_it() {
    let c = config(QuicSuite::new(Group::X25519, false));
    let mut p = pair(&c).with_hook(|dir, i, d: &mut Vec<u8>| {
        if dir == Direction::ToServer && i == 0 {
            let last = d.len() - 1;
            d[last] ^= 0x01;
        }
        Fate::Deliver
    });
    assert_eq!(p.handshake(), Ended::Complete, "{:?}", p.server.status());
    assert!(p.server_steps[1].dropped, "{:?}", p.server_steps[1]);
    assert!(p.client.retransmissions() > 0);
}

/// Server (down) or client (up) bytes of a log.
fn sent_by(log: &[WireDatagram], client: bool) -> usize {
    log.iter().filter(|d| d.up == client).map(|d| d.bytes).sum()
}

/// The ML-DSA-44 leaf each side sends carries FIPS 204's 1312-byte public key and the
/// CA's 2420-byte signature, and the side's datagrams carry at least that leaf and its
/// CertificateVerify's 2420-byte signature (an ECDSA side sends less in its whole
/// handshake). The server sends its first flight up to three times what the client's
/// Initial brought (RFC 9000 section 8.1, as quinn-proto counts it: [`limit_3x`]) and the
/// rest only after the client's next flight: the whole would pass the limit.
#[test]
fn ml_dsa_flights_carry_fips_204_sizes_and_the_server_waits_at_3x() {
    use crate::protocols::ml_dsa::MlDsa;
    let level = MlDsa::MlDsa44;
    let (pk, sig) = (level.public_key_len(), level.signature_len());
    assert_eq!((pk, sig), (1312, 2420));
    for group in Group::ALL {
        for mutual in [false, true] {
            let suite = QuicSuite::signed(group, Signature::MlDsa44, mutual);
            let c = config(suite);
            let super::config::Pki::MlDsa(pki) = c.pki() else {
                panic!("{suite}: not an ML-DSA chain");
            };
            for leaf in [&pki.server, &pki.client] {
                assert_eq!(leaf.public_key.len(), pk);
                assert!(leaf
                    .cert
                    .windows(pk)
                    .any(|w| w == leaf.public_key.as_slice()));
                let x = openssl::x509::X509::from_der(&leaf.cert).unwrap();
                assert_eq!(x.signature().as_slice().len(), sig, "{suite}");
            }
            let mut p = pair(&c);
            assert_eq!(p.handshake(), Ended::Complete, "{suite}");
            assert_eq!(p.client.retransmissions() + p.server.retransmissions(), 0);
            let log = log_of(&p);
            let flights = assert_shape(suite, &log);
            let (client_first, server_first) = (flights[0].bytes, flights[1].bytes);
            let limit = limit_3x(suite, client_first as usize);
            assert!(server_first as usize <= limit, "{suite}: {flights:?}");
            assert!(
                server_first + flights[3].bytes > 3 * client_first,
                "{suite}: {flights:?}"
            );
            // the leaf and the CertificateVerify's signature are on the wire: more
            // than an ECDSA side sends in its whole handshake
            let (server, client) = (sent_by(&log, false), sent_by(&log, true));
            assert!(server >= pki.server.cert.len() + sig, "{suite}: {server} B");
            if mutual {
                let least = flights[0].bytes as usize + pki.client.cert.len() + sig;
                assert!(client >= least, "{suite}: {client} B");
            }
            let mut e = pair(&config(QuicSuite::new(group, mutual)));
            assert_eq!(e.handshake(), Ended::Complete);
            let ecdsa = log_of(&e);
            eprintln!(
                "quic {suite}: server {server} B (ECDSA {}), client {client} B (ECDSA {}), \
                 leaves {} B",
                sent_by(&ecdsa, false),
                sent_by(&ecdsa, true),
                pki.server.cert.len(),
            );
            eprintln!("quic {suite}: {}", shape(&flights));
        }
    }
}

/// ML-DSA-44's two verifications (the CA's signature on the server's leaf, the server's
/// CertificateVerify) and, when mutual, its signature replace ECDSA's, at pqm4's
/// Cortex-M4 cycles; a device with no published ML-DSA cost says so.
#[test]
fn ml_dsa_pricing_replaces_ecdsa_by_pqm4s_verify_and_sign() {
    let published = published_pq_costs().unwrap();
    let profiles = wtlsperf_models::device::profiles().unwrap();
    let device = |name: &str| profiles.iter().find(|p| p.name == name).unwrap();
    let m4 = device("nrf52840");
    let ecdsa = |p| crate::protocols::model::op_ms(m4, p).unwrap();
    let cycles = |c: f64| c / 64_000.0;
    for mutual in [false, true] {
        let classical = QuicSuite::new(Group::P256MlKem768, mutual);
        let pq = QuicSuite::signed(Group::P256MlKem768, Signature::MlDsa44, mutual);
        let ops = client_ops(pq);
        assert_eq!((ops.p256.verify, ops.p256.sign), (0, 0));
        assert_eq!((ops.p256.keygen, ops.p256.ecdh), (1, 1));
        assert_eq!(
            (ops.mldsa44_verify, ops.mldsa44_sign),
            (2, u32::from(mutual))
        );
        // pqm4 m4f ML-DSA-44: verify 1421623 cycles, sign 3943121
        let (sign, pq_sign) = if mutual {
            (ecdsa(Primitive::EcdsaSign), cycles(3_943_121.0))
        } else {
            (0.0, 0.0)
        };
        let want = client_ms(classical, m4, &published).unwrap()
            - 2.0 * ecdsa(Primitive::EcdsaVerify)
            - sign
            + 2.0 * cycles(1_421_623.0)
            + pq_sign;
        let got = client_ms(pq, m4, &published).unwrap();
        // operations.csv keeps six significant digits of each cycles/64 MHz
        assert!((got - want).abs() < 1e-3, "{pq}: {got} {want}");
        let steps = client_steps(pq, m4, &published).unwrap();
        assert!((steps.total_ms() - got).abs() < 1e-9);
    }
    // the ESP32 prices P-256 but has no published ML-DSA cost
    let esp = device("esp32");
    let pq = QuicSuite::signed(Group::P256, Signature::MlDsa44, false);
    assert!(client_ms(QuicSuite::new(Group::P256, false), esp, &published).is_ok());
    let e = client_ms(pq, esp, &published).unwrap_err();
    assert!(
        e.starts_with("not available") && e.contains("ML-DSA"),
        "{e}"
    );
}

/// The registry lists and parses the ML-DSA configurations; their traits say the
/// signature is post-quantum; they have no bound ratio (no raw ML-DSA operation is
/// timed, as for DTLS 1.3's); P-256 with ML-DSA-44, which a device can price and whose
/// server keeps to three times the client's Initial, is compared.
#[test]
fn the_registry_lists_the_ml_dsa_configurations() {
    use crate::registry::{contender, ProtocolEntry};
    let listed: Vec<String> = Quic
        .configurations()
        .iter()
        .map(|c| c.configuration())
        .collect();
    for name in ["x25519mlkem768-mldsa44", "p256mlkem768-mldsa44-mutual"] {
        assert!(listed.iter().any(|l| l == name), "{listed:?}");
        let c = contender(&format!("{NAME}:{name}")).unwrap();
        assert_eq!(c.configuration(), name);
        assert!(c.traits().post_quantum_signature);
        assert!(
            c.traits().level.contains("ML-DSA-44"),
            "{}",
            c.traits().level
        );
        assert!(c.raw_ops().unwrap().is_none());
    }
    let ecdsa = Quic.parse("p256mlkem768-ecdsa").unwrap();
    assert!(!ecdsa.traits().post_quantum_signature);
    let compared: Vec<String> = Quic.compared().iter().map(|c| c.configuration()).collect();
    assert!(compared.iter().any(|c| c == "p256-mldsa44"), "{compared:?}");
    let published = published_pq_costs().unwrap();
    let profiles = wtlsperf_models::device::profiles().unwrap();
    let m4 = profiles.iter().find(|p| p.name == "nrf52840").unwrap();
    for c in Quic.compared() {
        assert!(c.client_steps(m4, &published).is_ok(), "{c}");
    }
}

/// The load test's clients close their connection as they are confirmed: the server,
/// draining, wants no timer after that, so a gateway never wakes it again. A client
/// that leaves without closing (or acknowledging) leaves the server probing for the
/// acknowledgement of its HANDSHAKE_DONE.
#[test]
fn a_closing_client_leaves_its_server_with_no_timer_and_a_silent_one_does_not() {
    let suite = QuicSuite::new(Group::X25519, false);
    for closing in [false, true] {
        let c = if closing {
            config(suite).closing()
        } else {
            config(suite)
        };
        let mut p = pair(&c);
        assert_eq!(p.handshake(), Ended::Complete, "closing {closing}");
        assert_eq!(p.server.status(), Status::Complete(suite));
        assert_eq!(p.server.deadline().is_none(), closing, "closing {closing}");
        assert_eq!(p.client.deadline(), None);
        let flights = assert_shape(suite, &log_of(&p));
        eprintln!("closing {closing}: {}", shape(&flights));
    }
}
