//! The reflection bound of the unsecured WAP ports: toward an address that has not proven
//! it reads our answers, the gateway sends at most `factor` times the bytes it received
//! from that address (RFC 9000 §8.1's anti-amplification rule, which allows 3x).
//!
//! Why: a connectionless WSP Get of 35 bytes with a forged source makes the gateway send
//! a whole deck, 20 KB, to whoever owns that source. Unlike the WTLS limiter's budget per
//! second, which bounds what reaches a victim over time, a ledger of bytes in and out
//! bounds the amplification itself, whatever the attacker's rate: every byte the gateway
//! sends toward an unproven address was paid for by `1 / factor` bytes that arrived from
//! it. A completed WTLS handshake (the peer's Finished verified), or on the connection-mode
//! port a WTP exchange the initiator finished (a TID verification confirmed, a class 2
//! Result acknowledged), proves the address for [`ReflectionLimit::proof_ns`] after the
//! last proof; docs/security.md says what each proof is worth.
//!
//! The ledger is a fixed table of exact entries in sets of [`WAYS`], indexed by a keyed
//! hash: no allocation while serving, and a newcomer takes the place of its set's least
//! recently seen entry (unproven ones first). An evicted address starts again from
//! nothing received and nothing sent, so the bound holds over each life of an entry, and
//! so over all of them.

use std::hash::BuildHasher;
use std::net::IpAddr;
use std::sync::Mutex;

/// Entries one address may land in: the set its hash picks.
pub const WAYS: usize = 4;

/// The bound. A factor of 0 turns it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReflectionLimit {
    /// Most bytes sent toward an unproven address per byte received from it.
    pub factor: u64,
    /// Addresses the ledger holds (rounded up to a multiple of [`WAYS`]).
    pub addresses: usize,
    /// How long a proof lasts after the address's last one (monotonic ns).
    pub proof_ns: u64,
    /// Whether a WTP exchange counts as a proof (a confirmed TID verification, an
    /// acknowledged Result). WTP carries nothing the gateway chose, so a blind forger can
    /// finish one; without it only a WTLS handshake proves an address.
    pub wtp_proves: bool,
}

impl ReflectionLimit {
    pub const OFF: ReflectionLimit = ReflectionLimit {
        factor: 0,
        addresses: WAYS,
        proof_ns: 0,
        wtp_proves: true,
    };
}

impl Default for ReflectionLimit {
    /// 2x, 16 384 addresses, proofs valid 10 minutes after the last, WTP exchanges
    /// accepted as proofs (what WAP clients without WTLS need).
    fn default() -> Self {
        ReflectionLimit {
            factor: 2,
            addresses: 16_384,
            proof_ns: 600_000_000_000,
            wtp_proves: true,
        }
    }
}

/// What the guard did, for the port reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReflectionStats {
    /// Datagrams not sent: over an unproven address's allowance.
    pub withheld: u64,
    pub withheld_bytes: u64,
    /// Answers replaced by a small refusal because the page did not fit the allowance.
    pub refused_pages: u64,
    /// Proofs recorded (each WTLS handshake, TID confirmation, acknowledged Result).
    pub proofs: u64,
    /// Ledger entries that made room for another address.
    pub evicted: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    ip: Option<IpAddr>,
    received: u64,
    sent: u64,
    /// Proven until then (monotonic ns); 0: never proven.
    proven_until: u64,
    last_ns: u64,
}

impl Entry {
    fn proven(&self, now_ns: u64) -> bool {
        self.proven_until > now_ns
    }
}

#[derive(Debug)]
struct Ledger {
    entries: Vec<Entry>,
    stats: ReflectionStats,
}

/// The ledger, shared by the ports of one gateway.
#[derive(Debug)]
pub struct ReflectionGuard {
    limit: ReflectionLimit,
    hasher: std::hash::RandomState,
    ledger: Mutex<Ledger>,
}

/// What may still be sent toward an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowance {
    /// Proven, or the bound is off.
    Unlimited,
    Bytes(u64),
}

impl Allowance {
    pub fn fits(self, bytes: usize) -> bool {
        match self {
            Allowance::Unlimited => true,
            Allowance::Bytes(b) => bytes as u64 <= b,
        }
    }
}

impl ReflectionGuard {
    pub fn new(limit: ReflectionLimit) -> ReflectionGuard {
        let sets = limit.addresses.max(1).div_ceil(WAYS);
        ReflectionGuard {
            limit,
            hasher: std::hash::RandomState::new(),
            ledger: Mutex::new(Ledger {
                entries: vec![Entry::default(); sets * WAYS],
                stats: ReflectionStats::default(),
            }),
        }
    }

    pub fn limit(&self) -> ReflectionLimit {
        self.limit
    }

    pub fn stats(&self) -> ReflectionStats {
        self.ledger.lock().map(|l| l.stats).unwrap_or_default()
    }

    /// Bytes of a datagram from `ip`.
    pub fn received(&self, ip: IpAddr, bytes: usize, now_ns: u64) {
        if self.limit.factor == 0 {
            return;
        }
        self.with_entry(ip, now_ns, |e, _| {
            e.received = e.received.saturating_add(bytes as u64)
        });
    }

    /// What may still be sent toward `ip`.
    pub fn allowance(&self, ip: IpAddr, now_ns: u64) -> Allowance {
        if self.limit.factor == 0 {
            return Allowance::Unlimited;
        }
        let factor = self.limit.factor;
        self.with_entry(ip, now_ns, |e, _| {
            if e.proven(now_ns) {
                Allowance::Unlimited
            } else {
                Allowance::Bytes(e.received.saturating_mul(factor).saturating_sub(e.sent))
            }
        })
    }

    /// Charges a datagram of `bytes` toward `ip`; false: it must not be sent (counted).
    pub fn charge(&self, ip: IpAddr, bytes: usize, now_ns: u64) -> bool {
        if self.limit.factor == 0 {
            return true;
        }
        let factor = self.limit.factor;
        self.with_entry(ip, now_ns, |e, stats| {
            let allowed = e.proven(now_ns)
                || e.sent.saturating_add(bytes as u64) <= e.received.saturating_mul(factor);
            if allowed {
                e.sent = e.sent.saturating_add(bytes as u64);
            } else {
                stats.withheld += 1;
                stats.withheld_bytes += bytes as u64;
            }
            allowed
        })
    }

    /// Records that `ip` proved it reads what the gateway sends it.
    pub fn prove(&self, ip: IpAddr, now_ns: u64) {
        if self.limit.factor == 0 {
            return;
        }
        let until = now_ns.saturating_add(self.limit.proof_ns);
        self.with_entry(ip, now_ns, |e, stats| {
            e.proven_until = until;
            stats.proofs += 1;
        });
    }

    /// Counts an answer replaced by a refusal that fits the allowance.
    pub fn count_refused_page(&self) {
        if let Ok(mut l) = self.ledger.lock() {
            l.stats.refused_pages += 1;
        }
    }

    /// Runs `f` on `ip`'s entry, made (by eviction if need be) when it has none.
    fn with_entry<T>(
        &self,
        ip: IpAddr,
        now_ns: u64,
        f: impl FnOnce(&mut Entry, &mut ReflectionStats) -> T,
    ) -> T {
        let mut ledger = match self.ledger.lock() {
            Ok(l) => l,
            Err(poisoned) => poisoned.into_inner(),
        };
        let sets = ledger.entries.len() / WAYS;
        let set = (self.hasher.hash_one(ip) as usize) % sets;
        let Ledger { entries, stats } = &mut *ledger;
        let ways = &mut entries[set * WAYS..(set + 1) * WAYS];
        let i = match ways.iter().position(|e| e.ip == Some(ip)) {
            Some(i) => i,
            None => {
                let i = victim(ways, now_ns);
                if ways[i].ip.is_some() {
                    stats.evicted += 1;
                }
                ways[i] = Entry {
                    ip: Some(ip),
                    ..Entry::default()
                };
                i
            }
        };
        ways[i].last_ns = now_ns;
        f(&mut ways[i], stats)
    }
}

/// The way a newcomer takes: an empty one, else the least recently seen unproven one,
/// else the least recently seen.
fn victim(ways: &[Entry], now_ns: u64) -> usize {
    if let Some(i) = ways.iter().position(|e| e.ip.is_none()) {
        return i;
    }
    let oldest = |proven: bool| {
        ways.iter()
            .enumerate()
            .filter(|(_, e)| e.proven(now_ns) == proven)
            .min_by_key(|(_, e)| e.last_ns)
            .map(|(i, _)| i)
    };
    oldest(false).or_else(|| oldest(true)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn an_unproven_address_gets_at_most_factor_times_what_it_sent() {
        let g = ReflectionGuard::new(ReflectionLimit::default());
        g.received(ip(2), 35, 1);
        assert_eq!(g.allowance(ip(2), 1), Allowance::Bytes(70));
        assert!(g.charge(ip(2), 60, 2));
        assert!(!g.charge(ip(2), 11, 3), "70 bytes would be over 2 x 35");
        assert!(g.charge(ip(2), 10, 3));
        assert_eq!(g.allowance(ip(2), 4), Allowance::Bytes(0));
        // Another address has its own ledger: nothing received, nothing allowed.
        assert!(!g.charge(ip(3), 1, 4));
        let s = g.stats();
        assert_eq!((s.withheld, s.withheld_bytes), (2, 12));
    }

    #[test]
    fn a_proof_lifts_the_bound_until_it_lapses() {
        let limit = ReflectionLimit {
            proof_ns: 100,
            ..ReflectionLimit::default()
        };
        let g = ReflectionGuard::new(limit);
        g.prove(ip(2), 10);
        assert!(g.charge(ip(2), 20_000, 50));
        assert_eq!(g.allowance(ip(2), 109), Allowance::Unlimited);
        // Lapsed: back to the ledger, which the large answer already spent.
        assert_eq!(g.allowance(ip(2), 110), Allowance::Bytes(0));
        assert!(!g.charge(ip(2), 1, 111));
    }

    #[test]
    fn off_allows_everything_and_keeps_nothing() {
        let g = ReflectionGuard::new(ReflectionLimit::OFF);
        assert!(g.charge(ip(2), 1 << 20, 1));
        assert_eq!(g.allowance(ip(2), 1), Allowance::Unlimited);
        assert_eq!(g.stats(), ReflectionStats::default());
    }

    #[test]
    fn a_full_ledger_evicts_and_the_bound_holds_across_lives() {
        // One set of four: a fifth address evicts the least recently seen unproven one.
        let g = ReflectionGuard::new(ReflectionLimit {
            addresses: WAYS,
            ..ReflectionLimit::default()
        });
        g.prove(ip(1), 0);
        let (mut received, mut sent) = (0u64, 0u64);
        for round in 0..50u64 {
            for last in 2..=9u8 {
                let now = round * 10 + u64::from(last);
                g.received(ip(last), 35, now);
                received += 35;
                for _ in 0..5 {
                    if g.charge(ip(last), 30, now) {
                        sent += 30;
                    }
                }
            }
        }
        assert!(sent <= 2 * received, "{sent} sent for {received} received");
        assert!(g.stats().evicted > 0);
        // The proven address was never the one evicted.
        assert_eq!(g.allowance(ip(1), 600), Allowance::Unlimited);
    }
}
