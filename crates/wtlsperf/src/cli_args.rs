//! The command-line arguments several commands share, defined once and flattened into
//! each command with `#[command(flatten)]` (the way quinn's perf tool shares its
//! `CommonOpt`): the PKI directory, the CA/leaf case with its authentication, and the
//! datagram packing; and the value parsers of the numbers and names the commands take.
//!
//! The values are the domain's own types (`Case`, [`AuthMode`], [`Packing`], the
//! drivers' enums), parsed here by value parsers, so that no command keeps a string or a
//! look-alike enum past the command line, and a bad value is refused by clap with the
//! option named (`invalid value 'x' for '--case <CASE>'`) and exit status 2. Checks that
//! need more than one value return an error that `main` prints and exits 1 on.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use wtls::handshake::{AuthMode, Packing};
use wtls::suite::Case;
use wtlsperf_drivers::pki_store::{ClientCredentials, PkiStore, MANIFEST};
use wtlsperf_drivers::registry::Contender;

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
            if self.dir.join(MANIFEST).exists() {
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

    /// The drivers' description of the same choice, for a driver that opens the PKI
    /// itself after its own checks.
    pub fn source(&self) -> wtlsperf_drivers::pki_store::PkiSource {
        wtlsperf_drivers::pki_store::PkiSource {
            dir: self.pki.dir.clone(),
            create: self.create_pki,
        }
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

/// `--interference` and `--interference-burst-ms`: a thread that takes the gateway
/// worker's core in bursts, standing in for a hypervisor (`wtlsperf load`, `evaluate`).
#[derive(Debug, Clone, clap::Args)]
pub struct InterferenceArgs {
    /// In process: busy-spin on the gateway worker's core for this share of the time
    /// (`5%` or `0.05`, at most 50 %), in bursts separated by exponential gaps drawn
    /// from a fixed seed, from the gateway's start to the end of each run.
    #[arg(long, value_parser = duty_cycle)]
    pub interference: Option<f64>,
    /// The length of one interference burst (ms of the injector's CPU time).
    #[arg(long, default_value_t = 10.0, value_parser = positive_number, requires = "interference")]
    pub interference_burst_ms: f64,
}

impl InterferenceArgs {
    /// The injector's settings, seeded by `seed`; `None` without `--interference`.
    pub fn interference(
        &self,
        seed: u64,
    ) -> anyhow::Result<Option<wtlsperf_drivers::load::Interference>> {
        let Some(duty) = self.interference else {
            return Ok(None);
        };
        let burst = std::time::Duration::try_from_secs_f64(self.interference_burst_ms / 1e3)
            .map_err(|_| anyhow::anyhow!("--interference-burst-ms: not a duration"))?;
        wtlsperf_drivers::load::Interference::new(duty, burst, seed)
            .map(Some)
            .map_err(|e| anyhow::anyhow!("--interference-burst-ms: {e}"))
    }
}

/// The value parser of `--interference`.
fn duty_cycle(s: &str) -> Result<f64, String> {
    wtlsperf_drivers::load::Interference::parse_duty(s).map_err(|e| e.to_string())
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
    choice(&PACKINGS)
}

/// The value parser of an option naming one of a domain type's values: `table` lists
/// each value with its command-line name and the help `--help` shows beside it (what
/// clap's `ValueEnum` would give a type of this crate's own).
pub fn choice<T>(
    table: &'static [(T, &'static str, &'static str)],
) -> impl TypedValueParser<Value = T>
where
    T: Copy + Send + Sync + 'static,
{
    PossibleValuesParser::new(
        table
            .iter()
            .map(|(_, name, help)| PossibleValue::new(*name).help(*help)),
    )
    .try_map(move |name: String| {
        table
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(value, _, _)| *value)
            .ok_or_else(|| format!("{name:?} is not one of the possible values"))
    })
}

/// A count that must be at least 1 (workers, clients, sources).
pub fn at_least_one(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("not a whole number ({e})"))?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    Ok(n)
}

/// A number that must be positive and finite (a rate).
pub fn positive_number(s: &str) -> Result<f64, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("must be a positive finite number, got {x}"));
    }
    Ok(x)
}

/// A number of seconds that must be positive and finite.
pub fn positive_seconds(s: &str) -> Result<f64, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("must be a positive number of seconds, got {x}"));
    }
    Ok(x)
}

/// How long a command runs: `None` until it is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLength(pub Option<Duration>);

/// A run length: positive; a length too long to represent (e.g. `inf`, `1e300`) runs
/// until the process is stopped.
pub fn run_length(s: &str) -> Result<RunLength, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if x.is_nan() || x <= 0.0 {
        return Err(format!("must be a positive number of seconds, got {x}"));
    }
    Ok(RunLength(
        Duration::try_from_secs_f64(x)
            .ok()
            .filter(|d| Instant::now().checked_add(*d).is_some()),
    ))
}

/// The value parser of `--suite`: a DTLS 1.2 or EDHOC suite by its name.
/// A contender of the registry, `protocol:configuration` (`dtls1.3:psk-ccm8`); the
/// error lists the known names.
pub fn contender(s: &str) -> Result<Contender, String> {
    wtlsperf_drivers::registry::contender(s).map_err(|e| e.to_string())
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
    fn operator_numbers_are_checked() {
        assert_eq!(at_least_one("3"), Ok(3));
        assert!(at_least_one("0").is_err());
        assert!(at_least_one("-1").is_err());
        assert!(positive_seconds("NaN").is_err());
        assert!(positive_seconds("inf").is_err());
        assert!(positive_seconds("-1").is_err());
        assert_eq!(positive_seconds("2.5"), Ok(2.5));
        assert_eq!(run_length("inf"), Ok(RunLength(None)));
        assert_eq!(run_length("1e300"), Ok(RunLength(None)));
        assert_eq!(run_length("2"), Ok(RunLength(Some(Duration::from_secs(2)))));
        assert!(run_length("NaN").is_err());
        assert!(run_length("-1").is_err());
        assert!(run_length("0").is_err());
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

/// A command's options alone, parsed as the CLI parses them: the commands' tests read
/// their typed configurations through it.
#[cfg(test)]
#[derive(clap::Parser)]
pub(crate) struct OptionsOf<A: clap::Args> {
    #[command(flatten)]
    pub args: A,
}
