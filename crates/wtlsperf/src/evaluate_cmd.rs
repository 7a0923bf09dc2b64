//! `wtlsperf evaluate` on the command line: its arguments and the campaign configuration
//! they make (`wtlsperf_campaign::evaluate::run`).

use std::path::PathBuf;

use wtlsperf_campaign::evaluate::{EvaluateConfig, Mode, Only};

use crate::cli_args::{self, InterferenceArgs, PkiArgs};

/// `wtlsperf evaluate` arguments. A new option goes here and into [`Args::config`], and
/// its value into the campaign's `EvaluateConfig`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("dir", |a| a.default_value(None::<&str>)
    .help("PKI directory, created on first use (default `<out>/pki`)")))]
pub struct Args {
    /// A shorter run (about 170 s on 2 cores): 3 repetitions per case, three load
    /// points per setting, a handful of bearer cases, this machine's client only, no
    /// instruction counts.
    #[arg(long)]
    pub quick: bool,
    /// Every part on minimal inputs; proves the pipeline, measures nothing worth reading.
    #[arg(long, hide = true)]
    pub smoke: bool,
    /// Output directory (default `results/<UTC timestamp>/`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The shared `--pki` without its default: absent, the PKI goes in `<out>/pki`.
    #[command(flatten)]
    pub pki: Option<PkiArgs>,
    /// Also write every queue load point's job and disturbance logs into this directory
    /// (as `wtlsperf load --jobs` does; some 100 MB for a full run), to read a point again
    /// or differently.
    #[arg(long)]
    pub job_logs: Option<PathBuf>,
    /// A data directory laid out like the repository's `data/` (`devices/profiles.csv`,
    /// `devices/operations.csv`, `bearers/profiles.csv`) whose devices and bearers the
    /// campaign runs on instead of the shipped ones.
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Run one part alone, with the parts it reads, and write only its files and
    /// `part.json` (its wall time and headline figures), not the report: `queue` runs the
    /// processing part (whose service times are the load test's first guess) and the
    /// queue part, and writes `queue.csv`, `queue_load_test.csv` and
    /// `queue_robustness.csv`; `robustness` runs the processing part and the Poisson
    /// premise's test under other round-trip laws (not part of the main run), and writes
    /// `queue_robustness.csv` with its points. For checking one part on a shared machine
    /// without the whole campaign.
    #[arg(long, value_parser = cli_args::choice(&ONLY))]
    pub only: Option<Only>,
    /// The queue load test's interference injector (see `wtlsperf load`): every load
    /// run of the queue part has the worker's core taken at this duty cycle.
    #[command(flatten)]
    pub interference: InterferenceArgs,
    /// Add the section "The WAP gateway beside Kannel" (and `wap_bench_*.csv`), read from
    /// a results directory of `scripts/bench-wap-kannel.sh` (its `runs.csv`, `wtls.csv`
    /// and `meta.json`); `--only wap_bench` writes that section alone. A directory that
    /// cannot be read is refused (exit 2) before anything runs.
    #[arg(long, value_name = "DIR", required_if_eq("only", "wap_bench"))]
    pub wap_bench: Option<PathBuf>,
}

/// `--only`: the parts that can run alone, by their command-line names.
const ONLY: [(Only, &str, &str); 4] = [
    (
        Only::Queue,
        "queue",
        "The queue part: the models and the load test",
    ),
    (
        Only::Robustness,
        "robustness",
        "The Poisson premise under round-trip laws that are not exponential: every law, the exponential baseline among them, at three loads, each point long enough for the interval rule to decide (about 7 minutes in the full mode); writes `queue_robustness.csv`, its points in `queue_load_test.csv` and `queue.csv`, and `part.json` with the finding",
    ),
    (
        Only::PageLoad,
        "page_load",
        "The page loads over the emulated bearers, the first page and the decks by size; writes `page_load.csv`, `page_load_decks.csv`, `page_load_gateway.csv` and `part.json`",
    ),
    (
        Only::WapBench,
        "wap_bench",
        "The WAP gateway beside Kannel from `--wap-bench DIR` alone, nothing measured: writes report.html with that section, `wap_bench_*.csv` and `part.json`",
    ),
];

impl Args {
    /// The campaign's configuration: `--smoke` wins over `--quick`.
    pub fn config(self) -> anyhow::Result<EvaluateConfig> {
        let mode = if self.smoke {
            Mode::Smoke
        } else if self.quick {
            Mode::Quick
        } else {
            Mode::Full
        };
        Ok(EvaluateConfig {
            mode,
            interference: self.interference.interference(INTERFERENCE_SEED)?,
            out: self.out,
            pki_dir: self.pki.map(|p| p.dir),
            job_logs: self.job_logs,
            data: self.data,
            only: self.only,
            wap_bench: self.wap_bench,
        })
    }
}

/// The injector's seed in an evaluation: each load run reseeds it from its own seed
/// (see the queue part), so a run's disturbance is reproducible.
const INTERFERENCE_SEED: u64 = 2004;

pub fn run(args: Args) -> anyhow::Result<()> {
    wtlsperf_campaign::evaluate::run(args.config()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    type Command = crate::cli_args::OptionsOf<Args>;

    #[test]
    fn without_pki_the_evaluation_chooses_its_own_directory() {
        let absent = Command::try_parse_from(["evaluate"]).unwrap();
        assert!(absent.args.config().unwrap().pki_dir.is_none());
        let given = Command::try_parse_from(["evaluate", "--pki", "elsewhere"]).unwrap();
        assert_eq!(
            given.args.config().unwrap().pki_dir,
            Some(PathBuf::from("elsewhere"))
        );
    }

    #[test]
    fn the_mode_is_the_smallest_asked_for() {
        let mode = |argv: &[&str]| {
            Command::try_parse_from(argv)
                .unwrap()
                .args
                .config()
                .unwrap()
                .mode
        };
        assert_eq!(mode(&["evaluate"]), Mode::Full);
        assert_eq!(mode(&["evaluate", "--quick"]), Mode::Quick);
        assert_eq!(mode(&["evaluate", "--quick", "--smoke"]), Mode::Smoke);
        let only = Command::try_parse_from(["evaluate", "--only", "queue"]).unwrap();
        assert_eq!(only.args.config().unwrap().only, Some(Only::Queue));
        let only = Command::try_parse_from(["evaluate", "--only", "robustness"]).unwrap();
        assert_eq!(only.args.config().unwrap().only, Some(Only::Robustness));
        assert!(Command::try_parse_from(["evaluate", "--only", "processing"]).is_err());
    }

    #[test]
    fn only_wap_bench_needs_the_benchmark_directory() {
        assert!(Command::try_parse_from(["evaluate", "--only", "wap_bench"]).is_err());
        let config =
            Command::try_parse_from(["evaluate", "--only", "wap_bench", "--wap-bench", "b"])
                .unwrap()
                .args
                .config()
                .unwrap();
        assert_eq!(config.only, Some(Only::WapBench));
        assert_eq!(config.wap_bench, Some(PathBuf::from("b")));
        // Without --only, the section joins the whole evaluation; without the option, no
        // directory is read.
        let whole = Command::try_parse_from(["evaluate", "--wap-bench", "b"]).unwrap();
        assert_eq!(whole.args.config().unwrap().only, None);
        let none = Command::try_parse_from(["evaluate"]).unwrap();
        assert!(none.args.config().unwrap().wap_bench.is_none());
    }

    #[test]
    fn interference_is_a_duty_cycle_with_a_burst() {
        let config = |argv: &[&str]| Command::try_parse_from(argv).map(|c| c.args.config());
        let none = config(&["evaluate"]).unwrap().unwrap();
        assert!(none.interference.is_none());
        let five = config(&["evaluate", "--interference", "5%"])
            .unwrap()
            .unwrap();
        let i = five.interference.unwrap();
        assert_eq!((i.duty, i.burst.as_millis()), (0.05, 10));
        let i = config(&[
            "evaluate",
            "--interference",
            "0.1",
            "--interference-burst-ms",
            "2",
        ])
        .unwrap()
        .unwrap()
        .interference
        .unwrap();
        assert_eq!((i.duty, i.burst.as_millis()), (0.1, 2));
        // Out of range, not a number, or a burst without a duty cycle: refused, naming
        // the option.
        for bad in [
            &["evaluate", "--interference", "80%"][..],
            &["evaluate", "--interference", "lots"],
            &["evaluate", "--interference-burst-ms", "5"],
        ] {
            let e = config(bad).unwrap_err().to_string();
            assert!(e.contains("--interference"), "{bad:?}: {e}");
        }
        let e = config(&[
            "evaluate",
            "--interference",
            "5%",
            "--interference-burst-ms",
            "5000",
        ])
        .unwrap()
        .unwrap_err()
        .to_string();
        assert!(e.contains("--interference-burst-ms"), "{e}");
    }
}
