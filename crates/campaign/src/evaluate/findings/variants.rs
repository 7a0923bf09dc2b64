//! The findings on the load points beyond the load test's own (`queue::variants`): the
//! Poisson premise under other round-trip laws, and mutual handshakes of three or more
//! jobs. Each is decided by the interval rule of `queue::variants::PointVerdict`.

use wtlsperf_report::{Finding, FindingKind, Verdict};

use crate::evaluate::queue::variants::LawSummary;
use crate::evaluate::queue::QueueResults;

/// The premise under round-trip laws that are not exponential (`queue::variants`):
/// decided over the laws whose every round trip is long beside a job, by the interval
/// rule of [`PointVerdict`] on the undisturbed jobs; the bimodal law, whose answers half
/// the time come back at once, is reported as the test of where the premise stops.
pub(super) fn poisson_robustness(q: &QueueResults) -> Option<Finding> {
    use wtlsperf_drivers::load::RoundTripLaw;
    let laws = q.variants_headline().queue_robustness;
    if laws.is_empty() {
        return None;
    }
    let claimed = [
        RoundTripLaw::Jittered,
        RoundTripLaw::GsmCsd,
        RoundTripLaw::Pareto,
    ];
    let pct = |e: Option<f64>| e.map_or("-".to_owned(), |e| format!("{:.1} %", e * 100.0));
    let describe = |l: &LawSummary| {
        format!(
            "{}: undisturbed jobs keep 15 % at {} of {} points, stop at {}, undecided at {} (worst |error| {}); whole window keeps at {} of {}, stops at {} (worst {})",
            l.law,
            l.undisturbed.keeps,
            l.undisturbed.judged(),
            l.undisturbed.stops,
            l.undisturbed.undecided,
            pct(l.undisturbed_worst_error),
            l.whole_window.keeps,
            l.whole_window.judged(),
            l.whole_window.stops,
            pct(l.whole_window_worst_error),
        )
    };
    let set: Vec<&LawSummary> = laws
        .iter()
        .filter(|l| claimed.iter().any(|c| c.name() == l.law))
        .collect();
    let judged: usize = set.iter().map(|l| l.undisturbed.judged()).sum();
    let stops: usize = set.iter().map(|l| l.undisturbed.stops).sum();
    let keeps: usize = set.iter().map(|l| l.undisturbed.keeps).sum();
    let verdict = interval_verdict(judged, keeps, stops);
    Some(
        Finding::new(
            format!(
                "The corrected Eq. 3.12 keeps its 15 % when the bearer's round trips are not exponential, as long as each is long beside a job: nearly fixed, the thesis' GSM CSD law (section 4.3.1: traversals of 391.3 ms mean and 90 ms standard deviation, here scaled to the load test's {} ms), heavy-tailed.",
                crate::evaluate::queue::reality::BEARER_ROUND_TRIP_MS
            ),
            format!(
                "Load test on the real gateway, {}, each point at its measured rho; the rule: the model against the measured mean wait's 95 % interval gives an interval of relative errors, which keeps 15 % when it lies within +-15 %, stops when it lies wholly beyond, and is undecided otherwise; the verdict is confirmed when every judged point of the three laws keeps, contradicted when one stops. {}.",
                crate::evaluate::queue::variants::ROBUSTNESS_CASE,
                laws.iter().map(describe).collect::<Vec<_>>().join("; "),
            ),
            verdict,
        )
        .kind(FindingKind::ModelAgainstRun)
        .rule("per point, the model against the undisturbed jobs' measured mean wait and its 95 % interval gives an interval of relative errors: keeps when it lies within +-15 %, stops when it lies wholly beyond, undecided otherwise; over the set named in the claim (fixed-jitter, gsm-csd, pareto; bimodal and the exponential baseline reported beside it, not judged): confirmed when every judged point keeps, contradicted when one stops, otherwise inconclusive."),
    )
}

/// "4" or "4 to 6": the jobs a handshake brings over the judged cases.
fn jobs_text(low: f64, high: f64) -> String {
    if (high - low).abs() < 0.05 {
        format!("{low:.0}")
    } else {
        format!("{low:.0} to {high:.0}")
    }
}

/// The corrected model on mutual handshakes of three or more jobs (`queue::variants`),
/// decided by the interval rule on the undisturbed jobs, the whole window beside it.
pub(super) fn mutual_queue_model(q: &QueueResults) -> Option<Finding> {
    if q.variants.mutual.is_empty() {
        return None;
    }
    let h = q.variants_headline();
    let j = QueueResults::judgement_of(q.variants.mutual.clone());
    let v = h.queue_mutual_undisturbed_verdicts;
    let (k_low, k_high) = h.queue_mutual_jobs_per_handshake?;
    let cases: Vec<&str> = {
        let mut c: Vec<&str> = q.variants.mutual.iter().map(|p| p.case.as_str()).collect();
        c.dedup();
        c
    };
    let pct = |e: Option<f64>| e.map_or("-".to_owned(), |e| format!("{:.1} %", e * 100.0));
    let verdict = interval_verdict(v.judged(), v.keeps, v.stops);
    Some(
        Finding::new(
            // The claim names the set it is judged on: WTLS, one datagram per message.
            // The other protocols' mutual load points (one datagram per flight) are judged
            // by `protocols_queue_model`.
            format!(
                "The corrected Eq. 3.12 (k x lambda, per-job moments) predicts the gateway's mean wait for mutually authenticated WTLS handshakes sent one datagram per message, which bring it {} jobs each ({}); the DTLS and EDHOC mutual load points (one datagram per flight) are judged in the finding on the other protocols.",
                jobs_text(k_low, k_high),
                cases.join(", "),
            ),
            format!(
                "Load test on the real gateway ({}; mutual, one datagram per message, {} jobs a handshake, {} ms exponential round trip, each point at its measured rho). Undisturbed jobs: within 15 % at {} of {} points (median |error| {}, worst {}); by the interval rule stated below (the relative errors the measured interval allows, against +-15 %), keeps at {}, stops at {}, undecided at {}. Whole window, stalls of the shared machine included: within 15 % at {} of {} (median {}, worst {}), outside both 15 % and the interval at {}. FIFO replay of the runs' own arrivals: within 15 % at {} of {}.",
                cases.join(", "),
                jobs_text(k_low, k_high),
                crate::evaluate::queue::reality::BEARER_ROUND_TRIP_MS,
                j.undisturbed.within,
                j.undisturbed.points(),
                pct(j.undisturbed.median()),
                pct(j.undisturbed.worst()),
                v.keeps,
                v.stops,
                v.undecided,
                j.corrected.within,
                j.corrected.points(),
                pct(j.corrected.median()),
                pct(j.corrected.worst()),
                j.corrected.outside_both,
                j.replay.within,
                j.replay.points(),
            ),
            verdict,
        )
        .kind(FindingKind::ModelAgainstRun)
        .rule("per point, the model against the undisturbed jobs' measured mean wait and its 95 % interval gives an interval of relative errors: keeps when it lies within +-15 %, stops when it lies wholly beyond, undecided otherwise; over both mutual cases: confirmed when every judged point keeps, contradicted when one stops, otherwise inconclusive. The whole window is reported beside it."),
    )
}

/// The corrected model on the other protocols' load points (DTLS 1.2, EDHOC, DTLS 1.3,
/// each against its own real server behind the same gateway worker), decided per point by
/// the interval rule on the undisturbed jobs, as the WTLS variants are; the whole window,
/// the FIFO replay and how late the generator's sends left are reported beside it.
pub(super) fn protocols_queue_model(q: &QueueResults) -> Option<Finding> {
    use crate::evaluate::queue::variants::VerdictCounts;
    if q.modern.is_empty() {
        return None;
    }
    let pct = |e: Option<f64>| e.map_or("-".to_owned(), |e| format!("{:.1} %", e * 100.0));
    let (mut judged, mut keeps, mut stops) = (0, 0, 0);
    let mut parts = Vec::new();
    for protocol in wtlsperf_drivers::registry::ids() {
        let points: Vec<_> = q.modern.iter().filter(|p| p.protocol == protocol).collect();
        if points.is_empty() {
            continue;
        }
        let v = VerdictCounts::of(points.iter().copied(), false);
        let j = q.protocol_judgement(protocol);
        judged += v.judged();
        keeps += v.keeps;
        stops += v.stops;
        let late = points.iter().map(|p| p.run.late_share).fold(0.0, f64::max);
        parts.push(format!(
            "{protocol} ({} points, measured rho {:.2} to {:.2}): undisturbed jobs keep 15 % at {}, stop at {}, undecided at {}, not judged {} (median |error| {}, worst {}); whole window within 15 % at {} of {}; FIFO replay of the run's own arrivals within 15 % at {} of {}; at most {:.1} % of the generator's scheduled sends left more than 1 ms late",
            points.len(),
            points.iter().map(|p| p.calibration.measured_rho).fold(f64::INFINITY, f64::min),
            points.iter().map(|p| p.calibration.measured_rho).fold(0.0, f64::max),
            v.keeps,
            v.stops,
            v.undecided,
            v.not_judged,
            pct(j.undisturbed.median()),
            pct(j.undisturbed.worst()),
            j.corrected.within,
            j.corrected.points(),
            j.replay.within,
            j.replay.points(),
            late * 100.0,
        ));
    }
    Some(
        Finding::new(
            "The corrected Eq. 3.12 (k x lambda, per-job moments) predicts the gateway's mean wait for the other protocols on the spine, each against its own real server behind the same gateway worker (DTLS 1.2 through OpenSSL, EDHOC through lakers, DTLS 1.3), as it is judged for WTLS; judged on their mutually authenticated load points, one datagram per flight, over the undisturbed jobs.".to_owned(),
            format!(
                "Load test on the real gateway, mutual authentication, one datagram per flight, {} ms exponential round trip, each point at its measured rho; a job is a datagram (neither library reports its records). {}. The generator runs every client's handshake, its public-key work included, on its one core: a send that leaves late makes the arrivals less Poisson than the model assumes, which the FIFO replay of the run's own arrivals does not assume.",
                crate::evaluate::queue::reality::BEARER_ROUND_TRIP_MS,
                parts.join("; "),
            ),
            interval_verdict(judged, keeps, stops),
        )
        .kind(FindingKind::ModelAgainstRun)
        .rule("per point, the model against the undisturbed jobs' measured mean wait and its 95 % interval gives an interval of relative errors: keeps when it lies within +-15 %, stops when it lies wholly beyond, undecided otherwise (a point that missed its target rho after the repeats is not judged); over every protocol's points: confirmed when every judged point keeps, contradicted when one stops, otherwise inconclusive. The whole window and the FIFO replay are reported beside it."),
    )
}

/// The verdict over a set of points judged by the interval rule: contradicted when one
/// stops, confirmed when every judged point keeps, inconclusive otherwise (or when none
/// was judged).
fn interval_verdict(judged: usize, keeps: usize, stops: usize) -> Verdict {
    if judged == 0 {
        Verdict::Inconclusive
    } else if stops > 0 {
        Verdict::Contradicted
    } else if keeps == judged {
        Verdict::Confirmed
    } else {
        Verdict::Inconclusive
    }
}
