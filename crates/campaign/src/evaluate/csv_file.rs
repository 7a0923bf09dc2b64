//! The CSV edge of the campaign: every section writes its rows through [`write_csv`], so
//! a file's header is its row type's field names, an error names the file, and the file
//! appears whole or not at all ([`wtlsperf_report::write_whole_with`]).

use std::path::Path;

use anyhow::Context;
use serde::Serialize;
use wtlsperf_report::Readers;

/// Writes `rows` as a CSV file with a header row, whole, naming the file in every error.
pub fn write_csv<T: Serialize>(
    path: &Path,
    rows: impl IntoIterator<Item = T>,
) -> anyhow::Result<()> {
    wtlsperf_report::write_whole_with(path, Readers::Everyone, |out| {
        let mut w = csv::Writer::from_writer(out);
        for r in rows {
            w.serialize(r)?;
        }
        w.flush()
    })
    .with_context(|| format!("writing {}", path.display()))
}

/// Serialises a typed value of a row by its display form (a case as `256p/224p`, a
/// protocol as `dtls1.2`): the one place a vocabulary type becomes CSV text.
pub fn display<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}
