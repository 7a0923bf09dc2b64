//! EDHOC (RFC 9528) through the `lakers` crate with its RustCrypto backend, carried by
//! CoAP as RFC 9528 Appendix A.2 describes, as a datagram [`Endpoint`].
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

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use lakers::{
    credential_check_or_fetch, ConnId, Credential, CredentialTransfer, CryptoTrait, EDHOCMethod,
    EDHOCSuite, EdhocInitiator, EdhocInitiatorWaitM2, EdhocInitiatorWaitM4, EdhocMessageBuffer,
    EdhocResponder, EdhocResponderWaitM3,
};
use rand::rngs::Xoshiro256PlusPlus;

use super::coap_retransmit::{self as coap, CoapTimers, ConExchange, ResponseCache};
use super::Endpoint;
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
        })
    }

    /// A fresh responder (it draws its ephemeral key here, as lakers does on creation).
    pub fn server(&self) -> anyhow::Result<EdhocServer> {
        let responder = EdhocResponder::new(crypto(), EDHOCMethod::StatStat, self.r, self.cred_r);
        Ok(EdhocServer {
            state: ServerState::Start(Box::new(responder)),
            cred_i: self.cred_i,
            cache: ResponseCache::default(),
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

fn buffer(bytes: &[u8]) -> anyhow::Result<EdhocMessageBuffer> {
    EdhocMessageBuffer::new_from_slice(bytes).map_err(|e| anyhow!("EDHOC message too long: {e:?}"))
}

/// lakers' RustCrypto backend panics on an invalid peer point (upstream report openwsn-berkeley/lakers#93); a
/// peer's bytes must give an error, so every step on received bytes runs here.
fn guarded<T>(
    what: &str,
    step: impl FnOnce() -> Result<T, lakers::EDHOCError>,
) -> anyhow::Result<T> {
    match catch_unwind(AssertUnwindSafe(step)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(anyhow!("EDHOC {what}: {e:?}")),
        Err(_) => Err(anyhow!(
            "EDHOC {what}: the peer's key was not a valid P-256 point"
        )),
    }
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
}

impl EdhocClient {
    /// Sends `payload` as a new confirmable request.
    fn request(&mut self, payload: &[u8], now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        let mid = self.next_mid;
        self.next_mid = self.next_mid.wrapping_add(1);
        let token = [mid as u8];
        let msg = coap::edhoc_request(mid, &token, payload)?;
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
    ) -> anyhow::Result<Vec<Vec<u8>>> {
        let m2 = buffer(payload)?;
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
}

impl Endpoint for EdhocClient {
    fn start(&mut self, now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        let ClientState::Start(init) = std::mem::replace(&mut self.state, ClientState::Failed)
        else {
            bail!("EDHOC client started twice");
        };
        let (wait, m1) = guarded("message_1", || init.prepare_message_1(None, &None))?;
        self.state = ClientState::WaitM2(wait);
        let mut payload = vec![CBOR_TRUE];
        payload.extend_from_slice(m1.as_slice());
        self.request(&payload, now)
    }

    fn on_datagram(&mut self, datagram: &[u8], now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        let p = coap::parse(datagram)?;
        // Only the ACK of the outstanding request matters; duplicates are ignored.
        let expected = self.pending.as_ref().map(|x| x.message_id);
        if expected != Some(p.header.message_id) {
            return Ok(Vec::new());
        }
        self.pending = None;
        match std::mem::replace(&mut self.state, ClientState::Failed) {
            ClientState::WaitM2(wait) => self.on_message_2(wait, &p.payload, now),
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

    fn next_timeout(&mut self, _now: Duration) -> Option<Duration> {
        self.pending.as_ref().map(ConExchange::due)
    }

    fn on_timer(&mut self, now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        let Some(x) = self.pending.as_mut() else {
            return Ok(Vec::new());
        };
        let again = x.on_timer(now)?;
        self.retransmissions += u32::from(again.is_some());
        Ok(again.into_iter().collect())
    }

    fn is_complete(&self) -> bool {
        matches!(self.state, ClientState::Done)
    }

    fn retransmissions(&self) -> u32 {
        self.retransmissions
    }

    fn delay_timers(&mut self, by: Duration) {
        if let Some(x) = self.pending.as_mut() {
            x.postpone(by);
        }
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
}

impl EdhocServer {
    fn on_request(&mut self, payload: &[u8]) -> anyhow::Result<Vec<u8>> {
        match std::mem::replace(&mut self.state, ServerState::Failed) {
            ServerState::Start(resp) => {
                let Some((&CBOR_TRUE, m1)) = payload.split_first() else {
                    bail!("message_1 without the CBOR true prefix");
                };
                let m1 = buffer(m1)?;
                let (processed, _c_i, _ead) = guarded("message_1", || resp.process_message_1(&m1))?;
                let c_r = ConnId::from_slice(&[C_R]).ok_or_else(|| anyhow!("C_R"))?;
                let (wait, m2) = guarded("message_2", || {
                    processed.prepare_message_2(CredentialTransfer::ByReference, Some(c_r), &None)
                })?;
                self.state = ServerState::WaitM3(wait);
                Ok(m2.as_slice().to_vec())
            }
            ServerState::WaitM3(wait) => {
                let Some((&C_R, m3)) = payload.split_first() else {
                    bail!("message_3 for another connection identifier");
                };
                let m3 = buffer(m3)?;
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
            ServerState::Done | ServerState::Failed => bail!("EDHOC request after the handshake"),
        }
    }
}

impl Endpoint for EdhocServer {
    fn start(&mut self, _now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        Ok(Vec::new())
    }

    fn on_datagram(&mut self, datagram: &[u8], _now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        let p = coap::parse(datagram)?;
        if let Some(cached) = self.cache.get(p.header.message_id) {
            return Ok(vec![cached.to_vec()]);
        }
        if !coap::is_edhoc_request(&p) {
            bail!("not a POST to /.well-known/edhoc");
        }
        let payload = self.on_request(&p.payload).context("EDHOC server")?;
        let response = coap::piggybacked_response(&p, &payload)?;
        self.cache.put(p.header.message_id, response.clone());
        Ok(vec![response])
    }

    fn next_timeout(&mut self, _now: Duration) -> Option<Duration> {
        None
    }

    fn on_timer(&mut self, _now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        Ok(Vec::new())
    }

    fn is_complete(&self) -> bool {
        matches!(self.state, ServerState::Done)
    }

    fn retransmissions(&self) -> u32 {
        0
    }

    fn delay_timers(&mut self, _by: Duration) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::run_in_memory;

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
    fn a_repeated_request_gets_the_same_response_and_garbage_is_an_error() {
        let cfg = EdhocConfig::new().unwrap();
        let mut client = cfg.client(2).unwrap();
        let mut server = cfg.server().unwrap();
        let m1 = client.start(Duration::ZERO).unwrap();
        let a = server.on_datagram(&m1[0], Duration::ZERO).unwrap();
        let b = server.on_datagram(&m1[0], Duration::ZERO).unwrap();
        assert_eq!(a, b);
        assert!(server
            .on_datagram(&[0x40, 0x02, 0, 9, 0xff, 1], Duration::ZERO)
            .is_err());
        // A message_1 whose ephemeral key G_X (the 32 bytes before C_I) is no field
        // element, so no point: lakers' backend panics, the server answers an error.
        let mut fresh = cfg.server().unwrap();
        let mut bad = m1[0].clone();
        let n = bad.len();
        bad[n - 33..n - 1].fill(0xff);
        assert!(fresh.on_datagram(&bad, Duration::ZERO).is_err());
    }

    #[test]
    fn the_client_retransmits_message_1_on_its_coap_timer() {
        let cfg = EdhocConfig::new().unwrap();
        let mut client = cfg.client(3).unwrap();
        let first = client.start(Duration::ZERO).unwrap();
        let due = client.next_timeout(Duration::ZERO).unwrap();
        assert!(due >= Duration::from_secs(2) && due <= Duration::from_secs(3));
        assert_eq!(client.on_timer(due).unwrap(), first);
        assert_eq!(client.retransmissions(), 1);
    }

    #[test]
    fn a_held_flight_starts_its_timer_when_it_leaves() {
        let cfg = EdhocConfig::new().unwrap();
        let mut client = cfg.client(4).unwrap();
        client.start(Duration::ZERO).unwrap();
        let due = client.next_timeout(Duration::ZERO).unwrap();
        client.delay_timers(Duration::from_secs(5));
        assert_eq!(
            client.next_timeout(Duration::ZERO),
            Some(due + Duration::from_secs(5))
        );
        assert!(client.on_timer(due).unwrap().is_empty());
    }

    #[test]
    fn raw_operations_are_timed_on_both_sides() {
        let (s, c) = EdhocConfig::new().unwrap().raw_ops().unwrap();
        assert!(s > 0 && c > 0);
    }
}
