//! Seeded fixtures: one small PKI per case (a root CA, the gateway's and a client's
//! certificate), made once per process, and the configurations of both ends built on
//! it. Production code uses them too: `wtlsperf count` issues its keys from a seed so
//! that two runs execute the same instructions.
//!
//! Key generation costs milliseconds (seconds for RSA 3072), and the tests, the fuzz
//! targets and the counts all need the same keys: they are generated on first use and
//! shared. Validity is one hour either side of [`UNIX_NOW`] for the CA, one minute for
//! the leaves, so a test that moves virtual time past a minute sees expired leaves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::crypto::pk::{self, KeyPair, PkError};
use crate::crypto::random;
use crate::handshake::{
    AuthMode, ClientConfig, KeyExchangeOffer, Now, ServerConfig, ServerCredential, SessionCache,
};
use crate::msgs::certificate::WtlsCertificate;
use crate::msgs::common::{CipherSuite, Identifier};
use crate::pki::{Authority, CLIENT_SUBJECT, SERVER_SUBJECT};
use crate::suite::Case;

/// The fixed wall-clock second of every test: certificates are issued around it.
pub const UNIX_NOW: u32 = 1_700_000_000;

/// The virtual time in-memory handshakes start at.
pub fn now() -> Now {
    Now::new(1_000, UNIX_NOW)
}

/// Why seeded keys could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// libcrypto refused the seeded random method (its message).
    #[error("{0}")]
    Seed(String),
    #[error(transparent)]
    Key(#[from] PkError),
    #[error("the key generation thread panicked")]
    Panicked,
}

/// The keys and certificates of one case.
pub struct CaseKeys {
    pub case: Case,
    pub ca: Authority,
    pub server_key: KeyPair,
    pub server_cert: WtlsCertificate,
    pub client_key: KeyPair,
    pub client_cert: WtlsCertificate,
}

impl CaseKeys {
    /// Fresh keys for `case`, from the calling thread's random source (seed it first for
    /// keys that are the same on every run).
    pub fn generate(case: Case) -> Result<CaseKeys, PkError> {
        let ca = Authority::new_root(
            case.ca,
            &Authority::default_name(case.ca),
            UNIX_NOW - 3600,
            UNIX_NOW + 3600,
        )?;
        let server_key = KeyPair::generate(case.leaf)?;
        let server_cert = ca.issue(SERVER_SUBJECT, &server_key, UNIX_NOW - 60, UNIX_NOW + 60)?;
        let client_key = KeyPair::generate(case.leaf)?;
        let client_cert = ca.issue(CLIENT_SUBJECT, &client_key, UNIX_NOW - 60, UNIX_NOW + 60)?;
        Ok(CaseKeys {
            case,
            ca,
            server_key,
            server_cert,
            client_key,
            client_cert,
        })
    }

    /// The keys of `case` drawn from the stream of `seed`: the same on every run.
    ///
    /// Generated on a thread of their own, so that the caller's thread keeps whatever
    /// seeding it has (a thread holds one seeded stream at a time, see
    /// [`random::seed_thread`]).
    pub fn generate_seeded(case: Case, seed: u64) -> Result<CaseKeys, FixtureError> {
        std::thread::spawn(move || {
            let _seeded =
                random::seed_thread(seed).map_err(|e| FixtureError::Seed(e.to_string()))?;
            Ok(CaseKeys::generate(case)?)
        })
        .join()
        .map_err(|_| FixtureError::Panicked)?
    }

    /// The seed [`CaseKeys::shared`] uses for a case: its name's SHA-1, so each case
    /// has its own keys and every process the same ones.
    pub fn seed_of(case: Case) -> u64 {
        let digest = random::sha1(case.to_string().as_bytes());
        u64::from_be_bytes(digest[..8].try_into().expect("8 of 20 bytes"))
    }

    /// The process-wide keys of the case named `name` (e.g. `"160p/160p"`), generated
    /// on first use. Panics on an unknown name or a curve the local libcrypto lacks:
    /// fixtures are named by the test that uses them.
    pub fn shared(name: &str) -> Arc<CaseKeys> {
        static CACHE: OnceLock<Mutex<HashMap<String, Arc<CaseKeys>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(keys) = cache.lock().expect("fixture cache").get(name) {
            return keys.clone();
        }
        let case = Case::parse(name).unwrap_or_else(|e| panic!("fixture case {name}: {e}"));
        let keys = Arc::new(
            Self::generate_seeded(case, Self::seed_of(case))
                .unwrap_or_else(|e| panic!("fixture keys {name}: {e}")),
        );
        // Two threads may have generated this case at once: every caller gets the first
        // one stored, so a test that asks twice never mixes two CAs.
        cache
            .lock()
            .expect("fixture cache")
            .entry(name.to_string())
            .or_insert(keys)
            .clone()
    }

    /// A client that offers the case's key exchange, trusts its CA, expects the
    /// gateway's name and holds its own certificate (used only when asked for).
    pub fn client_config(&self, suites: &[CipherSuite]) -> ClientConfig {
        let mut client = ClientConfig::new(
            vec![KeyExchangeOffer {
                suite: self.case.key_exchange_suite(),
                spec: self.case.leaf,
                identifier: Identifier::Null,
            }],
            suites.to_vec(),
        );
        client.trusted_cas = vec![(self.case.ca, self.ca.cert.clone())];
        client.expected_server = Some(Identifier::text(SERVER_SUBJECT));
        client.credential = Some((self.client_cert.clone(), self.client_key.clone()));
        client
    }

    /// The gateway's credential for this case.
    pub fn server_credential(&self) -> ServerCredential {
        ServerCredential {
            spec: self.case.leaf,
            cert: self.server_cert.clone(),
            key: self.server_key.clone(),
            ca_spec: self.case.ca,
            ca_subject: self.ca.cert.tbs.subject.clone(),
            ca_key_hash: Some(pk::key_hash_sha(&self.ca.cert.tbs.public_key)),
        }
    }

    /// A server for this case only, trusting the case's CA for client certificates,
    /// with a small session cache so that resumption can be tested.
    pub fn server_config(&self, auth: AuthMode, suites: &[CipherSuite]) -> ServerConfig {
        let mut server = ServerConfig::new(vec![self.server_credential()], suites.to_vec());
        server.trusted_client_cas = vec![(self.case.ca, self.ca.cert.clone())];
        server.client_auth = auth;
        server.session_cache = Some(Arc::new(Mutex::new(SessionCache::new(16, u64::MAX))));
        server
    }
}
