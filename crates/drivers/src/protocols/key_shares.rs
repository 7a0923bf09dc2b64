//! The key share sizes of a (D)TLS 1.3 hello, read off the wire: what the hybrid
//! X25519MLKEM768 group costs in the ClientHello and the ServerHello, checked against
//! FIPS 203's ML-KEM-768 sizes (encapsulation key 1184 B, ciphertext 1088 B) plus
//! X25519's 32 B (draft-ietf-tls-ecdhe-mlkem: the client's share is the ML-KEM key and
//! the X25519 key, 1216 B; the server's the ciphertext and its X25519 key, 1120 B).

use anyhow::{anyhow, bail};

/// FIPS 203, ML-KEM-768: encapsulation key and ciphertext (bytes).
pub const ML_KEM_768_EK: usize = 1184;
pub const ML_KEM_768_CT: usize = 1088;
/// RFC 7748: an X25519 public key (bytes).
pub const X25519_KEY: usize = 32;

/// The random of a HelloRetryRequest (RFC 8446 section 4.1.3), which a ServerHello
/// reader must skip.
const HRR_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

const KEY_SHARE: usize = 51;

/// Which record layer carries the hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// TLS 1.3: 5-byte record header, 4-byte handshake header.
    Tls,
    /// DTLS 1.3 plaintext: 13-byte record header, 12-byte handshake header, and a
    /// legacy_cookie field in the ClientHello.
    Dtls,
}

fn num(d: &[u8], at: usize, n: usize) -> anyhow::Result<usize> {
    let b = d
        .get(at..at + n)
        .ok_or_else(|| anyhow!("hello cut short at byte {at}"))?;
    Ok(b.iter().fold(0usize, |a, x| (a << 8) | usize::from(*x)))
}

/// Skips a vector with an `n`-byte length at `at`; returns the offset after it.
fn skip(d: &[u8], at: usize, n: usize) -> anyhow::Result<usize> {
    Ok(at + n + num(d, at, n)?)
}

/// The key_share extension's body of a hello whose extensions start at `at`.
fn key_share_ext(d: &[u8], mut at: usize) -> anyhow::Result<Option<&[u8]>> {
    let end = at + 2 + num(d, at, 2)?;
    at += 2;
    while at < end {
        let code = num(d, at, 2)?;
        let len = num(d, at + 2, 2)?;
        let body = d
            .get(at + 4..at + 4 + len)
            .ok_or_else(|| anyhow!("extension runs past the hello"))?;
        if code == KEY_SHARE {
            return Ok(Some(body));
        }
        at += 4 + len;
    }
    Ok(None)
}

fn body_start(wire: Wire, d: &[u8], msg_type: u8) -> anyhow::Result<usize> {
    let (record, handshake) = match wire {
        Wire::Tls => (5, 4),
        Wire::Dtls => (13, 12),
    };
    if d.first() != Some(&22) || d.get(record) != Some(&msg_type) {
        bail!("not a plaintext hello of type {msg_type}");
    }
    Ok(record + handshake)
}

/// The first key share's key_exchange length in a ClientHello datagram or record
/// (unfragmented); `None` when it sends no key share.
pub fn client_share(wire: Wire, d: &[u8]) -> anyhow::Result<Option<usize>> {
    let mut at = body_start(wire, d, 1)? + 2 + 32;
    at = skip(d, at, 1)?; // legacy_session_id
    if wire == Wire::Dtls {
        at = skip(d, at, 1)?; // legacy_cookie
    }
    at = skip(d, at, 2)?; // cipher_suites
    at = skip(d, at, 1)?; // legacy_compression_methods
    let Some(ks) = key_share_ext(d, at)? else {
        return Ok(None);
    };
    if num(ks, 0, 2)? == 0 {
        return Ok(None);
    }
    Ok(Some(num(ks, 4, 2)?))
}

/// The key share's key_exchange length in a ServerHello; `None` for a
/// HelloRetryRequest or a hello without one.
pub fn server_share(wire: Wire, d: &[u8]) -> anyhow::Result<Option<usize>> {
    let start = body_start(wire, d, 2)?;
    let random = d
        .get(start + 2..start + 34)
        .ok_or_else(|| anyhow!("ServerHello cut short"))?;
    if random == HRR_RANDOM {
        return Ok(None);
    }
    let mut at = skip(d, start + 34, 1)?; // legacy_session_id_echo
    at += 2 + 1; // cipher_suite, legacy_compression_method
    Ok(match key_share_ext(d, at)? {
        Some(ks) => Some(num(ks, 2, 2)?),
        None => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_hello_is_an_error_not_a_panic() {
        assert!(client_share(Wire::Tls, &[22, 3, 3, 0, 9, 1]).is_err());
        assert!(server_share(Wire::Dtls, &[22]).is_err());
        assert!(client_share(Wire::Tls, &[]).is_err());
    }
}
