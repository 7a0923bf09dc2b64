//! The capacity bound of a load run: the server CPU time of a handshake in memory, on
//! the gateway worker's core, what one worker spends per handshake when nothing else
//! competes.

use std::sync::Arc;

use wtls::handshake::{AuthMode, Client, ServerConnection};
use wtls::probe::Probe;
use wtls::suite::Case;

use anyhow::Context;

use super::LoadSpec;
use crate::pki_store::PkiStore;
use crate::protocols::run_in_memory;
use crate::setup::{self, ClientAuth, Options};

/// [`server_cpu_samples_us`], measured by a thread pinned to `cpu` (the
/// gateway worker's core: on a shared virtual machine two cores need not run at the same
/// speed) or by the calling thread when `cpu` is `None` or cannot be had.
pub(super) fn server_cpu_samples_on(
    cpu: Option<usize>,
    store: &PkiStore,
    spec: &LoadSpec,
    case: Case,
    auth: AuthMode,
    runs: usize,
) -> anyhow::Result<Vec<f64>> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                if let Some(cpu) = cpu {
                    let _ = setup::pin_current_thread(cpu);
                }
                server_cpu_samples_us(store, case, auth, spec.client_auth, runs)
            })
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("in-memory measurement panicked")))
    })
}

/// Server CPU time (us) of each of `runs` handshakes of the case in memory, connection
/// construction included: what one gateway worker spends per handshake when nothing else
/// competes. 1e6 / their median is the worker's capacity.
fn server_cpu_samples_us(
    store: &PkiStore,
    case: Case,
    auth: AuthMode,
    client_auth: ClientAuth,
    runs: usize,
) -> anyhow::Result<Vec<f64>> {
    let creds = store.case(&case)?;
    let server = Arc::new(setup::gateway_server_config(
        store,
        client_auth,
        &Options::default(),
    )?);
    let cfg = Arc::new(setup::client_config(&creds, &Options::default(), false));
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let client = Client::new(cfg.clone(), auth, None, Probe::off(), setup::now());
        // The connection's construction is part of the server's work for a handshake.
        let run = run_in_memory(client, || {
            Ok(ServerConnection::new(
                server.clone(),
                Probe::off(),
                setup::now(),
            ))
        })
        .with_context(|| format!("in-memory {case} {} handshake", auth.name()))?;
        samples.push(run.server_cpu_ns as f64 / 1e3);
    }
    Ok(samples)
}
