//! The machine-readable files of a run: `cases.csv`, `messages.csv`, `queue.csv`,
//! `transmission.csv`, `record_layer.csv`, `mcommerce.csv` and `summary.json` (columns
//! documented in docs/results.md).

use std::path::Path;

use anyhow::Context;
use serde::Serialize;
use wtls::msgs::enums::BulkCipherAlgorithm;
use wtls::suite::Case;
use wtlsperf_models::{Authentication, Side};
use wtlsperf_report::Finding;

use super::context::Mode;
use super::csv_file::write_csv;
use super::instructions::InstructionResults;
use super::mcommerce::McommerceResults;
use super::processing::{auth_mode, CaseResult, ProcessingResults};
use super::queue::{QueueResults, Setting};
use super::record_layer::RecordResults;
use super::transmission::TransmissionResults;
use super::verdict::MODEL_TOLERANCE;
use wtlsperf_drivers::counts::CaseCounts;
use wtlsperf_drivers::runner::Variant;

/// Where the numbers were measured.
#[derive(Debug, Clone, Serialize)]
pub struct MachineInfo {
    /// `model name` of /proc/cpuinfo.
    pub cpu_model: String,
    /// Logical CPUs available to the process.
    pub cores: usize,
    /// /proc/sys/kernel/osrelease.
    pub kernel: String,
    /// OpenSSL version string.
    pub openssl: String,
    /// rustc version the binary was built with, when known.
    pub rustc: String,
    /// This program's version.
    pub wtlsperf: String,
}

impl MachineInfo {
    /// Reads what the system tells about itself; unknown fields say so.
    pub fn collect() -> MachineInfo {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".to_owned());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_owned())
            .unwrap_or_else(|_| "unknown".to_owned());
        MachineInfo {
            cpu_model,
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            kernel,
            openssl: openssl::version::version().to_owned(),
            rustc: env!("WTLSPERF_RUSTC_VERSION").to_owned(),
            wtlsperf: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    /// `Intel Xeon ... (2 cores)`.
    pub fn short(&self) -> String {
        format!("{} ({} cores)", self.cpu_model, self.cores)
    }
}

/// One finding in `summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct FindingSummary {
    /// The claim.
    pub claim: String,
    /// The evidence.
    pub evidence: String,
    /// confirmed / contradicted / inconclusive: the word the report shows
    /// (`Finding::verdict_label`), whatever the kind.
    pub verdict: String,
    /// What the finding tests (`FindingKind::name`).
    pub kind: String,
    /// The rule that decided the verdict, with its threshold and set.
    pub rule: String,
    /// For a study's claim: the study, the place in it and the quoted passage.
    pub study: Option<String>,
    pub place: Option<String>,
    pub passage: Option<String>,
    /// The ids of the shared caveats the finding refers to (their text is written once,
    /// in `summary.json`'s `caveats`).
    pub caveats: Vec<String>,
    /// The kinds of figure the verdict rests on, `+`-separated (`Finding::evidence`):
    /// measured, modelled, published, derived.
    pub rests_on: String,
}

/// A caveat several findings share, written once in `summary.json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CaveatSummary {
    pub id: String,
    pub title: String,
    pub text: String,
}

/// The distinct caveats of `findings`, in order of first use.
pub fn caveats_of(findings: &[Finding]) -> Vec<CaveatSummary> {
    let mut out: Vec<CaveatSummary> = Vec::new();
    for c in findings.iter().flat_map(|f| &f.caveats) {
        if !out.iter().any(|o| o.id == c.id) {
            out.push(CaveatSummary {
                id: c.id.clone(),
                title: c.title.clone(),
                text: c.text.clone(),
            });
        }
    }
    out
}

impl From<&Finding> for FindingSummary {
    fn from(f: &Finding) -> Self {
        FindingSummary {
            claim: f.claim.clone(),
            evidence: f.evidence.clone(),
            verdict: f.verdict_label().to_owned(),
            kind: f.kind.name().to_owned(),
            rule: f.rule.clone(),
            study: f.passage.map(|p| p.study.citation().to_owned()),
            place: f.passage.map(|p| p.place.to_owned()),
            passage: f.passage.map(|p| p.quote.to_owned()),
            caveats: f.caveats.iter().map(|c| c.id.clone()).collect(),
            rests_on: f.evidence_label(),
        }
    }
}

/// One row of `findings.csv`: the audit table, one finding a row in `summary.json`'s
/// order, so a reviewer can check each verdict against its rule and each passage
/// against the study without reading the HTML.
#[derive(Debug, Serialize)]
struct FindingCsv<'a> {
    number: usize,
    kind: &'a str,
    verdict: &'a str,
    claim: &'a str,
    rule: &'a str,
    evidence: &'a str,
    study: Option<&'a str>,
    place: Option<&'a str>,
    passage: Option<&'a str>,
    /// The shared caveats' ids, `; `-separated (their text: `summary.json`'s `caveats`).
    caveats: String,
    rests_on: &'a str,
}

/// Writes `findings.csv` beside `summary.json`.
pub fn write_findings_csv(
    dir: &std::path::Path,
    findings: &[FindingSummary],
) -> anyhow::Result<()> {
    super::csv_file::write_csv(
        &dir.join("findings.csv"),
        findings.iter().enumerate().map(|(i, f)| FindingCsv {
            number: i + 1,
            kind: &f.kind,
            verdict: &f.verdict,
            claim: &f.claim,
            rule: &f.rule,
            evidence: &f.evidence,
            study: f.study.as_deref(),
            place: f.place.as_deref(),
            passage: f.passage.as_deref(),
            caveats: f.caveats.join("; "),
            rests_on: &f.rests_on,
        }),
    )
}

/// Headline numbers of a run.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Headline {
    /// Cases measured (case x mode).
    pub cases_measured: usize,
    /// Largest gateway CPU / PK bound.
    pub worst_bound_ratio: Option<f64>,
    /// Its case.
    pub worst_bound_case: Option<String>,
    /// Cases whose bound ratio is not shown: a measurement failure (too few pairs, or an
    /// interval wholly below 1), or an interval that does not clear 1 (`cases.csv` gives
    /// each one's status, pairs and interval).
    pub bound_failures: usize,
    /// Median published/ours, client.
    pub client_speedup_median: Option<f64>,
    /// Median published/ours, gateway.
    pub server_speedup_median: Option<f64>,
    /// Median probe overhead (%).
    pub probe_overhead_pct: Option<f64>,
    /// Eq. 4.1 on the thesis' data: mean and sd (ms).
    pub eq41_traversal_mean_ms: Option<f64>,
    /// Sd.
    pub eq41_traversal_sd_ms: Option<f64>,
    /// Median |error| of the corrected queue model vs the load test with the emulated
    /// bearer round trip (the model's setting), rho <= 0.8.
    pub queue_corrected_median_error: Option<f64>,
    /// Worst |error| of the corrected model there, rho <= 0.8.
    pub queue_corrected_max_error: Option<f64>,
    /// Median |error| of the as-published model there.
    pub queue_as_published_median_error: Option<f64>,
    /// Median |error| of the corrected model on bare loopback (clients answer at once).
    pub queue_corrected_loopback_median_error: Option<f64>,
    /// Median |error| of the handshake-chain simulation on bare loopback, rho <= 0.8.
    pub queue_chain_median_error: Option<f64>,
    /// Worst |error| of the chain simulation on bare loopback, rho <= 0.8.
    pub queue_chain_max_error: Option<f64>,
    /// Median |error| of the trace replay (FIFO server on the runs' own arrivals and
    /// occupancies), both settings, rho <= 0.8.
    pub queue_replay_median_error_bearer: Option<f64>,
    pub queue_replay_median_error_loopback: Option<f64>,
    /// The corrected P-K against the undisturbed part of each bearer-setting run (rho <=
    /// 0.8): median and largest |error|, points within 15 % and points, and the median
    /// share of the window's jobs in that part.
    pub queue_undisturbed_corrected_median_error: Option<f64>,
    pub queue_undisturbed_corrected_max_error: Option<f64>,
    /// [points within 15 %, DESIGNED points]: counted against the design, not against
    /// the points that happened to be judged (see `queue_judged_points`).
    pub queue_undisturbed_within_15_percent: (usize, usize),
    /// The load test's designed headline points (WTLS, bearer setting, target rho <= 0.8;
    /// 16 in the full mode) and how many of them the corrected model was judged at over
    /// their undisturbed jobs; fewer judged than designed makes the run degraded
    /// ([`Summary::degraded`]).
    pub queue_designed_points: usize,
    pub queue_judged_points: usize,
    /// The designed points by the interval rule (the finding's reading of them).
    pub queue_undisturbed_interval_verdicts: super::queue::variants::VerdictCounts,
    /// The same model on bare loopback's judged points (rho <= 0.8), where the arrivals
    /// are not Poisson: [points within 15 %, judged points] over the undisturbed jobs.
    pub queue_loopback_undisturbed_within_15_percent: (usize, usize),
    /// Bare loopback's points at rho <= 0.8: the judged ones and those without an
    /// undisturbed estimate or off their target rho.
    pub queue_loopback_designed_points: usize,
    /// The same headline in words: "10 of 16 designed (13 judged)".
    pub queue_undisturbed_within_15_percent_words: String,
    pub queue_undisturbed_share_median: Option<f64>,
    /// The same comparison with one occupancy law for every job (plain Eq. 3.12, no
    /// opening delivery): median |error|, and points within 15 % and points.
    pub queue_undisturbed_one_law_median_error: Option<f64>,
    pub queue_undisturbed_one_law_within_15_percent: (usize, usize),
    /// Median half-width of the undisturbed mean waits' 95 % batch-means intervals,
    /// relative to the waits.
    pub queue_undisturbed_ci95_median: Option<f64>,
    /// Undisturbed points (bearer setting, target rho <= 0.8) where the corrected model
    /// falls outside both 15 % and the measured wait's 95 % interval.
    pub queue_undisturbed_outside_both: usize,
    /// The corrected P-K over the whole steady window of the same points, stalls of the
    /// shared machine included, beside the undisturbed figures: points within 15 % and
    /// designed points (as above), and points outside both 15 % and the measured wait's
    /// 95 % interval.
    pub queue_corrected_within_15_percent: (usize, usize),
    pub queue_corrected_outside_both: usize,
    /// The load points beyond the load test's own: other round-trip laws, mutual
    /// handshakes of three or more jobs (evaluate/queue/variants.rs).
    #[serde(flatten)]
    pub queue_variants: super::queue::variants::VariantsHeadline,
    /// Load points whose measured rho stayed more than 0.05 off its target after the
    /// repeats (reported, not judged), over every load point of the run: WTLS's own of
    /// both settings, the other protocols', the round-trip laws' and the mutual ones.
    pub queue_points_missed: usize,
    /// The other protocols' load points judged by the interval rule, of those run
    /// ([judged, run]), and each protocol with a point not judged (`quic 0 of 3`).
    pub queue_other_protocols_judged: (usize, usize),
    pub queue_other_protocols_short: Vec<String>,
    /// Median |error| of the transmission model vs real bearer runs.
    pub transmission_model_median_error: Option<f64>,
    /// The bearers whose bias is not shown within the 5 % target (rule 5), as
    /// `nb-iot bias +6.1 % (beyond)`.
    pub transmission_model_bearers_outside_target: Vec<String>,
    /// Where the classical, the hybrid key exchange and the fully post-quantum handshake
    /// exceed the time-to-secure-channel budget (`evaluate/pq_cost/channel.rs`).
    #[serde(flatten)]
    pub pq_budget: super::pq_cost::ChannelHeadline,
    /// Best WTLS record throughput (Mbit/s) among the ciphers WTLS 1.0 assigns (not the
    /// project's private-code-point AES): the protect direction, averaged over the
    /// 256-8192-byte records as Herwono-Liebhardt average theirs.
    pub record_best_mbit_s: Option<f64>,
    /// Cipher and MAC of that throughput (`RC5_CBC_56/SHA`), with the suites within 5 %
    /// of it, which it is not decided faster than.
    pub record_best_cipher: Option<String>,
    /// Part 3b (devices): the Nokia fit, the emulated end-to-end runs and Eq. 3.84 on the
    /// live GSM CSD data, each out of sample.
    #[serde(flatten)]
    pub devices: super::device::DeviceHeadline,
    /// WTLS beside DTLS 1.2 and EDHOC: the peer anchors' bound ratios beside ours, the
    /// model's error and the lossy completions (evaluate/protocols.rs).
    #[serde(flatten)]
    pub protocols: super::protocols::ProtocolsHeadline,
}

/// The headline numbers.
pub fn headline(
    p: &ProcessingResults,
    q: &QueueResults,
    t: &TransmissionResults,
    r: &RecordResults,
) -> Headline {
    let worst = p.worst_bound_ratio();
    let eq41 = t.eq41_summary();
    let others = q.other_protocols_judged();
    let undisturbed = q.undisturbed_judgement();
    let designed = designed_count(q, &undisturbed);
    // The direction a sender pays, averaged over 256-8192-byte records as
    // Herwono-Liebhardt average theirs: one record size or the cheaper direction alone
    // would flatter the figure.
    // Among the ciphers WTLS 1.0 assigns: the project's private-code-point AES is not
    // one of the standard's (Herwono-Liebhardt measured AES outside the standard too).
    let assigned = |name: &str| {
        BulkCipherAlgorithm::ALL
            .iter()
            .any(|c| c.name() == name && c.is_assigned_by_wtls())
    };
    let suites: std::collections::BTreeSet<(&str, &str)> = r
        .rows
        .iter()
        .filter(|x| x.wtls && x.cipher != "NULL" && assigned(&x.cipher))
        .map(|x| (x.cipher.as_str(), x.mac.as_str()))
        .collect();
    let mut ranked: Vec<(&str, &str, f64)> = suites
        .into_iter()
        .filter_map(|(c, m)| Some((c, m, r.averaged(c, m, "protect")?.0)))
        .collect();
    ranked.sort_by(|a, b| b.2.total_cmp(&a.2));
    let best = ranked.first().copied();
    Headline {
        cases_measured: p.cases.len(),
        worst_bound_ratio: worst.as_ref().map(|w| w.1),
        worst_bound_case: worst.map(|w| w.0),
        bound_failures: p.bound_failures().len(),
        client_speedup_median: p.median_speedup(Side::Client),
        server_speedup_median: p.median_speedup(Side::Server),
        probe_overhead_pct: p.probe_overhead_pct(),
        eq41_traversal_mean_ms: eq41.map(|e| e.0),
        eq41_traversal_sd_ms: eq41.map(|e| e.1),
        queue_corrected_median_error: q.median_error(Setting::Bearer, |l| l.corrected_ms),
        queue_corrected_max_error: q.max_error(Setting::Bearer, |l| l.corrected_ms),
        queue_as_published_median_error: q.median_error(Setting::Bearer, |l| l.as_published_ms),
        queue_corrected_loopback_median_error: q
            .median_error(Setting::Loopback, |l| l.corrected_ms),
        queue_chain_median_error: q.median_error(Setting::Loopback, |l| l.chain_ms),
        queue_chain_max_error: q.max_error(Setting::Loopback, |l| l.chain_ms),
        queue_replay_median_error_bearer: q.median_error(Setting::Bearer, |l| l.replay_ms),
        queue_replay_median_error_loopback: q.median_error(Setting::Loopback, |l| l.replay_ms),
        queue_undisturbed_corrected_median_error: wtlsperf_models::stats::median(
            &q.undisturbed_errors(),
        ),
        queue_undisturbed_corrected_max_error: q
            .undisturbed_errors()
            .into_iter()
            .max_by(f64::total_cmp),
        queue_undisturbed_within_15_percent: (undisturbed.within, designed),
        queue_designed_points: designed,
        queue_judged_points: undisturbed.points(),
        queue_undisturbed_within_15_percent_words: against_design(&undisturbed, designed),
        queue_undisturbed_interval_verdicts: super::queue::variants::VerdictCounts::of(
            q.designed_points(),
            false,
        ),
        queue_loopback_undisturbed_within_15_percent: {
            let e = q.loopback_undisturbed_errors();
            (e.iter().filter(|&&x| x <= 0.15).count(), e.len())
        },
        queue_loopback_designed_points: q.loopback_designed_points(),
        queue_undisturbed_share_median: q.undisturbed_share_median(),
        queue_undisturbed_one_law_median_error: wtlsperf_models::stats::median(
            &q.undisturbed_one_law_errors(),
        ),
        queue_undisturbed_one_law_within_15_percent: {
            let e = q.undisturbed_one_law_errors();
            (e.iter().filter(|&&x| x <= 0.15).count(), e.len())
        },
        queue_undisturbed_ci95_median: wtlsperf_models::stats::median(&q.undisturbed_intervals()),
        queue_undisturbed_outside_both: q.undisturbed_judgement().outside_both,
        queue_corrected_within_15_percent: (q.corrected_judgement().within, designed),
        queue_corrected_outside_both: q.corrected_judgement().outside_both,
        queue_variants: q.variants_headline(),
        queue_points_missed: q.missed_points_all(),
        queue_other_protocols_judged: (others.0, others.1),
        queue_other_protocols_short: others.2,
        transmission_model_median_error: t.model_error(),
        transmission_model_bearers_outside_target: t.bearers_outside_target(),
        pq_budget: Default::default(),
        record_best_mbit_s: best.map(|b| b.2),
        record_best_cipher: best.map(|b| fastest_record_suites(b, &ranked)),
        devices: Default::default(),
        protocols: Default::default(),
    }
}

/// The designed headline points of a run: the plan's, or the points that ran when a run
/// built by hand has no plan.
fn designed_count(q: &QueueResults, j: &super::queue::Judgement) -> usize {
    q.designed.max(j.designed)
}

/// A headline count against the design, in words: "10 of 16 designed (13 judged)".
pub fn against_design(j: &super::queue::Judgement, designed: usize) -> String {
    format!(
        "{} of {designed} designed ({} judged)",
        j.within,
        j.points()
    )
}

/// The interference injector's settings and take, as `summary.json` records them.
#[derive(Debug, Clone, Serialize)]
pub struct InterferenceSummary {
    /// Share of the gateway worker's core the injector spins for.
    pub duty: f64,
    pub burst_ms: f64,
    /// CPU time it took over the load test's kept recordings (ms, summed).
    pub injected_ms: f64,
}

impl InterferenceSummary {
    pub fn of(i: &wtlsperf_drivers::load::Interference, injected_ms: f64) -> Self {
        InterferenceSummary {
            duty: i.duty,
            burst_ms: i.burst.as_secs_f64() * 1e3,
            injected_ms,
        }
    }

    /// The first screen's words.
    pub fn words(&self) -> String {
        format!(
            "on: {:.0} % of the gateway worker's core in {:.0} ms bursts, standing in for a \
             hypervisor; {:.0} ms injected into the load test's recordings, whose stalls \
             include it",
            self.duty * 100.0,
            self.burst_ms,
            self.injected_ms
        )
    }
}

/// `summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Machine.
    pub machine: MachineInfo,
    /// Run id.
    pub run_id: String,
    /// Mode.
    pub mode: Mode,
    /// Start (Unix s).
    pub start_unix_s: u64,
    /// End (Unix s).
    pub end_unix_s: u64,
    /// Duration (s).
    pub duration_s: f64,
    /// Wall time (s) of each part of the run (processing, queue, transmission, ...).
    pub part_seconds: std::collections::BTreeMap<String, f64>,
    /// The load test judged fewer of its designed points than designed: how many, why
    /// the others were not, and what the machine took (`None`, written as null, when
    /// every designed point was judged). The report's first screen shows it as a
    /// "degraded run" banner.
    pub degraded: Option<super::queue::Degraded>,
    /// The load test's interference injector, when the run had it on (`--interference`;
    /// null without it): what it took, so that no stall it caused passes for the
    /// machine's own.
    pub interference: Option<InterferenceSummary>,
    /// Headline numbers.
    pub headline: Headline,
    /// Findings.
    pub findings: Vec<FindingSummary>,
    /// The caveats the findings share, each written once.
    pub caveats: Vec<CaveatSummary>,
}

/// One row of `cases.csv`. New columns go where they belong in the struct, in
/// [`CaseCsv::of`] and in [`CASES_HEADER`] (a test checks the header).
#[derive(Debug, Serialize)]
pub struct CaseCsv {
    #[serde(serialize_with = "super::csv_file::display")]
    case: Case,
    category: u8,
    group: u8,
    auth: Authentication,
    variant: &'static str,
    client_cpu_median_ms: f64,
    client_cpu_p95_ms: f64,
    client_wall_median_ms: f64,
    client_wall_p95_ms: f64,
    server_cpu_median_ms: f64,
    server_cpu_p95_ms: f64,
    server_wall_median_ms: f64,
    server_wall_p95_ms: f64,
    bytes_up: usize,
    bytes_down: usize,
    datagrams_up: usize,
    datagrams_down: usize,
    messages_client: usize,
    messages_server: usize,
    /// Empty unless `bound_status` is `bounded`.
    bound_ratio: Option<f64>,
    bound_floor_ratio: Option<f64>,
    probe_overhead_pct: Option<f64>,
    published_client_ms: Option<f64>,
    published_server_ms: Option<f64>,
    /// `bounded`, `too_few_pairs`, `below_one`, `not_separated`; empty where not measured.
    bound_status: Option<&'static str>,
    bound_pairs: Option<usize>,
    bound_ci95_low: Option<f64>,
    bound_ci95_high: Option<f64>,
    /// Instructions of one seeded handshake (callgrind; empty without valgrind).
    server_instructions: Option<u64>,
    client_instructions: Option<u64>,
    raw_pk_instructions: Option<u64>,
    instruction_bound_ratio: Option<f64>,
}

impl CaseCsv {
    /// The row of one case, with its instruction counts where they were taken.
    pub fn of(c: &CaseResult, counted: Option<&CaseCounts>) -> CaseCsv {
        let pubrow = c.published().filter(|_| c.variant == Variant::Full);
        let spread = c.bound.as_ref().map(|b| *b.spread());
        let ci95 = spread.and_then(|s| s.ci95);
        CaseCsv {
            case: c.case,
            category: c.case.category,
            group: c.case.group,
            auth: c.auth,
            variant: c.variant.name(),
            client_cpu_median_ms: c.client_cpu_ms.median,
            client_cpu_p95_ms: c.client_cpu_ms.p95,
            client_wall_median_ms: c.client_wall_ms.median,
            client_wall_p95_ms: c.client_wall_ms.p95,
            server_cpu_median_ms: c.server_cpu_ms.median,
            server_cpu_p95_ms: c.server_cpu_ms.p95,
            server_wall_median_ms: c.server_wall_ms.median,
            server_wall_p95_ms: c.server_wall_ms.p95,
            bytes_up: c.bytes_up,
            bytes_down: c.bytes_down,
            datagrams_up: c.datagrams_up,
            datagrams_down: c.datagrams_down,
            messages_client: c.messages_client,
            messages_server: c.messages_server,
            bound_ratio: c.bound.as_ref().and_then(|b| b.value()),
            bound_floor_ratio: c.bound_floor_ratio,
            probe_overhead_pct: c.probe_overhead_pct,
            published_client_ms: pubrow.as_ref().map(|x| x.client_ms),
            published_server_ms: pubrow.map(|x| x.server_ms),
            bound_status: c.bound.as_ref().map(|b| b.status()),
            bound_pairs: spread.map(|s| s.pairs),
            bound_ci95_low: ci95.map(|c| c.0),
            bound_ci95_high: ci95.map(|c| c.1),
            server_instructions: counted.map(|n| n.server),
            client_instructions: counted.map(|n| n.client),
            raw_pk_instructions: counted.and_then(|n| n.raw_pk),
            instruction_bound_ratio: counted.and_then(CaseCounts::bound_ratio),
        }
    }
}

/// One row of `messages.csv`.
#[derive(Debug, Serialize)]
pub struct MessageCsv {
    #[serde(serialize_with = "super::csv_file::display")]
    case: Case,
    auth: Authentication,
    side: Side,
    message: String,
    operation: String,
    median_wall_ms: f64,
    median_cpu_ms: Option<f64>,
    share_pct: f64,
    bytes: Option<usize>,
}

/// The header row a CSV of `T` gets (for the test and the docs).
pub const CASES_HEADER: &str = "case,category,group,auth,variant,client_cpu_median_ms,client_cpu_p95_ms,client_wall_median_ms,client_wall_p95_ms,server_cpu_median_ms,server_cpu_p95_ms,server_wall_median_ms,server_wall_p95_ms,bytes_up,bytes_down,datagrams_up,datagrams_down,messages_client,messages_server,bound_ratio,bound_floor_ratio,probe_overhead_pct,published_client_ms,published_server_ms,bound_status,bound_pairs,bound_ci95_low,bound_ci95_high,server_instructions,client_instructions,raw_pk_instructions,instruction_bound_ratio";

/// Writes every machine-readable file into `dir`.
pub fn write_all(
    dir: &Path,
    p: &ProcessingResults,
    instructions: &InstructionResults,
    q: &QueueResults,
    t: &TransmissionResults,
    r: &RecordResults,
    m: &McommerceResults,
) -> anyhow::Result<()> {
    write_csv(
        &dir.join("cases.csv"),
        p.cases
            .iter()
            .chain(&p.variants)
            .map(|c| CaseCsv::of(c, instructions.find(&c.case, auth_mode(c.auth), c.variant))),
    )?;
    write_csv(
        &dir.join("messages.csv"),
        p.cases.iter().flat_map(|c| {
            c.messages.iter().map(move |msg| MessageCsv {
                case: c.case,
                auth: c.auth,
                side: msg.side,
                message: msg.message.clone(),
                operation: msg.operation.clone().unwrap_or_default(),
                median_wall_ms: msg.median_wall_ms,
                median_cpu_ms: msg.median_cpu_ms,
                share_pct: msg.share_pct,
                bytes: msg.bytes,
            })
        }),
    )?;
    write_queue(dir, q)?;
    write_csv(&dir.join("transmission.csv"), &t.bearer)?;
    write_csv(&dir.join("record_layer.csv"), &r.rows)?;
    write_csv(&dir.join("record_layer_raw_ciphers.csv"), &r.raw_costs)?;
    write_csv(&dir.join("mcommerce.csv"), &m.rows)?;
    Ok(())
}

/// Writes the queue part's files into `dir`: `queue.csv`, `queue_load_test.csv` and
/// `queue_robustness.csv`.
pub fn write_queue(dir: &Path, q: &QueueResults) -> anyhow::Result<()> {
    write_csv(&dir.join("queue.csv"), &q.rows)?;
    write_csv(
        &dir.join("queue_load_test.csv"),
        q.load
            .iter()
            .chain(&q.modern)
            .chain(&q.variants.robustness)
            .chain(&q.variants.mutual),
    )?;
    // A full evaluation runs no robustness points (`--only robustness` does): the file
    // then has its header alone.
    super::csv_file::write_csv_or_header(&dir.join("queue_robustness.csv"), q.robustness_rows())
}

/// `part.json` of a run of one part (`evaluate --only`): where its time went and the
/// part's own headline figures.
#[derive(Debug, Clone, Serialize)]
pub struct PartSummary {
    pub run_id: String,
    pub mode: Mode,
    pub only: &'static str,
    pub duration_s: f64,
    pub part_seconds: std::collections::BTreeMap<String, f64>,
    /// The load test's own bearer points, the corrected model over the undisturbed jobs
    /// and over the whole window: within 15 % and designed points (as in `summary.json`).
    pub queue_undisturbed_within_15_percent: (usize, usize),
    pub queue_corrected_within_15_percent: (usize, usize),
    pub queue_points_missed: usize,
    /// Designed and judged headline points, and the degraded account, as in
    /// `summary.json`.
    pub queue_designed_points: usize,
    pub queue_judged_points: usize,
    pub queue_undisturbed_within_15_percent_words: String,
    pub degraded: Option<super::queue::Degraded>,
    /// Wall time (s) of each stage of the queue part.
    pub queue_stage_seconds: std::collections::BTreeMap<String, f64>,
    #[serde(flatten)]
    pub queue_variants: super::queue::variants::VariantsHeadline,
    /// The findings the part decides on its own (the premise's robustness, the mutual
    /// points), each with its kind, verdict and rule.
    pub findings: Vec<FindingSummary>,
}

impl PartSummary {
    /// The summary of a queue-only or robustness-only run.
    pub fn queue(
        only: &'static str,
        run_id: String,
        mode: Mode,
        duration_s: f64,
        part_seconds: std::collections::BTreeMap<String, f64>,
        q: &QueueResults,
    ) -> Self {
        let (u, c) = (q.undisturbed_judgement(), q.corrected_judgement());
        let designed = designed_count(q, &u);
        PartSummary {
            run_id,
            mode,
            only,
            duration_s,
            part_seconds,
            queue_undisturbed_within_15_percent: (u.within, designed),
            queue_corrected_within_15_percent: (c.within, designed),
            queue_points_missed: q.missed_points_all(),
            queue_designed_points: designed,
            queue_judged_points: u.points(),
            queue_undisturbed_within_15_percent_words: against_design(&u, designed),
            degraded: q.degraded(),
            queue_stage_seconds: q
                .stage_seconds
                .iter()
                .map(|&(stage, s)| (stage.to_owned(), s))
                .collect(),
            queue_variants: q.variants_headline(),
            findings: super::findings::queue_variant_findings(q)
                .iter()
                .map(FindingSummary::from)
                .collect(),
        }
    }
}

/// Writes `summary.json` into `dir`, whole: the last file of a complete run.
pub fn write_summary(dir: &Path, summary: &Summary) -> anyhow::Result<()> {
    write_json(&dir.join("summary.json"), summary)
}

/// Writes `value` as pretty JSON to `path`, whole.
pub fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(value)?;
    wtlsperf_report::write_whole(path, json.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// The fastest suite's name, and the suites within [`MODEL_TOLERANCE`] of it: one
/// median of timed rounds each and no interval, so a closer one is not decided slower.
fn fastest_record_suites(best: (&str, &str, f64), ranked: &[(&str, &str, f64)]) -> String {
    let near: Vec<String> = ranked
        .iter()
        .skip(1)
        .filter(|x| x.2 >= best.2 * (1.0 - MODEL_TOLERANCE))
        .map(|x| format!("{}/{} {:.0}", x.0, x.1, x.2))
        .collect();
    let name = format!("{}/{}", best.0, best.1);
    if near.is_empty() {
        name
    } else {
        format!(
            "{name}, not decided faster than {} Mbit/s (within {:.0} %)",
            near.join(", "),
            100.0 * MODEL_TOLERANCE
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A designed bearer point whose undisturbed wait the model misses by `error`.
    fn judged_point(rho: f64, error: f64) -> super::super::queue::LoadPoint {
        let mut p = super::super::queue::LoadPoint {
            case: "283k/283k".into(),
            round_trip_ms: 20.0,
            ..Default::default()
        };
        p.calibration.target_rho = rho;
        p.calibration.measured_rho = rho;
        p.undisturbed.wait_ms = Some(1.0);
        p.models.corrected_undisturbed_ms = Some(1.0 + error);
        p
    }

    #[test]
    fn the_queue_headline_counts_against_the_designed_points() {
        // 16 designed; 3 ran: two within 15 %, one 20 % off.
        let mut q = QueueResults::judgement_view(vec![
            judged_point(0.3, 0.05),
            judged_point(0.5, 0.1),
            judged_point(0.7, 0.2),
        ]);
        q.designed = 16;
        let part = PartSummary::queue("queue", "r".into(), Mode::Full, 1.0, Default::default(), &q);
        assert_eq!(part.queue_undisturbed_within_15_percent, (2, 16));
        assert_eq!(
            (part.queue_designed_points, part.queue_judged_points),
            (16, 3)
        );
        assert_eq!(
            part.queue_undisturbed_within_15_percent_words,
            "2 of 16 designed (3 judged)"
        );
        let d = part.degraded.as_ref().expect("degraded");
        assert_eq!((d.judged, d.designed, d.causes.not_run), (3, 16, 13));
        let json = serde_json::to_value(&part).unwrap();
        assert_eq!(json["degraded"]["causes"]["not_run"], 13);
    }

    #[test]
    fn cases_header_matches_the_struct() {
        let dir = tempfile::tempdir().unwrap();
        let p = ProcessingResults {
            cases: vec![crate::evaluate::processing::tests::synthetic(
                "256p/256p",
                wtlsperf_models::Authentication::Mutual,
                1.0,
            )],
            variants: vec![],
            skipped: vec![],
        };
        let path = dir.path().join("c.csv");
        write_csv(&path, p.cases.iter().map(|c| CaseCsv::of(c, None))).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().next().unwrap(), CASES_HEADER);

        // A failed bound: no value, its status, pairs and interval.
        let mut c = p.cases[0].clone();
        let pairs: Vec<_> = [0.98, 0.96, 0.99, 0.97, 0.95, 0.97]
            .iter()
            .map(|r| wtlsperf_drivers::runner::BoundPair {
                server_cpu_ns: (r * 1e6) as u64,
                raw_pk_ns: 1_000_000,
            })
            .collect();
        c.bound = wtlsperf_drivers::runner::BoundRatio::assess(&pairs);
        write_csv(&path, [CaseCsv::of(&c, None)]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let row: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        let col = |name: &str| row[CASES_HEADER.split(',').position(|h| h == name).unwrap()];
        assert_eq!(col("bound_ratio"), "");
        assert_eq!(col("bound_status"), "below_one");
        assert_eq!(col("bound_pairs"), "6");
        assert_eq!(
            (col("bound_ci95_low"), col("bound_ci95_high")),
            ("0.95", "0.99")
        );
        let m = MachineInfo::collect();
        assert!(m.cores >= 1);
        assert!(m.openssl.contains("SSL"));
    }

    /// One median of timed rounds per suite and no interval: a suite within 5 % of the
    /// fastest is named beside it, not ranked below it.
    #[test]
    fn suites_within_the_tolerance_of_the_fastest_are_not_ranked_below_it() {
        let ranked = [
            ("RC5_CBC_56", "SHA", 2164.0),
            ("RC5_CBC_64", "SHA", 2141.0),
            ("IDEA_CBC", "SHA", 900.0),
        ];
        assert_eq!(
            fastest_record_suites(ranked[0], &ranked),
            "RC5_CBC_56/SHA, not decided faster than RC5_CBC_64/SHA 2141 Mbit/s (within 5 %)"
        );
        assert_eq!(
            fastest_record_suites(ranked[2], &ranked[2..]),
            "IDEA_CBC/SHA"
        );
    }
}
