//! The report document: sections of tables, figures, paragraphs, key/value lists and
//! findings, written as one self-contained `report.html` plus CSV, SVG and PNG files.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::figure::Figure;
use crate::finding::{evidence_badges, finding_kind_badge, verdict_badge};
pub use crate::finding::{Caveat, Finding, FindingKind, Verdict};
pub use crate::front::{HeadlineNumber, RunStatus};
use crate::table::{paragraphs, Table};
use crate::{check_id, ReportError};

/// Escapes text for HTML element content and double- or single-quoted attribute values.
/// Every piece of caller-supplied text goes through here; the report may be built from
/// file names, hostnames and error messages that nobody vetted.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// One element of a section, rendered in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Table(Table),
    Figure(Figure),
    /// Plain text; blank lines separate paragraphs.
    Paragraph(String),
    /// A titled list of settings or results, e.g. bearer parameters.
    KeyValue {
        title: String,
        pairs: Vec<(String, String)>,
    },
    Finding(Finding),
}

/// A numbered section of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// HTML anchor (`#sec-<id>`); `[A-Za-z0-9_.-]`.
    pub id: String,
    pub title: String,
    /// Plain text shown under the heading; blank lines separate paragraphs.
    pub intro: String,
    pub items: Vec<Item>,
}

impl Section {
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            intro: String::new(),
            items: Vec::new(),
        }
    }

    pub fn intro(mut self, intro: impl Into<String>) -> Self {
        self.intro = intro.into();
        self
    }

    pub fn item(mut self, item: Item) -> Self {
        self.items.push(item);
        self
    }

    pub fn table(self, table: Table) -> Self {
        self.item(Item::Table(table))
    }

    pub fn figure(self, figure: Figure) -> Self {
        self.item(Item::Figure(figure))
    }

    pub fn paragraph(self, text: impl Into<String>) -> Self {
        self.item(Item::Paragraph(text.into()))
    }

    pub fn key_values(self, title: impl Into<String>, pairs: Vec<(String, String)>) -> Self {
        self.item(Item::KeyValue {
            title: title.into(),
            pairs,
        })
    }

    pub fn finding(self, finding: Finding) -> Self {
        self.item(Item::Finding(finding))
    }
}

/// The whole report.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub title: String,
    pub subtitle: String,
    pub sections: Vec<Section>,
    /// Listed in full in "The run" at the end; the first [`Report::FIRST_SCREEN_META`]
    /// entries, and those added by [`Report::meta_on_first_screen`], also in the header.
    pub metadata: Vec<(String, String)>,
    /// How many of `metadata`'s first entries the header shows.
    pub header_meta: usize,
    /// The numbers the first screen shows, each linked to its section.
    pub headlines: Vec<HeadlineNumber>,
    /// Whether the run held its design; a degraded run is announced first.
    pub status: Option<RunStatus>,
}

/// The files [`Report::write`] produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOutput {
    pub html: PathBuf,
    /// `tables/<id>.csv` and `tables/<id>.columns.csv` for every table.
    pub tables: Vec<PathBuf>,
    /// `figures/<id>.svg`, `.png` and `.csv` for every figure.
    pub figures: Vec<PathBuf>,
}

impl Report {
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            subtitle: String::new(),
            sections: Vec::new(),
            metadata: Vec::new(),
            header_meta: Self::FIRST_SCREEN_META,
            headlines: Vec::new(),
            status: None,
        }
    }

    /// The metadata entries the header shows by default (run id, mode, machine).
    pub const FIRST_SCREEN_META: usize = 3;

    /// Adds a number to the first screen.
    pub fn headline(mut self, number: HeadlineNumber) -> Self {
        self.headlines.push(number);
        self
    }

    /// Sets the run's status (the degraded-run banner).
    pub fn status(mut self, status: RunStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Every finding, in reading order (the report's F1..).
    pub(crate) fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.sections.iter().flat_map(|s| {
            s.items.iter().filter_map(|item| match item {
                Item::Finding(f) => Some(f),
                _ => None,
            })
        })
    }

    pub fn subtitle(mut self, subtitle: impl Into<String>) -> Self {
        self.subtitle = subtitle.into();
        self
    }

    pub fn meta(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.push((key.into(), value.into()));
        self
    }

    /// A metadata entry a reader must see before any result (a condition the run was
    /// made under, such as an injected disturbance): shown in the header as well as in
    /// "The run".
    pub fn meta_on_first_screen(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        let at = self.header_meta.min(self.metadata.len());
        self.metadata.insert(at, (key.into(), value.into()));
        self.header_meta = at + 1;
        self
    }

    pub fn section(mut self, section: Section) -> Self {
        self.sections.push(section);
        self
    }

    fn tables(&self) -> impl Iterator<Item = &Table> {
        self.sections.iter().flat_map(|s| {
            s.items.iter().filter_map(|item| match item {
                Item::Table(t) => Some(t),
                _ => None,
            })
        })
    }

    fn figures(&self) -> impl Iterator<Item = &Figure> {
        self.sections.iter().flat_map(|s| {
            s.items.iter().filter_map(|item| match item {
                Item::Figure(f) => Some(f),
                _ => None,
            })
        })
    }

    /// Checks every id (they become file names and anchors) and every table and figure.
    pub fn validate(&self) -> Result<(), ReportError> {
        fn unique<'a>(
            what: &'static str,
            ids: impl Iterator<Item = &'a str>,
        ) -> Result<(), ReportError> {
            let mut seen = HashSet::new();
            for id in ids {
                check_id(what, id)?;
                if !seen.insert(id) {
                    return Err(ReportError::DuplicateId {
                        what,
                        id: id.to_string(),
                    });
                }
            }
            Ok(())
        }
        unique("section", self.sections.iter().map(|s| s.id.as_str()))?;
        unique("table", self.tables().map(|t| t.id.as_str()))?;
        unique("figure", self.figures().map(|f| f.id.as_str()))?;
        for table in self.tables() {
            table.validate()?;
        }
        for figure in self.figures() {
            figure.validate()?;
        }
        Ok(())
    }

    /// The report as one HTML document, figures rendered to inline SVG.
    pub fn to_html(&self) -> Result<String, ReportError> {
        self.validate()?;
        let mut svgs = HashMap::new();
        for figure in self.figures() {
            svgs.insert(figure.id.as_str(), figure.to_svg()?);
        }
        self.render(&svgs)
    }

    /// Writes `report.html`, `tables/<id>.csv`, `tables/<id>.columns.csv`,
    /// `figures/<id>.svg`, `figures/<id>.png` and `figures/<id>.csv` under `dir`
    /// (created if missing). Everything is validated before the first file is written.
    pub fn write(&self, dir: &Path) -> Result<ReportOutput, ReportError> {
        self.validate()?;
        let tables_dir = dir.join("tables");
        let figures_dir = dir.join("figures");
        for d in [dir, &tables_dir, &figures_dir] {
            fs::create_dir_all(d).map_err(|source| ReportError::Io {
                path: d.to_path_buf(),
                source,
            })?;
        }
        // Each file whole (`write_whole`), and `report.html` last: a report that exists
        // is complete, and so are the tables and figures it names.
        let write = |path: PathBuf, bytes: &[u8]| -> Result<PathBuf, ReportError> {
            crate::write_whole(&path, bytes)?;
            Ok(path)
        };

        let mut output = ReportOutput {
            html: dir.join("report.html"),
            tables: Vec::new(),
            figures: Vec::new(),
        };
        for table in self.tables() {
            let csv = table.to_csv()?;
            output.tables.push(write(
                tables_dir.join(format!("{}.csv", table.id)),
                csv.as_bytes(),
            )?);
            let columns = table.columns_csv()?;
            output.tables.push(write(
                tables_dir.join(format!("{}.columns.csv", table.id)),
                columns.as_bytes(),
            )?);
        }
        let mut svgs = HashMap::new();
        for figure in self.figures() {
            let svg = figure.to_svg()?;
            output.figures.push(write(
                figures_dir.join(format!("{}.svg", figure.id)),
                svg.as_bytes(),
            )?);
            output.figures.push(write(
                figures_dir.join(format!("{}.png", figure.id)),
                &figure.to_png()?,
            )?);
            output.figures.push(write(
                figures_dir.join(format!("{}.csv", figure.id)),
                figure.data_csv()?.as_bytes(),
            )?);
            svgs.insert(figure.id.as_str(), svg);
        }
        let html = self.render(&svgs)?;
        write(output.html.clone(), html.as_bytes())?;
        Ok(output)
    }

    fn render(&self, svgs: &HashMap<&str, String>) -> Result<String, ReportError> {
        let mut out = self.render_header();
        out.push_str(&self.render_front());
        let mut numbers = Numbers::default();
        for (s, section) in self.sections.iter().enumerate() {
            out.push_str(&format!(
                "<section id=\"sec-{}\">\n<h2>{}. {}</h2>\n",
                escape_html(&section.id),
                s + 1,
                escape_html(&section.title)
            ));
            out.push_str(&paragraphs(&section.intro, "intro"));
            for item in &section.items {
                out.push_str(&render_item(item, &mut numbers, svgs)?);
            }
            out.push_str("</section>\n");
        }
        if !self.metadata.is_empty() {
            out.push_str("<section id=\"run\"><h2>The run</h2>\n<dl class=\"meta\">");
            for (key, value) in &self.metadata {
                out.push_str(&format!(
                    "<dt>{}</dt><dd>{}</dd>",
                    escape_html(key),
                    escape_html(value)
                ));
            }
            out.push_str("</dl></section>\n");
        }
        out.push_str(&format!(
            "<footer>Generated by wtlsperf-report {}. Tables are also in tables/*.csv; figures in figures/*.svg, *.png and their data in figures/*.csv.</footer>\n</body>\n</html>\n",
            env!("CARGO_PKG_VERSION")
        ));
        Ok(out)
    }

    /// The document head, the style sheet, the title and the run's metadata.
    fn render_header(&self) -> String {
        let e = escape_html;
        let mut out = String::new();
        out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        out.push_str("<meta name=\"color-scheme\" content=\"light\">\n");
        out.push_str(&format!("<title>{}</title>\n", e(&self.title)));
        out.push_str("<style>\n");
        out.push_str(CSS);
        out.push_str("</style>\n</head>\n<body>\n<header>\n");
        out.push_str(&format!("<h1>{}</h1>\n", e(&self.title)));
        if !self.subtitle.is_empty() {
            out.push_str(&format!(
                "<p class=\"subtitle\">{}</p>\n",
                e(&self.subtitle)
            ));
        }
        if !self.metadata.is_empty() {
            out.push_str("<p class=\"runline\">");
            let shown: Vec<String> = self
                .metadata
                .iter()
                .take(self.header_meta)
                .map(|(key, value)| format!("{} <code>{}</code>", e(key), e(value)))
                .collect();
            out.push_str(&shown.join(" &middot; "));
            out.push_str(" &middot; <a href=\"#run\">the run</a></p>\n");
        }
        out.push_str("</header>\n");
        out
    }
}

/// The running numbers of tables, figures and findings.
#[derive(Default)]
struct Numbers {
    table: usize,
    figure: usize,
    finding: usize,
}

/// One item of a section, numbered by `numbers`.
fn render_item(
    item: &Item,
    numbers: &mut Numbers,
    svgs: &HashMap<&str, String>,
) -> Result<String, ReportError> {
    let e = escape_html;
    Ok(match item {
        Item::Table(t) => {
            numbers.table += 1;
            t.to_html(numbers.table)?
        }
        Item::Figure(f) => {
            numbers.figure += 1;
            let svg = match svgs.get(f.id.as_str()) {
                Some(svg) => svg.clone(),
                None => f.to_svg()?,
            };
            f.to_html(numbers.figure, &svg)
        }
        Item::Paragraph(text) => paragraphs(text, "text"),
        Item::KeyValue { title, pairs } => {
            let mut out = String::from("<div class=\"kv\">");
            if !title.is_empty() {
                out.push_str(&format!("<h3>{}</h3>", e(title)));
            }
            out.push_str("<dl>");
            for (key, value) in pairs {
                out.push_str(&format!("<dt>{}</dt><dd>{}</dd>", e(key), e(value)));
            }
            out.push_str("</dl></div>\n");
            out
        }
        Item::Finding(f) => {
            numbers.finding += 1;
            format!(
                "<div class=\"finding {}\" id=\"finding-{}\"><p class=\"claim\">{} {} {} <strong>F{}.</strong> {}</p>\n{}</div>\n",
                f.verdict.name(),
                numbers.finding,
                verdict_badge(f),
                finding_kind_badge(f),
                evidence_badges(f),
                numbers.finding,
                e(&f.claim),
                finding_grounds(f)
            )
        }
    })
}

/// A finding's passage (for a study's claim), evidence and deciding rule.
fn finding_grounds(f: &Finding) -> String {
    let e = escape_html;
    let mut out = String::new();
    if let Some(p) = &f.passage {
        out.push_str(&format!(
            "<blockquote class=\"passage\">&ldquo;{}&rdquo; <cite>{}, {}</cite></blockquote>\n",
            e(p.quote),
            e(p.study.citation()),
            e(p.place)
        ));
    }
    out.push_str(&paragraphs(&f.evidence, "evidence"));
    if !f.caveats.is_empty() {
        let refs: Vec<String> = f
            .caveats
            .iter()
            .map(|c| format!("<a href=\"#caveat-{}\">{}</a>", e(&c.id), e(&c.title)))
            .collect();
        out.push_str(&format!(
            "<p class=\"caveat-ref\"><em>Caveat:</em> {} (written once, above the contents).</p>\n",
            refs.join(", ")
        ));
    }
    if !f.rule.is_empty() {
        out.push_str(&format!(
            "<p class=\"rule\"><em>Rule:</em> {}</p>\n",
            e(&f.rule)
        ));
    }
    out
}

const CSS: &str = r#"
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1d1d1f; background: #fff;
       max-width: 1120px; margin: 0 auto; padding: 1.5rem 2rem 4rem; line-height: 1.5; }
h1 { font-size: 1.9rem; margin: 0 0 .2rem; }
h2 { font-size: 1.35rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; margin-top: 2.4rem; }
h3 { font-size: 1.05rem; margin: 1rem 0 .3rem; }
.subtitle { color: #555; margin-top: 0; }
dl.meta, .kv dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; font-size: .92rem; }
dl.meta { background: #f6f7f9; border: 1px solid #e3e5e8; border-radius: 6px; padding: .6rem 1rem; }
dt { font-weight: 600; color: #444; } dd { margin: 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
a { color: #0b57d0; text-decoration: none; } a:hover { text-decoration: underline; }
a.csv { font-size: .8rem; font-weight: normal; border: 1px solid #c9d4e6; border-radius: 4px; padding: 0 .3rem; margin-left: .3rem; }
figure { margin: 1.6rem 0; }
figcaption { font-weight: 600; margin-bottom: .3rem; }
figure.chart figcaption { margin-top: .4rem; }
.num { color: #555; }
p.caption { margin: .2rem 0 .5rem; color: #333; font-size: .95rem; }
.scroll { overflow-x: auto; }
table.data, table.findings { border-collapse: collapse; font-size: .9rem; }
table.data th, table.data td, table.findings th, table.findings td { border: 1px solid #d5d8dc; padding: .25rem .55rem; vertical-align: top; }
table.data th { text-align: center; font-weight: 600; }
table.data td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th .unit { display: block; font-weight: normal; color: #555; font-size: .8rem; }
.key { display: inline-block; font-size: .72rem; font-weight: 600; border-radius: 3px; padding: 0 .3rem; margin-left: .2rem; border: 1px solid #bbb; }
th.prov-measured, .key.prov-measured { background: #dbe8f6; border-color: #9dbbe0; }
td.prov-measured { background: #f5f9fd; }
th.prov-modelled, .key.prov-modelled { background: #dcefe0; border-color: #9ccaa8; }
td.prov-modelled { background: #f5faf6; }
th.prov-published, .key.prov-published { background: #f8ebcc; border-color: #dcc07c; }
td.prov-published { background: #fdf9ef; }
th.prov-derived, .key.prov-derived { background: #eceef0; border-color: #c2c7cc; }
td.prov-derived { background: #fff; }
td.missing { color: #999; text-align: center; }
td.flagged, .flagged.inline { background: #fde2e1; color: #8a1c1c; font-weight: 600; }
.flagged.inline { padding: 0 .3rem; border-radius: 3px; }
.flag { color: #b3261e; font-size: .75rem; margin-left: .15rem; }
ul.sources { list-style: none; padding: 0; margin: .4rem 0; font-size: .85rem; color: #333; }
ul.sources .cols, .conv { color: #666; }
ol.notes { font-size: .85rem; color: #333; margin: .3rem 0; padding-left: 1.4rem; }
ol.notes li.flag-note { list-style: none; margin-left: -1.4rem; }
ul.kinds { list-style: none; padding: 0; } ul.kinds li { margin: .2rem 0; }
.svg svg { max-width: 100%; height: auto; border: 1px solid #e3e5e8; border-radius: 4px; }
.finding { border-left: 4px solid #999; background: #fafafa; padding: .4rem 1rem; margin: 1rem 0; }
.finding.confirmed { border-color: #1e8e3e; } .finding.contradicted { border-color: #c5221f; } .finding.inconclusive { border-color: #b08000; }
.finding p.claim { margin: .3rem 0; }
.finding blockquote.passage { margin: .3rem 0 .3rem 1rem; font-style: italic; } .finding p.rule { font-size: .85rem; color: #444; }
.verdict { display: inline-block; font-size: .75rem; font-weight: 700; text-transform: uppercase; letter-spacing: .03em; border-radius: 3px; padding: 0 .4rem; color: #fff; }
.test { display: inline-block; font-size: .75rem; border: 1px solid #999; border-radius: 3px; padding: 0 .4rem; color: #333; }
.verdict.confirmed { background: #1e8e3e; } .verdict.contradicted { background: #c5221f; } .verdict.inconclusive { background: #b08000; }
p.runline { font-size: .9rem; color: #444; margin: .2rem 0 0; } p.runline code { font-size: .85rem; }
#run-status { margin: 1rem 0; padding: .6rem 1rem; border-radius: 6px; border: 1px solid; }
#run-status.degraded { background: #fde2e1; border-color: #c5221f; color: #5c0f0c; }
#run-status.held { background: #e6f4ea; border-color: #1e8e3e; }
#run-status dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: .4rem 0 0; font-size: .9rem; }
section.glance h2 { margin-top: 1.2rem; }
table.glance { border-collapse: collapse; font-size: .9rem; width: 100%; }
table.glance th, table.glance td { border-bottom: 1px solid #e3e5e8; padding: .2rem .5rem; text-align: left; vertical-align: top; }
table.glance td.value { font-variant-numeric: tabular-nums; min-width: 12em; }
table.glance.findings td:nth-child(-n+3) { white-space: nowrap; }
p.tally { margin: .2rem 0 .5rem; color: #333; }
details { margin: .8rem 0; border: 1px solid #e3e5e8; border-radius: 6px; padding: .3rem .8rem; }
details > summary { cursor: pointer; font-weight: 600; }
details.caveats dd { margin: 0 0 .5rem 1rem; font-family: inherit; }
p.caveat-ref { font-size: .85rem; color: #444; }
nav.toc ol.sections { padding-left: 1.6rem; } nav.toc ul.sub { list-style: none; padding-left: .6rem; font-size: .9rem; color: #444; }
footer { margin-top: 3rem; font-size: .8rem; color: #666; border-top: 1px solid #ddd; padding-top: .5rem; }
@media print { body { max-width: none; } nav.toc { page-break-after: always; } figure { page-break-inside: avoid; } }
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        Axis, BarSeries, Cell, Column, ErrorBar, GroupedBarChart, LineChart, Point, Provenance,
        Series,
    };

    fn cases() -> Vec<String> {
        // 24 case names as long as the evaluation will use them.
        let mut names = Vec::new();
        for kx in ["RSA", "ECDH"] {
            for bits in ["512", "768", "1024", "2048", "163", "233"] {
                for auth in ["server auth", "mutual auth"] {
                    names.push(format!("{kx}-{bits} {auth}"));
                }
            }
        }
        names
    }

    fn sample_report() -> Report {
        let run = Provenance::measured("run-7", "testbox <i7>");
        let published = Provenance::published("Bayoglu 2004, Table 4.1");
        let table = Table::new("t4_1", "Client processing <script>alert(1)</script>")
            .caption("Mean over 200 handshakes.\n\nSecond paragraph.")
            .column(Column::label("case"))
            .column(Column::new("client", Some("ms"), run.clone()))
            .column(Column::new("client", Some("ms"), published.clone()))
            .row(vec![
                Cell::text("RSA 1024"),
                Cell::num(4.2, 1),
                Cell::num(310.0, 0),
            ])
            .row(vec![
                Cell::text("ECDH 163"),
                Cell::Missing,
                Cell::num(95.0, 0).flag("sum of rows is 59"),
            ]);
        let line = LineChart::new(
            Axis::new("arrival rate", "handshakes/s"),
            Axis::new("mean wait", "ms"),
        )
        .series(Series::new(
            "M/D/1",
            Provenance::modelled("Eq. 3.12", "service 20 ms"),
            (0..10).map(|i| (f64::from(i), 20.0 / (1.0 - f64::from(i) / 10.5))),
        ))
        .series(Series::from_points(
            "measured",
            run.clone(),
            (0..10)
                .map(|i| Point::with_sym_err(f64::from(i), 21.0 / (1.0 - f64::from(i) / 10.5), 3.0))
                .collect(),
        ));
        let names = cases();
        let measured: Vec<Option<f64>> = (0..24).map(|i| Some(4.0 + 37.0 * f64::from(i))).collect();
        let pub_values: Vec<Option<f64>> = (0..24)
            .map(|i| (i % 5 != 3).then(|| 6.0 + 40.0 * f64::from(i)))
            .collect();
        let bars = GroupedBarChart::new(
            "handshake case",
            names,
            Axis::new("client time", "ms").log(),
        )
        .series(
            BarSeries::new("this machine", run, measured.clone()).errors(
                measured
                    .iter()
                    .map(|v| {
                        v.map(|v| ErrorBar {
                            low: v * 0.9,
                            high: v * 1.1,
                        })
                    })
                    .collect(),
            ),
        )
        .series(BarSeries::new("Bayoglu 2004", published, pub_values));
        Report::new("WTLS <handshake> report")
            .subtitle("test")
            .meta("machine", "testbox")
            .meta("run", "run-7")
            .section(
                Section::new("processing", "Processing")
                    .intro("Intro & more.")
                    .table(table)
                    .figure(
                        Figure::new("wait", "Queue wait", line).caption("Model vs measurement."),
                    )
                    .figure(Figure::new("client_bars", "Client time per case", bars))
                    .key_values("bearer", vec![("RTT".into(), "700 ms".into())])
                    .finding(Finding::new(
                        "ECDH is cheaper than RSA on the client",
                        "Table 1 shows it.",
                        Verdict::Confirmed,
                    )),
            )
    }

    #[test]
    fn a_condition_of_the_run_is_in_the_header_however_much_metadata_precedes_it() {
        let report = Report::new("t")
            .meta("run id", "r1")
            .meta("mode", "full")
            .meta("machine", "box")
            .meta("rustc", "1.95")
            .meta_on_first_screen("interference injector", "5 % of the worker's core");
        let html = report.to_html().unwrap();
        let header = &html[..html.find("</header>").unwrap()];
        assert!(header.contains("interference injector"), "{header}");
        assert!(!header.contains("rustc"), "{header}");
        // Listed with the rest at the end too.
        assert!(html[html.find("id=\"run\"").unwrap()..].contains("interference injector"));
    }

    #[test]
    fn a_finding_names_its_kind_and_every_kind_uses_the_same_verdict_words() {
        let passage = crate::Passage {
            study: crate::Study::LeviSavas2003,
            place: "section 4.1",
            quote: "ECC is better than RSA in WTLS.",
        };
        let study = Finding::new("c", "e", Verdict::Confirmed)
            .study(passage)
            .rule("r < 1");
        assert_eq!(study.kind, FindingKind::StudyClaim);
        assert_eq!(study.verdict_label(), "confirmed");
        let html = render_item(
            &Item::Finding(study),
            &mut Numbers::default(),
            &HashMap::new(),
        )
        .unwrap();
        assert!(html.contains("ECC is better than RSA in WTLS.") && html.contains("section 4.1"));
        assert!(html.contains("<em>Rule:</em> r &lt; 1"), "{html}");
        let ours = Finding::new("c", "e", Verdict::Confirmed);
        assert_eq!(ours.kind, FindingKind::Hypothesis);
        assert!(ours.passage.is_none());
        // One vocabulary: the word is the verdict's name whatever the kind (the same
        // word findings.csv and summary.json write); the kind is named beside it.
        let ours = FindingKind::ALL
            .into_iter()
            .filter(|k| ![FindingKind::StudyClaim, FindingKind::ModelAgainstStudyData].contains(k));
        for kind in ours {
            for verdict in [
                Verdict::Confirmed,
                Verdict::Contradicted,
                Verdict::Inconclusive,
            ] {
                let f = Finding::new("c", "e", verdict).kind(kind);
                assert_eq!(f.verdict_label(), verdict.name(), "{kind:?}");
                let html = render_item(&Item::Finding(f), &mut Numbers::default(), &HashMap::new())
                    .unwrap();
                assert!(html.contains(kind.name()), "{html}");
                assert!(
                    html.contains(&format!(">{}</span>", verdict.name())),
                    "{html}"
                );
            }
        }
    }

    #[test]
    fn write_produces_all_files_with_escaped_text_and_inline_svg() {
        let dir = tempfile::tempdir().unwrap();
        let out = sample_report().write(dir.path()).unwrap();
        let html = fs::read_to_string(&out.html).unwrap();
        assert!(html.contains("<svg"), "figures are not inlined");
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(!html.contains("<?xml"));
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("WTLS &lt;handshake&gt; report"));
        assert!(html.contains("testbox &lt;i7&gt;"));
        assert!(html.contains("Intro &amp; more."));
        assert!(html.contains("href=\"#table-t4_1\""));
        assert!(html.contains("href=\"#figure-client_bars\">Figure 2</a>"));
        assert!(html.contains("<span class=\"verdict confirmed\">confirmed</span>"));
        assert!(html.contains("<dt>RTT</dt><dd>700 ms</dd>"));
        // Self-contained: no scripts, stylesheets or images fetched from anywhere; the
        // only URL is the SVG namespace name, which browsers never fetch.
        assert!(!html.contains("<link") && !html.contains("src="));
        let without_ns = html.replace("http://www.w3.org/2000/svg", "");
        assert!(!without_ns.contains("http://") && !without_ns.contains("https://"));

        let csv = fs::read_to_string(dir.path().join("tables/t4_1.csv")).unwrap();
        assert_eq!(csv.lines().next().unwrap(), "case,client [ms],client [ms]");
        assert!(dir.path().join("tables/t4_1.columns.csv").is_file());
        for id in ["wait", "client_bars"] {
            let png = fs::read(dir.path().join(format!("figures/{id}.png"))).unwrap();
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
            let svg = fs::read_to_string(dir.path().join(format!("figures/{id}.svg"))).unwrap();
            assert!(svg.contains("<svg"));
            assert!(dir.path().join(format!("figures/{id}.csv")).is_file());
        }
        assert_eq!(out.tables.len(), 2);
        assert_eq!(out.figures.len(), 6);
    }

    #[test]
    fn duplicate_and_unsafe_ids_are_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let twice = Report::new("r")
            .section(Section::new("a", "A"))
            .section(Section::new("a", "B"));
        assert!(matches!(
            twice.write(dir.path()),
            Err(ReportError::DuplicateId { .. })
        ));
        let escape = Report::new("r").section(
            Section::new("a", "A").table(Table::new("../evil", "t").column(Column::label("x"))),
        );
        assert!(matches!(
            escape.write(dir.path()),
            Err(ReportError::InvalidId { .. })
        ));
        assert!(!dir.path().join("report.html").exists());
    }

    #[test]
    fn escape_covers_attribute_quotes() {
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    /// Writes the sample report to target/report-example for a visual check:
    /// `cargo test -p wtlsperf-report -- --ignored example`.
    #[test]
    #[ignore]
    fn example() {
        use crate::ScatterChart;
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/report-example");
        let run = Provenance::measured("run-7", "testbox");
        let scatter = ScatterChart::new(
            Axis::new("modelled handshake time", "ms"),
            Axis::new("measured handshake time", "ms"),
        )
        .identity_line()
        .series(Series::new(
            "GPRS, 24 cases",
            run.clone(),
            (0..24).map(|i| (2000.0 + 90.0 * f64::from(i), 2100.0 + 85.0 * f64::from(i))),
        ))
        .series(
            Series::new(
                "GSM CSD (thesis model)",
                Provenance::published("Bayoglu 2004, Table 4.20"),
                (0..24).map(|i| (3000.0 + 60.0 * f64::from(i), 2900.0 + 70.0 * f64::from(i))),
            )
            .colour(1),
        );
        let narrow = LineChart::new(
            Axis::new("key size", "bit"),
            Axis::new("server time", "ms").log(),
        )
        .series(Series::new(
            "ECDH, a very long series name that has to wrap in the legend panel",
            run.clone(),
            [(160.0, 40.0), (192.0, 55.0), (224.0, 70.0), (256.0, 90.0)],
        ))
        .series(Series::new(
            "derived ratio",
            Provenance::derived("measured / published"),
            [(160.0, 45.0), (192.0, 60.0), (224.0, 66.0), (256.0, 80.0)],
        ));
        let short: Vec<String> = (1..=24).map(|i| format!("C{i}")).collect();
        let three =
            GroupedBarChart::new("case (see Table 1)", short, Axis::new("server time", "ms"))
                .series(BarSeries::new(
                    "measured",
                    run.clone(),
                    (0..24).map(|i| Some(10.0 + f64::from(i))).collect(),
                ))
                .series(BarSeries::new(
                    "model",
                    Provenance::modelled("Eq. 3.4", "op costs"),
                    (0..24).map(|i| Some(12.0 + f64::from(i))).collect(),
                ))
                .series(BarSeries::new(
                    "thesis",
                    Provenance::published("Bayoglu 2004, Table 4.2"),
                    (0..24).map(|i| Some(9.0 + 1.2 * f64::from(i))).collect(),
                ));
        let mut report = sample_report();
        report.sections.push(
            Section::new("more", "More chart kinds")
                .figure(Figure::new("scatter", "Measured vs modelled", scatter))
                .figure(Figure::new("narrow", "Narrow log range", narrow))
                .figure(Figure::new("three", "Three series, short labels", three)),
        );
        report.write(&dir).unwrap();
    }
}
