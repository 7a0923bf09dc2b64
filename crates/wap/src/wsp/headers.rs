//! WSP header encoding (WAP-230 §8.4): each header is a well-known field number
//! (`0x80 | code`) or a token-text name, then a value in one of three shapes the first
//! octet tells apart: a short integer (0x80-0xFF), a length-prefixed block (0-30, or 31
//! and a uintvar), or a NUL-terminated text string (0x20-0x7F).

use std::fmt;

use super::tables::{CHARSETS, FIELD_NAMES, LANGUAGES};
use super::{text_string, ContentType};
use crate::codec::{put_len, Cursor, DecodeError};

/// Most headers one PDU may carry; more is refused.
const MAX_HEADERS: usize = 256;

/// A well-known header field (Table 39).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldName(u8);

impl FieldName {
    pub const ACCEPT: FieldName = FieldName(0x00);
    pub const ACCEPT_CHARSET: FieldName = FieldName(0x01);
    pub const ACCEPT_ENCODING: FieldName = FieldName(0x02);
    pub const ACCEPT_LANGUAGE: FieldName = FieldName(0x03);
    pub const AGE: FieldName = FieldName(0x05);
    pub const CONTENT_LENGTH: FieldName = FieldName(0x0D);
    pub const CONTENT_TYPE: FieldName = FieldName(0x11);
    pub const LOCATION: FieldName = FieldName(0x1C);
    pub const MAX_FORWARDS: FieldName = FieldName(0x1E);
    pub const SERVER: FieldName = FieldName(0x26);
    pub const USER_AGENT: FieldName = FieldName(0x29);
    /// Accept-Charset as re-assigned in WSP 1.3.
    pub const ACCEPT_CHARSET_1_3: FieldName = FieldName(0x3B);

    /// The field with this number, if assigned.
    pub fn new(code: u8) -> Option<FieldName> {
        (usize::from(code) < FIELD_NAMES.len()).then_some(FieldName(code))
    }

    pub fn code(self) -> u8 {
        self.0
    }

    pub fn name(self) -> &'static str {
        FIELD_NAMES[usize::from(self.0)]
    }

    /// The earliest number of a field name (case-insensitive), as a 1.1 peer expects.
    pub fn from_name(name: &str) -> Option<FieldName> {
        FIELD_NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .map(|i| FieldName(i as u8))
    }
}

/// A character set by its IANA MIBenum (Table 42). 0 stands for Any-charset (`*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charset(pub u32);

impl Charset {
    pub const ANY: Charset = Charset(0);
    pub const US_ASCII: Charset = Charset(3);
    pub const ISO_8859_1: Charset = Charset(4);
    pub const UTF_8: Charset = Charset(106);
    pub const UCS_2: Charset = Charset(1000);

    pub fn from_name(name: &str) -> Option<Charset> {
        CHARSETS
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(v, _)| Charset(*v))
    }
}

impl fmt::Display for Charset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("*");
        }
        match CHARSETS.iter().find(|(v, _)| *v == self.0) {
            Some((_, n)) => f.write_str(n),
            None => write!(f, "charset {}", self.0),
        }
    }
}

/// A language by its ISO 639 number (Table 41).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Language(pub u8);

impl Language {
    pub const ENGLISH: Language = Language(0x19);
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match LANGUAGES.iter().find(|(v, _)| *v == self.0) {
            Some((_, n)) => f.write_str(n),
            None => write!(f, "language 0x{:02x}", self.0),
        }
    }
}

/// A header's name: well known, or written out (an application header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderName {
    WellKnown(FieldName),
    Text(String),
}

impl HeaderName {
    pub fn as_str(&self) -> &str {
        match self {
            HeaderName::WellKnown(f) => f.name(),
            HeaderName::Text(t) => t,
        }
    }
}

/// A header value in its encoded shape, before the field gives it a meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A short integer (0-127, sent as 0x80 | n).
    Short(u8),
    /// A length-prefixed block: a long integer's octets, or a general form.
    Data(Vec<u8>),
    /// A text string (sent NUL-terminated).
    Text(String),
}

impl Value {
    /// An integer as Short-integer when below 128, else Long-integer.
    pub fn integer(v: u64) -> Value {
        if v < 0x80 {
            return Value::Short(v as u8);
        }
        let bytes = v.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        Value::Data(bytes[skip..].to_vec())
    }

    /// The integer this value holds, if it is one (Short or a Long-integer of at most
    /// eight octets).
    pub fn as_integer(&self) -> Option<u64> {
        match self {
            Value::Short(v) => Some(u64::from(*v)),
            Value::Data(d) if !d.is_empty() && d.len() <= 8 => {
                Some(d.iter().fold(0u64, |v, b| (v << 8) | u64::from(*b)))
            }
            _ => None,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::Short(v) => out.push(0x80 | v),
            Value::Data(d) => {
                if d.len() <= 30 {
                    out.push(d.len() as u8);
                } else {
                    out.push(31);
                    put_len(out, d.len());
                }
                out.extend_from_slice(d);
            }
            Value::Text(t) => {
                // A text beginning with an octet of 0x80 or more needs the quote 0x7F.
                if t.as_bytes().first().is_some_and(|b| *b >= 0x80) {
                    out.push(0x7F);
                }
                out.extend_from_slice(t.as_bytes());
                out.push(0);
            }
        }
    }

    fn read(c: &mut Cursor<'_>) -> Result<Value, DecodeError> {
        const FIELD: &str = "WSP header value";
        let first = c.peek(FIELD)?;
        Ok(match first {
            0x80..=0xFF => Value::Short(c.u8(FIELD)? & 0x7F),
            0..=30 => {
                c.u8(FIELD)?;
                Value::Data(c.take(usize::from(first), FIELD)?.to_vec())
            }
            31 => {
                c.u8(FIELD)?;
                Value::Data(c.uintvar_bytes(FIELD)?.to_vec())
            }
            _ => Value::Text(text_string(c, FIELD)?),
        })
    }
}

/// One header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub name: HeaderName,
    pub value: Value,
}

impl Header {
    fn well_known(field: FieldName, value: Value) -> Header {
        Header {
            name: HeaderName::WellKnown(field),
            value,
        }
    }

    /// `Accept: <media type>`.
    pub fn accept(media: &ContentType) -> Header {
        Header::well_known(FieldName::ACCEPT, media_value(media))
    }

    /// `Accept-Charset`: a short integer below 128, else the general form holding a
    /// long integer.
    pub fn accept_charset(charset: Charset) -> Header {
        let value = match Value::integer(u64::from(charset.0)) {
            Value::Data(octets) => {
                let mut general = vec![octets.len() as u8];
                general.extend(octets);
                Value::Data(general)
            }
            short => short,
        };
        Header::well_known(FieldName::ACCEPT_CHARSET, value)
    }

    pub fn accept_language(language: Language) -> Header {
        Header::well_known(FieldName::ACCEPT_LANGUAGE, Value::Short(language.0 & 0x7F))
    }

    pub fn user_agent(agent: &str) -> Header {
        Header::well_known(FieldName::USER_AGENT, Value::Text(agent.to_string()))
    }

    pub fn content_length(len: u64) -> Header {
        Header::well_known(FieldName::CONTENT_LENGTH, Value::integer(len))
    }

    /// A header by its HTTP name: well known with a text value, or an application
    /// header. What a gateway passes on when it has no typed encoding for a field.
    pub fn text(name: &str, value: &str) -> Header {
        let name = match FieldName::from_name(name) {
            Some(f) if !typed_field(f) => HeaderName::WellKnown(f),
            _ => HeaderName::Text(name.to_string()),
        };
        Header {
            name,
            value: Value::Text(value.to_string()),
        }
    }

    /// The value as HTTP text, interpreted by its field.
    pub fn http_value(&self) -> String {
        let field = match &self.name {
            HeaderName::WellKnown(f) => Some(*f),
            HeaderName::Text(_) => None,
        };
        match (field, &self.value) {
            (_, Value::Text(t)) => t.clone(),
            (Some(FieldName::ACCEPT | FieldName::CONTENT_TYPE), Value::Short(n)) => {
                ContentType::WellKnown(*n).to_string()
            }
            (Some(FieldName::ACCEPT | FieldName::CONTENT_TYPE), Value::Data(d)) => {
                let mut general = vec![d.len().min(30) as u8];
                general.extend_from_slice(d);
                ContentType::read(&mut Cursor::new(&general))
                    .map(|t| t.to_string())
                    .unwrap_or_default()
            }
            (Some(FieldName::ACCEPT_CHARSET | FieldName::ACCEPT_CHARSET_1_3), v) => {
                charset_of(v).map(|c| c.to_string()).unwrap_or_default()
            }
            (Some(FieldName::ACCEPT_LANGUAGE), Value::Short(n)) => Language(*n).to_string(),
            (_, v) => match v.as_integer() {
                Some(n) => n.to_string(),
                None => String::new(),
            },
        }
    }

    /// The header as an HTTP name and value.
    pub fn to_http(&self) -> (String, String) {
        (self.name.as_str().to_string(), self.http_value())
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match &self.name {
            HeaderName::WellKnown(f) => out.push(0x80 | f.0),
            HeaderName::Text(t) => {
                out.extend_from_slice(t.as_bytes());
                out.push(0);
            }
        }
        self.value.encode(out);
    }

    fn read(c: &mut Cursor<'_>) -> Result<Header, DecodeError> {
        const FIELD: &str = "WSP header name";
        let first = c.peek(FIELD)?;
        let name = match first {
            0x80..=0xFF => {
                c.u8(FIELD)?;
                let code = first & 0x7F;
                HeaderName::WellKnown(FieldName::new(code).ok_or(DecodeError::Unassigned {
                    field: FIELD,
                    value: u32::from(code),
                })?)
            }
            // Code page shifts (0x01-0x1F short cuts, 0x7F and a page) name pages no
            // 1.x browser used; they are refused rather than misread.
            0x00..=0x1F | 0x7F => {
                return Err(DecodeError::Unassigned {
                    field: "WSP header code page shift",
                    value: u32::from(first),
                })
            }
            _ => HeaderName::Text(text_string(c, FIELD)?),
        };
        let value = match name {
            // An application header's value is always a text string.
            HeaderName::Text(_) => Value::Text(text_string(c, "WSP application header value")?),
            HeaderName::WellKnown(_) => Value::read(c)?,
        };
        Ok(Header { name, value })
    }
}

/// Fields whose values this module encodes in their binary forms: a text value for them
/// would be legal but is not what a WAP 1.x peer expects.
fn typed_field(f: FieldName) -> bool {
    matches!(
        f,
        FieldName::ACCEPT
            | FieldName::ACCEPT_CHARSET
            | FieldName::ACCEPT_LANGUAGE
            | FieldName::CONTENT_LENGTH
            | FieldName::CONTENT_TYPE
    )
}

fn media_value(media: &ContentType) -> Value {
    match media {
        ContentType::WellKnown(n) => Value::Short(*n),
        ContentType::Text(t) => Value::Text(t.clone()),
        ContentType::Registered(_) => {
            let mut out = Vec::new();
            media.encode(&mut out);
            Value::Data(out[1..].to_vec())
        }
    }
}

/// Accept-Charset: Any-charset (short 0), a short MIBenum, or the general form whose
/// first item is the charset as an integer (an optional q-value follows, ignored).
fn charset_of(v: &Value) -> Option<Charset> {
    match v {
        Value::Short(n) => Some(Charset(u32::from(*n))),
        Value::Data(d) => {
            let mut c = Cursor::new(d);
            let first = c.u8("WSP charset").ok()?;
            match first {
                0x80..=0xFF => Some(Charset(u32::from(first & 0x7F))),
                1..=4 => {
                    let octets = c.take(usize::from(first), "WSP charset").ok()?;
                    Some(Charset(
                        octets.iter().fold(0u32, |v, b| (v << 8) | u32::from(*b)),
                    ))
                }
                _ => None,
            }
        }
        Value::Text(t) => Charset::from_name(t),
    }
}

/// A block of headers, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers(pub Vec<Header>);

impl Headers {
    /// What a WAP 1.x browser announces: the compiled forms it decodes (WMLC, compiled
    /// WMLScript) and WBMP; UTF-8 and Latin-1; English; and the agent. A handset parses
    /// no WML text, so it does not accept `text/vnd.wap.wml`: a gateway whose origin
    /// serves WML compiles it (Kannel passes the text through when it is accepted).
    pub fn browser(user_agent: &str) -> Headers {
        Headers(vec![
            Header::accept(&ContentType::WMLC),
            Header::accept(&ContentType::WMLSCRIPTC),
            Header::accept(&ContentType::WBMP),
            Header::accept_charset(Charset::UTF_8),
            Header::accept_charset(Charset::ISO_8859_1),
            Header::accept_language(Language::ENGLISH),
            Header::user_agent(user_agent),
        ])
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        for h in &self.0 {
            h.encode(out);
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Reads headers until the bytes end.
    pub fn decode(bytes: &[u8]) -> Result<Headers, DecodeError> {
        let mut c = Cursor::new(bytes);
        let mut headers = Vec::new();
        while !c.is_empty() {
            if headers.len() == MAX_HEADERS {
                return Err(DecodeError::TooLarge {
                    field: "WSP headers",
                    limit: MAX_HEADERS,
                });
            }
            headers.push(Header::read(&mut c)?);
        }
        Ok(Headers(headers))
    }

    /// The media types an Accept header lists (empty: the client accepts anything).
    pub fn accepted_types(&self) -> Vec<ContentType> {
        self.0
            .iter()
            .filter(|h| h.name == HeaderName::WellKnown(FieldName::ACCEPT))
            .map(|h| ContentType::from_name(&h.http_value()))
            .collect()
    }

    /// Whether the client accepts `media` (directly, or through `*/*` or `type/*`).
    pub fn accepts(&self, media: &ContentType) -> bool {
        let accepted = self.accepted_types();
        let name = media.to_string();
        let major = name.split('/').next().unwrap_or("");
        accepted.is_empty()
            || accepted.iter().any(|a| {
                let a = a.to_string();
                a == "*/*" || a.eq_ignore_ascii_case(&name) || a == format!("{major}/*")
            })
    }

    pub fn get(&self, field: FieldName) -> Option<&Header> {
        self.0
            .iter()
            .find(|h| h.name == HeaderName::WellKnown(field))
    }
}
