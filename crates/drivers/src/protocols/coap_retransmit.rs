//! EDHOC's carrier: CoAP confirmable messages and their retransmission, RFC 7252
//! section 4.2 with the transmission parameters of section 4.8.
//!
//! EDHOC itself has no timers: RFC 9528 leaves reliability to its transport, and over
//! CoAP (RFC 9528 Appendix A.2) that is CoAP's confirmable-message rule. A CON request
//! is sent again when no ACK (here: the piggybacked response) came within its timeout;
//! the first timeout is drawn uniformly from [ACK_TIMEOUT, ACK_TIMEOUT x
//! ACK_RANDOM_FACTOR], each next one is twice the last, and after MAX_RETRANSMIT
//! retransmissions the exchange fails. The server deduplicates by Message ID and answers
//! a repeated request with the same response (section 4.5). The message encoding is the
//! `coap-lite` crate's.

use std::collections::VecDeque;
use std::time::Duration;

use anyhow::{anyhow, bail};
use coap_lite::{CoapOption, MessageClass, MessageType, Packet, RequestType, ResponseType};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// RFC 7252 section 4.8 transmission parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoapTimers {
    /// ACK_TIMEOUT (default 2 s).
    pub ack_timeout: Duration,
    /// ACK_RANDOM_FACTOR (default 1.5).
    pub random_factor: f64,
    /// MAX_RETRANSMIT (default 4).
    pub max_retransmit: u32,
}

impl Default for CoapTimers {
    fn default() -> Self {
        CoapTimers {
            ack_timeout: Duration::from_secs(2),
            random_factor: 1.5,
            max_retransmit: 4,
        }
    }
}

impl CoapTimers {
    /// The same rule scaled to another ACK_TIMEOUT (tests on a fast lossy link).
    pub fn with_ack_timeout(self, ack_timeout: Duration) -> CoapTimers {
        CoapTimers {
            ack_timeout,
            ..self
        }
    }
}

/// One outstanding confirmable request and its retransmission state.
#[derive(Debug, Clone)]
pub struct ConExchange {
    /// The encoded request, sent again unchanged (same Message ID).
    pub message: Vec<u8>,
    /// Its Message ID, which the ACK echoes.
    pub message_id: u16,
    /// Retransmissions so far.
    pub retransmissions: u32,
    timeout: Duration,
    due: Duration,
    max_retransmit: u32,
}

impl ConExchange {
    /// Starts the exchange at `now` with a first timeout drawn from `rng`.
    pub fn new(
        message: Vec<u8>,
        message_id: u16,
        now: Duration,
        timers: CoapTimers,
        rng: &mut Xoshiro256PlusPlus,
    ) -> ConExchange {
        let factor = 1.0 + (timers.random_factor - 1.0) * rng.random::<f64>();
        let timeout = timers.ack_timeout.mul_f64(factor);
        ConExchange {
            message,
            message_id,
            retransmissions: 0,
            timeout,
            due: now + timeout,
            max_retransmit: timers.max_retransmit,
        }
    }

    /// When the request is due again.
    pub fn due(&self) -> Duration {
        self.due
    }

    /// The request left `by` later than it was made: its timer starts then.
    pub fn postpone(&mut self, by: Duration) {
        self.due += by;
    }

    /// At or after [`ConExchange::due`]: the request to send again (the timeout doubles),
    /// or an error once MAX_RETRANSMIT retransmissions went unanswered.
    pub fn on_timer(&mut self, now: Duration) -> anyhow::Result<Option<Vec<u8>>> {
        if now < self.due {
            return Ok(None);
        }
        if self.retransmissions >= self.max_retransmit {
            bail!(
                "CoAP: no ACK for message {} after {} retransmissions",
                self.message_id,
                self.retransmissions
            );
        }
        self.retransmissions += 1;
        self.timeout *= 2;
        self.due = now + self.timeout;
        Ok(Some(self.message.clone()))
    }
}

/// The resource EDHOC is posted to (RFC 9528 Appendix A.2).
const EDHOC_PATH: [&str; 2] = [".well-known", "edhoc"];

/// A confirmable POST to /.well-known/edhoc carrying `payload`.
pub fn edhoc_request(message_id: u16, token: &[u8], payload: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut p = Packet::new();
    p.header.set_type(MessageType::Confirmable);
    p.header.code = MessageClass::Request(RequestType::Post);
    p.header.message_id = message_id;
    p.set_token(token.to_vec());
    for seg in EDHOC_PATH {
        p.add_option(CoapOption::UriPath, seg.as_bytes().to_vec());
    }
    p.payload = payload.to_vec();
    p.to_bytes().map_err(|e| anyhow!("CoAP encode: {e:?}"))
}

/// The ACK to `request` carrying a 2.04 (Changed) response with `payload`.
pub fn piggybacked_response(request: &Packet, payload: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut p = Packet::new();
    p.header.set_type(MessageType::Acknowledgement);
    p.header.code = MessageClass::Response(ResponseType::Changed);
    p.header.message_id = request.header.message_id;
    p.set_token(request.get_token().to_vec());
    p.payload = payload.to_vec();
    p.to_bytes().map_err(|e| anyhow!("CoAP encode: {e:?}"))
}

/// Decodes a CoAP message; malformed bytes are an error.
pub fn parse(bytes: &[u8]) -> anyhow::Result<Packet> {
    Packet::from_bytes(bytes).map_err(|e| anyhow!("malformed CoAP message: {e:?}"))
}

/// Is this a POST to /.well-known/edhoc?
pub fn is_edhoc_request(p: &Packet) -> bool {
    let path: Vec<&[u8]> = p
        .get_option(CoapOption::UriPath)
        .map(|l| l.iter().map(|v| v.as_slice()).collect())
        .unwrap_or_default();
    p.header.code == MessageClass::Request(RequestType::Post)
        && path == EDHOC_PATH.map(str::as_bytes)
}

/// A server's memory of the responses it sent, by Message ID (RFC 7252 section 4.5),
/// bounded to the last few exchanges.
#[derive(Debug, Default)]
pub struct ResponseCache {
    entries: VecDeque<(u16, Vec<u8>)>,
}

/// Responses remembered: an EDHOC exchange has two requests.
const CACHE_ENTRIES: usize = 4;

impl ResponseCache {
    /// The response already sent for this Message ID, if any.
    pub fn get(&self, message_id: u16) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|(id, _)| *id == message_id)
            .map(|(_, r)| r.as_slice())
    }

    /// Remembers a response.
    pub fn put(&mut self, message_id: u16, response: Vec<u8>) {
        if self.entries.len() == CACHE_ENTRIES {
            self.entries.pop_front();
        }
        self.entries.push_back((message_id, response));
    }
}

/// A seeded random stream for the timers, so a lossy run is reproducible.
pub fn timer_rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_start_within_the_random_window_double_and_give_up_after_four() {
        let t = CoapTimers::default();
        let mut rng = timer_rng(1);
        let mut x = ConExchange::new(vec![1], 7, Duration::ZERO, t, &mut rng);
        let first = x.due();
        assert!(first >= Duration::from_secs(2) && first <= Duration::from_secs(3));
        assert_eq!(x.on_timer(first / 2).unwrap(), None);
        let mut now = first;
        let mut gaps = Vec::new();
        for _ in 0..4 {
            assert_eq!(x.on_timer(now).unwrap(), Some(vec![1]));
            gaps.push(x.due() - now);
            now = x.due();
        }
        assert_eq!(gaps[1], gaps[0] * 2);
        assert_eq!(gaps[0], first * 2);
        assert!(x.on_timer(now).is_err(), "MAX_RETRANSMIT is 4");
    }

    #[test]
    fn requests_and_responses_round_trip() {
        let req = edhoc_request(0x1234, &[9], &[0xf5, 3]).unwrap();
        let p = parse(&req).unwrap();
        assert!(is_edhoc_request(&p));
        assert_eq!(p.payload, vec![0xf5, 3]);
        let ack = parse(&piggybacked_response(&p, b"m2").unwrap()).unwrap();
        assert_eq!(ack.header.message_id, 0x1234);
        assert_eq!(ack.header.get_type(), MessageType::Acknowledgement);
        assert_eq!(ack.get_token(), &[9]);
        assert!(parse(&[0xff]).is_err());
    }

    #[test]
    fn the_cache_answers_a_repeated_message_id_and_forgets_old_ones() {
        let mut c = ResponseCache::default();
        for id in 0..5u16 {
            c.put(id, vec![id as u8]);
        }
        assert_eq!(c.get(4), Some(&[4u8][..]));
        assert_eq!(c.get(0), None);
    }
}
