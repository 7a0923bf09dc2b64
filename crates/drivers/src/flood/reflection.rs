//! `wtlsperf flood --reflection`: how many bytes the gateway sends toward a forged source
//! per byte the attacker sends it.
//!
//! On loopback no source can be forged, so the victim's socket sends the ClientHellos
//! itself and counts what comes back. The gateway cannot tell the difference: it sees
//! datagrams from an address that has never completed a handshake, which is exactly what
//! a forged source looks like. With `--source-ports N` the victim's address sends from N
//! ports in turn, as a forger varying its source port would, which the kernel may hash to
//! different gateway workers. Two patterns: `fresh` (a new random in every ClientHello,
//! so each one opens a handshake) and `duplicate` (one ClientHello again and again, the
//! retransmission path). In process, each runs against a gateway without and with the
//! response-rate limiter; against `--connect`, as that gateway is configured.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;
use wtls::endpoint::ResponseLimit;

use super::{in_process_gateway, prepare, FloodConfig, RANDOM_BYTES_AT};

/// IPv4 (20) and UDP (8) headers: what each datagram costs on the wire besides its
/// payload.
const IP_UDP_HEADER: u64 = 28;
/// After the last ClientHello, how long the victim keeps reading once nothing arrives.
const QUIET: Duration = Duration::from_millis(300);
/// The victim's address: apart from the flood's, the fillers' and the legitimate ones.
const VICTIM: Ipv4Addr = Ipv4Addr::new(127, 254, 254, 254);

/// One measurement.
#[derive(Debug, Clone, Serialize)]
pub struct ReflectionRun {
    /// `fresh` or `duplicate`.
    pub pattern: &'static str,
    /// Source ports of the victim's address the ClientHellos came from, in turn.
    pub source_ports: usize,
    /// The limiter as configured (`off`, or the budgets), or `as configured` remotely.
    pub limiter: String,
    pub hellos_sent: u64,
    pub bytes_sent: u64,
    pub datagrams_received: u64,
    pub bytes_received: u64,
    /// Bytes toward the victim per byte from the attacker: payload only, and with
    /// IPv4/UDP headers on both sides.
    pub payload_ratio: f64,
    pub wire_ratio: f64,
    pub duration_s: f64,
}

/// Runs both patterns, without and with the limiter in process, or once each remotely.
pub fn run(args: &FloodConfig) -> anyhow::Result<Vec<ReflectionRun>> {
    let (store, _, hello) = prepare(args)?;
    let count = (args.rate * args.duration).ceil() as u64;
    let mut runs = Vec::new();
    if args.in_process {
        for limit in [ResponseLimit::OFF, args.response_limit()] {
            for duplicate in [false, true] {
                let gateway = in_process_gateway(args, &store, limit)?;
                let mut r = measure(gateway.local_addr(), &hello, duplicate, args, count)?;
                r.limiter = describe(limit);
                gateway.shutdown();
                runs.push(r);
            }
        }
    } else if let Some(target) = args.connect {
        for duplicate in [false, true] {
            let mut r = measure(target, &hello, duplicate, args, count)?;
            r.limiter = "as configured at the gateway".into();
            runs.push(r);
        }
    }
    Ok(runs)
}

fn describe(limit: ResponseLimit) -> String {
    if limit.is_off() {
        "off".into()
    } else {
        format!(
            "{} B/s per address, {} B/s per prefix",
            limit.address_bytes_per_s, limit.prefix_bytes_per_s
        )
    }
}

/// Sends `count` ClientHellos at `--rate` from the victim's sockets (`--source-ports`,
/// in turn) and counts what comes back to all of them, until the gateway has been quiet
/// for [`QUIET`] after the last one.
fn measure(
    target: SocketAddr,
    hello: &[u8],
    duplicate: bool,
    args: &FloodConfig,
    count: u64,
) -> anyhow::Result<ReflectionRun> {
    let rate = args.rate;
    let socks = (0..args.source_ports)
        .map(|_| {
            let sock = UdpSocket::bind((VICTIM, 0))?;
            sock.set_nonblocking(true)?;
            Ok(sock)
        })
        .collect::<std::io::Result<Vec<_>>>()
        .with_context(|| format!("binding {} source ports on {VICTIM}", args.source_ports))?;
    let mut datagram = hello.to_vec();
    let mut buf = vec![0u8; 65_535];
    let (mut sent, mut bytes_sent, mut received, mut bytes_received) = (0u64, 0, 0u64, 0);
    let started = Instant::now();
    let mut last_heard = started;
    loop {
        let due = ((started.elapsed().as_secs_f64() * rate) as u64).min(count);
        while sent < due {
            if !duplicate {
                datagram[RANDOM_BYTES_AT..RANDOM_BYTES_AT + 8].copy_from_slice(&sent.to_be_bytes());
            }
            socks[sent as usize % socks.len()].send_to(&datagram, target)?;
            sent += 1;
            bytes_sent += datagram.len() as u64;
        }
        for sock in &socks {
            while let Ok((n, _)) = sock.recv_from(&mut buf) {
                received += 1;
                bytes_received += n as u64;
                last_heard = Instant::now();
            }
        }
        let quiet = last_heard.max(started + Duration::from_secs_f64(count as f64 / rate));
        if sent == count && quiet.elapsed() >= QUIET {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Ok(ReflectionRun {
        pattern: if duplicate { "duplicate" } else { "fresh" },
        source_ports: socks.len(),
        limiter: String::new(),
        hellos_sent: sent,
        bytes_sent,
        datagrams_received: received,
        bytes_received,
        payload_ratio: ratio(bytes_received, bytes_sent),
        wire_ratio: ratio(
            bytes_received + received * IP_UDP_HEADER,
            bytes_sent + sent * IP_UDP_HEADER,
        ),
        duration_s: started.elapsed().as_secs_f64(),
    })
}

pub fn print(runs: &[ReflectionRun]) {
    for r in runs {
        println!(
            "reflection ({}, limiter {}): {} ClientHellos from {} source port(s), {} B sent; {} datagrams, {} B back \
             to the source: {:.2}x payload, {:.2}x with IP/UDP headers",
            r.pattern,
            r.limiter,
            r.hellos_sent,
            r.source_ports,
            r.bytes_sent,
            r.datagrams_received,
            r.bytes_received,
            r.payload_ratio,
            r.wire_ratio
        );
    }
    if let Ok(json) = serde_json::to_string(runs) {
        println!("{json}");
    }
}
