//! Every handshake flow end to end, in memory, with the failure paths and their alerts.

use std::sync::{Arc, OnceLock};

use wtls::codec::Codec;
use wtls::handshake::{
    AuthMode, Client, ClientConfig, DropReason, Event, HandshakeKind, Now, Packing, Policy,
    ServerConfig, ServerConnection,
};
use wtls::msgs::common::{CipherSuite, Identifier};
use wtls::msgs::enums::{AlertDescription, BulkCipherAlgorithm, KeyExchangeSuite, MacAlgorithm};
use wtls::probe::{Operation, Probe};
use wtls::suite::Specifier;
use wtls::testing::{
    into_endpoints, now, pair as new_pair, run_to_quiet, CaseKeys, Direction, Fate, Pair, UNIX_NOW,
};

const NOW: u32 = UNIX_NOW;

/// The keys of a case: the shared, seeded fixtures of `wtls::testing`.
fn creds(case: &str) -> Arc<CaseKeys> {
    CaseKeys::shared(case)
}

fn suites() -> Vec<CipherSuite> {
    vec![CipherSuite::new(
        BulkCipherAlgorithm::Rc5Cbc,
        MacAlgorithm::Sha,
    )]
}

struct Setup {
    client: ClientConfig,
    server: ServerConfig,
    auth: AuthMode,
}

fn setup(case: &str, auth: AuthMode) -> Setup {
    let c = creds(case);
    Setup {
        client: c.client_config(&suites()),
        server: c.server_config(auth, &suites()),
        auth,
    }
}

/// A finished run: the Pair driver after it went quiet.
type Run = Pair<'static>;

/// Drive both sides through the Pair driver until nothing is in flight, on a thread
/// seeded with a fixed value, so a failure replays exactly. `tamper` may alter each
/// client-to-server datagram (index, bytes).
fn run_with<'a>(
    s: &Setup,
    resume: Option<wtls::handshake::StoredSession>,
    server: Option<ServerConnection>,
    mut tamper: impl FnMut(usize, &mut Vec<u8>) + 'a,
) -> Pair<'a> {
    let _seeded = wtls::crypto::random::seed_thread(SEED).unwrap();
    let client = Client::new(
        Arc::new(s.client.clone()),
        s.auth,
        resume,
        Probe::off(),
        now(),
    );
    let server = server
        .unwrap_or_else(|| ServerConnection::new(Arc::new(s.server.clone()), Probe::off(), now()));
    let mut pair = new_pair(client, server).with_hook(move |dir, i, d| {
        if dir == Direction::ToServer {
            tamper(i, d);
        }
        Fate::Deliver
    });
    let outcome = run_to_quiet(&mut pair);
    assert!(
        outcome.quiet,
        "still in flight after {} rounds",
        outcome.rounds
    );
    pair
}

/// The seed of every driven run.
const SEED: u64 = 16;

fn run(s: &Setup) -> Run {
    run_with(s, None, None, |_, _| {})
}

fn server_alert(r: &Pair) -> Option<AlertDescription> {
    r.server.alert_sent()
}

fn client_alert(r: &Pair) -> Option<AlertDescription> {
    r.client.alert_sent()
}

/// Why the client dropped the last input it refused.
fn client_dropped(r: &Pair) -> Option<AlertDescription> {
    r.client.last_dropped().map(|e| e.alert())
}

fn assert_complete(r: &Pair) {
    assert!(
        r.client.is_established() && r.server.is_established(),
        "client alert {:?}, server alert {:?}",
        client_alert(r),
        server_alert(r)
    );
}

fn exchange_data(r: &mut Pair) {
    let d = r.client.seal_application_data(b"ping").unwrap();
    let out = r.server.handle_datagram(&d, r.now);
    assert_eq!(out.events, vec![Event::ApplicationData(b"ping".to_vec())]);
    let d = r.server.seal_application_data(b"pong").unwrap();
    let out = r.client.handle_datagram(&d, r.now);
    assert_eq!(out.events, vec![Event::ApplicationData(b"pong".to_vec())]);
}

#[test]
fn full_server_auth_rsa_and_ecdh() {
    for case in ["rsa1024/rsa1024", "160p/160p", "256p/224p", "163k/163k"] {
        let mut r = run(&setup(case, AuthMode::ServerAuth));
        assert_complete(&r);
        exchange_data(&mut r);
        assert!(!r.server.client_authenticated(), "{case}");
    }
}

#[test]
fn full_mutual_rsa_and_ecdh() {
    for case in ["rsa1024/rsa1024", "160p/160p", "233r/163r"] {
        let mut r = run(&setup(case, AuthMode::Mutual));
        assert_complete(&r);
        assert!(r.server.client_authenticated(), "{case}");
        exchange_data(&mut r);
    }
}

#[test]
fn mutual_ecdh_has_no_key_exchange_or_verify_and_rsa_has_both() {
    let s = setup("160p/160p", AuthMode::Mutual);
    let mut client = Client::new(
        Arc::new(s.client.clone()),
        s.auth,
        None,
        Probe::off(),
        now(),
    );
    let mut server = ServerConnection::new(Arc::new(s.server.clone()), Probe::off(), now());
    let ch = client.start(now()).unwrap().datagrams;
    let flight = server.handle_datagram(&ch[0], now()).datagrams;
    let out = client.handle_datagram(&flight[0], now());
    let types = handshake_types(&out.datagrams[0]);
    assert_eq!(
        types,
        vec![11],
        "mutual ECDH_ECDSA: Certificate only, then CCS+Finished"
    );

    let s = setup("rsa1024/rsa1024", AuthMode::Mutual);
    let mut client = Client::new(
        Arc::new(s.client.clone()),
        s.auth,
        None,
        Probe::off(),
        now(),
    );
    let mut server = ServerConnection::new(Arc::new(s.server.clone()), Probe::off(), now());
    let ch = client.start(now()).unwrap().datagrams;
    let flight = server.handle_datagram(&ch[0], now()).datagrams;
    let out = client.handle_datagram(&flight[0], now());
    let types = handshake_types(&out.datagrams[0]);
    assert_eq!(
        types,
        vec![11, 16, 15],
        "mutual RSA: Certificate, ClientKeyExchange, CertificateVerify"
    );
}

/// Handshake types of the clear-text handshake records of a datagram.
fn handshake_types(datagram: &[u8]) -> Vec<u8> {
    wtls::msgs::record::parse_datagram(datagram)
        .unwrap()
        .iter()
        .filter(|r| {
            r.header.content_type == wtls::msgs::enums::ContentType::Handshake
                && !r.header.cipher_spec
        })
        .map(|r| r.fragment[0])
        .collect()
}

#[test]
fn thesis_server_auth_flow_sends_an_empty_client_certificate() {
    let mut s = setup("256p/256p", AuthMode::ServerAuth);
    s.server.thesis_certificate_request = true;
    let mut client = Client::new(
        Arc::new(s.client.clone()),
        s.auth,
        None,
        Probe::off(),
        now(),
    );
    let mut server = ServerConnection::new(Arc::new(s.server.clone()), Probe::off(), now());
    let ch = client.start(now()).unwrap().datagrams;
    let flight = server.handle_datagram(&ch[0], now()).datagrams;
    assert_eq!(handshake_types(&flight[0]), vec![2, 11, 13, 14]);
    let out = client.handle_datagram(&flight[0], now());
    assert_eq!(handshake_types(&out.datagrams[0]), vec![11, 16]);
    let out = server.handle_datagram(&out.datagrams[0], now());
    client.handle_datagram(&out.datagrams[0], now());
    assert!(client.is_established() && server.is_established());
}

#[test]
fn anonymous_suites_complete_only_when_enabled() {
    for (case, suite) in [
        ("rsa1024/rsa1024", KeyExchangeSuite::RsaAnon),
        ("160p/160p", KeyExchangeSuite::EcdhAnon),
    ] {
        let mut s = setup(case, AuthMode::ServerAuth);
        s.client.offers[0].suite = suite;
        // A default client does not even offer it ...
        let mut client = Client::new(
            Arc::new(s.client.clone()),
            s.auth,
            None,
            Probe::off(),
            now(),
        );
        let err = client.start(now()).unwrap_err();
        assert_eq!(
            err.alert(),
            AlertDescription::InsufficientSecurity,
            "{case}"
        );
        // ... and a default server refuses a client that does.
        s.client.policy = Policy::permissive();
        let r = run(&s);
        assert_eq!(
            server_alert(&r),
            Some(AlertDescription::InsufficientSecurity),
            "{case}"
        );
        s.server.policy = Policy::permissive();
        let mut r = run(&s);
        assert_complete(&r);
        exchange_data(&mut r);
    }
}

#[test]
fn resumption_runs_no_public_key_operation() {
    let s = setup("256p/256p", AuthMode::ServerAuth);
    let first = run(&s);
    assert_complete(&first);
    let session = first.client.session().expect("resumable session");
    let clock: Arc<dyn wtls::probe::Clock> = Arc::new(Mono);
    let server = ServerConnection::new(
        Arc::new(s.server.clone()),
        Probe::new(clock, wtls::probe::ProbeLevel::Full),
        now(),
    );
    let mut r = run_with(&s, Some(session), Some(server), |_, _| {});
    assert_complete(&r);
    assert!(r
        .client
        .outputs
        .iter()
        .any(|o| o.completed() == Some(HandshakeKind::Abbreviated)));
    let ops = &r.server.probe().operations;
    assert!(
        ops.iter().all(|o| !o.operation.is_public_key()),
        "public-key work in a resumed handshake: {ops:?}"
    );
    exchange_data(&mut r);
}

struct Mono;
impl wtls::probe::Clock for Mono {
    fn wall_ns(&self) -> u64 {
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    }
    fn cpu_ns(&self) -> u64 {
        self.wall_ns()
    }
}

#[test]
fn optimised_handshake_uses_the_servers_copy_of_the_client_certificate() {
    let mut s = setup("160p/160p", AuthMode::ServerAuth);
    let id = Identifier::text("client.wtlsperf");
    s.client.offers[0].identifier = id.clone();
    s.server
        .client_certificates
        .insert(id.to_bytes(), creds("160p/160p").client_cert.clone());
    let mut client = Client::new(
        Arc::new(s.client.clone()),
        s.auth,
        None,
        Probe::off(),
        now(),
    );
    let mut server = ServerConnection::new(Arc::new(s.server.clone()), Probe::off(), now());
    let ch = client.start(now()).unwrap().datagrams;
    let flight = server.handle_datagram(&ch[0], now()).datagrams;
    assert_eq!(
        handshake_types(&flight[0]),
        vec![2, 11],
        "ServerHello, Certificate, then CCS+Finished"
    );
    let out = client.handle_datagram(&flight[0], now());
    assert_eq!(out.completed(), Some(HandshakeKind::Optimised));
    let out = server.handle_datagram(&out.datagrams[0], now());
    assert_eq!(out.completed(), Some(HandshakeKind::Optimised));
}

#[test]
fn per_message_packing_sends_one_record_per_datagram() {
    let mut s = setup("rsa1024/rsa1024", AuthMode::Mutual);
    s.client.packing = Packing::MessagePerDatagram;
    s.server.packing = Packing::MessagePerDatagram;
    let r = run(&s);
    assert_complete(&r);
    let server_datagrams: usize = r.server.outputs.iter().map(|o| o.datagrams.len()).sum();
    assert_eq!(
        server_datagrams,
        4 + 2,
        "SH, Cert, CertReq, SHD; CCS, Finished"
    );
}

#[test]
fn retransmitted_client_hello_gets_the_cached_flight() {
    let s = setup("256p/256p", AuthMode::ServerAuth);
    let mut client = Client::new(
        Arc::new(s.client.clone()),
        s.auth,
        None,
        Probe::off(),
        now(),
    );
    let mut server = ServerConnection::new(Arc::new(s.server.clone()), Probe::off(), now());
    let ch = client.start(now()).unwrap().datagrams;
    let first = server.handle_datagram(&ch[0], now());
    let again = server.handle_datagram(&ch[0], now());
    assert_eq!(first.datagrams, again.datagrams);
    assert!(again
        .events
        .iter()
        .any(|e| matches!(e, Event::Retransmitted)));
    // The client's own retransmission timer resends the identical flight.
    let late = Now::new(10_000_000_000, NOW);
    let re = client.on_timeout(late).unwrap();
    assert_eq!(re.datagrams, ch);
}

#[test]
fn a_retransmitted_mutual_hello_gets_the_same_flight_from_shared_records() {
    // The Certificate and the CertificateRequest are kept by reference in the answer
    // cache (a half-open connection must stay small, docs/network.md); the flight put back
    // together must be the one sent, byte for byte, in both packings.
    for packing in [Packing::FlightPerDatagram, Packing::MessagePerDatagram] {
        let mut s = setup("256p/256p", AuthMode::Mutual);
        s.server.packing = packing;
        s.client.packing = packing;
        let mut client = Client::new(
            Arc::new(s.client.clone()),
            s.auth,
            None,
            Probe::off(),
            now(),
        );
        let mut server = ServerConnection::new(Arc::new(s.server.clone()), Probe::off(), now());
        let ch = client.start(now()).unwrap().datagrams;
        let first = server.handle_datagram(&ch[0], now());
        let sent: usize = first.datagrams.iter().map(Vec::len).sum();
        let held = server.heap_bytes();
        let again = server.handle_datagram(&ch[0], now());
        assert_eq!(first.datagrams, again.datagrams, "{packing:?}");
        assert!(again
            .events
            .iter()
            .any(|e| matches!(e, Event::Retransmitted)));
        // What is held is the ServerHello and ServerHelloDone, not the shared records
        // (checked for the gateway's packing; one record per datagram is a lab mode).
        if packing == Packing::FlightPerDatagram {
            assert!(held < sent / 2, "holds {held} B of a {sent} B flight");
        }
    }
}

#[test]
fn wrong_ca_is_unknown_ca() {
    // The client trusts only the 163k CA. A server that offers no key from that CA is
    // refused by the server itself ...
    let mut s = setup("160p/160p", AuthMode::ServerAuth);
    s.client.trusted_cas = vec![(Specifier::Nist163k, creds("163k/163k").ca.cert.clone())];
    let r = run(&s);
    assert_eq!(server_alert(&r), Some(AlertDescription::HandshakeFailure));
    // ... and one that sends a certificate from another CA anyway is refused by the
    // client for unknown_ca. The server's flight is not authenticated (anyone could
    // have forged it), so the client drops it unanswered and keeps waiting (docs/security.md, off-path spoofing).
    s.server.credentials[0].ca_subject = creds("163k/163k").ca.cert.tbs.subject.clone();
    let r = run(&s);
    assert_eq!(client_alert(&r), None);
    assert_eq!(client_dropped(&r), Some(AlertDescription::UnknownCa));
    assert!(!r.client.is_established() && !r.server.is_established());
}

#[test]
fn expired_server_certificate_is_refused() {
    let mut s = setup("160p/160p", AuthMode::ServerAuth);
    let c = creds("160p/160p");
    let old =
        c.ca.issue("gateway.wtlsperf", &c.server_key, NOW - 7200, NOW - 3600)
            .unwrap();
    s.server.credentials[0].cert = old;
    let r = run(&s);
    assert_eq!(client_alert(&r), None);
    assert_eq!(
        client_dropped(&r),
        Some(AlertDescription::CertificateExpired)
    );
}

#[test]
fn unknown_cipher_suite_is_a_handshake_failure() {
    let mut s = setup("160p/160p", AuthMode::ServerAuth);
    s.client.cipher_suites = vec![CipherSuite::new(
        BulkCipherAlgorithm::IdeaCbc,
        MacAlgorithm::Md5,
    )];
    let r = run(&s);
    assert_eq!(server_alert(&r), Some(AlertDescription::HandshakeFailure));
}

#[test]
fn weak_cipher_suites_are_refused_by_default() {
    let mut s = setup("160p/160p", AuthMode::ServerAuth);
    let weak = CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc40, MacAlgorithm::Sha40);
    s.client.cipher_suites = vec![weak];
    s.server.cipher_suites = vec![weak];
    let mut client = Client::new(
        Arc::new(s.client.clone()),
        s.auth,
        None,
        Probe::off(),
        now(),
    );
    assert_eq!(
        client.start(now()).unwrap_err().alert(),
        AlertDescription::InsufficientSecurity
    );
    s.client.policy = Policy::permissive();
    let r = run(&s);
    assert_eq!(
        server_alert(&r),
        Some(AlertDescription::InsufficientSecurity)
    );
}

/// A record that fails its MAC is dropped unanswered (DTLS, RFC 6347 §4.1.2.7): the
/// flight it belonged to is incomplete, so the server's state stays as it was and the
/// genuine flight can still complete the handshake.
#[test]
fn tampered_record_is_dropped_and_the_genuine_flight_still_completes() {
    let s = setup("160p/160p", AuthMode::ServerAuth);
    // Flip the last byte of the client's second flight: inside the protected Finished.
    let r = run_with(&s, None, None, |i, d| {
        if i == 1 {
            let n = d.len();
            d[n - 1] ^= 1;
        }
    });
    assert_eq!(server_alert(&r), None);
    assert!(!r.server.is_established());
    let events: Vec<&Event> = r.server.outputs.iter().flat_map(|o| &o.events).collect();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Dropped(DropReason::FailedAuthentication(_)))),
        "{events:?}"
    );
    // The untampered flight, sent again, completes the handshake on the same server.
    let mut flight = Vec::new();
    let r = run_with(&s, None, None, |i, d| {
        if i == 1 {
            flight = d.clone();
            let n = d.len();
            d[n - 1] ^= 1;
        }
    });
    let (mut client, mut server) = into_endpoints(r);
    let out = server.handle_datagram(&flight, now());
    assert_eq!(out.completed(), Some(HandshakeKind::Full));
    for d in out.datagrams {
        client.handle_datagram(&d, now());
    }
    assert!(client.is_established() && server.is_established());
}

/// The server's verdict on a Finished that does not verify is the same whether the RSA
/// padding was right or not (no padding oracle): the flight is dropped as unauthenticated,
/// with decrypt_error kept as the reason.
#[test]
fn bad_finished_is_a_decrypt_error_without_a_padding_oracle() {
    // NULL cipher and no MAC, so the Finished check itself is what fails. A corrupted
    // RSA ciphertext makes the server continue with a random secret.
    let mut s = setup("rsa1024/rsa1024", AuthMode::ServerAuth);
    let null = CipherSuite::new(BulkCipherAlgorithm::Null, MacAlgorithm::Sha0);
    s.client.cipher_suites = vec![null];
    s.server.cipher_suites = vec![null];
    s.client.policy = Policy::permissive();
    s.server.policy = Policy::permissive();
    let r = run_with(&s, None, None, |i, d| {
        if i == 1 {
            // Inside the RSA ciphertext of ClientKeyExchange (after 5 record-header
            // bytes, 3 handshake-header bytes and the 2-byte length).
            d[5 + 3 + 2 + 10] ^= 0x40;
        }
    });
    assert_eq!(server_alert(&r), None);
    assert_eq!(
        r.server.last_dropped().map(|e| e.alert()),
        Some(AlertDescription::DecryptError)
    );
}

#[test]
fn probes_name_every_message_of_the_mutual_rsa_flow() {
    let s = setup("rsa1024/rsa1024", AuthMode::Mutual);
    let clock: Arc<dyn wtls::probe::Clock> = Arc::new(Mono);
    let mut client = Client::new(
        Arc::new(s.client.clone()),
        s.auth,
        None,
        Probe::new(clock.clone(), wtls::probe::ProbeLevel::Full),
        now(),
    );
    let mut server = ServerConnection::new(
        Arc::new(s.server.clone()),
        Probe::new(clock, wtls::probe::ProbeLevel::Full),
        now(),
    );
    let ch = client.start(now()).unwrap().datagrams;
    let f1 = server.handle_datagram(&ch[0], now()).datagrams;
    let f2 = client.handle_datagram(&f1[0], now()).datagrams;
    let f3 = server.handle_datagram(&f2[0], now()).datagrams;
    client.handle_datagram(&f3[0], now());
    let names = |p: &wtls::probe::HandshakeProbe| {
        p.messages
            .iter()
            .map(|m| m.message.name())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(client.probe()),
        [
            "CH", "SH", "SCERT", "CERTREQ", "SHD", "CCERT", "CKX", "CERTVRFY", "CCCS", "CFIN",
            "SCCS", "SFIN"
        ]
    );
    assert_eq!(
        names(server.probe()),
        [
            "CH", "SH", "SCERT", "CERTREQ", "SHD", "CCERT", "CKX", "CERTVRFY", "CCCS", "CFIN",
            "SCCS", "SFIN"
        ]
    );
    assert!(server
        .probe()
        .operation(wtls::probe::Message::CKX, Operation::RSADEC)
        .is_some());
    assert!(client
        .probe()
        .operation(wtls::probe::Message::CKX, Operation::RSAENC)
        .is_some());
}

#[test]
fn retransmitted_flights_are_identical_in_both_packings() {
    for packing in [Packing::FlightPerDatagram, Packing::MessagePerDatagram] {
        for case in ["rsa1024/rsa1024", "160p/160p"] {
            let mut s = setup(case, AuthMode::Mutual);
            s.client.packing = packing;
            s.server.packing = packing;
            let mut client = Client::new(
                Arc::new(s.client.clone()),
                s.auth,
                None,
                Probe::off(),
                now(),
            );
            let server_config = Arc::new(s.server.clone());
            let mut server = ServerConnection::new(server_config.clone(), Probe::off(), now());
            let ch = client.start(now()).unwrap().datagrams;
            let first = server.handle_datagram(&ch[0], now());
            let again = server.handle_datagram(&ch[0], now());
            assert_eq!(first.datagrams, again.datagrams, "{case} {packing:?}");
            // A second connection shares the certificate record and still answers
            // its own retransmission byte for byte.
            let mut other = ServerConnection::new(server_config, Probe::off(), now());
            let mut client2 = Client::new(
                Arc::new(s.client.clone()),
                s.auth,
                None,
                Probe::off(),
                now(),
            );
            let ch2 = client2.start(now()).unwrap().datagrams;
            let a = other.handle_datagram(&ch2[0], now());
            let b = other.handle_datagram(&ch2[0], now());
            assert_eq!(a.datagrams, b.datagrams);
            // And the handshake completes from the first copy.
            let mut to_server = Vec::new();
            for d in &first.datagrams {
                to_server.extend(client.handle_datagram(d, now()).datagrams);
            }
            let mut to_client = Vec::new();
            for d in &to_server {
                to_client.extend(server.handle_datagram(d, now()).datagrams);
            }
            for d in &to_client {
                client.handle_datagram(d, now());
            }
            assert!(
                client.is_established() && server.is_established(),
                "{case} {packing:?}"
            );
        }
    }
}
