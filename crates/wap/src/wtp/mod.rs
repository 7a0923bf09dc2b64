//! WTP (WAP-224): PDUs and the transaction state machines, sans-IO.
//!
//! One [`Initiator`] or [`Responder`] is one transaction. It takes decoded PDUs and the
//! virtual time ([`Now`]) and answers with an [`Output`]: datagrams to send and
//! [`Event`]s for its user (WSP). Its single timer is exposed as [`Initiator::deadline`]
//! / [`Responder::deadline`]; the driver calls `on_timeout` when that time has come, so
//! retransmission is tested in virtual time with no sleeping.
//!
//! What the machines implement (WAP-224 §9): classes 0, 1 and 2; TID verification (the
//! responder's Tve, the initiator's Tok) with [`TidCache`]; provider and user
//! acknowledgement, the hold-on Ack when the result is late; retransmission with the RID
//! flag under the retry timer and counter, then a provider abort NORESPONSE; segmentation
//! and reassembly (SAR, §9.6) in groups with a PSN-carrying Ack per group and the
//! selective Negative Ack for missing packets; aborts from either side.

mod initiator;
pub mod pdu;
mod responder;
mod sar;
mod timers;

use std::collections::HashMap;
use std::hash::Hash;

pub use initiator::{Initiator, InitiatorOptions};
pub use pdu::{
    decode_datagram, encode_datagram, AbortReason, Body, Direction, Pdu, PduType, ProviderReason,
    Tid, Tpi, Trailer, TransactionClass,
};
pub use responder::Responder;
pub use timers::{AppendixA, Timers, WtpBearer};
pub use wtlsperf_spine::Now;

/// What a transaction tells its user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Responder: the initiator's request (reassembled if it was segmented).
    Invoke {
        class: TransactionClass,
        data: Vec<u8>,
    },
    /// Initiator: the peer acknowledged the invoke (class 1: the transaction is done).
    InvokeAcknowledged,
    /// Initiator: the responder's result (reassembled if it was segmented).
    Result(Vec<u8>),
    /// Responder: the initiator confirmed a verified TID (Tok); record it in the
    /// [`TidCache`].
    TidConfirmed,
    /// The transaction ended normally.
    Completed,
    /// The transaction ended by an abort; `by_peer` tells whether an Abort PDU came in
    /// or this side gave up (retransmissions exhausted, protocol error).
    Aborted { reason: AbortReason, by_peer: bool },
}

/// Datagrams to send and events for the user, in order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Output {
    pub send: Vec<Vec<u8>>,
    pub events: Vec<Event>,
}

impl Output {
    fn send(&mut self, pdu: Pdu) {
        self.send.push(pdu.encode());
    }

    fn event(&mut self, e: Event) {
        self.events.push(e);
    }
}

/// Why a transaction refused a call from its user (not from the network: a PDU that
/// does not fit the state is answered on the wire, never an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    #[error("the transaction is not waiting for that call in its current state")]
    WrongState,
    #[error("the message needs more than 256 segments")]
    MessageTooLarge,
}

/// The responder's verdict on an Invoke's TID (WAP-224 §9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TidVerdict {
    /// Process the invoke now.
    Accept,
    /// Ask the initiator to confirm with a Tve Ack before processing.
    Verify,
}

/// The last TID seen from each initiator, to tell a new transaction from a delayed
/// duplicate of an old one. Keyed by whatever names a peer (its address).
///
/// An entry lives for [`Timers::tid_lifetime_ns`] after the peer was last heard from or
/// its last transaction ended: the initiator's retransmissions, then the network's
/// Maximum Packet Lifetime (WAP-224 §7.8.2.2, Table 6: the responder "caches the TID for
/// each Initiator for the Maximum Packet Lifetime"). No copy of an older invoke can still
/// arrive after that, and a TID from a new initiator on a reused address is then taken
/// without a verification round trip (§7.8.3.2).
#[derive(Debug, Clone)]
pub struct TidCache<K> {
    last: HashMap<K, CachedTid>,
    lifetime_ns: u64,
}

#[derive(Debug, Clone, Copy)]
struct CachedTid {
    tid: Tid,
    heard_ns: u64,
}

impl<K: Hash + Eq> Default for TidCache<K> {
    /// The IP bearer's lifetime ([`Timers::default`]).
    fn default() -> Self {
        TidCache::new(Timers::default().tid_lifetime_ns())
    }
}

impl<K: Hash + Eq> TidCache<K> {
    /// A cache whose entries live `lifetime_ns` after their peer was last heard from.
    pub fn new(lifetime_ns: u64) -> Self {
        TidCache {
            last: HashMap::new(),
            lifetime_ns,
        }
    }

    /// The TID test: a TID in the window after the last one is accepted and recorded.
    /// A peer with no cached TID, or one not heard from for the cache's lifetime, is accepted (as
    /// Kannel does for the first: it cannot be told from a restarted one, and verifying
    /// every first transaction costs a round trip). A set TIDnew flag, or a TID outside
    /// the window, needs verification.
    pub fn verdict(&mut self, peer: K, tid: Tid, tid_new: bool, now: Now) -> TidVerdict {
        if tid_new {
            return TidVerdict::Verify;
        }
        match self.live(&peer, now) {
            Some(last) if !tid.follows(last) => TidVerdict::Verify,
            _ => {
                self.confirm(peer, tid, now);
                TidVerdict::Accept
            }
        }
    }

    /// The peer's cached TID, unless its lifetime has passed since it was last heard from.
    fn live(&self, peer: &K, now: Now) -> Option<Tid> {
        self.last
            .get(peer)
            .filter(|c| now.mono_ns.saturating_sub(c.heard_ns) <= self.lifetime_ns)
            .map(|c| c.tid)
    }

    /// Records a TID the initiator has confirmed (Tok).
    pub fn confirm(&mut self, peer: K, tid: Tid, now: Now) {
        let heard_ns = now.mono_ns;
        self.last.insert(peer, CachedTid { tid, heard_ns });
    }

    /// Restarts the peer's lifetime if it has not ended: the peer was heard from, or one
    /// of its transactions ended (an invoke it sent before that may still be on its way).
    /// An entry already past its lifetime stays dead: whoever sends from the address now is
    /// judged as a new initiator.
    pub fn heard(&mut self, peer: &K, now: Now) {
        let lifetime_ns = self.lifetime_ns;
        if let Some(c) = self.last.get_mut(peer) {
            if now.mono_ns.saturating_sub(c.heard_ns) <= lifetime_ns {
                c.heard_ns = c.heard_ns.max(now.mono_ns);
            }
        }
    }

    /// Forgets a peer, as a restart would (its next TID is accepted): what bounds the
    /// cache when its user keeps only so many peers.
    pub fn forget(&mut self, peer: &K) {
        self.last.remove(peer);
    }

    /// Peers with a cached TID (live or not yet dropped).
    pub fn len(&self) -> usize {
        self.last.len()
    }

    pub fn is_empty(&self) -> bool {
        self.last.is_empty()
    }
}

/// The one timer a transaction runs, and when it expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    Ack(u64),
    Retry(u64),
    Wait(u64),
}

impl Timer {
    fn at(self) -> u64 {
        match self {
            Timer::Ack(t) | Timer::Retry(t) | Timer::Wait(t) => t,
        }
    }
}

#[cfg(test)]
mod tests;
