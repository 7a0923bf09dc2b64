//! The record layer of one connection, shared by client and server: sequence numbers,
//! cipher-state installation at ChangeCipherSpec, replay protection, alert checksums
//! and the packing of records into datagrams.

use std::collections::VecDeque;

use zeroize::Zeroizing;

use super::{level_for, Packing, ProtocolError};
use crate::codec::Codec;
use crate::crypto::keys::Direction;
use crate::msgs::alert::Alert;
use crate::msgs::enums::{AlertDescription, ContentType};
use crate::msgs::record::{OwnedRecord, Record, RecordHeader};
use crate::record::{CipherState, ProtectionParams};

/// Which end of the connection this record layer belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Client,
    Server,
}

impl Role {
    fn write_direction(self) -> Direction {
        match self {
            Role::Client => Direction::ClientWrite,
            Role::Server => Direction::ServerWrite,
        }
    }
    fn read_direction(self) -> Direction {
        match self {
            Role::Client => Direction::ServerWrite,
            Role::Server => Direction::ClientWrite,
        }
    }
}

/// Sliding window over received sequence numbers (64 wide, as DTLS does): a datagram
/// network reorders and duplicates, so a record is accepted once, in any order, as long
/// as it is not older than the window.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReplayWindow {
    highest: Option<u16>,
    bits: u64,
}

impl ReplayWindow {
    /// True (and the number is marked seen) if `seq` is new and inside the window.
    pub(crate) fn accept(&mut self, seq: u16) -> bool {
        match self.highest {
            None => {
                self.highest = Some(seq);
                self.bits = 1;
                true
            }
            Some(h) if seq > h => {
                let shift = u32::from(seq - h);
                self.bits = if shift >= 64 { 0 } else { self.bits << shift };
                self.bits |= 1;
                self.highest = Some(seq);
                true
            }
            Some(h) => {
                let back = u32::from(h - seq);
                if back >= 64 || self.bits & (1 << back) != 0 {
                    false
                } else {
                    self.bits |= 1 << back;
                    true
                }
            }
        }
    }
}

/// What reading one record gave.
pub(crate) enum Opened {
    Plain(ContentType, Zeroizing<Vec<u8>>),
    Drop(&'static str),
    Fail(ProtocolError),
}

pub(crate) struct RecordLayer {
    role: Role,
    pub packing: Packing,
    write_seq: u16,
    write: Option<CipherState>,
    read: Option<CipherState>,
    window: ReplayWindow,
    pending: Option<ProtectionParams>,
    /// The last record received, as received: the alert checksum covers it (§7.12).
    last_received: Vec<u8>,
    /// Checksums of the last four records we sent: an incoming alert must match one.
    sent_checksums: VecDeque<[u8; 4]>,
}

impl RecordLayer {
    pub(crate) fn new(role: Role, packing: Packing) -> Self {
        RecordLayer {
            role,
            packing,
            write_seq: 0,
            write: None,
            read: None,
            window: ReplayWindow::default(),
            pending: None,
            last_received: Vec::new(),
            sent_checksums: VecDeque::with_capacity(4),
        }
    }

    /// Keys for the next ChangeCipherSpec in each direction.
    pub(crate) fn set_pending(&mut self, params: ProtectionParams) {
        self.pending = Some(params);
    }

    /// Install the pending write state (after sending ChangeCipherSpec).
    pub(crate) fn install_write(&mut self) -> Result<(), ProtocolError> {
        let params = self.pending.clone().ok_or_else(|| {
            ProtocolError::new(AlertDescription::InternalError, "no pending keys")
        })?;
        self.write = Some(CipherState::new(params, self.role.write_direction()));
        self.write_seq = 0;
        Ok(())
    }

    /// Install the pending read state (after receiving ChangeCipherSpec).
    pub(crate) fn install_read(&mut self) -> Result<(), ProtocolError> {
        let params = self.pending.clone().ok_or_else(|| {
            ProtocolError::new(
                AlertDescription::UnexpectedMessage,
                "ChangeCipherSpec before the keys were agreed",
            )
        })?;
        self.read = Some(CipherState::new(params, self.role.read_direction()));
        self.window = ReplayWindow::default();
        Ok(())
    }

    /// One record, protected under the current write state, with L and S set (§2.4).
    pub(crate) fn seal(
        &mut self,
        content_type: ContentType,
        payload: &[u8],
    ) -> Result<Vec<u8>, ProtocolError> {
        self.seal_with(content_type, payload, self.write.is_some())
    }

    fn seal_with(
        &mut self,
        content_type: ContentType,
        payload: &[u8],
        protect: bool,
    ) -> Result<Vec<u8>, ProtocolError> {
        let seq = self.write_seq;
        self.write_seq = self.write_seq.wrapping_add(1);
        let header = RecordHeader {
            length_present: true,
            sequence: Some(seq),
            cipher_spec: protect,
            content_type,
        };
        let fragment = match (&mut self.write, protect) {
            (Some(state), true) => state
                .protect(seq, header.to_byte(), payload)
                .map_err(|e| ProtocolError::new(e.alert(), e.to_string()))?,
            _ => payload.to_vec(),
        };
        let mut out = Vec::with_capacity(fragment.len() + 5);
        OwnedRecord { header, fragment }.encode(&mut out);
        let checksum = crate::msgs::alert::alert_checksum(&out);
        if self.sent_checksums.len() == 4 {
            self.sent_checksums.pop_front();
        }
        self.sent_checksums.push_back(checksum);
        Ok(out)
    }

    /// An alert record about the last record received. The five alerts that may be
    /// needed when the peer cannot decrypt go in clear text (§2.4).
    pub(crate) fn alert(&mut self, desc: AlertDescription) -> (Alert, Vec<u8>) {
        let alert = Alert::for_record(level_for(desc), desc, &self.last_received);
        let protect = self.write.is_some() && !desc.may_be_sent_in_clear();
        let bytes = self
            .seal_with(ContentType::Alert, &alert.to_bytes(), protect)
            .unwrap_or_default();
        (alert, bytes)
    }

    /// Whether an alert's checksum matches one of our last records: a blind injector
    /// cannot know them (§7.12).
    pub(crate) fn alert_checksum_ok(&self, alert: &Alert) -> bool {
        self.sent_checksums.contains(&alert.checksum)
    }

    /// Check the C bit and the sequence number, then remove the protection.
    pub(crate) fn open(&mut self, record: &Record<'_>) -> Opened {
        let header = &record.header;
        let Some(seq) = header.sequence else {
            // Explicit sequence numbers are negotiated; a record without one is
            // unreadable under our read state.
            return Opened::Drop("record without sequence number");
        };
        let clear_alert = header.content_type == ContentType::Alert && !header.cipher_spec;
        if header.cipher_spec != self.read.is_some() && !clear_alert {
            return Opened::Drop("record cipher-spec bit does not match the read state");
        }
        if !self.window.accept(seq) {
            return Opened::Drop("stale or replayed record");
        }
        self.last_received.clear();
        self.last_received.extend_from_slice(record.raw);
        if !header.cipher_spec {
            return Opened::Plain(
                header.content_type,
                Zeroizing::new(record.fragment.to_vec()),
            );
        }
        let state = self.read.as_mut().expect("checked above");
        match state.unprotect(seq, record.header_byte, record.fragment) {
            Ok(plain) => Opened::Plain(header.content_type, plain),
            Err(e) => Opened::Fail(ProtocolError::new(e.alert(), e.to_string())),
        }
    }

    /// Pack a flight of records into datagrams.
    pub(crate) fn pack(&self, records: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        match self.packing {
            Packing::FlightPerDatagram => {
                if records.is_empty() {
                    Vec::new()
                } else {
                    vec![records.concat()]
                }
            }
            Packing::MessagePerDatagram => records,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_window_accepts_each_number_once_in_any_order() {
        let mut w = ReplayWindow::default();
        assert!(w.accept(5));
        assert!(w.accept(3));
        assert!(!w.accept(3));
        assert!(!w.accept(5));
        assert!(w.accept(4));
        assert!(w.accept(100));
        assert!(!w.accept(20), "older than the window");
        assert!(w.accept(99));
    }
}
