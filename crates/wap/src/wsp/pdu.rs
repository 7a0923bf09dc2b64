//! WSP PDUs (WAP-230 §8.2), both modes.
//!
//! ```text
//! Connect       01 | Version | uintvar CapLen | uintvar HeadLen | Capabilities | Headers
//! ConnectReply  02 | uintvar ServerSessionId | CapLen | HeadLen | Capabilities | Headers
//! Reply         04 | Status | uintvar HeadLen | ContentType Headers | Data
//! Disconnect    05 | uintvar ServerSessionId
//! Push          06 / ConfirmedPush 07 | uintvar HeadLen | ContentType Headers | Data
//! Suspend       08 | uintvar SessionId
//! Resume        09 | uintvar SessionId | CapLen | Capabilities | Headers
//! Get           40-44 | uintvar UriLen | Uri | Headers
//! Post          60-61 | uintvar UriLen | uintvar HeadLen | Uri | ContentType Headers | Data
//! ```

use super::{ContentType, Headers, Status};
use crate::codec::{put_len, put_uintvar, Cursor, DecodeError};

/// Most capabilities one Connect may carry.
const MAX_CAPABILITIES: usize = 32;

/// PDU types (Table 34).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PduType {
    Connect = 0x01,
    ConnectReply = 0x02,
    Redirect = 0x03,
    Reply = 0x04,
    Disconnect = 0x05,
    Push = 0x06,
    ConfirmedPush = 0x07,
    Suspend = 0x08,
    Resume = 0x09,
    Get = 0x40,
    Options = 0x41,
    Head = 0x42,
    Delete = 0x43,
    Trace = 0x44,
    Post = 0x60,
    Put = 0x61,
}

impl PduType {
    pub fn from_octet(v: u8) -> Result<PduType, DecodeError> {
        use PduType::*;
        Ok(match v {
            0x01 => Connect,
            0x02 => ConnectReply,
            0x03 => Redirect,
            0x04 => Reply,
            0x05 => Disconnect,
            0x06 => Push,
            0x07 => ConfirmedPush,
            0x08 => Suspend,
            0x09 => Resume,
            0x40 => Get,
            0x41 => Options,
            0x42 => Head,
            0x43 => Delete,
            0x44 => Trace,
            0x60 => Post,
            0x61 => Put,
            _ => {
                return Err(DecodeError::Unassigned {
                    field: "WSP PDU type",
                    value: u32::from(v),
                })
            }
        })
    }
}

/// The methods of the Get PDU family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetMethod {
    Get,
    Options,
    Head,
    Delete,
    Trace,
}

impl GetMethod {
    fn pdu_type(self) -> PduType {
        match self {
            GetMethod::Get => PduType::Get,
            GetMethod::Options => PduType::Options,
            GetMethod::Head => PduType::Head,
            GetMethod::Delete => PduType::Delete,
            GetMethod::Trace => PduType::Trace,
        }
    }

    pub fn http_name(self) -> &'static str {
        match self {
            GetMethod::Get => "GET",
            GetMethod::Options => "OPTIONS",
            GetMethod::Head => "HEAD",
            GetMethod::Delete => "DELETE",
            GetMethod::Trace => "TRACE",
        }
    }
}

/// The methods of the Post PDU family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostMethod {
    Post,
    Put,
}

impl PostMethod {
    pub fn http_name(self) -> &'static str {
        match self {
            PostMethod::Post => "POST",
            PostMethod::Put => "PUT",
        }
    }
}

/// The WSP version a Connect offers: major and minor nibbles (1.0 is 0x10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version(pub u8);

impl Version {
    pub const V1_0: Version = Version(0x10);
}

/// WSP abort reasons, carried in a WTP user abort (Table 35).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum AbortReason {
    ProtocolError = 0xE0,
    Disconnect = 0xE1,
    Suspend = 0xE2,
    Resume = 0xE3,
    Congestion = 0xE4,
    ConnectError = 0xE5,
    MruExceeded = 0xE6,
    MorExceeded = 0xE7,
    PeerRequest = 0xE8,
    NetworkError = 0xE9,
    UserRequest = 0xEA,
    UserRefused = 0xEB,
    UserPending = 0xEC,
    UserDiscarded = 0xED,
    UserDiscardedUnknown = 0xEE,
}

impl AbortReason {
    pub fn from_octet(v: u8) -> Option<AbortReason> {
        use AbortReason::*;
        [
            ProtocolError,
            Disconnect,
            Suspend,
            Resume,
            Congestion,
            ConnectError,
            MruExceeded,
            MorExceeded,
            PeerRequest,
            NetworkError,
            UserRequest,
            UserRefused,
            UserPending,
            UserDiscarded,
            UserDiscardedUnknown,
        ]
        .into_iter()
        .find(|r| *r as u8 == v)
    }
}

/// Session capabilities (§8.3.2), the ones a 1.x session negotiates; any other
/// capability is kept as identity and octets so it can be refused by omission.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Largest SDU the client can receive (identity 0x00).
    pub client_sdu_size: Option<u32>,
    /// Largest SDU the server can receive (0x01).
    pub server_sdu_size: Option<u32>,
    /// Protocol option flags (0x02): push, confirmed push, resume, acknowledgement headers.
    pub protocol_options: Option<u8>,
    /// Outstanding method requests (0x03).
    pub method_mor: Option<u8>,
    /// Outstanding push requests (0x04).
    pub push_mor: Option<u8>,
    /// Capabilities this crate does not negotiate: identity and raw value.
    pub other: Vec<(u8, Vec<u8>)>,
}

impl Capabilities {
    /// The server's answer (§8.3.2): for each capability the client proposed, the
    /// smaller of its value and the server's limit; options the server lacks cleared;
    /// capabilities the server does not know left out (which refuses them).
    pub fn negotiate(&self, server: &Capabilities) -> Capabilities {
        fn min<T: Ord + Copy>(client: Option<T>, server: Option<T>) -> Option<T> {
            match (client, server) {
                (Some(c), Some(s)) => Some(c.min(s)),
                (c, None) => c,
                (None, _) => None,
            }
        }
        Capabilities {
            client_sdu_size: min(self.client_sdu_size, server.client_sdu_size),
            server_sdu_size: min(self.server_sdu_size, server.server_sdu_size),
            protocol_options: self
                .protocol_options
                .map(|o| o & server.protocol_options.unwrap_or(0)),
            method_mor: min(self.method_mor, server.method_mor),
            push_mor: min(self.push_mor, server.push_mor),
            other: Vec::new(),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut put = |id: u8, value: &[u8]| {
            put_len(out, 1 + value.len());
            out.push(0x80 | id);
            out.extend_from_slice(value);
        };
        let uintvar = |v: u32| {
            let mut b = Vec::new();
            put_uintvar(&mut b, v);
            b
        };
        if let Some(v) = self.client_sdu_size {
            put(0x00, &uintvar(v));
        }
        if let Some(v) = self.server_sdu_size {
            put(0x01, &uintvar(v));
        }
        if let Some(v) = self.protocol_options {
            put(0x02, &[v]);
        }
        if let Some(v) = self.method_mor {
            put(0x03, &[v]);
        }
        if let Some(v) = self.push_mor {
            put(0x04, &[v]);
        }
        for (id, value) in &self.other {
            put(*id & 0x7F, value);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Capabilities, DecodeError> {
        const FIELD: &str = "WSP capability";
        let mut caps = Capabilities::default();
        let mut c = Cursor::new(bytes);
        let mut n = 0;
        while !c.is_empty() {
            n += 1;
            if n > MAX_CAPABILITIES {
                return Err(DecodeError::TooLarge {
                    field: FIELD,
                    limit: MAX_CAPABILITIES,
                });
            }
            let mut cap = Cursor::new(c.uintvar_bytes(FIELD)?);
            let id = cap.u8(FIELD)?;
            if id < 0x80 {
                // A capability named by text: not one a 1.x session negotiates.
                caps.other.push((id, cap.rest().to_vec()));
                continue;
            }
            match id & 0x7F {
                0x00 => caps.client_sdu_size = Some(cap.uintvar(FIELD)?),
                0x01 => caps.server_sdu_size = Some(cap.uintvar(FIELD)?),
                0x02 => caps.protocol_options = Some(cap.u8(FIELD)?),
                0x03 => caps.method_mor = Some(cap.u8(FIELD)?),
                0x04 => caps.push_mor = Some(cap.u8(FIELD)?),
                other => caps.other.push((other, cap.rest().to_vec())),
            }
        }
        Ok(caps)
    }
}

/// One WSP PDU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pdu {
    Connect {
        version: Version,
        capabilities: Capabilities,
        headers: Headers,
    },
    ConnectReply {
        session_id: u32,
        capabilities: Capabilities,
        headers: Headers,
    },
    /// A redirect to other gateway addresses (flags and the raw address list).
    Redirect {
        flags: u8,
        addresses: Vec<u8>,
    },
    Reply {
        status: Status,
        content_type: ContentType,
        headers: Headers,
        body: Vec<u8>,
    },
    Disconnect {
        session_id: u32,
    },
    Push {
        confirmed: bool,
        content_type: ContentType,
        headers: Headers,
        body: Vec<u8>,
    },
    Suspend {
        session_id: u32,
    },
    Resume {
        session_id: u32,
        capabilities: Capabilities,
        headers: Headers,
    },
    Get {
        method: GetMethod,
        uri: String,
        headers: Headers,
    },
    Post {
        method: PostMethod,
        uri: String,
        content_type: ContentType,
        headers: Headers,
        body: Vec<u8>,
    },
}

fn content_and_headers(content_type: &ContentType, headers: &Headers) -> Vec<u8> {
    let mut block = Vec::new();
    content_type.encode(&mut block);
    headers.encode(&mut block);
    block
}

impl Pdu {
    pub fn pdu_type(&self) -> PduType {
        match self {
            Pdu::Connect { .. } => PduType::Connect,
            Pdu::ConnectReply { .. } => PduType::ConnectReply,
            Pdu::Redirect { .. } => PduType::Redirect,
            Pdu::Reply { .. } => PduType::Reply,
            Pdu::Disconnect { .. } => PduType::Disconnect,
            Pdu::Push {
                confirmed: false, ..
            } => PduType::Push,
            Pdu::Push { .. } => PduType::ConfirmedPush,
            Pdu::Suspend { .. } => PduType::Suspend,
            Pdu::Resume { .. } => PduType::Resume,
            Pdu::Get { method, .. } => method.pdu_type(),
            Pdu::Post {
                method: PostMethod::Post,
                ..
            } => PduType::Post,
            Pdu::Post { .. } => PduType::Put,
        }
    }

    /// The bare PDU, as connection mode carries it in a WTP transaction.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![self.pdu_type() as u8];
        match self {
            Pdu::Connect {
                version,
                capabilities,
                headers,
            } => {
                out.push(version.0);
                caps_and_headers(&mut out, capabilities, headers, true);
            }
            Pdu::ConnectReply {
                session_id,
                capabilities,
                headers,
            } => {
                put_uintvar(&mut out, *session_id);
                caps_and_headers(&mut out, capabilities, headers, true);
            }
            Pdu::Redirect { flags, addresses } => {
                out.push(*flags);
                out.extend_from_slice(addresses);
            }
            Pdu::Reply {
                status,
                content_type,
                headers,
                body,
            } => {
                out.push(status.0);
                let block = content_and_headers(content_type, headers);
                put_len(&mut out, block.len());
                out.extend_from_slice(&block);
                out.extend_from_slice(body);
            }
            Pdu::Disconnect { session_id } | Pdu::Suspend { session_id } => {
                put_uintvar(&mut out, *session_id)
            }
            Pdu::Push {
                content_type,
                headers,
                body,
                ..
            } => {
                let block = content_and_headers(content_type, headers);
                put_len(&mut out, block.len());
                out.extend_from_slice(&block);
                out.extend_from_slice(body);
            }
            Pdu::Resume {
                session_id,
                capabilities,
                headers,
            } => {
                put_uintvar(&mut out, *session_id);
                caps_and_headers(&mut out, capabilities, headers, false);
            }
            Pdu::Get { uri, headers, .. } => {
                put_len(&mut out, uri.len());
                out.extend_from_slice(uri.as_bytes());
                headers.encode(&mut out);
            }
            Pdu::Post {
                uri,
                content_type,
                headers,
                body,
                ..
            } => {
                let block = content_and_headers(content_type, headers);
                put_len(&mut out, uri.len());
                put_len(&mut out, block.len());
                out.extend_from_slice(uri.as_bytes());
                out.extend_from_slice(&block);
                out.extend_from_slice(body);
            }
        }
        out
    }

    /// Reads a bare PDU (connection mode).
    pub fn decode(bytes: &[u8]) -> Result<Pdu, DecodeError> {
        let mut c = Cursor::new(bytes);
        let ty = PduType::from_octet(c.u8("WSP PDU type")?)?;
        let pdu = match ty {
            PduType::Connect => {
                let version = Version(c.u8("WSP Connect version")?);
                let (capabilities, headers) = read_caps_and_headers(&mut c, true)?;
                Pdu::Connect {
                    version,
                    capabilities,
                    headers,
                }
            }
            PduType::ConnectReply => {
                let session_id = c.uintvar("WSP ConnectReply session id")?;
                let (capabilities, headers) = read_caps_and_headers(&mut c, true)?;
                Pdu::ConnectReply {
                    session_id,
                    capabilities,
                    headers,
                }
            }
            PduType::Redirect => Pdu::Redirect {
                flags: c.u8("WSP Redirect flags")?,
                addresses: c.rest().to_vec(),
            },
            PduType::Reply => {
                let status = Status(c.u8("WSP Reply status")?);
                let (content_type, headers) = read_content_block(&mut c, "WSP Reply headers")?;
                Pdu::Reply {
                    status,
                    content_type,
                    headers,
                    body: c.rest().to_vec(),
                }
            }
            PduType::Disconnect => Pdu::Disconnect {
                session_id: c.uintvar("WSP Disconnect session id")?,
            },
            PduType::Suspend => Pdu::Suspend {
                session_id: c.uintvar("WSP Suspend session id")?,
            },
            PduType::Push | PduType::ConfirmedPush => {
                let (content_type, headers) = read_content_block(&mut c, "WSP Push headers")?;
                Pdu::Push {
                    confirmed: ty == PduType::ConfirmedPush,
                    content_type,
                    headers,
                    body: c.rest().to_vec(),
                }
            }
            PduType::Resume => {
                let session_id = c.uintvar("WSP Resume session id")?;
                let (capabilities, headers) = read_caps_and_headers(&mut c, false)?;
                Pdu::Resume {
                    session_id,
                    capabilities,
                    headers,
                }
            }
            PduType::Get | PduType::Options | PduType::Head | PduType::Delete | PduType::Trace => {
                decode_get(ty, &mut c)?
            }
            PduType::Post | PduType::Put => decode_post(ty, &mut c)?,
        };
        if !matches!(
            ty,
            PduType::Reply | PduType::Push | PduType::ConfirmedPush | PduType::Post | PduType::Put
        ) {
            c.finish("WSP PDU")?;
        }
        Ok(pdu)
    }
}

fn decode_get(ty: PduType, c: &mut Cursor<'_>) -> Result<Pdu, DecodeError> {
    let method = match ty {
        PduType::Options => GetMethod::Options,
        PduType::Head => GetMethod::Head,
        PduType::Delete => GetMethod::Delete,
        PduType::Trace => GetMethod::Trace,
        _ => GetMethod::Get,
    };
    let uri = utf8(c.uintvar_bytes("WSP Get URI")?, "WSP Get URI")?;
    let headers = Headers::decode(c.rest())?;
    Ok(Pdu::Get {
        method,
        uri,
        headers,
    })
}

fn decode_post(ty: PduType, c: &mut Cursor<'_>) -> Result<Pdu, DecodeError> {
    let method = if ty == PduType::Put {
        PostMethod::Put
    } else {
        PostMethod::Post
    };
    let uri_len = c.uintvar("WSP Post URI length")? as usize;
    let head_len = c.uintvar("WSP Post headers length")? as usize;
    let uri = utf8(c.take(uri_len, "WSP Post URI")?, "WSP Post URI")?;
    let mut block = Cursor::new(c.take(head_len, "WSP Post headers")?);
    let content_type = ContentType::read(&mut block)?;
    let headers = Headers::decode(block.rest())?;
    Ok(Pdu::Post {
        method,
        uri,
        content_type,
        headers,
        body: c.rest().to_vec(),
    })
}

fn utf8(bytes: &[u8], field: &'static str) -> Result<String, DecodeError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError::BadText { field })
}

fn caps_and_headers(
    out: &mut Vec<u8>,
    caps: &Capabilities,
    headers: &Headers,
    with_head_len: bool,
) {
    let mut cap_bytes = Vec::new();
    caps.encode(&mut cap_bytes);
    let head = headers.to_bytes();
    put_len(out, cap_bytes.len());
    if with_head_len {
        put_len(out, head.len());
    }
    out.extend_from_slice(&cap_bytes);
    out.extend_from_slice(&head);
}

fn read_caps_and_headers(
    c: &mut Cursor<'_>,
    with_head_len: bool,
) -> Result<(Capabilities, Headers), DecodeError> {
    let cap_len = c.uintvar("WSP capabilities length")? as usize;
    let head_len = if with_head_len {
        Some(c.uintvar("WSP headers length")? as usize)
    } else {
        None
    };
    let caps = Capabilities::decode(c.take(cap_len, "WSP capabilities")?)?;
    let head = match head_len {
        Some(n) => c.take(n, "WSP headers")?,
        None => c.rest(),
    };
    Ok((caps, Headers::decode(head)?))
}

fn read_content_block(
    c: &mut Cursor<'_>,
    field: &'static str,
) -> Result<(ContentType, Headers), DecodeError> {
    let mut block = Cursor::new(c.uintvar_bytes(field)?);
    let content_type = ContentType::read(&mut block)?;
    Ok((content_type, Headers::decode(block.rest())?))
}

/// Connectionless WSP: the transaction identifier octet, then the PDU.
pub fn encode_connectionless(tid: u8, pdu: &Pdu) -> Vec<u8> {
    let mut out = vec![tid];
    out.extend(pdu.encode());
    out
}

/// Reads a connectionless datagram: its transaction identifier and PDU.
pub fn decode_connectionless(bytes: &[u8]) -> Result<(u8, Pdu), DecodeError> {
    let (&tid, rest) = bytes
        .split_first()
        .ok_or(DecodeError::Truncated { field: "WSP TID" })?;
    Ok((tid, Pdu::decode(rest)?))
}
