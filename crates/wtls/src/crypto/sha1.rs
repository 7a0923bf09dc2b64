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
//! whole blocks (`SHA1_Update` on a block-aligned context goes straight to its block
//! function); the buffering and the key pads stay RustCrypto's, and the context (plain
//! data: chaining values, length, an unused block buffer) is zeroized on drop, so a
//! keyed HMAC state cached for a connection's lifetime is wiped with it.

use std::ffi::c_void;
use std::fmt;
use std::mem::MaybeUninit;

use digest::block_api::{
    AlgorithmName, Block, BlockSizeUser, Buffer, BufferKindUser, Eager, FixedOutputCore,
    OutputSizeUser, Reset, UpdateCore,
};
use digest::typenum::{U20, U64};
use digest::{HashMarker, Output};
use openssl_sys::SHA_CTX;
use zeroize::Zeroize;

/// Block-level SHA-1 state: an OpenSSL `SHA_CTX` that only ever holds whole blocks.
#[derive(Clone)]
pub struct OpenSslSha1Core {
    ctx: SHA_CTX,
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
        let bytes = blocks.len() * 64;
        // SAFETY: `ctx` was initialised by SHA1_Init; `blocks` is `bytes` readable bytes.
        // SHA1_Update cannot fail for a valid context (it returns 1).
        unsafe {
            openssl_sys::SHA1_Update(&mut self.ctx, blocks.as_ptr().cast::<c_void>(), bytes);
        }
    }
}

impl FixedOutputCore for OpenSslSha1Core {
    #[inline]
    fn finalize_fixed_core(&mut self, buffer: &mut Buffer<Self>, out: &mut Output<Self>) {
        // The padding is RustCrypto's (as in the `sha1` crate), not SHA1_Final's: that
        // one copies the tail into the context and wipes it byte by byte on every call,
        // a few hundred instructions per HMAC that the Drop below does once instead.
        // OpenSSL counts the bits of the whole blocks it has compressed in Nh:Nl.
        let hashed_bits = (u64::from(self.ctx.Nh) << 32) | u64::from(self.ctx.Nl);
        let bit_len = hashed_bits + 8 * buffer.get_pos() as u64;
        let ctx = &mut self.ctx;
        buffer.len64_padding_be(bit_len, |block| {
            // SAFETY: as in `update_blocks`, one block of 64 bytes.
            unsafe {
                openssl_sys::SHA1_Update(ctx, block.as_ptr().cast::<c_void>(), 64);
            }
        });
        let h = [ctx.h0, ctx.h1, ctx.h2, ctx.h3, ctx.h4];
        for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
    }
}

impl Default for OpenSslSha1Core {
    #[inline]
    fn default() -> Self {
        let mut ctx = MaybeUninit::<SHA_CTX>::uninit();
        // SAFETY: SHA1_Init initialises every field of the context it is given.
        let ctx = unsafe {
            openssl_sys::SHA1_Init(ctx.as_mut_ptr());
            ctx.assume_init()
        };
        OpenSslSha1Core { ctx }
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
        // Every field of the context: the chaining values of a keyed HMAC state are as
        // good as the key for computing MACs.
        let c = &mut self.ctx;
        for word in [
            &mut c.h0, &mut c.h1, &mut c.h2, &mut c.h3, &mut c.h4, &mut c.Nl, &mut c.Nh,
        ] {
            word.zeroize();
        }
        c.data.zeroize();
        c.num.zeroize();
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
