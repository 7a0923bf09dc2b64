//! The gateway's periodic statistics (`--stats-file`, `--stats-every-s`): one JSON object
//! per line, so that a soak can follow memory and table occupancy while the gateway runs
//! (its counters otherwise appear only when it stops).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use super::GatewayStats;

/// One line of the statistics file.
#[derive(Debug, Serialize)]
pub struct StatsSample<'a> {
    /// Seconds since the gateway started.
    pub t_s: f64,
    /// Resident set size of the gateway process.
    pub rss_bytes: u64,
    /// The peer bound, and `peers` over it: how full the table is.
    pub max_peers: usize,
    pub occupancy: f64,
    /// The last sample, written as the gateway stops (its RSS is no longer the serving
    /// process's: the workers and their tables are gone).
    pub shutdown: bool,
    #[serde(flatten)]
    pub stats: &'a GatewayStats,
}

/// Writes a sample every `every` to a file, each line flushed as written.
#[derive(Debug)]
pub struct StatsLog {
    file: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
    every: Duration,
    started: Instant,
    next: Instant,
}

impl StatsLog {
    /// Creates (or truncates) `path`; the first sample is due one interval from now.
    pub fn create(path: &Path, every: Duration) -> anyhow::Result<Self> {
        let file = std::fs::File::create(path)
            .with_context(|| format!("--stats-file {}", path.display()))?;
        let started = Instant::now();
        Ok(StatsLog {
            file: std::io::BufWriter::new(file),
            path: path.to_path_buf(),
            every,
            started,
            next: started + every,
        })
    }

    /// Writes a sample if one is due (`stats` is read only then).
    pub fn tick(
        &mut self,
        max_peers: usize,
        stats: impl FnOnce() -> GatewayStats,
    ) -> anyhow::Result<()> {
        if !self.due() {
            return Ok(());
        }
        self.sample(max_peers, &stats(), false)
    }

    /// Whether a sample is due (and, if so, the next one is due an interval from now):
    /// for a gateway whose samples are its own type (the WAP gateway's).
    pub fn due(&mut self) -> bool {
        let now = Instant::now();
        if now < self.next {
            return false;
        }
        self.next = now + self.every;
        true
    }

    /// Seconds since the file was created.
    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Writes one line of JSON, flushed.
    pub fn write_line(&mut self, value: &impl Serialize) -> anyhow::Result<()> {
        serde_json::to_writer(&mut self.file, value)?;
        self.file.write_all(b"\n")?;
        self.file
            .flush()
            .with_context(|| format!("--stats-file {}", self.path.display()))
    }

    /// Writes the last sample, as the gateway stops.
    pub fn write_shutdown(&mut self, max_peers: usize, stats: &GatewayStats) -> anyhow::Result<()> {
        self.sample(max_peers, stats, true)
    }

    fn sample(
        &mut self,
        max_peers: usize,
        stats: &GatewayStats,
        shutdown: bool,
    ) -> anyhow::Result<()> {
        let sample = StatsSample {
            t_s: self.started.elapsed().as_secs_f64(),
            rss_bytes: crate::flood::rss_bytes(),
            max_peers,
            occupancy: stats.peers as f64 / max_peers.max(1) as f64,
            shutdown,
            stats,
        };
        self.write_line(&sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_one_json_line_with_memory_and_occupancy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stats.jsonl");
        let mut log = StatsLog::create(&path, Duration::from_secs(3600)).unwrap();
        let stats = GatewayStats {
            peers: 25,
            ..GatewayStats::default()
        };
        // Not due yet: nothing written, and the statistics are not even read.
        log.tick(100, || unreachable!("read before due")).unwrap();
        log.write_shutdown(100, &stats).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1);
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["occupancy"], 0.25);
        assert_eq!(v["peers"], 25);
        assert_eq!(v["shutdown"], true);
        assert!(v["rss_bytes"].as_u64().unwrap() > 0);
    }

    #[test]
    fn an_unwritable_file_names_the_option() {
        let err = StatsLog::create(
            Path::new("/nonexistent/dir/s.jsonl"),
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("--stats-file"), "{err:#}");
    }
}
