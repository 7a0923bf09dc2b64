//! WTLS's successors on the same bench: DTLS 1.2 (OpenSSL) and EDHOC (lakers, RFC 9528)
//! over CoAP, run in process and over UDP through the emulated bearers, plus the peer
//! performance anchors (OpenSSL TLS 1.2 and DTLS 1.2, rustls TLS 1.2 and 1.3).
//!
//! Every protocol is wrapped as a datagram [`Endpoint`]: a state machine that takes
//! datagrams and timer expiries and gives datagrams back. One in-memory driver
//! ([`run_in_memory`]) and one UDP driver ([`udp`]) then serve every protocol, so the
//! measured quantities (bytes per flight, datagrams, round trips, client and server
//! thread CPU per handshake) are taken the same way for each, as the WTLS runner takes
//! them for WTLS.
//!
//! Suites, chosen as a constrained deployment would (see [`Suite`]): DTLS 1.2
//! ECDHE-ECDSA on P-256 with AES-128-CCM-8 and a small certificate (RFC 7925's mandatory
//! certificate-mode suite; OpenSSL 3.0 has no raw public keys), DTLS 1.2 PSK with
//! AES-128-CCM-8 (RFC 7925's mandatory PSK suite, the lightest case), and EDHOC method 3
//! (static DH both ways, the only method lakers implements, and the one with the
//! smallest messages) with cipher suite 2 (AES-CCM-16-64-128, SHA-256, P-256).

pub mod bearer_jobs;
pub mod bridge_tmp;
pub mod coap_retransmit;
pub mod compare;
pub mod dtls;
pub mod edhoc;
pub mod model;
pub mod peers;
pub mod pipe;
pub mod udp;
pub mod wtls_client;

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use wtlsperf_models::stats::median;
use wtlsperf_models::transmission::Flight;

use crate::setup::thread_cpu_ns;

/// The protocols compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Protocol {
    /// WAP WTLS 1.0, our engine.
    Wtls,
    /// DTLS 1.2 through OpenSSL.
    Dtls12,
    /// EDHOC (RFC 9528) through lakers, carried by CoAP.
    Edhoc,
}

impl Protocol {
    /// The CSV value (`wtls`, `dtls1.2`, `edhoc`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Wtls => "wtls",
            Protocol::Dtls12 => "dtls1.2",
            Protocol::Edhoc => "edhoc",
        }
    }
}

/// A modern protocol's handshake configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suite {
    /// DTLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8 on P-256 with a small certificate
    /// chain (one CA); `mutual` adds the client's certificate and CertificateVerify.
    DtlsEcdheEcdsa { mutual: bool },
    /// DTLS 1.2 TLS_PSK_WITH_AES_128_CCM_8: no public-key operation at all.
    DtlsPsk,
    /// EDHOC method 3 (StatStat), cipher suite 2, credentials by reference (kid), over
    /// CoAP confirmable POSTs to /.well-known/edhoc (RFC 9528 Appendix A.2).
    EdhocMethod3Suite2,
}

impl Suite {
    /// Every suite, in report order.
    pub const ALL: [Suite; 4] = [
        Suite::DtlsEcdheEcdsa { mutual: false },
        Suite::DtlsEcdheEcdsa { mutual: true },
        Suite::DtlsPsk,
        Suite::EdhocMethod3Suite2,
    ];

    /// Which protocol runs it.
    pub fn protocol(self) -> Protocol {
        match self {
            Suite::DtlsEcdheEcdsa { .. } | Suite::DtlsPsk => Protocol::Dtls12,
            Suite::EdhocMethod3Suite2 => Protocol::Edhoc,
        }
    }

    /// Name for tables, CSV and the command line.
    pub fn name(self) -> &'static str {
        match self {
            Suite::DtlsEcdheEcdsa { mutual: false } => "ecdhe-ecdsa-p256-ccm8",
            Suite::DtlsEcdheEcdsa { mutual: true } => "ecdhe-ecdsa-p256-ccm8-mutual",
            Suite::DtlsPsk => "psk-ccm8",
            Suite::EdhocMethod3Suite2 => "method3-suite2",
        }
    }

    /// Parses [`Suite::name`]; the error lists the names.
    pub fn parse(name: &str) -> anyhow::Result<Suite> {
        Suite::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = Suite::ALL.iter().map(|s| s.name()).collect();
                anyhow::anyhow!("unknown suite {name:?}; known: {}", known.join(", "))
            })
    }

    /// Is the client authenticated too?
    pub fn mutual(self) -> bool {
        match self {
            Suite::DtlsEcdheEcdsa { mutual } => mutual,
            Suite::DtlsPsk | Suite::EdhocMethod3Suite2 => true,
        }
    }

    /// The public-key operations (P-256) one side performs in one handshake: what a
    /// device profile prices, and what the raw-operation bound times on this machine.
    pub fn pk_ops(self, client: bool) -> PkOps {
        match (self, client) {
            (Suite::DtlsPsk, _) => PkOps::default(),
            // Ephemeral key and ECDH each side; the server signs its ServerKeyExchange,
            // the client verifies the server's certificate (CA signature) and that
            // signature. Mutual: the client signs CertificateVerify, the server verifies
            // the client's certificate and CertificateVerify.
            (Suite::DtlsEcdheEcdsa { mutual }, true) => PkOps {
                keygen: 1,
                ecdh: 1,
                sign: u32::from(mutual),
                verify: 2,
            },
            (Suite::DtlsEcdheEcdsa { mutual }, false) => PkOps {
                keygen: 1,
                ecdh: 1,
                sign: 1,
                verify: if mutual { 2 } else { 0 },
            },
            // Method 3: each side one ephemeral key and three ECDH (G_XY, then G_RX and
            // G_IY from its static key with the peer's ephemeral and the other way).
            (Suite::EdhocMethod3Suite2, _) => PkOps {
                keygen: 1,
                ecdh: 3,
                sign: 0,
                verify: 0,
            },
        }
    }
}

/// Counts of P-256 public-key operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct PkOps {
    /// Key-pair generations.
    pub keygen: u32,
    /// ECDH shared-secret computations.
    pub ecdh: u32,
    /// ECDSA signatures.
    pub sign: u32,
    /// ECDSA verifications.
    pub verify: u32,
}

impl PkOps {
    /// No operation at all (PSK).
    pub fn is_empty(self) -> bool {
        self == PkOps::default()
    }
}

/// What a datagram endpoint does next.
pub trait Endpoint {
    /// Datagrams to send at the start (the client's first flight; nothing for a server).
    fn start(&mut self, now: Duration) -> anyhow::Result<Vec<Vec<u8>>>;
    /// Handles one received datagram; returns datagrams to send.
    fn on_datagram(&mut self, datagram: &[u8], now: Duration) -> anyhow::Result<Vec<Vec<u8>>>;
    /// When the endpoint wants [`Endpoint::on_timer`] called, if at all.
    fn next_timeout(&mut self, now: Duration) -> Option<Duration>;
    /// A retransmission timer expired; returns datagrams to (re)send.
    fn on_timer(&mut self, now: Duration) -> anyhow::Result<Vec<Vec<u8>>>;
    /// The handshake completed on this side (keys agreed and the peer authenticated).
    fn is_complete(&self) -> bool;
    /// Datagrams this side sent again because a timer expired.
    fn retransmissions(&self) -> u32;
    /// The flight just computed leaves `by` later than computed (an emulated device's
    /// processing time): its retransmission timer starts when it is sent, not before.
    fn delay_timers(&mut self, by: Duration);
}

/// One datagram of a handshake as the client saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Logged {
    /// Sent by the client (up) or received by it (down).
    pub up: bool,
    /// UDP payload bytes.
    pub bytes: usize,
}

/// Groups a datagram log into flights (runs in one direction), each one traversal.
pub fn flights_of(log: &[Logged]) -> Vec<Flight> {
    crate::bearer_cmd::group_flights(log.iter().map(|d| (d.up, d.bytes)))
}

/// One in-memory handshake: what crossed and what each side's thread spent.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRun {
    /// Every datagram, in order.
    pub log: Vec<Logged>,
    /// Client thread CPU around its endpoint calls (ns).
    pub client_cpu_ns: u64,
    /// Server thread CPU around its endpoint calls, including its construction (ns).
    pub server_cpu_ns: u64,
    /// Server thread CPU per received datagram (ns): the gateway's jobs.
    pub server_jobs_ns: Vec<u64>,
    /// Wall time of the whole exchange (ns).
    pub wall_ns: u64,
}

impl MemoryRun {
    /// Flights of the exchange.
    pub fn flights(&self) -> Vec<Flight> {
        flights_of(&self.log)
    }

    /// Total payload bytes both ways.
    pub fn bytes(&self) -> usize {
        self.log.iter().map(|d| d.bytes).sum()
    }

    /// Round trips: flights / 2, the last lone flight counting as half.
    pub fn round_trips(&self) -> f64 {
        self.flights().len() as f64 / 2.0
    }
}

/// Most flights an in-memory exchange may take: every handshake here needs at most 6.
const MAX_FLIGHTS: usize = 16;

/// Runs one handshake in memory, both endpoints alternately on this thread, with no
/// loss (timers never fire). `make_server` is timed as server work: a responder that
/// draws its ephemeral key on construction (lakers) pays it there.
pub fn run_in_memory<C: Endpoint, S: Endpoint>(
    mut client: C,
    make_server: impl FnOnce() -> anyhow::Result<S>,
) -> anyhow::Result<MemoryRun> {
    let started = Instant::now();
    let now = Duration::ZERO;
    let t0 = thread_cpu_ns();
    let mut server = make_server()?;
    let mut server_cpu_ns = thread_cpu_ns().saturating_sub(t0);
    let t0 = thread_cpu_ns();
    let mut to_server = client.start(now).context("client start")?;
    let mut client_cpu_ns = thread_cpu_ns().saturating_sub(t0);
    let (mut log, mut server_jobs_ns) = (Vec::new(), Vec::new());
    for _ in 0..MAX_FLIGHTS {
        if to_server.is_empty() {
            break;
        }
        let mut to_client = Vec::new();
        for d in to_server.drain(..) {
            log.push(Logged {
                up: true,
                bytes: d.len(),
            });
            let t0 = thread_cpu_ns();
            let out = server.on_datagram(&d, now).context("server")?;
            let dt = thread_cpu_ns().saturating_sub(t0);
            server_cpu_ns += dt;
            server_jobs_ns.push(dt);
            to_client.extend(out);
        }
        for d in to_client {
            log.push(Logged {
                up: false,
                bytes: d.len(),
            });
            let t0 = thread_cpu_ns();
            to_server.extend(client.on_datagram(&d, now).context("client")?);
            client_cpu_ns += thread_cpu_ns().saturating_sub(t0);
        }
    }
    if !(client.is_complete() && server.is_complete()) {
        bail!(
            "handshake did not complete in memory (client complete: {}, server complete: {})",
            client.is_complete(),
            server.is_complete()
        );
    }
    Ok(MemoryRun {
        log,
        client_cpu_ns,
        server_cpu_ns,
        server_jobs_ns,
        wall_ns: started.elapsed().as_nanos() as u64,
    })
}

/// Medians over repeated in-memory handshakes of one suite, with the raw public-key
/// operations of the server timed after every handshake (interleaved, so drift in the
/// machine's speed affects both alike).
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteMeasurement {
    /// Which suite.
    pub suite: Suite,
    /// One representative exchange (every rep has the same shape).
    pub shape: MemoryRun,
    /// Median client thread CPU per handshake (µs).
    pub client_cpu_us: f64,
    /// Median server thread CPU per handshake (µs).
    pub server_cpu_us: f64,
    /// Median thread CPU of the server's raw public-key operations (µs), `None` for PSK.
    pub server_pk_us: Option<f64>,
    /// Median thread CPU of the client's raw public-key operations (µs).
    pub client_pk_us: Option<f64>,
    /// Handshakes measured.
    pub reps: usize,
}

impl SuiteMeasurement {
    /// Server CPU over its raw public-key work (>= 1 for a sound measurement).
    pub fn bound_ratio(&self) -> Option<f64> {
        self.server_pk_us
            .filter(|&b| b > 0.0)
            .map(|b| self.server_cpu_us / b)
    }

    /// Gateway handshakes per second per core: 1 / server CPU.
    pub fn handshakes_per_core_s(&self) -> f64 {
        1e6 / self.server_cpu_us
    }
}

/// Runs `reps` handshakes of a suite in memory (after `warmup` unmeasured ones).
pub fn measure_suite(suite: Suite, reps: usize, warmup: usize) -> anyhow::Result<SuiteMeasurement> {
    if reps == 0 {
        bail!("at least one rep is needed");
    }
    let bench = SuiteBench::new(suite)?;
    for _ in 0..warmup {
        bench.handshake()?;
    }
    let (mut client, mut server, mut spk, mut cpk) = (vec![], vec![], vec![], vec![]);
    let mut shape = None;
    for _ in 0..reps {
        let run = bench.handshake()?;
        client.push(run.client_cpu_ns as f64 / 1e3);
        server.push(run.server_cpu_ns as f64 / 1e3);
        if let Some((s, c)) = bench.raw_ops()? {
            spk.push(s as f64 / 1e3);
            cpk.push(c as f64 / 1e3);
        }
        shape.get_or_insert(run);
    }
    let shape = shape.ok_or_else(|| anyhow::anyhow!("no handshake ran"))?;
    Ok(SuiteMeasurement {
        suite,
        shape,
        client_cpu_us: median(&client).unwrap_or(f64::NAN),
        server_cpu_us: median(&server).unwrap_or(f64::NAN),
        server_pk_us: median(&spk),
        client_pk_us: median(&cpk),
        reps,
    })
}

/// A suite's configuration, built once for all its handshakes.
enum SuiteBench {
    Dtls(dtls::DtlsConfig),
    Edhoc(Box<edhoc::EdhocConfig>),
}

impl SuiteBench {
    fn new(suite: Suite) -> anyhow::Result<SuiteBench> {
        Ok(match suite {
            Suite::DtlsEcdheEcdsa { .. } | Suite::DtlsPsk => {
                SuiteBench::Dtls(dtls::DtlsConfig::new(suite)?)
            }
            Suite::EdhocMethod3Suite2 => SuiteBench::Edhoc(Box::new(edhoc::EdhocConfig::new()?)),
        })
    }

    fn handshake(&self) -> anyhow::Result<MemoryRun> {
        match self {
            SuiteBench::Dtls(c) => run_in_memory(c.client()?, || c.server()),
            SuiteBench::Edhoc(c) => run_in_memory(c.client(0)?, || c.server()),
        }
    }

    /// Server and client raw public-key time (ns) of one handshake, `None` for PSK.
    fn raw_ops(&self) -> anyhow::Result<Option<(u64, u64)>> {
        match self {
            SuiteBench::Dtls(c) => c.raw_ops(),
            SuiteBench::Edhoc(c) => c.raw_ops().map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flights_group_consecutive_datagrams() {
        let log = [(true, 10), (false, 20), (false, 30), (true, 5)]
            .map(|(up, bytes)| Logged { up, bytes });
        let f = flights_of(&log);
        assert_eq!(f.len(), 3);
        assert_eq!((f[1].bytes, f[1].datagrams), (50, 2));
    }

    #[test]
    fn suite_names_round_trip_and_unknown_names_are_listed() {
        for s in Suite::ALL {
            assert_eq!(Suite::parse(s.name()).unwrap(), s);
        }
        let e = Suite::parse("rsa").unwrap_err().to_string();
        assert!(e.contains("psk-ccm8"), "{e}");
    }

    #[test]
    fn psk_has_no_public_key_operation_and_edhoc_is_symmetric() {
        assert!(Suite::DtlsPsk.pk_ops(false).is_empty());
        let e = Suite::EdhocMethod3Suite2;
        assert_eq!(e.pk_ops(true), e.pk_ops(false));
    }
}
