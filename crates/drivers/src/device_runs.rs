//! Real WTLS handshakes with an emulated client device ([`crate::device`]) through
//! emulated bearers against the real gateway, all at once: one relay and one thread per
//! handshake. A Nokia RSA-3072 mutual handshake lasts over a minute, nearly all of it the
//! client holding its flight, so the runs overlap instead of queueing. The evaluation's
//! re-enactment of the studies plans the runs and sets the models beside them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_bearer::{LinkProfile, RelayOptions};
use wtlsperf_models::device::{ClientSteps, DeviceProfile};

use crate::device::model_case;
use crate::gateway::{spawn_gateway, GatewayConfig};
use crate::pki_store::PkiStore;
use crate::pool::run_concurrently;
use crate::protocols::model::wtls_steps;
use crate::registry::wtls::{bearer_retransmit_timeout, wtls_bearer_config};
use crate::relay_run::through_relay;
use crate::setup::{gateway_server_config, ClientAuth, Options};
use crate::udp_client::{self, ClientRun};

/// Handshakes in flight at once: each holds a relay (three sockets and a thread) and a
/// client socket, so this bounds the descriptors and threads, as the bearer runs do.
const MAX_AT_ONCE: usize = 96;

/// One handshake to make on the device: a case, its authentication and the bearer.
#[derive(Debug, Clone)]
pub struct DeviceHandshake {
    pub case: Case,
    pub auth: AuthMode,
    pub link: LinkProfile,
}

/// What one handshake on the device gave: the client's record and the device's steps
/// its flights were held to.
#[derive(Debug, Clone)]
pub struct DeviceRun {
    pub client: ClientRun,
    pub steps: ClientSteps,
}

/// The device's client time of one handshake (ms), for the scheduling order.
fn device_ms(device: &DeviceProfile, h: &DeviceHandshake) -> f64 {
    model_case(h.case, h.auth)
        .ok()
        .and_then(|c| device.client_processing_ms(c).ok())
        .unwrap_or(0.0)
}

/// One handshake through its own relay, the client emulating `device`.
fn one(
    store: &PkiStore,
    gateway: SocketAddr,
    device: &DeviceProfile,
    h: &DeviceHandshake,
    seed: u64,
) -> anyhow::Result<DeviceRun> {
    let (case, auth, link) = (h.case, h.auth, &h.link);
    let creds = store.case(&case)?;
    let model = model_case(case, auth)?;
    device.client_processing_ms(model)?;
    let steps = wtls_steps(case, model.auth, device)?;
    // The driver starts the timer as each held flight leaves: the link's timer suffices.
    let cfg = wtls_bearer_config(&creds, link);
    let rto = bearer_retransmit_timeout(link);
    let hold = Duration::from_secs_f64(steps.total_ms() / 1e3);
    // The relay forgets an idle client: the device's longest hold must not look idle.
    let options = RelayOptions {
        idle_timeout: RelayOptions::default().idle_timeout + rto + hold,
        ..RelayOptions::default()
    };
    let deadline = Instant::now() + rto * 8 + hold;
    let ((client, _), _) = through_relay(gateway, link, seed, options, |sock, relay| {
        let client = udp_client::probed_client(Arc::new(cfg), auth, None);
        udp_client::connect_client(sock, relay, client, Some(&steps), None, deadline)
    })
    .with_context(|| format!("{case} {} over {} on a device", auth.name(), link.name))?;
    Ok(DeviceRun { client, steps })
}

/// Runs every handshake of `work` with the client emulating `device`, against one
/// in-process gateway (two workers, client authentication optional, a handshake timeout
/// of 600 s: a Nokia RSA-3072 mutual handshake holds its flight for over a minute),
/// longest device time first so the pool's last handshakes are short ones. The `i`th
/// handshake's relay is seeded with `first_seed + i`; the results come back in `work`'s
/// order.
pub fn run_on_device(
    store: &PkiStore,
    device: &DeviceProfile,
    work: &[DeviceHandshake],
    first_seed: u64,
) -> anyhow::Result<Vec<anyhow::Result<DeviceRun>>> {
    let server = gateway_server_config(store, ClientAuth::Optional, &Options::default())?;
    let mut cfg = GatewayConfig::lab("127.0.0.1:0".parse()?, Arc::new(server));
    cfg.workers = 2;
    cfg.handshake_timeout = Duration::from_secs(600);
    let gateway = spawn_gateway(cfg)?;
    let addr = gateway.local_addr();
    let mut order: Vec<usize> = (0..work.len()).collect();
    order.sort_by(|&a, &b| device_ms(device, &work[b]).total_cmp(&device_ms(device, &work[a])));
    let ordered = run_concurrently(&order, MAX_AT_ONCE, |_, &i| {
        let seed = first_seed + i as u64;
        (i, one(store, addr, device, &work[i], seed))
    });
    gateway.shutdown();
    let mut results: Vec<Option<anyhow::Result<DeviceRun>>> =
        (0..work.len()).map(|_| None).collect();
    for (i, r) in ordered {
        results[i] = Some(r);
    }
    Ok(results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(anyhow::anyhow!("the handshake did not run"))))
        .collect())
}
