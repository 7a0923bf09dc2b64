//! Response-rate limiting toward unverified addresses, as DNS servers do it (RRL), with
//! credit for addresses that have proven they read our answers.
//!
//! Why: a ClientHello of 38 bytes with a forged source makes the server send its first
//! flight, up to 1174 bytes (rsa3072), to whoever owns that source. The gateway cannot
//! tell a forged source from a real one until the peer has proved it reads our answers
//! (its Finished verified), so every answer of a handshake that has not reached that
//! point is charged to a byte budget per second toward the destination address and
//! toward its prefix (/24 for IPv4, /56 for IPv6: the defaults of BIND's RRL, whose
//! design this follows). An answer over budget is not sent (counted), as RRL drops.
//!
//! **Proof earns credit.** A completed handshake proves that its address reads what we
//! send it. Each one earns the address [`CREDIT_PER_HANDSHAKE`] bytes of credit (at most
//! [`MAX_CREDIT`] held, lapsing [`ResponseLimiter::new`]'s proof lifetime, the idle
//! time-out, after the address's last completion), and an unverified answer toward an
//! address with credit is paid from it instead of from the two budgets. A client, or a
//! carrier-grade NAT with thousands of handsets behind one address, that completes its
//! handshakes earns more than each one costs and is never throttled however fast it
//! comes back, from whatever port. A forger gains nothing new: toward an address that
//! never completed a handshake the budgets bind as before, and toward one that did, what
//! it can reflect beyond the budgets is bounded by the credit that address earned itself,
//! [`CREDIT_PER_HANDSHAKE`] per handshake it completed (docs/security.md).
//!
//! **One limiter per gateway.** The buckets sit in [`SHARDS`] mutex-guarded shards, so
//! the workers of a gateway share one limiter (through an `Arc`) and a forger who varies
//! its source port, which the kernel hashes to different workers, meets one budget per
//! address and prefix, not one per worker. An address's bucket and proof are in the
//! shard its keyed hash picks, its prefix's bucket in the shard the prefix's hash picks;
//! a call takes at most those two locks, lower index first, for a few dozen
//! instructions.
//!
//! The tables are fixed at start and indexed by a keyed hash: no allocation while
//! serving, and an attacker cannot aim at a bucket without the process's hash keys. Two
//! addresses sharing a bucket only share a budget, which makes the limit stricter, never
//! looser. A proof is stored with its address and matched exactly, so a collision never
//! lends one address another's credit; a newer proof may take an older one's place in
//! its set of [`PROOF_WAYS`], and the older address falls back to the budgets.

use std::hash::BuildHasher;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Mutex, MutexGuard};

/// Shards of the tables (a power of two), each behind its own lock.
pub const SHARDS: usize = 16;
/// Buckets per table over all shards (powers of two, multiples of [`SHARDS`]).
const ADDRESS_BUCKETS: usize = 4096;
const PREFIX_BUCKETS: usize = 1024;
/// Proof records over all shards, in sets of [`PROOF_WAYS`].
const PROOFS: usize = 16_384;
/// Records one address's proof may occupy: the set its hash picks.
pub const PROOF_WAYS: usize = 4;
/// Bytes of credit one completed handshake earns its address: three first flights of
/// the largest case (1174 B, rsa3072 without a certificate request), so a client that
/// completes its handshakes earns more than each costs, however fast it comes back.
pub const CREDIT_PER_HANDSHAKE: u64 = 4096;
/// Most credit an address holds: what it can have in flight at once beyond the budgets,
/// and what a forger spoofing it could spend in one go.
pub const MAX_CREDIT: u64 = 64 * CREDIT_PER_HANDSHAKE;

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
            // Workers read the clock at different moments: a `now` behind the last
            // refill earns nothing (and never moves the refill time back).
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

/// An address that completed a handshake, and the credit that earned it.
#[derive(Debug, Clone, Copy, Default)]
struct Proof {
    /// `None`: an empty record.
    ip: Option<IpAddr>,
    /// The proof lapses at this time (monotonic ns).
    until_ns: u64,
    /// Bytes of unverified answers it may still receive beyond the budgets.
    credit: u64,
}

/// One shard's share of the three tables.
struct Shard {
    addresses: Box<[Bucket]>,
    prefixes: Box<[Bucket]>,
    proofs: Box<[Proof]>,
}

impl Shard {
    fn new(on: bool) -> Self {
        let size = |n: usize| if on { n / SHARDS } else { 0 };
        Shard {
            addresses: vec![Bucket::default(); size(ADDRESS_BUCKETS)].into_boxed_slice(),
            prefixes: vec![Bucket::default(); size(PREFIX_BUCKETS)].into_boxed_slice(),
            proofs: vec![Proof::default(); size(PROOFS)].into_boxed_slice(),
        }
    }

    /// The records of the set an address hashes to.
    fn proof_set(&mut self, h: u64) -> &mut [Proof] {
        let sets = self.proofs.len() / PROOF_WAYS;
        let first = slot(h, sets) * PROOF_WAYS;
        &mut self.proofs[first..first + PROOF_WAYS]
    }
}

/// Where a keyed hash points: its low bits pick the shard, higher bits the slot in it.
fn shard_of(h: u64) -> usize {
    h as usize & (SHARDS - 1)
}

fn slot(h: u64, len: usize) -> usize {
    (h >> 16) as usize & (len - 1)
}

/// Per-address and per-prefix byte budgets, and the credit of proven addresses, shared
/// by every endpoint (worker) that holds it.
pub struct ResponseLimiter {
    limit: ResponseLimit,
    /// How long a completed handshake keeps its address proven.
    proof_ns: u64,
    keys: std::collections::hash_map::RandomState,
    shards: Box<[Mutex<Shard>]>,
}

impl std::fmt::Debug for ResponseLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseLimiter")
            .field("limit", &self.limit)
            .field("proof_ns", &self.proof_ns)
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
    /// A limiter with `limit`'s budgets, whose proofs last `proof_ns` after an address's
    /// last completed handshake (the endpoint's idle time-out).
    pub fn new(limit: ResponseLimit, proof_ns: u64) -> Self {
        let on = !limit.is_off();
        ResponseLimiter {
            limit,
            proof_ns,
            keys: Default::default(),
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::new(on))).collect(),
        }
    }

    pub fn limit(&self) -> ResponseLimit {
        self.limit
    }

    /// A shard's lock. A worker that panicked while holding it left plain counters
    /// behind, at worst one answer's charge short: the limiter goes on with them.
    fn lock(&self, shard: usize) -> MutexGuard<'_, Shard> {
        self.shards[shard]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The address's shard and, if another, the prefix's, locked lower index first.
    fn lock_pair(
        &self,
        address: usize,
        prefix: usize,
    ) -> (MutexGuard<'_, Shard>, Option<MutexGuard<'_, Shard>>) {
        if address == prefix {
            (self.lock(address), None)
        } else if address < prefix {
            let a = self.lock(address);
            (a, Some(self.lock(prefix)))
        } else {
            let p = self.lock(prefix);
            (self.lock(address), Some(p))
        }
    }

    /// Whether `bytes` may be sent to `ip` at `now_ns`. They are paid from the address's
    /// credit if it has enough, and otherwise charged to both budgets if both have
    /// enough. An answer is sent whole or not at all.
    pub fn allow(&self, ip: IpAddr, bytes: usize, now_ns: u64) -> bool {
        if self.limit.is_off() {
            return true;
        }
        let bytes = bytes as u64;
        let (ha, hp) = (self.keys.hash_one(ip), self.keys.hash_one(prefix_of(ip)));
        let (mut address_shard, mut prefix_shard) = self.lock_pair(shard_of(ha), shard_of(hp));
        let shard = &mut *address_shard;
        if let Some(proof) = shard
            .proof_set(ha)
            .iter_mut()
            .find(|p| p.ip == Some(ip) && p.until_ns > now_ns && p.credit >= bytes)
        {
            proof.credit -= bytes;
            return true;
        }
        let a = slot(ha, shard.addresses.len());
        let (address, prefix) = match prefix_shard.as_deref_mut() {
            Some(other) => {
                let p = slot(hp, other.prefixes.len());
                (&mut shard.addresses[a], &mut other.prefixes[p])
            }
            None => {
                let p = slot(hp, shard.prefixes.len());
                (&mut shard.addresses[a], &mut shard.prefixes[p])
            }
        };
        let (ra, rp, burst) = (
            self.limit.address_bytes_per_s,
            self.limit.prefix_bytes_per_s,
            self.limit.burst_s,
        );
        if ra > 0 {
            address.refill(ra, burst, now_ns);
        }
        if rp > 0 {
            prefix.refill(rp, burst, now_ns);
        }
        let fits = (ra == 0 || address.tokens >= bytes) && (rp == 0 || prefix.tokens >= bytes);
        if fits {
            if ra > 0 {
                address.tokens -= bytes;
            }
            if rp > 0 {
                prefix.tokens -= bytes;
            }
        }
        fits
    }

    /// [`ResponseLimiter::allow`] for a client behind a balancer, seen as the balancer's
    /// source socket `via`: charged to the address budget keyed by that socket (one
    /// balancer session per client address and port), never to the prefix budget, which
    /// every client behind the balancer would share, and never paid from credit, which
    /// the balancer's address would hold for all of them. The balancer bounds how many
    /// sessions one client address and one client prefix may hold (docs/security.md).
    pub fn allow_balanced(&self, via: SocketAddr, bytes: usize, now_ns: u64) -> bool {
        let rate = self.limit.address_bytes_per_s;
        if rate == 0 {
            return true;
        }
        let h = self.keys.hash_one(via);
        let mut shard = self.lock(shard_of(h));
        let a = slot(h, shard.addresses.len());
        let bucket = &mut shard.addresses[a];
        bucket.refill(rate, self.limit.burst_s, now_ns);
        let fits = bucket.tokens >= bytes as u64;
        if fits {
            bucket.tokens -= bytes as u64;
        }
        fits
    }

    /// A handshake from `ip` completed at `now_ns`: the address is proven for the proof
    /// lifetime from now and earns [`CREDIT_PER_HANDSHAKE`] (up to [`MAX_CREDIT`]). A new
    /// proof takes an empty or lapsed record of its set, else the one that lapses first.
    pub fn prove(&self, ip: IpAddr, now_ns: u64) {
        if self.limit.is_off() {
            return;
        }
        let h = self.keys.hash_one(ip);
        let until_ns = now_ns.saturating_add(self.proof_ns);
        let mut shard = self.lock(shard_of(h));
        let set = shard.proof_set(h);
        let i = set
            .iter()
            .position(|p| p.ip == Some(ip))
            .unwrap_or_else(|| {
                (0..PROOF_WAYS)
                    .min_by_key(|&i| {
                        if set[i].ip.is_none() {
                            0
                        } else {
                            set[i].until_ns
                        }
                    })
                    .unwrap_or(0)
            });
        let proof = &mut set[i];
        if proof.ip != Some(ip) || proof.until_ns <= now_ns {
            // A new proof, or a lapsed one: earlier credit is gone with it.
            *proof = Proof {
                ip: Some(ip),
                until_ns: 0,
                credit: 0,
            };
        }
        proof.until_ns = proof.until_ns.max(until_ns);
        proof.credit = proof
            .credit
            .saturating_add(CREDIT_PER_HANDSHAKE)
            .min(MAX_CREDIT);
    }

    /// The credit `ip` holds at `now_ns` (0 unless proven).
    pub fn credit(&self, ip: IpAddr, now_ns: u64) -> u64 {
        if self.limit.is_off() {
            return 0;
        }
        let h = self.keys.hash_one(ip);
        let mut shard = self.lock(shard_of(h));
        shard
            .proof_set(h)
            .iter()
            .find(|p| p.ip == Some(ip) && p.until_ns > now_ns)
            .map_or(0, |p| p.credit)
    }

    /// Heap bytes of the tables (fixed at start).
    pub fn heap_bytes(&self) -> usize {
        let per_shard = (ADDRESS_BUCKETS + PREFIX_BUCKETS) / SHARDS * std::mem::size_of::<Bucket>()
            + PROOFS / SHARDS * std::mem::size_of::<Proof>();
        if self.limit.is_off() {
            0
        } else {
            SHARDS * per_shard
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn limiter(address: u64, prefix: u64) -> ResponseLimiter {
        ResponseLimiter::new(
            ResponseLimit {
                address_bytes_per_s: address,
                prefix_bytes_per_s: prefix,
                burst_s: 1,
            },
            60 * S,
        )
    }

    #[test]
    fn an_address_gets_its_budget_per_second_and_no_more() {
        let l = limiter(1000, 0);
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
        let l = limiter(0, 1000);
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
        let l = limiter(1000, 1000);
        let client = |port| SocketAddr::new("192.0.2.1".parse().unwrap(), port);
        let bucket = |l: &ResponseLimiter, a: SocketAddr| {
            let h = l.keys.hash_one(a);
            (shard_of(h), slot(h, ADDRESS_BUCKETS / SHARDS))
        };
        assert!(l.allow_balanced(client(40000), 900, S));
        assert!(!l.allow_balanced(client(40000), 200, S));
        // Another session of the balancer (in a bucket of its own) has its own budget.
        let other = (40001..=u16::MAX)
            .map(client)
            .find(|&c| bucket(&l, c) != bucket(&l, client(40000)))
            .unwrap();
        assert!(l.allow_balanced(other, 900, S));
        // Nothing was charged to any prefix.
        for shard in 0..SHARDS {
            assert!(l.lock(shard).prefixes.iter().all(|b| b.refilled_ns == 0));
        }
    }

    #[test]
    fn off_allows_everything_and_holds_no_tables() {
        let l = ResponseLimiter::new(ResponseLimit::OFF, 60 * S);
        assert!(l.allow("192.0.2.1".parse().unwrap(), usize::MAX, 0));
        l.prove("192.0.2.1".parse().unwrap(), 0);
        assert_eq!(l.credit("192.0.2.1".parse().unwrap(), 0), 0);
        assert_eq!(l.heap_bytes(), 0);
    }

    #[test]
    fn a_completed_handshake_earns_credit_spent_before_the_budgets() {
        let l = limiter(1000, 1000);
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        assert!(l.allow(ip, 1000, S));
        assert!(!l.allow(ip, 1, S));
        l.prove(ip, S);
        assert_eq!(l.credit(ip, S), CREDIT_PER_HANDSHAKE);
        // Paid from credit: neither spent budget is asked.
        assert!(l.allow(ip, 3000, S));
        assert_eq!(l.credit(ip, S), CREDIT_PER_HANDSHAKE - 3000);
        // Credit too small for an answer leaves it to the budgets (spent here), whole.
        assert!(!l.allow(ip, 2000, S));
        assert_eq!(l.credit(ip, S), CREDIT_PER_HANDSHAKE - 3000);
        // Another address of the prefix has no credit of its own.
        assert!(!l.allow("192.0.2.8".parse().unwrap(), 1, S));
    }

    #[test]
    fn credit_is_capped_and_lapses_with_the_proof() {
        let l = limiter(1000, 0);
        let ip: IpAddr = "2001:db8::1".parse().unwrap();
        for _ in 0..1000 {
            l.prove(ip, S);
        }
        assert_eq!(l.credit(ip, S), MAX_CREDIT);
        // A completion later renews the proof without topping the cap.
        l.prove(ip, 30 * S);
        assert_eq!(l.credit(ip, 61 * S), MAX_CREDIT);
        assert_eq!(l.credit(ip, 90 * S), 0);
        assert!(!l.allow(ip, 1001, 90 * S));
        // Proven again after it lapsed: the old credit is not restored.
        l.prove(ip, 100 * S);
        assert_eq!(l.credit(ip, 100 * S), CREDIT_PER_HANDSHAKE);
    }

    #[test]
    fn proofs_are_exact_and_a_full_set_gives_way_to_the_newest() {
        let l = limiter(1000, 0);
        // More proven addresses than the tables hold: each new one is recorded, and an
        // address that proved nothing has no credit whatever shares its records.
        let ips: Vec<IpAddr> = (0..2 * PROOFS as u32)
            .map(|i| IpAddr::from((0x0a00_0000 + i).to_be_bytes()))
            .collect();
        for (k, ip) in ips.iter().enumerate() {
            l.prove(*ip, S + k as u64);
            assert_eq!(l.credit(*ip, S + k as u64), CREDIT_PER_HANDSHAKE);
        }
        let stranger: IpAddr = "198.51.100.1".parse().unwrap();
        assert_eq!(l.credit(stranger, 2 * S), 0);
        assert!(!l.allow(stranger, 1001, 2 * S));
    }

    #[test]
    fn workers_sharing_the_limiter_share_its_budgets() {
        let l = std::sync::Arc::new(limiter(1000, 0));
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        let granted: u64 = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    let l = l.clone();
                    scope.spawn(move || (0..100).filter(|_| l.allow(ip, 10, S)).count() as u64)
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        // 4 x 100 asks of 10 bytes against one budget of 1000: exactly 100 granted.
        assert_eq!(granted, 100);
    }
}
