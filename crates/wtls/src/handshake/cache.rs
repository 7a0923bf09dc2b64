//! Where the server keeps sessions for abbreviated handshakes: the [`SessionStore`]
//! interface, and its default, the in-process [`SessionCache`], bounded in entries and in
//! age.
//!
//! Bounded both ways because a gateway on an open network must not let peers grow its
//! memory: the oldest entry is evicted when the cache is full, and an entry older than
//! the lifetime is never resumed. The cache lives in memory only, so a gateway restart
//! forgets every session and clients fall back to a full handshake. A store shared by
//! several gateways (the application's Redis store) implements the same interface, so
//! that any node resumes any node's session.

use std::collections::VecDeque;
use std::fmt::Debug;
use std::sync::Mutex;

use crate::keyed_map::{KeyedMap, KeyedState};

use zeroize::Zeroizing;

use super::Now;
use crate::msgs::common::CipherSuite;
use crate::msgs::enums::KeyExchangeSuite;

/// Where a server configuration keeps and finds sessions. Shared by every connection of
/// every worker (`&self`, thread-safe).
///
/// The engine calls it synchronously while it processes a datagram, so a store that asks
/// another process must bound each call itself and treat a failure as "no session": a
/// lookup that fails costs the client a full handshake, never the handshake itself.
pub trait SessionStore: Send + Sync + Debug {
    /// Keep the session of a handshake that completed at `now`.
    fn insert(&self, session: StoredSession, now: Now);
    /// The session `id` names, if the store holds it and it is within its lifetime at
    /// `now`.
    fn lookup(&self, id: &[u8], now: Now) -> Option<StoredSession>;
    /// Forget session `id` (a fatal alert on a connection that used it).
    fn remove(&self, id: &[u8]);
    /// Sessions held, where the store can tell without asking another process.
    fn held(&self) -> Option<usize> {
        None
    }
}

/// The in-process cache as a store: one lock around it, held for a map operation only.
impl SessionStore for Mutex<SessionCache> {
    fn insert(&self, session: StoredSession, _now: Now) {
        self.lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(session);
    }

    fn lookup(&self, id: &[u8], now: Now) -> Option<StoredSession> {
        self.lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .lookup(id, now.mono_ns)
    }

    fn remove(&self, id: &[u8]) {
        self.lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(id);
    }

    fn held(&self) -> Option<usize> {
        Some(
            self.lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .len(),
        )
    }
}

/// What a resumed handshake needs: the master secret and the parameters it was made for.
#[derive(Clone, Debug)]
pub struct StoredSession {
    pub id: Vec<u8>,
    pub master_secret: Zeroizing<[u8; 20]>,
    pub cipher_suite: CipherSuite,
    pub key_exchange: KeyExchangeSuite,
    pub key_refresh: u8,
    pub created_ns: u64,
}

#[derive(Debug)]
pub struct SessionCache {
    capacity: usize,
    lifetime_ns: u64,
    entries: KeyedMap<Vec<u8>, StoredSession>,
    order: VecDeque<Vec<u8>>,
    hits: u64,
    misses: u64,
}

impl SessionCache {
    pub fn new(capacity: usize, lifetime_ns: u64) -> Self {
        SessionCache {
            capacity,
            lifetime_ns,
            // Bounded, so sized once: no rehash of the whole cache while serving.
            entries: KeyedMap::with_capacity_and_hasher(capacity.min(1 << 20), KeyedState::new()),
            order: VecDeque::with_capacity(capacity.min(1 << 20)),
            hits: 0,
            misses: 0,
        }
    }

    pub fn insert(&mut self, session: StoredSession) {
        if self.capacity == 0 {
            return;
        }
        if self.entries.contains_key(&session.id) {
            self.order.retain(|k| k != &session.id);
        }
        while self.entries.len() >= self.capacity {
            match self.order.pop_front() {
                Some(old) => {
                    self.entries.remove(&old);
                }
                None => break,
            }
        }
        self.order.push_back(session.id.clone());
        self.entries.insert(session.id.clone(), session);
    }

    /// The session, if it is cached and younger than the lifetime at `now_ns`.
    pub fn lookup(&mut self, id: &[u8], now_ns: u64) -> Option<StoredSession> {
        let found = self
            .entries
            .get(id)
            .filter(|s| now_ns.saturating_sub(s.created_ns) <= self.lifetime_ns)
            .cloned();
        if found.is_some() {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        found
    }

    /// Forget a session (after a fatal alert on a connection that used it).
    pub fn remove(&mut self, id: &[u8]) {
        if self.entries.remove(id).is_some() {
            self.order.retain(|k| k != id);
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn hits_and_misses(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};

    fn session(id: u8, created_ns: u64) -> StoredSession {
        StoredSession {
            id: vec![id],
            master_secret: Zeroizing::new([id; 20]),
            cipher_suite: CipherSuite {
                bulk: BulkCipherAlgorithm::Rc5Cbc,
                mac: MacAlgorithm::Sha,
            },
            key_exchange: KeyExchangeSuite::EcdhEcdsa,
            key_refresh: 3,
            created_ns,
        }
    }

    #[test]
    fn capacity_evicts_the_oldest() {
        let mut c = SessionCache::new(2, u64::MAX);
        c.insert(session(1, 0));
        c.insert(session(2, 0));
        c.insert(session(3, 0));
        assert_eq!(c.len(), 2);
        assert!(c.lookup(&[1], 0).is_none());
        assert!(c.lookup(&[3], 0).is_some());
    }

    #[test]
    fn expired_sessions_are_not_resumed() {
        let mut c = SessionCache::new(4, 1_000);
        c.insert(session(1, 0));
        assert!(c.lookup(&[1], 1_000).is_some());
        assert!(c.lookup(&[1], 1_001).is_none());
        assert_eq!(c.hits_and_misses(), (1, 1));
    }
}
