//! Wireshark's WTLS dissector (`epan/dissectors/packet-wtls.c`, run as tshark) as an
//! independent wire oracle: real handshakes over loopback are captured with the
//! client's `--pcap` writer, and every field tshark decodes must equal what our own
//! codec reads from the same bytes.
//!
//! Flows: RSA server-authenticated and mutual (certificates both ways), trusted CAs
//! named by key hash, RSA_anon
//! (ServerKeyExchange), a resumed (abbreviated) handshake, and, for the EC suites, the
//! hello messages only. The dissector misreads WTLS certificates with EC keys (it takes
//! the point for an RSA key and reports the packet malformed), so EC certificates are
//! not compared; everything else in those captures is.
//!
//! tshark is installed by `scripts/setup.sh`, and `scripts/test.sh` sets
//! `WTLSPERF_REQUIRE_TSHARK=1` so that CI fails rather than skips when it is missing.
//! A plain `cargo test` on a machine without tshark skips with a message.

use std::collections::HashMap;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use wtls::handshake::{AuthMode, ClientConfig, HandshakeKind, StoredSession, TrustedKeyIds};
use wtls::msgs::certificate::{CertificateEntry, PublicKey, WtlsCertificate};
use wtls::msgs::common::{Identifier, KeyExchangeId, ParameterSpecifier};
use wtls::msgs::enums::{ContentType, HandshakeType, KeyExchangeSuite};
use wtls::msgs::handshake::{ClientHello, HandshakeMessage, ServerHello};
use wtls::msgs::record::parse_datagram;
use wtls::suite::Case;
use wtlsperf_drivers::gateway::{gateway_options, spawn_gateway, GatewayConfig, GatewayHandle};
use wtlsperf_drivers::pcap::PcapWriter;
use wtlsperf_drivers::pki_store::{unix_now, PkiStore};
use wtlsperf_drivers::setup::{self, ClientAuth, Options};
use wtlsperf_drivers::udp_client::{connect, echo};

const CASES: [&str; 2] = ["rsa1024/rsa1024", "160p/160p"];

fn store() -> &'static PkiStore {
    static STORE: OnceLock<PkiStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("wtlsperf-dissector-{}", std::process::id()));
        let cases: Vec<Case> = CASES.iter().map(|c| Case::parse(c).unwrap()).collect();
        PkiStore::create(&dir, true, unix_now().unwrap(), &cases).unwrap()
    })
}

/// `wtlsperf gateway --allow-weak`: anonymous suites allowed, client certificates optional.
fn gateway() -> GatewayHandle {
    let opts = gateway_options(true, Default::default());
    let server = setup::gateway_server_config(store(), ClientAuth::Optional, &opts).unwrap();
    spawn_gateway(GatewayConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(server),
    ))
    .unwrap()
}

/// Longer than any flight takes to be answered on loopback, however busy the machine:
/// nothing is lost there, so a retransmission (an extra datagram in the capture, which
/// the flows below count exactly) could only come from a slow answer.
const NO_RETRANSMISSION: Duration = Duration::from_secs(120);

fn client_config(case: &str, anonymous: bool) -> Arc<ClientConfig> {
    let creds = store().case(&Case::parse(case).unwrap()).unwrap();
    let opts = Options::default();
    let mut cfg = if anonymous {
        setup::anonymous_client_config(&creds, &opts)
    } else {
        setup::client_config(&creds, &opts, false)
    };
    cfg.retransmit_timeout_ns = NO_RETRANSMISSION.as_nanos() as u64;
    Arc::new(cfg)
}

/// Whether tshark runs here; without it the check skips, unless CI
/// (`CI=true`, `WTLSPERF_REQUIRE_TSHARK`) requires it.
fn tshark_available() -> bool {
    wtlsperf_testtools::tool_runs("tshark", "the dissector check")
}

/// Handshakes (and one echo each) on fresh sockets, all captured into one file.
/// Returns the capture's path and each handshake's session.
fn capture(
    name: &str,
    gw: &GatewayHandle,
    runs: &[(Arc<ClientConfig>, AuthMode, bool)],
) -> (PathBuf, Vec<HandshakeKind>) {
    let path = std::env::temp_dir().join(format!(
        "wtlsperf-dissector-{}-{name}.pcap",
        std::process::id()
    ));
    let mut pcap = PcapWriter::create(&path).unwrap();
    let mut session: Option<StoredSession> = None;
    let mut kinds = Vec::new();
    for (cfg, auth, resume) in runs {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        // A hang guard only.
        let deadline = Instant::now() + NO_RETRANSMISSION;
        let resume = if *resume { session.clone() } else { None };
        let (run, mut client) = connect(
            &sock,
            gw.local_addr(),
            cfg.clone(),
            *auth,
            resume,
            Some(&mut pcap),
            deadline,
        )
        .unwrap();
        kinds.push(run.kind);
        session = run.session.or(session);
        echo(
            &sock,
            gw.local_addr(),
            &mut client,
            b"dissected",
            Some(&mut pcap),
            NO_RETRANSMISSION,
            deadline,
        )
        .unwrap();
    }
    pcap.flush().unwrap();
    (path, kinds)
}

/// The UDP payloads of a classic pcap of LINKTYPE_RAW IPv4 packets (as `PcapWriter`
/// writes them).
fn payloads(file: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= file.len() {
        let len = u32::from_le_bytes(file[at + 8..at + 12].try_into().unwrap()) as usize;
        out.push(file[at + 16 + 28..at + 16 + len].to_vec());
        at += 16 + len;
    }
    out
}

/// The fields tshark is asked for, in column order.
const FIELDS: &[&str] = &[
    "frame.protocols",
    "_ws.malformed",
    "wtls.rec_type",
    "wtls.handshake.type",
    "wtls.handshake.client_hello.version",
    "wtls.handshake.client_hello.sessionid",
    "wtls.handshake.client_hello.key.key_exchange.suite",
    "wtls.handshake.client_hello.parameter_index",
    "wtls.handshake.client_hello.ident_type",
    "wtls.handshake.client_hello.ident_charset",
    "wtls.handshake.client_hello.ident_name",
    "wtls.handshake.client_hello.sequence_mode",
    "wtls.handshake.client_hello.refresh",
    "wtls.handshake.server_hello.version",
    "wtls.handshake.server_hello.sessionid",
    "wtls.handshake.server_hello.key",
    "wtls.handshake.server_hello.cipher.bulk",
    "wtls.handshake.server_hello.cipher.mac",
    "wtls.handshake.server_hello.sequence_mode",
    "wtls.handshake.server_hello.refresh",
    "wtls.handshake.certificate.signature.type",
    "wtls.handshake.certificate.issuer.charset",
    "wtls.handshake.certificate.issuer.name",
    "wtls.handshake.certificate.subject.charset",
    "wtls.handshake.certificate.subject.name",
    "wtls.handshake.certificate.public.type",
    "wtls.handshake.certificate.parameter_index",
    "wtls.handshake.certificate.rsa.exponent",
    "wtls.handshake.certificate.rsa.modules",
    "wtls.handshake.certificate.signature.signature",
];

/// One frame as tshark decoded it: field name to its comma-joined occurrences.
type Frame = HashMap<&'static str, String>;

fn tshark(path: &Path, port: u16) -> Vec<Frame> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(path)
        .args(["-d", &format!("udp.port=={port},wtls")])
        .args(["-T", "fields", "-E", "separator=/t"])
        .args(["-E", "occurrence=a", "-E", "aggregator=,"]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            FIELDS
                .iter()
                .copied()
                .zip(line.split('\t').map(str::to_string))
                .collect()
        })
        .collect()
}

/// Our own reading of one datagram, in tshark's terms.
#[derive(Debug, Default)]
struct Ours {
    record_types: Vec<String>,
    handshake_types: Vec<String>,
    messages: Vec<HandshakeMessage>,
}

/// The key exchange suites offered and the one the ServerHello chose: reading a
/// ServerKeyExchange or ClientKeyExchange needs it. Datagrams are fed in capture order.
#[derive(Debug, Default)]
struct Negotiation {
    offered: Vec<KeyExchangeSuite>,
    chosen: Option<KeyExchangeSuite>,
}

impl Negotiation {
    fn learn(&mut self, msg: &HandshakeMessage) {
        match msg {
            HandshakeMessage::ClientHello(ch) => {
                self.offered = ch.client_key_ids.iter().map(|k| k.suite).collect();
            }
            HandshakeMessage::ServerHello(sh) => {
                // client_key_id is 1-based; 0 in an abbreviated handshake keeps the suite.
                let i = usize::from(sh.client_key_id);
                if let Some(s) = i.checked_sub(1).and_then(|i| self.offered.get(i)) {
                    self.chosen = Some(*s);
                }
            }
            _ => {}
        }
    }
}

fn decode(datagram: &[u8], negotiation: &mut Negotiation) -> Ours {
    let mut ours = Ours::default();
    for record in parse_datagram(datagram).unwrap() {
        ours.record_types
            .push(record.header.content_type.to_u8().to_string());
        if record.header.cipher_spec || record.header.content_type != ContentType::Handshake {
            continue;
        }
        let typ = HandshakeType::from_u8(record.fragment[0]).unwrap();
        ours.handshake_types.push(typ.to_u8().to_string());
        let msg = HandshakeMessage::read_record(record.fragment, negotiation.chosen).unwrap();
        negotiation.learn(&msg);
        ours.messages.push(msg);
    }
    ours
}

fn joined<T: ToString>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The session id as the dissector shows it. It reads the field as a 64-bit integer
/// starting at the length byte, so it shows the length and the first seven bytes of
/// an 8-byte id (a dissector quirk: WAP-261 §10.5 defines `SessionID<0..8>`, a length
/// and the id). Our ids are 8 bytes, which is what makes that comparison exact.
fn session_hex(id: &[u8]) -> String {
    if id.is_empty() {
        return String::new();
    }
    assert_eq!(id.len(), 8, "the gateway's session ids are 8 bytes");
    format!("0x{:02x}{}", id.len(), hex::encode(&id[..7]))
}

fn index(p: &ParameterSpecifier) -> u8 {
    match p {
        ParameterSpecifier::Index(i) => *i,
        ParameterSpecifier::Set(_) => ParameterSpecifier::EXPLICIT,
    }
}

fn text_ids(ids: &[&KeyExchangeId]) -> (String, String, String) {
    let types = joined(ids.iter().map(|k| k.identifier.identifier_type().to_u8()));
    let mut charsets = Vec::new();
    let mut names = Vec::new();
    for k in ids {
        if let Identifier::Text {
            character_set,
            name,
        } = &k.identifier
        {
            charsets.push(character_set.to_string());
            names.push(String::from_utf8_lossy(name).into_owned());
        }
    }
    (types, charsets.join(","), names.join(","))
}

/// Compares one hello or certificate with tshark's fields of the same frame.
fn compare(msg: &HandshakeMessage, frame: &Frame, ec_certificates: bool, at: &str) {
    let field = |name: &str| frame.get(name).map_or("", String::as_str);
    let same = |name: &str, ours: String| {
        assert_eq!(field(name), ours, "{at}: {name}");
    };
    match msg {
        HandshakeMessage::ClientHello(ch) => compare_client_hello(ch, &same),
        HandshakeMessage::ServerHello(sh) => compare_server_hello(sh, &same),
        HandshakeMessage::Certificate(chain) if !ec_certificates => {
            let certs: Vec<&WtlsCertificate> = chain
                .0
                .iter()
                .map(|e| match e {
                    CertificateEntry::Wtls(c) => c,
                    other => panic!("{at}: unexpected certificate format {other:?}"),
                })
                .collect();
            compare_certificates(&certs, &same);
        }
        _ => {}
    }
}

fn compare_client_hello(ch: &ClientHello, same: &dyn Fn(&str, String)) {
    same(
        "wtls.handshake.client_hello.version",
        ch.client_version.to_string(),
    );
    same(
        "wtls.handshake.client_hello.sessionid",
        session_hex(ch.session_id.as_bytes()),
    );
    let ids: Vec<&KeyExchangeId> = ch
        .client_key_ids
        .iter()
        .chain(&ch.trusted_key_ids)
        .collect();
    same(
        "wtls.handshake.client_hello.key.key_exchange.suite",
        joined(ids.iter().map(|k| k.suite.to_u8())),
    );
    same(
        "wtls.handshake.client_hello.parameter_index",
        joined(ids.iter().map(|k| index(&k.parameters))),
    );
    let (types, charsets, names) = text_ids(&ids);
    same("wtls.handshake.client_hello.ident_type", types);
    same("wtls.handshake.client_hello.ident_charset", charsets);
    same("wtls.handshake.client_hello.ident_name", names);
    same(
        "wtls.handshake.client_hello.sequence_mode",
        ch.sequence_number_mode.to_u8().to_string(),
    );
    same(
        "wtls.handshake.client_hello.refresh",
        ch.key_refresh.to_string(),
    );
}

fn compare_server_hello(sh: &ServerHello, same: &dyn Fn(&str, String)) {
    same(
        "wtls.handshake.server_hello.version",
        sh.server_version.to_string(),
    );
    same(
        "wtls.handshake.server_hello.sessionid",
        session_hex(sh.session_id.as_bytes()),
    );
    same(
        "wtls.handshake.server_hello.key",
        format!("0x{:02x}", sh.client_key_id),
    );
    same(
        "wtls.handshake.server_hello.cipher.bulk",
        sh.cipher_suite.bulk.to_u8().to_string(),
    );
    same(
        "wtls.handshake.server_hello.cipher.mac",
        sh.cipher_suite.mac.to_u8().to_string(),
    );
    same(
        "wtls.handshake.server_hello.sequence_mode",
        sh.sequence_number_mode.to_u8().to_string(),
    );
    same(
        "wtls.handshake.server_hello.refresh",
        sh.key_refresh.to_string(),
    );
}

fn compare_certificates(certs: &[&WtlsCertificate], same: &dyn Fn(&str, String)) {
    let text = |id: &Identifier| match id {
        Identifier::Text {
            character_set,
            name,
        } => (
            character_set.to_string(),
            String::from_utf8_lossy(name).into_owned(),
        ),
        other => panic!("not a text identifier: {other:?}"),
    };
    let rsa = |c: &WtlsCertificate, bits: fn(&wtls::msgs::common::RsaPublicKey) -> &[u8]| match &c
        .tbs
        .public_key
    {
        PublicKey::Rsa(k) => (bits(k).len() * 8).to_string(),
        PublicKey::Ec(_) => panic!("EC certificates are not compared"),
    };
    let all = |f: &dyn Fn(&WtlsCertificate) -> String| joined(certs.iter().map(|c| f(c)));
    same(
        "wtls.handshake.certificate.signature.type",
        all(&|c| c.tbs.signature_algorithm.to_u8().to_string()),
    );
    same(
        "wtls.handshake.certificate.issuer.charset",
        all(&|c| text(&c.tbs.issuer).0),
    );
    same(
        "wtls.handshake.certificate.issuer.name",
        all(&|c| text(&c.tbs.issuer).1),
    );
    same(
        "wtls.handshake.certificate.subject.charset",
        all(&|c| text(&c.tbs.subject).0),
    );
    same(
        "wtls.handshake.certificate.subject.name",
        all(&|c| text(&c.tbs.subject).1),
    );
    same(
        "wtls.handshake.certificate.public.type",
        all(&|c| c.tbs.public_key_type.to_u8().to_string()),
    );
    same(
        "wtls.handshake.certificate.parameter_index",
        all(&|c| index(&c.tbs.parameters).to_string()),
    );
    // The dissector gives the sizes in bits, from the length fields.
    same(
        "wtls.handshake.certificate.rsa.exponent",
        all(&|c| rsa(c, |k| &k.exponent)),
    );
    same(
        "wtls.handshake.certificate.rsa.modules",
        all(&|c| rsa(c, |k| &k.modulus)),
    );
    same(
        "wtls.handshake.certificate.signature.signature",
        all(&|c| (c.signature.len() * 8).to_string()),
    );
}

/// Checks every frame of a capture against our decoding of the same bytes; returns the
/// handshake types of each frame, for the caller's flow check.
fn check_capture(path: &Path, port: u16, ec: bool) -> Vec<String> {
    let frames = tshark(path, port);
    let datagrams = payloads(&std::fs::read(path).unwrap());
    let _ = std::fs::remove_file(path);
    assert_eq!(
        frames.len(),
        datagrams.len(),
        "one tshark line per datagram"
    );
    let mut flow = Vec::new();
    let mut negotiation = Negotiation::default();
    for (n, (frame, datagram)) in frames.iter().zip(&datagrams).enumerate() {
        let at = format!("{} frame {}", path.display(), n + 1);
        let ours = decode(datagram, &mut negotiation);
        assert_eq!(frame["frame.protocols"], "raw:ip:udp:wtls", "{at}");
        let has_ec_certificate = ec && ours.handshake_types.iter().any(|t| t == "11");
        if !has_ec_certificate {
            assert_eq!(frame["_ws.malformed"], "", "{at}: tshark says malformed");
            assert_eq!(frame["wtls.rec_type"], joined(&ours.record_types), "{at}");
            assert_eq!(
                frame["wtls.handshake.type"],
                joined(&ours.handshake_types),
                "{at}"
            );
        }
        for msg in &ours.messages {
            compare(msg, frame, ec, &at);
        }
        flow.push(ours.handshake_types.join(","));
    }
    flow
}

#[test]
fn rsa_full_mutual_anonymous_and_resumed_flights_decode_in_tshark() {
    if !tshark_available() {
        return;
    }
    let gw = gateway();
    let port = gw.local_addr().port();
    let rsa = "rsa1024/rsa1024";
    let authenticated = [
        (client_config(rsa, false), AuthMode::ServerAuth, false),
        (client_config(rsa, false), AuthMode::Mutual, false),
        (client_config(rsa, false), AuthMode::ServerAuth, true),
    ];
    let (path, kinds) = capture("rsa", &gw, &authenticated);
    use HandshakeKind::*;
    assert_eq!(kinds, [Full, Full, Abbreviated]);
    let flow = check_capture(&path, port, false);
    // Per datagram: CH; SH Cert CertReq SHD (the gateway's optional client auth); the
    // empty client Certificate, CKE, CCS, Finished; CCS, Finished; data; echo. Then the
    // mutual flight with CertificateVerify; then the abbreviated SH, CCS, Finished.
    let expected = [
        "1",
        "2,11,13,14",
        "11,16",
        "",
        "",
        "", //
        "1",
        "2,11,13,14",
        "11,16,15",
        "",
        "",
        "", //
        "1",
        "2",
        "",
        "",
        "",
    ];
    assert_eq!(flow, expected);

    // Trusted CAs named by the hash of their key (identifier type 254) instead of text.
    let mut by_key_hash = (*client_config(rsa, false)).clone();
    by_key_hash.trusted_key_ids = TrustedKeyIds::KeyHash;
    let key_hash = [(Arc::new(by_key_hash), AuthMode::ServerAuth, false)];
    let (path, _) = capture("rsa-key-hash", &gw, &key_hash);
    let flow = check_capture(&path, port, false);
    assert_eq!(flow, ["1", "2,11,13,14", "11,16", "", "", ""]);

    let anonymous = [(client_config(rsa, true), AuthMode::ServerAuth, false)];
    let (path, _) = capture("rsa-anon", &gw, &anonymous);
    let flow = check_capture(&path, port, false);
    // RSA_anon: the server's key in ServerKeyExchange (12), no certificate.
    assert_eq!(flow, ["1", "2,12,14", "16", "", "", ""]);
    gw.shutdown();
}

#[test]
fn ec_hello_messages_decode_in_tshark() {
    if !tshark_available() {
        return;
    }
    let gw = gateway();
    let port = gw.local_addr().port();
    let ec = "160p/160p";
    let runs = [(client_config(ec, false), AuthMode::ServerAuth, false)];
    let (path, _) = capture("ec", &gw, &runs);
    let flow = check_capture(&path, port, true);
    assert_eq!(flow[0], "1");
    assert!(flow[1].starts_with("2,11"), "{flow:?}");
    let anonymous = [(client_config(ec, true), AuthMode::ServerAuth, false)];
    let (path, _) = capture("ec-anon", &gw, &anonymous);
    let flow = check_capture(&path, port, true);
    assert_eq!(flow[..3], ["1", "2,12,14", "16"]);
    gw.shutdown();
}
