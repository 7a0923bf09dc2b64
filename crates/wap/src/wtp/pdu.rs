//! WTP PDUs (WAP-224 §8), every field typed.
//!
//! Every PDU starts with one octet `CON | type(4) | ...` and the 16-bit TID, whose top
//! bit tells the direction: the initiator sends its TID with the bit clear and the
//! responder answers with it set (Kannel's `wtp_pack.c` computes it as `tid ^ 0x8000`;
//! Wireshark's `packet-wtp.c` shows it as "TID response"). Transport information items
//! (TPIs, §8.4) follow the fixed header when CON is set; the user data comes last.
//!
//! Layouts of the fixed headers (bit 7 first):
//!
//! ```text
//! Invoke            CON 0001 GTR TTR RID | TID(16) | Ver(2) TIDnew U/P Res(2) TCL(2)
//! Result            CON 0010 GTR TTR RID | TID(16)
//! Ack               CON 0011 Tve/Tok Res RID | TID(16)
//! Abort             CON 0100 AbortType(3) | TID(16) | AbortReason(8)
//! Segmented Invoke  CON 0101 GTR TTR RID | TID(16) | PSN(8)
//! Segmented Result  CON 0110 GTR TTR RID | TID(16) | PSN(8)
//! Negative Ack      CON 0111 Res(2) RID | TID(16) | NumMissing(8) | PSN...
//! ```
//!
//! A datagram may carry several PDUs (§8.5, concatenation): a first octet 0x00, then each
//! PDU preceded by its length, in one octet (high bit clear) or two (high bit set, 15 bits).

use crate::codec::{Cursor, DecodeError};

/// Most PDUs one concatenated datagram may carry; more is refused, not processed.
const MAX_CONCATENATED: usize = 64;
/// Most TPIs after one header.
const MAX_TPIS: usize = 16;

/// A transaction identifier: 15 bits, chosen by the initiator, incremented per
/// transaction (WAP-224 §9.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tid(u16);

impl Tid {
    /// The largest TID; the next one wraps to 0.
    pub const MAX: u16 = 0x7FFF;

    /// A TID from the low 15 bits of `v`.
    pub fn new(v: u16) -> Tid {
        Tid(v & Tid::MAX)
    }

    pub fn value(self) -> u16 {
        self.0
    }

    /// The TID of the next transaction.
    pub fn next(self) -> Tid {
        Tid::new(self.0.wrapping_add(1))
    }

    /// Whether `self` may follow `last` without verification: it lies in the window of
    /// 2^14 TIDs after `last`, modulo 2^15 (WAP-224 §9.2.1, the "TID test").
    pub fn follows(self, last: Tid) -> bool {
        let distance = self.0.wrapping_sub(last.0) & Tid::MAX;
        distance != 0 && distance < (1 << 14)
    }
}

/// Who sent a PDU: the top bit of the wire TID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Sent by the transaction's initiator (top bit clear).
    FromInitiator,
    /// Sent by the responder (top bit set).
    FromResponder,
}

/// The PDU type in bits 6..3 of the first octet (WAP-224 Table 2). Type 0 is no PDU: it
/// marks a concatenated datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PduType {
    Invoke = 1,
    Result = 2,
    Ack = 3,
    Abort = 4,
    SegmentedInvoke = 5,
    SegmentedResult = 6,
    NegativeAck = 7,
}

impl PduType {
    fn from_bits(v: u8) -> Result<PduType, DecodeError> {
        Ok(match v {
            1 => PduType::Invoke,
            2 => PduType::Result,
            3 => PduType::Ack,
            4 => PduType::Abort,
            5 => PduType::SegmentedInvoke,
            6 => PduType::SegmentedResult,
            7 => PduType::NegativeAck,
            _ => {
                return Err(DecodeError::Unassigned {
                    field: "WTP PDU type",
                    value: u32::from(v),
                })
            }
        })
    }
}

/// Transaction class (TCL, WAP-224 §7.3): 0 unreliable one-way, 1 reliable one-way,
/// 2 reliable request and result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionClass {
    Zero,
    One,
    Two,
}

impl TransactionClass {
    fn bits(self) -> u8 {
        match self {
            TransactionClass::Zero => 0,
            TransactionClass::One => 1,
            TransactionClass::Two => 2,
        }
    }
}

/// The GTR and TTR flags together (WAP-224 §8.3.1): where a packet stands in a
/// segmented message. An unsegmented message has both flags set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trailer {
    /// GTR=0 TTR=0: more packets of this group follow.
    More,
    /// GTR=1 TTR=0: the last packet of a group; the receiver acknowledges the group.
    EndOfGroup,
    /// GTR=0 TTR=1: the last packet of the message.
    EndOfMessage,
    /// GTR=1 TTR=1: a whole message in one packet (no segmentation).
    Whole,
}

impl Trailer {
    fn from_bits(gtr: bool, ttr: bool) -> Trailer {
        match (gtr, ttr) {
            (false, false) => Trailer::More,
            (true, false) => Trailer::EndOfGroup,
            (false, true) => Trailer::EndOfMessage,
            (true, true) => Trailer::Whole,
        }
    }

    fn bits(self) -> u8 {
        match self {
            Trailer::More => 0,
            Trailer::EndOfGroup => 0b100,
            Trailer::EndOfMessage => 0b010,
            Trailer::Whole => 0b110,
        }
    }

    /// Whether the message ends with this packet.
    pub fn ends_message(self) -> bool {
        matches!(self, Trailer::EndOfMessage | Trailer::Whole)
    }

    /// Whether the receiver acknowledges after this packet.
    pub fn ends_group(self) -> bool {
        !matches!(self, Trailer::More)
    }
}

/// Provider abort reasons (WAP-224 Table 5; the numbers are Kannel's `wtp.h` too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ProviderReason {
    Unknown = 0x00,
    ProtocolError = 0x01,
    InvalidTid = 0x02,
    Class2NotImplemented = 0x03,
    SarNotImplemented = 0x04,
    UserAckNotImplemented = 0x05,
    /// "WTPVERSIONONE": the peer runs another WTP version.
    VersionNotSupported = 0x06,
    CapacityTemporarilyExceeded = 0x07,
    NoResponse = 0x08,
    MessageTooLarge = 0x09,
    ExtendedSarNotImplemented = 0x0A,
}

impl ProviderReason {
    fn from_octet(v: u8) -> Result<ProviderReason, DecodeError> {
        use ProviderReason::*;
        Ok(match v {
            0x00 => Unknown,
            0x01 => ProtocolError,
            0x02 => InvalidTid,
            0x03 => Class2NotImplemented,
            0x04 => SarNotImplemented,
            0x05 => UserAckNotImplemented,
            0x06 => VersionNotSupported,
            0x07 => CapacityTemporarilyExceeded,
            0x08 => NoResponse,
            0x09 => MessageTooLarge,
            0x0A => ExtendedSarNotImplemented,
            _ => {
                return Err(DecodeError::Unassigned {
                    field: "WTP provider abort reason",
                    value: u32::from(v),
                })
            }
        })
    }
}

/// Why a transaction was aborted: by WTP itself (abort type 0) or by its user (type 1,
/// whose reason octet the user layer defines: for WSP, WAP-230 Table 35).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbortReason {
    Provider(ProviderReason),
    User(u8),
}

/// Transport information item identities (WAP-224 Table 9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tpi {
    /// The peer could not handle a TPI or PDU: the bad TPI identity (or PDU type).
    Error(Vec<u8>),
    /// Informative data, e.g. for measurements.
    Info(Vec<u8>),
    /// A negotiated option: identity octet and value.
    Option(Vec<u8>),
    /// The packet sequence number an Ack acknowledges in segmented transfer.
    PacketSequenceNumber(u8),
    SduBoundary,
    FrameBoundary,
    /// An identity WAP-224 leaves unassigned: kept so it can be ignored, as §8.4 asks.
    Unassigned {
        identity: u8,
        data: Vec<u8>,
    },
}

impl Tpi {
    fn identity(&self) -> u8 {
        match self {
            Tpi::Error(_) => 0,
            Tpi::Info(_) => 1,
            Tpi::Option(_) => 2,
            Tpi::PacketSequenceNumber(_) => 3,
            Tpi::SduBoundary => 4,
            Tpi::FrameBoundary => 5,
            Tpi::Unassigned { identity, .. } => *identity & 0x0F,
        }
    }

    fn data(&self) -> Vec<u8> {
        match self {
            Tpi::Error(d) | Tpi::Info(d) | Tpi::Option(d) | Tpi::Unassigned { data: d, .. } => {
                d.clone()
            }
            Tpi::PacketSequenceNumber(psn) => vec![*psn],
            Tpi::SduBoundary | Tpi::FrameBoundary => Vec::new(),
        }
    }

    fn from_parts(identity: u8, data: &[u8]) -> Result<Tpi, DecodeError> {
        Ok(match identity {
            0 => Tpi::Error(data.to_vec()),
            1 => Tpi::Info(data.to_vec()),
            2 => Tpi::Option(data.to_vec()),
            3 => match data {
                [psn] => Tpi::PacketSequenceNumber(*psn),
                _ => {
                    return Err(DecodeError::Unassigned {
                        field: "WTP PSN TPI length",
                        value: data.len() as u32,
                    })
                }
            },
            4 => Tpi::SduBoundary,
            5 => Tpi::FrameBoundary,
            _ => Tpi::Unassigned {
                identity,
                data: data.to_vec(),
            },
        })
    }
}

/// What a PDU carries after its first octet and TID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Invoke {
        trailer: Trailer,
        /// The WTP version; 0 is the only one defined.
        version: u8,
        /// Set by an initiator whose TID counter restarted (§9.2.3): forces verification.
        tid_new: bool,
        /// The initiator asks for the responder's user to acknowledge (U/P flag).
        user_ack: bool,
        class: TransactionClass,
        data: Vec<u8>,
    },
    Result {
        trailer: Trailer,
        data: Vec<u8>,
    },
    /// An acknowledgement; with `tid_verification` set it is a Tve (responder asks the
    /// initiator to confirm the TID) or a Tok (initiator confirms).
    Ack {
        tid_verification: bool,
    },
    Abort(AbortReason),
    SegmentedInvoke {
        trailer: Trailer,
        psn: u8,
        data: Vec<u8>,
    },
    SegmentedResult {
        trailer: Trailer,
        psn: u8,
        data: Vec<u8>,
    },
    /// Selective negative acknowledgement: the PSNs of a group that did not arrive.
    NegativeAck {
        missing: Vec<u8>,
    },
}

/// One WTP PDU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdu {
    pub tid: Tid,
    pub direction: Direction,
    /// Retransmission indicator. Abort PDUs have no RID bit; it reads as false.
    pub rid: bool,
    pub tpis: Vec<Tpi>,
    pub body: Body,
}

impl Pdu {
    pub fn pdu_type(&self) -> PduType {
        match self.body {
            Body::Invoke { .. } => PduType::Invoke,
            Body::Result { .. } => PduType::Result,
            Body::Ack { .. } => PduType::Ack,
            Body::Abort(_) => PduType::Abort,
            Body::SegmentedInvoke { .. } => PduType::SegmentedInvoke,
            Body::SegmentedResult { .. } => PduType::SegmentedResult,
            Body::NegativeAck { .. } => PduType::NegativeAck,
        }
    }

    /// The PSN an Ack carries in its TPI, if any (segmented transfer).
    pub fn acked_psn(&self) -> Option<u8> {
        self.tpis.iter().find_map(|t| match t {
            Tpi::PacketSequenceNumber(p) => Some(*p),
            _ => None,
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let con = if self.tpis.is_empty() { 0 } else { 0x80 };
        let rid = u8::from(self.rid);
        let ty = (self.pdu_type() as u8) << 3;
        let mut out = Vec::with_capacity(8);
        let tid = self.tid.0
            | match self.direction {
                Direction::FromInitiator => 0,
                Direction::FromResponder => 0x8000,
            };
        let push_head = |out: &mut Vec<u8>, low: u8| {
            out.push(con | ty | low);
            out.extend_from_slice(&tid.to_be_bytes());
        };
        match &self.body {
            Body::Invoke {
                trailer,
                version,
                tid_new,
                user_ack,
                class,
                ..
            } => {
                push_head(&mut out, trailer.bits() | rid);
                out.push(
                    ((version & 0b11) << 6)
                        | (u8::from(*tid_new) << 5)
                        | (u8::from(*user_ack) << 4)
                        | class.bits(),
                );
            }
            Body::Result { trailer, .. } => push_head(&mut out, trailer.bits() | rid),
            Body::Ack { tid_verification } => {
                push_head(&mut out, (u8::from(*tid_verification) << 2) | rid)
            }
            Body::Abort(reason) => {
                let (kind, octet) = match reason {
                    AbortReason::Provider(r) => (0, *r as u8),
                    AbortReason::User(r) => (1, *r),
                };
                push_head(&mut out, kind);
                out.push(octet);
            }
            Body::SegmentedInvoke { trailer, psn, .. }
            | Body::SegmentedResult { trailer, psn, .. } => {
                push_head(&mut out, trailer.bits() | rid);
                out.push(*psn);
            }
            Body::NegativeAck { missing } => {
                push_head(&mut out, rid);
                // A group is at most 255 packets; a longer list cannot be meant.
                out.push(missing.len().min(255) as u8);
                out.extend(missing.iter().take(255));
            }
        }
        encode_tpis(&self.tpis, &mut out);
        if let Body::Invoke { data, .. }
        | Body::Result { data, .. }
        | Body::SegmentedInvoke { data, .. }
        | Body::SegmentedResult { data, .. } = &self.body
        {
            out.extend_from_slice(data);
        }
        out
    }

    /// Reads one PDU (not a concatenation: see [`decode_datagram`]).
    pub fn decode(bytes: &[u8]) -> Result<Pdu, DecodeError> {
        let mut c = Cursor::new(bytes);
        let first = c.u8("WTP header")?;
        let con = first & 0x80 != 0;
        let ty = PduType::from_bits((first >> 3) & 0x0F)?;
        let wire_tid = c.u16("WTP TID")?;
        let tid = Tid::new(wire_tid);
        let direction = if wire_tid & 0x8000 != 0 {
            Direction::FromResponder
        } else {
            Direction::FromInitiator
        };
        let rid = ty != PduType::Abort && first & 1 != 0;
        let trailer = Trailer::from_bits(first & 0b100 != 0, first & 0b010 != 0);
        let body = match ty {
            PduType::Invoke => decode_invoke_flags(&mut c, trailer)?,
            PduType::Result => Body::Result {
                trailer,
                data: Vec::new(),
            },
            PduType::Ack => Body::Ack {
                tid_verification: first & 0b100 != 0,
            },
            PduType::Abort => Body::Abort(decode_abort(&mut c, first)?),
            PduType::SegmentedInvoke | PduType::SegmentedResult => {
                let psn = c.u8("WTP packet sequence number")?;
                if ty == PduType::SegmentedInvoke {
                    Body::SegmentedInvoke {
                        trailer,
                        psn,
                        data: Vec::new(),
                    }
                } else {
                    Body::SegmentedResult {
                        trailer,
                        psn,
                        data: Vec::new(),
                    }
                }
            }
            PduType::NegativeAck => {
                let n = c.u8("WTP number of missing packets")?;
                Body::NegativeAck {
                    missing: c.take(usize::from(n), "WTP missing PSNs")?.to_vec(),
                }
            }
        };
        let tpis = if con {
            decode_tpis(&mut c)?
        } else {
            Vec::new()
        };
        let mut pdu = Pdu {
            tid,
            direction,
            rid,
            tpis,
            body,
        };
        let rest = c.rest();
        match &mut pdu.body {
            Body::Invoke { data, .. }
            | Body::Result { data, .. }
            | Body::SegmentedInvoke { data, .. }
            | Body::SegmentedResult { data, .. } => *data = rest.to_vec(),
            _ if !rest.is_empty() => {
                return Err(DecodeError::Trailing {
                    field: "WTP PDU without user data",
                    extra: rest.len(),
                })
            }
            _ => {}
        }
        Ok(pdu)
    }
}

/// The fourth octet of an Invoke: version, TIDnew, U/P, reserved, class.
fn decode_invoke_flags(c: &mut Cursor<'_>, trailer: Trailer) -> Result<Body, DecodeError> {
    let b = c.u8("WTP Invoke flags")?;
    let class = match b & 0b11 {
        0 => TransactionClass::Zero,
        1 => TransactionClass::One,
        2 => TransactionClass::Two,
        v => {
            return Err(DecodeError::Unassigned {
                field: "WTP transaction class",
                value: u32::from(v),
            })
        }
    };
    Ok(Body::Invoke {
        trailer,
        version: b >> 6,
        tid_new: b & 0x20 != 0,
        user_ack: b & 0x10 != 0,
        class,
        data: Vec::new(),
    })
}

/// The abort type (low three bits of the first octet) and the reason octet.
fn decode_abort(c: &mut Cursor<'_>, first: u8) -> Result<AbortReason, DecodeError> {
    let octet = c.u8("WTP abort reason")?;
    match first & 0b111 {
        0 => Ok(AbortReason::Provider(ProviderReason::from_octet(octet)?)),
        1 => Ok(AbortReason::User(octet)),
        v => Err(DecodeError::Unassigned {
            field: "WTP abort type",
            value: u32::from(v),
        }),
    }
}

/// TPI header octet: `CON | identity(4) | LEN | length(2)`; with LEN set the length is
/// the next octet instead (WAP-224 §8.4.1).
fn encode_tpis(tpis: &[Tpi], out: &mut Vec<u8>) {
    for (i, tpi) in tpis.iter().enumerate() {
        let con = if i + 1 < tpis.len() { 0x80 } else { 0 };
        // A TPI longer than 255 octets cannot be written; this crate builds none.
        let data = tpi.data();
        let data = &data[..data.len().min(255)];
        let id = tpi.identity() << 3;
        if data.len() <= 3 {
            out.push(con | id | data.len() as u8);
        } else {
            out.push(con | id | 0b100);
            out.push(data.len() as u8);
        }
        out.extend_from_slice(data);
    }
}

fn decode_tpis(c: &mut Cursor<'_>) -> Result<Vec<Tpi>, DecodeError> {
    let mut tpis = Vec::new();
    loop {
        if tpis.len() == MAX_TPIS {
            return Err(DecodeError::TooLarge {
                field: "WTP TPI list",
                limit: MAX_TPIS,
            });
        }
        let head = c.u8("WTP TPI header")?;
        let len = if head & 0b100 != 0 {
            usize::from(c.u8("WTP TPI length")?)
        } else {
            usize::from(head & 0b11)
        };
        let data = c.take(len, "WTP TPI data")?;
        tpis.push(Tpi::from_parts((head >> 3) & 0x0F, data)?);
        if head & 0x80 == 0 {
            return Ok(tpis);
        }
    }
}

/// Reads every PDU of a datagram: one PDU, or a concatenation (first octet 0x00).
pub fn decode_datagram(bytes: &[u8]) -> Result<Vec<Pdu>, DecodeError> {
    let mut c = Cursor::new(bytes);
    if c.peek("WTP datagram")? != 0x00 {
        return Ok(vec![Pdu::decode(bytes)?]);
    }
    c.u8("WTP concatenation marker")?;
    let mut pdus = Vec::new();
    while !c.is_empty() {
        if pdus.len() == MAX_CONCATENATED {
            return Err(DecodeError::TooLarge {
                field: "WTP concatenation",
                limit: MAX_CONCATENATED,
            });
        }
        let first = c.u8("WTP concatenated length")?;
        let len = if first & 0x80 == 0 {
            usize::from(first)
        } else {
            (usize::from(first & 0x7F) << 8) | usize::from(c.u8("WTP concatenated length")?)
        };
        pdus.push(Pdu::decode(c.take(len, "WTP concatenated PDU")?)?);
    }
    Ok(pdus)
}

/// Writes several PDUs as one concatenated datagram (or the PDU alone when there is one).
pub fn encode_datagram(pdus: &[Pdu]) -> Vec<u8> {
    if let [one] = pdus {
        return one.encode();
    }
    let mut out = vec![0x00];
    for pdu in pdus {
        let bytes = pdu.encode();
        if bytes.len() < 0x80 {
            out.push(bytes.len() as u8);
        } else {
            // A concatenated PDU is at most 15 bits long; a longer one goes alone.
            let len = bytes.len().min(0x7FFF) as u16 | 0x8000;
            out.extend_from_slice(&len.to_be_bytes());
        }
        out.extend_from_slice(&bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invoke(data: &[u8]) -> Pdu {
        Pdu {
            tid: Tid::new(0x1234),
            direction: Direction::FromInitiator,
            rid: false,
            tpis: vec![],
            body: Body::Invoke {
                trailer: Trailer::Whole,
                version: 0,
                tid_new: false,
                user_ack: true,
                class: TransactionClass::Two,
                data: data.to_vec(),
            },
        }
    }

    #[test]
    fn invoke_bytes_match_the_layout() {
        // 0x0E: type 1, GTR, TTR; TID 0x1234; U/P set, class 2; then the WSP bytes.
        assert_eq!(invoke(&[0x40]).encode(), [0x0E, 0x12, 0x34, 0x12, 0x40]);
        assert_eq!(
            Pdu::decode(&[0x0E, 0x12, 0x34, 0x12, 0x40]).unwrap(),
            invoke(&[0x40])
        );
    }

    #[test]
    fn responder_tid_has_the_top_bit() {
        let ack = Pdu {
            tid: Tid::new(7),
            direction: Direction::FromResponder,
            rid: true,
            tpis: vec![],
            body: Body::Ack {
                tid_verification: true,
            },
        };
        // Ack type 3 << 3 = 0x18, Tve 0x04, RID 0x01; TID 0x8007.
        assert_eq!(ack.encode(), [0x1D, 0x80, 0x07]);
        assert_eq!(Pdu::decode(&ack.encode()).unwrap(), ack);
    }

    #[test]
    fn abort_and_nack_and_tpis() {
        let abort = Pdu {
            tid: Tid::new(1),
            direction: Direction::FromResponder,
            rid: false,
            tpis: vec![],
            body: Body::Abort(AbortReason::Provider(ProviderReason::InvalidTid)),
        };
        assert_eq!(abort.encode(), [0x20, 0x80, 0x01, 0x02]);
        assert_eq!(Pdu::decode(&abort.encode()).unwrap(), abort);
        let sar_ack = Pdu {
            tid: Tid::new(1),
            direction: Direction::FromInitiator,
            rid: false,
            tpis: vec![Tpi::PacketSequenceNumber(5)],
            body: Body::Ack {
                tid_verification: false,
            },
        };
        // CON set; TPI: identity 3, short length 1.
        assert_eq!(sar_ack.encode(), [0x98, 0x00, 0x01, 0x19, 0x05]);
        assert_eq!(Pdu::decode(&sar_ack.encode()).unwrap().acked_psn(), Some(5));
        let nack = Pdu {
            body: Body::NegativeAck {
                missing: vec![2, 4],
            },
            tpis: vec![Tpi::Info(b"long info".to_vec())],
            ..sar_ack
        };
        assert_eq!(Pdu::decode(&nack.encode()).unwrap(), nack);
    }

    #[test]
    fn concatenation_round_trips() {
        let pdus = vec![invoke(&[1; 10]), invoke(&[2; 200])];
        let bytes = encode_datagram(&pdus);
        assert_eq!(bytes[0], 0);
        assert_eq!(bytes[1], 14);
        assert_eq!(decode_datagram(&bytes).unwrap(), pdus);
    }

    #[test]
    fn bad_bytes_name_the_field() {
        assert_eq!(
            Pdu::decode(&[0x00, 0, 0]),
            Err(DecodeError::Unassigned {
                field: "WTP PDU type",
                value: 0
            })
        );
        assert_eq!(
            Pdu::decode(&[0x0E, 0x12, 0x34, 0x03]),
            Err(DecodeError::Unassigned {
                field: "WTP transaction class",
                value: 3
            })
        );
        assert_eq!(
            Pdu::decode(&[0x18, 0x00]),
            Err(DecodeError::Truncated { field: "WTP TID" })
        );
        assert!(matches!(
            Pdu::decode(&[0x18, 0, 1, 9]),
            Err(DecodeError::Trailing { .. })
        ));
    }

    #[test]
    fn tid_window() {
        assert!(Tid::new(5).follows(Tid::new(4)));
        assert!(!Tid::new(4).follows(Tid::new(4)));
        assert!(!Tid::new(3).follows(Tid::new(4)));
        assert!(Tid::new(0).follows(Tid::new(Tid::MAX)));
        assert_eq!(Tid::new(Tid::MAX).next(), Tid::new(0));
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode_datagram(&bytes);
        }

        /// Whatever decodes re-encodes to a PDU that decodes to the same value.
        #[test]
        fn decoded_pdus_round_trip(bytes in proptest::collection::vec(any::<u8>(), 3..40)) {
            if let Ok(pdu) = Pdu::decode(&bytes) {
                prop_assert_eq!(Pdu::decode(&pdu.encode()).unwrap(), pdu);
            }
        }
    }
}
