//! The findings on the load points beyond the load test's own (`queue::variants`): the
//! Poisson premise under other round-trip laws, and mutual handshakes of three or more
//! jobs. Each is decided by the interval rule of `queue::variants::PointVerdict`.

use wtlsperf_models::Authentication;
use wtlsperf_report::{Finding, FindingKind};

use crate::evaluate::queue::variants::{
    whole_window_wait, LawSummary, PointVerdict, VerdictCounts,
};
use crate::evaluate::queue::{LoadPoint, QueueResults};
use crate::evaluate::verdict;

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
    let verdict = verdict::interval_verdict(judged, keeps, stops);
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
        .rule(format!("{}; over the set named in the claim (fixed-jitter, gsm-csd, pareto; bimodal and the exponential baseline reported beside it, not judged), the corrected model against the undisturbed jobs' mean wait.", verdict::INTERVAL_RULE)),
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
    // The loads the claim covers: the points' target rhos, as the other queue findings
    // state theirs.
    let mut rhos: Vec<f64> = q
        .variants
        .mutual
        .iter()
        .map(|p| p.calibration.target_rho)
        .collect();
    rhos.sort_by(f64::total_cmp);
    rhos.dedup();
    let rho_text = rhos
        .iter()
        .map(|r| format!("{r:.1}"))
        .collect::<Vec<_>>()
        .join(" and ");
    let pct = |e: Option<f64>| e.map_or("-".to_owned(), |e| format!("{:.1} %", e * 100.0));
    let verdict = verdict::interval_verdict(v.judged(), v.keeps, v.stops);
    let whole = VerdictCounts::of(&q.variants.mutual, true);
    let replay = replay_counts(q.variants.mutual.iter());
    Some(
        Finding::new(
            // The claim names the set it is judged on: WTLS, one datagram per message.
            // The other protocols' mutual load points (one datagram per flight) are judged
            // by `protocols_queue_model`.
            format!(
                "The corrected Eq. 3.12 (k x lambda, per-job moments) predicts the gateway's mean wait for mutually authenticated WTLS handshakes sent one datagram per message, which bring it {} jobs each ({}), at target rho {rho_text} ({} points; higher loads are not tested here); the other protocols' load points (their flights packed into datagrams by their own libraries) are judged in the finding on the other protocols.",
                jobs_text(k_low, k_high),
                cases.join(", "),
                q.variants.mutual.len(),
            ),
            format!(
                "Load test on the real gateway ({}; mutual, one datagram per message, {} jobs a handshake, {} ms exponential round trip, each point at its measured rho). Undisturbed jobs, by the interval rule: {} (median |error| {}, worst {}). Whole window, stalls of {} included (reported, not judged): {} (median |error| {}, worst {}). FIFO replay of the runs' own arrivals against the whole window (reported, not judged): {}.",
                cases.join(", "),
                jobs_text(k_low, k_high),
                crate::evaluate::queue::reality::BEARER_ROUND_TRIP_MS,
                super::interval_text(&v),
                pct(j.undisturbed.median()),
                pct(j.undisturbed.worst()),
                q.stall_sources(),
                super::interval_text(&whole),
                pct(j.corrected.median()),
                pct(j.corrected.worst()),
                super::interval_text(&replay),
            ),
            verdict,
        )
        .kind(FindingKind::ModelAgainstRun)
        .rule(format!("{}; over both mutual cases, the corrected model against the undisturbed jobs' mean wait. The whole window and the FIFO replay are reported beside it.", verdict::INTERVAL_RULE)),
    )
}

/// The FIFO replay against the whole window's measured mean wait, by the interval rule.
fn replay_counts<'a>(points: impl Iterator<Item = &'a LoadPoint>) -> VerdictCounts {
    VerdictCounts::tally(
        points.map(|p| PointVerdict::at(p, p.models.replay_ms, Some(whole_window_wait(p)))),
    )
}

/// The corrected model on the other protocols' load points (DTLS 1.2, EDHOC, DTLS 1.3,
/// the rest of the registry, each against its own real server behind the same gateway worker), decided per
/// point by the interval rule on the undisturbed jobs, as the WTLS variants are; the
/// whole window, the FIFO replay and how late the generator's sends left are reported
/// beside it, and a point not judged is named with its whole-window figures and why.
pub(super) fn protocols_queue_model(q: &QueueResults) -> Option<Finding> {
    if q.modern.is_empty() {
        return None;
    }
    let pct = |e: Option<f64>| e.map_or("-".to_owned(), |e| format!("{:.1} %", e * 100.0));
    let (mut judged, mut keeps, mut stops) = (0, 0, 0);
    let mut parts = Vec::new();
    let mut scope: Vec<(Authentication, String)> = Vec::new();
    for protocol in wtlsperf_drivers::registry::ids() {
        let points: Vec<&LoadPoint> = q.modern.iter().filter(|p| p.protocol == protocol).collect();
        let Some(first) = points.first() else {
            continue;
        };
        scope.push((first.auth, server_of(protocol)));
        let v = VerdictCounts::of(points.iter().copied(), false);
        let j = q.protocol_judgement(protocol);
        judged += v.judged();
        keeps += v.keeps;
        stops += v.stops;
        let late = points.iter().map(|p| p.run.late_share).fold(0.0, f64::max);
        let rho = |f: fn(f64, f64) -> f64, start: f64| {
            points.iter().map(|p| p.calibrated_rho()).fold(start, f)
        };
        parts.push(format!(
            "{protocol} ({}, {} points, measured rho {:.2} to {:.2}, over the undisturbed jobs where the run has them, else the whole window): undisturbed jobs {} (median |error| {}, worst {}); whole window {}; FIFO replay of the run's own arrivals {}; at most {:.1} % of the generator's scheduled sends left more than 1 ms late{}",
            auth_word(first.auth),
            points.len(),
            rho(f64::min, f64::INFINITY),
            rho(f64::max, 0.0),
            super::interval_text(&v),
            pct(j.undisturbed.median()),
            pct(j.undisturbed.worst()),
            super::interval_text(&VerdictCounts::of(points.iter().copied(), true)),
            super::interval_text(&replay_counts(points.iter().copied())),
            late * 100.0,
            not_judged_points(&points),
        ));
    }
    Some(
        Finding::new(
            format!(
                "The corrected Eq. 3.12 (k x lambda, per-job moments) predicts the gateway's mean wait for the other protocols on the spine, each against its own real server behind the same gateway worker ({}), as it is judged for WTLS; judged on their load points (each library packing its own flights into datagrams, a job a datagram), over the undisturbed jobs.",
                scope_text(&scope),
            ),
            format!(
                "Load test on the real gateway, {} ms exponential round trip, each point at its measured rho; a job is a datagram (the libraries do not report their records). The whole window and the FIFO replay are reported, not judged. {}. The generator runs every client's handshake, its public-key work included, on its one core: a send that leaves late makes the arrivals less Poisson than the model assumes, which the FIFO replay of the run's own arrivals does not assume.",
                crate::evaluate::queue::reality::BEARER_ROUND_TRIP_MS,
                parts.join("; "),
            ),
            verdict::interval_verdict(judged, keeps, stops),
        )
        .kind(FindingKind::ModelAgainstRun)
        .rule(format!("{}; over every protocol's points, the corrected model against the undisturbed jobs' mean wait. The whole window and the FIFO replay are reported beside it.", verdict::INTERVAL_RULE)),
    )
}

/// The real server of a protocol, as the claim names it: its registry entry's title
/// (the protocol, its standard and the implementation behind it).
fn server_of(protocol: wtlsperf_spine::ProtocolId) -> String {
    wtlsperf_drivers::registry::entry(protocol)
        .title()
        .to_owned()
}

fn auth_word(a: Authentication) -> &'static str {
    match a {
        Authentication::Mutual => "mutually authenticated",
        Authentication::ServerAuth => "server-authenticated",
    }
}

/// "<title> and <title>, mutually authenticated; <title>, server-authenticated", each
/// title a registry entry's.
fn scope_text(scope: &[(Authentication, String)]) -> String {
    let mut groups: Vec<String> = Vec::new();
    for auth in Authentication::ALL {
        let names: Vec<&str> = scope
            .iter()
            .filter(|(a, _)| *a == auth)
            .map(|(_, n)| n.as_str())
            .collect();
        if let Some((last, rest)) = names.split_last() {
            let list = if rest.is_empty() {
                (*last).to_owned()
            } else {
                format!("{} and {last}", rest.join(", "))
            };
            groups.push(format!("{list}, {}", auth_word(auth)));
        }
    }
    groups.join("; ")
}

/// The points of a protocol the rule does not judge, each with why and its whole-window
/// figures (reported, not judged): `; not judged: p256-ecdsa at rho 0.5 (...)`.
fn not_judged_points(points: &[&LoadPoint]) -> String {
    let named: Vec<String> = points
        .iter()
        .filter(|p| PointVerdict::of_point(p, false) == PointVerdict::NotJudged)
        .map(|p| {
            let mut why = Vec::new();
            if p.calibration.target_rho > 0.8 + 1e-9 {
                why.push("target rho above 0.8".to_owned());
            }
            if p.calibration.rho_missed {
                why.push(format!(
                    "measured rho {:.2} missed the target",
                    p.calibrated_rho()
                ));
            }
            if let Some(cause) = p.recording.disturbed {
                why.push(format!("recording disturbed ({})", cause.name()));
            }
            if p.undisturbed.wait_ms.is_none() {
                why.push("no undisturbed part to read".to_owned());
            }
            let measured = p.window.measured_wait_ms;
            let figure = |name: &str, w: Option<f64>| {
                w.map_or(String::new(), |w| {
                    format!(
                        ", {name} {w:.2} ms ({:+.0} %)",
                        (w / measured - 1.0) * 100.0
                    )
                })
            };
            format!(
                "{} at rho {:.1} ({}): whole window measured {measured:.2} ms{}{}",
                p.case,
                p.calibration.target_rho,
                why.join(", "),
                figure("corrected model", p.models.corrected_ms),
                figure("FIFO replay", p.models.replay_ms),
            )
        })
        .collect();
    if named.is_empty() {
        String::new()
    } else {
        format!("; not judged, reported: {}", named.join("; "))
    }
}
