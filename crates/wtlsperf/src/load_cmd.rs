//! `wtlsperf load` on the command line: its arguments, the run, and the report on stdout
//! and in the files of `--out` and `--jobs` (written by the drivers' `load::files`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use wtlsperf_drivers::load::{run_load, write_job_log, write_report, Arrivals, LoadSpec};
use wtlsperf_drivers::registry::Contender;

use crate::cli_args::{
    self, at_least_one, positive_number, positive_seconds, HandshakeArgs, InterferenceArgs,
    PackingArgs, ServedPkiArgs,
};

/// `wtlsperf load` arguments. The default case is 256p/256p, not the clients'
/// 160p/160p: a case whose server work is large enough for a job log to resolve.
#[derive(Debug, clap::Args)]
#[command(mut_arg("case", |a| a.default_value("256p/256p")))]
pub struct Args {
    /// A running gateway; without it (or with --in-process) one is started in process.
    #[arg(long)]
    pub connect: Option<SocketAddr>,
    /// Offered handshakes per second.
    #[arg(long, default_value = "100", value_parser = positive_number, allow_negative_numbers = true)]
    pub rate: f64,
    /// Arrival window, seconds.
    #[arg(long, default_value = "10", value_parser = positive_seconds, allow_negative_numbers = true)]
    pub duration: f64,
    // `--case` (default 256p/256p here: see the `mut_arg` above) and `--auth`.
    #[command(flatten)]
    pub handshake: HandshakeArgs,
    #[arg(long, default_value_t = 0.0)]
    pub resume_ratio: f64,
    /// Start a gateway in this process and read its job records.
    #[arg(long)]
    pub in_process: bool,
    #[arg(long, default_value = "1", value_parser = at_least_one, allow_negative_numbers = true)]
    pub workers: usize,
    #[arg(long, default_value_t = 1_000_000)]
    pub max_handshakes: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 5_000)]
    pub timeout_ms: u64,
    #[arg(long, default_value_t = 1_000)]
    pub rto_ms: u64,
    /// Emulated bearer round trip (mean, ms, exponential): each answer of the client is
    /// held this long on average. 0 answers at once.
    #[arg(long, default_value_t = 0.0)]
    pub round_trip_ms: f64,
    /// The law of each emulated round trip around its mean: `exponential`, `fixed-jitter`
    /// (+-10 %), `gsm-csd` (two traversals of the thesis' GSM CSD law, scaled), `pareto`
    /// (tail index 1.5) or `bimodal` (half at once, half after twice the mean).
    #[arg(long, default_value = "exponential", value_parser = parse_round_trip_law)]
    pub round_trip_law: wtlsperf_drivers::load::RoundTripLaw,
    #[command(flatten)]
    pub packing: PackingArgs,
    /// Closed loop: keep N handshakes in flight instead of Poisson arrivals (capacity at
    /// saturation; --rate then only sizes the key pool).
    #[arg(long, value_parser = at_least_one, allow_negative_numbers = true)]
    pub closed: Option<usize>,
    /// With --closed: every handshake from a new client address, instead of N clients
    /// each reconnecting from its own.
    #[arg(long)]
    pub fresh_addresses: bool,
    /// Also measure server CPU per handshake in memory and print the capacity ratio.
    #[arg(long)]
    pub capacity: bool,
    /// In-process: pin the generator and the gateway worker(s) to different CPUs.
    #[arg(long)]
    pub pin: bool,
    /// Write the report as CSV (.csv) or JSON (anything else).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// In-process: write the gateway's job log as CSV (one row per job: arrival, start,
    /// end and CPU in ns on the process clock, bytes, records, peer, worker, whether the
    /// arrival is the kernel's timestamp), and beside it FILE with the extension
    /// `disturbances.csv` (kind, start, end: the worker's, the generator's and the
    /// delivery path's stalls, and the generator's late sends).
    #[arg(long)]
    pub jobs: Option<PathBuf>,
    /// Offer another protocol's configuration instead of the WTLS case, against its own
    /// server started in process behind the same gateway worker, as
    /// `protocol:configuration` (`dtls1.2:psk-ccm8`, `edhoc:method3-suite2`,
    /// `dtls1.3:mlkem768-ecdsa-ccm8`; a wrong name lists the known ones).
    #[arg(long, value_parser = cli_args::contender)]
    pub contender: Option<Contender>,
    /// Write every handshake as a CSV row: intended start and end (Unix ms), the client's
    /// socket, whether it offered a stored session, and `full`, `abbreviated`,
    /// `optimised` or `failed` (docs/results.md).
    #[arg(long)]
    pub outcomes: Option<PathBuf>,
    #[command(flatten)]
    pub interference: InterferenceArgs,
    #[command(flatten)]
    pub pki: ServedPkiArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let store = args.pki.open()?;
    let mut spec = LoadSpec::new(
        args.handshake.case,
        args.handshake.auth,
        args.rate,
        Duration::try_from_secs_f64(args.duration)
            .map_err(|_| anyhow::anyhow!("--duration {}: too long", args.duration))?,
    );
    spec.target = if args.in_process { None } else { args.connect };
    spec.workers = args.workers;
    spec.max_handshakes = args.max_handshakes;
    spec.resume_ratio = args.resume_ratio;
    spec.seed = args.seed;
    spec.handshake_timeout = Duration::from_millis(args.timeout_ms);
    spec.retransmit_timeout = Duration::from_millis(args.rto_ms.max(1));
    spec.measure_capacity = args.capacity;
    spec.pin_cores = args.pin;
    if let Some(c) = &args.contender {
        spec.contender = c.clone();
    }
    spec.record_outcomes = args.outcomes.is_some();
    if let Some(path) = &args.outcomes {
        // Refused before the run, not after it.
        std::fs::File::create(path).with_context(|| format!("--outcomes {}", path.display()))?;
    }
    anyhow::ensure!(
        args.contender.is_none() || args.connect.is_none() || args.in_process,
        "--contender starts its own server in process; it cannot offer load to --connect"
    );
    anyhow::ensure!(
        args.round_trip_ms.is_finite() && args.round_trip_ms >= 0.0,
        "--round-trip-ms must be a non-negative number"
    );
    if let Some(clients) = args.closed {
        spec.arrivals = Arrivals::Closed {
            clients,
            fresh_addresses: args.fresh_addresses,
            // The rate only sizes the key pool of a closed loop.
            key_pool: (args.rate * args.duration) as usize,
        };
    }
    spec.round_trip =
        (args.round_trip_ms > 0.0).then(|| Duration::from_secs_f64(args.round_trip_ms / 1e3));
    spec.round_trip_law = args.round_trip_law;
    spec.packing = args.packing.packing;
    spec.interference = args.interference.interference(args.seed)?;
    anyhow::ensure!(
        spec.interference.is_none() || spec.target.is_none(),
        "--interference takes the in-process gateway's core; it needs --in-process (or no --connect)"
    );
    let report = run_load(&spec, &store)?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    if let Some(out) = &args.out {
        write_report(&report, out)?;
    }
    if let Some(path) = &args.outcomes {
        wtlsperf_drivers::load::outcomes::write_outcomes(&report.outcomes, path)?;
    }
    if let Some(path) = &args.jobs {
        write_job_log(&report, path)?;
    }
    Ok(())
}

/// The value parser of `--round-trip-law`.
fn parse_round_trip_law(name: &str) -> Result<wtlsperf_drivers::load::RoundTripLaw, String> {
    wtlsperf_drivers::load::RoundTripLaw::parse(name).map_err(|e| e.to_string())
}
