//! A fully post-quantum, mutually authenticated DTLS 1.3 handshake (ML-KEM-768 key
//! exchange, ML-DSA-44 certificates on both sides) through wolfSSL on both sides over
//! UDP on loopback: the client on this thread, the server behind the gateway's workers.
//! The client's `--pcap` writer captures it, and Wireshark's DTLS dissector (tshark) is
//! the independent reader: every datagram is DTLS of the length the client counted, the
//! hellos carry the group and the ML-DSA signature scheme configured and FIPS 203's key
//! share sizes, and only the frame this tshark cannot read (see [`check_dissection`])
//! is marked malformed.
//!
//! Built with the `dtls13` feature only (`required-features` in Cargo.toml). tshark is
//! installed by `scripts/setup.sh`; `scripts/test.sh` requires it in CI.

use std::net::UdpSocket;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wtlsperf_drivers::gateway::{spawn_gateway, GatewayConfig, HandshakeServers};
use wtlsperf_drivers::pcap::PcapWriter;
use wtlsperf_drivers::protocols::dtls13::{
    Credential, Dtls13Config, Dtls13Suite, Group, MlDsa, Signature,
};
use wtlsperf_drivers::udp_client::drive::run_handshake;
use wtlsperf_drivers::wire_log::WireDatagram;
use wtlsperf_spine::{Handshake, Status};

/// Longer than any flight takes to be answered on loopback, so that no timer fires: the
/// capture then holds each flight once.
const NO_SPURIOUS_TIMER_S: u32 = 60;

#[test]
fn a_mutual_ml_dsa_handshake_completes_over_udp_and_tshark_reads_its_capture() {
    let suite = Dtls13Suite::new(
        Credential::Certificate { mutual: true },
        Group::MlKem768,
        false,
    )
    .signed_with(Signature::MlDsa(MlDsa::MlDsa44));
    let cfg = Arc::new(
        Dtls13Config::new(suite)
            .unwrap()
            .with_initial_timer_s(NO_SPURIOUS_TIMER_S),
    );
    let server_cfg = Arc::clone(&cfg);
    let servers = HandshakeServers {
        protocol: wtlsperf_drivers::protocols::DTLS13,
        make: Arc::new(move || server_cfg.server()),
    };
    let gw = spawn_gateway(GatewayConfig::lab("127.0.0.1:0".parse().unwrap(), servers)).unwrap();
    let path = std::env::temp_dir().join(format!(
        "wtlsperf-dtls13-ml-dsa-{}.pcap",
        std::process::id()
    ));
    let mut pcap = PcapWriter::create(&path).unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut client = cfg.client().unwrap();
    let deadline = Instant::now() + Duration::from_secs(u64::from(NO_SPURIOUS_TIMER_S));
    let run = run_handshake(
        &sock,
        gw.local_addr(),
        &mut client,
        None,
        Some(&mut pcap),
        deadline,
        &|_| None,
    )
    .unwrap();
    let port = gw.local_addr().port();
    gw.shutdown();
    assert_eq!(client.status(), Status::Complete(suite));
    assert_eq!(client.negotiated_group().as_deref(), Some("ML_KEM_768"));
    assert_eq!(run.retransmissions, 0);
    // both certificate flights carry an ML-DSA-44 certificate and signature
    let items = |server| cfg.certificate_items(server).unwrap().unwrap().total();
    let wire: usize = run.wire.iter().map(|d| d.bytes).sum();
    assert!(wire as u32 > items(true) + items(false));

    if !wtlsperf_testtools::tool_runs("tshark", "the DTLS 1.3 dissector check") {
        return;
    }
    let out = Command::new("tshark")
        .args(["-r", path.to_str().unwrap(), "-d"])
        .arg(format!("udp.port=={port},dtls"))
        .args(["-T", "fields", "-E", "separator=|", "-E", "occurrence=a"])
        .args(FIELDS.iter().flat_map(|f| ["-e", f]))
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    let _ = std::fs::remove_file(&path);
    check_dissection(&rows, &run.wire);
}

/// The fields tshark is asked for, in column order.
const FIELDS: &[&str] = &[
    "frame.protocols",
    "_ws.malformed",
    "udp.length",
    "dtls.handshake.type",
    "dtls.handshake.random",
    "dtls.handshake.extensions_supported_group",
    "dtls.handshake.sig_hash_alg",
    "dtls.handshake.extensions_key_share_group",
    "dtls.handshake.extensions_key_share_key_exchange_length",
];

/// The ServerHello random that marks a HelloRetryRequest (RFC 8446 section 4.1.3).
const HRR_RANDOM: &str = "cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c";

/// What tshark read, frame by frame, against what the client counted.
///
/// This tshark (Wireshark 4.0) reads the plaintext hellos, reassembling the fragmented
/// second ClientHello, and shows the DTLS 1.3 ciphertext records (RFC 9147's unified
/// header) as DTLS "continuation data" without opening them. It does not know DTLS 1.3's
/// HelloRetryRequest: it reads the cookie exchange's key_share (a bare selected group,
/// RFC 8446 section 4.2.8) as a ServerHello's key share entry and marks that one frame
/// malformed. It names no ML-DSA scheme and calls 0x0201 by an old draft's name, so code
/// points are compared as numbers.
fn check_dissection(rows: &[Vec<&str>], wire: &[WireDatagram]) {
    assert_eq!(rows.len(), wire.len(), "one frame per datagram");
    let field = |row: &Vec<&str>, name: &str| {
        let i = FIELDS.iter().position(|f| *f == name).unwrap();
        row.get(i).copied().unwrap_or("").to_owned()
    };
    let mut hellos = Vec::new();
    for (row, d) in rows.iter().zip(wire) {
        assert!(field(row, "frame.protocols").ends_with(":dtls"), "{row:?}");
        assert_eq!(field(row, "udp.length"), (d.bytes + 8).to_string());
        let hrr = field(row, "dtls.handshake.random") == HRR_RANDOM;
        assert_eq!(!field(row, "_ws.malformed").is_empty(), hrr, "{row:?}");
        // a whole hello (a fragment has no random until tshark reassembles it)
        let random = field(row, "dtls.handshake.random");
        if !random.is_empty() && !hrr {
            hellos.push((field(row, "dtls.handshake.type"), row));
        }
    }
    // the two ClientHellos (the second reassembled from its fragments) and the
    // ServerHello; everything after is encrypted
    let kinds: Vec<&str> = hellos.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["1", "1", "2"]);
    for (kind, row) in &hellos {
        if kind == "1" {
            assert_eq!(
                field(row, "dtls.handshake.extensions_supported_group"),
                "0x0201"
            );
            let schemes = field(row, "dtls.handshake.sig_hash_alg");
            assert!(schemes.split(',').any(|s| s == "0x0904"), "{schemes}");
        }
    }
    // FIPS 203: ML-KEM-768's encapsulation key (1184 B) out, its ciphertext (1088 B)
    // back, both in ML-KEM-768's code point (513)
    let share = |i: usize| {
        (
            field(hellos[i].1, "dtls.handshake.extensions_key_share_group"),
            field(
                hellos[i].1,
                "dtls.handshake.extensions_key_share_key_exchange_length",
            ),
        )
    };
    assert_eq!(
        share(0),
        (String::new(), String::new()),
        "no share in the first"
    );
    assert_eq!(share(1), ("513".to_owned(), "1184".to_owned()));
    assert_eq!(share(2), ("513".to_owned(), "1088".to_owned()));
}
