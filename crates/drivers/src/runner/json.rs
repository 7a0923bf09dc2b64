//! The newline-delimited JSON of `wtlsperf handshake --json`, and the serde views of the
//! engine's types the measurement records use. Every record has the same ten leading
//! fields (null where they do not apply); each kind adds its own.

use serde::{Serialize, Serializer};
use wtls::handshake::{AuthMode, HandshakeKind};
use wtls::probe::{HandshakeProbe, Message, Operation};

use super::published::{published_bytes, published_totals};
use super::record::{kind_name, med, side_name};
use super::{
    percentage_comparison, BoundRatio, CaseMeasurement, MessageSummary, PercentComparison,
    RepMeasurement, Side, Summary,
};

/// One JSON line: what it is about, then the fields of its kind.
#[derive(Debug, Clone, Serialize)]
pub struct JsonRecord<'a> {
    case: String,
    auth: &'static str,
    variant: &'static str,
    /// The rep, `None` for summaries and for bound pairs added after the reps.
    rep: Option<usize>,
    /// `client`, `server` or `both`.
    side: &'static str,
    /// A thesis message name, or `DATAGRAM`, `TOTAL`, `BOUND`, `JOBS`, `HANDSHAKE`.
    message: &'static str,
    operation: Option<&'static str>,
    wall_ns: Option<u64>,
    cpu_ns: Option<u64>,
    bytes: Option<usize>,
    #[serde(flatten)]
    extra: Extra<'a>,
}

/// The fields a record kind adds.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
enum Extra<'a> {
    /// A message, an operation or a datagram: nothing more.
    Plain {},
    /// A side's total of one rep, with the CPU read outside the engine.
    Total {
        cpu_outside_ns: u64,
    },
    /// A bound pair: `cpu_ns` is the raw public-key time, this the handshake's.
    Bound {
        pair: usize,
        server_cpu_probe_off_ns: u64,
    },
    /// The server's jobs (one per datagram) of one rep.
    Jobs {
        jobs_cpu_ns: &'a [u64],
        handshake_wall_ns: u64,
    },
    SideSummary(Box<SideSummary>),
    HandshakeSummary(Box<HandshakeSummary<'a>>),
}

/// A side's summary over the reps, beside Tables 4.1/4.2 and 4.3-4.10.
#[derive(Debug, Clone, Serialize)]
struct SideSummary {
    summary: bool,
    cpu_ms: Option<Summary>,
    wall_ms: Option<Summary>,
    published_ms: Option<f64>,
    ratio_published_over_ours: Option<f64>,
    messages: Vec<MessageSummary>,
    thesis_percentages: Option<Vec<PercentComparison>>,
    #[serde(flatten)]
    server: Option<ServerSummary>,
}

/// What only the server's summary has: the bound and its parts.
#[derive(Debug, Clone, Serialize)]
struct ServerSummary {
    bound_ms: Option<f64>,
    /// The operations timed as the denominator (probe names).
    bound_operations: Vec<&'static str>,
    /// Null unless `bound_status` is `bounded`.
    bound_ratio: Option<f64>,
    bound_status: Option<&'static str>,
    bound_pairs: Option<usize>,
    bound_ci95: Option<(f64, f64)>,
    bound_quartiles: Option<(f64, f64)>,
    bound_cpu_ms: Option<f64>,
    symmetric_floor_ms: Option<f64>,
    bound_floor_ratio: Option<f64>,
    cpu_outside_ms: Option<Summary>,
}

/// The handshake's shape on the wire and the probe's cost.
#[derive(Debug, Clone, Serialize)]
struct HandshakeSummary<'a> {
    summary: bool,
    datagrams: Directions,
    message_count: Peers,
    flights: Vec<Flight>,
    published_bytes_incl_ack: Option<u32>,
    probe_overhead: Option<f64>,
    probe_off_cpu_ns: &'a [u64],
    probe_full_cpu_ns: &'a [u64],
}

#[derive(Debug, Clone, Copy, Serialize)]
struct Directions {
    client_to_server: usize,
    server_to_client: usize,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct Peers {
    client: usize,
    server: usize,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct Flight {
    from_client: bool,
    bytes: usize,
}

/// Builds the records of one case, all with its case, auth and variant.
struct Records<'a> {
    m: &'a CaseMeasurement,
    case: String,
    out: Vec<JsonRecord<'a>>,
}

impl<'a> Records<'a> {
    fn push(
        &mut self,
        rep: Option<usize>,
        side: &'static str,
        message: &'static str,
        operation: Option<&'static str>,
        (wall_ns, cpu_ns, bytes): (Option<u64>, Option<u64>, Option<usize>),
        extra: Extra<'a>,
    ) {
        self.out.push(JsonRecord {
            case: self.case.clone(),
            auth: self.m.auth.name(),
            variant: self.m.variant.name(),
            rep,
            side,
            message,
            operation,
            wall_ns,
            cpu_ns,
            bytes,
            extra,
        });
    }

    /// One rep's messages, operations, sent datagrams and totals of one side.
    fn side_of_rep(&mut self, i: usize, side: Side, p: &HandshakeProbe, outside_ns: u64) {
        let name = side_name(side);
        for t in &p.messages {
            let timing = (Some(t.wall_ns), Some(t.cpu_ns), Some(t.bytes));
            self.push(
                Some(i),
                name,
                t.message.name(),
                None,
                timing,
                Extra::Plain {},
            );
        }
        for o in &p.operations {
            let (message, op) = (o.message.name(), Some(o.operation.name()));
            let timing = (Some(o.wall_ns), None, None);
            self.push(Some(i), name, message, op, timing, Extra::Plain {});
        }
        for d in p.datagrams.iter().filter(|d| d.sent) {
            let timing = (None, None, Some(d.bytes));
            self.push(Some(i), name, "DATAGRAM", None, timing, Extra::Plain {});
        }
        let total = (
            Some(p.total_wall_ns()),
            Some(p.total_cpu_ns()),
            Some(p.bytes_sent()),
        );
        let extra = Extra::Total {
            cpu_outside_ns: outside_ns,
        };
        self.push(Some(i), name, "TOTAL", None, total, extra);
    }

    fn rep(&mut self, i: usize, r: &'a RepMeasurement) {
        self.side_of_rep(i, Side::Client, &r.client, r.client_cpu_ns);
        self.side_of_rep(i, Side::Server, &r.server, r.server_cpu_ns);
        if let (Some(raw), Some(off)) = (r.pk_bound_ns, r.server_cpu_probe_off_ns) {
            self.bound(Some(i), i, raw, off);
        }
        let jobs = Extra::Jobs {
            jobs_cpu_ns: &r.server_jobs_ns,
            handshake_wall_ns: r.wall_ns,
        };
        self.push(Some(i), "server", "JOBS", None, (None, None, None), jobs);
    }

    fn bound(&mut self, rep: Option<usize>, pair: usize, raw_ns: u64, off_ns: u64) {
        let extra = Extra::Bound {
            pair,
            server_cpu_probe_off_ns: off_ns,
        };
        self.push(
            rep,
            "server",
            "BOUND",
            None,
            (None, Some(raw_ns), None),
            extra,
        );
    }

    fn side_summary(&mut self, side: Side) {
        let m = self.m;
        let published = published_totals(m.case, m.auth);
        let (cpu, wall, publ) = match side {
            Side::Client => (
                m.client_cpu_ms(),
                m.client_wall_ms(),
                published.map(|p| p.0),
            ),
            Side::Server => (
                m.server_cpu_ms(),
                m.server_wall_ms(),
                published.map(|p| p.1),
            ),
        };
        let summary = SideSummary {
            summary: true,
            cpu_ms: cpu,
            wall_ms: wall,
            published_ms: publ,
            ratio_published_over_ours: publ.filter(|_| med(cpu) > 0.0).map(|p| p / med(cpu)),
            messages: m.message_summary(side),
            thesis_percentages: percentage_comparison(m, side),
            server: (side == Side::Server).then(|| server_summary(m)),
        };
        let extra = Extra::SideSummary(Box::new(summary));
        self.push(
            None,
            side_name(side),
            "TOTAL",
            None,
            (None, None, None),
            extra,
        );
    }

    fn handshake_summary(&mut self) {
        let m = self.m;
        let (dc, ds) = m.datagrams();
        let (mc, ms) = m.messages();
        let summary = HandshakeSummary {
            summary: true,
            datagrams: Directions {
                client_to_server: dc,
                server_to_client: ds,
            },
            message_count: Peers {
                client: mc,
                server: ms,
            },
            flights: m
                .flight_bytes()
                .into_iter()
                .map(|(from_client, bytes)| Flight { from_client, bytes })
                .collect(),
            published_bytes_incl_ack: published_bytes(m.case, m.auth),
            probe_overhead: m.probe_overhead,
            probe_off_cpu_ns: &m.probe_off_cpu_ns,
            probe_full_cpu_ns: &m.probe_full_cpu_ns,
        };
        let bytes = (None, None, Some(m.handshake_bytes()));
        let extra = Extra::HandshakeSummary(Box::new(summary));
        self.push(None, "both", "HANDSHAKE", None, bytes, extra);
    }
}

fn server_summary(m: &CaseMeasurement) -> ServerSummary {
    let bound = m.bound();
    let spread = bound.as_ref().map(|b| *b.spread());
    ServerSummary {
        bound_ms: m.bound_ms(),
        bound_operations: m.bound_operations.iter().map(|o| o.name()).collect(),
        bound_ratio: bound.as_ref().and_then(BoundRatio::value),
        bound_status: bound.as_ref().map(BoundRatio::status),
        bound_pairs: spread.map(|s| s.pairs),
        bound_ci95: spread.and_then(|s| s.ci95),
        bound_quartiles: spread.map(|s| s.quartiles),
        bound_cpu_ms: m.bound_cpu_ms(),
        symmetric_floor_ms: m.symmetric_floor_ms(),
        bound_floor_ratio: m.bound_floor_ratio(),
        cpu_outside_ms: m.server_outside_cpu_ms(),
    }
}

/// The newline-delimited JSON records of one case: one per measured item (message,
/// operation, datagram, side total, bound pair, server jobs) per rep, the bound pairs
/// added after the reps, then the per-case summaries (each side, the handshake).
pub fn json_records(m: &CaseMeasurement) -> Vec<JsonRecord<'_>> {
    let mut records = Records {
        m,
        case: m.case.to_string(),
        out: Vec::new(),
    };
    for (i, r) in m.reps.iter().enumerate() {
        records.rep(i, r);
    }
    for (k, p) in m.extra_bound_pairs.iter().enumerate() {
        records.bound(None, m.reps.len() + k, p.raw_pk_ns, p.server_cpu_ns);
    }
    for side in [Side::Client, Side::Server] {
        records.side_summary(side);
    }
    records.handshake_summary();
    records.out
}

/// A [`HandshakeProbe`] as JSON: its messages, operations and datagrams.
#[derive(Serialize)]
struct ProbeView {
    messages: Vec<MessageView>,
    operations: Vec<OperationView>,
    datagrams: Vec<DatagramView>,
}

#[derive(Serialize)]
struct DatagramView {
    sent: bool,
    bytes: usize,
    records: usize,
}

#[derive(Serialize)]
struct MessageView {
    message: &'static str,
    wall_ns: u64,
    cpu_ns: u64,
    bytes: usize,
}

#[derive(Serialize)]
struct OperationView {
    message: &'static str,
    operation: &'static str,
    wall_ns: u64,
}

type SerResult<S> = std::result::Result<<S as Serializer>::Ok, <S as Serializer>::Error>;

pub(super) fn ser_probe<S: Serializer>(p: &HandshakeProbe, s: S) -> SerResult<S> {
    ProbeView {
        messages: p
            .messages
            .iter()
            .map(|m| MessageView {
                message: m.message.name(),
                wall_ns: m.wall_ns,
                cpu_ns: m.cpu_ns,
                bytes: m.bytes,
            })
            .collect(),
        operations: p
            .operations
            .iter()
            .map(|o| OperationView {
                message: o.message.name(),
                operation: o.operation.name(),
                wall_ns: o.wall_ns,
            })
            .collect(),
        datagrams: p
            .datagrams
            .iter()
            .map(|d| DatagramView {
                sent: d.sent,
                bytes: d.bytes,
                records: d.records,
            })
            .collect(),
    }
    .serialize(s)
}

pub(super) fn ser_display<S: Serializer, T: std::fmt::Display>(v: &T, s: S) -> SerResult<S> {
    s.collect_str(v)
}

pub(super) fn ser_auth<S: Serializer>(a: &AuthMode, s: S) -> SerResult<S> {
    s.serialize_str(a.name())
}

pub(super) fn ser_kind<S: Serializer>(k: &HandshakeKind, s: S) -> SerResult<S> {
    s.serialize_str(kind_name(*k))
}

pub(super) fn ser_message<S: Serializer>(m: &Message, s: S) -> SerResult<S> {
    s.serialize_str(m.name())
}

pub(super) fn ser_operation<S: Serializer>(o: &Operation, s: S) -> SerResult<S> {
    s.serialize_str(o.name())
}

pub(super) fn ser_operations<S: Serializer>(ops: &[Operation], s: S) -> SerResult<S> {
    s.collect_seq(ops.iter().map(|o| o.name()))
}
