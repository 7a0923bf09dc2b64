//! DTLS 1.3 over a bearer's links in virtual time: the relay's model
//! (`wtlsperf_bearer::link`: per direction a FIFO bottleneck at the bearer's rate, then
//! the traversal, in order) at the profile's mean traversal, both wolfSSL sides on their
//! own timers. Without jitter and without CPU time, a handshake that sends on the link
//! what it sends in memory takes exactly Eq. 3.84 over its flights; a spurious ACK or
//! retransmission shows as datagrams and time beyond it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use wtlsperf_bearer::{FifoLink, LinkProfile};
use wtlsperf_models::transmission::{group_flights, link_ms, Flight};

use super::*;
use crate::protocols::run_in_memory;

/// A datagram on its way: (delivery ns, sending order, to the server, its bytes).
type InFlight = (u64, u64, bool, Vec<u8>);

/// Both directions of a virtual bearer and the datagrams crossing it.
struct VirtualBearer {
    /// Client to server, server to client.
    links: [FifoLink; 2],
    traversal: Duration,
    /// Earliest delivery first.
    due: BinaryHeap<Reverse<InFlight>>,
    sent: u64,
    /// Every datagram in sending order: (sent by the client, bytes).
    log: Vec<(bool, usize)>,
}

impl VirtualBearer {
    fn new(bearer: &LinkProfile) -> VirtualBearer {
        let overhead = bearer.per_datagram_overhead_bytes;
        VirtualBearer {
            links: [
                FifoLink::new(bearer.up_bps, overhead),
                FifoLink::new(bearer.down_bps, overhead),
            ],
            traversal: Duration::from_secs_f64(bearer.traversal.mean_ms() / 1e3),
            due: BinaryHeap::new(),
            sent: 0,
            log: Vec::new(),
        }
    }

    /// `datagrams` enter the client's (`up`) or the server's link at `at_ns`.
    fn send(&mut self, up: bool, at_ns: u64, datagrams: Vec<Vec<u8>>) {
        let link = &mut self.links[usize::from(!up)];
        for d in datagrams {
            let sent = link.transmit(Duration::from_nanos(at_ns), d.len(), self.traversal);
            let arrives = link.in_order(sent).deliver_at.as_nanos() as u64;
            self.log.push((up, d.len()));
            self.due.push(Reverse((arrives, self.sent, up, d)));
            self.sent += 1;
        }
    }
}

/// What one handshake over a virtual bearer did.
struct VirtualRun {
    /// Client start to client completion (ms).
    client_ms: f64,
    flights: Vec<Flight>,
}

/// One handshake of `cfg` over `bearer` in virtual time: deliveries before timers at
/// the same instant; panics if it fails or stalls.
fn over_virtual_bearer(cfg: &Dtls13Config, bearer: &LinkProfile) -> VirtualRun {
    let (mut client, mut server) = (cfg.client().unwrap(), cfg.server().unwrap());
    let mut net = VirtualBearer::new(bearer);
    let at = |ns: u64| Now::new(0, crate::setup::now().unix_secs).plus_ns(ns);
    server.start(at(0));
    net.send(true, 0, client.start(at(0)).datagrams);
    let mut client_done = None;
    for _ in 0..100_000 {
        let name = cfg.suite.name();
        assert!(
            !matches!(client.status(), Status::Failed(_))
                && !matches!(server.status(), Status::Failed(_)),
            "{name} over {}: {:?} / {:?}",
            bearer.name,
            client.status(),
            server.status()
        );
        if client.status().is_complete() && server.status().is_complete() {
            let flights = group_flights(net.log.iter().copied());
            let ns = client_done.expect("the client completed");
            return VirtualRun {
                client_ms: ns as f64 / 1e6,
                flights,
            };
        }
        let delivery = net.due.peek().map(|Reverse(d)| d.0);
        let timers = [client.deadline(), server.deadline()];
        let next = delivery
            .into_iter()
            .chain(timers.into_iter().flatten())
            .min();
        let Some(t) = next else {
            panic!("{name} over {}: stalled", bearer.name)
        };
        if delivery == Some(t) {
            let Some(Reverse((_, _, to_server, d))) = net.due.pop() else {
                unreachable!("peeked")
            };
            if to_server {
                let step = server.handle_datagram(&d, at(t));
                net.send(false, t, step.datagrams);
            } else {
                let step = client.handle_datagram(&d, at(t));
                net.send(true, t, step.datagrams);
            }
        } else if timers[0] == Some(t) {
            net.send(true, t, client.handle_timeout(at(t)).datagrams);
        } else {
            net.send(false, t, server.handle_timeout(at(t)).datagrams);
        }
        if client_done.is_none() && client.status().is_complete() {
            client_done = Some(t);
        }
    }
    panic!("{} over {}: no end", cfg.suite.name(), bearer.name)
}

/// The fully post-quantum handshakes over the slow bearers, where an ML-DSA flight takes
/// longer to cross than a quarter of the 9 s timer (RFC 7925's first timer, the bench's
/// default): no ACK of a partial flight and no retransmission, so the link carries the
/// flights of a lossless in-memory run at the bearer's payload limit, and the client
/// completes at Eq. 3.84 over them. (When the adapter armed wolfSSL's ACK timer only as
/// a flight left, the client ACKed the first records of the server's flight 2.25 s after
/// its second ClientHello and the server sent the rest of its flight again: thousands of
/// extra bytes on these links, and seconds.)
#[test]
fn ml_dsa_flights_cross_slow_bearers_without_a_partial_ack_at_eq_3_84() {
    let cert = |mutual| Credential::Certificate { mutual };
    let full = |mutual| {
        Dtls13Suite::new(cert(mutual), Group::MlKem768, false)
            .signed_with(Signature::MlDsa(MlDsa::MlDsa44))
    };
    let signature_alone = Dtls13Suite::new(cert(false), Group::P256, false)
        .signed_with(Signature::MlDsa(MlDsa::MlDsa44));
    let cases = [
        (full(false), "gprs-avg"),
        (full(false), "nb-iot"),
        (full(false), "gsm-csd"),
        (signature_alone, "gsm-csd"),
        (full(true), "nb-iot"),
        (full(true), "gsm-csd"),
    ];
    for (suite, name) in cases {
        let bearer = wtlsperf_bearer::profile(name).unwrap();
        let cfg = Dtls13Config::new(suite)
            .unwrap()
            .with_mtu(bearer.datagram_payload_limit());
        assert_eq!(cfg.initial_timer_s, RFC7925_INITIAL_TIMER_S);
        let memory = run_in_memory(cfg.client().unwrap(), || cfg.server())
            .unwrap()
            .flights();
        let run = over_virtual_bearer(&cfg, &bearer);
        let what = format!("{} over {name}", suite.name());
        assert_eq!(run.flights, memory, "{what}");
        let model = link_ms(&memory, &bearer.rates());
        assert!(
            (run.client_ms - model).abs() < 0.5,
            "{what}: {:.1} ms against Eq. 3.84's {model:.1} ms",
            run.client_ms
        );
    }
}
