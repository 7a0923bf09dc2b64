//! An interference injector: a thread that takes the gateway worker's core in bursts,
//! standing in for a hypervisor that runs another guest on the virtual CPU.
//!
//! Why: the load test must hold its design on a cloud VM whose hypervisor steals CPU in
//! bursts, and a quiet laboratory machine never shows that. The injector makes the
//! disturbance on demand and reproducibly: bursts of `burst` of busy-spinning on the
//! worker's CPU, separated by exponential gaps whose mean sets the duty cycle d (mean gap
//! = burst x (1 - d) / d, so that bursts take d of the time), drawn from a seeded
//! generator. It runs from the gateway's start to the run's end and stops with the run
//! (or at its own time limit, whichever comes first).
//!
//! A burst is counted in the injector's own CPU time, not in wall time: under the
//! default scheduler the injector and the busy-polling worker share the core, and a burst
//! of wall time would take only about half of it. Where the process may use `SCHED_FIFO`
//! (root or `CAP_SYS_NICE`) the injector takes it, and then preempts the worker outright
//! for the whole burst, as a hypervisor does; [`InjectorTally::realtime`] says which.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use serde::Serialize;

/// How much interference to inject.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interference {
    /// Share of the time the injector spins, in (0, 0.5].
    pub duty: f64,
    /// Length of one burst (its CPU time).
    pub burst: Duration,
    pub seed: u64,
}

/// Highest duty cycle accepted: beyond half the core the worker cannot keep a queue at
/// rho 0.8 stable, and the option would stage an overload, not a disturbance.
pub const MAX_DUTY: f64 = 0.5;

impl Interference {
    /// Checks the settings and builds them (`duty` as a fraction).
    pub fn new(duty: f64, burst: Duration, seed: u64) -> anyhow::Result<Self> {
        anyhow::ensure!(
            duty > 0.0 && duty <= MAX_DUTY,
            "interference duty cycle {duty} outside (0, {MAX_DUTY}]"
        );
        anyhow::ensure!(
            burst >= Duration::from_micros(100) && burst <= Duration::from_secs(1),
            "interference burst {burst:?} outside 0.1 ms to 1 s"
        );
        Ok(Interference { duty, burst, seed })
    }

    /// A duty cycle as the command line gives it: `5%` or `0.05`.
    pub fn parse_duty(text: &str) -> anyhow::Result<f64> {
        let t = text.trim();
        let value = match t.strip_suffix('%') {
            Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
            None => t.parse::<f64>(),
        };
        match value {
            Ok(d) if d > 0.0 && d <= MAX_DUTY => Ok(d),
            _ => anyhow::bail!(
                "{text:?} is not a duty cycle in (0, {}%] (write 5% or 0.05)",
                MAX_DUTY * 100.0
            ),
        }
    }

    /// Mean gap between bursts.
    pub fn mean_gap(&self) -> Duration {
        self.burst.mul_f64((1.0 - self.duty) / self.duty)
    }

    /// The gaps before each burst, from the seed: the injector's whole schedule.
    pub fn gaps(&self) -> impl Iterator<Item = Duration> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed);
        let exp = Exp::new(1.0 / self.mean_gap().as_secs_f64()).ok();
        std::iter::from_fn(move || exp.map(|e| Duration::from_secs_f64(e.sample(&mut rng))))
    }
}

/// What the injector did.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct InjectorTally {
    pub bursts: usize,
    /// CPU time the injector spun (ms).
    pub busy_ms: f64,
    /// Whether it ran at real-time priority (preempting the worker) or shared the core.
    pub realtime: bool,
    /// Whether it was pinned to the worker's CPU.
    pub pinned: bool,
}

/// A running injector; stopped and joined by [`Injector::stop`] or on drop.
pub struct Injector {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<InjectorTally>>,
}

impl Injector {
    /// Starts the injector on `cpu` (the worker's; unpinned when `None`) for at most
    /// `limit`.
    pub fn start(cfg: Interference, cpu: Option<usize>, limit: Duration) -> anyhow::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("interference".into())
            .spawn(move || inject(cfg, cpu, limit, &flag))?;
        Ok(Injector {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the injector and returns what it did.
    pub fn stop(mut self) -> InjectorTally {
        self.halt()
    }

    fn halt(&mut self) -> InjectorTally {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().map_or(InjectorTally::default(), |t| {
            t.thread().unpark();
            t.join().unwrap_or_default()
        })
    }
}

impl Drop for Injector {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The injector's thread: gaps parked (woken early by a stop), bursts spun.
fn inject(
    cfg: Interference,
    cpu: Option<usize>,
    limit: Duration,
    stop: &AtomicBool,
) -> InjectorTally {
    let mut tally = InjectorTally {
        pinned: cpu.is_some_and(|c| crate::setup::pin_current_thread(c).is_ok()),
        realtime: take_realtime_priority(),
        ..Default::default()
    };
    let end = Instant::now() + limit;
    for gap in cfg.gaps() {
        let wake = Instant::now() + gap;
        while !stop.load(Ordering::SeqCst) && Instant::now() < wake.min(end) {
            std::thread::park_timeout(wake.min(end).saturating_duration_since(Instant::now()));
        }
        if stop.load(Ordering::SeqCst) || Instant::now() >= end {
            break;
        }
        tally.busy_ms += spin(cfg.burst, stop) as f64 / 1e6;
        tally.bursts += 1;
    }
    tally
}

/// Spins until the thread has used `burst` of CPU time (or four times that in wall time
/// has passed, or a stop); returns the CPU time used (ns).
fn spin(burst: Duration, stop: &AtomicBool) -> u64 {
    let cpu0 = crate::setup::thread_cpu_ns();
    let wall_cap = Instant::now() + burst * 4;
    let want = burst.as_nanos() as u64;
    let mut x = 0u64;
    loop {
        for _ in 0..256 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let used = crate::setup::thread_cpu_ns().saturating_sub(cpu0);
        if used >= want || Instant::now() >= wall_cap || stop.load(Ordering::Relaxed) {
            return used;
        }
    }
}

/// Puts the calling thread on `SCHED_FIFO` at the lowest real-time priority; false where
/// the process may not (the thread then stays on the default scheduler).
fn take_realtime_priority() -> bool {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: sched_setscheduler reads the parameter we own; pid 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duty_cycles_parse_as_percent_or_fraction() {
        assert_eq!(Interference::parse_duty("5%").unwrap(), 0.05);
        assert_eq!(Interference::parse_duty("0.05").unwrap(), 0.05);
        assert_eq!(Interference::parse_duty(" 12.5 % ").unwrap(), 0.125);
        for bad in ["0", "0%", "-5%", "60%", "0.7", "five", "", "NaN"] {
            assert!(Interference::parse_duty(bad).is_err(), "{bad}");
        }
        assert!(Interference::new(0.05, Duration::from_millis(10), 1).is_ok());
        assert!(Interference::new(0.05, Duration::from_secs(2), 1).is_err());
        assert!(Interference::new(0.0, Duration::from_millis(10), 1).is_err());
    }

    #[test]
    fn the_schedule_is_seeded_and_keeps_the_duty_cycle() {
        let cfg = Interference::new(0.05, Duration::from_millis(10), 7).unwrap();
        // 10 ms bursts at 5 %: a mean gap of 190 ms.
        assert_eq!(cfg.mean_gap(), Duration::from_millis(190));
        let a: Vec<Duration> = cfg.gaps().take(20_000).collect();
        assert_eq!(a, cfg.gaps().take(20_000).collect::<Vec<_>>());
        let other = Interference { seed: 8, ..cfg };
        assert_ne!(a[..10], other.gaps().take(10).collect::<Vec<_>>()[..]);
        // The mean of 20 000 exponential gaps is within 3 % of the law's (sd 0.7 %).
        let mean = a.iter().sum::<Duration>().as_secs_f64() / a.len() as f64;
        assert!((mean / 0.190 - 1.0).abs() < 0.03, "{mean}");
        let duty = 0.010 / (0.010 + mean);
        assert!((duty - 0.05).abs() < 0.002, "{duty}");
    }

    #[test]
    fn the_injector_stops_when_asked() {
        // Stopped at once, long before its own limit: the stop ends the thread.
        let cfg = Interference::new(0.5, Duration::from_micros(200), 3).unwrap();
        let injector = Injector::start(cfg, None, Duration::from_secs(5)).unwrap();
        let tally = injector.stop();
        assert!(!tally.pinned);
        assert!(tally.busy_ms >= 0.0);
        // Bounded by its own limit as well: a zero limit spins nothing.
        let tally = Injector::start(cfg, None, Duration::ZERO).unwrap().stop();
        assert_eq!(tally.bursts, 0);
    }
}
