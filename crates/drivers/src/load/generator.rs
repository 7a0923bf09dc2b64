//! The generator's event loop as a state machine: [`Generator`] holds every handshake in
//! flight and the run's tallies, its `poll_*` methods do what is due at an instant
//! (arrivals, timers, the stall log) and its `handle_*` methods react to a datagram, so
//! the loop in [`Generator::run`] only asks the clock, dispatches and waits (the shape of
//! quinn-proto's `Connection`, where I/O and time are fed in from outside). It drives any
//! client [`Handshake`]; [`LoadClients`] makes them (and keeps what a protocol needs to
//! resume a session), so WTLS, DTLS 1.2 and EDHOC are offered load by the same loop.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mio::net::UdpSocket;
use mio::{Events, Poll};
use rand::rngs::StdRng;
use rand::SeedableRng;
use wtls::probe::Clock;
use wtlsperf_spine::{Handshake, Now, Status, Step};

use super::clients::open_client_socket;
use super::outcomes::Outcome;
use super::{Arrivals, LoadSpec};
use crate::gateway::STALL_NS;
use crate::setup::{self, ProcessClock};

/// Most arrivals started per event-loop turn.
const ARRIVAL_BATCH: usize = 32;
/// Most generator stalls and late sends logged.
const MAX_STALL_LOG: usize = 100_000;

/// Where a load run's clients come from.
pub trait LoadClients {
    type Client: Handshake;
    /// A fresh client for one handshake started at `now`, and whether it resumes an
    /// earlier session; `None` when none can be made.
    fn client(&mut self, now: Now, rng: &mut StdRng) -> Option<(Self::Client, bool)>;
    /// A handshake completed: keep what a later resumption needs (nothing by default).
    fn completed(&mut self, _client: &Self::Client, _rng: &mut StdRng) {}
    /// How a completed handshake went, for the outcome log (`full` unless the protocol
    /// resumes sessions).
    fn kind(_negotiated: &<Self::Client as Handshake>::Negotiated) -> &'static str {
        "full"
    }
}

/// One handshake in flight.
struct Slot<C> {
    sock: UdpSocket,
    client: C,
    intended_ns: u64,
    generation: u64,
    resumed: bool,
    /// The client's answer, held back for the emulated round trip until `send_at_ns`.
    held: Vec<Vec<u8>>,
    send_at_ns: u64,
    /// The handshake ended (completed: `Some(true)`) with its last answer still held:
    /// the slot lives on only to send it (see [`Generator::finish`]).
    ended: Option<bool>,
}

/// A timer: (due, slot, generation of the handshake that set it), earliest first.
type Timer = Reverse<(u64, usize, u64)>;

/// What a run counted, read by the report.
#[derive(Debug, Default)]
pub struct Tally {
    pub started: u64,
    pub completed: u64,
    pub failed: u64,
    pub resumed: u64,
    /// Handshakes completed within the arrival window.
    pub in_window: u64,
    pub retransmissions: u64,
    /// Latency of each completed handshake from its intended start (ms).
    pub latencies_ms: Vec<f64>,
    /// How late each scheduled send left (ns).
    pub lags_ns: Vec<u64>,
    /// Sends more than [`STALL_NS`] late as (scheduled, sent), process clock, ns.
    pub late_sends: Vec<(u64, u64)>,
    /// The pinned generator's stalls as (start, end), process clock, ns.
    pub generator_stalls: Vec<(u64, u64)>,
    /// Every handshake's outcome, when the spec asks for them.
    pub outcomes: Vec<Outcome>,
}

/// The sockets of a run: bound and registered before the clock starts.
pub struct Sockets {
    pub poll: Poll,
    pub target: SocketAddr,
    /// Free sockets as (token, socket).
    pub spare: VecDeque<(usize, UdpSocket)>,
    /// One entry per token.
    pub slots: usize,
}

/// The generator's state during a run.
pub struct Generator<'a, L: LoadClients> {
    spec: &'a LoadSpec,
    clock: Arc<ProcessClock>,
    clients: L,
    poll: Poll,
    target: SocketAddr,
    slots: Vec<Option<Box<Slot<L::Client>>>>,
    spare: VecDeque<(usize, UdpSocket)>,
    /// A finished handshake's socket stays open until the run ends (closing it is a
    /// system call the measured loop need not make), unless descriptors ran short.
    retired: Vec<UdpSocket>,
    /// A client of a closed population that completed its handshake puts its socket
    /// back for its next one (a failed one does not: a late answer could reach the next).
    recycle: bool,
    /// The closed loop's population.
    closed: Option<usize>,
    /// Arrival instants (ns from `origin`) and the next one due.
    offsets: Vec<u64>,
    next: usize,
    timers: BinaryHeap<Timer>,
    rng: StdRng,
    delay_rng: StdRng,
    round_trip: Option<super::RoundTripSampler>,
    origin: u64,
    window_ns: u64,
    timeout_ns: u64,
    hard_stop: u64,
    generation: u64,
    active: usize,
    /// Pinned: polls without sleeping, and logs its stalls.
    pinned: bool,
    /// (wall, thread CPU) at the top of the previous loop turn, for the stall log.
    last_turn: Option<(u64, u64)>,
    buf: Vec<u8>,
    /// Unix time (ns) at the process clock's zero, for the outcome log; `None`: no log.
    outcome_epoch_ns: Option<f64>,
    pub tally: Tally,
}

impl<'a, L: LoadClients> Generator<'a, L> {
    /// A generator for `spec` over the prepared `sockets`, its arrivals at `offsets`
    /// (ignored for a closed loop), its clock starting now.
    pub fn new(
        spec: &'a LoadSpec,
        clients: L,
        sockets: Sockets,
        offsets: Vec<u64>,
        pinned: bool,
    ) -> anyhow::Result<Self> {
        let (closed, fresh) = match spec.arrivals {
            Arrivals::Closed {
                clients,
                fresh_addresses,
                ..
            } => (Some(clients.clamp(1, spec.max_in_flight)), fresh_addresses),
            _ => (None, false),
        };
        let offsets = match closed {
            Some(n) => vec![0; n.min(spec.max_handshakes)],
            None => offsets,
        };
        let round_trip = match spec.round_trip {
            Some(mean) if !mean.is_zero() => Some(spec.round_trip_law.sampler(mean.as_secs_f64())?),
            _ => None,
        };
        let clock = ProcessClock::shared();
        let origin = clock.wall_ns();
        let outcome_epoch_ns = spec.record_outcomes.then(|| {
            let unix = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            unix.as_nanos() as f64 - clock.wall_ns() as f64
        });
        let window_ns = spec.duration.as_nanos() as u64;
        let timeout_ns = spec.handshake_timeout.as_nanos() as u64;
        Ok(Generator {
            spec,
            clock,
            clients,
            poll: sockets.poll,
            target: sockets.target,
            slots: (0..sockets.slots).map(|_| None).collect(),
            spare: sockets.spare,
            retired: Vec::new(),
            recycle: closed.is_some() && !fresh,
            closed,
            offsets,
            next: 0,
            timers: BinaryHeap::new(),
            rng: StdRng::seed_from_u64(spec.seed ^ 0x5245_5355),
            delay_rng: StdRng::seed_from_u64(spec.seed ^ 0x5254_5454),
            round_trip,
            origin,
            window_ns,
            timeout_ns,
            hard_stop: origin + window_ns + timeout_ns + 1_000_000_000,
            generation: 0,
            active: 0,
            pinned,
            last_turn: None,
            buf: vec![0u8; 65_535],
            outcome_epoch_ns,
            tally: Tally::default(),
        })
    }

    /// Runs until every handshake ended or the hard stop; returns the wall time (ns).
    /// Whatever is still open at the hard stop failed.
    pub fn run(&mut self) -> anyhow::Result<u64> {
        let mut events = Events::with_capacity(1024);
        loop {
            let now = self.clock.wall_ns();
            self.poll_stall_log(now);
            self.poll_closed_loop(now);
            if now >= self.hard_stop || (self.next >= self.offsets.len() && self.active == 0) {
                break;
            }
            let batch = self.poll_arrivals(now);
            self.poll_timers(self.clock.wall_ns());
            self.wait(&mut events, batch == ARRIVAL_BATCH)?;
            for ev in events.iter() {
                self.handle_readable(ev.token().0);
            }
        }
        for i in 0..self.slots.len() {
            // A handshake that ended with its last answer still held ended as it did.
            match self.slots[i].as_ref().and_then(|s| s.ended) {
                Some(completed) => self.end(i, completed),
                None => self.record_outcome(i, None),
            }
        }
        self.tally.failed += self.active as u64;
        // Close the finished handshakes' sockets now, outside the measured loop.
        self.retired.clear();
        Ok(self.clock.wall_ns() - self.origin)
    }

    /// A pinned generator polls without sleeping, so a turn whose wall time exceeds its
    /// thread CPU time by more than [`STALL_NS`] was spent off-core: logged as a stall.
    fn poll_stall_log(&mut self, now: u64) {
        if !self.pinned {
            return;
        }
        let cpu = setup::thread_cpu_ns();
        if let Some((wall0, cpu0)) = self.last_turn {
            if now.saturating_sub(wall0) > cpu.saturating_sub(cpu0) + STALL_NS
                && self.tally.generator_stalls.len() < MAX_STALL_LOG
            {
                self.tally.generator_stalls.push((wall0, now));
            }
        }
        self.last_turn = Some((now, cpu));
    }

    /// A closed loop schedules a new handshake now for each one that ended, while the
    /// window is open.
    fn poll_closed_loop(&mut self, now: u64) {
        let Some(n) = self.closed else {
            return;
        };
        while self.active + (self.offsets.len() - self.next) < n
            && now < self.origin + self.window_ns
            && self.offsets.len() < self.spec.max_handshakes
        {
            self.offsets.push(now - self.origin);
        }
    }

    /// Starts the arrivals that are due, at most [`ARRIVAL_BATCH`] before the answers of
    /// earlier ones are handled, so a generator that fell behind keeps completing
    /// handshakes instead of only starting them (their latency still counts the lag).
    /// Returns how many it started.
    fn poll_arrivals(&mut self, now: u64) -> usize {
        let mut batch = 0;
        while self.next < self.offsets.len()
            && self.origin + self.offsets[self.next] <= now
            && batch < ARRIVAL_BATCH
        {
            batch += 1;
            let intended = self.origin + self.offsets[self.next];
            self.next += 1;
            self.tally.started += 1;
            if self.closed.is_none() {
                self.log_lag(intended, now);
            }
            if self.active >= self.spec.max_in_flight || self.start_handshake(intended).is_none() {
                self.tally.failed += 1;
            }
        }
        batch
    }

    /// How late a send scheduled for `due` left at `now`.
    fn log_lag(&mut self, due: u64, now: u64) {
        self.tally.lags_ns.push(now.saturating_sub(due));
        if now > due + STALL_NS && self.tally.late_sends.len() < MAX_STALL_LOG {
            self.tally.late_sends.push((due, now));
        }
    }

    /// Starts one handshake intended at `intended`; `None` when no socket, no client
    /// or no first flight could be had.
    fn start_handshake(&mut self, intended: u64) -> Option<()> {
        let now = setup::now();
        let (mut client, resumed) = self.clients.client(now, &mut self.rng)?;
        let (i, sock) = match self.spare.pop_front() {
            Some(s) => s,
            None => {
                let sock = open_client_socket(&self.poll, self.slots.len(), self.target).ok()?;
                self.slots.push(None);
                (self.slots.len() - 1, sock)
            }
        };
        let first = client.start(now);
        if first.datagrams.is_empty() || !client.status().is_running() {
            self.spare.push_front((i, sock));
            return None;
        }
        for d in &first.datagrams {
            let _ = sock.send(d);
        }
        self.generation += 1;
        let g = self.generation;
        self.timers
            .push(Reverse((intended + self.timeout_ns, i, g)));
        if let Some(d) = client.deadline() {
            self.timers.push(Reverse((d, i, g)));
        }
        self.slots[i] = Some(Box::new(Slot {
            sock,
            client,
            intended_ns: intended,
            generation: g,
            resumed,
            held: Vec::new(),
            send_at_ns: 0,
            ended: None,
        }));
        self.active += 1;
        Some(())
    }

    /// Fires the timers due by `now`: handshake timeouts, held answers, retransmissions.
    fn poll_timers(&mut self, now: u64) {
        while let Some(&Reverse((due, i, g))) = self.timers.peek() {
            if due > now {
                break;
            }
            self.timers.pop();
            self.handle_timer(i, g, now);
        }
    }

    fn handle_timer(&mut self, i: usize, g: u64, now: u64) {
        let Some(slot) = self.slots.get(i).and_then(|s| s.as_ref()) else {
            return;
        };
        if slot.generation != g {
            return;
        }
        if let Some(completed) = slot.ended {
            let due = slot.send_at_ns;
            if due <= now {
                self.log_lag(due, now);
                self.send_held(i, now);
                self.end(i, completed);
            }
            return;
        }
        if now >= slot.intended_ns + self.timeout_ns {
            self.end(i, false);
            return;
        }
        if !slot.held.is_empty() && slot.send_at_ns <= now {
            let due = slot.send_at_ns;
            self.log_lag(due, now);
        }
        self.send_held(i, now);
        let Some(slot) = self.slots[i].as_mut() else {
            return;
        };
        if slot.client.deadline().is_some_and(|d| d <= now) {
            let step = slot.client.handle_timeout(setup::now());
            if !step.datagrams.is_empty() {
                self.tally.retransmissions += 1;
            }
            for d in &step.datagrams {
                let _ = slot.sock.send(d);
            }
            if !slot.client.status().is_running() {
                self.end(i, false);
            } else if let Some(d) = slot.client.deadline() {
                self.timers.push(Reverse((d, i, g)));
            }
        }
    }

    /// Sends slot `i`'s held answer if its emulated round trip is over at `now`.
    fn send_held(&mut self, i: usize, now: u64) {
        let Some(slot) = self.slots[i].as_mut() else {
            return;
        };
        if !slot.held.is_empty() && slot.send_at_ns <= now {
            for d in slot.held.drain(..) {
                let _ = slot.sock.send(&d);
            }
        }
    }

    /// Waits for datagrams until the next arrival or timer (at most 50 ms). With
    /// overdue arrivals left it only collects what is ready, and a pinned generator has
    /// its core to itself: it polls without sleeping, so the gateway's replies never pay
    /// for waking it (an inter-processor interrupt, which costs a virtual machine an exit
    /// per datagram).
    fn wait(&mut self, events: &mut Events, overdue: bool) -> std::io::Result<()> {
        let now = self.clock.wall_ns();
        let mut wake = self.hard_stop;
        if let Some(&offset) = self.offsets.get(self.next) {
            wake = wake.min(self.origin + offset);
        }
        if let Some(Reverse((due, _, _))) = self.timers.peek() {
            wake = wake.min(*due);
        }
        let wait = if overdue || self.pinned {
            Duration::ZERO
        } else {
            Duration::from_nanos(wake.saturating_sub(now)).min(Duration::from_millis(50))
        };
        self.poll.poll(events, Some(wait))
    }

    /// Reads every datagram waiting on slot `i`'s socket into its client.
    fn handle_readable(&mut self, i: usize) {
        while let Some(slot) = self.slots.get_mut(i).and_then(|s| s.as_mut()) {
            if slot.ended.is_some() {
                break;
            }
            let n = match slot.sock.recv(&mut self.buf) {
                Ok(n) => n,
                // WouldBlock, or e.g. ECONNREFUSED: retransmission decides.
                Err(_) => break,
            };
            let step = slot.client.handle_datagram(&self.buf[..n], setup::now());
            if !self.handle_output(i, step) {
                break;
            }
        }
    }

    /// Sends (or holds, for the emulated round trip) a client's answer, and ends the
    /// handshake when it completed or failed; `false` once the slot is gone.
    fn handle_output(&mut self, i: usize, step: Step) -> bool {
        let Some(slot) = self.slots[i].as_mut() else {
            return false;
        };
        match &self.round_trip {
            Some(law) if !step.datagrams.is_empty() => {
                let delay_ns = (law.sample(&mut self.delay_rng) * 1e9) as u64;
                slot.send_at_ns = self.clock.wall_ns() + delay_ns;
                slot.held.extend(step.datagrams);
                self.timers
                    .push(Reverse((slot.send_at_ns, i, slot.generation)));
            }
            _ => {
                for d in &step.datagrams {
                    let _ = slot.sock.send(d);
                }
            }
        }
        match slot.client.status() {
            Status::Running => {}
            Status::Complete(n) => {
                let kind = L::kind(&n);
                self.handle_completed(i, kind);
                return false;
            }
            Status::Failed(_) => {
                self.finish(i, false);
                return false;
            }
        }
        if let Some(d) = slot.client.deadline() {
            self.timers.push(Reverse((d, i, slot.generation)));
        }
        true
    }

    /// Counts a completed handshake and keeps its session for resumption.
    fn handle_completed(&mut self, i: usize, kind: &'static str) {
        let done = self.clock.wall_ns();
        let Some(slot) = self.slots[i].as_ref() else {
            return;
        };
        let t = &mut self.tally;
        t.latencies_ms
            .push(done.saturating_sub(slot.intended_ns) as f64 / 1e6);
        t.in_window += u64::from(done <= self.origin + self.window_ns);
        t.resumed += u64::from(slot.resumed);
        self.clients.completed(&slot.client, &mut self.rng);
        self.record_outcome(i, Some(kind));
        self.finish(i, true);
    }

    /// Ends slot `i`'s handshake once its last answer has left: a client's final
    /// datagrams (WTLS's Finished of a resumed session, QUIC's close) reach the server
    /// after the emulated round trip like every answer before them.
    fn finish(&mut self, i: usize, completed: bool) {
        match self.slots[i].as_mut() {
            Some(slot) if !slot.held.is_empty() => slot.ended = Some(completed),
            _ => self.end(i, completed),
        }
    }

    /// Ends slot `i`'s handshake: a completed one of a closed population gives its
    /// socket back for the client's next handshake; a failed one is counted.
    fn end(&mut self, i: usize, completed: bool) {
        if !completed {
            self.record_outcome(i, None);
        }
        if let Some(s) = self.slots[i].take() {
            if completed && self.recycle {
                self.spare.push_front((i, s.sock));
            } else if !self.spare.is_empty() {
                self.retired.push(s.sock);
            }
            self.active -= 1;
            if completed {
                self.tally.completed += 1;
            } else {
                self.tally.failed += 1;
            }
        }
    }

    /// Logs how slot `i`'s handshake ended (`None`: failed), when outcomes are kept.
    fn record_outcome(&mut self, i: usize, kind: Option<&'static str>) {
        let (Some(epoch), Some(slot)) = (self.outcome_epoch_ns, self.slots[i].as_ref()) else {
            return;
        };
        let ms = |ns: u64| (epoch + ns as f64) / 1e6;
        self.tally.outcomes.push(Outcome {
            start_unix_ms: ms(slot.intended_ns),
            end_unix_ms: ms(self.clock.wall_ns()),
            client: slot.sock.local_addr().ok(),
            resume_offered: slot.resumed,
            kind,
        });
    }
}
