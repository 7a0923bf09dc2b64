//! The record MAC algorithms (wire-format notes §5.3, §7.7, §7.8).
//!
//! ```text
//! MAC = HMAC_hash(write_MAC_secret, seq (u16) ‖ record_type (1 byte) ‖ length (u16) ‖ plaintext)
//!       truncated to mac_size bytes
//! ```
//!
//! `record_type` is the header byte as transmitted (L/S/C flags included) and `length` is
//! the plaintext length, not the ciphertext length. The sequence number always enters
//! the MAC, even when the record does not carry it.

use hmac::{Hmac, Mac};
use md5::Md5;
use subtle::{Choice, ConstantTimeEq};

use super::prf::{keyed, PrfHash};
use super::sha1::Sha1;
use crate::msgs::enums::MacAlgorithm;

/// Sizes of a MAC algorithm (§5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacInfo {
    /// Bytes of MAC secret taken from the key block.
    pub key_size: usize,
    /// Bytes of MAC appended to each record (first bytes of the full output).
    pub mac_size: usize,
    /// Hash of the MAC family; it also drives the PRF (§7.1).
    pub hash: PrfHash,
}

/// The §5.3 row for `mac`.
pub const fn mac_info(mac: MacAlgorithm) -> MacInfo {
    use MacAlgorithm as M;
    let (key_size, mac_size, hash) = match mac {
        M::Sha0 => (0, 0, PrfHash::Sha1),
        M::Sha40 => (20, 5, PrfHash::Sha1),
        M::Sha80 => (20, 10, PrfHash::Sha1),
        M::Sha => (20, 20, PrfHash::Sha1),
        M::ShaXor40 => (0, 5, PrfHash::Sha1),
        M::Md5_40 => (16, 5, PrfHash::Md5),
        M::Md5_80 => (16, 10, PrfHash::Md5),
        M::Md5 => (16, 16, PrfHash::Md5),
    };
    MacInfo {
        key_size,
        mac_size,
        hash,
    }
}

/// Width of the SHA_XOR_40 checksum.
const XOR_FOLD_LEN: usize = 5;

/// The longest full MAC output (SHA-1's 20 bytes; MD5 gives 16).
const MAX_MAC_LEN: usize = 20;

enum Keyed {
    /// SHA_0: no MAC at all.
    None,
    /// SHA_XOR_40: an unkeyed XOR fold.
    XorFold,
    // Unboxed: the state sits in the record layer's boxed per-direction state already,
    // and a box of its own cost an allocation per direction and handshake.
    Sha1(Hmac<Sha1>),
    Md5(Hmac<Md5>),
}

/// The MAC of one direction for one key epoch.
///
/// The HMAC key is absorbed once at construction; each record clones the keyed state,
/// which saves the two key-pad compressions that re-keying would cost on every record.
pub struct RecordMac {
    alg: MacAlgorithm,
    keyed: Keyed,
}

impl std::fmt::Debug for RecordMac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordMac")
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

/// The fixed-size part of the MAC input: seq ‖ record_type ‖ plaintext length.
fn mac_header(seq: u16, record_type: u8, plaintext_len: usize) -> [u8; 5] {
    // The record layer refuses fragments longer than 2^16 - 1 before they get here; the
    // saturation only keeps this function total.
    let len = u16::try_from(plaintext_len).unwrap_or(u16::MAX);
    let [s0, s1] = seq.to_be_bytes();
    let [l0, l1] = len.to_be_bytes();
    [s0, s1, record_type, l0, l1]
}

/// SHA_XOR_40 as the QualNet model (source S5) computes it: the §7.7 MAC input, zero
/// padded to a multiple of 5 bytes and cut into 5-byte blocks, all XOR-ed together
/// (§7.8, [S/U]: a single, simulator source; the handset client S3 does something that
/// looks wrong). Zero padding does not change an XOR, so byte i simply folds into
/// position i mod 5.
fn xor_fold(header: &[u8; 5], plaintext: &[u8]) -> [u8; XOR_FOLD_LEN] {
    let mut out = *header;
    for chunk in plaintext.chunks(XOR_FOLD_LEN) {
        for (o, b) in out.iter_mut().zip(chunk) {
            *o ^= b;
        }
    }
    out
}

impl RecordMac {
    /// Keys the MAC with `mac_secret` (`mac_info(alg).key_size` bytes from the key
    /// block; ignored by SHA_0 and SHA_XOR_40, which have no key).
    pub fn new(alg: MacAlgorithm, mac_secret: &[u8]) -> Self {
        let keyed = match alg {
            MacAlgorithm::Sha0 => Keyed::None,
            MacAlgorithm::ShaXor40 => Keyed::XorFold,
            MacAlgorithm::Sha40 | MacAlgorithm::Sha80 | MacAlgorithm::Sha => {
                Keyed::Sha1(keyed(mac_secret))
            }
            MacAlgorithm::Md5_40 | MacAlgorithm::Md5_80 | MacAlgorithm::Md5 => {
                Keyed::Md5(keyed(mac_secret))
            }
        };
        RecordMac { alg, keyed }
    }

    pub fn algorithm(&self) -> MacAlgorithm {
        self.alg
    }

    /// Bytes of MAC per record.
    pub fn mac_size(&self) -> usize {
        mac_info(self.alg).mac_size
    }

    /// The MAC of one record (§7.7) in a stack buffer: its first `mac_size()` bytes
    /// (no allocation, so neither sending nor checking a record needs a heap buffer
    /// for it).
    fn compute_fixed(&self, seq: u16, record_type: u8, plaintext: &[u8]) -> [u8; MAX_MAC_LEN] {
        let header = mac_header(seq, record_type, plaintext.len());
        let mut out = [0u8; MAX_MAC_LEN];
        match &self.keyed {
            Keyed::None => {}
            Keyed::XorFold => out[..XOR_FOLD_LEN].copy_from_slice(&xor_fold(&header, plaintext)),
            Keyed::Sha1(k) => {
                let mut m = k.clone();
                m.update(&header);
                m.update(plaintext);
                out.copy_from_slice(&m.finalize().into_bytes());
            }
            Keyed::Md5(k) => {
                let mut m = k.clone();
                m.update(&header);
                m.update(plaintext);
                out[..16].copy_from_slice(&m.finalize().into_bytes());
            }
        }
        out
    }

    /// Appends the MAC of one record to `out` (no allocation of its own, so record
    /// protection can build the fragment in one buffer).
    pub fn compute_into(&self, seq: u16, record_type: u8, plaintext: &[u8], out: &mut Vec<u8>) {
        let mac = self.compute_fixed(seq, record_type, plaintext);
        out.extend_from_slice(&mac[..self.mac_size()]);
    }

    /// The MAC of one record (§7.7), `mac_size()` bytes.
    pub fn compute(&self, seq: u16, record_type: u8, plaintext: &[u8]) -> Vec<u8> {
        self.compute_fixed(seq, record_type, plaintext)[..self.mac_size()].to_vec()
    }

    /// Whether `received` is the MAC of this record, as a `subtle::Choice`: the
    /// comparison takes the same time wherever the first differing byte is (only the
    /// public length is compared early), and the verdict stays a `Choice` that callers
    /// combine with their other checks without branching (the padding check in
    /// `record.rs`) until the one decision they must make. Kept out of line so that
    /// callgrind can count its instructions alone (`record::constant_time` tests).
    #[inline(never)]
    pub fn verify(&self, seq: u16, record_type: u8, plaintext: &[u8], received: &[u8]) -> Choice {
        let expected = self.compute_fixed(seq, record_type, plaintext);
        expected[..self.mac_size()].ct_eq(received)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::prf::hmac;

    #[test]
    fn table_matches_section_5_3() {
        use MacAlgorithm as M;
        let rows = [
            (M::Sha0, 0, 0),
            (M::Sha40, 20, 5),
            (M::Sha80, 20, 10),
            (M::Sha, 20, 20),
            (M::ShaXor40, 0, 5),
            (M::Md5_40, 16, 5),
            (M::Md5_80, 16, 10),
            (M::Md5, 16, 16),
        ];
        assert_eq!(rows.len(), M::ALL.len());
        for (mac, key, size) in rows {
            let info = mac_info(mac);
            assert_eq!((info.key_size, info.mac_size), (key, size), "{mac}");
            assert_eq!(info.hash, PrfHash::for_mac(mac));
        }
    }

    #[test]
    fn hmac_input_is_seq_type_plaintext_length_and_plaintext() {
        let secret = [0x42u8; 20];
        let plaintext = b"GET / HTTP/1.0";
        let mut input = vec![0x12, 0x34, 0xE4, 0x00, plaintext.len() as u8];
        input.extend_from_slice(plaintext);
        let full = hmac(PrfHash::Sha1, &secret, &input);
        for (alg, size) in [
            (MacAlgorithm::Sha, 20),
            (MacAlgorithm::Sha80, 10),
            (MacAlgorithm::Sha40, 5),
        ] {
            let mac = RecordMac::new(alg, &secret);
            assert_eq!(mac.compute(0x1234, 0xE4, plaintext), full[..size], "{alg}");
        }
        let md5_full = hmac(PrfHash::Md5, &secret[..16], &input);
        let mac = RecordMac::new(MacAlgorithm::Md5_80, &secret[..16]);
        assert_eq!(mac.compute(0x1234, 0xE4, plaintext), md5_full[..10]);
        assert_eq!(mac.algorithm(), MacAlgorithm::Md5_80);
    }

    #[test]
    fn sha0_is_empty_and_verifies_only_empty() {
        let mac = RecordMac::new(MacAlgorithm::Sha0, &[]);
        assert!(mac.compute(1, 0xE4, b"x").is_empty());
        assert!(bool::from(mac.verify(1, 0xE4, b"x", &[])));
        assert!(!bool::from(mac.verify(1, 0xE4, b"x", &[0])));
    }

    #[test]
    fn xor40_folds_five_byte_blocks() {
        let mac = RecordMac::new(MacAlgorithm::ShaXor40, &[]);
        // Input: 00 01 | E4 | 00 07 | 01 02 03 04 05 06 07 (+ 3 zero bytes of padding)
        // Blocks: [00 01 E4 00 07] [01 02 03 04 05] [06 07 00 00 00]
        let out = mac.compute(1, 0xE4, &[1, 2, 3, 4, 5, 6, 7]);
        // Column-wise XOR of the three blocks, worked by hand.
        let expected = [
            0x01 ^ 0x06,
            0x01 ^ 0x02 ^ 0x07,
            0xE4 ^ 0x03,
            0x04,
            0x07 ^ 0x05,
        ];
        assert_eq!(expected, [0x07, 0x04, 0xE7, 0x04, 0x02]);
        assert_eq!(out, expected);
    }

    #[test]
    fn verify_rejects_any_change() {
        let mac = RecordMac::new(MacAlgorithm::Md5, &[9; 16]);
        let good = mac.compute(7, 0xE4, b"hello");
        assert!(bool::from(mac.verify(7, 0xE4, b"hello", &good)));
        assert!(!bool::from(mac.verify(8, 0xE4, b"hello", &good)));
        assert!(!bool::from(mac.verify(7, 0xE3, b"hello", &good)));
        assert!(!bool::from(mac.verify(7, 0xE4, b"hellO", &good)));
        assert!(!bool::from(mac.verify(7, 0xE4, b"hello", &good[..15])));
        let mut bad = good.clone();
        bad[15] ^= 1;
        assert!(!bool::from(mac.verify(7, 0xE4, b"hello", &bad)));
    }
}
