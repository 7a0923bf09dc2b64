//! The per-flight split against the published message sizes.

use super::*;

fn t0() -> Now {
    Now::new(0, wtlsperf_drivers::setup::now().unix_secs)
}

/// RFC 9529 section 3 (Trace 2: method 3, cipher suite 2, credentials by key
/// identifier): message_1, message_2 and message_3 in bytes.
const RFC9529_TRACE2: [u32; 3] = [39, 45, 19];

/// Trace 2's initiator offers SUITES_I = [6, 2] (its first attempt with suite 6 was
/// refused); lakers offers suite 2 alone, one CBOR byte instead of the array's three.
const SUITES_I_ARRAY_VS_SINGLE: u32 = 2;

#[test]
fn edhoc_method_3_suite_2_by_kid_gives_rfc_9529_trace_2s_message_sizes() {
    let cfg = EdhocConfig::new().unwrap();
    let ex = exchange(cfg.client(0).unwrap(), cfg.server().unwrap(), t0()).unwrap();
    let rows = flight_rows(
        wtlsperf_drivers::protocols::EDHOC,
        "m3s2",
        Carrier::CoapEdhoc,
        &ex,
    )
    .unwrap();
    let own: Vec<u32> = rows.iter().map(|r| r.protocol_bytes).collect();
    // message_1, message_2, message_3, then the empty 2.04 response.
    assert_eq!(
        own,
        vec![
            RFC9529_TRACE2[0] - SUITES_I_ARRAY_VS_SINGLE,
            RFC9529_TRACE2[1],
            RFC9529_TRACE2[2],
            0
        ]
    );
    // The draft protocol comparison's "EDHOC - Static DH RPKs, kid" row (suite 2 alone):
    // 37, 45 and 19 bytes exactly.
    assert_eq!(&own[..3], &[37, 45, 19]);
    for r in &rows {
        assert_eq!(r.datagrams, 1);
        assert_eq!(r.udp_payload_bytes, r.protocol_bytes + r.coap_bytes);
        assert_eq!(r.udp_bytes, r.udp_payload_bytes + UDP_HEADER);
        assert!(
            r.coap_bytes >= 4,
            "a CoAP header is 4 bytes at least: {r:?}"
        );
    }
}

#[test]
fn dtls_flights_have_no_carrier_bytes_and_add_up() {
    let cfg = DtlsConfig::new(Suite::DtlsPsk).unwrap();
    let ex = exchange(cfg.client().unwrap(), cfg.server().unwrap(), t0()).unwrap();
    let rows = flight_rows(
        wtlsperf_drivers::protocols::DTLS12,
        "psk",
        Carrier::Udp,
        &ex,
    )
    .unwrap();
    let total: usize = ex.iter().map(|(_, d)| d.len()).sum();
    assert_eq!(
        rows.iter()
            .map(|r| r.protocol_bytes as usize)
            .sum::<usize>(),
        total
    );
    assert!(rows.iter().all(|r| r.coap_bytes == 0));
    assert_eq!(rows[0].sender, "client");
    assert_eq!(rows[1].sender, "server");
}

#[test]
fn cbor_heads_are_measured_and_bad_ones_refused() {
    assert_eq!(cbor_item_len(&[0xf5, 3]).unwrap(), 1); // true
    assert_eq!(cbor_item_len(&[0x37]).unwrap(), 1); // -24
    assert_eq!(cbor_item_len(&[0x38, 0x30]).unwrap(), 2); // -49
    assert_eq!(cbor_item_len(&[0x42, 1, 2, 9]).unwrap(), 3); // h'0102'
    assert!(cbor_item_len(&[]).is_err());
    assert!(cbor_item_len(&[0x45, 1]).is_err());
    assert!(cbor_item_len(&[0x59, 0xff]).is_err());
    assert!(cbor_item_len(&[0x9f]).is_err());
}

/// A temporary PKI (the flights of the registry's other protocols need none, but the
/// bench is given one).
fn store() -> (tempfile::TempDir, PkiStore) {
    let dir = tempfile::tempdir().unwrap();
    let case = wtls::suite::Case::parse("160p/160p").unwrap();
    let now = wtlsperf_drivers::pki_store::unix_now().unwrap();
    let store = PkiStore::create(dir.path(), true, now, &[case]).unwrap();
    (dir, store)
}

/// Both sides of a registry configuration, in memory at the default payload limit;
/// `None` where this build lacks its protocol (DTLS 1.3 without `dtls13`: the test
/// then checks nothing, and says so).
fn exchange_of(store: &PkiStore, text: &str) -> Option<Vec<(Direction, Vec<u8>)>> {
    let Ok(c) = registry::contender(text) else {
        eprintln!("{text}: not in this build");
        return None;
    };
    let sides = c
        .sides(Bench { store }, DEFAULT_PAYLOAD_LIMIT, TimeBase::Virtual)
        .unwrap();
    let client = sides.client(&LinkProfile::loopback(), 0).unwrap();
    Some(exchange(client, sides.server().unwrap(), t0()).unwrap())
}

#[test]
fn every_registry_configuration_has_rows_and_ml_kem_crosses_the_mtu() {
    let (_dir, store) = store();
    let rows = measure(&store, t0()).unwrap();
    for p in registry::available() {
        if p.id() == wtls::handshake::WTLS {
            continue;
        }
        for c in p.configurations() {
            let suite = c.suite();
            assert!(
                rows.iter()
                    .any(|r| r.protocol == p.id().name() && r.suite == suite),
                "{c}"
            );
        }
    }
    if registry::contender("dtls1.3:mlkem768-ecdsa-ccm8").is_err() {
        return;
    }
    let pq = rows
        .iter()
        .filter(|r| r.suite == "mlkem768-ecdsa-ccm8")
        .map(|r| r.protocol_bytes)
        .sum::<u32>();
    let classical = rows
        .iter()
        .filter(|r| r.suite == "ecdhe-p256-ecdsa-ccm8" && r.protocol == "dtls1.3")
        .map(|r| r.protocol_bytes)
        .sum::<u32>();
    // ML-KEM-768's share (1184 B) and ciphertext (1088 B) against P-256's 65 B each.
    assert!(pq > classical + 2_000, "{pq} vs {classical}");
}

/// What wolfSSL's first ClientHello carries beyond the draft's estimate, per item (the
/// reasons are in docs/dtls13.md, "Against the protocol comparison").
const PSK_EXTRA: [(&str, i64); 6] = [
    ("pre_shared_key", 7),
    ("signature_algorithms", 38),
    ("encrypt_then_mac", 4),
    ("key_share", 6),
    ("renegotiation_info", 5),
    ("supported_groups", 8),
];
const PSK_DHE_EXTRA: [(&str, i64); 5] = [
    ("psk_key_exchange_modes", 1),
    ("pre_shared_key", 7),
    ("signature_algorithms", 38),
    ("encrypt_then_mac", 4),
    ("renegotiation_info", 5),
];

#[test]
fn dtls13_client_hello_is_itemised_byte_for_byte_against_the_comparison_draft() {
    let (_dir, store) = store();
    for (text, extra) in [
        ("dtls1.3:psk-ccm8", &PSK_EXTRA[..]),
        ("dtls1.3:psk-p256-ccm8", &PSK_DHE_EXTRA[..]),
    ] {
        let ecdhe = text.contains("p256");
        let Some(ex) = exchange_of(&store, text) else {
            return;
        };
        let draft_items = draft::draft_psk_flight1(ecdhe);
        let draft_total: usize = draft_items.iter().map(|i| i.bytes).sum();
        // The draft's totals: 130 (PSK) and 213 (PSK, ECDHE) bytes.
        assert_eq!(draft_total, if ecdhe { 213 } else { 130 });
        let first = draft::client_hello_items(&ex[0].1).unwrap();
        assert_eq!(first.iter().map(|i| i.bytes).sum::<usize>(), ex[0].1.len());
        let diff = draft::difference(&first, &draft_items);
        let want: Vec<(String, i64)> = extra.iter().map(|(n, b)| (n.to_string(), *b)).collect();
        assert_eq!(diff, want, "{text}");
        let sum: i64 = want.iter().map(|(_, b)| b).sum();
        assert_eq!(ex[0].1.len() as i64, draft_total as i64 + sum);
        // The cookie exchange (left out by the draft): the second ClientHello is the first
        // plus the cookie extension.
        let second = draft::client_hello_items(&ex[2].1).unwrap();
        assert_eq!(
            draft::difference(&second, &first),
            vec![("cookie".to_string(), 73)]
        );
    }
}

/// RFC 7925's DTLS 1.2 configuration: the Certificate message carries the server's leaf
/// alone (the CA is provisioned), and the cookie exchange costs exactly a
/// HelloVerifyRequest flight and the cookie echoed in the second ClientHello.
#[test]
fn dtls12_sends_the_leaf_only_and_the_cookie_exchange_is_itemised_both_ways() {
    let suite = Suite::DtlsEcdheEcdsa { mutual: false };
    let with = DtlsConfig::new(suite).unwrap();
    let without = DtlsConfig::without_cookie_exchange(suite).unwrap();
    let rows = |cfg: &DtlsConfig| {
        let ex = exchange(cfg.client().unwrap(), cfg.server().unwrap(), t0()).unwrap();
        flight_rows(wtlsperf_drivers::protocols::DTLS12, "x", Carrier::Udp, &ex).unwrap()
    };
    let (w, wo) = (rows(&with), rows(&without));
    assert_eq!((w.len(), wo.len()), (6, 4));
    // the cookie: 16 bytes in the HelloVerifyRequest and 16 echoed; none without
    let cookie = |r: &[FlightRow]| r.iter().map(|f| f.cookie_bytes.unwrap()).sum::<u32>();
    assert_eq!((cookie(&w), cookie(&wo)), (32, 0));
    // the server's certificate flight: one leaf; the CA's certificate is not in it
    let leaf = with.server_leaf_der_len().unwrap() as u32;
    let certs: Vec<u32> = w
        .iter()
        .filter_map(|f| f.certificate_bytes)
        .filter(|&c| c > 0)
        .collect();
    // certificate_list length (3) + one entry's length (3) + the leaf
    assert_eq!(certs, vec![3 + 3 + leaf]);
    // without the cookie exchange too (each configuration issues its own chain, whose
    // ECDSA signatures' DER lengths vary by a byte); the first ClientHello without cookie
    // is the second one with it, less the cookie
    let leaf_wo = without.server_leaf_der_len().unwrap() as u32;
    assert_eq!(wo[1].certificate_bytes, Some(3 + 3 + leaf_wo));
    assert_eq!(w[2].udp_payload_bytes - 16, wo[0].udp_payload_bytes);
    for r in w.iter().chain(&wo) {
        let items = r.record_header_bytes.unwrap()
            + r.handshake_header_bytes.unwrap()
            + r.certificate_bytes.unwrap();
        assert!(items <= r.protocol_bytes, "{r:?}");
        assert_eq!(r.record_header_bytes.unwrap() % 13, 0);
    }
}

/// The ML-DSA rows itemise their certificate flights with FIPS 204's sizes: the server's
/// flight after the cookie exchange and, when mutual, the client's last one; every other
/// flight of those configurations has none, and the other configurations are not itemised.
#[test]
fn ml_dsa_certificate_flights_carry_fips_204_keys_and_signatures_itemised() {
    if registry::contender("dtls1.3:mlkem768-mldsa44-ccm8-mutual").is_err() {
        eprintln!("DTLS 1.3 with ML-DSA is not in this build");
        return;
    }
    let (_dir, store) = store();
    let rows = measure(&store, t0()).unwrap();
    let of = |suite: &str| -> Vec<&FlightRow> {
        rows.iter()
            .filter(|r| r.protocol == "dtls1.3" && r.suite == suite)
            .collect()
    };
    let cases = [
        ("mlkem768-mldsa44-ccm8-mutual", 1, 1312, 2420),
        ("mlkem768-mldsa44-ccm8-mutual-ca", 2, 1312, 2420),
        ("mlkem1024-mldsa65-ccm8-mutual", 1, 1952, 3309),
    ];
    for (suite, certs, pk, sig) in cases {
        let flights = of(suite);
        for (i, r) in flights.iter().enumerate() {
            let carries = i == 3 || i == 4;
            let want = if carries {
                (certs * pk, certs * sig, sig, 4)
            } else {
                (0, 0, 0, 0)
            };
            let got = (
                r.certificate_public_key_bytes.unwrap(),
                r.certificate_signature_bytes.unwrap(),
                r.certificate_verify_signature_bytes.unwrap(),
                r.certificate_verify_encoding_bytes.unwrap(),
            );
            assert_eq!(got, want, "{suite} flight {}", r.flight);
            let items = got.0 + got.1 + got.2 + got.3 + r.certificate_encoding_bytes.unwrap();
            assert!(items < r.protocol_bytes || !carries, "{r:?}");
        }
    }
    let server_only = of("mlkem768-mldsa44-ccm8");
    assert_eq!(server_only[4].certificate_public_key_bytes, Some(0));
    assert!(of("mlkem768-ecdsa-ccm8")
        .iter()
        .all(|r| r.certificate_public_key_bytes.is_none()));
}
