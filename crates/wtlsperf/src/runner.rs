//! The in-memory handshake runner (`wtlsperf handshake`): client and gateway in one
//! process, driven alternately on one thread, so each side's processing time can be read
//! from the thread CPU clock without a network or a scheduler in between.
//!
//! What it reproduces: the processing-time measurements of Bayoglu 2004, section 4.1:
//! the side totals T_PD_C and T_PD_S (Eq. 3.2/3.3 mutual, 3.5/3.6 server-authenticated;
//! Tables 4.1/4.2), the per-message and per-operation shares (Tables 4.3-4.10) and the
//! handshake sizes (Table 4.11). On top of that it measures two things the thesis does
//! not: how close the gateway gets to the cost of its raw public-key operations (the
//! *bound*), and what the probe itself costs.
//!
//! Every rep builds a fresh [`Client`] and [`ServerConnection`]; the thread CPU time
//! around each `handle_datagram` call is recorded from the outside as well as by the
//! engine's own probe, so the per-job service times the queue model needs
//! ([`CaseMeasurement::server_job_service_ns`]) do not depend on the probe being right.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use serde_json::{json, Value};
use wtls::crypto::pk::{self, KeyPair, PeerKey};
use wtls::crypto::prf::PrfHash;
use wtls::handshake::{
    Client, ClientConfig, Event, HandshakeKind, Now, Output, Packing, Policy, ServerConfig,
    ServerConnection,
};
use wtls::msgs::certificate::WtlsCertificate;
use wtls::pki;
use wtls::probe::{HandshakeProbe, Message, Operation, Probe, ProbeLevel};
use wtls::suite::Case;
use wtlsperf_models::processing::{self, percent_layout, percentage_row, PercentColumn, SideTimes};
use wtlsperf_models::reference::{self, PercentTable};
use wtlsperf_models::{stats, Authentication, SuiteFamily};

use crate::pki_store::{CaseCredentials, PkiStore};
use crate::setup::{self, ClientAuth, Options, ProcessClock};

/// How many flights a handshake may take before the runner calls it stuck. The longest
/// flow (full mutual) has four; the bound only keeps a broken engine from looping.
const MAX_ROUNDS: usize = 8;
/// Size of the application-data ping each rep sends after the handshake.
const PING_BYTES: usize = 64;

/// Which server-authenticated flow runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Flow {
    /// The thesis' flow (Table 3.7): the gateway sends a CertificateRequest and the
    /// client answers with an empty Certificate.
    Thesis,
    /// Plain WTLS: no CertificateRequest when only the server authenticates.
    Wtls,
}

/// Which handshake shape each rep runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Full handshake with the case's certified key exchange.
    Full,
    /// RSA_anon / ECDH_anon on the leaf's parameters (server-authenticated runs only).
    Anonymous,
    /// The client names itself so the gateway takes its certificate from its own store
    /// (ECDH_ECDSA only; for RSA the engine runs the full flow).
    Optimised,
    /// Abbreviated handshake resuming a session of an unmeasured full handshake.
    Resumed,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Full => "full",
            Variant::Anonymous => "anonymous",
            Variant::Optimised => "optimised",
            Variant::Resumed => "resumed",
        }
    }
}

/// The peer a measurement belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// What [`measure_case`] does.
#[derive(Debug, Clone)]
pub struct RunnerOptions {
    /// Measured handshakes per case.
    pub reps: usize,
    /// Unmeasured handshakes first (page faults, lazy OpenSSL tables, branch predictors).
    pub warmup: usize,
    pub flow: Flow,
    pub packing: Packing,
    pub variant: Variant,
    /// Time the server's raw public-key operations after every rep (the bound).
    pub measure_bound: bool,
    /// Run every rep twice more, probe off and on, to measure the probe's cost.
    pub measure_probe_overhead: bool,
}

impl Default for RunnerOptions {
    fn default() -> Self {
        RunnerOptions {
            reps: 15,
            warmup: 2,
            flow: Flow::Thesis,
            packing: Packing::FlightPerDatagram,
            variant: Variant::Full,
            measure_bound: true,
            measure_probe_overhead: false,
        }
    }
}

pub use wtls::handshake::AuthMode;
pub use wtlsperf_models::stats::Summary;

/// The median of a summary, 0 for an empty sample (tables print it).
fn med(s: Option<Summary>) -> f64 {
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
    /// Thread CPU time of the server's raw public-key operations, timed right after
    /// this handshake on the same keys.
    pub pk_bound_ns: Option<u64>,
    /// Server thread CPU (around its engine calls) of a second handshake run right after
    /// this one with the probe off: the engine's own cost, which the bound compares with
    /// the raw operations (the probe's cost is reported on its own).
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
}

/// One message of one side, over all reps.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageSummary {
    pub message: Message,
    pub median_cpu_ms: f64,
    pub median_wall_ms: f64,
    pub p95_wall_ms: f64,
    /// Median CPU of the message as % of the side's median CPU total.
    pub share_pct: f64,
    /// Bytes of the message (handshake header and body, or the CCS body).
    pub bytes: usize,
    /// Operation, median wall ms, % of the message's median wall time.
    pub operations: Vec<(Operation, f64, f64)>,
}

impl Serialize for MessageSummary {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let ops: Vec<Value> = self
            .operations
            .iter()
            .map(|(op, ms, pct)| {
                json!({"operation": op.name(), "median_wall_ms": ms, "share_of_message_pct": pct})
            })
            .collect();
        let mut st = s.serialize_struct("MessageSummary", 7)?;
        st.serialize_field("message", self.message.name())?;
        st.serialize_field("median_cpu_ms", &self.median_cpu_ms)?;
        st.serialize_field("median_wall_ms", &self.median_wall_ms)?;
        st.serialize_field("p95_wall_ms", &self.p95_wall_ms)?;
        st.serialize_field("share_pct", &self.share_pct)?;
        st.serialize_field("bytes", &self.bytes)?;
        st.serialize_field("operations", &ops)?;
        st.end()
    }
}

fn ser_display<S: Serializer, T: std::fmt::Display>(
    v: &T,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn ser_auth<S: Serializer>(a: &AuthMode, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(a.name())
}

fn ser_kind<S: Serializer>(k: &HandshakeKind, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(kind_name(*k))
}

fn kind_name(k: HandshakeKind) -> &'static str {
    match k {
        HandshakeKind::Full => "full",
        HandshakeKind::Abbreviated => "abbreviated",
        HandshakeKind::Optimised => "optimised",
    }
}

fn ser_probe<S: Serializer>(p: &HandshakeProbe, s: S) -> std::result::Result<S::Ok, S::Error> {
    probe_json(p).serialize(s)
}

fn probe_json(p: &HandshakeProbe) -> Value {
    json!({
        "messages": p.messages.iter().map(|m| json!({
            "message": m.message.name(), "wall_ns": m.wall_ns, "cpu_ns": m.cpu_ns, "bytes": m.bytes
        })).collect::<Vec<_>>(),
        "operations": p.operations.iter().map(|o| json!({
            "message": o.message.name(), "operation": o.operation.name(), "wall_ns": o.wall_ns
        })).collect::<Vec<_>>(),
        "datagrams": p.datagrams.iter().map(|d| json!({
            "sent": d.sent, "bytes": d.bytes, "records": d.records
        })).collect::<Vec<_>>(),
    })
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn median_of(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    stats::median(&values.into_iter().collect::<Vec<_>>())
}

/// Messages the client sends; the rest are the server's.
fn sent_by_client(m: Message) -> bool {
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

    /// Server thread CPU measured from outside the engine, per rep.
    pub fn server_outside_cpu_ms(&self) -> Option<Summary> {
        self.side_summary(|r| r.server_cpu_ns)
    }

    /// Median server CPU per handshake (measured from outside the engine, so everything
    /// between messages counts; from the probe-off handshakes when they were run) over
    /// the median of the raw public-key operations the server must do in this case. 1.0
    /// would mean the gateway does nothing but its public-key work.
    pub fn bound_ratio(&self) -> Option<f64> {
        let bound = median_of(
            self.reps
                .iter()
                .filter_map(|r| r.pk_bound_ns.map(|b| b as f64)),
        )?;
        let cpu = self.bound_cpu_ms()? * 1e6;
        (bound > 0.0).then(|| cpu / bound)
    }

    /// The numerator of [`CaseMeasurement::bound_ratio`] (ms): median server CPU per
    /// handshake with the probe off, or with it on where no probe-off run was made.
    pub fn bound_cpu_ms(&self) -> Option<f64> {
        let off: Vec<f64> = self
            .reps
            .iter()
            .filter_map(|r| r.server_cpu_probe_off_ns.map(ms))
            .collect();
        if off.is_empty() {
            median_of(self.reps.iter().map(|r| ms(r.server_cpu_ns)))
        } else {
            median_of(off)
        }
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

    /// Median raw public-key time of the server (ms), if measured.
    pub fn bound_ms(&self) -> Option<f64> {
        median_of(self.reps.iter().filter_map(|r| r.pk_bound_ns.map(ms)))
    }

    /// Per-message medians of one side, in flow order, with the operations inside.
    pub fn message_summary(&self, side: Side) -> Vec<MessageSummary> {
        let probes: Vec<&HandshakeProbe> = self.reps.iter().map(|r| Self::probe(r, side)).collect();
        let total_cpu = median_of(probes.iter().map(|p| p.total_cpu_ns() as f64)).unwrap_or(0.0);
        let mut out = Vec::new();
        for message in Message::ALL {
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
            if per_rep.is_empty() {
                continue;
            }
            let cpu = median_of(per_rep.iter().map(|r| r.0 as f64)).unwrap_or(0.0);
            let walls: Vec<f64> = per_rep.iter().map(|r| r.1 as f64).collect();
            let wall = stats::median(&walls).unwrap_or(0.0);
            let p95 = stats::percentile_linear(&walls, 95.0).unwrap_or(0.0);
            let mut ops: Vec<Operation> = Vec::new();
            for p in &probes {
                for o in p.operations.iter().filter(|o| o.message == message) {
                    if !ops.contains(&o.operation) {
                        ops.push(o.operation);
                    }
                }
            }
            let operations = ops
                .into_iter()
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
                    let share = if wall > 0.0 { 100.0 * w / wall } else { 0.0 };
                    (op, w / 1e6, share)
                })
                .collect();
            out.push(MessageSummary {
                message,
                median_cpu_ms: cpu / 1e6,
                median_wall_ms: wall / 1e6,
                p95_wall_ms: p95 / 1e6,
                share_pct: if total_cpu > 0.0 {
                    100.0 * cpu / total_cpu
                } else {
                    0.0
                },
                bytes: per_rep[0].2,
                operations,
            });
        }
        out
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

    fn authentication(&self) -> Authentication {
        authentication(self.auth)
    }
}

fn authentication(auth: AuthMode) -> Authentication {
    match auth {
        AuthMode::Mutual => Authentication::Mutual,
        AuthMode::ServerAuth => Authentication::ServerAuth,
    }
}

fn sha1(data: &[u8]) -> [u8; 20] {
    let mut out = [0u8; 20];
    out.copy_from_slice(&PrfHash::Sha1.digest(data));
    out
}

/// The server's raw public-key work in one case, prepared once on the case's keys.
///
/// The operations run on keys as the server has them: the client's public key arrives
/// with each handshake (its certificate, or its ClientKeyExchange point), so every rep
/// builds it anew from its wire form, as the engine must (for RSA that includes
/// OpenSSL's Montgomery set-up for the new modulus, for EC the point decoding and curve
/// check); the CA's key is long-lived and parsed once, as the engine caches it.
pub(crate) struct RawServerOps {
    server_key: KeyPair,
    /// RSA ClientKeyExchange ciphertext under the server's key.
    rsa_ciphertext: Option<Vec<u8>>,
    /// The client key the server runs ECDH with.
    ecdh: Option<EcdhPeer>,
    /// The client certificate's signature under the CA: key, digest, signature.
    ca_verify: Option<(PeerKey, [u8; 20], Vec<u8>)>,
    /// CertificateVerify under the client's certified key: certificate, digest, signature.
    client_verify: Option<(WtlsCertificate, [u8; 20], Vec<u8>)>,
    /// The ParameterIndex numbering the certificates are read under.
    numbering: wtls::params::ParameterNumbering,
}

/// Where the server's ECDH peer key comes from.
enum EcdhPeer {
    /// An ephemeral point from ClientKeyExchange (server-authenticated): cofactor ECDH
    /// on the received point.
    Untrusted(Vec<u8>),
    /// The client's certificate (mutual, optimised).
    Certified(WtlsCertificate),
}

impl RawServerOps {
    fn prepare(creds: &CaseCredentials, auth: AuthMode, variant: Variant) -> Result<Option<Self>> {
        let rsa = creds.case.leaf.is_rsa();
        let optimised_ec = variant == Variant::Optimised && !rsa;
        match variant {
            Variant::Full | Variant::Optimised => {}
            Variant::Anonymous | Variant::Resumed => return Ok(None),
        }
        let mut ops = RawServerOps {
            server_key: creds.server_key.clone(),
            rsa_ciphertext: None,
            ecdh: None,
            ca_verify: None,
            client_verify: None,
            numbering: creds.numbering,
        };
        if rsa {
            // The WTLS RSA secret: version byte 1 and 19 secret bytes. Their values do
            // not change the cost of a private-key decryption.
            let mut secret = [0x5Au8; 20];
            secret[0] = 1;
            ops.rsa_ciphertext = Some(pk::rsa_encrypt(&creds.server_key.public_key()?, &secret)?);
        } else if auth == AuthMode::Mutual || optimised_ec {
            ops.ecdh = Some(EcdhPeer::Certified(creds.client_cert.clone()));
        } else {
            let point = match pk::ephemeral_ec(creds.case.leaf)?.public_wire()? {
                wtls::msgs::certificate::PublicKey::Ec(p) => p.0,
                wtls::msgs::certificate::PublicKey::Rsa(_) => bail!("an EC key has an EC point"),
            };
            ops.ecdh = Some(EcdhPeer::Untrusted(point));
        }
        if auth == AuthMode::Mutual && !optimised_ec {
            let ca_key = pki::certificate_key(&creds.ca_cert, creds.numbering)?;
            let digest = sha1(&creds.client_cert.tbs_bytes());
            ops.ca_verify = Some((ca_key, digest, creds.client_cert.signature.clone()));
            if rsa {
                let digest = sha1(b"handshake messages so far");
                let sig = pk::sign_digest(&creds.client_key, &digest)?;
                ops.client_verify = Some((creds.client_cert.clone(), digest, sig));
            }
        }
        Ok(Some(ops))
    }

    /// Runs the operations once; returns their thread CPU time. Every result is
    /// checked, so a failing operation cannot pass for a fast one. Never inlined, so that
    /// `scripts/bench-counts.sh` finds it by name in a callgrind profile.
    #[inline(never)]
    pub(crate) fn run(&self) -> Result<u64> {
        let t0 = setup::thread_cpu_ns();
        if let Some(ct) = &self.rsa_ciphertext {
            let secret = pk::rsa_decrypt(&self.server_key, ct)?;
            std::hint::black_box(&secret);
        }
        match &self.ecdh {
            Some(EcdhPeer::Untrusted(point)) => {
                std::hint::black_box(pk::ecdh_untrusted(&self.server_key, point)?);
            }
            Some(EcdhPeer::Certified(cert)) => {
                let peer = pki::certificate_key(cert, self.numbering)?;
                std::hint::black_box(pk::ecdh(&self.server_key, &peer)?);
            }
            None => {}
        }
        if let Some((key, digest, sig)) = &self.ca_verify {
            pk::verify_digest(key, digest, sig)?;
        }
        if let Some((cert, digest, sig)) = &self.client_verify {
            let key = pki::certificate_key(cert, self.numbering)?;
            pk::verify_digest(&key, digest, sig)?;
        }
        Ok(setup::thread_cpu_ns().saturating_sub(t0))
    }
}

/// The symmetric work a WTLS server cannot skip in a full handshake with the
/// experiments' suite (RC5_CBC with SHA-1, [`setup::default_cipher_suite`]), timed on
/// its own with the library's own functions: the transcript hash over
/// `transcript_bytes` bytes of handshake messages, the master secret, the key blocks
/// and cipher states of both directions (keys are derived on first use), the client's
/// Finished record decrypted and checked and its verify data computed, the server's
/// verify data computed and its Finished record sealed. Returns its thread CPU time.
///
/// Why: it is the floor under the bound ratio besides the public-key operations. Where
/// (raw public-key time + this floor) / raw public-key time already exceeds 1.10, no
/// implementation of the protocol can meet the 1.10 bound.
pub fn symmetric_floor_ns(transcript_bytes: usize) -> Result<u64> {
    use wtls::crypto::keys::{self, Direction};
    use wtls::crypto::prf::{self, TranscriptHash};
    use wtls::record::{CipherState, ProtectionParams};
    let suite = setup::default_cipher_suite();
    let hash = PrfHash::for_mac(suite.mac);
    let (client_random, server_random) = ([0x11u8; 16], [0x22u8; 16]);
    let messages = vec![0x5Au8; transcript_bytes];
    let params = |master: &[u8; 20]| ProtectionParams {
        bulk: suite.bulk,
        mac: suite.mac,
        key_refresh: 3,
        master_secret: zeroize::Zeroizing::new(*master),
        client_random,
        server_random,
    };
    // The client's Finished record, sealed outside the timed region.
    let master0 = keys::master_secret(hash, &[0x01; 20], &client_random, &server_random);
    let fin = prf::finished_verify_data(hash, &master0, prf::CLIENT_FINISHED, &[0; 20]);
    let mut client_write = CipherState::new(params(&master0), Direction::ClientWrite);
    let sealed = client_write.protect(2, 0x12, &fin)?;

    let t0 = setup::thread_cpu_ns();
    let mut transcript = TranscriptHash::new(hash);
    transcript.update(&messages);
    let master = keys::master_secret(hash, &[0x01; 20], &client_random, &server_random);
    let mut from_client = CipherState::new(params(&master), Direction::ClientWrite);
    let opened = from_client.unprotect(2, 0x12, &sealed)?;
    let expected =
        prf::finished_verify_data(hash, &master, prf::CLIENT_FINISHED, &transcript.current());
    std::hint::black_box((&opened, &expected));
    transcript.update(&opened);
    let ours =
        prf::finished_verify_data(hash, &master, prf::SERVER_FINISHED, &transcript.current());
    let mut to_client = CipherState::new(params(&master), Direction::ServerWrite);
    let record = to_client.protect(2, 0x12, &ours)?;
    std::hint::black_box(&record);
    Ok(setup::thread_cpu_ns().saturating_sub(t0))
}

/// Configurations and raw operations of one case, built once for all its reps.
pub(crate) struct Rig {
    case: Case,
    auth: AuthMode,
    variant: Variant,
    pub(crate) client: Arc<ClientConfig>,
    pub(crate) server: Arc<ServerConfig>,
    pub(crate) raw: Option<RawServerOps>,
}

impl Rig {
    pub(crate) fn new(
        store: &PkiStore,
        case: Case,
        auth: AuthMode,
        opts: &RunnerOptions,
    ) -> Result<Rig> {
        if opts.variant == Variant::Anonymous && auth == AuthMode::Mutual {
            bail!("an anonymous key exchange authenticates nobody: run it with --auth server");
        }
        let creds = store.case(&case)?;
        let mut o = Options {
            packing: opts.packing,
            ..Options::default()
        };
        if opts.variant == Variant::Anonymous {
            o.policy = Policy::permissive();
        }
        let client = match opts.variant {
            Variant::Anonymous => setup::anonymous_client_config(&creds, &o),
            Variant::Optimised => setup::client_config(&creds, &o, true),
            Variant::Full | Variant::Resumed => setup::client_config(&creds, &o, false),
        };
        let client_auth = match (auth, opts.flow, opts.variant) {
            (AuthMode::Mutual, _, _) => ClientAuth::Required,
            (AuthMode::ServerAuth, _, Variant::Anonymous) => ClientAuth::None,
            (AuthMode::ServerAuth, Flow::Thesis, _) => ClientAuth::Optional,
            (AuthMode::ServerAuth, Flow::Wtls, _) => ClientAuth::None,
        };
        let server = setup::case_server_config(&creds, client_auth, &o);
        let raw = if opts.measure_bound {
            RawServerOps::prepare(&creds, auth, opts.variant)?
        } else {
            None
        };
        Ok(Rig {
            case,
            auth,
            variant: opts.variant,
            client: Arc::new(client),
            server: Arc::new(server),
            raw,
        })
    }

    fn probe(level: ProbeLevel) -> Probe {
        match level {
            ProbeLevel::Off => Probe::off(),
            level => Probe::new(ProcessClock::shared(), level),
        }
    }

    /// A fresh pair. For the resumed variant, first runs an unmeasured full handshake
    /// with the same server configuration (and so the same session cache) to get a
    /// session to resume.
    fn pair(&self, level: ProbeLevel) -> Result<(Client, ServerConnection)> {
        let now = setup::now();
        let resume = if self.variant == Variant::Resumed {
            let (c, s) = (
                Client::new(self.client.clone(), self.auth, None, Probe::off(), now),
                ServerConnection::new(self.server.clone(), Probe::off(), now),
            );
            let done = drive(c, s, now, false).context("priming full handshake")?;
            Some(
                done.client
                    .session()
                    .ok_or_else(|| anyhow!("the priming handshake left no resumable session"))?,
            )
        } else {
            None
        };
        Ok((
            Client::new(
                self.client.clone(),
                self.auth,
                resume,
                Self::probe(level),
                now,
            ),
            ServerConnection::new(self.server.clone(), Self::probe(level), now),
        ))
    }

    fn expected_kind(&self) -> HandshakeKind {
        match self.variant {
            Variant::Resumed => HandshakeKind::Abbreviated,
            Variant::Optimised if !self.case.leaf.is_rsa() => HandshakeKind::Optimised,
            _ => HandshakeKind::Full,
        }
    }
}

/// A completed handshake and what it cost.
struct Driven {
    client: Client,
    server: ServerConnection,
    client_cpu_ns: u64,
    server_cpu_ns: u64,
    server_jobs_ns: Vec<u64>,
    wall_ns: u64,
    kind: Option<HandshakeKind>,
}

/// Anything but a clean handshake step is an error: this runner has no loss, so an
/// alert, a dropped record or a retransmission means a bug.
fn check(out: &Output, who: &str) -> Result<()> {
    for e in &out.events {
        match e {
            Event::AlertSent(a, reason) => {
                bail!("{who} sent alert {:?}: {reason}", a.description)
            }
            Event::AlertReceived(a) => bail!("{who} received alert {:?}", a.description),
            Event::Dropped(why) => bail!("{who} dropped a record: {why}"),
            Event::AlertIgnored { alert, why } => {
                bail!("{who} ignored alert {:?}: {why}", alert.description)
            }
            Event::Retransmitted => bail!("{who} answered a retransmission"),
            Event::HandshakeComplete(_) | Event::ApplicationData(_) => {}
        }
    }
    Ok(())
}

/// Runs a handshake to completion, both sides alternately on this thread. With `timed`,
/// every engine call is wrapped in thread-CPU readings (two clock reads per call).
fn drive(
    mut client: Client,
    mut server: ServerConnection,
    now: Now,
    timed: bool,
) -> Result<Driven> {
    let stamp = || if timed { setup::thread_cpu_ns() } else { 0 };
    let (mut client_cpu_ns, mut server_cpu_ns) = (0u64, 0u64);
    let mut server_jobs_ns = Vec::new();
    let mut kind = None;
    let started = Instant::now();
    let t0 = stamp();
    let first = client
        .start(now)
        .map_err(|e| anyhow!("client start: {e}"))?;
    client_cpu_ns += stamp().saturating_sub(t0);
    let mut to_server = first.datagrams;
    for _ in 0..MAX_ROUNDS {
        if to_server.is_empty() {
            break;
        }
        let mut to_client = Vec::new();
        for d in to_server.drain(..) {
            let t0 = stamp();
            let out = server.handle_datagram(&d, now);
            let dt = stamp().saturating_sub(t0);
            server_cpu_ns += dt;
            server_jobs_ns.push(dt);
            check(&out, "server")?;
            kind = kind.or(out.completed());
            to_client.extend(out.datagrams);
        }
        for d in to_client {
            let t0 = stamp();
            let out = client.handle_datagram(&d, now);
            client_cpu_ns += stamp().saturating_sub(t0);
            check(&out, "client")?;
            kind = kind.or(out.completed());
            to_server.extend(out.datagrams);
        }
    }
    let wall_ns = started.elapsed().as_nanos() as u64;
    if !(client.is_established() && server.is_established()) {
        bail!(
            "handshake did not complete in {MAX_ROUNDS} rounds (client established: {}, server established: {})",
            client.is_established(),
            server.is_established()
        );
    }
    Ok(Driven {
        client,
        server,
        client_cpu_ns,
        server_cpu_ns,
        server_jobs_ns,
        wall_ns,
        kind,
    })
}

/// A 64-byte ping from the client and its echo from the server: proves both sides
/// derived the same keys, in both directions.
fn ping_echo(d: &mut Driven, now: Now) -> Result<()> {
    let ping: Vec<u8> = (0..PING_BYTES as u8).collect();
    let record = d
        .client
        .seal_application_data(&ping)
        .map_err(|e| anyhow!("client seal: {e}"))?;
    let out = d.server.handle_datagram(&record, now);
    check(&out, "server")?;
    if !out.events.contains(&Event::ApplicationData(ping.clone())) {
        bail!("the server did not receive the ping: {:?}", out.events);
    }
    let record = d
        .server
        .seal_application_data(&ping)
        .map_err(|e| anyhow!("server seal: {e}"))?;
    let out = d.client.handle_datagram(&record, now);
    check(&out, "client")?;
    if !out.events.contains(&Event::ApplicationData(ping)) {
        bail!("the client did not receive the echo: {:?}", out.events);
    }
    Ok(())
}

fn one_rep(rig: &Rig) -> Result<RepMeasurement> {
    let (client, server) = rig.pair(ProbeLevel::Full)?;
    let now = setup::now();
    let mut d = drive(client, server, now, true)?;
    let kind = d
        .kind
        .ok_or_else(|| anyhow!("no side reported the handshake complete"))?;
    if kind != rig.expected_kind() {
        bail!(
            "expected a {} handshake, got {}",
            kind_name(rig.expected_kind()),
            kind_name(kind)
        );
    }
    let (client_probe, server_probe) = (d.client.take_probe(), d.server.take_probe());
    ping_echo(&mut d, now)?;
    let pk_bound_ns = rig.raw.as_ref().map(RawServerOps::run).transpose()?;
    let symmetric_floor_ns = match rig.raw {
        Some(_) => {
            let transcript: usize = server_probe
                .messages
                .iter()
                .filter(|m| !matches!(m.message, Message::CCCS | Message::SCCS))
                .map(|m| m.bytes)
                .sum();
            Some(symmetric_floor_ns(transcript)?)
        }
        None => None,
    };
    let server_cpu_probe_off_ns = match rig.raw {
        Some(_) => {
            let (client, server) = rig.pair(ProbeLevel::Off)?;
            Some(drive(client, server, setup::now(), true)?.server_cpu_ns)
        }
        None => None,
    };
    Ok(RepMeasurement {
        client: client_probe,
        server: server_probe,
        client_cpu_ns: d.client_cpu_ns,
        server_cpu_ns: d.server_cpu_ns,
        wall_ns: d.wall_ns,
        pk_bound_ns,
        server_cpu_probe_off_ns,
        symmetric_floor_ns,
        server_jobs_ns: d.server_jobs_ns,
        kind,
    })
}

/// Thread CPU of one whole handshake (both sides) with the probe at `level`, read only
/// around it, so the reading itself costs the same for both levels.
fn outside_cpu(rig: &Rig, level: ProbeLevel) -> Result<u64> {
    let (client, server) = rig.pair(level)?;
    let now = setup::now();
    let t0 = setup::thread_cpu_ns();
    let d = drive(client, server, now, false)?;
    let cpu = setup::thread_cpu_ns().saturating_sub(t0);
    drop(d);
    Ok(cpu)
}

/// Measures one case: `opts.warmup` unmeasured handshakes, then `opts.reps` measured
/// ones, each followed by the raw public-key operations (the bound) and, if asked, a
/// probe-off and a probe-on handshake in alternating order.
pub fn measure_case(
    store: &PkiStore,
    case: Case,
    auth: AuthMode,
    opts: &RunnerOptions,
) -> Result<CaseMeasurement> {
    let what = || format!("case {case} ({}, {})", auth.name(), opts.variant.name());
    if opts.reps == 0 {
        bail!("{}: at least one rep is needed", what());
    }
    let rig = Rig::new(store, case, auth, opts).with_context(what)?;
    for _ in 0..opts.warmup {
        one_rep(&rig).with_context(|| format!("{}: warm-up", what()))?;
    }
    let mut m = CaseMeasurement {
        case,
        auth,
        variant: opts.variant,
        flow: opts.flow,
        reps: Vec::with_capacity(opts.reps),
        probe_overhead: None,
        probe_off_cpu_ns: Vec::new(),
        probe_full_cpu_ns: Vec::new(),
    };
    for rep in 0..opts.reps {
        let r = one_rep(&rig).with_context(|| format!("{}: rep {rep}", what()))?;
        m.reps.push(r);
        if opts.measure_probe_overhead {
            // Alternate the order so neither level always runs on a warmer cache.
            let levels = if rep % 2 == 0 {
                [ProbeLevel::Off, ProbeLevel::Full]
            } else {
                [ProbeLevel::Full, ProbeLevel::Off]
            };
            for level in levels {
                let cpu = outside_cpu(&rig, level)
                    .with_context(|| format!("{}: probe overhead rep {rep}", what()))?;
                match level {
                    ProbeLevel::Off => m.probe_off_cpu_ns.push(cpu),
                    _ => m.probe_full_cpu_ns.push(cpu),
                }
            }
        }
    }
    if opts.measure_probe_overhead {
        let off = median_of(m.probe_off_cpu_ns.iter().map(|&v| v as f64));
        let full = median_of(m.probe_full_cpu_ns.iter().map(|&v| v as f64));
        if let (Some(off), Some(full)) = (off, full) {
            m.probe_overhead = (off > 0.0).then(|| (full - off) / off);
        }
    }
    Ok(m)
}

/// The (case, authentication) pairs [`measure_all`] runs for a variant, in thesis
/// order (Table 3.3, server-authenticated then mutual per case). Cases whose curves
/// the local libcrypto lacks, or that the PKI does not hold, are left out.
pub fn planned_cases(store: &PkiStore, variant: Variant) -> Vec<(Case, AuthMode)> {
    let auths: &[AuthMode] = if variant == Variant::Anonymous {
        &[AuthMode::ServerAuth]
    } else {
        &[AuthMode::ServerAuth, AuthMode::Mutual]
    };
    let held: Vec<Case> = store.cases().copied().collect();
    Case::ALL
        .iter()
        .filter(|c| c.is_available() && held.contains(c))
        .flat_map(|c| auths.iter().map(move |a| (*c, *a)))
        .collect()
}

/// Measures every planned case ([`planned_cases`]); `progress(i, total, case, auth)` is
/// called before each.
pub fn measure_all(
    store: &PkiStore,
    opts: &RunnerOptions,
    mut progress: impl FnMut(usize, usize, &Case, AuthMode),
) -> Result<Vec<CaseMeasurement>> {
    let plan = planned_cases(store, opts.variant);
    let mut out = Vec::with_capacity(plan.len());
    for (i, (case, auth)) in plan.iter().enumerate() {
        progress(i, plan.len(), case, *auth);
        out.push(measure_case(store, *case, *auth, opts)?);
    }
    Ok(out)
}

/// The thesis' published T_PD_C and T_PD_S (ms) for a case (Tables 4.1 and 4.2).
pub fn published_totals(case: Case, auth: AuthMode) -> Option<(f64, f64)> {
    let rows = reference::processing_times().ok()?;
    let a = authentication(auth);
    rows.iter()
        .find(|r| {
            r.authentication == a
                && r.ca_cert.eq_ignore_ascii_case(case.ca.short())
                && r.leaf_cert.eq_ignore_ascii_case(case.leaf.short())
        })
        .map(|r| (r.client_ms, r.server_ms))
}

/// The thesis' Table 4.11 bytes for a case (incl. WTP acknowledgements and headers).
pub fn published_bytes(case: Case, auth: AuthMode) -> Option<u32> {
    reference::handshake_bytes()
        .ok()?
        .iter()
        .find(|r| {
            r.ca_cert.eq_ignore_ascii_case(case.ca.short())
                && r.leaf_cert.eq_ignore_ascii_case(case.leaf.short())
        })
        .map(|r| r.bytes(authentication(auth)))
}

fn model_message(m: Message) -> Option<processing::Message> {
    use processing::Message as P;
    Some(match m {
        Message::CH => P::ClientHello,
        Message::SH => P::ServerHello,
        Message::SCERT => P::ServerCertificate,
        Message::CERTREQ => P::CertificateRequest,
        Message::SHD => P::ServerHelloDone,
        Message::CCERT => P::ClientCertificate,
        Message::CKX => P::ClientKeyExchange,
        Message::CERTVRFY => P::CertificateVerify,
        Message::CCCS => P::ClientChangeCipherSpec,
        Message::CFIN => P::ClientFinished,
        Message::SCCS => P::ServerChangeCipherSpec,
        Message::SFIN => P::ServerFinished,
        Message::SKX => return None,
    })
}

fn model_operation(o: Operation) -> Option<processing::Operation> {
    use processing::Operation as P;
    Some(match o {
        Operation::ECDH => P::Ecdh,
        Operation::MS => P::MasterSecret,
        Operation::RSAENC => P::RsaEncrypt,
        Operation::RSADEC => P::RsaDecrypt,
        _ => return None,
    })
}

/// One column of a thesis percentage table: ours next to the published value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PercentComparison {
    /// The published header (`T_M_S_CCERT`, `T_M_S_ECDH/T_M_S_CKX`, `Others`).
    pub header: String,
    pub ours_pct: f64,
    pub published_pct: Option<f64>,
}

/// Our row of the thesis percentage table for this case and side (Tables 4.3-4.10),
/// beside the published one. Message shares use median CPU times; operation shares of
/// the key exchange use wall times (the probe times operations by wall clock only).
/// `None` for variants the thesis did not measure or when the key exchange time is 0.
pub fn percentage_comparison(m: &CaseMeasurement, side: Side) -> Option<Vec<PercentComparison>> {
    if !matches!(m.variant, Variant::Full) {
        return None;
    }
    let msgs = m.message_summary(side);
    let (mut cpu, mut wall) = (SideTimes::default(), SideTimes::default());
    for s in &msgs {
        if let Some(pm) = model_message(s.message) {
            cpu.messages_ms.insert(pm, s.median_cpu_ms);
            wall.messages_ms.insert(pm, s.median_wall_ms);
        }
        for (op, w, _) in &s.operations {
            if let (Some(po), Message::CKX) = (model_operation(*op), s.message) {
                wall.operations_ms.insert(po, *w);
            }
        }
    }
    // Messages the probe does not map (SKX) still count in the side's total.
    let unmapped: f64 = msgs
        .iter()
        .filter(|s| model_message(s.message).is_none())
        .map(|s| s.median_cpu_ms)
        .sum();
    if unmapped > 0.0 {
        *cpu.messages_ms
            .entry(processing::Message::ClientHello)
            .or_default() += unmapped;
    }
    let family = if m.case.leaf.is_rsa() {
        SuiteFamily::Rsa
    } else {
        SuiteFamily::EcdhEcdsa
    };
    let model_side = match side {
        Side::Client => wtlsperf_models::Side::Client,
        Side::Server => wtlsperf_models::Side::Server,
    };
    let table = PercentTable::for_case(m.authentication(), model_side, family);
    let by_cpu = percentage_row(table, &cpu)?;
    let by_wall = percentage_row(table, &wall)?;
    let published = table.load().ok();
    let keys = [m.case.ca.short(), m.case.leaf.short()];
    Some(
        percent_layout(table)
            .iter()
            .zip(by_cpu.iter().zip(&by_wall))
            .map(|(col, (c, w))| PercentComparison {
                header: c.header.clone(),
                ours_pct: match col {
                    PercentColumn::ShareOfKeyExchange(_) => w.percent,
                    _ => c.percent,
                },
                published_pct: published.as_ref().and_then(|t| t.value(&keys, &c.header)),
            })
            .collect(),
    )
}

/// The human-readable table of one case, laid out like thesis Tables 4.1-4.11.
pub fn render_case(m: &CaseMeasurement) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let suite = if m.case.leaf.is_rsa() {
        "RSA"
    } else {
        "ECDH_ECDSA"
    };
    let flow = match (m.auth, m.flow) {
        (AuthMode::Mutual, _) => "",
        (_, Flow::Thesis) => ", thesis flow (CertificateRequest + empty Certificate)",
        (_, Flow::Wtls) => ", WTLS flow (no CertificateRequest)",
    };
    let _ = writeln!(
        s,
        "== {} {} ({suite}, {}{flow}; {} reps, handshake kind {}) ==",
        m.case,
        m.auth.name(),
        m.variant.name(),
        m.reps.len(),
        m.reps.first().map(|r| kind_name(r.kind)).unwrap_or("-"),
    );
    let published = published_totals(m.case, m.auth);
    let _ = writeln!(
        s,
        "{:<7} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>10}",
        "side",
        "wall med",
        "wall p95",
        "CPU med",
        "CPU p95",
        "CPU outside",
        "thesis T_PD",
        "thesis/us"
    );
    for side in [Side::Client, Side::Server] {
        let (wall, cpu, outside, publ) = match side {
            Side::Client => (
                m.client_wall_ms(),
                m.client_cpu_ms(),
                stats::summarize(
                    &m.reps
                        .iter()
                        .map(|r| ms(r.client_cpu_ns))
                        .collect::<Vec<_>>(),
                ),
                published.map(|p| p.0),
            ),
            Side::Server => (
                m.server_wall_ms(),
                m.server_cpu_ms(),
                m.server_outside_cpu_ms(),
                published.map(|p| p.1),
            ),
        };
        let ratio = publ
            .filter(|_| med(cpu) > 0.0)
            .map(|p| format!("{:.0}x", p / med(cpu)))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            s,
            "{:<7} {:>10.4} {:>10.4} {:>10.4} {:>10.4} {:>12.4} {:>12} {:>10}",
            side.name(),
            med(wall),
            wall.map(|w| w.p95).unwrap_or(0.0),
            med(cpu),
            cpu.map(|c| c.p95).unwrap_or(0.0),
            med(outside),
            publ.map(|p| format!("{p:.2}"))
                .unwrap_or_else(|| "-".into()),
            ratio
        );
    }
    let _ = writeln!(s, "(ms; CPU = sum of the side's per-message thread CPU, T_PD_C / T_PD_S of Eq. 3.2/3.3, 3.5/3.6; \"CPU outside\" = thread CPU around the engine calls)");
    for side in [Side::Client, Side::Server] {
        let _ = writeln!(s, "-- {} messages --", side.name());
        let _ = writeln!(
            s,
            "  {:<9} {:>9} {:>7} {:>9} {:>9} {:>6}  operations (wall, % of message wall)",
            "message", "CPU ms", "CPU %", "wall ms", "wall p95", "bytes"
        );
        for ms_ in m.message_summary(side) {
            let ops = ms_
                .operations
                .iter()
                .map(|(op, w, pct)| format!("{} {:.4} ms {:.1}%", op.name(), w, pct))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                s,
                "  {:<9} {:>9.4} {:>7.2} {:>9.4} {:>9.4} {:>6}  {}",
                ms_.message.name(),
                ms_.median_cpu_ms,
                ms_.share_pct,
                ms_.median_wall_ms,
                ms_.p95_wall_ms,
                ms_.bytes,
                ops
            );
        }
        if let Some(cols) = percentage_comparison(m, side) {
            let line = cols
                .iter()
                .map(|c| {
                    format!(
                        "{} {:.2}% (thesis {})",
                        c.header,
                        c.ours_pct,
                        c.published_pct
                            .map(|p| format!("{p:.2}%"))
                            .unwrap_or_else(|| "-".into())
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            let _ = writeln!(s, "  thesis columns: {line}");
        }
    }
    let flights = m
        .flight_bytes()
        .iter()
        .map(|(from_client, b)| format!("{}{b}", if *from_client { "C>S " } else { "S>C " }))
        .collect::<Vec<_>>()
        .join(" | ");
    let (dc, ds) = m.datagrams();
    let (mc, ms2) = m.messages();
    let _ = writeln!(s, "flights (bytes per datagram): {flights}");
    let _ = writeln!(
        s,
        "datagrams C>S {dc}, S>C {ds}; messages client {mc}, server {ms2}; handshake bytes {} (thesis Table 4.11: {}, which adds WTP ACK packets and lower-layer headers)",
        m.handshake_bytes(),
        published_bytes(m.case, m.auth)
            .map(|b| b.to_string())
            .unwrap_or_else(|| "-".into())
    );
    match (m.bound_ratio(), m.bound_ms()) {
        (Some(r), Some(b)) => {
            let _ = writeln!(
                s,
                "bound: server CPU (probe off) {:.4} ms / raw public-key ops {:.4} ms = {:.3}{}",
                m.bound_cpu_ms().unwrap_or(f64::NAN),
                b,
                r,
                if r <= 1.10 {
                    ""
                } else {
                    "  (above the 1.10 target)"
                }
            );
            if let (Some(sym), Some(floor)) = (m.symmetric_floor_ms(), m.bound_floor_ratio()) {
                let _ = writeln!(
                    s,
                    "floor: the suite's mandatory symmetric work {sym:.4} ms, so no server can do better than {floor:.3}"
                );
            }
        }
        _ => {
            let _ = writeln!(s, "bound: not measured for this variant");
        }
    }
    match m.probe_overhead {
        Some(o) => {
            let _ = writeln!(
                s,
                "probe overhead: {:+.2}% (thread CPU per handshake, median: off {:.4} ms, full {:.4} ms)",
                100.0 * o,
                median_of(m.probe_off_cpu_ns.iter().map(|&v| ms(v))).unwrap_or(0.0),
                median_of(m.probe_full_cpu_ns.iter().map(|&v| ms(v))).unwrap_or(0.0)
            );
        }
        None => {
            let _ = writeln!(s, "probe overhead: not measured");
        }
    }
    s
}

/// The newline-delimited JSON records of one case: one per measured item (message,
/// operation, datagram, side total, bound) per rep, then the per-case summaries.
pub fn json_records(m: &CaseMeasurement) -> Vec<Value> {
    let case = m.case.to_string();
    let auth = m.auth.name();
    let variant = m.variant.name();
    let rec = |rep: Option<usize>,
               side: &str,
               message: &str,
               operation: Option<&str>,
               wall_ns: Option<u64>,
               cpu_ns: Option<u64>,
               bytes: Option<usize>| {
        json!({
            "case": case, "auth": auth, "variant": variant, "rep": rep, "side": side,
            "message": message, "operation": operation, "wall_ns": wall_ns,
            "cpu_ns": cpu_ns, "bytes": bytes,
        })
    };
    let mut out = Vec::new();
    for (i, r) in m.reps.iter().enumerate() {
        for (side, p, outside) in [
            (Side::Client, &r.client, r.client_cpu_ns),
            (Side::Server, &r.server, r.server_cpu_ns),
        ] {
            let name = side.name();
            for t in &p.messages {
                out.push(rec(
                    Some(i),
                    name,
                    t.message.name(),
                    None,
                    Some(t.wall_ns),
                    Some(t.cpu_ns),
                    Some(t.bytes),
                ));
            }
            for o in &p.operations {
                out.push(rec(
                    Some(i),
                    name,
                    o.message.name(),
                    Some(o.operation.name()),
                    Some(o.wall_ns),
                    None,
                    None,
                ));
            }
            for d in p.datagrams.iter().filter(|d| d.sent) {
                out.push(rec(
                    Some(i),
                    name,
                    "DATAGRAM",
                    None,
                    None,
                    None,
                    Some(d.bytes),
                ));
            }
            let mut total = rec(
                Some(i),
                name,
                "TOTAL",
                None,
                Some(p.total_wall_ns()),
                Some(p.total_cpu_ns()),
                Some(p.bytes_sent()),
            );
            total["cpu_outside_ns"] = json!(outside);
            out.push(total);
        }
        if let Some(b) = r.pk_bound_ns {
            out.push(rec(Some(i), "server", "BOUND", None, None, Some(b), None));
        }
        let mut jobs = rec(Some(i), "server", "JOBS", None, None, None, None);
        jobs["jobs_cpu_ns"] = json!(r.server_jobs_ns);
        jobs["handshake_wall_ns"] = json!(r.wall_ns);
        out.push(jobs);
    }
    let published = published_totals(m.case, m.auth);
    for side in [Side::Client, Side::Server] {
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
        let mut r = rec(None, side.name(), "TOTAL", None, None, None, None);
        r["summary"] = json!(true);
        r["cpu_ms"] = json!(cpu);
        r["wall_ms"] = json!(wall);
        r["published_ms"] = json!(publ);
        r["ratio_published_over_ours"] =
            json!(publ.filter(|_| med(cpu) > 0.0).map(|p| p / med(cpu)));
        r["messages"] = json!(m.message_summary(side));
        r["thesis_percentages"] = json!(percentage_comparison(m, side));
        if side == Side::Server {
            r["bound_ms"] = json!(m.bound_ms());
            r["bound_ratio"] = json!(m.bound_ratio());
            r["bound_cpu_ms"] = json!(m.bound_cpu_ms());
            r["symmetric_floor_ms"] = json!(m.symmetric_floor_ms());
            r["bound_floor_ratio"] = json!(m.bound_floor_ratio());
            r["cpu_outside_ms"] = json!(m.server_outside_cpu_ms());
        }
        out.push(r);
    }
    let (dc, ds) = m.datagrams();
    let (mc, msv) = m.messages();
    let mut r = rec(
        None,
        "both",
        "HANDSHAKE",
        None,
        None,
        None,
        Some(m.handshake_bytes()),
    );
    r["summary"] = json!(true);
    r["datagrams"] = json!({"client_to_server": dc, "server_to_client": ds});
    r["message_count"] = json!({"client": mc, "server": msv});
    r["flights"] = json!(m
        .flight_bytes()
        .iter()
        .map(|(c, b)| json!({"from_client": c, "bytes": b}))
        .collect::<Vec<_>>());
    r["published_bytes_incl_ack"] = json!(published_bytes(m.case, m.auth));
    r["probe_overhead"] = json!(m.probe_overhead);
    r["probe_off_cpu_ns"] = json!(m.probe_off_cpu_ns);
    r["probe_full_cpu_ns"] = json!(m.probe_full_cpu_ns);
    out.push(r);
    out
}

/// `--auth` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthArg {
    Server,
    Mutual,
}

/// `--packing` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PackingArg {
    /// One datagram per flight.
    Flight,
    /// One record per datagram (the thesis' queue-model unit).
    Message,
}

/// Command-line arguments of `wtlsperf handshake`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The CA/leaf case, e.g. 256p/224p or rsa3072/rsa1024.
    #[arg(long, required_unless_present = "all")]
    pub case: Option<Case>,
    /// Server-authenticated or mutual.
    #[arg(long, value_enum, required_unless_present = "all")]
    pub auth: Option<AuthArg>,
    /// Measured handshakes per case.
    #[arg(long, default_value_t = 15)]
    pub reps: usize,
    /// Unmeasured handshakes before them.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Every case of thesis Table 3.3, server-authenticated and mutual.
    #[arg(long)]
    pub all: bool,
    /// Write newline-delimited JSON records to FILE, or to stdout with `-` (the
    /// tables then go to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// PKI directory (issued on first use: the in-memory runner serves no one else).
    #[arg(long, default_value = "pki")]
    pub pki: PathBuf,
    #[arg(long, value_enum, default_value = "thesis")]
    pub flow: Flow,
    #[arg(long, value_enum, default_value = "flight")]
    pub packing: PackingArg,
    #[arg(long, value_enum, default_value = "full")]
    pub variant: Variant,
    /// Skip the probe-overhead measurement (two more handshakes per rep).
    #[arg(long)]
    pub no_probe_overhead: bool,
    /// Skip the raw public-key bound.
    #[arg(long)]
    pub no_bound: bool,
}

pub fn run(args: Args) -> Result<()> {
    let started = Instant::now();
    let store = PkiStore::load_or_init(&args.pki)
        .with_context(|| format!("PKI in {}", args.pki.display()))?;
    let opts = RunnerOptions {
        reps: args.reps,
        warmup: args.warmup,
        flow: args.flow,
        packing: match args.packing {
            PackingArg::Flight => Packing::FlightPerDatagram,
            PackingArg::Message => Packing::MessagePerDatagram,
        },
        variant: args.variant,
        measure_bound: !args.no_bound,
        measure_probe_overhead: !args.no_probe_overhead,
    };
    let to_stdout = args.json.as_deref() == Some(std::path::Path::new("-"));
    let mut json: Option<Box<dyn Write>> = match &args.json {
        None => None,
        Some(_) if to_stdout => Some(Box::new(BufWriter::new(std::io::stdout()))),
        Some(p) => Some(Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("creating {}", p.display()))?,
        ))),
    };
    let print = |text: &str| {
        if to_stdout {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    };
    let plan: Vec<(Case, AuthMode)> = if args.all {
        for c in Case::ALL.iter().filter(|c| !c.is_available()) {
            print(&format!(
                "note: skipping {c}: {}\n",
                c.ca.unavailability()
                    .or(c.leaf.unavailability())
                    .unwrap_or("not in the PKI")
            ));
        }
        planned_cases(&store, opts.variant)
    } else {
        let case = args
            .case
            .ok_or_else(|| anyhow!("--case is required without --all"))?;
        let auth = match args.auth {
            Some(AuthArg::Mutual) => AuthMode::Mutual,
            Some(AuthArg::Server) | None => AuthMode::ServerAuth,
        };
        if !case.is_available() {
            bail!("case {case} needs a curve the local libcrypto lacks");
        }
        vec![(case, auth)]
    };
    let mut results = Vec::new();
    for (i, (case, auth)) in plan.iter().enumerate() {
        if plan.len() > 1 {
            eprintln!("[{}/{}] {case} {}", i + 1, plan.len(), auth.name());
        }
        let m = measure_case(&store, *case, *auth, &opts)?;
        print(&render_case(&m));
        print("\n");
        if let Some(w) = json.as_mut() {
            for r in json_records(&m) {
                serde_json::to_writer(&mut *w, &r)?;
                w.write_all(b"\n")?;
            }
        }
        results.push(m);
    }
    if results.len() > 1 {
        print(&render_overview(&results));
    }
    if let Some(mut w) = json {
        w.flush()?;
    }
    print(&format!(
        "run took {:.1} s\n",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// One line per case: server CPU, the thesis value, the bound and the probe overhead.
pub fn render_overview(results: &[CaseMeasurement]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<18} {:<7} {:>10} {:>10} {:>11} {:>9} {:>8} {:>9} {:>8}",
        "case",
        "auth",
        "client ms",
        "server ms",
        "thesis S ms",
        "raw PK ms",
        "bound",
        "floor",
        "probe %"
    );
    let mut worst: Option<(f64, String)> = None;
    for m in results {
        let ratio = m.bound_ratio();
        if let Some(r) = ratio {
            if worst.as_ref().is_none_or(|(w, _)| r > *w) {
                worst = Some((r, format!("{} {}", m.case, m.auth.name())));
            }
        }
        let _ = writeln!(
            s,
            "{:<18} {:<7} {:>10.4} {:>10.4} {:>11} {:>9} {:>8} {:>9} {:>8}",
            m.case.to_string(),
            m.auth.name(),
            med(m.client_cpu_ms()),
            med(m.server_cpu_ms()),
            published_totals(m.case, m.auth)
                .map(|p| format!("{:.2}", p.1))
                .unwrap_or_else(|| "-".into()),
            m.bound_ms()
                .map(|b| format!("{b:.4}"))
                .unwrap_or_else(|| "-".into()),
            ratio
                .map(|r| format!("{r:.3}"))
                .unwrap_or_else(|| "-".into()),
            m.bound_floor_ratio()
                .map(|r| format!("{r:.3}"))
                .unwrap_or_else(|| "-".into()),
            m.probe_overhead
                .map(|o| format!("{:+.2}", 100.0 * o))
                .unwrap_or_else(|| "-".into()),
        );
    }
    if let Some((w, which)) = worst {
        let _ = writeln!(s, "worst bound ratio: {w:.3} ({which})");
    }
    let met = results
        .iter()
        .filter(|m| m.bound_ratio().is_some_and(|r| r <= 1.10))
        .count();
    let reachable = results
        .iter()
        .filter(|m| m.bound_floor_ratio().is_some_and(|r| r <= 1.10))
        .count();
    let measured = results.iter().filter(|m| m.bound_ratio().is_some()).count();
    let _ = writeln!(
        s,
        "bound <= 1.10 in {met} of {measured} cases; floor (raw PK + the suite's mandatory symmetric work) <= 1.10 in {reachable}"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_summaries_print_as_zero() {
        assert_eq!(med(stats::summarize(&[3.0, 1.0, 2.0, 10.0])), 2.5);
        assert_eq!(med(stats::summarize(&[])), 0.0);
    }

    #[test]
    fn thesis_senders() {
        let client: Vec<_> = Message::ALL
            .iter()
            .filter(|m| sent_by_client(**m))
            .map(|m| m.name())
            .collect();
        assert_eq!(client, ["CH", "CCERT", "CKX", "CERTVRFY", "CCCS", "CFIN"]);
        // The model crate agrees for every message it knows.
        for m in Message::ALL {
            if let Some(pm) = model_message(m) {
                assert_eq!(pm.sent_by_client(), sent_by_client(m), "{}", m.name());
            }
        }
    }

    #[test]
    fn published_rows_are_found_for_every_case() {
        for case in Case::ALL {
            for auth in [AuthMode::ServerAuth, AuthMode::Mutual] {
                assert!(published_totals(case, auth).is_some(), "{case}");
                assert!(published_bytes(case, auth).is_some(), "{case}");
            }
        }
        // Table 4.1, first row: 160p/160p mutual, 745.65 ms client, 10.57 ms server.
        assert_eq!(
            published_totals(Case::ALL[0], AuthMode::Mutual),
            Some((745.65, 10.57))
        );
    }
}
