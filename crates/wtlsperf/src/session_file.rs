//! The client's session file (`client --sess-out FILE`, `--sess-in FILE`), as
//! `openssl s_client -sess_out/-sess_in` keeps a TLS session: a session made by a full
//! handshake with one gateway, resumed later against whichever `--connect` names.
//!
//! The file holds the master secret, so it is a secret: created with mode 0600, written
//! whole (a temporary file beside it, then a rename), and its text is wiped from memory
//! after use. Format (JSON, every field required, no others):
//!
//! ```json
//! {
//!   "format": "wtlsperf-wtls-session/1",
//!   "session_id": "<hex, 1 to 8 bytes>",
//!   "master_secret": "<hex, 20 bytes>",
//!   "cipher_suite": "RC5_CBC/SHA",
//!   "key_exchange": "ECDH_ECDSA",
//!   "key_refresh": 3,
//!   "created_unix_s": 1795000000
//! }
//! ```

use std::io::{Read, Write};
use std::path::Path;

use anyhow::{anyhow, Context};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use wtls::handshake::{Now, StoredSession};
use wtls::msgs::common::SessionId;
use wtls::msgs::enums::KeyExchangeSuite;

/// The `format` field of this version of the file.
pub const FORMAT: &str = "wtlsperf-wtls-session/1";
/// Larger files are not session files (and are not read whole).
const MAX_FILE_BYTES: u64 = 4096;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionFile {
    format: String,
    session_id: String,
    master_secret: Zeroizing<String>,
    cipher_suite: String,
    key_exchange: String,
    key_refresh: u8,
    created_unix_s: u64,
}

/// A session as the file carries it: the engine's session and when it was made.
#[derive(Debug, Clone)]
pub struct SavedSession {
    pub session: StoredSession,
    pub created_unix_s: u64,
}

/// Writes `saved` to `path` (for `option`, named in errors): mode 0600, whole or not at
/// all.
pub fn write(path: &Path, saved: &SavedSession, option: &str) -> anyhow::Result<()> {
    let s = &saved.session;
    let file = SessionFile {
        format: FORMAT.to_string(),
        session_id: hex::encode(&s.id),
        master_secret: Zeroizing::new(hex::encode(s.master_secret.as_slice())),
        cipher_suite: format!(
            "{}/{}",
            s.cipher_suite.bulk.name(),
            s.cipher_suite.mac.name()
        ),
        key_exchange: s.key_exchange.name().to_string(),
        key_refresh: s.key_refresh,
        created_unix_s: saved.created_unix_s,
    };
    let mut text = Zeroizing::new(serde_json::to_vec_pretty(&file)?);
    text.push(b'\n');
    let named = || format!("{option} {}", path.display());
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // tempfile creates it with mode 0600 on Unix.
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(named)?;
    tmp.write_all(&text).with_context(named)?;
    tmp.as_file().sync_all().with_context(named)?;
    tmp.persist(path).map_err(|e| e.error).with_context(named)?;
    Ok(())
}

/// Reads the session file at `path` (for `option`, named in every error) at `now`.
pub fn read(path: &Path, option: &str, now: Now) -> anyhow::Result<SavedSession> {
    let named = format!("{option} {}", path.display());
    let file = std::fs::File::open(path).with_context(|| named.clone())?;
    let mut text = Zeroizing::new(Vec::new());
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut text)
        .with_context(|| named.clone())?;
    if text.len() as u64 > MAX_FILE_BYTES {
        anyhow::bail!("{named}: larger than {MAX_FILE_BYTES} bytes, not a session file");
    }
    let parsed: SessionFile = serde_json::from_slice(&text)
        .map_err(|e| anyhow!("{named}: not a wtlsperf session file ({FORMAT}): {e}"))?;
    parse(parsed, now).map_err(|e| anyhow!("{named}: {e}"))
}

fn parse(file: SessionFile, now: Now) -> Result<SavedSession, String> {
    if file.format != FORMAT {
        return Err(format!(
            "format {:?} is not {FORMAT:?} (a file of another version or program)",
            file.format
        ));
    }
    let id = hex::decode(&file.session_id).map_err(|e| format!("session_id is not hex ({e})"))?;
    if id.is_empty() || id.len() > SessionId::MAX_LEN {
        return Err(format!(
            "session_id holds {} bytes; a session id is 1 to {} bytes",
            id.len(),
            SessionId::MAX_LEN
        ));
    }
    let mut master = Zeroizing::new([0u8; 20]);
    // Neither the text nor the error names the secret's bytes.
    hex::decode_to_slice(file.master_secret.as_bytes(), master.as_mut_slice())
        .map_err(|_| "master_secret is not 40 hex digits (20 bytes)".to_string())?;
    let cipher_suite = wtlsperf_drivers::client_offer::parse_cipher(&file.cipher_suite)
        .map_err(|e| format!("cipher_suite: {e}"))?;
    let key_exchange = KeyExchangeSuite::ALL
        .iter()
        .copied()
        .find(|k| k.name().eq_ignore_ascii_case(&file.key_exchange))
        .ok_or_else(|| {
            format!(
                "key_exchange {:?} is not a WTLS key exchange",
                file.key_exchange
            )
        })?;
    if file.key_refresh > 15 {
        return Err(format!("key_refresh {} is not 0 to 15", file.key_refresh));
    }
    Ok(SavedSession {
        session: StoredSession {
            id,
            master_secret: master,
            cipher_suite,
            key_exchange,
            key_refresh: file.key_refresh,
            // The client does not age sessions; the gateway decides whether it still
            // holds this one.
            created_ns: now.mono_ns,
        },
        created_unix_s: file.created_unix_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtls::msgs::common::CipherSuite;
    use wtls::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};

    fn saved() -> SavedSession {
        SavedSession {
            session: StoredSession {
                id: vec![1, 2, 3, 4, 5, 6, 7, 8],
                master_secret: Zeroizing::new([0xab; 20]),
                cipher_suite: CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha),
                key_exchange: KeyExchangeSuite::EcdhEcdsa,
                key_refresh: 3,
                created_ns: 0,
            },
            created_unix_s: 1_795_000_000,
        }
    }

    #[test]
    fn a_session_round_trips_through_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        write(&path, &saved(), "--sess-out").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let back = read(&path, "--sess-in", Now::new(5, 0)).unwrap();
        assert_eq!(back.session.id, saved().session.id);
        assert_eq!(*back.session.master_secret, [0xab; 20]);
        assert_eq!(back.session.cipher_suite, saved().session.cipher_suite);
        assert_eq!(back.session.key_exchange, KeyExchangeSuite::EcdhEcdsa);
        assert_eq!(back.created_unix_s, 1_795_000_000);
        // Written again over the old one.
        write(&path, &saved(), "--sess-out").unwrap();
    }

    #[test]
    fn a_bad_file_is_a_precise_error_that_never_shows_the_secret() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        write(&path, &saved(), "--sess-out").unwrap();
        let good = std::fs::read_to_string(&path).unwrap();
        let cases = [
            (
                good.replace("\"key_refresh\": 3", "\"key_refresh\": 16"),
                "key_refresh",
            ),
            (
                good.replace(&"ab".repeat(20), &"ab".repeat(19)),
                "master_secret",
            ),
            (
                good.replace(&"ab".repeat(20), &format!("{}zz", "ab".repeat(19))),
                "master_secret",
            ),
            (
                good.replace("0102030405060708", "010203040506070809"),
                "session_id",
            ),
            (good.replace("RC5_CBC/SHA", "ROT13/SHA"), "cipher_suite"),
            (good.replace("ECDH_ECDSA", "DH_DSS"), "key_exchange"),
            (good.replace(FORMAT, "wtlsperf-wtls-session/9"), "format"),
            (
                good.replace("\"key_refresh\"", "\"extra\": 1, \"key_refresh\""),
                "unknown field",
            ),
            ("garbage".to_string(), "not a wtlsperf session file"),
            ("x".repeat(5000), "larger than"),
        ];
        for (text, expect) in cases {
            std::fs::write(&path, &text).unwrap();
            let err = read(&path, "--sess-in", Now::new(0, 0)).unwrap_err();
            let err = format!("{err:#}");
            assert!(err.contains("--sess-in") && err.contains("s.json"), "{err}");
            assert!(err.contains(expect), "{expect}: {err}");
            assert!(!err.contains(&"ab".repeat(19)), "the secret leaked: {err}");
        }
        let err = read(&dir.path().join("none"), "--sess-in", Now::new(0, 0)).unwrap_err();
        assert!(format!("{err:#}").contains("--sess-in"), "{err:#}");
    }
}
