//! The gateway's access log (`--access-log FILE`): one line per request answered, in the
//! Common Log Format of web servers (NCSA's, which Apache and nginx write by default),
//! so the tools that read those logs read this one:
//!
//! ```text
//! 127.0.0.1 - - [28/Nov/2026:07:41:02 +0000] "GET http://origin/deck.wml WSP/CL" 200 1183
//! ```
//!
//! The fields: the client's address, two `-` (no identity, no user), the time the
//! answer left, the request line (the method, the absolute URL the client asked for, and
//! the port's protocol in place of HTTP's version: `WSP/CL` connectionless, `WSP/CO`
//! connection mode, `WTLS` appended on the secure ports), the WSP status as its HTTP code,
//! and the octets of the Reply's body. Kannel's wapbox logs a similar line per request
//! (its `access-log`), in a format of its own; this one was chosen so that standard
//! log analysers work unchanged.
//!
//! SIGHUP makes the gateway reopen the file (`reopen`), as logrotate's `postrotate`
//! expects: the lines before the signal stay in the renamed file, the lines after it go
//! to a new file at the configured path.

use std::fs::{File, OpenOptions};
use std::io::{LineWriter, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// One request as the log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    pub client: SocketAddr,
    pub method: &'a str,
    pub uri: &'a str,
    /// `WSP/CL`, `WSP/CO`, with ` WTLS` on the secure ports.
    pub protocol: &'a str,
    pub status: u16,
    pub bytes: usize,
}

impl Entry<'_> {
    /// The line, without its newline, stamped `at`.
    pub fn line(&self, at: chrono::DateTime<chrono::Utc>) -> String {
        // A URL is the client's bytes: quotes and controls would break the line's fields.
        let uri: String = self
            .uri
            .chars()
            .map(|c| if c == '"' || c.is_control() { '?' } else { c })
            .collect();
        format!(
            "{} - - [{}] \"{} {} {}\" {} {}",
            self.client.ip(),
            at.format("%d/%b/%Y:%H:%M:%S %z"),
            self.method,
            uri,
            self.protocol,
            self.status,
            self.bytes
        )
    }
}

/// The open log file.
#[derive(Debug)]
pub struct AccessLog {
    path: PathBuf,
    file: LineWriter<File>,
}

fn open(path: &Path) -> anyhow::Result<LineWriter<File>> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("--access-log {}", path.display()))?;
    Ok(LineWriter::new(file))
}

impl AccessLog {
    /// Opens `path` for appending (created if need be).
    pub fn open(path: &Path) -> anyhow::Result<AccessLog> {
        Ok(AccessLog {
            path: path.to_path_buf(),
            file: open(path)?,
        })
    }

    /// Appends one line (written through at once: a line is never half in the file).
    pub fn write(&mut self, entry: &Entry<'_>) {
        let line = entry.line(chrono::Utc::now());
        if let Err(e) = writeln!(self.file, "{line}") {
            tracing::warn!(path = %self.path.display(), error = %e, "access log not written");
        }
    }

    /// Closes the file and opens its path again (after logrotate moved it away).
    pub fn reopen(&mut self) -> anyhow::Result<()> {
        let _ = self.file.flush();
        self.file = open(&self.path)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_line_is_common_log_format_and_reopen_follows_a_rotation() {
        let entry = Entry {
            client: "127.0.0.5:4000".parse().unwrap(),
            method: "GET",
            uri: "http://o/a\".wml",
            protocol: "WSP/CO WTLS",
            status: 200,
            bytes: 1183,
        };
        let at = chrono::Utc
            .with_ymd_and_hms(2026, 11, 28, 7, 41, 2)
            .unwrap();
        assert_eq!(
            entry.line(at),
            "127.0.0.5 - - [28/Nov/2026:07:41:02 +0000] \"GET http://o/a?.wml WSP/CO WTLS\" 200 1183"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.log");
        let mut log = AccessLog::open(&path).unwrap();
        log.write(&entry);
        std::fs::rename(&path, dir.path().join("access.log.1")).unwrap();
        log.write(&entry);
        log.reopen().unwrap();
        log.write(&entry);
        let old = std::fs::read_to_string(dir.path().join("access.log.1")).unwrap();
        let new = std::fs::read_to_string(&path).unwrap();
        assert_eq!((old.lines().count(), new.lines().count()), (2, 1));
        assert!(AccessLog::open(&dir.path().join("no/such/dir/log"))
            .unwrap_err()
            .to_string()
            .contains("--access-log"));
    }
}
