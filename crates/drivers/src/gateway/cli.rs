//! The checks of operator input that the gateway, load and flood commands share, and the
//! gateway command's server options. Every check names the option and what was
//! wrong: clap prints `error: invalid value 'X' for '--option <OPTION>': why` and exits
//! with status 2; checks that need more than one value return an error that `main`
//! prints and exits 1 on.

use std::time::{Duration, Instant};

use wtls::endpoint::entry_overhead_bytes;
use wtls::handshake::{Packing, Policy};

use crate::setup::{self, Options};

/// Per-peer state a gateway must be able to hold: a table entry plus one half-open
/// handshake, whose state the flood measurements keep under 2 KiB (docs/security.md).
pub fn bytes_per_peer() -> u64 {
    (entry_overhead_bytes() + 2048) as u64
}

/// A count that must be at least 1 (workers, clients, sources).
pub fn at_least_one(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("not a whole number ({e})"))?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    Ok(n)
}

/// A number that must be positive and finite (a rate).
pub fn positive_number(s: &str) -> Result<f64, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("must be a positive finite number, got {x}"));
    }
    Ok(x)
}

/// A number of seconds that must be positive and finite.
pub fn positive_seconds(s: &str) -> Result<f64, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("must be a positive number of seconds, got {x}"));
    }
    Ok(x)
}

/// How long a command runs: `None` until it is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLength(pub Option<Duration>);

/// A run length: positive; a length too long to represent (e.g. `inf`, `1e300`) runs
/// until the process is stopped.
pub fn run_length(s: &str) -> Result<RunLength, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if x.is_nan() || x <= 0.0 {
        return Err(format!("must be a positive number of seconds, got {x}"));
    }
    Ok(RunLength(
        Duration::try_from_secs_f64(x)
            .ok()
            .filter(|d| Instant::now().checked_add(*d).is_some()),
    ))
}

/// Refuses a peer bound whose table could not fit in the memory available now
/// (`MemAvailable` of /proc/meminfo), naming the largest that would.
pub fn check_max_peers(max_peers: usize) -> anyhow::Result<()> {
    let need = (max_peers as u128) * u128::from(bytes_per_peer());
    let Some(available) = mem_available_bytes() else {
        return Ok(());
    };
    if need > u128::from(available) {
        anyhow::bail!(
            "--max-peers {max_peers}: each peer may hold up to {} bytes (table entry and a \
             half-open handshake), {:.1} GB in all, but only {:.1} GB of memory are \
             available; at most {} peers fit",
            bytes_per_peer(),
            need as f64 / 1e9,
            available as f64 / 1e9,
            available / bytes_per_peer()
        );
    }
    Ok(())
}

/// Memory this process may still use: `MemAvailable`, or less if a cgroup (v2) limit
/// leaves less (a container sees the host's meminfo).
fn mem_available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let cgroup = || -> Option<u64> {
        let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok();
        let max: u64 = read("memory.max")?.trim().parse().ok()?;
        let current: u64 = read("memory.current")?.trim().parse().ok()?;
        Some(max.saturating_sub(current))
    };
    Some(cgroup().map_or(kib * 1024, |c| c.min(kib * 1024)))
}

/// The server options of the gateway command.
pub fn gateway_options(allow_weak: bool, packing: Packing) -> Options {
    let mut opts = Options {
        packing,
        ..Options::default()
    };
    if allow_weak {
        opts.policy = Policy::permissive();
        opts.cipher_suites = setup::all_cipher_suites();
    }
    opts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_numbers_are_checked() {
        assert_eq!(at_least_one("3"), Ok(3));
        assert!(at_least_one("0").is_err());
        assert!(at_least_one("-1").is_err());
        assert!(positive_seconds("NaN").is_err());
        assert!(positive_seconds("inf").is_err());
        assert!(positive_seconds("-1").is_err());
        assert_eq!(positive_seconds("2.5"), Ok(2.5));
        assert_eq!(run_length("inf"), Ok(RunLength(None)));
        assert_eq!(run_length("1e300"), Ok(RunLength(None)));
        assert_eq!(run_length("2"), Ok(RunLength(Some(Duration::from_secs(2)))));
        assert!(run_length("NaN").is_err());
        assert!(run_length("-1").is_err());
        assert!(run_length("0").is_err());
    }

    #[test]
    fn a_peer_bound_beyond_memory_is_refused_with_the_largest_that_fits() {
        let err = check_max_peers(usize::MAX / 4096).unwrap_err().to_string();
        assert!(
            err.contains("--max-peers") && err.contains("at most"),
            "{err}"
        );
        assert!(check_max_peers(1000).is_ok());
    }
}
