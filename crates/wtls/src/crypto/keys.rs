//! Master secret, per-direction key blocks, export expansion and key refresh
//! (wire-format notes §7.3 to §7.6).
//!
//! Two details differ from TLS and are easy to get wrong:
//! * the key block seed starts with the 2-byte sequence number of the refresh epoch and
//!   then puts the **server** random first (§7.4), while the export expansion puts the
//!   **client** random first (§7.5);
//! * every direction has its own key block, re-derived every 2^key_refresh records of
//!   that direction (§7.6), so one direction can refresh while the other does not.

use zeroize::Zeroizing;

use super::cipher::cipher_info;
use super::mac::mac_info;
use super::prf::{PrfHash, PrfKey};
use crate::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};

/// `master_secret = PRF(pre_master, "master secret", CR ‖ SR)[0..19]` (§7.3).
///
/// `hash` is the MAC family's hash ([`PrfHash::for_mac`]); a resumed session reuses the
/// cached master secret and only derives new key blocks.
pub fn master_secret(
    hash: PrfHash,
    pre_master: &[u8],
    client_random: &[u8; 16],
    server_random: &[u8; 16],
) -> Zeroizing<[u8; 20]> {
    // On the stack: the seed is fixed-size, so no heap buffer per handshake.
    let mut seed = [0u8; 32];
    seed[..16].copy_from_slice(client_random);
    seed[16..].copy_from_slice(server_random);
    let mut master = Zeroizing::new([0u8; 20]);
    PrfKey::new(hash, pre_master).expand_into(b"master secret", &seed, master.as_mut_slice());
    master
}

/// Which side's write keys are meant. The client's write keys protect client→server
/// records; the gateway uses the same keys to read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    ClientWrite,
    ServerWrite,
}

impl Direction {
    fn expansion_label(self) -> &'static [u8] {
        match self {
            Direction::ClientWrite => b"client expansion",
            Direction::ServerWrite => b"server expansion",
        }
    }

    fn export_key_label(self) -> &'static [u8] {
        match self {
            Direction::ClientWrite => b"client write key",
            Direction::ServerWrite => b"server write key",
        }
    }

    fn export_iv_label(self) -> &'static [u8] {
        match self {
            Direction::ClientWrite => b"client write IV",
            Direction::ServerWrite => b"server write IV",
        }
    }

    /// The opposite direction (what a peer reads is what the other side writes).
    pub fn reverse(self) -> Self {
        match self {
            Direction::ClientWrite => Direction::ServerWrite,
            Direction::ServerWrite => Direction::ClientWrite,
        }
    }
}

/// Room for the largest key block of any suite: a 20-byte MAC secret, 24 bytes of
/// 3DES key and a 16-byte AES IV (an export key block is smaller, and so is its
/// expanded key and IV).
const MAX_KEY_BLOCK: usize = 64;

/// The write secrets of one direction for one refresh epoch: MAC secret, cipher key and
/// write IV, one after the other in one fixed-size buffer (no heap buffer per epoch),
/// wiped on drop.
pub struct KeyMaterial {
    bytes: Zeroizing<[u8; MAX_KEY_BLOCK]>,
    mac_len: usize,
    key_len: usize,
    iv_len: usize,
}

impl KeyMaterial {
    /// MAC secret (`mac_info(..).key_size` bytes; empty for SHA_0 and SHA_XOR_40).
    pub fn mac_secret(&self) -> &[u8] {
        &self.bytes[..self.mac_len]
    }

    /// Final cipher key (`key_size` bytes, after export expansion where it applies).
    pub fn key(&self) -> &[u8] {
        &self.bytes[self.mac_len..self.mac_len + self.key_len]
    }

    /// Write IV before the per-record sequence-number XOR (§7.9).
    pub fn iv(&self) -> &[u8] {
        let start = self.mac_len + self.key_len;
        &self.bytes[start..start + self.iv_len]
    }
}

impl std::fmt::Debug for KeyMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyMaterial")
            .field("mac_secret_len", &self.mac_len)
            .field("key_len", &self.key_len)
            .field("iv_len", &self.iv_len)
            .finish_non_exhaustive()
    }
}

/// Derives the key block of `direction` for the refresh epoch starting at `seq`
/// (already rounded with [`refresh_epoch`]), §7.4, and applies the export expansion of
/// §7.5 to exportable ciphers:
///
/// ```text
/// key_block = PRF(master, "client expansion" | "server expansion", seq ‖ SR ‖ CR)
///           = MAC secret | key material | IV
/// export:  key = PRF(key material, "client write key" | "server write key", CR ‖ SR)
///          IV  = PRF("", "client write IV" | "server write IV", seq ‖ CR ‖ SR)
/// ```
pub fn derive_key_block(
    bulk: BulkCipherAlgorithm,
    mac: MacAlgorithm,
    master: &[u8; 20],
    direction: Direction,
    seq: u16,
    client_random: &[u8; 16],
    server_random: &[u8; 16],
) -> KeyMaterial {
    let master = PrfKey::new(PrfHash::for_mac(mac), master);
    derive_key_block_keyed(
        bulk,
        mac,
        &master,
        direction,
        seq,
        client_random,
        server_random,
    )
}

/// [`derive_key_block`] from the master secret already keyed for `mac`'s PRF (what a
/// connection holds: both directions, every refresh and both Finished share one keying).
pub fn derive_key_block_keyed(
    bulk: BulkCipherAlgorithm,
    mac: MacAlgorithm,
    master: &PrfKey,
    direction: Direction,
    seq: u16,
    client_random: &[u8; 16],
    server_random: &[u8; 16],
) -> KeyMaterial {
    let hash = PrfHash::for_mac(mac);
    debug_assert_eq!(master.hash(), hash, "master secret keyed for another PRF");
    let cipher = cipher_info(bulk);
    let mac_key_len = mac_info(mac).key_size;
    let block_len = mac_key_len + cipher.key_material_len + cipher.iv_size;

    let seq_bytes = seq.to_be_bytes();
    // On the stack: the seed is fixed-size, so no heap buffer per key block.
    let mut seed = [0u8; 34];
    seed[..2].copy_from_slice(&seq_bytes);
    seed[2..18].copy_from_slice(server_random);
    seed[18..].copy_from_slice(client_random);
    let mut km = KeyMaterial {
        bytes: Zeroizing::new([0u8; MAX_KEY_BLOCK]),
        mac_len: mac_key_len,
        key_len: cipher.key_material_len,
        iv_len: cipher.iv_size,
    };
    master.expand_into(
        direction.expansion_label(),
        &seed,
        &mut km.bytes[..block_len],
    );
    if !cipher.exportable || cipher.key_size == 0 {
        return km;
    }

    // §7.5: the key block's material is expanded into the final key, and the IV is
    // derived from an empty secret (the key block's IV bytes are not used).
    let material = Zeroizing::new(*km.bytes);
    let material = &material[mac_key_len..mac_key_len + cipher.key_material_len];
    let mut randoms = [0u8; 32];
    randoms[..16].copy_from_slice(client_random);
    randoms[16..].copy_from_slice(server_random);
    let mut iv_seed = [0u8; 34];
    iv_seed[..2].copy_from_slice(&seq_bytes);
    iv_seed[2..].copy_from_slice(&randoms);
    km.key_len = cipher.key_size;
    let key_end = mac_key_len + cipher.key_size;
    PrfKey::new(hash, material).expand_into(
        direction.export_key_label(),
        &randoms,
        &mut km.bytes[mac_key_len..key_end],
    );
    PrfKey::new(hash, b"").expand_into(
        direction.export_iv_label(),
        &iv_seed,
        &mut km.bytes[key_end..key_end + cipher.iv_size],
    );
    km
}

/// The sequence number that names the refresh epoch of record `seq`: keys change every
/// 2^key_refresh records, so the number is rounded down to a multiple of 2^n (§7.6,
/// `s & ~(2^n - 1)`). With n ≥ 16 the 16-bit sequence space never reaches a second
/// epoch and the result is always 0.
pub fn refresh_epoch(seq: u16, key_refresh: u8) -> u16 {
    match 1u32.checked_shl(u32::from(key_refresh)) {
        Some(period) if period <= 0x8000 => seq & !((period - 1) as u16),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::prf::prf;

    fn randoms() -> ([u8; 16], [u8; 16]) {
        let cr: [u8; 16] = std::array::from_fn(|i| i as u8);
        let sr: [u8; 16] = std::array::from_fn(|i| 0x10 + i as u8);
        (cr, sr)
    }

    // The §12.2 worked example (master secret and client key block, byte for byte) is
    // checked once, with the other known answers, in `tests/record_kat.rs`.

    #[test]
    fn key_block_seed_is_seq_then_server_then_client_random() {
        let (cr, sr) = randoms();
        let master = [3u8; 20];
        let km = derive_key_block(
            BulkCipherAlgorithm::DesCbc,
            MacAlgorithm::Md5,
            &master,
            Direction::ServerWrite,
            0x0100,
            &cr,
            &sr,
        );
        let seed = [&[0x01, 0x00][..], &sr, &cr].concat();
        let block = prf(
            PrfHash::Md5,
            &master,
            b"server expansion",
            &seed,
            16 + 8 + 8,
        );
        assert_eq!(km.mac_secret(), &block[..16]);
        assert_eq!(km.key(), &block[16..24]);
        assert_eq!(km.iv(), &block[24..32]);
    }

    #[test]
    fn export_expansion_uses_client_random_first_and_empty_iv_secret() {
        let (cr, sr) = randoms();
        let master = [9u8; 20];
        let seq = 0x0040;
        let km = derive_key_block(
            BulkCipherAlgorithm::Rc5Cbc40,
            MacAlgorithm::Sha40,
            &master,
            Direction::ClientWrite,
            seq,
            &cr,
            &sr,
        );
        let seed = [&seq.to_be_bytes()[..], &sr, &cr].concat();
        let block = prf(
            PrfHash::Sha1,
            &master,
            b"client expansion",
            &seed,
            20 + 5 + 8,
        );
        let material = &block[20..25];
        let cs = [cr.as_slice(), sr.as_slice()].concat();
        let key = prf(PrfHash::Sha1, material, b"client write key", &cs, 16);
        let iv_seed = [&seq.to_be_bytes()[..], &cs].concat();
        let iv = prf(PrfHash::Sha1, b"", b"client write IV", &iv_seed, 8);
        assert_eq!(km.mac_secret(), &block[..20]);
        assert_eq!(km.key(), key.as_slice());
        assert_eq!(km.iv(), iv.as_slice());
        // The key-block IV is discarded.
        assert_ne!(km.iv(), &block[25..33]);

        // DES_CBC_40 expands 5 bytes of material to an 8-byte key.
        let des = derive_key_block(
            BulkCipherAlgorithm::DesCbc40,
            MacAlgorithm::Sha,
            &master,
            Direction::ServerWrite,
            0,
            &cr,
            &sr,
        );
        assert_eq!(des.key().len(), 8);
        assert_eq!(des.iv().len(), 8);
    }

    #[test]
    fn every_suite_gets_the_sizes_of_its_tables() {
        let (cr, sr) = randoms();
        for bulk in BulkCipherAlgorithm::ALL {
            for mac in MacAlgorithm::ALL {
                let km =
                    derive_key_block(*bulk, *mac, &[1; 20], Direction::ClientWrite, 0, &cr, &sr);
                let c = cipher_info(*bulk);
                assert_eq!(km.key().len(), c.key_size, "{bulk}/{mac}");
                assert_eq!(km.iv().len(), c.iv_size, "{bulk}/{mac}");
                assert_eq!(
                    km.mac_secret().len(),
                    mac_info(*mac).key_size,
                    "{bulk}/{mac}"
                );
            }
        }
        let null = derive_key_block(
            BulkCipherAlgorithm::Null,
            MacAlgorithm::Sha0,
            &[1; 20],
            Direction::ClientWrite,
            0,
            &cr,
            &sr,
        );
        assert!(null.key().is_empty() && null.iv().is_empty() && null.mac_secret().is_empty());
    }

    #[test]
    fn directions_and_epochs_give_different_keys() {
        let (cr, sr) = randoms();
        let derive = |d, seq| {
            derive_key_block(
                BulkCipherAlgorithm::IdeaCbc,
                MacAlgorithm::Sha80,
                &[5; 20],
                d,
                seq,
                &cr,
                &sr,
            )
        };
        let c0 = derive(Direction::ClientWrite, 0);
        let s0 = derive(Direction::ServerWrite, 0);
        let c8 = derive(Direction::ClientWrite, 8);
        assert_ne!(c0.key(), s0.key());
        assert_ne!(c0.key(), c8.key());
        assert_eq!(Direction::ClientWrite.reverse(), Direction::ServerWrite);
    }

    #[test]
    fn refresh_epoch_rounds_down_to_multiples_of_two_to_the_n() {
        assert_eq!(refresh_epoch(0, 3), 0);
        assert_eq!(refresh_epoch(7, 3), 0);
        assert_eq!(refresh_epoch(8, 3), 8);
        assert_eq!(refresh_epoch(0x1234, 8), 0x1200);
        assert_eq!(refresh_epoch(0xffff, 0), 0xffff);
        assert_eq!(refresh_epoch(0xffff, 15), 0x8000);
        assert_eq!(refresh_epoch(0xffff, 16), 0);
        assert_eq!(refresh_epoch(0xffff, 255), 0);
    }
}
