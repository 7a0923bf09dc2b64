//! Shared fixtures for the fuzz targets: a small in-memory PKI made once per process,
//! server configurations built from it, real ClientHellos to prefix, and the splitting
//! of one fuzz input into a sequence of datagrams.
//!
//! Everything here is built once (in a `OnceLock`) because key generation costs
//! milliseconds and libFuzzer calls a target hundreds of thousands of times.

use std::sync::{Arc, Mutex, OnceLock};

use wtls::handshake::{
    AuthMode, Client, ClientConfig, Event, Now, Policy, ServerConfig, ServerConnection,
    SessionCache,
};
use wtls::msgs::certificate::WtlsCertificate;
use wtls::msgs::common::{CipherSuite, Identifier};
use wtls::msgs::enums::{AlertLevel, BulkCipherAlgorithm, MacAlgorithm};
use wtls::probe::Probe;
use wtls::testing::CaseKeys;

pub use wtls::testing::{now, UNIX_NOW};

/// The cipher suites both sides accept: a strong one, and NULL/SHA so that a fuzzer
/// that reaches the Finished check can do so without guessing a MAC.
pub fn cipher_suites() -> Vec<CipherSuite> {
    vec![
        CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha),
        CipherSuite::new(BulkCipherAlgorithm::Null, MacAlgorithm::Sha),
    ]
}

/// One CA/leaf case: the engine's shared, seeded test fixture (`wtls::testing`), the
/// same keys the engine's own tests use.
pub type CaseFixture = Arc<CaseKeys>;

pub struct Fixture {
    /// An ECDH case on a cheap curve and an RSA case (the two key exchange families).
    pub cases: Vec<CaseFixture>,
    /// Server configurations, selected by the first input byte: server-authenticated
    /// with the thesis' CertificateRequest, mutual, and permissive (anonymous and weak
    /// suites enabled, so those code paths are reachable too).
    pub servers: Vec<Arc<ServerConfig>>,
    /// Client configurations matching the cases, server-auth and mutual.
    pub clients: Vec<(Arc<ClientConfig>, AuthMode)>,
    /// The first datagram of each client configuration, to prefix so that the fuzzer
    /// starts from the states after a valid ClientHello.
    pub hellos: Vec<Vec<u8>>,
}

fn server_config(cases: &[CaseFixture], auth: AuthMode, policy: Policy) -> ServerConfig {
    let credentials = cases.iter().map(|c| c.server_credential()).collect();
    let mut s = ServerConfig::new(credentials, cipher_suites());
    s.trusted_client_cas = cases
        .iter()
        .map(|c| (c.case.ca, c.ca.cert.clone()))
        .collect();
    s.expected_client = Some(Identifier::text(wtls::pki::CLIENT_SUBJECT));
    s.client_auth = auth;
    s.thesis_certificate_request = auth == AuthMode::ServerAuth;
    s.session_cache = Some(Arc::new(Mutex::new(SessionCache::new(64, u64::MAX))));
    s.policy = policy;
    s
}

fn client_config(c: &CaseFixture) -> ClientConfig {
    let mut client = c.client_config(&cipher_suites());
    client.policy = Policy::permissive();
    client
}

/// The process-wide fixture.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let cases = vec![
            CaseKeys::shared("160p/160p"),
            CaseKeys::shared("rsa1024/rsa1024"),
        ];
        let servers = vec![
            Arc::new(server_config(
                &cases,
                AuthMode::ServerAuth,
                Policy::default(),
            )),
            Arc::new(server_config(&cases, AuthMode::Mutual, Policy::default())),
            Arc::new(server_config(
                &cases,
                AuthMode::ServerAuth,
                Policy::permissive(),
            )),
        ];
        let mut clients = Vec::new();
        for c in &cases {
            for auth in [AuthMode::ServerAuth, AuthMode::Mutual] {
                clients.push((Arc::new(client_config(c)), auth));
            }
        }
        let hellos = clients
            .iter()
            .map(|(config, auth)| {
                let mut client = Client::new(config.clone(), *auth, None, Probe::off(), now());
                client
                    .start(now())
                    .expect("ClientHello")
                    .datagrams
                    .swap_remove(0)
            })
            .collect();
        Fixture {
            cases,
            servers,
            clients,
            hellos,
        }
    })
}

/// Split a fuzz input into datagrams: each is a 2-byte big-endian length and that many
/// bytes; the last one takes whatever remains if its length runs past the end. A
/// length-prefixed format lets libFuzzer's mutations (insert, erase, copy) move whole
/// datagrams around while the bytes inside stay free.
pub fn split_datagrams(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while data.len() >= 2 {
        let len = usize::from(u16::from_be_bytes([data[0], data[1]]));
        let rest = &data[2..];
        let take = len.min(rest.len());
        out.push(&rest[..take]);
        data = &rest[take..];
    }
    out
}

/// The inverse of [`split_datagrams`], for writing seed inputs.
pub fn join_datagrams(datagrams: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for d in datagrams {
        let len = u16::try_from(d.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&d[..usize::from(len)]);
    }
    out
}

/// Bound on what one connection may hold: the answers to eight flights plus a
/// transcript. Far more means state grows with hostile input, which a flood exploits.
pub const MAX_CONNECTION_HEAP: usize = 256 * 1024;

/// Feed `datagrams` to a fresh server connection and check the invariants a hostile
/// peer must not break: no panic (libFuzzer reports it), a fatal or critical alert
/// closes the connection and nothing is answered afterwards, a handshake completes
/// only with its event, and the connection's memory stays bounded.
pub fn drive_server(config: Arc<ServerConfig>, datagrams: &[&[u8]]) {
    let mut server = ServerConnection::new(config, Probe::off(), now());
    let mut completed = false;
    for d in datagrams {
        let was_closed = server.is_closed();
        let out = server.handle_datagram(d, now());
        if was_closed {
            assert!(
                out.datagrams.is_empty(),
                "a closed connection answered a datagram"
            );
        }
        for e in &out.events {
            match e {
                Event::HandshakeComplete(_) => completed = true,
                Event::AlertSent(a, _) if a.level != AlertLevel::Warning => {
                    assert!(server.is_closed(), "fatal alert sent but still open")
                }
                _ => {}
            }
        }
        assert!(
            server.heap_bytes() <= MAX_CONNECTION_HEAP,
            "connection holds {} bytes",
            server.heap_bytes()
        );
    }
    if server.is_established() {
        assert!(completed, "established without a HandshakeComplete event");
    }
}

/// A CA certificate for the certificate target, and the specifier it belongs to.
pub fn certificate_authority() -> &'static WtlsCertificate {
    &fixture().cases[0].ca.cert
}

/// One byte flip in a client datagram: which datagram, where (modulo its length), and
/// the XOR mask.
#[derive(Debug, Clone, Copy)]
pub struct Tamper {
    pub datagram: u8,
    pub offset: u16,
    pub mask: u8,
}

/// Read up to eight tamper instructions (4 bytes each after a count byte); returns
/// them and the rest of the input.
pub fn read_tampers(data: &[u8]) -> (Vec<Tamper>, &[u8]) {
    let Some((&count, mut rest)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let mut tampers = Vec::new();
    for _ in 0..(count % 8) {
        let [d, o1, o2, m, ..] = rest else { break };
        tampers.push(Tamper {
            datagram: *d,
            offset: u16::from_be_bytes([*o1, *o2]),
            mask: *m,
        });
        rest = &rest[4..];
    }
    (tampers, rest)
}

/// A real handshake between a fixture client and `server`, with the client's datagrams
/// altered by `tampers` on the way, then `extra` datagrams fed to the server. This is
/// how the fuzzer reaches the states after the key exchange (ChangeCipherSpec,
/// protected Finished, application data), which random bytes cannot: the client's
/// second flight depends on the server's fresh random.
pub fn tampered_handshake(
    client: (Arc<ClientConfig>, AuthMode),
    config: Arc<ServerConfig>,
    tampers: &[Tamper],
    extra: &[&[u8]],
) {
    let mut c = Client::new(client.0, client.1, None, Probe::off(), now());
    let mut server = ServerConnection::new(config, Probe::off(), now());
    let Ok(first) = c.start(now()) else { return };
    let mut to_server = first.datagrams;
    let mut index = 0u8;
    for _round in 0..6 {
        let mut to_client = Vec::new();
        for mut d in to_server.drain(..) {
            for t in tampers.iter().filter(|t| t.datagram == index) {
                if !d.is_empty() {
                    let at = usize::from(t.offset) % d.len();
                    d[at] ^= t.mask;
                }
            }
            index = index.wrapping_add(1);
            let out = server.handle_datagram(&d, now());
            if let Some(a) = out.events.iter().find_map(|e| match e {
                Event::AlertSent(a, _) => Some(a),
                _ => None,
            }) {
                if a.level != AlertLevel::Warning {
                    assert!(server.is_closed(), "fatal alert sent but still open");
                }
            }
            to_client.extend(out.datagrams);
        }
        for d in to_client {
            to_server.extend(c.handle_datagram(&d, now()).datagrams);
        }
        if to_server.is_empty() {
            break;
        }
    }
    for d in extra {
        let was_closed = server.is_closed();
        let out = server.handle_datagram(d, now());
        if was_closed {
            assert!(out.datagrams.is_empty(), "a closed connection answered");
        }
        assert!(server.heap_bytes() <= MAX_CONNECTION_HEAP);
    }
}

/// The endpoint target's input (see `fuzz_targets/endpoint.rs`) turned into steps and
/// driven through [`drive_endpoint`].
pub fn endpoint_input(data: &[u8]) {
    let Some((&selector, mut rest)) = data.split_first() else {
        return;
    };
    let f = fixture();
    let server = f.servers[usize::from(selector & 0b11) % f.servers.len()].clone();
    let mut ops = Vec::new();
    while let [source, kind, tail @ ..] = rest {
        let (datagram, next): (&[u8], &[u8]) = if *kind < 4 {
            (&f.hellos[usize::from(*kind) % f.hellos.len()], tail)
        } else if let [hi, lo, body @ ..] = tail {
            let len = usize::from(u16::from_be_bytes([*hi, *lo])).min(body.len());
            body.split_at(len)
        } else {
            break;
        };
        ops.push(EndpointOp {
            source: source & 0b111,
            advance_ms: u64::from(source >> 3) * 50,
            datagram,
        });
        rest = next;
    }
    drive_endpoint(server, selector & 0b100 != 0, &ops);
}

/// One step of the endpoint target: time moves, then a datagram arrives.
pub struct EndpointOp<'a> {
    /// Which of 8 source addresses sends it.
    pub source: u8,
    pub advance_ms: u64,
    pub datagram: &'a [u8],
}

/// Feeds `ops` to an endpoint with a small table (4 connections, 2 handshakes per
/// address) so that eviction, replacement and expiry all happen, and checks what no
/// input may break: no panic, answers go only to the datagram's source, the gauges add
/// up, the table stays within its bound and its memory within [`MAX_CONNECTION_HEAP`]
/// per connection, every re-answer is counted against a received datagram, and once
/// every timeout has passed nothing is left.
pub fn drive_endpoint(config: Arc<ServerConfig>, limit: bool, ops: &[EndpointOp<'_>]) {
    use wtls::endpoint::{Endpoint, EndpointConfig, Handled, ResponseLimit};
    let max_peers = 4;
    let cfg = EndpointConfig {
        max_peers,
        handshake_timeout_ns: 2_000_000_000,
        idle_timeout_ns: 5_000_000_000,
        max_hello_reanswers: 2,
        max_handshakes_per_address: 2,
        response_limit: if limit {
            ResponseLimit {
                address_bytes_per_s: 2048,
                prefix_bytes_per_s: 4096,
                burst_s: 1,
            }
        } else {
            ResponseLimit::OFF
        },
        // No balancer in front: every source is a client of its own.
        balancer: None,
    };
    let mut ep = Endpoint::new(config, cfg);
    let mut out = Handled::default();
    let mut t = now().mono_ns;
    for op in ops {
        t += op.advance_ms * 1_000_000;
        ep.handle_timeout(t);
        let from = std::net::SocketAddr::from((
            [10, 0, u8::from(op.source >= 6), op.source],
            4000 + u16::from(op.source),
        ));
        ep.handle(Now::new(t, UNIX_NOW), from, op.datagram, &mut out);
        assert!(out.transmits.iter().all(|x| x.destination == from));
        let s = ep.stats();
        assert_eq!(s.connections, s.half_open + s.established, "{s:?}");
        assert!(s.connections <= max_peers as u64);
        assert!(s.state_bytes <= s.connections * MAX_CONNECTION_HEAP as u64);
        assert!(s.reanswers_suppressed + s.retransmissions_answered <= s.datagrams_received);
    }
    t += 10_000_000_000;
    for _ in 0..4 {
        ep.handle_timeout(t);
    }
    let s = ep.stats();
    assert_eq!(
        (s.connections, s.half_open, s.established),
        (0, 0, 0),
        "{s:?}"
    );
    assert_eq!(s.state_bytes, 0);
}

#[cfg(test)]
mod tests {
    /// The endpoint harness on pseudo-random inputs (xorshift), so that a wrong
    /// invariant shows without libFuzzer.
    #[test]
    fn the_endpoint_harness_holds_on_random_inputs() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in 0..300usize {
            let data: Vec<u8> = (0..len * 3)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            super::endpoint_input(&data);
        }
    }
}
