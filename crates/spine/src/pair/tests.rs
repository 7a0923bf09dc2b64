//! The pair on a toy protocol: the client sends `hello`, the server answers `welcome`
//! (again for every copy of `hello`, as a server answers a retransmission); the client
//! retransmits on a timer of 1 s, doubling, at most twice.

use std::cell::Cell;

use super::*;
use crate::{Failure, ProtocolId, Role};

const START: Now = Now {
    mono_ns: 1_000,
    unix_secs: 1_700_000_000,
};
const SECOND: u64 = 1_000_000_000;

#[derive(Debug, Default)]
struct Toy {
    server: bool,
    done: bool,
    failed: bool,
    deadline: Option<u64>,
    timeout_ns: u64,
    retransmissions: u32,
    /// The times `handle_timeout` was called at.
    fired_at: Vec<u64>,
}

impl Toy {
    fn client() -> Toy {
        Toy {
            timeout_ns: SECOND,
            ..Toy::default()
        }
    }

    fn server() -> Toy {
        Toy {
            server: true,
            ..Toy::default()
        }
    }
}

impl Handshake for Toy {
    type Negotiated = ();
    type Error = String;
    type Records = ();

    fn protocol(&self) -> ProtocolId {
        ProtocolId::new(0, "toy")
    }

    fn role(&self) -> Role {
        if self.server {
            Role::Server
        } else {
            Role::Client
        }
    }

    fn start(&mut self, now: Now) -> Step {
        if self.server {
            return Step::default();
        }
        self.deadline = Some(now.mono_ns + self.timeout_ns);
        Step::send(vec![b"hello".to_vec()])
    }

    fn handle_datagram(&mut self, datagram: &[u8], _now: Now) -> Step {
        match (self.server, datagram) {
            (true, b"hello") => {
                self.done = true;
                Step::send(vec![b"welcome".to_vec()])
            }
            (false, b"welcome") if !self.done => {
                self.done = true;
                self.deadline = None;
                Step::default()
            }
            _ => Step::dropped(),
        }
    }

    fn deadline(&self) -> Option<u64> {
        self.deadline
    }

    fn handle_timeout(&mut self, now: Now) -> Step {
        self.fired_at.push(now.mono_ns);
        if self.retransmissions == 2 {
            self.failed = true;
            self.deadline = None;
            return Step::default();
        }
        self.retransmissions += 1;
        self.timeout_ns *= 2;
        self.deadline = Some(now.mono_ns + self.timeout_ns);
        Step::send(vec![b"hello".to_vec()])
    }

    fn delay_timers(&mut self, by_ns: u64) {
        self.deadline = self.deadline.map(|d| d + by_ns);
    }

    fn status(&self) -> Status<(), String> {
        if self.failed {
            Status::Failed(Failure::TimedOut {
                retransmissions: self.retransmissions,
            })
        } else if self.done {
            Status::Complete(())
        } else {
            Status::Running
        }
    }

    fn retransmissions(&self) -> u32 {
        self.retransmissions
    }
}

fn drop_first(n: usize) -> impl FnMut(Direction, usize, &mut Vec<u8>) -> Fate {
    move |dir, i, _| {
        if dir == Direction::ToServer && i < n {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    }
}

#[test]
fn a_clean_network_completes_in_one_round_without_moving_time() {
    let mut p = Pair::new(Toy::client(), Toy::server(), START);
    assert_eq!(p.handshake(), Ended::Complete);
    assert_eq!(p.now, START);
    assert_eq!(p.deadlines_fired, 0);
    let ups: Vec<bool> = p.log.iter().map(Logged::up).collect();
    assert_eq!(ups, [true, false]);
}

#[test]
fn a_dropped_flight_is_sent_again_exactly_at_the_deadline() {
    let mut p = Pair::new(Toy::client(), Toy::server(), START).with_hook(drop_first(1));
    assert_eq!(p.handshake(), Ended::Complete);
    assert_eq!(p.client.fired_at, [START.mono_ns + SECOND]);
    assert_eq!(p.now.mono_ns, START.mono_ns + SECOND);
    assert_eq!(p.now.unix_secs, START.unix_secs + 1, "Unix time follows");
    assert_eq!(p.client_sent, [b"hello".to_vec(), b"hello".to_vec()]);
    assert_eq!(p.log[0].fate, Fate::Drop);
}

#[test]
fn the_timer_doubles_and_a_spent_budget_ends_as_a_time_out() {
    let mut p = Pair::new(Toy::client(), Toy::server(), START).with_hook(drop_first(usize::MAX));
    assert_eq!(p.handshake(), Ended::Failed);
    let t = START.mono_ns;
    assert_eq!(
        p.client.fired_at,
        [t + SECOND, t + 3 * SECOND, t + 7 * SECOND]
    );
    assert_eq!(
        p.client.status(),
        Status::Failed(Failure::TimedOut { retransmissions: 2 })
    );
    assert!(p.server_steps.iter().all(|s| s.datagrams.is_empty()));
}

#[test]
fn a_side_with_no_timer_left_stalls_instead_of_spinning() {
    let mut client = Toy::client();
    client.timeout_ns = SECOND;
    let mut p = Pair::new(client, Toy::server(), START).with_hook(drop_first(1));
    p.start();
    p.client.deadline = None;
    assert_eq!(p.drive(4, 4), Ended::Stalled);
}

#[test]
fn duplicates_and_reordering_still_complete() {
    let mut p = Pair::new(Toy::client(), Toy::server(), START).with_hook(|dir, _, _| match dir {
        Direction::ToServer => Fate::Duplicate,
        Direction::ToClient => Fate::Delay,
    });
    assert_eq!(p.handshake(), Ended::Complete);
    // The second answer reaches a client that is done: dropped, not a failure.
    assert!(p.client_steps.iter().any(|s| s.dropped));
}

#[test]
fn the_callers_clock_is_read_around_each_call_and_charged_to_its_side() {
    let ticks = Cell::new(0u64);
    // Every read moves the clock 10: each call costs 10 between its two reads.
    let clock = || {
        ticks.set(ticks.get() + 10);
        ticks.get()
    };
    let mut p = Pair::new(Toy::client(), Toy::server(), START)
        .with_hook(drop_first(1))
        .with_clock(clock);
    assert_eq!(p.handshake(), Ended::Complete);
    let cpu = p.cpu.clone();
    drop(p);
    // Client: start, the deadline, the welcome. Server: start, one hello.
    assert_eq!(cpu.client_calls_ns, [10, 10, 10]);
    assert_eq!(cpu.client_ns, 30);
    assert_eq!(cpu.server_jobs_ns, [10]);
    assert_eq!(cpu.server_ns, 20);
    assert_eq!(ticks.get(), 100, "two reads per call, five calls");
}

#[test]
fn without_a_clock_no_cpu_is_charged() {
    let mut p = Pair::new(Toy::client(), Toy::server(), START);
    p.handshake();
    assert_eq!(p.cpu.server_jobs_ns, [0]);
    assert_eq!(p.cpu.client_ns, 0);
}

#[test]
fn an_erased_pair_runs_like_the_typed_one() {
    use crate::AnyHandshake;
    let mut pair = Pair::new(
        AnyHandshake::new(Toy::client()),
        AnyHandshake::new(Toy::server()),
        START,
    );
    assert_eq!(pair.handshake(), Ended::Complete);
    assert_eq!(pair.client.protocol().name(), "toy");
    assert!(pair.client.status().is_complete());
}
