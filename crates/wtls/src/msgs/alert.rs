//! The Alert and ChangeCipherSpec protocols (wire-format notes §8, §7.12).

use crate::codec::{Codec, DecodeError, Reader};
use crate::msgs::enums::{AlertDescription, AlertLevel};

/// XOR-fold checksum of a record (§7.12): `c[k]` is the XOR of every byte whose offset
/// is `k` modulo 4, i.e. the record zero-padded to a multiple of 4 and folded as 32-bit
/// words. Every alert carries this checksum of the last record received from the peer,
/// so that a peer can reject alerts injected blindly by someone who never saw the
/// traffic. `record` is the complete record as received, header included.
///
/// Folded eight bytes at a time (every record sent or received is folded, whole
/// certificates included): offsets `k` and `k + 4` of a word share slot `k`, so the
/// word's halves are combined once at the end; the tail starts at a multiple of 4.
pub fn alert_checksum(record: &[u8]) -> [u8; 4] {
    let (words, tail) = record.as_chunks::<8>();
    let folded = words
        .iter()
        .fold(0u64, |acc, w| acc ^ u64::from_ne_bytes(*w));
    let halves = folded.to_ne_bytes();
    let mut c = [0u8; 4];
    for (k, slot) in c.iter_mut().enumerate() {
        *slot = halves[k] ^ halves[k + 4];
    }
    for (i, b) in tail.iter().enumerate() {
        c[i % 4] ^= b;
    }
    c
}

/// The checksums of the last four records sent (§7.12): an incoming alert must carry
/// one of them. A fixed ring rather than a queue on the heap, so that the copy a
/// connection takes before each datagram (to roll a dropped one back) is a plain copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SentChecksums {
    ring: [[u8; 4]; 4],
    /// Slots filled so far (at most 4); they are filled in order before the ring wraps.
    len: usize,
    /// The slot the next checksum goes to (the oldest one once the ring is full).
    next: usize,
}

impl SentChecksums {
    /// Keep the checksum of the record just sent, forgetting the oldest of four.
    pub(crate) fn push(&mut self, record: &[u8]) {
        self.ring[self.next] = alert_checksum(record);
        self.next = (self.next + 1) % self.ring.len();
        self.len = (self.len + 1).min(self.ring.len());
    }

    pub(crate) fn contains(&self, checksum: &[u8; 4]) -> bool {
        self.ring[..self.len].contains(checksum)
    }
}

/// An alert: 6 bytes, level, description and the checksum (§8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Alert {
    pub level: AlertLevel,
    pub description: AlertDescription,
    pub checksum: [u8; 4],
}

impl Alert {
    /// Length on the wire.
    pub const LEN: usize = 6;

    /// An alert answering `last_record_received` (the whole record as received, header
    /// and fragment; for a no_connection reply, the whole received datagram, §7.12).
    pub fn for_record(
        level: AlertLevel,
        description: AlertDescription,
        last_record_received: &[u8],
    ) -> Self {
        Alert {
            level,
            description,
            checksum: alert_checksum(last_record_received),
        }
    }

    /// Whether the checksum matches `record`. A receiver compares against the last few
    /// records it sent (S3 keeps four) and ignores an alert that matches none.
    pub fn checksum_matches(&self, record: &[u8]) -> bool {
        self.checksum == alert_checksum(record)
    }
}

impl Codec for Alert {
    fn encode(&self, out: &mut Vec<u8>) {
        self.level.encode(out);
        self.description.encode(out);
        out.extend_from_slice(&self.checksum);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Alert {
            level: AlertLevel::read(r)?,
            description: AlertDescription::read(r)?,
            checksum: r.array("Alert.checksum")?,
        })
    }
}

/// The ChangeCipherSpec message: the single byte 0x01 (§8.1). Any other value is an
/// error, since the byte carries no information other than "switch now".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ChangeCipherSpec;

impl ChangeCipherSpec {
    /// The only defined value.
    pub const VALUE: u8 = 1;
}

impl Codec for ChangeCipherSpec {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(Self::VALUE);
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        match r.u8("ChangeCipherSpec.type")? {
            Self::VALUE => Ok(ChangeCipherSpec),
            other => Err(DecodeError::UnknownValue {
                field: "ChangeCipherSpec.type",
                value: other.into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sent_checksums_keep_the_last_four() {
        let mut sent = SentChecksums::default();
        let records: Vec<[u8; 4]> = (0u8..6).map(|i| [i, 0, 0, 0]).collect();
        assert!(!sent.contains(&[0, 0, 0, 0]), "nothing sent yet");
        for r in &records[..2] {
            sent.push(r);
        }
        assert!(sent.contains(&records[0]) && sent.contains(&records[1]));
        assert!(!sent.contains(&records[2]));
        for r in &records[2..] {
            sent.push(r);
        }
        assert!(!sent.contains(&records[0]) && !sent.contains(&records[1]));
        assert!(records[2..].iter().all(|r| sent.contains(r)));
    }

    /// The 42-byte ClientHello record of §12.1.
    const CLIENT_HELLO_RECORD: &str = "c30000002501002201 3b9aca00 111111111111111111111111 \
        00 0003 080000 0000 04 0303 0502 0100 02 03";

    fn record() -> Vec<u8> {
        hex::decode(CLIENT_HELLO_RECORD.replace(' ', "")).unwrap()
    }

    #[test]
    fn checksum_known_answer_12_3() {
        let rec = record();
        assert_eq!(rec.len(), 42);
        assert_eq!(alert_checksum(&rec), [0xf9, 0x2e, 0x89, 0xf9]);
    }

    #[test]
    fn checksum_folds_by_offset_mod_four() {
        assert_eq!(alert_checksum(&[]), [0; 4]);
        assert_eq!(alert_checksum(&[1, 2, 3, 4, 5]), [1 ^ 5, 2, 3, 4]);
        assert_eq!(alert_checksum(&[0xFF; 8]), [0; 4]);
    }

    #[test]
    fn checksum_by_words_matches_byte_by_byte_for_every_tail() {
        let bytes: Vec<u8> = (0..=24u8).map(|b| b.wrapping_mul(37) ^ 0x5a).collect();
        for len in 0..=bytes.len() {
            let mut by_byte = [0u8; 4];
            for (i, b) in bytes[..len].iter().enumerate() {
                by_byte[i % 4] ^= b;
            }
            assert_eq!(alert_checksum(&bytes[..len]), by_byte, "length {len}");
        }
    }

    #[test]
    fn alert_for_record_encodes_six_bytes() {
        let a = Alert::for_record(
            AlertLevel::Critical,
            AlertDescription::NoConnection,
            &record(),
        );
        let bytes = a.to_bytes();
        assert_eq!(bytes, [2, 5, 0xf9, 0x2e, 0x89, 0xf9]);
        assert_eq!(Alert::read_exact(&bytes, "Alert").unwrap(), a);
        assert!(a.checksum_matches(&record()));
        assert!(!a.checksum_matches(&record()[1..]));
    }

    #[test]
    fn alert_errors() {
        assert_eq!(
            Alert::read_exact(&[4, 0, 0, 0, 0, 0], "Alert").unwrap_err(),
            DecodeError::UnknownValue {
                field: "Alert.level",
                value: 4
            }
        );
        assert_eq!(
            Alert::read_exact(&[1, 2, 0, 0, 0, 0], "Alert").unwrap_err(),
            DecodeError::UnknownValue {
                field: "Alert.description",
                value: 2
            }
        );
        assert!(matches!(
            Alert::read_exact(&[1, 0, 0, 0, 0], "Alert"),
            Err(DecodeError::Truncated {
                field: "Alert.checksum",
                ..
            })
        ));
        assert_eq!(
            Alert::read_exact(&[1, 0, 0, 0, 0, 0, 0], "Alert").unwrap_err(),
            DecodeError::TrailingBytes {
                field: "Alert",
                extra: 1
            }
        );
    }

    #[test]
    fn change_cipher_spec_is_the_byte_one() {
        assert_eq!(ChangeCipherSpec.to_bytes(), [1]);
        assert_eq!(
            ChangeCipherSpec::read_exact(&[1], "ChangeCipherSpec").unwrap(),
            ChangeCipherSpec
        );
        assert_eq!(
            ChangeCipherSpec::read_exact(&[2], "ChangeCipherSpec").unwrap_err(),
            DecodeError::UnknownValue {
                field: "ChangeCipherSpec.type",
                value: 2
            }
        );
        assert!(ChangeCipherSpec::read_exact(&[], "ChangeCipherSpec").is_err());
        assert!(matches!(
            ChangeCipherSpec::read_exact(&[1, 1], "ChangeCipherSpec"),
            Err(DecodeError::TrailingBytes { .. })
        ));
    }
}
