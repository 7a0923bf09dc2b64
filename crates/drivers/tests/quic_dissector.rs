//! Wireshark's QUIC dissector (tshark) as an independent wire oracle for the QUIC
//! adapter: an in-memory handshake of each key exchange is written to a capture as the
//! project writes captures ([`PcapWriter`]), and tshark must read the client's first
//! flight as QUIC v1 Initial packets of at least 1200 bytes a datagram (RFC 9000
//! section 14.1) whose ClientHello (tshark decrypts Initial packets itself, RFC 9001
//! section 5.2) carries exactly the configured key share, and the server's first
//! datagram as an Initial with the ServerHello.
//!
//! Without tshark the check skips with a message, unless CI requires it
//! (`WTLSPERF_REQUIRE_TSHARK`, as the WTLS dissector check).
#![cfg(feature = "quic")]

use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

use wtlsperf_drivers::pcap::PcapWriter;
use wtlsperf_drivers::pki_store::unix_now;
use wtlsperf_drivers::registry::quic::{Group, QuicConfig, QuicSuite};
use wtlsperf_spine::pair::Ended;
use wtlsperf_spine::{Now, Pair};

const CLIENT: &str = "127.0.0.1:50000";
const SERVER: &str = "127.0.0.1:4433";

/// One handshake in memory, every datagram in sending order into a capture. Returns
/// the capture and how many datagrams the client's first flight had.
fn capture(suite: QuicSuite) -> (PathBuf, usize) {
    let c = QuicConfig::new(suite).unwrap();
    let now = Now::new(1_000_000_000, unix_now().unwrap());
    let mut pair = Pair::new(c.client().unwrap(), c.server().unwrap(), now);
    assert_eq!(pair.handshake(), Ended::Complete, "{suite}");
    let path = std::env::temp_dir().join(format!(
        "wtlsperf-quic-dissector-{}-{suite}.pcap",
        std::process::id()
    ));
    let mut pcap = PcapWriter::create(&path).unwrap();
    let (client, server): (SocketAddrV4, SocketAddrV4) =
        (CLIENT.parse().unwrap(), SERVER.parse().unwrap());
    let (mut up, mut down) = (pair.client_sent.iter(), pair.server_sent.iter());
    for (i, d) in pair.log.iter().enumerate() {
        let ts = UNIX_EPOCH
            + Duration::from_secs(u64::from(now.unix_secs))
            + Duration::from_millis(i as u64);
        if d.up() {
            pcap.write_udp(ts, client, server, up.next().unwrap())
                .unwrap();
        } else {
            pcap.write_udp(ts, server, client, down.next().unwrap())
                .unwrap();
        }
    }
    pcap.flush().unwrap();
    (path, pair.client_steps[0].datagrams.len())
}

/// The fields tshark is asked for, in column order.
const FIELDS: [&str; 7] = [
    "frame.protocols",
    "udp.length",
    "quic.long.packet_type",
    "quic.version",
    "tls.handshake.type",
    "tls.handshake.extensions_key_share_group",
    "_ws.malformed",
];

/// One frame as tshark decoded it: each field asked for, with all its occurrences.
type Frame = std::collections::BTreeMap<String, Vec<String>>;

/// tshark's JSON of the fields asked for, one map per frame in order.
fn tshark(path: &Path) -> Vec<Frame> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(path)
        .args(["-d", "udp.port==4433,quic", "-T", "json"]);
    cmd.args(FIELDS.iter().flat_map(|f| ["-e", f]));
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    frames
        .iter()
        .map(|f| serde_json::from_value(f["_source"]["layers"].clone()).unwrap())
        .collect()
}

/// TLS NamedGroup code points: x25519 (RFC 8446), X25519MLKEM768
/// (draft-ietf-tls-ecdhe-mlkem).
fn code_point(group: Group) -> &'static str {
    match group {
        Group::X25519 => "29",
        Group::X25519MlKem768 => "4588",
        Group::P256 => "23",
        Group::P256MlKem768 => "4587",
    }
}

#[test]
fn tshark_reads_the_clients_first_flight_as_padded_quic_v1_initials_with_the_key_share() {
    if !wtlsperf_testtools::tool_runs("tshark", "the QUIC dissector check") {
        return;
    }
    for group in [Group::X25519, Group::X25519MlKem768] {
        let suite = QuicSuite::new(group, false);
        let (path, first) = capture(suite);
        let frames = tshark(&path);
        let _ = std::fs::remove_file(&path);
        let field =
            |frame: &Frame, name: &str| frame.get(name).map_or(String::new(), |v| v.join(","));
        let mut client_hellos = 0;
        for frame in &frames[..first] {
            assert!(
                field(frame, "frame.protocols").contains(":udp:quic"),
                "{frame:?}"
            );
            assert!(field(frame, "_ws.malformed").is_empty(), "{frame:?}");
            assert_eq!(field(frame, "quic.version"), "0x00000001", "{frame:?}");
            // Initial is long packet type 0.
            assert_eq!(field(frame, "quic.long.packet_type"), "0", "{frame:?}");
            let payload: usize = field(frame, "udp.length").parse::<usize>().unwrap() - 8;
            assert!(payload >= 1200, "{suite}: {payload} B: {frame:?}");
            if field(frame, "tls.handshake.type") == "1" {
                client_hellos += 1;
                assert_eq!(
                    field(frame, "tls.handshake.extensions_key_share_group"),
                    code_point(group),
                    "{suite}: {frame:?}"
                );
            }
        }
        assert_eq!(client_hellos, 1, "{suite}: {frames:?}");
        let server = &frames[first];
        assert!(
            field(server, "quic.long.packet_type").starts_with('0'),
            "{server:?}"
        );
        assert!(
            frames[first..]
                .iter()
                .any(|f| field(f, "tls.handshake.type").split(',').any(|t| t == "2")),
            "{suite}: no ServerHello: {frames:?}"
        );
    }
}
