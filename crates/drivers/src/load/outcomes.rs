//! Each handshake of a load run as the client saw it (`load --outcomes FILE`): when it
//! started and ended on the wall clock, from which client socket, whether it offered a
//! session, and how it ended. A fault run lines these up with the moment it killed a
//! node (scripts/fleet-faults.sh), which the run's totals cannot show.

use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context;

/// One handshake's end.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Intended start and end, Unix time in milliseconds.
    pub start_unix_ms: f64,
    pub end_unix_ms: f64,
    /// The client's socket (its address decides the balancer's node).
    pub client: Option<SocketAddr>,
    /// The client offered a stored session.
    pub resume_offered: bool,
    /// How the handshake completed (`full`, `abbreviated`, `optimised`), `None`: failed.
    pub kind: Option<&'static str>,
}

/// Writes `outcomes` as CSV: `start_unix_ms,end_unix_ms,client,resume_offered,outcome`,
/// the outcome being the completed kind or `failed`.
pub fn write_outcomes(outcomes: &[Outcome], path: &Path) -> anyhow::Result<()> {
    let name = || format!("--outcomes {}", path.display());
    let mut w = csv::Writer::from_path(path).with_context(name)?;
    w.write_record([
        "start_unix_ms",
        "end_unix_ms",
        "client",
        "resume_offered",
        "outcome",
    ])
    .with_context(name)?;
    for o in outcomes {
        w.write_record([
            format!("{:.3}", o.start_unix_ms),
            format!("{:.3}", o.end_unix_ms),
            o.client.map_or_else(String::new, |c| c.to_string()),
            o.resume_offered.to_string(),
            o.kind.unwrap_or("failed").to_string(),
        ])
        .with_context(name)?;
    }
    w.flush().with_context(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_handshake_is_written_as_failed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.csv");
        let o = Outcome {
            start_unix_ms: 1.5,
            end_unix_ms: 2.25,
            client: Some("127.0.0.2:4000".parse().unwrap()),
            resume_offered: true,
            kind: None,
        };
        let done = Outcome {
            kind: Some("abbreviated"),
            ..o.clone()
        };
        write_outcomes(&[o, done], &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "1.500,2.250,127.0.0.2:4000,true,failed");
        assert_eq!(lines[2], "1.500,2.250,127.0.0.2:4000,true,abbreviated");
    }
}
