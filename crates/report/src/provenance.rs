//! Where a number came from.
//!
//! The whole point of the report is to put numbers measured on this machine beside the
//! numbers a model predicts and the numbers the source studies printed. A reader can only
//! trust that comparison if every column and every plotted series says which of the three
//! it is, so provenance is a required argument everywhere a value enters the report.

use std::fmt;

/// The origin of a column of a table or of a plotted series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    /// Measured by wtlsperf itself; `run_id` and `machine` let a reader find the raw records.
    Measured { run_id: String, machine: String },
    /// Computed by a performance model; `equation` names it as the source study does
    /// (e.g. "Bayoglu 2004, Eq. 3.12") and `inputs` says which measured or published values
    /// were fed in.
    Modelled { equation: String, inputs: String },
    /// Copied from a source study, e.g. "Bayoglu 2004, Table 4.1".
    Published { source: String },
    /// Arithmetic over other columns (ratios, differences, sums), described in `how`.
    Derived { how: String },
}

impl Provenance {
    /// Shorthand for [`Provenance::Measured`].
    pub fn measured(run_id: impl Into<String>, machine: impl Into<String>) -> Self {
        Self::Measured {
            run_id: run_id.into(),
            machine: machine.into(),
        }
    }

    /// Shorthand for [`Provenance::Modelled`].
    pub fn modelled(equation: impl Into<String>, inputs: impl Into<String>) -> Self {
        Self::Modelled {
            equation: equation.into(),
            inputs: inputs.into(),
        }
    }

    /// Shorthand for [`Provenance::Published`].
    pub fn published(source: impl Into<String>) -> Self {
        Self::Published {
            source: source.into(),
        }
    }

    /// Shorthand for [`Provenance::Derived`].
    pub fn derived(how: impl Into<String>) -> Self {
        Self::Derived { how: how.into() }
    }

    /// Which of the four families this provenance belongs to; drives colours and line styles.
    pub fn kind(&self) -> ProvenanceKind {
        match self {
            Self::Measured { .. } => ProvenanceKind::Measured,
            Self::Modelled { .. } => ProvenanceKind::Modelled,
            Self::Published { .. } => ProvenanceKind::Published,
            Self::Derived { .. } => ProvenanceKind::Derived,
        }
    }
}

/// One line a reader can follow back to the source, e.g.
/// "measured: run 2024-05-01T10:00 on ryzen-7950x".
impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Measured { run_id, machine } => {
                write!(f, "measured: run {run_id} on {machine}")
            }
            Self::Modelled { equation, inputs } => {
                write!(f, "modelled: {equation}; inputs: {inputs}")
            }
            Self::Published { source } => write!(f, "published: {source}"),
            Self::Derived { how } => write!(f, "derived: {how}"),
        }
    }
}

/// The family of a [`Provenance`], without its details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProvenanceKind {
    Measured,
    Modelled,
    Published,
    Derived,
}

impl ProvenanceKind {
    /// Every kind, in the order the legend lists them.
    pub const ALL: [ProvenanceKind; 4] = [
        ProvenanceKind::Measured,
        ProvenanceKind::Modelled,
        ProvenanceKind::Published,
        ProvenanceKind::Derived,
    ];

    /// Lower-case word used in legends and CSS class names.
    pub fn name(self) -> &'static str {
        match self {
            Self::Measured => "measured",
            Self::Modelled => "modelled",
            Self::Published => "published",
            Self::Derived => "derived",
        }
    }

    /// How a series of this kind is drawn in a line chart, so that the legend can explain
    /// the convention in words as well.
    pub fn line_convention(self) -> &'static str {
        match self {
            Self::Measured => "filled markers",
            Self::Modelled => "solid line",
            Self::Published => "dashed line, hollow markers",
            Self::Derived => "dotted line",
        }
    }
}

impl fmt::Display for ProvenanceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_source() {
        let p = Provenance::published("Bayoglu 2004, Table 4.1");
        assert_eq!(p.to_string(), "published: Bayoglu 2004, Table 4.1");
        assert_eq!(p.kind(), ProvenanceKind::Published);
        let m = Provenance::measured("r42", "box");
        assert_eq!(m.to_string(), "measured: run r42 on box");
        let e = Provenance::modelled("Eq. 3.12", "lambda=5/s");
        assert!(e.to_string().contains("Eq. 3.12"));
        assert!(e.to_string().contains("lambda=5/s"));
        assert_eq!(Provenance::derived("a/b").kind().name(), "derived");
    }
}
