//! One case's handshake and raw public-key operations, as the process under valgrind
//! runs them (`wtlsperf count --one`).
//!
//! Everything that could differ between two runs is fixed: the thread's randomness is
//! seeded ([`wtls::crypto::random::seed_thread`]), the keys come from the PKI the
//! parent issued from the same seed, time is virtual ([`wtlsperf_spine::Pair`]), and the
//! configurations are the runner's own ([`crate::runner::Rig`]), so the counted
//! handshake is the one the evaluation times.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use wtls::fixtures::{now, UNIX_NOW};
use wtls::handshake::{AuthMode, Client, HandshakeKind, ServerConnection};
use wtls::probe::Probe;
use wtls::suite::Case;
use wtlsperf_spine::pair::Ended;
use wtlsperf_spine::{Handshake, Pair};

use crate::pki_store::PkiStore;
use crate::runner::{Rig, RunnerOptions, Variant};

/// Runs a warm-up rep and then the counted rep of `case`: one handshake through the
/// [`Pair`] driver and the server's raw public-key operations once. The instruction
/// counter attributes the work by the driver's never-inlined entry points and
/// [`crate::runner::RawServerOps::run`].
pub fn run_one(pki: &Path, case: Case, auth: AuthMode, variant: Variant, seed: u64) -> Result<()> {
    if variant == Variant::Resumed {
        bail!("--variant resumed: not counted (its priming handshake would be counted too)");
    }
    let _seeded = wtls::crypto::random::seed_thread(seed).map_err(|e| anyhow!("--seed: {e}"))?;
    let store =
        PkiStore::load_at(pki, UNIX_NOW).with_context(|| format!("PKI in {}", pki.display()))?;
    let opts = RunnerOptions {
        variant,
        measure_bound: true,
        ..RunnerOptions::default()
    };
    let rig = Rig::new(&store, case, auth, &opts)?;
    // A warm-up rep first, as the evaluation runs one: the first private-key operation
    // on a key sets up OpenSSL's per-key state (RSA blinding, Montgomery contexts), which
    // a gateway pays once, not per handshake.
    rep(&rig, case, auth, variant)?;
    counted(&rig, case, auth, variant)
}

/// The counted rep. Never inlined: the profile is dumped when it starts
/// (`--dump-before`), so the warm-up's counts go to a file of their own.
#[inline(never)]
fn counted(rig: &Rig, case: Case, auth: AuthMode, variant: Variant) -> Result<()> {
    rep(rig, case, auth, variant)
}

/// One handshake through the [`Pair`] driver, checked, then the raw operations once.
fn rep(rig: &Rig, case: Case, auth: AuthMode, variant: Variant) -> Result<()> {
    let client = Client::new(Arc::clone(&rig.client), auth, None, Probe::off(), now());
    let server = ServerConnection::new(Arc::clone(&rig.server), Probe::off(), now());
    let mut pair = Pair::new(client, server, now());
    if pair.handshake() != Ended::Complete {
        bail!(
            "{case} {}: the handshake did not complete (client: {:?}, server: {:?})",
            auth.name(),
            pair.client.status(),
            pair.server.status()
        );
    }
    let kind = pair.server.negotiated().map(|n| n.kind);
    let expected = match variant {
        Variant::Optimised if !case.leaf.is_rsa() => HandshakeKind::Optimised,
        _ => HandshakeKind::Full,
    };
    if kind != Some(expected) {
        bail!(
            "{case} {}: expected a {expected:?} handshake, got {kind:?}",
            auth.name()
        );
    }
    if let Some(raw) = &rig.raw {
        raw.run()?;
    }
    Ok(())
}
