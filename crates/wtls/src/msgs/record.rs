//! Record framing (wire-format notes §2): the record-type byte, the optional sequence
//! number and length, and the splitting of one datagram into its records.
//!
//! This module only frames. Protection (MAC, padding, encryption) lives in the crate's
//! `record` module and works on the fragments found here.

use crate::codec::{put_u16, DecodeError, Reader};
use crate::msgs::enums::ContentType;

/// Largest fragment accepted in a record, protected or not: 2^14 + 1024 bytes.
///
/// WTLS sets no limit the sources could confirm (§11 lists the record_overflow
/// threshold as unknown), so this borrows TLS's bound on a compressed fragment:
/// 2^14 bytes of plaintext plus room for MAC and padding (at most 20 + 8 here). The
/// largest handshake message this project produces, a Certificate with an RSA-3072
/// chain, stays far below it. A longer fragment is `BadLength` on `Record.length`,
/// which the connection answers as every framing error, with decode_error
/// ([`crate::codec::DecodeError::alert`]; TLS would say record_overflow here, which WTLS
/// defines without giving its threshold).
pub const MAX_FRAGMENT: usize = (1 << 14) + 1024;

/// L bit: a 2-byte length field is present.
const FLAG_LENGTH: u8 = 0x80;
/// S bit: a 2-byte sequence number is present.
const FLAG_SEQUENCE: u8 = 0x40;
/// C bit: the connection's current cipher spec protects the fragment.
const FLAG_CIPHER: u8 = 0x20;
/// Bit 4 is reserved and must be zero.
const FLAG_RESERVED: u8 = 0x10;
const CONTENT_TYPE_MASK: u8 = 0x0F;

/// A decoded record header (§2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordHeader {
    /// L bit: the record carries its length. When absent the fragment runs to the end of
    /// the datagram, so only the last record of a datagram may omit it.
    pub length_present: bool,
    /// The sequence number if the S bit is set.
    pub sequence: Option<u16>,
    /// C bit: `false` means clear text under the NULL cipher spec.
    pub cipher_spec: bool,
    pub content_type: ContentType,
}

impl RecordHeader {
    /// The record-type byte: flags L, S, C in the top bits, content type in the low
    /// nibble (the order of every real implementation, §11 item 11).
    pub fn to_byte(&self) -> u8 {
        let mut b = self.content_type.to_u8() & CONTENT_TYPE_MASK;
        if self.length_present {
            b |= FLAG_LENGTH;
        }
        if self.sequence.is_some() {
            b |= FLAG_SEQUENCE;
        }
        if self.cipher_spec {
            b |= FLAG_CIPHER;
        }
        b
    }

    /// Decode the record-type byte. The byte only says *whether* a sequence number
    /// follows, not its value: when S is set the result carries `Some(0)` as a
    /// placeholder that the caller replaces with the number read next
    /// ([`parse_datagram`] does so). A set reserved bit is `Illegal`; an undefined
    /// content type is `UnknownValue` (S3 discards such a record and everything after
    /// it, since the framing can no longer be trusted).
    pub fn from_byte(byte: u8) -> Result<Self, DecodeError> {
        if byte & FLAG_RESERVED != 0 {
            return Err(DecodeError::Illegal {
                field: "Record.record_type",
                defect: crate::codec::IllegalValue::ReservedRecordTypeBit,
            });
        }
        Ok(RecordHeader {
            length_present: byte & FLAG_LENGTH != 0,
            sequence: (byte & FLAG_SEQUENCE != 0).then_some(0),
            cipher_spec: byte & FLAG_CIPHER != 0,
            content_type: ContentType::from_u8(byte & CONTENT_TYPE_MASK)?,
        })
    }

    /// Header size on the wire: 1 + 2·S + 2·L bytes.
    pub fn encoded_len(&self) -> usize {
        1 + 2 * usize::from(self.sequence.is_some()) + 2 * usize::from(self.length_present)
    }
}

/// A record as found in a received datagram, borrowing the datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub header: RecordHeader,
    /// The record-type byte exactly as received; it enters the MAC input (§7.7).
    pub header_byte: u8,
    /// The fragment (ciphertext when C is set).
    pub fragment: &'a [u8],
    /// Header and fragment as received: the input of the alert checksum (§7.12).
    pub raw: &'a [u8],
}

impl Record<'_> {
    /// An owned copy, e.g. to queue or re-send.
    pub fn to_owned_record(&self) -> OwnedRecord {
        OwnedRecord {
            header: self.header,
            fragment: self.fragment.to_vec(),
        }
    }
}

/// Split a datagram into its records (§2.3). Strict: every byte must belong to a
/// record, a record without L runs to the end of the datagram (so every record but the
/// last carries L), a fragment longer than [`MAX_FRAGMENT`] is `BadLength`, and an
/// empty datagram is an error (it carries no WTLS SDU).
pub fn parse_datagram(dgram: &[u8]) -> Result<Vec<Record<'_>>, DecodeError> {
    let mut r = Reader::new(dgram);
    // A flight of the handshake is at most five records.
    let mut records = Vec::with_capacity(5);
    loop {
        let start = r.position();
        let header_byte = r.u8("Record.record_type")?;
        let mut header = RecordHeader::from_byte(header_byte)?;
        if header.sequence.is_some() {
            header.sequence = Some(r.u16("Record.sequence_number")?);
        }
        let fragment = if header.length_present {
            let len = usize::from(r.u16("Record.length")?);
            check_fragment_len(len)?;
            r.take(len, "Record.fragment")?
        } else {
            let rest = r.take_rest();
            check_fragment_len(rest.len())?;
            rest
        };
        records.push(Record {
            header,
            header_byte,
            fragment,
            raw: &dgram[start..r.position()],
        });
        if r.is_empty() {
            return Ok(records);
        }
    }
}

fn check_fragment_len(len: usize) -> Result<(), DecodeError> {
    if len > MAX_FRAGMENT {
        return Err(DecodeError::BadLength {
            field: "Record.length",
            length: len,
            min: 0,
            max: MAX_FRAGMENT,
        });
    }
    Ok(())
}

impl RecordHeader {
    /// Append what precedes a `fragment_len`-byte fragment: the header byte, then the
    /// sequence number and the length where present. A sender that knows the length
    /// writes the fragment straight after it, into the same buffer.
    pub fn encode_prefix(&self, fragment_len: u16, out: &mut Vec<u8>) {
        out.push(self.to_byte());
        if let Some(seq) = self.sequence {
            put_u16(out, seq);
        }
        if self.length_present {
            put_u16(out, fragment_len);
        }
    }
}

/// A record to send (or kept after receipt).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnedRecord {
    pub header: RecordHeader,
    pub fragment: Vec<u8>,
}

impl OwnedRecord {
    /// A record with the L and S bits set, the form S3 and Kannel always send (§2.3).
    pub fn new(
        content_type: ContentType,
        sequence: u16,
        cipher_spec: bool,
        fragment: Vec<u8>,
    ) -> Self {
        OwnedRecord {
            header: RecordHeader {
                length_present: true,
                sequence: Some(sequence),
                cipher_spec,
                content_type,
            },
            fragment,
        }
    }

    /// Append the record. Without L the fragment is written bare, so such a record must
    /// be the last one of its datagram. A fragment longer than 65535 bytes with L set is
    /// a programming error (senders stay within [`MAX_FRAGMENT`]).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let len = u16::try_from(self.fragment.len()).expect("record fragment over 65535");
        self.header.encode_prefix(len, out);
        out.extend_from_slice(&self.fragment);
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.header.encoded_len() + self.fragment.len());
        self.encode(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgs::common::{CipherSuite, Identifier, KeyExchangeId, ParameterSpecifier};
    use crate::msgs::enums::{
        BulkCipherAlgorithm, CompressionMethod, KeyExchangeSuite, MacAlgorithm, SequenceNumberMode,
    };
    use crate::msgs::handshake::HandshakeMessage;

    /// The 42-byte datagram of §12.1, as printed in the reference notes.
    const DATAGRAM_12_1: &str = "c3 00 00 00 25 01 00 22 01 3b 9a ca 00 11 11 11 11 11 11 11 \
        11 11 11 11 11 00 00 03 08 00 00 00 00 04 03 03 05 02 01 00 02 03";

    fn datagram() -> Vec<u8> {
        hex::decode(DATAGRAM_12_1.replace(' ', "")).unwrap()
    }

    #[test]
    fn client_hello_datagram_known_answer_12_1() {
        let dgram = datagram();
        assert_eq!(dgram.len(), 42);
        let records = parse_datagram(&dgram).unwrap();
        assert_eq!(records.len(), 1);
        let rec = records[0];
        assert_eq!(rec.header_byte, 0xC3);
        assert_eq!(
            rec.header,
            RecordHeader {
                length_present: true,
                sequence: Some(0),
                cipher_spec: false,
                content_type: ContentType::Handshake,
            }
        );
        assert_eq!(rec.fragment.len(), 37);
        assert_eq!(rec.raw, &dgram[..]);

        let HandshakeMessage::ClientHello(ch) =
            HandshakeMessage::read_record(rec.fragment, None).unwrap()
        else {
            panic!("not a ClientHello");
        };
        assert_eq!(ch.client_version, 1);
        assert_eq!(ch.random.gmt_unix_time(), 0x3B9A_CA00);
        assert_eq!(&ch.random.0[4..], &[0x11; 12]);
        assert!(ch.session_id.is_empty());
        assert_eq!(
            ch.client_key_ids,
            [KeyExchangeId {
                suite: KeyExchangeSuite::Rsa,
                parameters: ParameterSpecifier::Index(0),
                identifier: Identifier::Null,
            }]
        );
        assert!(ch.trusted_key_ids.is_empty());
        assert_eq!(
            ch.cipher_suites,
            [
                CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha),
                CipherSuite::new(BulkCipherAlgorithm::DesCbc, MacAlgorithm::Sha80),
            ]
        );
        assert_eq!(ch.compression_methods, [CompressionMethod::Null]);
        assert_eq!(ch.sequence_number_mode, SequenceNumberMode::Explicit);
        assert_eq!(ch.key_refresh, 3);

        let again = OwnedRecord::new(
            ContentType::Handshake,
            0,
            false,
            HandshakeMessage::ClientHello(ch).to_bytes(),
        );
        assert_eq!(again.to_bytes(), dgram);
        assert_eq!(rec.to_owned_record(), again);
    }

    #[test]
    fn header_byte_bits() {
        for byte in 0u8..=255 {
            match RecordHeader::from_byte(byte) {
                Ok(h) => assert_eq!(h.to_byte(), byte),
                Err(e) => assert!(
                    byte & 0x10 != 0 || !(1..=4).contains(&(byte & 0x0F)),
                    "{byte:#x}: {e}"
                ),
            }
        }
        let h = RecordHeader::from_byte(0xE4).unwrap();
        assert!(h.length_present && h.cipher_spec && h.sequence.is_some());
        assert_eq!(h.content_type, ContentType::ApplicationData);
        assert_eq!(h.encoded_len(), 5);
        assert_eq!(RecordHeader::from_byte(0x02).unwrap().encoded_len(), 1);
        assert!(matches!(
            RecordHeader::from_byte(0xD3),
            Err(DecodeError::Illegal {
                field: "Record.record_type",
                ..
            })
        ));
        assert_eq!(
            RecordHeader::from_byte(0xC5).unwrap_err(),
            DecodeError::UnknownValue {
                field: "Record.content_type",
                value: 5
            }
        );
    }

    #[test]
    fn several_records_and_a_lengthless_last_one() {
        // CCS (S, L), then an alert with S only that runs to the end.
        let dgram = [
            0xC1, 0x00, 0x07, 0x00, 0x01, 0x01, 0x62, 0x00, 0x08, 2, 5, 1, 2, 3, 4,
        ];
        let recs = parse_datagram(&dgram).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].header.content_type, ContentType::ChangeCipherSpec);
        assert_eq!(recs[0].header.sequence, Some(7));
        assert_eq!(recs[0].fragment, [1]);
        assert_eq!(recs[0].raw, &dgram[..6]);
        assert!(!recs[1].header.length_present);
        assert!(recs[1].header.cipher_spec);
        assert_eq!(recs[1].header.sequence, Some(8));
        assert_eq!(recs[1].fragment, [2, 5, 1, 2, 3, 4]);
        assert_eq!(recs[1].raw, &dgram[6..]);
        let mut again = Vec::new();
        recs.iter()
            .for_each(|r| r.to_owned_record().encode(&mut again));
        assert_eq!(again, dgram);
    }

    #[test]
    fn framing_errors_name_their_field() {
        assert!(matches!(
            parse_datagram(&[]),
            Err(DecodeError::Truncated {
                field: "Record.record_type",
                ..
            })
        ));
        assert!(matches!(
            parse_datagram(&[0xC3, 0x00]),
            Err(DecodeError::Truncated {
                field: "Record.sequence_number",
                ..
            })
        ));
        assert!(matches!(
            parse_datagram(&[0x83, 0x00]),
            Err(DecodeError::Truncated {
                field: "Record.length",
                ..
            })
        ));
        assert!(matches!(
            parse_datagram(&[0x83, 0x00, 0x03, 1, 2]),
            Err(DecodeError::Truncated {
                field: "Record.fragment",
                ..
            })
        ));
        // A second record with a bad type poisons the whole datagram.
        assert_eq!(
            parse_datagram(&[0x81, 0x00, 0x01, 0x01, 0x80]).unwrap_err(),
            DecodeError::UnknownValue {
                field: "Record.content_type",
                value: 0
            }
        );
    }

    #[test]
    fn oversized_fragments_are_bad_length() {
        let len = (MAX_FRAGMENT + 1) as u16;
        let mut dgram = vec![0x84];
        dgram.extend_from_slice(&len.to_be_bytes());
        dgram.resize(3 + MAX_FRAGMENT + 1, 0);
        assert_eq!(
            parse_datagram(&dgram).unwrap_err(),
            DecodeError::BadLength {
                field: "Record.length",
                length: MAX_FRAGMENT + 1,
                min: 0,
                max: MAX_FRAGMENT
            }
        );
        let mut bare = vec![0x04];
        bare.resize(1 + MAX_FRAGMENT + 1, 0);
        assert!(matches!(
            parse_datagram(&bare),
            Err(DecodeError::BadLength { .. })
        ));
        bare.pop();
        assert_eq!(
            parse_datagram(&bare).unwrap()[0].fragment.len(),
            MAX_FRAGMENT
        );
    }

    #[test]
    fn empty_fragment_with_length_is_a_record() {
        let recs = parse_datagram(&[0x84, 0, 0, 0x04]).unwrap();
        assert_eq!(recs.len(), 2);
        assert!(recs[0].fragment.is_empty());
        assert!(recs[1].fragment.is_empty());
    }
}
