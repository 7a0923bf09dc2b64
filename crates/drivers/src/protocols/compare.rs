//! `wtlsperf compare`: every protocol of the registry beside WTLS from the command
//! line: each configuration in memory (bytes, flights, CPU, bound ratio), optionally one
//! over an emulated bearer on an emulated device with the model beside it, and the peer
//! anchors' bound ratios beside our gateway's, measured interleaved in one run.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context};
use wtls::suite::Case;
use wtlsperf_bearer::LinkProfile;

use super::model::{self, Device};
use super::peers::{AnchorBench, Peer, PeerSamples};
use crate::pki_store::PkiStore;
use crate::registry::{self, run_over_bearer, Bench, Contender};
use crate::runner::{self, AuthMode, Flow, RunnerOptions};

/// What `wtlsperf compare` runs (the command line, the `wtlsperf` crate's
/// `compare_cmd`, parses its options into this).
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// The configurations measured in memory (every one of the registry's by default).
    pub contenders: Vec<Contender>,
    /// Handshakes per configuration in memory.
    pub reps: usize,
    /// Handshakes per anchor (and per WTLS counterpart) for the bound ratios, in blocks.
    pub peer_reps: usize,
    /// Measure the peer anchors.
    pub peers: bool,
    /// Also run this configuration over an emulated bearer.
    pub over: Option<Contender>,
    /// Bearer profile for `over`, before `loss` is added.
    pub profile: LinkProfile,
    /// Loss probability added to the profile for `over`.
    pub loss: f64,
    /// Seed of the relay's delay and loss draws (and of the CoAP timers) for `over`.
    pub seed: u64,
    /// Emulated client device for `over`.
    pub device: Device,
    /// The PKI of the WTLS cases (and of the anchors' WTLS counterparts), issued on
    /// first use.
    pub pki_dir: PathBuf,
}

/// The default contenders: WTLS's like-for-like case (256p/256p, both modes) and every
/// configuration of every other protocol this build has.
pub fn default_contenders() -> Vec<Contender> {
    let mut out: Vec<Contender> = ["wtls:256p/256p", "wtls:256p/256p-mutual"]
        .iter()
        .filter_map(|t| registry::contender(t).ok())
        .collect();
    for p in registry::available().filter(|p| p.id() != wtls::handshake::WTLS) {
        out.extend(p.configurations());
    }
    out
}

/// Runs the command.
pub fn run(args: CompareConfig) -> anyhow::Result<()> {
    anyhow::ensure!(args.reps > 0, "--reps must be at least 1");
    let (store, _scratch) = pki_for(&args)?;
    let bench = Bench { store: &store };
    println!(
        "{:<44} {:>6} {:>7} {:>10} {:>6} {:>10} {:>10}",
        "contender", "bytes", "flights", "server_us", "bound", "hs/s/core", "client_us"
    );
    for c in &args.contenders {
        let m = c
            .measure_in_memory(bench, args.reps, args.reps.min(20))
            .with_context(|| format!("{c} in memory"))?;
        println!(
            "{:<44} {:>6} {:>7} {:>10.0} {:>6} {:>10.0} {:>10.0}",
            c.to_string(),
            m.shape.bytes(),
            m.shape.flights().len(),
            m.server_cpu_us,
            m.bound_ratio().map_or("-".into(), |b| format!("{b:.2}")),
            m.handshakes_per_core_s(),
            m.client_cpu_us
        );
    }
    if let Some(c) = &args.over {
        over_bearer(&args, bench, c)?;
    }
    if args.peers {
        anyhow::ensure!(args.peer_reps > 0, "--peer-reps must be at least 1");
        for (peer, ours) in anchors_beside_ours(&store, args.peer_reps, 10)? {
            println!(
                "{:<28} bound {:.2}  (server {:.0} us, raw {:.0} us)   ours {}: {}",
                peer.peer.key(),
                peer.bound_ratio(),
                peer.server_cpu_us,
                peer.raw_pk_us,
                peer.peer.wtls_counterpart(),
                ours.map_or("-".into(), |b| format!("{b:.2}"))
            );
        }
    }
    Ok(())
}

/// The PKI of the WTLS cases and anchors (`--pki`, issued on first use) where a WTLS
/// contender or the anchors need it; otherwise an empty one in a scratch directory (the
/// other protocols bring their own credentials), removed when the guard drops.
fn pki_for(args: &CompareConfig) -> anyhow::Result<(PkiStore, Option<tempfile::TempDir>)> {
    let wtls = args
        .contenders
        .iter()
        .chain(&args.over)
        .any(|c| c.protocol() == wtls::handshake::WTLS);
    if args.peers || wtls {
        let store = PkiStore::load_or_init(&args.pki_dir)
            .with_context(|| format!("--pki {}", args.pki_dir.display()))?;
        return Ok((store, None));
    }
    let dir = tempfile::tempdir()?;
    let now = crate::pki_store::unix_now()?;
    let store = PkiStore::create(&dir.path().join("pki"), true, now, &[])?;
    Ok((store, Some(dir)))
}

/// The device `--device` names (`this-machine` when absent), or an error listing the
/// known ones.
pub fn find_device(name: Option<&str>) -> anyhow::Result<Device> {
    let all = Device::all()?;
    let name = name.unwrap_or("this-machine");
    let names: Vec<String> = all.iter().map(|d| d.name().to_owned()).collect();
    all.into_iter()
        .find(|d| d.name() == name)
        .ok_or_else(|| anyhow!("--device {name:?} is unknown; known: {}", names.join(", ")))
}

fn over_bearer(args: &CompareConfig, bench: Bench<'_>, c: &Contender) -> anyhow::Result<()> {
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.loss),
        "--loss must lie in [0, 1]"
    );
    let p = args.profile.clone().with_loss(args.loss);
    let published = wtlsperf_models::device::published_pq::published_pq_costs().unwrap_or_default();
    let steps = match &args.device {
        Device::ThisMachine => None,
        Device::Profile(d) => Some(
            c.client_steps(d, &published)
                .map_err(|e| anyhow!("{c} on {}: {e}", d.name))?,
        ),
    };
    let memory = c.measure_in_memory(bench, args.reps, args.reps.min(20))?;
    let client_ms = steps
        .as_ref()
        .map_or(memory.client_cpu_us / 1e3, |s| s.total_ms());
    // the flights the run exchanges: fragmented to the bearer's payload limit where the
    // protocol fragments to it (DTLS 1.3), as `protocols.csv`'s model takes them
    let flights = match c.shape_at(bench, p.datagram_payload_limit())? {
        Some(at_limit) => at_limit.flights(),
        None => memory.shape.flights(),
    };
    let modelled = model::duration_ms(&flights, &p, client_ms, memory.server_cpu_us / 1e3);
    let served = c.serve(bench, p.datagram_payload_limit())?;
    let run = run_over_bearer(
        &*served,
        &p,
        args.seed,
        steps.as_ref(),
        Duration::from_secs(180),
    )?;
    println!(
        "{c} over {} on {}: {:.0} ms (model without loss {:.0} ms), {} bytes, {} flights, {} client retransmissions",
        p.name,
        args.device.name(),
        run.duration_ms,
        modelled,
        run.bytes(),
        run.flights().len(),
        run.client_retransmissions
    );
    Ok(())
}

/// Our WTLS counterpart of an anchor, sampled like the anchors: (server CPU, raw) µs
/// per handshake, server-authenticated plain WTLS flow, probe off for the CPU.
fn ours_block(store: &PkiStore, case: Case, n: usize) -> anyhow::Result<Vec<(f64, f64)>> {
    let opts = RunnerOptions {
        reps: n,
        warmup: 0,
        flow: Flow::Wtls,
        ..RunnerOptions::default()
    };
    let m = runner::measure_case(store, case, AuthMode::ServerAuth, &opts)?;
    Ok(m.reps
        .iter()
        .filter_map(|r| {
            let cpu = r.server_cpu_probe_off_ns? as f64 / 1e3;
            Some((cpu, r.pk_bound_ns? as f64 / 1e3))
        })
        .collect())
}

/// Blocks per interleaved measurement: every anchor and our gateway take turns.
const BLOCKS: usize = 10;

/// Every anchor's medians beside our gateway's bound ratio for its WTLS counterpart,
/// all measured in `BLOCKS` interleaved blocks of `reps / BLOCKS` handshakes.
pub fn anchors_beside_ours(
    store: &PkiStore,
    reps: usize,
    warmup: usize,
) -> anyhow::Result<Vec<(super::peers::PeerMeasurement, Option<f64>)>> {
    let per_block = reps.div_ceil(BLOCKS).max(1);
    let benches: Vec<AnchorBench> = Peer::ALL
        .iter()
        .map(|&p| AnchorBench::new(p))
        .collect::<anyhow::Result<_>>()?;
    let ours_cases: Vec<Case> = ["256p/256p", "rsa2048/rsa2048"]
        .iter()
        .filter_map(|s| s.parse::<Case>().ok())
        .filter(|c| c.is_available())
        .collect();
    let mut samples: Vec<PeerSamples> = Peer::ALL.iter().map(|&p| PeerSamples::new(p)).collect();
    let mut ours: Vec<Vec<(f64, f64)>> = vec![Vec::new(); ours_cases.len()];
    for b in &benches {
        b.sample(warmup)?;
    }
    for _ in 0..BLOCKS {
        for (b, s) in benches.iter().zip(samples.iter_mut()) {
            s.extend(b.sample(per_block)?);
        }
        for (case, o) in ours_cases.iter().zip(ours.iter_mut()) {
            o.extend(ours_block(store, *case, per_block)?);
        }
    }
    let ratio = |v: &Vec<(f64, f64)>| {
        let cpu: Vec<f64> = v.iter().map(|x| x.0).collect();
        let raw: Vec<f64> = v.iter().map(|x| x.1).collect();
        let (c, r) = (
            wtlsperf_models::stats::median(&cpu)?,
            wtlsperf_models::stats::median(&raw)?,
        );
        (r > 0.0).then(|| c / r)
    };
    samples
        .iter()
        .map(|s| {
            let ours_ratio = ours_cases
                .iter()
                .position(|c| c.to_string() == s.peer.wtls_counterpart())
                .and_then(|i| ratio(&ours[i]));
            Ok((s.summary()?, ours_ratio))
        })
        .collect()
}
