//! Known answers and the full suite matrix for WTLS record protection.
//!
//! * §12.2 and §12.3 of the wire-format notes byte for byte;
//! * a record built independently from the primitives (HMAC, CBC) must equal what
//!   `CipherState::protect` produces;
//! * every bulk cipher × every MAC: round trips, tampering, wrong sequence numbers,
//!   key refresh;
//! * arbitrary bytes handed to `unprotect` never panic.

use proptest::prelude::*;
use wtls::crypto::cipher::{cipher_info, BulkCipher};
use wtls::crypto::keys::{derive_key_block, master_secret, refresh_epoch, Direction};
use wtls::crypto::mac::mac_info;
use wtls::crypto::prf::{hmac, PrfHash};
use wtls::msgs::enums::{AlertDescription, BulkCipherAlgorithm, MacAlgorithm};
use wtls::record::{record_iv, CipherState, ProtectionParams, RecordError};
use zeroize::Zeroizing;

/// Application data, L|S|C set, as the MAC sees the header byte (§7.7).
const APP_DATA: u8 = 0xE4;
const SIZES: [usize; 6] = [0, 1, 7, 8, 100, 1500];

fn randoms() -> ([u8; 16], [u8; 16]) {
    (
        std::array::from_fn(|i| i as u8),
        std::array::from_fn(|i| 0x10 + i as u8),
    )
}

fn params(bulk: BulkCipherAlgorithm, mac: MacAlgorithm, key_refresh: u8) -> ProtectionParams {
    let (client_random, server_random) = randoms();
    ProtectionParams {
        bulk,
        mac,
        key_refresh,
        master_secret: Zeroizing::new(std::array::from_fn(|i| 0xA0 ^ i as u8)),
        client_random,
        server_random,
    }
}

/// Writer and reader of the client→server direction.
fn pair(p: ProtectionParams) -> (CipherState, CipherState) {
    (
        CipherState::new(p.clone(), Direction::ClientWrite),
        CipherState::new(p, Direction::ClientWrite),
    )
}

/// Content whose bytes never repeat in a run, so no stretch of it looks like padding.
fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

fn rejected(r: &Result<Zeroizing<Vec<u8>>, RecordError>) -> bool {
    matches!(
        r,
        Err(RecordError::BadRecordMac) | Err(RecordError::DecryptionFailed)
    )
}

#[test]
fn section_12_2_master_secret_and_client_key_block() {
    let (cr, sr) = randoms();
    let mut pre_master = vec![0x01];
    pre_master.extend([0xAA; 19]);
    let master = master_secret(PrfHash::Sha1, &pre_master, &cr, &sr);
    assert_eq!(
        hex::encode(*master),
        "085d015e2854c0e6b3285039af38acc7811e5369"
    );
    let km = derive_key_block(
        BulkCipherAlgorithm::Rc5Cbc,
        MacAlgorithm::Sha,
        &master,
        Direction::ClientWrite,
        0,
        &cr,
        &sr,
    );
    let block = [km.mac_secret(), km.key(), km.iv()].concat();
    assert_eq!(block.len(), 44);
    assert_eq!(
        hex::encode(block),
        "e61984b45907f6080db9aa22de6db91dc8dad411\
         788e73a6bfb8ebb0c9add7c33760d1d4\
         92c1e48497a0c12a"
    );
}

#[test]
fn section_12_3_record_iv() {
    assert_eq!(
        hex::encode(record_iv(&[1, 2, 3, 4, 5, 6, 7, 8], 0x1234)),
        "133611301732153c"
    );
}

/// The §12.2 keys protect one record; the expected bytes are assembled here from the
/// primitives alone (HMAC over seq‖type‖len‖content, minimal padding, CBC with the
/// §7.9 IV), independently of `CipherState`.
#[test]
fn protected_record_matches_independent_construction() {
    let (cr, sr) = randoms();
    let mut pre_master = vec![0x01];
    pre_master.extend([0xAA; 19]);
    let master = master_secret(PrfHash::Sha1, &pre_master, &cr, &sr);
    let km = derive_key_block(
        BulkCipherAlgorithm::Rc5Cbc,
        MacAlgorithm::Sha,
        &master,
        Direction::ClientWrite,
        0,
        &cr,
        &sr,
    );
    let seq = 5u16;
    let content = b"GET /index.wml";
    let mut mac_input = vec![0x00, 0x05, APP_DATA, 0x00, content.len() as u8];
    mac_input.extend_from_slice(content);
    let mut expected = content.to_vec();
    expected.extend(hmac(PrfHash::Sha1, km.mac_secret(), &mac_input));
    // 14 + 20 + 1 = 35 → pad 5 bytes of 0x05, then the length byte 0x05: 40 bytes.
    expected.extend([5u8; 6]);
    let cipher = BulkCipher::new(BulkCipherAlgorithm::Rc5Cbc, km.key()).unwrap();
    cipher
        .encrypt_cbc(&record_iv(km.iv(), seq), &mut expected)
        .unwrap();

    let p = ProtectionParams {
        bulk: BulkCipherAlgorithm::Rc5Cbc,
        mac: MacAlgorithm::Sha,
        key_refresh: 3,
        master_secret: master,
        client_random: cr,
        server_random: sr,
    };
    let (mut tx, mut rx) = pair(p);
    let fragment = tx.protect(seq, APP_DATA, content).unwrap();
    assert_eq!(hex::encode(&fragment), hex::encode(&expected));
    assert_eq!(
        rx.unprotect(seq, APP_DATA, &fragment).unwrap().as_slice(),
        content
    );
}

#[test]
fn every_suite_round_trips_every_size() {
    for bulk in BulkCipherAlgorithm::ALL {
        for mac in MacAlgorithm::ALL {
            let (mut tx, mut rx) = pair(params(*bulk, *mac, 2));
            let bs = cipher_info(*bulk).block_size;
            for (i, len) in SIZES.iter().enumerate() {
                let seq = i as u16 * 3;
                let content = payload(*len);
                let fragment = tx.protect(seq, APP_DATA, &content).unwrap();
                assert_eq!(
                    fragment.len(),
                    len + tx.overhead_for(*len),
                    "{bulk}/{mac} len {len}"
                );
                if bs > 0 {
                    assert_eq!(fragment.len() % bs, 0, "{bulk}/{mac}");
                    // Minimal padding: less than one block beyond content + MAC + 1.
                    assert!(fragment.len() < len + mac_info(*mac).mac_size + 1 + bs);
                } else {
                    assert_eq!(
                        &fragment[..*len],
                        content.as_slice(),
                        "NULL keeps clear text"
                    );
                }
                if bs > 0 && *len >= 8 {
                    assert_ne!(&fragment[..8], &content[..8], "{bulk}/{mac} encrypts");
                }
                let back = rx.unprotect(seq, APP_DATA, &fragment).unwrap();
                assert_eq!(
                    back.as_slice(),
                    content.as_slice(),
                    "{bulk}/{mac} len {len}"
                );
            }
        }
    }
}

/// Bit flips in the MAC, the padding and the ciphertext, for every suite.
#[test]
fn tampering_is_rejected_by_every_suite_with_integrity() {
    for bulk in BulkCipherAlgorithm::ALL {
        for mac in MacAlgorithm::ALL {
            let (mut tx, mut rx) = pair(params(*bulk, *mac, 8));
            let bs = cipher_info(*bulk).block_size;
            let mac_size = mac_info(*mac).mac_size;
            for len in SIZES {
                let seq = 40 + len as u16;
                let content = payload(len);
                let fragment = tx.protect(seq, APP_DATA, &content).unwrap();
                let flipped = |pos: usize, bit: u8| {
                    let mut f = fragment.clone();
                    f[pos] ^= bit;
                    f
                };
                let what = format!("{bulk}/{mac} len {len}");

                if mac_size == 0 && bs == 0 {
                    // NULL + SHA_0: no integrity at all. A changed byte is delivered.
                    if len > 0 {
                        let r = rx.unprotect(seq, APP_DATA, &flipped(0, 1)).unwrap();
                        assert_ne!(r.as_slice(), content.as_slice(), "{what}");
                        assert_eq!(r.len(), len);
                    }
                    continue;
                }

                // MAC region: its first byte (NULL cipher) or the block holding it.
                if mac_size > 0 {
                    let r = rx.unprotect(seq, APP_DATA, &flipped(len, 0x01));
                    if bs == 0 {
                        assert_eq!(r.unwrap_err(), RecordError::BadRecordMac, "{what}");
                    } else {
                        assert!(rejected(&r), "{what}: {r:?}");
                    }
                    // Last MAC byte too.
                    let r = rx.unprotect(seq, APP_DATA, &flipped(len + mac_size - 1, 0x80));
                    assert!(rejected(&r), "{what}: {r:?}");
                }

                // Content / first ciphertext block.
                if !fragment.is_empty() && (len > 0 || bs > 0) {
                    let r = rx.unprotect(seq, APP_DATA, &flipped(0, 0x10));
                    if mac_size > 0 {
                        assert!(rejected(&r), "{what}: {r:?}");
                    } else {
                        // Block cipher + SHA_0: CBC garbles the block, nothing detects
                        // it unless the padding happens to break.
                        match r {
                            Ok(got) => assert_ne!(got.as_slice(), content.as_slice(), "{what}"),
                            Err(e) => assert_eq!(e, RecordError::DecryptionFailed, "{what}"),
                        }
                    }
                }

                if bs > 0 {
                    let n = fragment.len();
                    // Padding length byte: flipping bit 7 of the byte in the previous
                    // ciphertext block flips it in the plaintext, making p ≥ 128 with no
                    // matching run of padding bytes.
                    if n >= 2 * bs {
                        let r = rx.unprotect(seq, APP_DATA, &flipped(n - 1 - bs, 0x80));
                        assert_eq!(r.unwrap_err(), RecordError::DecryptionFailed, "{what}");
                        assert_eq!(
                            RecordError::DecryptionFailed.alert(),
                            AlertDescription::DecryptionFailed
                        );
                    }
                    // Last ciphertext block (padding region) garbled.
                    let r = rx.unprotect(seq, APP_DATA, &flipped(n - 1, 0x01));
                    if mac_size > 0 {
                        assert!(rejected(&r), "{what}: {r:?}");
                    } else {
                        assert!(
                            r.as_ref()
                                .map_or(true, |got| got.as_slice() != content.as_slice()),
                            "{what}"
                        );
                    }
                    // Not block aligned.
                    let r = rx.unprotect(seq, APP_DATA, &fragment[..n - 1]);
                    assert_eq!(r.unwrap_err(), RecordError::DecryptionFailed, "{what}");
                    let r = rx.unprotect(seq, APP_DATA, &[]);
                    assert_eq!(r.unwrap_err(), RecordError::DecryptionFailed, "{what}");
                }

                // The untouched record still decodes after all the failures.
                let ok = rx.unprotect(seq, APP_DATA, &fragment).unwrap();
                assert_eq!(ok.as_slice(), content.as_slice(), "{what}");
            }
        }
    }
}

#[test]
fn wrong_sequence_number_or_header_byte_fails_the_mac() {
    for bulk in BulkCipherAlgorithm::ALL {
        for mac in MacAlgorithm::ALL {
            if mac_info(*mac).mac_size == 0 {
                continue; // Covered below: SHA_0 cannot notice.
            }
            let (mut tx, mut rx) = pair(params(*bulk, *mac, 8));
            let bs = cipher_info(*bulk).block_size;
            for len in SIZES {
                let fragment = tx.protect(20, APP_DATA, &payload(len)).unwrap();
                let what = format!("{bulk}/{mac} len {len}");
                // Same epoch, different sequence number: another IV and another MAC.
                let r = rx.unprotect(21, APP_DATA, &fragment);
                if bs == 0 || fragment.len() >= 2 * bs {
                    // The padding lives outside the first block, so only the MAC fails.
                    assert_eq!(r.unwrap_err(), RecordError::BadRecordMac, "{what}");
                } else {
                    assert!(rejected(&r), "{what}: {r:?}");
                }
                // A header byte with another flag set (the MAC covers the whole byte).
                let r = rx.unprotect(20, APP_DATA & !0x80, &fragment);
                assert_eq!(r.unwrap_err(), RecordError::BadRecordMac, "{what}");
            }
        }
    }
    // SHA_0 with the NULL cipher: a wrong sequence number goes unnoticed.
    let (mut tx, mut rx) = pair(params(BulkCipherAlgorithm::Null, MacAlgorithm::Sha0, 8));
    let fragment = tx.protect(1, APP_DATA, b"clear").unwrap();
    assert_eq!(
        rx.unprotect(2, APP_DATA, &fragment).unwrap().as_slice(),
        b"clear"
    );
}

#[test]
fn key_refresh_changes_keys_at_epoch_boundaries_and_both_sides_follow() {
    let content = payload(64);
    for bulk in BulkCipherAlgorithm::ALL {
        for mac in &[MacAlgorithm::Sha, MacAlgorithm::Md5_40] {
            // key_refresh = 2: new keys every 4 records. key_refresh = 15: none here.
            let (mut tx, mut rx) = pair(params(*bulk, *mac, 2));
            let (mut steady_tx, mut steady_rx) = pair(params(*bulk, *mac, 15));
            for seq in 0u16..12 {
                let refreshed = tx.protect(seq, APP_DATA, &content).unwrap();
                let steady = steady_tx.protect(seq, APP_DATA, &content).unwrap();
                let what = format!("{bulk}/{mac} seq {seq}");
                if refresh_epoch(seq, 2) == 0 {
                    assert_eq!(refreshed, steady, "{what}: same epoch, same keys");
                } else {
                    assert_ne!(refreshed, steady, "{what}: keys refreshed");
                    // The non-refreshing receiver can no longer read it.
                    assert!(rejected(&steady_rx.unprotect(seq, APP_DATA, &refreshed)));
                }
                // A receiver with the same policy stays in step, epoch by epoch.
                let back = rx.unprotect(seq, APP_DATA, &refreshed).unwrap();
                assert_eq!(back.as_slice(), content.as_slice(), "{what}");
                let back = steady_rx.unprotect(seq, APP_DATA, &steady).unwrap();
                assert_eq!(back.as_slice(), content.as_slice(), "{what}");
            }
        }
    }
}

#[test]
fn directions_do_not_share_keys() {
    let p = params(BulkCipherAlgorithm::TripleDesCbcEde, MacAlgorithm::Sha80, 8);
    let mut client_tx = CipherState::new(p.clone(), Direction::ClientWrite);
    let mut server_rx_of_server = CipherState::new(p, Direction::ServerWrite);
    let fragment = client_tx.protect(0, APP_DATA, b"hello").unwrap();
    assert!(rejected(
        &server_rx_of_server.unprotect(0, APP_DATA, &fragment)
    ));
}

#[test]
fn overhead_and_mac_size_match_the_tables() {
    for bulk in BulkCipherAlgorithm::ALL {
        for mac in MacAlgorithm::ALL {
            let st = CipherState::new(params(*bulk, *mac, 8), Direction::ServerWrite);
            let mac_size = mac_info(*mac).mac_size;
            assert_eq!(st.mac_size(), mac_size);
            let bs = cipher_info(*bulk).block_size;
            for len in 0..40 {
                let o = st.overhead_for(len);
                if bs == 0 {
                    assert_eq!(o, mac_size);
                } else {
                    assert_eq!((len + o) % bs, 0);
                    assert!(o > mac_size && o <= mac_size + bs);
                }
            }
        }
    }
}

fn any_suite() -> impl Strategy<Value = (BulkCipherAlgorithm, MacAlgorithm)> {
    (
        prop::sample::select(BulkCipherAlgorithm::ALL),
        prop::sample::select(MacAlgorithm::ALL),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever arrives, unprotect answers with a value, never a panic.
    #[test]
    fn unprotect_never_panics(
        (bulk, mac) in any_suite(),
        key_refresh in 0u8..20,
        seq: u16,
        record_type: u8,
        fragment in prop::collection::vec(any::<u8>(), 0..600),
    ) {
        let mut rx = CipherState::new(params(bulk, mac, key_refresh), Direction::ClientWrite);
        let r = rx.unprotect(seq, record_type, &fragment);
        if let Err(e) = r {
            prop_assert!(matches!(
                e,
                RecordError::BadRecordMac | RecordError::DecryptionFailed
            ));
        }
    }

    /// Round trip for arbitrary content, sequence numbers and header bytes.
    #[test]
    fn protect_unprotect_round_trip(
        (bulk, mac) in any_suite(),
        key_refresh in 0u8..20,
        seq: u16,
        record_type: u8,
        content in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        let (mut tx, mut rx) = pair(params(bulk, mac, key_refresh));
        let fragment = tx.protect(seq, record_type, &content).unwrap();
        let back = rx.unprotect(seq, record_type, &fragment).unwrap();
        prop_assert_eq!(back.as_slice(), content.as_slice());
    }
}
