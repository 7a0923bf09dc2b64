//! DTLS 1.3 (wolfSSL) in memory through the spine's pair: bytes, flights, both sides'
//! CPU per handshake and the server's bound ratio, for the classical configurations and
//! the ML-KEM groups that `protocols.csv` compares.
//!
//! The bound ratio divides the server's CPU by the raw P-256 work of its side timed
//! with OpenSSL (ECDHE and the ECDSA signature, as for the DTLS 1.2 server), after
//! every handshake. The raw operations are OpenSSL's, the handshake is wolfSSL's, so the
//! ratio also carries the two libraries' difference in speed. For the ML-KEM groups no
//! raw ML-KEM operation is timed on this machine (OpenSSL 3.0 has none), so their bound
//! ratio is empty rather than a P-256-only bound that would flatter them.

use wtlsperf_models::stats::median;
use wtlsperf_models::transmission::Flight;

use super::{Config, Kind, WTLS_P256_LEVEL};
use crate::evaluate::context::Ctx;
use wtlsperf_drivers::protocols::dtls::DtlsConfig;
use wtlsperf_drivers::protocols::dtls13::{Credential, Dtls13Config, Dtls13Suite, Group};
use wtlsperf_drivers::protocols::{run_in_memory, Suite};

/// The configurations compared: classical (certificates, PSK) and with ML-KEM-768
/// alone and in the X25519 hybrid, all server-authenticated, without a CID.
pub fn compared() -> [Dtls13Suite; 4] {
    let cert = Credential::Certificate { mutual: false };
    [
        Dtls13Suite::new(cert, Group::P256, false),
        Dtls13Suite::new(Credential::Psk, Group::P256, false),
        Dtls13Suite::new(cert, Group::MlKem768, false),
        Dtls13Suite::new(cert, Group::X25519MlKem768, false),
    ]
}

fn level(suite: Dtls13Suite) -> String {
    match (suite.credential, suite.group) {
        (Credential::Psk, _) => "PSK 128-bit (category 3)".to_owned(),
        (_, Group::P256) => WTLS_P256_LEVEL.to_owned(),
        (_, g) => format!("{} key exchange, ECDSA P-256", g.name()),
    }
}

/// Measures every compared configuration `reps` times (after a few warm-up runs).
pub fn configs(ctx: &Ctx, reps: usize) -> anyhow::Result<Vec<Config>> {
    let raw = DtlsConfig::new(Suite::DtlsEcdheEcdsa { mutual: false })?;
    let mut out = Vec::new();
    for suite in compared() {
        ctx.step(&format!("protocols: dtls1.3 {} in memory", suite.name()));
        let cfg = Dtls13Config::new(suite)?;
        let once = || run_in_memory(cfg.client()?, || cfg.server());
        for _ in 0..reps.min(20) {
            once()?;
        }
        let (mut server, mut client, mut bound) = (vec![], vec![], vec![]);
        let mut shape = None;
        for _ in 0..reps.max(1) {
            let run = ctx.without_ticker(once)?;
            server.push(run.server_cpu_ns as f64 / 1e3);
            client.push(run.client_cpu_ns as f64 / 1e3);
            let classical_cert = suite.group == Group::P256
                && matches!(suite.credential, Credential::Certificate { .. });
            if classical_cert {
                if let Some((s, _)) = raw.raw_ops()? {
                    bound.push(s as f64 / 1e3);
                }
            }
            shape.get_or_insert(run);
        }
        let shape = shape.ok_or_else(|| anyhow::anyhow!("no DTLS 1.3 handshake ran"))?;
        let flights_by_payload_limit = at_bearer_limits(ctx, suite)?;
        let server_cpu_us = median(&server).unwrap_or(f64::NAN);
        out.push(Config {
            kind: Kind::Dtls13(suite),
            level: level(suite),
            bytes: shape.bytes(),
            datagrams: shape.log.len(),
            flights: shape.flights(),
            flights_by_payload_limit,
            server_cpu_us,
            client_cpu_us: median(&client).unwrap_or(f64::NAN),
            bound_ratio: median(&bound)
                .filter(|&b| b > 0.0)
                .map(|b| server_cpu_us / b),
        });
    }
    Ok(out)
}

/// The flights of one handshake of `suite` with both sides fragmenting to each distinct
/// datagram payload limit of the catalogue's bearers, as the bearer runs do
/// (`ModernConfigs::run_dtls13`): the model of a bearer then counts the datagrams and
/// headers its runs send. The flights' shape does not depend on timing, so one
/// handshake per limit gives them.
fn at_bearer_limits(ctx: &Ctx, suite: Dtls13Suite) -> anyhow::Result<Vec<(u16, Vec<Flight>)>> {
    payload_limits(ctx)
        .into_iter()
        .map(|limit| {
            let cfg = Dtls13Config::new(suite)?.with_mtu(limit);
            let run = run_in_memory(cfg.client()?, || cfg.server())?;
            Ok((limit, run.flights()))
        })
        .collect()
}

/// The distinct datagram payload limits of the catalogue's bearers, smallest first.
pub fn payload_limits(ctx: &Ctx) -> Vec<u16> {
    let mut limits: Vec<u16> = ctx
        .catalogue
        .bearers
        .profiles()
        .iter()
        .map(|b| b.datagram_payload_limit())
        .collect();
    limits.sort_unstable();
    limits.dedup();
    limits
}
