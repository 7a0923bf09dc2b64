//! WTLS's successors on the same bench: DTLS 1.2 (OpenSSL) and EDHOC (lakers, RFC 9528)
//! over CoAP, run in process and over UDP through the emulated bearers, plus the peer
//! performance anchors (OpenSSL TLS 1.2 and DTLS 1.2, rustls TLS 1.2 and 1.3).
//!
//! Every protocol implements the spine's sans-IO [`Handshake`] (WTLS in its engine,
//! DTLS and EDHOC in [`dtls`] and [`edhoc`]). One in-memory driver (the spine's
//! [`Pair`], through [`run_in_memory`] here) and one UDP driver ([`udp`]) then serve
//! every protocol, so the measured quantities (bytes per flight, datagrams, round
//! trips, client and server thread CPU per handshake) are taken the same way for each,
//! as the WTLS runner takes them for WTLS.
//!
//! Suites, chosen as a constrained deployment would (see [`Suite`]): DTLS 1.2
//! ECDHE-ECDSA on P-256 with AES-128-CCM-8 and a small certificate (RFC 7925's mandatory
//! certificate-mode suite; OpenSSL 3.0 has no raw public keys), DTLS 1.2 PSK with
//! AES-128-CCM-8 (RFC 7925's mandatory PSK suite, the lightest case), and EDHOC method 3
//! (static DH both ways, the only method lakers implements, and the one with the
//! smallest messages) with cipher suite 2 (AES-CCM-16-64-128, SHA-256, P-256).

pub mod coap_retransmit;
pub mod compare;
pub mod dtls;
#[cfg(feature = "dtls13")]
pub mod dtls13;
#[cfg(feature = "dtls13")]
mod dtls13_wolf;
pub mod edhoc;
pub mod key_shares;
/// The bench's ML-DSA chains (issued through aws-lc-rs, hence the `ml-dsa` feature, which
/// the protocols that sign with ML-DSA turn on).
#[cfg(feature = "ml-dsa")]
pub mod ml_dsa;
pub mod model;
#[cfg(feature = "dtls13")]
pub mod model_dtls13;
#[cfg(feature = "dtls13")]
pub mod peer_hybrid;
pub mod peers;
pub mod pipe;
pub mod udp;

use std::time::Instant;

use anyhow::{anyhow, bail};
use wtlsperf_models::stats::median;
use wtlsperf_models::transmission::Flight;
use wtlsperf_spine::pair::{Direction, Ended, Fate};
use wtlsperf_spine::{Handshake, Now, Pair, ProtocolId};

use crate::setup::{self, thread_cpu_ns};
use crate::wire_log::{self, flights_of, WireDatagram};

/// DTLS 1.2's identity on the bench (its registry entry: [`crate::registry::dtls12`]).
pub const DTLS12: ProtocolId = ProtocolId::new(1, "dtls1.2");
/// EDHOC's identity on the bench ([`crate::registry::edhoc`]).
pub const EDHOC: ProtocolId = ProtocolId::new(2, "edhoc");
/// DTLS 1.3's identity on the bench, in every build: without the `dtls13` feature its
/// registry entry says it is not available.
pub const DTLS13: ProtocolId = ProtocolId::new(3, "dtls1.3");

/// What the post-quantum peer anchor measured: rustls TLS 1.3 with X25519MLKEM768
/// through aws-lc-rs ([`peer_hybrid`], with the `dtls13` feature).
#[derive(Debug, Clone, PartialEq)]
pub struct HybridAnchor {
    /// Median server thread CPU per handshake (us).
    pub server_cpu_us: f64,
    /// Median thread CPU of the server's raw public-key work of one handshake (us).
    pub raw_us: f64,
    /// The key_exchange bytes of the ClientHello's and the ServerHello's key share.
    pub client_share_bytes: usize,
    pub server_share_bytes: usize,
    pub reps: usize,
}

impl HybridAnchor {
    /// Server CPU over its raw public-key work.
    pub fn bound_ratio(&self) -> f64 {
        self.server_cpu_us / self.raw_us
    }
}

/// The post-quantum peer anchor and wolfSSL's DTLS 1.3 X25519MLKEM768 key shares
/// (client, server), `reps` handshakes after `warmup`; `None` in a build without them
/// (no `dtls13` feature).
pub fn post_quantum_anchor(
    reps: usize,
    warmup: usize,
) -> Option<anyhow::Result<(HybridAnchor, (usize, usize))>> {
    #[cfg(feature = "dtls13")]
    return Some(
        peer_hybrid::measure(reps, warmup).and_then(|a| Ok((a, peer_hybrid::wolfssl_shares()?))),
    );
    #[cfg(not(feature = "dtls13"))]
    {
        let _ = (reps, warmup);
        None
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
    pub fn protocol(self) -> ProtocolId {
        match self {
            Suite::DtlsEcdheEcdsa { .. } | Suite::DtlsPsk => DTLS12,
            Suite::EdhocMethod3Suite2 => EDHOC,
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

    /// Whether the suite's session keys survive a later theft of a long-term key.
    pub fn forward_secrecy(self) -> ForwardSecrecy {
        match self {
            Suite::DtlsEcdheEcdsa { .. } | Suite::DtlsPsk => dtls::forward_secrecy(self),
            Suite::EdhocMethod3Suite2 => edhoc::FORWARD_SECRECY,
        }
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

/// Whether a handshake's session keys stay secret when a long-term key is stolen later:
/// stated beside every comparison of WTLS with DTLS, whose ECDHE pays for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardSecrecy {
    /// The configuration has it.
    pub holds: bool,
    /// Why, in a clause (`ECDH with the server's certified static key`).
    pub why: &'static str,
}

impl ForwardSecrecy {
    /// `none (ECDH with the server's certified static key)`.
    pub fn text(self) -> String {
        format!("{} ({})", if self.holds { "yes" } else { "none" }, self.why)
    }
}

/// A protocol's handshake retransmission schedule as the bench runs it, with the
/// standard it follows: the protocols table's timer columns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetransmissionTimers {
    /// First timer (s); the lower end of its draw where the standard draws it (CoAP).
    pub initial_s: f64,
    /// Upper end of the first timer's draw; `initial_s` where it is fixed.
    pub initial_max_s: f64,
    /// What each retransmission multiplies the timer by.
    pub backoff: f64,
    /// Largest timer (s), where the implementation caps or ends on one.
    pub ceiling_s: Option<f64>,
    /// Retransmissions of one flight before the handshake fails.
    pub max_retransmissions: u32,
    /// The standard's section the values follow, and what the implementation adds.
    pub source: &'static str,
}

impl RetransmissionTimers {
    /// The same schedule with another fixed first timer and back-off (the loss curves'
    /// equal-timer variant); the limit and the ceiling stay the protocol's.
    pub fn with_initial(self, initial_s: f64, backoff: f64) -> RetransmissionTimers {
        RetransmissionTimers {
            initial_s,
            initial_max_s: initial_s,
            backoff,
            ..self
        }
    }
}

/// One in-memory handshake: what crossed and what each side's thread spent.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRun {
    /// Every datagram, in order.
    pub log: Vec<WireDatagram>,
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
        wire_log::bytes_of(&self.log)
    }

    /// Round trips: flights / 2, the last lone flight counting as half.
    pub fn round_trips(&self) -> f64 {
        self.flights().len() as f64 / 2.0
    }
}

/// Runs one handshake in memory through the spine's [`Pair`], both sides alternately
/// on this thread, each call timed by the thread's CPU clock. No loss, so no timer is
/// due before the handshake completes. `make_server` is timed as server work: a
/// responder that draws its ephemeral key on construction (lakers) pays it there.
pub fn run_in_memory<C: Handshake, S: Handshake>(
    client: C,
    make_server: impl FnOnce() -> anyhow::Result<S>,
) -> anyhow::Result<MemoryRun> {
    let started = Instant::now();
    let t0 = thread_cpu_ns();
    let server = make_server()?;
    let construction_ns = thread_cpu_ns().saturating_sub(t0);
    let mut pair = Pair::new(client, server, setup::now()).with_clock(thread_cpu_ns);
    let ended = pair.handshake();
    if ended != Ended::Complete {
        bail!(
            "handshake did not complete in memory ({ended:?}; client: {:?}, server: {:?})",
            pair.client.status(),
            pair.server.status()
        );
    }
    let log = wire_log::of_pair(&pair.log);
    Ok(MemoryRun {
        log,
        client_cpu_ns: pair.cpu.client_ns,
        server_cpu_ns: construction_ns + pair.cpu.server_ns,
        server_jobs_ns: std::mem::take(&mut pair.cpu.server_jobs_ns),
        wall_ns: started.elapsed().as_nanos() as u64,
    })
}

/// Every datagram of one completed lossless handshake, in sending order.
pub fn exchange<C: Handshake, S: Handshake>(
    client: C,
    server: S,
    now: Now,
) -> anyhow::Result<Vec<(Direction, Vec<u8>)>> {
    let mut pair = Pair::new(client, server, now);
    let ended = pair.handshake();
    if ended != Ended::Complete {
        bail!("the handshake did not complete in memory ({ended:?})");
    }
    let (mut up, mut down) = (pair.client_sent.iter(), pair.server_sent.iter());
    pair.log
        .iter()
        .map(|l| {
            let d = match l.direction {
                Direction::ToServer => up.next(),
                Direction::ToClient => down.next(),
            };
            d.map(|d| (l.direction, d.clone()))
                .ok_or_else(|| anyhow!("the pair's log and its datagrams disagree"))
        })
        .collect()
}

/// A handshake through the pair with loss: what the protocols' timers waited (virtual
/// time), the datagrams that crossed, and both sides' retransmissions.
#[derive(Debug, Clone, PartialEq)]
pub struct LossyRun {
    pub waited: std::time::Duration,
    pub delivered: Vec<WireDatagram>,
    pub retransmissions: u32,
}

/// Runs one handshake through the spine's pair in virtual time, each datagram dropped
/// with probability `loss` from a stream seeded with `seed`, firing at most
/// `timer_limit` timers; `None` when it did not complete by its protocols' own rules.
pub fn run_with_loss<C: Handshake, S: Handshake>(
    client: C,
    server: S,
    now: Now,
    loss: f64,
    seed: u64,
    timer_limit: usize,
) -> Option<LossyRun> {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut pair = Pair::new(client, server, now).with_hook(move |_, _, _| {
        if rng.random::<f64>() < loss {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    pair.start();
    if pair.drive(wtlsperf_spine::pair::DEFAULT_ROUND_LIMIT, timer_limit) != Ended::Complete {
        return None;
    }
    Some(LossyRun {
        waited: std::time::Duration::from_nanos(pair.now.mono_ns.saturating_sub(now.mono_ns)),
        delivered: wire_log::delivered_of_pair(&pair.log),
        retransmissions: pair.client.retransmissions() + pair.server.retransmissions(),
    })
}

/// Medians over repeated in-memory handshakes of one suite, with the raw public-key
/// operations of the server timed after every handshake (interleaved, so drift in the
/// machine's speed affects both alike).
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteMeasurement {
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
    let bench = SuiteBench::new(suite)?;
    measure_in_memory(reps, warmup, || bench.handshake(), || bench.raw_ops())
}

/// Medians of `reps` in-memory handshakes (after `warmup` unmeasured ones), each
/// followed by the raw public-key operations `raw_ops` times as (server ns, client ns),
/// where the protocol has a bound (`None` otherwise): any protocol's bench, one way.
pub fn measure_in_memory(
    reps: usize,
    warmup: usize,
    mut handshake: impl FnMut() -> anyhow::Result<MemoryRun>,
    mut raw_ops: impl FnMut() -> anyhow::Result<Option<(u64, u64)>>,
) -> anyhow::Result<SuiteMeasurement> {
    if reps == 0 {
        bail!("at least one rep is needed");
    }
    for _ in 0..warmup {
        handshake()?;
    }
    let (mut client, mut server, mut spk, mut cpk) = (vec![], vec![], vec![], vec![]);
    let mut shape = None;
    for _ in 0..reps {
        let run = handshake()?;
        client.push(run.client_cpu_ns as f64 / 1e3);
        server.push(run.server_cpu_ns as f64 / 1e3);
        if let Some((s, c)) = raw_ops()? {
            spk.push(s as f64 / 1e3);
            cpk.push(c as f64 / 1e3);
        }
        shape.get_or_insert(run);
    }
    let shape = shape.ok_or_else(|| anyhow::anyhow!("no handshake ran"))?;
    Ok(SuiteMeasurement {
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
    use crate::setup::Options;
    use std::sync::Arc;
    use wtls::handshake::AuthMode;
    use wtlsperf_bearer::LinkProfile;

    #[test]
    fn the_timers_state_their_standard_and_what_the_code_runs() {
        let dtls = dtls::retransmission_timers();
        assert_eq!(
            (dtls.initial_s, dtls.backoff, dtls.ceiling_s),
            (9.0, 2.0, Some(60.0))
        );
        assert!(dtls.source.contains("RFC 6347 section 4.2.4.1"));
        let coap = edhoc::retransmission_timers(coap_retransmit::CoapTimers::default());
        assert_eq!(
            (coap.initial_s, coap.initial_max_s, coap.max_retransmissions),
            (2.0, 3.0, 4)
        );
        let lte_m = wtlsperf_bearer::profile("lte-m").unwrap();
        let wtls = crate::registry::wtls::wtls_timers(&lte_m);
        assert_eq!(
            wtls.initial_s,
            crate::bearer_runs::bearer_retransmit_timeout(&lte_m).as_secs_f64()
        );
        assert_eq!(
            wtls.max_retransmissions,
            crate::registry::wtls::WTLS_MAX_RETRANSMISSIONS
        );
        let equal = wtls.with_initial(3.0, 2.0);
        assert_eq!((equal.initial_s, equal.initial_max_s), (3.0, 3.0));
    }

    #[test]
    fn forward_secrecy_follows_the_key_exchange() {
        use crate::registry::wtls::wtls_forward_secrecy;
        let case = |c: &str| wtls::suite::Case::parse(c).unwrap();
        assert!(!wtls_forward_secrecy(case("256p/256p")).holds);
        assert!(!wtls_forward_secrecy(case("rsa1024/rsa1024")).holds);
        assert!(dtls::forward_secrecy(Suite::DtlsEcdheEcdsa { mutual: false }).holds);
        assert!(!dtls::forward_secrecy(Suite::DtlsPsk).holds);
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
    fn wtls_completes_through_the_udp_driver_with_a_nokia_held_client() {
        use crate::gateway::{spawn_gateway, GatewayConfig};
        use crate::pki_store::unix_now;
        use crate::setup::{gateway_server_config, ClientAuth};
        use std::time::Duration;
        use wtlsperf_models::device::WtlsCase;
        use wtlsperf_models::Authentication;

        let dir = tempfile::tempdir().unwrap();
        let case = wtls::suite::Case::parse("160p/160p").unwrap();
        let store =
            crate::pki_store::PkiStore::create(dir.path(), true, unix_now().unwrap(), &[case])
                .unwrap();
        let server =
            gateway_server_config(&store, ClientAuth::Optional, &Options::default()).unwrap();
        let gw = spawn_gateway(GatewayConfig::new(
            "127.0.0.1:0".parse().unwrap(),
            Arc::new(server),
        ))
        .unwrap();
        let nokia = wtlsperf_models::device::profiles()
            .unwrap()
            .into_iter()
            .find(|p| p.name == "nokia7650")
            .unwrap();
        let steps = model::wtls_steps(case, Authentication::ServerAuth, &nokia).unwrap();
        let total = steps.flights.iter().sum::<f64>() + steps.finish;
        let direct = nokia
            .client_processing_ms(
                WtlsCase::parse("160p", "160p", Authentication::ServerAuth).unwrap(),
            )
            .unwrap();
        assert!((total - direct).abs() < 1e-9, "{total} vs {direct}");
        // The timer of GSM CSD (about 5 s) on a lossless loopback link: a retransmission
        // (a fifth flight) could only come from an answer slower than that.
        let gsm = wtlsperf_bearer::profile("gsm-csd").unwrap();
        let client = crate::registry::wtls::wtls_client(
            &store.case(&case).unwrap(),
            AuthMode::ServerAuth,
            &gsm,
        );
        let run = udp::client_over_bearer(
            client,
            gw.local_addr(),
            &LinkProfile::loopback(),
            1,
            Some(&steps),
            Duration::from_secs(60),
        )
        .unwrap();
        // The client held its flights for the Nokia's time: the handshake lasted at
        // least that long on a link that adds nothing.
        assert!(run.duration_ms >= total, "{} < {total}", run.duration_ms);
        assert_eq!(run.flights().len(), 4);
        gw.shutdown();
    }

    #[test]
    fn psk_has_no_public_key_operation_and_edhoc_is_symmetric() {
        assert!(Suite::DtlsPsk.pk_ops(false).is_empty());
        let e = Suite::EdhocMethod3Suite2;
        assert_eq!(e.pk_ops(true), e.pk_ops(false));
    }
}
