//! `wtlsperf handshake` on the command line: its arguments and the drivers' runner
//! configuration they make (`wtlsperf_drivers::runner::run`).

use std::path::PathBuf;

use anyhow::anyhow;
use wtlsperf_drivers::runner::{CommandConfig, Flow, Plan, RunnerOptions, Variant};

use crate::cli_args::{self, HandshakeArgs, PackingArgs, PkiArgs};

/// Command-line arguments of `wtlsperf handshake`. `--case` and `--auth` are the shared
/// ones without their defaults: both are required unless `--all`, and absent with it.
#[derive(Debug, clap::Args)]
#[command(mut_arg("case", |a| a.default_value(None::<&str>).required_unless_present("all")))]
#[command(mut_arg("auth", |a| a.default_value(None::<&str>).required_unless_present("all")))]
pub struct Args {
    /// `None` exactly when neither `--case` nor `--auth` is given (then `--all` is).
    #[command(flatten)]
    pub handshake: Option<HandshakeArgs>,
    /// Measured handshakes per case.
    #[arg(long, default_value_t = 15)]
    pub reps: usize,
    /// Unmeasured handshakes before them.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Every case of thesis Table 3.3, server-authenticated and mutual.
    #[arg(long)]
    pub all: bool,
    /// Write newline-delimited JSON records to FILE, or to stdout with `-` (the
    /// tables then go to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    // The PKI, issued on first use: the in-memory runner serves no one else.
    #[command(flatten)]
    pub pki: PkiArgs,
    #[arg(long, default_value = "thesis", value_parser = cli_args::choice(&FLOWS))]
    pub flow: Flow,
    #[command(flatten)]
    pub packing: PackingArgs,
    #[arg(long, default_value = "full", value_parser = cli_args::choice(&VARIANTS))]
    pub variant: Variant,
    /// Skip the probe-overhead measurement (two more handshakes per rep).
    #[arg(long)]
    pub no_probe_overhead: bool,
    /// Skip the raw public-key bound.
    #[arg(long)]
    pub no_bound: bool,
}

/// `--flow`: the server-authenticated flows by their command-line names.
const FLOWS: [(Flow, &str, &str); 2] = [
    (
        Flow::Thesis,
        "thesis",
        "The thesis' flow (Table 3.7): the gateway sends a CertificateRequest and the client answers with an empty Certificate",
    ),
    (
        Flow::Wtls,
        "wtls",
        "Plain WTLS: no CertificateRequest when only the server authenticates",
    ),
];

/// `--variant` (here and in `wtlsperf count`): the handshake shapes by their names.
pub const VARIANTS: [(Variant, &str, &str); 4] = [
    (
        Variant::Full,
        "full",
        "Full handshake with the case's certified key exchange",
    ),
    (
        Variant::Anonymous,
        "anonymous",
        "RSA_anon / ECDH_anon on the leaf's parameters (server-authenticated runs only)",
    ),
    (
        Variant::Optimised,
        "optimised",
        "The client names itself so the gateway takes its certificate from its own store (ECDH_ECDSA only; for RSA the engine runs the full flow)",
    ),
    (
        Variant::Resumed,
        "resumed",
        "Abbreviated handshake resuming a session of an unmeasured full handshake",
    ),
];

impl Args {
    /// The runner's configuration: one bound pair per rep, no extension
    /// (`scripts/bench-counts.sh` divides the raw operations' count by the reps).
    pub fn config(&self) -> anyhow::Result<CommandConfig> {
        let plan = if self.all {
            Plan::All
        } else {
            let HandshakeArgs { case, auth } = self
                .handshake
                .clone()
                .ok_or_else(|| anyhow!("--case and --auth are required without --all"))?;
            Plan::One(case, auth)
        };
        Ok(CommandConfig {
            plan,
            json: self.json.clone(),
            pki_dir: self.pki.dir.clone(),
            options: RunnerOptions {
                reps: self.reps,
                warmup: self.warmup,
                flow: self.flow,
                packing: self.packing.packing,
                variant: self.variant,
                measure_bound: !self.no_bound,
                measure_probe_overhead: !self.no_probe_overhead,
                bound_extension: None,
            },
        })
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    wtlsperf_drivers::runner::run(args.config()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use wtls::handshake::{AuthMode, Packing};

    type Command = crate::cli_args::OptionsOf<Args>;

    fn config(argv: &[&str]) -> CommandConfig {
        Command::try_parse_from(argv)
            .unwrap()
            .args
            .config()
            .unwrap()
    }

    #[test]
    fn the_options_become_the_runner_configuration() {
        let all = config(&[
            "handshake",
            "--all",
            "--flow",
            "wtls",
            "--variant",
            "optimised",
        ]);
        assert_eq!(all.plan, Plan::All);
        assert_eq!(all.options.flow, Flow::Wtls);
        assert_eq!(all.options.variant, Variant::Optimised);
        assert!(all.options.measure_bound && all.options.bound_extension.is_none());
        let one = config(&[
            "handshake",
            "--case",
            "rsa2048/rsa1024",
            "--auth",
            "mutual",
            "--packing",
            "message",
            "--no-bound",
            "--reps",
            "3",
        ]);
        assert_eq!(
            one.plan,
            Plan::One("rsa2048/rsa1024".parse().unwrap(), AuthMode::Mutual)
        );
        assert_eq!(one.options.packing, Packing::MessagePerDatagram);
        assert_eq!(one.options.reps, 3);
        assert!(!one.options.measure_bound);
        assert_eq!(one.pki_dir, PathBuf::from("pki"));
    }

    #[test]
    fn a_bad_flow_or_variant_is_refused_with_its_option_named() {
        for (option, value) in [("--flow", "tls"), ("--variant", "abbreviated")] {
            let err = Command::try_parse_from(["handshake", "--all", option, value])
                .err()
                .unwrap()
                .to_string();
            assert!(err.contains(option) && err.contains(value), "{err}");
        }
    }
}
