//! The first screen of the report, what a reader sees before any section: the run's
//! status (the "degraded run" banner when the run did not hold its design), its headline
//! numbers and the verdicts of its findings, each linked to where it is shown and marked
//! with its kind; then, collapsed, the caveats the verdicts share, the contents (one
//! numbering: sections 1..n, and the report's own Table and Figure numbers) and how to
//! read the report.

use crate::finding::{
    evidence_badges, finding_kind_badge, finding_kind_explanation, verdict_badge, Caveat,
};
use crate::html::{escape_html, Item, Report};
use crate::provenance::ProvenanceKind;
use crate::table::paragraphs;
use crate::FindingKind;

/// A number the first screen shows: what it is, its value as printed, where it comes
/// from, and the section that shows it in full.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadlineNumber {
    pub label: String,
    pub value: String,
    pub kind: ProvenanceKind,
    /// The id of the section the number links to.
    pub section: String,
}

impl HeadlineNumber {
    pub fn new(
        label: impl Into<String>,
        value: impl Into<String>,
        kind: ProvenanceKind,
        section: impl Into<String>,
    ) -> Self {
        Self {
            label: label.into(),
            value: value.into(),
            kind,
            section: section.into(),
        }
    }
}

/// Whether the run held its design. A degraded run is announced at the top of the
/// first screen, with what fell short (`details`: e.g. points judged of those designed,
/// the cause).
#[derive(Debug, Clone, PartialEq)]
pub struct RunStatus {
    pub degraded: bool,
    /// One sentence: what the reader must know.
    pub summary: String,
    pub details: Vec<(String, String)>,
}

/// The place of the run-status banner; the banner itself only when the run has a status.
pub(crate) fn run_status(status: Option<&RunStatus>) -> String {
    let e = escape_html;
    let mut out = String::from("<!-- run status: the degraded-run banner, from summary.json's `degraded` (docs/results.md) -->\n");
    let Some(status) = status else {
        return out;
    };
    let (class, heading) = if status.degraded {
        ("run-status degraded", "Degraded run")
    } else {
        ("run-status held", "The run held its design")
    };
    out.push_str(&format!(
        "<div id=\"run-status\" class=\"{class}\" role=\"status\"><strong>{heading}.</strong> {}",
        e(&status.summary)
    ));
    if !status.details.is_empty() {
        out.push_str("<dl>");
        for (key, value) in &status.details {
            out.push_str(&format!("<dt>{}</dt><dd>{}</dd>", e(key), e(value)));
        }
        out.push_str("</dl>");
    }
    out.push_str("</div>\n");
    out
}

impl Report {
    /// The first screen: status, headline numbers, verdicts; then the collapsed
    /// caveats, contents and reading guide.
    pub(crate) fn render_front(&self) -> String {
        let mut out = run_status(self.status.as_ref());
        out.push_str("<section id=\"at-a-glance\" class=\"glance\">\n");
        out.push_str(&self.render_headlines());
        out.push_str(&self.render_verdicts());
        out.push_str("</section>\n");
        out.push_str(&self.render_caveats());
        out.push_str(&self.render_contents());
        out.push_str(&render_legend());
        out
    }

    fn render_headlines(&self) -> String {
        let e = escape_html;
        if self.headlines.is_empty() {
            return String::new();
        }
        let mut out = String::from("<h2>Headline numbers</h2>\n<table class=\"glance headline\"><thead><tr><th>what</th><th>value</th><th>kind</th></tr></thead><tbody>\n");
        for h in &self.headlines {
            out.push_str(&format!(
                "<tr><td><a href=\"#sec-{}\">{}</a></td><td class=\"value\">{}</td><td><span class=\"key prov-{}\">{}</span></td></tr>\n",
                e(&h.section),
                e(&h.label),
                e(&h.value),
                h.kind.name(),
                h.kind.name()
            ));
        }
        out.push_str("</tbody></table>\n");
        out
    }

    /// Every finding's verdict, in the order (and with the F numbers) of the findings'
    /// own section.
    fn render_verdicts(&self) -> String {
        let e = escape_html;
        let findings: Vec<&crate::Finding> = self.findings().collect();
        if findings.is_empty() {
            return String::new();
        }
        let mut counts = [0usize; 3];
        for f in &findings {
            counts[f.verdict as usize] += 1;
        }
        let mut out = format!(
            "<h2>Verdicts</h2>\n<p class=\"tally\">{} findings: {} confirmed, {} contradicted, {} inconclusive.</p>\n<table class=\"glance findings\"><thead><tr><th>#</th><th>verdict</th><th>tests</th><th>rests on</th><th>claim</th></tr></thead><tbody>\n",
            findings.len(),
            counts[crate::Verdict::Confirmed as usize],
            counts[crate::Verdict::Contradicted as usize],
            counts[crate::Verdict::Inconclusive as usize]
        );
        for (i, f) in findings.iter().enumerate() {
            let n = i + 1;
            out.push_str(&format!(
                "<tr><td><a href=\"#finding-{n}\">F{n}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                verdict_badge(f),
                finding_kind_badge(f),
                evidence_badges(f),
                e(&f.claim)
            ));
        }
        out.push_str("</tbody></table>\n");
        out
    }

    /// The caveats the findings share, each once, in order of first use.
    pub(crate) fn caveats(&self) -> Vec<&Caveat> {
        let mut out: Vec<&Caveat> = Vec::new();
        for f in self.findings() {
            for c in &f.caveats {
                if !out.iter().any(|o| o.id == c.id) {
                    out.push(c);
                }
            }
        }
        out
    }

    fn render_caveats(&self) -> String {
        let e = escape_html;
        let caveats = self.caveats();
        if caveats.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "<details class=\"caveats\"><summary>Caveats the verdicts share</summary>\n<dl>",
        );
        for c in caveats {
            out.push_str(&format!(
                "<dt id=\"caveat-{}\">{}</dt><dd>{}</dd>",
                e(&c.id),
                e(&c.title),
                paragraphs(&c.text, "caveat")
            ));
        }
        out.push_str("</dl></details>\n");
        out
    }

    /// The table of contents, collapsed. The sections are numbered by the list; each
    /// table and figure under its section with the report's own number, as in its
    /// caption (Table 1..n and Figure 1..m in reading order).
    fn render_contents(&self) -> String {
        let e = escape_html;
        let (mut tables, mut figures) = (0, 0);
        let mut list = String::from("<ol class=\"sections\">\n");
        for section in &self.sections {
            list.push_str(&format!(
                "<li><a href=\"#sec-{}\">{}</a>",
                e(&section.id),
                e(&section.title)
            ));
            let mut sub = String::new();
            for item in &section.items {
                match item {
                    Item::Table(t) => {
                        tables += 1;
                        sub.push_str(&format!(
                            "<li><a href=\"#table-{}\">Table {tables}</a> {}</li>",
                            e(&t.id),
                            e(&t.title)
                        ));
                    }
                    Item::Figure(f) => {
                        figures += 1;
                        sub.push_str(&format!(
                            "<li><a href=\"#figure-{}\">Figure {figures}</a> {}</li>",
                            e(&f.id),
                            e(&f.title)
                        ));
                    }
                    _ => {}
                }
            }
            if !sub.is_empty() {
                list.push_str(&format!("<ul class=\"sub\">{sub}</ul>"));
            }
            list.push_str("</li>\n");
        }
        list.push_str("</ol>\n");
        format!(
            "<details class=\"toc\"><summary>Contents: {} sections, {tables} tables, {figures} figures</summary>\n<nav class=\"toc\">{list}</nav></details>\n",
            self.sections.len()
        )
    }
}

/// "How to read this report", collapsed: the provenance tints, the drawing conventions
/// and the kinds of finding.
fn render_legend() -> String {
    let mut out = String::from(
        "<details class=\"legend\"><summary>How to read this report</summary>\n<ul class=\"kinds\">",
    );
    for kind in ProvenanceKind::ALL {
        out.push_str(&format!(
            "<li><span class=\"key prov-{}\">{}</span> {}</li>",
            kind.name(),
            kind.name(),
            kind_explanation(kind)
        ));
    }
    out.push_str("</ul>\n<p>Each table column is tinted by where its numbers came from and carries a source key (S1, S2, ...) resolved under the table; hover a column heading for its full provenance. <span class=\"flagged inline\">Flagged</span> cells are explained in the numbered notes under their table. In figures, models are solid lines, measurements filled markers, published values dashed lines with hollow markers (hollow bars in bar charts); a second quantity of the same source (a p95 beside its median) has a dashed line and hollow markers, and points set apart (a load point that missed its target, a degraded one) hollow markers and no line. Every figure's legend lists exactly the series it draws.</p>\n<p>Each finding says what it tests; its verdict is one of confirmed, contradicted or inconclusive, the same word as in findings.csv and summary.json:</p>\n<ul class=\"kinds\">");
    for kind in FindingKind::ALL {
        out.push_str(&format!(
            "<li><span class=\"test {}\">{}</span> {}</li>",
            kind.css(),
            kind.name(),
            finding_kind_explanation(kind)
        ));
    }
    out.push_str("</ul>\n</details>\n");
    out
}

fn kind_explanation(kind: ProvenanceKind) -> &'static str {
    match kind {
        ProvenanceKind::Measured => {
            "measured by wtlsperf on the machine and run named in the source note"
        }
        ProvenanceKind::Modelled => {
            "computed by a performance model; the note names the equation and its inputs"
        }
        ProvenanceKind::Published => {
            "copied from a source study; the note names the table or figure"
        }
        ProvenanceKind::Derived => {
            "arithmetic over other values (ratios, differences) or a row label"
        }
    }
}
