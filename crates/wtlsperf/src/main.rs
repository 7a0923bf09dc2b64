//! The `wtlsperf` command: WTLS gateway, client, load generator and laboratory.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use wtls::suite::{unavailable_specifiers, Case, Specifier};
use wtlsperf::cli_args::PkiArgs;
use wtlsperf_drivers::pki_store::PkiStore;

#[derive(Debug, Parser)]
#[command(
    name = "wtlsperf",
    version,
    about = "WAP WTLS 1.0 reference implementation and performance laboratory"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create or inspect the PKI (CAs and leaf certificates for all 24 CA/leaf cases).
    Pki {
        #[command(subcommand)]
        action: PkiAction,
    },
    /// Check every public-key operation of the 12 parameter specifiers through OpenSSL.
    /// The PKI is created if missing, then validated.
    Selfcheck {
        #[command(flatten)]
        pki: PkiArgs,
    },
    /// Run handshakes in memory (client and server in one process) and print timings.
    Handshake(wtlsperf::handshake_cmd::Args),
    /// Run the UDP WTLS gateway.
    // Boxed: its options outweigh every other command's (clippy's large_enum_variant).
    Gateway(Box<wtlsperf::gateway_cmd::Args>),
    /// Run handshakes against a gateway over UDP.
    Client(wtlsperf::client_cmd::Args),
    /// Run a UDP relay that emulates a bearer (GSM CSD, GPRS, ...) in front of a gateway.
    Bearer(wtlsperf::bearer_cmd::Args),
    /// Open-loop load: Poisson arrivals of new handshakes against a gateway.
    Load(wtlsperf::load_cmd::Args),
    /// Flood a gateway with ClientHellos and report memory and legitimate success.
    Flood(wtlsperf::flood_cmd::Args),
    /// Run the whole evaluation and write the report.
    Evaluate(wtlsperf::evaluate_cmd::Args),
    /// Run an experiment file: contenders, bearers, devices, loss levels and the
    /// measurements to take (docs/experiments.md; examples in experiments/). A bad file
    /// exits 2 before anything runs.
    Run(wtlsperf::run_cmd::Args),
    /// DTLS 1.2 (OpenSSL) and EDHOC (lakers) beside WTLS: in memory, over an emulated
    /// bearer, and the peer anchors' bound ratios beside ours.
    Compare(wtlsperf::compare_cmd::Args),
    /// Instruction counts (valgrind callgrind) of each side of one seeded handshake per
    /// case and of the server's raw public-key operations: identical on every run.
    Count(wtlsperf::count_cmd::Args),
}

#[derive(Debug, Subcommand)]
enum PkiAction {
    /// Issue CA, server and client certificates for every case.
    Init {
        #[arg(long, default_value = "pki")]
        dir: PathBuf,
        /// Replace an existing PKI.
        #[arg(long)]
        force: bool,
    },
    /// Print a WTLS certificate field by field and check it (exit 0 valid, 1 invalid,
    /// 2 unreadable); without --ca only a self-signed certificate's signature is checked.
    Show(wtlsperf::pki_show::ShowArgs),
}

fn main() {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Client(_) | Command::Pki { .. }) {
        restore_default_sigpipe();
    }
    // The evaluation and the load tools start in-process gateways many times; their
    // start-up lines would only interleave with the progress bar. RUST_LOG overrides.
    let default_level = match cli.command {
        Command::Evaluate(_)
        | Command::Run(_)
        | Command::Load(_)
        | Command::Flood(_)
        | Command::Compare(_) => "warn",
        _ => "info",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level)),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = dispatch(cli) {
        eprintln!("wtlsperf: {e:#}");
        // A refused experiment file or benchmark directory is a usage error, as clap's
        // own are.
        let bad_file = e
            .downcast_ref::<wtlsperf_campaign::experiment::FileError>()
            .is_some()
            || e.downcast_ref::<wtlsperf_campaign::evaluate::wap_bench::WapBenchError>()
                .is_some();
        std::process::exit(if bad_file { 2 } else { 1 });
    }
}

/// Lets a closed stdout end the process quietly, as it ends `cat` or `ls`
/// (`wtlsperf client | head -1`). Rust ignores SIGPIPE, which turns the next `println!`
/// into a panic instead. Only for the commands whose output is a short report read by
/// a person or a pipe; the long-running servers keep SIGPIPE ignored.
fn restore_default_sigpipe() {
    // SAFETY: installing the default disposition of a signal has no memory effects and
    // happens before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<()> {
    // Reading a certificate file needs no curve of the local libcrypto.
    if !matches!(
        cli.command,
        Command::Pki {
            action: PkiAction::Show(_)
        }
    ) {
        report_missing_curves();
    }
    match cli.command {
        Command::Pki {
            action: PkiAction::Init { dir, force },
        } => {
            let store = PkiStore::init(&dir, force)?;
            println!(
                "PKI written to {}: {} cases",
                store.dir().display(),
                store.cases().count()
            );
            Ok(())
        }
        // Its own exit status: 0 valid, 1 invalid, 2 unreadable.
        Command::Pki {
            action: PkiAction::Show(a),
        } => std::process::exit(wtlsperf::pki_show::run(&a)),
        Command::Selfcheck { pki } => selfcheck(&pki),
        Command::Handshake(a) => wtlsperf::handshake_cmd::run(a),
        Command::Gateway(a) => wtlsperf::gateway_cmd::run(*a),
        Command::Client(a) => wtlsperf::client_cmd::run(a),
        Command::Bearer(a) => wtlsperf::bearer_cmd::run(a),
        Command::Load(a) => wtlsperf::load_cmd::run(a),
        Command::Flood(a) => wtlsperf::flood_cmd::run(a),
        Command::Evaluate(a) => wtlsperf::evaluate_cmd::run(a),
        Command::Run(a) => wtlsperf::run_cmd::run(a),
        Command::Compare(a) => wtlsperf::compare_cmd::run(a),
        Command::Count(a) => wtlsperf::count_cmd::run(a),
    }
}

/// Say which cases the local libcrypto cannot run, instead of failing obscurely later.
fn report_missing_curves() {
    let missing = unavailable_specifiers();
    if missing.is_empty() {
        return;
    }
    for (spec, why) in &missing {
        eprintln!("wtlsperf: {} is unavailable: {why}", spec.short());
    }
    let cases: Vec<String> = Case::ALL
        .iter()
        .filter(|c| !c.is_available())
        .map(|c| c.to_string())
        .collect();
    eprintln!(
        "wtlsperf: {} of 24 cases cannot run here: {}",
        cases.len(),
        cases.join(", ")
    );
}

/// Create (or load) the PKI, then exercise every public-key operation of every
/// available specifier and validate every certificate.
fn selfcheck(pki: &PkiArgs) -> anyhow::Result<()> {
    let store = pki.load_or_init()?;
    println!(
        "PKI {}: {} cases validated",
        store.dir().display(),
        store.cases().count()
    );
    let mut failed = 0;
    for spec in Specifier::ALL {
        match wtls::crypto::pk::self_check(spec) {
            Ok(check) => println!("  {:<8} ok   {check:?}", spec.short()),
            Err(e) => {
                failed += 1;
                println!("  {:<8} FAIL {e}", spec.short());
            }
        }
    }
    anyhow::ensure!(
        failed == 0,
        "{failed} of 12 key types failed the self-check"
    );
    println!("all 12 key types passed");
    Ok(())
}
