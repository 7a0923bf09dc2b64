//! The Redis session store: sealed entries ([`super::seal`]) under `wtls:session:<id>`,
//! expiring with the session's lifetime (`SET ... PX`).
//!
//! The engine asks the store while a worker processes a datagram, so every call is
//! bounded by one time-out ([`RedisStoreConfig::timeout`]): the wait for a pooled
//! connection and the write and read of the command share it. A call that fails or runs
//! out of time costs that client a full handshake, nothing else.
//!
//! Health: the first failure marks the store down. While it is down, workers do not ask
//! it at all (a lookup is a miss at once, an insert is dropped, both counted), so a dead
//! or hung Redis costs each worker at most one time-out, not one per handshake. A
//! thread of the store's own probes it (`PING`) with back-off, 100 ms doubling to 5 s,
//! and marks it up when it answers. Connections are tagged with an epoch that each change
//! of health advances, and the pool discards a connection of an older epoch when it is
//! checked out, so no worker uses a connection to a Redis that has since restarted.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;
use redis::{Cmd, ConnectionLike};
use wtls::handshake::{Now, SessionStore, StoredSession};

use super::seal::{OpenError, SessionKeys};
use super::SessionStoreStats;

/// First wait before the store is probed again after a failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest wait between two probes.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// At most one log line per this interval for lookups skipped while the store is down.
const SKIP_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// What a gateway needs to reach its store.
#[derive(Debug, Clone)]
pub struct RedisStoreConfig {
    /// `redis://HOST:PORT` (as the `redis` crate reads it).
    pub url: String,
    /// Bound of one store call (pool wait, write and read together).
    pub timeout: Duration,
    /// Connections kept (one per worker and one for the prober).
    pub connections: u32,
    /// How long a session may be resumed after the handshake that made it.
    pub lifetime: Duration,
}

/// Sessions in Redis, shared by every gateway that names the same server and keys.
pub struct RedisSessionStore {
    shared: Arc<Shared>,
    prober: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("url", &self.shared.url)
            .field("down", &self.shared.down.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

struct Shared {
    url: String,
    pool: r2d2::Pool<Manager>,
    keys: SessionKeys,
    timeout: Duration,
    lifetime: Duration,
    /// Advanced by every change of health: connections of older epochs are discarded.
    epoch: Arc<AtomicU64>,
    /// Taken as down: workers skip the store until the prober finds it again.
    down: AtomicBool,
    /// The store was dropped: the prober ends.
    stop: AtomicBool,
    /// Why it is down, and the skipped lookups' log; the prober waits on it.
    health: Mutex<Health>,
    /// Wakes the prober (the store went down, or it is dropped).
    wake: Condvar,
    /// The counters of [`SessionStoreStats`], updated by every worker.
    stats: Counters,
}

#[derive(Debug)]
struct Health {
    /// Why the store is down (the last failure), for the log.
    reason: String,
    /// Lookups skipped since the last log line about them, and when that was.
    skipped_unlogged: u64,
    skip_logged: Option<Instant>,
}

#[derive(Default)]
struct Counters {
    lookups: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    lookups_failed: AtomicU64,
    refused_unknown_key: AtomicU64,
    refused_not_authentic: AtomicU64,
    expired: AtomicU64,
    stores: AtomicU64,
    stores_failed: AtomicU64,
    removes_failed: AtomicU64,
    went_down: AtomicU64,
    reconnects: AtomicU64,
}

/// A pooled connection and the epoch it was made in.
struct StoreConnection {
    conn: redis::Connection,
    epoch: u64,
    broken: bool,
}

/// Makes connections with a connect time-out and tells the pool which ones to drop.
struct Manager {
    client: redis::Client,
    connect_timeout: Duration,
    epoch: Arc<AtomicU64>,
}

impl r2d2::ManageConnection for Manager {
    type Connection = StoreConnection;
    type Error = redis::RedisError;

    fn connect(&self) -> Result<StoreConnection, redis::RedisError> {
        let epoch = self.epoch.load(Ordering::SeqCst);
        let conn = self
            .client
            .get_connection_with_timeout(self.connect_timeout)?;
        Ok(StoreConnection {
            conn,
            epoch,
            broken: false,
        })
    }

    /// No round trip: a connection is valid while its epoch is current and no call on
    /// it failed (the pool asks at every checkout).
    fn is_valid(&self, c: &mut StoreConnection) -> Result<(), redis::RedisError> {
        if self.has_broken(c) {
            Err(redis::RedisError::from((
                redis::ErrorKind::Io,
                "connection from before the store's last change of health",
            )))
        } else {
            Ok(())
        }
    }

    fn has_broken(&self, c: &mut StoreConnection) -> bool {
        c.broken || !c.conn.is_open() || c.epoch != self.epoch.load(Ordering::SeqCst)
    }
}

impl RedisSessionStore {
    /// Connects (in the background: a Redis that is down at start only costs
    /// resumption until it answers) and starts the prober. A URL the client cannot read
    /// is an error naming `--session-store`.
    pub fn open(config: RedisStoreConfig, keys: SessionKeys) -> anyhow::Result<RedisSessionStore> {
        let client = redis::Client::open(config.url.as_str())
            .with_context(|| format!("--session-store {}", config.url))?;
        let epoch = Arc::new(AtomicU64::new(0));
        let manager = Manager {
            client,
            connect_timeout: config.timeout,
            epoch: epoch.clone(),
        };
        let pool = r2d2::Pool::builder()
            .max_size(config.connections.max(2))
            // The pool's own reconnection attempts back off to half of this (0.5 s), so
            // a store that is back gets a connection soon after the prober asks.
            .connection_timeout(Duration::from_secs(1))
            .test_on_check_out(true)
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build_unchecked(manager);
        let shared = Arc::new(Shared {
            url: config.url,
            pool,
            keys,
            timeout: config.timeout,
            lifetime: config.lifetime,
            epoch,
            down: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            health: Mutex::new(Health {
                reason: String::new(),
                skipped_unlogged: 0,
                skip_logged: None,
            }),
            wake: Condvar::new(),
            stats: Counters::default(),
        });
        match shared.ping() {
            Ok(()) => tracing::info!(
                url = %shared.url,
                key = %shared.keys.sealing().id(),
                "session store reachable; sessions are sealed under key {}",
                shared.keys.sealing().id()
            ),
            Err(e) => shared.mark_down(&e),
        }
        let prober = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("session-store-probe".into())
                .spawn(move || shared.probe_while_running())
                .context("starting the session store's prober")?
        };
        Ok(RedisSessionStore {
            shared,
            prober: Some(prober),
        })
    }

    /// The counters so far.
    pub fn stats(&self) -> SessionStoreStats {
        let c = &self.shared.stats;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        SessionStoreStats {
            lookups: get(&c.lookups),
            hits: get(&c.hits),
            misses: get(&c.misses),
            lookups_failed: get(&c.lookups_failed),
            refused_unknown_key: get(&c.refused_unknown_key),
            refused_not_authentic: get(&c.refused_not_authentic),
            expired: get(&c.expired),
            stores: get(&c.stores),
            stores_failed: get(&c.stores_failed),
            removes_failed: get(&c.removes_failed),
            went_down: get(&c.went_down),
            reconnects: get(&c.reconnects),
        }
    }

    /// Whether the store is taken as down now.
    pub fn is_down(&self) -> bool {
        self.shared.down.load(Ordering::SeqCst)
    }
}

impl Drop for RedisSessionStore {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake.notify_all();
        if let Some(t) = self.prober.take() {
            let _ = t.join();
        }
    }
}

/// The Redis key of session `id`.
fn entry_key(id: &[u8]) -> String {
    format!("wtls:session:{}", hex::encode(id))
}

/// Whether a call failed because the server had closed the connection (not because
/// it did not answer in time, or no connection was to be had).
fn closed_by_server(e: &redis::RedisError) -> bool {
    // Our own errors (no connection, time-out) carry no I/O error.
    e.is_io_error() && e.is_connection_dropped()
}

fn lock(m: &Mutex<Health>) -> MutexGuard<'_, Health> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Runs `cmd` within the time-out: a pooled connection, then the command with the
    /// time left as its read and write time-out. A connection a call failed on is
    /// dropped by the pool. A connection the server had closed (it restarted while this
    /// gateway was idle) fails at once: then every connection made before is suspect,
    /// and the call is made once more on a fresh one, within the same time-out.
    fn call<T: redis::FromRedisValue>(&self, cmd: &Cmd) -> redis::RedisResult<T> {
        let deadline = Instant::now() + self.timeout;
        match self.call_once(cmd, deadline) {
            Err(e) if closed_by_server(&e) => {
                self.epoch.fetch_add(1, Ordering::SeqCst);
                self.call_once(cmd, deadline)
            }
            other => other,
        }
    }

    fn call_once<T: redis::FromRedisValue>(
        &self,
        cmd: &Cmd,
        deadline: Instant,
    ) -> redis::RedisResult<T> {
        let time_left = || {
            deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    redis::RedisError::from((
                        redis::ErrorKind::Io,
                        "the store did not answer within the time-out",
                    ))
                })
        };
        let mut pooled = self.pool.get_timeout(time_left()?).map_err(|e| {
            let why = e.to_string();
            let why = if why.is_empty() {
                "none made yet".to_string()
            } else {
                why
            };
            redis::RedisError::from((
                redis::ErrorKind::Io,
                "no connection to the store within the time-out",
                why,
            ))
        })?;
        let left = time_left()?;
        let c = &mut *pooled;
        let result = c
            .conn
            .set_read_timeout(Some(left))
            .and_then(|()| c.conn.set_write_timeout(Some(left)))
            .and_then(|()| c.conn.req_command(cmd))
            .and_then(|v| redis::from_redis_value(v).map_err(Into::into));
        // A command that failed may have left its answer in flight: never reuse it.
        c.broken = result.is_err();
        result.map_err(|e| {
            if e.is_timeout() {
                redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "the store did not answer within the time-out",
                ))
            } else {
                e
            }
        })
    }

    fn ping(&self) -> redis::RedisResult<()> {
        self.call::<String>(&redis::cmd("PING")).map(|_| ())
    }

    fn mark_down(&self, error: &redis::RedisError) {
        let mut health = lock(&self.health);
        health.reason = error.to_string();
        if !self.down.swap(true, Ordering::SeqCst) {
            self.epoch.fetch_add(1, Ordering::SeqCst);
            self.stats.went_down.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                url = %self.url,
                "session store unreachable ({error}): resumption falls back to full \
                 handshakes until it answers again (probing with back-off)"
            );
            self.wake.notify_all();
        }
    }

    fn mark_up(&self) {
        let _health = lock(&self.health);
        if self.down.swap(false, Ordering::SeqCst) {
            self.epoch.fetch_add(1, Ordering::SeqCst);
            self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
            tracing::info!(url = %self.url, "session store reachable again: resumption resumes");
        }
    }

    /// The prober: while the store is down, `PING` it with back-off; otherwise sleep
    /// until it goes down or the store is dropped.
    fn probe_while_running(&self) {
        let mut backoff = FIRST_BACKOFF;
        let mut health = lock(&self.health);
        while !self.stop.load(Ordering::SeqCst) {
            if !self.down.load(Ordering::SeqCst) {
                backoff = FIRST_BACKOFF;
                health = self.wake.wait(health).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            health = self
                .wake
                .wait_timeout(health, backoff)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            drop(health);
            match self.ping() {
                Ok(()) => self.mark_up(),
                Err(e) => {
                    tracing::debug!(url = %self.url, "session store still unreachable: {e}");
                    // Connections made meanwhile may reach a hung server: start afresh.
                    self.epoch.fetch_add(1, Ordering::SeqCst);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
            health = lock(&self.health);
        }
    }

    /// A lookup not made because the store is down: logged at most once per
    /// [`SKIP_LOG_INTERVAL`], with how many were skipped.
    fn note_skipped_lookup(&self) {
        let mut health = lock(&self.health);
        health.skipped_unlogged += 1;
        let due = health
            .skip_logged
            .is_none_or(|t| t.elapsed() >= SKIP_LOG_INTERVAL);
        if due {
            tracing::warn!(
                url = %self.url,
                skipped = health.skipped_unlogged,
                "resumption fell back to a full handshake: the session store is down ({})",
                health.reason
            );
            health.skipped_unlogged = 0;
            health.skip_logged = Some(Instant::now());
        }
    }

    fn count(&self, counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// A found entry: opened, checked against the lifetime, placed on the caller's clock.
    fn opened(&self, id: &[u8], entry: &[u8], now: Now) -> Option<StoredSession> {
        match self.keys.open(id, entry) {
            Ok((mut session, created_unix_s)) => {
                let age_s = u64::from(now.unix_secs).saturating_sub(created_unix_s);
                // The TTL expires entries; this guards against one whose TTL a writer
                // of the store extended.
                if Duration::from_secs(age_s) > self.lifetime {
                    self.count(&self.stats.expired);
                    return None;
                }
                session.created_ns = now
                    .mono_ns
                    .saturating_sub(age_s.saturating_mul(1_000_000_000));
                self.count(&self.stats.hits);
                Some(session)
            }
            Err(e) => {
                self.count(match e {
                    OpenError::UnknownKey(_) => &self.stats.refused_unknown_key,
                    OpenError::NotAuthentic => &self.stats.refused_not_authentic,
                });
                tracing::warn!(
                    session = %hex::encode(id),
                    "session entry refused, full handshake instead: {e}"
                );
                None
            }
        }
    }
}

impl SessionStore for RedisSessionStore {
    fn insert(&self, session: StoredSession, now: Now) {
        let s = &self.shared;
        s.count(&s.stats.stores);
        if s.down.load(Ordering::SeqCst) {
            s.count(&s.stats.stores_failed);
            return;
        }
        let entry = match s.keys.seal(&session, u64::from(now.unix_secs)) {
            Ok(entry) => entry,
            Err(e) => {
                s.count(&s.stats.stores_failed);
                tracing::warn!("sealing a session entry failed: {e}");
                return;
            }
        };
        let ttl_ms = u64::try_from(s.lifetime.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let cmd = redis::cmd("SET")
            .arg(entry_key(&session.id))
            .arg(entry)
            .arg("PX")
            .arg(ttl_ms)
            .clone();
        if let Err(e) = s.call::<()>(&cmd) {
            s.count(&s.stats.stores_failed);
            tracing::warn!("storing a session failed ({e}): it can be resumed on no node");
            s.mark_down(&e);
        }
    }

    fn lookup(&self, id: &[u8], now: Now) -> Option<StoredSession> {
        let s = &self.shared;
        s.count(&s.stats.lookups);
        if s.down.load(Ordering::SeqCst) {
            s.count(&s.stats.lookups_failed);
            s.note_skipped_lookup();
            return None;
        }
        match s.call::<Option<Vec<u8>>>(redis::cmd("GET").arg(entry_key(id))) {
            Ok(Some(entry)) => s.opened(id, &entry, now),
            Ok(None) => {
                s.count(&s.stats.misses);
                None
            }
            Err(e) => {
                s.count(&s.stats.lookups_failed);
                tracing::warn!(
                    session = %hex::encode(id),
                    "session lookup failed ({e}): resumption fell back to a full handshake"
                );
                s.mark_down(&e);
                None
            }
        }
    }

    fn remove(&self, id: &[u8]) {
        let s = &self.shared;
        if s.down.load(Ordering::SeqCst) {
            s.count(&s.stats.removes_failed);
            return;
        }
        if let Err(e) = s.call::<i64>(redis::cmd("DEL").arg(entry_key(id))) {
            s.count(&s.stats.removes_failed);
            tracing::warn!("forgetting a session failed ({e})");
            s.mark_down(&e);
        }
    }
}
