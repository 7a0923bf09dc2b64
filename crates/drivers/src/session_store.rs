//! A session store shared by gateways: any node resumes any node's session, and a
//! session outlives the restart of the node that made it.
//!
//! The engine resumes from a [`wtls::handshake::SessionStore`]; its in-process cache is
//! the default. `gateway --session-store redis://HOST:PORT --session-key FILE` puts
//! [`RedisSessionStore`] in its place: entries sealed by [`seal`] (a reader of Redis
//! learns no master secret), expiring with the session's lifetime. docs/security.md
//! ("Shared session store") describes the sealing, rotation and what the store's reader
//! and writer can do.

pub mod redis_store;
pub mod seal;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

pub use redis_store::{RedisSessionStore, RedisStoreConfig};
pub use seal::{SessionKey, SessionKeys};

/// The gateway's store options (`--session-store`, `--session-key`,
/// `--session-store-timeout-ms`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStoreOptions {
    /// The Redis server (`redis://HOST:PORT`) shared with every gateway naming it; `None`
    /// keeps sessions in this process.
    pub session_store: Option<String>,
    /// Files of 32 random bytes that seal the store's entries: the first seals, all open.
    pub session_key: Vec<PathBuf>,
    /// Longest a store call may take; past it the client gets a full handshake.
    pub session_store_timeout_ms: u64,
}

impl SessionStoreOptions {
    /// The store the options name (none without --session-store), with one connection
    /// per worker and one for the prober. Key files are read here: every problem with
    /// one names it.
    pub fn open(
        &self,
        workers: usize,
        lifetime: Duration,
    ) -> anyhow::Result<Option<Arc<RedisSessionStore>>> {
        let Some(url) = &self.session_store else {
            return Ok(None);
        };
        let keys = self
            .session_key
            .iter()
            .map(|path| SessionKey::read(path, "--session-key"))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let config = RedisStoreConfig {
            url: url.clone(),
            timeout: Duration::from_millis(self.session_store_timeout_ms),
            connections: u32::try_from(workers.saturating_add(1)).unwrap_or(u32::MAX),
            lifetime,
        };
        Ok(Some(Arc::new(RedisSessionStore::open(
            config,
            SessionKeys::new(keys)?,
        )?)))
    }
}

/// A shared store's counters, in the gateway's statistics (`session_store`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionStoreStats {
    /// Resumptions asked for (a ClientHello naming a session).
    pub lookups: u64,
    pub hits: u64,
    /// Not in the store (never stored, expired by Redis, or forgotten).
    pub misses: u64,
    /// Lookups that failed or were skipped because the store was down or slow: each
    /// cost its client a full handshake.
    pub lookups_failed: u64,
    /// Entries sealed under a key not configured (retired).
    pub refused_unknown_key: u64,
    /// Entries whose seal did not verify (corrupted, forged, moved to another id).
    pub refused_not_authentic: u64,
    /// Entries older than the session lifetime (a TTL extended by a writer of the
    /// store).
    pub expired: u64,
    /// Sessions of completed full handshakes offered to the store, and those it did not
    /// take (store down or slow).
    pub stores: u64,
    pub stores_failed: u64,
    pub removes_failed: u64,
    /// Times the store was found unreachable, and times it answered again.
    pub went_down: u64,
    pub reconnects: u64,
}
