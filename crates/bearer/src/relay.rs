//! The UDP relay that makes a [`LinkProfile`] happen in real time.
//!
//! ```text
//!  client A ──► listen socket ──► [A's up link] ──► A's upstream socket ──► gateway
//!  client A ◄── listen socket ◄── [A's down link] ◄─ A's upstream socket ◄── gateway
//! ```
//!
//! Every client address seen on the listen socket is its own emulated link: its own FIFO
//! state per direction (so one client's backlog never delays another's), its own seeded
//! random streams, and its own upstream socket, so the gateway sees a distinct source
//! address per emulated phone and its replies route back to the right client.
//!
//! Two threads per relay:
//! * the receive thread waits on all sockets with `mio`, timestamps each datagram the moment
//!   it is read, applies the model of [`crate::link`] and the impairments, and pushes the
//!   resulting deliveries on a shared heap;
//! * the delivery thread sleeps on a condition variable until [`SPIN_WINDOW`] before the
//!   earliest due delivery, then yields in a loop until the due instant, sends, and records
//!   how late it was (the scheduling lateness reported in [`LinkStats`]).
//!
//! Bounds: at most [`RelayOptions::max_clients`] emulated links at once (each holds a
//! socket); datagrams from further clients are dropped and counted. A client link idle for
//! [`RelayOptions::idle_timeout`] is forgotten, and the relay stops by itself once nothing
//! has arrived for that long and nothing is pending. It also stops on
//! [`RelayHandle::shutdown`] or when the handle is dropped.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token, Waker};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use crate::link::FifoLink;
use crate::profile::LinkProfile;

/// How long before a due delivery the delivery thread stops sleeping and starts yielding:
/// Linux wakes sleepers up to ~50-100 µs late (timer slack plus scheduling), so the last
/// stretch is waited for actively.
pub const SPIN_WINDOW: Duration = Duration::from_micros(200);

/// How often an idle relay with deliveries still pending checks again whether it may stop.
const IDLE_RECHECK: Duration = Duration::from_millis(50);

/// Largest UDP payload.
const MAX_DATAGRAM: usize = 65_535;

const LISTEN_TOKEN: Token = Token(0);
const WAKER_TOKEN: Token = Token(1);
/// Client links use tokens from here on: token = FIRST_CLIENT_TOKEN + slot index.
const FIRST_CLIENT_TOKEN: usize = 2;

/// Limits of one relay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayOptions {
    /// A client link with no traffic for this long is forgotten; the relay stops when no
    /// datagram at all arrived for this long and no delivery is pending. Default 60 s.
    pub idle_timeout: Duration,
    /// Most client links served at once; datagrams from further client addresses are
    /// dropped and counted in [`LinkStats::clients_rejected`]. Default 256.
    pub max_clients: usize,
    /// How long a datagram chosen for reordering waits for a successor to overtake it before
    /// it is released anyway (counted as delivered in order), measured from its own modelled
    /// delivery time. Without this bound a lone handshake flight could be held forever.
    /// Default 200 ms.
    pub reorder_hold: Duration,
    /// Whether each direction's delay line keeps the order datagrams entered it in
    /// ([`crate::link`]: cellular and circuit-switched bearers deliver in sequence).
    /// Default true; false lets every datagram's own traversal draw decide its delivery,
    /// so jitter reorders (the emulator before this option, kept to measure what that
    /// did). Either way [`DirectionStats::held_for_order`] counts the datagrams whose
    /// draw would have overtaken an earlier one.
    pub in_order: bool,
}

impl Default for RelayOptions {
    fn default() -> Self {
        RelayOptions {
            idle_timeout: Duration::from_secs(60),
            max_clients: 256,
            reorder_hold: Duration::from_millis(200),
            in_order: true,
        }
    }
}

/// Counters of one direction (summed over all client links of a relay).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Datagrams that entered the emulated link.
    pub datagrams_in: u64,
    /// Payload bytes that entered the emulated link.
    pub bytes_in: u64,
    /// Datagrams handed to the far end (duplicates included).
    pub datagrams_delivered: u64,
    /// Payload bytes handed to the far end (duplicates included).
    pub bytes_delivered: u64,
    /// Datagrams lost by the `loss` impairment.
    pub dropped: u64,
    /// Extra copies created by the `duplicate` impairment.
    pub duplicated: u64,
    /// Datagrams that were overtaken by their successor (the `reorder` impairment).
    pub reordered: u64,
    /// Datagrams whose own traversal draw would have delivered them before their
    /// predecessor, held behind it by the in-order delay line
    /// ([`crate::link::FifoLink::in_order`]).
    pub held_for_order: u64,
    /// Deliveries the operating system refused (e.g. full socket buffer).
    pub send_errors: u64,
}

/// A snapshot of a relay's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkStats {
    /// Client → gateway.
    pub up: DirectionStats,
    /// Gateway → client.
    pub down: DirectionStats,
    /// Client links opened so far.
    pub clients_admitted: u64,
    /// Datagrams refused because [`RelayOptions::max_clients`] links were open.
    pub clients_rejected: u64,
    /// Mean of (actual send instant − modelled delivery instant) over all deliveries, µs.
    pub mean_lateness_us: f64,
    /// Largest such lateness, µs.
    pub max_lateness_us: f64,
}

#[derive(Default)]
struct DirectionCounters {
    datagrams_in: AtomicU64,
    bytes_in: AtomicU64,
    datagrams_delivered: AtomicU64,
    bytes_delivered: AtomicU64,
    dropped: AtomicU64,
    duplicated: AtomicU64,
    reordered: AtomicU64,
    held_for_order: AtomicU64,
    send_errors: AtomicU64,
}

impl DirectionCounters {
    fn snapshot(&self) -> DirectionStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        DirectionStats {
            datagrams_in: get(&self.datagrams_in),
            bytes_in: get(&self.bytes_in),
            datagrams_delivered: get(&self.datagrams_delivered),
            bytes_delivered: get(&self.bytes_delivered),
            dropped: get(&self.dropped),
            duplicated: get(&self.duplicated),
            reordered: get(&self.reordered),
            held_for_order: get(&self.held_for_order),
            send_errors: get(&self.send_errors),
        }
    }
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// Which way a datagram travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
}

/// Where a due datagram goes.
#[derive(Clone)]
enum Target {
    /// Through the client's connected upstream socket to the gateway.
    Gateway(Arc<UdpSocket>),
    /// Through the listen socket back to the client.
    Client(Arc<UdpSocket>, SocketAddr),
}

/// One scheduled delivery; ordered by due instant, then by scheduling order so that
/// datagrams due at the same instant leave in the order they were scheduled.
struct Due {
    at: Instant,
    seq: u64,
    direction: Direction,
    payload: Arc<[u8]>,
    target: Target,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// State shared by the handle and the two threads.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    queue: Mutex<BinaryHeap<Reverse<Due>>>,
    queue_changed: Condvar,
    up: DirectionCounters,
    down: DirectionCounters,
    clients_admitted: AtomicU64,
    clients_rejected: AtomicU64,
    lateness_sum_ns: AtomicU64,
    lateness_count: AtomicU64,
    lateness_max_ns: AtomicU64,
}

impl Shared {
    fn counters(&self, direction: Direction) -> &DirectionCounters {
        match direction {
            Direction::Up => &self.up,
            Direction::Down => &self.down,
        }
    }

    fn lock_queue(&self) -> MutexGuard<'_, BinaryHeap<Reverse<Due>>> {
        // A panic in the other thread must not turn into a second one here; the heap is
        // consistent between operations.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        // Taking the lock orders the store before the delivery thread's next check.
        drop(self.lock_queue());
        self.queue_changed.notify_all();
    }

    fn snapshot(&self) -> LinkStats {
        let count = self.lateness_count.load(Ordering::Relaxed);
        let sum = self.lateness_sum_ns.load(Ordering::Relaxed);
        LinkStats {
            up: self.up.snapshot(),
            down: self.down.snapshot(),
            clients_admitted: self.clients_admitted.load(Ordering::Relaxed),
            clients_rejected: self.clients_rejected.load(Ordering::Relaxed),
            mean_lateness_us: if count == 0 {
                0.0
            } else {
                sum as f64 / count as f64 / 1000.0
            },
            max_lateness_us: self.lateness_max_ns.load(Ordering::Relaxed) as f64 / 1000.0,
        }
    }
}

/// Entry point: starts relays.
#[derive(Debug)]
pub struct Relay;

impl Relay {
    /// Starts a relay listening on `listen` (e.g. `127.0.0.1:0`) that forwards every client
    /// to `upstream` through the emulated `profile`, with default [`RelayOptions`].
    /// `seed` makes loss, duplication, reordering and delay draws reproducible.
    pub fn start(
        listen: SocketAddr,
        upstream: SocketAddr,
        profile: LinkProfile,
        seed: u64,
    ) -> io::Result<RelayHandle> {
        Relay::start_with_options(listen, upstream, profile, seed, RelayOptions::default())
    }

    /// [`Relay::start`] with explicit limits.
    pub fn start_with_options(
        listen: SocketAddr,
        upstream: SocketAddr,
        profile: LinkProfile,
        seed: u64,
        options: RelayOptions,
    ) -> io::Result<RelayHandle> {
        profile.validate()?;
        if options.max_clients == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "RelayOptions::max_clients must be at least 1",
            ));
        }
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER_TOKEN)?);
        let mut listen_socket = UdpSocket::bind(listen)?;
        let local_addr = listen_socket.local_addr()?;
        poll.registry()
            .register(&mut listen_socket, LISTEN_TOKEN, Interest::READABLE)?;
        let shared = Arc::new(Shared::default());

        let deliverer = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name(format!("bearer-tx-{}", local_addr.port()))
                .spawn(move || deliver_loop(&shared))?
        };
        let receiver = {
            let receiver = Receiver {
                poll,
                listen: Arc::new(listen_socket),
                upstream,
                profile,
                seed,
                options,
                shared: Arc::clone(&shared),
                epoch: Instant::now(),
                slots: Vec::new(),
                by_addr: HashMap::new(),
                next_seq: 0,
                last_activity: Instant::now(),
            };
            let spawned = thread::Builder::new()
                .name(format!("bearer-rx-{}", local_addr.port()))
                .spawn(move || receiver.run());
            match spawned {
                Ok(handle) => handle,
                Err(err) => {
                    shared.request_stop();
                    let _ = deliverer.join();
                    return Err(err);
                }
            }
        };
        Ok(RelayHandle {
            local_addr,
            shared,
            waker,
            threads: vec![receiver, deliverer],
        })
    }
}

/// A running relay. Dropping it shuts the relay down.
pub struct RelayHandle {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    waker: Arc<Waker>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for RelayHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayHandle")
            .field("local_addr", &self.local_addr)
            .field("running", &self.is_running())
            .finish()
    }
}

impl RelayHandle {
    /// The address clients send to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> LinkStats {
        self.shared.snapshot()
    }

    /// False once the relay stopped (shutdown or idle timeout).
    pub fn is_running(&self) -> bool {
        !self.shared.stop.load(Ordering::SeqCst)
    }

    /// Stops both threads and waits for them; pending deliveries are discarded.
    pub fn shutdown(&mut self) {
        self.shared.request_stop();
        // If the receive thread already exited the waker has nothing to wake; harmless.
        let _ = self.waker.wake();
        for handle in self.threads.drain(..) {
            if handle.join().is_err() {
                tracing::error!(relay = %self.local_addr, "bearer relay thread panicked");
            }
        }
    }
}

impl Drop for RelayHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A datagram chosen for reordering, waiting for its successor.
struct Held {
    payload: Arc<[u8]>,
    deliver_at: Duration,
    duplicate: bool,
    release_at: Instant,
}

/// Model state of one direction of one client link.
struct DirectionState {
    fifo: FifoLink,
    rng: Xoshiro256PlusPlus,
    held: Option<Held>,
}

/// One emulated client link.
struct ClientLink {
    client: SocketAddr,
    upstream: Arc<UdpSocket>,
    up: DirectionState,
    down: DirectionState,
    last_activity: Instant,
}

/// The receive side: owns the poll, the model state and the client table.
struct Receiver {
    poll: Poll,
    listen: Arc<UdpSocket>,
    upstream: SocketAddr,
    profile: LinkProfile,
    seed: u64,
    options: RelayOptions,
    shared: Arc<Shared>,
    epoch: Instant,
    /// Client links by slot; a slot's token is FIRST_CLIENT_TOKEN + index.
    slots: Vec<Option<ClientLink>>,
    by_addr: HashMap<SocketAddr, usize>,
    next_seq: u64,
    last_activity: Instant,
}

/// Seed of the random stream of one direction of one client link: each stream depends
/// only on the relay seed, the order in which the client first appeared and the direction,
/// never on how the two directions' traffic interleaves.
fn stream_seed(seed: u64, client_ordinal: u64, direction: Direction) -> u64 {
    let lane = client_ordinal * 2 + u64::from(direction == Direction::Down);
    seed ^ lane.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Receiver {
    fn run(mut self) {
        let mut events = Events::with_capacity(256);
        let mut buf = vec![0u8; MAX_DATAGRAM];
        while !self.shared.stop.load(Ordering::SeqCst) {
            let timeout = self.next_timer().saturating_duration_since(Instant::now());
            if let Err(err) = self.poll.poll(&mut events, Some(timeout)) {
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                tracing::error!(%err, "bearer relay poll failed; stopping");
                break;
            }
            for event in events.iter() {
                match event.token() {
                    WAKER_TOKEN => {}
                    LISTEN_TOKEN => self.drain_clients(&mut buf),
                    Token(t) => self.drain_gateway(t - FIRST_CLIENT_TOKEN, &mut buf),
                }
            }
            let now = Instant::now();
            self.release_expired_holds(now);
            self.forget_idle_clients(now);
            if now.duration_since(self.last_activity) >= self.options.idle_timeout
                && !self.holds_any()
                && self.shared.lock_queue().is_empty()
            {
                tracing::debug!("bearer relay idle; stopping");
                break;
            }
        }
        self.shared.request_stop();
    }

    /// Whether some link still holds a datagram back for reordering.
    fn holds_any(&self) -> bool {
        self.slots
            .iter()
            .flatten()
            .any(|link| link.up.held.is_some() || link.down.held.is_some())
    }

    /// The earliest instant the receive loop must wake without socket activity. Deadlines
    /// already past (relay idle but deliveries still pending) are rechecked every
    /// [`IDLE_RECHECK`] rather than turning the loop into a busy wait.
    fn next_timer(&self) -> Instant {
        let now = Instant::now();
        let recheck = now + IDLE_RECHECK;
        let not_past = |deadline: Instant| if deadline <= now { recheck } else { deadline };
        let mut next = not_past(self.last_activity + self.options.idle_timeout);
        for link in self.slots.iter().flatten() {
            let mut held = false;
            for state in [&link.up, &link.down] {
                if let Some(h) = &state.held {
                    held = true;
                    next = next.min(h.release_at);
                }
            }
            // A link with a held datagram is not forgotten before the hold is released.
            if !held {
                next = next.min(not_past(link.last_activity + self.options.idle_timeout));
            }
        }
        next
    }

    /// Reads every datagram waiting on the listen socket (mio is edge-triggered).
    fn drain_clients(&mut self, buf: &mut [u8]) {
        loop {
            match self.listen.recv_from(buf) {
                Ok((len, client)) => {
                    let arrival = Instant::now();
                    self.last_activity = arrival;
                    let Some(slot) = self.link_for(client) else {
                        bump(&self.shared.clients_rejected, 1);
                        continue;
                    };
                    self.transmit(slot, Direction::Up, &buf[..len], arrival);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                Err(err) if transient(&err) => continue,
                Err(err) => {
                    tracing::warn!(%err, "bearer relay: receive from clients failed");
                    return;
                }
            }
        }
    }

    /// Reads every datagram the gateway sent to one client's upstream socket.
    fn drain_gateway(&mut self, slot: usize, buf: &mut [u8]) {
        loop {
            let Some(Some(link)) = self.slots.get(slot) else {
                return;
            };
            match link.upstream.recv(buf) {
                Ok(len) => {
                    let arrival = Instant::now();
                    self.last_activity = arrival;
                    self.transmit(slot, Direction::Down, &buf[..len], arrival);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                // A connected UDP socket reports an earlier ICMP port-unreachable here
                // (gateway not up yet); that loses nothing the model should know about.
                Err(err) if transient(&err) => continue,
                Err(err) => {
                    tracing::warn!(%err, "bearer relay: receive from gateway failed");
                    return;
                }
            }
        }
    }

    /// The slot of `client`'s link, opening one if there is room.
    fn link_for(&mut self, client: SocketAddr) -> Option<usize> {
        if let Some(&slot) = self.by_addr.get(&client) {
            return Some(slot);
        }
        if self.by_addr.len() >= self.options.max_clients {
            return None;
        }
        match self.open_link(client) {
            Ok(slot) => Some(slot),
            Err(err) => {
                tracing::warn!(%err, %client, "bearer relay: cannot open upstream socket");
                None
            }
        }
    }

    fn open_link(&mut self, client: SocketAddr) -> io::Result<usize> {
        let any: SocketAddr = if self.upstream.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let mut socket = match upstream_source(self.upstream) {
            Some(own) => UdpSocket::bind(own).or_else(|_| UdpSocket::bind(any))?,
            None => UdpSocket::bind(any)?,
        };
        socket.connect(self.upstream)?;
        let slot = match self.slots.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        self.poll.registry().register(
            &mut socket,
            Token(FIRST_CLIENT_TOKEN + slot),
            Interest::READABLE,
        )?;
        let ordinal = self.shared.clients_admitted.fetch_add(1, Ordering::Relaxed);
        let direction_state = |direction: Direction, rate_bps: f64| DirectionState {
            fifo: FifoLink::new(rate_bps, self.profile.per_datagram_overhead_bytes),
            rng: Xoshiro256PlusPlus::seed_from_u64(stream_seed(self.seed, ordinal, direction)),
            held: None,
        };
        self.slots[slot] = Some(ClientLink {
            client,
            upstream: Arc::new(socket),
            up: direction_state(Direction::Up, self.profile.up_bps),
            down: direction_state(Direction::Down, self.profile.down_bps),
            last_activity: Instant::now(),
        });
        self.by_addr.insert(client, slot);
        Ok(slot)
    }

    /// Runs one datagram through its link's model and impairments and schedules what comes
    /// out. Every datagram consumes the same four random draws (traversal, loss,
    /// duplication, reordering) whatever happens to it, so one impairment's outcome never
    /// shifts another's random stream.
    fn transmit(&mut self, slot: usize, direction: Direction, payload: &[u8], arrival: Instant) {
        let Some(Some(link)) = self.slots.get_mut(slot) else {
            return;
        };
        link.last_activity = arrival;
        let target = match direction {
            Direction::Up => Target::Gateway(Arc::clone(&link.upstream)),
            Direction::Down => Target::Client(Arc::clone(&self.listen), link.client),
        };
        let state = match direction {
            Direction::Up => &mut link.up,
            Direction::Down => &mut link.down,
        };
        let traversal = self.profile.traversal.sample(&mut state.rng);
        let lose = state.rng.random::<f64>() < self.profile.loss;
        let duplicate = state.rng.random::<f64>() < self.profile.duplicate;
        let hold = state.rng.random::<f64>() < self.profile.reorder;
        // Loss happens after the datagram occupied the bottleneck, as a radio loss would.
        let delivery = state.fifo.transmit(
            arrival.saturating_duration_since(self.epoch),
            payload.len(),
            traversal,
        );
        let shared = Arc::clone(&self.shared);
        let counters = shared.counters(direction);
        bump(&counters.datagrams_in, 1);
        bump(&counters.bytes_in, payload.len() as u64);
        if lose {
            bump(&counters.dropped, 1);
            return;
        }
        let ordered = state.fifo.in_order(delivery);
        if ordered.held_for_order > Duration::ZERO {
            bump(&counters.held_for_order, 1);
        }
        let delivery = if self.options.in_order {
            ordered
        } else {
            delivery
        };
        let payload: Arc<[u8]> = Arc::from(payload);
        let mut due = Vec::with_capacity(4);
        match state.held.take() {
            // This datagram overtakes the held one, which follows right behind it.
            Some(held) => {
                bump(&counters.reordered, 1);
                due.push((delivery.deliver_at, payload, duplicate));
                let after = held.deliver_at.max(delivery.deliver_at);
                due.push((after, held.payload, held.duplicate));
            }
            None if hold => {
                state.held = Some(Held {
                    release_at: self.epoch + delivery.deliver_at + self.options.reorder_hold,
                    payload,
                    deliver_at: delivery.deliver_at,
                    duplicate,
                });
            }
            None => due.push((delivery.deliver_at, payload, duplicate)),
        }
        for (at, payload, duplicate) in due {
            let copies = if duplicate { 2 } else { 1 };
            if duplicate {
                bump(&counters.duplicated, 1);
            }
            for _ in 0..copies {
                self.schedule(
                    self.epoch + at,
                    direction,
                    Arc::clone(&payload),
                    target.clone(),
                );
            }
        }
    }

    fn schedule(&mut self, at: Instant, direction: Direction, payload: Arc<[u8]>, target: Target) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.shared.lock_queue().push(Reverse(Due {
            at,
            seq,
            direction,
            payload,
            target,
        }));
        self.shared.queue_changed.notify_one();
    }

    /// Releases held datagrams whose successor never came, at their own modelled time.
    fn release_expired_holds(&mut self, now: Instant) {
        let mut released = Vec::new();
        for link in self.slots.iter_mut().flatten() {
            for (direction, state) in [
                (Direction::Up, &mut link.up),
                (Direction::Down, &mut link.down),
            ] {
                if state.held.as_ref().is_some_and(|h| h.release_at <= now) {
                    if let Some(held) = state.held.take() {
                        let target = match direction {
                            Direction::Up => Target::Gateway(Arc::clone(&link.upstream)),
                            Direction::Down => {
                                Target::Client(Arc::clone(&self.listen), link.client)
                            }
                        };
                        released.push((direction, held, target));
                    }
                }
            }
        }
        for (direction, held, target) in released {
            let at = self.epoch + held.deliver_at;
            if held.duplicate {
                bump(&self.shared.counters(direction).duplicated, 1);
                self.schedule(at, direction, Arc::clone(&held.payload), target.clone());
            }
            self.schedule(at, direction, held.payload, target);
        }
    }

    /// Closes client links idle for longer than the idle timeout, freeing their slot.
    fn forget_idle_clients(&mut self, now: Instant) {
        for slot in 0..self.slots.len() {
            let idle = self.slots[slot].as_ref().is_some_and(|link| {
                now.duration_since(link.last_activity) >= self.options.idle_timeout
                    && link.up.held.is_none()
                    && link.down.held.is_none()
            });
            if !idle {
                continue;
            }
            if let Some(link) = self.slots[slot].take() {
                self.by_addr.remove(&link.client);
                // Pending deliveries may still hold the socket, so deregister by descriptor
                // now: its token is about to be reused by the next client in this slot.
                #[cfg(unix)]
                {
                    use std::os::fd::AsRawFd;
                    let fd = link.upstream.as_raw_fd();
                    let _ = self
                        .poll
                        .registry()
                        .deregister(&mut mio::unix::SourceFd(&fd));
                }
                #[cfg(not(unix))]
                if let Ok(mut socket) = Arc::try_unwrap(link.upstream) {
                    let _ = self.poll.registry().deregister(&mut socket);
                }
                tracing::debug!(client = %link.client, "bearer relay: idle client forgotten");
            }
        }
    }
}

/// Receive errors that say nothing about the relay's own health.
fn transient(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::Interrupted
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
    )
}

/// The delivery thread: sends each due datagram as close to its modelled instant as the
/// operating system allows.
fn deliver_loop(shared: &Shared) {
    loop {
        let due = {
            let mut queue = shared.lock_queue();
            loop {
                if shared.stop.load(Ordering::SeqCst) {
                    return;
                }
                let now = Instant::now();
                match queue.peek() {
                    Some(Reverse(next)) if next.at <= now + SPIN_WINDOW => {
                        if let Some(Reverse(due)) = queue.pop() {
                            break due;
                        }
                    }
                    Some(Reverse(next)) => {
                        let sleep = next.at - now - SPIN_WINDOW;
                        queue = shared
                            .queue_changed
                            .wait_timeout(queue, sleep)
                            .unwrap_or_else(PoisonError::into_inner)
                            .0;
                    }
                    None => {
                        queue = shared
                            .queue_changed
                            .wait(queue)
                            .unwrap_or_else(PoisonError::into_inner);
                    }
                }
            }
        };
        // Anything scheduled meanwhile is due no earlier than `SPIN_WINDOW` before this one,
        // so waiting here with the lock released cannot make it later than that.
        while Instant::now() < due.at {
            thread::yield_now();
        }
        let sent = match &due.target {
            Target::Gateway(socket) => socket.send(&due.payload),
            Target::Client(socket, addr) => socket.send_to(&due.payload, *addr),
        };
        let late = Instant::now().saturating_duration_since(due.at);
        let late_ns = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
        bump(&shared.lateness_sum_ns, late_ns);
        bump(&shared.lateness_count, 1);
        shared.lateness_max_ns.fetch_max(late_ns, Ordering::Relaxed);
        let counters = shared.counters(due.direction);
        match sent {
            Ok(_) => {
                bump(&counters.datagrams_delivered, 1);
                bump(&counters.bytes_delivered, due.payload.len() as u64);
            }
            Err(err) => {
                bump(&counters.send_errors, 1);
                tracing::debug!(%err, "bearer relay: delivery failed");
            }
        }
    }
}

/// The source address of a new emulated link's upstream socket, when the relay picks
/// one. Toward a loopback gateway every link gets an address of its own from
/// 127.64.0.0/10, in turn: a real handset has its own address, and a gateway keeps a
/// finished peer's state for its idle time-out, so a later phone that drew an earlier
/// one's port from 127.0.0.1 would land in that state and fail. Elsewhere the system
/// chooses (`None`).
fn upstream_source(upstream: SocketAddr) -> Option<SocketAddr> {
    let IpAddr::V4(ip) = upstream.ip() else {
        return None;
    };
    if !ip.is_loopback() {
        return None;
    }
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // 64 x 256 x 254 addresses, none ending in 0 or 255.
    let n = NEXT.fetch_add(1, Ordering::Relaxed) % (64 * 256 * 254);
    let (block, host) = (n / 254, n % 254 + 1);
    let [_, _, b, c] = block.to_be_bytes();
    Some((Ipv4Addr::new(127, 64 + b, c, host as u8), 0).into())
}

#[cfg(test)]
mod tests;
