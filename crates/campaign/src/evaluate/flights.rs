//! `flights.csv`: the bytes of every handshake flight of DTLS 1.2, EDHOC and (with the
//! `dtls13` feature) DTLS 1.3, split into the security protocol's own bytes, its carrier
//! (CoAP for EDHOC) and UDP, from one lossless in-memory handshake each.
//!
//! The split answers what a flight total alone cannot: how much of EDHOC's datagrams is
//! EDHOC (RFC 9529's message sizes) and how much CoAP, and where DTLS 1.3's bytes go
//! beside the published estimates of the IETF's protocol comparison
//! (draft-ietf-iotops-security-protocol-comparison), which leave out the cookie
//! exchange, ACKs and fragmentation.

use std::path::Path;

use anyhow::{anyhow, bail};
use wtlsperf_spine::pair::Direction;
use wtlsperf_spine::{Now, ProtocolId};

use super::csv_file::write_csv;
use wtlsperf_bearer::LinkProfile;
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::protocols::dtls::DtlsConfig;
use wtlsperf_drivers::protocols::edhoc::EdhocConfig;
use wtlsperf_drivers::protocols::{exchange, Suite, DTLS12, EDHOC};
use wtlsperf_drivers::registry::{self, Bench, CertificateItems, TimeBase, DEFAULT_PAYLOAD_LIMIT};

/// UDP's header, per datagram (RFC 768).
pub const UDP_HEADER: u32 = 8;

/// One flight of one handshake (columns documented in docs/results.md).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FlightRow {
    pub protocol: &'static str,
    pub suite: String,
    /// 1-based, in sending order.
    pub flight: usize,
    /// `client` or `server`: who sent it.
    pub sender: &'static str,
    pub datagrams: u32,
    /// The security protocol's own bytes (DTLS records; EDHOC messages).
    pub protocol_bytes: u32,
    /// The carrier's bytes inside the UDP payload (CoAP header, token, options, payload
    /// marker, EDHOC's connection-identifier prefix; 0 for DTLS).
    pub coap_bytes: u32,
    /// UDP payload bytes: protocol + CoAP.
    pub udp_payload_bytes: u32,
    /// With UDP's 8-byte header per datagram (no IP).
    pub udp_bytes: u32,
    /// DTLS 1.2 only (empty for the others), the flight's bytes itemised
    /// ([`items`]): record headers, plaintext handshake headers, Certificate bodies, and
    /// the cookie (HelloVerifyRequest and the ClientHello that echoes it).
    pub record_header_bytes: Option<u32>,
    pub handshake_header_bytes: Option<u32>,
    pub certificate_bytes: Option<u32>,
    pub cookie_bytes: Option<u32>,
    /// DTLS 1.3 with ML-DSA certificates only (empty otherwise; 0 in a flight without
    /// them): the sender's Certificate and CertificateVerify bodies itemised (see
    /// [`FlightRow::set_certificate_items`]).
    pub certificate_public_key_bytes: Option<u32>,
    pub certificate_signature_bytes: Option<u32>,
    pub certificate_encoding_bytes: Option<u32>,
    pub certificate_verify_signature_bytes: Option<u32>,
    pub certificate_verify_encoding_bytes: Option<u32>,
}

impl FlightRow {
    /// Fills the ML-DSA certificate items: the certificates' public keys and their
    /// issuers' signatures (FIPS 204 sizes each), the rest of the Certificate body (X.509
    /// fields and DER headers, TLS 1.3's length prefixes), and the CertificateVerify's
    /// signature and its 4-byte scheme and length. DTLS 1.3 encrypts both messages, so
    /// the items come from the DER the configuration loaded (the drivers' test
    /// `ml_dsa_flights_grow_by_their_itemised_certificates_and_fragment_framing` ties
    /// them to the wire).
    pub fn set_certificate_items(&mut self, [keys, sigs, encoding, verify, verify_enc]: [u32; 5]) {
        self.certificate_public_key_bytes = Some(keys);
        self.certificate_signature_bytes = Some(sigs);
        self.certificate_encoding_bytes = Some(encoding);
        self.certificate_verify_signature_bytes = Some(verify);
        self.certificate_verify_encoding_bytes = Some(verify_enc);
    }
}

/// How a protocol's datagrams split into its own bytes and its carrier's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// The datagram is the protocol's (DTLS records).
    Udp,
    /// EDHOC over CoAP (RFC 9528 appendix A.2): a request's payload is the connection
    /// identifier (or CBOR `true` before message_1) and the message; a response's
    /// payload is the message.
    CoapEdhoc,
}

/// Length of the CBOR data item at the start of `b`: the integers, byte strings and
/// simple values EDHOC puts before a message (connection identifiers, `true`).
pub fn cbor_item_len(b: &[u8]) -> anyhow::Result<usize> {
    let first = *b.first().ok_or_else(|| anyhow!("empty CBOR item"))?;
    let (major, info) = (first >> 5, first & 0x1f);
    let arg_len = match info {
        0..=23 => 0,
        24 => 1,
        25 => 2,
        26 => 4,
        27 => 8,
        _ => bail!("CBOR additional information {info} not supported here"),
    };
    let head = 1 + arg_len;
    if b.len() < head {
        bail!("CBOR item head cut short");
    }
    let arg = if arg_len == 0 {
        u64::from(info)
    } else {
        b[1..head]
            .iter()
            .fold(0u64, |a, x| (a << 8) | u64::from(*x))
    };
    match major {
        0 | 1 | 7 => Ok(head),
        2 | 3 => {
            let total = (head as u64)
                .checked_add(arg)
                .filter(|t| *t <= b.len() as u64)
                .ok_or_else(|| anyhow!("CBOR string runs past the payload"))?;
            Ok(total as usize)
        }
        _ => bail!("CBOR major type {major} is not a connection identifier"),
    }
}

/// The protocol's bytes in one datagram.
pub fn protocol_bytes(carrier: Carrier, direction: Direction, d: &[u8]) -> anyhow::Result<u32> {
    match carrier {
        Carrier::Udp => Ok(d.len() as u32),
        Carrier::CoapEdhoc => {
            let packet = coap_lite::Packet::from_bytes(d)
                .map_err(|e| anyhow!("not a CoAP message: {e:?}"))?;
            let payload = &packet.payload;
            let message = match direction {
                Direction::ToServer if !payload.is_empty() => {
                    payload.len() - cbor_item_len(payload)?
                }
                _ => payload.len(),
            };
            Ok(message as u32)
        }
    }
}

/// Groups an exchange into flights (runs in one direction) and splits each.
pub fn flight_rows(
    protocol: ProtocolId,
    suite: &str,
    carrier: Carrier,
    exchange: &[(Direction, Vec<u8>)],
) -> anyhow::Result<Vec<FlightRow>> {
    let mut rows: Vec<FlightRow> = Vec::new();
    let mut last = None;
    let itemised = protocol == wtlsperf_drivers::protocols::DTLS12;
    let none = itemised.then_some(0);
    for (dir, d) in exchange {
        let own = protocol_bytes(carrier, *dir, d)?;
        let len = d.len() as u32;
        if last != Some(*dir) {
            rows.push(FlightRow {
                protocol: protocol.name(),
                suite: suite.to_owned(),
                flight: rows.len() + 1,
                sender: match dir {
                    Direction::ToServer => "client",
                    Direction::ToClient => "server",
                },
                datagrams: 0,
                protocol_bytes: 0,
                coap_bytes: 0,
                udp_payload_bytes: 0,
                udp_bytes: 0,
                record_header_bytes: none,
                handshake_header_bytes: none,
                certificate_bytes: none,
                cookie_bytes: none,
                certificate_public_key_bytes: None,
                certificate_signature_bytes: None,
                certificate_encoding_bytes: None,
                certificate_verify_signature_bytes: None,
                certificate_verify_encoding_bytes: None,
            });
            last = Some(*dir);
        }
        let row = rows.last_mut().ok_or_else(|| anyhow!("no flight"))?;
        row.datagrams += 1;
        row.protocol_bytes += own;
        row.coap_bytes += len - own;
        row.udp_payload_bytes += len;
        row.udp_bytes += len + UDP_HEADER;
        if itemised {
            let i = items::dtls12(d)?;
            let add = |c: &mut Option<u32>, n: u32| *c = c.map(|v| v + n);
            add(&mut row.record_header_bytes, i.record_headers);
            add(&mut row.handshake_header_bytes, i.handshake_headers);
            add(&mut row.certificate_bytes, i.certificates);
            add(&mut row.cookie_bytes, i.cookie);
        }
    }
    Ok(rows)
}

/// The flights of every DTLS 1.2 suite (with and without the cookie exchange), EDHOC,
/// and every configuration of the registry's other protocols.
pub fn measure(store: &PkiStore, now: Now) -> anyhow::Result<Vec<FlightRow>> {
    let mut rows = Vec::new();
    for suite in [
        Suite::DtlsEcdheEcdsa { mutual: false },
        Suite::DtlsEcdheEcdsa { mutual: true },
        Suite::DtlsPsk,
    ] {
        // RFC 7925's configuration (leaf certificates only), with the cookie exchange
        // and without it
        for (cfg, name) in [
            (DtlsConfig::new(suite)?, suite.name().to_owned()),
            (
                DtlsConfig::without_cookie_exchange(suite)?,
                format!("{}-no-cookie", suite.name()),
            ),
        ] {
            let ex = exchange(cfg.client()?, cfg.server()?, now)?;
            rows.extend(flight_rows(
                wtlsperf_drivers::protocols::DTLS12,
                &name,
                Carrier::Udp,
                &ex,
            )?);
        }
    }
    let edhoc = EdhocConfig::new()?;
    let ex = exchange(edhoc.client(0)?, edhoc.server()?, now)?;
    let name = Suite::EdhocMethod3Suite2.name();
    rows.extend(flight_rows(
        wtlsperf_drivers::protocols::EDHOC,
        name,
        Carrier::CoapEdhoc,
        &ex,
    )?);
    // Every configuration of the registry's other protocols (DTLS 1.3, ...), in memory
    // at the default payload limit, with the certificate flights itemised where the
    // entry can say what they carry (ML-DSA chains: the wire encrypts them).
    let bench = Bench { store };
    let done = [wtls::handshake::WTLS, DTLS12, EDHOC];
    for entry in registry::available().filter(|p| !done.contains(&p.id())) {
        for c in entry.configurations() {
            let sides = c.sides(bench, DEFAULT_PAYLOAD_LIMIT, TimeBase::Virtual)?;
            let client = sides.client(&LinkProfile::loopback(), 0)?;
            let ex = exchange(client, sides.server()?, now)?;
            let mut flights = flight_rows(entry.id(), &c.suite(), Carrier::Udp, &ex)?;
            let items = [
                sides.certificate_items(true)?,
                sides.certificate_items(false)?,
            ];
            if items.iter().any(Option::is_some) {
                itemise_certificates(&mut flights, items);
            }
            rows.extend(flights);
        }
    }
    Ok(rows)
}

/// Fills the certificate items of the flights that carry them: the server's second
/// flight and the client's third.
fn itemise_certificates(flights: &mut [FlightRow], items: [Option<CertificateItems>; 2]) {
    let mut seen = [0; 2];
    for row in flights {
        let side = usize::from(row.sender == "client");
        seen[side] += 1;
        let i = items[side]
            .filter(|_| seen[side] == 2 + side)
            .unwrap_or_default();
        row.set_certificate_items([
            i.public_keys,
            i.signatures,
            i.certificate_encoding,
            i.verify_signature,
            i.verify_encoding,
        ]);
    }
}

/// Writes `flights.csv`.
pub fn write(dir: &Path, rows: &[FlightRow]) -> anyhow::Result<()> {
    write_csv(&dir.join("flights.csv"), rows)
}

#[path = "flights_draft.rs"]
pub mod draft;

#[path = "flights_items.rs"]
pub mod items;

#[cfg(test)]
#[path = "flights_tests.rs"]
mod tests;
