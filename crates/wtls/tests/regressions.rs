//! Robustness regressions and secure-default checks for the protocol engine.
//!
//! - Inputs found by the fuzz targets in `fuzz/` (crashes, hangs, invariant breaks) are
//!   kept here as byte strings and replayed through the same public API.
//! - The secure defaults the engine promises (weak suites and anonymous key exchange
//!   refused, no RSA padding oracle, a Finished compared only in constant time, zeroized
//!   secrets) each have a test that fails if the promise is broken.
//! - `generate_fuzz_corpus` (ignored) runs real handshakes and writes every datagram,
//!   handshake message, certificate and alert into `fuzz/corpus/<target>/` as seeds.

use std::sync::Arc;

use wtls::codec::Codec;
use wtls::handshake::{
    AuthMode, Client, ClientConfig, Event, LocalError, Packing, Policy, ProtocolError,
    ServerConfig, ServerConnection,
};
use wtls::msgs::common::CipherSuite;
use wtls::msgs::enums::{
    AlertDescription, AlertLevel, BulkCipherAlgorithm, ContentType, KeyExchangeSuite, MacAlgorithm,
};
use wtls::msgs::record::parse_datagram;
use wtls::probe::Probe;
use wtls::testing::{now, pair_from_configs, run_to_quiet, CaseKeys, Direction, Fate, Pair};

/// The keys of a case: the shared, seeded fixtures of `wtls::testing`.
fn creds(name: &str) -> Arc<CaseKeys> {
    CaseKeys::shared(name)
}

fn strong() -> CipherSuite {
    CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha)
}

fn configs(name: &str, auth: AuthMode, suites: &[CipherSuite]) -> (ClientConfig, ServerConfig) {
    let c = creds(name);
    (c.client_config(suites), c.server_config(auth, suites))
}

/// The seed of every driven handshake: a failure replays exactly.
const SEED: u64 = 17;

/// Everything one handshake put on the wire, in order, and how it ended: the Pair
/// driver after it went quiet (`client_sent`, `server_sent`, `server_out`, both ends).
type Trace<'a> = Pair<'a>;

/// Run one handshake on a seeded thread; `tamper(i, datagram)` may change the i-th
/// client datagram.
fn handshake<'a>(
    client: ClientConfig,
    server: ServerConfig,
    auth: AuthMode,
    mut tamper: impl FnMut(usize, &mut Vec<u8>) + 'a,
) -> Trace<'a> {
    let _seeded = wtls::crypto::random::seed_thread(SEED).unwrap();
    let mut t = pair_from_configs(Arc::new(client), Arc::new(server), auth, None).with_hook(
        move |dir, i, d| {
            if dir == Direction::ToServer {
                tamper(i, d);
            }
            Fate::Deliver
        },
    );
    let outcome = run_to_quiet(&mut t);
    assert!(
        outcome.quiet,
        "still in flight after {} rounds",
        outcome.rounds
    );
    t
}

// ---------------------------------------------------------------------------------
// Secure defaults
// ---------------------------------------------------------------------------------

/// Every weak bulk/MAC combination (export ciphers, DES, NULL, no MAC, SHA_XOR_40,
/// 40-bit MACs) is refused with insufficient_security by a default-policy server even
/// when both sides list it, and completes once the policy allows it.
#[test]
fn weak_cipher_suites_are_refused_unless_enabled() {
    let mut refused = 0;
    for &bulk in BulkCipherAlgorithm::ALL {
        for &mac in MacAlgorithm::ALL {
            let Some(why) = wtls::record::is_weak(bulk, mac) else {
                continue;
            };
            let suite = CipherSuite::new(bulk, mac);
            let (mut client, server) = configs("160p/160p", AuthMode::ServerAuth, &[suite]);
            client.policy = Policy::permissive();
            let t = handshake(client, server, AuthMode::ServerAuth, |_, _| {});
            assert_eq!(
                t.server.alert_sent(),
                Some(AlertDescription::InsufficientSecurity),
                "{bulk:?}/{mac:?} ({why})"
            );
            assert!(!t.server.is_established());
            refused += 1;
        }
    }
    // Export RC5/DES/IDEA at 40 and 56 bits, DES, NULL, SHA_0, SHA_XOR_40, SHA_40, MD5_40.
    assert!(refused >= 20, "only {refused} weak combinations known");

    for (bulk, mac) in [
        (BulkCipherAlgorithm::Rc5Cbc40, MacAlgorithm::Sha),
        (BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::ShaXor40),
        (BulkCipherAlgorithm::Null, MacAlgorithm::Sha),
    ] {
        let suite = CipherSuite::new(bulk, mac);
        let (mut client, mut server) = configs("160p/160p", AuthMode::ServerAuth, &[suite]);
        client.policy = Policy::permissive();
        server.policy = Policy::permissive();
        let t = handshake(client, server, AuthMode::ServerAuth, |_, _| {});
        assert!(t.server.is_established(), "{bulk:?}/{mac:?} when enabled");
    }
}

/// The default client refuses weak suites too: it never offers them.
#[test]
fn default_client_does_not_complete_with_a_weak_suite() {
    let weak = CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc40, MacAlgorithm::Sha40);
    let (client, mut server) = configs("160p/160p", AuthMode::ServerAuth, &[weak]);
    server.policy = Policy::permissive();
    // It does not even offer it: starting fails with insufficient_security ...
    let mut c = Client::new(
        Arc::new(client.clone()),
        AuthMode::ServerAuth,
        None,
        Probe::off(),
        now(),
    );
    let err = c.start(now()).unwrap_err();
    assert!(
        matches!(
            err,
            ProtocolError::Local(LocalError::OnlyWeakCipherSuitesConfigured)
        ),
        "{err}"
    );
    assert_eq!(err.alert(), AlertDescription::InsufficientSecurity);
    // ... and if it offers a strong suite too, it refuses the server's weak choice.
    let strong = CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha);
    let mut permissive_client = client;
    permissive_client.cipher_suites = vec![strong, weak];
    permissive_client.policy = Policy::permissive();
    let mut hello = Client::new(
        Arc::new(permissive_client.clone()),
        AuthMode::ServerAuth,
        None,
        Probe::off(),
        now(),
    )
    .start(now())
    .unwrap()
    .datagrams;
    server.cipher_suites = vec![weak];
    let mut s = ServerConnection::new(Arc::new(server), Probe::off(), now());
    let flight = s.handle_datagram(&hello.remove(0), now()).datagrams;
    let mut strict = permissive_client;
    strict.policy = Policy::default();
    let mut c = Client::new(
        Arc::new(strict),
        AuthMode::ServerAuth,
        None,
        Probe::off(),
        now(),
    );
    // A default client answering that flight (it would not have offered the weak suite;
    // this checks the ServerHello check itself).
    drop(c.start(now()));
    let out = c.handle_datagram(&flight[0], now());
    assert!(!c.is_established());
    // The server's flight is not authenticated, so the weak choice is dropped
    // unanswered (docs/security.md, off-path spoofing), the reason kept.
    assert_eq!(out.alert_sent(), None);
    assert_eq!(
        c.last_dropped().map(|e| e.alert()),
        Some(AlertDescription::IllegalParameter)
    );
}

/// Anonymous key exchange (RSA_anon, ECDH_anon) is refused with insufficient_security.
#[test]
fn anonymous_key_exchange_is_refused_by_default() {
    for (name, suite) in [
        ("rsa1024/rsa1024", KeyExchangeSuite::RsaAnon),
        ("160p/160p", KeyExchangeSuite::EcdhAnon),
    ] {
        let (mut client, server) = configs(name, AuthMode::ServerAuth, &[strong()]);
        client.offers[0].suite = suite;
        client.policy = Policy::permissive();
        let t = handshake(client, server, AuthMode::ServerAuth, |_, _| {});
        assert_eq!(
            t.server.alert_sent(),
            Some(AlertDescription::InsufficientSecurity),
            "{suite:?}"
        );
    }
}

/// Offset of the RSA ciphertext inside the client's second flight: record header (5),
/// handshake header (3), the ciphertext's 2-byte length. Only when the flight starts
/// with ClientKeyExchange (server-authenticated flow).
const RSA_CIPHERTEXT_AT: usize = 5 + 3 + 2;

/// No Bleichenbacher oracle: a ClientKeyExchange whose RSA padding is broken, one whose
/// padding is valid but whose content is not a WTLS pre-master secret, one with a
/// valid pre-master the client does not know, and an honest key exchange followed by a
/// wrong Finished all end the same way: the flight is dropped unanswered (docs/security.md;
/// formerly all with the same alert), with the same reason kept. Checked with a strong suite (the
/// protected Finished then fails its MAC) and with NULL/SHA_0 (the Finished check
/// itself fails).
#[test]
fn corrupted_rsa_key_exchange_looks_like_a_wrong_finished() {
    let c = creds("rsa1024/rsa1024");
    let server_public = wtls::pki::certificate_key(&c.server_cert, Default::default()).unwrap();
    let encrypt = |secret: &[u8]| wtls::crypto::pk::rsa_encrypt(&server_public, secret).unwrap();
    let null = CipherSuite::new(BulkCipherAlgorithm::Null, MacAlgorithm::Sha0);
    for suite in [strong(), null] {
        let outcome = |tamper: &dyn Fn(&mut Vec<u8>)| {
            let (mut client, mut server) =
                configs("rsa1024/rsa1024", AuthMode::ServerAuth, &[suite]);
            client.policy = Policy::permissive();
            server.policy = Policy::permissive();
            let t = handshake(client, server, AuthMode::ServerAuth, |i, d| {
                if i == 1 {
                    tamper(d)
                }
            });
            assert!(!t.server.is_established());
            (
                t.server.alert_sent(),
                t.server.last_dropped().map(|e| e.alert()),
            )
        };
        let replace = |d: &mut Vec<u8>, ct: &[u8]| {
            d[RSA_CIPHERTEXT_AT..RSA_CIPHERTEXT_AT + ct.len()].copy_from_slice(ct)
        };
        let bad_padding = outcome(&|d| d[RSA_CIPHERTEXT_AT + 10] ^= 0x40);
        let wrong_length = outcome(&|d| replace(d, &encrypt(&[1u8; 19])));
        let wrong_version = outcome(&|d| replace(d, &encrypt(&[2u8; 20])));
        let unknown_secret = outcome(&|d| replace(d, &encrypt(&[1u8; 20])));
        let wrong_finished = outcome(&|d| {
            let n = d.len();
            d[n - 1] ^= 0x01;
        });
        assert_eq!(
            bad_padding.0, None,
            "{suite:?}: a forged flight was answered"
        );
        for (what, alert) in [
            ("valid padding, 19 bytes", wrong_length),
            ("valid padding, version 2", wrong_version),
            ("valid pre-master unknown to the client", unknown_secret),
            ("wrong Finished", wrong_finished),
        ] {
            assert_eq!(alert, bad_padding, "{suite:?}: {what} vs broken padding");
        }
        if suite == null {
            assert_eq!(bad_padding.1, Some(AlertDescription::DecryptError));
        }
    }
}

/// Finished is compared in constant time by construction: its verify_data is a
/// `VerifyData`, whose only equality is `subtle`'s and which hands out no bytes to compare
/// otherwise (the type annotation below stops compiling if the field becomes plain
/// bytes again). The equality itself must still be right wherever the bytes differ.
/// Record MACs are checked through `subtle` too: see
/// [`record_mac_verdict_is_a_constant_time_choice`].
#[test]
fn finished_is_compared_only_in_constant_time() {
    use wtls::msgs::handshake::{Finished, VerifyData};
    let fin = Finished {
        verify_data: VerifyData::new([7; 12]),
    };
    let held: VerifyData = fin.verify_data;
    assert_eq!(held, VerifyData::new([7; 12]));
    for at in [0, 5, 11] {
        let mut other = [7u8; 12];
        other[at] ^= 0x80;
        assert_ne!(held, VerifyData::new(other), "a difference at byte {at}");
    }
}

/// The record MAC's verdict is a `subtle::Choice`, not a `bool`: the type annotation
/// below stops compiling if `verify` goes back to a plain comparison's answer, and a
/// caller cannot branch on it without saying so (`bool::from`). The record layer folds it
/// with the CBC padding verdict (a `Choice` too) before its one decision; that both
/// failures then look alike on the wire is `record.rs`' own test of the padding oracle.
#[test]
fn record_mac_verdict_is_a_constant_time_choice() {
    use wtls::crypto::mac::RecordMac;
    use wtls::msgs::enums::MacAlgorithm;
    let mac = RecordMac::new(MacAlgorithm::Sha, &[9; 20]);
    let tag = mac.compute(7, 0xE4, b"hello");
    let verdict: subtle::Choice = mac.verify(7, 0xE4, b"hello", &tag);
    assert!(bool::from(verdict));
    for at in [0, tag.len() / 2, tag.len() - 1] {
        let mut other = tag.clone();
        other[at] ^= 0x01;
        let verdict: subtle::Choice = mac.verify(7, 0xE4, b"hello", &other);
        assert!(!bool::from(verdict), "a difference at byte {at}");
    }
}

/// Secrets live in `Zeroizing` buffers, wiped when dropped. The type annotations are
/// the test: they stop compiling if a function returns a plain array or vector.
#[test]
fn key_material_is_zeroized_on_drop() {
    use wtls::crypto::prf::PrfHash;
    use zeroize::Zeroizing;
    let ms: Zeroizing<[u8; 20]> = wtls::crypto::keys::master_secret(
        PrfHash::for_mac(MacAlgorithm::Sha),
        &[1; 20],
        &[2; 16],
        &[3; 16],
    );
    assert_ne!(*ms, [0u8; 20]);
    let c = creds("rsa1024/rsa1024");
    let public = wtls::pki::certificate_key(&c.server_cert, Default::default()).unwrap();
    let ct = wtls::crypto::pk::rsa_encrypt(&public, &[1u8; 20]).unwrap();
    let pre_master: Zeroizing<Vec<u8>> = wtls::crypto::pk::rsa_decrypt(&c.server_key, &ct).unwrap();
    assert_eq!(pre_master.as_slice(), &[1u8; 20]);
    let c = creds("160p/160p");
    let shared: Zeroizing<Vec<u8>> = wtls::crypto::pk::ecdh(
        &c.server_key,
        &wtls::pki::certificate_key(&c.client_cert, Default::default()).unwrap(),
    )
    .unwrap();
    assert!(!shared.is_empty());
}

// ---------------------------------------------------------------------------------
// Replay, duplicates, alerts from nowhere
// ---------------------------------------------------------------------------------

/// A replayed protected record after the handshake is dropped silently, not answered.
#[test]
fn replayed_application_data_is_dropped_silently() {
    let (client, server) = configs("160p/160p", AuthMode::ServerAuth, &[strong()]);
    let mut t = handshake(client, server, AuthMode::ServerAuth, |_, _| {});
    assert!(t.server.is_established());
    let d = t.client.seal_application_data(b"once").unwrap();
    let first = t.server.handle_datagram(&d, now());
    assert!(
        matches!(first.events.as_slice(), [Event::ApplicationData(d)] if d == b"once"),
        "{:?}",
        first.events
    );
    let again = t.server.handle_datagram(&d, now());
    assert!(again.datagrams.is_empty(), "a replay was answered");
    assert!(
        matches!(again.events.as_slice(), [Event::Dropped(_)]),
        "{:?}",
        again.events
    );
}

/// An alert whose checksum matches none of the server's records (a blind injection)
/// is ignored (reported, not acted on) and does not close the connection (§7.12).
#[test]
fn blind_alert_with_a_wrong_checksum_is_ignored() {
    let (client, server) = configs("160p/160p", AuthMode::ServerAuth, &[strong()]);
    let mut c = Client::new(
        Arc::new(client),
        AuthMode::ServerAuth,
        None,
        Probe::off(),
        now(),
    );
    let mut s = ServerConnection::new(Arc::new(server), Probe::off(), now());
    let ch = c.start(now()).unwrap().datagrams;
    s.handle_datagram(&ch[0], now());
    // Fatal handshake_failure, checksum zero, sequence number 1, clear text.
    let forged = [0xC2, 0x00, 0x01, 0x00, 0x06, 0x03, 0x28, 0, 0, 0, 0];
    let out = s.handle_datagram(&forged, now());
    assert!(out.datagrams.is_empty());
    assert!(
        matches!(out.events.as_slice(), [Event::AlertIgnored { .. }]),
        "{:?}",
        out.events
    );
    assert!(s.is_half_open() && !s.is_closed());
}

// ---------------------------------------------------------------------------------
// Crash regressions from the fuzz targets (fuzz/fuzz_targets/*.rs). Each input is the
// minimised file libFuzzer wrote to fuzz/artifacts/<target>/, replayed through the
// same calls as its target.
// ---------------------------------------------------------------------------------

/// Inputs for `fuzz_targets/record.rs` and `handshake_message.rs` that once crashed or
/// that sit on a boundary: empty, reserved bit, L without length, maximum length.
#[test]
fn framing_boundaries_do_not_panic() {
    let inputs: &[&[u8]] = &[
        &[],
        &[0x10],
        &[0x80],
        &[0x80, 0xFF],
        &[0xC3, 0x00],
        &[0xC3, 0x00, 0x00, 0xFF, 0xFF],
        &[0x03],
        &[0x83, 0x44, 0x01],
    ];
    for input in inputs {
        let _ = parse_datagram(input);
        for ctx in std::iter::once(None).chain(KeyExchangeSuite::ALL.iter().copied().map(Some)) {
            if let Ok(msg) = wtls::msgs::handshake::HandshakeMessage::read_record(input, ctx) {
                assert_eq!(msg.to_bytes(), *input);
            }
        }
    }
    let mut long = vec![0xC3, 0x00, 0x00, 0xFF, 0xFF];
    long.resize(5 + 0xFFFF, 0);
    assert!(parse_datagram(&long).is_err(), "over MAX_FRAGMENT accepted");
}

/// fuzz/artifacts/handshake_message/crash-1cd9feaf...: an RSA ClientKeyExchange whose
/// body is a bare 128-byte ciphertext (no length prefix) parses, by design, as that
/// ciphertext; the fuzz target first flagged it as a non-canonical encoding.
#[test]
fn bare_rsa_ciphertext_parses_as_the_whole_body() {
    let mut fragment = vec![0x10, 0x00, 0x80];
    fragment.extend((0..128u8).map(|i| i.wrapping_mul(37) | 1));
    let msg = wtls::msgs::handshake::HandshakeMessage::read_record(
        &fragment,
        Some(KeyExchangeSuite::Rsa),
    )
    .unwrap();
    let wtls::msgs::handshake::HandshakeMessage::ClientKeyExchange(
        wtls::msgs::handshake::ClientKeyExchange::Rsa(ct),
    ) = msg
    else {
        panic!("not an RSA ClientKeyExchange: {msg:?}")
    };
    assert_eq!(ct.as_slice(), &fragment[3..]);
}

// ---------------------------------------------------------------------------------
// Seed corpus generator
// ---------------------------------------------------------------------------------

/// Write seeds for every fuzz target from real handshakes:
/// `cargo test -p wtls --test regressions -- --ignored generate_fuzz_corpus`.
#[test]
#[ignore = "writes fuzz/corpus; run by hand when the wire format changes"]
fn generate_fuzz_corpus() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let write = |target: &str, bytes: &[u8]| {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        let name = hex::encode(openssl::sha::sha1(bytes));
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    let suites = KeyExchangeSuite::ALL;
    let ctx_selector = |s: KeyExchangeSuite| 1 + suites.iter().position(|x| *x == s).unwrap() as u8;
    for (name, auth, packing) in [
        (
            "160p/160p",
            AuthMode::ServerAuth,
            Packing::FlightPerDatagram,
        ),
        ("160p/160p", AuthMode::Mutual, Packing::MessagePerDatagram),
        (
            "rsa1024/rsa1024",
            AuthMode::ServerAuth,
            Packing::MessagePerDatagram,
        ),
        (
            "rsa1024/rsa1024",
            AuthMode::Mutual,
            Packing::FlightPerDatagram,
        ),
    ] {
        let (mut client, mut server) = configs(name, auth, &[strong()]);
        client.packing = packing;
        server.packing = packing;
        server.thesis_certificate_request = auth == AuthMode::ServerAuth;
        let suite = creds(name).case.key_exchange_suite();
        let mut t = handshake(client, server, auth, |_, _| {});
        assert!(t.server.is_established(), "{name} {auth:?}");
        let data = t.client.seal_application_data(b"GET / WSP").unwrap();
        t.client_sent.push(data);
        for d in t.client_sent.iter().chain(&t.server_sent) {
            write("record", d);
            for r in parse_datagram(d).unwrap() {
                match (r.header.content_type, r.header.cipher_spec) {
                    (ContentType::Handshake, false) => {
                        let mut seed = vec![0];
                        seed.extend_from_slice(r.fragment);
                        write("handshake_message", &seed);
                        seed[0] = ctx_selector(suite);
                        write("handshake_message", &seed);
                        if let Ok(wtls::msgs::handshake::HandshakeMessage::Certificate(chain)) =
                            wtls::msgs::handshake::HandshakeMessage::read_record(r.fragment, None)
                        {
                            for e in chain.0 {
                                if let wtls::msgs::certificate::CertificateEntry::Wtls(c) = e {
                                    write("certificate", &c.to_bytes());
                                }
                            }
                        }
                    }
                    (ContentType::ChangeCipherSpec, false) => write("alert", r.fragment),
                    _ => {}
                }
            }
        }
        write("certificate", &creds(name).ca.cert.to_bytes());
        // Server target: selector byte, then length-prefixed client datagrams. The
        // plain form replays the whole client side; the tampered form (bit 5) runs a
        // real handshake with no changes, for libFuzzer to mutate from.
        let client_index =
            if name.starts_with("rsa") { 2 } else { 0 } + usize::from(auth == AuthMode::Mutual);
        for selector in [0u8, 1, 2, (1 + client_index as u8) << 2] {
            let mut seed = vec![selector];
            for d in &t.client_sent {
                seed.extend_from_slice(&(d.len() as u16).to_be_bytes());
                seed.extend_from_slice(d);
            }
            write("server", &seed);
        }
        for mask in [0u8, 1] {
            write("server", &[0x20 | (client_index as u8) << 2 | mask, 0]);
            write(
                "server",
                &[0x20 | (client_index as u8) << 2, 1, 1, 0, 40, 0xFF],
            );
        }
    }
    for level in [AlertLevel::Warning, AlertLevel::Critical, AlertLevel::Fatal] {
        for desc in [
            AlertDescription::ConnectionCloseNotify,
            AlertDescription::DecodeError,
            AlertDescription::BadRecordMac,
        ] {
            let a = wtls::msgs::alert::Alert::for_record(level, desc, b"seed record");
            write("alert", &a.to_bytes());
        }
    }
}
