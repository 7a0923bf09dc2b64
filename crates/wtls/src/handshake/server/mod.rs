//! The server side of the handshake: its configuration and [`ServerConnection`], one
//! per peer (the retransmission answer cache, the caller's API). The protocol itself,
//! state by state in wire order, is in [`states`]; the choice of cipher suite, key
//! exchange and credential in [`negotiate`].

mod negotiate;
mod states;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::conn::{fail, process_records, Core, CoreState, RecordSide, Role, Verdict};
use super::error::{
    DropReason, HandshakeState, HsResult, LocalError, PeerMisbehaved, ProtocolError,
};
use super::{
    AuthMode, Event, HandshakeKind, Negotiated, Now, Output, Packing, Policy, SessionStore,
};
use crate::codec::DecodeError;
use crate::crypto::pk::{KeyPair, PeerKey};
use crate::keyed_map::{KeyedMap, KeyedSet};
use crate::msgs::certificate::WtlsCertificate;
use crate::msgs::common::{CipherSuite, Identifier, Random};
use crate::msgs::enums::{AlertLevel, ContentType, HandshakeType, KeyExchangeSuite};
use crate::msgs::handshake::HandshakeMessage;
use crate::msgs::record::Record;
use crate::params::ParameterNumbering;
use crate::probe::{HandshakeProbe, Probe};
use crate::suite::Specifier;
use states::ServerState;
use wtlsperf_spine::Failure;

/// Encoded Certificate records by certificate signature.
pub type CertificateRecords = KeyedMap<Vec<u8>, Arc<[u8]>>;

/// A server certificate and key, with the CA that issued it.
#[derive(Clone)]
pub struct ServerCredential {
    pub spec: Specifier,
    pub cert: WtlsCertificate,
    pub key: KeyPair,
    pub ca_spec: Specifier,
    pub ca_subject: Identifier,
    /// SHA-1 of the issuing CA's public key encoding, so that a client naming its CAs
    /// by `key_hash_sha` in trusted_key_ids finds this credential; `None` matches by
    /// name only.
    pub ca_key_hash: Option<[u8; 20]>,
}

impl ServerCredential {
    /// Whether a trusted_key_ids entry names this credential's CA: by name (in any
    /// character set that spells it the same) or by the hash of its key.
    fn issued_by(&self, id: &Identifier) -> bool {
        match id {
            Identifier::KeyHashSha(h) => self.ca_key_hash.as_ref() == Some(h),
            other => other.same_name(&self.ca_subject),
        }
    }
}

#[derive(Clone)]
pub struct ServerConfig {
    pub credentials: Vec<ServerCredential>,
    /// CAs whose client certificates are accepted (also named in CertificateRequest).
    pub trusted_client_cas: Vec<(Specifier, WtlsCertificate)>,
    pub expected_client: Option<Identifier>,
    /// The ParameterIndex numbering the server writes and reads (certificates too).
    pub numbering: ParameterNumbering,
    /// Mutual: request and require a client certificate.
    pub client_auth: AuthMode,
    /// The thesis' server-authenticated flow sends a CertificateRequest too, answered by
    /// an empty client Certificate (Table 3.7); this reproduces its message counts.
    pub thesis_certificate_request: bool,
    /// Client certificates the server holds itself, by the encoding of the client's
    /// identifier: the optimised handshake takes them from here.
    pub client_certificates: KeyedMap<Vec<u8>, WtlsCertificate>,
    /// Cipher suites the server accepts; the client's order of preference decides.
    pub cipher_suites: Vec<CipherSuite>,
    /// Where sessions are kept for abbreviated handshakes (none: no session ids are
    /// issued). The in-process [`super::SessionCache`] by default; a store shared by
    /// several gateways makes any of them resume any one's sessions.
    pub session_cache: Option<Arc<dyn SessionStore>>,
    pub max_key_refresh: u8,
    pub packing: Packing,
    pub policy: Policy,
    /// Parsed keys of the trusted CAs, filled on first use.
    pub ca_keys: Arc<crate::pki::CaKeyCache>,
    /// The Certificate record of each server certificate, encoded once and shared by
    /// every connection (keyed by the certificate's signature): a half-open connection
    /// then holds no copy of the certificate in its retransmission cache.
    pub certificate_records: Arc<Mutex<CertificateRecords>>,
    /// The CertificateRequest records sent so far, interned by their bytes: the same for
    /// every connection at its usual place, and large under WAP-261 numbering (each
    /// trusted CA on a curve without a WAP-261 number carries its explicit parameter
    /// set), so a half-open connection keeps a reference, not a copy.
    pub certificate_request_records: Arc<Mutex<KeyedSet<Arc<[u8]>>>>,
}

impl ServerConfig {
    pub fn new(credentials: Vec<ServerCredential>, cipher_suites: Vec<CipherSuite>) -> Self {
        ServerConfig {
            credentials,
            trusted_client_cas: Vec::new(),
            expected_client: None,
            numbering: ParameterNumbering::default(),
            client_auth: AuthMode::ServerAuth,
            thesis_certificate_request: false,
            client_certificates: KeyedMap::default(),
            cipher_suites,
            session_cache: None,
            max_key_refresh: 15,
            packing: Packing::default(),
            policy: Policy::default(),
            ca_keys: Arc::default(),
            certificate_records: Arc::default(),
            certificate_request_records: Arc::default(),
        }
    }
}

/// A record shared by every connection, as it sits in the flight being built: its
/// record index, its byte offset when the flight is one datagram, and the record.
pub(crate) type SharedRecord = (usize, usize, Arc<[u8]>);

/// The shared records of one flight, in flight order: the Certificate, then the
/// CertificateRequest.
pub(crate) type SharedRecords = [Option<SharedRecord>; 2];

/// How many received datagrams are remembered, with our answer to each, so that a
/// retransmitted flight is answered again without repeating any public-key work.
const REMEMBERED_FLIGHTS: usize = 8;

pub struct ServerConnection {
    config: Arc<ServerConfig>,
    state: ServerState,
    core: Core,
    server_random: Random,
    /// Fingerprint of a received datagram ([`datagram_fingerprint`]) and what we
    /// answered to it.
    answered: VecDeque<(u64, Answer)>,
    /// The shared records of the flight being built (see [`SharedRecords`]).
    shared_records: SharedRecords,
    now: Now,
    /// Why the last dropped input was refused (diagnostics only).
    last_dropped: Option<ProtocolError>,
    /// What the completed handshake agreed (kept after the connection closes).
    negotiated: Option<Negotiated>,
    /// Why the handshake ended without completing: the client's alert or ours.
    ended: Option<Failure<ProtocolError>>,
}

/// What a datagram can change in a [`ServerConnection`], saved before it is taken in.
pub(crate) struct ServerSaved {
    state: ServerState,
    core: CoreState,
    shared_records: SharedRecords,
    now: Now,
    negotiated: Option<Negotiated>,
}

impl std::fmt::Debug for ServerConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConnection")
            .field("state", &self.state.name())
            .finish_non_exhaustive()
    }
}

impl ServerConnection {
    pub fn new(config: Arc<ServerConfig>, probe: Probe, now: Now) -> Self {
        let mut random = [0u8; 12];
        crate::crypto::random::fill(&mut random);
        let core = Core::new(Role::Server, config.packing, probe);
        ServerConnection {
            config,
            state: ServerState::WaitClientHello,
            core,
            server_random: Random::new(now.unix_secs, random),
            // Usually one answer (ClientHello) or two (and the client's flight).
            answered: VecDeque::with_capacity(2),
            shared_records: SharedRecords::default(),
            now,
            last_dropped: None,
            negotiated: None,
            ended: None,
        }
    }

    /// What the completed handshake agreed; kept once the connection closes.
    pub fn negotiated(&self) -> Option<Negotiated> {
        self.negotiated
    }

    /// Why the handshake ended without completing, if it did.
    pub fn failure(&self) -> Option<&Failure<ProtocolError>> {
        self.ended.as_ref()
    }

    /// Why the last input the connection dropped was refused (diagnostics only).
    pub fn last_dropped(&self) -> Option<&ProtocolError> {
        self.last_dropped.as_ref()
    }

    pub fn is_established(&self) -> bool {
        matches!(self.state, ServerState::Established(_))
    }

    pub fn is_closed(&self) -> bool {
        matches!(self.state, ServerState::Closed)
    }

    /// A handshake is under way: the connection holds state for a peer that has not
    /// finished (the gateway bounds how long such state may live).
    pub fn is_half_open(&self) -> bool {
        !self.is_established() && !self.is_closed()
    }

    pub fn handshake_kind(&self) -> Option<HandshakeKind> {
        self.state.kind()
    }

    /// Which authentication the completed handshake had.
    pub fn client_authenticated(&self) -> bool {
        self.state.client_certified()
    }

    pub fn probe(&self) -> &HandshakeProbe {
        &self.core.probe.data
    }

    pub fn take_probe(&mut self) -> HandshakeProbe {
        std::mem::take(&mut self.core.probe.data)
    }

    /// Approximate heap bytes this connection holds (for the memory bound under floods).
    pub fn heap_bytes(&self) -> usize {
        self.answered
            .iter()
            .map(|(_, a)| 8 + a.heap_bytes())
            .sum::<usize>()
            + self.core.probe.data.messages.capacity()
                * std::mem::size_of::<crate::probe::MessageTiming>()
            + self.core.probe.data.operations.capacity()
                * std::mem::size_of::<crate::probe::OperationTiming>()
            + self.core.probe.data.datagrams.capacity()
                * std::mem::size_of::<crate::probe::DatagramTiming>()
    }

    pub fn seal_application_data(&mut self, data: &[u8]) -> Result<Vec<u8>, ProtocolError> {
        if !self.is_established() {
            return Err(LocalError::NotEstablished.into());
        }
        self.core.records.seal(ContentType::ApplicationData, data)
    }

    /// Take in one datagram from the client.
    pub fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Output {
        self.handle_framed(&Datagram::frame(datagram), now)
    }

    /// Take in one datagram already framed (an endpoint frames it once and may offer it
    /// to several connections of its address).
    pub fn handle_framed(&mut self, datagram: &Datagram<'_>, now: Now) -> Output {
        // A dropped datagram leaves everything as it found it, the clock and the
        // probe's records included (an endpoint may offer it to another connection).
        let before = (self.now, self.core.probe.checkpoint());
        self.now = now;
        let mut out = Output::default();
        if self.is_closed() {
            out.events
                .push(Event::Dropped(DropReason::ConnectionClosed));
            out.dropped = true;
            return out;
        }
        let digest = datagram.fingerprint;
        if let Some((_, answer)) = self.answered.iter().find(|(d, _)| *d == digest) {
            // A retransmitted flight: the client lost our answer. Send it again.
            out.datagrams = answer.datagrams();
            out.records_in = answer.records_in;
            out.events.push(Event::Retransmitted);
            return out;
        }
        self.core.probe.begin_job();
        let records = match &datagram.records {
            Ok(r) => r,
            Err(e) => {
                let e = e.clone();
                if matches!(self.state, ServerState::WaitClientHello) {
                    // Nothing trustworthy came from this peer yet: tell it why.
                    fail(self, ProtocolError::from(e), &mut out);
                    self.note_end(&out);
                } else {
                    self.now = before.0;
                    out.events.push(Event::Dropped(DropReason::Unparsable(e)));
                    out.dropped = true;
                }
                return out;
            }
        };
        self.core
            .probe
            .datagram(false, datagram.bytes.len(), records.len());
        let handshaking = !self.is_established();
        out.records_in = records.len();
        let verdict = process_records(self, records, &mut out);
        self.core.probe.end_job();
        if verdict == Verdict::Dropped {
            self.now = before.0;
            self.core.probe.rollback(before.1);
            out.dropped = true;
        }
        self.note_end(&out);
        if handshaking && !self.is_closed() && verdict == Verdict::Kept {
            if self.answered.len() == REMEMBERED_FLIGHTS {
                self.answered.pop_front();
            }
            let answer = Answer::new(
                out.records_in,
                &out.datagrams,
                std::mem::take(&mut self.shared_records),
                self.config.packing,
            );
            self.answered.push_back((digest, answer));
        }
        out
    }

    /// A connection that closed before completing keeps why (the alert in `out`).
    fn note_end(&mut self, out: &Output) {
        if self.is_closed() && self.negotiated.is_none() && self.ended.is_none() {
            self.ended = Some(super::spine::ending(out));
        }
    }

    /// Remove this connection's session from the cache (a fatal alert after the
    /// handshake completed).
    fn forget_session(&mut self) {
        let (Some(cache), ServerState::Established(done)) =
            (&self.config.session_cache, &self.state)
        else {
            return;
        };
        if !done.session_id.is_empty() {
            cache.remove(done.session_id.as_bytes());
        }
    }
}

impl RecordSide for ServerConnection {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn is_closed(&self) -> bool {
        ServerConnection::is_closed(self)
    }

    fn is_established(&self) -> bool {
        ServerConnection::is_established(self)
    }

    /// A fatal alert invalidates the session, but only a connection that proved it
    /// owns the session (the Finished verified on it) may remove it from the cache: a
    /// ClientHello quoting a session id is no such proof, since the id travels in clear.
    fn close_after_alert(&mut self, level: AlertLevel) {
        if level == AlertLevel::Fatal {
            self.forget_session();
        }
        self.state = ServerState::Closed;
    }

    fn checks_alert_checksum(&self) -> bool {
        !matches!(self.state, ServerState::WaitClientHello)
    }

    fn answers_failures(&self) -> bool {
        matches!(
            self.state,
            ServerState::WaitClientHello | ServerState::Established(_)
        )
    }

    fn on_change_cipher_spec(&mut self, body: &[u8]) -> HsResult<()> {
        ServerConnection::on_change_cipher_spec(self, body)
    }

    fn expects(&self, typ: HandshakeType) -> bool {
        self.state.expects(typ)
    }

    fn key_exchange(&self) -> Option<KeyExchangeSuite> {
        self.state.key_exchange()
    }

    fn state_name(&self) -> HandshakeState {
        self.state.name()
    }

    fn on_handshake(&mut self, msg: HandshakeMessage, out: &mut Output) -> HsResult<()> {
        ServerConnection::on_handshake(self, msg, out)
    }

    fn after_message(&mut self, out: &mut Output) -> HsResult<()> {
        ServerConnection::after_message(self, out)
    }

    fn early_application_data(&mut self) -> Option<ProtocolError> {
        Some(PeerMisbehaved::EarlyApplicationData.into())
    }

    type Saved = ServerSaved;

    fn save(&self) -> ServerSaved {
        ServerSaved {
            state: self.state.clone(),
            core: self.core.save(),
            shared_records: self.shared_records.clone(),
            now: self.now,
            negotiated: self.negotiated,
        }
    }

    fn restore(&mut self, saved: ServerSaved) {
        self.state = saved.state;
        self.core.restore(saved.core);
        self.shared_records = saved.shared_records;
        self.now = saved.now;
        self.negotiated = saved.negotiated;
    }

    fn note_dropped(&mut self, e: ProtocolError) {
        self.last_dropped = Some(e);
    }
}

/// Validate a client certificate under the CA that issued it.
fn validate_client(
    config: &ServerConfig,
    unix_secs: u32,
    cert: &WtlsCertificate,
) -> HsResult<PeerKey> {
    let ca = config
        .trusted_client_cas
        .iter()
        .find(|(_, ca)| ca.tbs.subject.same_name(&cert.tbs.issuer))
        .ok_or(PeerMisbehaved::UntrustedIssuer)?;
    Ok(crate::pki::validate_cached(
        cert,
        &ca.1,
        &config.ca_keys,
        config.expected_client.as_ref(),
        unix_secs,
        config.numbering,
    )?)
}

/// A received datagram, framed once: its records (or why it does not frame) and its
/// fingerprint. The endpoint routes by them and the connection takes the records in,
/// so no byte of it is hashed or parsed twice.
#[derive(Debug)]
pub struct Datagram<'a> {
    pub bytes: &'a [u8],
    pub records: Result<Vec<Record<'a>>, DecodeError>,
    /// [`datagram_fingerprint`]: recognises a retransmitted datagram (the connection's
    /// answer cache, the endpoint's copies of a ClientHello).
    pub fingerprint: u64,
}

impl<'a> Datagram<'a> {
    pub fn frame(bytes: &'a [u8]) -> Self {
        Datagram {
            bytes,
            records: crate::msgs::record::parse_datagram(bytes),
            fingerprint: datagram_fingerprint(bytes),
        }
    }

    /// Whether it opens with a plaintext ClientHello record.
    pub fn starts_with_client_hello(&self) -> bool {
        let Ok(records) = &self.records else {
            return false;
        };
        records.first().is_some_and(|r| {
            !r.header.cipher_spec
                && r.header.content_type == ContentType::Handshake
                && r.fragment.first() == Some(&HandshakeType::ClientHello.to_u8())
        })
    }
}

/// A fingerprint of a datagram, to recognise a retransmitted one: SipHash-1-3 under keys
/// drawn at random once per process (the standard library's `RandomState`).
///
/// Why not a cryptographic hash: a collision would only make the server answer a new
/// datagram with its answer to an earlier one from the same address, and without the
/// process's keys nobody can aim for one; SipHash costs a third of SHA-1 here, on
/// every datagram of every handshake.
fn datagram_fingerprint(datagram: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(Default::default).hash_one(datagram)
}

/// What we answered to one datagram, kept for retransmissions. The shared Certificate
/// and CertificateRequest records are cut out and kept by reference, so a half-open
/// connection does not hold a copy of the certificate or of the CA list.
#[derive(Debug)]
struct Answer {
    /// Records of the datagram answered (a retransmission has the same).
    records_in: usize,
    datagrams: Vec<Vec<u8>>,
    /// (datagram index, byte offset, the shared record cut out there), in flight order.
    splices: SharedRecords,
}

impl Answer {
    fn new(
        records_in: usize,
        datagrams: &[Vec<u8>],
        shared: SharedRecords,
        packing: Packing,
    ) -> Self {
        let mut datagrams = datagrams.to_vec();
        let mut splices = SharedRecords::default();
        // Cut the later record first, so that every offset still names the place it had
        // in the flight as sent (and the records go back in flight order).
        for (slot, shared) in shared.into_iter().enumerate().rev() {
            splices[slot] = shared.and_then(|(record_index, flight_offset, record)| {
                // Where the record landed: inside the one flight datagram, after the
                // records before it, or as its own datagram.
                let (d, offset) = match packing {
                    Packing::FlightPerDatagram => (0, flight_offset),
                    Packing::MessagePerDatagram => (record_index, 0),
                };
                let target = datagrams.get_mut(d)?;
                if target.get(offset..offset + record.len()) != Some(&record[..]) {
                    return None;
                }
                target.drain(offset..offset + record.len());
                Some((d, offset, record))
            });
        }
        datagrams.iter_mut().for_each(Vec::shrink_to_fit);
        Answer {
            records_in,
            datagrams,
            splices,
        }
    }

    fn datagrams(&self) -> Vec<Vec<u8>> {
        let mut out = self.datagrams.clone();
        for (d, offset, record) in self.splices.iter().flatten() {
            if let Some(target) = out.get_mut(*d) {
                let tail = target.split_off(*offset);
                target.extend_from_slice(record);
                target.extend_from_slice(&tail);
            }
        }
        out
    }

    fn heap_bytes(&self) -> usize {
        self.datagrams
            .iter()
            .map(|d| d.capacity() + 24)
            .sum::<usize>()
            + self.splices.iter().flatten().count() * 32
    }
}
