//! Driving: both ends of a handshake in one thread, rep by rep, each rep timed from
//! outside the engine as well as by its probe, with the bound pairs beside it.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use wtls::handshake::{
    AuthMode, Client, ClientConfig, Event, HandshakeKind, Now, Output, Packing, Policy,
    ServerConfig, ServerConnection,
};
use wtls::probe::{Message, Probe, ProbeLevel};
use wtls::suite::Case;

use wtlsperf_spine::{Handshake, Pair};

use super::bound::{PinnedToCurrentCpu, RawServerOps};
use super::record::{kind_name, median_of};
use super::{
    symmetric_floor_ns, BoundExtension, BoundPair, CaseMeasurement, Flow, RepMeasurement, Variant,
};
use crate::pki_store::PkiStore;
use crate::setup::{self, ClientAuth, Options, ProcessClock};

/// How many flights a handshake may take before the runner calls it stuck. The longest
/// flow (full mutual) has four; the bound only keeps a broken engine from looping.
const MAX_ROUNDS: usize = 8;
/// Size of the application-data ping each rep sends after the handshake.
const PING_BYTES: usize = 64;

/// What [`measure_case`] does.
#[derive(Debug, Clone)]
pub struct RunnerOptions {
    /// Measured handshakes per case.
    pub reps: usize,
    /// Unmeasured handshakes first (page faults, lazy OpenSSL tables, branch predictors).
    pub warmup: usize,
    pub flow: Flow,
    pub packing: Packing,
    pub variant: Variant,
    /// Time one bound pair after every rep: a probe-off handshake beside the server's
    /// raw public-key operations.
    pub measure_bound: bool,
    /// Run every rep twice more, probe off and on, to measure the probe's cost.
    pub measure_probe_overhead: bool,
    /// With the bound: pairs to add after the reps while the ratio's interval does not
    /// clear 1 (`None`: exactly one pair per rep, as `wtlsperf handshake` and
    /// `scripts/bench-counts.sh`, which divides the raw operations' count by the reps,
    /// need).
    pub bound_extension: Option<BoundExtension>,
}

impl Default for RunnerOptions {
    fn default() -> Self {
        RunnerOptions {
            reps: 15,
            warmup: 2,
            flow: Flow::Thesis,
            packing: Packing::FlightPerDatagram,
            variant: Variant::Full,
            measure_bound: true,
            measure_probe_overhead: false,
            bound_extension: None,
        }
    }
}

/// Configurations and raw operations of one case, built once for all its reps.
pub(crate) struct Rig {
    case: Case,
    auth: AuthMode,
    variant: Variant,
    pub(crate) client: Arc<ClientConfig>,
    pub(crate) server: Arc<ServerConfig>,
    pub(crate) raw: Option<RawServerOps>,
}

impl Rig {
    pub(crate) fn new(
        store: &PkiStore,
        case: Case,
        auth: AuthMode,
        opts: &RunnerOptions,
    ) -> Result<Rig> {
        if !opts.variant.auth_modes().contains(&auth) {
            bail!("an anonymous key exchange authenticates nobody: run it with --auth server");
        }
        let creds = store.case(&case)?;
        let mut o = Options {
            packing: opts.packing,
            ..Options::default()
        };
        if opts.variant == Variant::Anonymous {
            o.policy = Policy::permissive();
        }
        let client = match opts.variant {
            Variant::Anonymous => setup::anonymous_client_config(&creds, &o),
            Variant::Optimised => setup::client_config(&creds, &o, true),
            Variant::Full | Variant::Resumed => setup::client_config(&creds, &o, false),
        };
        let client_auth = match (auth, opts.flow, opts.variant) {
            (AuthMode::Mutual, _, _) => ClientAuth::Required,
            (AuthMode::ServerAuth, _, Variant::Anonymous) => ClientAuth::None,
            (AuthMode::ServerAuth, Flow::Thesis, _) => ClientAuth::Optional,
            (AuthMode::ServerAuth, Flow::Wtls, _) => ClientAuth::None,
        };
        let server = setup::case_server_config(&creds, client_auth, &o);
        let raw = if opts.measure_bound {
            RawServerOps::prepare(&creds, auth, opts.variant)?
        } else {
            None
        };
        Ok(Rig {
            case,
            auth,
            variant: opts.variant,
            client: Arc::new(client),
            server: Arc::new(server),
            raw,
        })
    }

    fn probe(level: ProbeLevel) -> Probe {
        match level {
            ProbeLevel::Off => Probe::off(),
            level => Probe::new(ProcessClock::shared(), level),
        }
    }

    /// A fresh pair. For the resumed variant, first runs an unmeasured full handshake
    /// with the same server configuration (and so the same session cache) to get a
    /// session to resume.
    fn pair(&self, level: ProbeLevel) -> Result<(Client, ServerConnection)> {
        let now = setup::now();
        let resume = if self.variant == Variant::Resumed {
            let (c, s) = (
                Client::new(self.client.clone(), self.auth, None, Probe::off(), now),
                ServerConnection::new(self.server.clone(), Probe::off(), now),
            );
            let done = drive(c, s, now, false).context("priming full handshake")?;
            Some(
                done.client
                    .session()
                    .ok_or_else(|| anyhow!("the priming handshake left no resumable session"))?,
            )
        } else {
            None
        };
        Ok((
            Client::new(
                self.client.clone(),
                self.auth,
                resume,
                Self::probe(level),
                now,
            ),
            ServerConnection::new(self.server.clone(), Self::probe(level), now),
        ))
    }

    fn expected_kind(&self) -> HandshakeKind {
        match self.variant {
            Variant::Resumed => HandshakeKind::Abbreviated,
            Variant::Optimised if !self.case.leaf.is_rsa() => HandshakeKind::Optimised,
            _ => HandshakeKind::Full,
        }
    }
}

/// A completed handshake and what it cost.
struct Driven {
    client: Client,
    server: ServerConnection,
    client_cpu_ns: u64,
    server_cpu_ns: u64,
    server_jobs_ns: Vec<u64>,
    wall_ns: u64,
    kind: Option<HandshakeKind>,
}

/// Anything but a clean handshake step is an error: this runner has no loss, so an
/// alert, a dropped record or a retransmission means a bug.
fn check(out: &Output, who: &str) -> Result<()> {
    for e in &out.events {
        match e {
            Event::AlertSent(a, reason) => {
                bail!("{who} sent alert {:?}: {reason}", a.description)
            }
            Event::AlertReceived(a) => bail!("{who} received alert {:?}", a.description),
            Event::Dropped(why) => bail!("{who} dropped a record: {why}"),
            Event::AlertIgnored { alert, why } => {
                bail!("{who} ignored alert {:?}: {why}", alert.description)
            }
            Event::Retransmitted => bail!("{who} answered a retransmission"),
            Event::HandshakeComplete(_) | Event::ApplicationData(_) => {}
        }
    }
    Ok(())
}

/// Runs a handshake to completion through the spine's in-memory pair, both sides
/// alternately on this thread. With `timed`, every engine call is wrapped in thread-CPU
/// readings (two clock reads per call). No loss, so no timer is fired: a dropped input,
/// a failure or a retransmission means a bug.
fn drive(client: Client, server: ServerConnection, now: Now, timed: bool) -> Result<Driven> {
    let started = Instant::now();
    let mut pair = Pair::new(client, server, now);
    if timed {
        pair = pair.with_clock(setup::thread_cpu_ns);
    }
    pair.start();
    let outcome = pair.run(MAX_ROUNDS);
    let wall_ns = started.elapsed().as_nanos() as u64;
    for (who, steps) in [
        ("client", &pair.client_steps),
        ("server", &pair.server_steps),
    ] {
        if steps.iter().any(|s| s.dropped) {
            bail!("the {who} dropped an input on a network that loses nothing");
        }
    }
    if !pair.is_complete() {
        bail!(
            "handshake did not complete in {} rounds (client: {:?}, server: {:?})",
            outcome.rounds,
            pair.client.status(),
            pair.server.status()
        );
    }
    if pair.client.retransmissions() > 0 {
        bail!("the client retransmitted on a network that loses nothing");
    }
    let kind = pair.server.negotiated().map(|n| n.kind);
    let cpu = std::mem::take(&mut pair.cpu);
    let (client, server) = pair.into_parts();
    Ok(Driven {
        client,
        server,
        client_cpu_ns: cpu.client_ns,
        // The server's jobs: what it did per received datagram (its start does nothing).
        server_cpu_ns: cpu.server_jobs_ns.iter().sum(),
        server_jobs_ns: cpu.server_jobs_ns,
        wall_ns,
        kind,
    })
}

/// A 64-byte ping from the client and its echo from the server: proves both sides
/// derived the same keys, in both directions.
fn ping_echo(d: &mut Driven, now: Now) -> Result<()> {
    let ping: Vec<u8> = (0..PING_BYTES as u8).collect();
    let record = d
        .client
        .seal_application_data(&ping)
        .map_err(|e| anyhow!("client seal: {e}"))?;
    let out = d.server.handle_datagram(&record, now);
    check(&out, "server")?;
    if !out
        .events
        .iter()
        .any(|e| matches!(e, Event::ApplicationData(d) if *d == ping))
    {
        bail!("the server did not receive the ping: {:?}", out.events);
    }
    let record = d
        .server
        .seal_application_data(&ping)
        .map_err(|e| anyhow!("server seal: {e}"))?;
    let out = d.client.handle_datagram(&record, now);
    check(&out, "client")?;
    if !out
        .events
        .iter()
        .any(|e| matches!(e, Event::ApplicationData(d) if *d == ping))
    {
        bail!("the client did not receive the echo: {:?}", out.events);
    }
    Ok(())
}

/// One bound pair: a probe-off handshake and the raw public-key operations right beside
/// it on this thread, the raw operations first in odd pairs so that neither half always
/// runs on the cache the other left.
fn bound_pair(rig: &Rig, raw: &RawServerOps, index: usize) -> Result<BoundPair> {
    let handshake = || -> Result<u64> {
        let (client, server) = rig.pair(ProbeLevel::Off)?;
        Ok(drive(client, server, setup::now(), true)?.server_cpu_ns)
    };
    let (server_cpu_ns, raw_pk_ns) = if index.is_multiple_of(2) {
        let cpu = handshake()?;
        (cpu, raw.run()?)
    } else {
        let pk = raw.run()?;
        (handshake()?, pk)
    };
    Ok(BoundPair {
        server_cpu_ns,
        raw_pk_ns,
    })
}

fn one_rep(rig: &Rig, index: usize) -> Result<RepMeasurement> {
    let (client, server) = rig.pair(ProbeLevel::Full)?;
    let now = setup::now();
    let mut d = drive(client, server, now, true)?;
    let kind = d
        .kind
        .ok_or_else(|| anyhow!("no side reported the handshake complete"))?;
    if kind != rig.expected_kind() {
        bail!(
            "expected a {} handshake, got {}",
            kind_name(rig.expected_kind()),
            kind_name(kind)
        );
    }
    let (client_probe, server_probe) = (d.client.take_probe(), d.server.take_probe());
    ping_echo(&mut d, now)?;
    let symmetric_floor_ns = match rig.raw {
        Some(_) => {
            let transcript: usize = server_probe
                .messages
                .iter()
                .filter(|m| !matches!(m.message, Message::CCCS | Message::SCCS))
                .map(|m| m.bytes)
                .sum();
            Some(symmetric_floor_ns(transcript)?)
        }
        None => None,
    };
    let pair = rig
        .raw
        .as_ref()
        .map(|raw| bound_pair(rig, raw, index))
        .transpose()?;
    Ok(RepMeasurement {
        client: client_probe,
        server: server_probe,
        client_cpu_ns: d.client_cpu_ns,
        server_cpu_ns: d.server_cpu_ns,
        wall_ns: d.wall_ns,
        pk_bound_ns: pair.map(|p| p.raw_pk_ns),
        server_cpu_probe_off_ns: pair.map(|p| p.server_cpu_ns),
        symmetric_floor_ns,
        server_jobs_ns: d.server_jobs_ns,
        kind,
    })
}

/// Thread CPU of one whole handshake (both sides) with the probe at `level`, read only
/// around it, so the reading itself costs the same for both levels.
fn outside_cpu(rig: &Rig, level: ProbeLevel) -> Result<u64> {
    let (client, server) = rig.pair(level)?;
    let now = setup::now();
    let t0 = setup::thread_cpu_ns();
    let d = drive(client, server, now, false)?;
    let cpu = setup::thread_cpu_ns().saturating_sub(t0);
    drop(d);
    Ok(cpu)
}

/// Measures one case: `opts.warmup` unmeasured handshakes, then `opts.reps` measured
/// ones, each followed by a bound pair (a probe-off handshake beside the raw public-key
/// operations) and, if asked, a probe-off and a probe-on handshake in alternating
/// order; then, with [`RunnerOptions::bound_extension`], more bound pairs until the
/// bound's interval clears 1. The thread stays on one core throughout.
pub fn measure_case(
    store: &PkiStore,
    case: Case,
    auth: AuthMode,
    opts: &RunnerOptions,
) -> Result<CaseMeasurement> {
    let what = || format!("case {case} ({}, {})", auth.name(), opts.variant.name());
    if opts.reps == 0 {
        bail!("{}: at least one rep is needed", what());
    }
    let rig = Rig::new(store, case, auth, opts).with_context(what)?;
    let _pinned = PinnedToCurrentCpu::new();
    for i in 0..opts.warmup {
        one_rep(&rig, i).with_context(|| format!("{}: warm-up", what()))?;
    }
    let mut m = CaseMeasurement {
        case,
        auth,
        variant: opts.variant,
        flow: opts.flow,
        reps: Vec::with_capacity(opts.reps),
        probe_overhead: None,
        probe_off_cpu_ns: Vec::new(),
        probe_full_cpu_ns: Vec::new(),
        extra_bound_pairs: Vec::new(),
        bound_operations: rig
            .raw
            .as_ref()
            .map(RawServerOps::operations)
            .unwrap_or_default(),
    };
    for rep in 0..opts.reps {
        let r = one_rep(&rig, rep).with_context(|| format!("{}: rep {rep}", what()))?;
        m.reps.push(r);
        if opts.measure_probe_overhead {
            // Alternate the order so neither level always runs on a warmer cache.
            let levels = if rep % 2 == 0 {
                [ProbeLevel::Off, ProbeLevel::Full]
            } else {
                [ProbeLevel::Full, ProbeLevel::Off]
            };
            for level in levels {
                let cpu = outside_cpu(&rig, level)
                    .with_context(|| format!("{}: probe overhead rep {rep}", what()))?;
                match level {
                    ProbeLevel::Off => m.probe_off_cpu_ns.push(cpu),
                    _ => m.probe_full_cpu_ns.push(cpu),
                }
            }
        }
    }
    if let (Some(raw), Some(ext)) = (&rig.raw, opts.bound_extension) {
        m.extra_bound_pairs = ext
            .extend(&m.bound_pairs(), |i| bound_pair(&rig, raw, i))
            .with_context(|| format!("{}: bound pairs", what()))?;
    }
    if opts.measure_probe_overhead {
        let off = median_of(m.probe_off_cpu_ns.iter().map(|&v| v as f64));
        let full = median_of(m.probe_full_cpu_ns.iter().map(|&v| v as f64));
        if let (Some(off), Some(full)) = (off, full) {
            m.probe_overhead = (off > 0.0).then(|| (full - off) / off);
        }
    }
    Ok(m)
}

/// The (case, authentication) pairs [`measure_all`] runs for a variant, in thesis
/// order (Table 3.3, server-authenticated then mutual per case). Cases whose curves
/// the local libcrypto lacks, or that the PKI does not hold, are left out.
pub fn planned_cases(store: &PkiStore, variant: Variant) -> Vec<(Case, AuthMode)> {
    let auths = variant.auth_modes();
    let held: Vec<Case> = store.cases().copied().collect();
    Case::ALL
        .iter()
        .filter(|c| c.is_available() && held.contains(c))
        .flat_map(|c| auths.iter().map(move |a| (*c, *a)))
        .collect()
}

/// Measures every planned case ([`planned_cases`]); `progress(i, total, case, auth)` is
/// called before each.
pub fn measure_all(
    store: &PkiStore,
    opts: &RunnerOptions,
    mut progress: impl FnMut(usize, usize, &Case, AuthMode),
) -> Result<Vec<CaseMeasurement>> {
    let plan = planned_cases(store, opts.variant);
    let mut out = Vec::with_capacity(plan.len());
    for (i, (case, auth)) in plan.iter().enumerate() {
        progress(i, plan.len(), case, *auth);
        out.push(measure_case(store, *case, *auth, opts)?);
    }
    Ok(out)
}
