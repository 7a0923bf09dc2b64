//! `wtlsperf compare` on the command line: its arguments and the drivers' comparison
//! configuration they make (`wtlsperf_drivers::protocols::compare::run`): the suite,
//! bearer profile and device named by the operator, found here.

use anyhow::{anyhow, Context};
use wtlsperf_drivers::protocols::compare::{find_device, CompareConfig};
use wtlsperf_drivers::protocols::Suite;

use crate::cli_args::PkiArgs;

/// `wtlsperf compare` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Handshakes per suite in memory.
    #[arg(long, default_value_t = 200)]
    pub reps: usize,
    /// Handshakes per anchor (and per WTLS counterpart) for the bound ratios, in blocks.
    #[arg(long, default_value_t = 1000)]
    pub peer_reps: usize,
    /// Skip the peer anchors.
    #[arg(long)]
    pub no_peers: bool,
    /// Also run this suite over an emulated bearer (`psk-ccm8`, `method3-suite2`, ...).
    #[arg(long)]
    pub suite: Option<String>,
    /// Bearer profile for `--suite` (e.g. `nb-iot`, `gsm-csd`).
    #[arg(long, default_value = "nb-iot")]
    pub profile: String,
    /// Loss probability added to the profile for `--suite`.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Seed of the relay's delay and loss draws (and of the CoAP timers) for `--suite`.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Emulated client device for `--suite` (default: this machine).
    #[arg(long)]
    pub device: Option<String>,
    // The PKI of the anchors' WTLS counterparts, issued on first use.
    #[command(flatten)]
    pub pki: PkiArgs,
}

impl Args {
    /// The drivers' configuration: each name resolved, or an error naming its option.
    pub fn config(&self) -> anyhow::Result<CompareConfig> {
        let over = match &self.suite {
            Some(name) => Some(Suite::parse(name).context("--suite")?),
            None => None,
        };
        let device = find_device(self.device.as_deref())?;
        let profile =
            wtlsperf_bearer::profile(&self.profile).map_err(|e| anyhow!("--profile: {e}"))?;
        Ok(CompareConfig {
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
        let c = config(&["compare", "--suite", "psk-ccm8", "--profile", "gsm-csd"]).unwrap();
        assert_eq!(c.over, Some(Suite::parse("psk-ccm8").unwrap()));
        assert_eq!(c.profile.name, "gsm-csd");
        assert_eq!(c.device.name(), "this-machine");
        assert!(c.peers);
        for (option, value) in [
            ("--suite", "bogus"),
            ("--profile", "bogus"),
            ("--device", "bogus"),
        ] {
            let err = format!("{:#}", config(&["compare", option, value]).unwrap_err());
            assert!(err.contains(option) && err.contains(value), "{err}");
        }
    }
}
