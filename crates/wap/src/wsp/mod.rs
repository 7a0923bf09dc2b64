//! WSP (WAP-230): the PDUs of connectionless and connection-mode sessions, and the
//! binary header encoding with its well-known tables, both directions (a client encodes
//! requests and decodes replies; the gateway does the opposite).
//!
//! Connectionless WSP (ports 9200/9202) puts a one-octet transaction identifier before
//! every PDU (§8.2.1); connection mode (9201/9203) carries the PDU bare as the user data of
//! a WTP transaction. [`Pdu::decode`] reads the bare form, [`decode_connectionless`] the
//! other.

mod headers;
mod pdu;
mod tables;

use std::fmt;

use crate::codec::{Cursor, DecodeError};

pub use headers::{Charset, FieldName, Header, HeaderName, Headers, Language, Value};
pub use pdu::{
    decode_connectionless, encode_connectionless, AbortReason, Capabilities, GetMethod, Pdu,
    PduType, PostMethod, Version,
};

/// A WSP status code (WAP-230 Table 36): the HTTP status packed into one octet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status(pub u8);

impl Status {
    pub const OK: Status = Status(0x20);

    /// The HTTP status it stands for. The high nibble is the hundreds digit and the low
    /// nibble the rest (0x20 = 200, 0x44 = 404), except that 4xx overflows into 0x5_
    /// (0x50 = 416) and 5xx therefore starts at 0x60 (0x60 = 500). `None` for octets
    /// outside the table (Kannel's `wsp_convert_http_status_to_wsp_status` is the same
    /// mapping the other way).
    pub fn http(self) -> Option<u16> {
        let (high, low) = (u16::from(self.0 >> 4), u16::from(self.0 & 0x0F));
        match high {
            1..=4 => Some(high * 100 + low),
            5 => Some(416 + low),
            6 => Some(500 + low),
            _ => None,
        }
    }

    /// The WSP octet of an HTTP status, if the table has one.
    pub fn from_http(code: u16) -> Option<Status> {
        let (hundreds, rest) = (code / 100, code % 100);
        let octet = match (hundreds, rest) {
            (1..=4, 0..=15) => hundreds * 16 + rest,
            (4, 16..=31) => 0x50 + (rest - 16),
            (5, 0..=15) => 0x60 + rest,
            _ => return None,
        };
        Some(Status(octet as u8))
    }

    /// The HTTP status, or the nearest class's generic one (x00) when the exact code has
    /// no octet (299 → 200, 599 → 500): what a gateway answers for an origin's unusual code.
    pub fn from_http_or_class(code: u16) -> Status {
        Status::from_http(code)
            .or_else(|| Status::from_http(code / 100 * 100))
            .unwrap_or(Status(0x60))
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.http() {
            Some(code) => write!(f, "{code}"),
            None => write!(f, "unassigned WSP status 0x{:02x}", self.0),
        }
    }
}

/// A media type as WSP encodes it (WAP-230 §8.4.2.24).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentType {
    /// A well-known media type by its number (Table 40; the octet minus 0x80).
    WellKnown(u8),
    /// A media type registered with a longer number (Long-integer form).
    Registered(u32),
    /// A media type written out (Extension-media).
    Text(String),
}

impl ContentType {
    /// `text/vnd.wap.wml`
    pub const WML: ContentType = ContentType::WellKnown(0x08);
    /// `application/vnd.wap.wmlc`
    pub const WMLC: ContentType = ContentType::WellKnown(0x14);
    /// `text/vnd.wap.wmlscript`
    pub const WMLSCRIPT: ContentType = ContentType::WellKnown(0x09);
    /// `application/vnd.wap.wmlscriptc`
    pub const WMLSCRIPTC: ContentType = ContentType::WellKnown(0x15);
    /// `image/vnd.wap.wbmp`
    pub const WBMP: ContentType = ContentType::WellKnown(0x21);
    /// `*/*`
    pub const ANY: ContentType = ContentType::WellKnown(0x00);

    /// The well-known number of a media type name, if it has one.
    pub fn well_known(name: &str) -> Option<ContentType> {
        tables::CONTENT_TYPES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .map(|i| ContentType::WellKnown(i as u8))
    }

    /// The short form when the name is well known, the text otherwise. Parameters
    /// (`; charset=...`) are dropped: WSP carries them separately.
    pub fn from_name(name: &str) -> ContentType {
        let bare = name.split(';').next().unwrap_or("").trim();
        ContentType::well_known(bare).unwrap_or_else(|| ContentType::Text(bare.to_string()))
    }

    /// Whether two values name the same media type (a well-known one may come as text).
    pub fn same_as(&self, other: &ContentType) -> bool {
        self.to_string().eq_ignore_ascii_case(&other.to_string())
    }

    /// Encodes as the short form, the general form (registered numbers), or text.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            ContentType::WellKnown(n) => out.push(0x80 | n),
            ContentType::Registered(n) => {
                let bytes = n.to_be_bytes();
                let skip = bytes.iter().take_while(|b| **b == 0).count().min(3);
                // Content-general-form: Value-length, then Long-integer.
                out.push((1 + 4 - skip) as u8);
                out.push((4 - skip) as u8);
                out.extend_from_slice(&bytes[skip..]);
            }
            ContentType::Text(t) => {
                out.extend_from_slice(t.as_bytes());
                out.push(0);
            }
        }
    }

    /// Reads a content-type value and leaves the cursor after it; the parameters of the
    /// general form are skipped.
    pub(crate) fn read(c: &mut Cursor<'_>) -> Result<ContentType, DecodeError> {
        const FIELD: &str = "WSP content type";
        let first = c.peek(FIELD)?;
        match first {
            0x80..=0xFF => {
                c.u8(FIELD)?;
                Ok(ContentType::WellKnown(first & 0x7F))
            }
            0x00..=0x1F => {
                c.u8(FIELD)?;
                let len = if first == 31 {
                    c.uintvar(FIELD)? as usize
                } else {
                    usize::from(first)
                };
                let mut inner = Cursor::new(c.take(len, FIELD)?);
                media_type(&mut inner)
            }
            _ => text_string(c, FIELD).map(ContentType::Text),
        }
    }
}

/// Media-type inside a Content-general-form: a short or long integer, or text.
fn media_type(c: &mut Cursor<'_>) -> Result<ContentType, DecodeError> {
    const FIELD: &str = "WSP media type";
    let first = c.u8(FIELD)?;
    match first {
        0x80..=0xFF => Ok(ContentType::WellKnown(first & 0x7F)),
        1..=4 => {
            let bytes = c.take(usize::from(first), FIELD)?;
            let n = bytes.iter().fold(0u32, |v, b| (v << 8) | u32::from(*b));
            Ok(ContentType::Registered(n))
        }
        0 => Ok(ContentType::Text(String::new())),
        5..=0x1F => Err(DecodeError::IntegerTooLong {
            field: FIELD,
            max_octets: 4,
        }),
        _ => {
            let tail = text_string(c, FIELD)?;
            if first == 0x7F {
                return Ok(ContentType::Text(tail));
            }
            let mut bytes = vec![first];
            bytes.extend_from_slice(tail.as_bytes());
            String::from_utf8(bytes)
                .map(ContentType::Text)
                .map_err(|_| DecodeError::BadText { field: FIELD })
        }
    }
}

/// A NUL-terminated text string; a leading quote octet 0x7F is dropped (§8.4.2.1).
pub(crate) fn text_string(c: &mut Cursor<'_>, field: &'static str) -> Result<String, DecodeError> {
    let raw = c.until_nul(field)?;
    let text = raw.strip_prefix(&[0x7F]).unwrap_or(raw);
    String::from_utf8(text.to_vec()).map_err(|_| DecodeError::BadText { field })
}

impl fmt::Display for ContentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContentType::WellKnown(n) => match tables::CONTENT_TYPES.get(usize::from(*n)) {
                Some(name) => f.write_str(name),
                None => write!(f, "well-known content type 0x{n:02x}"),
            },
            ContentType::Registered(n) => write!(f, "registered content type 0x{n:04x}"),
            ContentType::Text(t) => f.write_str(t),
        }
    }
}

#[cfg(test)]
mod tests;
