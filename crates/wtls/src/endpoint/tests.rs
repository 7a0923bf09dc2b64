//! The endpoint's rules in virtual time with virtual addresses: no sockets, no sleeps.
//! Every eviction, expiry, replacement, spoofing and reflection rule of the module docs
//! has a test here.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, OnceLock};

use super::*;
use crate::crypto::pk::KeyPair;
use crate::handshake::{
    AuthMode, Client, ClientConfig, KeyExchangeOffer, ServerCredential, SessionCache, StoredSession,
};
use crate::msgs::common::{CipherSuite, Identifier};
use crate::msgs::enums::{BulkCipherAlgorithm, MacAlgorithm};
use crate::pki::Authority;
use crate::suite::Case;

mod shared_limiter;

const UNIX_NOW: u32 = 1_700_000_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

struct Fixture {
    server: ServerConfig,
    client: Arc<ClientConfig>,
}

/// One ECDH case on a cheap curve, made once per test process.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let case = Case::parse("160p/160p").expect("case");
        let ca = Authority::new_root(
            case.ca,
            &Authority::default_name(case.ca),
            UNIX_NOW - 3600,
            UNIX_NOW + 3600,
        )
        .expect("CA");
        let key = KeyPair::generate(case.leaf).expect("key");
        let cert = ca
            .issue(
                crate::pki::SERVER_SUBJECT,
                &key,
                UNIX_NOW - 60,
                UNIX_NOW + 60,
            )
            .expect("certificate");
        let suites = vec![CipherSuite::new(
            BulkCipherAlgorithm::Rc5Cbc,
            MacAlgorithm::Sha,
        )];
        let server = ServerConfig::new(
            vec![ServerCredential {
                spec: case.leaf,
                cert,
                key,
                ca_spec: case.ca,
                ca_subject: ca.cert.tbs.subject.clone(),
                ca_key_hash: Some(crate::crypto::pk::key_hash_sha(&ca.cert.tbs.public_key)),
            }],
            suites.clone(),
        );
        let mut client = ClientConfig::new(
            vec![KeyExchangeOffer {
                suite: case.key_exchange_suite(),
                spec: case.leaf,
                identifier: Identifier::Null,
            }],
            suites,
        );
        client.trusted_cas = vec![(case.ca, ca.cert.clone())];
        client.expected_server = Some(Identifier::text(crate::pki::SERVER_SUBJECT));
        Fixture {
            server,
            client: Arc::new(client),
        }
    })
}

fn addr(i: u32) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i)), 4000)
}

/// An endpoint, a virtual clock and what each address was sent.
struct Lab {
    ep: Endpoint,
    t: u64,
    out: Handled,
}

impl Lab {
    fn new(config: EndpointConfig) -> Lab {
        let mut server = fixture().server.clone();
        server.session_cache = Some(Arc::new(Mutex::new(SessionCache::new(1024, u64::MAX))));
        Lab {
            ep: Endpoint::new(Arc::new(server), config),
            t: S,
            out: Handled::default(),
        }
    }

    fn unlimited() -> Lab {
        Lab::new(EndpointConfig {
            response_limit: ResponseLimit::OFF,
            ..EndpointConfig::default()
        })
    }

    fn now(&self) -> Now {
        Now::new(self.t, UNIX_NOW)
    }

    fn advance(&mut self, ns: u64) {
        self.t += ns;
        self.ep.handle_timeout(self.t);
    }

    /// Sends one datagram from `from`; returns what went back to `from`.
    fn send(&mut self, from: SocketAddr, d: &[u8]) -> Vec<Vec<u8>> {
        let now = self.now();
        self.ep.handle(now, from, d, &mut self.out);
        assert!(self.out.transmits.iter().all(|t| t.destination == from));
        self.out
            .transmits
            .iter()
            .map(|t| t.payload.clone())
            .collect()
    }

    fn client(&self, resume: Option<StoredSession>) -> Client {
        Client::new(
            fixture().client.clone(),
            AuthMode::ServerAuth,
            resume,
            Probe::off(),
            self.now(),
        )
    }

    /// Runs a whole handshake from `from`; the client, if it completed.
    fn handshake(&mut self, from: SocketAddr, resume: Option<StoredSession>) -> Option<Client> {
        let mut c = self.client(resume);
        let mut to_server = c.start(self.now()).expect("hello").datagrams;
        for _ in 0..8 {
            let mut to_client = Vec::new();
            for d in &to_server {
                to_client.extend(self.send(from, d));
            }
            to_server.clear();
            for d in &to_client {
                to_server.extend(c.handle_datagram(d, self.now()).datagrams);
            }
            if c.is_established() && to_server.is_empty() {
                return Some(c);
            }
            if to_server.is_empty() {
                return None;
            }
        }
        None
    }

    /// Sends application data from an established client, which the endpoint echoes in
    /// the same pass on the connection it came in on; whether the echo came back.
    fn echo(&mut self, from: SocketAddr, c: &mut Client) -> bool {
        let sealed = c.seal_application_data(b"ping").expect("seal");
        let now = self.now();
        let mut echo = |peer: SocketAddr, data: &[u8]| (peer == from).then(|| data.to_vec());
        self.ep
            .handle_and_reply(now, from, &sealed, &mut self.out, &mut echo);
        let delivered = self.out.events.iter().any(|e| {
            matches!(e, EndpointEvent::ApplicationData { peer, data } if *peer == from && data == b"ping")
        });
        let replies: Vec<Vec<u8>> = self
            .out
            .transmits
            .iter()
            .map(|t| t.payload.clone())
            .collect();
        delivered
            && replies.iter().any(|reply| {
                c.handle_datagram(reply, now)
                    .events
                    .iter()
                    .any(|e| matches!(e, Event::ApplicationData(d) if d == b"ping"))
            })
    }

    /// A fresh ClientHello datagram (a new random each time).
    fn hello(&self) -> Vec<u8> {
        self.client(None)
            .start(self.now())
            .expect("hello")
            .datagrams
            .swap_remove(0)
    }
}

#[test]
fn a_handshake_completes_echoes_and_resumes() {
    let mut lab = Lab::unlimited();
    let a = addr(1);
    let mut c = lab.handshake(a, None).expect("full handshake");
    assert!(lab.echo(a, &mut c));
    let s = lab.ep.stats().clone();
    assert_eq!((s.connections, s.established, s.half_open), (1, 1, 0));
    assert_eq!(s.handshakes, [1, 0, 0]);
    // The client reconnects from the same address with its session.
    let mut resumed = lab.handshake(a, c.session()).expect("resumed");
    assert_eq!(lab.ep.stats().handshakes, [1, 1, 0]);
    assert_eq!(lab.ep.stats().replaced, 1);
    assert_eq!(lab.ep.connections_of(&a), 1);
    assert!(lab.echo(a, &mut resumed));
}

#[test]
fn a_forged_client_hello_does_not_end_an_established_connection() {
    let mut lab = Lab::unlimited();
    let victim = addr(1);
    let mut c = lab.handshake(victim, None).expect("handshake");
    // Off-path: the attacker's ClientHello carries the victim's address.
    let forged = lab.hello();
    let answer = lab.send(victim, &forged);
    assert!(!answer.is_empty(), "a ClientHello is answered");
    assert_eq!(lab.ep.connections_of(&victim), 2);
    assert_eq!(lab.ep.stats().parallel_handshakes, 1);
    // The victim's echo still works, beside the forged handshake.
    assert!(lab.echo(victim, &mut c));
    // The forged handshake never completes and expires; the connection stays.
    lab.advance(lab.ep.config().handshake_timeout_ns + 1);
    assert_eq!(lab.ep.connections_of(&victim), 1);
    assert!(lab.ep.is_established(&victim));
    assert!(lab.echo(victim, &mut c));
    assert_eq!(lab.ep.stats().expired, 1);
}

#[test]
fn a_new_handshake_replaces_the_old_connection_only_when_it_completes() {
    let mut lab = Lab::unlimited();
    let a = addr(1);
    let mut old = lab.handshake(a, None).expect("first");
    let mut new = lab.client(None);
    let hello = new.start(lab.now()).expect("hello").datagrams;
    let flight = lab.send(a, &hello[0]);
    // Mid-way, the old connection still serves.
    assert!(lab.echo(a, &mut old));
    let mut second = Vec::new();
    for d in &flight {
        second.extend(new.handle_datagram(d, lab.now()).datagrams);
    }
    for d in &second {
        let back = lab.send(a, d);
        for d in &back {
            new.handle_datagram(d, lab.now());
        }
    }
    assert!(new.is_established());
    assert_eq!(lab.ep.stats().replaced, 1);
    assert_eq!(lab.ep.connections_of(&a), 1);
    assert!(lab.echo(a, &mut new));
}

#[test]
fn a_copy_of_the_opening_client_hello_is_answered_at_most_twice_more() {
    let mut lab = Lab::unlimited();
    let victim = addr(7);
    let hello = lab.hello();
    assert!(!lab.send(victim, &hello).is_empty());
    let answered: usize = (0..50).map(|_| lab.send(victim, &hello).len()).sum();
    assert!(answered > 0);
    let s = lab.ep.stats();
    assert_eq!(s.retransmissions_answered, 2);
    assert_eq!(s.reanswers_suppressed, 48);
    assert_eq!(lab.ep.connections_of(&victim), 1);
}

#[test]
fn answers_to_an_unverified_address_stay_within_its_byte_budget() {
    let limit = ResponseLimit {
        address_bytes_per_s: 4096,
        prefix_bytes_per_s: 0,
        burst_s: 1,
    };
    let mut lab = Lab::new(EndpointConfig {
        response_limit: limit,
        ..EndpointConfig::default()
    });
    let victim = addr(9);
    // 100 fresh forged ClientHellos a second for 10 s, all with the victim's address.
    let (mut received, mut reflected) = (0u64, 0u64);
    for _ in 0..1000 {
        let hello = lab.hello();
        received += hello.len() as u64;
        reflected += lab
            .send(victim, &hello)
            .iter()
            .map(|d| d.len() as u64)
            .sum::<u64>();
        lab.advance(10 * MS);
    }
    // At most one burst plus the rate over the 10 s.
    assert!(reflected <= 4096 * 11, "{reflected} bytes reflected");
    assert!(lab.ep.stats().rate_limited > 0);
    assert!(reflected < received * 2, "{reflected} for {received}");
}

#[test]
fn a_prefix_budget_bounds_a_victim_network_whatever_the_addresses() {
    let limit = ResponseLimit {
        address_bytes_per_s: 0,
        prefix_bytes_per_s: 8192,
        burst_s: 1,
    };
    let mut lab = Lab::new(EndpointConfig {
        response_limit: limit,
        ..EndpointConfig::default()
    });
    let mut reflected = 0u64;
    for i in 0..200u32 {
        let hello = lab.hello();
        reflected += lab
            .send(addr(i % 250), &hello)
            .iter()
            .map(|d| d.len() as u64)
            .sum::<u64>();
    }
    assert!(reflected <= 8192, "{reflected}");
}

#[test]
fn a_full_table_evicts_the_oldest_half_open_handshake_first() {
    let mut lab = Lab::new(EndpointConfig {
        max_peers: 3,
        response_limit: ResponseLimit::OFF,
        ..EndpointConfig::default()
    });
    let mut established = lab.handshake(addr(100), None).expect("handshake");
    for i in 1..=2 {
        let h = lab.hello();
        lab.send(addr(i), &h);
        lab.advance(MS);
    }
    let h = lab.hello();
    assert!(!lab.send(addr(3), &h).is_empty());
    let s = lab.ep.stats();
    assert_eq!((s.evicted_half_open, s.evicted_idle, s.refused), (1, 0, 0));
    assert_eq!(lab.ep.connections_of(&addr(1)), 0, "the oldest went");
    assert_eq!(lab.ep.connections_of(&addr(2)), 1);
    assert!(lab.echo(addr(100), &mut established));
}

#[test]
fn a_table_full_of_established_peers_evicts_the_least_recently_active() {
    let mut lab = Lab::new(EndpointConfig {
        max_peers: 3,
        response_limit: ResponseLimit::OFF,
        ..EndpointConfig::default()
    });
    let mut clients: Vec<Client> = (0..3)
        .map(|i| {
            let c = lab.handshake(addr(i), None).expect("handshake");
            lab.advance(MS);
            c
        })
        .collect();
    // Peer 0 talks last, so peer 1 is the least recently active.
    lab.advance(MS);
    assert!(lab.echo(addr(0), &mut clients[0]));
    let newcomer = lab.handshake(addr(50), None);
    assert!(newcomer.is_some(), "the newcomer gets in");
    let s = lab.ep.stats();
    assert_eq!((s.evicted_idle, s.refused), (1, 0));
    assert_eq!(lab.ep.connections_of(&addr(1)), 0);
    assert!(lab.ep.is_established(&addr(0)) && lab.ep.is_established(&addr(2)));
    // The evicted client's session survives: it comes back with one abbreviated
    // handshake (which evicts the next quietest, peer 2).
    let session = clients[1].session();
    assert!(lab.handshake(addr(1), session).is_some());
    assert_eq!(lab.ep.stats().handshakes[1], 1, "abbreviated");
}

#[test]
fn completed_handshakes_filling_the_table_do_not_lock_newcomers_out() {
    // The table-filling attack of docs/network.md ("Per-peer state bounds") at a tenth of its size: 50 completed handshakes
    // fill a 50-peer table; 20 newcomers then arrive, one every 100 ms.
    let mut lab = Lab::new(EndpointConfig {
        max_peers: 50,
        response_limit: ResponseLimit::OFF,
        ..EndpointConfig::default()
    });
    for i in 0..50 {
        lab.handshake(addr(i), None).expect("filler");
    }
    assert_eq!(lab.ep.stats().established, 50);
    let completed = (0..20)
        .filter(|i| {
            lab.advance(100 * MS);
            lab.handshake(addr(1000 + i), None).is_some()
        })
        .count();
    assert_eq!(completed, 20);
    assert_eq!(lab.ep.stats().connections, 50);
    assert_eq!(lab.ep.stats().refused, 0);
}

#[test]
fn handshakes_and_idle_connections_expire_and_activity_postpones_it() {
    let mut lab = Lab::unlimited();
    let cfg = *lab.ep.config();
    let mut c = lab.handshake(addr(1), None).expect("handshake");
    let h = lab.hello();
    lab.send(addr(2), &h);
    lab.advance(cfg.handshake_timeout_ns - MS);
    assert_eq!(lab.ep.connections_of(&addr(2)), 1);
    lab.advance(2 * MS);
    assert_eq!(lab.ep.connections_of(&addr(2)), 0);
    // The established peer is active half-way through its idle time...
    lab.advance(cfg.idle_timeout_ns / 2);
    assert!(lab.echo(addr(1), &mut c));
    lab.advance(cfg.idle_timeout_ns / 2 + MS);
    assert!(lab.ep.is_established(&addr(1)), "activity postponed expiry");
    lab.advance(cfg.idle_timeout_ns);
    assert_eq!(lab.ep.connections_of(&addr(1)), 0);
    let s = lab.ep.stats();
    assert_eq!(
        (s.expired, s.connections, s.half_open, s.established),
        (2, 0, 0, 0)
    );
    assert_eq!(s.state_bytes, 0);
}

#[test]
fn an_address_holds_a_bounded_number_of_handshakes() {
    let mut lab = Lab::unlimited();
    let a = addr(3);
    let mut c = lab.handshake(a, None).expect("handshake");
    for _ in 0..10 {
        let h = lab.hello();
        lab.send(a, &h);
        lab.advance(MS);
    }
    let cap = lab.ep.config().max_handshakes_per_address;
    assert_eq!(lab.ep.connections_of(&a), 1 + cap);
    assert_eq!(lab.ep.stats().evicted_per_address, (10 - cap) as u64);
    assert!(
        lab.echo(a, &mut c),
        "the established connection is untouched"
    );
}

#[test]
fn garbage_from_a_new_address_gets_an_alert_and_leaves_no_state() {
    let mut lab = Lab::unlimited();
    let answer = lab.send(addr(5), &[0x12, 0x34]);
    assert_eq!(answer.len(), 1, "a decode alert");
    assert_eq!(lab.ep.connections_of(&addr(5)), 0);
    assert_eq!(lab.ep.stats().alerts_by_name().count(), 1);
    assert_eq!(lab.ep.stats().state_bytes, 0);
}

#[test]
fn garbage_from_an_established_address_is_dropped_and_counted() {
    let mut lab = Lab::unlimited();
    let a = addr(1);
    let mut c = lab.handshake(a, None).expect("handshake");
    // A record under the connection's cipher spec that fails its MAC.
    let mut forged = c.seal_application_data(b"x").expect("seal");
    let last = forged.len() - 1;
    forged[last] ^= 1;
    let before = lab.ep.stats().dropped;
    assert!(lab.send(a, &forged).is_empty());
    assert!(lab.ep.stats().dropped > before);
    assert!(lab.echo(a, &mut c));
}

/// A forged 6-byte plaintext ChangeCipherSpec (L and S set, sequence 1).
const FORGED_CCS: [u8; 6] = [0xC1, 0x00, 0x01, 0x00, 0x01, 0x01];

#[test]
fn a_forged_change_cipher_spec_mid_handshake_is_dropped() {
    let mut lab = Lab::unlimited();
    let a = addr(1);
    let mut c = lab.client(None);
    let hello = c.start(lab.now()).expect("hello").datagrams;
    let flight = lab.send(a, &hello[0]);
    // The attacker's CCS arrives between the server's flight and the client's answer.
    assert!(lab.send(a, &FORGED_CCS).is_empty(), "no alert");
    assert_eq!(lab.ep.stats().alerts_by_name().count(), 0);
    let mut second = Vec::new();
    for d in &flight {
        second.extend(c.handle_datagram(d, lab.now()).datagrams);
    }
    for d in &second {
        for back in lab.send(a, d) {
            c.handle_datagram(&back, lab.now());
        }
    }
    assert!(c.is_established());
    assert!(lab.echo(a, &mut c));
}

#[test]
fn nobody_but_its_owner_can_cancel_a_session() {
    let mut lab = Lab::unlimited();
    let owner = addr(1);
    let c = lab.handshake(owner, None).expect("handshake");
    let session = c.session().expect("session");
    // The attacker read the session id from the ServerHello; not the master secret.
    let mut quoted = session.clone();
    quoted.master_secret = zeroize::Zeroizing::new([0u8; 20]);
    let attacker = addr(66);
    let hello = lab
        .client(Some(quoted))
        .start(lab.now())
        .expect("hello")
        .datagrams;
    lab.send(attacker, &hello[0]);
    // Then one bad record: a plaintext Finished before any ChangeCipherSpec (the engine
    // before the drop rule answered it with a fatal unexpected_message and forgot the
    // session), and a record that fails its MAC.
    let mut finished = vec![0xC3, 0x00, 0x01, 0x00, 15, 0x14, 0x00, 12];
    finished.extend([0x5a; 12]);
    lab.send(attacker, &finished);
    lab.send(attacker, &FORGED_CCS);
    lab.send(attacker, &[0xE3, 0x00, 0x02, 0x00, 0x04, 1, 2, 3, 4]);
    lab.advance(lab.ep.config().handshake_timeout_ns + 1);
    let resumed = lab.handshake(owner, Some(session));
    assert!(resumed.is_some());
    assert_eq!(
        lab.ep.stats().handshakes[1],
        1,
        "the owner's resumption is abbreviated"
    );
}

#[test]
fn two_datagrams_from_many_addresses_keep_the_gauges_consistent() {
    let mut lab = Lab::new(EndpointConfig {
        max_peers: 16,
        ..EndpointConfig::default()
    });
    for i in 0..200u32 {
        let h = lab.hello();
        lab.send(addr(i % 40), &h);
        lab.send(addr((i * 7) % 40), &FORGED_CCS);
        lab.advance(37 * MS);
    }
    let s = lab.ep.stats().clone();
    assert!(s.connections <= 16);
    assert_eq!(s.connections, s.half_open + s.established);
    lab.advance(lab.ep.config().handshake_timeout_ns + 1);
    let s = lab.ep.stats();
    assert_eq!((s.connections, s.half_open, s.state_bytes), (0, 0, 0));
}

#[test]
fn an_impossible_peer_bound_does_not_abort() {
    let ep = Endpoint::new(
        Arc::new(fixture().server.clone()),
        EndpointConfig {
            max_peers: usize::MAX / 2,
            ..EndpointConfig::default()
        },
    );
    assert_eq!(ep.stats().connections, 0);
}

#[test]
fn a_client_hello_is_recognised_from_its_first_bytes_and_garbage_is_not() {
    let lab = Lab::unlimited();
    assert!(starts_with_client_hello(&lab.hello()));
    assert!(!starts_with_client_hello(&[]));
    assert!(!starts_with_client_hello(&[0xff, 0x00, 0x01]));
    // An application-data header (content type 4) is not a hello.
    assert!(!starts_with_client_hello(&[0x04, 0x01]));
    assert!(!starts_with_client_hello(&FORGED_CCS));
    assert!(entry_overhead_bytes() > std::mem::size_of::<ServerConnection>());
}

#[test]
fn a_newcomer_does_not_evict_a_young_handshake_from_a_table_of_idle_peers() {
    // 16 established peers fill the table; one newcomer is mid-handshake when a second
    // arrives: the second evicts an idle peer, not the first newcomer's handshake.
    let mut lab = Lab::new(EndpointConfig {
        max_peers: 16,
        response_limit: ResponseLimit::OFF,
        ..EndpointConfig::default()
    });
    for i in 0..16 {
        lab.handshake(addr(i), None).expect("filler");
    }
    let mut first = lab.client(None);
    let hello = first.start(lab.now()).expect("hello").datagrams;
    let flight = lab.send(addr(100), &hello[0]);
    let h = lab.hello();
    assert!(!lab.send(addr(101), &h).is_empty());
    let mut second = Vec::new();
    for d in &flight {
        second.extend(first.handle_datagram(d, lab.now()).datagrams);
    }
    for d in &second {
        for back in lab.send(addr(100), d) {
            first.handle_datagram(&back, lab.now());
        }
    }
    assert!(first.is_established());
    let s = lab.ep.stats();
    assert_eq!((s.evicted_idle, s.evicted_half_open), (2, 0));
}

/// One step of the property test below.
#[derive(Debug, Clone)]
enum Step {
    /// A fresh ClientHello.
    Hello,
    /// The same ClientHello as every other `Repeat` (retransmissions, replays).
    Repeat,
    /// A whole handshake (resuming the last session, if asked and one exists).
    Handshake(bool),
    Ccs,
    Bytes(Vec<u8>),
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        Just(Step::Hello),
        Just(Step::Repeat),
        any::<bool>().prop_map(Step::Handshake),
        Just(Step::Ccs),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Step::Bytes),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Whatever arrives from eight addresses (two sharing a /24) as time moves, the
    /// gauges add up, the table and each address keep their bounds, answers go to the
    /// source only (checked in `Lab::send`), and once every timeout has passed nothing
    /// is left.
    #[test]
    fn any_sequence_keeps_the_table_consistent(
        steps in proptest::collection::vec((0u32..8, 0u64..40, step()), 1..40),
        limited in proptest::prelude::any::<bool>(),
    ) {
        let mut lab = Lab::new(EndpointConfig {
            max_peers: 4,
            max_handshakes_per_address: 2,
            handshake_timeout_ns: 2 * S,
            idle_timeout_ns: 5 * S,
            response_limit: if limited { ResponseLimit::default() } else { ResponseLimit::OFF },
            ..EndpointConfig::default()
        });
        let repeated = lab.hello();
        let mut session = None;
        for (source, advance, step) in steps {
            lab.advance(advance * 50 * MS);
            let from = addr(if source >= 6 { 256 + source } else { source });
            match step {
                Step::Hello => { let h = lab.hello(); lab.send(from, &h); }
                Step::Repeat => { lab.send(from, &repeated); }
                Step::Handshake(resume) => {
                    let offer = if resume { session.clone() } else { None };
                    if let Some(c) = lab.handshake(from, offer) {
                        session = c.session();
                    }
                }
                Step::Ccs => { lab.send(from, &FORGED_CCS); }
                Step::Bytes(b) => { lab.send(from, &b); }
            }
            let s = lab.ep.stats();
            proptest::prop_assert_eq!(s.connections, s.half_open + s.established);
            proptest::prop_assert!(s.connections <= 4);
            proptest::prop_assert!(lab.ep.connections_of(&from) <= 3);
        }
        lab.advance(10 * S);
        let s = lab.ep.stats();
        proptest::prop_assert_eq!((s.connections, s.half_open, s.established, s.state_bytes), (0, 0, 0, 0));
    }
}

#[test]
fn a_newcomer_is_refused_silently_when_nothing_can_be_evicted_within_the_budget() {
    let mut lab = Lab::new(EndpointConfig {
        max_peers: 1,
        response_limit: ResponseLimit::OFF,
        ..EndpointConfig::default()
    });
    let h = lab.hello();
    lab.send(addr(1), &h);
    // Stale deadline items (connections long gone) ahead of everything: an eviction looks
    // at EVICTION_BUDGET of them and gives up rather than stall the worker.
    for g in 0..EVICTION_BUDGET as u64 {
        let stale = std::cmp::Reverse((0, 1_000_000 + g, addr(9)));
        lab.ep.table.handshakes.push(stale);
        lab.ep.table.idle.push(stale);
    }
    let h = lab.hello();
    assert!(lab.send(addr(2), &h).is_empty(), "no state, no answer");
    let s = lab.ep.stats();
    assert_eq!((s.refused, s.connections), (1, 1));
    assert_eq!(lab.ep.connections_of(&addr(2)), 0);
    // The budget was spent on the stale items: the next newcomer finds the real one.
    let h = lab.hello();
    assert!(!lab.send(addr(3), &h).is_empty());
    assert_eq!(lab.ep.stats().evicted_half_open, 1);
}

#[test]
fn garbage_sprayed_at_an_idle_peer_does_not_keep_it_alive() {
    let mut lab = Lab::unlimited();
    let idle = lab.ep.config().idle_timeout_ns;
    lab.handshake(addr(1), None).expect("handshake");
    for _ in 0..4 {
        lab.advance(idle / 4);
        // Not a record of this connection: dropped, and no sign of life.
        lab.send(addr(1), &[0xE4, 0x00, 0x07, 0x00, 0x02, 0xAA, 0xBB]);
    }
    lab.advance(MS);
    assert_eq!(lab.ep.connections_of(&addr(1)), 0, "expired on time");
}

#[test]
fn a_datagram_that_is_not_a_client_hello_leaves_no_state_behind() {
    let mut lab = Lab::unlimited();
    // A record under a cipher spec the address never negotiated: dropped, no state.
    lab.send(addr(4), &[0xE4, 0x00, 0x07, 0x00, 0x02, 0xAA, 0xBB]);
    lab.send(addr(4), &FORGED_CCS);
    let s = lab.ep.stats();
    assert_eq!((s.connections, s.half_open, s.state_bytes), (0, 0, 0));
}

#[test]
fn behind_a_balancer_each_client_socket_has_a_budget_and_other_sources_keep_theirs() {
    let flight = {
        let mut lab = Lab::unlimited();
        let hello = lab.hello();
        lab.send(addr(1), &hello)
            .iter()
            .map(Vec::len)
            .sum::<usize>() as u64
    };
    assert!(flight > 0);
    // Room for two first flights and a half per budget: two clients whose sockets share a
    // bucket (4096 of them) still get theirs.
    let limit = ResponseLimit {
        address_bytes_per_s: flight * 5 / 2,
        prefix_bytes_per_s: flight * 5 / 2,
        burst_s: 1,
    };
    let balancer = addr(1).ip();
    let lab = || {
        Lab::new(EndpointConfig {
            response_limit: limit,
            balancer: Some(balancer),
            ..EndpointConfig::default()
        })
    };
    let answered = |lab: &mut Lab, sources: &[SocketAddr]| {
        sources
            .iter()
            .filter(|&&from| {
                let hello = lab.hello();
                !lab.send(from, &hello).is_empty()
            })
            .count()
    };
    let ports = |ip| (0..20u16).map(move |p| SocketAddr::new(ip, 40_000 + p));
    // Twenty clients behind the balancer, one socket each: all answered.
    let behind: Vec<SocketAddr> = ports(balancer).collect();
    assert_eq!(answered(&mut lab(), &behind), 20);
    // Twenty ports of one other address share its budget: two flights fit.
    let other: Vec<SocketAddr> = ports(addr(2).ip()).collect();
    assert_eq!(answered(&mut lab(), &other), 2);
    // One client socket behind the balancer is still bounded by its own budget.
    assert_eq!(answered(&mut lab(), &[behind[0]; 5]), 2);
}
