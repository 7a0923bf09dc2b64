//! What post-quantum key exchange costs a constrained client, and where it stops being
//! affordable: DTLS 1.3 with ML-KEM-768 (alone, and in the X25519 hybrid) against DTLS
//! 1.3 with classical P-256 ECDHE, the same certificates (ECDSA P-256), cipher suite and
//! library (wolfSSL), per device profile and bearer.
//!
//! Per row: the extra bytes and datagrams of each flight at the bearer's MTU (the
//! handshakes fragmented to the bearer's datagram payload limit in memory, as its runs
//! do), the extra client compute on the device (its profile's operation costs, ML-KEM's
//! published or, on the `*-executed` profiles, executed: [`super::pq_prices`]; "not
//! available" where the device has neither, never extrapolated from elliptic-curve
//! numbers), and the extra time to a secure channel,
//! modelled everywhere (T_H = Eq. 3.84 over the flights + client + server CPU, as
//! `protocols.csv`) and measured where the protocols part ran both handshakes over the
//! emulated bearer on that device.
//!
//! **The affordability rule** (docs/results.md, "The post-quantum budget"): a row's
//! deciding durations are the measured means where both handshakes ran on it, else the
//! modelled ones. Post-quantum key exchange is affordable on a device and bearer when
//! the classical handshake is within [`BUDGET_MS`] beyond the margin and the
//! post-quantum one is too; it stops being affordable where the classical handshake is
//! within the budget and the post-quantum one exceeds it beyond the margin (post-quantum
//! key exchange is what breaks it). The margin is the verdict rule's
//! [`MODEL_TOLERANCE`] of the budget. Rows whose classical handshake is not within the
//! budget are counted apart: the bearer or device already rules the handshake out.

use std::path::Path;

use serde::Serialize;
use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::transmission::{Direction, Flight};

use super::context::Ctx;
use super::csv_file::write_csv;
use super::pq_prices::pq_prices;
use super::protocols::{Config, ProtocolResults};
use super::verdict::{self as rule, MODEL_TOLERANCE};
use super::vocabulary::{nominal_rates_note, DeviceName};
use wtlsperf_drivers::protocols::model::{self, Device};

pub use channel::{Channel, ChannelHeadline};

/// The time-to-a-secure-channel budget (ms): 3GPP TR 45.820's latency objective for a
/// cellular IoT exception report, 10 s from the event to the report's delivery. A
/// handshake that must precede the report can take no more than the whole budget.
pub const BUDGET_MS: f64 = 10_000.0;

/// Where [`BUDGET_MS`] comes from, as the findings and the report cite it.
pub const BUDGET_SOURCE: &str =
    "3GPP TR 45.820 (Rel-13 cellular IoT study): exception reports delivered within 10 s";

/// Whether post-quantum key exchange fits the budget on one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Affordability {
    /// Both handshakes within the budget beyond the margin.
    Affordable,
    /// Classical within the budget, post-quantum over it beyond the margin.
    NotAffordable,
    /// Classical within the budget, post-quantum within the margin of it; or classical
    /// itself within the margin of the budget: undecided.
    AtTheBudget,
    /// Classical over the budget beyond the margin: not judged.
    ClassicalNotWithin,
    /// A device cost of the post-quantum (or classical) handshake is not published.
    NotAvailable(String),
}

impl std::fmt::Display for Affordability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Affordability::Affordable => f.write_str("yes"),
            Affordability::NotAffordable => f.write_str("no"),
            Affordability::AtTheBudget => f.write_str("within the margin"),
            Affordability::ClassicalNotWithin => f.write_str("classical over budget"),
            Affordability::NotAvailable(reason) => f.write_str(reason),
        }
    }
}

impl Affordability {
    /// The rule on one row's deciding durations (ms).
    pub fn decide(classical_ms: f64, pq_ms: f64) -> Affordability {
        Affordability::decide_within(classical_ms, pq_ms, 0.0)
    }

    /// The margin about the budget: the model tolerance widened by `unsure_ms`.
    pub fn margin_ms(unsure_ms: f64) -> f64 {
        MODEL_TOLERANCE * BUDGET_MS + unsure_ms.abs()
    }

    /// The same with the margin widened by `unsure_ms`: a measured row's means carry no
    /// interval (the protocols part keeps only the mean of its runs), so the gap between
    /// its measured and modelled post-quantum increments stands in for their scatter.
    /// A classical handshake within the margin of the budget leaves the row undecided
    /// (the claim's premise is not settled either way); one over it beyond the margin
    /// leaves it out.
    pub fn decide_within(classical_ms: f64, pq_ms: f64, unsure_ms: f64) -> Affordability {
        let margin = Affordability::margin_ms(unsure_ms);
        match rule::below_by(classical_ms, BUDGET_MS, margin) {
            Some(false) => return Affordability::ClassicalNotWithin,
            None => return Affordability::AtTheBudget,
            Some(true) => {}
        }
        match rule::below_by(pq_ms, BUDGET_MS, margin) {
            Some(true) => Affordability::Affordable,
            Some(false) => Affordability::NotAffordable,
            None => Affordability::AtTheBudget,
        }
    }

    /// The verdict rule's decision of "post-quantum fits where classical does"; `None`
    /// within the margin; rows not judged are left out by the caller.
    fn decision(&self) -> Option<Option<bool>> {
        match self {
            Affordability::Affordable => Some(Some(true)),
            Affordability::NotAffordable => Some(Some(false)),
            Affordability::AtTheBudget => Some(None),
            Affordability::ClassicalNotWithin | Affordability::NotAvailable(_) => None,
        }
    }
}

/// One row of `pq_cost.csv` (columns documented in docs/results.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PqCostRow {
    pub pq_suite: String,
    pub classical_suite: String,
    pub bearer: String,
    pub device: String,
    /// The bearer's largest UDP payload: both handshakes fragment to it.
    pub payload_limit: u16,
    pub classical_bytes: u32,
    pub pq_bytes: u32,
    pub extra_bytes: i64,
    pub classical_datagrams: u32,
    pub pq_datagrams: u32,
    pub extra_datagrams: i64,
    /// Per flight in order, `u`/`d` for the direction: the post-quantum flight's extra
    /// bytes and its datagrams (`d+1088B/2`).
    pub pq_flights: String,
    /// Post-quantum minus classical client compute on the device (ms).
    pub extra_client_ms: Option<f64>,
    pub classical_modelled_ms: Option<f64>,
    pub pq_modelled_ms: Option<f64>,
    pub extra_modelled_ms: Option<f64>,
    pub classical_measured_ms: Option<f64>,
    pub pq_measured_ms: Option<f64>,
    pub extra_measured_ms: Option<f64>,
    /// Real runs behind the measured means (the smaller of the two handshakes').
    pub measured_runs: usize,
    /// Which durations decide: `measured`, `modelled`, or `not available: ...`.
    pub basis: String,
    /// The margin about the budget the row was decided with (ms): the model tolerance,
    /// widened on a measured row by its measured-to-modelled gap and on a modelled row
    /// by the protocol's measured model bias on the bearer.
    pub margin_ms: Option<f64>,
    pub budget_ms: f64,
    #[serde(serialize_with = "crate::evaluate::csv_file::display")]
    pub affordable: Affordability,
    /// The protocol of both handshakes (`dtls1.3`, ...).
    pub protocol: String,
    /// Which half of the post-quantum handshake is post-quantum: `key exchange`,
    /// `signature` or `both`.
    pub post_quantum_part: String,
    /// Whether the post-quantum handshake's key exchange is a hybrid (a classical group
    /// with ML-KEM-768) rather than ML-KEM alone.
    pub hybrid_key_exchange: bool,
}

impl PqCostRow {
    /// What the row's figures are, in a finding's words: `measured` only for this
    /// machine's client; a device profile's measured row is an emulated device (a real
    /// run holding the profile's modelled compute); `modelled` otherwise.
    pub fn basis_words(&self) -> &str {
        if self.basis == "measured" && self.device != DeviceName::this_machine().as_str() {
            "emulated device: modelled compute held in a real run"
        } else {
            &self.basis
        }
    }

    /// The deciding durations (classical, post-quantum), measured where both ran.
    pub fn deciding_ms(&self) -> Option<(f64, f64)> {
        match (self.classical_measured_ms, self.pq_measured_ms) {
            (Some(c), Some(p)) => Some((c, p)),
            _ => Some((self.classical_modelled_ms?, self.pq_modelled_ms?)),
        }
    }
}

/// The table of every post-quantum configuration, bearer and device.
#[derive(Debug, Clone, Default)]
pub struct PqCost {
    pub rows: Vec<PqCostRow>,
    /// The note on the table's bearers whose rates are nominal, which its section and
    /// findings carry (every modern bearer of the table is one).
    pub nominal_note: Option<String>,
    /// Where the ML-KEM key share crosses twice with the cookie exchange, and what that
    /// costs (`key_share`), carried by both findings.
    pub key_share_note: Option<String>,
}

/// One handshake on one bearer and device.
struct Side<'a> {
    config: &'a Config,
    flights: &'a [Flight],
    client: Result<f64, String>,
    modelled: Option<f64>,
    measured: Option<(f64, usize)>,
}

impl<'a> Side<'a> {
    fn new(
        config: &'a Config,
        bearer: &LinkProfile,
        device: &Device,
        protocols: &ProtocolResults,
        client: Result<f64, String>,
    ) -> Side<'a> {
        let flights = config.flights_over(bearer);
        let modelled = client
            .as_ref()
            .ok()
            .map(|&c| model::duration_ms(flights, bearer, c, config.server_cpu_us / 1e3));
        let measured = protocols
            .rows
            .iter()
            .find(|r| {
                r.protocol == config.protocol()
                    && r.suite == config.suite()
                    && r.auth == config.auth()
                    && r.bearer.as_str() == bearer.name
                    && r.device.as_str() == device.name()
                    && r.measured_runs > 0
            })
            .and_then(|r| Some((r.measured_ms?, r.measured_runs)));
        Side {
            config,
            flights,
            client,
            modelled,
            measured,
        }
    }

    fn bytes(&self) -> u32 {
        self.flights.iter().map(|f| f.bytes).sum()
    }

    fn datagrams(&self) -> u32 {
        self.flights.iter().map(|f| f.datagrams).sum()
    }
}

/// `u+0B/1 d+1088B/2 ...`: each post-quantum flight's extra bytes over the classical
/// flight in the same place, and its datagrams; without the increment where the two
/// handshakes' flights do not pair up.
fn flights_text(classical: &[Flight], pq: &[Flight]) -> String {
    let paired = classical.len() == pq.len()
        && classical
            .iter()
            .zip(pq)
            .all(|(c, p)| c.direction == p.direction);
    pq.iter()
        .enumerate()
        .map(|(i, p)| {
            let dir = if p.direction == Direction::Up {
                'u'
            } else {
                'd'
            };
            if paired {
                let extra = i64::from(p.bytes) - i64::from(classical[i].bytes);
                format!("{dir}{extra:+}B/{}", p.datagrams)
            } else {
                format!("{dir}{}B/{}", p.bytes, p.datagrams)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One row from the two sides; `model_bias` is the share of a modelled duration the
/// protocol's flight model has been seen to miss by on this bearer
/// (`ProtocolResults::model_bias_bound`).
fn row(
    classical: &Side,
    pq: &Side,
    bearer: &LinkProfile,
    device: &Device,
    model_bias: f64,
) -> PqCostRow {
    let extra = |a: Option<f64>, b: Option<f64>| Some(b? - a?);
    let classical_measured = classical.measured.map(|m| m.0);
    let pq_measured = pq.measured.map(|m| m.0);
    let both_measured = classical_measured.is_some() && pq_measured.is_some();
    let not_available = [&classical.client, &pq.client]
        .into_iter()
        .find_map(|c| c.as_ref().err().cloned());
    let mut r = PqCostRow {
        protocol: pq.config.protocol().name().to_owned(),
        post_quantum_part: pq.config.contender.traits().post_quantum_part().to_owned(),
        hybrid_key_exchange: pq.config.contender.traits().hybrid_key_exchange,
        pq_suite: pq.config.suite(),
        classical_suite: classical.config.suite(),
        bearer: bearer.name.clone(),
        device: device.name().to_owned(),
        payload_limit: bearer.datagram_payload_limit(),
        classical_bytes: classical.bytes(),
        pq_bytes: pq.bytes(),
        extra_bytes: i64::from(pq.bytes()) - i64::from(classical.bytes()),
        classical_datagrams: classical.datagrams(),
        pq_datagrams: pq.datagrams(),
        extra_datagrams: i64::from(pq.datagrams()) - i64::from(classical.datagrams()),
        pq_flights: flights_text(classical.flights, pq.flights),
        extra_client_ms: extra(
            classical.client.as_ref().ok().copied(),
            pq.client.as_ref().ok().copied(),
        ),
        classical_modelled_ms: classical.modelled,
        pq_modelled_ms: pq.modelled,
        extra_modelled_ms: extra(classical.modelled, pq.modelled),
        classical_measured_ms: classical_measured,
        pq_measured_ms: pq_measured,
        extra_measured_ms: extra(classical_measured, pq_measured),
        measured_runs: match (classical.measured, pq.measured) {
            (Some(c), Some(p)) => c.1.min(p.1),
            _ => 0,
        },
        basis: String::new(),
        margin_ms: None,
        budget_ms: BUDGET_MS,
        affordable: Affordability::AtTheBudget,
    };
    // A measured pair decides even where a device price is missing for the model (this
    // machine's own CPU ran both); otherwise the model needs every price.
    let decided = match (both_measured, not_available, r.deciding_ms()) {
        (true, _, Some(durations)) => Ok((
            "measured",
            durations,
            rule::run_gap_ms(r.extra_measured_ms, r.extra_modelled_ms),
        )),
        (false, Some(reason), _) => Err(reason),
        (false, None, Some((c, p))) => Ok(("modelled", (c, p), model_bias * c.max(p))),
        (_, _, None) => Err("not available: no duration".to_owned()),
    };
    match decided {
        Ok((basis, (c, p), unsure)) => {
            r.basis = basis.to_owned();
            r.margin_ms = Some(Affordability::margin_ms(unsure));
            r.affordable = Affordability::decide_within(c, p, unsure);
        }
        Err(reason) => {
            r.basis = reason.clone();
            r.affordable = Affordability::NotAvailable(reason);
        }
    }
    r
}

impl PqCost {
    /// Builds the rows from the protocols part: every post-quantum DTLS 1.3
    /// configuration against the classical one, on the compared bearers and the
    /// bearers of the 2001-to-today table, on this machine and every catalogue device.
    pub fn build(ctx: &Ctx, protocols: &ProtocolResults) -> anyhow::Result<PqCost> {
        let published = pq_prices();
        let mut bearers: Vec<&LinkProfile> = ctx.catalogue.compared_bearers().collect();
        for (_, name) in super::then_and_now::BEARERS {
            let b = ctx.catalogue.bearer(name)?;
            if !bearers.iter().any(|x| x.name == b.name) {
                bearers.push(b);
            }
        }
        let devices: Vec<Device> = std::iter::once(Device::ThisMachine)
            .chain(
                ctx.catalogue
                    .devices
                    .iter()
                    .map(|d| Device::Profile(Box::new(d.clone()))),
            )
            .collect();
        let mut rows = Vec::new();
        for pq in protocols.configs.iter().filter(|c| c.is_post_quantum()) {
            // its protocol's classical certificate configuration
            let baseline = |c: &&Config| c.is_pq_baseline() && c.protocol() == pq.protocol();
            let Some(classical) = protocols.configs.iter().find(baseline) else {
                continue;
            };
            for bearer in &bearers {
                let bias = protocols.model_bias_bound(pq.protocol(), &bearer.name);
                for device in &devices {
                    let client = |c: &Config| {
                        c.client_time(device, &published)
                            .unwrap_or_else(|| Err("not available: no client cost".to_owned()))
                    };
                    let c = Side::new(classical, bearer, device, protocols, client(classical));
                    let p = Side::new(pq, bearer, device, protocols, client(pq));
                    rows.push(row(&c, &p, bearer, device, bias));
                }
            }
        }
        let nominal_note = nominal_rates_note(bearers.iter().copied());
        Ok(PqCost {
            rows,
            nominal_note,
            key_share_note: key_share::note(&ctx.catalogue, protocols),
        })
    }

    /// Writes `pq_cost.csv`.
    pub fn write_csv(&self, dir: &Path) -> anyhow::Result<()> {
        write_csv(&dir.join("pq_cost.csv"), &self.rows)
    }
}

mod channel;
mod findings;
mod key_share;
mod report;

#[cfg(test)]
mod tests;
