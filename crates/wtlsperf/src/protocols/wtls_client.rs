//! Our WTLS client for the bearer runs beside DTLS and EDHOC: the engine's [`Client`]
//! itself (it implements the spine's `Handshake`), so the UDP driver's device holds and
//! timers apply to WTLS exactly as to the others, against the real UDP gateway. Its
//! retransmission timer is the one `wtlsperf bearer` runs use
//! ([`crate::bearer_cmd::bearer_retransmit_timeout`]).

use std::sync::Arc;

use wtls::handshake::{AuthMode, Client};
use wtls::probe::Probe;
use wtls::suite::Case;
use wtlsperf_bearer::LinkProfile;

use crate::pki_store::PkiStore;
use crate::setup::{self, Options};

/// Retransmissions the client allows before giving up (as the bearer runs).
const MAX_RETRANSMISSIONS: u32 = 6;

/// A WTLS client for `case` with the retransmission timer suited to `profile`.
pub fn wtls_bearer_client(
    store: &PkiStore,
    case: Case,
    auth: AuthMode,
    profile: &LinkProfile,
) -> anyhow::Result<Client> {
    let creds = store.case(&case)?;
    let mut cfg = setup::client_config(&creds, &Options::default(), false);
    cfg.retransmit_timeout_ns =
        crate::bearer_cmd::bearer_retransmit_timeout(profile).as_nanos() as u64;
    cfg.max_retransmissions = MAX_RETRANSMISSIONS;
    Ok(Client::new(
        Arc::new(cfg),
        auth,
        None,
        Probe::off(),
        setup::now(),
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::device::wtls_steps;
    use crate::gateway::{spawn_gateway, GatewayConfig};
    use crate::pki_store::unix_now;
    use crate::protocols::udp::client_over_bearer;
    use crate::setup::{gateway_server_config, ClientAuth};
    use wtlsperf_models::device::WtlsCase;
    use wtlsperf_models::Authentication;

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
        let client = wtls_bearer_client(&store, case, AuthMode::ServerAuth, &gsm).unwrap();
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
