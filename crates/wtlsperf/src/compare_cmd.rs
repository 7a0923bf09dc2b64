//! `wtlsperf compare` on the command line: its arguments and the drivers' comparison
//! configuration they make (`wtlsperf_drivers::protocols::compare::run`): the
//! contenders, bearer profile and device named by the operator, found here.

use anyhow::{anyhow, Context};
use wtlsperf_drivers::protocols::compare::{default_contenders, find_device, CompareConfig};
use wtlsperf_drivers::registry::{self, Contender};

use crate::cli_args::PkiArgs;

/// `wtlsperf compare` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The configurations to measure in memory, as `protocol:configuration`
    /// (repeatable; default: WTLS 256p/256p and every configuration of every other
    /// protocol in this build).
    #[arg(long = "contender")]
    pub contenders: Vec<String>,
    /// Handshakes per configuration in memory.
    #[arg(long, default_value_t = 200)]
    pub reps: usize,
    /// Handshakes per anchor (and per WTLS counterpart) for the bound ratios, in blocks.
    #[arg(long, default_value_t = 1000)]
    pub peer_reps: usize,
    /// Skip the peer anchors.
    #[arg(long)]
    pub no_peers: bool,
    /// Also run this configuration over an emulated bearer, as `protocol:configuration`
    /// (`dtls1.2:psk-ccm8`, `edhoc:method3-suite2`, ...).
    #[arg(long)]
    pub over: Option<String>,
    /// Bearer profile for `--over` (e.g. `nb-iot`, `gsm-csd`).
    #[arg(long, default_value = "nb-iot")]
    pub profile: String,
    /// Loss probability added to the profile for `--over`.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Seed of the relay's delay and loss draws (and of the CoAP timers) for `--over`.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Emulated client device for `--over` (default: this machine).
    #[arg(long)]
    pub device: Option<String>,
    // The PKI of the anchors' WTLS counterparts, issued on first use.
    #[command(flatten)]
    pub pki: PkiArgs,
}

impl Args {
    /// The drivers' configuration: each name resolved, or an error naming its option.
    pub fn config(&self) -> anyhow::Result<CompareConfig> {
        let parse = |t: &str, option: &str| -> anyhow::Result<Contender> {
            registry::contender(t).with_context(|| format!("{option} {t}"))
        };
        let over = self
            .over
            .as_deref()
            .map(|t| parse(t, "--over"))
            .transpose()?;
        let contenders = if self.contenders.is_empty() {
            default_contenders()
        } else {
            self.contenders
                .iter()
                .map(|t| parse(t, "--contender"))
                .collect::<anyhow::Result<_>>()?
        };
        let device = find_device(self.device.as_deref())?;
        let profile =
            wtlsperf_bearer::profile(&self.profile).map_err(|e| anyhow!("--profile: {e}"))?;
        Ok(CompareConfig {
            contenders,
            reps: self.reps,
            peer_reps: self.peer_reps,
            peers: !self.no_peers,
            over,
            profile,
            loss: self.loss,
            seed: self.seed,
            device,
            pki_dir: self.pki.dir.clone(),
        })
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    wtlsperf_drivers::protocols::compare::run(args.config()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    type Command = crate::cli_args::OptionsOf<Args>;

    fn config(argv: &[&str]) -> anyhow::Result<CompareConfig> {
        Command::try_parse_from(argv).unwrap().args.config()
    }

    #[test]
    fn the_names_are_resolved_or_refused_with_their_option() {
        let c = config(&[
            "compare",
            "--over",
            "dtls1.2:psk-ccm8",
            "--profile",
            "gsm-csd",
        ])
        .unwrap();
        assert_eq!(
            c.over,
            Some(registry::contender("dtls1.2:psk-ccm8").unwrap())
        );
        assert!(c.contenders.len() > 4, "every protocol by default");
        assert_eq!(c.profile.name, "gsm-csd");
        assert_eq!(c.device.name(), "this-machine");
        assert!(c.peers);
        for (option, value) in [
            ("--over", "bogus"),
            ("--contender", "dtls1.2:bogus"),
            ("--profile", "bogus"),
            ("--device", "bogus"),
        ] {
            let err = format!("{:#}", config(&["compare", option, value]).unwrap_err());
            assert!(err.contains(option) && err.contains(value), "{err}");
        }
    }
}
