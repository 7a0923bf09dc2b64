//! Real-time emulation of a slow, high-latency bearer between a WTLS client and gateway.
//!
//! The source studies measured (Bayoglu 2004, GSM CSD) or modelled (Bayoglu GPRS,
//! Levi-Savas 2003, Herwono-Liebhardt 2001) handshakes over bearers of 6-56 kbit/s with
//! hundreds of milliseconds of one-way delay. To reproduce those numbers with today's
//! machines, the client and gateway talk through a [`Relay`] on loopback that makes the
//! serialisation and traversal delays of a chosen [`LinkProfile`] really elapse, so the
//! measured handshake time contains them exactly as a phone's would.
//!
//! * [`profile`](mod@profile): the named bearer profiles and where their numbers come from.
//! * [`link`]: the transmission model (FIFO bottleneck + per-datagram traversal delay) as
//!   pure functions, so a model test can predict what the relay will do.
//! * [`relay`]: the UDP relay that enforces that model in real time.

pub mod link;
pub mod profile;
pub mod relay;

pub use link::{delivery_time, serialisation_time, Delivery, FifoLink};
pub use profile::{
    profile, profiles, BearerCatalogue, DelayDistribution, LinkProfile, RateKind,
    UDP_IPV4_OVERHEAD_BYTES,
};
pub use relay::{DirectionStats, LinkStats, Relay, RelayHandle, RelayOptions};

/// A profile that cannot be used: unknown name or parameters outside their domain.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    /// No profile of that name is registered.
    #[error("unknown bearer profile `{name}`; known profiles: {known}")]
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// Comma-separated registered names.
        known: String,
    },
    /// A rate is zero, negative or NaN.
    #[error("bearer profile `{profile}`: {field} = {value} bit/s, must be > 0 (use f64::INFINITY for no limit)")]
    InvalidRate {
        /// Profile name.
        profile: String,
        /// `up_bps` or `down_bps`.
        field: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A probability outside [0, 1].
    #[error("bearer profile `{profile}`: {field} = {value}, must be a probability in [0, 1]")]
    InvalidProbability {
        /// Profile name.
        profile: String,
        /// `loss`, `duplicate` or `reorder`.
        field: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A delay distribution with impossible parameters.
    #[error("invalid traversal delay distribution {0}")]
    InvalidDelay(String),
    /// A bearer catalogue file that cannot be read or holds a bad row.
    #[error("{file}, line {line}: {message}")]
    Catalogue {
        /// The catalogue file.
        file: String,
        /// Its line (1 = the header; 0 = the file as a whole).
        line: u64,
        /// What is wrong.
        message: String,
    },
}

impl From<ProfileError> for std::io::Error {
    fn from(err: ProfileError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, err)
    }
}
