//! The record layer of one connection: sequence numbers, the replay window, and the
//! sealing and opening of records under the current cipher states (WAP-261 §7); the
//! handshake's framing and alerts around it are in `conn`.
//!
//! The methods the per-record path calls from `conn` are `#[inline]`: the release build
//! splits codegen units by module, and without the hint moving this code out of `conn`
//! stopped it being inlined there (+500 instructions a 256p/256p server handshake in
//! `wtlsperf count`).

use zeroize::Zeroizing;

use super::conn::Role;
use super::error::{DropReason, LocalError, PeerMisbehaved, ProtocolError};
use super::{level_for, Packing};
use crate::codec::Codec;
use crate::crypto::prf::PrfKey;
use crate::msgs::alert::{Alert, SentChecksums};
use crate::msgs::enums::{AlertDescription, ContentType};
use crate::msgs::record::{Record, RecordHeader};
use crate::record::{CipherState, ProtectionParams, RecordError};

/// A record header with L and S set (type, sequence number, length): what precedes the
/// message in a prebuilt record and in one [`RecordLayer::seal_clear`] builds.
pub(crate) const PREBUILT_HEADER_LEN: usize = 5;

/// Initial room for a clear-text fragment: every clear handshake message but a
/// certificate chain fits (ServerHello, a CertificateRequest naming a few CAs,
/// ClientHello, ClientKeyExchange).
const CLEAR_FRAGMENT_CAPACITY: usize = 256;

/// Sliding window over received sequence numbers (64 wide, as DTLS does): a datagram
/// network reorders and duplicates, so a record is accepted once, in any order, as long
/// as it is not older than the window.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReplayWindow {
    highest: Option<u16>,
    bits: u64,
}

impl ReplayWindow {
    /// Whether `seq` is new and inside the window (nothing is marked).
    #[inline]
    pub(crate) fn fresh(&self, seq: u16) -> bool {
        match self.highest {
            None => true,
            Some(h) if seq > h => true,
            Some(h) => {
                let back = u32::from(h - seq);
                back < 64 && self.bits & (1 << back) == 0
            }
        }
    }

    /// True (and the number is marked seen) if `seq` is new and inside the window.
    #[inline]
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
pub(crate) enum Opened<'a> {
    Plain(ContentType, Plaintext<'a>),
    Drop(DropReason),
}

/// A record's plaintext. One that came in clear is the datagram's own bytes: nothing to
/// copy and nothing secret to wipe (its record was on the wire as it is). One that was
/// decrypted is owned and wiped on drop.
pub(crate) enum Plaintext<'a> {
    Clear(&'a [u8]),
    Decrypted(Zeroizing<Vec<u8>>),
}

impl std::ops::Deref for Plaintext<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Plaintext::Clear(bytes) => bytes,
            Plaintext::Decrypted(bytes) => bytes,
        }
    }
}

#[derive(Clone)]
pub(crate) struct RecordLayer {
    role: Role,
    pub packing: Packing,
    write_seq: u16,
    // Boxed: a half-open connection (the state a flood creates) has neither yet.
    write: Option<Box<CipherState>>,
    read: Option<Box<CipherState>>,
    window: ReplayWindow,
    /// The keys of the next ChangeCipherSpecs, with the master secret keyed for the PRF.
    pending: Option<(ProtectionParams, PrfKey)>,
    /// Checksum of the last record received, as received: our alerts carry it (§7.12).
    last_received: [u8; 4],
    /// Checksums of the last four records we sent: an incoming alert must match one.
    sent_checksums: SentChecksums,
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
            last_received: [0; 4],
            sent_checksums: SentChecksums::default(),
        }
    }

    /// Keys for the next ChangeCipherSpec in each direction.
    #[inline]
    pub(crate) fn set_pending(&mut self, params: ProtectionParams, master: PrfKey) {
        self.pending = Some((params, master));
    }

    /// Install the pending write state (after sending ChangeCipherSpec).
    #[inline]
    pub(crate) fn install_write(&mut self) -> Result<(), ProtocolError> {
        let (params, master) = self.pending.clone().ok_or(LocalError::NoPendingKeys)?;
        self.write = Some(Box::new(CipherState::with_master_key(
            params,
            self.role.write_direction(),
            master,
        )));
        self.write_seq = 0;
        Ok(())
    }

    /// Install the pending read state (after receiving ChangeCipherSpec).
    #[inline]
    pub(crate) fn install_read(&mut self) -> Result<(), ProtocolError> {
        let (params, master) = self
            .pending
            .clone()
            .ok_or(PeerMisbehaved::ChangeCipherSpecBeforeKeys)?;
        self.read = Some(Box::new(CipherState::with_master_key(
            params,
            self.role.read_direction(),
            master,
        )));
        self.window = ReplayWindow::default();
        Ok(())
    }

    /// One record, protected under the current write state, with L and S set (§2.4).
    #[inline]
    pub(crate) fn seal(
        &mut self,
        content_type: ContentType,
        payload: &[u8],
    ) -> Result<Vec<u8>, ProtocolError> {
        self.seal_with(content_type, payload, self.write.is_some())
    }

    /// The header of the next record sent, with the sequence number it takes.
    #[inline]
    fn next_header(&mut self, content_type: ContentType, protect: bool) -> (u16, RecordHeader) {
        let seq = self.write_seq;
        self.write_seq = self.write_seq.wrapping_add(1);
        let header = RecordHeader {
            length_present: true,
            sequence: Some(seq),
            cipher_spec: protect,
            content_type,
        };
        (seq, header)
    }

    fn seal_with(
        &mut self,
        content_type: ContentType,
        payload: &[u8],
        protect: bool,
    ) -> Result<Vec<u8>, ProtocolError> {
        let (seq, header) = self.next_header(content_type, protect);
        // One buffer: the header, then the fragment protected in place after it.
        let state = self.write.as_deref_mut().filter(|_| protect);
        let fragment_len =
            payload.len() + state.as_ref().map_or(0, |s| s.overhead_for(payload.len()));
        let len = u16::try_from(fragment_len).map_err(|_| RecordError::RecordOverflow)?;
        let mut out = Vec::with_capacity(PREBUILT_HEADER_LEN + fragment_len);
        header.encode_prefix(len, &mut out);
        match state {
            Some(state) => state.protect_into(seq, header.to_byte(), payload, &mut out)?,
            None => out.extend_from_slice(payload),
        }
        self.sent_checksums.push(&out);
        Ok(out)
    }

    /// Whether a write state is installed (records we send are protected).
    #[inline]
    pub(crate) fn protecting(&self) -> bool {
        self.write.is_some()
    }

    /// A clear-text record (no write state yet, see [`RecordLayer::protecting`]) whose
    /// fragment `encode` writes straight after the header, in the record's own buffer:
    /// the length is patched in afterwards, so the fragment is neither built apart nor
    /// copied. A protected record needs its plaintext apart (MAC, then encryption) and
    /// goes through [`RecordLayer::seal`].
    #[inline]
    pub(crate) fn seal_clear(
        &mut self,
        content_type: ContentType,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<Vec<u8>, ProtocolError> {
        debug_assert!(self.write.is_none(), "a clear record under a write state");
        let (_, header) = self.next_header(content_type, false);
        let mut out = Vec::with_capacity(PREBUILT_HEADER_LEN + CLEAR_FRAGMENT_CAPACITY);
        header.encode_prefix(0, &mut out);
        let start = out.len();
        encode(&mut out);
        let len = u16::try_from(out.len() - start).map_err(|_| RecordError::RecordOverflow)?;
        out[start - 2..start].copy_from_slice(&len.to_be_bytes());
        self.sent_checksums.push(&out);
        Ok(out)
    }

    /// The sequence number the next record we send will carry.
    #[inline]
    pub(crate) fn next_write_seq(&self) -> u16 {
        self.write_seq
    }

    /// Account for a record built elsewhere (a precomputed, shared one) as if it had
    /// been sealed here: it takes the next sequence number and its checksum is kept.
    #[inline]
    pub(crate) fn sent_prebuilt(&mut self, record: &[u8]) {
        self.write_seq = self.write_seq.wrapping_add(1);
        self.sent_checksums.push(record);
    }

    /// An alert record about the last record received. The five alerts that may be
    /// needed when the peer cannot decrypt go in clear text (§2.4).
    #[inline]
    pub(crate) fn alert(&mut self, desc: AlertDescription) -> (Alert, Vec<u8>) {
        let alert = Alert {
            level: level_for(desc),
            description: desc,
            checksum: self.last_received,
        };
        let protect = self.write.is_some() && !desc.may_be_sent_in_clear();
        let bytes = self
            .seal_with(ContentType::Alert, &alert.to_bytes(), protect)
            .unwrap_or_default();
        (alert, bytes)
    }

    /// Whether an alert's checksum matches one of our last records: a blind injector
    /// cannot know them (§7.12).
    #[inline]
    pub(crate) fn alert_checksum_ok(&self, alert: &Alert) -> bool {
        self.sent_checksums.contains(&alert.checksum)
    }

    /// Check the C bit and the sequence number, then remove the protection. A record
    /// that fails its MAC or padding is dropped unanswered, as DTLS does (RFC 6347
    /// §4.1.2.7): anyone can forge one, so it must neither end the connection nor use
    /// up its sequence number; only a record that opens is marked seen and becomes the
    /// "last record received" our alerts checksum.
    #[inline]
    pub(crate) fn open<'a>(&mut self, record: &Record<'a>) -> Opened<'a> {
        let header = &record.header;
        let Some(seq) = header.sequence else {
            // Explicit sequence numbers are negotiated; a record without one is
            // unreadable under our read state.
            return Opened::Drop(DropReason::NoSequenceNumber);
        };
        let clear_alert = header.content_type == ContentType::Alert && !header.cipher_spec;
        if header.cipher_spec != self.read.is_some() && !clear_alert {
            return Opened::Drop(DropReason::CipherSpecMismatch);
        }
        if !self.window.fresh(seq) {
            return Opened::Drop(DropReason::StaleOrReplayed);
        }
        if !header.cipher_spec && self.read.is_some() {
            // A clear-text alert under a read state (§2.4 allows five): nothing
            // authenticates it yet, so it must not move the window or the checksum.
            return Opened::Plain(header.content_type, Plaintext::Clear(record.fragment));
        }
        let plain = match (&mut self.read, header.cipher_spec) {
            (Some(state), true) => {
                match state.unprotect(seq, record.header_byte, record.fragment) {
                    Ok(plain) => Plaintext::Decrypted(plain),
                    Err(e) => return Opened::Drop(DropReason::FailedAuthentication(e)),
                }
            }
            (None, true) => return Opened::Drop(DropReason::ProtectedWithoutReadState),
            (_, false) => Plaintext::Clear(record.fragment),
        };
        self.window.accept(seq);
        self.last_received = crate::msgs::alert::alert_checksum(record.raw);
        Opened::Plain(header.content_type, plain)
    }

    /// Pack a flight of records into datagrams.
    #[inline]
    pub(crate) fn pack(&self, mut records: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        match self.packing {
            Packing::FlightPerDatagram => {
                // The records' own list carries the one datagram, and a lone record
                // is its datagram as it stands: no new list, no copy.
                if records.len() > 1 {
                    let datagram = records.concat();
                    records.clear();
                    records.push(datagram);
                }
                records
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
