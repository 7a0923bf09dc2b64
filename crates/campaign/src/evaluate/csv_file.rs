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

/// Writes `rows` like [`write_csv`], and when there are none the header row alone
/// (taken from a default row), so that an empty result is a CSV file a reader can open
/// and see the columns of, not an empty file that looks like a failed write.
pub fn write_csv_or_header<T: Serialize + Default>(
    path: &Path,
    rows: impl IntoIterator<Item = T>,
) -> anyhow::Result<()> {
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_some() {
        return write_csv(path, rows);
    }
    let header = header_of::<T>()?;
    wtlsperf_report::write_whole(path, header.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// The header row (with its line end) a CSV of `T` gets.
fn header_of<T: Serialize + Default>() -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(T::default())?;
    let bytes = w
        .into_inner()
        .map_err(|e| anyhow::anyhow!("{}", e.error()))?;
    let text = String::from_utf8(bytes)?;
    let end = text.find('\n').map_or(text.len(), |i| i + 1);
    Ok(text[..end].to_owned())
}

/// Serialises a typed value of a row by its display form (a case as `256p/224p`, a
/// protocol as `dtls1.2`): the one place a vocabulary type becomes CSV text.
pub fn display<T: std::fmt::Display, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Default)]
    struct Row {
        law: &'static str,
        rho: f64,
        error: Option<f64>,
    }

    #[test]
    fn no_rows_still_make_a_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.csv");
        write_csv_or_header(&path, Vec::<Row>::new()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "law,rho,error\n");
        write_csv_or_header(
            &path,
            [Row {
                law: "pareto",
                rho: 0.5,
                error: None,
            }],
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "law,rho,error\npareto,0.5,\n"
        );
    }
}
