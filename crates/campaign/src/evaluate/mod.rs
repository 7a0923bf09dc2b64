//! `wtlsperf evaluate`: the whole evaluation campaign in one command.
//!
//! It re-runs the studies of Bayoglu 2004, Levi-Savas 2003 and Herwono-Liebhardt 2001 on
//! this machine and writes one directory: CSV and JSON data, SVG and PNG figures and a
//! self-contained `report.html`, every number beside the model's value and the published
//! one. The parts follow the thesis' chapter 4 and are one module each:
//!
//! * [`processing`]: per-case and per-message processing times (thesis 3.1, 4.1);
//! * [`queue`]: the gateway queue, as published, corrected, simulated and load-tested
//!   (thesis 3.2, 4.2; Levi-Savas 4.2);
//! * [`transmission`]: bytes, round trips and real handshakes over emulated bearers
//!   (thesis 3.3, 4.3; Herwono message groups);
//! * [`device`] and [`recommendation`]: constrained clients: device profiles, the
//!   studies re-enacted with an emulated handset, Eq. 3.84 on the live GSM CSD data, and
//!   the fastest handshake per device, bearer and security level;
//! * [`overall`]: T_H = T_PD + T_TD + T_QD, the Levi-Savas response time and the
//!   Herwono duration-against-throughput curves (thesis 4.4);
//! * [`record_layer`] and [`mcommerce`]: bulk throughput and the cost of signText;
//! * [`protocols`]: WTLS beside DTLS 1.2 and EDHOC, and the peer anchors;
//! * [`loss_curves`]: completion and its percentiles at 0-20 % loss, per protocol;
//! * [`then_and_now`]: time to a secure channel, WTLS in 2001 beside today's protocols;
//! * [`pq_cost`]: what ML-KEM-768 adds to DTLS 1.3 per device and bearer, and where it
//!   stops being affordable;
//! * [`wap_bench`] (only with `--wap-bench DIR`): the WAP gateway beside Kannel's
//!   wapbox, read from what `scripts/bench-wap-kannel.sh` wrote into DIR;
//! * [`findings`]: what the numbers confirm and contradict, each verdict by the rule of
//!   [`verdict`] and each attribution to a study resting on a passage of [`passages`],
//!   the caveats several of them repeat kept once by [`caveats`];
//! * [`output`]: the machine-readable files and `summary.json`;
//! * [`interrupt`]: a run stopped by a signal or killed leaves nothing that passes for a
//!   complete one.
//!
//! Below every part lie what they share and nothing else: [`context`] (the run's size,
//! provenance and progress line), [`verdict`] (the verdict rule), [`passages`] (the
//! studies' quoted passages), [`vocabulary`] (the devices and bearers, loaded and
//! validated once at start-up, and the typed names a row carries) and [`csv_file`] (the
//! CSV edge). A part reads earlier parts' results and never this module, which runs them.
//!
//! Three sizes: the full run (about 12.5 minutes on 2 cores: 754-760 s in the last three runs,
//! within its 15-minute budget), `--quick` (about 160 s) and a hidden `--smoke`, which
//! the test suite runs, that only proves every part runs end to end.

pub mod caveats;
pub mod citations;
pub mod contenders;
pub mod context;
pub mod csv_file;
pub mod device;
pub mod findings;
pub mod flights;
pub mod front;
pub mod instructions;
pub mod interrupt;
pub mod loss_curves;
pub mod mcommerce;
pub mod output;
pub mod overall;
pub mod page_load;
pub mod page_load_decks;
pub mod page_load_model;
pub mod passages;
pub mod pq_cost;
pub mod pq_prices;
pub mod processing;
pub mod protocols;
pub mod queue;
pub mod recommendation;
pub mod record_layer;
pub mod then_and_now;
pub mod transmission;
pub mod verdict;
pub mod vocabulary;
pub mod wap_bench;

use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use wtlsperf_report::Report;

use context::TICK;
pub use context::{utc_stamp, Ctx, Mode};
use wtlsperf_drivers::pki_store::PkiStore;

/// What `wtlsperf evaluate` runs (the command line, the `wtlsperf` crate's
/// `evaluate_cmd`, parses its options into this).
#[derive(Debug, Clone)]
pub struct EvaluateConfig {
    pub mode: Mode,
    /// Output directory; `None`: `results/<UTC timestamp>/`.
    pub out: Option<PathBuf>,
    /// PKI directory, created on first use; `None`: `<out>/pki`.
    pub pki_dir: Option<PathBuf>,
    /// Also write every queue load point's job and disturbance logs here.
    pub job_logs: Option<PathBuf>,
    /// A data directory laid out like the repository's `data/` whose devices and bearers
    /// the campaign runs on instead of the shipped ones.
    pub data: Option<PathBuf>,
    /// Run one part alone, with the parts it reads, and write only its files.
    pub only: Option<Only>,
    /// The queue load test's interference injector (`--interference`), if any.
    pub interference: Option<wtlsperf_drivers::load::Interference>,
    /// A results directory of `scripts/bench-wap-kannel.sh` whose section the report
    /// adds (`--wap-bench`); read and checked before anything runs.
    pub wap_bench: Option<PathBuf>,
}

/// The parts `--only` can run alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    /// The queue part: the models and the load test.
    Queue,
    /// The Poisson premise under round-trip laws that are not exponential: every law,
    /// the exponential baseline among them, at three loads, each point long enough for
    /// the interval rule to decide (about 7 minutes in the full mode); writes
    /// `queue_robustness.csv`, its points in `queue_load_test.csv` and `queue.csv`, and
    /// `part.json` with the finding.
    Robustness,
    /// The page loads over the emulated bearers (the first page and the decks by size):
    /// `page_load.csv`, `page_load_decks.csv`, `page_load_gateway.csv` and `part.json`.
    PageLoad,
    /// The WAP gateway beside Kannel, from `--wap-bench DIR` alone (nothing is measured):
    /// a report with that section, its CSV files and `part.json`.
    WapBench,
}

/// The wall time of each top-level part, in order: the full run has a 15-minute budget,
/// and `summary.json` says where it went (or `summary.partial.json`, if interrupted).
struct PartClock<'g> {
    seconds: std::cell::RefCell<Vec<(&'static str, f64)>>,
    guard: &'g interrupt::RunGuard,
}

impl PartClock<'_> {
    /// The wall seconds of each part run so far, by name (`part.json`'s `part_seconds`).
    fn seconds_by_part(&self) -> std::collections::BTreeMap<String, f64> {
        self.seconds
            .borrow()
            .iter()
            .map(|&(part, s)| (part.to_owned(), s))
            .collect()
    }

    /// Runs one of the top-level parts, marks it done on the progress bar and keeps its
    /// wall time.
    fn part<T>(
        &self,
        ctx: &Ctx,
        name: &'static str,
        run: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let clock = Instant::now();
        let out = run()?;
        let seconds = clock.elapsed().as_secs_f64();
        self.seconds.borrow_mut().push((name, seconds));
        self.guard.part_done(name, seconds);
        ctx.progress.inc(1);
        Ok(out)
    }

    /// Every part's wall time, and beside them the stages of the parts that keep theirs:
    /// the queue's (most of the budget goes there) and the protocols' (whose time varies
    /// between runs).
    fn seconds_with_stages(&self, parts: &Parts) -> std::collections::BTreeMap<String, f64> {
        let stages = |part: &str, list: &[(&'static str, f64)]| {
            list.iter()
                .map(|&(stage, s)| (format!("{part}: {stage}"), s))
                .collect::<Vec<_>>()
        };
        self.seconds
            .borrow()
            .iter()
            .map(|&(part, s)| (part.to_owned(), s))
            .chain(stages("queue", &parts.queue.stage_seconds))
            .chain(stages("protocols", &parts.protocols.stage_seconds))
            .collect()
    }
}

/// Runs the evaluation and writes the results directory.
pub fn run(args: EvaluateConfig) -> anyhow::Result<()> {
    let mode = args.mode;
    // The devices and bearers first: a bad data file stops the run before it writes.
    let catalogue = match &args.data {
        Some(dir) => vocabulary::Catalogue::load(dir).context("--data")?,
        None => vocabulary::Catalogue::shipped()?,
    };
    // The benchmark directory too, and `--only wap_bench` has one to read.
    let wap_bench = match (&args.wap_bench, args.only) {
        (Some(dir), _) => Some(wap_bench::WapBench::load(dir)?),
        (None, Some(Only::WapBench)) => return Err(wap_bench::WapBenchError::NoDirectory.into()),
        (None, _) => None,
    };
    let started = SystemTime::now();
    let start_secs = started.duration_since(UNIX_EPOCH)?.as_secs();
    let run_id = utc_stamp(start_secs);
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(&run_id));
    std::fs::create_dir_all(&out)
        .with_context(|| format!("creating the output directory {}", out.display()))?;
    let guard = interrupt::RunGuard::install(&out, &run_id, start_secs)?;
    let machine_info = output::MachineInfo::collect();
    let ctx = Ctx {
        mode,
        catalogue,
        run_id: run_id.clone(),
        machine: machine_info.short(),
        progress: progress_bar(),
        job_logs: args.job_logs.clone(),
        interference: args.interference,
    };
    let clocks = PartClock {
        seconds: Default::default(),
        guard: &guard,
    };
    let clock = Instant::now();
    if let (Some(Only::WapBench), Some(bench)) = (args.only, &wap_bench) {
        return wap_bench_only(bench, &ctx, &machine_info, &out, clock, &guard);
    }

    ctx.step("loading or creating the PKI");
    let pki_dir = args.pki_dir.unwrap_or_else(|| out.join("pki"));
    let store = clocks.part(&ctx, "pki", || {
        // The thesis' Table 3.2 numbering: its byte counts (Table 4.11) were made
        // with it (explicit parameters for the curves WAP-261 does not number would
        // add to every message naming them).
        PkiStore::load_or_init_numbered(&pki_dir, wtls::params::ParameterNumbering::Thesis)
            .with_context(|| format!("PKI in {}", pki_dir.display()))
    })?;
    if let Some(only) = args.only {
        return part_only(only, &ctx, &clocks, &store, &out, clock, &guard);
    }
    let parts = Parts::measure(&ctx, &clocks, &store)?;

    ctx.step("writing the report");
    let wap_bench = wap_bench.map(|b| {
        let summary = b.summary();
        (b, summary)
    });
    let report = parts.report(&ctx, &machine_info, wap_bench.as_ref())?;
    // Whole files only, `report.html` and then `summary.json` last: their presence says
    // the run completed (see `interrupt`).
    guard.finish(|| {
        parts.write_files(&out)?;
        if let Some((bench, summary)) = &wap_bench {
            bench.write_csv(summary, &out)?;
        }
        report
            .write(&out)
            .with_context(|| format!("writing the report into {}", out.display()))?;
        let summary = output::Summary {
            machine: machine_info,
            run_id,
            mode,
            start_unix_s: start_secs,
            end_unix_s: SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs(),
            duration_s: clock.elapsed().as_secs_f64(),
            part_seconds: clocks.seconds_with_stages(&parts),
            degraded: parts.queue.degraded(),
            interference: parts.interference(&ctx),
            headline: parts.headline(),
            findings: parts
                .findings
                .iter()
                .map(output::FindingSummary::from)
                .collect(),
            caveats: output::caveats_of(&parts.findings),
        };
        output::write_findings_csv(&out, &summary.findings)?;
        output::write_summary(&out, &summary)
    })?;
    ctx.progress.finish_and_clear();
    eprintln!(
        "wtlsperf evaluate: {} written in {:.1} s",
        out.join("report.html").display(),
        clock.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `--only queue` or `--only robustness`: the processing part (whose service times are
/// the load points' first guess), then the queue part or the premise's test, and their
/// files.
fn part_only(
    only: Only,
    ctx: &Ctx,
    clocks: &PartClock,
    store: &PkiStore,
    out: &std::path::Path,
    clock: Instant,
    guard: &interrupt::RunGuard,
) -> anyhow::Result<()> {
    if only == Only::PageLoad {
        return page_load_only(ctx, clocks, store, out, clock, guard);
    }
    let processing = clocks.part(ctx, "processing", || processing::run(ctx, store))?;
    let (name, queue) = match only {
        Only::Queue => (
            "queue",
            clocks.part(ctx, "queue", || queue::run(ctx, store, &processing))?,
        ),
        Only::Robustness => (
            "robustness",
            clocks.part(ctx, "robustness", || {
                Ok(queue::run_robustness(ctx, store, &processing))
            })?,
        ),
        Only::PageLoad | Only::WapBench => unreachable!("answered above"),
    };
    let summary = output::PartSummary::queue(
        name,
        ctx.run_id.clone(),
        ctx.mode,
        clock.elapsed().as_secs_f64(),
        clocks.seconds_by_part(),
        &queue,
    );
    finish_part(ctx, guard, out, name, clock, |path| {
        output::write_queue(out, &queue)?;
        output::write_json(path, &summary)
    })
}

/// Writes a part run alone (`write` takes `part.json`'s path) and says where it went.
fn finish_part(
    ctx: &Ctx,
    guard: &interrupt::RunGuard,
    out: &std::path::Path,
    name: &str,
    clock: Instant,
    write: impl FnOnce(&std::path::Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let path = out.join("part.json");
    guard.finish(|| write(&path))?;
    ctx.progress.finish_and_clear();
    eprintln!(
        "wtlsperf evaluate --only {name}: {} written in {:.1} s",
        path.display(),
        clock.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `--only page_load`: the page loads alone (they read no other part), their CSV files
/// and `part.json` (run id, mode, wall seconds).
fn page_load_only(
    ctx: &Ctx,
    clocks: &PartClock,
    store: &PkiStore,
    out: &std::path::Path,
    clock: Instant,
    guard: &interrupt::RunGuard,
) -> anyhow::Result<()> {
    let page_load = clocks.part(ctx, "page_load", || page_load::run(ctx, store))?;
    let part_seconds = clocks.seconds_by_part();
    let summary = serde_json::json!({
        "run_id": ctx.run_id,
        "mode": ctx.mode,
        "only": "page_load",
        "duration_s": clock.elapsed().as_secs_f64(),
        "part_seconds": part_seconds,
    });
    finish_part(ctx, guard, out, "page_load", clock, |path| {
        page_load.write_csv(out)?;
        output::write_json(path, &summary)
    })
}

/// `--only wap_bench`: no PKI and no part measured, only the benchmark directory read
/// back: a report with its one section, its CSV files, and `part.json` (run id, the
/// directory, wall seconds), for reading a new benchmark without the campaign.
fn wap_bench_only(
    bench: &wap_bench::WapBench,
    ctx: &Ctx,
    machine: &output::MachineInfo,
    out: &std::path::Path,
    clock: Instant,
    guard: &interrupt::RunGuard,
) -> anyhow::Result<()> {
    ctx.step("the WAP gateway beside Kannel");
    let summary = bench.summary();
    let report = Report::new("wtlsperf evaluation: the WAP gateway beside Kannel")
        .subtitle(format!(
            "run {} on {}: the benchmark of {} read back",
            ctx.run_id,
            ctx.machine,
            bench.dir.display()
        ))
        .meta("run id", &ctx.run_id)
        .meta("only", "wap_bench")
        .meta("benchmark directory", bench.dir.display().to_string())
        .meta("machine", &ctx.machine)
        .meta("kernel", &machine.kernel)
        .meta("wtlsperf", env!("CARGO_PKG_VERSION"))
        .section(bench.section(&summary));
    let part = serde_json::json!({
        "run_id": ctx.run_id,
        "only": "wap_bench",
        "wap_bench": bench.dir,
        "duration_s": clock.elapsed().as_secs_f64(),
    });
    finish_part(ctx, guard, out, "wap_bench", clock, |path| {
        bench.write_csv(&summary, out)?;
        report
            .write(out)
            .with_context(|| format!("writing the report into {}", out.display()))?;
        output::write_json(path, &part)
    })
}

/// The progress bar on stderr: one step per top-level part.
fn progress_bar() -> ProgressBar {
    let progress = ProgressBar::new(12);
    progress.set_style(
        ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    progress.enable_steady_tick(TICK);
    progress
}

/// What every part of the campaign produced.
struct Parts {
    processing: processing::ProcessingResults,
    instructions: instructions::InstructionResults,
    queue: queue::QueueResults,
    transmission: transmission::TransmissionResults,
    devices: device::DeviceResults,
    overall: overall::OverallResults,
    records: record_layer::RecordResults,
    mcommerce: mcommerce::McommerceResults,
    protocols: protocols::ProtocolResults,
    page_load: page_load::PageLoadResults,
    wap_model: page_load_model::WapModelResults,
    flights: Vec<flights::FlightRow>,
    loss_curves: loss_curves::LossCurves,
    then_and_now: then_and_now::ThenAndNow,
    pq_cost: pq_cost::PqCost,
    /// Full runs only (a few seconds of simulation): empty otherwise.
    fleet_sizing: Vec<queue::fleet_sizing::FleetSizingRow>,
    findings: Vec<wtlsperf_report::Finding>,
}

impl Parts {
    /// Runs the parts in order; later ones read earlier ones' results.
    fn measure(ctx: &Ctx, clocks: &PartClock, store: &PkiStore) -> anyhow::Result<Parts> {
        let processing = clocks.part(ctx, "processing", || processing::run(ctx, store))?;
        let instructions = clocks.part(ctx, "instructions", || {
            instructions::run(ctx, store, &processing)
        })?;
        let queue = clocks.part(ctx, "queue", || queue::run(ctx, store, &processing))?;
        let fleet_sizing = clocks.part(ctx, "fleet_sizing", || {
            anyhow::Ok(if ctx.mode == context::Mode::Full {
                queue::fleet_sizing::rows(&processing)
            } else {
                Vec::new()
            })
        })?;
        let transmission = clocks.part(ctx, "transmission", || {
            transmission::run(ctx, store, &processing)
        })?;
        let mut devices = clocks.part(ctx, "devices", || device::run(ctx, store, &processing))?;
        let mut overall = clocks.part(ctx, "overall", || {
            overall::build(ctx, &processing, &transmission, &queue, &devices.emulated)
        })?;
        let records = clocks.part(ctx, "record_layer", || record_layer::run(ctx))?;
        let mcommerce = clocks.part(ctx, "mcommerce", || mcommerce::run(ctx, store))?;
        let protocols =
            clocks.part(ctx, "protocols", || protocols::run(ctx, store, &processing))?;
        let flights = clocks.part(ctx, "flights", || {
            flights::measure(store, wtlsperf_drivers::setup::now())
        })?;
        let loss_curves = clocks.part(ctx, "loss_curves", || loss_curves::run(ctx, store))?;
        recommendation::add_dtls13(
            &mut devices.recommendations,
            &protocols.configs,
            &ctx.catalogue.devices,
            ctx.catalogue.compared_bearers(),
        );
        let then_and_now =
            then_and_now::ThenAndNow::build(&ctx.catalogue, &processing, &protocols)?;
        let pq_cost = pq_cost::PqCost::build(ctx, &protocols)?;
        let page_load = clocks.part(ctx, "page_load", || page_load::run(ctx, store))?;
        let mut findings = clocks.part(ctx, "findings", || {
            let mut all = findings::build(&processing, &queue, &transmission);
            all.extend(devices.findings());
            anyhow::Ok(all)
        })?;
        findings.extend(protocols.findings());
        findings.extend(pq_cost.findings());
        let wap_model = page_load_model::WapModelResults::build(&page_load, &processing);
        findings.extend(wap_model.findings());
        overall.add_wtp_series(&wap_model.herwono_modelled, &wap_model.herwono_measured);
        let findings = caveats::share(findings);
        Ok(Parts {
            processing,
            instructions,
            queue,
            transmission,
            devices,
            overall,
            records,
            mcommerce,
            protocols,
            page_load,
            wap_model,
            flights,
            loss_curves,
            then_and_now,
            pq_cost,
            fleet_sizing,
            findings,
        })
    }

    /// The injector's account when the run had it on.
    fn interference(&self, ctx: &Ctx) -> Option<output::InterferenceSummary> {
        let i = ctx.interference.as_ref()?;
        Some(output::InterferenceSummary::of(i, self.queue.injected_ms()))
    }

    /// The report: the first screen from the headline numbers (and the degraded-run
    /// banner when the headline says so: `front`), then the sections.
    fn report(
        &self,
        ctx: &Ctx,
        machine: &output::MachineInfo,
        wap_bench: Option<&(wap_bench::WapBench, wap_bench::Summary)>,
    ) -> anyhow::Result<Report> {
        let headline = self.headline();
        let mut json = serde_json::to_value(&headline)?;
        // The load test's account of a run that did not hold its design (summary.json's
        // `degraded`: the designed WTLS points, and the other protocols' when one of
        // theirs went unjudged) drives the first screen's banner; a run that held it
        // says so there too.
        let status = match self.queue.degraded() {
            Some(d) => serde_json::to_value(d)?,
            None if headline.queue_designed_points > 0 => serde_json::json!({
                "degraded": false,
                "judged": headline.queue_judged_points,
                "designed": headline.queue_designed_points,
                "other_protocols_load_points_judged": format!(
                    "{} of {}",
                    headline.queue_other_protocols_judged.0,
                    headline.queue_other_protocols_judged.1
                ),
            }),
            None => serde_json::Value::Null,
        };
        if let (false, Some(map)) = (status.is_null(), json.as_object_mut()) {
            map.insert("degraded".to_owned(), status);
        }
        let mut report = self.sections(ctx, machine, wap_bench)?;
        if let Some(i) = self.interference(ctx) {
            report = report.meta_on_first_screen("interference injector", i.words());
        }
        report.headlines = front::headline_numbers(&headline, &json);
        report.status = front::run_status(&json);
        Ok(report)
    }

    /// The report's sections: one per part, the benchmark against Kannel when given, the
    /// findings last.
    fn sections(
        &self,
        ctx: &Ctx,
        machine: &output::MachineInfo,
        wap_bench: Option<&(wap_bench::WapBench, wap_bench::Summary)>,
    ) -> anyhow::Result<Report> {
        let report = Report::new("wtlsperf evaluation: the WTLS handshake, re-measured")
            .subtitle(format!(
                "run {} ({:?} mode) on {}; measured values beside the models and the \
                     published numbers of Bayoglu 2004, Levi-Savas 2003 and Herwono-Liebhardt 2001",
                ctx.run_id, ctx.mode, ctx.machine
            ))
            .meta("run id", &ctx.run_id)
            .meta("mode", format!("{:?}", ctx.mode))
            .meta("machine", &ctx.machine)
            .meta("kernel", &machine.kernel)
            .meta("OpenSSL", &machine.openssl)
            .meta("wtlsperf", env!("CARGO_PKG_VERSION"))
            .section(self.processing.section(ctx)?)
            .section(self.instructions.section(ctx))
            .section(self.queue_section(ctx))
            .section(self.transmission.section(ctx))
            .section(self.overall.section(ctx))
            .section(self.devices.section(ctx))
            .section(self.records.section(ctx))
            .section(self.mcommerce.section(ctx))
            .section(self.protocols.section(ctx))
            .section(self.loss_curves.section(ctx))
            .section(self.then_and_now.section(ctx))
            .section(self.pq_cost.section(ctx))
            .section(
                self.page_load
                    .section(ctx)
                    .table(self.wap_model.wtp_table(ctx)),
            );
        let report = match wap_bench {
            Some((bench, summary)) => report.section(bench.section(summary)),
            None => report,
        };
        Ok(report.section(findings::section(&self.findings)))
    }

    /// The queue section, with what a page adds beside the handshake jobs.
    fn queue_section(&self, ctx: &Ctx) -> wtlsperf_report::Section {
        let s = self
            .queue
            .section(ctx)
            .table(self.wap_model.service_table(ctx, &self.page_load.gateway));
        match self.wap_model.service_paragraph() {
            Some(p) => s.paragraph(p),
            None => s,
        }
    }

    /// The headline numbers of `summary.json`.
    fn headline(&self) -> output::Headline {
        let mut headline = output::headline(
            &self.processing,
            &self.queue,
            &self.transmission,
            &self.records,
        );
        headline.devices = self.devices.headline();
        headline.protocols = self.protocols.headline();
        headline.pq_budget = self.pq_cost.channel_headline();
        headline
    }

    /// The CSV files beside the report (`summary.json` comes last, after the report).
    fn write_files(&self, out: &std::path::Path) -> anyhow::Result<()> {
        output::write_all(
            out,
            &self.processing,
            &self.instructions,
            &self.queue,
            &self.transmission,
            &self.records,
            &self.mcommerce,
        )?;
        self.devices.write_csv(out)?;
        self.protocols.write_csv(out)?;
        self.page_load.write_csv(out)?;
        self.wap_model.write_csv(out)?;
        flights::write(out, &self.flights)?;
        self.loss_curves.write_csv(out)?;
        self.then_and_now.write_csv(out)?;
        self.pq_cost.write_csv(out)?;
        if !self.fleet_sizing.is_empty() {
            csv_file::write_csv(&out.join("fleet_sizing.csv"), &self.fleet_sizing)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamp_matches_known_dates() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        // 2000-02-29 12:34:56 UTC, a leap day of a year divisible by 400.
        assert_eq!(utc_stamp(951_827_696), "20000229T123456Z");
        assert_eq!(utc_stamp(1_700_000_000), "20231114T221320Z");
    }

    #[test]
    fn a_bad_data_directory_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let config = EvaluateConfig {
            mode: Mode::Smoke,
            out: Some(out.clone()),
            pki_dir: None,
            job_logs: None,
            data: Some(dir.path().join("no-data")),
            only: None,
            interference: None,
            wap_bench: None,
        };
        let e = format!("{:#}", run(config).unwrap_err());
        assert!(e.starts_with("--data") && e.contains("profiles.csv"), "{e}");
        assert!(!out.exists());
    }

    #[test]
    fn repetitions_grow_with_the_mode() {
        assert!(Mode::Smoke.processing_reps() < Mode::Quick.processing_reps());
        assert!(Mode::Full.processing_reps() >= 15);
    }
}
