//! Any client handshake over UDP through an emulated bearer: the `wtlsperf bearer`
//! relay ([`wtlsperf_bearer::Relay`]) in front of a gateway, and the one UDP client
//! driver ([`crate::udp_client::drive`]) on the calling thread, with an emulated device's
//! holds ([`ClientSteps`]) if given. The gateway serves WTLS, DTLS 1.2 or EDHOC behind
//! the same worker ([`crate::gateway`]); each side runs its protocol's own
//! retransmission timers (OpenSSL's DTLS timer; CoAP's CON rule for EDHOC) in real time.
//!
//! Steps are the client's flights in order, so device emulation is meant for runs
//! without loss; the lossy runs use this machine's own speed.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Context;
use wtlsperf_bearer::{LinkProfile, RelayOptions};
use wtlsperf_spine::Handshake;

use crate::relay_run::through_relay;
use crate::udp_client::drive::run_handshake;
use crate::wire_log::{self, flights_of, WireDatagram};
pub use wtlsperf_models::device::ClientSteps;
use wtlsperf_models::transmission::Flight;

/// One handshake over an emulated bearer, as the client saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct UdpRun {
    /// Client start to completion (ms).
    pub duration_ms: f64,
    /// Every datagram the client sent or received, in order.
    pub log: Vec<WireDatagram>,
    /// Datagrams the client sent again on its timer.
    pub client_retransmissions: u32,
}

impl UdpRun {
    /// Flights as exchanged (retransmissions included).
    pub fn flights(&self) -> Vec<Flight> {
        flights_of(&self.log)
    }

    /// Payload bytes both ways.
    pub fn bytes(&self) -> usize {
        wire_log::bytes_of(&self.log)
    }
}

/// Runs one client handshake against the gateway at `upstream` through a relay
/// emulating `profile` (seeded with `seed`), the client's steps held to `steps` if
/// given; gives up after `deadline`.
pub fn client_over_bearer<C: Handshake>(
    mut client: C,
    upstream: SocketAddr,
    profile: &LinkProfile,
    seed: u64,
    steps: Option<&ClientSteps>,
    deadline: Duration,
) -> anyhow::Result<UdpRun> {
    let (run, _) = through_relay(
        upstream,
        profile,
        seed,
        RelayOptions::default(),
        |sock, relay| {
            sock.connect(relay)?;
            run_handshake(
                sock,
                relay,
                &mut client,
                steps,
                None,
                Instant::now() + deadline,
                &|_| None,
            )
        },
    )
    .with_context(|| format!("over {}", profile.name))?;
    Ok(UdpRun {
        duration_ms: run.duration.as_secs_f64() * 1e3,
        log: run.wire,
        client_retransmissions: run.retransmissions,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::gateway::{spawn_gateway, GatewayConfig, HandshakeServers, MakeServer};
    use crate::protocols::coap_retransmit::CoapTimers;
    use crate::protocols::dtls::DtlsConfig;
    use crate::protocols::edhoc::EdhocConfig;
    use crate::protocols::Suite;
    use wtlsperf_bearer::profile;
    use wtlsperf_spine::ProtocolId;

    /// One handshake of `client` against a gateway serving `make`'s servers.
    fn over<C: Handshake, S: Handshake + Send + 'static>(
        protocol: ProtocolId,
        client: C,
        make: MakeServer<S>,
        p: &LinkProfile,
        seed: u64,
    ) -> UdpRun {
        let servers = HandshakeServers { protocol, make };
        let gw =
            spawn_gateway(GatewayConfig::lab("127.0.0.1:0".parse().unwrap(), servers)).unwrap();
        let run = client_over_bearer(client, gw.local_addr(), p, seed, None, DEADLINE).unwrap();
        gw.shutdown();
        run
    }

    const DEADLINE: Duration = Duration::from_secs(60);

    fn edhoc_over(p: &LinkProfile, seed: u64, timers: CoapTimers) -> UdpRun {
        let cfg = EdhocConfig::new().unwrap().with_timers(timers);
        let server_cfg = cfg.clone();
        over(
            crate::protocols::EDHOC,
            cfg.client(seed).unwrap(),
            Arc::new(move || server_cfg.server()),
            p,
            seed,
        )
    }

    fn dtls_over(suite: Suite, p: &LinkProfile, seed: u64, timer: Option<Duration>) -> UdpRun {
        let mut cfg = DtlsConfig::new(suite).unwrap().in_real_time();
        if let Some(t) = timer {
            cfg = cfg.with_initial_timer(t);
        }
        let cfg = Arc::new(cfg);
        let server_cfg = Arc::clone(&cfg);
        over(
            crate::protocols::DTLS12,
            cfg.client().unwrap(),
            Arc::new(move || server_cfg.server()),
            p,
            seed,
        )
    }

    /// Retransmission timers no answer can outlast on a lossless profile, however busy
    /// the machine: a retransmission (an extra flight) could only come from a slow
    /// answer, so with these the flight and retransmission counts are exact. Whether the
    /// default timers fire spuriously on a slow bearer is the evaluation's measurement.
    const NO_SPURIOUS_TIMER: Duration = Duration::from_secs(30);

    #[test]
    fn edhoc_and_dtls_psk_complete_over_emulated_gsm_csd() {
        let gsm = profile("gsm-csd").unwrap();
        let timers = CoapTimers::default().with_ack_timeout(NO_SPURIOUS_TIMER);
        let e = edhoc_over(&gsm, 1, timers);
        assert_eq!((e.flights().len(), e.client_retransmissions), (4, 0));
        let d = dtls_over(Suite::DtlsPsk, &gsm, 2, Some(NO_SPURIOUS_TIMER));
        assert_eq!((d.flights().len(), d.client_retransmissions), (6, 0));
    }

    #[test]
    fn edhoc_and_dtls_ecdhe_complete_over_emulated_nb_iot() {
        let nb = profile("nb-iot").unwrap();
        let timers = CoapTimers::default().with_ack_timeout(NO_SPURIOUS_TIMER);
        assert_eq!(edhoc_over(&nb, 3, timers).flights().len(), 4);
        let d = dtls_over(
            Suite::DtlsEcdheEcdsa { mutual: true },
            &nb,
            4,
            Some(NO_SPURIOUS_TIMER),
        );
        assert_eq!(d.flights().len(), 6);
    }

    #[test]
    fn both_complete_over_a_ten_percent_loss_link_with_their_own_retransmission() {
        // Loopback with 10 % seeded loss; the timers are scaled down (the same rules,
        // shorter first timeout) so the test stays short. Seeds chosen so that both
        // protocols lose at least one datagram, which their timers repair.
        let lossy = LinkProfile::loopback().with_loss(0.10);
        let timers = CoapTimers::default().with_ack_timeout(Duration::from_millis(100));
        let (mut edhoc_rtx, mut dtls_rtx) = (0, 0);
        for seed in 0..8 {
            edhoc_rtx += edhoc_over(&lossy, seed, timers).client_retransmissions;
            let d = dtls_over(
                Suite::DtlsPsk,
                &lossy,
                seed,
                Some(Duration::from_millis(100)),
            );
            dtls_rtx += d.client_retransmissions;
        }
        assert!(
            edhoc_rtx > 0 && dtls_rtx > 0,
            "edhoc {edhoc_rtx}, dtls {dtls_rtx}"
        );
    }
}
