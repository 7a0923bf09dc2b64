//! QUIC's configurations on the bench and their one text form.

use std::fmt;

use rustls::crypto::{aws_lc_rs as provider, SupportedKxGroup};
use wtlsperf_spine::UnknownName;

/// The key exchange of a QUIC handshake: its TLS named group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    /// X25519 ECDHE.
    X25519,
    /// X25519 + ML-KEM-768 (draft-ietf-tls-ecdhe-mlkem).
    X25519MlKem768,
    /// secp256r1 ECDHE.
    P256,
    /// secp256r1 + ML-KEM-768.
    P256MlKem768,
}

impl Group {
    pub const ALL: [Group; 4] = [
        Group::X25519,
        Group::X25519MlKem768,
        Group::P256,
        Group::P256MlKem768,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Group::X25519 => "x25519",
            Group::X25519MlKem768 => "x25519mlkem768",
            Group::P256 => "p256",
            Group::P256MlKem768 => "p256mlkem768",
        }
    }

    /// Whether it includes ML-KEM.
    pub fn post_quantum(self) -> bool {
        matches!(self, Group::X25519MlKem768 | Group::P256MlKem768)
    }

    /// Whether its elliptic curve is P-256 (else X25519).
    pub fn p256(self) -> bool {
        matches!(self, Group::P256 | Group::P256MlKem768)
    }

    /// rustls' implementation (aws-lc-rs).
    pub(super) fn kx(self) -> &'static dyn SupportedKxGroup {
        match self {
            Group::X25519 => provider::kx_group::X25519,
            Group::X25519MlKem768 => provider::kx_group::X25519MLKEM768,
            Group::P256 => provider::kx_group::SECP256R1,
            Group::P256MlKem768 => provider::kx_group::SECP256R1MLKEM768,
        }
    }
}

/// One QUIC configuration on the bench: its key exchange, and whether the client is
/// authenticated too. Its text form is [`QuicSuite::name`], e.g. `x25519mlkem768-ecdsa`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QuicSuite {
    pub group: Group,
    pub mutual: bool,
}

impl QuicSuite {
    pub const fn new(group: Group, mutual: bool) -> QuicSuite {
        QuicSuite { group, mutual }
    }

    /// Every configuration: each group server-authenticated, then each mutual.
    pub const ALL: [QuicSuite; 8] = [
        QuicSuite::new(Group::X25519, false),
        QuicSuite::new(Group::X25519MlKem768, false),
        QuicSuite::new(Group::P256, false),
        QuicSuite::new(Group::P256MlKem768, false),
        QuicSuite::new(Group::X25519, true),
        QuicSuite::new(Group::X25519MlKem768, true),
        QuicSuite::new(Group::P256, true),
        QuicSuite::new(Group::P256MlKem768, true),
    ];

    /// Name for tables, CSV and the command line.
    pub fn name(self) -> &'static str {
        match (self.group, self.mutual) {
            (Group::X25519, false) => "x25519-ecdsa",
            (Group::X25519MlKem768, false) => "x25519mlkem768-ecdsa",
            (Group::P256, false) => "p256-ecdsa",
            (Group::P256MlKem768, false) => "p256mlkem768-ecdsa",
            (Group::X25519, true) => "x25519-ecdsa-mutual",
            (Group::X25519MlKem768, true) => "x25519mlkem768-ecdsa-mutual",
            (Group::P256, true) => "p256-ecdsa-mutual",
            (Group::P256MlKem768, true) => "p256mlkem768-ecdsa-mutual",
        }
    }
}

impl fmt::Display for QuicSuite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for QuicSuite {
    type Err = UnknownName;
    /// Parses [`QuicSuite::name`]; the error lists the names.
    fn from_str(s: &str) -> Result<QuicSuite, UnknownName> {
        QuicSuite::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                UnknownName::new("QUIC configuration", s, QuicSuite::ALL.map(QuicSuite::name))
            })
    }
}
