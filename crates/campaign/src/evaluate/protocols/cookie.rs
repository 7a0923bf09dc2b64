//! DTLS 1.2 and 1.3 without the cookie exchange, beside the defaults with it.
//!
//! A DTLS server answers a first ClientHello with a stateless cookie (DTLS 1.2's
//! HelloVerifyRequest, RFC 6347 section 4.2.1; DTLS 1.3's HelloRetryRequest with a cookie,
//! RFC 9147 section 5.1) against spoofed floods; WTLS has no such round trip. So that
//! WTLS is also compared with DTLS on equal footing, each compared DTLS configuration is
//! measured in memory without it (bytes, datagrams, flights, server CPU, the DTLS 1.3
//! flights at every bearer's payload limit), and its handshake time over every compared
//! bearer and device is the same model T_H (Eq. 3.84 over the flights, plus the device's
//! client time and this machine's server CPU) as the rows with it. Real handshakes
//! without the cookie run over the emulated bearers with this machine's client, as the
//! defaults do ([`measure_over_bearers`]); the other devices' rows are modelled.

use std::time::Duration;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::transmission::Flight;
use wtlsperf_report::{Cell, Column, Provenance, Table};
use wtlsperf_spine::ProtocolId;

use super::{Config, ProtocolRow};
use crate::evaluate::context::Ctx;
use crate::evaluate::vocabulary::{BearerName, Catalogue, DeviceName};
use wtlsperf_drivers::protocols::model;
use wtlsperf_drivers::registry::{run_over_bearers, BearerHandshake, Bench, Contender};
use wtlsperf_models::Authentication;

/// A compared configuration measured without the cookie exchange.
#[derive(Debug, Clone, PartialEq)]
pub struct CookieFree {
    /// The configuration it is the cookie-free twin of.
    pub of: Contender,
    /// The twin itself (`-no-cookie`).
    pub twin: Contender,
    pub bytes: usize,
    pub datagrams: usize,
    pub flights: Vec<Flight>,
    /// The flights at each bearer payload limit (DTLS 1.3 fragments to the bearer's MTU).
    pub flights_by_payload_limit: Vec<(u16, Vec<Flight>)>,
    /// Median server thread CPU per handshake (µs).
    pub server_cpu_us: f64,
    /// Mean duration of real handshakes over the emulated bearers with this machine's
    /// client (ms), and their count, per bearer ([`measure_over_bearers`]).
    pub measured: Vec<(BearerName, f64, usize)>,
}

impl CookieFree {
    /// The flights over `bearer`, as [`Config::flights_over`].
    pub fn flights_over(&self, bearer: &LinkProfile) -> &[Flight] {
        super::flights_at_limit(&self.flights_by_payload_limit, &self.flights, bearer)
    }
}

/// One row of `protocols_cookie.csv` (columns in docs/results.md): a DTLS configuration
/// with or without the cookie exchange, on one bearer and device.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CookieRow {
    #[serde(serialize_with = "crate::evaluate::csv_file::display")]
    pub protocol: ProtocolId,
    pub suite: String,
    pub cookie_exchange: bool,
    pub bearer: BearerName,
    pub device: DeviceName,
    /// Payload bytes and datagrams both ways, of the flights at the bearer's payload
    /// limit.
    pub bytes: usize,
    pub datagrams: usize,
    pub round_trips: f64,
    /// Model T_H (ms); empty where the device has no price for an operation.
    pub modelled_ms: Option<f64>,
    /// The mean of the emulated runs (with the cookie only: the runs measure the
    /// defaults).
    pub measured_ms: Option<f64>,
}

/// Handshakes per configuration at most: the shape does not vary, the CPU's median does
/// little beyond that.
const MAX_REPS: usize = 50;

/// The compared configurations that have a cookie-free twin: the server-authenticated
/// ones and the PSK ones (the like-for-like rows of WTLS's server-authenticated case).
fn with_twins(configs: &[Config]) -> impl Iterator<Item = (&Config, Contender)> {
    configs.iter().filter_map(|c| {
        let like_for_like = c.auth() == Authentication::ServerAuth || !c.uses_p256();
        c.contender
            .without_cookie()
            .filter(|_| like_for_like)
            .map(|twin| (c, twin))
    })
}

/// Measures every cookie-capable compared configuration without the cookie exchange.
pub fn measure(
    ctx: &Ctx,
    bench: Bench<'_>,
    configs: &[Config],
    reps: usize,
) -> anyhow::Result<Vec<CookieFree>> {
    let reps = reps.clamp(1, MAX_REPS);
    let mut out = Vec::new();
    for (c, twin) in with_twins(configs) {
        ctx.step(&format!("protocols: {twin} in memory"));
        let m = ctx.without_ticker(|| twin.measure_in_memory(bench, reps, 0))?;
        let flights_by_payload_limit = super::at_bearer_limits(ctx, bench, &twin)?;
        out.push(CookieFree {
            of: c.contender.clone(),
            bytes: m.shape.bytes(),
            datagrams: m.shape.log.len(),
            flights: m.shape.flights(),
            flights_by_payload_limit,
            server_cpu_us: m.server_cpu_us,
            measured: Vec::new(),
            twin,
        });
    }
    Ok(out)
}

/// Real handshakes without the cookie exchange over every bearer of `bearers`, `runs`
/// each, this machine's client, each configuration behind its own gateway as the
/// defaults are: fills [`CookieFree::measured`].
pub fn measure_over_bearers(
    ctx: &Ctx,
    bench: Bench<'_>,
    free: &mut [CookieFree],
    bearers: &[&LinkProfile],
    runs: usize,
) -> anyhow::Result<()> {
    let jobs: Vec<(usize, usize, u64)> = (0..free.len())
        .flat_map(|f| (0..bearers.len()).map(move |b| (f, b)))
        .flat_map(|(f, b)| (0..runs).map(move |i| (f, b, 25_000 + ((f * 10 + b) * 100 + i) as u64)))
        .collect();
    ctx.step(&format!(
        "protocols: {} handshakes without the cookie exchange over the emulated bearers",
        jobs.len()
    ));
    let outcomes = run_over_bearers(bench, &jobs, PARALLEL_RUNS, |_, &(f, b, seed)| {
        Ok(BearerHandshake {
            contender: &free[f].twin,
            bearer: bearers[b].clone(),
            seed,
            steps: None,
            deadline: RUN_DEADLINE,
        })
    });
    let outcomes: Vec<anyhow::Result<f64>> = outcomes
        .into_iter()
        .map(|r| r.map(|r| r.duration_ms))
        .collect();
    for (fi, twin) in free.iter_mut().enumerate() {
        for (bi, bearer) in bearers.iter().enumerate() {
            let ms: Vec<f64> = jobs
                .iter()
                .zip(&outcomes)
                .filter(|((f, b, _), _)| *f == fi && *b == bi)
                .filter_map(|(_, o)| o.as_ref().ok().copied())
                .collect();
            if let Some(m) = wtlsperf_models::stats::mean(&ms) {
                twin.measured.push((BearerName::of(bearer), m, ms.len()));
            }
        }
    }
    Ok(())
}

/// Real handshakes at once: each mostly waits on its emulated link.
const PARALLEL_RUNS: usize = 64;

/// How long one real handshake may take over a bearer.
const RUN_DEADLINE: Duration = Duration::from_secs(120);

/// The rows with and without the cookie, for every compared bearer and device the
/// default configuration has a row for. The rows without it take the same client time
/// as the default's row (the cookie costs the client no public-key operation) and the
/// cookie-free run's flights and server CPU.
pub fn rows(
    configs: &[Config],
    free: &[CookieFree],
    rows: &[ProtocolRow],
    catalogue: &Catalogue,
) -> Vec<CookieRow> {
    let mut out = Vec::new();
    for f in free {
        let Some(c) = configs.iter().find(|c| c.contender == f.of) else {
            continue;
        };
        let mine = rows
            .iter()
            .filter(|r| r.protocol == c.protocol() && r.suite == c.suite() && r.auth == c.auth());
        for r in mine {
            let Ok(bearer) = catalogue.bearer(r.bearer.as_str()) else {
                continue;
            };
            let (on, flights) = (c.flights_over(bearer), f.flights_over(bearer));
            out.push(CookieRow {
                protocol: r.protocol,
                suite: r.suite.clone(),
                cookie_exchange: true,
                bearer: r.bearer.clone(),
                device: r.device.clone(),
                bytes: total(on, |f| f.bytes),
                datagrams: total(on, |f| f.datagrams),
                round_trips: on.len() as f64 / 2.0,
                modelled_ms: r.modelled_ms,
                measured_ms: r.measured_ms,
            });
            out.push(CookieRow {
                cookie_exchange: false,
                bytes: total(flights, |f| f.bytes),
                datagrams: total(flights, |f| f.datagrams),
                round_trips: flights.len() as f64 / 2.0,
                modelled_ms: r.client_ms.map(|client| {
                    model::duration_ms(flights, bearer, client, f.server_cpu_us / 1e3)
                }),
                measured_ms: (r.device == DeviceName::this_machine())
                    .then(|| {
                        f.measured
                            .iter()
                            .find(|(b, _, _)| *b == r.bearer)
                            .map(|m| m.1)
                    })
                    .flatten(),
                ..out.last().cloned().expect("pushed above")
            });
        }
    }
    out
}

/// A sum over flights (bytes or datagrams), both ways.
fn total(flights: &[Flight], of: impl Fn(&Flight) -> u32) -> usize {
    flights.iter().map(|f| of(f) as usize).sum()
}

/// With the cookie minus without it, on the same bearer and device (ms): the cookie
/// exchange's modelled price.
pub fn price_ms(rows: &[CookieRow], with: &CookieRow) -> Option<f64> {
    let without = rows.iter().find(|r| {
        !r.cookie_exchange
            && r.protocol == with.protocol
            && r.suite == with.suite
            && r.bearer == with.bearer
            && r.device == with.device
    })?;
    Some(with.modelled_ms? - without.modelled_ms?)
}

/// The report's table: this machine's client, each configuration with and without the
/// cookie on every compared bearer.
pub fn table(rows: &[CookieRow], ctx: &Ctx) -> Table {
    let modelled = Provenance::modelled(
        "T_H = Eq. 3.84 per flight + T_PD_C + T_PD_S",
        "the flights of the in-memory run with and without the cookie exchange, at the bearer's payload limit",
    );
    let mut t = Table::new(
        "protocols_cookie",
        "DTLS with and without the cookie exchange (this machine's client)",
    )
    .caption("The cookie exchange (DTLS 1.2's HelloVerifyRequest, DTLS 1.3's HelloRetryRequest with a cookie) is on in the bench's DTLS servers (RFC 6347 and RFC 9147 recommend it; OpenSSL and wolfSSL run it when the server asks for it) and WTLS has none. Bytes and round trips from the in-memory runs at the bearer's payload limit; time modelled for both, and measured over the emulated bearers for both (the cookie-free server behind its own gateway). Where the ML-KEM ClientHello would not fit one datagram at the bearer's payload limit, wolfSSL's first ClientHello carries no key share, so a HelloRetryRequest asks for it with or without the cookie; where it fits (GSM CSD's 1472 bytes) the first ClientHello carries it, and the cookie exchange makes the client send it twice.")
    .column(Column::label("protocol"))
    .column(Column::label("suite"))
    .column(Column::label("cookie exchange"))
    .column(Column::label("bearer"))
    .column(Column::new("bytes", Some("B"), ctx.measured()))
    .column(Column::new("round trips", None, ctx.measured()))
    .column(Column::new("modelled", Some("ms"), modelled.clone()))
    .column(Column::new("measured", Some("ms"), ctx.measured()))
    .column(Column::new("the cookie's price", Some("ms"), modelled));
    for r in rows
        .iter()
        .filter(|r| r.device == DeviceName::this_machine())
    {
        t = t.row(vec![
            Cell::text(r.protocol.name()),
            Cell::text(&r.suite),
            Cell::text(if r.cookie_exchange {
                "on (default)"
            } else {
                "off"
            }),
            Cell::text(r.bearer.as_str()),
            Cell::num(r.bytes as f64, 0),
            Cell::num(r.round_trips, 1),
            Cell::opt(r.modelled_ms, 0),
            Cell::opt(r.measured_ms, 0),
            Cell::opt(
                if r.cookie_exchange {
                    price_ms(rows, r)
                } else {
                    None
                },
                0,
            ),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cookie: bool, ms: f64) -> CookieRow {
        CookieRow {
            protocol: wtlsperf_drivers::protocols::DTLS12,
            suite: "ecdhe-ecdsa-p256-ccm8".into(),
            cookie_exchange: cookie,
            bearer: BearerName::of(&wtlsperf_bearer::profile("gsm-csd").unwrap()),
            device: DeviceName::this_machine(),
            bytes: 0,
            datagrams: 0,
            round_trips: 0.0,
            modelled_ms: Some(ms),
            measured_ms: None,
        }
    }

    #[test]
    fn the_price_is_the_default_minus_the_cookie_free_twin() {
        let rows = vec![row(true, 3000.0), row(false, 2082.0)];
        assert_eq!(price_ms(&rows, &rows[0]), Some(918.0));
        assert_eq!(price_ms(&rows[..1], &rows[0]), None);
    }
}
