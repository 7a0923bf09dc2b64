//! What the runner measured, rep by rep and per case, and its summaries: side totals,
//! per-message medians, the bound, the handshake's shape on the wire.

use serde::Serialize;
use wtls::handshake::{AuthMode, HandshakeKind};
use wtls::probe::{HandshakeProbe, Message, Operation};
use wtls::suite::Case;
use wtlsperf_models::{stats, Authentication};

use super::json::{
    ser_auth, ser_display, ser_kind, ser_message, ser_operation, ser_operations, ser_probe,
};
use super::{BoundPair, BoundRatio, Flow, Summary, Variant};

/// The peer a measurement belongs to (the models' type: one type per domain concept).
pub use wtlsperf_models::Side;

/// `client` or `server`, as the tables and JSON name a side.
pub(super) fn side_name(side: Side) -> &'static str {
    match side {
        Side::Client => "client",
        Side::Server => "server",
    }
}

/// The median of a summary, 0 for an empty sample (tables print it).
pub(super) fn med(s: Option<Summary>) -> f64 {
    s.map(|s| s.p50).unwrap_or(0.0)
}

/// One measured handshake.
#[derive(Debug, Clone, Serialize)]
pub struct RepMeasurement {
    /// The client's probe (per message and operation, and every datagram).
    #[serde(serialize_with = "ser_probe")]
    pub client: HandshakeProbe,
    #[serde(serialize_with = "ser_probe")]
    pub server: HandshakeProbe,
    /// Thread CPU time measured around each of the client's engine calls, summed.
    pub client_cpu_ns: u64,
    /// Thread CPU time measured around each of the server's engine calls, summed.
    pub server_cpu_ns: u64,
    /// Wall time from the client's first call to the last datagram handled.
    pub wall_ns: u64,
    /// Thread CPU time of the server's raw public-key operations, timed on the same keys
    /// right beside `server_cpu_probe_off_ns` (before it in odd reps, after it in even).
    pub pk_bound_ns: Option<u64>,
    /// Server thread CPU (around its engine calls) of a second handshake run after this
    /// one with the probe off: the engine's own cost, which the bound compares with the
    /// raw operations (the probe's cost is reported on its own).
    pub server_cpu_probe_off_ns: Option<u64>,
    /// Thread CPU time of the symmetric work every server handshake of this suite must
    /// do (see [`symmetric_floor_ns`]), timed right after this handshake.
    pub symmetric_floor_ns: Option<u64>,
    /// Thread CPU time of each server `handle_datagram` call, in order.
    pub server_jobs_ns: Vec<u64>,
    /// The handshake shape that completed.
    #[serde(serialize_with = "ser_kind")]
    pub kind: HandshakeKind,
}

/// Everything measured for one case, authentication mode and variant.
#[derive(Debug, Clone, Serialize)]
pub struct CaseMeasurement {
    #[serde(serialize_with = "ser_display")]
    pub case: Case,
    #[serde(serialize_with = "ser_auth")]
    pub auth: AuthMode,
    pub variant: Variant,
    pub flow: Flow,
    pub reps: Vec<RepMeasurement>,
    /// (full - off) / off of the median thread CPU per handshake, as a fraction.
    pub probe_overhead: Option<f64>,
    /// Thread CPU per handshake (both sides) with the probe off, per rep.
    pub probe_off_cpu_ns: Vec<u64>,
    /// The same with the probe on.
    pub probe_full_cpu_ns: Vec<u64>,
    /// Bound pairs added after the reps ([`super::RunnerOptions::bound_extension`]).
    pub extra_bound_pairs: Vec<BoundPair>,
    /// The server's public-key operations the bound's denominator runs, under the probe's
    /// names (empty where the bound is not measured).
    #[serde(serialize_with = "ser_operations")]
    pub bound_operations: Vec<Operation>,
}

/// One message of one side, over all reps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageSummary {
    #[serde(serialize_with = "ser_message")]
    pub message: Message,
    pub median_cpu_ms: f64,
    pub median_wall_ms: f64,
    pub p95_wall_ms: f64,
    /// Median CPU of the message as % of the side's median CPU total.
    pub share_pct: f64,
    /// Bytes of the message (handshake header and body, or the CCS body).
    pub bytes: usize,
    /// The operations inside the message, in the order they first appear.
    pub operations: Vec<OperationSummary>,
}

/// One operation inside a message, over all reps (the probe times operations by wall
/// clock only).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OperationSummary {
    #[serde(serialize_with = "ser_operation")]
    pub operation: Operation,
    pub median_wall_ms: f64,
    /// % of the message's median wall time.
    pub share_of_message_pct: f64,
}

/// One message's medians over the reps whose probe has it; `None` if none has.
/// `total_cpu` (ns) is the side's median total, for the message's share.
fn summarise_message(
    probes: &[&HandshakeProbe],
    message: Message,
    total_cpu: f64,
) -> Option<MessageSummary> {
    // Per rep: CPU, wall and bytes of the message (summed if it occurs twice).
    let per_rep: Vec<(u64, u64, usize)> = probes
        .iter()
        .filter(|p| p.message(message).is_some())
        .map(|p| {
            p.messages
                .iter()
                .filter(|t| t.message == message)
                .fold((0, 0, 0), |(c, w, b), t| {
                    (c + t.cpu_ns, w + t.wall_ns, b + t.bytes)
                })
        })
        .collect();
    let first_bytes = per_rep.first()?.2;
    let cpu = median_of(per_rep.iter().map(|r| r.0 as f64)).unwrap_or(0.0);
    let walls: Vec<f64> = per_rep.iter().map(|r| r.1 as f64).collect();
    let wall = stats::median(&walls).unwrap_or(0.0);
    let p95 = stats::percentile(&walls, 95.0, stats::Rank::Linear).unwrap_or(0.0);
    Some(MessageSummary {
        message,
        median_cpu_ms: cpu / 1e6,
        median_wall_ms: wall / 1e6,
        p95_wall_ms: p95 / 1e6,
        share_pct: if total_cpu > 0.0 {
            100.0 * cpu / total_cpu
        } else {
            0.0
        },
        bytes: first_bytes,
        operations: summarise_operations(probes, message, wall),
    })
}

/// The operations inside `message`, in the order they first appear, each the median
/// over the reps that ran it of its summed wall time; `wall` (ns) is the message's
/// median wall time, for the share.
fn summarise_operations(
    probes: &[&HandshakeProbe],
    message: Message,
    wall: f64,
) -> Vec<OperationSummary> {
    let mut ops: Vec<Operation> = Vec::new();
    for p in probes {
        for o in p.operations.iter().filter(|o| o.message == message) {
            if !ops.contains(&o.operation) {
                ops.push(o.operation);
            }
        }
    }
    ops.into_iter()
        .map(|op| {
            let w = median_of(probes.iter().filter_map(|p| {
                let sum: u64 = p
                    .operations
                    .iter()
                    .filter(|o| o.message == message && o.operation == op)
                    .map(|o| o.wall_ns)
                    .sum();
                p.operation(message, op).map(|_| sum as f64)
            }))
            .unwrap_or(0.0);
            OperationSummary {
                operation: op,
                median_wall_ms: w / 1e6,
                share_of_message_pct: if wall > 0.0 { 100.0 * w / wall } else { 0.0 },
            }
        })
        .collect()
}

/// The name of a handshake shape, as reports and JSON give it.
pub(super) fn kind_name(k: HandshakeKind) -> &'static str {
    match k {
        HandshakeKind::Full => "full",
        HandshakeKind::Abbreviated => "abbreviated",
        HandshakeKind::Optimised => "optimised",
    }
}

pub(super) fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

pub(super) fn median_of(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    stats::median(&values.into_iter().collect::<Vec<_>>())
}

/// Messages the client sends; the rest are the server's.
pub(super) fn sent_by_client(m: Message) -> bool {
    matches!(
        m,
        Message::CH
            | Message::CCERT
            | Message::CKX
            | Message::CERTVRFY
            | Message::CCCS
            | Message::CFIN
    )
}

impl CaseMeasurement {
    /// A distribution-free 95 % interval of the probe's overhead: the median of the
    /// per-rep ratios full / off - 1 of the interleaved pairs, bounded by their order
    /// statistics (`None` below six pairs). The point figure, `probe_overhead`, is the
    /// ratio of the two medians.
    pub fn probe_overhead_ci95(&self) -> Option<(f64, f64)> {
        let ratios = self.probe_overhead_pairs();
        let (lo, hi) = stats::median_ci95_ranks(ratios.len())?;
        Some((ratios[lo - 1], ratios[hi - 1]))
    }

    /// The median of the interleaved pairs' ratios full / off - 1: the statistic
    /// [`CaseMeasurement::probe_overhead_ci95`] bounds.
    pub fn probe_overhead_paired(&self) -> Option<f64> {
        stats::median(&self.probe_overhead_pairs())
    }

    /// The interleaved pairs' ratios full / off - 1, sorted.
    fn probe_overhead_pairs(&self) -> Vec<f64> {
        let mut ratios: Vec<f64> = self
            .probe_off_cpu_ns
            .iter()
            .zip(&self.probe_full_cpu_ns)
            .filter(|(off, _)| **off > 0)
            .map(|(&off, &full)| full as f64 / off as f64 - 1.0)
            .collect();
        ratios.sort_by(f64::total_cmp);
        ratios
    }

    fn probe(rep: &RepMeasurement, side: Side) -> &HandshakeProbe {
        match side {
            Side::Client => &rep.client,
            Side::Server => &rep.server,
        }
    }

    fn side_summary(&self, f: impl Fn(&RepMeasurement) -> u64) -> Option<Summary> {
        stats::summarize(&self.reps.iter().map(|r| ms(f(r))).collect::<Vec<_>>())
    }

    /// The server's T_PD_S per rep: the sum of its per-message CPU times.
    pub fn server_cpu_ms(&self) -> Option<Summary> {
        self.side_summary(|r| r.server.total_cpu_ns())
    }

    /// The client's T_PD_C per rep.
    pub fn client_cpu_ms(&self) -> Option<Summary> {
        self.side_summary(|r| r.client.total_cpu_ns())
    }

    pub fn server_wall_ms(&self) -> Option<Summary> {
        self.side_summary(|r| r.server.total_wall_ns())
    }

    pub fn client_wall_ms(&self) -> Option<Summary> {
        self.side_summary(|r| r.client.total_wall_ns())
    }

    /// Client thread CPU measured from outside the engine, per rep.
    pub fn client_outside_cpu_ms(&self) -> Option<Summary> {
        self.side_summary(|r| r.client_cpu_ns)
    }

    /// Server thread CPU measured from outside the engine, per rep.
    pub fn server_outside_cpu_ms(&self) -> Option<Summary> {
        self.side_summary(|r| r.server_cpu_ns)
    }

    /// Every bound pair of the case: one per rep, then the extension's.
    pub fn bound_pairs(&self) -> Vec<BoundPair> {
        self.reps
            .iter()
            .filter_map(|r| {
                Some(BoundPair {
                    server_cpu_ns: r.server_cpu_probe_off_ns?,
                    raw_pk_ns: r.pk_bound_ns?,
                })
            })
            .chain(self.extra_bound_pairs.iter().copied())
            .collect()
    }

    /// The bound: per pair, server CPU per handshake with the probe off (measured from
    /// outside the engine, so everything between messages counts) over the raw
    /// public-key operations the server must do in this case, timed beside it; the
    /// median over the pairs, or a measurement failure ([`BoundRatio`]). `None` where the
    /// bound was not measured.
    pub fn bound(&self) -> Option<BoundRatio> {
        BoundRatio::assess(&self.bound_pairs())
    }

    /// The bound ratio when the run supports it as a value ([`BoundRatio::Bounded`]). 1.0
    /// would mean the gateway does nothing but its public-key work.
    pub fn bound_ratio(&self) -> Option<f64> {
        self.bound()?.value()
    }

    /// Median server CPU per handshake with the probe off over the bound pairs (ms).
    pub fn bound_cpu_ms(&self) -> Option<f64> {
        median_of(self.bound_pairs().iter().map(|p| ms(p.server_cpu_ns)))
    }

    /// Median of the symmetric floor (ms), if measured.
    pub fn symmetric_floor_ms(&self) -> Option<f64> {
        median_of(
            self.reps
                .iter()
                .filter_map(|r| r.symmetric_floor_ns.map(ms)),
        )
    }

    /// The smallest bound ratio any implementation could reach: (raw public-key time +
    /// the symmetric floor) / raw public-key time.
    pub fn bound_floor_ratio(&self) -> Option<f64> {
        let (pk, sym) = (self.bound_ms()?, self.symmetric_floor_ms()?);
        (pk > 0.0).then(|| (pk + sym) / pk)
    }

    /// Median raw public-key time of the server over the bound pairs (ms), if measured.
    pub fn bound_ms(&self) -> Option<f64> {
        median_of(self.bound_pairs().iter().map(|p| ms(p.raw_pk_ns)))
    }

    /// Per-message medians of one side, in flow order, with the operations inside.
    pub fn message_summary(&self, side: Side) -> Vec<MessageSummary> {
        let probes: Vec<&HandshakeProbe> = self.reps.iter().map(|r| Self::probe(r, side)).collect();
        let total_cpu = median_of(probes.iter().map(|p| p.total_cpu_ns() as f64)).unwrap_or(0.0);
        Message::ALL
            .into_iter()
            .filter_map(|message| summarise_message(&probes, message, total_cpu))
            .collect()
    }

    fn first(&self) -> Option<&RepMeasurement> {
        self.reps.first()
    }

    /// WTLS bytes of the whole handshake, both directions (UDP payloads: no WDP, IP or
    /// WTP acknowledgement bytes, unlike thesis Table 4.11).
    pub fn handshake_bytes(&self) -> usize {
        self.first()
            .map(|r| r.client.datagrams.iter().map(|d| d.bytes).sum())
            .unwrap_or(0)
    }

    /// WTLS bytes (client to server, server to client) of the first rep.
    pub fn bytes_per_direction(&self) -> (usize, usize) {
        self.first()
            .map(|r| {
                let up = r.client.bytes_sent();
                (up, r.client.bytes_received())
            })
            .unwrap_or((0, 0))
    }

    /// Datagrams (client to server, server to client).
    pub fn datagrams(&self) -> (usize, usize) {
        self.first()
            .map(|r| {
                let sent = r.client.datagrams.iter().filter(|d| d.sent).count();
                (sent, r.client.datagrams.len() - sent)
            })
            .unwrap_or((0, 0))
    }

    /// Each datagram's size in order, with whether the client sent it.
    pub fn flight_bytes(&self) -> Vec<(bool, usize)> {
        self.first()
            .map(|r| {
                r.client
                    .datagrams
                    .iter()
                    .map(|d| (d.sent, d.bytes))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Handshake messages on the wire (client, server), ChangeCipherSpec included as
    /// the thesis counts it. The mutual ECDH_ECDSA "CKX" entry is a computation with no
    /// message (0 bytes) and is not counted.
    pub fn messages(&self) -> (usize, usize) {
        self.first()
            .map(|r| {
                let on_wire = r.client.messages.iter().filter(|m| m.bytes > 0);
                let client = on_wire
                    .clone()
                    .filter(|m| sent_by_client(m.message))
                    .count();
                (client, on_wire.count() - client)
            })
            .unwrap_or((0, 0))
    }

    /// Per rep, the server's thread CPU for each datagram it received, in order.
    pub fn server_job_service_ns(&self) -> Vec<Vec<u64>> {
        self.reps.iter().map(|r| r.server_jobs_ns.clone()).collect()
    }

    pub(super) fn authentication(&self) -> Authentication {
        crate::auth::authentication(self.auth)
    }
}
