//! Sealed session entries: what the gateways put in the shared store.
//!
//! A reader of the store must not learn a master secret, and a writer must not be able to
//! make a gateway resume a session it did not make. Each entry is therefore sealed with
//! AES-256-GCM under a key the fleet shares (a key file of 32 random bytes), as TLS ticket
//! keys are shared:
//!
//! ```text
//! entry = version (1, = 1) | key id (8) | salt (16) | ciphertext (32) | tag (16)
//! key id = SHA-256("wtlsperf session key id" | key)[0..8]
//! entry key = HKDF-SHA256(ikm = key, salt, info = "wtlsperf session entry v1"), nonce 0
//! associated data = version | key id | salt | session id
//! plaintext = master secret (20) | bulk | mac | key exchange | key refresh (1 each)
//!             | created, Unix seconds (8, big-endian)
//! ```
//!
//! Why a key per entry: AES-GCM with random 96-bit nonces under one key is safe for about
//! 2^32 messages (NIST SP 800-38D, 8.3), which a fleet making tens of thousands of
//! sessions a second reaches within days; a fresh key from a 128-bit salt has no such
//! bound, so rotation is a matter of policy, not of nonce exhaustion. The session id in
//! the associated data binds an entry to the key it is stored under: an entry moved to
//! another session's key fails to open. The key id names the key without revealing it,
//! so an entry sealed under a key no longer configured is refused as such (and counted),
//! not mistaken for a forgery.

use std::path::{Path, PathBuf};

use openssl::hash::MessageDigest;
use openssl::md::Md;
use openssl::pkey::Id;
use openssl::pkey_ctx::PkeyCtx;
use openssl::symm::{decrypt_aead, encrypt_aead, Cipher};
use zeroize::Zeroizing;

use wtls::handshake::StoredSession;
use wtls::msgs::common::CipherSuite;
use wtls::msgs::enums::{BulkCipherAlgorithm, KeyExchangeSuite, MacAlgorithm};

/// Bytes of a session key (AES-256).
pub const KEY_LEN: usize = 32;
const VERSION: u8 = 1;
const KEY_ID_LEN: usize = 8;
const SALT_LEN: usize = 16;
const TAG_LEN: usize = 16;
const MASTER_LEN: usize = 20;
const PLAIN_LEN: usize = MASTER_LEN + 4 + 8;
const HEADER_LEN: usize = 1 + KEY_ID_LEN + SALT_LEN;
/// Bytes of a sealed entry.
pub const ENTRY_LEN: usize = HEADER_LEN + PLAIN_LEN + TAG_LEN;

/// Names a session key without revealing it (safe to log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyId([u8; KEY_ID_LEN]);

impl std::fmt::Display for KeyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

/// One key of the fleet's: 32 secret bytes, wiped when dropped.
pub struct SessionKey {
    id: KeyId,
    key: Zeroizing<[u8; KEY_LEN]>,
    /// The file it came from (for messages).
    path: PathBuf,
}

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key itself.
        f.debug_struct("SessionKey")
            .field("id", &self.id)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SessionKey {
    /// A key from its 32 bytes.
    pub fn new(key: Zeroizing<[u8; KEY_LEN]>, path: PathBuf) -> anyhow::Result<SessionKey> {
        let mut hasher = openssl::hash::Hasher::new(MessageDigest::sha256())?;
        hasher.update(b"wtlsperf session key id")?;
        hasher.update(key.as_slice())?;
        let digest = hasher.finish()?;
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&digest[..KEY_ID_LEN]);
        Ok(SessionKey {
            id: KeyId(id),
            key,
            path,
        })
    }

    /// Reads a key file: exactly 32 bytes (`head -c 32 /dev/urandom > FILE` makes one).
    /// Errors name `option` and the file. A file others may read is accepted with a
    /// warning: whoever reads it can open every entry of the store.
    pub fn read(path: &Path, option: &str) -> anyhow::Result<SessionKey> {
        let bytes =
            Zeroizing::new(std::fs::read(path).map_err(|e| {
                anyhow::anyhow!("{option} {}: cannot read it: {e}", path.display())
            })?);
        let key: [u8; KEY_LEN] = bytes.as_slice().try_into().map_err(|_| {
            anyhow::anyhow!(
                "{option} {}: holds {} bytes; a session key is exactly {KEY_LEN} random bytes \
                 (make one with: head -c {KEY_LEN} /dev/urandom > FILE)",
                path.display(),
                bytes.len()
            )
        })?;
        warn_if_others_read(path, option);
        SessionKey::new(Zeroizing::new(key), path.to_path_buf())
    }

    pub fn id(&self) -> KeyId {
        self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The key of one entry (see the module documentation).
    fn entry_key(
        &self,
        salt: &[u8],
    ) -> Result<Zeroizing<[u8; KEY_LEN]>, openssl::error::ErrorStack> {
        let mut ctx = PkeyCtx::new_id(Id::HKDF)?;
        ctx.derive_init()?;
        ctx.set_hkdf_md(Md::sha256())?;
        ctx.set_hkdf_key(self.key.as_slice())?;
        ctx.set_hkdf_salt(salt)?;
        ctx.add_hkdf_info(b"wtlsperf session entry v1")?;
        let mut out = Zeroizing::new([0u8; KEY_LEN]);
        ctx.derive(Some(out.as_mut_slice()))?;
        Ok(out)
    }
}

#[cfg(unix)]
fn warn_if_others_read(path: &Path, option: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "{option} {}: group or others may read this key (mode {:o}); chmod 600 it",
                path.display(),
                meta.permissions().mode() & 0o777
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_others_read(_path: &Path, _option: &str) {}

/// Why an entry was not opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// Sealed under a key none of the configured ones is (retired, or another fleet's).
    #[error("sealed under key {0}, which is not configured (retired?)")]
    UnknownKey(KeyId),
    /// Not an entry this version writes, or one whose tag does not verify: corrupted,
    /// forged, or moved from another session id.
    #[error("not authentic (corrupted, forged, or stored under another session id)")]
    NotAuthentic,
}

/// The fleet's keys: the first seals, all open.
#[derive(Debug)]
pub struct SessionKeys {
    keys: Vec<SessionKey>,
}

impl SessionKeys {
    /// At least one key, none given twice.
    pub fn new(keys: Vec<SessionKey>) -> anyhow::Result<SessionKeys> {
        anyhow::ensure!(
            !keys.is_empty(),
            "a session store needs at least one --session-key"
        );
        for (i, k) in keys.iter().enumerate() {
            if let Some(first) = keys[..i].iter().find(|o| o.id == k.id) {
                anyhow::bail!(
                    "--session-key {}: the same key as {}",
                    k.path.display(),
                    first.path.display()
                );
            }
        }
        Ok(SessionKeys { keys })
    }

    /// The key that seals.
    pub fn sealing(&self) -> &SessionKey {
        &self.keys[0]
    }

    /// Seals `session` (made at `created_unix_s`) under the first key.
    pub fn seal(
        &self,
        session: &StoredSession,
        created_unix_s: u64,
    ) -> Result<Vec<u8>, openssl::error::ErrorStack> {
        let key = self.sealing();
        let mut header = [0u8; HEADER_LEN];
        header[0] = VERSION;
        header[1..1 + KEY_ID_LEN].copy_from_slice(&key.id.0);
        openssl::rand::rand_bytes(&mut header[1 + KEY_ID_LEN..])?;
        let entry_key = key.entry_key(&header[1 + KEY_ID_LEN..])?;
        let mut plain = Zeroizing::new(Vec::with_capacity(PLAIN_LEN));
        plain.extend_from_slice(session.master_secret.as_slice());
        plain.extend_from_slice(&[
            session.cipher_suite.bulk.to_u8(),
            session.cipher_suite.mac.to_u8(),
            session.key_exchange.to_u8(),
            session.key_refresh,
        ]);
        plain.extend_from_slice(&created_unix_s.to_be_bytes());
        let mut tag = [0u8; TAG_LEN];
        let aad = [header.as_slice(), session.id.as_slice()].concat();
        let sealed = encrypt_aead(
            Cipher::aes_256_gcm(),
            entry_key.as_slice(),
            Some(&[0u8; 12]),
            &aad,
            &plain,
            &mut tag,
        )?;
        Ok([header.as_slice(), &sealed, &tag].concat())
    }

    /// Opens the entry stored for session `id`: the session and when it was made (Unix
    /// seconds). `created_ns` is left 0 for the caller to place on its own clock.
    pub fn open(&self, id: &[u8], entry: &[u8]) -> Result<(StoredSession, u64), OpenError> {
        if entry.len() != ENTRY_LEN || entry[0] != VERSION {
            return Err(OpenError::NotAuthentic);
        }
        let (header, rest) = entry.split_at(HEADER_LEN);
        let (sealed, tag) = rest.split_at(PLAIN_LEN);
        let mut key_id = [0u8; KEY_ID_LEN];
        key_id.copy_from_slice(&header[1..1 + KEY_ID_LEN]);
        let key_id = KeyId(key_id);
        let key = self
            .keys
            .iter()
            .find(|k| k.id == key_id)
            .ok_or(OpenError::UnknownKey(key_id))?;
        let entry_key = key
            .entry_key(&header[1 + KEY_ID_LEN..])
            .map_err(|_| OpenError::NotAuthentic)?;
        let aad = [header, id].concat();
        let plain = Zeroizing::new(
            decrypt_aead(
                Cipher::aes_256_gcm(),
                entry_key.as_slice(),
                Some(&[0u8; 12]),
                &aad,
                sealed,
                tag,
            )
            .map_err(|_| OpenError::NotAuthentic)?,
        );
        decode(id, &plain).ok_or(OpenError::NotAuthentic)
    }
}

fn decode(id: &[u8], plain: &[u8]) -> Option<(StoredSession, u64)> {
    let (master, rest) = plain.split_first_chunk::<MASTER_LEN>()?;
    let ([bulk, mac, kex, key_refresh], created) = rest.split_first_chunk::<4>()?;
    let created: [u8; 8] = created.try_into().ok()?;
    let session = StoredSession {
        id: id.to_vec(),
        master_secret: Zeroizing::new(*master),
        cipher_suite: CipherSuite::new(
            BulkCipherAlgorithm::from_u8(*bulk).ok()?,
            MacAlgorithm::from_u8(*mac).ok()?,
        ),
        key_exchange: KeyExchangeSuite::from_u8(*kex).ok()?,
        key_refresh: *key_refresh,
        created_ns: 0,
    };
    Some((session, u64::from_be_bytes(created)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> SessionKey {
        SessionKey::new(
            Zeroizing::new([byte; KEY_LEN]),
            PathBuf::from(format!("k{byte}")),
        )
        .unwrap()
    }

    fn session(id: &[u8]) -> StoredSession {
        StoredSession {
            id: id.to_vec(),
            master_secret: Zeroizing::new([0x5a; MASTER_LEN]),
            cipher_suite: CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha),
            key_exchange: KeyExchangeSuite::EcdhEcdsa,
            key_refresh: 3,
            created_ns: 0,
        }
    }

    #[test]
    fn an_entry_opens_under_any_configured_key_and_hides_the_master_secret() {
        let old = SessionKeys::new(vec![key(1)]).unwrap();
        let entry = old.seal(&session(b"abcdefgh"), 1_700_000_000).unwrap();
        assert_eq!(entry.len(), ENTRY_LEN);
        assert!(!entry.windows(MASTER_LEN).any(|w| w == [0x5a; MASTER_LEN]));
        // Rotated: a new key seals, the old one still opens.
        let rotated = SessionKeys::new(vec![key(2), key(1)]).unwrap();
        let (s, created) = rotated.open(b"abcdefgh", &entry).unwrap();
        assert_eq!(created, 1_700_000_000);
        assert_eq!(*s.master_secret, [0x5a; MASTER_LEN]);
        assert_eq!(s.cipher_suite, session(b"x").cipher_suite);
        assert_eq!(s.key_exchange, KeyExchangeSuite::EcdhEcdsa);
        assert_eq!(s.key_refresh, 3);
        // Two seals of one session differ (fresh salt).
        assert_ne!(
            entry,
            old.seal(&session(b"abcdefgh"), 1_700_000_000).unwrap()
        );
    }

    #[test]
    fn a_retired_key_a_swapped_entry_and_a_flipped_bit_are_refused() {
        let old = SessionKeys::new(vec![key(1)]).unwrap();
        let entry = old.seal(&session(b"abcdefgh"), 1).unwrap();
        let retired = SessionKeys::new(vec![key(2)]).unwrap();
        assert_eq!(
            retired.open(b"abcdefgh", &entry).unwrap_err(),
            OpenError::UnknownKey(key(1).id())
        );
        assert_eq!(
            old.open(b"otherid!", &entry).unwrap_err(),
            OpenError::NotAuthentic
        );
        for i in 0..entry.len() {
            let mut bad = entry.clone();
            bad[i] ^= 0x01;
            assert!(old.open(b"abcdefgh", &bad).is_err(), "bit flipped at {i}");
        }
        assert!(old.open(b"abcdefgh", &entry[..ENTRY_LEN - 1]).is_err());
        assert!(old.open(b"abcdefgh", &[]).is_err());
    }

    #[test]
    fn key_files_of_the_wrong_size_or_missing_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let short = dir.path().join("short.key");
        std::fs::write(&short, [0u8; 31]).unwrap();
        let err = SessionKey::read(&short, "--session-key")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--session-key") && err.contains("short.key"),
            "{err}"
        );
        assert!(
            err.contains("31 bytes") && err.contains("head -c 32"),
            "{err}"
        );
        let missing = dir.path().join("missing.key");
        let err = SessionKey::read(&missing, "--session-key")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("missing.key") && err.contains("cannot read"),
            "{err}"
        );
        let good = dir.path().join("good.key");
        std::fs::write(&good, [7u8; 32]).unwrap();
        let a = SessionKey::read(&good, "--session-key").unwrap();
        let b = SessionKey::read(&good, "--session-key").unwrap();
        let err = SessionKeys::new(vec![a, b]).unwrap_err().to_string();
        assert!(err.contains("the same key as"), "{err}");
        assert!(!format!("{:?}", key(7)).contains("7, 7"));
    }
}
