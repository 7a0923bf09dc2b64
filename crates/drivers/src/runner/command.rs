//! `wtlsperf handshake`: the cases to run, the tables on stdout (or stderr) and the JSON
//! records.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use wtls::handshake::AuthMode;
use wtls::suite::Case;

use super::{
    json_records, measure_case, planned_cases, render_case, render_overview, Args, RunnerOptions,
};
use crate::pki_store::PkiStore;

/// Runs `wtlsperf handshake`.
pub fn run(args: Args) -> Result<()> {
    let started = Instant::now();
    let store = args.pki.load_or_init()?;
    let opts = options(&args);
    let to_stdout = args.json.as_deref() == Some(std::path::Path::new("-"));
    let mut json: Option<Box<dyn Write>> = match &args.json {
        None => None,
        Some(_) if to_stdout => Some(Box::new(BufWriter::new(std::io::stdout()))),
        Some(p) => Some(Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("creating {}", p.display()))?,
        ))),
    };
    // With the JSON on stdout, the tables go to stderr.
    let print = |text: &str| {
        if to_stdout {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    };
    let plan = plan(&args, &store, &print)?;
    let mut results = Vec::new();
    for (i, (case, auth)) in plan.iter().enumerate() {
        if plan.len() > 1 {
            eprintln!("[{}/{}] {case} {}", i + 1, plan.len(), auth.name());
        }
        let m = measure_case(&store, *case, *auth, &opts)?;
        print(&render_case(&m));
        print("\n");
        if let Some(w) = json.as_mut() {
            for r in json_records(&m) {
                serde_json::to_writer(&mut *w, &r)?;
                w.write_all(b"\n")?;
            }
        }
        results.push(m);
    }
    if results.len() > 1 {
        print(&render_overview(&results));
    }
    if let Some(mut w) = json {
        w.flush()?;
    }
    print(&format!(
        "run took {:.1} s\n",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// The runner's options from the command line: one bound pair per rep, no extension
/// (`scripts/bench-counts.sh` divides the raw operations' count by the reps).
fn options(args: &Args) -> RunnerOptions {
    RunnerOptions {
        reps: args.reps,
        warmup: args.warmup,
        flow: args.flow,
        packing: args.packing.packing,
        variant: args.variant,
        measure_bound: !args.no_bound,
        measure_probe_overhead: !args.no_probe_overhead,
        bound_extension: None,
    }
}

/// The (case, authentication) pairs to run: every planned one with `--all` (naming the
/// cases the local libcrypto cannot run), else the one given.
fn plan(args: &Args, store: &PkiStore, print: &dyn Fn(&str)) -> Result<Vec<(Case, AuthMode)>> {
    if args.all {
        for c in Case::ALL.iter().filter(|c| !c.is_available()) {
            print(&format!(
                "note: skipping {c}: {}\n",
                c.ca.unavailability()
                    .or(c.leaf.unavailability())
                    .unwrap_or("not in the PKI")
            ));
        }
        return Ok(planned_cases(store, args.variant));
    }
    let crate::cli_args::HandshakeArgs { case, auth } = args
        .handshake
        .clone()
        .ok_or_else(|| anyhow!("--case and --auth are required without --all"))?;
    if !case.is_available() {
        bail!("case {case} needs a curve the local libcrypto lacks");
    }
    Ok(vec![(case, auth)])
}
