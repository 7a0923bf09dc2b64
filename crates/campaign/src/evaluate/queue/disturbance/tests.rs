use super::*;
use crate::evaluate::queue::{Predictions, QueueResults, UndisturbedFigures, WindowWait};

/// A 10 s recording with the given run-queue waits and steal (ms).
fn window(worker_rq: f64, steal: f64, generator_rq: f64) -> RecordingLoad {
    RecordingLoad {
        window_ms: 10_000.0,
        worker_run_queue_ms: Some(worker_rq),
        generator_run_queue_ms: Some(generator_rq),
        worker_steal_ms: Some(steal),
        interference_ms: None,
    }
}

#[test]
fn a_recording_is_disturbed_beyond_a_tenth_of_its_window() {
    // 5 %, the design's interference: undisturbed.
    assert_eq!(window(500.0, 0.0, 0.0).disturbed(), None);
    // Exactly a tenth: still undisturbed.
    assert_eq!(window(1000.0, 0.0, 0.0).disturbed(), None);
    // The worker waited 12 % on its run queue.
    assert_eq!(window(1200.0, 0.0, 0.0).disturbed(), Some(Cause::Stalls));
    // 4 % run queue and 8 % steal: 12 % lost, most of it steal.
    assert_eq!(window(400.0, 800.0, 0.0).disturbed(), Some(Cause::Steal));
    // The generator alone waited 11 %.
    assert_eq!(window(0.0, 0.0, 1100.0).disturbed(), Some(Cause::Stalls));
    // Steal larger than the worker's wait but not the generator's: stalls.
    assert_eq!(window(0.0, 600.0, 1500.0).disturbed(), Some(Cause::Stalls));
    // Figures the kernel did not give count as zero; a window of no length is not judged.
    let unknown = RecordingLoad {
        window_ms: 10_000.0,
        ..RecordingLoad::default()
    };
    assert_eq!(unknown.disturbed(), None);
    assert_eq!(RecordingLoad::default().disturbed(), None);
}

#[test]
fn steal_is_the_workers_cpu_or_a_share_of_all() {
    let w = WindowLoad {
        window_ms: 1000.0,
        worker_run_queue_ms: Some(3.0),
        worker_on_cpu_ms: Some(990.0),
        generator_run_queue_ms: Some(1.0),
        steal_ms: Some(40.0),
        worker_cpu_steal_ms: Some(30.0),
    };
    let r = RecordingLoad::of(&w, 2, Some(50.0));
    assert_eq!(r.worker_steal_ms, Some(30.0));
    assert_eq!(r.interference_ms, Some(50.0));
    let unpinned = WindowLoad {
        worker_cpu_steal_ms: None,
        ..w
    };
    assert_eq!(
        RecordingLoad::of(&unpinned, 2, None).worker_steal_ms,
        Some(20.0)
    );
}

#[test]
fn the_allowance_charges_each_re_recording_before_it_runs() {
    // 216 s planned: 43.2 s; a 10 s recording costs 11.5 s with its overhead.
    let b = RerecordBudget::for_part(216.0);
    assert!(b.take(10.0) && b.take(10.0) && b.take(10.0));
    // 34.5 s spent: a fourth (46 s) does not fit, a 6 s one (41.4 s) does.
    assert!(!b.take(10.0));
    assert!(b.take(6.0));
    let s = b.summary();
    assert_eq!((s.rerecords, s.refused), (4, 1));
    assert!((s.spent_s - 41.4).abs() < 1e-9 && (s.limit_s - 43.2).abs() < 1e-9);
    // No allowance: nothing is recorded again.
    let none = RerecordBudget::new(0.0);
    assert!(!none.take(0.5));
    assert_eq!(none.summary().refused, 1);
}

/// A designed bearer point at `rho`, judged unless spoiled by the caller.
fn designed(rho: f64) -> LoadPoint {
    LoadPoint {
        case: "283k/283k".into(),
        round_trip_ms: 20.0,
        calibration: super::super::PointCalibration {
            target_rho: rho,
            measured_rho: rho,
            ..Default::default()
        },
        window: WindowWait {
            measured_wait_ms: 1.0,
            measured_wait_ci95_ms: Some(0.05),
            ..Default::default()
        },
        models: Predictions {
            corrected_ms: Some(1.0),
            corrected_undisturbed_ms: Some(1.05),
            ..Default::default()
        },
        undisturbed: UndisturbedFigures {
            share: 0.5,
            wait_ms: Some(1.0),
            wait_ci95_ms: Some(0.05),
            opening_delivery_ms: Some(0.01),
        },
        recording: super::super::RecordingFigures {
            load: window(300.0, 20.0, 50.0),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Sixteen designed points: 13 judged, one disturbed by steal, one that missed its rho,
/// one without an undisturbed part; and one loopback point, which is not designed.
fn sixteen() -> Vec<LoadPoint> {
    let rhos = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
    let mut points: Vec<LoadPoint> = rhos.iter().chain(&rhos).map(|&r| designed(r)).collect();
    points[3].recording.disturbed = Some(Cause::Steal);
    points[3].recording.load = window(200.0, 1500.0, 0.0);
    points[5].calibration.rho_missed = true;
    points[9].undisturbed.wait_ms = None;
    points.push(LoadPoint {
        round_trip_ms: 0.0,
        ..designed(0.3)
    });
    points
}

fn results(load: Vec<LoadPoint>, designed: usize) -> QueueResults {
    QueueResults {
        designed,
        rerecord: RerecordSummary {
            limit_s: 43.2,
            spent_s: 11.5,
            rerecords: 1,
            refused: 0,
        },
        ..QueueResults::judgement_view(load)
    }
}

#[test]
fn a_run_that_judged_fewer_than_designed_says_so_with_the_causes() {
    let q = results(sixteen(), 16);
    let d = q.degraded().expect("degraded");
    assert_eq!((d.judged, d.designed), (13, 16));
    assert_eq!(
        d.causes,
        Causes {
            steal: 1,
            stalls: 1,
            missed_rho: 1,
            not_run: 0
        }
    );
    assert_eq!(d.causes.total(), d.designed - d.judged);
    // Summed over the 16 designed points' kept recordings (the loopback one is not).
    assert!((d.steal_ms - (15.0 * 20.0 + 1500.0)).abs() < 1e-9);
    assert!((d.worker_run_queue_ms - (15.0 * 300.0 + 200.0)).abs() < 1e-9);
    assert!((d.generator_run_queue_ms - 15.0 * 50.0).abs() < 1e-9);
    assert_eq!(d.rerecord.rerecords, 1);
    assert_eq!(
        d.words(),
        "degraded run: 13 of 16 designed load points judged (steal 1, stalls 1, missed rho 1)"
    );
    // The undisturbed judgement leaves the same three out and counts the design.
    let j = q.undisturbed_judgement();
    assert_eq!((j.points(), j.designed, j.missed), (13, 16, 1));
    // The whole-window judgement leaves out the disturbed and the missed point only.
    assert_eq!(q.corrected_judgement().points(), 14);
}

#[test]
fn a_run_that_judged_every_designed_point_is_not_degraded() {
    let all: Vec<LoadPoint> = sixteen()
        .into_iter()
        .filter(|p| p.round_trip_ms > 0.0)
        .map(|p| designed(p.calibration.target_rho))
        .collect();
    assert_eq!(all.len(), 16);
    assert_eq!(results(all.clone(), 16).degraded(), None);
    // Two designed points that never ran (a case without a service time) count.
    let fewer = results(all[2..].to_vec(), 16).degraded().expect("degraded");
    assert_eq!(
        (fewer.judged, fewer.designed, fewer.causes.not_run),
        (14, 16, 2)
    );
    // No load test at all.
    let none = results(Vec::new(), 16).degraded().expect("degraded");
    assert_eq!((none.judged, none.causes.not_run), (0, 16));
}

#[test]
fn a_disturbed_recording_is_the_cause_before_its_missed_rho() {
    let mut p = designed(0.7);
    assert_eq!(unjudged_cause(&p), None);
    p.calibration.rho_missed = true;
    assert_eq!(unjudged_cause(&p), Some(Cause::MissedRho));
    p.recording.disturbed = Some(Cause::Stalls);
    assert_eq!(unjudged_cause(&p), Some(Cause::Stalls));
    let mut q = designed(0.7);
    q.models.corrected_undisturbed_ms = None;
    assert_eq!(unjudged_cause(&q), Some(Cause::Stalls));
}

#[test]
fn the_degraded_account_serialises_with_the_documented_names() {
    let d = results(sixteen(), 16).degraded().unwrap();
    let json = serde_json::to_value(&d).unwrap();
    for key in [
        "judged",
        "designed",
        "causes",
        "steal_ms",
        "worker_run_queue_ms",
        "generator_run_queue_ms",
        "interference_ms",
        "rerecord",
    ] {
        assert!(json.get(key).is_some(), "{key}");
    }
    for key in ["steal", "stalls", "missed_rho", "not_run"] {
        assert!(json["causes"].get(key).is_some(), "{key}");
    }
    for key in ["limit_s", "spent_s", "rerecords", "refused"] {
        assert!(json["rerecord"].get(key).is_some(), "{key}");
    }
}

#[test]
fn the_other_protocols_unjudged_points_are_counted_with_their_causes() {
    let edhoc = wtlsperf_drivers::protocols::EDHOC;
    let mut points: Vec<LoadPoint> = [0.3, 0.5, 0.7]
        .iter()
        .map(|&r| LoadPoint {
            protocol: edhoc,
            ..designed(r)
        })
        .collect();
    let mut q = results(Vec::new(), 16);
    q.modern = points.clone();
    assert_eq!(q.other_protocols_judged(), (3, 3, Vec::new()));
    points[0].recording.disturbed = Some(Cause::Stalls);
    points[1].recording.disturbed = Some(Cause::Stalls);
    points[1].undisturbed.share = 0.01;
    points[1].disturbances.delivery_stalls = 180;
    points[1].disturbances.worker_stalls = 20;
    points[2].calibration.rho_missed = true;
    q.modern = points;
    assert_eq!(
        q.other_protocols_judged(),
        (
            0,
            3,
            vec!["edhoc 0 of 3 (stalls 2, missed rho 1)".to_owned()]
        )
    );
    assert_eq!(
        q.other_protocols_in_detail(),
        (
            0,
            3,
            vec!["edhoc 0 of 3 (stalls 2, missed rho 1; the stalled points' undisturbed share 50.0 %, 1.0 %, with 180 datagrams held on their way to a free worker, 20 worker stalls, 0 generator stalls)".to_owned()]
        )
    );
}

#[test]
fn a_run_whose_other_protocols_went_unjudged_is_degraded_with_their_causes() {
    let mut q = results(
        sixteen()
            .into_iter()
            .filter(|p| !p.calibration.rho_missed)
            .collect(),
        15,
    );
    for p in q.load.iter_mut() {
        p.recording.disturbed = None;
        p.undisturbed.wait_ms = Some(1.0);
    }
    assert_eq!(q.degraded(), None);
    let mut quic = designed(0.5);
    quic.protocol = wtlsperf_drivers::protocols::EDHOC;
    quic.recording.disturbed = Some(Cause::Stalls);
    q.modern = vec![quic];
    let d = q.degraded().expect("degraded by the other protocols");
    assert_eq!((d.judged, d.designed), (15, 15));
    assert_eq!(
        d.words(),
        "degraded run: 15 of 15 designed load points judged (the other protocols' load points 0 of 1 judged, short: edhoc 0 of 1 (stalls 1; the stalled points' undisturbed share 50.0 %, with 0 datagrams held on their way to a free worker, 0 worker stalls, 0 generator stalls))"
    );
}
