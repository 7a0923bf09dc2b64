//! Our WTLS client as a datagram [`Endpoint`], so that the UDP driver's device holds
//! apply to WTLS exactly as to DTLS and EDHOC, against the real UDP gateway. The engine
//! stays clock-free; its retransmission timer is the client configuration's (the one
//! `wtlsperf bearer` runs use: [`crate::bearer_cmd::bearer_retransmit_timeout`]).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail};
use wtls::handshake::{AuthMode, Client, Event, Output};
use wtls::probe::Probe;
use wtls::suite::Case;
use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::{DeviceProfile, WtlsCase};
use wtlsperf_models::processing::Message;
use wtlsperf_models::Authentication;

use super::udp::ClientSteps;
use super::Endpoint;
use crate::pki_store::PkiStore;
use crate::setup::{self, Options};

/// Retransmissions the client allows before giving up (as the bearer runs).
const MAX_RETRANSMISSIONS: u32 = 6;

/// A WTLS client handshake.
pub struct WtlsClient {
    client: Client,
    retransmissions: u32,
    /// How much later than the engine's deadline the running timer is due (the driver
    /// held the flight that started it).
    timer_shift: Duration,
}

impl WtlsClient {
    /// A client for `case` with the retransmission timer suited to `profile`.
    pub fn new(
        store: &PkiStore,
        case: Case,
        auth: AuthMode,
        profile: &LinkProfile,
    ) -> anyhow::Result<WtlsClient> {
        let creds = store.case(&case)?;
        let mut cfg = setup::client_config(&creds, &Options::default(), false);
        cfg.retransmit_timeout_ns =
            crate::bearer_cmd::bearer_retransmit_timeout(profile).as_nanos() as u64;
        cfg.max_retransmissions = MAX_RETRANSMISSIONS;
        Ok(WtlsClient {
            client: Client::new(Arc::new(cfg), auth, None, Probe::off(), setup::now()),
            retransmissions: 0,
            timer_shift: Duration::ZERO,
        })
    }
}

/// An alert either way ends the handshake; anything else is the engine's business.
fn datagrams(out: Output) -> anyhow::Result<Vec<Vec<u8>>> {
    for e in &out.events {
        match e {
            Event::AlertSent(a, why) => bail!("WTLS client sent alert {:?}: {why}", a.description),
            Event::AlertReceived(a) => bail!("WTLS client received alert {:?}", a.description),
            _ => {}
        }
    }
    Ok(out.datagrams)
}

impl Endpoint for WtlsClient {
    fn start(&mut self, _now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        datagrams(
            self.client
                .start(setup::now())
                .map_err(|e| anyhow!("WTLS client: {e}"))?,
        )
    }

    fn on_datagram(&mut self, datagram: &[u8], _now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        datagrams(self.client.handle_datagram(datagram, setup::now()))
    }

    fn next_timeout(&mut self, now: Duration) -> Option<Duration> {
        let engine_now = setup::now().mono_ns;
        self.client
            .deadline_ns()
            .map(|d| now + self.timer_shift + Duration::from_nanos(d.saturating_sub(engine_now)))
    }

    fn on_timer(&mut self, _now: Duration) -> anyhow::Result<Vec<Vec<u8>>> {
        self.timer_shift = Duration::ZERO;
        let out = datagrams(
            self.client
                .on_timeout(setup::now())
                .map_err(|e| anyhow!("WTLS client: {e}"))?,
        )?;
        self.retransmissions += out.len() as u32;
        Ok(out)
    }

    fn is_complete(&self) -> bool {
        self.client.is_established()
    }

    fn retransmissions(&self) -> u32 {
        self.retransmissions
    }

    fn delay_timers(&mut self, by: Duration) {
        self.timer_shift = by;
    }
}

/// The device's client time per WTLS flight (the `DeviceProfile`'s per-message costs): the
/// ClientHello; the server's flight and the client's key-exchange flight; the server's
/// ChangeCipherSpec and Finished.
pub fn wtls_steps(
    case: Case,
    auth: Authentication,
    device: &DeviceProfile,
) -> anyhow::Result<ClientSteps> {
    let wc = WtlsCase::parse(case.ca.short(), case.leaf.short(), auth)
        .ok_or_else(|| anyhow!("no device model for {case}"))?;
    let ms = |m: Message| device.client_message_ms(wc, m).map_err(|e| anyhow!("{e}"));
    let first = ms(Message::ClientHello)?;
    let finish = ms(Message::ServerChangeCipherSpec)? + ms(Message::ServerFinished)?;
    let mut middle = 0.0;
    for m in Message::ALL {
        if !matches!(
            m,
            Message::ClientHello | Message::ServerChangeCipherSpec | Message::ServerFinished
        ) {
            middle += ms(m)?;
        }
    }
    Ok(ClientSteps {
        flights: vec![first, middle],
        finish,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::{spawn_gateway, GatewayConfig};
    use crate::pki_store::unix_now;
    use crate::protocols::udp::client_over_bearer;
    use crate::setup::{gateway_server_config, ClientAuth};

    #[test]
    fn wtls_completes_through_the_driver_with_a_nokia_held_client() {
        let dir = tempfile::tempdir().unwrap();
        let case = Case::parse("160p/160p").unwrap();
        let store = PkiStore::create(dir.path(), true, unix_now().unwrap(), &[case]).unwrap();
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
        let steps = wtls_steps(case, Authentication::ServerAuth, &nokia).unwrap();
        let total = steps.flights.iter().sum::<f64>() + steps.finish;
        let direct = nokia
            .client_processing_ms(
                WtlsCase::parse("160p", "160p", Authentication::ServerAuth).unwrap(),
            )
            .unwrap();
        assert!((total - direct).abs() < 1e-9, "{total} vs {direct}");
        let p = LinkProfile::loopback();
        // The timer of GSM CSD (about 5 s) on a lossless loopback link: a retransmission
        // (a fifth flight) could only come from an answer slower than that.
        let gsm = wtlsperf_bearer::profile("gsm-csd").unwrap();
        let client = WtlsClient::new(&store, case, AuthMode::ServerAuth, &gsm).unwrap();
        let run = client_over_bearer(
            client,
            gw.local_addr(),
            &p,
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
}
