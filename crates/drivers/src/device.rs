//! Device emulation in the driver: the client takes its device's time for each message.
//!
//! The real computation still runs (on this machine's fast core), and the sans-IO
//! engine stays clock-free: the emulated time is the one the device model prices
//! (`DeviceProfile::client_message_ms`, thesis Eq. 3.2/3.5 message by message). The
//! device's time comes per client step ([`ClientSteps`]: each flight the client
//! sends, and the processing of the server's last flight), summed from the profile's
//! per-message costs; the one UDP driver ([`crate::udp_client::drive`]) holds each
//! flight until that time has passed since its computation began, and moves the
//! handshake's retransmission timer to when the flight leaves. The same holds serve
//! WTLS, DTLS 1.2 and EDHOC.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use wtls::crypto::pk::{self, KeyPair};
use wtls::handshake::AuthMode;
use wtls::probe::Message as ProbeMessage;
use wtls::suite::{Case, Specifier};
use wtlsperf_models::device::{
    self, scaling, Cost, DeviceProfile, KeyType, Operation, Primitive, Source, WtlsCase,
};
use wtlsperf_models::processing::Message;
use wtlsperf_models::stats::median;

use crate::protocols::model::wtls_steps;
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

pub use wtlsperf_models::device::ClientSteps;

/// An emulated client device of `wtlsperf client --device`: its profile and the
/// holds of the command's case.
#[derive(Debug, Clone)]
pub struct DeviceClient {
    pub profile: Arc<DeviceProfile>,
    pub steps: ClientSteps,
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

/// `wtlsperf client --device NAME`: the device's holds for the case. The client's
/// retransmission timer starts as each held flight leaves, so it needs no allowance.
pub fn client_device(
    name: Option<&str>,
    case: Case,
    auth: AuthMode,
) -> anyhow::Result<Option<DeviceClient>> {
    let Some(name) = name else { return Ok(None) };
    let profile = find(name)?;
    let model = model_case(case, auth).with_context(|| format!("--device {name}"))?;
    let total = profile
        .client_processing_ms(model)
        .map_err(|e| anyhow::anyhow!("--device {name}: {e}"))?;
    let steps =
        wtls_steps(case, model.auth, &profile).with_context(|| format!("--device {name}"))?;
    if total > LONG_HOLD_MS {
        eprintln!(
            "wtlsperf: --device {name}: the client will hold a flight for up to {:.0} s; start the gateway with --handshake-timeout-ms above that (default 10 s), and note that a bearer relay forgets a client idle for 60 s",
            total / 1e3
        );
    }
    println!(
        "emulating {} ({}): client T_PD {total:.1} ms for {case} {}",
        profile.name,
        profile.description,
        auth.name()
    );
    Ok(Some(DeviceClient { profile, steps }))
}

/// Prints what a device held in one handshake.
pub fn print_emulation(d: &DeviceClient, held: Duration) {
    println!(
        "  device {}: {:.1} ms of device processing, {:.1} ms held beyond the real computation",
        d.profile.name,
        d.steps.total_ms(),
        held.as_secs_f64() * 1e3
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
        p256_stand_ins: true,
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

    #[test]
    fn wtls_steps_add_up_to_the_device_client_time() {
        let nokia = catalogue()
            .unwrap()
            .into_iter()
            .find(|p| p.name == "nokia7650")
            .unwrap();
        for (case, auth) in [
            ("rsa1024/rsa1024", AuthMode::Mutual),
            ("160p/160p", AuthMode::ServerAuth),
        ] {
            let case = Case::parse(case).unwrap();
            let model = model_case(case, auth).unwrap();
            let steps = wtls_steps(case, model.auth, &nokia).unwrap();
            let direct = nokia.client_processing_ms(model).unwrap();
            assert!((steps.total_ms() - direct).abs() < 1e-9, "{case}");
            assert_eq!(steps.flights.len(), 2);
        }
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
