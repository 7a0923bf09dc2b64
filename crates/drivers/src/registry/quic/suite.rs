//! QUIC's configurations on the bench and their one text form.

use std::fmt;

use rustls::crypto::{aws_lc_rs as provider, SupportedKxGroup};
use wtlsperf_spine::UnknownName;

use crate::protocols::ml_dsa::MlDsa;

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

/// What signs a QUIC configuration's certificates and CertificateVerify messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Signature {
    /// ECDSA P-256 with SHA-256 (`ecdsa_secp256r1_sha256`): the DTLS rows' small chain.
    EcdsaP256,
    /// ML-DSA-44 (FIPS 204, `mldsa44` 0x0904 of draft-ietf-tls-mldsa): the bench's
    /// ML-DSA chain ([`MlDsaPki`](crate::protocols::ml_dsa::MlDsaPki)), which rustls'
    /// aws-lc-rs provider verifies and signs.
    MlDsa44,
}

impl Signature {
    pub const ALL: [Signature; 2] = [Signature::EcdsaP256, Signature::MlDsa44];

    /// Name in configuration names.
    pub fn name(self) -> &'static str {
        match self {
            Signature::EcdsaP256 => "ecdsa",
            Signature::MlDsa44 => MlDsa::MlDsa44.name(),
        }
    }

    /// Name in tables' prose.
    pub fn label(self) -> &'static str {
        match self {
            Signature::EcdsaP256 => "ECDSA P-256",
            Signature::MlDsa44 => "ML-DSA-44",
        }
    }

    /// The ML-DSA parameter set, if it is one.
    pub fn ml_dsa(self) -> Option<MlDsa> {
        match self {
            Signature::EcdsaP256 => None,
            Signature::MlDsa44 => Some(MlDsa::MlDsa44),
        }
    }
}

/// Every configuration's name, by [`Group`], [`Signature`] and mutual authentication
/// (declaration order).
const NAMES: [[[&str; 2]; 2]; 4] = [
    [
        ["x25519-ecdsa", "x25519-ecdsa-mutual"],
        ["x25519-mldsa44", "x25519-mldsa44-mutual"],
    ],
    [
        ["x25519mlkem768-ecdsa", "x25519mlkem768-ecdsa-mutual"],
        ["x25519mlkem768-mldsa44", "x25519mlkem768-mldsa44-mutual"],
    ],
    [
        ["p256-ecdsa", "p256-ecdsa-mutual"],
        ["p256-mldsa44", "p256-mldsa44-mutual"],
    ],
    [
        ["p256mlkem768-ecdsa", "p256mlkem768-ecdsa-mutual"],
        ["p256mlkem768-mldsa44", "p256mlkem768-mldsa44-mutual"],
    ],
];

/// One QUIC configuration on the bench: its key exchange, its signature, and whether
/// the client is authenticated too. Its text form is [`QuicSuite::name`], e.g.
/// `x25519mlkem768-ecdsa` or `p256mlkem768-mldsa44-mutual`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QuicSuite {
    pub group: Group,
    pub signature: Signature,
    pub mutual: bool,
}

impl QuicSuite {
    /// `group` with the ECDSA P-256 chain.
    pub const fn new(group: Group, mutual: bool) -> QuicSuite {
        QuicSuite::signed(group, Signature::EcdsaP256, mutual)
    }

    /// `group` with certificates and CertificateVerify messages signed by `signature`.
    pub const fn signed(group: Group, signature: Signature, mutual: bool) -> QuicSuite {
        QuicSuite {
            group,
            signature,
            mutual,
        }
    }

    /// Every configuration: the ECDSA ones (each group server-authenticated, then each
    /// mutual), then the ML-DSA-44 ones in the same order.
    pub const ALL: [QuicSuite; 16] = [
        QuicSuite::new(Group::X25519, false),
        QuicSuite::new(Group::X25519MlKem768, false),
        QuicSuite::new(Group::P256, false),
        QuicSuite::new(Group::P256MlKem768, false),
        QuicSuite::new(Group::X25519, true),
        QuicSuite::new(Group::X25519MlKem768, true),
        QuicSuite::new(Group::P256, true),
        QuicSuite::new(Group::P256MlKem768, true),
        QuicSuite::signed(Group::X25519, Signature::MlDsa44, false),
        QuicSuite::signed(Group::X25519MlKem768, Signature::MlDsa44, false),
        QuicSuite::signed(Group::P256, Signature::MlDsa44, false),
        QuicSuite::signed(Group::P256MlKem768, Signature::MlDsa44, false),
        QuicSuite::signed(Group::X25519, Signature::MlDsa44, true),
        QuicSuite::signed(Group::X25519MlKem768, Signature::MlDsa44, true),
        QuicSuite::signed(Group::P256, Signature::MlDsa44, true),
        QuicSuite::signed(Group::P256MlKem768, Signature::MlDsa44, true),
    ];

    /// Name for tables, CSV and the command line.
    pub fn name(self) -> &'static str {
        NAMES[self.group as usize][self.signature as usize][usize::from(self.mutual)]
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
