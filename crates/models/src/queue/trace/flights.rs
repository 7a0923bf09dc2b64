//! The flights of a trace: the jobs a client sent in one go, which reach the worker
//! together and are not independent arrivals.
//!
//! A protocol whose flight does not fit one datagram (DTLS 1.3's client flight with its
//! certificate, an ML-KEM ClientHello, WTLS with one record per datagram) hands the
//! gateway several jobs at one instant, a few microseconds apart. Corrected P-K (Eq.
//! 3.12 at the job rate) takes every job for an independent Poisson arrival and so
//! misses that the second datagram of a flight always waits for the first: a run of
//! DTLS 1.3 at rho 0.5 (5-6 jobs per handshake, 0.02 ms from one job of a handshake to
//! the next arrival of the same client) measured a quarter more wait than P-K. The
//! flights, not the jobs, are the Poisson arrivals, and the queue is the batch-Poisson
//! M^X/G/1: a flight waits the P-K wait of a server whose jobs are whole flights
//! (occupancy B, the sum of its jobs'), and each job of it waits besides for the jobs of
//! its own flight served before it. With one job per flight this is Eq. 3.12 again.

use std::collections::HashMap;
use std::net::SocketAddr;

use super::TracedJob;
use crate::queue::{pk_exceptional_first_wait_ms, pk_mean_wait_ms};
use crate::stats::Moments;

/// Each job's flight and its wait behind the earlier jobs of its flight.
pub(super) struct Flights {
    /// The flight of each job (in the order of the jobs given to [`Flights::of`]).
    pub id: Vec<usize>,
    /// How long (ns) each job waits behind the earlier jobs of its own flight when the
    /// flight finds the worker free: their occupancy less the time it arrived after the
    /// flight's first job, at least 0.
    pub within_ns: Vec<u64>,
}

/// The flight a client's jobs are being added to.
struct OpenFlight {
    id: usize,
    first_arrival_ns: u64,
    /// End of service of the flight's latest job so far.
    last_end_ns: u64,
    /// Occupancy of the flight's jobs so far (ns).
    occupancy_ns: u64,
}

impl Flights {
    /// The flights of `jobs` (any order), with `occupancy_ns[i]` the occupancy of
    /// `jobs[i]`. A job joins its source's open flight when it arrived before the
    /// worker was done with the source's previous job: until then the worker had not
    /// answered, so the client sent it in the same go. A job without a source is a
    /// flight of its own.
    pub fn of<J: TracedJob>(jobs: &[&J], occupancy_ns: &[u64]) -> Self {
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by_key(|&i| jobs[i].arrival_ns());
        let mut open: HashMap<SocketAddr, OpenFlight> = HashMap::new();
        let mut id = vec![0; jobs.len()];
        let mut within_ns = vec![0; jobs.len()];
        let mut next = 0;
        for i in order {
            let j = jobs[i];
            let occupancy = occupancy_ns[i];
            let joined = j.source().and_then(|s| {
                let f = open
                    .get_mut(&s)
                    .filter(|f| j.arrival_ns() < f.last_end_ns)?;
                let offset = j.arrival_ns() - f.first_arrival_ns;
                within_ns[i] = f.occupancy_ns.saturating_sub(offset);
                f.occupancy_ns += occupancy;
                f.last_end_ns = f.last_end_ns.max(j.end_ns());
                Some(f.id)
            });
            id[i] = joined.unwrap_or_else(|| {
                next += 1;
                if let Some(s) = j.source() {
                    open.insert(
                        s,
                        OpenFlight {
                            id: next,
                            first_arrival_ns: j.arrival_ns(),
                            last_end_ns: j.end_ns(),
                            occupancy_ns: occupancy,
                        },
                    );
                }
                next
            });
        }
        Flights { id, within_ns }
    }
}

/// The batch-Poisson load of a set of jobs: their flights' rate and occupancy moments,
/// and the mean wait of a job behind its own flight.
#[derive(Debug, Clone, PartialEq)]
pub struct FlightLoad {
    /// Flights with at least one of the jobs.
    pub flights: usize,
    /// Their rate (per second).
    pub rate_per_s: f64,
    /// E[B] of a flight's occupancy (ms): the sum of its jobs' occupancies.
    pub occupancy_mean_ms: f64,
    /// E[B^2] (ms^2).
    pub occupancy_m2_ms2: f64,
    /// Mean wait of a job behind the earlier jobs of its own flight (ms), over jobs.
    pub within_ms: f64,
}

impl FlightLoad {
    /// From each job's (flight, occupancy in ms, wait behind its flight in ms) over
    /// `length_ms`. `None` without jobs or time.
    pub fn of(jobs: impl IntoIterator<Item = (usize, f64, f64)>, length_ms: f64) -> Option<Self> {
        let mut by_flight: HashMap<usize, f64> = HashMap::new();
        let (mut n, mut within) = (0usize, 0.0);
        for (flight, occupancy_ms, within_ms) in jobs {
            *by_flight.entry(flight).or_default() += occupancy_ms;
            n += 1;
            within += within_ms;
        }
        if n == 0 || length_ms <= 0.0 {
            return None;
        }
        let occupancies: Vec<f64> = by_flight.into_values().collect();
        let occupancy = Moments::of(&occupancies)?;
        Some(FlightLoad {
            flights: occupancies.len(),
            rate_per_s: occupancies.len() as f64 / (length_ms / 1e3),
            occupancy_mean_ms: occupancy.mean,
            occupancy_m2_ms2: occupancy.m2,
            within_ms: within / n as f64,
        })
    }

    /// Mean queueing wait of a job (ms): P-K (Eq. 3.12) at the flight rate with the
    /// flights' occupancy, plus the wait behind its own flight.
    pub fn pk_ms(&self) -> Option<f64> {
        pk_mean_wait_ms(
            self.rate_per_s,
            self.occupancy_mean_ms,
            self.occupancy_m2_ms2,
        )
        .map(|w| w + self.within_ms)
    }

    /// As [`FlightLoad::pk_ms`], with the flight that opens a busy period holding the
    /// worker for its first job's delivery too (mean `delivery_ms`, second moment
    /// `delivery_m2_ms2`; see [`pk_exceptional_first_wait_ms`]).
    pub fn exceptional_first_ms(&self, delivery_ms: f64, delivery_m2_ms2: f64) -> Option<f64> {
        let (b, b2) = (self.occupancy_mean_ms, self.occupancy_m2_ms2);
        pk_exceptional_first_wait_ms(
            self.rate_per_s,
            b,
            b2,
            b + delivery_ms,
            b2 + 2.0 * b * delivery_ms + delivery_m2_ms2,
        )
        .map(|w| w + self.within_ms)
    }
}
