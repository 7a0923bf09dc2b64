use super::*;

/// A job of a test trace.
struct Job {
    arrival_ns: u64,
    start_ns: u64,
    end_ns: u64,
    source: Option<std::net::SocketAddr>,
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
    fn source(&self) -> Option<std::net::SocketAddr> {
        self.source
    }
}

fn job(arrival_ms: f64, start_ms: f64, service_ms: f64) -> Job {
    let ns = |ms: f64| (ms * 1e6) as u64;
    Job {
        arrival_ns: ns(arrival_ms),
        start_ns: ns(start_ms),
        end_ns: ns(start_ms + service_ms),
        source: None,
    }
}

/// A job from the client at 127.0.0.1:`port`.
fn sent(port: u16, arrival_ms: f64, start_ms: f64, service_ms: f64) -> Job {
    Job {
        source: Some(std::net::SocketAddr::from(([127, 0, 0, 1], port))),
        ..job(arrival_ms, start_ms, service_ms)
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

#[test]
fn a_clients_datagrams_sent_before_its_answer_are_one_flight() {
    // Client 1 sends two datagrams 0.005 ms apart, the worker idle: the second waits
    // for the first (0.2 ms of occupancy less its 0.005 ms later arrival). Its next
    // datagram comes after the answer (the first flight's end): a flight of its own.
    // Client 2's lone datagram is a flight too, as is every job without a source.
    let jobs = [
        sent(1, 0.0, 0.0, 0.2),
        sent(1, 0.005, 0.2, 0.1),
        sent(2, 1.0, 1.0, 0.3),
        sent(1, 2.0, 2.0, 0.1),
        job(3.0, 3.0, 0.1),
        job(3.001, 3.1, 0.1),
    ];
    let refs: Vec<&Job> = jobs.iter().collect();
    let occupancy: Vec<u64> = jobs.iter().map(|j| j.service_ns()).collect();
    let f = Flights::of(&refs, &occupancy);
    assert_eq!(f.id[0], f.id[1]);
    let distinct: std::collections::HashSet<usize> = f.id.iter().copied().collect();
    assert_eq!(distinct.len(), 5);
    assert_eq!(f.within_ns, vec![0, 195_000, 0, 0, 0, 0]);
}

#[test]
fn the_flight_model_is_eq_3_12_with_one_job_per_flight_and_adds_the_flights_own_wait() {
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    // One job per flight: the flights' moments are the jobs', nothing is waited behind
    // one's own flight, and the model is P-K at the job rate.
    let single = FlightLoad::of([(1, 0.2, 0.0), (2, 0.4, 0.0)], 2.0).unwrap();
    assert_eq!(single.flights, 2);
    assert!(close(single.rate_per_s, 1000.0));
    let pk = crate::queue::pk_mean_wait_ms(1000.0, 0.3, 0.1).unwrap();
    assert!(close(single.pk_ms().unwrap(), pk));
    // The same jobs as one flight: half the rate, B = 0.6 ms, and the second job waits
    // 0.2 ms behind the first (0.1 ms per job on average).
    let pair = FlightLoad::of([(1, 0.2, 0.0), (1, 0.4, 0.2)], 2.0).unwrap();
    assert_eq!(pair.flights, 1);
    assert!(close(pair.occupancy_mean_ms, 0.6));
    assert!(close(pair.occupancy_m2_ms2, 0.36));
    let pk = crate::queue::pk_mean_wait_ms(500.0, 0.6, 0.36).unwrap();
    assert!(close(pair.pk_ms().unwrap(), pk + 0.1));
    // At the same utilisation, the flights wait longer than independent jobs would.
    assert!(pair.pk_ms().unwrap() > single.pk_ms().unwrap());
    // No delivery: the exceptional-first form is the plain one.
    assert!(close(
        pair.exceptional_first_ms(0.0, 0.0).unwrap(),
        pair.pk_ms().unwrap()
    ));
}

#[test]
fn a_steady_window_of_pairs_is_read_as_flights() {
    // Every millisecond a client sends two datagrams at once to an idle worker: each
    // pair is one flight, and the second of it waits the first's occupancy.
    let mut jobs = Vec::new();
    for i in 0..1000u16 {
        let t = f64::from(i);
        jobs.push(sent(i, t, t, 0.2));
        jobs.push(sent(i, t, t + 0.2, 0.2));
    }
    let q = SteadyQueue::of(&jobs, &[]).unwrap();
    let u = q.undisturbed.unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
    assert!(close(q.flights.within_ms, 0.1));
    assert!(close(u.flights.occupancy_mean_ms, 0.4 + q.typical_gap_ms));
    assert!(close(u.flights.rate_per_s * 2.0, u.job_rate_per_s));
}
