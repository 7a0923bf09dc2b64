//! What the report's first screen says about the run: its headline numbers (from
//! `summary.json`'s `headline`, each with its kind and the section that shows it) and its
//! status, the "degraded run" banner, read from the same headline's `degraded` field
//! (docs/results.md, "The report's first screen").

use serde_json::Value;
use wtlsperf_report::{HeadlineNumber, ProvenanceKind, RunStatus};

use super::output::Headline;

/// The headline numbers of the first screen; a number the run did not produce is left
/// out rather than shown empty. `json` is the same headline as `summary.json` writes it:
/// where its `degraded` object gives the designed points, the judged ones are counted
/// against them.
pub fn headline_numbers(h: &Headline, json: &Value) -> Vec<HeadlineNumber> {
    use ProvenanceKind::*;
    let mut out = vec![HeadlineNumber::new(
        "Handshake cases measured (case x authentication)",
        h.cases_measured.to_string(),
        Measured,
        "processing",
    )];
    if let (Some(c), Some(s)) = (h.client_speedup_median, h.server_speedup_median) {
        out.push(HeadlineNumber::new(
            "Published 2004 time over ours, median: client | gateway",
            format!("{c:.0}x | {s:.0}x"),
            Derived,
            "processing",
        ));
    }
    if let Some(r) = h.worst_bound_ratio {
        out.push(HeadlineNumber::new(
            format!(
                "Gateway CPU over its public-key operations, largest ({}); cases whose bound is not shown (a measurement failure, or an interval that does not clear 1)",
                h.worst_bound_case.as_deref().unwrap_or("?")
            ),
            format!("{r:.2}x; {}", h.bound_failures),
            Measured,
            "processing",
        ));
    }
    // The pair counts the points within 15 % against the design; the judged points are
    // their own field, fewer than the designed ones in a degraded run.
    let (within, judged) = (
        h.queue_undisturbed_within_15_percent.0,
        h.queue_judged_points,
    );
    let designed = DEGRADED_FIELDS
        .iter()
        .find_map(|k| json.get(*k))
        .and_then(|d| d.get("designed"))
        .and_then(Value::as_u64);
    let share = h.queue_undisturbed_share_median.map_or(String::new(), |s| {
        format!(": a median {:.0} % of each run's jobs", 100.0 * s)
    });
    let loopback = queue_model_beside(h);
    out.push(HeadlineNumber::new(
        format!("Corrected queue model's point estimate within 15 % of the load test (the jobs no stall disturbed{share}; designed points: the bearer setting's {:.0} ms round trip, which makes the job arrivals near Poisson (not tested), rho <= 0.8; beside them the bare-loopback points, where a handshake's next job waits on the queue and the model's premise fails; its finding applies the interval rule, the whole window is in the queue section)", super::queue::reality::BEARER_ROUND_TRIP_MS),
        match designed {
            Some(d) => format!("{within} of {judged} judged points ({d} designed){loopback}"),
            None => format!("{within} of {judged} judged points{loopback}"),
        },
        Modelled,
        "queue",
    ));
    out.push(HeadlineNumber::new(
        "Load points that missed their target utilisation by more than 0.05, every protocol and variant (the undisturbed jobs' rho where the run has them, as the points are calibrated, else the whole window's; reported, not judged)",
        h.queue_points_missed.to_string(),
        Measured,
        "queue",
    ));
    let (judged, run) = h.queue_other_protocols_judged;
    if run > 0 {
        out.push(HeadlineNumber::new(
            "The other protocols' load points judged by the interval rule (their finding's set; a point is not judged when its rho missed the target or its recording was disturbed), and the protocols with a point not judged, with each point's cause",
            if h.queue_other_protocols_short.is_empty() {
                format!("{judged} of {run}")
            } else {
                format!("{judged} of {run}; short: {}", h.queue_other_protocols_short.join(", "))
            },
            Measured,
            "queue",
        ));
    }
    if let Some(e) = h.transmission_model_median_error {
        out.push(HeadlineNumber::new(
            "Transmission model against the transmission part's emulated-bearer runs (WTLS, the thesis' cases): median |error| pooled over the bearers, and the bearers whose bias (median signed error) is not shown within the +-5 % target (the finding judges each bearer's bias; the protocols part's WTLS runs are in the next line)",
            with_outside(e, &h.transmission_model_bearers_outside_target, "every bearer's"),
            Modelled,
            "transmission",
        ));
    }
    if let Some(e) = h.protocols.protocols_model_median_error {
        out.push(HeadlineNumber::new(
            "Handshake model against the emulated-bearer runs of every protocol of the registry: median |error| pooled over protocols and bearers, and each protocol on a bearer whose bias (median signed error) is not shown within the +-5 % target (the finding judges each protocol on each bearer)",
            with_outside(
                e,
                &h.protocols.protocols_model_bearers_outside_target,
                "every protocol's on every bearer",
            ),
            Modelled,
            "protocols",
        ));
    }
    if let (Some(m), Some(c)) = (h.record_best_mbit_s, &h.record_best_cipher) {
        out.push(HeadlineNumber::new(
            format!("Fastest WTLS record protection among the encrypting bulk ciphers WTLS 1.0 assigns (NULL, no encryption, left out: the record-layer table gives it) ({c}; protect, the sender's direction, mean over 256-8192-byte records as Herwono-Liebhardt average, one median of timed rounds each; the project's private-code-point AES is in the record-layer section)"),
            format!("{m:.0} Mbit/s"),
            Derived,
            "record_layer",
        ));
    }
    out
}

/// What the load-test headline gives beside its point-estimate count: the designed
/// points by the interval rule, and bare loopback's count.
fn queue_model_beside(h: &Headline) -> String {
    let (lb_within, lb_judged) = h.queue_loopback_undisturbed_within_15_percent;
    let iv = h.queue_undisturbed_interval_verdicts;
    let mut out = String::new();
    if iv.judged() > 0 {
        out.push_str(&format!(
            "; by the interval rule {} keep, {} undecided, {} stop",
            iv.keeps, iv.undecided, iv.stops
        ));
    }
    if lb_judged > 0 {
        let designed = h.queue_loopback_designed_points;
        out.push_str(&format!(
            "; bare loopback: {lb_within} of {designed} designed ({lb_judged} judged)"
        ));
    }
    out
}

/// `3.3 % pooled; bias not shown within the target: nb-iot bias +6.1 % (beyond)`, or
/// `every bearer's bias within the target` (`every` names the groups).
fn with_outside(pooled: f64, outside: &[String], every: &str) -> String {
    if outside.is_empty() {
        format!(
            "{:.1} % pooled; {every} bias within the target",
            100.0 * pooled
        )
    } else {
        format!(
            "{:.1} % pooled; bias not shown within the target: {}",
            100.0 * pooled,
            outside.join("; ")
        )
    }
}

/// The field names the banner reads, in `summary.json`'s `headline` (docs/results.md).
pub const DEGRADED_FIELDS: [&str; 2] = ["degraded", "degraded_run"];

/// The run's status from the headline as `summary.json` writes it: none when it has no
/// `degraded` (or `degraded_run`) field; otherwise degraded or not, with every detail
/// the field carries. A bool says only whether; an object may carry `degraded` (bool,
/// true when absent), `judged` and `designed` (points) and `cause`, and any other field,
/// each shown.
pub fn run_status(headline: &Value) -> Option<RunStatus> {
    let field = DEGRADED_FIELDS.iter().find_map(|k| headline.get(*k))?;
    match field {
        Value::Bool(degraded) => Some(RunStatus {
            degraded: *degraded,
            summary: if *degraded {
                "This run did not hold its design; the sections below say where.".into()
            } else {
                "Every designed point was judged.".into()
            },
            details: Vec::new(),
        }),
        Value::Object(map) => {
            let degraded = map.get("degraded").and_then(Value::as_bool).unwrap_or(true);
            let count = |k: &str| map.get(k).and_then(Value::as_u64);
            let mut summary = match (count("judged"), count("designed")) {
                (Some(j), Some(d)) => format!(
                    "{j} of the {d} designed server-authenticated WTLS load points were judged{}.",
                    series_counts(map)
                ),
                _ if degraded => "This run did not hold its design.".to_owned(),
                _ => "Every designed point was judged.".to_owned(),
            };
            if let Some(cause) = map.get("cause").and_then(Value::as_str) {
                summary.push_str(&format!(" Cause: {cause}."));
            }
            let details = map
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "degraded" | "cause"))
                .map(|(k, v)| (detail_label(k), plain(v)))
                .collect();
            Some(RunStatus {
                degraded,
                summary,
                details,
            })
        }
        other => Some(RunStatus {
            degraded: true,
            summary: format!("summary.json's headline says degraded: {}", plain(other)),
            details: Vec::new(),
        }),
    }
}

/// The series judged beside the designed points, where the account carries them:
/// `; the mutual WTLS series 3 of 4, the other protocols 10 of 11`.
fn series_counts(map: &serde_json::Map<String, Value>) -> String {
    let series: Vec<String> = [
        ("wtls_mutual", "the mutual WTLS series"),
        ("other_protocols", "the other protocols"),
    ]
    .iter()
    .filter_map(|(key, name)| {
        let s = map.get(*key)?;
        let of = |k: &str| s.get(k).and_then(Value::as_u64);
        Some(format!("{name} {} of {}", of("judged")?, of("run")?))
    })
    .collect();
    if series.is_empty() {
        String::new()
    } else {
        format!("; {}", series.join(", "))
    }
}

/// A field of the degraded account by name: the figures summed over the designed WTLS
/// points say so, as the other protocols' points have a field of their own.
fn detail_label(key: &str) -> String {
    let words = key.replace('_', " ");
    match key {
        "causes"
        | "steal_ms"
        | "worker_run_queue_ms"
        | "generator_run_queue_ms"
        | "interference_ms" => format!("designed WTLS points: {words}"),
        "other_protocols" => "other protocols' load points".to_owned(),
        "rerecord" => "re-recording (whole load test)".to_owned(),
        _ => words,
    }
}

/// A JSON value as a reader wants it: strings without quotes, lists joined.
/// A value of the degraded account in words: numbers rounded to what a reader compares
/// (whole milliseconds, one decimal below ten), an object as `key value` pairs.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{} {}", k.replace('_', " "), plain(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() && x.abs() >= 10.0 => format!("{x:.0}"),
            Some(x) if n.is_f64() => format!("{x:.1}"),
            _ => n.to_string(),
        },
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A run whose designed points all held but whose mutual series missed one says
    /// both counts, not only the designed ones.
    #[test]
    fn the_banner_counts_the_series_beside_the_designed_points() {
        let status = run_status(&json!({"degraded": {
            "judged": 16, "designed": 16,
            "wtls_mutual": {"judged": 3, "run": 4, "short": ["wtls mutual 3 of 4 (missed rho 1)"]},
            "cause": "the mutual WTLS load points 3 of 4 judged"
        }}))
        .unwrap();
        assert!(status.degraded);
        assert!(
            status.summary.starts_with(
                "16 of the 16 designed server-authenticated WTLS load points were judged; the mutual WTLS series 3 of 4."
            ),
            "{}",
            status.summary
        );
    }

    #[test]
    fn the_banner_follows_the_degraded_field() {
        assert_eq!(run_status(&json!({"cases_measured": 48})), None);
        let yes = run_status(&json!({"degraded": true})).unwrap();
        assert!(yes.degraded);
        let no = run_status(&json!({"degraded_run": false})).unwrap();
        assert!(!no.degraded);
        let detailed = run_status(&json!({"degraded": {"judged": 10, "designed": 16, "cause": "steal", "steal_ms": 5100}})).unwrap();
        assert!(detailed.degraded);
        assert_eq!(
            detailed.summary,
            "10 of the 16 designed server-authenticated WTLS load points were judged. Cause: steal."
        );
        assert!(detailed
            .details
            .contains(&("designed WTLS points: steal ms".into(), "5100".into())));
        let nested = run_status(&json!({"degraded": {"judged": 3, "designed": 6,
            "causes": {"stalls": 3, "steal": 0}, "worker_run_queue_ms": 2948.19, "share": 0.26}}))
        .unwrap();
        for pair in [
            ("designed WTLS points: causes", "stalls 3, steal 0"),
            ("designed WTLS points: worker run queue ms", "2948"),
            ("share", "0.3"),
        ] {
            assert!(
                nested.details.contains(&(pair.0.into(), pair.1.into())),
                "{:?}",
                nested.details
            );
        }
        let held =
            run_status(&json!({"degraded": {"degraded": false, "judged": 16, "designed": 16}}))
                .unwrap();
        assert!(!held.degraded);
    }

    #[test]
    fn the_headline_numbers_link_to_sections_that_exist() {
        let numbers = headline_numbers(&Headline::default(), &json!({}));
        assert!(numbers.iter().all(|n| [
            "processing",
            "queue",
            "transmission",
            "protocols",
            "record_layer"
        ]
        .contains(&n.section.as_str())));
        assert!(numbers.iter().any(|n| n.value == "0 of 0 judged points"));
        let degraded = json!({"degraded": {"judged": 14, "designed": 16}});
        let h = Headline {
            queue_undisturbed_within_15_percent: (13, 16),
            queue_designed_points: 16,
            queue_judged_points: 14,
            ..Headline::default()
        };
        let numbers = headline_numbers(&h, &degraded);
        assert!(
            numbers
                .iter()
                .any(|n| n.value == "13 of 14 judged points (16 designed)"),
            "the judged points, not the designed ones, follow 'of'"
        );
    }
}
