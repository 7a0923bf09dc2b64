//! DTLS 1.3's first flight itemised against the IETF protocol comparison's estimate
//! (draft-ietf-iotops-security-protocol-comparison, "DTLS 1.3 - PSK" and "PSK, ECDHE"
//! without Connection ID): the ClientHello is sent in the clear, so every field and
//! extension can be read off the wire and set beside the draft's list.

use anyhow::{anyhow, bail};

/// One field or extension of a ClientHello datagram and its bytes on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub name: String,
    pub bytes: usize,
}

fn item(name: &str, bytes: usize) -> Item {
    Item {
        name: name.to_owned(),
        bytes,
    }
}

/// The TLS extension names the handshakes here use (IANA registry), by code point.
pub fn extension_name(code: u16) -> String {
    match code {
        0 => "server_name".into(),
        10 => "supported_groups".into(),
        13 => "signature_algorithms".into(),
        22 => "encrypt_then_mac".into(),
        23 => "extended_master_secret".into(),
        41 => "pre_shared_key".into(),
        42 => "early_data".into(),
        43 => "supported_versions".into(),
        44 => "cookie".into(),
        45 => "psk_key_exchange_modes".into(),
        51 => "key_share".into(),
        54 => "connection_id".into(),
        0xff01 => "renegotiation_info".into(),
        c => format!("extension_{c}"),
    }
}

/// Reads a big-endian length of `n` bytes at `at`.
fn len_at(d: &[u8], at: usize, n: usize) -> anyhow::Result<usize> {
    let b = d
        .get(at..at + n)
        .ok_or_else(|| anyhow!("ClientHello cut short at byte {at}"))?;
    Ok(b.iter().fold(0usize, |a, x| (a << 8) | usize::from(*x)))
}

/// Itemises one datagram holding a single plaintext DTLS 1.3 ClientHello record
/// (unfragmented): record and handshake headers, each fixed field, each extension.
pub fn client_hello_items(d: &[u8]) -> anyhow::Result<Vec<Item>> {
    if d.first() != Some(&22) {
        bail!("not a plaintext handshake record");
    }
    if d.get(13) != Some(&1) {
        bail!("not a ClientHello");
    }
    let mut items = vec![item("record header", 13), item("handshake header", 12)];
    let mut at = 25;
    items.push(item("legacy_version", 2));
    items.push(item("random", 32));
    at += 34;
    for (name, width) in [
        ("legacy_session_id", 1),
        ("legacy_cookie", 1),
        ("cipher_suites", 2),
        ("legacy_compression_methods", 1),
    ] {
        let n = width + len_at(d, at, width)?;
        items.push(item(name, n));
        at += n;
    }
    let ext_end = at + 2 + len_at(d, at, 2)?;
    items.push(item("extensions length", 2));
    at += 2;
    while at < ext_end {
        let code = len_at(d, at, 2)? as u16;
        let n = 4 + len_at(d, at + 2, 2)?;
        items.push(Item {
            name: extension_name(code),
            bytes: n,
        });
        at += n;
    }
    if at != d.len() || ext_end != d.len() {
        bail!(
            "ClientHello extensions end at {at}, datagram has {}",
            d.len()
        );
    }
    Ok(items)
}

/// The draft's flight #1 for DTLS 1.3 with PSK (no Connection ID, 1-byte identity): 130
/// bytes; with PSK and ECDHE on secp256r1 it adds supported_groups (8) and key_share (75):
/// 213 bytes.
pub fn draft_psk_flight1(ecdhe: bool) -> Vec<Item> {
    let mut v = vec![
        item("record header", 13),
        item("handshake header", 12),
        item("legacy_version", 2),
        item("random", 32),
        item("legacy_session_id", 1),
        item("legacy_cookie", 1),
        item("cipher_suites", 4),
        item("legacy_compression_methods", 2),
        item("extensions length", 2),
        item("supported_versions", 7),
        item("psk_key_exchange_modes", 6),
        item("pre_shared_key", 48),
    ];
    if ecdhe {
        v.push(item("supported_groups", 8));
        v.push(item("key_share", 75));
    }
    v
}

/// Per item, ours minus the draft's (items only one side has count whole); the sum is
/// the flight's difference.
pub fn difference(ours: &[Item], draft: &[Item]) -> Vec<(String, i64)> {
    let mut names: Vec<&str> = draft.iter().map(|i| i.name.as_str()).collect();
    for i in ours {
        if !names.contains(&i.name.as_str()) {
            names.push(&i.name);
        }
    }
    let total = |v: &[Item], n: &str| {
        v.iter()
            .filter(|i| i.name == n)
            .map(|i| i.bytes as i64)
            .sum::<i64>()
    };
    names
        .into_iter()
        .map(|n| (n.to_owned(), total(ours, n) - total(draft, n)))
        .filter(|(_, d)| *d != 0)
        .collect()
}
