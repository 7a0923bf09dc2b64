//! Connectionless WSP (WAP-230, the Wireless Session Protocol), as much of it as a client
//! needs to fetch one page through a WAP gateway: the Get request and the Reply.
//!
//! A WAP gateway's secure connectionless port, 9202, carries WSP PDUs inside WTLS
//! application-data records with no WTP in between (WAP-230 §8.1: in connectionless mode
//! every PDU starts with a one-byte transaction identifier that the Reply repeats).
//! That is what lets `wtlsperf client --wsp-get URL` test a real gateway end to end.
//!
//! Layouts (WAP-230 §8.2; the same facts are in Kannel's `wap/wsp_pdu.def` and
//! Wireshark's `packet-wsp.c`):
//!
//! ```text
//! Get:   TID(1) | PDU type 0x40 | uintvar uri_len | uri | headers (to the end)
//! Reply: TID(1) | PDU type 0x04 | status(1) | uintvar headers_len | content type and
//!        headers (headers_len bytes) | body (to the end)
//! ```
//!
//! No crate on crates.io implements WSP, so this small codec is written here.

use std::fmt;

/// PDU type of a Get request (WAP-230 Table 34, method Get with subtype 0).
pub const PDU_GET: u8 = 0x40;
/// PDU type of a Reply.
pub const PDU_REPLY: u8 = 0x04;
/// Longest uintvar WAP-230 §8.1.2 allows: 5 octets carry 32 bits.
const UINTVAR_MAX_OCTETS: usize = 5;

/// Why a WSP PDU could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WspError {
    /// The PDU ended inside `field`.
    #[error("WSP PDU truncated in {field}")]
    Truncated { field: &'static str },
    /// A uintvar longer than 5 octets or above 32 bits.
    #[error("WSP uintvar in {field} is longer than 32 bits")]
    UintvarTooLong { field: &'static str },
    /// Another PDU type where `expected` was wanted.
    #[error("expected a WSP {expected} PDU (type 0x{expected_type:02x}), got type 0x{found:02x} ({})", pdu_type_name(*found))]
    UnexpectedPduType {
        expected: &'static str,
        expected_type: u8,
        found: u8,
    },
    /// A Long-integer of more than 4 octets where a 32-bit number is expected.
    #[error("WSP integer in {field} is longer than 32 bits")]
    IntegerTooLong { field: &'static str },
    /// A text string without its terminating NUL, or not in UTF-8.
    #[error("WSP text string in {field} is not NUL-terminated UTF-8")]
    BadText { field: &'static str },
}

/// The name of a PDU type (WAP-230 Table 34), for messages.
pub fn pdu_type_name(t: u8) -> &'static str {
    match t {
        0x01 => "Connect",
        0x02 => "ConnectReply",
        0x03 => "Redirect",
        PDU_REPLY => "Reply",
        0x05 => "Disconnect",
        0x06 => "Push",
        0x07 => "ConfirmedPush",
        0x08 => "Suspend",
        0x09 => "Resume",
        PDU_GET => "Get",
        0x41 => "Options",
        0x42 => "Head",
        0x43 => "Delete",
        0x44 => "Trace",
        0x60 => "Post",
        0x61 => "Put",
        _ => "unassigned",
    }
}

/// Appends `v` as a uintvar: 7 bits per octet, most significant first, the high bit set
/// on every octet but the last (WAP-230 §8.1.2).
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

/// A cursor over a PDU's bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn u8(&mut self, field: &'static str) -> Result<u8, WspError> {
        let (&b, rest) = self
            .bytes
            .split_first()
            .ok_or(WspError::Truncated { field })?;
        self.bytes = rest;
        Ok(b)
    }

    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], WspError> {
        if n > self.bytes.len() {
            return Err(WspError::Truncated { field });
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn uintvar(&mut self, field: &'static str) -> Result<u32, WspError> {
        let mut v: u64 = 0;
        for _ in 0..UINTVAR_MAX_OCTETS {
            let b = self.u8(field)?;
            v = (v << 7) | u64::from(b & 0x7F);
            if b & 0x80 == 0 {
                return u32::try_from(v).map_err(|_| WspError::UintvarTooLong { field });
            }
        }
        Err(WspError::UintvarTooLong { field })
    }

    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }
}

/// A connectionless Get request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetRequest {
    /// Transaction identifier; the Reply repeats it.
    pub tid: u8,
    pub uri: String,
    /// Encoded request headers (WAP-230 §8.4), empty for none.
    pub headers: Vec<u8>,
}

impl GetRequest {
    pub fn new(tid: u8, uri: &str) -> Self {
        GetRequest {
            tid,
            uri: uri.to_string(),
            headers: Vec::new(),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![self.tid, PDU_GET];
        // A URI longer than 4 GiB cannot reach here: it came from a command line.
        put_uintvar(&mut out, self.uri.len() as u32);
        out.extend_from_slice(self.uri.as_bytes());
        out.extend_from_slice(&self.headers);
        out
    }

    pub fn decode(pdu: &[u8]) -> Result<Self, WspError> {
        let mut c = Cursor { bytes: pdu };
        let tid = c.u8("TID")?;
        expect_type(&mut c, "Get", PDU_GET)?;
        let len = c.uintvar("Get.uri_len")? as usize;
        let uri = std::str::from_utf8(c.take(len, "Get.uri")?)
            .map_err(|_| WspError::BadText { field: "Get.uri" })?
            .to_string();
        Ok(GetRequest {
            tid,
            uri,
            headers: c.rest().to_vec(),
        })
    }
}

fn expect_type(c: &mut Cursor<'_>, expected: &'static str, t: u8) -> Result<(), WspError> {
    let found = c.u8("PDU type")?;
    if found != t {
        return Err(WspError::UnexpectedPduType {
            expected,
            expected_type: t,
            found,
        });
    }
    Ok(())
}

/// A WSP status code (WAP-230 Table 36): the HTTP status packed into one octet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status(pub u8);

impl Status {
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
            (1..=3, 0..=15) | (4, 0..=15) => hundreds * 16 + rest,
            (4, 16..=31) => 0x50 + (rest - 16),
            (5, 0..=15) => 0x60 + rest,
            _ => return None,
        };
        Some(Status(octet as u8))
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

/// The content type at the head of a Reply's headers (WAP-230 §8.4.2.24).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentType {
    /// A well-known media type by its number (Table 40; the octet minus 0x80).
    WellKnown(u8),
    /// A media type registered with a longer number (Long-integer form).
    Registered(u32),
    /// A media type written out (Extension-media).
    Text(String),
}

/// Well-known content types of WSP 1.1-1.3 (WAP-230 Table 40; Kannel's
/// `wsp_strings.def` and the OMNA registry list the same), indexed by number.
const WELL_KNOWN_CONTENT_TYPES: [&str; 0x37] = [
    "*/*",
    "text/*",
    "text/html",
    "text/plain",
    "text/x-hdml",
    "text/x-ttml",
    "text/x-vCalendar",
    "text/x-vCard",
    "text/vnd.wap.wml",
    "text/vnd.wap.wmlscript",
    "application/vnd.wap.catc",
    "multipart/*",
    "multipart/mixed",
    "multipart/form-data",
    "multipart/byteranges",
    "multipart/alternative",
    "application/*",
    "application/java-vm",
    "application/x-www-form-urlencoded",
    "application/x-hdmlc",
    "application/vnd.wap.wmlc",
    "application/vnd.wap.wmlscriptc",
    "application/vnd.wap.wsic",
    "application/vnd.wap.uaprof",
    "application/vnd.wap.wtls-ca-certificate",
    "application/vnd.wap.wtls-user-certificate",
    "application/x-x509-ca-cert",
    "application/x-x509-user-cert",
    "image/*",
    "image/gif",
    "image/jpeg",
    "image/tiff",
    "image/png",
    "image/vnd.wap.wbmp",
    "application/vnd.wap.multipart.*",
    "application/vnd.wap.multipart.mixed",
    "application/vnd.wap.multipart.form-data",
    "application/vnd.wap.multipart.byteranges",
    "application/vnd.wap.multipart.alternative",
    "application/xml",
    "text/xml",
    "application/vnd.wap.wbxml",
    "application/x-x968-cross-cert",
    "application/x-x968-ca-cert",
    "application/x-x968-user-cert",
    "text/vnd.wap.si",
    "application/vnd.wap.sic",
    "text/vnd.wap.sl",
    "application/vnd.wap.slc",
    "text/vnd.wap.co",
    "application/vnd.wap.coc",
    "application/vnd.wap.multipart.related",
    "application/vnd.wap.sia",
    "text/vnd.wap.connectivity-xml",
    "application/vnd.wap.connectivity-wbxml",
];

impl ContentType {
    /// The well-known number of a media type name, if it has one.
    pub fn well_known(name: &str) -> Option<ContentType> {
        WELL_KNOWN_CONTENT_TYPES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .map(|i| ContentType::WellKnown(i as u8))
    }

    /// Encodes as the short form (well-known) or a NUL-terminated text string.
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

    /// Reads the content-type value at the head of `c` and leaves the cursor after it.
    fn read(c: &mut Cursor<'_>) -> Result<ContentType, WspError> {
        const FIELD: &str = "Reply.content_type";
        let first = *c
            .bytes
            .first()
            .ok_or(WspError::Truncated { field: FIELD })?;
        match first {
            0x80..=0xFF => {
                c.u8(FIELD)?;
                Ok(ContentType::WellKnown(first & 0x7F))
            }
            // Content-general-form: Value-length (short 0..=30, or 31 then uintvar), then
            // Media-type and parameters inside that length; the parameters are skipped.
            0x00..=0x1F => {
                c.u8(FIELD)?;
                let len = if first == 31 {
                    c.uintvar(FIELD)? as usize
                } else {
                    usize::from(first)
                };
                let mut inner = Cursor {
                    bytes: c.take(len, FIELD)?,
                };
                media_type(&mut inner)
            }
            _ => text_string(c, FIELD).map(ContentType::Text),
        }
    }
}

/// Media-type inside a Content-general-form: a short or long integer, or text.
fn media_type(c: &mut Cursor<'_>) -> Result<ContentType, WspError> {
    const FIELD: &str = "Reply.content_type.media_type";
    let first = c.u8(FIELD)?;
    match first {
        0x80..=0xFF => Ok(ContentType::WellKnown(first & 0x7F)),
        1..=4 => {
            let bytes = c.take(usize::from(first), FIELD)?;
            let n = bytes.iter().fold(0u32, |v, b| (v << 8) | u32::from(*b));
            Ok(ContentType::Registered(n))
        }
        0 => Ok(ContentType::Text(String::new())),
        // Long-integers longer than ours, and the other control octets, are no media type.
        5..=0x1F => Err(WspError::IntegerTooLong { field: FIELD }),
        // A quote octet, or the first character of Extension-media.
        _ => {
            let tail = text_string(c, FIELD)?;
            if first == 0x7F {
                return Ok(ContentType::Text(tail));
            }
            let mut bytes = vec![first];
            bytes.extend_from_slice(tail.as_bytes());
            String::from_utf8(bytes)
                .map(ContentType::Text)
                .map_err(|_| WspError::BadText { field: FIELD })
        }
    }
}

/// A NUL-terminated text string (a leading quote octet 0x7F is dropped, §8.4.2.1).
fn text_string(c: &mut Cursor<'_>, field: &'static str) -> Result<String, WspError> {
    let end = c
        .bytes
        .iter()
        .position(|b| *b == 0)
        .ok_or(WspError::BadText { field })?;
    let raw = c.take(end + 1, field)?;
    let text = raw[..end].strip_prefix(&[0x7F]).unwrap_or(&raw[..end]);
    String::from_utf8(text.to_vec()).map_err(|_| WspError::BadText { field })
}

impl fmt::Display for ContentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContentType::WellKnown(n) => match WELL_KNOWN_CONTENT_TYPES.get(usize::from(*n)) {
                Some(name) => f.write_str(name),
                None => write!(f, "well-known content type 0x{n:02x}"),
            },
            ContentType::Registered(n) => write!(f, "registered content type 0x{n:04x}"),
            ContentType::Text(t) => f.write_str(t),
        }
    }
}

/// A connectionless Reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub tid: u8,
    pub status: Status,
    pub content_type: ContentType,
    /// The encoded headers after the content type.
    pub headers: Vec<u8>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn encode(&self) -> Vec<u8> {
        let mut headers = Vec::new();
        self.content_type.encode(&mut headers);
        headers.extend_from_slice(&self.headers);
        let mut out = vec![self.tid, PDU_REPLY, self.status.0];
        // Headers of a reply built here are a few bytes.
        put_uintvar(&mut out, headers.len() as u32);
        out.extend_from_slice(&headers);
        out.extend_from_slice(&self.body);
        out
    }

    pub fn decode(pdu: &[u8]) -> Result<Self, WspError> {
        let mut c = Cursor { bytes: pdu };
        let tid = c.u8("TID")?;
        expect_type(&mut c, "Reply", PDU_REPLY)?;
        let status = Status(c.u8("Reply.status")?);
        let len = c.uintvar("Reply.headers_len")? as usize;
        let mut headers = Cursor {
            bytes: c.take(len, "Reply.headers")?,
        };
        let content_type = ContentType::read(&mut headers)?;
        Ok(Reply {
            tid,
            status,
            content_type,
            headers: headers.rest().to_vec(),
            body: c.rest().to_vec(),
        })
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
            let mut c = Cursor { bytes: &bytes };
            assert_eq!(c.uintvar("t").unwrap(), v);
            assert!(c.bytes.is_empty());
        }
        // Six octets, or five carrying more than 32 bits, are refused.
        let mut c = Cursor {
            bytes: &[0x81, 0x80, 0x80, 0x80, 0x80, 0x00],
        };
        assert_eq!(c.uintvar("t"), Err(WspError::UintvarTooLong { field: "t" }));
        let mut c = Cursor {
            bytes: &[0x9F, 0xFF, 0xFF, 0xFF, 0x7F],
        };
        assert!(c.uintvar("t").is_err());
        let mut c = Cursor { bytes: &[0x81] };
        assert_eq!(c.uintvar("t"), Err(WspError::Truncated { field: "t" }));
    }

    #[test]
    fn get_request_bytes() {
        let uri = "http://127.0.0.1:8080/hello.wml";
        let pdu = GetRequest::new(7, uri).encode();
        assert_eq!(&pdu[..3], &[7, 0x40, uri.len() as u8]);
        assert_eq!(&pdu[3..], uri.as_bytes());
        assert_eq!(GetRequest::decode(&pdu).unwrap(), GetRequest::new(7, uri));
        // A URI of 200 bytes needs a two-octet length.
        let long = format!("http://x/{}", "a".repeat(191));
        let pdu = GetRequest::new(1, &long).encode();
        assert_eq!(&pdu[2..4], &[0x81, 0x48]);
        assert_eq!(GetRequest::decode(&pdu).unwrap().uri, long);
        assert_eq!(
            GetRequest::decode(&pdu[..10]),
            Err(WspError::Truncated { field: "Get.uri" })
        );
    }

    #[test]
    fn status_codes_map_both_ways() {
        for (octet, http) in [
            (0x10, 100),
            (0x20, 200),
            (0x26, 206),
            (0x32, 302),
            (0x40, 400),
            (0x44, 404),
            (0x4F, 415),
            (0x50, 416),
            (0x51, 417),
            (0x60, 500),
            (0x63, 503),
        ] {
            assert_eq!(Status(octet).http(), Some(http), "0x{octet:02x}");
            assert_eq!(Status::from_http(http), Some(Status(octet)), "{http}");
        }
        assert_eq!(Status(0x00).http(), None);
        assert_eq!(Status(0x70).http(), None);
        assert_eq!(Status::from_http(299), None);
        assert_eq!(Status(0x20).to_string(), "200");
        assert_eq!(Status(0x7A).to_string(), "unassigned WSP status 0x7a");
    }

    #[test]
    fn reply_with_a_well_known_content_type() {
        // As Kannel answers a WML page: TID, Reply, 0x20, headers_len 1, 0x88 (WML).
        let pdu = [9, 0x04, 0x20, 0x01, 0x88, b'<', b'w', b'm', b'l', b'>'];
        let reply = Reply::decode(&pdu).unwrap();
        assert_eq!(reply.tid, 9);
        assert_eq!(reply.status.http(), Some(200));
        assert_eq!(reply.content_type, ContentType::WellKnown(8));
        assert_eq!(reply.content_type.to_string(), "text/vnd.wap.wml");
        assert_eq!(reply.body, b"<wml>");
        assert_eq!(reply.encode(), pdu);
        assert_eq!(
            ContentType::well_known("application/vnd.wap.wmlc"),
            Some(ContentType::WellKnown(0x14))
        );
    }

    #[test]
    fn reply_content_type_as_text_and_general_form() {
        let reply = Reply {
            tid: 1,
            status: Status(0x44),
            content_type: ContentType::Text("text/x-custom".into()),
            headers: vec![0x81, 0xEA], // Accept-Charset: utf-8, left as bytes
            body: b"missing".to_vec(),
        };
        let pdu = reply.encode();
        assert_eq!(Reply::decode(&pdu).unwrap(), reply);
        // Content-general-form: length 3, well-known text/html, a parameter (skipped).
        let pdu = [2, 0x04, 0x20, 0x04, 0x03, 0x82, 0x81, 0x83, b'x'];
        let r = Reply::decode(&pdu).unwrap();
        assert_eq!(r.content_type.to_string(), "text/html");
        assert_eq!(r.body, b"x");
        // Registered type 0x0201 as a Long-integer.
        let reg = Reply {
            content_type: ContentType::Registered(0x0201),
            ..reply.clone()
        };
        assert_eq!(Reply::decode(&reg.encode()).unwrap(), reg);
        // A Long-integer of 5 octets names no 32-bit registered type.
        let pdu = [2, 0x04, 0x20, 0x07, 0x06, 5, 1, 2, 3, 4, 5];
        assert_eq!(
            Reply::decode(&pdu),
            Err(WspError::IntegerTooLong {
                field: "Reply.content_type.media_type"
            })
        );
        // Text media type inside the general form.
        let pdu = [2, 0x04, 0x20, 0x05, 0x04, b'a', b'/', b'b', 0, b'!'];
        let r = Reply::decode(&pdu).unwrap();
        assert_eq!(r.content_type, ContentType::Text("a/b".into()));
        assert_eq!(r.body, b"!");
    }

    #[test]
    fn malformed_replies_name_what_is_wrong() {
        let get = GetRequest::new(3, "http://x/").encode();
        let err = Reply::decode(&get).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected a WSP Reply PDU (type 0x04), got type 0x40 (Get)"
        );
        assert_eq!(
            Reply::decode(&[1]),
            Err(WspError::Truncated { field: "PDU type" })
        );
        assert_eq!(
            Reply::decode(&[1, 4, 0x20, 5, 0x88]),
            Err(WspError::Truncated {
                field: "Reply.headers"
            })
        );
        assert_eq!(
            Reply::decode(&[1, 4, 0x20, 2, b'a', b'b']),
            Err(WspError::BadText {
                field: "Reply.content_type"
            })
        );
        assert_eq!(
            Reply::decode(&[1, 4, 0x20, 0]),
            Err(WspError::Truncated {
                field: "Reply.content_type"
            })
        );
        // Every prefix of a valid reply fails cleanly or decodes; none panics.
        let pdu = Reply {
            tid: 4,
            status: Status(0x20),
            content_type: ContentType::Registered(0x0305),
            headers: vec![],
            body: vec![1, 2, 3],
        }
        .encode();
        for n in 0..pdu.len() {
            let _ = Reply::decode(&pdu[..n]);
        }
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn content_type() -> impl Strategy<Value = ContentType> {
        prop_oneof![
            (0u8..0x7F).prop_map(ContentType::WellKnown),
            (0x0100u32..0xFFFF_FFFF).prop_map(ContentType::Registered),
            "[a-z]{1,12}/[a-z.+-]{1,20}".prop_map(ContentType::Text),
        ]
    }

    proptest! {
        /// A gateway's bytes reach the decoder: it answers or errs, never panics.
        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Reply::decode(&bytes);
            let _ = GetRequest::decode(&bytes);
        }

        #[test]
        fn replies_round_trip(
            tid: u8,
            status: u8,
            content_type in content_type(),
            body in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let reply = Reply { tid, status: Status(status), content_type, headers: vec![], body };
            prop_assert_eq!(Reply::decode(&reply.encode()).unwrap(), reply);
        }

        #[test]
        fn gets_round_trip(tid: u8, uri in "[ -~]{0,300}") {
            let get = GetRequest::new(tid, &uri);
            prop_assert_eq!(GetRequest::decode(&get.encode()).unwrap(), get);
        }
    }
}
