//! The peer table: per source address, the connections it holds, and the two deadline
//! heaps that expiry and eviction read.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::SocketAddr;

use crate::handshake::ServerConnection;
use crate::keyed_map::KeyedMap;

/// One connection state held for an address.
pub(super) struct Peer {
    pub conn: Box<ServerConnection>,
    /// Unique per connection: tells a heap item of this connection from a stale one of
    /// an earlier connection of the same address.
    pub generation: u64,
    pub created_ns: u64,
    pub last_activity_ns: u64,
    /// Hash of the ClientHello datagram that created the connection (0 if it was not
    /// a ClientHello): a copy of it is a retransmission, another ClientHello a new
    /// handshake.
    pub hello_hash: u64,
    /// Copies of that ClientHello answered again from the retransmission cache.
    pub hello_reanswers: u32,
    /// What this entry contributes to the gauges, to update them incrementally.
    pub counted_half_open: bool,
    pub counted_established: bool,
    pub counted_bytes: usize,
}

/// The connections of one address: at most one established, beside it the handshakes
/// that address has started since (a forged ClientHello lands here, and never displaces
/// the established connection). The first connection is inline, so an address with one
/// connection, the usual case, costs no allocation besides its connection.
pub(super) struct Slot {
    first: Peer,
    more: Vec<Peer>,
}

impl Slot {
    pub fn new(peer: Peer) -> Self {
        Slot {
            first: peer,
            more: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        1 + self.more.len()
    }

    pub fn get(&self, i: usize) -> &Peer {
        if i == 0 {
            &self.first
        } else {
            &self.more[i - 1]
        }
    }

    pub fn get_mut(&mut self, i: usize) -> &mut Peer {
        if i == 0 {
            &mut self.first
        } else {
            &mut self.more[i - 1]
        }
    }

    pub fn push(&mut self, peer: Peer) {
        self.more.push(peer);
    }

    /// Removes connection `i` and returns it, unless it is the last one (the caller then
    /// removes the whole slot).
    pub fn remove(&mut self, i: usize) -> Option<Peer> {
        if self.more.is_empty() {
            return None;
        }
        if i == 0 {
            let next = self.more.remove(0);
            Some(std::mem::replace(&mut self.first, next))
        } else {
            Some(self.more.remove(i - 1))
        }
    }

    pub fn position(&self, pred: impl Fn(&Peer) -> bool) -> Option<usize> {
        (0..self.len()).find(|&i| pred(self.get(i)))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Peer> {
        std::iter::once(&self.first).chain(self.more.iter())
    }

    /// Whether the address holds an established connection: it has proved, with a
    /// verified Finished, that it reads what we send there.
    pub fn verified(&self) -> bool {
        self.iter().any(|p| p.conn.is_established())
    }
}

/// (when to look at the entry again, its generation, its address), earliest first.
pub(super) type Deadlines = BinaryHeap<Reverse<(u64, u64, SocketAddr)>>;

pub(super) struct Table {
    pub slots: KeyedMap<SocketAddr, Slot>,
    /// Connections held, over all addresses.
    pub connections: usize,
    /// Half-open handshakes by their handshake deadline (from their first datagram).
    pub handshakes: Deadlines,
    /// Established connections by idle deadline. Filed lazily: an item's deadline is
    /// never later than the connection's true one (activity only moves it later), so the
    /// earliest item whose deadline is still true is the least recently active peer.
    pub idle: Deadlines,
}

/// Bytes one table entry costs besides the connection's heap: the map slot (key, slot,
/// control byte, hashbrown's 7/8 load factor), the boxed connection and two heap items.
pub fn entry_overhead_bytes() -> usize {
    let slot = std::mem::size_of::<SocketAddr>() + std::mem::size_of::<Slot>() + 1;
    slot * 8 / 7
        + std::mem::size_of::<ServerConnection>()
        + 2 * std::mem::size_of::<Reverse<(u64, u64, SocketAddr)>>()
}

impl Table {
    /// A table with room for `peers` connections reserved up front, if the allocator
    /// grants it; otherwise it grows as connections come (an operator's bound is checked
    /// against the memory available before it gets here: this only keeps a library
    /// caller's huge bound from aborting the process).
    pub fn with_capacity(peers: usize) -> Self {
        let mut t = Table {
            slots: KeyedMap::default(),
            connections: 0,
            handshakes: BinaryHeap::new(),
            idle: BinaryHeap::new(),
        };
        let reserved = t.slots.try_reserve(peers).is_ok()
            && t.handshakes.try_reserve(peers).is_ok()
            && t.idle.try_reserve(peers).is_ok();
        if !reserved {
            t.slots = KeyedMap::default();
            t.handshakes = BinaryHeap::new();
            t.idle = BinaryHeap::new();
        }
        t
    }

    /// Where connection `generation` of `addr` sits, if it is still held.
    pub fn find(&self, addr: &SocketAddr, generation: u64) -> Option<usize> {
        self.slots
            .get(addr)?
            .position(|p| p.generation == generation)
    }

    pub fn peer(&self, addr: &SocketAddr, i: usize) -> &Peer {
        self.slots[addr].get(i)
    }

    /// Removes connection `i` of `addr`, and the slot with its last connection.
    pub fn remove(&mut self, addr: &SocketAddr, i: usize) -> Option<Peer> {
        let slot = self.slots.get_mut(addr)?;
        let removed = match slot.remove(i) {
            Some(p) => Some(p),
            None => self.slots.remove(addr).map(|s| s.first),
        };
        if removed.is_some() {
            self.connections -= 1;
        }
        removed
    }
}
