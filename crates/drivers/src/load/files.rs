//! The files of a load run: its report (one CSV row or JSON) and its job log with the
//! disturbances beside it, written by `wtlsperf load` and by the evaluation's queue study,
//! each whole ([`wtlsperf_report::write_whole_with`]).

use anyhow::Context;
use wtlsperf_report::Readers;

use super::LoadReport;
#[cfg(doc)]
use crate::gateway::JobRecord;

/// Writes a report as one CSV row (with header) or as JSON, whole.
pub fn write_report(report: &LoadReport, path: &std::path::Path) -> anyhow::Result<()> {
    if path.extension().is_some_and(|e| e == "csv") {
        wtlsperf_report::write_whole_with(path, Readers::Everyone, |out| {
            write_report_row(report, out)
        })
    } else {
        let json = serde_json::to_string_pretty(report)?;
        wtlsperf_report::write_whole(path, json.as_bytes())
    }
    .with_context(|| format!("writing {}", path.display()))
}

/// The CSV of [`write_report`]: a header and one row.
fn write_report_row(report: &LoadReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let g = report.gateway.clone().unwrap_or_default();
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "case",
        "auth",
        "workers",
        "offered_rate",
        "achieved_rate",
        "started",
        "completed",
        "failed",
        "success_ratio",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "mean_ms",
        "jobs",
        "mean_wait_us",
        "wait_m2_us2",
        "mean_service_us",
        "service_m2_us2",
        "mean_service_cpu_us",
        "utilisation",
        "per_handshake_service_us",
        "loadgen_cpu_s",
        "gateway_cpu_s",
        "wall_s",
        "protocol",
    ])?;
    let f = |x: f64| format!("{x}");
    w.write_record([
        report.case.clone(),
        report.auth.clone(),
        report.workers.to_string(),
        f(report.offered_rate),
        f(report.achieved_rate),
        report.started.to_string(),
        report.completed.to_string(),
        report.failed.to_string(),
        f(report.success_ratio),
        f(report.latency_ms.p50),
        f(report.latency_ms.p95),
        f(report.latency_ms.p99),
        f(report.latency_ms.mean),
        g.jobs.to_string(),
        f(g.mean_wait_us),
        f(g.wait_m2_us2),
        f(g.mean_service_us),
        f(g.service_m2_us2),
        f(g.mean_service_cpu_us),
        f(g.utilisation),
        f(g.per_handshake_service_us),
        f(report.loadgen_cpu_s),
        f(report.gateway_cpu_s),
        f(report.wall_s),
        report.protocol.clone(),
    ])?;
    w.flush()
}

/// Writes a run's job log as CSV at `path` (one row per job, [`JobRecord`]'s fields),
/// and beside it, with the extension `disturbances.csv`, what the queue study reads
/// around: the worker's, the generator's and the delivery path's stalls, and the
/// generator's late sends, one interval per row (`kind`, `start_ns`, `end_ns`, on the process clock).
pub fn write_job_log(report: &LoadReport, path: &std::path::Path) -> anyhow::Result<()> {
    wtlsperf_report::write_whole_with(path, Readers::Everyone, |out| {
        let mut w = csv::Writer::from_writer(out);
        for job in &report.jobs {
            w.serialize(job)?;
        }
        w.flush()
    })
    .with_context(|| format!("job log {}", path.display()))?;
    let disturbances = path.with_extension("disturbances.csv");
    wtlsperf_report::write_whole_with(&disturbances, Readers::Everyone, |out| {
        let mut w = csv::Writer::from_writer(out);
        w.write_record(["kind", "start_ns", "end_ns"])?;
        for s in &report.stalls {
            w.serialize(("worker_stall", s.start_ns, s.end_ns))?;
        }
        for (from, to) in &report.generator_stall_log {
            w.serialize(("generator_stall", from, to))?;
        }
        for (from, to) in &report.delivery_stall_log {
            w.serialize(("delivery_stall", from, to))?;
        }
        for (scheduled, sent) in &report.late_sends {
            w.serialize(("late_send", scheduled, sent))?;
        }
        w.flush()
    })
    .with_context(|| format!("disturbance log {}", disturbances.display()))
}
