//! The report section "The WAP gateway beside Kannel" and its CSV files: the tables of
//! docs/wap.md's "Benchmark against Kannel", made from a [`Summary`] of the directory,
//! and one figure. Every column is labelled measured (by the script, at the time and
//! commit of its `meta.json`) or derived (a ratio or difference of measured medians).

use std::path::Path;

use wtlsperf_report::{
    Axis, Cell, Column, Figure, LineChart, Point, Provenance, Section, Series, Table,
};

use super::{Gateway, Summary, WapBench};
use crate::evaluate::csv_file::write_csv;

/// The result files `--wap-bench` adds to the output directory (docs/results.md).
pub const FILES: [&str; 3] = [
    "wap_bench_gateways.csv",
    "wap_bench_ratios.csv",
    "wap_bench_client.csv",
];

/// Beyond this spread of the plotted rates, the figure's rate axis is logarithmic, so
/// that the slower gateway's points are not flattened onto the axis.
const LOG_AXIS_SPREAD: f64 = 20.0;

impl WapBench {
    /// Where the numbers come from, as every measured column and series says it: the
    /// script's run (its start time, or runs.csv's time without meta.json) and machine.
    pub(super) fn provenance(&self) -> Provenance {
        let meta = self.meta.clone().unwrap_or_default();
        let when = meta
            .started_utc
            .or_else(|| self.runs_written.clone())
            .unwrap_or_else(|| "of unknown time".into());
        Provenance::measured(
            format!("scripts/bench-wap-kannel.sh {when}"),
            meta.machine
                .unwrap_or_else(|| "an unrecorded machine".into()),
        )
    }

    /// One sentence that says which run of the script this is: time, commit, binary,
    /// options and directory, from `meta.json`, or that the directory has none.
    pub fn provenance_sentence(&self) -> String {
        let dir = self.dir.display();
        match &self.meta {
            Some(m) => {
                let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "unrecorded".into());
                format!(
                    "Measured by scripts/bench-wap-kannel.sh, run from {} to {} UTC at commit {} \
                     with the binary {} and the options {}, results in {dir}; read back from \
                     its runs.csv and wtls.csv, not measured by this evaluation.",
                    or(&m.started_utc),
                    or(&m.finished_utc),
                    or(&m.commit),
                    or(&m.binary),
                    or(&m.options),
                )
            }
            None => format!(
                "Measured by scripts/bench-wap-kannel.sh, results in {dir}, which has no \
                 meta.json (time, commit, binary and options unrecorded; runs.csv was last \
                 written {}); read back from its runs.csv and wtls.csv, not measured by this \
                 evaluation.",
                self.runs_written.as_deref().unwrap_or("at an unknown time")
            ),
        }
    }

    /// The section: its intro, the gateways' table, the ratios, the figure and the
    /// client's table.
    pub fn section(&self, summary: &Summary) -> Section {
        Section::new("wap_bench", "The WAP gateway beside Kannel")
            .intro(format!(
                "Kannel's own test client, fakewap (connection-mode WSP over WTP class 2: \
                 Connect, Get and Disconnect per session), against our gateway (\"ours\": \
                 wtlsperf gateway --wap) and Kannel 1.4.5's bearerbox and wapbox (\"Kannel\") in \
                 turn, both proxying to the same nginx origin on loopback; \
                 then our client on our gateway's four ports (a WTLS handshake before each \
                 page on 9202 and 9203, which fakewap cannot speak), beside curl on the origin \
                 alone. Session latency runs from the client's Connect to the Reply to its \
                 Get, as a capture of the gateway's port saw them; the method is docs/wap.md's \
                 \"Benchmark against Kannel\".\n\n{}",
                self.provenance_sentence()
            ))
            .table(self.gateways_table(summary))
            .table(self.ratios_table(summary))
            .figure(self.rate_figure(summary))
            .table(self.client_table(summary))
    }

    fn gateways_table(&self, summary: &Summary) -> Table {
        let m = self.provenance();
        let ms = |name: &str| Column::new(name, Some("ms"), m.clone());
        let mut t = Table::new("wap_bench_gateways", "fakewap against both gateways")
            .caption(
                "One row per thread count and gateway: medians over runs of the rate and of \
                 each run's latency percentiles; the longest session of all runs; the errors \
                 of each run in run order (\"is not Reply\": fakewap received another PDU \
                 than the Reply to its Get; \"not 200\": a Reply with another status; \
                 \"unanswered\": a session whose Get got no Reply in the capture).",
            )
            .column(Column::label("fakewap threads"))
            .column(Column::label("gateway"))
            .column(Column::new("runs", None, m.clone()))
            .column(Column::new("sessions/s (median)", Some("1/s"), m.clone()))
            .column(ms("p50 (median)"))
            .column(ms("p95 (median)"))
            .column(ms("p99 (median)"))
            .column(ms("max over runs"))
            .column(Column::new("\"is not Reply\" per run", None, m.clone()))
            .column(Column::new("not 200 per run", None, m.clone()))
            .column(Column::new("unanswered per run", None, m.clone()))
            .column(Column::new("fakewap's worst", Some("s"), m));
        for g in &summary.gateways {
            t = t.row(vec![
                Cell::num(f64::from(g.threads), 0),
                Cell::text(g.gateway.short()),
                Cell::num(g.runs as f64, 0),
                Cell::opt(g.sessions_per_s, 0),
                Cell::opt(g.p50_ms, 2),
                Cell::opt(g.p95_ms, 2),
                Cell::opt(g.p99_ms, 2),
                Cell::opt(g.max_ms, 1),
                Cell::text(&g.not_reply_per_run),
                Cell::text(&g.not_200_per_run),
                Cell::text(&g.unanswered_per_run),
                Cell::opt(g.fakewap_worst_s, 1),
            ]);
        }
        t
    }

    /// Sessions per second by thread count, one series a gateway with the runs' range as
    /// its error bar; only gateways with a rate are drawn, so the legend names no empty
    /// series.
    fn rate_figure(&self, summary: &Summary) -> Figure {
        let rates: Vec<f64> = self.runs.iter().filter_map(|r| r.sessions_per_s).collect();
        let positive = rates.iter().copied().filter(|r| *r > 0.0);
        let spread = positive.clone().reduce(f64::max).unwrap_or(1.0)
            / positive.reduce(f64::min).unwrap_or(1.0);
        let mut y = Axis::new("sessions per second (median over runs)", "1/s");
        if spread > LOG_AXIS_SPREAD {
            y = y.log();
        }
        let mut chart = LineChart::new(Axis::new("fakewap threads", "").log(), y);
        for (colour, gateway) in Gateway::ALL.into_iter().enumerate() {
            let points: Vec<Point> = summary
                .gateways
                .iter()
                .filter(|g| g.gateway == gateway)
                .filter_map(|g| {
                    let runs = self
                        .runs
                        .iter()
                        .filter(|r| r.gateway == gateway && r.threads == g.threads);
                    let each: Vec<f64> = runs.filter_map(|r| r.sessions_per_s).collect();
                    let low = each.iter().copied().reduce(f64::min)?;
                    let high = each.iter().copied().reduce(f64::max)?;
                    Some(Point::with_err(
                        f64::from(g.threads),
                        g.sessions_per_s?,
                        low,
                        high,
                    ))
                })
                .collect();
            if !points.is_empty() {
                chart = chart.series(
                    Series::from_points(gateway.label(), self.provenance(), points).colour(colour),
                );
            }
        }
        Figure::new(
            "wap_bench_sessions_per_s",
            "fakewap sessions per second, ours beside Kannel",
            chart,
        )
        .caption(format!(
            "Measured: the median of the runs at each thread count, the bar spanning the \
             slowest and the fastest run{}. {}",
            if spread > LOG_AXIS_SPREAD {
                "; logarithmic rate axis, the two gateways being more than 20 times apart"
            } else {
                ""
            },
            self.provenance_sentence()
        ))
    }

    fn client_table(&self, summary: &Summary) -> Table {
        let m = self.provenance();
        let ms = |name: &str| Column::new(name, Some("ms"), m.clone());
        let mut t = Table::new(
            "wap_bench_client",
            "Our client on each port, and the origin alone",
        )
        .caption(
            "One page after another, medians over runs; the pages per second include a \
                 WTLS handshake (RSA 1024) before each page on 9202 and 9203. The GET's \
                 overhead is the port's median GET p50 minus the origin's (curl on the origin \
                 alone): what the gateway adds to a page on loopback.",
        )
        .column(Column::label("port"))
        .column(Column::new("runs", None, m.clone()))
        .column(Column::new("pages answered 200", None, m.clone()))
        .column(Column::new("pages/s (median)", Some("1/s"), m.clone()))
        .column(ms("GET p50 (median)"))
        .column(ms("GET p95 (median)"))
        .column(ms("GET p99 (median)"))
        .column(ms("handshake p50 (median)"))
        .column(Column::new(
            "GET overhead over the origin",
            Some("ms"),
            Provenance::derived("the port's median GET p50 - the origin's median GET p50"),
        ));
        for c in &summary.client {
            t = t.row(vec![
                Cell::text(c.port.label()),
                Cell::num(c.runs as f64, 0),
                Cell::text(&c.ok_per_run),
                Cell::opt(c.pages_per_s, 1),
                Cell::opt(c.get_p50_ms, 2),
                Cell::opt(c.get_p95_ms, 2),
                Cell::opt(c.get_p99_ms, 2),
                Cell::opt(c.handshake_p50_ms, 2),
                Cell::opt(c.get_overhead_ms, 2),
            ]);
        }
        t
    }

    /// Ours over Kannel at each thread count both ran: the ratio of the median rates and of
    /// the median p99s, beside the medians they divide.
    fn ratios_table(&self, summary: &Summary) -> Table {
        let ratio = |what: &str| Provenance::derived(format!("ours / Kannel, {what}"));
        let m = self.provenance();
        let mut t = Table::new("wap_bench_ratios", "Ours over Kannel")
            .caption(
                "At each thread count: ours / Kannel of the median sessions per second (above 1: \
                 ours completes more) and of the median p99 (below 1: ours has the shorter tail).",
            )
            .column(Column::label("fakewap threads"))
            .column(Column::new("sessions/s ours", Some("1/s"), m.clone()))
            .column(Column::new("sessions/s Kannel", Some("1/s"), m.clone()))
            .column(Column::new(
                "rate ratio",
                Some("x"),
                ratio("median sessions/s"),
            ))
            .column(Column::new("p99 ours", Some("ms"), m.clone()))
            .column(Column::new("p99 Kannel", Some("ms"), m))
            .column(Column::new("p99 ratio", Some("x"), ratio("median p99")));
        for r in &summary.ratios {
            t = t.row(vec![
                Cell::num(f64::from(r.threads), 0),
                Cell::opt(r.ours_sessions_per_s, 0),
                Cell::opt(r.kannel_sessions_per_s, 0),
                Cell::opt(r.sessions_per_s_ratio, 1),
                Cell::opt(r.ours_p99_ms, 2),
                Cell::opt(r.kannel_p99_ms, 2),
                Cell::opt(r.p99_ratio, 3),
            ]);
        }
        t
    }

    /// The section's tables as result files ([`FILES`], columns in docs/results.md).
    pub fn write_csv(&self, summary: &Summary, out: &Path) -> anyhow::Result<()> {
        write_csv(&out.join(FILES[0]), &summary.gateways)?;
        write_csv(&out.join(FILES[1]), &summary.ratios)?;
        write_csv(&out.join(FILES[2]), &summary.client)
    }
}
