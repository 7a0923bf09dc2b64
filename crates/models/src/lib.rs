//! Performance models of the WTLS handshake, as pure functions.
//!
//! Every equation of the source studies is implemented exactly once, in the module that
//! owns its concern, with a doc comment naming the equation and the study:
//!
//! * [`processing`]: Bayoglu 2004 Eq. 3.2-3.7 and the percentage layout of Tables 4.3-4.10;
//! * [`queue`]: Pollaczek-Khinchin (Eq. 3.8-3.82) as published and corrected, the M/M/1
//!   server of Levi-Savas 2003, M/G/c (Allen-Cunneen) and a discrete-event simulator;
//! * [`transmission`]: Eq. 3.83, 3.84, 4.1, 4.2 and datagram overheads (Herwono 2001);
//! * [`overall`]: T_H = T_PD + T_TD + T_QD, the Levi-Savas response time and Herwono's
//!   handshake duration against bearer throughput;
//! * [`device`]: device profiles with provenance (fitted, published, measured, scaled)
//!   and the client's T_PD on a device;
//! * [`real_bearer`]: Eq. 3.84 validated out of sample on the live GSM CSD handshakes of
//!   Table 4.12;
//! * [`stats`]: the small exact statistics every other module uses;
//! * [`reference`]: the published tables, embedded so the binary needs no data directory.
//!
//! Nothing here does I/O or reads a clock: measurement records go in, numbers come out.

#![deny(missing_docs)]

pub mod device;
pub mod overall;
pub mod processing;
pub mod queue;
pub mod real_bearer;
pub mod reference;
pub mod stats;
pub mod transmission;

use serde::{Deserialize, Serialize};

/// Which handshake flavour a number belongs to (thesis sections 3.1.1 and 3.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Authentication {
    /// Client and gateway both present certificates (thesis symbols `T_M_*`).
    Mutual,
    /// Only the gateway is authenticated (thesis symbols `T_S_*`); the reference CSVs
    /// spell it `server`.
    #[serde(rename = "server", alias = "server_auth")]
    ServerAuth,
}

impl Authentication {
    /// Both flavours, mutual first as in the thesis tables.
    pub const ALL: [Authentication; 2] = [Authentication::Mutual, Authentication::ServerAuth];

    /// The letter the thesis uses in its symbols (`M` or `S`, as in `T_M_C_CKX`).
    pub fn thesis_letter(self) -> char {
        match self {
            Authentication::Mutual => 'M',
            Authentication::ServerAuth => 'S',
        }
    }
}

/// The peer that spends a processing time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The mobile client.
    Client,
    /// The WAP gateway.
    Server,
}

impl Side {
    /// The letter the thesis uses in its symbols (`C` or `S`, as in `T_M_S_CCERT`).
    pub fn thesis_letter(self) -> char {
        match self {
            Side::Client => 'C',
            Side::Server => 'S',
        }
    }
}

/// The two certified key exchange families the thesis compares. The message flow, and so
/// the number of messages and round trips, depends only on the family, not on key size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuiteFamily {
    /// ECDH_ECDSA: fixed ECDH keys carried in certificates.
    EcdhEcdsa,
    /// RSA key transport.
    Rsa,
}

impl SuiteFamily {
    /// Family of a thesis certificate short name (`rsa1024`, `283k`, ...). RSA names start
    /// with `rsa` in every table (Table 4.4 once prints `Rsa3072`, hence case-insensitive).
    pub fn from_cert_short(short: &str) -> SuiteFamily {
        if short.to_ascii_lowercase().starts_with("rsa") {
            SuiteFamily::Rsa
        } else {
            SuiteFamily::EcdhEcdsa
        }
    }
}
