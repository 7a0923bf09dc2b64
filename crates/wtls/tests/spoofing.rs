//! The engine's off-path spoofing rules (docs/security.md): someone who can forge the peer's address but cannot read
//! its traffic changes nothing that dropping packets would not. Unauthenticated input
//! that does not fit is dropped with the connection's state unchanged, a flight counts
//! only as a whole, and only a connection that proved it owns a session may end it.

use std::sync::{Arc, Mutex};

use wtls::crypto::pk::{self, KeyPair};
use wtls::handshake::{
    AuthMode, Client, ClientConfig, Event, HandshakeKind, KeyExchangeOffer, Now, ServerConfig,
    ServerConnection, ServerCredential, SessionCache, StoredSession,
};
use wtls::msgs::common::{CipherSuite, Identifier};
use wtls::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};
use wtls::pki::Authority;
use wtls::probe::Probe;
use wtls::suite::Case;

const NOW: u32 = 1_700_000_000;

fn now() -> Now {
    Now::new(1_000, NOW)
}

fn configs(case: &str, auth: AuthMode) -> (ClientConfig, ServerConfig) {
    let case = Case::parse(case).unwrap();
    let name = Authority::default_name(case.ca);
    let ca = Authority::new_root(case.ca, &name, NOW - 60, NOW + 60).unwrap();
    let issue = |subject: &str| {
        let key = KeyPair::generate(case.leaf).unwrap();
        let cert = ca.issue(subject, &key, NOW - 60, NOW + 60).unwrap();
        (cert, key)
    };
    let (server_cert, server_key) = issue("gateway.wtlsperf");
    let suites = vec![CipherSuite::new(
        BulkCipherAlgorithm::Rc5Cbc,
        MacAlgorithm::Sha,
    )];
    let mut client = ClientConfig::new(
        vec![KeyExchangeOffer {
            suite: case.key_exchange_suite(),
            spec: case.leaf,
            identifier: Identifier::Null,
        }],
        suites.clone(),
    );
    client.trusted_cas = vec![(case.ca, ca.cert.clone())];
    client.credential = Some(issue("client.wtlsperf"));
    let mut server = ServerConfig::new(
        vec![ServerCredential {
            spec: case.leaf,
            cert: server_cert,
            key: server_key,
            ca_spec: case.ca,
            ca_subject: ca.cert.tbs.subject.clone(),
            ca_key_hash: Some(pk::key_hash_sha(&ca.cert.tbs.public_key)),
        }],
        suites,
    );
    server.trusted_client_cas = vec![(case.ca, ca.cert.clone())];
    server.client_auth = auth;
    server.session_cache = Some(Arc::new(Mutex::new(SessionCache::new(16, u64::MAX))));
    (client, server)
}

/// A client and a server one step before the client's second flight reaches the
/// server: returns them and that flight.
fn before_client_flight(
    client: &ClientConfig,
    server: &ServerConfig,
    auth: AuthMode,
    resume: Option<StoredSession>,
) -> (Client, ServerConnection, Vec<Vec<u8>>) {
    let mut c = Client::new(Arc::new(client.clone()), auth, resume, Probe::off(), now());
    let mut s = ServerConnection::new(Arc::new(server.clone()), Probe::off(), now());
    let hello = c.start(now()).unwrap().datagrams;
    let mut flight = Vec::new();
    for d in s.handle_datagram(&hello[0], now()).datagrams {
        flight.extend(c.handle_datagram(&d, now()).datagrams);
    }
    (c, s, flight)
}

fn finish(c: &mut Client, s: &mut ServerConnection, flight: &[Vec<u8>]) {
    for d in flight {
        for answer in s.handle_datagram(d, now()).datagrams {
            c.handle_datagram(&answer, now());
        }
    }
    assert!(c.is_established() && s.is_established());
}

fn dropped(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::Dropped(_)))
}

/// A plaintext ChangeCipherSpec: type 1, S and L set, sequence 1, length 1.
const FORGED_CCS: [u8; 6] = [0xC1, 0x00, 0x01, 0x00, 0x01, 0x01];

#[test]
fn a_forged_change_cipher_spec_mid_handshake_ends_nothing() {
    for (case, auth) in [
        ("rsa1024/rsa1024", AuthMode::ServerAuth),
        ("160p/160p", AuthMode::Mutual),
    ] {
        let (client, server) = configs(case, auth);
        let (mut c, mut s, flight) = before_client_flight(&client, &server, auth, None);
        let out = s.handle_datagram(&FORGED_CCS, now());
        assert!(
            out.datagrams.is_empty(),
            "{case}: answered {:?}",
            out.events
        );
        assert!(dropped(&out.events), "{case}: {:?}", out.events);
        assert!(s.is_half_open());
        finish(&mut c, &mut s, &flight);
    }
}

#[test]
fn a_forged_client_flight_is_dropped_whole_and_the_genuine_one_completes() {
    let (client, server) = configs("rsa1024/rsa1024", AuthMode::Mutual);
    let (mut c, mut s, flight) = before_client_flight(&client, &server, AuthMode::Mutual, None);
    // The genuine flight with its last byte (inside the Finished) changed, and every
    // prefix of it that ends on a record: none completes a flight.
    let mut forged = flight[0].clone();
    let n = forged.len();
    forged[n - 1] ^= 0x55;
    for attempt in [forged, flight[0][..flight[0].len() / 2].to_vec()] {
        let out = s.handle_datagram(&attempt, now());
        assert!(out.datagrams.is_empty() && out.alert_sent().is_none());
        assert!(s.is_half_open());
    }
    finish(&mut c, &mut s, &flight);
}

#[test]
fn a_forged_server_hello_alone_does_not_move_the_client() {
    let (client, server) = configs("224p/224p", AuthMode::ServerAuth);
    let mut c = Client::new(
        Arc::new(client.clone()),
        AuthMode::ServerAuth,
        None,
        Probe::off(),
        now(),
    );
    let mut s = ServerConnection::new(Arc::new(server), Probe::off(), now());
    let hello = c.start(now()).unwrap().datagrams;
    let answer = s.handle_datagram(&hello[0], now()).datagrams;
    // The ServerHello record alone (the first record of the server's flight).
    let len = usize::from(u16::from_be_bytes([answer[0][3], answer[0][4]]));
    let out = c.handle_datagram(&answer[0][..5 + len], now());
    assert!(
        out.datagrams.is_empty() && dropped(&out.events),
        "{:?}",
        out.events
    );
    // A garbage datagram: dropped, nothing sent.
    let out = c.handle_datagram(&[0xC3, 0x00, 0x00, 0x00, 0x01, 0xFF], now());
    assert!(out.datagrams.is_empty() && !c.is_closed());
    // The whole genuine flight still works.
    let flight = c.handle_datagram(&answer[0], now()).datagrams;
    finish(&mut c, &mut s, &flight);
}

#[test]
fn a_session_quoted_by_a_stranger_is_not_cancelled() {
    let (client, server) = configs("rsa1024/rsa1024", AuthMode::ServerAuth);
    let cache = server.session_cache.clone().unwrap();
    let (mut c, mut s, flight) = before_client_flight(&client, &server, AuthMode::ServerAuth, None);
    finish(&mut c, &mut s, &flight);
    let session = c.session().unwrap();
    assert_eq!(cache.held(), Some(1));

    // A stranger quotes the session id (it travels in clear) without the master
    // secret, then sends garbage: nothing of it may remove the session.
    let stranger = StoredSession {
        master_secret: zeroize::Zeroizing::new([7u8; 20]),
        ..session.clone()
    };
    let (_, mut impostor, _) =
        before_client_flight(&client, &server, AuthMode::ServerAuth, Some(stranger));
    let out = impostor.handle_datagram(&FORGED_CCS, now());
    assert!(out.alert_sent().is_none());
    let out = impostor.handle_datagram(&[0xC3, 0x00, 0x05, 0x00, 0x01, 0x01], now());
    assert!(out.alert_sent().is_none());
    assert_eq!(cache.held(), Some(1), "the session was cancelled");

    // The owner still resumes.
    let (mut c, mut s, flight) =
        before_client_flight(&client, &server, AuthMode::ServerAuth, Some(session));
    finish(&mut c, &mut s, &flight);
    assert_eq!(s.handshake_kind(), Some(HandshakeKind::Abbreviated));
}

/// A forged clear-text alert with a sequence number far ahead must not move the replay
/// window of an established connection (that would make every genuine record stale),
/// and the datagram is reported as dropped whole.
#[test]
fn a_forged_alert_far_ahead_does_not_stale_the_genuine_records() {
    let (client, server) = configs("rsa1024/rsa1024", AuthMode::ServerAuth);
    let (mut c, mut s, flight) = before_client_flight(&client, &server, AuthMode::ServerAuth, None);
    finish(&mut c, &mut s, &flight);
    let forged = [0xC2, 0x70, 0x00, 0x00, 0x06, 0x03, 0x28, 1, 2, 3, 4];
    let out = s.handle_datagram(&forged, now());
    assert!(out.dropped, "{:?}", out.events);
    assert!(matches!(
        out.events.as_slice(),
        [Event::AlertIgnored { .. }]
    ));
    assert!(s.is_established());
    let data = c.seal_application_data(b"still here").unwrap();
    let out = s.handle_datagram(&data, now());
    assert!(!out.dropped);
    assert!(
        matches!(out.events.as_slice(), [Event::ApplicationData(d)] if d == b"still here"),
        "{:?}",
        out.events
    );
}

#[test]
fn a_dropped_handshake_datagram_is_flagged_and_a_taken_one_is_not() {
    let (client, server) = configs("160p/160p", AuthMode::ServerAuth);
    let (mut c, mut s, flight) = before_client_flight(&client, &server, AuthMode::ServerAuth, None);
    assert!(s.handle_datagram(&FORGED_CCS, now()).dropped);
    let out = s.handle_datagram(&flight[0], now());
    assert!(!out.dropped && out.completed().is_some());
    for d in out.datagrams {
        assert!(!c.handle_datagram(&d, now()).dropped);
    }
    assert!(c.is_established());
}
