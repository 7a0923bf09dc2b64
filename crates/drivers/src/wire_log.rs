//! The record of a handshake's datagrams as its client saw them, wherever it ran: in
//! memory through the spine's [`Pair`](wtlsperf_spine::pair::Pair) or over UDP through an
//! emulated bearer. Flights (Eq. 3.84's unit) and byte counts are read from this one
//! record in one way, so a shape measured in memory and one measured on a bearer compare
//! datagram for datagram.

use std::time::Duration;

use wtlsperf_models::transmission::{group_flights, Flight};
use wtlsperf_spine::pair::{Fate, Logged};

/// One datagram the client sent (`up`) or received, in the order the client saw them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireDatagram {
    /// Sent by the client (up) or received by it (down).
    pub up: bool,
    /// UDP payload bytes.
    pub bytes: usize,
    /// Since the client's first datagram. Zero in memory: the pair keeps no time of its
    /// own (its runs are priced by the models, not timed on a link).
    pub at: Duration,
}

impl WireDatagram {
    /// A datagram whose time is not known (in memory).
    pub fn untimed(up: bool, bytes: usize) -> Self {
        WireDatagram {
            up,
            bytes,
            at: Duration::ZERO,
        }
    }

    /// A datagram of the spine's pair log.
    pub fn from_pair(d: &Logged) -> Self {
        WireDatagram::untimed(d.up(), d.bytes)
    }
}

/// Every datagram of a pair's log, the ones its hook dropped included: what each side
/// sent.
pub fn of_pair(log: &[Logged]) -> Vec<WireDatagram> {
    log.iter().map(WireDatagram::from_pair).collect()
}

/// The datagrams of a pair's log that its hook let through: what crossed the link.
pub fn delivered_of_pair(log: &[Logged]) -> Vec<WireDatagram> {
    log.iter()
        .filter(|d| d.fate != Fate::Drop)
        .map(WireDatagram::from_pair)
        .collect()
}

/// Groups a log into flights (runs in one direction), each one traversal.
pub fn flights_of(log: &[WireDatagram]) -> Vec<Flight> {
    group_flights(log.iter().map(|d| (d.up, d.bytes)))
}

/// Payload bytes both ways.
pub fn bytes_of(log: &[WireDatagram]) -> usize {
    log.iter().map(|d| d.bytes).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtlsperf_models::transmission::Direction;
    use wtlsperf_spine::pair::Direction as Way;

    fn d(up: bool, bytes: usize) -> WireDatagram {
        WireDatagram::untimed(up, bytes)
    }

    #[test]
    fn consecutive_datagrams_one_way_are_one_flight() {
        let f = flights_of(&[d(true, 100), d(false, 700), d(false, 50), d(true, 300)]);
        assert_eq!(f.len(), 3);
        assert_eq!(
            (f[1].direction, f[1].bytes, f[1].datagrams),
            (Direction::Down, 750, 2)
        );
        assert_eq!(bytes_of(&[d(true, 100), d(false, 700)]), 800);
    }

    #[test]
    fn the_pair_log_keeps_or_leaves_out_what_its_hook_dropped() {
        let log = [
            Logged {
                direction: Way::ToServer,
                bytes: 90,
                fate: Fate::Drop,
            },
            Logged {
                direction: Way::ToServer,
                bytes: 90,
                fate: Fate::Deliver,
            },
            Logged {
                direction: Way::ToClient,
                bytes: 500,
                fate: Fate::Duplicate,
            },
        ];
        assert_eq!(of_pair(&log).len(), 3);
        let delivered = delivered_of_pair(&log);
        assert_eq!(delivered, vec![d(true, 90), d(false, 500)]);
    }
}
