//! The response limiter as a gateway's workers share it, in virtual time: two endpoints
//! (the workers a kernel's port hash would pick between) hold one
//! [`ResponseLimiter`]; clients and forgers come from many ports of one address.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::*;
use crate::endpoint::limiter::CREDIT_PER_HANDSHAKE;

/// Client CAs the server names in its CertificateRequest.
const CLIENT_CAS: usize = 8;

/// The fixture's server, asking for an optional client certificate as the default
/// gateway does, from [`CLIENT_CAS`] authorities, with a session cache.
fn gateway_like_server() -> ServerConfig {
    static CAS: OnceLock<
        Vec<(
            crate::suite::Specifier,
            crate::msgs::certificate::WtlsCertificate,
        )>,
    > = OnceLock::new();
    let mut server = fixture().server.clone();
    server.session_cache = Some(Arc::new(Mutex::new(SessionCache::new(1024, u64::MAX))));
    server.thesis_certificate_request = true;
    server.trusted_client_cas = CAS
        .get_or_init(|| {
            let case = Case::parse("160p/160p").expect("case");
            (0..CLIENT_CAS)
                .map(|k| {
                    let name = format!("client CA {k}");
                    let ca = Authority::new_root(case.ca, &name, UNIX_NOW - 3600, UNIX_NOW + 3600)
                        .expect("CA");
                    (case.ca, ca.cert)
                })
                .collect()
        })
        .clone();
    server
}

/// The default budgets, the default idle time-out as the proof lifetime.
fn shared_limiter() -> Arc<ResponseLimiter> {
    let config = EndpointConfig::default();
    Arc::new(ResponseLimiter::new(
        config.response_limit,
        config.idle_timeout_ns,
    ))
}

/// Two workers' endpoints and a shared virtual clock.
struct Workers {
    eps: [Endpoint; 2],
    t: u64,
    out: Handled,
}

impl Workers {
    /// Two endpoints with `limiters[0]` and `limiters[1]` (the same one, or one each).
    /// Their first flight is the size of the default gateway's (about 1.2 KB): it asks
    /// for an optional client certificate from any of [`CLIENT_CAS`] authorities.
    fn new(limiters: [Arc<ResponseLimiter>; 2]) -> Workers {
        let server = Arc::new(gateway_like_server());
        let [a, b] = limiters;
        let make = |l| Endpoint::with_limiter(server.clone(), EndpointConfig::default(), l);
        Workers {
            eps: [make(a), make(b)],
            t: S,
            out: Handled::default(),
        }
    }

    fn shared() -> Workers {
        let l = shared_limiter();
        Workers::new([l.clone(), l])
    }

    fn now(&self) -> Now {
        Now::new(self.t, UNIX_NOW)
    }

    /// The worker a port reaches (the kernel hashes the 4-tuple; any fixed split will do).
    fn worker(from: SocketAddr) -> usize {
        usize::from(from.port()) % 2
    }

    /// One datagram from `from`; what went back to it.
    fn send(&mut self, from: SocketAddr, d: &[u8]) -> Vec<Vec<u8>> {
        let now = self.now();
        self.eps[Self::worker(from)].handle(now, from, d, &mut self.out);
        assert!(self.out.transmits.iter().all(|t| t.destination == from));
        self.out.transmits.drain(..).map(|t| t.payload).collect()
    }

    fn advance(&mut self, ns: u64) {
        self.t += ns;
        for ep in &mut self.eps {
            ep.handle_timeout(self.t);
        }
    }

    fn total(&self, f: impl Fn(&EndpointStats) -> u64) -> u64 {
        self.eps.iter().map(|ep| f(ep.stats())).sum()
    }

    fn hello(&self) -> Vec<u8> {
        Client::new(
            fixture().client.clone(),
            AuthMode::ServerAuth,
            None,
            Probe::off(),
            self.now(),
        )
        .start(self.now())
        .expect("hello")
        .datagrams
        .swap_remove(0)
    }

    /// `n` forged fresh ClientHellos with `victim`'s address, one every `gap_ns`, each
    /// from another port; (bytes the gateway received, bytes it sent toward the victim).
    fn forge(&mut self, victim: IpAddr, n: u16, gap_ns: u64) -> (u64, u64) {
        let (mut received, mut reflected) = (0, 0);
        for k in 0..n {
            let hello = self.hello();
            received += hello.len() as u64;
            let from = SocketAddr::new(victim, 20_000 + k);
            reflected += self
                .send(from, &hello)
                .iter()
                .map(|d| d.len() as u64)
                .sum::<u64>();
            self.advance(gap_ns);
        }
        (received, reflected)
    }
}

/// The default budget's bound on what reaches one address in `seconds`: its burst and
/// its rate.
fn address_bound(seconds: u64) -> u64 {
    let l = ResponseLimit::default();
    l.address_bytes_per_s * (l.burst_s + seconds)
}

/// A datagram in flight on the virtual link: (arrival, sequence, client, toward the
/// gateway, payload).
type Delivery = Reverse<(u64, u64, usize, bool, Vec<u8>)>;

#[test]
fn two_hundred_clients_behind_one_address_are_never_throttled() {
    // A carrier-grade NAT: 200 handsets behind one address, a new one every 50 ms
    // (20 handshakes a second), each from its own port, over a link of 150 ms each way,
    // so that a dozen handshakes are under way at once, spread over both workers.
    const CLIENTS: usize = 200;
    const GAP: u64 = 50 * MS;
    const ONE_WAY: u64 = 150 * MS;
    let nat = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 7));
    let mut w = Workers::shared();
    let mut clients = Vec::new();
    let mut link: BinaryHeap<Delivery> = BinaryHeap::new();
    let mut seq = 0u64;
    let start = w.t;
    for k in 0..CLIENTS {
        let mut c = Client::new(
            fixture().client.clone(),
            AuthMode::ServerAuth,
            None,
            Probe::off(),
            Now::new(start + k as u64 * GAP, UNIX_NOW),
        );
        let at = start + k as u64 * GAP;
        for d in c.start(Now::new(at, UNIX_NOW)).expect("hello").datagrams {
            link.push(Reverse((at + ONE_WAY, seq, k, true, d)));
            seq += 1;
        }
        clients.push(c);
    }
    let port = |k: usize| SocketAddr::new(nat, 30_000 + k as u16);
    let mut flights_in = 0u64;
    while let Some(Reverse((at, _, k, to_gateway, d))) = link.pop() {
        w.advance(at - w.t);
        let replies = if to_gateway {
            w.send(port(k), &d)
        } else {
            flights_in += 1;
            clients[k].handle_datagram(&d, w.now()).datagrams
        };
        for r in replies {
            link.push(Reverse((w.t + ONE_WAY, seq, k, !to_gateway, r)));
            seq += 1;
        }
    }
    let established = clients.iter().filter(|c| c.is_established()).count();
    assert_eq!(established, CLIENTS);
    assert_eq!(w.total(|s| s.handshakes_completed()), CLIENTS as u64);
    // Not one answer held back: no client waited for a retransmission.
    assert_eq!(w.total(|s| s.rate_limited), 0);
    // Both workers served, and what they sent unverified is far beyond the address's
    // budget over the run: the credit the address earned paid for it.
    assert!(w.eps.iter().all(|ep| ep.stats().handshakes_completed() > 0));
    let unverified = w.total(|s| s.bytes_sent_unverified);
    let seconds = (w.t - start).div_ceil(S);
    assert!(
        unverified > address_bound(seconds),
        "{unverified} B unverified in {seconds} s"
    );
    assert!(flights_in >= 2 * CLIENTS as u64);
}

#[test]
fn a_forger_varying_its_port_meets_one_budget_across_workers() {
    // 100 forged ClientHellos a second for 10 s toward an address that never completed
    // a handshake, every one from another port, so both workers answer some.
    let victim = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 9));
    let mut shared = Workers::shared();
    let (received, reflected) = shared.forge(victim, 1000, 10 * MS);
    assert!(shared.eps.iter().all(|ep| ep.stats().rate_limited > 0));
    assert!(
        reflected <= address_bound(10),
        "{reflected} B reflected by two workers sharing a limiter"
    );
    // Amplification factor at most 1 at this rate: the victim gets no more than the
    // forger sent.
    assert!(reflected <= received, "{reflected} B for {received} B");
    // With a limiter per worker, the forger reaches two budgets.
    let mut apart = Workers::new([shared_limiter(), shared_limiter()]);
    let (_, reflected_apart) = apart.forge(victim, 1000, 10 * MS);
    assert!(
        reflected_apart > address_bound(10),
        "{reflected_apart} B reflected by two workers with a limiter each"
    );
}

#[test]
fn spoofing_a_proven_address_reflects_no_more_than_the_credit_it_earned() {
    let victim = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 77));
    let mut w = Workers::shared();
    // The victim completes five handshakes from five ports, then goes quiet.
    const COMPLETED: u64 = 5;
    for k in 0..COMPLETED as u16 {
        let from = SocketAddr::new(victim, 40_000 + k);
        let mut c = Client::new(
            fixture().client.clone(),
            AuthMode::ServerAuth,
            None,
            Probe::off(),
            w.now(),
        );
        let mut to_gateway = c.start(w.now()).expect("hello").datagrams;
        while !to_gateway.is_empty() {
            let back: Vec<Vec<u8>> = to_gateway.iter().flat_map(|d| w.send(from, d)).collect();
            to_gateway = back
                .iter()
                .flat_map(|d| c.handle_datagram(d, w.now()).datagrams)
                .collect();
        }
        assert!(c.is_established());
    }
    // Each completion earned credit; the flights of the later ones were paid from it.
    let earned = w.eps[0].limiter().credit(victim, w.t);
    assert!(earned > (COMPLETED - 1) * CREDIT_PER_HANDSHAKE, "{earned}");
    // Then a forger spoofs it for 10 s, from port after port.
    let (_, reflected) = w.forge(victim, 1000, 10 * MS);
    assert!(
        reflected <= address_bound(10) + earned,
        "{reflected} B reflected toward an address that earned {earned} B of credit"
    );
    assert!(w.total(|s| s.rate_limited) > 0);
}
