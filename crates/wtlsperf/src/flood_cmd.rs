//! `wtlsperf flood` on the command line: its arguments, each value checked alone as it
//! is parsed, and the run of the drivers' flood with them (`wtlsperf_drivers::flood`).

use std::net::SocketAddr;

use wtls::endpoint::ResponseLimit;
use wtlsperf_drivers::flood::{FloodConfig, MAX_DURATION_S, MAX_RATE, MAX_SOURCE_PORTS};
use wtlsperf_drivers::registry::Contender;

use crate::cli_args::{self, at_least_one, positive_seconds, HandshakeArgs, ServedPkiArgs};

/// `wtlsperf flood` arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Flood a gateway that is already running at this address.
    #[arg(
        long,
        conflicts_with = "in_process",
        required_unless_present = "in_process"
    )]
    pub connect: Option<SocketAddr>,
    /// Start a gateway inside this process (and report its state statistics).
    #[arg(long)]
    pub in_process: bool,
    /// Worker threads of the in-process gateway.
    #[arg(long, default_value = "1", value_parser = at_least_one, allow_negative_numbers = true)]
    pub workers: usize,
    /// Peer bound of the in-process gateway.
    #[arg(long, default_value = "2000", value_parser = at_least_one, allow_negative_numbers = true)]
    pub max_peers: usize,
    /// Handshake timeout of the in-process gateway, in milliseconds.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub handshake_timeout_ms: u64,
    /// Flood ClientHellos per second (at most 1e6).
    #[arg(long, default_value = "2000", value_parser = positive_seconds_as_rate, allow_negative_numbers = true)]
    pub rate: f64,
    /// Flood duration in seconds (at most 300).
    #[arg(long, default_value = "5", value_parser = flood_duration, allow_negative_numbers = true)]
    pub duration: f64,
    /// Distinct loopback source addresses (each datagram also gets a fresh port).
    #[arg(long, default_value = "256", value_parser = at_least_one, allow_negative_numbers = true)]
    pub sources: usize,
    /// Before the flood, this many clients complete handshakes and stay idle (the
    /// table-filling attack; at most 100000).
    #[arg(long, default_value_t = 0)]
    pub fill_established: usize,
    /// Measure reflection instead: bytes sent toward a forged source per byte received,
    /// with and without the response-rate limiter (in process), or as the gateway at
    /// --connect is configured.
    #[arg(long)]
    pub reflection: bool,
    /// With --reflection: source ports the victim's ClientHellos come from, in turn (a
    /// forger varies its source port freely, and each port may reach another worker).
    #[arg(long, default_value = "1", value_parser = source_ports, allow_negative_numbers = true)]
    pub source_ports: usize,
    /// In-process gateway: response budget per unverified address, bytes/s (0: none).
    #[arg(long, default_value_t = ResponseLimit::default().address_bytes_per_s)]
    pub rrl_address_bytes: u64,
    /// In-process gateway: response budget per unverified /24 prefix, bytes/s (0: none).
    #[arg(long, default_value_t = ResponseLimit::default().prefix_bytes_per_s)]
    pub rrl_prefix_bytes: u64,
    /// Legitimate handshakes started per second during the flood.
    #[arg(long, default_value_t = 4.0)]
    pub legit_rate: f64,
    /// Flood another protocol's configuration instead of the WTLS case: its own server in
    /// process behind the same gateway worker, or a server of it at --connect, as
    /// `protocol:configuration` (`dtls1.2:psk-ccm8`, `edhoc:method3-suite2`, ...).
    #[arg(long, value_parser = cli_args::contender, conflicts_with = "reflection")]
    pub contender: Option<Contender>,
    // The case of every client (flood and legitimate); the authentication of the
    // legitimate ones.
    #[command(flatten)]
    pub handshake: HandshakeArgs,
    #[command(flatten)]
    pub pki: ServedPkiArgs,
}

/// A flood rate: positive, finite, at most [`MAX_RATE`] per second.
fn positive_seconds_as_rate(s: &str) -> Result<f64, String> {
    let x: f64 = s.parse().map_err(|e| format!("not a number ({e})"))?;
    if !(x.is_finite() && x > 0.0 && x <= MAX_RATE) {
        return Err(format!(
            "must be a rate above 0 and at most {MAX_RATE}/s, got {x}"
        ));
    }
    Ok(x)
}

/// A number of source ports: 1 to [`MAX_SOURCE_PORTS`].
fn source_ports(s: &str) -> Result<usize, String> {
    let n = at_least_one(s)?;
    if n > MAX_SOURCE_PORTS {
        return Err(format!("at most {MAX_SOURCE_PORTS}, got {n}"));
    }
    Ok(n)
}

/// A flood duration: positive and at most [`MAX_DURATION_S`].
fn flood_duration(s: &str) -> Result<f64, String> {
    let x = positive_seconds(s)?;
    if x > MAX_DURATION_S {
        return Err(format!("at most {MAX_DURATION_S} s, got {x}"));
    }
    Ok(x)
}

impl Args {
    /// The drivers' configuration of the flood these options ask for.
    pub fn config(&self) -> FloodConfig {
        FloodConfig {
            connect: self.connect,
            in_process: self.in_process,
            workers: self.workers,
            max_peers: self.max_peers,
            handshake_timeout_ms: self.handshake_timeout_ms,
            rate: self.rate,
            duration: self.duration,
            sources: self.sources,
            fill_established: self.fill_established,
            reflection: self.reflection,
            source_ports: self.source_ports,
            rrl_address_bytes: self.rrl_address_bytes,
            rrl_prefix_bytes: self.rrl_prefix_bytes,
            legit_rate: self.legit_rate,
            contender: self.contender.clone(),
            case: self.handshake.case,
            auth: self.handshake.auth,
            pki: self.pki.source(),
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    wtlsperf_drivers::flood::run(args.config())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    type Command = crate::cli_args::OptionsOf<Args>;

    #[test]
    fn the_options_become_the_flood_configuration() {
        let c = Command::try_parse_from([
            "flood",
            "--in-process",
            "--create-pki",
            "--case",
            "256p/256p",
            "--auth",
            "mutual",
            "--source-ports",
            "4",
        ])
        .unwrap()
        .args
        .config();
        assert!(c.in_process && c.connect.is_none());
        assert_eq!(c.case.to_string(), "256p/256p");
        assert_eq!(c.auth, wtls::handshake::AuthMode::Mutual);
        assert_eq!(c.source_ports, 4);
        assert_eq!(
            c.pki,
            wtlsperf_drivers::pki_store::PkiSource {
                dir: "pki".into(),
                create: true
            }
        );
    }

    #[test]
    fn values_beyond_the_flood_bounds_are_refused_with_their_option() {
        for (option, value) in [
            ("--rate", "2e6"),
            ("--duration", "301"),
            ("--source-ports", "1025"),
            ("--contender", "bogus"),
        ] {
            let err = Command::try_parse_from(["flood", "--in-process", option, value])
                .err()
                .unwrap()
                .to_string();
            assert!(err.contains(option) && err.contains(value), "{err}");
        }
    }
}
