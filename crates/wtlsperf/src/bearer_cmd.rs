//! `wtlsperf bearer`: a thin command over [`wtlsperf_bearer::Relay`], or, with
//! `--check-case`, handshakes through fresh relays compared with the transmission model
//! ([`wtlsperf_drivers::bearer_runs::model_check`]).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli_args::{self, PkiArgs};
use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_bearer::{profile, profiles, Relay};
use wtlsperf_drivers::bearer_runs::{fixed_delay, model_check};

/// `wtlsperf bearer` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address clients send to.
    #[arg(long, default_value = "127.0.0.1:9203")]
    pub listen: SocketAddr,
    /// The gateway.
    #[arg(long, default_value = "127.0.0.1:9202")]
    pub upstream: SocketAddr,
    /// Bearer profile name (see --list).
    #[arg(long, default_value = "gsm-csd")]
    pub profile: String,
    /// Override the loss probability.
    #[arg(long)]
    pub loss: Option<f64>,
    /// Override the duplication probability.
    #[arg(long)]
    pub duplicate: Option<f64>,
    /// Override the reordering probability.
    #[arg(long)]
    pub reorder: Option<f64>,
    /// Delay every datagram by exactly the profile's mean traversal (no jitter).
    #[arg(long)]
    pub fixed_delay: bool,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Stop by itself after this many seconds.
    #[arg(long)]
    pub duration_s: Option<f64>,
    /// List the profiles and exit.
    #[arg(long)]
    pub list: bool,
    /// Instead of relaying: run --check-runs handshakes of this CA/leaf case through
    /// fresh relays in front of --upstream and compare with the transmission model.
    #[arg(long)]
    pub check_case: Option<Case>,
    /// Handshakes of --check-case.
    #[arg(long, default_value_t = 10)]
    pub check_runs: usize,
    /// Authentication of the --check-case handshakes.
    #[arg(long, default_value = "server", value_parser = cli_args::auth_mode())]
    pub check_auth: AuthMode,
    // The PKI of --check-case, issued on first use.
    #[command(flatten)]
    pub pki: PkiArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.list {
        for p in profiles()? {
            println!(
                "{:<16} up {:>9.0} bit/s down {:>9.0} bit/s ({}) traversal {:?} ({})",
                p.name,
                p.up_bps,
                p.down_bps,
                p.rate_kind.describe(),
                p.traversal,
                p.source
            );
        }
        return Ok(());
    }
    let mut p = profile(&args.profile)?;
    if let Some(l) = args.loss {
        p = p.with_loss(l);
    }
    if let Some(d) = args.duplicate {
        p = p.with_duplicate(d);
    }
    if let Some(r) = args.reorder {
        p = p.with_reorder(r);
    }
    if args.fixed_delay {
        p = fixed_delay(&p);
    }
    p.validate()?;
    if let Some(case) = args.check_case {
        let store = args.pki.load_or_init()?;
        let check = model_check(
            &store,
            args.upstream,
            case,
            args.check_auth,
            &p,
            args.check_runs,
            args.seed,
        )?;
        println!("{}", serde_json::to_string_pretty(&check)?);
        return Ok(());
    }
    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, stop.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.clone())?;
    let mut relay = Relay::start(args.listen, args.upstream, p.clone(), args.seed)?;
    eprintln!(
        "bearer {} relaying {} -> {}",
        p.name,
        relay.local_addr(),
        args.upstream
    );
    let deadline = args
        .duration_s
        .map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    while !stop.load(Ordering::SeqCst)
        && relay.is_running()
        && deadline.is_none_or(|d| Instant::now() < d)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let stats = relay.stats();
    relay.shutdown();
    println!("{stats:#?}");
    Ok(())
}
