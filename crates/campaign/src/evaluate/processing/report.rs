//! Part 1's report section: Tables 4.1/4.2 with the published values and the bound,
//! Figures 4.1-4.12, the percentage Tables 4.3-4.10 and the bound figure.

use std::collections::BTreeMap;

use wtlsperf_models::processing::{percent_layout, percentage_row, Message, PercentColumn};
use wtlsperf_models::reference::PercentTable;
use wtlsperf_models::{Authentication, Side, SuiteFamily};
use wtlsperf_report::{
    Axis, BarSeries, Cell, Column, Figure, GroupedBarChart, Provenance, Section, Table,
};

use super::{CaseResult, ProcessingResults};
use crate::evaluate::citations::mode_words;
use crate::evaluate::context::Ctx;
use wtlsperf_drivers::runner::BoundRatio;

/// The bound ratio's cell: the value, or `failed` (the failures are listed under the
/// table with their pairs and spread).
fn bound_cell(c: &CaseResult) -> Cell {
    match &c.bound {
        Some(BoundRatio::Failed { .. }) => Cell::text("failed"),
        _ => Cell::opt(c.bound_ratio, 2),
    }
}

fn ratio(published: f64, ours: f64) -> Option<f64> {
    (ours > 0.0).then(|| published / ours)
}

/// What a share table's Others column holds. The client's Certificate is empty in the
/// thesis' server-authenticated flows (its Tables 3.7 and 3.9) and carries the client's
/// certificate in the mutual ones (Table 3.8), where the gateway's side shows it apart.
fn others_note(auth: Authentication, layout: &[PercentColumn]) -> &'static str {
    let client_certificate = PercentColumn::Message(Message::ClientCertificate);
    match auth {
        Authentication::ServerAuth => {
            "Others = every message not shown; the thesis' empty client Certificate and \
             ChangeCipherSpec are in it."
        }
        Authentication::Mutual if layout.contains(&client_certificate) => {
            "Others = every message not shown, ChangeCipherSpec among them; the client's \
             Certificate has its own column."
        }
        Authentication::Mutual => {
            "Others = every message not shown, ChangeCipherSpec and the client's Certificate \
             (which carries the client's certificate in a mutual handshake) among them."
        }
    }
}

impl ProcessingResults {
    /// The report section of part 1.
    pub fn section(&self, ctx: &Ctx) -> anyhow::Result<Section> {
        let mut section = Section::new("processing", "Processing time (thesis 3.1, 4.1)").intro(
            "Every case measured in memory (client and gateway in one process, no network), \
             wall time and thread-CPU time per side, median and 95th percentile over the \
             repetitions. The thesis measured a Nokia 7650 client and a Pentium 4 gateway; \
             the column published/ours is the published time over ours, machine and \
             implementation together (theirs of 2004 on those two, ours on this machine), \
             which no ratio of this run separates.",
        );
        if !self.skipped.is_empty() {
            section = section.paragraph(format!("Not measured: {}.", self.skipped.join("; ")));
        }
        for auth in Authentication::ALL {
            section = section.table(self.overall_table(ctx, auth));
        }
        for category in 1..=3u8 {
            for side in [Side::Client, Side::Server] {
                if let Some(f) = self.category_figure(ctx, category, side) {
                    section = section.figure(f);
                }
            }
        }
        for table in PercentTable::ALL {
            let (t, f) = self.percent_table(ctx, table)?;
            section = section.table(t);
            if let Some(f) = f {
                section = section.figure(f);
            }
        }
        section = section.figure(self.bound_figure(ctx));
        Ok(section)
    }

    fn overall_table(&self, ctx: &Ctx, auth: Authentication) -> Table {
        let (id, label) = match auth {
            Authentication::Mutual => ("t4_1_mutual_processing", "Table 4.1"),
            Authentication::ServerAuth => ("t4_2_server_auth_processing", "Table 4.2"),
        };
        let m = ctx.measured();
        let p = Provenance::published(format!("Bayoglu 2004, {label}"));
        let d = Provenance::derived("published / ours (median wall)");
        let mut t = Table::new(id, processing_table_title(auth, label))
            .caption(
                "T_PD_C and T_PD_S per case; ours is the median (and p95) over the repetitions.",
            )
            .column(Column::label("case"))
            .column(Column::label("category/group"))
            .column(Column::new("client wall median", Some("ms"), m.clone()))
            .column(Column::new("client wall p95", Some("ms"), m.clone()))
            .column(Column::new("client CPU median", Some("ms"), m.clone()))
            .column(Column::new("server wall median", Some("ms"), m.clone()))
            .column(Column::new("server wall p95", Some("ms"), m.clone()))
            .column(Column::new("server CPU median", Some("ms"), m.clone()))
            .column(Column::new("published client", Some("ms"), p.clone()))
            .column(Column::new("published server", Some("ms"), p))
            .column(Column::new("client published/ours", None, d.clone()))
            .column(Column::new("server published/ours", None, d))
            .column(Column::new(
                "bound ratio",
                None,
                Provenance::derived(
                    "median over pairs of (server CPU, probe off) / (raw public-key operations timed beside it); shown only where its 95 % interval clears 1",
                ),
            ))
            .column(Column::new(
                "bound floor",
                None,
                Provenance::derived(
                    "(raw public-key + the suite's mandatory symmetric work) / raw public-key, same run",
                ),
            ));
        for c in self.cases.iter().filter(|c| c.auth == auth) {
            let p = c.published();
            t = t.row(vec![
                Cell::text(c.label()),
                Cell::text(format!("{}/{}", c.case.category, c.case.group)),
                Cell::num(c.client_wall_ms.median, 3),
                Cell::num(c.client_wall_ms.p95, 3),
                Cell::num(c.client_cpu_ms.median, 3),
                Cell::num(c.server_wall_ms.median, 3),
                Cell::num(c.server_wall_ms.p95, 3),
                Cell::num(c.server_cpu_ms.median, 3),
                Cell::opt(p.as_ref().map(|p| p.client_ms), 2),
                Cell::opt(p.as_ref().map(|p| p.server_ms), 2),
                Cell::opt(
                    p.as_ref()
                        .and_then(|p| ratio(p.client_ms, c.client_wall_ms.median)),
                    0,
                ),
                Cell::opt(
                    p.as_ref()
                        .and_then(|p| ratio(p.server_ms, c.server_wall_ms.median)),
                    1,
                ),
                bound_cell(c),
                Cell::opt(c.bound_floor_ratio, 2),
            ]);
        }
        for c in self.cases.iter().filter(|c| c.auth == auth) {
            if let Some(text) = c.bound.as_ref().and_then(BoundRatio::failure_text) {
                t = t.note(format!("Bound ratio of {}: {text}.", c.label()));
            }
        }
        t
    }

    fn category_figure(&self, ctx: &Ctx, category: u8, side: Side) -> Option<Figure> {
        let mut labels = Vec::new();
        let mut ours = Vec::new();
        let mut published = Vec::new();
        for auth in Authentication::ALL {
            for c in self
                .cases
                .iter()
                .filter(|c| c.auth == auth && c.case.category == category)
            {
                labels.push(format!("{} {}", c.label(), auth.thesis_letter()));
                ours.push(Some(match side {
                    Side::Client => c.client_wall_ms.median,
                    Side::Server => c.server_wall_ms.median,
                }));
                published.push(c.published().map(|p| match side {
                    Side::Client => p.client_ms,
                    Side::Server => p.server_ms,
                }));
            }
        }
        if labels.is_empty() {
            return None;
        }
        let side_name = if side == Side::Client {
            "client"
        } else {
            "server"
        };
        let chart = GroupedBarChart::new(
            "case (M = mutual, S = server-authenticated)",
            labels,
            Axis::new(format!("{side_name} processing time"), "ms").log(),
        )
        .series(BarSeries::new("ours (median wall)", ctx.measured(), ours))
        .series(BarSeries::new(
            "published",
            Provenance::published("Bayoglu 2004, Tables 4.1/4.2"),
            published,
        ));
        Some(
            Figure::new(
                format!(
                    "fig4_{}_cat{category}_{side_name}",
                    category_figure_number(category, side)
                ),
                category_figure_title(category, side),
                chart,
            )
            .caption("Log scale: the published 2004 times are orders of magnitude above ours.")
            .size(1100, 480),
        )
    }

    fn percent_table(
        &self,
        ctx: &Ctx,
        table: PercentTable,
    ) -> anyhow::Result<(Table, Option<Figure>)> {
        let (auth, side, family) = table.case();
        let published = table.load()?;
        let layout = percent_layout(table);
        let headers: Vec<String> = layout.iter().map(|c| c.header(auth, side)).collect();
        let src = format!("Bayoglu 2004, {}", table.label());
        let mut t = Table::new(
            format!(
                "t{}_percent",
                table.label().trim_start_matches("Table ").replace('.', "_")
            ),
            percent_table_title(table),
        )
        .caption(format!(
            "Headline messages as % of the side's T_PD, key exchange operations as % of \
             T_x_CKX, as in the thesis; ours from the median wall time of each message.{}",
            list_disagreement(table).unwrap_or_default()
        ))
        .column(Column::label("case"));
        for h in &headers {
            t = t
                .column(Column::new(format!("{h} ours"), Some("%"), ctx.measured()))
                .column(Column::new(
                    format!("{h} published"),
                    Some("%"),
                    Provenance::published(src.clone()),
                ));
        }
        let mut ours_sum: BTreeMap<usize, (f64, usize)> = BTreeMap::new();
        let mut pub_sum: BTreeMap<usize, (f64, usize)> = BTreeMap::new();
        for c in self
            .cases
            .iter()
            .filter(|c| c.auth == auth && c.family() == family)
        {
            let ours = percentage_row(table, &c.side_times(side));
            let pubrow = published.row(&[c.case.ca.short(), c.case.leaf.short()]);
            let mut row = vec![Cell::text(c.label())];
            for (i, _) in layout.iter().enumerate() {
                let o = ours.as_ref().map(|r| r[i].percent);
                let p = pubrow.and_then(|r| r.values.get(i).copied());
                if let Some(o) = o {
                    let e = ours_sum.entry(i).or_default();
                    e.0 += o;
                    e.1 += 1;
                }
                if let Some(p) = p {
                    let e = pub_sum.entry(i).or_default();
                    e.0 += p;
                    e.1 += 1;
                }
                row.push(Cell::opt(o, 2));
                row.push(Cell::opt(p, 2));
            }
            t = t.row(row);
        }
        if layout.contains(&PercentColumn::Others) {
            t = t.note(others_note(auth, &layout));
        }
        let avg = |m: &BTreeMap<usize, (f64, usize)>| -> Vec<Option<f64>> {
            (0..layout.len())
                .map(|i| m.get(&i).map(|(s, n)| s / *n as f64))
                .collect()
        };
        let figure = (!ours_sum.is_empty()).then(|| {
            Figure::new(
                format!(
                    "fig_pct_{}",
                    table.label().replace(' ', "").replace('.', "_")
                ),
                percent_figure_title(table),
                GroupedBarChart::new("column", headers.clone(), Axis::new("share", "%"))
                    .series(BarSeries::new("ours", ctx.measured(), avg(&ours_sum)))
                    .series(BarSeries::new(
                        "published",
                        Provenance::published(src.clone()),
                        avg(&pub_sum),
                    )),
            )
            .size(1000, 420)
            .caption(list_disagreement(table).unwrap_or_default().trim_start())
        });
        Ok((t, figure))
    }

    fn bound_figure(&self, ctx: &Ctx) -> Figure {
        let mut labels = Vec::new();
        let mut values = Vec::new();
        for c in &self.cases {
            labels.push(format!("{} {}", c.label(), c.auth.thesis_letter()));
            values.push(c.bound_ratio);
        }
        Figure::new(
            "bound_ratio",
            "Gateway CPU over its raw public-key operations, per case",
            GroupedBarChart::new("case", labels, Axis::new("bound ratio", "x")).series(
                BarSeries::new("server CPU / PK ops", ctx.measured(), values),
            ),
        )
        .caption(
            "1.0 would mean the gateway does nothing but public-key mathematics; the rest \
             is parsing, hashing, the PRF, record protection and allocation. A missing bar \
             is a bound not shown (the ratio's 95 % interval did not clear 1), listed \
             under this section's table of the cases beside the thesis' Tables 4.1/4.2.",
        )
        .size(1400, 450)
    }
}

/// The thesis' figure of a category's processing times per side: Figures 4.1-4.6.
pub(crate) fn category_figure_number(category: u8, side: Side) -> u8 {
    (category - 1) * 2 + if side == Side::Client { 1 } else { 2 }
}

/// "Category 3 client processing times (thesis Figure 4.5)".
pub(crate) fn category_figure_title(category: u8, side: Side) -> String {
    let side_name = if side == Side::Client {
        "client"
    } else {
        "server"
    };
    format!(
        "Category {category} {side_name} processing times (thesis Figure 4.{})",
        category_figure_number(category, side)
    )
}

/// "Processing time per case, mutual (thesis Table 4.1)".
pub(crate) fn processing_table_title(auth: Authentication, label: &str) -> String {
    format!(
        "Processing time per case, {} (thesis {label})",
        mode_words(auth)
    )
}

/// The thesis' figure drawn from a shares table: Tables 4.3-4.8 have Figures 4.7-4.12;
/// Tables 4.9 and 4.10 have none.
pub(crate) fn percent_figure_number(table: PercentTable) -> Option<u8> {
    match table {
        PercentTable::T4_3 => Some(7),
        PercentTable::T4_4 => Some(8),
        PercentTable::T4_5 => Some(9),
        PercentTable::T4_6 => Some(10),
        PercentTable::T4_7 => Some(11),
        PercentTable::T4_8 => Some(12),
        PercentTable::T4_9 | PercentTable::T4_10 => None,
    }
}

/// Where the thesis' list of figures and tables (and the caption under the item) names
/// an item otherwise than its own text does, which reading the report follows: the text
/// introduces each item with the data it holds, and the data agree with the text.
fn list_disagreement(table: PercentTable) -> Option<&'static str> {
    match table {
        PercentTable::T4_8 => Some(" Figure 4.12 is cited as the thesis' section 4.1 introduces it (\"the server authenticated RSA key exchange suites are given in Figure 4.12\"); its list of figures and its caption call it mutual authenticated RSA."),
        PercentTable::T4_10 => Some(" Table 4.10 is cited as the thesis' section 4.1 introduces it (\"Server processing time percentages of individual handshake messages for server authenticated WTLS handshake using RSA key exchange suites are given in Table 4.10\"); its list of tables and its caption say client processing time percentages."),
        _ => None,
    }
}

/// "client processing shares, mutual, ECDH_ECDSA": the subject of a shares table.
fn percent_subject(table: PercentTable) -> String {
    let (auth, side, family) = table.case();
    let side = if side == Side::Client {
        "Client"
    } else {
        "Server"
    };
    let family = match family {
        SuiteFamily::Rsa => "RSA",
        _ => "ECDH_ECDSA",
    };
    format!("{side} processing shares, {}, {family}", mode_words(auth))
}

/// "Client processing shares, mutual, ECDH_ECDSA: ours | published (thesis Table 4.3)".
pub(crate) fn percent_table_title(table: PercentTable) -> String {
    format!(
        "{}: ours | published (thesis {})",
        percent_subject(table),
        table.label()
    )
}

/// The shares figure's title, citing the thesis' figure where there is one.
pub(crate) fn percent_figure_title(table: PercentTable) -> String {
    let cited = match percent_figure_number(table) {
        Some(n) => format!("thesis {} and Figure 4.{n}", table.label()),
        None => format!("thesis {}, which has no figure", table.label()),
    };
    format!("{}, mean over cases ({cited})", percent_subject(table))
}
