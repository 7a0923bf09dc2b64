//! The one way the drivers run a client through an emulated bearer: a relay in front of
//! the upstream, a client socket of its own on loopback, the relay's tally taken after
//! the run and the relay stopped whatever the run did. Handshakes, page loads and device
//! runs differ only in what they do with the socket.

use std::net::{SocketAddr, UdpSocket};

use anyhow::Context;
use wtlsperf_bearer::{LinkProfile, LinkStats, Relay, RelayOptions};

/// Runs `client` with a fresh loopback socket and the relay's address, through a relay
/// emulating `profile` (seeded with `seed`) in front of `upstream`; gives back what the
/// client gave and what the relay carried. The relay is stopped before this returns.
pub fn through_relay<T>(
    upstream: SocketAddr,
    profile: &LinkProfile,
    seed: u64,
    options: RelayOptions,
    client: impl FnOnce(&UdpSocket, SocketAddr) -> anyhow::Result<T>,
) -> anyhow::Result<(T, LinkStats)> {
    let mut relay = Relay::start_with_options(
        "127.0.0.1:0".parse()?,
        upstream,
        profile.clone(),
        seed,
        options,
    )
    .context("starting the bearer relay")?;
    let result = UdpSocket::bind("127.0.0.1:0")
        .context("binding the client's socket")
        .and_then(|sock| client(&sock, relay.local_addr()));
    let stats = relay.stats();
    relay.shutdown();
    Ok((result?, stats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_datagram_crosses_the_relay_and_is_tallied() {
        let echo = UdpSocket::bind("127.0.0.1:0").unwrap();
        let upstream = echo.local_addr().unwrap();
        let echoing = std::thread::spawn(move || {
            let mut buf = [0u8; 64];
            let (n, from) = echo.recv_from(&mut buf).unwrap();
            echo.send_to(&buf[..n], from).unwrap();
        });
        let profile = wtlsperf_bearer::profile("lte-m").unwrap();
        let (answer, stats) = through_relay(
            upstream,
            &profile,
            1,
            RelayOptions::default(),
            |sock, relay| {
                sock.send_to(b"ping", relay)?;
                sock.set_read_timeout(Some(Duration::from_secs(30)))?;
                let mut buf = [0u8; 64];
                let (n, _) = sock.recv_from(&mut buf)?;
                Ok(buf[..n].to_vec())
            },
        )
        .unwrap();
        echoing.join().unwrap();
        assert_eq!(answer, b"ping");
        assert_eq!((stats.up.datagrams_in, stats.down.datagrams_in), (1, 1));
    }

    #[test]
    fn the_clients_error_comes_back_after_the_relay_stopped() {
        let upstream = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let profile = wtlsperf_bearer::profile("lte-m").unwrap();
        let e = through_relay(upstream, &profile, 1, RelayOptions::default(), |_, _| {
            anyhow::bail!("no answer") as anyhow::Result<()>
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "no answer");
    }
}
