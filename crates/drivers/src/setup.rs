//! Client and server configurations built from the PKI, shared by every transport (the
//! in-memory runner, the UDP gateway and client, the load generator and the tests).

use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use wtls::codec::Codec;
use wtls::handshake::{
    AuthMode, ClientConfig, KeyExchangeOffer, Now, Packing, Policy, ServerConfig, ServerCredential,
    SessionCache, SessionStore,
};
use wtls::keyed_map::KeyedMap;
use wtls::msgs::common::{CipherSuite, Identifier};
use wtls::msgs::enums::{BulkCipherAlgorithm, KeyExchangeSuite, MacAlgorithm};
use wtls::probe::Clock;

use crate::pki_store::{CaseCredentials, ClientCredentials, PkiStore};

/// The gateway's certificate subject, which clients expect.
pub const GATEWAY_NAME: &str = "gateway.wtlsperf";
/// The client certificates' subject.
pub const CLIENT_NAME: &str = "client.wtlsperf";

/// The bulk cipher and MAC used by the handshake experiments: RC5_CBC with full SHA-1,
/// a strong WTLS 1.0 suite. The public-key cost under study does not depend on it.
pub fn default_cipher_suite() -> CipherSuite {
    CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha)
}

/// Every bulk cipher x MAC combination (for servers that should accept anything a test
/// or the record-layer experiment asks for).
pub fn all_cipher_suites() -> Vec<CipherSuite> {
    let mut out = Vec::new();
    for bulk in BulkCipherAlgorithm::ALL {
        for mac in MacAlgorithm::ALL {
            out.push(CipherSuite::new(*bulk, *mac));
        }
    }
    out
}

/// How a server treats client certificates: the gateway's policy (`--client-auth`).
/// Not the handshake's [`AuthMode`]: a gateway with `Optional` serves server-
/// authenticated and mutual clients alike, and `None` and `Optional` both run
/// server-authenticated handshakes that differ in their flow (Table 3.7's
/// CertificateRequest or none), so three policies map onto two modes (in `apply`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ClientAuth {
    /// No CertificateRequest: the plain WTLS server-authenticated flow.
    None,
    /// CertificateRequest sent; an empty client Certificate is accepted. This is the
    /// thesis' server-authenticated flow (Table 3.7), and lets one gateway serve both
    /// server-authenticated and mutual clients.
    Optional,
    /// CertificateRequest sent; a client certificate is required (mutual).
    Required,
}

/// Options common to every side of an experiment.
#[derive(Debug, Clone)]
pub struct Options {
    pub cipher_suites: Vec<CipherSuite>,
    pub packing: Packing,
    pub policy: Policy,
    pub key_refresh: u8,
    pub session_cache_capacity: usize,
    pub session_lifetime_ns: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            cipher_suites: vec![default_cipher_suite()],
            packing: Packing::FlightPerDatagram,
            policy: Policy::default(),
            key_refresh: 3,
            session_cache_capacity: 10_000,
            session_lifetime_ns: 3_600_000_000_000,
        }
    }
}

/// The client configuration for one case: offers the case's key exchange on the leaf's
/// parameters, trusts the case's CA, expects the gateway's name, and holds its own
/// certificate for mutual authentication. With `optimised`, the client names itself in
/// its KeyExchangeId so that a server holding its certificate runs the optimised flow.
pub fn client_config(creds: &CaseCredentials, opts: &Options, optimised: bool) -> ClientConfig {
    client_config_for(&creds.client(), opts, optimised)
}

/// [`client_config`] from a client's own credentials (what `PkiStore::load_client`
/// reads), for a client that loads nothing else.
pub fn client_config_for(
    creds: &ClientCredentials,
    opts: &Options,
    optimised: bool,
) -> ClientConfig {
    let case = creds.case;
    let mut c = ClientConfig::new(
        vec![KeyExchangeOffer {
            suite: case.key_exchange_suite(),
            spec: case.leaf,
            identifier: if optimised {
                Identifier::text(CLIENT_NAME)
            } else {
                Identifier::Null
            },
        }],
        opts.cipher_suites.clone(),
    );
    c.trusted_cas = vec![(case.ca, creds.ca_cert.clone())];
    c.expected_server = Some(Identifier::text(GATEWAY_NAME));
    c.credential = Some((creds.client_cert.clone(), creds.client_key.clone()));
    c.key_refresh = opts.key_refresh;
    c.packing = opts.packing;
    c.policy = opts.policy;
    c.numbering = creds.numbering;
    c
}

/// A client configuration for an anonymous key exchange on the case's leaf parameters.
/// Asking for one enables it in the client's policy; the server's policy (from
/// `Options::policy`) must allow it too.
pub fn anonymous_client_config(creds: &CaseCredentials, opts: &Options) -> ClientConfig {
    anonymous_client_config_for(&creds.client(), opts)
}

/// [`anonymous_client_config`] from a client's own credentials.
pub fn anonymous_client_config_for(creds: &ClientCredentials, opts: &Options) -> ClientConfig {
    let mut c = client_config_for(creds, opts, false);
    c.policy.allow_anonymous = true;
    c.offers[0].suite = if creds.case.leaf.is_rsa() {
        KeyExchangeSuite::RsaAnon
    } else {
        KeyExchangeSuite::EcdhAnon
    };
    c.credential = None;
    c
}

fn apply(server: &mut ServerConfig, client_auth: ClientAuth, opts: &Options) {
    server.client_auth = if client_auth == ClientAuth::Required {
        AuthMode::Mutual
    } else {
        AuthMode::ServerAuth
    };
    server.thesis_certificate_request = client_auth == ClientAuth::Optional;
    server.packing = opts.packing;
    server.policy = opts.policy;
    server.session_cache = (opts.session_cache_capacity > 0).then(|| {
        let cache = SessionCache::new(opts.session_cache_capacity, opts.session_lifetime_ns);
        Arc::new(Mutex::new(cache)) as Arc<dyn SessionStore>
    });
}

/// A server for one case only (the in-memory runner).
pub fn case_server_config(
    creds: &CaseCredentials,
    client_auth: ClientAuth,
    opts: &Options,
) -> ServerConfig {
    let case = creds.case;
    let mut s = ServerConfig::new(
        vec![ServerCredential {
            spec: case.leaf,
            cert: creds.server_cert.clone(),
            key: creds.server_key.clone(),
            ca_spec: case.ca,
            ca_subject: creds.ca_cert.tbs.subject.clone(),
            ca_key_hash: Some(wtls::crypto::pk::key_hash_sha(
                &creds.ca_cert.tbs.public_key,
            )),
        }],
        opts.cipher_suites.clone(),
    );
    s.trusted_client_cas = vec![(case.ca, creds.ca_cert.clone())];
    s.numbering = creds.numbering;
    s.expected_client = Some(Identifier::text(CLIENT_NAME));
    s.client_certificates.insert(
        Identifier::text(CLIENT_NAME).to_bytes(),
        creds.client_cert.clone(),
    );
    apply(&mut s, client_auth, opts);
    s
}

/// A gateway that serves every case of the PKI: a credential per case (chosen by the
/// client's key exchange parameters and trusted CA), every CA trusted for clients.
pub fn gateway_server_config(
    store: &PkiStore,
    client_auth: ClientAuth,
    opts: &Options,
) -> anyhow::Result<ServerConfig> {
    let mut credentials = Vec::new();
    let mut cas = Vec::new();
    let mut seen_ca = std::collections::BTreeSet::new();
    for case in store.cases().copied().collect::<Vec<_>>() {
        let creds = store.case(&case)?;
        credentials.push(ServerCredential {
            spec: case.leaf,
            cert: creds.server_cert.clone(),
            key: creds.server_key.clone(),
            ca_spec: case.ca,
            ca_subject: creds.ca_cert.tbs.subject.clone(),
            ca_key_hash: Some(wtls::crypto::pk::key_hash_sha(
                &creds.ca_cert.tbs.public_key,
            )),
        });
        if seen_ca.insert(case.ca) {
            cas.push((case.ca, creds.ca_cert.clone()));
        }
    }
    let mut s = ServerConfig::new(credentials, opts.cipher_suites.clone());
    s.trusted_client_cas = cas;
    s.numbering = store.numbering();
    s.expected_client = Some(Identifier::text(CLIENT_NAME));
    // Client certificates for the optimised flow are per case; a gateway serving all
    // cases keys them by identifier only, so it holds none and runs the full flow.
    s.client_certificates = KeyedMap::default();
    apply(&mut s, client_auth, opts);
    Ok(s)
}

/// The process's clocks for the probes: `Instant` since an origin, and the calling
/// thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
#[derive(Debug)]
pub struct ProcessClock {
    origin: Instant,
}

impl Default for ProcessClock {
    fn default() -> Self {
        ProcessClock {
            origin: Instant::now(),
        }
    }
}

impl ProcessClock {
    pub fn shared() -> Arc<ProcessClock> {
        static CLOCK: std::sync::OnceLock<Arc<ProcessClock>> = std::sync::OnceLock::new();
        CLOCK
            .get_or_init(|| Arc::new(ProcessClock::default()))
            .clone()
    }
}

impl Clock for ProcessClock {
    fn wall_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    fn cpu_ns(&self) -> u64 {
        thread_cpu_ns()
    }
}

/// CPU time consumed by the calling thread, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time consumed by the whole process (all threads), in nanoseconds.
pub fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The reading of `clock` in nanoseconds (0 if the clock cannot be read).
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; the callers pass valid ids.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The engine's notion of now, from the process clock and the system time.
pub fn now() -> Now {
    Now::new(ProcessClock::shared().wall_ns(), unix_secs())
}

/// Seconds since the Unix epoch (0 before it).
pub fn unix_secs() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as u32)
        .unwrap_or(0)
}

/// Restricts the calling thread to one CPU and returns its previous affinity, for
/// [`restore_affinity`]. Load tests pin the generator and the gateway worker to
/// different cores, so that neither queues behind the other: on a 2-core machine that
/// is what lets the measured waiting time be the gateway's own.
pub fn pin_current_thread(cpu: usize) -> std::io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; sched_{get,set}affinity read and write the set we
    // own, with its true size, for the calling thread (pid 0).
    unsafe {
        let mut previous: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut previous) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(previous)
    }
}

/// Gives the calling thread back an affinity saved by [`pin_current_thread`].
pub fn restore_affinity(previous: &libc::cpu_set_t) {
    // SAFETY: as above; a failure leaves the thread pinned, which is harmless.
    unsafe {
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), previous);
    }
}

/// Number of CPUs this process may run on.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
