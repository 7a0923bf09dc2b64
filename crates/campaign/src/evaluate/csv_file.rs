//! The CSV edge of the campaign: every section writes its rows through [`write_csv`], so
//! a file's header is its row type's field names and an error names the file.

use std::path::Path;

use anyhow::Context;
use serde::Serialize;

/// Writes `rows` as a CSV file with a header row, naming the file in every error.
pub fn write_csv<T: Serialize>(
    path: &Path,
    rows: impl IntoIterator<Item = T>,
) -> anyhow::Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("creating {}", path.display()))?;
    for r in rows {
        w.serialize(r)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Serialises a typed value of a row by its display form (a case as `256p/224p`, a
/// protocol as `dtls1.2`): the one place a vocabulary type becomes CSV text.
pub fn display<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}
