//! Handshakes through an emulated bearer ([`wtlsperf_bearer::Relay`]) and their
//! comparison with the transmission model: what `wtlsperf bearer --check-case` and the
//! evaluation run.
//!
//! The model compared against is thesis Eq. 3.84 generalised
//! ([`wtlsperf_models::transmission::flights_transmission_ms`]): every flight pays the
//! serialisation of its datagrams (payload + 28 B UDP/IPv4 each) at its direction's rate
//! plus one one-way traversal at the profile's MEAN. The flights are the ones the client
//! really exchanged (consecutive datagrams in one direction), so a retransmission shows
//! up as the extra flight it is, and the comparison checks the relay and the model, not
//! a guess of the message sizes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use serde::Serialize;
use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_bearer::{DelayDistribution, LinkProfile, RelayOptions};
use wtlsperf_models::transmission::{link_ms, Flight};

use crate::gateway::{spawn_gateway, GatewayConfig};
use crate::pki_store::PkiStore;
pub use crate::registry::wtls::bearer_retransmit_timeout;
use crate::registry::wtls::wtls_bearer_config;
use crate::relay_run::through_relay;
use crate::setup::{gateway_server_config, ClientAuth, Options};
use crate::udp_client::{self, ClientRun};
use crate::wire_log::flights_of;

/// One handshake through an emulated bearer, with the model's prediction for it.
#[derive(Debug, Clone)]
pub struct BearerRun {
    pub case: Case,
    pub auth: AuthMode,
    pub profile: String,
    /// Measured at the client: ClientHello sent to server Finished received.
    pub duration_ms: f64,
    /// Payload bytes and datagrams that entered the emulated link, per direction.
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub datagrams_up: u64,
    pub datagrams_down: u64,
    /// Flights (runs of datagrams in one direction) the client saw; each one is a
    /// one-way traversal of the link.
    pub flights: Vec<Flight>,
    pub client: ClientRun,
    /// Transmission model (Eq. 3.84 per flight) for the flights actually exchanged, with
    /// the profile's mean traversal delay.
    pub predicted_ms: f64,
}

impl BearerRun {
    /// Round trips: pairs of flights.
    pub fn round_trips(&self) -> f64 {
        self.flights.len() as f64 / 2.0
    }

    /// Measured over predicted.
    pub fn ratio(&self) -> f64 {
        self.duration_ms / self.predicted_ms
    }
}

/// The same profile with every datagram delayed by exactly the mean traversal: validates
/// the model without jitter.
pub fn fixed_delay(p: &LinkProfile) -> LinkProfile {
    let mut f = p
        .clone()
        .with_traversal(DelayDistribution::Fixed(p.traversal.mean_ms()));
    f.name = format!("{}-fixed", p.name);
    f
}

/// Starts a relay in front of `gateway`, runs one handshake of `case` through it with a
/// retransmission timeout suited to the profile, and stops the relay.
pub fn handshake_over_bearer(
    store: &PkiStore,
    gateway: SocketAddr,
    case: Case,
    auth: AuthMode,
    profile: LinkProfile,
    seed: u64,
) -> anyhow::Result<BearerRun> {
    let creds = store.case(&case)?;
    let cfg = wtls_bearer_config(&creds, &profile);
    let rto = bearer_retransmit_timeout(&profile);
    // Enough for every retransmission the timer allows.
    let deadline = Instant::now() + rto * 70;
    let (client, stats) = through_relay(
        gateway,
        &profile,
        seed,
        RelayOptions::default(),
        |sock, relay| {
            udp_client::handshake_once(sock, relay, Arc::new(cfg), auth, None, None, deadline)
        },
    )
    .with_context(|| format!("{case} {} over {}", auth.name(), profile.name))?;
    let flights = flights_of(&client.wire);
    let predicted = link_ms(&flights, &profile.rates());
    Ok(BearerRun {
        case,
        auth,
        profile: profile.name.clone(),
        duration_ms: client.duration.as_secs_f64() * 1e3,
        bytes_up: stats.up.bytes_in,
        bytes_down: stats.down.bytes_in,
        datagrams_up: stats.up.datagrams_in,
        datagrams_down: stats.down.datagrams_in,
        flights,
        client,
        predicted_ms: predicted,
    })
}

/// Runs every (case, auth) through its own relay, `parallelism` at a time; the results
/// come back in the order of `work`. Each run's seed is `seed + index`.
pub fn run_concurrently(
    store: &PkiStore,
    gateway: SocketAddr,
    profile: &LinkProfile,
    work: Vec<(Case, AuthMode)>,
    parallelism: usize,
    seed: u64,
) -> Vec<anyhow::Result<BearerRun>> {
    crate::pool::run_concurrently(&work, parallelism, |i, &(case, auth)| {
        handshake_over_bearer(
            store,
            gateway,
            case,
            auth,
            profile.clone(),
            seed.wrapping_add(i as u64),
        )
    })
}

/// One bearer's share of a plan of bearer runs: its link and the handshakes to make
/// over it (a case and authentication repeated once per run).
#[derive(Debug, Clone)]
pub struct BearerBatch {
    pub link: LinkProfile,
    pub work: Vec<(Case, AuthMode)>,
}

/// Runs every batch against one in-process gateway with the thesis flow (two workers,
/// client authentication optional so both modes share it), the batches one after the
/// other and each batch's handshakes all at once (at most 96, each on its own relay,
/// seeds from 7): a bearer's handshakes then last about as long as its slowest one.
/// `before` is told of each batch as it starts, for progress. The results come back
/// per batch, in the batches' and their work's order.
pub fn run_batches(
    store: &PkiStore,
    batches: &[BearerBatch],
    mut before: impl FnMut(&BearerBatch),
) -> anyhow::Result<Vec<Vec<anyhow::Result<BearerRun>>>> {
    let server = gateway_server_config(store, ClientAuth::Optional, &Options::default())?;
    let mut cfg = GatewayConfig::lab("127.0.0.1:0".parse()?, Arc::new(server));
    cfg.workers = 2;
    let gateway = spawn_gateway(cfg)?;
    let addr = gateway.local_addr();
    let mut out = Vec::new();
    for batch in batches {
        before(batch);
        let parallelism = batch.work.len().min(96);
        out.push(run_concurrently(
            store,
            addr,
            &batch.link,
            batch.work.clone(),
            parallelism,
            7,
        ));
    }
    gateway.shutdown();
    Ok(out)
}

/// Summary of repeated bearer runs of one case: the median of measured / predicted.
#[derive(Debug, Clone, Serialize)]
pub struct ModelCheck {
    pub case: String,
    pub auth: String,
    pub profile: String,
    pub runs: usize,
    pub median_measured_ms: f64,
    pub median_predicted_ms: f64,
    pub median_ratio: f64,
}

/// Runs `runs` handshakes of a case over a profile (concurrently, each on its own link)
/// and reports the median ratio of measured to predicted duration.
pub fn model_check(
    store: &PkiStore,
    gateway: SocketAddr,
    case: Case,
    auth: AuthMode,
    profile: &LinkProfile,
    runs: usize,
    seed: u64,
) -> anyhow::Result<ModelCheck> {
    let results = run_concurrently(
        store,
        gateway,
        profile,
        vec![(case, auth); runs],
        runs,
        seed,
    );
    let runs: Vec<BearerRun> = results.into_iter().collect::<anyhow::Result<_>>()?;
    let median = |v: Vec<f64>| wtlsperf_models::stats::median(&v).unwrap_or(f64::NAN);
    Ok(ModelCheck {
        case: case.to_string(),
        auth: auth.name().into(),
        profile: profile.name.clone(),
        runs: runs.len(),
        median_measured_ms: median(runs.iter().map(|r| r.duration_ms).collect()),
        median_predicted_ms: median(runs.iter().map(|r| r.predicted_ms).collect()),
        median_ratio: median(runs.iter().map(|r| r.ratio()).collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire_log::WireDatagram;
    use wtlsperf_bearer::profile;

    fn d(up: bool, bytes: usize) -> WireDatagram {
        WireDatagram::untimed(up, bytes)
    }

    #[test]
    fn prediction_on_gsm_csd_is_serialisation_plus_one_traversal_per_flight() {
        let p = profile("gsm-csd").unwrap();
        let f = flights_of(&[d(true, 92), d(false, 572)]);
        // (92 + 28) and (572 + 28) bytes at 9600 bit/s, plus two mean traversals.
        let expected = (120.0 + 600.0) * 8.0 / 9600.0 * 1e3 + 2.0 * 391.3;
        assert!((link_ms(&f, &p.rates()) - expected).abs() < 1e-9);
    }

    #[test]
    fn the_gsm_timer_exceeds_a_round_trip_of_the_largest_flight() {
        let p = profile("gsm-csd").unwrap();
        let rto = bearer_retransmit_timeout(&p).as_secs_f64() * 1e3;
        assert!(rto > 2.0 * 391.3 + 2028.0 * 8.0 / 9600.0 * 1e3);
        let fixed = fixed_delay(&p);
        assert_eq!(fixed.traversal, DelayDistribution::Fixed(391.3));
        assert!(bearer_retransmit_timeout(&fixed) < bearer_retransmit_timeout(&p));
    }
}
