//! The in-memory handshake runner (`wtlsperf handshake`): client and gateway in one
//! process, driven alternately on one thread, so each side's processing time can be read
//! from the thread CPU clock without a network or a scheduler in between.
//!
//! What it reproduces: the processing-time measurements of Bayoglu 2004, section 4.1:
//! the side totals T_PD_C and T_PD_S (Eq. 3.2/3.3 mutual, 3.5/3.6 server-authenticated;
//! Tables 4.1/4.2), the per-message and per-operation shares (Tables 4.3-4.10) and the
//! handshake sizes (Table 4.11). On top of that it measures two things the thesis does
//! not: how close the gateway gets to the cost of its raw public-key operations (the
//! *bound*), and what the probe itself costs.
//!
//! Every rep builds a fresh [`Client`] and [`ServerConnection`]; the thread CPU time
//! around each `handle_datagram` call is recorded from the outside as well as by the
//! engine's own probe, so the per-job service times the queue model needs
//! ([`CaseMeasurement::server_job_service_ns`]) do not depend on the probe being right.
//!
//! The module's parts, along its seams: `drive` runs the handshakes and measures a case,
//! `bound` the raw public-key bound and its statistics, `record` holds what was measured
//! and summarises it, `published` sets it beside the thesis' tables, `render` prints it,
//! `json` writes it as records, and `command` is `wtlsperf handshake`.

use serde::Serialize;

mod bound;
mod command;
mod drive;
mod json;
mod published;
mod record;
mod render;

pub use bound::{
    symmetric_floor_ns, BoundExtension, BoundFailure, BoundPair, BoundRatio, BoundSpread,
    BOUND_MARGIN,
};
pub use command::{run, CommandConfig, Plan};
pub(crate) use drive::Rig;
pub use drive::{measure_all, measure_case, planned_cases, RunnerOptions};
pub use json::{json_records, JsonRecord};
pub use published::{percentage_comparison, published_bytes, published_totals, PercentComparison};
pub use record::{CaseMeasurement, MessageSummary, OperationSummary, RepMeasurement, Side};
pub use render::{render_case, render_overview};
pub use wtls::handshake::AuthMode;
pub use wtlsperf_models::stats::Summary;

/// Which server-authenticated flow runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flow {
    /// The thesis' flow (Table 3.7): the gateway sends a CertificateRequest and the
    /// client answers with an empty Certificate.
    Thesis,
    /// Plain WTLS: no CertificateRequest when only the server authenticates.
    Wtls,
}

/// Which handshake shape each rep runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Full handshake with the case's certified key exchange.
    Full,
    /// RSA_anon / ECDH_anon on the leaf's parameters (server-authenticated runs only).
    Anonymous,
    /// The client names itself so the gateway takes its certificate from its own store
    /// (ECDH_ECDSA only; for RSA the engine runs the full flow).
    Optimised,
    /// Abbreviated handshake resuming a session of an unmeasured full handshake.
    Resumed,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Full => "full",
            Variant::Anonymous => "anonymous",
            Variant::Optimised => "optimised",
            Variant::Resumed => "resumed",
        }
    }

    /// The authentication modes the variant can run: an anonymous key exchange
    /// authenticates nobody, so it runs server-authenticated only (the client's
    /// certificate would authenticate a key exchange that carries no server key).
    pub fn auth_modes(self) -> &'static [AuthMode] {
        match self {
            Variant::Anonymous => &[AuthMode::ServerAuth],
            Variant::Full | Variant::Optimised | Variant::Resumed => {
                &[AuthMode::ServerAuth, AuthMode::Mutual]
            }
        }
    }
}
