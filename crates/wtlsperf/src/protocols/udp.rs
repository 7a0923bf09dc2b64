//! The modern protocols over UDP through an emulated bearer: a server thread on its own
//! loopback socket, the `wtlsperf bearer` relay ([`wtlsperf_bearer::Relay`]) in front of
//! it, and the client on the calling thread. Each side runs its protocol's own
//! retransmission timers (OpenSSL's DTLS timer; CoAP's CON rule for EDHOC) in real time.
//!
//! An emulated device ([`ClientSteps`]) makes the client take its device's time for each
//! flight it computes: the real computation runs, then the driver holds the flight until
//! the device's time for that step has passed (the rule WTLS's device emulation follows,
//! applied to these protocols). Steps are the client's flights in order, so device emulation is meant for
//! runs without loss; the lossy runs use this machine's own speed.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use wtlsperf_bearer::{LinkProfile, Relay};
use wtlsperf_spine::{Handshake, Now, Status};

use super::{flights_of, Logged};
use crate::setup;
use wtlsperf_models::transmission::Flight;

/// Largest datagram read.
const MAX_DATAGRAM: usize = 65_535;
/// How often the server thread looks at its stop flag while idle.
const SERVER_POLL: Duration = Duration::from_millis(20);

/// The client's processing time per step on an emulated device (ms): `flights[k]` for
/// the k-th flight the client sends (0 = the first), `finish` for the last flight it
/// receives.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientSteps {
    /// Per client flight, in order.
    pub flights: Vec<f64>,
    /// Processing the server's last flight.
    pub finish: f64,
}

/// One handshake over an emulated bearer, as the client saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct UdpRun {
    /// Client start to completion (ms).
    pub duration_ms: f64,
    /// Every datagram the client sent or received, in order.
    pub log: Vec<Logged>,
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
        self.log.iter().map(|d| d.bytes).sum()
    }
}

/// Time left until a deadline of the engine's clock ([`setup::now`]).
fn until(deadline_ns: u64, now: Now) -> Duration {
    Duration::from_nanos(deadline_ns.saturating_sub(now.mono_ns))
}

/// A failed handshake as an error (its typed failure, shown).
fn check<H: Handshake>(side: &H) -> anyhow::Result<()> {
    match side.status() {
        Status::Failed(f) => bail!("{f}"),
        _ => Ok(()),
    }
}

/// Serves one connection until `stop`: datagrams in, answers out, timers run.
fn serve<S: Handshake>(
    mut server: S,
    sock: UdpSocket,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let mut peer: Option<SocketAddr> = None;
    let mut buf = vec![0u8; MAX_DATAGRAM];
    server.start(setup::now());
    while !stop.load(Ordering::SeqCst) {
        let wait = server
            .deadline()
            .map_or(SERVER_POLL, |d| until(d, setup::now()).min(SERVER_POLL));
        sock.set_read_timeout(Some(wait.max(Duration::from_millis(1))))?;
        let out = match sock.recv_from(&mut buf) {
            Ok((n, from)) => {
                peer = Some(from);
                server.handle_datagram(&buf[..n], setup::now()).datagrams
            }
            Err(e) if is_timeout(&e) => {
                let now = setup::now();
                match server.deadline() {
                    Some(d) if d <= now.mono_ns => server.handle_timeout(now).datagrams,
                    _ => Vec::new(),
                }
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(p) = peer {
            for d in out {
                sock.send_to(&d, p)?;
            }
        }
        check(&server)?;
    }
    Ok(())
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// The client's side of a run: sends, receives, runs its timers and the device's holds.
struct ClientDriver<'a, C: Handshake> {
    client: C,
    sock: UdpSocket,
    epoch: Instant,
    log: Vec<Logged>,
    steps: Option<&'a ClientSteps>,
    flights_sent: usize,
}

impl<C: Handshake> ClientDriver<'_, C> {
    /// Holds a computed step until the device's time for it has passed; the flight's
    /// retransmission timer then starts as it leaves.
    fn hold(&mut self, started: Instant, device_ms: Option<f64>) {
        if let Some(ms) = device_ms {
            let due = started + Duration::from_secs_f64(ms / 1e3);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
                self.client
                    .delay_timers(u64::try_from((due - now).as_nanos()).unwrap_or(u64::MAX));
            }
        }
    }

    fn send(&mut self, out: Vec<Vec<u8>>, started: Instant, fresh: bool) -> anyhow::Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        if fresh {
            let device = self
                .steps
                .and_then(|s| s.flights.get(self.flights_sent).copied());
            self.hold(started, device);
            self.flights_sent += 1;
        }
        for d in out {
            self.log.push(Logged {
                up: true,
                bytes: d.len(),
            });
            self.sock.send(&d)?;
        }
        Ok(())
    }

    fn run(&mut self, deadline: Duration) -> anyhow::Result<()> {
        let started = Instant::now();
        let first = self.client.start(setup::now()).datagrams;
        check(&self.client)?;
        self.send(first, started, true)?;
        let mut buf = vec![0u8; MAX_DATAGRAM];
        while !self.client.status().is_complete() {
            let now = self.epoch.elapsed();
            if now >= deadline {
                bail!("no completion within {:.1} s", deadline.as_secs_f64());
            }
            let left = deadline - now;
            let wait = self
                .client
                .deadline()
                .map_or(left, |d| until(d, setup::now()).min(left));
            self.sock
                .set_read_timeout(Some(wait.max(Duration::from_millis(1))))?;
            match self.sock.recv(&mut buf) {
                Ok(n) => {
                    self.log.push(Logged {
                        up: false,
                        bytes: n,
                    });
                    let started = Instant::now();
                    let out = self.client.handle_datagram(&buf[..n], setup::now());
                    if self.client.status().is_complete() {
                        self.hold(started, self.steps.map(|s| s.finish));
                    }
                    self.send(out.datagrams, started, true)?;
                }
                Err(e) if is_timeout(&e) => {
                    let now = setup::now();
                    if self.client.deadline().is_some_and(|d| d <= now.mono_ns) {
                        let out = self.client.handle_timeout(now);
                        self.send(out.datagrams, Instant::now(), false)?;
                    }
                }
                Err(e) => return Err(e.into()),
            }
            check(&self.client)?;
        }
        Ok(())
    }
}

/// Runs one handshake through a relay emulating `profile` (seeded with `seed`), with
/// the client's steps held to `steps` if given; gives up at `deadline`.
pub fn handshake_over_bearer<C, S>(
    client: C,
    make_server: impl FnOnce() -> anyhow::Result<S> + Send + 'static,
    profile: &LinkProfile,
    seed: u64,
    steps: Option<&ClientSteps>,
    deadline: Duration,
) -> anyhow::Result<UdpRun>
where
    C: Handshake,
    S: Handshake + 'static,
{
    let server_sock = UdpSocket::bind("127.0.0.1:0")?;
    let server_addr = server_sock.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let server_thread = {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("proto-server".into())
            .spawn(move || serve(make_server()?, server_sock, stop))?
    };
    let result = client_over_bearer(client, server_addr, profile, seed, steps, deadline);
    stop.store(true, Ordering::SeqCst);
    // A server error after the client completed (e.g. a late duplicate) does not undo
    // the handshake; before completion it already failed the client.
    let _served = server_thread
        .join()
        .map_err(|_| anyhow::anyhow!("the server thread panicked"))?;
    result
}

/// Runs one client handshake against `upstream` through a relay emulating `profile`.
pub fn client_over_bearer<C: Handshake>(
    client: C,
    upstream: SocketAddr,
    profile: &LinkProfile,
    seed: u64,
    steps: Option<&ClientSteps>,
    deadline: Duration,
) -> anyhow::Result<UdpRun> {
    let mut relay = Relay::start("127.0.0.1:0".parse()?, upstream, profile.clone(), seed)
        .context("starting the bearer relay")?;
    let sock = UdpSocket::bind("127.0.0.1:0")?;
    sock.connect(relay.local_addr())?;
    let mut driver = ClientDriver {
        client,
        sock,
        epoch: Instant::now(),
        log: Vec::new(),
        steps,
        flights_sent: 0,
    };
    let result = driver.run(deadline);
    let duration_ms = driver.epoch.elapsed().as_secs_f64() * 1e3;
    relay.shutdown();
    result.with_context(|| format!("over {}", profile.name))?;
    Ok(UdpRun {
        duration_ms,
        log: driver.log,
        client_retransmissions: driver.client.retransmissions(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::coap_retransmit::CoapTimers;
    use crate::protocols::dtls::DtlsConfig;
    use crate::protocols::edhoc::EdhocConfig;
    use crate::protocols::Suite;
    use wtlsperf_bearer::profile;

    const DEADLINE: Duration = Duration::from_secs(60);

    fn edhoc_over(p: &LinkProfile, seed: u64, timers: CoapTimers) -> UdpRun {
        let cfg = EdhocConfig::new().unwrap().with_timers(timers);
        let server_cfg = cfg.clone();
        handshake_over_bearer(
            cfg.client(seed).unwrap(),
            move || server_cfg.server(),
            p,
            seed,
            None,
            DEADLINE,
        )
        .unwrap()
    }

    fn dtls_over(suite: Suite, p: &LinkProfile, seed: u64, timer: Option<Duration>) -> UdpRun {
        let mut cfg = DtlsConfig::new(suite).unwrap().in_real_time();
        if let Some(t) = timer {
            cfg = cfg.with_initial_timer(t);
        }
        let cfg = Arc::new(cfg);
        let server_cfg = Arc::clone(&cfg);
        handshake_over_bearer(
            cfg.client().unwrap(),
            move || server_cfg.server(),
            p,
            seed,
            None,
            DEADLINE,
        )
        .unwrap()
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
