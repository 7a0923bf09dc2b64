//! Device emulation in the driver: the client takes its device's time for each message.
//!
//! The real computation still runs (on this machine's fast core); after the engine has
//! handled a datagram, the driver holds the next flight until the device profile's time
//! for the messages just handled has passed, less the real time the engine already spent
//! on them. Both come from the engine's own per-message probe records
//! ([`wtls::probe::HandshakeProbe`]), so the sans-IO engine stays clock-free and the
//! emulated time is the one the device model prices (`DeviceProfile::client_message_ms`,
//! thesis Eq. 3.2/3.5 message by message).
//!
//! The UDP client calls [`hold_for_device`] once per handled datagram; a run selects the
//! device with [`with_device`], which scopes a [`Pacer`] to the calling thread (each
//! concurrent bearer run has its own thread), so the client's signature stays as it is.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use wtls::crypto::pk::{self, KeyPair};
use wtls::handshake::AuthMode;
use wtls::probe::{HandshakeProbe, Message as ProbeMessage};
use wtls::suite::{Case, Specifier};
use wtlsperf_models::device::{
    self, scaling, Cost, DeviceProfile, KeyType, Operation, Primitive, Source, WtlsCase,
};
use wtlsperf_models::processing::Message;
use wtlsperf_models::stats::median;

use crate::setup;

/// The profile name of this machine (measured at run time, not in the catalogue).
pub const THIS_MACHINE: &str = "this-machine";

/// The model's name of an engine probe message (`SKX` has none: anonymous suites only).
pub fn model_message(m: ProbeMessage) -> Option<Message> {
    Some(match m {
        ProbeMessage::CH => Message::ClientHello,
        ProbeMessage::SH => Message::ServerHello,
        ProbeMessage::SCERT => Message::ServerCertificate,
        ProbeMessage::SKX => return None,
        ProbeMessage::CERTREQ => Message::CertificateRequest,
        ProbeMessage::SHD => Message::ServerHelloDone,
        ProbeMessage::CCERT => Message::ClientCertificate,
        ProbeMessage::CKX => Message::ClientKeyExchange,
        ProbeMessage::CERTVRFY => Message::CertificateVerify,
        ProbeMessage::CCCS => Message::ClientChangeCipherSpec,
        ProbeMessage::CFIN => Message::ClientFinished,
        ProbeMessage::SCCS => Message::ServerChangeCipherSpec,
        ProbeMessage::SFIN => Message::ServerFinished,
    })
}

/// The model's key type of an engine specifier.
pub fn key_type(spec: Specifier) -> anyhow::Result<KeyType> {
    KeyType::parse(spec.short()).with_context(|| format!("no device key type for {spec}"))
}

/// The device model's view of a case.
pub fn model_case(case: Case, auth: AuthMode) -> anyhow::Result<WtlsCase> {
    Ok(WtlsCase {
        ca: key_type(case.ca)?,
        leaf: key_type(case.leaf)?,
        auth: match auth {
            AuthMode::Mutual => wtlsperf_models::Authentication::Mutual,
            _ => wtlsperf_models::Authentication::ServerAuth,
        },
    })
}

/// Holds a client's flights for its device's processing time, one handshake long.
#[derive(Debug, Clone)]
pub struct Pacer {
    profile: Arc<DeviceProfile>,
    case: WtlsCase,
    /// Probe message records already accounted for.
    seen: usize,
    /// Device time of the messages handled so far (ms).
    pub device_ms: f64,
    /// Time actually held (the device time beyond the real computation).
    pub held: Duration,
}

impl Pacer {
    /// A pacer for one handshake of `case` on `profile`. Fails when the profile cannot
    /// price one of the case's operations.
    pub fn new(profile: Arc<DeviceProfile>, case: Case, auth: AuthMode) -> anyhow::Result<Pacer> {
        let case = model_case(case, auth)?;
        profile.client_processing_ms(case)?;
        Ok(Pacer {
            profile,
            case,
            seen: 0,
            device_ms: 0.0,
            held: Duration::ZERO,
        })
    }

    /// The device's whole client processing time for this case (ms), T_PD_C.
    pub fn client_processing_ms(&self) -> f64 {
        self.profile.client_processing_ms(self.case).unwrap_or(0.0)
    }

    /// How long to hold now: the device time of the probe records added since the last
    /// call, minus their real (wall) time.
    fn due(&mut self, probe: &HandshakeProbe) -> Duration {
        let fresh = probe.messages.get(self.seen..).unwrap_or_default();
        let mut device_ms = 0.0;
        let mut real_ns = 0u64;
        for t in fresh {
            real_ns += t.wall_ns;
            if let Some(m) = model_message(t.message) {
                device_ms += self.profile.client_message_ms(self.case, m).unwrap_or(0.0);
            }
        }
        self.seen = probe.messages.len();
        self.device_ms += device_ms;
        let real_ms = real_ns as f64 / 1e6;
        Duration::from_secs_f64(((device_ms - real_ms) / 1e3).max(0.0))
    }
}

thread_local! {
    static ACTIVE: RefCell<Option<Pacer>> = const { RefCell::new(None) };
}

/// Runs `f` (one handshake) with `pacer` emulating the client's device on this thread,
/// and returns the pacer with what it held. `None` runs `f` at this machine's speed.
pub fn with_device<R>(pacer: Option<Pacer>, f: impl FnOnce() -> R) -> (R, Option<Pacer>) {
    let Some(p) = pacer else {
        return (f(), None);
    };
    ACTIVE.with(|a| *a.borrow_mut() = Some(p));
    let r = f();
    (r, ACTIVE.with(|a| a.borrow_mut().take()))
}

/// Called by the UDP client after the engine handled a datagram and before it sends what
/// the engine produced: sleeps for the emulated device's remaining processing time. A
/// no-op unless [`with_device`] is active on this thread.
pub fn hold_for_device(probe: &HandshakeProbe) {
    let due = ACTIVE.with(|a| a.borrow_mut().as_mut().map(|p| p.due(probe)));
    if let Some(d) = due.filter(|d| !d.is_zero()) {
        std::thread::sleep(d);
        ACTIVE.with(|a| {
            if let Some(p) = a.borrow_mut().as_mut() {
                p.held += d;
            }
        });
    }
}

/// The catalogue's profiles (completed), by name.
pub fn catalogue() -> anyhow::Result<Vec<DeviceProfile>> {
    device::profiles().map_err(|e| anyhow::anyhow!("device catalogue: {e}"))
}

/// The profile called `name`: a catalogue device, or this machine (measured now). An
/// unknown name is an error that lists the profiles.
pub fn find(name: &str) -> anyhow::Result<Arc<DeviceProfile>> {
    if name == THIS_MACHINE {
        return measure_this_machine(Duration::from_millis(40)).map(Arc::new);
    }
    let all = catalogue()?;
    if let Some(p) = all.iter().find(|p| p.name == name) {
        return Ok(Arc::new(p.clone()));
    }
    let mut list: Vec<String> = all
        .iter()
        .map(|p| format!("  {:<16} {}", p.name, p.description))
        .collect();
    list.push(format!(
        "  {THIS_MACHINE:<16} this machine, measured at start-up"
    ));
    bail!(
        "--device: unknown device {name:?}; the profiles are:\n{}",
        list.join("\n")
    )
}

/// Device time beyond which the gateway's default handshake timeout (10 s) needs raising.
const LONG_HOLD_MS: f64 = 8_000.0;

/// Extra retransmission time the client needs on a device: its engine arms the timer
/// before the driver holds the flight, so the timer must cover the longest hold too.
pub fn retransmit_allowance(pacer: &Pacer) -> Duration {
    Duration::from_secs_f64(pacer.client_processing_ms() / 1e3)
}

/// `wtlsperf client --device NAME`: the pacer for the case (a fresh clone per
/// handshake) and the client's retransmission timer lengthened by the device's hold.
pub fn client_device(
    name: Option<&str>,
    case: Case,
    auth: AuthMode,
    cfg: &mut wtls::handshake::ClientConfig,
) -> anyhow::Result<Option<Pacer>> {
    let Some(name) = name else { return Ok(None) };
    let pacer = Pacer::new(find(name)?, case, auth).with_context(|| format!("--device {name}"))?;
    cfg.retransmit_timeout_ns += retransmit_allowance(&pacer).as_nanos() as u64;
    if pacer.client_processing_ms() > LONG_HOLD_MS {
        eprintln!(
            "wtlsperf: --device {name}: the client will hold a flight for up to {:.0} s; start the gateway with --handshake-timeout-ms above that (default 10 s), and note that a bearer relay forgets a client idle for 60 s",
            pacer.client_processing_ms() / 1e3
        );
    }
    println!(
        "emulating {} ({}): client T_PD {:.1} ms for {case} {}",
        pacer.profile.name,
        pacer.profile.description,
        pacer.client_processing_ms(),
        auth.name()
    );
    Ok(Some(pacer))
}

/// Prints what a pacer held in one handshake.
pub fn print_emulation(p: &Pacer) {
    println!(
        "  device {}: {:.1} ms of device processing, {:.1} ms held beyond the real computation",
        p.profile.name,
        p.device_ms,
        p.held.as_secs_f64() * 1e3
    );
}

/// Median time (ms) of `f` over up to 15 runs within `budget` (at least 3 runs).
fn time_ms(budget: Duration, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    f()?; // warm-up: OpenSSL's lazily built tables
    let start = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < 3 || (samples.len() < 15 && start.elapsed() < budget) {
        let t0 = setup::thread_cpu_ns();
        f()?;
        samples.push(setup::thread_cpu_ns().saturating_sub(t0) as f64 / 1e6);
    }
    median(&samples).context("no samples")
}

/// Measures every public-key operation of the WTLS key types on this machine with the
/// engine's own OpenSSL wrappers (thread CPU time, median), plus the symmetric work per
/// message from the runner's symmetric floor. Curves the local libcrypto lacks are
/// completed by the scaling rule from the Nokia 7650 fit.
pub fn measure_this_machine(budget_per_op: Duration) -> anyhow::Result<DeviceProfile> {
    let mut operations = BTreeMap::new();
    for key in KeyType::wtls_keys() {
        let Some(spec) = Specifier::from_short(&key.to_string()) else {
            continue;
        };
        if !spec.is_available() {
            continue;
        }
        let timed = if key.is_ec() {
            time_ec_operations(spec, budget_per_op)?
        } else {
            time_rsa_operations(spec, budget_per_op)?
        };
        for (primitive, ms) in timed {
            let source = measured_here(primitive.name());
            operations.insert(Operation { primitive, key }, Cost { ms, source });
        }
    }
    let mut offers: Vec<KeyType> = operations.keys().map(|o| o.key).collect();
    offers.sort();
    offers.dedup();
    let mut profile = DeviceProfile {
        name: THIS_MACHINE.into(),
        description: "this machine, measured at start-up".into(),
        source: "measured: wtls::crypto::pk (OpenSSL) on this machine".into(),
        operations,
        per_message: Some(Cost {
            ms: symmetric_ms_per_message()?,
            source: measured_here(
                "runner::symmetric_floor_ns(1500 B transcript) / 9 client messages",
            ),
        }),
        // OpenSSL: every curve the local libcrypto has (the others are left out above).
        offers,
        ephemeral_key_precomputed: None,
    };
    let nokia = catalogue()?
        .into_iter()
        .find(|p| p.name == "nokia7650")
        .context("the catalogue has no nokia7650")?;
    scaling::complete(&mut profile, &[&nokia]);
    Ok(profile)
}

/// The source of a cost measured by [`measure_this_machine`].
fn measured_here(op: &str) -> Source {
    Source::Measured {
        what: format!("this machine: {op}, wtls::crypto::pk over OpenSSL, median thread CPU time"),
    }
}

/// The digest every timed signature signs.
const TIMED_DIGEST: [u8; pk::SHA1_LEN] = [0x42; pk::SHA1_LEN];

/// Key generation, ECDH, ECDSA signature and verification on one curve (ms each).
fn time_ec_operations(spec: Specifier, budget: Duration) -> anyhow::Result<Vec<(Primitive, f64)>> {
    let digest = TIMED_DIGEST;
    let own = KeyPair::generate(spec)?;
    let peer = KeyPair::generate(spec)?.public_key()?;
    let own_public = own.public_key()?;
    let sig = pk::sign_digest(&own, &digest)?;
    Ok(vec![
        (
            Primitive::Keygen,
            time_ms(budget, || {
                std::hint::black_box(pk::ephemeral_ec(spec)?);
                Ok(())
            })?,
        ),
        (
            Primitive::Ecdh,
            time_ms(budget, || {
                std::hint::black_box(pk::ecdh(&own, &peer)?);
                Ok(())
            })?,
        ),
        (
            Primitive::EcdsaSign,
            time_ms(budget, || {
                std::hint::black_box(pk::sign_digest(&own, &digest)?);
                Ok(())
            })?,
        ),
        (
            Primitive::EcdsaVerify,
            time_ms(budget, || {
                Ok(pk::verify_digest(&own_public, &digest, &sig)?)
            })?,
        ),
    ])
}

/// The RSA public (encryption) and private (decryption) operations of one key size (ms).
fn time_rsa_operations(spec: Specifier, budget: Duration) -> anyhow::Result<Vec<(Primitive, f64)>> {
    let own = KeyPair::generate(spec)?;
    let own_public = own.public_key()?;
    let secret = [0x01u8; 20];
    let ct = pk::rsa_encrypt(&own_public, &secret)?;
    Ok(vec![
        (
            Primitive::RsaPublic,
            time_ms(budget, || {
                std::hint::black_box(pk::rsa_encrypt(&own_public, &secret)?);
                Ok(())
            })?,
        ),
        (
            Primitive::RsaPrivate,
            time_ms(budget, || {
                std::hint::black_box(pk::rsa_decrypt(&own, &ct)?);
                Ok(())
            })?,
        ),
    ])
}

/// The symmetric floor of a handshake (transcript hash, master secret, keys, both
/// Finished) over a typical 1.5 kB transcript, shared over the client's messages (ms).
fn symmetric_ms_per_message() -> anyhow::Result<f64> {
    let mut floors = Vec::new();
    for _ in 0..9 {
        floors.push(crate::runner::symmetric_floor_ns(1500)? as f64 / 1e6);
    }
    let floor_ms = median(&floors).context("no symmetric floor")?;
    Ok(floor_ms / 9.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtls::probe::MessageTiming;

    fn timing(message: ProbeMessage, wall_ms: f64) -> MessageTiming {
        MessageTiming {
            message,
            wall_ns: (wall_ms * 1e6) as u64,
            cpu_ns: 0,
            bytes: 0,
        }
    }

    #[test]
    fn the_pacer_holds_device_time_minus_real_time_per_new_record() {
        let nokia = Arc::new(
            catalogue()
                .unwrap()
                .into_iter()
                .find(|p| p.name == "nokia7650")
                .unwrap(),
        );
        let case = Case::parse("rsa1024/rsa1024").unwrap();
        let mut p = Pacer::new(nokia.clone(), case, AuthMode::Mutual).unwrap();
        let wcase = model_case(case, AuthMode::Mutual).unwrap();
        let mut probe = HandshakeProbe::default();
        probe.messages.push(timing(ProbeMessage::CH, 0.1));
        probe.messages.push(timing(ProbeMessage::SH, 0.1));
        probe.messages.push(timing(ProbeMessage::SCERT, 2.0));
        let first = p.due(&probe).as_secs_f64() * 1e3;
        let expect: f64 = [
            Message::ClientHello,
            Message::ServerHello,
            Message::ServerCertificate,
        ]
        .iter()
        .map(|&m| nokia.client_message_ms(wcase, m).unwrap())
        .sum::<f64>()
            - 2.2;
        assert!((first - expect).abs() < 1e-3, "{first} vs {expect}");
        // Nothing new: nothing to hold.
        assert!(p.due(&probe).is_zero());
        // A record slower than the device holds nothing (the real time already passed).
        probe.messages.push(timing(ProbeMessage::SHD, 1e9));
        assert!(p.due(&probe).is_zero());
    }

    #[test]
    fn hold_is_a_no_op_without_a_device_and_scoped_to_the_call() {
        let probe = HandshakeProbe::default();
        hold_for_device(&probe);
        let ((), back) = with_device(None, || hold_for_device(&probe));
        assert!(back.is_none());
    }

    #[test]
    fn an_unknown_device_lists_the_profiles() {
        let err = find("nokia9999").unwrap_err().to_string();
        assert!(
            err.contains("--device") && err.contains("nokia7650") && err.contains(THIS_MACHINE),
            "{err}"
        );
    }
}
