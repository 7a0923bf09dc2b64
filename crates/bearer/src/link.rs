//! The transmission model the emulator enforces, as pure functions.
//!
//! Each direction of an emulated link is a FIFO bottleneck followed by a delay line:
//!
//! 1. A datagram of `n` payload bytes arriving at time `a` starts serialising at
//!    `start = max(a, free)`, where `free` is the instant the previous datagram in the same
//!    direction finished (it queues behind earlier datagrams, as on a real serial link).
//! 2. It occupies the link for `(n + overhead) * 8 / rate` seconds: the `L/R` term of thesis
//!    Eq. 3.83, with `L` counted in bits including the per-datagram header overhead.
//!    The link is then free at `finish = start + (n + overhead) * 8 / rate`.
//! 3. It then experiences its own one-way traversal delay `T_traversal`, drawn per datagram,
//!    and is delivered at `finish + T_traversal` (the `T_traversal` term of Eq. 3.84, paid once
//!    per message and direction whatever its size).
//! 4. The delay line keeps the order of each direction ([`FifoLink::in_order`]): a datagram
//!    whose own draw would deliver it before its predecessor is delivered right after it.
//!
//! Why in order: every bearer of the catalogue delivers in sequence. A circuit-switched
//! call (GSM CSD) is a serial line; GPRS/EDGE's LLC and RLC in acknowledged mode, UMTS's
//! and LTE's RLC in acknowledged mode with PDCP in-sequence delivery (3GPP TS 25.322,
//! TS 36.322, TS 36.323), and NB-IoT's (the same LTE layers) reorder what the radio
//! delivers out of order before handing it up. The jitter of a traversal draw is the
//! scheduling, retransmission and sleep-cycle delay a datagram meets, and a later datagram
//! of the same direction meets it behind the earlier one, not past it. Drawing each
//! datagram's delay independently and letting it overtake made a multi-datagram flight
//! arrive reordered on the emulated cellular links, which no such link does (the
//! relay's `reorder` impairment still reorders on purpose). The thesis's handshake flights
//! are one datagram per direction per round trip, where this never matters.
//!
//! All instants are offsets from an arbitrary epoch (the relay's start).

use std::time::Duration;

/// Time a datagram occupies a link: `(payload + overhead) * 8 / rate` (thesis Eq. 3.83,
/// `T = L / R`). An infinite rate gives zero.
pub fn serialisation_time(payload_len: usize, overhead_bytes: usize, rate_bps: f64) -> Duration {
    // usize -> f64 is exact for any datagram size.
    let bits = (payload_len + overhead_bytes) as f64 * 8.0;
    let secs = bits / rate_bps;
    if secs.is_finite() && secs > 0.0 {
        Duration::from_secs_f64(secs)
    } else {
        Duration::ZERO
    }
}

/// When one datagram leaves the bottleneck and when it is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// The instant serialisation starts (arrival, or when the link became free).
    pub start: Duration,
    /// The instant the link is free for the next datagram.
    pub link_free_at: Duration,
    /// The instant the datagram reaches the far end: `link_free_at + traversal`, or its
    /// predecessor's delivery when that is later ([`FifoLink::in_order`]).
    pub deliver_at: Duration,
    /// How long the in-order delay line held it behind its predecessor (zero when its
    /// own traversal already delivered it after).
    pub held_for_order: Duration,
}

/// The FIFO-link-plus-delay-line model of the module documentation for one datagram.
///
/// `arrival` is when the datagram reached the link, `link_free_at` when the previous datagram
/// in the same direction finished serialising (zero for the first), `traversal` its one-way
/// traversal delay.
pub fn delivery_time(
    arrival: Duration,
    link_free_at: Duration,
    payload_len: usize,
    overhead_bytes: usize,
    rate_bps: f64,
    traversal: Duration,
) -> Delivery {
    let start = arrival.max(link_free_at);
    let finish = start + serialisation_time(payload_len, overhead_bytes, rate_bps);
    Delivery {
        start,
        link_free_at: finish,
        deliver_at: finish + traversal,
        held_for_order: Duration::ZERO,
    }
}

/// State of one direction of one emulated link: the rate, the overhead and the instant the
/// bottleneck becomes free.
#[derive(Debug, Clone, PartialEq)]
pub struct FifoLink {
    rate_bps: f64,
    overhead_bytes: usize,
    free_at: Duration,
    /// The last delivery of this direction: no later datagram is delivered before it.
    delivered_at: Duration,
}

impl FifoLink {
    /// An idle link.
    pub fn new(rate_bps: f64, overhead_bytes: usize) -> FifoLink {
        FifoLink {
            rate_bps,
            overhead_bytes,
            free_at: Duration::ZERO,
            delivered_at: Duration::ZERO,
        }
    }

    /// Puts one datagram on the link and returns its schedule; the link stays busy until
    /// the returned `link_free_at`.
    pub fn transmit(
        &mut self,
        arrival: Duration,
        payload_len: usize,
        traversal: Duration,
    ) -> Delivery {
        let delivery = delivery_time(
            arrival,
            self.free_at,
            payload_len,
            self.overhead_bytes,
            self.rate_bps,
            traversal,
        );
        self.free_at = delivery.link_free_at;
        delivery
    }

    /// Keeps the direction in order: `delivery` (of a datagram that reaches the far end)
    /// is delivered no earlier than the previous one so kept. A lost datagram is not
    /// passed here, so nothing waits for it.
    pub fn in_order(&mut self, mut delivery: Delivery) -> Delivery {
        if delivery.deliver_at < self.delivered_at {
            delivery.held_for_order = self.delivered_at - delivery.deliver_at;
            delivery.deliver_at = self.delivered_at;
        }
        self.delivered_at = delivery.deliver_at;
        delivery
    }

    /// The instant the link finishes its current backlog.
    pub fn free_at(&self) -> Duration {
        self.free_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> Duration {
        Duration::from_secs_f64(x / 1000.0)
    }

    fn assert_close(a: Duration, b: Duration) {
        let diff = a.abs_diff(b);
        assert!(diff <= Duration::from_nanos(2), "{a:?} vs {b:?}");
    }

    #[test]
    fn serialisation_is_l_over_r() {
        // 92 B payload + 28 B UDP/IPv4 = 960 bits at 9600 bit/s = 100 ms.
        assert_close(serialisation_time(92, 28, 9600.0), ms(100.0));
        // Thesis Eq. 4.2 charges a 64-byte ping at the 12 PM upload rate 10.5 kbit/s:
        // 512 bits / 10500 bit/s = 48.76 ms.
        assert_close(
            serialisation_time(64, 0, 10_500.0),
            Duration::from_secs_f64(512.0 / 10_500.0),
        );
        assert_eq!(serialisation_time(1500, 28, f64::INFINITY), Duration::ZERO);
        assert_eq!(serialisation_time(0, 0, 9600.0), Duration::ZERO);
    }

    #[test]
    fn idle_link_delivers_after_serialisation_plus_traversal() {
        let d = delivery_time(ms(1000.0), ms(0.0), 92, 28, 9600.0, ms(391.3));
        assert_close(d.start, ms(1000.0));
        assert_close(d.link_free_at, ms(1100.0));
        assert_close(d.deliver_at, ms(1491.3));
    }

    #[test]
    fn back_to_back_datagrams_queue_behind_each_other() {
        let mut link = FifoLink::new(9600.0, 28);
        // Three 92-byte datagrams arriving together: each takes 100 ms on the wire.
        let first = link.transmit(ms(0.0), 92, ms(400.0));
        let second = link.transmit(ms(0.0), 92, ms(400.0));
        let third = link.transmit(ms(10.0), 92, ms(0.0));
        assert_close(first.deliver_at, ms(500.0));
        assert_close(second.start, ms(100.0));
        assert_close(second.deliver_at, ms(600.0));
        // The third has no traversal delay and so overtakes nothing but still waits its turn.
        assert_close(third.start, ms(200.0));
        assert_close(third.deliver_at, ms(300.0));
        assert_close(link.free_at(), ms(300.0));
    }

    #[test]
    fn traversal_is_paid_per_datagram_not_per_byte() {
        // Eq. 3.84: doubling the data adds L/R, not another traversal.
        let small = delivery_time(ms(0.0), ms(0.0), 100, 28, 9600.0, ms(391.3));
        let large = delivery_time(ms(0.0), ms(0.0), 200, 28, 9600.0, ms(391.3));
        assert_close(
            large.deliver_at - small.deliver_at,
            serialisation_time(100, 0, 9600.0),
        );
    }

    #[test]
    fn a_later_datagram_is_never_delivered_before_an_earlier_one() {
        let mut link = FifoLink::new(9600.0, 28);
        // The second's short traversal would deliver it 300 ms before the first.
        let first = link.transmit(ms(0.0), 92, ms(500.0));
        let first = link.in_order(first);
        let second = link.transmit(ms(0.0), 92, ms(100.0));
        assert_close(second.deliver_at, ms(300.0));
        let second = link.in_order(second);
        assert_close(second.deliver_at, ms(600.0));
        assert_close(second.held_for_order, ms(300.0));
        assert_eq!(first.held_for_order, Duration::ZERO);
        // A datagram that arrives later on its own is not held.
        let third = link.transmit(ms(0.0), 92, ms(500.0));
        let third = link.in_order(third);
        assert_close(third.deliver_at, ms(800.0));
        assert_eq!(third.held_for_order, Duration::ZERO);
    }

    #[test]
    fn a_link_idle_again_does_not_carry_old_backlog() {
        let mut link = FifoLink::new(9600.0, 28);
        link.transmit(ms(0.0), 92, ms(0.0));
        let later = link.transmit(ms(5000.0), 92, ms(0.0));
        assert_close(later.start, ms(5000.0));
        assert_close(later.deliver_at, ms(5100.0));
    }
}
