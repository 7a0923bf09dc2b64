//! SHA-1 from OpenSSL's block function behind RustCrypto's `digest` traits.
//!
//! Why not the `sha1` crate: its portable compression, which it runs wherever the CPU
//! lacks SHA extensions (and always under valgrind, which hides them), takes about 1,400
//! instructions per block; OpenSSL's SIMD code about 770. SHA-1 is most of the
//! symmetric work of a WTLS handshake (the PRF, the transcript, the record MACs), so this
//! is what separates the server's instruction count from its public-key work.
//!
//! Why not `openssl::sha::Sha1` directly: it is a one-shot/streaming hasher without the
//! block-level API that `hmac::Hmac` needs to absorb the key pads once and clone the
//! keyed state, and it does not wipe its context on drop. Here OpenSSL only compresses
//! whole blocks (`SHA1_Transform`, its block function one block at a time); the buffering and the key pads stay RustCrypto's. The state kept between
//! calls is only the chaining values and the block count, zeroized on drop, so a keyed
//! HMAC state cached for a connection's lifetime is wiped with it.

use std::ffi::c_void;
use std::fmt;
use std::mem::MaybeUninit;
use std::ptr::addr_of_mut;

use digest::block_api::{
    AlgorithmName, Block, BlockSizeUser, Buffer, BufferKindUser, Eager, FixedOutputCore,
    OutputSizeUser, Reset, UpdateCore,
};
use digest::typenum::{U20, U64};
use digest::{HashMarker, Output};
use openssl_sys::SHA_CTX;
use zeroize::Zeroize;

/// Block-level SHA-1 state: the chaining values and the number of blocks compressed.
///
/// Why not a whole OpenSSL `SHA_CTX` (96 bytes): `hmac::Hmac` clones its two keyed
/// states for every MAC, and a short HMAC is mostly those clones; this state is 28 bytes,
/// like the `sha1` crate's. A `SHA_CTX` is built on the stack for each call of the block
/// function from these values, and its chaining values are wiped when the call returns.
#[derive(Clone)]
pub struct OpenSslSha1Core {
    h: [u32; 5],
    blocks: u64,
}

/// The initial chaining values (FIPS 180-4, 5.3.1).
const H0: [u32; 5] = [
    0x6745_2301,
    0xefcd_ab89,
    0x98ba_dcfe,
    0x1032_5476,
    0xc3d2_e1f0,
];

impl OpenSslSha1Core {
    /// Compresses `bytes` bytes of whole blocks at `data` into the chaining values.
    ///
    /// # Safety
    /// `data` must be readable for `bytes` bytes, and `bytes` a multiple of 64.
    #[inline]
    unsafe fn compress(&mut self, data: *const c_void, bytes: usize) {
        // SHA1_Transform is OpenSSL's block function on one block of a context: it reads
        // and writes only the chaining values, not the bit count, the partial-block
        // buffer or `num` (md32_common.h: `HASH_BLOCK_DATA_ORDER(c, data, 1)`), so those
        // are left uninitialised. Why not SHA1_Update: on whole blocks it ends in the
        // same block function, after some fifty instructions of length bookkeeping per
        // call that the block count here makes redundant.
        let mut ctx = MaybeUninit::<SHA_CTX>::uninit();
        let p = ctx.as_mut_ptr();
        // SAFETY: every field SHA1_Transform reads (the chaining values) is written
        // before the first call; the caller vouches for `data` being `bytes` readable
        // bytes, which are handed over 64 at a time.
        unsafe {
            let [h0, h1, h2, h3, h4] = self.h;
            addr_of_mut!((*p).h0).write(h0);
            addr_of_mut!((*p).h1).write(h1);
            addr_of_mut!((*p).h2).write(h2);
            addr_of_mut!((*p).h3).write(h3);
            addr_of_mut!((*p).h4).write(h4);
            let data = data.cast::<u8>();
            for offset in (0..bytes).step_by(64) {
                SHA1_Transform(p, data.add(offset));
            }
            let words = [
                addr_of_mut!((*p).h0),
                addr_of_mut!((*p).h1),
                addr_of_mut!((*p).h2),
                addr_of_mut!((*p).h3),
                addr_of_mut!((*p).h4),
            ];
            for (h, word) in self.h.iter_mut().zip(words) {
                *h = word.read();
                // The chaining values of a keyed HMAC state are as good as the key:
                // the stack copy is wiped (volatile, so the store is not elided).
                word.write_volatile(0);
            }
        }
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
        self.blocks = self.blocks.wrapping_add((bytes / 64) as u64);
    }
}

unsafe extern "C" {
    /// OpenSSL's one-block SHA-1 compression (`openssl/sha.h`; deprecated for
    /// applications since 3.0 in favour of the EVP API, still exported by libcrypto 3).
    /// `openssl-sys` does not bind it.
    fn SHA1_Transform(c: *mut SHA_CTX, data: *const u8);
}

impl HashMarker for OpenSslSha1Core {}

impl BlockSizeUser for OpenSslSha1Core {
    type BlockSize = U64;
}

impl BufferKindUser for OpenSslSha1Core {
    type BufferKind = Eager;
}

impl OutputSizeUser for OpenSslSha1Core {
    type OutputSize = U20;
}

impl UpdateCore for OpenSslSha1Core {
    #[inline]
    fn update_blocks(&mut self, blocks: &[Block<Self>]) {
        // SAFETY: `blocks` is `blocks.len() * 64` readable bytes.
        unsafe {
            self.compress(blocks.as_ptr().cast::<c_void>(), blocks.len() * 64);
        }
    }
}

impl FixedOutputCore for OpenSslSha1Core {
    #[inline]
    fn finalize_fixed_core(&mut self, buffer: &mut Buffer<Self>, out: &mut Output<Self>) {
        // The padding is RustCrypto's (as in the `sha1` crate), not SHA1_Final's: that
        // one copies the tail into the context and wipes it byte by byte on every call,
        // a few hundred instructions per HMAC that the Drop below does once instead.
        let bit_len = 512 * self.blocks + 8 * buffer.get_pos() as u64;
        buffer.len64_padding_be(bit_len, |block| {
            // SAFETY: one block of 64 bytes.
            unsafe {
                self.compress(block.as_ptr().cast::<c_void>(), 64);
            }
        });
        for (chunk, word) in out.chunks_exact_mut(4).zip(self.h) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
    }
}

impl Default for OpenSslSha1Core {
    #[inline]
    fn default() -> Self {
        OpenSslSha1Core { h: H0, blocks: 0 }
    }
}

impl Reset for OpenSslSha1Core {
    #[inline]
    fn reset(&mut self) {
        *self = Self::default();
    }
}

impl AlgorithmName for OpenSslSha1Core {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sha1")
    }
}

impl fmt::Debug for OpenSslSha1Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OpenSslSha1Core { .. }")
    }
}

impl Drop for OpenSslSha1Core {
    fn drop(&mut self) {
        // The chaining values of a keyed HMAC state are as good as the key for
        // computing MACs.
        self.h.zeroize();
        self.blocks.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for OpenSslSha1Core {}

digest::buffer_fixed!(
    /// SHA-1 (FIPS 180-4) with OpenSSL's compression; wiped on drop (the core above,
    /// and RustCrypto's block buffer under `digest`'s `zeroize` feature).
    pub struct Sha1(OpenSslSha1Core);
    impl: BaseFixedTraits AlgorithmName Default Clone HashMarker Reset FixedOutputReset;
);

impl zeroize::ZeroizeOnDrop for Sha1 {}

#[cfg(test)]
mod tests {
    use digest::Digest;
    use hmac::{Hmac, KeyInit, Mac};

    use super::Sha1;

    #[test]
    fn matches_openssl_and_rustcrypto_at_every_length_around_the_block_edges() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 129, 300] {
            let ours: [u8; 20] = Sha1::digest(&data[..len]).into();
            assert_eq!(ours, openssl::sha::sha1(&data[..len]), "len {len}");
            assert_eq!(ours.as_slice(), sha1::Sha1::digest(&data[..len]).as_slice());
            // Fed in uneven pieces: the buffering must carry partial blocks over.
            let mut h = Sha1::new();
            for piece in data[..len].chunks(17) {
                h.update(piece);
            }
            assert_eq!(
                h.finalize().as_slice(),
                ours.as_slice(),
                "len {len} chunked"
            );
        }
    }

    #[test]
    fn hmac_matches_rfc2202() {
        // RFC 2202 test cases 1 and 6 (an 80-byte key, hashed first).
        let mut m = <Hmac<Sha1> as KeyInit>::new_from_slice(&[0x0b; 20]).unwrap();
        m.update(b"Hi There");
        assert_eq!(
            hex::encode(m.finalize().into_bytes()),
            "b617318655057264e28bc0b6fb378c8ef146be00"
        );
        let mut m = <Hmac<Sha1> as KeyInit>::new_from_slice(&[0xaa; 80]).unwrap();
        m.update(b"Test Using Larger Than Block-Size Key - Hash Key First");
        assert_eq!(
            hex::encode(m.finalize().into_bytes()),
            "aa4ae5e15272d00e95705637ce8a3b55ed402112"
        );
    }
}
