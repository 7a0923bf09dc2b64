//! `wtlsperf count` on the command line: its arguments and the drivers' count
//! configuration they make (`wtlsperf_drivers::counts::run`).

use std::path::PathBuf;

use anyhow::Context;
use wtlsperf_drivers::counts::{CountConfig, DEFAULT_SEED};
use wtlsperf_drivers::runner::Variant;

use crate::cli_args::{self, CaseSelectionArgs};
use crate::handshake_cmd::VARIANTS;

/// `wtlsperf count`: instruction counts of handshake cases under callgrind.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The cases and modes to count (`--case`, `--auth`, repeatable).
    #[command(flatten)]
    pub selection: CaseSelectionArgs,
    /// Handshake variant (resumed is not counted).
    #[arg(long, default_value = "full", value_parser = cli_args::choice(&VARIANTS))]
    pub variant: Variant,
    /// Seed of the PKI and of every random draw.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Cases counted at once (one valgrind process each).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Write the counts as CSV here instead of a table on stdout.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Keep the PKI and the callgrind profiles in this directory (for reading a
    /// profile with callgrind_annotate); default a temporary directory, removed after.
    #[arg(long)]
    pub keep: Option<PathBuf>,
    /// Internal: run one case in this process (the child under valgrind).
    #[arg(long, hide = true, requires = "child_pki")]
    pub one: bool,
    /// Internal: the PKI the child loads (not the shared `--pki`: the parent issues it
    /// from the seed, in a directory of its own).
    #[arg(long, hide = true)]
    pub child_pki: Option<PathBuf>,
}

impl Args {
    /// The drivers' configuration of the count these options ask for.
    pub fn config(&self) -> anyhow::Result<CountConfig> {
        let child_pki = if self.one {
            Some(self.child_pki.clone().context("--one needs --child-pki")?)
        } else {
            None
        };
        Ok(CountConfig {
            cases: self.selection.cases.clone(),
            auths: self.selection.auths.clone(),
            variant: self.variant,
            seed: self.seed,
            jobs: self.jobs,
            csv: self.csv.clone(),
            keep: self.keep.clone(),
            child_pki,
        })
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    wtlsperf_drivers::counts::run(args.config()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    type Command = crate::cli_args::OptionsOf<Args>;

    #[test]
    fn only_the_child_gets_a_child_pki() {
        let parse = |argv: &[&str]| Command::try_parse_from(argv).unwrap().args.config();
        let parent = parse(&["count", "--child-pki", "p", "--case", "160p/160p"]).unwrap();
        assert_eq!(parent.child_pki, None);
        assert_eq!(parent.cases.len(), 1);
        assert!(parent.auths.is_empty());
        assert_eq!(parent.variant, Variant::Full);
        let child = parse(&[
            "count",
            "--one",
            "--child-pki",
            "p",
            "--variant",
            "anonymous",
        ]);
        let child = child.unwrap();
        assert_eq!(child.child_pki, Some(PathBuf::from("p")));
        assert_eq!(child.variant, Variant::Anonymous);
        assert!(Command::try_parse_from(["count", "--one"]).is_err());
    }
}
