//! Byte-level encoding and strict decoding of WTLS wire structures.
//!
//! Every wire structure implements [`Codec`]: `encode` appends its bytes, `read` consumes
//! exactly its bytes from a [`Reader`]. Reading never panics and never trusts a length:
//! each failure names the structure and field that was short or out of range, so the
//! handshake layer can turn it into the alert the peer should get
//! ([`DecodeError::alert`]).
//!
//! WTLS vectors carry 1- or 2-byte big-endian length prefixes (`<a..b>` in the
//! presentation language: 1 byte when the upper bound fits in a byte, 2 otherwise).

use crate::msgs::enums::AlertDescription;

/// Why a structure could not be read. `field` names the structure and field, as in
/// `"ClientHello.session_id"`, so that a log line or test failure says exactly where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Fewer bytes were left than the field needs.
    #[error("{field}: truncated (needed {needed} bytes, {available} left)")]
    Truncated {
        field: &'static str,
        needed: usize,
        available: usize,
    },
    /// A length or count lies outside the range the structure allows.
    #[error("{field}: length {length} outside {min}..={max}")]
    BadLength {
        field: &'static str,
        length: usize,
        min: usize,
        max: usize,
    },
    /// A code point that this implementation does not know.
    #[error("{field}: unknown value {value}")]
    UnknownValue { field: &'static str, value: u32 },
    /// A value that is known but not allowed here.
    #[error("{field}: illegal value: {defect}")]
    Illegal {
        field: &'static str,
        defect: IllegalValue,
    },
    /// Bytes remain after the structure ended.
    #[error("{field}: {extra} trailing bytes")]
    TrailingBytes { field: &'static str, extra: usize },
}

/// Why a known value is not allowed where it stands ([`DecodeError::Illegal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IllegalValue {
    /// A key exchange message under a suite that has none (shared secret, null).
    #[error("the negotiated key exchange suite sends no key exchange message")]
    NoKeyExchangeMessage,
    /// A key exchange message before a suite was negotiated, so its layout is unknown.
    #[error("no key exchange suite negotiated yet")]
    NoSuiteNegotiated,
    /// A cipher suite list whose byte length is not a multiple of the 2-byte entry.
    #[error("odd byte length for a list of 2-byte suites")]
    OddSuiteListLength,
    /// The record-type byte's reserved bit 4 is set.
    #[error("reserved bit 4 is set")]
    ReservedRecordTypeBit,
    /// A WTLS certificate version other than 1.
    #[error("only version 1 is defined")]
    UndefinedCertificateVersion,
}

impl DecodeError {
    /// The alert a peer should receive for this malformed input. Lengths and framing
    /// that do not add up are `decode_error`; values that parse but are not acceptable
    /// are `illegal_parameter` (the TLS convention, which WTLS inherits).
    pub fn alert(&self) -> AlertDescription {
        match self {
            DecodeError::Truncated { .. }
            | DecodeError::BadLength { .. }
            | DecodeError::TrailingBytes { .. } => AlertDescription::DecodeError,
            DecodeError::UnknownValue { .. } | DecodeError::Illegal { .. } => {
                AlertDescription::IllegalParameter
            }
        }
    }

    /// The field that failed.
    pub fn field(&self) -> &'static str {
        match self {
            DecodeError::Truncated { field, .. }
            | DecodeError::BadLength { field, .. }
            | DecodeError::UnknownValue { field, .. }
            | DecodeError::Illegal { field, .. }
            | DecodeError::TrailingBytes { field, .. } => field,
        }
    }
}

/// A cursor over received bytes. All reads are bounds-checked.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not yet consumed.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    pub fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.left() == 0
    }

    /// Offset of the cursor from the start of the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Consume exactly `n` bytes.
    pub fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        if self.left() < n {
            return Err(DecodeError::Truncated {
                field,
                needed: n,
                available: self.left(),
            });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Consume everything that is left.
    pub fn take_rest(&mut self) -> &'a [u8] {
        let out = self.rest();
        self.pos = self.buf.len();
        out
    }

    /// Consume a fixed-size array.
    pub fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], DecodeError> {
        let bytes = self.take(N, field)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take(1, field)?[0])
    }

    pub fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        let b = self.take(2, field)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        let b = self.take(4, field)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A vector with a 1-byte length prefix whose length must lie in `min..=max`.
    pub fn vec_u8(
        &mut self,
        min: usize,
        max: usize,
        field: &'static str,
    ) -> Result<&'a [u8], DecodeError> {
        let len = self.u8(field)? as usize;
        check_len(len, min, max, field)?;
        self.take(len, field)
    }

    /// A vector with a 2-byte length prefix whose length must lie in `min..=max`.
    pub fn vec_u16(
        &mut self,
        min: usize,
        max: usize,
        field: &'static str,
    ) -> Result<&'a [u8], DecodeError> {
        let len = self.u16(field)? as usize;
        check_len(len, min, max, field)?;
        self.take(len, field)
    }

    /// A sub-reader over a 2-byte length-prefixed region, for lists of structures.
    pub fn sub_u16(&mut self, field: &'static str) -> Result<Reader<'a>, DecodeError> {
        Ok(Reader::new(self.vec_u16(0, u16::MAX as usize, field)?))
    }

    /// A sub-reader over a 1-byte length-prefixed region.
    pub fn sub_u8(&mut self, field: &'static str) -> Result<Reader<'a>, DecodeError> {
        Ok(Reader::new(self.vec_u8(0, u8::MAX as usize, field)?))
    }

    /// Fails unless every byte has been consumed.
    pub fn expect_end(&self, field: &'static str) -> Result<(), DecodeError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::TrailingBytes {
                field,
                extra: self.left(),
            })
        }
    }
}

fn check_len(len: usize, min: usize, max: usize, field: &'static str) -> Result<(), DecodeError> {
    if len < min || len > max {
        Err(DecodeError::BadLength {
            field,
            length: len,
            min,
            max,
        })
    } else {
        Ok(())
    }
}

/// A wire structure: encodes itself and reads itself back.
pub trait Codec: Sized {
    /// Append the wire encoding to `out`.
    fn encode(&self, out: &mut Vec<u8>);

    /// Read exactly one instance from the cursor.
    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError>;

    /// The encoding as a fresh vector.
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Read from a buffer that must hold exactly one instance and nothing more.
    fn read_exact(buf: &[u8], field: &'static str) -> Result<Self, DecodeError> {
        let mut r = Reader::new(buf);
        let v = Self::read(&mut r)?;
        r.expect_end(field)?;
        Ok(v)
    }
}

/// Append a 1-byte length prefix and the bytes. Panics only on a programming error
/// (encoding more than the prefix can express is a bug in the sender, never input).
pub fn put_vec_u8(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = u8::try_from(bytes.len()).expect("vector longer than a 1-byte length allows");
    out.push(len);
    out.extend_from_slice(bytes);
}

/// Append a 2-byte length prefix and the bytes.
pub fn put_vec_u16(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = u16::try_from(bytes.len()).expect("vector longer than a 2-byte length allows");
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
}

pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Encode a 2-byte length-prefixed region whose contents `body` writes; the prefix is
/// patched afterwards so callers need not pre-compute the size.
pub fn put_u16_prefixed(out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.extend_from_slice(&[0, 0]);
    body(out);
    let len = u16::try_from(out.len() - at - 2).expect("region longer than a 2-byte length");
    out[at..at + 2].copy_from_slice(&len.to_be_bytes());
}

/// Same as [`put_u16_prefixed`] with a 1-byte prefix.
pub fn put_u8_prefixed(out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.push(0);
    body(out);
    let len = u8::try_from(out.len() - at - 1).expect("region longer than a 1-byte length");
    out[at] = len;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_reports_the_short_field() {
        let mut r = Reader::new(&[0x00, 0x05, 1, 2]);
        let err = r.vec_u16(0, 10, "Test.body").unwrap_err();
        assert_eq!(
            err,
            DecodeError::Truncated {
                field: "Test.body",
                needed: 5,
                available: 2
            }
        );
        assert_eq!(err.alert(), AlertDescription::DecodeError);
    }

    #[test]
    fn vector_bounds_are_enforced() {
        let mut r = Reader::new(&[9, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(matches!(
            r.vec_u8(0, 8, "SessionID"),
            Err(DecodeError::BadLength { length: 9, .. })
        ));
    }

    #[test]
    fn prefixed_regions_patch_their_length() {
        let mut out = vec![];
        put_u16_prefixed(&mut out, |o| o.extend_from_slice(&[1, 2, 3]));
        assert_eq!(out, [0, 3, 1, 2, 3]);
        let mut out = vec![];
        put_u8_prefixed(&mut out, |o| o.push(7));
        assert_eq!(out, [1, 7]);
    }

    #[test]
    fn expect_end_rejects_trailing_bytes() {
        let mut r = Reader::new(&[1, 2]);
        r.u8("x").unwrap();
        assert_eq!(
            r.expect_end("x"),
            Err(DecodeError::TrailingBytes {
                field: "x",
                extra: 1
            })
        );
    }
}
