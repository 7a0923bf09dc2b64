//! Part 1, processing (thesis sections 3.1 and 4.1): every one of the 48 cases (24 CA/leaf
//! combinations x server-authenticated/mutual) measured in memory, client and gateway
//! separately, wall and thread-CPU time; Tables 4.1-4.10 and Figures 4.1-4.12 rebuilt with
//! the published numbers and the ratio published/ours beside ours.
//!
//! The thesis ran its client on a 2004 Nokia 7650 and its gateway on a Pentium 4, so the
//! ratio published/ours is the interesting number, not the absolute one. The bound ratio
//! (gateway CPU over the raw public-key operations of the same handshake) says how much
//! of the gateway's time is protocol overhead rather than mathematics.

use anyhow::Context;
use wtls::suite::Case;
use wtlsperf_models::processing::{
    Message as ThesisMessage, Operation as ThesisOperation, SideTimes,
};
use wtlsperf_models::reference::{self, ProcessingTimeRow};
use wtlsperf_models::{Authentication, Side, SuiteFamily};

pub(crate) mod report;

use super::context::{Ctx, Mode};
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::runner::{
    self, AuthMode, BoundExtension, BoundRatio, CaseMeasurement, RunnerOptions, Variant,
};

/// Median and 95th percentile of one quantity over the repetitions (ms).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Stat {
    /// Median (ms).
    pub median: f64,
    /// 95th percentile (ms).
    pub p95: f64,
}

/// One message (or one operation inside it) of one side of one case.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    /// Which peer spent the time.
    pub side: Side,
    /// Thesis abbreviation of the message (`CKX`, `SCERT`, ...).
    pub message: String,
    /// Operation inside the message (`ECDH`, `RSADEC`, ...), `None` for the message row.
    pub operation: Option<String>,
    /// Median wall time (ms).
    pub median_wall_ms: f64,
    /// Median thread-CPU time (ms) when measured (messages only).
    pub median_cpu_ms: Option<f64>,
    /// Share of the side's total (message rows) or of the message (operation rows), %.
    pub share_pct: f64,
    /// Bytes of the message on the wire (message rows).
    pub bytes: Option<usize>,
}

/// Everything measured for one case and authentication mode.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// CA/leaf combination.
    pub case: Case,
    /// Authentication mode.
    pub auth: Authentication,
    /// Which handshake variant (full, anonymous, optimised).
    pub variant: Variant,
    /// Client thread-CPU time per handshake.
    pub client_cpu_ms: Stat,
    /// Gateway thread-CPU time per handshake.
    pub server_cpu_ms: Stat,
    /// Client wall time per handshake.
    pub client_wall_ms: Stat,
    /// Gateway wall time per handshake.
    pub server_wall_ms: Stat,
    /// Handshake bytes client to gateway (UDP payload).
    pub bytes_up: usize,
    /// Handshake bytes gateway to client (UDP payload).
    pub bytes_down: usize,
    /// The same handshake's bytes both ways with WAP-261 parameter numbering (explicit
    /// parameters for the curves it does not number), when the measured store used the
    /// thesis' numbering; `None` otherwise.
    pub bytes_wap261: Option<usize>,
    /// That handshake's flights in order, (upward?, bytes), as [`Self::flights`].
    pub flights_wap261: Option<Vec<(bool, usize)>>,
    /// Datagrams client to gateway.
    pub datagrams_up: usize,
    /// Datagrams gateway to client.
    pub datagrams_down: usize,
    /// Handshake messages the client sends.
    pub messages_client: usize,
    /// Handshake messages the gateway sends.
    pub messages_server: usize,
    /// Flights in order: (upward?, bytes); Herwono's message groups.
    pub flights: Vec<(bool, usize)>,
    /// Gateway CPU over its raw public-key operations, paired rep by rep: a value, or a
    /// measurement failure with its pairs and spread; `None` where not measured.
    pub bound: Option<BoundRatio>,
    /// The value of `bound` when the run supports one (its 95 % interval above 1).
    pub bound_ratio: Option<f64>,
    /// (raw public-key time + the suite's mandatory symmetric work) / raw public-key
    /// time: the best bound ratio any server could reach.
    pub bound_floor_ratio: Option<f64>,
    /// Per-message and per-operation medians.
    pub messages: Vec<MessageRow>,
    /// Per repetition, the gateway CPU of each received datagram (ms): the queue's jobs.
    pub job_service_ms: Vec<Vec<f64>>,
    /// Cost of the probes themselves, % of the handshake, when measured.
    pub probe_overhead_pct: Option<f64>,
    /// The interleaved pairs' median overhead (%), the statistic the finding judges, and
    /// its distribution-free 95 % interval (%).
    pub probe_overhead_paired_pct: Option<f64>,
    pub probe_overhead_ci95_pct: Option<(f64, f64)>,
}

impl CaseResult {
    /// Key exchange family.
    pub fn family(&self) -> SuiteFamily {
        if self.case.leaf.is_rsa() {
            SuiteFamily::Rsa
        } else {
            SuiteFamily::EcdhEcdsa
        }
    }

    /// `256p/224p`.
    pub fn label(&self) -> String {
        self.case.to_string()
    }

    /// Herwono-Liebhardt's name of this handshake (`RSA_1024`, `ECDH_anon_160`, ...), the
    /// key of their published curves.
    pub fn herwono_name(&self) -> String {
        let (family, bits) = if self.case.leaf.is_rsa() {
            ("RSA", self.case.leaf.key_bits())
        } else {
            ("ECDH", self.case.leaf.key_bits())
        };
        match self.variant {
            Variant::Anonymous => format!("{family}_anon_{bits}"),
            Variant::Optimised => format!("ECDH_ECDSA_{bits}_optimized"),
            _ if family == "RSA" => format!("RSA_{bits}"),
            _ => format!("ECDH_ECDSA_{bits}"),
        }
    }

    /// Total handshake bytes both ways.
    pub fn bytes(&self) -> usize {
        self.bytes_up + self.bytes_down
    }

    /// Tables 4.1/4.2 row of the same case.
    pub fn published(&self) -> Option<ProcessingTimeRow> {
        published_row(&self.case, self.auth)
    }

    /// Per-message times of one side in the thesis' vocabulary, for Eq. 3.2-3.7 and the
    /// percentage layout of Tables 4.3-4.10. Wall time, as the thesis measured.
    pub fn side_times(&self, side: Side) -> SideTimes {
        let mut times = SideTimes::default();
        for row in self.messages.iter().filter(|r| r.side == side) {
            match &row.operation {
                None => {
                    if let Some(m) = thesis_message(&row.message) {
                        *times.messages_ms.entry(m).or_insert(0.0) += row.median_wall_ms;
                    }
                }
                Some(op) => {
                    if let (Some(ThesisMessage::ClientKeyExchange), Some(o)) =
                        (thesis_message(&row.message), thesis_operation(op))
                    {
                        *times.operations_ms.entry(o).or_insert(0.0) += row.median_wall_ms;
                    }
                }
            }
        }
        // The gateway's premaster work of mutual ECDH_ECDSA happens when it holds the
        // client's certificate; the thesis still reports it as T_M_S_CKX.
        times
    }

    /// Mean gateway CPU per job and per handshake over the repetitions.
    pub fn mean_jobs(&self) -> Vec<f64> {
        let reps: Vec<&Vec<f64>> = self
            .job_service_ms
            .iter()
            .filter(|r| !r.is_empty())
            .collect();
        let Some(k) = reps.iter().map(|r| r.len()).min() else {
            return Vec::new();
        };
        (0..k)
            .map(|j| reps.iter().map(|r| r[j]).sum::<f64>() / reps.len() as f64)
            .collect()
    }
}

/// The thesis message of a probe name; SKX has no thesis counterpart.
pub fn thesis_message(abbr: &str) -> Option<ThesisMessage> {
    ThesisMessage::ALL
        .into_iter()
        .find(|m| m.abbreviation() == abbr)
}

/// The thesis operation of a probe name (ECDH, MS, RSAENC, RSADEC).
pub fn thesis_operation(abbr: &str) -> Option<ThesisOperation> {
    [
        ThesisOperation::Ecdh,
        ThesisOperation::MasterSecret,
        ThesisOperation::RsaEncrypt,
        ThesisOperation::RsaDecrypt,
    ]
    .into_iter()
    .find(|o| o.abbreviation() == abbr)
}

/// The Tables 4.1/4.2 row of a case.
pub fn published_row(case: &Case, auth: Authentication) -> Option<ProcessingTimeRow> {
    reference::processing_times().ok()?.into_iter().find(|r| {
        r.authentication == auth && r.ca_cert == case.ca.short() && r.leaf_cert == case.leaf.short()
    })
}

/// The evaluation's parts import the conversion from here.
pub use wtlsperf_drivers::auth::auth_mode;

/// All of part 1.
#[derive(Debug, Clone)]
pub struct ProcessingResults {
    /// The full handshakes of the thesis flow, one per case and mode.
    pub cases: Vec<CaseResult>,
    /// Anonymous and optimised handshakes (Herwono's variants).
    pub variants: Vec<CaseResult>,
    /// Cases left out of this run, with the reason.
    pub skipped: Vec<String>,
}

impl ProcessingResults {
    /// The result of one case and mode.
    pub fn find(&self, case: &Case, auth: Authentication) -> Option<&CaseResult> {
        self.cases
            .iter()
            .find(|c| c.case == *case && c.auth == auth)
    }

    /// Cases (of the thesis flow) whose bound is a measurement failure.
    pub fn bound_failures(&self) -> Vec<&CaseResult> {
        self.cases
            .iter()
            .filter(|c| matches!(c.bound, Some(BoundRatio::Failed { .. })))
            .collect()
    }

    /// Largest bound ratio measured (failures have none).
    pub fn worst_bound_ratio(&self) -> Option<(String, f64)> {
        self.cases
            .iter()
            .filter_map(|c| Some((format!("{} {:?}", c.label(), c.auth), c.bound_ratio?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Median over the cases of published/ours for one side (wall time).
    pub fn median_speedup(&self, side: Side) -> Option<f64> {
        let ratios: Vec<f64> = self
            .cases
            .iter()
            .filter_map(|c| {
                let p = c.published()?;
                let (published, ours) = match side {
                    Side::Client => (p.client_ms, c.client_wall_ms.median),
                    Side::Server => (p.server_ms, c.server_wall_ms.median),
                };
                (ours > 0.0).then(|| published / ours)
            })
            .collect();
        wtlsperf_models::stats::median(&ratios)
    }

    /// Median probe overhead (%) over the cases where it was measured.
    pub fn probe_overhead_pct(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .cases
            .iter()
            .filter_map(|c| c.probe_overhead_pct)
            .collect();
        wtlsperf_models::stats::median(&v)
    }
}

/// Which cases a mode measures. Every mode measures all cases the local libcrypto
/// supports except the smoke test, which takes one ECDH_ECDSA and one RSA case.
pub fn cases_for(mode: Mode) -> Vec<Case> {
    let all = Case::ALL.into_iter().filter(Case::is_available);
    match mode {
        Mode::Smoke => all
            .filter(|c| matches!(c.to_string().as_str(), "256p/256p" | "rsa1024/rsa1024"))
            .collect(),
        Mode::Quick | Mode::Full => all.collect(),
    }
}

fn stat(s: &wtlsperf_models::stats::Summary) -> Stat {
    Stat {
        median: s.p50,
        p95: s.p95,
    }
}

/// How many bound pairs a case may add after its reps until the ratio's 95 % interval
/// clears 1 and is narrow enough to read (`runner::BoundExtension`). On this 2-core
/// machine under a load average of about 10, the quick settings took 6-188 pairs per
/// case and 8.8 s for all 48 (the most, 1.4 s, for rsa3072/rsa3072 server-authenticated,
/// whose engine work is about 1 % of its decryption). 48 cases x the budget bounds what
/// this can add to a run (quick: 72 s, full: 144 s).
pub fn bound_extension(mode: Mode) -> BoundExtension {
    let (max_pairs, seconds, relative_width) = match mode {
        Mode::Smoke => (60, 0.5, 0.10),
        Mode::Quick => (400, 1.5, 0.03),
        Mode::Full => (600, 3.0, 0.02),
    };
    BoundExtension {
        max_pairs,
        budget: std::time::Duration::from_secs_f64(seconds),
        relative_width,
    }
}

/// Converts the runner's record of one case into this part's row.
pub fn from_measurement(m: &CaseMeasurement, auth: Authentication) -> CaseResult {
    let to_stat =
        |s: Option<wtlsperf_models::stats::Summary>| s.as_ref().map(stat).unwrap_or_default();
    let mut messages = Vec::new();
    for side in [Side::Client, Side::Server] {
        for ms in m.message_summary(side) {
            let name = ms.message.name().to_owned();
            messages.push(MessageRow {
                side,
                message: name.clone(),
                operation: None,
                median_wall_ms: ms.median_wall_ms,
                median_cpu_ms: Some(ms.median_cpu_ms),
                share_pct: ms.share_pct,
                bytes: Some(ms.bytes),
            });
            for op in &ms.operations {
                messages.push(MessageRow {
                    side,
                    message: name.clone(),
                    operation: Some(op.operation.name().to_owned()),
                    median_wall_ms: op.median_wall_ms,
                    median_cpu_ms: None,
                    share_pct: op.share_of_message_pct,
                    bytes: None,
                });
            }
        }
    }
    let flights = m.flight_bytes();
    let bytes_up = flights.iter().filter(|f| f.0).map(|f| f.1).sum();
    let bytes_down = flights.iter().filter(|f| !f.0).map(|f| f.1).sum();
    let (datagrams_up, datagrams_down) = m.datagrams();
    let (messages_client, messages_server) = m.messages();
    CaseResult {
        case: m.case,
        auth,
        variant: m.variant,
        client_cpu_ms: to_stat(m.client_cpu_ms()),
        server_cpu_ms: to_stat(m.server_cpu_ms()),
        client_wall_ms: to_stat(m.client_wall_ms()),
        server_wall_ms: to_stat(m.server_wall_ms()),
        bytes_up,
        bytes_down,
        bytes_wap261: None,
        flights_wap261: None,
        datagrams_up,
        datagrams_down,
        messages_client,
        messages_server,
        flights,
        bound: m.bound(),
        bound_ratio: m.bound_ratio(),
        bound_floor_ratio: m.bound_floor_ratio(),
        messages,
        job_service_ms: m
            .server_job_service_ns()
            .into_iter()
            .map(|rep| rep.into_iter().map(|ns| ns as f64 / 1e6).collect())
            .collect(),
        probe_overhead_pct: m.probe_overhead.map(|o| o * 100.0),
        probe_overhead_paired_pct: m.probe_overhead_paired().map(|o| o * 100.0),
        probe_overhead_ci95_pct: m
            .probe_overhead_ci95()
            .map(|(lo, hi)| (100.0 * lo, 100.0 * hi)),
    }
}

/// Measures the 48 cases (or the mode's subset) and the Herwono variants.
pub fn run(ctx: &Ctx, store: &PkiStore) -> anyhow::Result<ProcessingResults> {
    let reps = ctx.mode.processing_reps();
    let mut cases = Vec::new();
    let mut skipped: Vec<String> = Case::ALL
        .into_iter()
        .filter(|c| !c.is_available())
        .map(|c| format!("{c}: not supported by the local libcrypto"))
        .collect();
    let selected = cases_for(ctx.mode);
    for (i, case) in selected.iter().enumerate() {
        for auth in Authentication::ALL {
            ctx.step(&format!(
                "processing {}/{}: {case} {auth:?} x{reps}",
                i + 1,
                selected.len()
            ));
            let opts = RunnerOptions {
                reps,
                warmup: if ctx.mode == Mode::Smoke { 0 } else { 1 },
                measure_bound: true,
                measure_probe_overhead: ctx.mode == Mode::Full,
                bound_extension: Some(bound_extension(ctx.mode)),
                ..RunnerOptions::default()
            };
            match runner::measure_case(store, *case, auth_mode(auth), &opts) {
                Ok(m) => cases.push(from_measurement(&m, auth)),
                Err(e) => skipped.push(format!("{case} {auth:?}: {e:#}")),
            }
        }
    }
    anyhow::ensure!(
        !cases.is_empty(),
        "no case could be measured: {}",
        skipped.join("; ")
    );
    count_wap261_bytes(ctx, store, &mut cases)?;
    let mut variants = Vec::new();
    for (case, variant) in herwono_variants() {
        ctx.step(&format!("processing: {case} {variant:?} (Herwono variant)"));
        let case = Case::parse(case).context("Herwono variant case")?;
        if !case.is_available() {
            continue;
        }
        let opts = RunnerOptions {
            reps: reps.min(5),
            warmup: 0,
            variant,
            bound_extension: Some(bound_extension(ctx.mode)),
            ..RunnerOptions::default()
        };
        let m = runner::measure_case(store, case, AuthMode::ServerAuth, &opts)
            .with_context(|| format!("{case} {variant:?}"))?;
        variants.push(from_measurement(&m, Authentication::ServerAuth));
    }
    Ok(ProcessingResults {
        cases,
        variants,
        skipped,
    })
}

/// The bytes of each measured handshake again with WAP-261 parameter numbering, on the
/// same keys with re-signed certificates (one unmeasured handshake per case), so the
/// report can give Table 4.11's bytes both ways: the thesis numbering reproduces the
/// thesis' one-byte indices, WAP-261 sends explicit parameters for B-163, P-256, K-283
/// and B-283.
fn count_wap261_bytes(ctx: &Ctx, store: &PkiStore, cases: &mut [CaseResult]) -> anyhow::Result<()> {
    let numbering = wtls::params::ParameterNumbering::Wap261;
    if store.numbering() == numbering {
        return Ok(());
    }
    ctx.step("processing: the same handshakes' bytes under WAP-261 numbering");
    let wap = store.renumbered(numbering)?;
    let opts = RunnerOptions {
        reps: 1,
        warmup: 0,
        measure_bound: false,
        ..RunnerOptions::default()
    };
    for c in cases.iter_mut() {
        let m = runner::measure_case(&wap, c.case, auth_mode(c.auth), &opts)
            .with_context(|| format!("{} {:?} under WAP-261 numbering", c.case, c.auth))?;
        c.bytes_wap261 = Some(m.handshake_bytes());
        c.flights_wap261 = Some(m.flight_bytes());
    }
    Ok(())
}

/// The handshakes Herwono-Liebhardt compare (anonymous and optimised ones) closest to
/// their key sizes: RSA 1024 and a 160-bit curve.
pub fn herwono_variants() -> [(&'static str, Variant); 3] {
    [
        ("rsa1024/rsa1024", Variant::Anonymous),
        ("160p/160p", Variant::Anonymous),
        ("160p/160p", Variant::Optimised),
    ]
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use wtls::suite::Case;
    use wtlsperf_models::processing::percentage_row;
    use wtlsperf_models::reference::PercentTable;

    /// A synthetic result in the shape the runner produces, for the pure parts' tests.
    pub(crate) fn synthetic(case: &str, auth: Authentication, server_ms: f64) -> CaseResult {
        let case = Case::parse(case).unwrap();
        let side_rows = |side: Side, total: f64| {
            vec![
                MessageRow {
                    side,
                    message: "CKX".into(),
                    operation: None,
                    median_wall_ms: total * 0.6,
                    median_cpu_ms: Some(total * 0.6),
                    share_pct: 60.0,
                    bytes: Some(100),
                },
                MessageRow {
                    side,
                    message: "CKX".into(),
                    operation: Some("MS".into()),
                    median_wall_ms: total * 0.06,
                    median_cpu_ms: None,
                    share_pct: 10.0,
                    bytes: None,
                },
                MessageRow {
                    side,
                    message: "SCERT".into(),
                    operation: None,
                    median_wall_ms: total * 0.4,
                    median_cpu_ms: Some(total * 0.4),
                    share_pct: 40.0,
                    bytes: Some(300),
                },
            ]
        };
        let mut messages = side_rows(Side::Client, 2.0 * server_ms);
        messages.extend(side_rows(Side::Server, server_ms));
        CaseResult {
            case,
            auth,
            variant: Variant::Full,
            client_cpu_ms: Stat {
                median: 2.0 * server_ms,
                p95: 2.2 * server_ms,
            },
            server_cpu_ms: Stat {
                median: server_ms,
                p95: 1.1 * server_ms,
            },
            client_wall_ms: Stat {
                median: 2.0 * server_ms,
                p95: 2.2 * server_ms,
            },
            server_wall_ms: Stat {
                median: server_ms,
                p95: 1.1 * server_ms,
            },
            bytes_up: 700,
            bytes_down: 900,
            bytes_wap261: None,
            flights_wap261: None,
            datagrams_up: 2,
            datagrams_down: 2,
            messages_client: 5,
            messages_server: 6,
            flights: vec![(true, 100), (false, 900), (true, 600)],
            bound: None,
            bound_ratio: Some(1.3),
            bound_floor_ratio: Some(1.05),
            messages,
            job_service_ms: vec![vec![0.1, server_ms - 0.1]; 3],
            probe_overhead_pct: Some(1.0),
            probe_overhead_paired_pct: Some(1.0),
            probe_overhead_ci95_pct: Some((0.5, 1.5)),
        }
    }

    #[test]
    fn published_rows_are_found_for_every_case() {
        for case in Case::ALL {
            for auth in Authentication::ALL {
                assert!(published_row(&case, auth).is_some(), "{case} {auth:?}");
            }
        }
        let r = published_row(
            &Case::parse("rsa1024/rsa1024").unwrap(),
            Authentication::ServerAuth,
        )
        .unwrap();
        assert_eq!(r.client_ms, 1006.78);
    }

    #[test]
    fn probe_names_map_onto_the_thesis_vocabulary() {
        assert_eq!(
            thesis_message("CCERT"),
            Some(ThesisMessage::ClientCertificate)
        );
        assert_eq!(thesis_message("SKX"), None);
        assert_eq!(
            thesis_operation("RSADEC"),
            Some(ThesisOperation::RsaDecrypt)
        );
        assert_eq!(thesis_operation("CERTCHECK"), None);
    }

    #[test]
    fn side_times_feed_the_percentage_layout() {
        let c = synthetic("256p/256p", Authentication::ServerAuth, 2.0);
        let t = c.side_times(Side::Server);
        assert!((t.message_ms(ThesisMessage::ClientKeyExchange) - 1.2).abs() < 1e-12);
        assert!((t.operation_ms(ThesisOperation::MasterSecret) - 0.12).abs() < 1e-12);
        let row = percentage_row(PercentTable::T4_9, &t).unwrap();
        // Others = 100 - CKX (SCERT is a client column, so it lands in Others here).
        assert!((row[0].percent - 40.0).abs() < 1e-9);
        assert!((row[1].percent - 60.0).abs() < 1e-9);
        let jobs = c.mean_jobs();
        assert_eq!(jobs.len(), 2);
        assert!((jobs[0] - 0.1).abs() < 1e-12 && (jobs[1] - 1.9).abs() < 1e-12);
    }

    #[test]
    fn ratios_and_headlines() {
        let results = ProcessingResults {
            cases: vec![
                synthetic("256p/256p", Authentication::ServerAuth, 2.0),
                synthetic("rsa1024/rsa1024", Authentication::ServerAuth, 1.0),
            ],
            variants: vec![],
            skipped: vec![],
        };
        // Published server times: 256p/256p S and rsa1024/rsa1024 S over ours.
        let p1 = published_row(
            &Case::parse("256p/256p").unwrap(),
            Authentication::ServerAuth,
        )
        .unwrap()
        .server_ms;
        let p2 = published_row(
            &Case::parse("rsa1024/rsa1024").unwrap(),
            Authentication::ServerAuth,
        )
        .unwrap()
        .server_ms;
        let expected = (p1 / 2.0 + p2 / 1.0) / 2.0;
        let got = results.median_speedup(Side::Server).unwrap();
        assert!((got - expected).abs() < 1e-9);
        assert_eq!(results.worst_bound_ratio().unwrap().1, 1.3);
        assert_eq!(cases_for(Mode::Smoke).len(), 2);
    }

    #[test]
    fn herwono_names() {
        let mut c = synthetic("160p/160p", Authentication::ServerAuth, 1.0);
        assert_eq!(c.herwono_name(), "ECDH_ECDSA_160");
        c.variant = Variant::Optimised;
        assert_eq!(c.herwono_name(), "ECDH_ECDSA_160_optimized");
        let mut r = synthetic("rsa1024/rsa1024", Authentication::ServerAuth, 1.0);
        r.variant = Variant::Anonymous;
        assert_eq!(r.herwono_name(), "RSA_anon_1024");
    }
}
