//! The octet-level pieces WTP, WSP and WBXML share: a bounds-checked reader, the
//! variable-length unsigned integer (`uintvar`, WAP-230 §8.1.2, the same `mb_u_int32` as
//! WAP-192 §5.1) and the decode error every layer returns.

/// Longest uintvar the standards allow: five octets carry 32 bits.
const UINTVAR_MAX_OCTETS: usize = 5;

/// Why bytes from the network could not be read. `field` names the PDU field (or WBXML
/// construct) being read, so a capture can be checked against the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes ended inside `field`.
    #[error("truncated in {field}")]
    Truncated { field: &'static str },
    /// A uintvar longer than five octets or above 32 bits.
    #[error("uintvar in {field} is longer than 32 bits")]
    UintvarTooLong { field: &'static str },
    /// An integer longer than the field allows.
    #[error("integer in {field} is longer than {max_octets} octets")]
    IntegerTooLong {
        field: &'static str,
        max_octets: usize,
    },
    /// A text string without its terminating NUL, or not UTF-8.
    #[error("text in {field} is not NUL-terminated UTF-8")]
    BadText { field: &'static str },
    /// A code point the standard leaves unassigned (or reserved) in `field`.
    #[error("unassigned value 0x{value:02x} in {field}")]
    Unassigned { field: &'static str, value: u32 },
    /// Octets left over after a PDU that has no room for them.
    #[error("{extra} unexpected octets after {field}")]
    Trailing { field: &'static str, extra: usize },
    /// A structure nested or repeated beyond what any real peer sends.
    #[error("{field} exceeds its limit of {limit}")]
    TooLarge { field: &'static str, limit: usize },
}

/// Appends `v` as a uintvar: seven bits per octet, most significant first, the high bit
/// set on every octet but the last.
pub fn put_uintvar(out: &mut Vec<u8>, v: u32) {
    let mut groups = [0u8; UINTVAR_MAX_OCTETS];
    let mut n = 0;
    let mut rest = v;
    loop {
        groups[n] = (rest & 0x7F) as u8;
        n += 1;
        rest >>= 7;
        if rest == 0 {
            break;
        }
    }
    for i in (0..n).rev() {
        out.push(groups[i] | if i > 0 { 0x80 } else { 0 });
    }
}

/// Appends a length as a uintvar. Lengths here come from buffers this process built or
/// received in one datagram, so they fit 32 bits; a larger one saturates rather than
/// wrapping (and the peer then reports a truncated PDU instead of misreading it).
pub fn put_len(out: &mut Vec<u8>, len: usize) {
    put_uintvar(out, u32::try_from(len).unwrap_or(u32::MAX));
}

/// A bounds-checked reader over one PDU's bytes.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes }
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// The next octet without consuming it.
    pub fn peek(&self, field: &'static str) -> Result<u8, DecodeError> {
        self.bytes
            .first()
            .copied()
            .ok_or(DecodeError::Truncated { field })
    }

    pub fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        let (&b, rest) = self
            .bytes
            .split_first()
            .ok_or(DecodeError::Truncated { field })?;
        self.bytes = rest;
        Ok(b)
    }

    pub fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        let b = self.take(2, field)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        if n > self.bytes.len() {
            return Err(DecodeError::Truncated { field });
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub fn uintvar(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        let mut v: u64 = 0;
        for _ in 0..UINTVAR_MAX_OCTETS {
            let b = self.u8(field)?;
            v = (v << 7) | u64::from(b & 0x7F);
            if b & 0x80 == 0 {
                return u32::try_from(v).map_err(|_| DecodeError::UintvarTooLong { field });
            }
        }
        Err(DecodeError::UintvarTooLong { field })
    }

    /// A uintvar length followed by that many octets.
    pub fn uintvar_bytes(&mut self, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let len = self.uintvar(field)? as usize;
        self.take(len, field)
    }

    /// The octets up to a NUL, which is consumed and not returned.
    pub fn until_nul(&mut self, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self
            .bytes
            .iter()
            .position(|b| *b == 0)
            .ok_or(DecodeError::BadText { field })?;
        let text = &self.bytes[..end];
        self.bytes = &self.bytes[end + 1..];
        Ok(text)
    }

    /// A NUL-terminated UTF-8 string.
    pub fn text(&mut self, field: &'static str) -> Result<String, DecodeError> {
        let raw = self.until_nul(field)?;
        String::from_utf8(raw.to_vec()).map_err(|_| DecodeError::BadText { field })
    }

    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }

    /// Fails when octets are left.
    pub fn finish(&self, field: &'static str) -> Result<(), DecodeError> {
        match self.bytes.len() {
            0 => Ok(()),
            extra => Err(DecodeError::Trailing { field, extra }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uintvar(v: u32) -> Vec<u8> {
        let mut out = Vec::new();
        put_uintvar(&mut out, v);
        out
    }

    #[test]
    fn uintvars_match_the_specification_examples() {
        // WAP-230 §8.1.2: 0xA0 is 0x81 0x20; values below 128 take one octet.
        assert_eq!(uintvar(0), [0x00]);
        assert_eq!(uintvar(0x7F), [0x7F]);
        assert_eq!(uintvar(0xA0), [0x81, 0x20]);
        assert_eq!(uintvar(0x3FFF), [0xFF, 0x7F]);
        assert_eq!(uintvar(u32::MAX), [0x8F, 0xFF, 0xFF, 0xFF, 0x7F]);
        for v in [0, 1, 127, 128, 16_383, 16_384, 1 << 28, u32::MAX] {
            let bytes = uintvar(v);
            let mut c = Cursor::new(&bytes);
            assert_eq!(c.uintvar("t").unwrap(), v);
            assert!(c.is_empty());
        }
        let mut c = Cursor::new(&[0x81, 0x80, 0x80, 0x80, 0x80, 0x00]);
        assert_eq!(
            c.uintvar("t"),
            Err(DecodeError::UintvarTooLong { field: "t" })
        );
        let mut c = Cursor::new(&[0x9F, 0xFF, 0xFF, 0xFF, 0x7F]);
        assert!(c.uintvar("t").is_err());
        let mut c = Cursor::new(&[0x81]);
        assert_eq!(c.uintvar("t"), Err(DecodeError::Truncated { field: "t" }));
    }

    #[test]
    fn text_needs_its_nul() {
        let mut c = Cursor::new(b"ab\0cd");
        assert_eq!(c.text("t").unwrap(), "ab");
        assert_eq!(c.text("t"), Err(DecodeError::BadText { field: "t" }));
        assert_eq!(
            c.finish("t"),
            Err(DecodeError::Trailing {
                field: "t",
                extra: 2
            })
        );
    }
}
