//! The models applied to the modern protocols: the client's processing on a device
//! profile ([`DeviceProfile`], priced operation by operation as for WTLS) and
//! the handshake duration T_H = T_TD + T_PD_C + T_PD_S, with T_TD from Eq. 3.84 per
//! flight ([`wtlsperf_models::transmission::link_ms`]: every flight pays its serialisation at
//! its direction's rate, 28 B UDP/IPv4 per datagram, plus one one-way traversal at the
//! profile's mean) over the protocol's own flights.

use anyhow::anyhow;
use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::{DeviceProfile, KeyType, Operation, Primitive};
use wtlsperf_models::transmission::Flight;

use super::{PkOps, Suite};
use wtlsperf_models::device::ClientSteps;

/// Where the client runs: this machine (its measured CPU) or an emulated device.
#[derive(Debug, Clone)]
pub enum Device {
    /// This machine, measured.
    ThisMachine,
    /// A profile of the device catalogue.
    Profile(Box<DeviceProfile>),
}

impl Device {
    /// `this-machine` or the profile's name.
    pub fn name(&self) -> &str {
        match self {
            Device::ThisMachine => "this-machine",
            Device::Profile(p) => &p.name,
        }
    }

    /// This machine, then every profile of the catalogue.
    pub fn all() -> anyhow::Result<Vec<Device>> {
        let mut out = vec![Device::ThisMachine];
        let profiles = wtlsperf_models::device::profiles().map_err(|e| anyhow!("{e}"))?;
        out.extend(profiles.into_iter().map(|p| Device::Profile(Box::new(p))));
        Ok(out)
    }
}

/// One client step: the handshake messages it handles and its public-key operations.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Step {
    messages: u32,
    ops: PkOps,
}

/// The client's work per flight it sends, and for the last flight it receives (see
/// [`ClientSteps`]). DTLS: ClientHello; HelloVerifyRequest and the second ClientHello;
/// the server's flight and the client's key-exchange flight (where every public-key
/// operation falls); ChangeCipherSpec and Finished. EDHOC: message_1 (the ephemeral
/// key); message_2 and message_3 (the three ECDH); the empty CoAP response.
fn schedule(suite: Suite) -> (Vec<Step>, Step) {
    let ops = suite.pk_ops(true);
    let none = PkOps::default();
    let step = |messages, ops| Step { messages, ops };
    match suite {
        Suite::DtlsEcdheEcdsa { mutual } => (
            vec![
                step(1, none),
                step(2, none),
                step(if mutual { 10 } else { 7 }, ops),
            ],
            step(2, none),
        ),
        Suite::DtlsPsk => (
            vec![step(1, none), step(2, none), step(5, none)],
            step(2, none),
        ),
        Suite::EdhocMethod3Suite2 => (
            vec![
                step(1, PkOps { keygen: 1, ..none }),
                step(2, PkOps { ecdh: 3, ..none }),
            ],
            step(0, none),
        ),
    }
}

/// Handshake messages the client handles (for the per-message symmetric cost).
pub fn client_messages(suite: Suite) -> u32 {
    let (flights, finish) = schedule(suite);
    flights.iter().map(|s| s.messages).sum::<u32>() + finish.messages
}

/// The device's time for one P-256 operation (ms). Where a profile prices no key
/// generation or signature (the Nokia 7650 fit and the ARM7 profile know only the
/// operations of a WTLS client), one ECDH stands in: each is one scalar multiplication
/// (plus a cheap modular inversion for a signature); a verification, where missing, is
/// two. The rule is an estimate (off in [`DeviceProfile::without_estimates`]): the
/// protocols table marks the rows it prices, and no finding judges them.
pub fn op_ms(device: &DeviceProfile, primitive: Primitive) -> anyhow::Result<f64> {
    let op = |primitive| Operation {
        primitive,
        key: KeyType::P256,
    };
    match device.op_ms(op(primitive)) {
        Ok((ms, _)) => return Ok(ms),
        Err(e) if !device.p256_stand_ins => return Err(anyhow!("{e}")),
        Err(_) => {}
    }
    let ecdh = device
        .op_ms(op(Primitive::Ecdh))
        .map_err(|e| anyhow!("{e}"))?
        .0;
    Ok(match primitive {
        Primitive::EcdsaVerify => 2.0 * ecdh,
        _ => ecdh,
    })
}

/// The device's time for `ops` on P-256 (ms).
pub fn pk_ms(device: &DeviceProfile, ops: PkOps) -> anyhow::Result<f64> {
    let priced = [
        (Primitive::Keygen, ops.keygen),
        (Primitive::Ecdh, ops.ecdh),
        (Primitive::EcdsaSign, ops.sign),
        (Primitive::EcdsaVerify, ops.verify),
    ];
    let mut ms = 0.0;
    for (primitive, n) in priced {
        if n > 0 {
            ms += f64::from(n) * op_ms(device, primitive)?;
        }
    }
    Ok(ms)
}

fn step_ms(device: &DeviceProfile, s: Step) -> anyhow::Result<f64> {
    Ok(pk_ms(device, s.ops)? + f64::from(s.messages) * device.per_message_ms())
}

/// The device's client time per step, for the UDP driver's holds.
pub fn client_steps(suite: Suite, device: &DeviceProfile) -> anyhow::Result<ClientSteps> {
    let (flights, finish) = schedule(suite);
    Ok(ClientSteps {
        flights: flights
            .into_iter()
            .map(|s| step_ms(device, s))
            .collect::<anyhow::Result<_>>()?,
        finish: step_ms(device, finish)?,
    })
}

/// The client's processing time T_PD_C of one handshake on the device (ms).
pub fn client_ms(suite: Suite, device: &DeviceProfile) -> anyhow::Result<f64> {
    let s = client_steps(suite, device)?;
    Ok(s.flights.iter().sum::<f64>() + s.finish)
}

/// T_H (ms): Eq. 3.84 per flight over `profile` plus both sides' processing.
pub fn duration_ms(
    flights: &[Flight],
    profile: &LinkProfile,
    client_ms: f64,
    server_ms: f64,
) -> f64 {
    wtlsperf_models::transmission::handshake_ms(flights, &profile.rates(), client_ms, server_ms)
}

/// The client's processing per flight of a WTLS case on `device`
/// ([`DeviceProfile::wtls_client_steps`]).
pub fn wtls_steps(
    case: wtls::suite::Case,
    auth: wtlsperf_models::Authentication,
    device: &DeviceProfile,
) -> anyhow::Result<ClientSteps> {
    let wc = wtlsperf_models::device::WtlsCase::parse(case.ca.short(), case.leaf.short(), auth)
        .ok_or_else(|| anyhow!("no device model for {case}"))?;
    device.wtls_client_steps(wc).map_err(|e| anyhow!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nokia() -> DeviceProfile {
        wtlsperf_models::device::profiles()
            .unwrap()
            .into_iter()
            .find(|p| p.name == "nokia7650")
            .unwrap()
    }

    #[test]
    fn message_counts_follow_the_flows() {
        assert_eq!(client_messages(Suite::DtlsEcdheEcdsa { mutual: false }), 12);
        assert_eq!(client_messages(Suite::DtlsEcdheEcdsa { mutual: true }), 15);
        assert_eq!(client_messages(Suite::DtlsPsk), 10);
        assert_eq!(client_messages(Suite::EdhocMethod3Suite2), 3);
    }

    #[test]
    fn the_steps_carry_every_public_key_operation_once() {
        let d = nokia();
        for suite in Suite::ALL {
            let (flights, finish) = schedule(suite);
            let mut sum = finish.ops;
            for s in flights {
                sum.keygen += s.ops.keygen;
                sum.ecdh += s.ops.ecdh;
                sum.sign += s.ops.sign;
                sum.verify += s.ops.verify;
            }
            assert_eq!(sum, suite.pk_ops(true), "{suite:?}");
            let total = client_ms(suite, &d).unwrap();
            let direct = pk_ms(&d, suite.pk_ops(true)).unwrap()
                + f64::from(client_messages(suite)) * d.per_message_ms();
            assert!((total - direct).abs() < 1e-9);
        }
        // PSK costs a device only its symmetric work; ECDHE-ECDSA much more.
        assert!(
            client_ms(Suite::DtlsPsk, &d).unwrap()
                < client_ms(Suite::DtlsEcdheEcdsa { mutual: false }, &d).unwrap()
        );
    }
}
