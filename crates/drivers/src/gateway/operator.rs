//! The checks of operator input that the gateway and flood commands share once their
//! options are parsed (the peer bound against the memory available), and the gateway
//! command's server options. Every check names the option and what was wrong; the
//! command line (the `wtlsperf` crate) prints the error and exits 1 on it.

use wtls::endpoint::entry_overhead_bytes;
use wtls::handshake::{Packing, Policy};

use crate::setup::{self, Options};

/// Per-peer state a gateway must be able to hold: a table entry plus one half-open
/// handshake, whose state the flood measurements keep under 2 KiB (docs/security.md).
pub fn bytes_per_peer() -> u64 {
    (entry_overhead_bytes() + 2048) as u64
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
    fn a_peer_bound_beyond_memory_is_refused_with_the_largest_that_fits() {
        let err = check_max_peers(usize::MAX / 4096).unwrap_err().to_string();
        assert!(
            err.contains("--max-peers") && err.contains("at most"),
            "{err}"
        );
        assert!(check_max_peers(1000).is_ok());
    }
}
