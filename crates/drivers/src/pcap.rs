//! Classic libpcap capture files of WTLS datagrams, for inspection with Wireshark/tshark.
//!
//! The gateway, client and bearer emulator see UDP payloads, not packets, so each payload is
//! wrapped in a synthetic IPv4 + UDP header with correct lengths and checksums. The file uses
//! link type `LINKTYPE_RAW` (101): every record starts directly with the IPv4 header, which
//! Wireshark, tshark and tcpdump decode without a made-up Ethernet layer. WTLS is dissected
//! with `tshark -r FILE -d udp.port==9202,wtls` (Wireshark also recognises 9202 by itself).
//!
//! File format (all fields little-endian, as written by the magic number 0xa1b2c3d4):
//! a 24-byte global header (magic, version 2.4, zone 0, sigfigs 0, snaplen, link type), then
//! per packet a 16-byte record header (seconds, microseconds, captured length, original
//! length) followed by the packet bytes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::SocketAddrV4;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Magic number of a classic pcap file with microsecond timestamps.
pub const PCAP_MAGIC: u32 = 0xa1b2_c3d4;
/// File format version written: 2.4, the only classic version readers accept.
pub const PCAP_VERSION: (u16, u16) = (2, 4);
/// `LINKTYPE_RAW`: packets begin with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Largest packet recorded; an IPv4 datagram cannot be larger.
pub const SNAPLEN: u32 = 65_535;

const IPV4_HEADER_LEN: usize = 20;
const UDP_HEADER_LEN: usize = 8;
const IPPROTO_UDP: u8 = 17;
/// Time to live of the synthetic IPv4 header (a typical initial value; nothing routes it).
const TTL: u8 = 64;
/// IPv4 "don't fragment" flag: WTLS assumes one SDU per datagram.
const FLAG_DONT_FRAGMENT: u16 = 0x4000;

/// Largest UDP payload that fits one IPv4 datagram.
pub const MAX_UDP_PAYLOAD: usize = 65_535 - IPV4_HEADER_LEN - UDP_HEADER_LEN;

/// Writes a classic pcap file of synthetic IPv4/UDP packets.
#[derive(Debug)]
pub struct PcapWriter<W: Write = BufWriter<File>> {
    out: W,
    /// IPv4 identification of the next packet: distinct per packet so that tools never
    /// mistake two captured datagrams for fragments of one.
    next_ip_id: u16,
    /// What the writer writes to, for error messages ("pcap file hs.pcap").
    name: String,
}

impl PcapWriter<BufWriter<File>> {
    /// Creates (or truncates) `path` and writes the global header.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("cannot create pcap file {}: {err}", path.display()),
            )
        })?;
        let mut writer = PcapWriter::new(BufWriter::new(file))
            .map_err(|err| named(err, &format!("pcap file {}", path.display())))?;
        writer.name = format!("pcap file {}", path.display());
        Ok(writer)
    }
}

/// The same error with what was being written in front, so that a full disk or a
/// vanished directory names the capture file.
fn named(err: io::Error, name: &str) -> io::Error {
    io::Error::new(err.kind(), format!("writing {name}: {err}"))
}

impl<W: Write> PcapWriter<W> {
    /// Wraps any writer and writes the global header to it.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut header = Vec::with_capacity(24);
        header.extend_from_slice(&PCAP_MAGIC.to_le_bytes());
        header.extend_from_slice(&PCAP_VERSION.0.to_le_bytes());
        header.extend_from_slice(&PCAP_VERSION.1.to_le_bytes());
        header.extend_from_slice(&0i32.to_le_bytes()); // thiszone: timestamps are UTC
        header.extend_from_slice(&0u32.to_le_bytes()); // sigfigs: always 0 in practice
        header.extend_from_slice(&SNAPLEN.to_le_bytes());
        header.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter {
            out,
            next_ip_id: 1,
            name: "pcap stream".to_string(),
        })
    }

    /// Records one UDP datagram from `src` to `dst` carrying `payload`, captured at `ts`.
    pub fn write_udp(
        &mut self,
        ts: SystemTime,
        src: SocketAddrV4,
        dst: SocketAddrV4,
        payload: &[u8],
    ) -> io::Result<()> {
        let since_epoch = ts.duration_since(UNIX_EPOCH).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "pcap timestamp before 1970-01-01",
            )
        })?;
        let seconds = u32::try_from(since_epoch.as_secs()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "pcap timestamp beyond 2106 does not fit the classic format",
            )
        })?;
        let packet = ipv4_udp_packet(src, dst, payload, self.next_ip_id)?;
        self.next_ip_id = self.next_ip_id.wrapping_add(1);
        // Packet length <= 65535 was checked when building it.
        let len = packet.len() as u32;
        let mut record = Vec::with_capacity(16);
        record.extend_from_slice(&seconds.to_le_bytes());
        record.extend_from_slice(&since_epoch.subsec_micros().to_le_bytes());
        record.extend_from_slice(&len.to_le_bytes()); // captured length
        record.extend_from_slice(&len.to_le_bytes()); // original length
        self.out
            .write_all(&record)
            .and_then(|()| self.out.write_all(&packet))
            .map_err(|err| named(err, &self.name))
    }

    /// Flushes buffered records to the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush().map_err(|err| named(err, &self.name))
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        Ok(self.out)
    }
}

/// One's-complement sum of 16-bit big-endian words over `chunks` (RFC 1071), folded and
/// complemented: the checksum of IPv4 headers and of UDP with its pseudo-header. An odd
/// trailing byte is padded with zero, as RFC 768 prescribes; every chunk but the last must
/// have even length.
fn internet_checksum(chunks: &[&[u8]]) -> u16 {
    let mut sum: u32 = 0;
    for chunk in chunks {
        let mut words = chunk.chunks_exact(2);
        for word in &mut words {
            sum += u32::from(u16::from_be_bytes([word[0], word[1]]));
        }
        if let [last] = words.remainder() {
            sum += u32::from(u16::from_be_bytes([*last, 0]));
        }
        // Fold early so the sum never overflows, whatever the payload size.
        sum = (sum & 0xffff) + (sum >> 16);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Builds the bytes of an IPv4 packet carrying one UDP datagram.
fn ipv4_udp_packet(
    src: SocketAddrV4,
    dst: SocketAddrV4,
    payload: &[u8],
    ip_id: u16,
) -> io::Result<Vec<u8>> {
    if payload.len() > MAX_UDP_PAYLOAD {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "UDP payload of {} bytes exceeds the IPv4 maximum of {MAX_UDP_PAYLOAD}",
                payload.len()
            ),
        ));
    }
    // Both fit u16 after the check above.
    let udp_len = (UDP_HEADER_LEN + payload.len()) as u16;
    let total_len = (IPV4_HEADER_LEN + UDP_HEADER_LEN + payload.len()) as u16;

    let mut ip = [0u8; IPV4_HEADER_LEN];
    ip[0] = 0x45; // version 4, header length 5 words
    ip[2..4].copy_from_slice(&total_len.to_be_bytes());
    ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
    ip[6..8].copy_from_slice(&FLAG_DONT_FRAGMENT.to_be_bytes());
    ip[8] = TTL;
    ip[9] = IPPROTO_UDP;
    ip[12..16].copy_from_slice(&src.ip().octets());
    ip[16..20].copy_from_slice(&dst.ip().octets());
    let ip_checksum = internet_checksum(&[&ip]);
    ip[10..12].copy_from_slice(&ip_checksum.to_be_bytes());

    let mut udp = [0u8; UDP_HEADER_LEN];
    udp[0..2].copy_from_slice(&src.port().to_be_bytes());
    udp[2..4].copy_from_slice(&dst.port().to_be_bytes());
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    // RFC 768 pseudo-header: source, destination, zero, protocol, UDP length.
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&src.ip().octets());
    pseudo[4..8].copy_from_slice(&dst.ip().octets());
    pseudo[9] = IPPROTO_UDP;
    pseudo[10..12].copy_from_slice(&udp_len.to_be_bytes());
    let udp_checksum = match internet_checksum(&[&pseudo, &udp, payload]) {
        // A computed zero is sent as all ones; zero on the wire means "no checksum".
        0 => 0xffff,
        sum => sum,
    };
    udp[6..8].copy_from_slice(&udp_checksum.to_be_bytes());

    let mut packet = Vec::with_capacity(usize::from(total_len));
    packet.extend_from_slice(&ip);
    packet.extend_from_slice(&udp);
    packet.extend_from_slice(payload);
    Ok(packet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use std::path::PathBuf;
    use std::process::Command;
    use std::time::Duration;

    /// A captured packet as read back by [`parse`].
    #[derive(Debug)]
    struct Captured {
        ts_sec: u32,
        ts_usec: u32,
        packet: Vec<u8>,
    }

    fn u16_be(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    fn u32_le(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    /// Minimal independent reader of what the writer should have produced.
    fn parse(file: &[u8]) -> Vec<Captured> {
        assert!(file.len() >= 24, "no global header");
        assert_eq!(&file[0..4], &[0xd4, 0xc3, 0xb2, 0xa1], "magic");
        assert_eq!(u16::from_le_bytes([file[4], file[5]]), 2, "major version");
        assert_eq!(u16::from_le_bytes([file[6], file[7]]), 4, "minor version");
        assert_eq!(u32_le(file, 16), 65_535, "snaplen");
        assert_eq!(u32_le(file, 20), 101, "LINKTYPE_RAW");
        let mut at = 24;
        let mut packets = Vec::new();
        while at < file.len() {
            let incl = u32_le(file, at + 8) as usize;
            assert_eq!(incl, u32_le(file, at + 12) as usize, "not truncated");
            packets.push(Captured {
                ts_sec: u32_le(file, at),
                ts_usec: u32_le(file, at + 4),
                packet: file[at + 16..at + 16 + incl].to_vec(),
            });
            at += 16 + incl;
        }
        assert_eq!(at, file.len(), "no trailing garbage");
        packets
    }

    fn temp_path(name: &str) -> PathBuf {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        std::env::temp_dir().join(format!(
            "wtlsperf-pcap-{}-{nanos}-{name}.pcap",
            std::process::id()
        ))
    }

    fn addr(a: u8, port: u16) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, a), port)
    }

    /// A clear-text WTLS alert record (L and S set, content type 2): fatal (2)
    /// handshake_failure (40) with a zero checksum, per the wire-format notes §2.1.
    const WTLS_ALERT_RECORD: [u8; 11] = [0xC2, 0x00, 0x00, 0x00, 0x06, 2, 40, 0, 0, 0, 0];

    #[test]
    fn checksum_matches_rfc1071_example() {
        // RFC 1071 section 3 example words 0001 f203 f4f5 f6f7: sum ddf2, checksum 220d.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(internet_checksum(&[&data]), 0x220d);
        // Odd length pads with a zero byte.
        assert_eq!(internet_checksum(&[&[0x01]]), !0x0100);
    }

    #[test]
    fn written_file_reads_back_with_correct_headers() {
        let path = temp_path("roundtrip");
        let t0 = UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789);
        let client = addr(1, 49_152);
        let gateway = addr(2, 9202);
        let odd_payload = [7u8; 33];
        {
            let mut writer = PcapWriter::create(&path).unwrap();
            writer
                .write_udp(t0, client, gateway, &WTLS_ALERT_RECORD)
                .unwrap();
            writer
                .write_udp(
                    t0 + Duration::from_millis(391),
                    gateway,
                    client,
                    &odd_payload,
                )
                .unwrap();
            writer
                .write_udp(t0 + Duration::from_secs(1), client, gateway, &[])
                .unwrap();
            writer.flush().unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let packets = parse(&bytes);
        assert_eq!(packets.len(), 3);
        assert_eq!(
            (packets[0].ts_sec, packets[0].ts_usec),
            (1_700_000_000, 123_456)
        );
        assert_eq!(
            (packets[1].ts_sec, packets[1].ts_usec),
            (1_700_000_000, 514_456)
        );

        let expectations: [(&[u8], SocketAddrV4, SocketAddrV4); 3] = [
            (&WTLS_ALERT_RECORD, client, gateway),
            (&odd_payload, gateway, client),
            (&[], client, gateway),
        ];
        let mut ids = Vec::new();
        for (captured, (payload, src, dst)) in packets.iter().zip(expectations) {
            let p = &captured.packet;
            assert_eq!(p.len(), 28 + payload.len());
            assert_eq!(p[0], 0x45);
            assert_eq!(usize::from(u16_be(p, 2)), p.len(), "IPv4 total length");
            assert_eq!(p[9], 17, "protocol UDP");
            assert_eq!(&p[12..16], &src.ip().octets());
            assert_eq!(&p[16..20], &dst.ip().octets());
            // A correct header checksums to zero.
            assert_eq!(internet_checksum(&[&p[..20]]), 0, "IPv4 header checksum");
            ids.push(u16_be(p, 4));
            assert_eq!(u16_be(p, 20), src.port());
            assert_eq!(u16_be(p, 22), dst.port());
            assert_eq!(usize::from(u16_be(p, 24)), 8 + payload.len(), "UDP length");
            let mut pseudo = Vec::new();
            pseudo.extend_from_slice(&p[12..20]);
            pseudo.extend_from_slice(&[0, 17]);
            pseudo.extend_from_slice(&p[24..26]);
            assert_ne!(u16_be(p, 26), 0, "UDP checksum present");
            assert_eq!(internet_checksum(&[&pseudo, &p[20..]]), 0, "UDP checksum");
            assert_eq!(&p[28..], payload);
        }
        ids.dedup();
        assert_eq!(ids.len(), 3, "distinct IPv4 identifications");
    }

    #[test]
    fn oversized_payload_and_pre_epoch_time_are_refused() {
        let mut writer = PcapWriter::new(Vec::new()).unwrap();
        let big = vec![0u8; MAX_UDP_PAYLOAD + 1];
        let err = writer
            .write_udp(SystemTime::now(), addr(1, 1), addr(2, 2), &big)
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let before = UNIX_EPOCH - Duration::from_secs(1);
        let err = writer
            .write_udp(before, addr(1, 1), addr(2, 2), b"x")
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        // Nothing but the global header was written.
        assert_eq!(writer.into_inner().unwrap().len(), 24);
        let max = vec![0u8; MAX_UDP_PAYLOAD];
        let mut writer = PcapWriter::new(Vec::new()).unwrap();
        writer
            .write_udp(SystemTime::now(), addr(1, 1), addr(2, 2), &max)
            .unwrap();
        let packets = parse(&writer.into_inner().unwrap());
        assert_eq!(u16_be(&packets[0].packet, 2), 65_535);
    }

    #[test]
    fn tshark_decodes_wtls_in_the_capture() {
        // CI (`CI=true`, or scripts/test.sh's WTLSPERF_REQUIRE_TSHARK) requires it.
        if !wtlsperf_testtools::tool_runs("tshark", "tshark_decodes_wtls_in_the_capture") {
            return;
        }
        let path = temp_path("tshark");
        {
            let mut writer = PcapWriter::create(&path).unwrap();
            writer
                .write_udp(
                    SystemTime::now(),
                    addr(1, 49_152),
                    addr(2, 9202),
                    &WTLS_ALERT_RECORD,
                )
                .unwrap();
            writer.flush().unwrap();
        }
        let out = Command::new("tshark")
            .arg("-r")
            .arg(&path)
            .args(["-d", "udp.port==9202,wtls"])
            .args([
                "-o",
                "ip.check_checksum:TRUE",
                "-o",
                "udp.check_checksum:TRUE",
            ])
            .args(["-T", "fields", "-E", "separator=,"])
            .args(["-e", "frame.protocols", "-e", "ip.checksum.status"])
            .args(["-e", "udp.checksum.status", "-e", "wtls.alert.description"])
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "tshark failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Wireshark's checksum status: 0 bad, 1 good, 2 unverified. Alert description 40 is
        // handshake_failure.
        assert_eq!(
            stdout.trim_end(),
            "raw:ip:udp:wtls,1,1,40",
            "tshark saw: {stdout}"
        );
    }
}
