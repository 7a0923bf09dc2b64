//! Conformance choices of docs/protocol.md end to end, in memory: the ParameterIndex numberings
//! (WAP-261 by default, the thesis' as a profile), what trusted_key_ids carries, RSA
//! keys of a size the parameters do not name, and alerts that cannot be authenticated.

use std::sync::Arc;

use wtls::codec::Codec;
use wtls::crypto::pk::{self, KeyPair};
use wtls::handshake::{
    AuthMode, Client, ClientConfig, Event, KeyExchangeOffer, Now, Output, ParameterNumbering,
    PeerMisbehaved, Policy, ProtocolError, ServerConfig, ServerConnection, ServerCredential,
    TrustedKeyIds,
};
use wtls::msgs::common::{CipherSuite, Identifier, ParameterSpecifier};
use wtls::msgs::enums::{AlertDescription, BulkCipherAlgorithm, KeyExchangeSuite, MacAlgorithm};
use wtls::msgs::handshake::HandshakeMessage;
use wtls::msgs::record::parse_datagram;
use wtls::pki::Authority;
use wtls::probe::Probe;
use wtls::suite::{Case, Specifier};

const NOW: u32 = 1_700_000_000;

fn now() -> Now {
    Now::new(1_000, NOW)
}

fn suites() -> Vec<CipherSuite> {
    vec![CipherSuite::new(
        BulkCipherAlgorithm::Rc5Cbc,
        MacAlgorithm::Sha,
    )]
}

/// Client and server of one case, every certificate issued under `numbering` and both
/// ends reading it.
fn configs(case: &str, numbering: ParameterNumbering) -> (ClientConfig, ServerConfig) {
    let case = Case::parse(case).unwrap();
    let name = Authority::default_name(case.ca);
    let ca = Authority::new_root_numbered(case.ca, &name, NOW - 60, NOW + 60, numbering).unwrap();
    let server_key = KeyPair::generate(case.leaf).unwrap();
    let server_cert = ca
        .issue("gateway.wtlsperf", &server_key, NOW - 60, NOW + 60)
        .unwrap();
    let mut client = ClientConfig::new(
        vec![KeyExchangeOffer {
            suite: case.key_exchange_suite(),
            spec: case.leaf,
            identifier: Identifier::Null,
        }],
        suites(),
    );
    client.trusted_cas = vec![(case.ca, ca.cert.clone())];
    client.numbering = numbering;
    let mut server = ServerConfig::new(
        vec![ServerCredential {
            spec: case.leaf,
            cert: server_cert,
            key: server_key,
            ca_spec: case.ca,
            ca_subject: ca.cert.tbs.subject.clone(),
            ca_key_hash: Some(pk::key_hash_sha(&ca.cert.tbs.public_key)),
        }],
        suites(),
    );
    server.numbering = numbering;
    (client, server)
}

struct Run {
    client: Client,
    server: ServerConnection,
    client_hello: Vec<u8>,
    server_out: Vec<Output>,
}

/// Both sides until neither has anything to send.
fn run(client: ClientConfig, server: ServerConfig) -> Run {
    let mut c = Client::new(
        Arc::new(client),
        AuthMode::ServerAuth,
        None,
        Probe::off(),
        now(),
    );
    let mut s = ServerConnection::new(Arc::new(server), Probe::off(), now());
    let mut to_server = c.start(now()).unwrap().datagrams;
    let client_hello = to_server[0].clone();
    let mut server_out = Vec::new();
    for _ in 0..6 {
        let mut to_client = Vec::new();
        for d in to_server.drain(..) {
            let out = s.handle_datagram(&d, now());
            to_client.extend(out.datagrams.clone());
            server_out.push(out);
        }
        for d in to_client {
            to_server.extend(c.handle_datagram(&d, now()).datagrams);
        }
    }
    Run {
        client: c,
        server: s,
        client_hello,
        server_out,
    }
}

fn client_hello(datagram: &[u8]) -> wtls::msgs::handshake::ClientHello {
    let records = parse_datagram(datagram).unwrap();
    match HandshakeMessage::read_record(records[0].fragment, None).unwrap() {
        HandshakeMessage::ClientHello(ch) => ch,
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_numbering_completes_on_numbered_unnumbered_and_rsa_keys() {
    for numbering in ParameterNumbering::ALL {
        for case in ["224p/224p", "256p/256p", "rsa2048/rsa2048", "160p/160p"] {
            let (client, server) = configs(case, numbering);
            let r = run(client, server);
            assert!(
                r.client.is_established() && r.server.is_established(),
                "{case} under {numbering}: {:?}",
                r.server_out.iter().find_map(|o| o.alert_sent())
            );
            let ch = client_hello(&r.client_hello);
            let leaf = Case::parse(case).unwrap().leaf;
            let expected = match (numbering, leaf) {
                (ParameterNumbering::Thesis, l) => ParameterSpecifier::Index(l.thesis_number()),
                (_, Specifier::Nist224p) => ParameterSpecifier::Index(12),
                (_, Specifier::Wtls7_160) => ParameterSpecifier::Index(7),
                (_, Specifier::Rsa2048) => ParameterSpecifier::Index(0),
                (_, l) => l.parameter_specifier(numbering),
            };
            assert_eq!(ch.client_key_ids[0].parameters, expected, "{case}");
        }
    }
}

#[test]
fn a_server_on_the_other_numbering_cannot_read_the_offer() {
    let (client, _) = configs("224p/224p", ParameterNumbering::Wap261);
    let (_, server) = configs("224p/224p", ParameterNumbering::Thesis);
    let r = run(client, server);
    // 12 names no thesis specifier.
    assert_eq!(
        r.server_out[0].alert_sent(),
        Some(AlertDescription::UnknownParameterIndex)
    );
}

#[test]
fn trusted_key_ids_carry_names_key_hashes_or_nothing() {
    for mode in [
        TrustedKeyIds::Name,
        TrustedKeyIds::KeyHash,
        TrustedKeyIds::None,
    ] {
        let (mut client, server) = configs("rsa1024/rsa1024", ParameterNumbering::Wap261);
        client.trusted_key_ids = mode;
        let ca = client.trusted_cas[0].1.clone();
        let r = run(client, server);
        assert!(r.client.is_established(), "{mode:?}");
        let ids: Vec<Identifier> = client_hello(&r.client_hello)
            .trusted_key_ids
            .into_iter()
            .map(|k| k.identifier)
            .collect();
        let expected = match mode {
            TrustedKeyIds::None => vec![],
            TrustedKeyIds::Name => vec![ca.tbs.subject.clone()],
            TrustedKeyIds::KeyHash => {
                vec![Identifier::KeyHashSha(pk::key_hash_sha(&ca.tbs.public_key))]
            }
        };
        assert_eq!(ids, expected, "{mode:?}");
    }
}

#[test]
fn a_key_hash_of_another_ca_finds_no_credential() {
    let (mut client, server) = configs("rsa1024/rsa1024", ParameterNumbering::Wap261);
    let (other, _) = configs("rsa1024/rsa1024", ParameterNumbering::Wap261);
    client.trusted_cas = other.trusted_cas;
    client.trusted_key_ids = TrustedKeyIds::KeyHash;
    let r = run(client, server);
    assert_eq!(
        r.server_out[0].alert_sent(),
        Some(AlertDescription::HandshakeFailure)
    );
}

#[test]
fn an_rsa_anon_key_of_another_size_than_offered_is_taken_from_its_modulus() {
    // Kannel 1.4.5 sends its RSA_anon key with ParameterIndex 0, whatever its size.
    let (mut client, server) = configs("rsa2048/rsa2048", ParameterNumbering::Wap261);
    client.offers[0].suite = KeyExchangeSuite::RsaAnon;
    client.offers[0].spec = Specifier::Rsa1024;
    client.policy = Policy::permissive();
    client.trusted_key_ids = TrustedKeyIds::None;
    let mut server = server;
    server.policy = Policy::permissive();
    let r = run(client, server);
    assert!(r.client.is_established() && r.server.is_established());
}

/// Kannel's alerts carry the checksum "0000" and no sequence number; neither can be
/// authenticated, so neither ends the handshake, but both are reported.
#[test]
fn unauthenticated_alerts_are_reported_and_end_nothing() {
    let (client, _) = configs("rsa1024/rsa1024", ParameterNumbering::Wap261);
    let mut c = Client::new(
        Arc::new(client),
        AuthMode::ServerAuth,
        None,
        Probe::off(),
        now(),
    );
    c.start(now()).unwrap();
    // Fatal handshake_failure, clear text, L set, no sequence number, checksum "0000".
    let kannel = [0x82, 0x00, 0x06, 0x03, 0x28, b'0', b'0', b'0', b'0'];
    // The same with a sequence number but a checksum of none of our records.
    let blind = [
        0xC2, 0x00, 0x00, 0x00, 0x06, 0x03, 0x28, b'0', b'0', b'0', b'0',
    ];
    for forged in [&kannel[..], &blind[..]] {
        let out = c.handle_datagram(forged, now());
        assert!(out.datagrams.is_empty());
        assert_eq!(
            out.alert_ignored(),
            Some(AlertDescription::HandshakeFailure),
            "{:?}",
            out.events
        );
        assert!(
            matches!(out.events.as_slice(), [Event::AlertIgnored { .. }]),
            "{:?}",
            out.events
        );
        assert!(!c.is_closed());
    }
    assert!(c.deadline_ns().is_some(), "still waiting for the server");
    let _ = Codec::to_bytes(&Identifier::Null);
}

/// Both ends, mutual authentication, every certificate under WAP-261.
fn mutual(case: &str, mac: MacAlgorithm) -> (ClientConfig, ServerConfig) {
    let (mut client, mut server) = configs(case, ParameterNumbering::Wap261);
    let parsed = Case::parse(case).unwrap();
    let ca = Authority::new_root(parsed.ca, "client CA", NOW - 60, NOW + 60).unwrap();
    let key = KeyPair::generate(parsed.leaf).unwrap();
    let cert = ca
        .issue("client.wtlsperf", &key, NOW - 60, NOW + 60)
        .unwrap();
    client.credential = Some((cert, key));
    server.trusted_client_cas = vec![(parsed.ca, ca.cert.clone())];
    server.client_auth = AuthMode::Mutual;
    let suite = vec![CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, mac)];
    client.cipher_suites = suite.clone();
    server.cipher_suites = suite;
    (client, server)
}

fn run_mutual(client: ClientConfig, server: ServerConfig) -> (Client, ServerConnection) {
    let mut c = Client::new(
        Arc::new(client),
        AuthMode::Mutual,
        None,
        Probe::off(),
        now(),
    );
    let mut s = ServerConnection::new(Arc::new(server), Probe::off(), now());
    let mut to_server = c.start(now()).unwrap().datagrams;
    for _ in 0..4 {
        let mut to_client = Vec::new();
        for d in to_server.drain(..) {
            to_client.extend(s.handle_datagram(&d, now()).datagrams);
        }
        for d in to_client {
            to_server.extend(c.handle_datagram(&d, now()).datagrams);
        }
    }
    (c, s)
}

#[test]
fn certificate_verify_hashes_by_mac_family() {
    for mac in [MacAlgorithm::Sha, MacAlgorithm::Md5] {
        let (client, server) = mutual("rsa1024/rsa1024", mac);
        let (c, s) = run_mutual(client, server);
        assert!(c.is_established() && s.is_established(), "{mac:?}");
        assert!(s.client_authenticated());
    }
    // An MD5 CertificateVerify is a PKCS#1 type 1 block over the bare 16 bytes.
    let key = KeyPair::generate(Specifier::Rsa1024).unwrap();
    let digest = [0x5Au8; 16];
    let sig = pk::rsa_sign_digest(&key, &digest).unwrap();
    pk::rsa_verify_digest(&key.public_key().unwrap(), &digest, &sig).unwrap();
    assert!(pk::rsa_verify_digest(&key.public_key().unwrap(), &[0x5A; 20], &sig).is_err());
}

#[test]
fn ecdh_ecdsa_goes_as_18_under_wap261_and_14_under_the_thesis_profile() {
    for (numbering, code) in [
        (
            ParameterNumbering::Wap261,
            KeyExchangeSuite::EcdhEcdsaUncomp,
        ),
        (ParameterNumbering::Thesis, KeyExchangeSuite::EcdhEcdsa),
    ] {
        let (client, server) = configs("224p/224p", numbering);
        let r = run(client, server);
        assert!(r.client.is_established() && r.server.is_established());
        assert_eq!(client_hello(&r.client_hello).client_key_ids[0].suite, code);
    }
}

/// A client that offers ECDH_anon as 11 (compressed points) gets the server's
/// ephemeral point compressed; one that offers 15 gets it whole.
#[test]
fn the_server_sends_points_in_the_format_the_suite_code_names() {
    for (code, compressed) in [
        (KeyExchangeSuite::EcdhAnon, true),
        (KeyExchangeSuite::EcdhAnonUncomp, false),
    ] {
        let (mut client, mut server) = configs("224p/224p", ParameterNumbering::Wap261);
        client.offers[0].suite = KeyExchangeSuite::EcdhAnon;
        client.policy = Policy::permissive();
        server.policy = Policy::permissive();
        let mut c = Client::new(
            Arc::new(client),
            AuthMode::ServerAuth,
            None,
            Probe::off(),
            now(),
        );
        let hello = c.start(now()).unwrap().datagrams;
        let mut ch = client_hello(&hello[0]);
        ch.client_key_ids[0].suite = code;
        let record = wtls::msgs::record::OwnedRecord::new(
            wtls::msgs::enums::ContentType::Handshake,
            0,
            false,
            HandshakeMessage::ClientHello(ch).to_bytes(),
        )
        .to_bytes();
        let mut s = ServerConnection::new(Arc::new(server), Probe::off(), now());
        let answer = s.handle_datagram(&record, now()).datagrams;
        let records = parse_datagram(&answer[0]).unwrap();
        let ske = records
            .iter()
            .find_map(|r| {
                match HandshakeMessage::read_record(r.fragment, Some(KeyExchangeSuite::EcdhAnon)) {
                    Ok(HandshakeMessage::ServerKeyExchange(ske)) => Some(ske),
                    _ => None,
                }
            })
            .unwrap();
        let wtls::msgs::handshake::ServerKeyExchangeKey::Ec(point) = ske.key else {
            panic!("not an EC key")
        };
        assert_eq!(matches!(point.0[0], 2 | 3), compressed, "{code:?}");
        assert_eq!(point.0.len(), if compressed { 29 } else { 57 });
    }
}

#[test]
fn mutual_ecdh_ecdsa_takes_an_optional_client_key_exchange_of_the_certified_key() {
    for send in [false, true] {
        let (mut client, server) = mutual("224p/224p", MacAlgorithm::Sha);
        client.mutual_ecdh_key_exchange = send;
        let (c, s) = run_mutual(client, server);
        assert!(c.is_established() && s.is_established(), "send {send}");
        assert!(s.client_authenticated());
    }
}

/// A ClientKeyExchange in mutual ECDH_ECDSA that carries another point than the
/// certified one would leave the client unauthenticated: the flight is dropped.
#[test]
fn a_mutual_ecdh_client_key_exchange_of_another_point_is_refused() {
    let (mut client, server) = mutual("224p/224p", MacAlgorithm::Sha);
    client.mutual_ecdh_key_exchange = true;
    let mut c = Client::new(
        Arc::new(client),
        AuthMode::Mutual,
        None,
        Probe::off(),
        now(),
    );
    let mut s = ServerConnection::new(Arc::new(server), Probe::off(), now());
    let hello = c.start(now()).unwrap().datagrams;
    let answer = s.handle_datagram(&hello[0], now()).datagrams;
    let flight = c.handle_datagram(&answer[0], now()).datagrams;
    let other = pk::ephemeral_ec(Specifier::Nist224p).unwrap();
    let wtls::msgs::certificate::PublicKey::Ec(point) = other.public_wire().unwrap() else {
        panic!("EC key")
    };
    let mut forged = Vec::new();
    for r in parse_datagram(&flight[0]).unwrap() {
        if r.header.content_type == wtls::msgs::enums::ContentType::Handshake
            && r.fragment.first() == Some(&16)
        {
            let cke = HandshakeMessage::ClientKeyExchange(
                wtls::msgs::handshake::ClientKeyExchange::Ec(point.clone()),
            );
            let seq = r.header.sequence.unwrap();
            forged.extend(
                wtls::msgs::record::OwnedRecord::new(
                    r.header.content_type,
                    seq,
                    false,
                    cke.to_bytes(),
                )
                .to_bytes(),
            );
        } else {
            forged.extend_from_slice(r.raw);
        }
    }
    let out = s.handle_datagram(&forged, now());
    assert!(out.datagrams.is_empty() && out.alert_sent().is_none());
    let why = s.last_dropped().unwrap();
    assert!(
        matches!(why, ProtocolError::Peer(PeerMisbehaved::PointNotCertified)),
        "{why}"
    );
    assert_eq!(why.alert(), AlertDescription::IllegalParameter);
    // The genuine flight still completes.
    let out = s.handle_datagram(&flight[0], now());
    assert!(
        out.completed().is_some(),
        "{:?} {:?}",
        out.events,
        s.last_dropped()
    );
}
