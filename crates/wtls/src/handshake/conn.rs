//! What client and server share around the record layer (`record_layer`): the
//! handshake transcript, the key schedule, cipher-state installation at
//! ChangeCipherSpec, Finished, alert handling and the framing of a datagram's records.

use zeroize::Zeroizing;

use super::error::{
    DropReason, HandshakeState, HsResult, LocalError, PeerMisbehaved, ProtocolError,
    UnauthenticatedAlert,
};
use super::{Event, Output, Packing};
use crate::codec::Codec;
use crate::crypto::keys::Direction;
use crate::crypto::prf::{PrfHash, PrfKey};
use crate::msgs::alert::{Alert, ChangeCipherSpec};
use crate::msgs::common::{CipherSuite, Random};
use crate::msgs::enums::{AlertLevel, ContentType, HandshakeType, KeyExchangeSuite, MacAlgorithm};
use crate::msgs::handshake::{split_handshake_record, Finished, HandshakeMessage, VerifyData};
use crate::msgs::record::Record;
use crate::probe::{Message, Operation, Probe};
use crate::record::ProtectionParams;

use super::record_layer::{Opened, RecordLayer, PREBUILT_HEADER_LEN};

/// Which end of a connection: the client (the handset) or the server (the gateway).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Client,
    Server,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Client => "client",
            Role::Server => "server",
        })
    }
}

impl Role {
    pub(crate) fn peer(self) -> Role {
        match self {
            Role::Client => Role::Server,
            Role::Server => Role::Client,
        }
    }

    /// The probe's name for a handshake message this side sends (thesis Tables 3.4,
    /// 3.6); `None` for HelloRequest, which no table times.
    pub(crate) fn sent_message(self, typ: HandshakeType) -> Option<Message> {
        use HandshakeType as T;
        Some(match (self, typ) {
            (Role::Client, T::ClientHello) => Message::CH,
            (Role::Client, T::Certificate) => Message::CCERT,
            (Role::Client, T::ClientKeyExchange) => Message::CKX,
            (Role::Client, T::CertificateVerify) => Message::CERTVRFY,
            (Role::Client, T::Finished) => Message::CFIN,
            (Role::Server, T::ServerHello) => Message::SH,
            (Role::Server, T::Certificate) => Message::SCERT,
            (Role::Server, T::ServerKeyExchange) => Message::SKX,
            (Role::Server, T::CertificateRequest) => Message::CERTREQ,
            (Role::Server, T::ServerHelloDone) => Message::SHD,
            (Role::Server, T::Finished) => Message::SFIN,
            _ => return None,
        })
    }

    /// The probe's name for this side's ChangeCipherSpec.
    pub(crate) fn change_cipher_spec(self) -> Message {
        match self {
            Role::Client => Message::CCCS,
            Role::Server => Message::SCCS,
        }
    }

    pub(crate) fn write_direction(self) -> Direction {
        match self {
            Role::Client => Direction::ClientWrite,
            Role::Server => Direction::ServerWrite,
        }
    }
    pub(crate) fn read_direction(self) -> Direction {
        match self {
            Role::Client => Direction::ServerWrite,
            Role::Server => Direction::ClientWrite,
        }
    }
}

/// The running hashes of the handshake messages (§7.10, §7.11).
///
/// Kept as hash states, not as the messages themselves, so that a half-open connection
/// at a gateway holds about 200 bytes here instead of every message it has seen: both
/// hashes run because the cipher suite (which picks the Finished hash) is not known
/// when the first message arrives, and CertificateVerify always signs SHA-1.
#[derive(Clone)]
pub(crate) struct Transcript {
    sha1: crate::crypto::sha1::Sha1,
    /// Dropped by [`Transcript::settle`] once a SHA-1 MAC family is negotiated.
    md5: Option<md5::Md5>,
}

impl Default for Transcript {
    fn default() -> Self {
        Transcript {
            sha1: crate::crypto::sha1::Sha1::default(),
            md5: Some(md5::Md5::default()),
        }
    }
}

impl Transcript {
    pub(crate) fn update(&mut self, message: &[u8]) {
        use digest::Digest;
        self.sha1.update(message);
        if let Some(md5) = &mut self.md5 {
            md5.update(message);
        }
    }

    /// The cipher suite is known: stop running the hash the Finished will not use.
    pub(crate) fn settle(&mut self, hash: PrfHash) {
        if hash == PrfHash::Sha1 {
            self.md5 = None;
        }
    }

    /// The digest of the MAC family's hash, full length (the Finished seed and the
    /// CertificateVerify input). `None` only if MD5 was dropped for a SHA suite and is
    /// then asked for, which the handshake never does.
    pub(crate) fn digest(&self, hash: PrfHash) -> Option<TranscriptHash> {
        use digest::Digest;
        let mut out = TranscriptHash([0; 20], 20);
        match hash {
            PrfHash::Sha1 => out.0.copy_from_slice(&self.sha1.clone().finalize()),
            PrfHash::Md5 => {
                out.0[..16].copy_from_slice(&self.md5.as_ref()?.clone().finalize());
                out.1 = 16;
            }
        }
        Some(out)
    }
}

/// A transcript digest (SHA-1's 20 bytes or MD5's 16) on the stack, not the heap.
pub(crate) struct TranscriptHash([u8; 20], usize);

impl std::ops::Deref for TranscriptHash {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0[..self.1]
    }
}

/// What the key derivation needs from the negotiation, shared by client and server
/// (rustls calls it `ConnectionSecrets`): the cipher suite, the key refresh rate and both
/// randoms. The master secret and the key blocks come from it in one place,
/// [`Core::agree`] and [`Core::install_master`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeySchedule {
    pub(crate) cipher: CipherSuite,
    pub(crate) key_refresh: u8,
    pub(crate) client_random: Random,
    pub(crate) server_random: Random,
}

impl KeySchedule {
    /// The MAC algorithm, which picks the PRF, Finished and CertificateVerify hash.
    pub(crate) fn mac(&self) -> MacAlgorithm {
        self.cipher.mac
    }

    pub(crate) fn hash(&self) -> PrfHash {
        PrfHash::for_mac(self.cipher.mac)
    }
}

/// What both ends of a connection hold besides their own state machine: the record
/// layer, the handshake transcript, the master secret and the probe.
pub(crate) struct Core {
    pub(crate) role: Role,
    pub(crate) records: RecordLayer,
    pub(crate) transcript: Transcript,
    pub(crate) master_secret: Option<Zeroizing<[u8; 20]>>,
    /// The master secret keyed for the PRF once (both Finished use it).
    master_key: Option<PrfKey>,
    pub(crate) probe: Probe,
    /// Flights sent so far: an input that made us send one was a complete flight.
    pub(crate) flights_sent: u32,
}

/// The protocol state of a [`Core`], copied before a handshake input so that dropping
/// the input can restore it exactly (and forget the probe's timings of it).
#[derive(Clone)]
pub(crate) struct CoreState {
    records: RecordLayer,
    transcript: Transcript,
    master_secret: Option<Zeroizing<[u8; 20]>>,
    master_key: Option<PrfKey>,
    flights_sent: u32,
    probe: [usize; 3],
}

impl Core {
    pub(crate) fn new(role: Role, packing: Packing, probe: Probe) -> Self {
        Core {
            role,
            records: RecordLayer::new(role, packing),
            transcript: Transcript::default(),
            master_secret: None,
            master_key: None,
            probe,
            flights_sent: 0,
        }
    }

    pub(crate) fn save(&self) -> CoreState {
        CoreState {
            records: self.records.clone(),
            transcript: self.transcript.clone(),
            master_secret: self.master_secret.clone(),
            master_key: self.master_key.clone(),
            flights_sent: self.flights_sent,
            probe: self.probe.checkpoint(),
        }
    }

    pub(crate) fn restore(&mut self, saved: CoreState) {
        self.records = saved.records;
        self.transcript = saved.transcript;
        self.master_secret = saved.master_secret;
        self.master_key = saved.master_key;
        self.flights_sent = saved.flights_sent;
        self.probe.rollback(saved.probe);
    }

    /// The master secret from the pre-master secret (§7.3), booked as MS under CKX;
    /// the keys of both directions become pending for the ChangeCipherSpecs.
    pub(crate) fn agree(&mut self, keys: &KeySchedule, pre_master: &[u8]) {
        let master = self.probe.operation(Message::CKX, Operation::MS, || {
            crate::crypto::keys::master_secret(
                keys.hash(),
                pre_master,
                &keys.client_random.0,
                &keys.server_random.0,
            )
        });
        self.install_master(keys, master);
    }

    /// Pending keys from a master secret (agreed now, or a resumed session's).
    pub(crate) fn install_master(&mut self, keys: &KeySchedule, master: Zeroizing<[u8; 20]>) {
        let master_key = PrfKey::new(keys.hash(), &master[..]);
        self.records.set_pending(
            ProtectionParams {
                bulk: keys.cipher.bulk,
                mac: keys.cipher.mac,
                key_refresh: keys.key_refresh,
                master_secret: master.clone(),
                client_random: keys.client_random.0,
                server_random: keys.server_random.0,
            },
            master_key.clone(),
        );
        self.master_secret = Some(master);
        self.master_key = Some(master_key);
    }

    /// Encode a handshake message, add it to the transcript, seal it in a record and
    /// close its probe message (the one place a sent message's boundary is taken).
    pub(crate) fn handshake_record(
        &mut self,
        msg: &HandshakeMessage,
    ) -> Result<Vec<u8>, ProtocolError> {
        if !self.records.protecting() {
            let record = self
                .records
                .seal_clear(ContentType::Handshake, |out| msg.encode(out))?;
            let message = record.get(PREBUILT_HEADER_LEN..).unwrap_or_default();
            self.transcript.update(message);
            if let Some(m) = self.role.sent_message(msg.typ()) {
                self.probe.end_message(m, message.len());
            }
            return Ok(record);
        }
        let bytes = msg.to_bytes();
        self.transcript.update(&bytes);
        let record = self.records.seal(ContentType::Handshake, &bytes)?;
        if let Some(m) = self.role.sent_message(msg.typ()) {
            self.probe.end_message(m, bytes.len());
        }
        Ok(record)
    }

    /// A handshake record encoded once and shared by many connections: taken as if
    /// sealed here (sequence number, checksum, transcript, probe message).
    pub(crate) fn prebuilt_handshake_record(&mut self, typ: HandshakeType, record: &[u8]) {
        let message = record.get(PREBUILT_HEADER_LEN..).unwrap_or_default();
        self.transcript.update(message);
        self.records.sent_prebuilt(record);
        if let Some(m) = self.role.sent_message(typ) {
            self.probe.end_message(m, message.len());
        }
    }

    /// A ChangeCipherSpec record; our write state switches to the pending keys.
    pub(crate) fn change_cipher_spec(&mut self) -> Result<Vec<u8>, ProtocolError> {
        let record = self
            .records
            .seal(ContentType::ChangeCipherSpec, &ChangeCipherSpec.to_bytes())?;
        self.records.install_write()?;
        self.probe.end_message(self.role.change_cipher_spec(), 1);
        Ok(record)
    }

    /// Our ChangeCipherSpec and Finished, the end of every flow.
    pub(crate) fn change_cipher_spec_and_finished(
        &mut self,
        keys: &KeySchedule,
    ) -> Result<Vec<Vec<u8>>, ProtocolError> {
        let ccs = self.change_cipher_spec()?;
        let label: &[u8] = match self.role {
            Role::Client => b"client finished",
            Role::Server => b"server finished",
        };
        Ok(vec![ccs, self.finished(keys.mac(), label)?])
    }

    /// Finished.verify_data over the transcript so far (§7.10).
    pub(crate) fn verify_data(
        &self,
        mac: MacAlgorithm,
        label: &[u8],
    ) -> Result<VerifyData, ProtocolError> {
        let master = self
            .master_key
            .as_ref()
            .ok_or(PeerMisbehaved::FinishedBeforeKeys)?;
        let hash = PrfHash::for_mac(mac);
        let digest = self
            .transcript
            .digest(hash)
            .ok_or(LocalError::TranscriptHashDropped)?;
        Ok(VerifyData::new(master.verify_data(label, &digest)))
    }

    /// Our Finished message in a record.
    fn finished(&mut self, mac: MacAlgorithm, label: &[u8]) -> Result<Vec<u8>, ProtocolError> {
        let verify_data = self.verify_data(mac, label)?;
        self.handshake_record(&HandshakeMessage::Finished(Finished { verify_data }))
    }

    /// Check the peer's Finished in constant time (the record loop then adds it to
    /// the transcript and closes its probe message).
    pub(crate) fn check_finished(
        &mut self,
        keys: &KeySchedule,
        received: &Finished,
    ) -> Result<(), ProtocolError> {
        let (label, message): (&[u8], _) = match self.role {
            Role::Client => (b"server finished", Message::SFIN),
            Role::Server => (b"client finished", Message::CFIN),
        };
        let expected = self.verify_data(keys.mac(), label)?;
        // Constant-time: VerifyData's only equality.
        let ok = self
            .probe
            .operation(message, Operation::FIN, || expected == received.verify_data);
        if ok {
            Ok(())
        } else {
            Err(PeerMisbehaved::BadFinished(self.role.peer()).into())
        }
    }

    /// Pack a flight into datagrams, counting them in the probe.
    pub(crate) fn pack(&mut self, records: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let datagrams = self.records.pack(records);
        if !datagrams.is_empty() {
            self.flights_sent += 1;
        }
        for d in &datagrams {
            self.probe.datagram(true, d.len(), 0);
        }
        datagrams
    }

    /// Send the alert for `e`; returns its level.
    fn send_alert(&mut self, e: ProtocolError, out: &mut Output) -> AlertLevel {
        let (alert, bytes) = self.records.alert(e.alert());
        self.probe.datagram(true, bytes.len(), 1);
        out.datagrams.push(bytes);
        let level = alert.level;
        out.events.push(Event::AlertSent(alert, e));
        level
    }
}

/// One end's reactions to the records of a datagram; [`process_records`] does the
/// framing, record protection and alert handling common to both ends.
pub(crate) trait RecordSide {
    fn core(&mut self) -> &mut Core;
    fn is_closed(&self) -> bool;
    fn is_established(&self) -> bool;
    /// A critical or fatal alert was sent or received: the connection ends.
    fn close_after_alert(&mut self, level: AlertLevel);
    fn on_change_cipher_spec(&mut self, body: &[u8]) -> HsResult<()>;
    /// Whether a handshake message of this type may come next.
    fn expects(&self, typ: HandshakeType) -> bool;
    /// The negotiated key exchange suite, needed to read the key exchange messages.
    fn key_exchange(&self) -> Option<KeyExchangeSuite>;
    /// The state, for error messages.
    fn state_name(&self) -> HandshakeState;
    /// A handshake message that may come now: the state moves on. The record loop then
    /// adds it to the transcript, closes its probe message and calls
    /// [`RecordSide::after_message`].
    fn on_handshake(&mut self, msg: HandshakeMessage, out: &mut Output) -> HsResult<()>;
    /// After a message was taken in: send the flight the new state calls for, if any.
    fn after_message(&mut self, out: &mut Output) -> HsResult<()>;
    /// Whether an incoming alert must match one of our records' checksums. A server
    /// that has sent nothing yet cannot check.
    fn checks_alert_checksum(&self) -> bool {
        true
    }
    /// Application data before the handshake completed: an error (server) or a
    /// silent drop (client).
    fn early_application_data(&mut self) -> Option<ProtocolError>;
    /// The connection's protocol state, to restore when an input is dropped.
    type Saved;
    fn save(&self) -> Self::Saved;
    fn restore(&mut self, saved: Self::Saved);
    /// Whether a failure now gets an alert rather than a silent drop: once the
    /// handshake is complete (every record that reaches the handshake is then
    /// authenticated), and at a server that has sent nothing yet (it has nothing to
    /// lose, and the peer learns why its ClientHello was refused).
    fn answers_failures(&self) -> bool {
        self.is_established()
    }
    /// Keep why the last input was dropped (diagnostics only; not protocol state).
    fn note_dropped(&mut self, e: ProtocolError);
}

/// What became of one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It was taken in (it may have done nothing, e.g. only stale records).
    Kept,
    /// It was dropped and the connection's state is exactly what it was before.
    Dropped,
}

/// Take in the records of one datagram (the off-path spoofing rule, `docs/security.md`).
///
/// While the handshake runs, nothing that reaches it is authenticated until the peer's
/// Finished verifies, so anyone who can forge the peer's address could have sent it.
/// An input is therefore taken in only if it completes a flight (it makes us send our
/// next flight, completes the handshake, or closes the connection by an authenticated
/// alert) and nothing in it fails. An input that fails, or that stops in the middle of
/// a flight, is dropped and the connection's state is restored exactly to what it was
/// before (so a forged ChangeCipherSpec, ClientKeyExchange or Finished changes nothing,
/// and an endpoint may offer one datagram to two connections in turn). With
/// [`Packing::MessagePerDatagram`] a flight spans datagrams, so a datagram that fails
/// nothing is kept even in the middle of a flight.
pub(crate) fn process_records<E: RecordSide>(
    end: &mut E,
    records: &[Record<'_>],
    out: &mut Output,
) -> Verdict {
    let answers_at_start = end.answers_failures();
    let saved = (!answers_at_start).then(|| end.save());
    let (datagrams_before, events_before) = (out.datagrams.len(), out.events.len());
    let flights_before = end.core().flights_sent;
    let mut failure = None;
    let mut progressed = false;
    let mut taken = false;
    for record in records {
        if end.is_closed() {
            break;
        }
        let moves = matches!(
            record.header.content_type,
            ContentType::Handshake | ContentType::ChangeCipherSpec
        );
        match process_record(end, record, out) {
            Ok(opened) => {
                progressed |= moves && opened;
                taken |= opened;
            }
            Err(e) => {
                if answers_at_start || end.is_established() {
                    fail(end, e, out);
                    taken = true;
                } else {
                    failure = Some(e);
                    break;
                }
            }
        }
    }
    let Some(saved) = saved else {
        // Nothing was taken in (every record dropped one by one): nothing changed.
        return if taken {
            Verdict::Kept
        } else {
            Verdict::Dropped
        };
    };
    // A failure drops the whole datagram, even after a flight it completed: the
    // failing transition may have left its state half-taken, and a genuine peer's
    // datagram does not end in a record that fails (an off-path forger cannot append
    // to it).
    let flight_done = failure.is_none()
        && (end.is_established() || end.is_closed() || end.core().flights_sent > flights_before);
    let partial_allowed = progressed
        && failure.is_none()
        && end.core().records.packing == Packing::MessagePerDatagram;
    if flight_done || partial_allowed {
        return Verdict::Kept;
    }
    end.restore(saved);
    out.datagrams.truncate(datagrams_before);
    let later = out.events.split_off(events_before);
    out.events.extend(
        later
            .into_iter()
            .filter(|e| matches!(e, Event::Dropped(_) | Event::AlertIgnored { .. })),
    );
    let why = match (failure, progressed) {
        (Some(e), _) => {
            end.note_dropped(e.clone());
            DropReason::DoesNotFit(Box::new(e))
        }
        (None, true) => DropReason::IncompleteFlight,
        // Only alerts and records dropped one by one: each has its event already.
        (None, false) => return Verdict::Dropped,
    };
    out.events.push(Event::Dropped(why));
    Verdict::Dropped
}

/// One record; `Ok(true)` if it was taken in, `Ok(false)` if it was dropped (or was an
/// alert that could not be authenticated).
fn process_record<E: RecordSide>(
    end: &mut E,
    record: &Record<'_>,
    out: &mut Output,
) -> HsResult<bool> {
    if record.header.sequence.is_none() && record.header.content_type == ContentType::Alert {
        // Explicit sequence numbers are negotiated: an alert without one (Kannel
        // sends its alerts so) cannot be placed or authenticated. Say what it was.
        match Alert::read_exact(record.fragment, "Alert") {
            Ok(alert) if !record.header.cipher_spec => out.events.push(Event::AlertIgnored {
                alert,
                why: UnauthenticatedAlert::NoSequenceNumber,
            }),
            _ => out
                .events
                .push(Event::Dropped(DropReason::NoSequenceNumber)),
        }
        return Ok(false);
    }
    match end.core().records.open(record) {
        Opened::Drop(why) => {
            out.events.push(Event::Dropped(why));
            Ok(false)
        }
        Opened::Plain(ContentType::Alert, body) => Ok(on_alert(end, &body, out)),
        Opened::Plain(ContentType::ChangeCipherSpec, body) => {
            end.on_change_cipher_spec(&body)?;
            let core = end.core();
            let message = core.role.peer().change_cipher_spec();
            core.probe.end_message(message, 1);
            Ok(true)
        }
        Opened::Plain(ContentType::Handshake, body) => {
            let msg = read_handshake(end, &body)?;
            let typ = msg.typ();
            end.on_handshake(msg, out)?;
            // The transcript excludes HelloRequest (§7.10); the tables do not time it.
            if typ != HandshakeType::HelloRequest {
                let core = end.core();
                core.transcript.update(&body);
                if let Some(m) = core.role.peer().sent_message(typ) {
                    core.probe.end_message(m, body.len());
                }
            }
            end.after_message(out)?;
            Ok(true)
        }
        Opened::Plain(ContentType::ApplicationData, body) => {
            if end.is_established() {
                out.events.push(Event::ApplicationData(body.to_vec()));
                return Ok(true);
            }
            match end.early_application_data() {
                Some(e) => Err(e),
                None => {
                    out.events
                        .push(Event::Dropped(DropReason::EarlyApplicationData));
                    Ok(false)
                }
            }
        }
    }
}

/// Read a handshake record, checking the order before the body: a message out of
/// place is unexpected_message, whatever its contents.
fn read_handshake<E: RecordSide>(end: &E, body: &[u8]) -> HsResult<HandshakeMessage> {
    let (header, message) = split_handshake_record(body)?;
    if !end.expects(header.typ) {
        return Err(PeerMisbehaved::UnexpectedMessage {
            message: header.typ,
            state: end.state_name(),
        }
        .into());
    }
    Ok(HandshakeMessage::read_body(
        header.typ,
        message,
        end.key_exchange(),
    )?)
}

/// Answer a failure with its alert; a critical or fatal one ends the connection.
pub(crate) fn fail<E: RecordSide>(end: &mut E, e: ProtocolError, out: &mut Output) {
    let level = end.core().send_alert(e, out);
    if level != AlertLevel::Warning {
        end.close_after_alert(level);
    }
}

/// An alert: acted on (and `true`) only if it authenticates, i.e. its checksum matches
/// one of our last records (§7.12).
fn on_alert<E: RecordSide>(end: &mut E, body: &[u8], out: &mut Output) -> bool {
    let alert = match Alert::read_exact(body, "Alert") {
        Ok(alert) => alert,
        Err(e) => {
            out.events
                .push(Event::Dropped(DropReason::MalformedAlert(e)));
            return false;
        }
    };
    if end.checks_alert_checksum() && !end.core().records.alert_checksum_ok(&alert) {
        out.events.push(Event::AlertIgnored {
            alert,
            why: UnauthenticatedAlert::ChecksumMismatch,
        });
        return false;
    }
    if alert.level != AlertLevel::Warning {
        end.close_after_alert(alert.level);
    }
    out.events.push(Event::AlertReceived(alert));
    true
}
