//! The relay's model side in virtual time: datagrams enter [`Receiver::transmit`] at
//! instants the test chooses and the schedule is read off the delivery heap. No thread
//! runs and no clock is read for the outcome, so these tests decide the same way on an
//! idle machine and on one whose cores are all busy.

use super::super::*;
use crate::link::serialisation_time;
use crate::profile::{profile, DelayDistribution};

/// A relay's receive side without its threads.
struct Virtual {
    receiver: Receiver,
    epoch: Instant,
}

/// One scheduled delivery: when (after the epoch), which way, what.
type Scheduled = (Duration, Direction, Vec<u8>);

impl Virtual {
    fn new(profile: LinkProfile, seed: u64, options: RelayOptions) -> Virtual {
        let poll = Poll::new().unwrap();
        let mut listen = UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        poll.registry()
            .register(&mut listen, LISTEN_TOKEN, Interest::READABLE)
            .unwrap();
        let epoch = Instant::now();
        let receiver = Receiver {
            poll,
            listen: Arc::new(listen),
            // Never sent to: upstream sockets are only connected (no datagram leaves).
            upstream: "127.0.0.1:9".parse().unwrap(),
            profile,
            seed,
            options,
            shared: Arc::new(Shared::default()),
            epoch,
            slots: Vec::new(),
            by_addr: HashMap::new(),
            next_seq: 0,
            last_activity: epoch,
        };
        Virtual { receiver, epoch }
    }

    /// The address of emulated phone `n`.
    fn phone(n: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 40_000 + n))
    }

    /// `from` sends `payload` at `at` after the epoch, as `drain_clients` would hand it
    /// on. False if the relay refused the client (all links taken).
    fn send(&mut self, from: SocketAddr, payload: &[u8], at: Duration) -> bool {
        let Some(slot) = self.receiver.link_for(from) else {
            bump(&self.receiver.shared.clients_rejected, 1);
            return false;
        };
        self.receiver
            .transmit(slot, Direction::Up, payload, self.epoch + at);
        true
    }

    /// The gateway answers `to` with `payload` at `at`, as `drain_gateway` would.
    fn answer(&mut self, to: SocketAddr, payload: &[u8], at: Duration) {
        let slot = self.receiver.by_addr[&to];
        self.receiver
            .transmit(slot, Direction::Down, payload, self.epoch + at);
    }

    /// Everything scheduled, in the order the delivery thread sends it.
    fn schedule(&self) -> Vec<Scheduled> {
        let heap = self.receiver.shared.lock_queue();
        let mut due: Vec<&Due> = heap.iter().map(|Reverse(due)| due).collect();
        due.sort();
        due.iter()
            .map(|d| (d.at - self.epoch, d.direction, d.payload.to_vec()))
            .collect()
    }

    fn payloads(&self, direction: Direction) -> Vec<u8> {
        self.schedule()
            .into_iter()
            .filter(|(_, d, _)| *d == direction)
            .map(|(_, _, payload)| payload[0])
            .collect()
    }
}

/// Which of 40 numbered datagrams survive 50 % loss with `seed`, in virtual time.
pub(super) fn survivors(seed: u64) -> Vec<u8> {
    let mut relay = Virtual::new(
        LinkProfile::loopback().with_loss(0.5),
        seed,
        RelayOptions::default(),
    );
    for i in 0u8..40 {
        assert!(relay.send(Virtual::phone(0), &[i], Duration::from_millis(i.into())));
    }
    let stats = relay.receiver.shared.snapshot();
    let mut got = relay.payloads(Direction::Up);
    assert_eq!(stats.up.datagrams_in, 40);
    assert_eq!(stats.up.dropped + got.len() as u64, 40);
    got.sort_unstable();
    got
}

#[test]
fn impairments_are_reproducible_from_the_seed() {
    let first = survivors(99);
    assert!(!first.is_empty() && first.len() < 40, "{first:?}");
    assert_eq!(first, survivors(99));
    assert_ne!(first, survivors(100));
}

#[test]
fn certain_reordering_swaps_consecutive_pairs_in_each_direction() {
    let mut relay = Virtual::new(
        LinkProfile::loopback().with_reorder(1.0),
        5,
        RelayOptions::default(),
    );
    let phone = Virtual::phone(0);
    for i in 0u8..4 {
        relay.send(phone, &[i], Duration::from_millis(i.into()));
    }
    assert_eq!(relay.payloads(Direction::Up), vec![1, 0, 3, 2]);
    for (k, i) in [1u8, 0, 3, 2].into_iter().enumerate() {
        relay.answer(phone, &[i], Duration::from_millis(10 + k as u64));
    }
    // Swapped again on the way down, which restores the original order.
    assert_eq!(relay.payloads(Direction::Down), vec![0, 1, 2, 3]);
    let stats = relay.receiver.shared.snapshot();
    assert_eq!((stats.up.reordered, stats.down.reordered), (2, 2));
}

#[test]
fn one_clients_backlog_does_not_delay_another() {
    // At 16 kbit/s Alice's 5 x 1000-byte burst occupies her uplink for 2.57 s; Bob's
    // 10-byte datagram, sent 1 ms later, needs 19 ms on his own link.
    let profile = LinkProfile::loopback()
        .with_rates(16_000.0, 16_000.0)
        .with_overhead(28);
    let mut relay = Virtual::new(profile, 8, RelayOptions::default());
    let (alice, bob) = (Virtual::phone(1), Virtual::phone(2));
    for _ in 0..5 {
        relay.send(alice, &[b'a'; 1000], Duration::ZERO);
    }
    relay.send(bob, &[b'b'; 10], Duration::from_millis(1));
    let schedule = relay.schedule();
    let order: Vec<u8> = schedule.iter().map(|(_, _, p)| p[0]).collect();
    assert_eq!(order, b"baaaaa", "Bob queued behind Alice");
    let bob_due = Duration::from_millis(1) + serialisation_time(10, 28, 16_000.0);
    assert_eq!(schedule[0].0, bob_due);
    assert_eq!(schedule[5].0, serialisation_time(1000, 28, 16_000.0) * 5);
}

#[test]
fn gsm_csd_schedule_follows_the_rate() {
    // 10 x (120 + 28) bytes at 9600 bit/s, sent at once: the n-th leaves the link after
    // n serialisation times, the last at 1.233 s.
    let profile = profile("gsm-csd")
        .unwrap()
        .with_traversal(DelayDistribution::ZERO);
    let overhead = profile.per_datagram_overhead_bytes;
    let mut relay = Virtual::new(profile, 7, RelayOptions::default());
    for _ in 0..10 {
        relay.send(Virtual::phone(0), &[0x17; 120], Duration::ZERO);
    }
    let one = serialisation_time(120, overhead, 9600.0);
    let due: Vec<Duration> = relay.schedule().iter().map(|(at, _, _)| *at).collect();
    let expected: Vec<Duration> = (1..=10).map(|n| one * n).collect();
    assert_eq!(due, expected);
    assert!(due[9] > Duration::from_millis(1233));
}

#[test]
fn an_idle_client_frees_its_slot_and_only_then() {
    let idle = Duration::from_millis(300);
    let options = RelayOptions {
        max_clients: 1,
        idle_timeout: idle,
        ..RelayOptions::default()
    };
    let mut relay = Virtual::new(LinkProfile::loopback(), 13, options);
    let (first, second) = (Virtual::phone(1), Virtual::phone(2));
    assert!(relay.send(first, b"first", Duration::ZERO));
    assert!(!relay.send(second, b"second", Duration::from_millis(100)));
    // One nanosecond short of the idle timeout the first link is still there ...
    relay
        .receiver
        .forget_idle_clients(relay.epoch + idle - Duration::from_nanos(1));
    assert!(!relay.send(second, b"second", idle - Duration::from_nanos(1)));
    // ... and at the timeout it is forgotten, its slot (and poll token) reused.
    relay.receiver.forget_idle_clients(relay.epoch + idle);
    assert!(relay.send(second, b"second", idle));
    assert_eq!(relay.receiver.by_addr.get(&second), Some(&0));
    assert!(!relay.receiver.by_addr.contains_key(&first));
    let stats = relay.receiver.shared.snapshot();
    assert_eq!((stats.clients_admitted, stats.clients_rejected), (2, 2));
}

#[test]
fn a_held_datagram_keeps_its_link_alive_until_released() {
    let idle = Duration::from_millis(100);
    let options = RelayOptions {
        idle_timeout: idle,
        reorder_hold: Duration::from_millis(500),
        ..RelayOptions::default()
    };
    let mut relay = Virtual::new(LinkProfile::loopback().with_reorder(1.0), 6, options);
    let phone = Virtual::phone(0);
    relay.send(phone, b"alone", Duration::ZERO);
    assert!(relay.schedule().is_empty(), "held, not scheduled");
    // Past the idle timeout but within the hold: the link stays.
    relay.receiver.forget_idle_clients(relay.epoch + idle * 2);
    assert!(relay.receiver.by_addr.contains_key(&phone));
    // The hold ends: released at its own modelled time (no successor overtook it).
    relay
        .receiver
        .release_expired_holds(relay.epoch + Duration::from_millis(500));
    assert_eq!(relay.payloads(Direction::Up), b"alone"[..1].to_vec());
    assert_eq!(relay.schedule()[0].0, Duration::ZERO);
    relay
        .receiver
        .forget_idle_clients(relay.epoch + Duration::from_millis(500));
    assert!(!relay.receiver.by_addr.contains_key(&phone));
}

/// A multi-datagram flight over a jittery profile: the in-order delay line delivers it in
/// the order it was sent, each datagram no earlier than its own draw allows; with the
/// delay line unordered (the emulator before `RelayOptions::in_order`) the same seed
/// delivers it reordered, and the counter says how many draws would have overtaken.
#[test]
fn jitter_delays_a_flight_but_never_reorders_it_unless_asked() {
    // NB-IoT's traversal (log-normal 800 +/- 400 ms) at a fast rate: draws 1 ms apart.
    let jittery = LinkProfile::loopback().with_traversal(DelayDistribution::LogNormal {
        mean_ms: 800.0,
        sd_ms: 400.0,
    });
    let flight = |in_order: bool| {
        let options = RelayOptions {
            in_order,
            ..RelayOptions::default()
        };
        let mut relay = Virtual::new(jittery.clone(), 7, options);
        for i in 0u8..12 {
            assert!(relay.send(Virtual::phone(0), &[i], Duration::from_millis(i.into())));
        }
        let stats = relay.receiver.shared.snapshot();
        (
            relay.payloads(Direction::Up),
            relay.schedule(),
            stats.up.held_for_order,
        )
    };
    let (ordered, schedule, held) = flight(true);
    assert_eq!(ordered, (0u8..12).collect::<Vec<_>>());
    assert!(schedule.windows(2).all(|w| w[0].0 <= w[1].0));
    let (unordered, _, held_unordered) = flight(false);
    assert_ne!(unordered, ordered, "seed 7 draws overtaking delays");
    // Both runs draw the same delays: the counter is the same, and positive.
    assert_eq!(held, held_unordered);
    assert!(held > 0);
}
