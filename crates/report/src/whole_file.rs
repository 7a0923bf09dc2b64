//! Files written whole or not at all: every result file of wtlsperf (report, tables,
//! figures, CSVs, JSON, job logs, PKI files) goes through [`write_whole_with`].
//!
//! Why: an evaluation interrupted by a signal, or killed, must not leave a file that looks
//! complete but is not (a CSV cut mid-row reads as a shorter table; a `report.html` cut
//! mid-section reads as a report). Each file is written into a temporary file in the same
//! directory (the same file system, so the rename cannot turn into a copy), then renamed
//! over the final name, which POSIX makes atomic: a reader sees the old file or the whole
//! new one. A process killed mid-write leaves only the temporary file, whose name starts
//! with `.` and ends in `.partial`. The data are not synced to disk: the guard is against
//! an interrupted process, not a power cut.

use std::fs::Permissions;
use std::io::{BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::ReportError;

/// Who may read the file once it is in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readers {
    /// Anyone (mode 0644): results, certificates.
    Everyone,
    /// The owner only (mode 0600): private keys.
    Owner,
}

/// Writes `bytes` to `path` whole (module docs), readable by everyone.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    write_whole_with(path, Readers::Everyone, |w| w.write_all(bytes))
}

/// Writes to `path` whole what `fill` writes (module docs). The file is in place only if
/// `fill` and the rename succeed; otherwise the temporary file is removed and `path` is
/// left as it was. Every error names `path`.
pub fn write_whole_with(
    path: &Path,
    readers: Readers,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), ReportError> {
    let io = |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mode = match readers {
        Readers::Everyone => 0o644,
        Readers::Owner => 0o600,
    };
    // Created with the final mode: a private key is never readable by others, not even
    // as a temporary file.
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .permissions(Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(io)?;
    let mut w = BufWriter::new(temp);
    fill(&mut w).map_err(io)?;
    let temp = w.into_inner().map_err(|e| io(e.into_error()))?;
    temp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_appears_whole_and_a_failed_write_leaves_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        write_whole(&path, b"{\"complete\": true}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"complete\": true}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        // A writer that fails half-way: the old file stays, no temporary file is left.
        let err = write_whole_with(&path, Readers::Everyone, |w| {
            w.write_all(b"{\"compl")?;
            Err(std::io::Error::other("interrupted"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("summary.json"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"complete\": true}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("summary.json")]);
    }

    #[test]
    fn a_private_file_is_the_owners_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.pem");
        write_whole_with(&path, Readers::Owner, |w| w.write_all(b"secret")).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent").join("cases.csv");
        let err = write_whole(&path, b"x").unwrap_err().to_string();
        assert!(err.contains("absent/cases.csv"), "{err}");
    }
}
