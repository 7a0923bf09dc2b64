use super::*;

/// A job of a test trace.
struct Job {
    arrival_ns: u64,
    start_ns: u64,
    end_ns: u64,
}

impl TracedJob for Job {
    fn arrival_ns(&self) -> u64 {
        self.arrival_ns
    }
    fn start_ns(&self) -> u64 {
        self.start_ns
    }
    fn end_ns(&self) -> u64 {
        self.end_ns
    }
}

fn job(arrival_ms: f64, start_ms: f64, service_ms: f64) -> Job {
    let ns = |ms: f64| (ms * 1e6) as u64;
    Job {
        arrival_ns: ns(arrival_ms),
        start_ns: ns(start_ms),
        end_ns: ns(start_ms + service_ms),
    }
}

#[test]
fn disturbances_are_widened_by_their_settling_time_and_merged() {
    let stall = (1_000_000, 3_000_000);
    // A generator stall inside the worker stall's settling time merges with it; a
    // later one does not.
    let generator = [(30_000_000, 30_500_000), (200_000_000, 200_300_000)];
    let d = disturbed_intervals(std::iter::once(stall).chain(generator));
    assert_eq!(
        d,
        vec![
            (1_000_000, 30_500_000 + settle_ns(500_000)),
            (200_000_000, 200_300_000 + settle_ns(300_000)),
        ]
    );
    assert!(!meets(&d, 0, 999_999));
    assert!(meets(&d, 0, 1_000_000));
    assert!(meets(&d, 55_000_000, 55_000_000));
    assert!(!meets(&d, d[0].1, 199_999_999));
    assert!(meets(&d, d[0].1, 200_000_000));
    assert!(meets(&d, 0, u64::MAX));
    assert_eq!(covered_length(&d, 0, 10_000_000), 9_000_000);
}

#[test]
fn the_undisturbed_part_leaves_out_the_backlog_of_a_stall() {
    // One job per ms, 0.5 ms of service, never waiting, except that a 5 ms stall of
    // the worker at 500 ms makes the jobs arriving in it wait for its end.
    let mut jobs = Vec::new();
    for i in 0..1000u16 {
        let a = f64::from(i);
        let start = if (500.0..505.0).contains(&a) {
            505.0 + (a - 500.0) * 0.5
        } else {
            a
        };
        jobs.push(job(a, start.max(a), 0.5));
    }
    let stall = (500_000_000, 505_000_000);
    let clean = SteadyQueue::of(&jobs, &[]).unwrap();
    assert!(clean.queueing_wait_ms > 0.0);
    assert_eq!(clean.undisturbed_share, 1.0);
    let q = SteadyQueue::of(&jobs, &disturbed_intervals([stall])).unwrap();
    // The window's measured wait is unchanged; the undisturbed part has none.
    assert_eq!(q.queueing_wait_ms, clean.queueing_wait_ms);
    let u = q.undisturbed.expect("most of the window is undisturbed");
    assert_eq!(u.queueing_wait_ms, 0.0);
    // 5 ms of stall + 20 + 50 ms settling: 75 of the window's ~800 jobs are out, and
    // the rate is read over the undisturbed time only, so it stays one job per ms.
    assert_eq!(u.jobs, q.jobs - 75);
    assert!(
        (u.job_rate_per_s - 1000.0).abs() < 5.0,
        "{}",
        u.job_rate_per_s
    );
    // A disturbance over most of the window leaves too little to read.
    let long = (0, 200_000_000);
    let q = SteadyQueue::of(&jobs, &disturbed_intervals([long])).unwrap();
    assert!(q.undisturbed.is_none());
}

#[test]
fn a_job_that_finds_the_worker_idle_holds_it_from_its_arrival() {
    // Every ms a job finds the worker idle and waits 10 us to be polled out (its
    // delivery); a second arrives 5 us after it, during that delivery, and waits
    // for its whole service. The second's wait holds the delivery.
    let mut jobs = Vec::new();
    for i in 0..1000u16 {
        let t = f64::from(i);
        jobs.push(job(t, t + 0.010, 0.2));
        jobs.push(job(t + 0.005, t + 0.210, 0.2));
    }
    let u = SteadyQueue::of(&jobs, &[]).unwrap().undisturbed.unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
    assert!(close(u.opening_share, 0.5));
    assert!(close(u.opening_delivery_ms, 0.010));
    assert!(close(u.opening_delivery_m2_ms2, 0.0001));
    assert!(close(u.service_mean_ms, 0.200));
    assert!(close(u.queueing_wait_ms, 0.205 / 2.0));
    // A steady pattern: batches differ only where one cuts a pair, so the interval
    // is narrow.
    assert!(u.queueing_wait_ci95_ms.unwrap() < 0.05 * u.queueing_wait_ms);
    // With the delivery counted, the model predicts more wait than with one law.
    assert!(u.exceptional_first_ms().unwrap() > u.pk_ms().unwrap());
}
