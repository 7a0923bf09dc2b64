//! Part 7: WTLS beside its successors, DTLS 1.2 (OpenSSL) and EDHOC (lakers over CoAP),
//! on the same bench, bearers and models, and the peer performance anchors.
//!
//! * In memory, this machine: every modern suite's bytes, flights, server and client
//!   CPU and bound ratio, beside the WTLS best case (fewest handshake bytes) of each
//!   security category and authentication mode from the processing part.
//! * Per bearer (GSM CSD, GPRS, EDGE, UMTS, LTE-M, NB-IoT) and device profile: the
//!   modelled duration T_H = Eq. 3.84 over the protocol's own flights + the client's
//!   processing on the device + the server's CPU; and real handshakes through the
//!   emulated bearers (the modern protocols on emulated devices too) measure it.
//! * Completion over a 10 % loss link with each protocol's own retransmission.
//! * OpenSSL's TLS 1.2 and DTLS 1.2 servers and rustls' TLS 1.2 and 1.3, server CPU and
//!   bound ratio beside our gateway's, measured interleaved in this run.

pub mod cookie;
mod hybrid_anchor;
pub mod tables;
pub mod timers;
mod verdicts;

pub use hybrid_anchor::{HybridAnchorFigures, HYBRID_ANCHOR_KEY};

use super::csv_file::write_csv;
use super::loss_curves::{over_all_runs, Bound};
use super::pq_prices::pq_prices;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use wtlsperf_drivers::registry::wtls::WtlsCase;
use wtlsperf_drivers::registry::{run_over_bearers, BearerHandshake, Bench, Contender};
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::stats::{mean, median};
use wtlsperf_models::transmission::Flight;
use wtlsperf_models::Authentication;
use wtlsperf_spine::ProtocolId;

use super::context::{Ctx, Mode, StageClock};
use super::processing::{CaseResult, ProcessingResults};
use super::vocabulary::{auth_name, BearerName, Catalogue, DeviceName};
use wtlsperf_bearer::LinkProfile;
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::protocols::compare;
use wtlsperf_drivers::protocols::model::{self, Device};
use wtlsperf_drivers::protocols::peers::PeerMeasurement;

/// Loss probability of the lossy link.
pub const LOSS: f64 = 0.10;
/// The bearer the lossy runs use (a modern one: the protocols it carries are the question).
pub const LOSS_BEARER: &str = "lte-m";

/// The configurations the evaluation compares beside WTLS's best cases, as contender
/// texts: each protocol's RFC 7925-profile certificate and PSK configurations, EDHOC's
/// one, and DTLS 1.3's classical and ML-KEM certificate configurations: ML-KEM-768 alone,
/// its P-256 hybrid (which the device profiles can price: P-256 and ML-KEM-768 both have
/// published costs, X25519 none) and its X25519 hybrid, then ML-DSA-44 with P-256 and
/// with ML-KEM-768. A protocol this build lacks is left out; one the registry adds is
/// compared by its first (default) configuration.
pub const COMPARED: [&str; 11] = [
    "dtls1.2:ecdhe-ecdsa-p256-ccm8",
    "dtls1.2:ecdhe-ecdsa-p256-ccm8-mutual",
    "dtls1.2:psk-ccm8",
    "edhoc:method3-suite2",
    "dtls1.3:ecdhe-p256-ecdsa-ccm8",
    "dtls1.3:psk-ccm8",
    "dtls1.3:mlkem768-ecdsa-ccm8",
    "dtls1.3:p256mlkem768-ecdsa-ccm8",
    "dtls1.3:x25519mlkem768-ecdsa-ccm8",
    "dtls1.3:ecdhe-p256-mldsa44-ccm8",
    "dtls1.3:mlkem768-mldsa44-ccm8",
];

/// The compared configurations this build has (see [`COMPARED`]), beyond WTLS.
pub fn compared() -> Vec<Contender> {
    super::contenders::with_every_protocol(&COMPARED)
}

/// The flights measured at `bearer`'s datagram payload limit, else `default`.
fn flights_at_limit<'a>(
    by_limit: &'a [(u16, Vec<Flight>)],
    default: &'a [Flight],
    bearer: &LinkProfile,
) -> &'a [Flight] {
    let limit = bearer.datagram_payload_limit();
    by_limit
        .iter()
        .find(|(l, _)| *l == limit)
        .map_or(default, |(_, f)| f)
}

/// One handshake configuration with its in-memory measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Which handshake.
    pub contender: Contender,
    /// Security level label (`category 3`; P-256 is category 3's 128-bit level).
    pub level: String,
    /// Payload bytes both ways.
    pub bytes: usize,
    /// Datagrams both ways.
    pub datagrams: usize,
    /// The protocol's own flights (Eq. 3.84's traversals).
    pub flights: Vec<Flight>,
    /// The same flights fragmented to other datagram payload limits (bytes), where the
    /// protocol fragments to the bearer's MTU in its bearer runs (DTLS 1.3): each
    /// bearer's model then takes the flights its runs exchange ([`Config::flights_over`]).
    pub flights_by_payload_limit: Vec<(u16, Vec<Flight>)>,
    /// Median server thread CPU per handshake (µs).
    pub server_cpu_us: f64,
    /// Median client thread CPU per handshake (µs).
    pub client_cpu_us: f64,
    /// Server CPU over its raw public-key operations.
    pub bound_ratio: Option<f64>,
    /// A WTLS case measured with the thesis' parameter numbering: the same handshake's
    /// flights with WAP-261's (explicit parameters for a curve WAP-261 does not number,
    /// P-256 among them), which the model prices beside; `None` otherwise.
    pub flights_wap261: Option<Vec<Flight>>,
}

impl Config {
    /// `wtls`, `dtls1.2`, `edhoc`, ...
    pub fn protocol(&self) -> ProtocolId {
        self.contender.protocol()
    }

    /// The case or suite name (the `suite` column).
    pub fn suite(&self) -> String {
        self.contender.suite()
    }

    /// Server-authenticated or mutual.
    pub fn auth(&self) -> Authentication {
        self.contender.auth()
    }

    /// Whether it is a WTLS case.
    pub fn is_wtls(&self) -> bool {
        self.protocol() == wtls::handshake::WTLS
    }

    /// The flights over `bearer`: fragmented to its datagram payload limit where they
    /// were measured at it, else [`Config::flights`].
    pub fn flights_over(&self, bearer: &LinkProfile) -> &[Flight] {
        flights_at_limit(&self.flights_by_payload_limit, &self.flights, bearer)
    }

    /// Flights / 2.
    pub fn round_trips(&self) -> f64 {
        self.flights.len() as f64 / 2.0
    }

    /// 1 / server CPU.
    pub fn handshakes_per_core_s(&self) -> f64 {
        1e6 / self.server_cpu_us
    }

    /// Server-authenticated with certificates and a classical key exchange, in a
    /// protocol that also has an ML-KEM configuration: the baseline of the
    /// post-quantum comparison (`super::pq_cost`).
    pub fn is_pq_baseline(&self) -> bool {
        self.pq_certificate_group() == Some(false)
    }

    /// Server-authenticated with certificates, with ML-KEM in its key exchange (alone
    /// or in a hybrid), ML-DSA signing its certificates, or both.
    pub fn is_post_quantum(&self) -> bool {
        self.pq_certificate_group() == Some(true)
    }

    /// Whether the client needs P-256 operations (everything but a PSK without a key
    /// exchange).
    pub fn uses_p256(&self) -> bool {
        self.contender.traits().uses_p256
    }

    /// Whether a server-authenticated certificate configuration of a protocol with
    /// post-quantum configurations is post-quantum in either half; `None` for every
    /// other configuration.
    fn pq_certificate_group(&self) -> Option<bool> {
        let t = self.contender.traits();
        let has_pq = self
            .contender
            .entry()
            .configurations()
            .iter()
            .any(|c| c.traits().post_quantum_part() != "none");
        let certificate_server = t.forward_secrecy.holds
            && self.auth() == Authentication::ServerAuth
            && t.uses_p256
            && !self.contender.configuration().ends_with("-cid");
        (has_pq && certificate_server).then_some(t.post_quantum_part() != "none")
    }

    /// WTLS 256p/256p: the like-for-like case of the P-256 suites.
    pub fn is_wtls_p256(&self) -> bool {
        self.is_wtls() && self.suite() == "256p/256p"
    }

    /// `wtls 256p/256p server`.
    pub fn label(&self) -> String {
        format!(
            "{} {} {}",
            self.protocol().name(),
            self.suite(),
            auth_name(self.auth())
        )
    }

    /// The client's processing time on `device` (ms): `None` where the configuration
    /// has no row for the device (a WTLS case the profile does not price), `Err` with
    /// the reason where the row says "not available" (an ML-KEM operation without a
    /// published cost on the device).
    pub fn client_time(
        &self,
        device: &Device,
        published: &[PublishedPqCost],
    ) -> Option<Result<f64, String>> {
        match device {
            Device::ThisMachine => Some(Ok(self.client_cpu_us / 1e3)),
            Device::Profile(d) => match self.contender.client_steps(d, published) {
                Ok(steps) => Some(Ok(steps.total_ms())),
                Err(e) if e.listed => Some(Err(e.reason)),
                Err(_) => None,
            },
        }
    }

    /// How a device profile prices a WTLS configuration's client: `None` for the other
    /// protocols (their model prices them or says why not). A case whose key types the
    /// device's library does not offer is not available; one priced with another
    /// device's ratios is borrowed.
    pub fn wtls_pricing(&self, device: &Device) -> Option<WtlsPricing> {
        let (Device::Profile(d), Some(w)) = (device, self.contender.downcast::<WtlsCase>()) else {
            return None;
        };
        let case = wtlsperf_models::device::WtlsCase::parse(
            w.case.ca.short(),
            w.case.leaf.short(),
            w.auth,
        )?;
        let offered = |k| d.offers.is_empty() || d.offers.contains(&k);
        Some(if !offered(case.ca) || !offered(case.leaf) {
            WtlsPricing::NotOffered
        } else if d.borrows_for(case) {
            WtlsPricing::Borrowed
        } else {
            WtlsPricing::Own
        })
    }

    /// Whether the client's price on `device` is an estimate, and which: priced without
    /// the profile's borrowed costs (or without its P-256 stand-ins), the configuration
    /// is not priced, or priced otherwise.
    pub fn estimate_on(&self, device: &Device, published: &[PublishedPqCost]) -> Option<Estimate> {
        let Device::Profile(d) = device else {
            return None;
        };
        Estimate::of(d, |p| {
            self.client_time(&Device::Profile(Box::new(p.clone())), published)
        })
    }

    /// The client's processing time on `device` (ms), if the device prices it.
    pub fn client_ms(&self, device: &Device) -> Option<f64> {
        self.client_time(device, &pq_prices())?.ok()
    }
}

/// Why a client's price on a device profile is an estimate rather than the device's
/// own (published, fitted, executed or size-scaled) numbers: no finding judges on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimate {
    /// A cost borrowed from another device's ratios (devices.csv, source `borrowed`).
    Borrowed,
    /// A P-256 key generation, signature or verification the profile does not price,
    /// stood in for by its own ECDH (`protocols::model::op_ms` in the drivers).
    P256StandIn,
}

impl Estimate {
    /// Whether `price` on `device` rests on an estimate: it changes when the profile's
    /// borrowed costs are taken away (or, failing that, its P-256 stand-ins).
    pub fn of<T: PartialEq>(
        device: &DeviceProfile,
        price: impl Fn(&DeviceProfile) -> T,
    ) -> Option<Estimate> {
        let priced = price(device);
        if price(&device.without_borrowed()) != priced {
            Some(Estimate::Borrowed)
        } else if price(&device.without_estimates()) != priced {
            Some(Estimate::P256StandIn)
        } else {
            None
        }
    }

    /// The clause `protocols.csv` and `then_and_now.csv` give after `profile, `.
    pub fn words(self) -> &'static str {
        match self {
            Estimate::Borrowed => "borrowed: a cost from another device's ratios",
            Estimate::P256StandIn => {
                "stand-in: a P-256 key generation or signature the profile does not price taken as one of its ECDH, a verification as two"
            }
        }
    }
}

/// How a device profile prices a WTLS case's client operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WtlsPricing {
    /// Every operation from the device's own numbers (or the documented size rule).
    Own,
    /// Some operation from another device's ratios.
    Borrowed,
    /// The device's library does not offer one of the case's key types.
    NotOffered,
}

/// One row of `protocols.csv` (columns documented in docs/results.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProtocolRow {
    #[serde(serialize_with = "crate::evaluate::csv_file::display")]
    pub protocol: ProtocolId,
    pub suite: String,
    pub auth: Authentication,
    pub level: String,
    pub bearer: BearerName,
    pub device: DeviceName,
    pub bytes: usize,
    pub datagrams: usize,
    pub round_trips: f64,
    pub server_cpu_us: f64,
    pub bound_ratio: Option<f64>,
    pub handshakes_per_core_s: f64,
    /// Empty where the device has no published or executed cost for an operation (see `client_cost`).
    pub client_ms: Option<f64>,
    /// Empty where `client_ms` is.
    pub modelled_ms: Option<f64>,
    /// The same T_H with the handshake's WAP-261-numbered flights, for a WTLS case
    /// measured with the thesis' numbering; empty otherwise and where `client_ms` is.
    pub modelled_wap261_ms: Option<f64>,
    pub measured_ms: Option<f64>,
    pub measured_runs: usize,
    /// `measured` (this machine), `profile` (priced by the device profile), `profile,
    /// borrowed: ...` (a cost of it borrowed from another device's ratios), `profile,
    /// stand-in: ...` (a P-256 operation the profile does not price, estimated from its
    /// ECDH; see [`Estimate`]), or `not available: ...` with the reason.
    pub client_cost: String,
    /// The client's price is an estimate ([`Estimate`]), which a finding does not
    /// judge on.
    #[serde(skip)]
    pub borrowed: bool,
}

impl ProtocolRow {
    /// measured / modelled - 1, where measured (positive: slower than modelled).
    pub fn signed_model_error(&self) -> Option<f64> {
        let modelled = self.modelled_ms?;
        self.measured_ms.map(|m| m / modelled - 1.0)
    }

    /// |measured / modelled - 1|, where measured.
    pub fn model_error(&self) -> Option<f64> {
        self.signed_model_error().map(f64::abs)
    }
}

/// Completion over the lossy link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LossRow {
    #[serde(serialize_with = "crate::evaluate::csv_file::display")]
    pub protocol: ProtocolId,
    pub suite: String,
    pub auth: Authentication,
    pub bearer: BearerName,
    pub loss: f64,
    pub runs: usize,
    pub completed: usize,
    /// Over all runs, a run that did not complete counted as beyond every time, as the
    /// loss curves count it: empty where the median falls on such a run
    /// (`median_bound` = `unbounded`: above `max_ms`).
    pub median_ms: Option<f64>,
    pub median_bound: Option<Bound>,
    /// The longest completed run.
    pub max_ms: Option<f64>,
    pub median_retransmissions: Option<f64>,
}

impl LossRow {
    /// The median over all runs as a reader takes it: the time, or `> longest` where
    /// it falls on a run that did not complete.
    pub fn median_text(&self) -> String {
        match (self.median_ms, self.median_bound, self.max_ms) {
            (Some(m), _, _) => format!("{m:.0} ms"),
            (None, Some(Bound::Unbounded), Some(max)) => format!("> {max:.0} ms"),
            _ => "-".to_owned(),
        }
    }
}

/// Everything this part measured and modelled.
#[derive(Debug, Clone)]
pub struct ProtocolResults {
    pub configs: Vec<Config>,
    pub rows: Vec<ProtocolRow>,
    pub loss: Vec<LossRow>,
    /// Each anchor beside our gateway's bound ratio for its WTLS counterpart.
    pub peers: Vec<(PeerMeasurement, Option<f64>)>,
    /// Devices the real runs emulated.
    pub measured_devices: Vec<DeviceName>,
    /// The bearers compared, slowest first (the catalogue's compared bearers).
    pub bearers: Vec<BearerName>,
    /// The lossy runs' bearer.
    pub loss_bearer: BearerName,
    /// The catalogue's sentence on the compared bearers that are typical figures
    /// (`Catalogue::typical_bearer_note`), carried by every finding over them.
    pub typical_bearer_note: Option<String>,
    /// The post-quantum peer anchor, with the `dtls13` feature.
    pub hybrid_anchor: Option<HybridAnchorFigures>,
    /// Wall seconds of each stage, in order (`summary.json`'s `part_seconds` as
    /// `protocols: <stage>`): the part's time varies between runs, and this says where.
    pub stage_seconds: Vec<(&'static str, f64)>,
    /// The DTLS configurations with and without the cookie exchange
    /// (`protocols_cookie.csv`).
    pub cookie: Vec<cookie::CookieRow>,
    /// Each protocol's retransmission timers (`protocols_timers.csv`).
    pub timers: Vec<timers::TimerRow>,
}

/// How much a mode runs.
struct Plan {
    suite_reps: usize,
    peer_reps: usize,
    runs: usize,
    loss_runs: usize,
    /// The devices of the real runs: this machine first, then catalogue devices.
    devices: Vec<DeviceName>,
    /// The bearers of the real runs.
    bearers: Vec<BearerName>,
    loss_bearer: BearerName,
    loss_deadline: Duration,
}

fn plan(mode: Mode, catalogue: &Catalogue) -> anyhow::Result<Plan> {
    let loss_bearer = BearerName::of(catalogue.bearer(LOSS_BEARER)?);
    let compared: Vec<BearerName> = catalogue.compared_bearers().map(BearerName::of).collect();
    let this_machine = DeviceName::this_machine();
    Ok(match mode {
        Mode::Smoke => Plan {
            suite_reps: 5,
            peer_reps: 20,
            runs: 1,
            loss_runs: 0,
            devices: vec![this_machine],
            bearers: vec![loss_bearer.clone()],
            loss_bearer,
            loss_deadline: Duration::from_secs(60),
        },
        // Two runs a cell, and this machine's client only: the real
        // runs (and the cookie-free twins', which take the same count) are most of the
        // part's time, and an emulated device holds each flight for its modelled
        // compute (seconds on the 2001 handset). Every device still has modelled rows.
        Mode::Quick => Plan {
            suite_reps: 50,
            peer_reps: 300,
            runs: 2,
            loss_runs: 3,
            devices: vec![this_machine],
            bearers: compared,
            loss_bearer,
            loss_deadline: Duration::from_secs(90),
        },
        Mode::Full => Plan {
            suite_reps: 400,
            peer_reps: 3000,
            // Three runs a cell and eight lossy runs a suite: the part is bound by the
            // clients' CPU, and four and twelve took 212 s of the 15 minutes
            // (docs/results.md, "Time budget").
            runs: 3,
            loss_runs: 8,
            // Every device profile: measured as well as modelled on each.
            devices: std::iter::once(this_machine)
                .chain(catalogue.devices.iter().map(DeviceName::of))
                .collect(),
            bearers: compared,
            loss_bearer,
            loss_deadline: Duration::from_secs(150),
        },
    })
}

/// The WTLS level label of the like-for-like case, 256p/256p: a P-256 leaf, as the
/// modern suites use (a category's best case may have a smaller leaf key).
pub const WTLS_P256_LEVEL: &str = "P-256 (category 3)";

/// The WTLS case with the fewest handshake bytes in each category and mode (on every
/// bearer slower than UMTS the bytes and round trips decide, and all WTLS full
/// handshakes of a mode have the same round trips), then 256p/256p, the like-for-like
/// case of the P-256 suites, where it is not already a best case.
pub fn wtls_best(p: &ProcessingResults) -> Vec<Config> {
    let mut out: Vec<Config> = Vec::new();
    for category in 1..=3u8 {
        for auth in [Authentication::ServerAuth, Authentication::Mutual] {
            let best = p
                .cases
                .iter()
                .filter(|c| c.case.category == category && c.auth == auth)
                .min_by_key(|c| c.bytes());
            if let Some(c) = best {
                out.push(wtls_config(c, category));
            }
        }
    }
    for c in p.cases.iter().filter(|c| c.label() == "256p/256p") {
        if !out.iter().any(|o| o.contender == wtls_contender(c)) {
            out.push(Config {
                level: WTLS_P256_LEVEL.to_owned(),
                ..wtls_config(c, 3)
            });
        }
    }
    out
}

/// The registry's configuration of a measured WTLS case.
pub fn wtls_contender(c: &CaseResult) -> Contender {
    Contender::new(WtlsCase {
        case: c.case,
        auth: c.auth,
    })
}

pub fn wtls_config(c: &CaseResult, category: u8) -> Config {
    Config {
        contender: wtls_contender(c),
        level: format!("category {category}"),
        bytes: c.bytes(),
        datagrams: c.datagrams_up + c.datagrams_down,
        flights: super::transmission::packed_flights(c),
        flights_by_payload_limit: Vec::new(),
        server_cpu_us: c.server_cpu_ms.median * 1e3,
        client_cpu_us: c.client_cpu_ms.median * 1e3,
        bound_ratio: c.bound_ratio,
        flights_wap261: c
            .flights_wap261
            .as_deref()
            .map(super::transmission::flights_of),
    }
}

/// Every compared configuration in memory (`reps` handshakes after a few warm-up
/// ones), with its flights at each bearer's payload limit where it fragments to it.
fn contender_configs(ctx: &Ctx, bench: Bench<'_>, reps: usize) -> anyhow::Result<Vec<Config>> {
    let mut out = Vec::new();
    for contender in compared() {
        if ctx.mode == Mode::Smoke
            && contender.to_string() == "dtls1.2:ecdhe-ecdsa-p256-ccm8-mutual"
        {
            continue;
        }
        ctx.step(&format!("protocols: {contender} in memory"));
        let m = ctx.without_ticker(|| contender.measure_in_memory(bench, reps, reps.min(20)))?;
        let flights_by_payload_limit = at_bearer_limits(ctx, bench, &contender)?;
        out.push(Config {
            level: contender.traits().level,
            bytes: m.shape.bytes(),
            datagrams: m.shape.log.len(),
            flights: m.shape.flights(),
            flights_by_payload_limit,
            server_cpu_us: m.server_cpu_us,
            client_cpu_us: m.client_cpu_us,
            bound_ratio: m.bound_ratio(),
            flights_wap261: None,
            contender,
        });
    }
    Ok(out)
}

/// The flights of one handshake with both sides fragmenting to each distinct datagram
/// payload limit of the catalogue's bearers, for a protocol that fragments to the bearer
/// as its bearer runs do: the model of a bearer then counts the datagrams and headers
/// its runs send. The flights' shape does not depend on timing, so one handshake per
/// limit gives them.
fn at_bearer_limits(
    ctx: &Ctx,
    bench: Bench<'_>,
    contender: &Contender,
) -> anyhow::Result<Vec<(u16, Vec<Flight>)>> {
    let mut limits: Vec<u16> = ctx
        .catalogue
        .bearers
        .profiles()
        .iter()
        .map(|b| b.datagram_payload_limit())
        .collect();
    limits.sort_unstable();
    limits.dedup();
    let mut out = Vec::new();
    for limit in limits {
        match contender.shape_at(bench, limit)? {
            Some(run) => out.push((limit, run.flights())),
            None => break,
        }
    }
    Ok(out)
}

/// One real handshake to run.
#[derive(Debug, Clone)]
struct Job {
    config: usize,
    bearer: BearerName,
    device: usize,
    lossy: bool,
}

/// Real handshakes at once: each mostly waits on its emulated link.
const PARALLEL_RUNS: usize = 128;

/// A job's outcome: duration (ms) and client retransmissions.
type Outcome = anyhow::Result<(f64, u32)>;

/// Runs the plan and builds the results.
pub fn run(
    ctx: &Ctx,
    store: &PkiStore,
    processing: &ProcessingResults,
) -> anyhow::Result<ProtocolResults> {
    let mut stages = StageClock::start();
    let plan = plan(ctx.mode, &ctx.catalogue)?;
    let bench = Bench { store };
    let mut configs = wtls_best(processing);
    configs.extend(contender_configs(ctx, bench, plan.suite_reps)?);
    stages.lap("in-memory suites");
    let mut cookie_free = cookie::measure(ctx, bench, &configs, plan.suite_reps)?;
    {
        let over: Vec<&LinkProfile> = plan
            .bearers
            .iter()
            .map(|b| ctx.catalogue.bearer(b.as_str()))
            .collect::<anyhow::Result<_>>()?;
        cookie::measure_over_bearers(ctx, bench, &mut cookie_free, &over, plan.runs)?;
    }
    stages.lap("without the cookie exchange");
    ctx.step("protocols: peer anchors beside our gateway");
    let peers = ctx.without_ticker(|| compare::anchors_beside_ours(store, plan.peer_reps, 10))?;
    stages.lap("peer anchors");
    ctx.step("protocols: rustls X25519MLKEM768 peer anchor");
    let hybrid_anchor = ctx
        .without_ticker(|| HybridAnchorFigures::measure(plan.peer_reps))
        .transpose()?;
    if hybrid_anchor.is_some() {
        stages.lap("hybrid anchor");
    }
    let devices: Vec<Device> = std::iter::once(Device::ThisMachine)
        .chain(
            ctx.catalogue
                .devices
                .iter()
                .map(|p| Device::Profile(Box::new(p.clone()))),
        )
        .collect();
    let measured: Vec<usize> = plan
        .devices
        .iter()
        .filter_map(|n| devices.iter().position(|d| d.name() == n.as_str()))
        .collect();
    let mut jobs = jobs(ctx.mode, &plan, &configs, &measured);
    // A run on an emulated device needs a published or executed price for every
    // operation (its holds); where one is "not available", no run is made, as no model is.
    let published = pq_prices();
    jobs.retain(|j| match &devices[j.device] {
        Device::ThisMachine => true,
        Device::Profile(d) => configs[j.config]
            .contender
            .client_steps(d, &published)
            .is_ok(),
    });
    ctx.step(&format!(
        "protocols: {} handshakes over the emulated bearers",
        jobs.len()
    ));
    let outcomes = run_jobs(bench, &ctx.catalogue, &configs, &devices, &jobs, &plan)?;
    stages.lap("emulated runs");
    let compared: Vec<&LinkProfile> = ctx.catalogue.compared_bearers().collect();
    let rows = rows(&configs, &devices, &compared, &jobs, &outcomes);
    let loss = loss_rows(&configs, &plan.loss_bearer, &jobs, &outcomes);
    let cookie = cookie::rows(&configs, &cookie_free, &rows, &ctx.catalogue);
    Ok(ProtocolResults {
        cookie,
        timers: timers::rows(ctx.catalogue.compared_bearers()),
        configs,
        rows,
        loss,
        peers,
        measured_devices: measured.iter().map(|&i| plan.devices[i].clone()).collect(),
        bearers: compared.iter().map(|b| BearerName::of(b)).collect(),
        loss_bearer: plan.loss_bearer,
        hybrid_anchor,
        typical_bearer_note: ctx.catalogue.typical_bearer_note(),
        stage_seconds: stages.into_seconds(),
    })
}

/// The real runs: every compared handshake on every measured device (WTLS through the
/// same driver and device holds, against the real gateway), then the lossy runs.
fn jobs(mode: Mode, plan: &Plan, configs: &[Config], devices: &[usize]) -> Vec<Job> {
    let mut out = Vec::new();
    // The quick run's lossy runs: one configuration a protocol (its first), since the
    // part lasts as long as its slowest lossy run (a DTLS loss costs 9 s, doubling).
    let mut lossy_protocols = Vec::new();
    for (i, c) in configs.iter().enumerate() {
        let wtls = c.is_wtls();
        // The quick run measures WTLS's comparable level only (category 3).
        if wtls && mode != Mode::Full && !c.level.contains("category 3") {
            continue;
        }
        for bearer in &plan.bearers {
            for &device in devices {
                // The full run times every WTLS category on this machine, and the
                // comparable one (category 3) on the emulated devices too.
                if wtls && device != 0 && !c.level.contains("category 3") {
                    continue;
                }
                for _ in 0..plan.runs {
                    out.push(Job {
                        config: i,
                        bearer: bearer.clone(),
                        device,
                        lossy: false,
                    });
                }
            }
        }
        let lossy_wtls = c.is_wtls_p256() && c.auth() == Authentication::ServerAuth;
        let first_of_protocol = !lossy_protocols.contains(&c.protocol());
        if (!wtls || lossy_wtls) && (mode == Mode::Full || first_of_protocol) {
            lossy_protocols.push(c.protocol());
            for _ in 0..plan.loss_runs {
                out.push(Job {
                    config: i,
                    bearer: plan.loss_bearer.clone(),
                    device: 0,
                    lossy: true,
                });
            }
        }
    }
    // The lossy runs first: their tails (a DTLS loss costs 9 s, doubling) then overlap
    // the lossless runs instead of trailing after them.
    out.sort_by_key(|j| !j.lossy);
    out
}

fn run_jobs(
    bench: Bench<'_>,
    catalogue: &Catalogue,
    configs: &[Config],
    devices: &[Device],
    jobs: &[Job],
    plan: &Plan,
) -> anyhow::Result<Vec<Outcome>> {
    let published = pq_prices();
    let runs = run_over_bearers(bench, jobs, PARALLEL_RUNS, |i, job| {
        let mut bearer = catalogue.bearer(job.bearer.as_str())?.clone();
        let deadline = if job.lossy {
            bearer = bearer.with_loss(LOSS);
            plan.loss_deadline
        } else {
            Duration::from_secs(120)
        };
        let contender = &configs[job.config].contender;
        let steps = match &devices[job.device] {
            Device::ThisMachine => None,
            Device::Profile(d) => Some(
                contender
                    .client_steps(d, &published)
                    .map_err(|e| anyhow::anyhow!("{contender} on {}: {e}", d.name))?,
            ),
        };
        let seed = 15_000 + i as u64;
        Ok(BearerHandshake {
            contender,
            bearer,
            seed,
            steps,
            deadline,
        })
    });
    Ok(runs
        .into_iter()
        .map(|r| r.map(|r| (r.duration_ms, r.client_retransmissions)))
        .collect())
}

/// Every configuration on every bearer and device: modelled, and measured where run.
fn rows(
    configs: &[Config],
    devices: &[Device],
    bearers: &[&LinkProfile],
    jobs: &[Job],
    outcomes: &[Outcome],
) -> Vec<ProtocolRow> {
    let published = pq_prices();
    let mut out = Vec::new();
    for (ci, c) in configs.iter().enumerate() {
        for &p in bearers {
            let bearer = BearerName::of(p);
            for (di, d) in devices.iter().enumerate() {
                let Some(client) = c.client_time(d, &published) else {
                    continue;
                };
                let estimate = client
                    .as_ref()
                    .ok()
                    .and_then(|_| c.estimate_on(d, &published));
                let client_cost = match (&client, d, estimate) {
                    (Err(reason), _, _) => reason.clone(),
                    (Ok(_), Device::ThisMachine, _) => "measured".to_owned(),
                    (Ok(_), Device::Profile(_), Some(e)) => format!("profile, {}", e.words()),
                    (Ok(_), Device::Profile(_), None) => "profile".to_owned(),
                };
                let borrowed = estimate.is_some();
                let client_ms = client.ok();
                let measured: Vec<f64> = jobs
                    .iter()
                    .zip(outcomes)
                    .filter(|(j, _)| {
                        j.config == ci && j.bearer == bearer && j.device == di && !j.lossy
                    })
                    .filter_map(|(_, o)| o.as_ref().ok().map(|x| x.0))
                    .collect();
                out.push(ProtocolRow {
                    protocol: c.protocol(),
                    suite: c.suite(),
                    auth: c.auth(),
                    level: c.level.clone(),
                    bearer: bearer.clone(),
                    device: device_name(d),
                    bytes: c.bytes,
                    datagrams: c.datagrams,
                    round_trips: c.round_trips(),
                    server_cpu_us: c.server_cpu_us,
                    bound_ratio: c.bound_ratio,
                    handshakes_per_core_s: c.handshakes_per_core_s(),
                    client_ms,
                    modelled_ms: client_ms.map(|client_ms| {
                        model::duration_ms(c.flights_over(p), p, client_ms, c.server_cpu_us / 1e3)
                    }),
                    modelled_wap261_ms: client_ms.zip(c.flights_wap261.as_deref()).map(
                        |(client_ms, flights)| {
                            model::duration_ms(flights, p, client_ms, c.server_cpu_us / 1e3)
                        },
                    ),
                    // The mean: the model takes the profile's mean traversal, and a
                    // log-normal's median lies below its mean.
                    measured_ms: mean(&measured),
                    measured_runs: measured.len(),
                    client_cost,
                    borrowed,
                });
            }
        }
    }
    out
}

/// The row name of a client: this machine or its catalogue profile.
fn device_name(d: &Device) -> DeviceName {
    match d {
        Device::ThisMachine => DeviceName::this_machine(),
        Device::Profile(p) => DeviceName::of(p),
    }
}

fn loss_rows(
    configs: &[Config],
    bearer: &BearerName,
    jobs: &[Job],
    outcomes: &[Outcome],
) -> Vec<LossRow> {
    let mut out = Vec::new();
    for (ci, c) in configs.iter().enumerate() {
        let mine: Vec<&Outcome> = jobs
            .iter()
            .zip(outcomes)
            .filter(|(j, _)| j.config == ci && j.lossy)
            .map(|(_, o)| o)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let ok: Vec<(f64, u32)> = mine
            .iter()
            .filter_map(|o| o.as_ref().ok().copied())
            .collect();
        let durations: Vec<f64> = ok.iter().map(|x| x.0).collect();
        let rtx: Vec<f64> = ok.iter().map(|x| f64::from(x.1)).collect();
        let every: Vec<Option<f64>> = mine.iter().map(|o| o.as_ref().ok().map(|x| x.0)).collect();
        let (median_ms, median_bound) = over_all_runs(&every, 50.0);
        out.push(LossRow {
            protocol: c.protocol(),
            suite: c.suite(),
            auth: c.auth(),
            bearer: bearer.clone(),
            loss: LOSS,
            runs: mine.len(),
            completed: ok.len(),
            median_ms,
            median_bound,
            max_ms: durations.iter().copied().max_by(f64::total_cmp),
            median_retransmissions: median(&rtx),
        });
    }
    out
}

/// The `summary.json` headline entries of this part.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProtocolsHeadline {
    pub peer_bound_ratio_openssl_tls12_ecdhe_p256: Option<f64>,
    pub peer_bound_ratio_openssl_dtls12_ecdhe_p256: Option<f64>,
    pub peer_bound_ratio_openssl_tls12_rsa2048: Option<f64>,
    pub peer_bound_ratio_rustls_tls12_ecdhe_p256: Option<f64>,
    pub peer_bound_ratio_rustls_tls13_ecdhe_p256: Option<f64>,
    /// The post-quantum peer anchor's name ([`HYBRID_ANCHOR_KEY`]), its bound ratio,
    /// and the hybrid key shares (client, server; bytes) of rustls and of wolfSSL's
    /// DTLS 1.3, beside FIPS 203 + X25519's 1216 and 1120.
    pub peer_anchor_post_quantum: Option<&'static str>,
    pub peer_bound_ratio_rustls_tls13_x25519mlkem768: Option<f64>,
    pub rustls_x25519mlkem768_key_share_bytes: Option<(usize, usize)>,
    pub dtls13_x25519mlkem768_key_share_bytes: Option<(usize, usize)>,
    /// Our gateway's bound ratio for 256p/256p and rsa2048/rsa2048 (server-authenticated,
    /// plain WTLS flow), measured interleaved with the anchors.
    pub wtls_bound_ratio_256p: Option<f64>,
    pub wtls_bound_ratio_rsa2048: Option<f64>,
    /// Median |measured / modelled - 1| of the modern protocols' and WTLS' real runs.
    pub protocols_model_median_error: Option<f64>,
    /// The protocols on bearers whose bias is not shown within the 5 % target (rule 5),
    /// as `quic on nb-iot bias -14.0 % (beyond)`: what the pooled median hides.
    pub protocols_model_bearers_outside_target: Vec<String>,
    /// Lossy runs completed / run, all protocols.
    pub protocols_loss_completed: (usize, usize),
}

impl ProtocolResults {
    /// The headline entries.
    pub fn headline(&self) -> ProtocolsHeadline {
        let peer = |key: &str| {
            self.peers
                .iter()
                .find(|(p, _)| p.peer.key() == key)
                .map(|(p, _)| p.bound_ratio())
        };
        let ours = |case: &str| {
            self.peers
                .iter()
                .find(|(p, o)| p.peer.wtls_counterpart() == case && o.is_some())
                .and_then(|(_, o)| *o)
        };
        ProtocolsHeadline {
            peer_bound_ratio_openssl_tls12_ecdhe_p256: peer("openssl_tls12_ecdhe_p256"),
            peer_bound_ratio_openssl_dtls12_ecdhe_p256: peer("openssl_dtls12_ecdhe_p256"),
            peer_bound_ratio_openssl_tls12_rsa2048: peer("openssl_tls12_rsa2048"),
            peer_bound_ratio_rustls_tls12_ecdhe_p256: peer("rustls_tls12_ecdhe_p256"),
            peer_bound_ratio_rustls_tls13_ecdhe_p256: peer("rustls_tls13_ecdhe_p256"),
            peer_anchor_post_quantum: self.hybrid_anchor.as_ref().map(|_| HYBRID_ANCHOR_KEY),
            peer_bound_ratio_rustls_tls13_x25519mlkem768: self
                .hybrid_anchor
                .as_ref()
                .map(HybridAnchorFigures::bound_ratio),
            rustls_x25519mlkem768_key_share_bytes: self
                .hybrid_anchor
                .as_ref()
                .map(|h| (h.client_share_bytes, h.server_share_bytes)),
            dtls13_x25519mlkem768_key_share_bytes: self
                .hybrid_anchor
                .as_ref()
                .map(|h| (h.dtls13_client_share_bytes, h.dtls13_server_share_bytes)),
            wtls_bound_ratio_256p: ours("256p/256p"),
            wtls_bound_ratio_rsa2048: ours("rsa2048/rsa2048"),
            protocols_model_median_error: self.model_median_error(),
            protocols_model_bearers_outside_target: super::verdict::outside_target(
                self.bearer_model_errors()
                    .iter()
                    .map(|(g, e)| (g.as_str(), e.as_slice())),
            ),
            protocols_loss_completed: (
                self.loss.iter().map(|l| l.completed).sum(),
                self.loss.iter().map(|l| l.runs).sum(),
            ),
        }
    }

    /// Median model error over the rows with real runs.
    pub fn model_median_error(&self) -> Option<f64> {
        median(
            &self
                .rows
                .iter()
                .filter_map(ProtocolRow::model_error)
                .collect::<Vec<_>>(),
        )
    }

    /// Writes `protocols.csv` and `protocols_loss.csv`.
    pub fn write_csv(&self, dir: &Path) -> anyhow::Result<()> {
        write_csv(&dir.join("protocols.csv"), &self.rows)?;
        write_csv(&dir.join("protocols_cookie.csv"), &self.cookie)?;
        write_csv(&dir.join("protocols_timers.csv"), &self.timers)?;
        write_csv(&dir.join("protocols_loss.csv"), &self.loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(contender: &str, level: &str) -> Config {
        Config {
            contender: wtlsperf_drivers::registry::contender(contender).unwrap(),
            level: level.to_owned(),
            bytes: 500,
            datagrams: 4,
            flights: Vec::new(),
            flights_by_payload_limit: Vec::new(),
            server_cpu_us: 100.0,
            client_cpu_us: 100.0,
            bound_ratio: None,
            flights_wap261: None,
        }
    }

    #[test]
    fn the_quick_plan_runs_lossy_first_and_wtls_category_3_only() {
        let configs = vec![
            config("dtls1.2:psk-ccm8", "PSK 128-bit (category 3)"),
            config("wtls:256p/256p", WTLS_P256_LEVEL),
            config("wtls:160p/160p-mutual", "category 1"),
        ];
        let catalogue = Catalogue::shipped().unwrap();
        let p = plan(Mode::Quick, &catalogue).unwrap();
        let jobs = jobs(Mode::Quick, &p, &configs, &[0, 1]);
        let lossy = jobs.iter().take_while(|j| j.lossy).count();
        assert_eq!(lossy, 2 * p.loss_runs, "PSK and WTLS P-256 server");
        assert!(jobs[lossy..].iter().all(|j| !j.lossy));
        assert!(
            jobs.iter().all(|j| j.config != 2),
            "category 1 is left to the full run"
        );
        let per_config = catalogue.compared_bearers().count() * 2 * p.runs;
        assert_eq!(jobs.len() - lossy, 2 * per_config);
    }

    #[test]
    fn a_row_without_runs_has_no_error() {
        let mut r = ProtocolRow {
            protocol: wtlsperf_drivers::protocols::EDHOC,
            suite: "method3-suite2".into(),
            auth: Authentication::Mutual,
            level: "P-256 (category 3)".into(),
            bearer: BearerName::of(Catalogue::shipped().unwrap().bearer("nb-iot").unwrap()),
            device: DeviceName::this_machine(),
            bytes: 162,
            datagrams: 4,
            round_trips: 2.0,
            server_cpu_us: 400.0,
            bound_ratio: Some(1.0),
            handshakes_per_core_s: 2500.0,
            client_ms: Some(0.3),
            modelled_ms: Some(1000.0),
            modelled_wap261_ms: None,
            measured_ms: None,
            measured_runs: 0,
            client_cost: "measured".to_owned(),
            borrowed: false,
        };
        assert_eq!(r.model_error(), None);
        r.measured_ms = Some(1040.0);
        assert!((r.model_error().unwrap() - 0.04).abs() < 1e-12);
    }

    #[test]
    fn a_new_device_or_bearer_row_is_compared_and_run() {
        let dir = crate::evaluate::vocabulary::tests::fixture_data();
        let catalogue = Catalogue::load(dir.path()).unwrap();
        let full = plan(Mode::Full, &catalogue).unwrap();
        assert!(full.devices.iter().any(|d| d.as_str() == "fixture-m33"));
        assert_eq!(
            full.devices.len(),
            catalogue.devices.len() + 1,
            "and this machine"
        );
        assert!(full.bearers.iter().any(|b| b.as_str() == "fixture-5g"));
        let quick = plan(Mode::Quick, &catalogue).unwrap();
        assert!(quick.bearers.iter().any(|b| b.as_str() == "fixture-5g"));
        // Every compared bearer gets a modelled row for every configuration and device.
        let configs = vec![config("edhoc:method3-suite2", WTLS_P256_LEVEL)];
        let devices: Vec<Device> = catalogue
            .devices
            .iter()
            .map(|p| Device::Profile(Box::new(p.clone())))
            .collect();
        let bearers: Vec<&LinkProfile> = catalogue.compared_bearers().collect();
        let rows = rows(&configs, &devices, &bearers, &[], &[]);
        assert!(rows
            .iter()
            .any(|r| r.device.as_str() == "fixture-m33" && r.bearer.as_str() == "fixture-5g"));
    }

    /// EDHOC's client makes an ephemeral key and signs: the Nokia 7650 fit and the ARM7
    /// profile price neither, so their EDHOC rows rest on the ECDH stand-in and are
    /// marked an estimate, as the borrowed rows are; a profile that prices both (the
    /// executed Cortex-M4) is not.
    #[test]
    fn a_price_resting_on_the_p256_stand_in_is_an_estimate() {
        let catalogue = Catalogue::shipped().unwrap();
        let edhoc = config("edhoc:method3-suite2", WTLS_P256_LEVEL);
        let published = pq_prices();
        let estimate = |name: &str| {
            let d = catalogue.devices.iter().find(|d| d.name == name).unwrap();
            edhoc.estimate_on(&Device::Profile(Box::new(d.clone())), &published)
        };
        assert_eq!(estimate("nokia7650"), Some(Estimate::P256StandIn));
        assert_eq!(estimate("arm7tdmi-25mhz"), Some(Estimate::P256StandIn));
        assert_eq!(estimate("cortex-m4-64mhz-executed"), None);
        assert_eq!(edhoc.estimate_on(&Device::ThisMachine, &published), None);
    }

    /// The lossy runs' median counts a run that did not complete as beyond every time,
    /// as the loss curves do: where it falls on one, it is a lower bound.
    #[test]
    fn the_loss_median_is_over_all_runs_with_a_failure_beyond_every_time() {
        let row = |outcomes: &[Option<f64>]| {
            let completed: Vec<f64> = outcomes.iter().flatten().copied().collect();
            let (median_ms, median_bound) = over_all_runs(outcomes, 50.0);
            LossRow {
                protocol: wtlsperf_drivers::registry::contender("edhoc:method3-suite2")
                    .unwrap()
                    .protocol(),
                suite: "s".into(),
                auth: Authentication::Mutual,
                bearer: BearerName::of(&LinkProfile::loopback()),
                loss: LOSS,
                runs: outcomes.len(),
                completed: completed.len(),
                median_ms,
                median_bound,
                max_ms: completed.iter().copied().max_by(f64::total_cmp),
                median_retransmissions: None,
            }
        };
        assert_eq!(
            row(&[Some(1.0), Some(3.0), Some(2.0)]).median_text(),
            "2 ms"
        );
        let mostly_failed = row(&[Some(26336.0), None, None, None]);
        assert_eq!(mostly_failed.median_text(), "> 26336 ms");
    }
}
