//! Response-rate limiting toward unverified addresses, as DNS servers do it (RRL).
//!
//! Why: a ClientHello of 38 bytes with a forged source makes the server send its first
//! flight, up to 1174 bytes (rsa3072), to whoever owns that source. The gateway cannot
//! tell a forged source from a real one until the peer has proved it reads our answers
//! (its Finished verified), so every answer of a handshake that has not reached that
//! point is charged to a byte budget per second toward the destination address and
//! toward its prefix (/24 for IPv4, /56 for IPv6: the defaults of BIND's RRL, whose
//! design this follows). An answer over budget is not sent (counted), as RRL drops.
//!
//! The buckets sit in two fixed tables indexed by a keyed hash of the address or prefix:
//! no allocation while serving, memory fixed at start, and an attacker cannot aim at a
//! bucket without the process's hash keys. Two addresses sharing a bucket only share a
//! budget, which makes the limit stricter, never looser.

use std::hash::BuildHasher;
use std::net::{IpAddr, SocketAddr};

/// Buckets per table (a power of two).
const ADDRESS_BUCKETS: usize = 4096;
const PREFIX_BUCKETS: usize = 1024;

/// The budgets. A rate of 0 turns that limit off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResponseLimit {
    /// Bytes per second toward one unverified address.
    pub address_bytes_per_s: u64,
    /// Bytes per second toward one unverified /24 (IPv4) or /56 (IPv6) prefix.
    pub prefix_bytes_per_s: u64,
    /// How many seconds of budget a quiet bucket may save up (the burst).
    pub burst_s: u64,
}

impl ResponseLimit {
    /// No limit (an in-process load run, whose clients are known to be real).
    pub const OFF: ResponseLimit = ResponseLimit {
        address_bytes_per_s: 0,
        prefix_bytes_per_s: 0,
        burst_s: 0,
    };

    pub fn is_off(&self) -> bool {
        self.address_bytes_per_s == 0 && self.prefix_bytes_per_s == 0
    }
}

impl Default for ResponseLimit {
    /// 4 KiB/s per address with 2 s of burst: a real client's first flight (at most
    /// 1174 bytes here) and its two re-answers fit; 128 KiB/s per prefix.
    fn default() -> Self {
        ResponseLimit {
            address_bytes_per_s: 4096,
            prefix_bytes_per_s: 128 * 1024,
            burst_s: 2,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    /// Bytes that may still be sent.
    tokens: u64,
    /// When the bucket was last refilled (monotonic ns); 0: never used.
    refilled_ns: u64,
}

impl Bucket {
    /// Adds what `rate` earned since the last refill, up to `rate * burst_s`.
    fn refill(&mut self, rate: u64, burst_s: u64, now_ns: u64) {
        let cap = rate.saturating_mul(burst_s.max(1));
        if self.refilled_ns == 0 {
            self.tokens = cap;
        } else {
            let elapsed = now_ns.saturating_sub(self.refilled_ns);
            let earned = (u128::from(rate) * u128::from(elapsed) / 1_000_000_000) as u64;
            // A refill that earned no whole byte keeps its start time, so that a bucket
            // asked often still earns its rate.
            if earned == 0 {
                return;
            }
            self.tokens = self.tokens.saturating_add(earned).min(cap);
        }
        self.refilled_ns = now_ns.max(1);
    }
}

/// Per-address and per-prefix byte budgets.
pub struct ResponseLimiter {
    limit: ResponseLimit,
    keys: std::collections::hash_map::RandomState,
    addresses: Box<[Bucket]>,
    prefixes: Box<[Bucket]>,
}

impl std::fmt::Debug for ResponseLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseLimiter")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// The prefix an address is limited with: /24 for IPv4, /56 for IPv6.
pub fn prefix_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let o = a.octets();
            IpAddr::from([o[0], o[1], o[2], 0])
        }
        IpAddr::V6(a) => {
            let mut o = a.octets();
            o[7..].fill(0);
            IpAddr::from(o)
        }
    }
}

impl ResponseLimiter {
    pub fn new(limit: ResponseLimit) -> Self {
        let size = |n| {
            if limit.is_off() {
                0
            } else {
                n
            }
        };
        ResponseLimiter {
            limit,
            keys: Default::default(),
            addresses: vec![Bucket::default(); size(ADDRESS_BUCKETS)].into_boxed_slice(),
            prefixes: vec![Bucket::default(); size(PREFIX_BUCKETS)].into_boxed_slice(),
        }
    }

    pub fn limit(&self) -> ResponseLimit {
        self.limit
    }

    /// Whether `bytes` may be sent to `ip` at `now_ns`; if so they are charged to both
    /// budgets. An answer is sent whole or not at all.
    pub fn allow(&mut self, ip: IpAddr, bytes: usize, now_ns: u64) -> bool {
        if self.limit.is_off() {
            return true;
        }
        let bytes = bytes as u64;
        let burst = self.limit.burst_s;
        let a = self.keys.hash_one(ip) as usize & (ADDRESS_BUCKETS - 1);
        let p = self.keys.hash_one(prefix_of(ip)) as usize & (PREFIX_BUCKETS - 1);
        let (ra, rp) = (
            self.limit.address_bytes_per_s,
            self.limit.prefix_bytes_per_s,
        );
        if ra > 0 {
            self.addresses[a].refill(ra, burst, now_ns);
        }
        if rp > 0 {
            self.prefixes[p].refill(rp, burst, now_ns);
        }
        let fits = (ra == 0 || self.addresses[a].tokens >= bytes)
            && (rp == 0 || self.prefixes[p].tokens >= bytes);
        if fits {
            if ra > 0 {
                self.addresses[a].tokens -= bytes;
            }
            if rp > 0 {
                self.prefixes[p].tokens -= bytes;
            }
        }
        fits
    }

    /// [`ResponseLimiter::allow`] for a client behind a balancer, seen as the balancer's
    /// source socket `via`: charged to the address budget keyed by that socket (one
    /// balancer session per client address and port), never to the prefix budget, which
    /// every client behind the balancer would share. The balancer bounds how many
    /// sessions one client address and one client prefix may hold (`docs/security.md`).
    pub fn allow_balanced(&mut self, via: SocketAddr, bytes: usize, now_ns: u64) -> bool {
        let rate = self.limit.address_bytes_per_s;
        if rate == 0 {
            return true;
        }
        let a = self.keys.hash_one(via) as usize & (ADDRESS_BUCKETS - 1);
        let bucket = &mut self.addresses[a];
        bucket.refill(rate, self.limit.burst_s, now_ns);
        let fits = bucket.tokens >= bytes as u64;
        if fits {
            bucket.tokens -= bytes as u64;
        }
        fits
    }

    /// Heap bytes of the bucket tables (fixed at start).
    pub fn heap_bytes(&self) -> usize {
        (self.addresses.len() + self.prefixes.len()) * std::mem::size_of::<Bucket>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn limiter(address: u64, prefix: u64) -> ResponseLimiter {
        ResponseLimiter::new(ResponseLimit {
            address_bytes_per_s: address,
            prefix_bytes_per_s: prefix,
            burst_s: 1,
        })
    }

    #[test]
    fn an_address_gets_its_budget_per_second_and_no_more() {
        let mut l = limiter(1000, 0);
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        assert!(l.allow(ip, 600, S));
        assert!(!l.allow(ip, 600, S));
        assert!(l.allow(ip, 400, S));
        // Half a second earns 500 bytes.
        assert!(l.allow(ip, 500, S + S / 2));
        assert!(!l.allow(ip, 1, S + S / 2));
        // A long quiet spell saves up one burst only.
        assert!(l.allow(ip, 1000, 100 * S));
        assert!(!l.allow(ip, 1, 100 * S));
    }

    #[test]
    fn a_prefix_shares_one_budget_over_its_addresses() {
        let mut l = limiter(0, 1000);
        assert!(l.allow("192.0.2.1".parse().unwrap(), 700, S));
        assert!(!l.allow("192.0.2.200".parse().unwrap(), 700, S));
        // Another /24 has its own.
        assert!(l.allow("192.0.3.1".parse().unwrap(), 700, S));
        assert_eq!(
            prefix_of("2001:db8:1:2ff:3::9".parse().unwrap()),
            "2001:db8:1:200::".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn each_client_behind_a_balancer_has_a_budget_of_its_own_and_no_prefix_budget() {
        let mut l = limiter(1000, 1000);
        let client = |port| SocketAddr::new("192.0.2.1".parse().unwrap(), port);
        let bucket = |l: &ResponseLimiter, a: SocketAddr| {
            l.keys.hash_one(a) as usize & (ADDRESS_BUCKETS - 1)
        };
        assert!(l.allow_balanced(client(40000), 900, S));
        assert!(!l.allow_balanced(client(40000), 200, S));
        // Another session of the balancer (in a bucket of its own) has its own budget.
        let other = (40001..=u16::MAX)
            .map(client)
            .find(|&c| bucket(&l, c) != bucket(&l, client(40000)))
            .unwrap();
        assert!(l.allow_balanced(other, 900, S));
        // Nothing was charged to the balancer's prefix (or any prefix).
        assert!(l.prefixes.iter().all(|b| b.refilled_ns == 0));
    }

    #[test]
    fn off_allows_everything_and_holds_no_tables() {
        let mut l = ResponseLimiter::new(ResponseLimit::OFF);
        assert!(l.allow("192.0.2.1".parse().unwrap(), usize::MAX, 0));
        assert_eq!(l.heap_bytes(), 0);
    }
}
