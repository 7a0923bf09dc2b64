//! Record protection for one direction: MAC, padding, per-record IV and CBC encryption,
//! with key refresh (wire-format notes §7.4 to §7.9).
//!
//! The record header (L/S/C bits, sequence number, length) is framed elsewhere; this
//! module receives the header byte as transmitted and the record's sequence number,
//! because both enter the MAC (§7.7) and the sequence number also sets the IV (§7.9)
//! and the key epoch (§7.6).
//!
//! ```text
//! block cipher:  CBC(key, write_IV ⊕ (seq_hi, seq_lo, …), content ‖ MAC ‖ p × p ‖ p)
//! NULL cipher:   content ‖ MAC
//! ```

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq, ConstantTimeGreater};
use zeroize::Zeroizing;

use crate::crypto::cipher::{cipher_info, BulkCipher};
use crate::crypto::keys::{derive_key_block_keyed, refresh_epoch, Direction};
use crate::crypto::mac::{mac_info, RecordMac};
use crate::crypto::prf::{PrfHash, PrfKey};
use crate::msgs::enums::{AlertDescription, BulkCipherAlgorithm, MacAlgorithm};

/// Largest protected fragment: the record length field is 16 bits.
pub const MAX_FRAGMENT_LEN: usize = u16::MAX as usize;

/// Largest IV of any supported cipher (AES: 16 bytes).
const MAX_IV_LEN: usize = 16;

/// Why a received record was rejected, or a record could not be protected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The MAC did not verify (also: wrong sequence number, wrong keys).
    #[error("record MAC does not verify")]
    BadRecordMac,
    /// Block-cipher fragment not a whole number of blocks, or inconsistent padding.
    #[error("record does not decrypt to well-formed padding")]
    DecryptionFailed,
    /// The fragment would exceed (or exceeds) 2^16 - 1 bytes.
    #[error("record longer than {MAX_FRAGMENT_LEN} bytes")]
    RecordOverflow,
    /// Key material did not fit the cipher; a bug in this crate, not a peer's fault.
    #[error("internal error: derived key does not fit the cipher")]
    KeyDoesNotFitCipher,
    /// The record's layout did not fit the cipher's block size; a bug in this crate.
    #[error("internal error: record layout does not fit the cipher")]
    LayoutDoesNotFitCipher,
}

impl RecordError {
    /// The alert WTLS prescribes (§7.9: bad padding → decryption_failed, bad MAC →
    /// bad_record_mac; S3 sends both as warnings and drops the record).
    pub fn alert(&self) -> AlertDescription {
        match self {
            RecordError::BadRecordMac => AlertDescription::BadRecordMac,
            RecordError::DecryptionFailed => AlertDescription::DecryptionFailed,
            RecordError::RecordOverflow => AlertDescription::RecordOverflow,
            RecordError::KeyDoesNotFitCipher | RecordError::LayoutDoesNotFitCipher => {
                AlertDescription::InternalError
            }
        }
    }

    /// The alert to send when the padding oracle must be closed: telling bad padding
    /// from a bad MAC is exactly what Vaudenay's CBC padding attack (Eurocrypt 2002,
    /// demonstrated on WTLS among others) feeds on, so a hardened gateway answers both
    /// with bad_record_mac, as TLS 1.1 later required.
    pub fn alert_without_padding_oracle(&self) -> AlertDescription {
        match self {
            RecordError::DecryptionFailed => AlertDescription::BadRecordMac,
            other => other.alert(),
        }
    }
}

/// Everything record protection needs from the handshake.
#[derive(Clone)]
pub struct ProtectionParams {
    pub bulk: BulkCipherAlgorithm,
    pub mac: MacAlgorithm,
    /// Keys are refreshed every 2^key_refresh records (§7.6).
    pub key_refresh: u8,
    pub master_secret: Zeroizing<[u8; 20]>,
    pub client_random: [u8; 16],
    pub server_random: [u8; 16],
}

impl std::fmt::Debug for ProtectionParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectionParams")
            .field("bulk", &self.bulk)
            .field("mac", &self.mac)
            .field("key_refresh", &self.key_refresh)
            .finish_non_exhaustive()
    }
}

/// The per-record IV: the write IV XOR the 2-byte sequence number repeated over its
/// length (§7.9; even bytes take the high byte, odd bytes the low byte). CBC restarts
/// with this IV for every record instead of chaining from the previous record.
pub fn record_iv(write_iv: &[u8], seq: u16) -> Vec<u8> {
    let s = seq.to_be_bytes();
    write_iv
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ s[i % 2])
        .collect()
}

/// Writes [`record_iv`] into a stack buffer; returns the used prefix length.
fn record_iv_into(write_iv: &[u8], seq: u16, out: &mut [u8; MAX_IV_LEN]) -> usize {
    let s = seq.to_be_bytes();
    for (i, (o, b)) in out.iter_mut().zip(write_iv).enumerate() {
        *o = b ^ s[i % 2];
    }
    write_iv.len().min(MAX_IV_LEN)
}

/// Minimal padding count p for `content_len` bytes of content and `mac_len` of MAC:
/// `p = (bs - (len + mac + 1) mod bs) mod bs` (§7.9, S3's choice: 0..bs-1).
fn minimal_padding(content_len: usize, mac_len: usize, block_size: usize) -> usize {
    (block_size - (content_len + mac_len + 1) % block_size) % block_size
}

/// Keys of one refresh epoch, built once and reused for every record of the epoch.
struct Epoch {
    seq: u16,
    cipher: BulkCipher,
    mac: RecordMac,
    /// The write IV, its first `iv_len` bytes (§7.9).
    write_iv: Zeroizing<[u8; MAX_IV_LEN]>,
    iv_len: usize,
}

impl Epoch {
    fn write_iv(&self) -> &[u8] {
        &self.write_iv[..self.iv_len]
    }
}

/// Record protection of one direction of a connection. The writer calls
/// [`CipherState::protect`], the peer's state for the same [`Direction`] calls
/// [`CipherState::unprotect`].
pub struct CipherState {
    params: ProtectionParams,
    /// The master secret keyed for the PRF once, for every epoch's key block.
    master: PrfKey,
    direction: Direction,
    epoch: Option<Epoch>,
}

impl std::fmt::Debug for CipherState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CipherState")
            .field("params", &self.params)
            .field("direction", &self.direction)
            .field("epoch", &self.epoch.as_ref().map(|e| e.seq))
            .finish()
    }
}

/// A copy holds the same keys; its per-epoch cipher contexts are derived again on first
/// use (a connection copies its state only to roll back an input it drops).
impl Clone for CipherState {
    fn clone(&self) -> Self {
        CipherState::with_master_key(self.params.clone(), self.direction, self.master.clone())
    }
}

impl CipherState {
    /// A state for `direction`; keys are derived lazily for the epoch of the first
    /// record, then whenever a record's epoch differs (§7.6).
    pub fn new(params: ProtectionParams, direction: Direction) -> Self {
        let master = PrfKey::new(PrfHash::for_mac(params.mac), &params.master_secret[..]);
        CipherState::with_master_key(params, direction, master)
    }

    /// [`CipherState::new`] with the master secret already keyed for the PRF of
    /// `params.mac` (a connection keys it once for both directions and its Finished).
    pub(crate) fn with_master_key(
        params: ProtectionParams,
        direction: Direction,
        master: PrfKey,
    ) -> Self {
        CipherState {
            params,
            master,
            direction,
            epoch: None,
        }
    }

    pub fn params(&self) -> &ProtectionParams {
        &self.params
    }

    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// MAC bytes per record.
    pub fn mac_size(&self) -> usize {
        mac_info(self.params.mac).mac_size
    }

    /// Bytes a `plaintext_len`-byte record grows by when protected: MAC, plus padding
    /// and the padding-length byte for block ciphers.
    pub fn overhead_for(&self, plaintext_len: usize) -> usize {
        let mac = self.mac_size();
        let bs = cipher_info(self.params.bulk).block_size;
        if bs == 0 {
            mac
        } else {
            mac + minimal_padding(plaintext_len, mac, bs) + 1
        }
    }

    /// The epoch's keys for record `seq`, deriving them if the epoch changed.
    fn keys_for(&mut self, seq: u16) -> Result<&Epoch, RecordError> {
        let epoch_seq = refresh_epoch(seq, self.params.key_refresh);
        let epoch = match self.epoch.take() {
            Some(epoch) if epoch.seq == epoch_seq => epoch,
            _ => self.derive_epoch(epoch_seq)?,
        };
        Ok(self.epoch.insert(epoch))
    }

    /// The keys of the epoch that starts at record `epoch_seq` (§7.6).
    fn derive_epoch(&self, epoch_seq: u16) -> Result<Epoch, RecordError> {
        let p = &self.params;
        let km = derive_key_block_keyed(
            p.bulk,
            p.mac,
            &self.master,
            self.direction,
            epoch_seq,
            &p.client_random,
            &p.server_random,
        );
        let cipher =
            BulkCipher::new(p.bulk, km.key()).map_err(|_| RecordError::KeyDoesNotFitCipher)?;
        let iv = km.iv();
        let mut write_iv = Zeroizing::new([0u8; MAX_IV_LEN]);
        write_iv
            .get_mut(..iv.len())
            .ok_or(RecordError::KeyDoesNotFitCipher)?
            .copy_from_slice(iv);
        Ok(Epoch {
            seq: epoch_seq,
            cipher,
            mac: RecordMac::new(p.mac, km.mac_secret()),
            write_iv,
            iv_len: iv.len(),
        })
    }

    /// Protects one record: MAC, then padding, then CBC encryption (§7.7, §7.9).
    /// `record_type` is the header byte as it will be transmitted.
    pub fn protect(
        &mut self,
        seq: u16,
        record_type: u8,
        plaintext: &[u8],
    ) -> Result<Vec<u8>, RecordError> {
        let mut out = Vec::with_capacity(plaintext.len() + self.overhead_for(plaintext.len()));
        self.protect_into(seq, record_type, plaintext, &mut out)?;
        Ok(out)
    }

    /// [`CipherState::protect`] appending the protected fragment to `out` (after the
    /// record header the caller wrote there), so that a record is built in one buffer.
    pub fn protect_into(
        &mut self,
        seq: u16,
        record_type: u8,
        plaintext: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), RecordError> {
        let total = plaintext.len() + self.overhead_for(plaintext.len());
        if total > MAX_FRAGMENT_LEN {
            return Err(RecordError::RecordOverflow);
        }
        let mac_len = self.mac_size();
        let epoch = self.keys_for(seq)?;
        let bs = epoch.cipher.block_size();

        let start = out.len();
        out.reserve(total);
        out.extend_from_slice(plaintext);
        epoch.mac.compute_into(seq, record_type, plaintext, out);
        if bs == 0 {
            return Ok(());
        }
        let p = minimal_padding(plaintext.len(), mac_len, bs);
        // p < bs ≤ 16, so it fits the one-byte length field.
        out.resize(out.len() + p + 1, p as u8);

        let mut iv = [0u8; MAX_IV_LEN];
        let n = record_iv_into(epoch.write_iv(), seq, &mut iv);
        epoch
            .cipher
            .encrypt_cbc(&iv[..n], &mut out[start..])
            .map_err(|_| RecordError::LayoutDoesNotFitCipher)
    }

    /// Removes the protection of one received record and returns its content.
    ///
    /// Checks, in order: fragment size, block alignment (decryption_failed), padding
    /// (every padding byte must equal the length byte, and p + 1 + MAC must fit), MAC
    /// (bad_record_mac). Any consistent padding is accepted, not only the minimal one
    /// we send, because Kannel pads 1..8 (§11 item 9).
    ///
    /// The padding check runs in constant time over the last 256 bytes and the MAC is
    /// verified even when the padding is bad, over the content as if the padding were
    /// empty (a region whose length depends only on the public fragment length), so
    /// bad padding is not revealed by skipping the MAC. What remains observable is the
    /// error itself (see [`RecordError::alert_without_padding_oracle`]) and the small
    /// Lucky-13 style difference in HMAC blocks between padding lengths.
    pub fn unprotect(
        &mut self,
        seq: u16,
        record_type: u8,
        fragment: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, RecordError> {
        if fragment.len() > MAX_FRAGMENT_LEN {
            return Err(RecordError::RecordOverflow);
        }
        let mac_len = self.mac_size();
        let bs = cipher_info(self.params.bulk).block_size;

        if bs == 0 {
            let Some(content_len) = fragment.len().checked_sub(mac_len) else {
                return Err(RecordError::BadRecordMac);
            };
            let epoch = self.keys_for(seq)?;
            let (content, mac) = fragment.split_at(content_len);
            return if bool::from(epoch.mac.verify(seq, record_type, content, mac)) {
                Ok(Zeroizing::new(content.to_vec()))
            } else {
                Err(RecordError::BadRecordMac)
            };
        }

        // Lengths are public: these early exits reveal nothing about the plaintext.
        if fragment.is_empty() || !fragment.len().is_multiple_of(bs) || fragment.len() < mac_len + 1
        {
            return Err(RecordError::DecryptionFailed);
        }
        let epoch = self.keys_for(seq)?;
        let mut buf = Zeroizing::new(fragment.to_vec());
        let mut iv = [0u8; MAX_IV_LEN];
        let n = record_iv_into(epoch.write_iv(), seq, &mut iv);
        epoch
            .cipher
            .decrypt_cbc(&iv[..n], &mut buf)
            .map_err(|_| RecordError::DecryptionFailed)?;

        let (good, pad_len) = padding_verdict(&buf, mac_len);
        let content_len = buf.len() - mac_len - 1 - pad_len;
        let (content, rest) = buf.split_at(content_len);
        let mac_ok = epoch
            .mac
            .verify(seq, record_type, content, &rest[..mac_len]);

        if !bool::from(good) {
            return Err(RecordError::DecryptionFailed);
        }
        if !bool::from(mac_ok) {
            return Err(RecordError::BadRecordMac);
        }
        buf.truncate(content_len);
        Ok(buf)
    }
}

/// Whether the decrypted record `buf` ends in valid padding (its last byte p, the p
/// bytes before it equal to p, and room left for a `mac_len`-byte MAC), and the padding
/// length to strip: p if valid, 0 if not, so that a bad record is MACed as if unpadded.
///
/// Constant time over the last 256 bytes: one masked pass whatever p is, one `subtle`
/// comparison at the end. Plain masked arithmetic per byte rather than a `Choice` per
/// byte, whose optimisation barrier each dominated the time of small records. Kept out of
/// line (the call costs nanoseconds against a CBC decryption) so that callgrind can count
/// its instructions alone: `constant_time` tests check the count is the same for valid,
/// wrong and overlong padding.
#[inline(never)]
fn padding_verdict(buf: &[u8], mac_len: usize) -> (Choice, usize) {
    let len = buf.len();
    let pad = buf[len - 1];
    // Largest padding count that still leaves room for the MAC (≥ 0, checked by the caller).
    let room = len - mac_len - 1;
    let room_u8 = u8::try_from(room).unwrap_or(u8::MAX);
    let fits = !pad.ct_gt(&room_u8);
    // Bytes before the length byte that lie within the padding must equal `pad`.
    let window = (len - 1).min(255);
    let mut diff = 0u8;
    for i in 1..=window {
        let byte = buf[len - 1 - i];
        // 0xFF when i ≤ pad, else 0: i - (pad + 1) borrows exactly when i ≤ pad.
        // i ≤ window ≤ 255, so the high byte of the u16 difference is the mask.
        let in_padding = ((i as u16).wrapping_sub(u16::from(pad) + 1) >> 8) as u8;
        diff |= in_padding & (byte ^ pad);
    }
    let good = fits & diff.ct_eq(&0);
    (good, usize::from(u8::conditional_select(&0, &pad, good)))
}

/// Why a suite should not be accepted by default, or `None` if it is acceptable.
///
/// Saarinen ("Attacks against the WAP WTLS protocol", 2001) showed how WTLS's weak
/// options break it: export keys of 40-64 bits fall to exhaustive search (so does
/// 56-bit DES), a 40-bit MAC can be forged by trial, SHA_XOR_40 is an unkeyed checksum
/// that an attacker recomputes after changing a CBC record, and NULL / SHA_0 give no
/// confidentiality / no integrity at all. The gateway refuses these unless explicitly
/// told otherwise; 80-bit truncated MACs (SHA_80, MD5_80) are accepted.
pub fn is_weak(bulk: BulkCipherAlgorithm, mac: MacAlgorithm) -> Option<&'static str> {
    let cipher = cipher_info(bulk);
    if bulk == BulkCipherAlgorithm::Null {
        return Some("NULL bulk cipher: records travel in clear text");
    }
    match mac {
        MacAlgorithm::Sha0 => return Some("SHA_0: records carry no MAC, no integrity"),
        MacAlgorithm::ShaXor40 => {
            return Some("SHA_XOR_40: unkeyed 40-bit XOR checksum, forgeable under CBC")
        }
        _ => {}
    }
    if cipher.effective_key_bits < 80 {
        return Some(if cipher.exportable {
            "export cipher: 40-64 bit key, open to exhaustive key search"
        } else {
            "DES: 56-bit key, open to exhaustive key search"
        });
    }
    if mac_info(mac).mac_size * 8 < 80 {
        return Some("MAC truncated to 40 bits: forgeable by trial");
    }
    None
}

#[cfg(test)]
mod constant_time;

#[cfg(test)]
mod tests {
    use super::*;

    fn params(bulk: BulkCipherAlgorithm, mac: MacAlgorithm, key_refresh: u8) -> ProtectionParams {
        ProtectionParams {
            bulk,
            mac,
            key_refresh,
            master_secret: Zeroizing::new([0x5a; 20]),
            client_random: [1; 16],
            server_random: [2; 16],
        }
    }

    #[test]
    fn record_iv_section_12_3() {
        let iv = record_iv(&[1, 2, 3, 4, 5, 6, 7, 8], 0x1234);
        assert_eq!(iv, [0x13, 0x36, 0x11, 0x30, 0x17, 0x32, 0x15, 0x3c]);
        let mut buf = [0u8; MAX_IV_LEN];
        let n = record_iv_into(&[1, 2, 3, 4, 5, 6, 7, 8], 0x1234, &mut buf);
        assert_eq!(&buf[..n], iv.as_slice());
    }

    #[test]
    fn padding_is_minimal_and_filled_with_its_length() {
        assert_eq!(minimal_padding(0, 20, 8), 3); // 0+20+1 = 21 → 24
        assert_eq!(minimal_padding(3, 20, 8), 0); // 24 exactly
        assert_eq!(minimal_padding(0, 0, 16), 15);

        let mut tx = CipherState::new(
            params(BulkCipherAlgorithm::DesCbc, MacAlgorithm::Sha, 4),
            Direction::ClientWrite,
        );
        assert_eq!(tx.overhead_for(0), 24);
        let fragment = tx.protect(0, 0xE4, b"").unwrap();
        assert_eq!(fragment.len(), 24);

        // Decrypt by hand and look at the layout.
        let epoch = tx.epoch.as_ref().unwrap();
        let mut plain = fragment.clone();
        let iv = record_iv(epoch.write_iv(), 0);
        epoch.cipher.decrypt_cbc(&iv, &mut plain).unwrap();
        assert_eq!(&plain[20..], &[3, 3, 3, 3]);
        assert_eq!(&plain[..20], epoch.mac.compute(0, 0xE4, b"").as_slice());
    }

    #[test]
    fn longer_consistent_padding_is_accepted() {
        // Kannel-style padding (a full block of padding) must decode.
        let p = params(BulkCipherAlgorithm::IdeaCbc, MacAlgorithm::Md5, 3);
        let mut rx = CipherState::new(p.clone(), Direction::ServerWrite);
        let mut tx = CipherState::new(p, Direction::ServerWrite);
        let epoch = tx.keys_for(9).unwrap();
        // 5 content + 16 MAC + 10 padding + 1 = 32 bytes.
        let mut plain = b"hello".to_vec();
        epoch.mac.compute_into(9, 0xE4, b"hello", &mut plain);
        plain.resize(plain.len() + 11, 10);
        let iv = record_iv(epoch.write_iv(), 9);
        epoch.cipher.encrypt_cbc(&iv, &mut plain).unwrap();
        assert_eq!(rx.unprotect(9, 0xE4, &plain).unwrap().as_slice(), b"hello");
    }

    #[test]
    fn one_wrong_padding_byte_is_decryption_failed() {
        let p = params(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha80, 3);
        let mut rx = CipherState::new(p.clone(), Direction::ClientWrite);
        let mut tx = CipherState::new(p, Direction::ClientWrite);
        let epoch = tx.keys_for(2).unwrap();
        // 3 content + 10 MAC + 10 padding + 1 = 24 bytes; pad bytes 10, one of them 9.
        for wrong in 0..10 {
            let mut plain = b"abc".to_vec();
            epoch.mac.compute_into(2, 0xE4, b"abc", &mut plain);
            plain.resize(plain.len() + 11, 10);
            plain[13 + wrong] = 9;
            let iv = record_iv(epoch.write_iv(), 2);
            epoch.cipher.encrypt_cbc(&iv, &mut plain).unwrap();
            assert_eq!(
                rx.unprotect(2, 0xE4, &plain).unwrap_err(),
                RecordError::DecryptionFailed,
                "wrong byte at padding index {wrong}"
            );
        }
        // A length byte pointing into the MAC (p + 1 + MAC > fragment) is also bad.
        let mut plain = b"abc".to_vec();
        epoch.mac.compute_into(2, 0xE4, b"abc", &mut plain);
        plain.resize(24, 14);
        let iv = record_iv(epoch.write_iv(), 2);
        epoch.cipher.encrypt_cbc(&iv, &mut plain).unwrap();
        assert_eq!(
            rx.unprotect(2, 0xE4, &plain).unwrap_err(),
            RecordError::DecryptionFailed
        );
    }

    #[test]
    fn errors_map_to_alerts() {
        assert_eq!(
            RecordError::BadRecordMac.alert(),
            AlertDescription::BadRecordMac
        );
        assert_eq!(
            RecordError::DecryptionFailed.alert(),
            AlertDescription::DecryptionFailed
        );
        assert_eq!(
            RecordError::RecordOverflow.alert(),
            AlertDescription::RecordOverflow
        );
        assert_eq!(
            RecordError::DecryptionFailed.alert_without_padding_oracle(),
            AlertDescription::BadRecordMac
        );
    }

    #[test]
    fn oversized_records_overflow() {
        let mut st = CipherState::new(
            params(BulkCipherAlgorithm::Aes128Cbc, MacAlgorithm::Sha, 8),
            Direction::ClientWrite,
        );
        let big = vec![0u8; MAX_FRAGMENT_LEN];
        assert_eq!(st.protect(0, 0xE4, &big), Err(RecordError::RecordOverflow));
        let too_long = vec![0u8; MAX_FRAGMENT_LEN + 1];
        assert_eq!(
            st.unprotect(0, 0xE4, &too_long).unwrap_err(),
            RecordError::RecordOverflow
        );
        // The largest record that fits still works; one byte more overflows.
        let max = (0..MAX_FRAGMENT_LEN)
            .rev()
            .find(|&n| n + st.overhead_for(n) <= MAX_FRAGMENT_LEN)
            .unwrap();
        assert_eq!(max, 65_499);
        let fragment = st.protect(0, 0xE4, &vec![7u8; max]).unwrap();
        assert_eq!(fragment.len(), 65_520);
        assert_eq!(
            st.protect(0, 0xE4, &vec![7u8; max + 1]),
            Err(RecordError::RecordOverflow)
        );
    }

    #[test]
    fn weak_suites_are_named() {
        use BulkCipherAlgorithm as B;
        use MacAlgorithm as M;
        assert!(is_weak(B::Null, M::Sha).unwrap().contains("NULL"));
        assert!(is_weak(B::Aes128Cbc, M::Sha0).unwrap().contains("SHA_0"));
        assert!(is_weak(B::TripleDesCbcEde, M::ShaXor40)
            .unwrap()
            .contains("SHA_XOR_40"));
        assert!(is_weak(B::Rc5Cbc40, M::Sha).unwrap().contains("export"));
        assert!(is_weak(B::IdeaCbc64, M::Md5).unwrap().contains("export"));
        assert!(is_weak(B::DesCbc, M::Sha).unwrap().contains("DES"));
        assert!(is_weak(B::Rc5Cbc, M::Sha40).unwrap().contains("40 bits"));
        assert!(is_weak(B::Rc5Cbc, M::Md5_40).is_some());
        for strong in [B::Rc5Cbc, B::TripleDesCbcEde, B::IdeaCbc, B::Aes128Cbc] {
            for mac in [M::Sha80, M::Sha, M::Md5_80, M::Md5] {
                assert_eq!(is_weak(strong, mac), None, "{strong}/{mac}");
            }
        }
    }
}
