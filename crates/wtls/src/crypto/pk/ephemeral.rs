//! Ephemeral EC keys for one handshake, and a pool of them made ahead of time.

use super::{KeyFamily, KeyPair, PkError, PkOperation};
use crate::suite::Specifier;
use std::sync::Mutex;

/// A fresh EC key pair for one handshake (anonymous ECDH or a client's ephemeral key).
pub fn ephemeral_ec(spec: Specifier) -> Result<KeyPair, PkError> {
    if spec.is_rsa() {
        return Err(PkError::WrongKeyKind {
            operation: PkOperation::EphemeralKeyGeneration,
            expected: KeyFamily::EllipticCurve,
            spec,
        });
    }
    KeyPair::generate(spec)
}

/// Pre-generated ephemeral EC key pairs, so that a load generator's simulated clients do
/// not spend their time on key generation while the gateway is being measured.
/// Thread-safe; generation happens outside the lock.
#[derive(Debug)]
pub struct EphemeralPool {
    spec: Specifier,
    target: usize,
    keys: Mutex<Vec<KeyPair>>,
}

impl EphemeralPool {
    /// A pool filled with `target` key pairs.
    pub fn new(spec: Specifier, target: usize) -> Result<EphemeralPool, PkError> {
        let pool = EphemeralPool {
            spec,
            target,
            keys: Mutex::new(Vec::with_capacity(target)),
        };
        pool.refill()?;
        Ok(pool)
    }

    pub fn spec(&self) -> Specifier {
        self.spec
    }

    /// Key pairs currently waiting.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<KeyPair>> {
        // A panic elsewhere while holding the lock leaves a valid Vec; keep going.
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One key pair, never used before; generated on the spot if the pool ran dry.
    pub fn take(&self) -> Result<KeyPair, PkError> {
        let popped = self.lock().pop();
        match popped {
            Some(key) => Ok(key),
            None => ephemeral_ec(self.spec),
        }
    }

    /// Tops the pool up to its target size; returns how many pairs were generated.
    pub fn refill(&self) -> Result<usize, PkError> {
        let missing = self.target.saturating_sub(self.len());
        let mut fresh = Vec::with_capacity(missing);
        for _ in 0..missing {
            fresh.push(ephemeral_ec(self.spec)?);
        }
        self.lock().extend(fresh);
        Ok(missing)
    }
}
