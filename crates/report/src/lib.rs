//! Report engine for wtlsperf: tables, figures (SVG and PNG) and one self-contained
//! `report.html`.
//!
//! This crate knows nothing about WTLS. The evaluation fills [`Table`]s and [`Figure`]s
//! with numbers and hands them to a [`Report`], which writes
//!
//! ```text
//! <dir>/report.html            inline CSS and inline SVG, no scripts, no external URLs;
//!                              its first screen holds the run's status, headline
//!                              numbers and verdicts (`front`)
//! <dir>/tables/<id>.csv        one header row, `name [unit]`
//! <dir>/tables/<id>.columns.csv  column, unit, provenance (the CSV's own legend)
//! <dir>/figures/<id>.svg|png   the same drawing, for slides and papers
//! ```
//!
//! Every column and every plotted series carries a [`Provenance`], because the report
//! exists to put measured, modelled and published values side by side, and a reader must
//! always be able to tell which is which.

pub mod browser;
mod figure;
mod finding;
mod front;
mod html;
mod provenance;
mod table;
mod whole_file;

pub use figure::{
    svg_series_and_legend, Axis, BarSeries, Chart, ErrorBar, Figure, GroupedBarChart, LineChart,
    Point, ScatterChart, Series, SvgLegendCheck, Trace,
};
pub use finding::{Passage, Study};
pub use html::{
    escape_html, Caveat, Finding, FindingKind, HeadlineNumber, Item, Report, ReportOutput,
    RunStatus, Section, Verdict,
};
pub use provenance::{Provenance, ProvenanceKind};
pub use table::{Cell, Column, Table};
pub use whole_file::{write_whole, write_whole_with, Readers};

use std::path::PathBuf;

/// Everything that can go wrong while building or writing a report. Each variant names the
/// table, figure or file concerned so the caller can tell the user what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Ids become file names and HTML anchors, so they are restricted to a safe alphabet.
    #[error("{what} id {id:?} is not usable as a file name: use 1-64 characters from [A-Za-z0-9_.-], not starting with '.'")]
    InvalidId { what: &'static str, id: String },
    #[error("{what} id {id:?} is used twice in the report; ids must be unique")]
    DuplicateId { what: &'static str, id: String },
    #[error("table {table:?}: row {row} has {found} cells but the table has {expected} columns")]
    RaggedRow {
        table: String,
        row: usize,
        expected: usize,
        found: usize,
    },
    #[error("figure {figure:?}: {message}")]
    InvalidFigure { figure: String, message: String },
    #[error("figure {figure:?}: drawing failed: {message}")]
    Plot { figure: String, message: String },
    #[error("the embedded DejaVu Sans font could not be registered with plotters")]
    Font,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("table {table:?}: CSV output failed: {source}")]
    Csv {
        table: String,
        #[source]
        source: csv::Error,
    },
    #[error("figure {figure:?}: PNG encoding failed: {source}")]
    Png {
        figure: String,
        #[source]
        source: png::EncodingError,
    },
}

/// Checks that an id can serve as a file name and an HTML anchor on every platform.
pub(crate) fn check_id(what: &'static str, id: &str) -> Result<(), ReportError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ReportError::InvalidId {
            what,
            id: id.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_escape_the_output_directory_are_refused() {
        assert!(check_id("table", "t4_1-client.ms").is_ok());
        for bad in ["", "../x", "a/b", ".hidden", "a b", "é", &"x".repeat(65)] {
            assert!(check_id("table", bad).is_err(), "{bad:?} accepted");
        }
    }
}
