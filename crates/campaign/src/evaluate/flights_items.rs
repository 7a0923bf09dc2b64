//! Where a DTLS 1.2 flight's bytes go: record headers, handshake headers, the
//! certificates and the cookie, read off the wire (RFC 6347 sections 4.1 and 4.2.2).
//! Records of epoch 1 (after ChangeCipherSpec) are encrypted: their header is counted,
//! their content is not opened.

use anyhow::{anyhow, bail};

/// DTLS 1.2 record header: type, version, epoch, sequence number, length.
pub const RECORD_HEADER: u32 = 13;
/// DTLS handshake header: type, length, message_seq, fragment_offset, fragment_length.
pub const HANDSHAKE_HEADER: u32 = 12;

const HANDSHAKE: u8 = 22;
const CLIENT_HELLO: u8 = 1;
const HELLO_VERIFY_REQUEST: u8 = 3;
const CERTIFICATE: u8 = 11;

/// The itemised bytes of one datagram or flight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Items {
    pub record_headers: u32,
    pub handshake_headers: u32,
    /// The Certificate message bodies (the certificate list with its length prefixes).
    pub certificates: u32,
    /// The cookie's bytes, in a HelloVerifyRequest or a ClientHello (without its length
    /// byte, which every ClientHello carries, empty or not).
    pub cookie: u32,
}

impl std::ops::AddAssign for Items {
    fn add_assign(&mut self, o: Items) {
        self.record_headers += o.record_headers;
        self.handshake_headers += o.handshake_headers;
        self.certificates += o.certificates;
        self.cookie += o.cookie;
    }
}

fn byte(b: &[u8], at: usize) -> anyhow::Result<u8> {
    b.get(at)
        .copied()
        .ok_or_else(|| anyhow!("DTLS 1.2 datagram cut short at byte {at}"))
}

fn be(b: &[u8], at: usize, n: usize) -> anyhow::Result<usize> {
    (at..at + n).try_fold(0usize, |a, i| Ok((a << 8) | usize::from(byte(b, i)?)))
}

/// Itemises one DTLS 1.2 datagram.
pub fn dtls12(d: &[u8]) -> anyhow::Result<Items> {
    let mut items = Items::default();
    let mut at = 0;
    while at < d.len() {
        let kind = byte(d, at)?;
        let epoch = be(d, at + 3, 2)?;
        let len = be(d, at + 11, 2)?;
        let body = at + RECORD_HEADER as usize;
        let end = body + len;
        if end > d.len() {
            bail!("DTLS 1.2 record runs past its datagram");
        }
        items.record_headers += RECORD_HEADER;
        if kind == HANDSHAKE && epoch == 0 {
            items += handshake(&d[body..end])?;
        }
        at = end;
    }
    Ok(items)
}

/// Itemises the plaintext handshake messages of one record.
fn handshake(r: &[u8]) -> anyhow::Result<Items> {
    let mut items = Items::default();
    let mut at = 0;
    while at < r.len() {
        let msg = byte(r, at)?;
        let frag_len = be(r, at + 9, 3)?;
        let body = at + HANDSHAKE_HEADER as usize;
        let end = body + frag_len;
        if end > r.len() {
            bail!("DTLS 1.2 handshake fragment runs past its record");
        }
        items.handshake_headers += HANDSHAKE_HEADER;
        let b = &r[body..end];
        match msg {
            CERTIFICATE => items.certificates += frag_len as u32,
            // server_version, then the cookie with its length byte
            HELLO_VERIFY_REQUEST => items.cookie += u32::from(byte(b, 2)?),
            // client_version, random, session_id, then the cookie
            CLIENT_HELLO => {
                let sid = usize::from(byte(b, 34)?);
                items.cookie += u32::from(byte(b, 35 + sid)?);
            }
            _ => {}
        }
        at = end;
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_or_lying_datagram_is_an_error_not_a_panic() {
        assert!(dtls12(&[22, 0xfe, 0xfd]).is_err());
        let mut rec = vec![22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40];
        rec.extend([0u8; 10]);
        assert!(dtls12(&rec).is_err());
        // one record with a handshake header whose fragment claims more than there is
        let mut rec = vec![22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12];
        rec.extend([11, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 9]);
        assert!(dtls12(&rec).is_err());
    }

    #[test]
    fn an_encrypted_record_counts_its_header_only() {
        let mut rec = vec![22, 0xfe, 0xfd, 0, 1, 0, 0, 0, 0, 0, 0, 0, 4];
        rec.extend([1, 2, 3, 4]);
        let i = dtls12(&rec).unwrap();
        assert_eq!(
            i,
            Items {
                record_headers: 13,
                ..Items::default()
            }
        );
    }
}
