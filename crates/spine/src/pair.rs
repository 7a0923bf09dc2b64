//! The in-memory driver: a client and a server of any protocol joined by a network
//! under virtual time.
//!
//! Modelled on quinn-proto's test `Pair`: both ends live on the calling thread,
//! datagrams move between them in rounds (everything queued for the server, then
//! everything queued for the client), and nothing reads a clock. Time moves only when
//! the pair is quiet and a side's retransmission deadline is the next thing that can
//! happen: [`Pair::drive`] then jumps to it and fires it, so a lost flight is recovered
//! exactly when the protocol's timer says, whatever the machine's speed. With seeded
//! randomness a run is a pure function of its inputs.
//!
//! A network hook sees every datagram as it is sent, with its direction and its index in
//! that direction, may change its bytes and decides its [`Fate`]: delivered, dropped,
//! duplicated, or delayed behind the next datagram in the same direction (reordering).
//!
//! CPU time is the caller's business: an optional [`CpuClock`] (wtlsperf passes the
//! thread's CPU clock) is read around every call of each side, which gives each side's
//! CPU per handshake and the server's per received datagram (its jobs). Without one,
//! no clock is read at all.
//!
//! The calls go through small never-inlined functions ([`client_starts`],
//! [`client_receives`], [`server_receives`]) so that an instruction counter (callgrind's
//! `--toggle-collect`, `wtlsperf count`) can attribute work to each side by name.

use std::collections::VecDeque;

use crate::{Handshake, Now, Status, Step};

/// Rounds [`Pair::run`] allows by default: a handshake needs at most a few (a round
/// carries a flight to the server and the server's answer back); the rest is room for
/// duplicates and reordering.
pub const DEFAULT_ROUND_LIMIT: usize = 16;

/// Deadlines [`Pair::drive`] fires at most before it gives up: more than any
/// protocol's retransmission budget here, so a handshake ends by its own rules first.
pub const DEFAULT_DEADLINE_LIMIT: usize = 64;

/// Which way a datagram travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    ToServer,
    ToClient,
}

impl Direction {
    fn index(self) -> usize {
        match self {
            Direction::ToServer => 0,
            Direction::ToClient => 1,
        }
    }
}

/// What the network does with one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Deliver,
    Drop,
    /// Delivered twice in a row.
    Duplicate,
    /// Delivered after the next datagram in the same direction (or at the end of the
    /// round if none follows).
    Delay,
}

/// A clock the caller reads for the pair (nanoseconds of CPU, or of anything else).
/// The spine reads none of its own.
pub trait CpuClock {
    fn cpu_ns(&mut self) -> u64;
}

impl<F: FnMut() -> u64> CpuClock for F {
    fn cpu_ns(&mut self) -> u64 {
        self()
    }
}

/// One datagram as it was sent (after the hook; dropped ones included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Logged {
    pub direction: Direction,
    pub bytes: usize,
    pub fate: Fate,
}

impl Logged {
    /// Sent by the client.
    pub fn up(&self) -> bool {
        self.direction == Direction::ToServer
    }
}

/// What each side's calls cost by the caller's [`CpuClock`] (zero without one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuSpent {
    /// The client's start, datagrams and time-outs.
    pub client_ns: u64,
    /// The server's start and datagrams.
    pub server_ns: u64,
    /// Each client call, in order.
    pub client_calls_ns: Vec<u64>,
    /// Each datagram the server took (its jobs), in order.
    pub server_jobs_ns: Vec<u64>,
}

/// How [`Pair::run`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    pub rounds: usize,
    /// Nothing was left in flight (false: the round limit stopped it).
    pub quiet: bool,
}

/// How [`Pair::drive`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Both sides completed.
    Complete,
    /// A side failed (read its [`Handshake::status`]).
    Failed,
    /// Quiet, no deadline left, and a side still running: nothing more can happen.
    Stalled,
    /// The round or deadline limit stopped it.
    Limit,
}

type Hook<'a> = Box<dyn FnMut(Direction, usize, &mut Vec<u8>) -> Fate + 'a>;

/// A client, a server and the network between them.
pub struct Pair<'a, C: Handshake, S: Handshake> {
    pub client: C,
    pub server: S,
    /// The virtual time both sides are called with.
    pub now: Now,
    /// Every step of the client (its start, datagrams handled, timers fired), in order.
    pub client_steps: Vec<Step>,
    /// Every step of the server (its start, datagrams handled), in order.
    pub server_steps: Vec<Step>,
    /// Every datagram the client sent, after the hook (dropped ones included).
    pub client_sent: Vec<Vec<u8>>,
    /// Every datagram the server sent, after the hook (dropped ones included).
    pub server_sent: Vec<Vec<u8>>,
    /// Both directions in sending order: from it flights are grouped.
    pub log: Vec<Logged>,
    /// Deadlines fired, either side.
    pub deadlines_fired: usize,
    pub cpu: CpuSpent,
    in_flight: [VecDeque<Vec<u8>>; 2],
    delayed: [Option<Vec<u8>>; 2],
    hook: Option<Hook<'a>>,
    clock: Option<Box<dyn CpuClock + 'a>>,
}

/// The server handles one datagram (never inlined: the counts' server side).
#[inline(never)]
pub fn server_receives<S: Handshake>(server: &mut S, datagram: &[u8], now: Now) -> Step {
    server.handle_datagram(datagram, now)
}

/// The client handles one datagram (never inlined: part of the counts' client side).
#[inline(never)]
pub fn client_receives<C: Handshake>(client: &mut C, datagram: &[u8], now: Now) -> Step {
    client.handle_datagram(datagram, now)
}

/// The client builds its first flight (never inlined: part of the counts' client side).
#[inline(never)]
pub fn client_starts<C: Handshake>(client: &mut C, now: Now) -> Step {
    client.start(now)
}

impl<'a, C: Handshake, S: Handshake> Pair<'a, C, S> {
    /// Joins two sides made by the caller, at virtual time `now`.
    pub fn new(client: C, server: S, now: Now) -> Pair<'a, C, S> {
        Pair {
            client,
            server,
            now,
            client_steps: Vec::new(),
            server_steps: Vec::new(),
            client_sent: Vec::new(),
            server_sent: Vec::new(),
            log: Vec::new(),
            deadlines_fired: 0,
            cpu: CpuSpent::default(),
            in_flight: [VecDeque::new(), VecDeque::new()],
            delayed: [None, None],
            hook: None,
            clock: None,
        }
    }

    /// Sets the network hook (see the module's documentation).
    pub fn with_hook(
        mut self,
        hook: impl FnMut(Direction, usize, &mut Vec<u8>) -> Fate + 'a,
    ) -> Pair<'a, C, S> {
        self.hook = Some(Box::new(hook));
        self
    }

    /// Reads `clock` around every call of either side ([`Pair::cpu`]).
    pub fn with_clock(mut self, clock: impl CpuClock + 'a) -> Pair<'a, C, S> {
        self.clock = Some(Box::new(clock));
        self
    }

    /// Starts both sides, then runs to quiet, firing deadlines as they come, until
    /// both complete, one fails, nothing more can happen, or a limit is reached.
    pub fn handshake(&mut self) -> Ended {
        self.start();
        self.drive(DEFAULT_ROUND_LIMIT, DEFAULT_DEADLINE_LIMIT)
    }

    /// Runs to quiet (at most `round_limit` rounds each time), then jumps to the next
    /// deadline and fires it, until the handshake ends (at most `deadline_limit`
    /// deadlines).
    pub fn drive(&mut self, round_limit: usize, deadline_limit: usize) -> Ended {
        let mut fired = 0;
        loop {
            if !self.run(round_limit).quiet {
                return Ended::Limit;
            }
            if let Some(ended) = self.ended() {
                return ended;
            }
            if fired == deadline_limit {
                return Ended::Limit;
            }
            if !self.fire_next_deadline() {
                return Ended::Stalled;
            }
            fired += 1;
        }
    }

    /// How the handshake stands, if it is over: both complete, or either failed.
    pub fn ended(&self) -> Option<Ended> {
        let (c, s) = (self.client.status(), self.server.status());
        if matches!(c, Status::Failed(_)) || matches!(s, Status::Failed(_)) {
            Some(Ended::Failed)
        } else if c.is_complete() && s.is_complete() {
            Some(Ended::Complete)
        } else {
            None
        }
    }

    /// Both sides completed.
    pub fn is_complete(&self) -> bool {
        self.ended() == Some(Ended::Complete)
    }

    /// The server's start (nothing, for the protocols here), then the client's first
    /// flight, put in flight.
    pub fn start(&mut self) {
        let t0 = self.stamp();
        let step = self.server.start(self.now);
        let dt = self.stamp().saturating_sub(t0);
        self.cpu.server_ns += dt;
        self.server_output(step);
        let t0 = self.stamp();
        let step = client_starts(&mut self.client, self.now);
        self.client_spent(t0);
        self.client_output(step);
    }

    /// Rounds until nothing is in flight, at most `limit`.
    pub fn run(&mut self, limit: usize) -> RunOutcome {
        for rounds in 0..limit {
            if !self.round() {
                return RunOutcome {
                    rounds,
                    quiet: true,
                };
            }
        }
        RunOutcome {
            rounds: limit,
            quiet: !self.in_flight(),
        }
    }

    /// One round: everything in flight to the server is delivered, then everything in
    /// flight to the client (including what the server just answered). False if
    /// nothing was in flight.
    pub fn round(&mut self) -> bool {
        if !self.in_flight() {
            return false;
        }
        while let Some(d) = self.next(Direction::ToServer) {
            self.server_takes(&d);
        }
        while let Some(d) = self.next(Direction::ToClient) {
            self.client_takes(&d);
        }
        true
    }

    /// The earliest deadline of either side (the client's first on a tie).
    pub fn next_deadline(&self) -> Option<(Direction, u64)> {
        match (self.client.deadline(), self.server.deadline()) {
            (Some(c), Some(s)) if s < c => Some((Direction::ToClient, s)),
            (Some(c), _) => Some((Direction::ToServer, c)),
            (None, Some(s)) => Some((Direction::ToClient, s)),
            (None, None) => None,
        }
    }

    /// Moves virtual time to the next deadline (never back) and fires it on its side.
    /// False if neither side has a timer running.
    pub fn fire_next_deadline(&mut self) -> bool {
        let Some((side, due)) = self.next_deadline() else {
            return false;
        };
        self.now = self.now.plus_ns(due.saturating_sub(self.now.mono_ns));
        self.deadlines_fired += 1;
        let t0 = self.stamp();
        match side {
            Direction::ToServer => {
                let step = self.client.handle_timeout(self.now);
                self.client_spent(t0);
                self.client_output(step);
            }
            Direction::ToClient => {
                let step = self.server.handle_timeout(self.now);
                let dt = self.stamp().saturating_sub(t0);
                self.cpu.server_ns += dt;
                self.server_output(step);
            }
        }
        true
    }

    /// `datagram` is handed to the server now, outside the network (no hook).
    pub fn deliver_to_server(&mut self, datagram: &[u8]) -> &Step {
        self.server_takes(datagram);
        self.server_steps.last().expect("just pushed")
    }

    /// `datagram` is handed to the client now, outside the network (no hook).
    pub fn deliver_to_client(&mut self, datagram: &[u8]) -> &Step {
        self.client_takes(datagram);
        self.client_steps.last().expect("just pushed")
    }

    /// The two sides, the network (and its hook and clock, with whatever they
    /// borrowed) dropped.
    pub fn into_parts(self) -> (C, S) {
        (self.client, self.server)
    }

    fn server_takes(&mut self, datagram: &[u8]) {
        let t0 = self.stamp();
        let step = server_receives(&mut self.server, datagram, self.now);
        let dt = self.stamp().saturating_sub(t0);
        self.cpu.server_ns += dt;
        self.cpu.server_jobs_ns.push(dt);
        self.server_output(step);
    }

    fn client_takes(&mut self, datagram: &[u8]) {
        let t0 = self.stamp();
        let step = client_receives(&mut self.client, datagram, self.now);
        self.client_spent(t0);
        self.client_output(step);
    }

    fn stamp(&mut self) -> u64 {
        self.clock.as_mut().map_or(0, |c| c.cpu_ns())
    }

    fn client_spent(&mut self, t0: u64) {
        let dt = self.stamp().saturating_sub(t0);
        self.cpu.client_ns += dt;
        self.cpu.client_calls_ns.push(dt);
    }

    fn in_flight(&self) -> bool {
        self.in_flight.iter().any(|q| !q.is_empty()) || self.delayed.iter().any(Option::is_some)
    }

    fn next(&mut self, dir: Direction) -> Option<Vec<u8>> {
        let i = dir.index();
        self.in_flight[i]
            .pop_front()
            .or_else(|| self.delayed[i].take())
    }

    fn client_output(&mut self, step: Step) {
        for d in &step.datagrams {
            self.send(Direction::ToServer, d.clone());
        }
        self.client_steps.push(step);
    }

    fn server_output(&mut self, step: Step) {
        for d in &step.datagrams {
            self.send(Direction::ToClient, d.clone());
        }
        self.server_steps.push(step);
    }

    fn send(&mut self, dir: Direction, mut datagram: Vec<u8>) {
        let sent = match dir {
            Direction::ToServer => &mut self.client_sent,
            Direction::ToClient => &mut self.server_sent,
        };
        let index = sent.len();
        let fate = match &mut self.hook {
            Some(hook) => hook(dir, index, &mut datagram),
            None => Fate::Deliver,
        };
        self.log.push(Logged {
            direction: dir,
            bytes: datagram.len(),
            fate,
        });
        sent.push(datagram.clone());
        let i = dir.index();
        match fate {
            Fate::Drop => return,
            Fate::Deliver => self.in_flight[i].push_back(datagram),
            Fate::Duplicate => {
                self.in_flight[i].push_back(datagram.clone());
                self.in_flight[i].push_back(datagram);
            }
            Fate::Delay => {
                // A datagram delayed before is released first, so none is held twice.
                if let Some(old) = self.delayed[i].replace(datagram) {
                    self.in_flight[i].push_back(old);
                }
                return;
            }
        }
        if let Some(old) = self.delayed[i].take() {
            self.in_flight[i].push_back(old);
        }
    }
}

#[cfg(test)]
mod tests;
