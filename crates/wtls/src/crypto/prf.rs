//! The WTLS pseudo-random function, Finished verify data and the running handshake hash
//! (wire-format notes §7.1 and §7.10).
//!
//! WTLS keeps TLS's `P_hash` expansion but drops TLS 1.0's MD5 ⊕ SHA-1 split: one hash
//! function drives every PRF call of a connection, and that hash follows the negotiated
//! MAC family (SHA-1 for MAC codes 0-4, MD5 for 5-7). This is the handset client's rule
//! (source S3); Kannel always uses SHA-1, which agrees whenever a SHA MAC is negotiated.

use hmac::block_api::HmacCore;
use hmac::digest::block_api::{Block, Buffer, EagerHash, FixedOutputCore, UpdateCore};
use hmac::digest::{Output, OutputSizeUser};
use hmac::{Hmac, KeyInit, Mac};
use md5::Digest;
use md5::Md5;
use zeroize::{Zeroize, Zeroizing};

use super::sha1::Sha1;
use crate::msgs::enums::MacAlgorithm;

/// The hash behind HMAC, the PRF, Finished and the handshake transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrfHash {
    Sha1,
    Md5,
}

impl PrfHash {
    /// The hash a connection uses for every PRF call, chosen by the MAC family of the
    /// negotiated cipher suite (§7.1). SHA_0 and SHA_XOR_40 carry no HMAC of their own
    /// but still belong to the SHA family.
    pub fn for_mac(mac: MacAlgorithm) -> Self {
        match mac {
            MacAlgorithm::Sha0
            | MacAlgorithm::Sha40
            | MacAlgorithm::Sha80
            | MacAlgorithm::Sha
            | MacAlgorithm::ShaXor40 => PrfHash::Sha1,
            MacAlgorithm::Md5_40 | MacAlgorithm::Md5_80 | MacAlgorithm::Md5 => PrfHash::Md5,
        }
    }

    /// Digest length in bytes (20 for SHA-1, 16 for MD5).
    pub fn output_len(self) -> usize {
        match self {
            PrfHash::Sha1 => 20,
            PrfHash::Md5 => 16,
        }
    }

    /// One-shot digest of `data`.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            PrfHash::Sha1 => Sha1::digest(data).to_vec(),
            PrfHash::Md5 => Md5::digest(data).to_vec(),
        }
    }
}

/// Standard HMAC (RFC 2104) keyed with `key` over `data`, full output length.
pub fn hmac(hash: PrfHash, key: &[u8], data: &[u8]) -> Vec<u8> {
    match hash {
        PrfHash::Sha1 => keyed::<Hmac<Sha1>>(key)
            .chain_update(data)
            .finalize()
            .into_bytes()
            .to_vec(),
        PrfHash::Md5 => keyed::<Hmac<Md5>>(key)
            .chain_update(data)
            .finalize()
            .into_bytes()
            .to_vec(),
    }
}

/// An HMAC state after the key has been absorbed. Cloning it is much cheaper than
/// re-keying, which is why the PRF and the record MAC key once and clone per use.
pub(crate) fn keyed<M: KeyInit>(key: &[u8]) -> M {
    // HMAC hashes over-long keys and zero-pads short ones, so every key length is valid;
    // `new_from_slice` only fails for MACs with a fixed key size.
    <M as KeyInit>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"))
}

/// Longest `A(i) ‖ label ‖ seed` the PRF assembles on the stack: three hash blocks,
/// more than any label and seed of the protocol (a 16-byte label and a 34-byte key
/// block seed are the longest).
const STACK_MESSAGE: usize = 192;

/// HMAC of `message` from a keyed core: the message's whole blocks are compressed
/// straight from the caller's buffer and only its tail goes through a block buffer,
/// where the `Hmac` wrapper would copy every byte into its buffer first. The HMAC
/// itself (inner and outer hash) is the `hmac` crate's.
fn hmac_once<D: EagerHash>(keyed: &HmacCore<D>, message: &[u8]) -> Output<HmacCore<D>> {
    let mut core = keyed.clone();
    let (blocks, tail) = Block::<HmacCore<D>>::slice_as_chunks(message);
    if !blocks.is_empty() {
        core.update_blocks(blocks);
    }
    let mut buffer = Buffer::<HmacCore<D>>::new(tail);
    let mut out = Output::<HmacCore<D>>::default();
    core.finalize_fixed_core(&mut buffer, &mut out);
    out
}

/// `P_hash(secret, label ‖ seed)` truncated to `out.len()` bytes (§7.1), from the secret's
/// keyed HMAC core:
/// A(0) = label ‖ seed, A(i) = HMAC(secret, A(i-1)),
/// output = HMAC(secret, A(1) ‖ label ‖ seed) ‖ HMAC(secret, A(2) ‖ label ‖ seed) ‖ …
///
/// `label ‖ seed` is written once into a message buffer behind room for A(i), which
/// each round writes in front of it: no per-HMAC copies of the label and seed.
fn p_hash<D: EagerHash>(keyed: &HmacCore<D>, label: &[u8], seed: &[u8], out: &mut [u8]) {
    let n = <HmacCore<D> as OutputSizeUser>::output_size();
    let len = n + label.len() + seed.len();
    let mut stack = [0u8; STACK_MESSAGE];
    let mut heap = Vec::new();
    let message: &mut [u8] = if len <= STACK_MESSAGE {
        &mut stack[..len]
    } else {
        heap.resize(len, 0);
        &mut heap
    };
    message[n..n + label.len()].copy_from_slice(label);
    message[n + label.len()..].copy_from_slice(seed);
    let mut a = hmac_once(keyed, &message[n..]);
    let mut filled = 0;
    loop {
        message[..n].copy_from_slice(&a);
        let mut block = hmac_once(keyed, message);
        let take = n.min(out.len() - filled);
        out[filled..filled + take].copy_from_slice(&block[..take]);
        filled += take;
        block.as_mut_slice().zeroize();
        if filled == out.len() {
            break;
        }
        // A(i+1) only when another block follows: the last one would be thrown away.
        a = hmac_once(keyed, &message[..n]);
    }
    // The A(i) and the blocks are PRF output as secret as the result: wiped here (the
    // label and seed behind A(i) in the message are public); the caller's buffer is its
    // own to wipe.
    a.as_mut_slice().zeroize();
    message[..n].zeroize();
}

/// A PRF secret absorbed into HMAC once: its ipad and opad blocks compressed, so every
/// PRF call under the same secret clones this state instead of keying again (two hash
/// blocks saved per call). A connection keys its master secret once and derives both
/// key blocks, every key refresh and both Finished from it.
///
/// The state is as sensitive as the secret (it computes the same MACs); it is wiped on
/// drop (the SHA-1 context by [`super::sha1`], MD5's chaining values by `md-5`'s).
#[derive(Clone)]
pub struct PrfKey(KeyedHmac);

#[derive(Clone)]
enum KeyedHmac {
    Sha1(HmacCore<Sha1>),
    Md5(HmacCore<Md5>),
}

impl PrfKey {
    /// Keys the PRF of `hash` with `secret` (any length; empty for export IVs, §7.5).
    pub fn new(hash: PrfHash, secret: &[u8]) -> Self {
        PrfKey(match hash {
            PrfHash::Sha1 => KeyedHmac::Sha1(keyed(secret)),
            PrfHash::Md5 => KeyedHmac::Md5(keyed(secret)),
        })
    }

    /// The hash this key runs.
    pub fn hash(&self) -> PrfHash {
        match self.0 {
            KeyedHmac::Sha1(_) => PrfHash::Sha1,
            KeyedHmac::Md5(_) => PrfHash::Md5,
        }
    }

    /// `PRF(secret, label, seed)` truncated to `len` bytes (§7.1).
    pub fn expand(&self, label: &[u8], seed: &[u8], len: usize) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(vec![0u8; len]);
        self.expand_into(label, seed, &mut out);
        out
    }

    /// [`PrfKey::expand`] into a buffer of the caller's (`out.len()` bytes of output),
    /// so that a short fixed-size output needs no heap buffer.
    pub fn expand_into(&self, label: &[u8], seed: &[u8], out: &mut [u8]) {
        if out.is_empty() {
            return;
        }
        match &self.0 {
            KeyedHmac::Sha1(k) => p_hash(k, label, seed, out),
            KeyedHmac::Md5(k) => p_hash(k, label, seed, out),
        }
    }

    /// Finished verify data under this (master secret) key: see [`finished_verify_data`].
    pub fn verify_data(&self, label: &[u8], handshake_hash: &[u8]) -> [u8; 12] {
        let mut verify = [0u8; 12];
        self.expand_into(label, handshake_hash, &mut verify);
        verify
    }
}

impl std::fmt::Debug for PrfKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PrfKey").field(&self.hash()).finish()
    }
}

/// The WTLS PRF: `P_hash(secret, label ‖ seed)` with a single hash, truncated to `len`
/// bytes (§7.1). An empty `secret` is a zero-length HMAC key (export IV derivation,
/// §7.5). The label is ASCII without a terminator. A secret used more than once is
/// better keyed once as a [`PrfKey`].
pub fn prf(
    hash: PrfHash,
    secret: &[u8],
    label: &[u8],
    seed: &[u8],
    len: usize,
) -> Zeroizing<Vec<u8>> {
    PrfKey::new(hash, secret).expand(label, seed, len)
}

/// Label of the client's Finished (§7.10).
pub const CLIENT_FINISHED: &[u8] = b"client finished";
/// Label of the server's Finished (§7.10).
pub const SERVER_FINISHED: &[u8] = b"server finished";

/// Finished verify data: `PRF(master, label, H(handshake_messages))[0..11]` (§7.10).
///
/// `handshake_hash` is the *full* digest of the transcript (20 bytes for SHA-1, 16 for
/// MD5) as the handset client S3 uses it; Kannel truncates it to the MAC size, which the
/// wire notes judge a Kannel bug.
pub fn finished_verify_data(
    hash: PrfHash,
    master: &[u8; 20],
    label: &[u8],
    handshake_hash: &[u8],
) -> [u8; 12] {
    PrfKey::new(hash, master).verify_data(label, handshake_hash)
}

/// Running hash of every handshake message sent or received on one handshake, in
/// transmission order (msg_type ‖ length ‖ body, no record headers, no
/// ChangeCipherSpec, no HelloRequest; §7.10). Finished and CertificateVerify need the
/// value at different points, so [`TranscriptHash::current`] does not consume it.
#[derive(Clone)]
pub enum TranscriptHash {
    Sha1(Sha1),
    Md5(Md5),
}

impl TranscriptHash {
    pub fn new(hash: PrfHash) -> Self {
        match hash {
            PrfHash::Sha1 => TranscriptHash::Sha1(Sha1::new()),
            PrfHash::Md5 => TranscriptHash::Md5(Md5::new()),
        }
    }

    /// Which hash this transcript runs.
    pub fn hash(&self) -> PrfHash {
        match self {
            TranscriptHash::Sha1(_) => PrfHash::Sha1,
            TranscriptHash::Md5(_) => PrfHash::Md5,
        }
    }

    /// Appends one complete handshake message (header included).
    pub fn update(&mut self, handshake_message: &[u8]) {
        match self {
            TranscriptHash::Sha1(h) => Digest::update(h, handshake_message),
            TranscriptHash::Md5(h) => Digest::update(h, handshake_message),
        }
    }

    /// The digest of everything so far, full length; the running state is kept.
    pub fn current(&self) -> Vec<u8> {
        match self {
            TranscriptHash::Sha1(h) => h.clone().finalize().to_vec(),
            TranscriptHash::Md5(h) => h.clone().finalize().to_vec(),
        }
    }
}

impl std::fmt::Debug for TranscriptHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TranscriptHash").field(&self.hash()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc2202_vectors() {
        // RFC 2202 test case 2 for both hashes: key "Jefe".
        let data = b"what do ya want for nothing?";
        assert_eq!(
            hex::encode(hmac(PrfHash::Md5, b"Jefe", data)),
            "750c783e6ab0b503eaa86e310a5db738"
        );
        assert_eq!(
            hex::encode(hmac(PrfHash::Sha1, b"Jefe", data)),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
        );
        // Test case 6: an 80-byte key is hashed first.
        assert_eq!(
            hex::encode(hmac(
                PrfHash::Sha1,
                &[0xaa; 80],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "aa4ae5e15272d00e95705637ce8a3b55ed402112"
        );
    }

    /// The PRF written out literally from the §7.1 definition with one-shot HMACs, so
    /// the keyed-and-cloned fast path is checked against an independent formulation.
    fn p_hash_literal(hash: PrfHash, secret: &[u8], label: &[u8], seed: &[u8]) -> Vec<u8> {
        let label_seed = [label, seed].concat();
        let a1 = hmac(hash, secret, &label_seed);
        let a2 = hmac(hash, secret, &a1);
        let a3 = hmac(hash, secret, &a2);
        let mut out = Vec::new();
        for a in [&a1, &a2, &a3] {
            out.extend(hmac(hash, secret, &[a.as_slice(), &label_seed].concat()));
        }
        out
    }

    #[test]
    fn prf_is_single_hash_p_hash_and_truncates() {
        for hash in [PrfHash::Sha1, PrfHash::Md5] {
            let literal = p_hash_literal(hash, b"secret", b"label", b"seed bytes");
            for len in [0, 1, 12, 16, 20, 21, 44, literal.len()] {
                let out = prf(hash, b"secret", b"label", b"seed bytes", len);
                assert_eq!(out.as_slice(), &literal[..len], "{hash:?} len {len}");
            }
        }
        // Empty secret (export IVs) is accepted.
        assert_eq!(prf(PrfHash::Sha1, b"", b"x", b"y", 8).len(), 8);
        // The two hashes give unrelated output.
        assert_ne!(
            prf(PrfHash::Sha1, b"s", b"l", b"", 16).as_slice(),
            prf(PrfHash::Md5, b"s", b"l", b"", 16).as_slice()
        );
    }

    #[test]
    fn prf_matches_the_literal_form_across_block_edges_and_beyond_the_stack_buffer() {
        // A(i) ‖ label ‖ seed from one block up to past STACK_MESSAGE: the message's
        // whole blocks are compressed in place, its tail buffered, and a message longer
        // than the stack buffer goes to the heap; all must agree with the wrapper.
        let seed: Vec<u8> = (0..300u32).map(|i| (i * 13 + 5) as u8).collect();
        for hash in [PrfHash::Sha1, PrfHash::Md5] {
            for seed_len in (0..=200).chain([300]) {
                let literal = p_hash_literal(hash, b"secret", b"label", &seed[..seed_len]);
                let out = prf(hash, b"secret", b"label", &seed[..seed_len], literal.len());
                assert_eq!(
                    out.as_slice(),
                    literal.as_slice(),
                    "{hash:?} seed {seed_len}"
                );
            }
        }
    }

    #[test]
    fn prf_hash_follows_mac_family() {
        for mac in MacAlgorithm::ALL {
            let expected = if mac.to_u8() <= 4 {
                PrfHash::Sha1
            } else {
                PrfHash::Md5
            };
            assert_eq!(PrfHash::for_mac(*mac), expected, "{mac}");
        }
    }

    #[test]
    fn finished_uses_full_transcript_digest() {
        let master = [7u8; 20];
        let mut t = TranscriptHash::new(PrfHash::Sha1);
        t.update(b"\x01\x00\x02ab");
        let first = t.current();
        assert_eq!(first, PrfHash::Sha1.digest(b"\x01\x00\x02ab"));
        // current() does not consume: a second call gives the same value.
        assert_eq!(t.current(), first);
        t.update(b"\x02\x00\x00");
        assert_eq!(
            t.current(),
            PrfHash::Sha1.digest(b"\x01\x00\x02ab\x02\x00\x00")
        );

        let vd = finished_verify_data(PrfHash::Sha1, &master, CLIENT_FINISHED, &first);
        let expected = prf(PrfHash::Sha1, &master, b"client finished", &first, 12);
        assert_eq!(vd.as_slice(), expected.as_slice());
        let server = finished_verify_data(PrfHash::Sha1, &master, SERVER_FINISHED, &first);
        assert_ne!(vd, server);
        // Truncating the hash (Kannel's behaviour) would give different verify data.
        let truncated = finished_verify_data(PrfHash::Sha1, &master, CLIENT_FINISHED, &first[..10]);
        assert_ne!(vd, truncated);

        let md5 = TranscriptHash::new(PrfHash::Md5);
        assert_eq!(md5.current().len(), 16);
        assert_eq!(md5.hash(), PrfHash::Md5);
    }
}
