//! What the scheduler and the hypervisor took from a load run's threads over its
//! arrival window, read from the kernel's own counters at the window's start and end.
//!
//! Why counters and not only the stall logs: the worker's and the generator's stall logs
//! ([`crate::gateway::Stall`], the generator's loop turns) see a thread off its core only
//! where it was looking (a busy-poll turn that took longer in wall time than in CPU
//! time), and only above their 200 us threshold. The kernel counts every nanosecond a
//! runnable thread waited on a run queue (`/proc/self/task/<tid>/schedstat`, second
//! field), and, on a virtual machine, every tick the hypervisor ran something else while
//! a CPU had work (`steal`, the eighth value of a `cpu` line of `/proc/stat`). Steal is
//! not run-queue wait: the guest's scheduler believes its thread ran, so the two are read
//! apart and added by the rule that judges a recording.

use serde::Serialize;

/// A thread's scheduler counters (ns): time on a CPU, time runnable on a run queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadSched {
    pub on_cpu_ns: u64,
    pub run_queue_ns: u64,
}

impl ThreadSched {
    /// The counters of one `schedstat` file: "on-CPU ns, run-queue ns, timeslices".
    pub fn parse(text: &str) -> Option<Self> {
        let mut fields = text.split_whitespace().map(str::parse::<u64>);
        Some(ThreadSched {
            on_cpu_ns: fields.next()?.ok()?,
            run_queue_ns: fields.next()?.ok()?,
        })
    }

    /// The counters of a thread of this process; `None` where the kernel does not keep
    /// them (no `CONFIG_SCHED_INFO`) or the thread is gone.
    pub fn of_thread(tid: i32) -> Option<Self> {
        let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
        Self::parse(&text)
    }

    /// The calling thread's kernel id.
    pub fn current_tid() -> i32 {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() }
    }
}

/// Steal ticks (USER_HZ) from the text of `/proc/stat`: over every CPU (the `cpu` line)
/// and on one CPU (its `cpuN` line). `None` for a value the file does not have (kernels
/// before 2.6.11, or a CPU not listed).
pub fn steal_ticks(stat: &str, cpu: Option<usize>) -> (Option<u64>, Option<u64>) {
    let steal_of = |line: &str| line.split_whitespace().nth(8)?.parse::<u64>().ok();
    let all = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some("cpu"))
        .and_then(steal_of);
    let one = cpu.and_then(|c| {
        let name = format!("cpu{c}");
        stat.lines()
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))
            .and_then(steal_of)
    });
    (all, one)
}

/// The counters at one instant: the worker's and the generator's threads, and steal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchedSnapshot {
    pub worker: Option<ThreadSched>,
    pub generator: Option<ThreadSched>,
    pub steal_all_ticks: Option<u64>,
    pub steal_worker_cpu_ticks: Option<u64>,
    pub at: std::time::Instant,
}

impl SchedSnapshot {
    /// Reads the counters now. `worker_cpu` is the CPU the worker is pinned to, if it is.
    pub fn take(worker_tid: Option<i32>, generator_tid: i32, worker_cpu: Option<usize>) -> Self {
        let (steal_all_ticks, steal_worker_cpu_ticks) = std::fs::read_to_string("/proc/stat")
            .map_or((None, None), |s| steal_ticks(&s, worker_cpu));
        SchedSnapshot {
            worker: worker_tid.and_then(ThreadSched::of_thread),
            generator: ThreadSched::of_thread(generator_tid),
            steal_all_ticks,
            steal_worker_cpu_ticks,
            at: std::time::Instant::now(),
        }
    }
}

/// What the machine took from a run's threads between two snapshots (ms), and how long
/// the window was: the inputs of the evaluation's disturbance rule.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct WindowLoad {
    /// Wall time between the snapshots (ms).
    pub window_ms: f64,
    /// Time the gateway's (first) worker was runnable but waiting for its CPU (ms).
    pub worker_run_queue_ms: Option<f64>,
    /// Time it ran (ms).
    pub worker_on_cpu_ms: Option<f64>,
    /// Time the generator's thread was runnable but waiting for its CPU (ms).
    pub generator_run_queue_ms: Option<f64>,
    /// Steal over every CPU (ms, summed over them), and on the worker's CPU alone (ms;
    /// only when the worker is pinned).
    pub steal_ms: Option<f64>,
    pub worker_cpu_steal_ms: Option<f64>,
}

impl WindowLoad {
    /// The counters' differences from `a` to `b`; `ticks_per_s` is USER_HZ.
    pub fn between(a: &SchedSnapshot, b: &SchedSnapshot, ticks_per_s: f64) -> Self {
        let ms = |ns: u64| ns as f64 / 1e6;
        let thread = |x: Option<ThreadSched>, y: Option<ThreadSched>| {
            x.zip(y).map(|(x, y)| {
                (
                    ms(y.run_queue_ns.saturating_sub(x.run_queue_ns)),
                    ms(y.on_cpu_ns.saturating_sub(x.on_cpu_ns)),
                )
            })
        };
        let ticks = |x: Option<u64>, y: Option<u64>| {
            (ticks_per_s > 0.0)
                .then_some(())
                .and(x.zip(y))
                .map(|(x, y)| y.saturating_sub(x) as f64 * 1e3 / ticks_per_s)
        };
        let worker = thread(a.worker, b.worker);
        WindowLoad {
            window_ms: b.at.saturating_duration_since(a.at).as_secs_f64() * 1e3,
            worker_run_queue_ms: worker.map(|w| w.0),
            worker_on_cpu_ms: worker.map(|w| w.1),
            generator_run_queue_ms: thread(a.generator, b.generator).map(|g| g.0),
            steal_ms: ticks(a.steal_all_ticks, b.steal_all_ticks),
            worker_cpu_steal_ms: ticks(a.steal_worker_cpu_ticks, b.steal_worker_cpu_ticks),
        }
    }
}

/// USER_HZ, the unit of `/proc/stat` (0 when unknown).
pub fn ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  4705 356 584 3699 23 23 0 120 0 0\n\
                        cpu0 1393 280 290 1808 18 9 0 70 0 0\n\
                        cpu1 3312 76 294 1891 5 14 0 50 0 0\n\
                        intr 114930548 113199788 3 0 5 263 0 4\n";

    #[test]
    fn steal_is_read_from_the_eighth_value_of_a_cpu_line() {
        assert_eq!(steal_ticks(STAT, Some(1)), (Some(120), Some(50)));
        assert_eq!(steal_ticks(STAT, None), (Some(120), None));
        // A CPU the file does not list, and a kernel without the column.
        assert_eq!(steal_ticks(STAT, Some(7)).1, None);
        assert_eq!(steal_ticks("cpu 1 2 3 4\n", Some(0)), (None, None));
    }

    #[test]
    fn schedstat_gives_on_cpu_and_run_queue_time() {
        assert_eq!(
            ThreadSched::parse("12345 678 9\n"),
            Some(ThreadSched {
                on_cpu_ns: 12345,
                run_queue_ns: 678
            })
        );
        assert_eq!(ThreadSched::parse("12345\n"), None);
        assert_eq!(ThreadSched::parse("x 1 2"), None);
        // This thread's own file, where the kernel keeps one, parses.
        let tid = ThreadSched::current_tid();
        if std::path::Path::new(&format!("/proc/self/task/{tid}/schedstat")).exists() {
            assert!(ThreadSched::of_thread(tid).is_some());
        }
    }

    #[test]
    fn a_window_is_the_difference_of_its_snapshots() {
        let t0 = std::time::Instant::now();
        let snap = |rq: u64, cpu: u64, steal: u64, at_ms: u64| SchedSnapshot {
            worker: Some(ThreadSched {
                on_cpu_ns: cpu * 1_000_000,
                run_queue_ns: rq * 1_000_000,
            }),
            generator: None,
            steal_all_ticks: Some(steal),
            steal_worker_cpu_ticks: Some(steal / 2),
            at: t0 + std::time::Duration::from_millis(at_ms),
        };
        let w = WindowLoad::between(&snap(10, 100, 40, 0), &snap(60, 1050, 50, 1000), 100.0);
        assert_eq!(w.window_ms, 1000.0);
        assert_eq!(w.worker_run_queue_ms, Some(50.0));
        assert_eq!(w.worker_on_cpu_ms, Some(950.0));
        assert_eq!(w.generator_run_queue_ms, None);
        // 10 ticks of 10 ms over all CPUs, 5 on the worker's.
        assert_eq!(w.steal_ms, Some(100.0));
        assert_eq!(w.worker_cpu_steal_ms, Some(50.0));
        // Unknown USER_HZ: no steal.
        let w = WindowLoad::between(&snap(0, 0, 0, 0), &snap(0, 0, 9, 1), 0.0);
        assert_eq!(w.steal_ms, None);
    }
}
