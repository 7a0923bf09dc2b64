//! A fixture of rows -> the findings' verdicts, and the rule on single rows.

use wtlsperf_report::{FindingKind, Verdict};

use super::*;

fn fixture(device: &str, bearer: &str, classical_ms: f64, pq_ms: f64) -> PqCostRow {
    PqCostRow {
        pq_suite: "mlkem768-ecdsa-ccm8".to_owned(),
        classical_suite: "ecdhe-p256-ecdsa-ccm8".to_owned(),
        bearer: bearer.to_owned(),
        device: device.to_owned(),
        payload_limit: 1330,
        classical_bytes: 1400,
        pq_bytes: 3500,
        extra_bytes: 2100,
        classical_datagrams: 10,
        pq_datagrams: 12,
        extra_datagrams: 2,
        pq_flights: String::new(),
        extra_client_ms: Some(1.8),
        classical_modelled_ms: Some(classical_ms),
        pq_modelled_ms: Some(pq_ms),
        extra_modelled_ms: Some(pq_ms - classical_ms),
        classical_measured_ms: None,
        pq_measured_ms: None,
        extra_measured_ms: None,
        measured_runs: 0,
        basis: "modelled".to_owned(),
        margin_ms: Some(Affordability::margin_ms(0.0)),
        budget_ms: BUDGET_MS,
        affordable: Affordability::decide(classical_ms, pq_ms),
        protocol: "dtls1.3".to_owned(),
        post_quantum_part: "key exchange".to_owned(),
        hybrid_key_exchange: false,
    }
}

fn unavailable(device: &str) -> PqCostRow {
    let mut r = fixture(device, "nb-iot", 5000.0, 6000.0);
    r.extra_client_ms = None;
    r.pq_modelled_ms = None;
    r.affordable = Affordability::NotAvailable("not available: no ML-KEM-768 cost".into());
    r
}

#[test]
fn the_budget_rule_decides_beyond_the_margin_and_sets_classical_failures_apart() {
    assert_eq!(
        Affordability::decide(5000.0, 9000.0),
        Affordability::Affordable
    );
    assert_eq!(
        Affordability::decide(5000.0, 12000.0),
        Affordability::NotAffordable
    );
    // within 5 % of the 10 s budget
    assert_eq!(
        Affordability::decide(5000.0, 10_200.0),
        Affordability::AtTheBudget
    );
    // classical itself within 5 % of the budget: undecided, not left out
    assert_eq!(
        Affordability::decide(9800.0, 20_000.0),
        Affordability::AtTheBudget
    );
    // a measured row's scatter widens the margin on both sides
    assert_eq!(
        Affordability::decide_within(8300.0, 10_600.0, 2000.0),
        Affordability::AtTheBudget
    );
    assert_eq!(
        Affordability::decide(11_000.0, 9000.0),
        Affordability::ClassicalNotWithin
    );
}

#[test]
fn post_quantum_within_the_budget_everywhere_confirms_and_unpriced_rows_are_not_judged() {
    let t = PqCost {
        rows: vec![
            fixture("nrf52840", "lte-m", 400.0, 450.0),
            fixture("nrf52840", "nb-iot", 5200.0, 5700.0),
            fixture("nokia7650", "gsm-csd", 10_800.0, 12_000.0),
            unavailable("esp32"),
        ],
        nominal_note: Some("Nominal bearer rates: nb-iot (peak).".to_owned()),
        key_share_note: Some("\n\nThe key crosses twice.".to_owned()),
    };
    let f = t.findings();
    assert!(
        f[0].evidence
            .contains("\n\nThe key crosses twice.\n\nNominal"),
        "{}",
        f[0].evidence
    );
    assert_eq!(f[0].verdict, Verdict::Confirmed, "{}", f[0].evidence);
    assert!(
        f[0].evidence
            .contains("undecided (within the margin) in 0 of 2"),
        "{}",
        f[0].evidence
    );
    assert!(
        f[0].evidence.contains("1 rows whose classical"),
        "{}",
        f[0].evidence
    );
    assert!(
        f[0].evidence.contains("not available: esp32"),
        "{}",
        f[0].evidence
    );
    assert!(
        f[0].evidence
            .ends_with("Nominal bearer rates: nb-iot (peak)."),
        "{}",
        f[0].evidence
    );
    // no measured increments: no model-against-run finding
    assert_eq!(f.len(), 1);
}

#[test]
fn a_row_where_post_quantum_breaks_the_budget_is_named_and_refutes_the_claim() {
    let mut t = PqCost {
        rows: vec![
            fixture("nrf52840", "lte-m", 400.0, 450.0),
            fixture("nrf52840", "nb-iot-ntn-geo", 9000.0, 11_500.0),
        ],
        ..PqCost::default()
    };
    let f = t.findings();
    // One row where the budget breaks is a counterexample the other cannot undo.
    assert_eq!(f[0].verdict, Verdict::Contradicted);
    assert!(
        f[0].evidence
            .contains("mlkem768-ecdsa-ccm8 nrf52840/nb-iot-ntn-geo (modelled: 9000 -> 11500 ms)"),
        "{}",
        f[0].evidence
    );
    t.rows.remove(1);
    assert_eq!(t.findings()[0].verdict, Verdict::Confirmed);
    assert!(PqCost::default().findings().is_empty());
}

#[test]
fn measured_rows_decide_and_the_model_of_the_increment_is_checked_against_them() {
    let mut close = fixture("nrf52840", "lte-m", 400.0, 450.0);
    (close.classical_measured_ms, close.pq_measured_ms) = (Some(410.0), Some(465.0));
    close.extra_measured_ms = Some(55.0);
    close.measured_runs = 4;
    let mut far = fixture("nrf52840", "nb-iot", 5200.0, 5700.0);
    (far.classical_measured_ms, far.pq_measured_ms) = (Some(5300.0), Some(15_600.0));
    far.extra_measured_ms = Some(10_300.0);
    far.measured_runs = 4;
    assert_eq!(far.deciding_ms(), Some((5300.0, 15_600.0)));
    let t = PqCost {
        rows: vec![close.clone(), far],
        ..PqCost::default()
    };
    let model = &t.findings()[1];
    assert_eq!(model.kind, FindingKind::ModelAgainstRun);
    assert_eq!(model.verdict, Verdict::Contradicted, "{}", model.evidence);
    let t = PqCost {
        rows: vec![close],
        ..PqCost::default()
    };
    assert_eq!(t.findings()[1].verdict, Verdict::Confirmed);
}

#[test]
fn flights_pair_up_by_place_and_direction() {
    let f = |direction, bytes, datagrams| Flight {
        direction,
        bytes,
        datagrams,
    };
    let classical = [f(Direction::Up, 180, 1), f(Direction::Down, 900, 1)];
    let pq = [f(Direction::Up, 1364, 2), f(Direction::Down, 1988, 2)];
    assert_eq!(flights_text(&classical, &pq), "u+1184B/2 d+1088B/2");
    assert_eq!(flights_text(&classical[..1], &pq), "u1364B/2 d1988B/2");
}

/// A post-quantum row of `kind` on a device and bearer: `pq_ms` modelled, or not
/// available where `None`.
fn of_kind(kind: Channel, device: &str, bearer: &str, pq_ms: Option<f64>) -> PqCostRow {
    let mut r = fixture(device, bearer, 4000.0, pq_ms.unwrap_or(0.0));
    let (suite, part, hybrid) = match kind {
        Channel::HybridKeyExchange => ("x25519mlkem768-ecdsa-ccm8", "key exchange", true),
        Channel::FullyPostQuantum => ("mlkem768-mldsa44-ccm8", "both", false),
        Channel::Classical => unreachable!("the classical handshake is every row's baseline"),
    };
    (r.pq_suite, r.post_quantum_part) = (suite.to_owned(), part.to_owned());
    r.hybrid_key_exchange = hybrid;
    if pq_ms.is_none() {
        r.pq_modelled_ms = None;
        r.affordable = Affordability::NotAvailable("not available: no X25519 cost".into());
    }
    r
}

#[test]
fn the_three_handshakes_are_timed_per_device_and_bearer_and_their_crossings_named() {
    let mut gsm_full = of_kind(
        Channel::FullyPostQuantum,
        "nrf52840",
        "gsm-csd",
        Some(11_800.0),
    );
    (gsm_full.classical_measured_ms, gsm_full.pq_measured_ms) = (Some(3900.0), Some(11_750.0));
    let mut nb_classical_over = of_kind(
        Channel::FullyPostQuantum,
        "nokia7650",
        "nb-iot",
        Some(16_000.0),
    );
    nb_classical_over.classical_modelled_ms = Some(10_300.0);
    // the protocols part measured the classical handshake on GSM CSD: every row has it
    let mut gsm_hybrid = of_kind(Channel::HybridKeyExchange, "nrf52840", "gsm-csd", None);
    gsm_hybrid.classical_measured_ms = Some(3900.0);
    let t = PqCost {
        rows: vec![
            gsm_hybrid,
            of_kind(Channel::HybridKeyExchange, "nrf52840", "lte-m", Some(700.0)),
            gsm_full,
            of_kind(Channel::FullyPostQuantum, "nrf52840", "lte-m", Some(900.0)),
            nb_classical_over,
            // a protocol without a fully post-quantum row is left out
            PqCostRow {
                protocol: "another".to_owned(),
                ..of_kind(
                    Channel::HybridKeyExchange,
                    "nrf52840",
                    "lte-m",
                    Some(20_000.0),
                )
            },
        ],
        ..PqCost::default()
    };
    let times = t.channel_times();
    assert_eq!(times.len(), 3, "{times:#?}");
    // the classical mean measured on GSM CSD, the post-quantum one too; the hybrid not
    // priced there
    assert_eq!(
        times[0].times[2].as_ref().and_then(|(_, t)| *t),
        Some(channel::Timed {
            ms: 11_750.0,
            measured: true,
            margin_ms: 500.0,
        })
    );
    let full = PqCost::crossings(&times, Channel::FullyPostQuantum);
    assert_eq!(full.over, ["nrf52840/gsm-csd", "nokia7650/nb-iot"]);
    let classical = PqCost::crossings(&times, Channel::Classical);
    // 10.3 s is within the 5 % margin of the budget
    assert!(classical.over.is_empty());
    assert_eq!(classical.at_the_budget, ["nokia7650/nb-iot"]);
    assert!(PqCost::crossings(&times, Channel::HybridKeyExchange)
        .over
        .is_empty());
    let p = t.channel_paragraph().unwrap();
    assert!(
        p.contains("nrf52840: gsm-csd 3.9 s / n/a / 11.8 s, lte-m 4.0 s* / 0.7 s* / 0.9 s*"),
        "{p}"
    );
    assert!(
        p.contains("fully post-quantum over it on nrf52840/gsm-csd, nokia7650/nb-iot"),
        "{p}"
    );
    assert!(t.findings()[0].evidence.starts_with(&p));
    let h = t.channel_headline();
    assert_eq!(h.pq_budget_protocol.as_deref(), Some("dtls1.3"));
    assert_eq!(h.pq_budget_over_fully_post_quantum.len(), 2);
    assert!(PqCost::default().channel_paragraph().is_none());
}

#[test]
fn each_post_quantum_half_is_judged_on_its_own_rows() {
    let kem = fixture("nrf52840", "gsm-csd", 6000.0, 7000.0);
    let mut sig = fixture("nrf52840", "gsm-csd", 6000.0, 10_900.0);
    (sig.pq_suite, sig.post_quantum_part) = ("ecdhe-p256-mldsa44-ccm8".into(), "signature".into());
    let mut other = fixture("nrf52840", "gsm-csd", 5000.0, 6000.0);
    (other.pq_suite, other.protocol) = ("p256mlkem768-ecdsa".into(), "another".into());
    let t = PqCost {
        rows: vec![kem, sig, other],
        ..PqCost::default()
    };
    let f = t.findings();
    // key exchange, signature; no fully post-quantum rows; then the increment model
    assert_eq!(
        f.len(),
        2,
        "{:#?}",
        f.iter().map(|f| &f.claim).collect::<Vec<_>>()
    );
    assert!(
        f[0].claim.starts_with("Post-quantum key exchange"),
        "{}",
        f[0].claim
    );
    assert!(f[0].claim.contains("dtls1.3 and another"), "{}", f[0].claim);
    assert!(!f[0].claim.contains("mldsa44"), "{}", f[0].claim);
    assert_eq!(f[0].verdict, Verdict::Confirmed, "{}", f[0].evidence);
    assert!(
        f[1].claim.starts_with("Post-quantum authentication"),
        "{}",
        f[1].claim
    );
    assert_eq!(f[1].verdict, Verdict::Contradicted, "{}", f[1].evidence);
}

#[test]
fn a_device_priced_for_some_configurations_is_listed_with_the_ones_it_lacks() {
    let unpriced = |device: &str, suite: &str| {
        let mut r = fixture(device, "lte-m", 400.0, 450.0);
        r.pq_suite = suite.to_owned();
        r.affordable = Affordability::NotAvailable("not available".into());
        r
    };
    let mut priced = fixture("nrf52840", "lte-m", 400.0, 450.0);
    priced.pq_suite = "mlkem768-ecdsa-ccm8".to_owned();
    let t = PqCost {
        rows: vec![
            unpriced("esp32", "mlkem768-ecdsa-ccm8"),
            unpriced("esp32", "x25519mlkem768-ecdsa-ccm8"),
            priced,
            unpriced("nrf52840", "x25519mlkem768-ecdsa-ccm8"),
            unpriced("lpc1114-m0", "mlkem768-ecdsa-ccm8"),
        ],
        ..PqCost::default()
    };
    assert_eq!(
        t.unpriced(),
        [
            "esp32, lpc1114-m0 (every post-quantum configuration)",
            "nrf52840 (x25519mlkem768-ecdsa-ccm8 only)"
        ]
    );
}
