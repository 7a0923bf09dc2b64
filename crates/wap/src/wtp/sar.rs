//! Segmentation and reassembly (WAP-224 §9.6), shared by both roles: a sender splits a
//! message into packets numbered by PSN (packet 0 travels in the Invoke or Result PDU,
//! the rest in Segmented Invoke / Segmented Result PDUs) and sends them a group at a
//! time; the receiver acknowledges each complete group with an Ack carrying the group's
//! last PSN, or names the missing packets in a Negative Ack.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use super::{Trailer, UsageError};

/// The sending side of one segmented (or whole) message.
#[derive(Debug, Clone)]
pub(super) struct Segmenter {
    segments: Vec<Vec<u8>>,
    group_size: usize,
    /// The first packet not yet acknowledged.
    first_unacked: usize,
}

impl Segmenter {
    pub(super) fn new(
        data: Vec<u8>,
        segment_size: usize,
        group_size: u8,
    ) -> Result<Segmenter, UsageError> {
        let size = segment_size.max(1);
        let segments: Vec<Vec<u8>> = if data.len() <= size {
            vec![data]
        } else {
            data.chunks(size).map(<[u8]>::to_vec).collect()
        };
        if segments.len() > 256 {
            return Err(UsageError::MessageTooLarge);
        }
        Ok(Segmenter {
            segments,
            group_size: usize::from(group_size.max(1)),
            first_unacked: 0,
        })
    }

    pub(super) fn is_segmented(&self) -> bool {
        self.segments.len() > 1
    }

    pub(super) fn trailer(&self, psn: usize) -> Trailer {
        if !self.is_segmented() {
            Trailer::Whole
        } else if psn + 1 == self.segments.len() {
            Trailer::EndOfMessage
        } else if (psn + 1).is_multiple_of(self.group_size) {
            Trailer::EndOfGroup
        } else {
            Trailer::More
        }
    }

    pub(super) fn data(&self, psn: usize) -> &[u8] {
        self.segments.get(psn).map_or(&[], Vec::as_slice)
    }

    /// The PSNs to send: the whole group in flight, or, retransmitting on the timer, its
    /// last packet alone (WAP-224 §7.14.3: "only the GTR/TTR packet is re-transmitted,
    /// not the entire packet group"; the receiver's Ack or Nack then says what is
    /// missing).
    pub(super) fn to_send(&self, retransmission: bool) -> RangeInclusive<usize> {
        let group = self.current_group();
        if retransmission {
            *group.end()..=*group.end()
        } else {
            group
        }
    }

    /// The PSNs of the group now in flight.
    pub(super) fn current_group(&self) -> RangeInclusive<usize> {
        let start = self.first_unacked;
        let end = (start + self.group_size).min(self.segments.len()) - 1;
        start..=end
    }

    /// Whether the group in flight is the message's last (or its only packet): its
    /// retransmission waits R, an earlier group's G_R (WAP-224 Appendix A, "Timer Usage").
    pub(super) fn last_group_in_flight(&self) -> bool {
        *self.current_group().end() + 1 >= self.segments.len()
    }

    /// The retry interval of the group in flight.
    pub(super) fn retry_interval_ns(&self, timers: &super::Timers) -> u64 {
        if self.last_group_in_flight() {
            timers.retry_interval_ns
        } else {
            timers.group_retry_interval_ns
        }
    }

    /// The receiver acknowledged up to `psn`. An Ack for a packet outside the group in
    /// flight is stale (a copy of an earlier group's Ack, answering a retransmission of
    /// that group's last packet) and changes nothing: sending the group in flight again
    /// for it would put a whole group on the link per spurious retransmission.
    pub(super) fn acknowledge(&mut self, psn: u8) -> Acked {
        let psn = usize::from(psn);
        if !self.current_group().contains(&psn) {
            return Acked::Stale;
        }
        self.first_unacked = psn + 1;
        if self.first_unacked >= self.segments.len() {
            Acked::Message
        } else {
            Acked::Group
        }
    }
}

/// What an Ack of a segmented message did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Acked {
    /// Nothing: it names no packet of the group in flight.
    Stale,
    /// The group: the next one may leave.
    Group,
    /// The whole message.
    Message,
}

/// Where a reassembly stands after a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Progress {
    /// Nothing to send yet.
    Pending,
    /// A group is complete up to this PSN: acknowledge it.
    AckGroup(u8),
    /// A group ended with gaps: ask for these PSNs again.
    Missing(Vec<u8>),
    /// The message is whole; acknowledge `last_psn` (None when it was never segmented).
    Complete { data: Vec<u8>, last_psn: Option<u8> },
}

/// The receiving side of one message.
#[derive(Debug, Clone, Default)]
pub(super) struct Reassembly {
    packets: BTreeMap<u8, Vec<u8>>,
    /// The highest PSN seen that closes a group (or the message).
    group_end: Option<u8>,
    /// The PSN that ends the message, once seen.
    message_end: Option<u8>,
    /// The last group end already acknowledged.
    acked: Option<u8>,
}

impl Reassembly {
    pub(super) fn add(&mut self, psn: u8, trailer: Trailer, data: &[u8]) -> Progress {
        // A one-packet message (marked whole, or "end of message" by a peer that offers
        // SAR, as Kannel reads an Invoke with TTR set) is acknowledged like any other.
        if trailer.ends_message() && psn == 0 && self.packets.is_empty() {
            return Progress::Complete {
                data: data.to_vec(),
                last_psn: None,
            };
        }
        self.packets.entry(psn).or_insert_with(|| data.to_vec());
        if trailer.ends_group() && self.group_end.is_none_or(|g| psn > g) {
            self.group_end = Some(psn);
        }
        if trailer.ends_message() {
            self.message_end = Some(psn);
        }
        let Some(end) = self.group_end else {
            return Progress::Pending;
        };
        let missing: Vec<u8> = (0..=end)
            .filter(|p| !self.packets.contains_key(p))
            .collect();
        if !missing.is_empty() {
            return Progress::Missing(missing);
        }
        if self.message_end == Some(end) {
            let data = std::mem::take(&mut self.packets)
                .into_values()
                .flatten()
                .collect();
            return Progress::Complete {
                data,
                last_psn: Some(end),
            };
        }
        if self.acked == Some(end) && psn != end {
            return Progress::Pending;
        }
        self.acked = Some(end);
        Progress::AckGroup(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_mark_groups_and_the_end() {
        let s = Segmenter::new(vec![0; 10], 2, 2).unwrap();
        let t: Vec<Trailer> = (0..5).map(|p| s.trailer(p)).collect();
        use Trailer::*;
        assert_eq!(t, [More, EndOfGroup, More, EndOfGroup, EndOfMessage]);
        assert_eq!(s.current_group(), 0..=1);
        assert_eq!(Segmenter::new(vec![0; 3], 2, 2).unwrap().trailer(0), More);
        assert_eq!(Segmenter::new(vec![0; 2], 2, 2).unwrap().trailer(0), Whole);
        assert_eq!(
            Segmenter::new(vec![0; 600], 2, 2).unwrap_err(),
            UsageError::MessageTooLarge
        );
    }

    #[test]
    fn gaps_are_named_then_filled() {
        let mut r = Reassembly::default();
        assert_eq!(r.add(0, Trailer::More, b"a"), Progress::Pending);
        assert_eq!(
            r.add(2, Trailer::EndOfGroup, b"c"),
            Progress::Missing(vec![1])
        );
        assert_eq!(r.add(1, Trailer::More, b"b"), Progress::AckGroup(2));
        // A retransmitted group end is acknowledged again (the Ack may have been lost).
        assert_eq!(r.add(2, Trailer::EndOfGroup, b"c"), Progress::AckGroup(2));
        assert_eq!(
            r.add(3, Trailer::EndOfMessage, b"d"),
            Progress::Complete {
                data: b"abcd".to_vec(),
                last_psn: Some(3)
            }
        );
    }
}
