//! `wtlsperf gateway --wap` as a process: the ports `--wap-off` leaves open, the run until
//! a signal or the run length, SIGHUP (the access log reopened), and the lines of
//! `--stats-file`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use wtls::handshake::ServerConfig;
use wtlsperf_wap::wtp::Timers;

use super::access_log::AccessLog;
use super::service::ServiceLimits;
use super::{spawn, PortRole, WapGatewayConfig, WapPorts, WapStats, ROLES};
use crate::gateway::stats_log::StatsLog;
use crate::wap_client::WspMode;

/// The roles `--wap-off` leaves open.
pub fn open_roles(args: &WapPorts) -> anyhow::Result<Vec<PortRole>> {
    for off in &args.wap_off {
        let known = (args.wap_base_port..args.wap_base_port + 4).contains(off);
        anyhow::ensure!(
            known,
            "--wap-off {off}: not one of the WAP ports {}-{}",
            args.wap_base_port,
            args.wap_base_port + 3
        );
    }
    let roles: Vec<PortRole> = ROLES
        .iter()
        .filter(|r| !args.wap_off.contains(&(args.wap_base_port + r.offset)))
        .copied()
        .collect();
    if roles.is_empty() {
        return Err(anyhow!(
            "--wap-off closes all four WAP ports: nothing to serve"
        ));
    }
    Ok(roles)
}

/// `wtlsperf gateway --wap` until SIGINT/SIGTERM or `run_for`. SIGHUP reopens the
/// access log (logrotate's `postrotate`) and the gateway keeps serving.
pub fn run(
    listen: SocketAddr,
    args: &WapPorts,
    server: Arc<ServerConfig>,
    run_for: Option<Duration>,
) -> anyhow::Result<()> {
    let access_log = match &args.access_log {
        Some(path) => Some(Arc::new(Mutex::new(AccessLog::open(path)?))),
        None => None,
    };
    let mut stats_log = match &args.stats_file {
        Some((path, every)) => Some(StatsLog::create(path, *every)?),
        None => None,
    };
    let cfg = WapGatewayConfig {
        ip: listen.ip(),
        base_port: args.wap_base_port,
        roles: open_roles(args)?,
        server,
        origin_timeout: Duration::from_millis(args.origin_timeout_ms),
        timers: Timers::default(),
        limits: args.limits,
        access_log: access_log.clone(),
        port_timers: super::port_timers(args)?,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let hangup = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, stop.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, stop.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGHUP, hangup.clone())?;
    let gateway = spawn(cfg)?;
    for (role, addr) in &gateway.addrs {
        eprintln!(
            "wtlsperf WAP gateway: {} WSP{} on {addr}",
            if role.mode == WspMode::Connection {
                "connection-mode"
            } else {
                "connectionless"
            },
            if role.secure { " over WTLS" } else { "" }
        );
    }
    let deadline = run_for.and_then(|d| Instant::now().checked_add(d));
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        std::thread::sleep(Duration::from_millis(50));
        if hangup.swap(false, Ordering::SeqCst) {
            on_hangup(access_log.as_deref());
        }
        if let Some(log) = &mut stats_log {
            if log.due() {
                log.write_line(&StatsSample::of(
                    log,
                    &args.limits.service,
                    &gateway.stats(),
                    false,
                ))?;
            }
        }
    }
    let stats = gateway.shutdown();
    if let Some(log) = &mut stats_log {
        log.write_line(&StatsSample::of(log, &args.limits.service, &stats, true))?;
    }
    println!("{}", serde_json::to_string_pretty(&stats)?);
    Ok(())
}

/// SIGHUP: the access log is opened again at its path; serving goes on.
fn on_hangup(access_log: Option<&Mutex<AccessLog>>) {
    let reopened = access_log.map(|log| log.lock().map_err(|_| anyhow!("poisoned"))?.reopen());
    match reopened {
        Some(Err(e)) => tracing::warn!(error = %e, "SIGHUP: the access log was not reopened"),
        Some(Ok(())) => eprintln!("wtlsperf WAP gateway: SIGHUP, access log reopened"),
        None => eprintln!("wtlsperf WAP gateway: SIGHUP, nothing to reopen"),
    }
}

/// One line of `--stats-file` for the WAP gateway: when, the process's memory, and
/// every port's counters.
#[derive(Debug, serde::Serialize)]
struct StatsSample<'a> {
    t_s: f64,
    rss_bytes: u64,
    /// The fullest table of any port (transactions, sessions, reassemblies) over its
    /// bound: what the soak watches for growth, as it watches the WTLS peer table.
    occupancy: f64,
    shutdown: bool,
    #[serde(flatten)]
    stats: &'a WapStats,
}

impl<'a> StatsSample<'a> {
    fn of(log: &StatsLog, limits: &ServiceLimits, stats: &'a WapStats, shutdown: bool) -> Self {
        let share = |n: usize, of: usize| n as f64 / of.max(1) as f64;
        let occupancy = stats
            .ports
            .iter()
            .map(|p| {
                let s = &p.service;
                share(s.transactions, limits.max_transactions)
                    .max(share(s.sessions, limits.max_sessions))
                    .max(share(s.reassemblies, limits.sar.total))
            })
            .fold(0.0, f64::max);
        StatsSample {
            t_s: log.elapsed_s(),
            rss_bytes: crate::flood::rss_bytes(),
            occupancy,
            shutdown,
            stats,
        }
    }
}
