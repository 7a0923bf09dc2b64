//! Tables: typed cells, a unit and a provenance per column, rendered to HTML and CSV.

use crate::html::escape_html;
use crate::provenance::Provenance;
use crate::{check_id, ReportError};

const ROW_LABEL: &str = "row label";

/// One column: its heading, its unit (None for labels and dimensionless counts) and where
/// its numbers came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub unit: Option<String>,
    pub provenance: Provenance,
}

impl Column {
    /// A column of values with a unit, e.g. `Column::new("client", Some("ms"), prov)`.
    pub fn new(name: impl Into<String>, unit: Option<&str>, provenance: Provenance) -> Self {
        Self {
            name: name.into(),
            unit: unit.map(str::to_string),
            provenance,
        }
    }

    /// A column that only names the row (case, suite, key size). Its provenance is
    /// "derived: row label" so the sources list does not pretend it was measured.
    pub fn label(name: impl Into<String>) -> Self {
        Self::new(name, None, Provenance::derived(ROW_LABEL))
    }

    /// Whether this column was made by [`Column::label`]; such columns get no source key,
    /// which would only add noise to every table.
    pub fn is_label(&self) -> bool {
        self.unit.is_none() && self.provenance == Provenance::derived(ROW_LABEL)
    }

    /// The heading used in CSV files and in plain-text contexts: `name [unit]`, or just
    /// `name` when there is no unit.
    pub fn header(&self) -> String {
        match &self.unit {
            Some(unit) => format!("{} [{}]", self.name, unit),
            None => self.name.clone(),
        }
    }
}

/// One table cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    /// A number shown with a fixed count of decimals, so a column lines up and nobody
    /// reads precision into noise.
    Number {
        value: f64,
        decimals: usize,
    },
    /// No value exists (not published, not measurable); shown as an em dash, empty in CSV.
    Missing,
    /// A value that needs the reader's attention: an error in a published table, a result
    /// outside its target. The note is shown as a footnote under the table.
    Flagged {
        value: Box<Cell>,
        note: String,
    },
}

impl Cell {
    /// A text cell.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(text.into())
    }

    /// A number with `decimals` digits after the point.
    pub fn num(value: f64, decimals: usize) -> Self {
        Self::Number { value, decimals }
    }

    /// A number that may be absent (e.g. a published table with a gap).
    pub fn opt(value: Option<f64>, decimals: usize) -> Self {
        value.map_or(Self::Missing, |value| Self::num(value, decimals))
    }

    /// Wraps this cell in a flag with an explanatory note.
    pub fn flag(self, note: impl Into<String>) -> Self {
        Self::Flagged {
            value: Box::new(self),
            note: note.into(),
        }
    }

    /// The value as a CSV field: the bare number or text, empty when missing. Flags are
    /// dropped, because a CSV consumer wants the value; the note lives in the HTML.
    pub fn csv_value(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Number { value, decimals } => format!("{value:.decimals$}"),
            Self::Missing => String::new(),
            Self::Flagged { value, .. } => value.csv_value(),
        }
    }

    fn is_numeric(&self) -> bool {
        match self {
            Self::Number { .. } => true,
            Self::Flagged { value, .. } => value.is_numeric(),
            Self::Text(_) | Self::Missing => false,
        }
    }
}

/// A table of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// File name stem of the CSV and HTML anchor; `[A-Za-z0-9_.-]`.
    pub id: String,
    pub title: String,
    /// Shown under the title: what the rows are and how to read them.
    pub caption: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Free-text notes printed under the table (methodology, caveats).
    pub notes: Vec<String>,
}

impl Table {
    /// An empty table; add columns and rows with the builder methods or the public fields.
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            caption: String::new(),
            columns: Vec::new(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Sets the caption.
    pub fn caption(mut self, caption: impl Into<String>) -> Self {
        self.caption = caption.into();
        self
    }

    /// Appends a column.
    pub fn column(mut self, column: Column) -> Self {
        self.columns.push(column);
        self
    }

    /// Appends a row; its length is checked by [`Table::validate`] when the report is
    /// written, so building never panics.
    pub fn row(mut self, cells: Vec<Cell>) -> Self {
        self.rows.push(cells);
        self
    }

    /// Appends a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Checks the id and that every row has one cell per column.
    pub fn validate(&self) -> Result<(), ReportError> {
        check_id("table", &self.id)?;
        for (index, row) in self.rows.iter().enumerate() {
            if row.len() != self.columns.len() {
                return Err(ReportError::RaggedRow {
                    table: self.id.clone(),
                    row: index,
                    expected: self.columns.len(),
                    found: row.len(),
                });
            }
        }
        Ok(())
    }

    /// The table as CSV: one header row of `name [unit]`, then the rows.
    pub fn to_csv(&self) -> Result<String, ReportError> {
        self.validate()?;
        let csv_err = |source| ReportError::Csv {
            table: self.id.clone(),
            source,
        };
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer
            .write_record(self.columns.iter().map(Column::header))
            .map_err(csv_err)?;
        for row in &self.rows {
            writer
                .write_record(row.iter().map(Cell::csv_value))
                .map_err(csv_err)?;
        }
        let bytes = writer
            .into_inner()
            .map_err(|e| csv_err(csv::Error::from(e.into_error())))?;
        // Every field came from a Rust String, so the output is valid UTF-8.
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A companion CSV that explains the columns of [`Table::to_csv`]: one row per column
    /// with its unit, provenance kind and full provenance, so the numbers keep their
    /// origin when the CSV travels without the HTML.
    pub fn columns_csv(&self) -> Result<String, ReportError> {
        let csv_err = |source| ReportError::Csv {
            table: self.id.clone(),
            source,
        };
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer
            .write_record(["column", "unit", "provenance_kind", "provenance"])
            .map_err(csv_err)?;
        for column in &self.columns {
            writer
                .write_record([
                    column.name.as_str(),
                    column.unit.as_deref().unwrap_or(""),
                    column.provenance.kind().name(),
                    &column.provenance.to_string(),
                ])
                .map_err(csv_err)?;
        }
        let bytes = writer
            .into_inner()
            .map_err(|e| csv_err(csv::Error::from(e.into_error())))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The table as an HTML `<figure>` numbered `number` in the report. Columns are tinted
    /// by provenance kind, each heading carries its full provenance in a `title` attribute
    /// and a source key, and the keys are listed under the table.
    pub(crate) fn to_html(&self, number: usize) -> Result<String, ReportError> {
        self.validate()?;
        // Distinct provenances in column order; columns with the same origin share a key.
        let mut sources: Vec<(&Provenance, Vec<&Column>)> = Vec::new();
        let mut key_of_column = Vec::with_capacity(self.columns.len());
        for column in &self.columns {
            if column.is_label() {
                key_of_column.push(None);
                continue;
            }
            let key = match sources.iter().position(|(p, _)| **p == column.provenance) {
                Some(key) => {
                    sources[key].1.push(column);
                    key
                }
                None => {
                    sources.push((&column.provenance, vec![column]));
                    sources.len() - 1
                }
            };
            key_of_column.push(Some(key));
        }

        let id = escape_html(&self.id);
        let mut out = String::new();
        out.push_str(&format!(
            "<figure class=\"table\" id=\"table-{id}\">\n<figcaption><span class=\"num\">Table {number}.</span> {}",
            escape_html(&self.title)
        ));
        out.push_str(&format!(
            " <a class=\"csv\" href=\"tables/{id}.csv\">CSV</a></figcaption>\n"
        ));
        if !self.caption.is_empty() {
            out.push_str(&paragraphs(&self.caption, "caption"));
        }
        out.push_str("<div class=\"scroll\"><table class=\"data\">\n<thead><tr>");
        for (column, key) in self.columns.iter().zip(&key_of_column) {
            let kind = column.provenance.kind().name();
            out.push_str(&format!(
                "<th scope=\"col\" class=\"prov-{kind}\" title=\"{}\">{}",
                escape_html(&column.provenance.to_string()),
                escape_html(&column.name)
            ));
            if let Some(unit) = &column.unit {
                out.push_str(&format!(
                    "<span class=\"unit\">[{}]</span>",
                    escape_html(unit)
                ));
            }
            match key {
                Some(key) => out.push_str(&format!("<span class=\"key\">S{}</span></th>", key + 1)),
                None => out.push_str("</th>"),
            }
        }
        out.push_str("</tr></thead>\n<tbody>\n");

        let mut flags: Vec<&str> = Vec::new();
        for row in &self.rows {
            out.push_str("<tr>");
            for (cell, column) in row.iter().zip(&self.columns) {
                out.push_str(&cell_html(cell, column, &mut flags));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");

        out.push_str("<ul class=\"sources\">");
        for (key, (provenance, columns)) in sources.iter().enumerate() {
            let names: Vec<String> = columns.iter().map(|c| escape_html(&c.header())).collect();
            out.push_str(&format!(
                "<li><span class=\"key prov-{}\">S{}</span> {} <span class=\"cols\">({})</span></li>",
                provenance.kind().name(),
                key + 1,
                escape_html(&provenance.to_string()),
                names.join(", ")
            ));
        }
        out.push_str("</ul>\n");
        if !flags.is_empty() || !self.notes.is_empty() {
            out.push_str("<ol class=\"notes\">");
            for (index, note) in flags.iter().enumerate() {
                out.push_str(&format!(
                    "<li class=\"flag-note\"><span class=\"flag\">&#9873;{}</span> {}</li>",
                    index + 1,
                    escape_html(note)
                ));
            }
            for note in &self.notes {
                out.push_str(&format!("<li>{}</li>", escape_html(note)));
            }
            out.push_str("</ol>\n");
        }
        out.push_str("</figure>\n");
        Ok(out)
    }
}

/// One `<td>`; flagged cells get a numbered marker whose note is collected into `flags`.
fn cell_html<'a>(cell: &'a Cell, column: &Column, flags: &mut Vec<&'a str>) -> String {
    let kind = column.provenance.kind().name();
    let align = if cell.is_numeric() { " num" } else { "" };
    match cell {
        Cell::Text(text) => format!("<td class=\"prov-{kind}\">{}</td>", escape_html(text)),
        Cell::Number { .. } => format!(
            "<td class=\"prov-{kind}{align}\">{}</td>",
            escape_html(&cell.csv_value())
        ),
        Cell::Missing => {
            format!("<td class=\"prov-{kind} missing\" title=\"no value\">&#8212;</td>")
        }
        Cell::Flagged { value, note } => {
            flags.push(note);
            let shown = match value.as_ref() {
                Cell::Missing => "&#8212;".to_string(),
                other => escape_html(&other.csv_value()),
            };
            format!(
                "<td class=\"flagged{align}\" title=\"{}\">{shown}<sup class=\"flag\">&#9873;{}</sup></td>",
                escape_html(note),
                flags.len()
            )
        }
    }
}

/// Splits plain text on blank lines into `<p>` elements, escaping everything.
pub(crate) fn paragraphs(text: &str, class: &str) -> String {
    let mut out = String::new();
    for para in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        out.push_str(&format!("<p class=\"{class}\">{}</p>\n", escape_html(para)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let run = Provenance::measured("r1", "testbox");
        let published = Provenance::published("Bayoglu 2004, Table 4.1");
        Table::new("t41", "Client processing")
            .caption("Per case.")
            .column(Column::label("case"))
            .column(Column::new("client", Some("ms"), run.clone()))
            .column(Column::new("server", Some("ms"), run))
            .column(Column::new("client", Some("ms"), published))
            .row(vec![
                Cell::text("RSA, 1024"),
                Cell::num(4.56789, 2),
                Cell::Missing,
                Cell::num(120.0, 1).flag("total differs from sum of rows"),
            ])
    }

    #[test]
    fn csv_headers_carry_units_and_fields_are_quoted() {
        let csv = sample().to_csv().unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "case,client [ms],server [ms],client [ms]"
        );
        assert_eq!(lines.next().unwrap(), "\"RSA, 1024\",4.57,,120.0");
        assert!(lines.next().is_none());
    }

    #[test]
    fn columns_csv_keeps_provenance() {
        let csv = sample().columns_csv().unwrap();
        assert!(csv.contains("client,ms,published,\"published: Bayoglu 2004, Table 4.1\""));
        assert!(csv.contains("server,ms,measured,measured: run r1 on testbox"));
    }

    #[test]
    fn html_groups_sources_and_numbers_flags() {
        let html = sample().to_html(7).unwrap();
        assert!(html.contains("Table 7."));
        // Two measured columns share one source key, the label column has none: two keys.
        assert!(html.contains("S2"));
        assert!(!html.contains("S3"));
        assert!(html.contains(
            "<th scope=\"col\" class=\"prov-derived\" title=\"derived: row label\">case</th>"
        ));
        assert!(html.contains("(client [ms], server [ms])"));
        assert!(html.contains("title=\"published: Bayoglu 2004, Table 4.1\""));
        assert!(html.contains("&#9873;1</span> total differs from sum of rows"));
        assert!(html.contains(">4.57</td>"));
        assert!(html.contains("class=\"prov-measured missing\""));
    }

    #[test]
    fn ragged_rows_are_reported_not_panicked_on() {
        let table = sample().row(vec![Cell::text("short")]);
        match table.to_csv() {
            Err(ReportError::RaggedRow {
                row: 1,
                expected: 4,
                found: 1,
                ..
            }) => {}
            other => panic!("unexpected {other:?}"),
        }
        assert!(table.to_html(1).is_err());
    }

    #[test]
    fn cells_render_as_expected() {
        assert_eq!(Cell::opt(None, 2), Cell::Missing);
        assert_eq!(Cell::opt(Some(2.0), 0).csv_value(), "2");
        assert_eq!(Cell::num(-0.126, 2).csv_value(), "-0.13");
        assert_eq!(Cell::Missing.flag("x").csv_value(), "");
    }
}
