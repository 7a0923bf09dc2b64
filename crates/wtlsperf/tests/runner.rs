//! The in-memory runner end to end: every case of thesis Table 3.3 in both modes, the
//! other variants, and the JSON output of the `wtlsperf handshake` command.

use std::path::PathBuf;
use std::sync::OnceLock;

use wtls::handshake::{AuthMode, HandshakeKind, Packing};
use wtls::probe::{HandshakeProbe, Message, Operation};
use wtls::suite::Case;
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::runner::{
    measure_all, measure_case, planned_cases, BoundExtension, BoundFailure, BoundRatio,
    CaseMeasurement, Flow, RunnerOptions, Side, Variant,
};

/// The full PKI, issued once into the integration-test scratch directory and reused by
/// later runs (RSA-3072 key generation is the slow part).
fn pki_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("runner-pki")
}

fn store() -> &'static PkiStore {
    static STORE: OnceLock<PkiStore> = OnceLock::new();
    STORE.get_or_init(|| PkiStore::load_or_init(&pki_dir()).expect("PKI"))
}

fn quick(variant: Variant) -> RunnerOptions {
    RunnerOptions {
        reps: 1,
        warmup: 0,
        variant,
        ..RunnerOptions::default()
    }
}

/// Messages that went on the wire with a body (the mutual ECDH_ECDSA "CKX" entry is a
/// computation without a message and records 0 bytes).
fn on_wire(p: &HandshakeProbe) -> Vec<(Message, usize)> {
    p.messages
        .iter()
        .filter(|m| m.bytes > 0)
        .map(|m| (m.message, m.bytes))
        .collect()
}

fn has(p: &HandshakeProbe, m: Message) -> bool {
    on_wire(p).iter().any(|(x, _)| *x == m)
}

/// An empty client Certificate: handshake header (type, 2-byte length) and an empty
/// 2-byte-length certificate list.
fn empty_certificate(p: &HandshakeProbe) -> bool {
    on_wire(p)
        .iter()
        .any(|(m, b)| *m == Message::CCERT && *b <= 5)
}

/// The client's messages against thesis Tables 3.5 (mutual) and 3.7 (server-auth).
/// The bound's denominator runs exactly the public-key operations the server's probe
/// recorded in the handshake (an operation it missed once: the optimised flow's
/// CERTCHECK).
fn check_bound_operations(m: &CaseMeasurement) {
    let mut server: Vec<Operation> = m.reps[0]
        .server
        .operations
        .iter()
        .map(|o| o.operation)
        .filter(|o| o.is_public_key())
        .collect();
    server.sort();
    server.dedup();
    let mut bound = m.bound_operations.clone();
    bound.sort();
    assert_eq!(
        bound,
        server,
        "{} {} {}",
        m.case,
        m.auth.name(),
        m.variant.name()
    );
}

fn check_message_set(m: &CaseMeasurement) {
    let name = format!("{} {}", m.case, m.auth.name());
    let client = &m.reps[0].client;
    let rsa = m.case.leaf.is_rsa();
    assert!(has(client, Message::CH), "{name}");
    assert!(has(client, Message::CCERT), "{name}: a client Certificate");
    assert!(
        has(client, Message::CFIN) && has(client, Message::CCCS),
        "{name}"
    );
    match (m.auth, rsa) {
        (AuthMode::Mutual, false) => {
            assert!(!empty_certificate(client), "{name}: a real certificate");
            assert!(!has(client, Message::CKX), "{name}: no ClientKeyExchange");
            assert!(
                !has(client, Message::CERTVRFY),
                "{name}: no CertificateVerify"
            );
        }
        (AuthMode::Mutual, true) => {
            assert!(!empty_certificate(client), "{name}: a real certificate");
            assert!(has(client, Message::CKX), "{name}: ClientKeyExchange");
            assert!(has(client, Message::CERTVRFY), "{name}: CertificateVerify");
        }
        (AuthMode::ServerAuth, _) => {
            assert!(empty_certificate(client), "{name}: an empty Certificate");
            assert!(has(client, Message::CKX), "{name}: ClientKeyExchange");
            assert!(!has(client, Message::CERTVRFY), "{name}");
        }
    }
    // The server's probe names the same messages.
    let server: Vec<_> = on_wire(&m.reps[0].server).iter().map(|x| x.0).collect();
    let client_msgs: Vec<_> = on_wire(client).iter().map(|x| x.0).collect();
    assert_eq!(server, client_msgs, "{name}");
}

#[test]
fn all_48_cases_complete_with_the_thesis_message_sets() {
    let store = store();
    let plan = planned_cases(store, Variant::Full);
    let available = Case::ALL.iter().filter(|c| c.is_available()).count();
    assert_eq!(plan.len(), 2 * available);
    let mut seen = 0;
    let all = measure_all(store, &quick(Variant::Full), |i, n, _, _| {
        assert_eq!((i, n), (seen, plan.len()));
        seen += 1;
    })
    .expect("every case completes");
    assert_eq!(all.len(), plan.len());
    for m in &all {
        check_message_set(m);
        check_bound_operations(m);
        let r = &m.reps[0];
        assert_eq!(r.kind, HandshakeKind::Full);
        // Flight per datagram: 2 datagrams each way.
        assert_eq!(m.datagrams(), (2, 2), "{}", m.case);
        let flights = m.flight_bytes();
        assert_eq!(
            flights.iter().map(|f| f.0).collect::<Vec<_>>(),
            [true, false, true, false]
        );
        assert_eq!(
            m.handshake_bytes(),
            flights.iter().map(|f| f.1).sum::<usize>()
        );
        let (up, down) = m.bytes_per_direction();
        assert_eq!(up + down, m.handshake_bytes());
        assert_eq!(
            up,
            flights.iter().filter(|f| f.0).map(|f| f.1).sum::<usize>()
        );
        // One server job per datagram it received.
        assert_eq!(m.server_job_service_ns()[0].len(), 2);
        // One bound pair per rep; one pair gives no interval, so no value either.
        assert!(r.pk_bound_ns.is_some() && r.server_cpu_probe_off_ns.is_some());
        assert_eq!(m.bound_pairs().len(), 1);
        assert_eq!(
            m.bound(),
            Some(BoundRatio::Failed {
                failure: BoundFailure::TooFewPairs,
                spread: *m.bound().unwrap().spread()
            })
        );
        assert_eq!(m.bound_ratio(), None);
        // The side totals are the sums of the per-message CPU times.
        assert_eq!(
            m.server_cpu_ms().unwrap().p50,
            r.server.total_cpu_ns() as f64 / 1e6
        );
        let shares: f64 = m
            .message_summary(Side::Server)
            .iter()
            .map(|s| s.share_pct)
            .sum();
        assert!((shares - 100.0).abs() < 1e-6, "{shares}");
    }
    // Mutual RSA has the most client messages (CH, CCERT, CKX, CERTVRFY, CCCS, CFIN).
    let rsa_mutual = all
        .iter()
        .find(|m| m.case.leaf.is_rsa() && m.auth == AuthMode::Mutual)
        .unwrap();
    assert_eq!(rsa_mutual.messages().0, 6);
    let ec_mutual = all
        .iter()
        .find(|m| !m.case.leaf.is_rsa() && m.auth == AuthMode::Mutual)
        .unwrap();
    assert_eq!(ec_mutual.messages().0, 4);
}

#[test]
fn the_server_side_records_its_public_key_operations() {
    let m = measure_case(
        store(),
        Case::parse("rsa2048/rsa1024").unwrap(),
        AuthMode::Mutual,
        &quick(Variant::Full),
    )
    .unwrap();
    let ckx = m
        .message_summary(Side::Server)
        .into_iter()
        .find(|s| s.message == Message::CKX)
        .unwrap();
    let ops: Vec<_> = ckx.operations.iter().map(|o| o.operation).collect();
    assert!(ops.contains(&Operation::RSADEC), "{ops:?}");
    let ccert = m
        .message_summary(Side::Server)
        .into_iter()
        .find(|s| s.message == Message::CCERT)
        .unwrap();
    assert!(ccert
        .operations
        .iter()
        .any(|o| o.operation == Operation::CERTCHECK));
}

#[test]
fn other_variants_complete_for_an_rsa_and_an_ec_case() {
    let store = store();
    for case in ["rsa1024/rsa1024", "256p/224p"] {
        let case = Case::parse(case).unwrap();
        let ec = !case.leaf.is_rsa();

        let m = measure_case(
            store,
            case,
            AuthMode::ServerAuth,
            &quick(Variant::Anonymous),
        )
        .unwrap();
        assert!(
            has(&m.reps[0].server, Message::SKX),
            "{case}: ServerKeyExchange"
        );
        assert!(m.bound_ratio().is_none());
        assert!(measure_case(store, case, AuthMode::Mutual, &quick(Variant::Anonymous)).is_err());

        for auth in [AuthMode::ServerAuth, AuthMode::Mutual] {
            let m = measure_case(store, case, auth, &quick(Variant::Optimised)).unwrap();
            check_bound_operations(&m);
            let kind = m.reps[0].kind;
            if ec {
                assert_eq!(kind, HandshakeKind::Optimised, "{case}");
                assert!(!has(&m.reps[0].client, Message::CKX), "{case}");
            } else {
                assert_eq!(kind, HandshakeKind::Full, "{case}: no optimised RSA flow");
            }

            let m = measure_case(store, case, auth, &quick(Variant::Resumed)).unwrap();
            let r = &m.reps[0];
            assert_eq!(r.kind, HandshakeKind::Abbreviated, "{case}");
            assert!(
                r.server
                    .operations
                    .iter()
                    .all(|o| !o.operation.is_public_key()),
                "{case}: public-key work in a resumed handshake: {:?}",
                r.server.operations
            );
            assert!(!has(&r.server, Message::SCERT), "{case}");
        }
    }
}

#[test]
fn wtls_flow_and_per_message_packing() {
    let case = Case::parse("160p/160p").unwrap();
    let opts = RunnerOptions {
        flow: Flow::Wtls,
        packing: Packing::MessagePerDatagram,
        ..quick(Variant::Full)
    };
    let m = measure_case(store(), case, AuthMode::ServerAuth, &opts).unwrap();
    let client = &m.reps[0].client;
    assert!(!has(client, Message::CERTREQ) && !has(client, Message::CCERT));
    // CH | SH, SCERT, SHD | CKX, CCCS, CFIN | SCCS, SFIN: one record per datagram.
    assert_eq!(m.datagrams(), (4, 5));
    // Each received record is one server job.
    assert_eq!(m.server_job_service_ns()[0].len(), 4);
}

#[test]
fn the_bound_extension_adds_pairs_until_an_interval_exists_at_least() {
    let opts = RunnerOptions {
        reps: 2,
        bound_extension: Some(BoundExtension {
            max_pairs: 40,
            budget: std::time::Duration::from_secs(30),
            relative_width: 0.05,
        }),
        ..quick(Variant::Full)
    };
    for variant in [Variant::Full, Variant::Optimised] {
        let opts = RunnerOptions {
            variant,
            ..opts.clone()
        };
        let case = Case::parse("160p/160p").unwrap();
        let m = measure_case(store(), case, AuthMode::ServerAuth, &opts).unwrap();
        let pairs = m.bound_pairs();
        assert_eq!(pairs.len(), 2 + m.extra_bound_pairs.len());
        // The first batch alone reaches an interval; the cap holds whatever the timing.
        assert!((6..=40).contains(&pairs.len()), "{}", pairs.len());
        let bound = m.bound().unwrap();
        assert_ne!(bound.status(), "too_few_pairs");
        assert_eq!(bound.spread().pairs, pairs.len());
        assert_eq!(m.bound_ratio().is_some(), bound.status() == "bounded");
    }
    // Without a bound (resumed), no pairs are added.
    let m = measure_case(
        store(),
        Case::parse("160p/160p").unwrap(),
        AuthMode::ServerAuth,
        &RunnerOptions {
            variant: Variant::Resumed,
            ..opts
        },
    )
    .unwrap();
    assert!(m.bound().is_none() && m.extra_bound_pairs.is_empty());
}

#[test]
fn probe_overhead_is_measured_when_asked() {
    let opts = RunnerOptions {
        reps: 2,
        measure_probe_overhead: true,
        ..quick(Variant::Full)
    };
    let m = measure_case(
        store(),
        Case::parse("160p/160p").unwrap(),
        AuthMode::Mutual,
        &opts,
    )
    .unwrap();
    assert_eq!(m.probe_off_cpu_ns.len(), 2);
    assert_eq!(m.probe_full_cpu_ns.len(), 2);
    assert!(m.probe_overhead.is_some_and(f64::is_finite));
}

#[test]
fn handshake_command_writes_ndjson_with_the_fields() {
    store();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("runner-test.ndjson");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(["handshake", "--case", "224p/160p", "--auth", "mutual"])
        .args(["--reps", "2", "--warmup", "0", "--pki"])
        .arg(pki_dir())
        .arg("--json")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert!(records.len() > 20);
    for r in &records {
        for field in [
            "case",
            "auth",
            "variant",
            "rep",
            "side",
            "message",
            "operation",
            "wall_ns",
            "cpu_ns",
            "bytes",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
        assert_eq!(r["case"], "224p/160p");
        assert_eq!(r["auth"], "mutual");
    }
    let ecdh = records
        .iter()
        .find(|r| r["side"] == "server" && r["message"] == "CKX" && r["operation"] == "ECDH")
        .expect("an ECDH record");
    assert!(ecdh["wall_ns"].as_u64().is_some() && ecdh["cpu_ns"].is_null());
    let summary = records
        .iter()
        .find(|r| r["summary"] == true && r["side"] == "server" && r["message"] == "TOTAL")
        .expect("a server summary");
    // Two pairs: the bound is a measurement failure, given with its pairs, no value.
    assert!(summary["bound_ratio"].is_null());
    assert_eq!(summary["bound_status"], "too_few_pairs");
    assert_eq!(summary["bound_pairs"], 2);
    assert!(summary["bound_ci95"].is_null());
    assert!(summary["bound_ms"].as_f64().is_some());
    let pairs: Vec<_> = records.iter().filter(|r| r["message"] == "BOUND").collect();
    assert_eq!(pairs.len(), 2);
    for (i, b) in pairs.iter().enumerate() {
        assert_eq!(
            (&b["pair"], &b["rep"]),
            (&serde_json::json!(i), &serde_json::json!(i))
        );
        assert!(b["cpu_ns"].as_u64().is_some() && b["server_cpu_probe_off_ns"].as_u64().is_some());
    }
    assert!(summary["published_ms"].as_f64().is_some());
    let hs = records
        .iter()
        .find(|r| r["message"] == "HANDSHAKE")
        .expect("a handshake summary");
    assert!(hs["probe_overhead"].as_f64().is_some());
    assert_eq!(
        records
            .iter()
            .filter(|r| r["message"] == "TOTAL" && r["rep"] == 1)
            .count(),
        2
    );
}
