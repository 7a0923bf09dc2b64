//! EDHOC (RFC 9528) through the `lakers` crate with its RustCrypto backend, carried by
//! CoAP as RFC 9528 Appendix A.2 describes, on the handshake spine ([`Handshake`]).
//!
//! Method 3 (both parties authenticate with static Diffie-Hellman keys: the smallest
//! messages, and the only method lakers implements), cipher suite 2 (AES-CCM-16-64-128,
//! SHA-256, P-256: the suite for constrained devices with P-256 hardware), credentials
//! sent by reference (a one-byte kid), no message_4 (the initiator learns that
//! message_3 was accepted from the CoAP response to it), no EAD.
//!
//! The flow over CoAP: message_1 in a confirmable POST to /.well-known/edhoc, prefixed
//! by the CBOR `true` that marks a new exchange; message_2 in the piggybacked 2.04
//! response; message_3 in a second POST prefixed by C_R; an empty 2.04 response. The
//! handshake is complete for the client when that response arrives.
//!
//! The keys are those of the RFC 9529 section 3 trace (method 3, suite 2), so anyone can
//! check the credentials; the ephemeral keys are fresh per handshake.
//!
//! Unlike OpenSSL's DTLS, lakers exposes each message step, so the server's CPU per
//! message is known; the report gives it per received datagram, as for the others.
//!
//! Time is the caller's: the CoAP retransmission timer ([`coap::ConExchange`]) runs on
//! the monotonic reading passed in, so an in-memory run under virtual time fires it at
//! its exact deadline.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use lakers::{
    credential_check_or_fetch, ConnId, Credential, CredentialTransfer, CryptoTrait, EDHOCMethod,
    EDHOCSuite, EdhocInitiator, EdhocInitiatorWaitM2, EdhocInitiatorWaitM4, EdhocMessageBuffer,
    EdhocResponder, EdhocResponderWaitM3,
};
use rand::rngs::Xoshiro256PlusPlus;

use wtlsperf_spine::{Failure, Handshake, Now, ProtocolId, Role, Status, Step};

use super::coap_retransmit::{self as coap, CoapTimers, ConExchange, ResponseCache};
use crate::setup::thread_cpu_ns;

/// The RustCrypto backend with the operating system's entropy.
pub type Crypto = lakers_crypto_rustcrypto::Crypto<rand_core_06::OsRng>;

fn crypto() -> Crypto {
    lakers_crypto_rustcrypto::Crypto::new(rand_core_06::OsRng)
}

/// RFC 9529 section 3: the initiator's CCS credential (kid 0x2b) and private key.
const CRED_I: &str = "A2027734322D35302D33312D46462D45462D33372D33322D333908A101A5010202412B2001215820AC75E9ECE3E50BFC8ED60399889522405C47BF16DF96660A41298CB4307F7EB62258206E5DE611388A4B8A8211334AC7D37ECB52A387D257E6DB3C2A93DF21FF3AFFC8";
const I: &str = "fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b";
/// RFC 9529 section 3: the responder's CCS credential (kid 0x0a) and private key.
const CRED_R: &str = "A2026008A101A5010202410A2001215820BBC34960526EA4D32E940CAD2A234148DDC21791A12AFBCBAC93622046DD44F02258204519E257236B2A0CE2023F0931F1F386CA7AFDA64FCDE0108C224C51EABF6072";
const R: &str = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac";

/// The responder's connection identifier (a one-byte CBOR integer).
const C_R: u8 = 0x05;
/// The CBOR `true` that prefixes message_1 on the CoAP request.
const CBOR_TRUE: u8 = 0xf5;

/// EDHOC method 3's forward secrecy: the ephemeral G_X and G_Y beside the static keys.
pub const FORWARD_SECRECY: super::ForwardSecrecy = super::ForwardSecrecy {
    holds: true,
    why: "ephemeral ECDH keys G_X and G_Y beside the static authentication keys",
};

/// EDHOC's timers: CoAP's confirmable retransmission of `timers` (RFC 7252 section 4.2
/// with the section 4.8 parameters), which carries EDHOC (RFC 9528 Appendix A.2).
pub fn retransmission_timers(timers: CoapTimers) -> super::RetransmissionTimers {
    let first = timers.ack_timeout.as_secs_f64();
    super::RetransmissionTimers {
        initial_s: first,
        initial_max_s: first * timers.random_factor,
        backoff: 2.0,
        ceiling_s: None,
        max_retransmissions: timers.max_retransmit,
        source: "RFC 7252 sections 4.2 and 4.8: the first timer drawn from [ACK_TIMEOUT, ACK_TIMEOUT x ACK_RANDOM_FACTOR] = [2, 3] s, doubling, MAX_RETRANSMIT 4 (EDHOC over CoAP, RFC 9528 Appendix A.2)",
    }
}

/// Credentials of both parties and the carrier's timers.
#[derive(Clone)]
pub struct EdhocConfig {
    cred_i: Credential,
    cred_r: Credential,
    i: [u8; 32],
    r: [u8; 32],
    /// CoAP retransmission parameters of the client.
    pub timers: CoapTimers,
}

fn key(hex_str: &str) -> [u8; 32] {
    let mut k = [0u8; 32];
    // The constants above are 64 hex digits; a decoding failure is a typo caught by the
    // tests, and leaves a zero key that no handshake accepts.
    let _ = hex::decode_to_slice(hex_str, &mut k);
    k
}

fn credential(hex_str: &str) -> anyhow::Result<Credential> {
    let bytes = hex::decode(hex_str)?;
    Credential::parse_ccs(&bytes).map_err(|e| anyhow!("CCS credential: {e:?}"))
}

impl EdhocConfig {
    /// The RFC 9529 credentials with RFC 7252's default timers.
    pub fn new() -> anyhow::Result<EdhocConfig> {
        Ok(EdhocConfig {
            cred_i: credential(CRED_I)?,
            cred_r: credential(CRED_R)?,
            i: key(I),
            r: key(R),
            timers: CoapTimers::default(),
        })
    }

    /// The same credentials with other CoAP timers (tests on a fast lossy link).
    pub fn with_timers(mut self, timers: CoapTimers) -> EdhocConfig {
        self.timers = timers;
        self
    }

    /// A fresh initiator; `seed` drives its CoAP timer draws and Message IDs.
    pub fn client(&self, seed: u64) -> anyhow::Result<EdhocClient> {
        let mut initiator =
            EdhocInitiator::new(crypto(), EDHOCMethod::StatStat, EDHOCSuite::CipherSuite2);
        initiator.set_identity(self.i, self.cred_i);
        Ok(EdhocClient {
            state: ClientState::Start(initiator),
            cred_r: self.cred_r,
            timers: self.timers,
            rng: coap::timer_rng(seed),
            next_mid: (seed as u16).wrapping_mul(257),
            pending: None,
            retransmissions: 0,
            failed: None,
        })
    }

    /// A fresh responder (it draws its ephemeral key here, as lakers does on creation).
    pub fn server(&self) -> anyhow::Result<EdhocServer> {
        let responder = EdhocResponder::new(crypto(), EDHOCMethod::StatStat, self.r, self.cred_r);
        Ok(EdhocServer {
            state: ServerState::Start(Box::new(responder)),
            cred_i: self.cred_i,
            cache: ResponseCache::default(),
            failed: None,
        })
    }

    /// Times one side's raw P-256 work through the same backend lakers uses (one key
    /// pair, three ECDH with x-only point decompression), twice: (server ns, client ns).
    pub fn raw_ops(&self) -> anyhow::Result<(u64, u64)> {
        Ok((raw_side()?, raw_side()?))
    }
}

fn raw_side() -> anyhow::Result<u64> {
    let mut c = crypto();
    let peers: Vec<[u8; 32]> = (0..3).map(|_| c.p256_generate_key_pair().1).collect();
    let statics = c.p256_generate_key_pair().0;
    let t0 = thread_cpu_ns();
    let (eph, _) = c.p256_generate_key_pair();
    std::hint::black_box(c.p256_ecdh(&eph, &peers[0]));
    std::hint::black_box(c.p256_ecdh(&statics, &peers[1]));
    std::hint::black_box(c.p256_ecdh(&eph, &peers[2]));
    Ok(thread_cpu_ns().saturating_sub(t0))
}

/// Why an EDHOC handshake failed.
#[derive(Debug, Clone)]
pub enum EdhocError {
    /// lakers refused a step (which one, and its error).
    Refused {
        step: &'static str,
        error: Arc<lakers::EDHOCError>,
    },
    /// lakers' backend panicked on the peer's key: not a valid P-256 point.
    InvalidPoint { step: &'static str },
    /// A message longer than lakers' buffer.
    TooLong { step: &'static str },
    /// The request's payload does not start as this step requires (the CBOR `true`
    /// of message_1, or our C_R before message_3).
    BadPrefix { step: &'static str },
    /// Encoding our CoAP message failed.
    Coap,
    /// A request after the handshake ended, or a second start.
    OutOfOrder,
}

impl std::fmt::Display for EdhocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EdhocError::Refused { step, error } => write!(f, "EDHOC {step}: {error:?}"),
            EdhocError::InvalidPoint { step } => {
                write!(
                    f,
                    "EDHOC {step}: the peer's key was not a valid P-256 point"
                )
            }
            EdhocError::TooLong { step } => write!(f, "EDHOC {step}: message too long"),
            EdhocError::BadPrefix { step } => {
                write!(
                    f,
                    "EDHOC {step}: the CoAP payload does not start as required"
                )
            }
            EdhocError::Coap => f.write_str("CoAP: the message could not be encoded"),
            EdhocError::OutOfOrder => f.write_str("EDHOC: a message out of order"),
        }
    }
}

fn buffer(step: &'static str, bytes: &[u8]) -> Result<EdhocMessageBuffer, EdhocError> {
    EdhocMessageBuffer::new_from_slice(bytes).map_err(|_| EdhocError::TooLong { step })
}

/// lakers' RustCrypto backend panics on an invalid peer point (upstream report openwsn-berkeley/lakers#93); a
/// peer's bytes must give an error, so every step on received bytes runs here.
fn guarded<T>(
    step: &'static str,
    f: impl FnOnce() -> Result<T, lakers::EDHOCError>,
) -> Result<T, EdhocError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(error)) => Err(EdhocError::Refused {
            step,
            error: Arc::new(error),
        }),
        Err(_) => Err(EdhocError::InvalidPoint { step }),
    }
}

fn now_duration(now: Now) -> Duration {
    Duration::from_nanos(now.mono_ns)
}

enum ClientState {
    Start(EdhocInitiator<Crypto>),
    WaitM2(EdhocInitiatorWaitM2<Crypto>),
    WaitAck3(EdhocInitiatorWaitM4<Crypto>),
    Done,
    Failed,
}

/// The EDHOC initiator behind a CoAP client.
pub struct EdhocClient {
    state: ClientState,
    cred_r: Credential,
    timers: CoapTimers,
    rng: Xoshiro256PlusPlus,
    next_mid: u16,
    pending: Option<ConExchange>,
    retransmissions: u32,
    failed: Option<Failure<EdhocError>>,
}

impl EdhocClient {
    /// Sends `payload` as a new confirmable request.
    fn request(&mut self, payload: &[u8], now: Duration) -> Result<Vec<Vec<u8>>, EdhocError> {
        let mid = self.next_mid;
        self.next_mid = self.next_mid.wrapping_add(1);
        let token = [mid as u8];
        let msg = coap::edhoc_request(mid, &token, payload).map_err(|_| EdhocError::Coap)?;
        self.pending = Some(ConExchange::new(
            msg.clone(),
            mid,
            now,
            self.timers,
            &mut self.rng,
        ));
        Ok(vec![msg])
    }

    fn on_message_2(
        &mut self,
        wait: EdhocInitiatorWaitM2<Crypto>,
        payload: &[u8],
        now: Duration,
    ) -> Result<Vec<Vec<u8>>, EdhocError> {
        let m2 = buffer("message_2", payload)?;
        let (processing, c_r, id_cred_r, _ead) =
            guarded("message_2", || wait.parse_message_2(&m2))?;
        let cred_r = guarded("ID_CRED_R", || {
            credential_check_or_fetch(Some(self.cred_r), id_cred_r)
        })?;
        let processed = guarded("message_2 verification", || {
            processing.verify_message_2(cred_r)
        })?;
        let (wait4, m3, _prk_out) = guarded("message_3", || {
            processed.prepare_message_3(CredentialTransfer::ByReference, &None)
        })?;
        self.state = ClientState::WaitAck3(wait4);
        let mut payload = c_r.as_cbor().to_vec();
        payload.extend_from_slice(m3.as_slice());
        self.request(&payload, now)
    }

    fn first_request(&mut self, now: Duration) -> Result<Vec<Vec<u8>>, EdhocError> {
        let ClientState::Start(init) = std::mem::replace(&mut self.state, ClientState::Failed)
        else {
            return Err(EdhocError::OutOfOrder);
        };
        let (wait, m1) = guarded("message_1", || init.prepare_message_1(None, &None))?;
        self.state = ClientState::WaitM2(wait);
        let mut payload = vec![CBOR_TRUE];
        payload.extend_from_slice(m1.as_slice());
        self.request(&payload, now)
    }

    /// The answer to our outstanding request: message_2, or the ACK of message_3.
    fn on_response(&mut self, payload: &[u8], now: Duration) -> Result<Vec<Vec<u8>>, EdhocError> {
        match std::mem::replace(&mut self.state, ClientState::Failed) {
            ClientState::WaitM2(wait) => self.on_message_2(wait, payload, now),
            ClientState::WaitAck3(wait4) => {
                guarded("completion", || wait4.completed_without_message_4())?;
                self.state = ClientState::Done;
                Ok(Vec::new())
            }
            other => {
                self.state = other;
                Ok(Vec::new())
            }
        }
    }

    fn step(&mut self, result: Result<Vec<Vec<u8>>, EdhocError>) -> Step {
        match result {
            Ok(datagrams) => Step::send(datagrams),
            Err(e) => {
                self.state = ClientState::Failed;
                self.pending = None;
                self.failed = Some(Failure::Local(e));
                Step::default()
            }
        }
    }
}

impl Handshake for EdhocClient {
    /// Method 3, suite 2 (the only one configured); no message_4.
    type Negotiated = ();
    type Error = EdhocError;
    /// lakers' steps could be timed one by one, but the adapter does not yet.
    type Records = ();

    fn protocol(&self) -> ProtocolId {
        super::EDHOC
    }

    fn role(&self) -> Role {
        Role::Client
    }

    fn start(&mut self, now: Now) -> Step {
        let result = self.first_request(now_duration(now));
        self.step(result)
    }

    fn handle_datagram(&mut self, datagram: &[u8], now: Now) -> Step {
        // Only the ACK of the outstanding request matters; duplicates, strays and
        // unreadable datagrams are dropped.
        let Ok(p) = coap::parse(datagram) else {
            return Step::dropped();
        };
        let expected = self.pending.as_ref().map(|x| x.message_id);
        if expected != Some(p.header.message_id) {
            return Step::dropped();
        }
        self.pending = None;
        let result = self.on_response(&p.payload, now_duration(now));
        self.step(result)
    }

    fn deadline(&self) -> Option<u64> {
        self.pending
            .as_ref()
            .map(|x| u64::try_from(x.due().as_nanos()).unwrap_or(u64::MAX))
    }

    /// CoAP's rule: the request again, or a time-out once MAX_RETRANSMIT is spent.
    fn handle_timeout(&mut self, now: Now) -> Step {
        let Some(x) = self.pending.as_mut() else {
            return Step::default();
        };
        match x.on_timer(now_duration(now)) {
            Ok(again) => {
                self.retransmissions += u32::from(again.is_some());
                Step::send(again.into_iter().collect())
            }
            Err(_) => {
                self.failed = Some(Failure::TimedOut {
                    retransmissions: x.retransmissions,
                });
                self.state = ClientState::Failed;
                self.pending = None;
                Step::default()
            }
        }
    }

    fn delay_timers(&mut self, by_ns: u64) {
        if let Some(x) = self.pending.as_mut() {
            x.postpone(Duration::from_nanos(by_ns));
        }
    }

    fn status(&self) -> Status<(), EdhocError> {
        match (&self.failed, &self.state) {
            (Some(f), _) => Status::Failed(f.clone()),
            (None, ClientState::Done) => Status::Complete(()),
            _ => Status::Running,
        }
    }

    fn retransmissions(&self) -> u32 {
        self.retransmissions
    }
}

enum ServerState {
    Start(Box<EdhocResponder<Crypto>>),
    WaitM3(EdhocResponderWaitM3<Crypto>),
    Done,
    Failed,
}

/// The EDHOC responder behind a CoAP server resource.
pub struct EdhocServer {
    state: ServerState,
    cred_i: Credential,
    cache: ResponseCache,
    failed: Option<Failure<EdhocError>>,
}

impl EdhocServer {
    fn on_request(&mut self, payload: &[u8]) -> Result<Vec<u8>, EdhocError> {
        match std::mem::replace(&mut self.state, ServerState::Failed) {
            ServerState::Start(resp) => {
                let Some((&CBOR_TRUE, m1)) = payload.split_first() else {
                    return Err(EdhocError::BadPrefix { step: "message_1" });
                };
                let m1 = buffer("message_1", m1)?;
                let (processed, _c_i, _ead) = guarded("message_1", || resp.process_message_1(&m1))?;
                let c_r = ConnId::from_slice(&[C_R]).ok_or(EdhocError::TooLong { step: "C_R" })?;
                let (wait, m2) = guarded("message_2", || {
                    processed.prepare_message_2(CredentialTransfer::ByReference, Some(c_r), &None)
                })?;
                self.state = ServerState::WaitM3(wait);
                Ok(m2.as_slice().to_vec())
            }
            ServerState::WaitM3(wait) => {
                let Some((&C_R, m3)) = payload.split_first() else {
                    return Err(EdhocError::BadPrefix { step: "message_3" });
                };
                let m3 = buffer("message_3", m3)?;
                let (processing, id_cred_i, _ead) =
                    guarded("message_3", || wait.parse_message_3(&m3))?;
                let cred_i = guarded("ID_CRED_I", || {
                    credential_check_or_fetch(Some(self.cred_i), id_cred_i)
                })?;
                let (processed, _prk_out) = guarded("message_3 verification", || {
                    processing.verify_message_3(cred_i)
                })?;
                guarded("completion", || processed.completed_without_message_4())?;
                self.state = ServerState::Done;
                Ok(Vec::new())
            }
            ServerState::Done | ServerState::Failed => Err(EdhocError::OutOfOrder),
        }
    }
}

impl Handshake for EdhocServer {
    type Negotiated = ();
    type Error = EdhocError;
    type Records = ();

    fn protocol(&self) -> ProtocolId {
        super::EDHOC
    }

    fn role(&self) -> Role {
        Role::Server
    }

    fn start(&mut self, _now: Now) -> Step {
        Step::default()
    }

    /// A repeated request gets the cached response (CoAP deduplication); what is not
    /// an EDHOC POST is dropped; a request EDHOC refuses ends the handshake.
    fn handle_datagram(&mut self, datagram: &[u8], _now: Now) -> Step {
        let Ok(p) = coap::parse(datagram) else {
            return Step::dropped();
        };
        if let Some(cached) = self.cache.get(p.header.message_id) {
            return Step::send(vec![cached.to_vec()]);
        }
        if self.failed.is_some() || !coap::is_edhoc_request(&p) {
            return Step::dropped();
        }
        let response = self.on_request(&p.payload).and_then(|payload| {
            coap::piggybacked_response(&p, &payload).map_err(|_| EdhocError::Coap)
        });
        match response {
            Ok(response) => {
                self.cache.put(p.header.message_id, response.clone());
                Step::send(vec![response])
            }
            Err(e) => {
                self.failed = Some(Failure::Local(e));
                Step::default()
            }
        }
    }

    fn deadline(&self) -> Option<u64> {
        None
    }

    fn handle_timeout(&mut self, _now: Now) -> Step {
        Step::default()
    }

    fn delay_timers(&mut self, _by_ns: u64) {}

    fn status(&self) -> Status<(), EdhocError> {
        match (&self.failed, &self.state) {
            (Some(f), _) => Status::Failed(f.clone()),
            (None, ServerState::Done) => Status::Complete(()),
            _ => Status::Running,
        }
    }

    fn retransmissions(&self) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::run_in_memory;
    use wtlsperf_spine::pair::{Direction, Ended, Fate};
    use wtlsperf_spine::Pair;

    const T0: Now = Now {
        mono_ns: 0,
        unix_secs: 1_700_000_000,
    };

    #[test]
    fn method_3_handshake_completes_in_memory_in_two_round_trips() {
        let cfg = EdhocConfig::new().unwrap();
        let run = run_in_memory(cfg.client(1).unwrap(), || cfg.server()).unwrap();
        assert_eq!(run.flights().len(), 4, "{:?}", run.log);
        // RFC 9529's method-3 trace has messages of 37, 45 and 19 bytes; CoAP adds its
        // header, token, Uri-Path and payload marker. Well under 300 bytes in all.
        assert!(run.bytes() < 300, "{}", run.bytes());
    }

    #[test]
    fn a_repeated_request_gets_the_same_response_garbage_is_dropped_and_a_bad_key_fails() {
        let cfg = EdhocConfig::new().unwrap();
        let mut client = cfg.client(2).unwrap();
        let mut server = cfg.server().unwrap();
        let m1 = client.start(T0).datagrams;
        let a = server.handle_datagram(&m1[0], T0);
        let b = server.handle_datagram(&m1[0], T0);
        assert_eq!(a, b);
        assert!(
            server
                .handle_datagram(&[0x40, 0x02, 0, 9, 0xff, 1], T0)
                .dropped
        );
        assert!(server.status().is_running());
        // A message_1 whose ephemeral key G_X (the 32 bytes before C_I) is no field
        // element, so no point: lakers' backend panics, the server fails the handshake.
        let mut fresh = cfg.server().unwrap();
        let mut bad = m1[0].clone();
        let n = bad.len();
        bad[n - 33..n - 1].fill(0xff);
        assert!(fresh.handle_datagram(&bad, T0).datagrams.is_empty());
        assert!(matches!(
            fresh.status(),
            Status::Failed(Failure::Local(EdhocError::InvalidPoint { .. }))
        ));
    }

    #[test]
    fn the_client_retransmits_message_1_on_its_coap_timer() {
        let cfg = EdhocConfig::new().unwrap();
        let mut client = cfg.client(3).unwrap();
        let first = client.start(T0).datagrams;
        let due = client.deadline().unwrap();
        assert!((2_000_000_000..=3_000_000_000).contains(&due), "{due}");
        let again = client.handle_timeout(Now::new(due, T0.unix_secs));
        assert_eq!(again.datagrams, first);
        assert_eq!(client.retransmissions(), 1);
    }

    #[test]
    fn a_held_flight_starts_its_timer_when_it_leaves() {
        let cfg = EdhocConfig::new().unwrap();
        let mut client = cfg.client(4).unwrap();
        client.start(T0);
        let due = client.deadline().unwrap();
        client.delay_timers(5_000_000_000);
        assert_eq!(client.deadline(), Some(due + 5_000_000_000));
        assert!(client
            .handle_timeout(Now::new(due, T0.unix_secs))
            .datagrams
            .is_empty());
    }

    #[test]
    fn a_lost_message_2_is_recovered_at_the_coap_deadline_in_virtual_time() {
        let cfg = EdhocConfig::new().unwrap();
        let mut client = cfg.client(5).unwrap();
        // The deadline the pair must jump to, from an identical client (same seed).
        let mut twin = cfg.client(5).unwrap();
        twin.start(T0);
        let due = twin.deadline().unwrap();
        client = std::mem::replace(&mut client, twin);
        let mut pair = Pair::new(client, cfg.server().unwrap(), T0).with_hook(|d, i, _| {
            if d == Direction::ToClient && i == 0 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        assert_eq!(pair.handshake(), Ended::Complete);
        assert_eq!(pair.now.mono_ns, due);
        assert_eq!(pair.client.retransmissions(), 1);
        // The server answered the repeated message_1 from its cache, byte for byte.
        assert_eq!(pair.server_sent[0], pair.server_sent[1]);
    }

    #[test]
    fn no_answer_ends_in_a_coap_time_out() {
        let cfg = EdhocConfig::new().unwrap();
        let mut pair = Pair::new(cfg.client(6).unwrap(), cfg.server().unwrap(), T0)
            .with_hook(|_, _, _| Fate::Drop);
        assert_eq!(pair.handshake(), Ended::Failed);
        assert!(matches!(
            pair.client.status(),
            Status::Failed(Failure::TimedOut { retransmissions: 4 })
        ));
    }

    #[test]
    fn raw_operations_are_timed_on_both_sides() {
        let (s, c) = EdhocConfig::new().unwrap().raw_ops().unwrap();
        assert!(s > 0 && c > 0);
    }
}
