//! Hash maps whose SipHash key comes from the crate's random source.
//!
//! Why not `std`'s `RandomState`: its key comes from the operating system and cannot be
//! set, so two runs of the same seeded handshake probe the maps differently. When the
//! 7-bit tag of a new key happens to match a stored one (about 1 in 128 per probe), the
//! map compares the keys in full, and the handshake's instruction count moves by a few
//! instructions. `wtlsperf count` promises identical counts run after run, so every map
//! the engine touches while serving draws its key from [`crate::crypto::random::fill`]:
//! random as before in normal use (the maps keyed by peer address and by session
//! identifier must stay unpredictable to a flooder), and fixed by the seed on a thread
//! that [`crate::crypto::random::seed_thread`] has seeded.
//!
//! SipHash-1-3 is `std`'s own choice; the `siphasher` crate provides it with a settable key.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

use siphasher::sip::SipHasher13;

use crate::crypto::random;

/// A SipHash-1-3 key drawn once per map from [`random::fill`].
#[derive(Clone)]
pub struct KeyedState {
    k0: u64,
    k1: u64,
}

/// The key is a secret in normal use: it is not printed.
impl std::fmt::Debug for KeyedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyedState { .. }")
    }
}

impl KeyedState {
    /// A fresh key from the thread's random source (its seeded stream, if seeded).
    pub fn new() -> Self {
        let mut key = [0u8; 16];
        random::fill(&mut key);
        let (k0, k1) = key.split_at(8);
        KeyedState {
            k0: u64::from_le_bytes(k0.try_into().expect("8 bytes")),
            k1: u64::from_le_bytes(k1.try_into().expect("8 bytes")),
        }
    }
}

impl Default for KeyedState {
    fn default() -> Self {
        Self::new()
    }
}

impl BuildHasher for KeyedState {
    type Hasher = SipHasher13;

    fn build_hasher(&self) -> SipHasher13 {
        SipHasher13::new_with_keys(self.k0, self.k1)
    }
}

/// A `HashMap` keyed by a [`KeyedState`].
pub type KeyedMap<K, V> = HashMap<K, V, KeyedState>;
/// A `HashSet` keyed by a [`KeyedState`].
pub type KeyedSet<T> = HashSet<T, KeyedState>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn a_seeded_thread_draws_the_same_key() {
        let hash = |seed| {
            let _seeded = random::seed_thread(seed).unwrap();
            KeyedState::new().hash_one(b"session id")
        };
        assert_eq!(hash(7), hash(7));
        assert_ne!(hash(7), hash(8));
    }

    #[test]
    fn unseeded_maps_get_different_keys() {
        assert_ne!(
            KeyedState::new().hash_one(b"peer"),
            KeyedState::new().hash_one(b"peer")
        );
    }
}
