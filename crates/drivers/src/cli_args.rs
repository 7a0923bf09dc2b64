//! The command-line arguments several commands share, defined once and flattened into
//! each command with `#[command(flatten)]` (the way quinn's perf tool shares its
//! `CommonOpt`): the PKI directory, the CA/leaf case with its authentication, and the
//! datagram packing.
//!
//! The values are the domain's own types (`Case`, [`AuthMode`], [`Packing`]), parsed
//! here by value parsers, so that no command keeps a string or a look-alike enum past
//! the command line, and a bad value is refused by clap with the option named
//! (`invalid value 'x' for '--case <CASE>'`) and exit status 2.

use std::path::PathBuf;

use anyhow::Context;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use wtls::handshake::{AuthMode, Packing};
use wtls::suite::Case;

use crate::pki_store::{ClientCredentials, PkiStore};

/// `--pki`: the directory of CA and leaf certificates for every case.
#[derive(Debug, Clone, clap::Args)]
pub struct PkiArgs {
    /// PKI directory (`wtlsperf pki init --dir DIR` issues one).
    #[arg(long = "pki", default_value = "pki")]
    pub dir: PathBuf,
}

impl PkiArgs {
    /// Loads the PKI, which must exist (a client must trust its gateway's CA, so a
    /// fresh one would be of no use).
    pub fn load(&self) -> anyhow::Result<PkiStore> {
        PkiStore::load(&self.dir).with_context(|| {
            format!(
                "--pki {}: create one with `wtlsperf pki init --dir {}`",
                self.dir.display(),
                self.dir.display()
            )
        })
    }

    /// Loads only what a client of `case` needs (its CA's certificate, its own
    /// certificate and key), which must exist: a client must trust its gateway's CA.
    pub fn load_client(&self, case: &Case) -> anyhow::Result<ClientCredentials> {
        let dir = self.dir.display();
        PkiStore::load_client(&self.dir, case).with_context(|| {
            if self.dir.join(crate::pki_store::MANIFEST).exists() {
                format!("--pki {dir} --case {case}")
            } else {
                format!("--pki {dir}: create one with `wtlsperf pki init --dir {dir}`")
            }
        })
    }

    /// Loads the PKI, issuing it first if the directory holds none: for the commands
    /// that play both sides in one process and so serve no one who trusts another CA.
    pub fn load_or_init(&self) -> anyhow::Result<PkiStore> {
        PkiStore::load_or_init(&self.dir).with_context(|| format!("--pki {}", self.dir.display()))
    }
}

/// `--pki` and `--create-pki`, for the commands that start a gateway other processes
/// talk to: they issue a PKI only when asked (see [`PkiStore::open`] for why).
#[derive(Debug, Clone, clap::Args)]
pub struct ServedPkiArgs {
    #[command(flatten)]
    pub pki: PkiArgs,
    /// Issue a new PKI into --pki if it holds none.
    #[arg(long)]
    pub create_pki: bool,
}

impl ServedPkiArgs {
    /// Loads the PKI, or issues it with `--create-pki`; otherwise says how to make one.
    pub fn open(&self) -> anyhow::Result<PkiStore> {
        PkiStore::open(&self.pki.dir, self.create_pki)
    }
}

/// `--case` and `--auth`: which handshake a client runs. The default case is 160p/160p,
/// the thesis' lightest; a command that needs another default says so with
/// `#[command(mut_arg("case", ...))]`.
#[derive(Debug, Clone, clap::Args)]
pub struct HandshakeArgs {
    /// The CA/leaf case, e.g. 256p/224p or rsa3072/rsa1024.
    #[arg(long, default_value = "160p/160p")]
    pub case: Case,
    /// Server-authenticated or mutual.
    #[arg(long, default_value = "server", value_parser = auth_mode())]
    pub auth: AuthMode,
}

/// `--case` and `--auth`, repeatable, for a command that runs a selection of handshakes
/// (`wtlsperf count`): the same options and parsers as [`HandshakeArgs`], with no
/// default (absent means every case, or both modes).
#[derive(Debug, Clone, clap::Args)]
pub struct CaseSelectionArgs {
    /// Cases to run (repeatable); default every case the local libcrypto supports.
    #[arg(long = "case")]
    pub cases: Vec<Case>,
    /// Authentication modes (repeatable); default both.
    #[arg(long = "auth", value_parser = auth_mode())]
    pub auths: Vec<AuthMode>,
}

/// `--packing`: how handshake messages are packed into datagrams.
#[derive(Debug, Clone, clap::Args)]
pub struct PackingArgs {
    /// How handshake messages are packed into datagrams.
    #[arg(long, default_value = "flight", value_parser = packing())]
    pub packing: Packing,
}

/// The two authentication modes by the names the command line (and [`AuthMode::name`])
/// gives them.
const AUTH_MODES: [(AuthMode, &str); 2] = [
    (
        AuthMode::ServerAuth,
        "only the gateway presents a certificate",
    ),
    (
        AuthMode::Mutual,
        "client and gateway both present certificates",
    ),
];

/// The value parser of an authentication mode: `server` or `mutual`. Used by every
/// option that names one (`--auth`, `--check-auth`).
pub fn auth_mode() -> impl TypedValueParser<Value = AuthMode> {
    PossibleValuesParser::new(
        AUTH_MODES.map(|(mode, help)| PossibleValue::new(mode.name()).help(help)),
    )
    .try_map(|name: String| {
        AUTH_MODES
            .iter()
            .map(|(mode, _)| *mode)
            .find(|mode| mode.name() == name)
            .ok_or_else(|| format!("{name:?} is neither server nor mutual"))
    })
}

/// The packings by their command-line names.
const PACKINGS: [(Packing, &str, &str); 2] = [
    (
        Packing::FlightPerDatagram,
        "flight",
        "one datagram per flight (as real stacks do)",
    ),
    (
        Packing::MessagePerDatagram,
        "message",
        "one record per datagram (the unit of the thesis' queue and transmission models)",
    ),
];

/// The value parser of `--packing`: `flight` or `message`.
pub fn packing() -> impl TypedValueParser<Value = Packing> {
    PossibleValuesParser::new(PACKINGS.map(|(_, name, help)| PossibleValue::new(name).help(help)))
        .try_map(|name: String| {
            PACKINGS
                .iter()
                .find(|(_, n, _)| *n == name)
                .map(|(p, _, _)| *p)
                .ok_or_else(|| format!("{name:?} is neither flight nor message"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Probe {
        #[command(flatten)]
        handshake: HandshakeArgs,
        #[command(flatten)]
        packing: PackingArgs,
        #[command(flatten)]
        pki: ServedPkiArgs,
    }

    #[test]
    fn the_defaults_are_the_domain_values() {
        let p = Probe::try_parse_from(["probe"]).unwrap();
        assert_eq!(p.handshake.case.to_string(), "160p/160p");
        assert_eq!(p.handshake.auth, AuthMode::ServerAuth);
        assert_eq!(p.packing.packing, Packing::FlightPerDatagram);
        assert_eq!(p.pki.pki.dir, PathBuf::from("pki"));
        assert!(!p.pki.create_pki);
    }

    #[test]
    fn every_name_parses_to_its_value() {
        let p = Probe::try_parse_from([
            "probe",
            "--case",
            "rsa2048/rsa1024",
            "--auth",
            "mutual",
            "--packing",
            "message",
        ])
        .unwrap();
        assert_eq!(p.handshake.case.to_string(), "rsa2048/rsa1024");
        assert_eq!(p.handshake.auth, AuthMode::Mutual);
        assert_eq!(p.packing.packing, Packing::MessagePerDatagram);
    }

    #[test]
    fn a_bad_value_is_refused_with_its_option_named() {
        for (option, value) in [("--case", "160p"), ("--auth", "both"), ("--packing", "x")] {
            let err = Probe::try_parse_from(["probe", option, value])
                .unwrap_err()
                .to_string();
            assert!(err.contains(option) && err.contains(value), "{err}");
        }
    }
}
