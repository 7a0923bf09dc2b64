//! WTP's timers per connection-mode port: `--wtp-bearer` picks a bearer's table of
//! WAP-224 Appendix A, then `--wtp-retry-ms`, `--wtp-group-retry-ms`, `--wtp-ack-ms`,
//! `--wtp-max-retransmissions` and `--wtp-mpl-ms` change single values; each for every
//! port or, as `PORT=VALUE`, for one.

use anyhow::anyhow;
use wtlsperf_wap::wtp::Timers;

use super::{WapPorts, ROLES};
use crate::wap_client::WspMode;

/// A value of a `gateway --wap` option for one port (`PORT=VALUE`) or, without a port,
/// for every port it applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSetting<T = u64> {
    pub port: Option<u16>,
    pub value: T,
}

impl<T: std::str::FromStr> std::str::FromStr for PortSetting<T>
where
    T::Err: std::fmt::Display,
{
    type Err = String;

    fn from_str(s: &str) -> Result<PortSetting<T>, String> {
        let (port, value) = match s.split_once('=') {
            Some((p, v)) => (Some(p.parse().map_err(|e| format!("port {p:?}: {e}"))?), v),
            None => (None, s),
        };
        let value = value.parse().map_err(|e| format!("{value:?}: {e}"))?;
        Ok(PortSetting { port, value })
    }
}

/// The settings without a port first, then those naming one: a port's own value wins
/// whatever the order on the command line.
fn ordered<T>(settings: &[PortSetting<T>]) -> impl Iterator<Item = &PortSetting<T>> {
    let general = settings.iter().filter(|s| s.port.is_none());
    general.chain(settings.iter().filter(|s| s.port.is_some()))
}

/// The WTP timers of each connection-mode port (by role offset) that the options set.
/// WAP-224 §9.4.1 makes the intervals depend on the bearer and Appendix A gives a table
/// per bearer; a port starts from the IP bearer's ([`Timers::default`]), `--wtp-bearer`
/// picks another table, and the single-value options change what they name.
pub fn port_timers(args: &WapPorts) -> anyhow::Result<Vec<(u16, Timers)>> {
    let connection: Vec<u16> = ROLES
        .iter()
        .filter(|r| r.mode == WspMode::Connection)
        .map(|r| r.offset)
        .collect();
    let mut timers: Vec<(u16, Timers)> =
        connection.iter().map(|o| (*o, Timers::default())).collect();
    for setting in ordered(&args.wtp_bearer) {
        let offset = port_offset(args, &connection, "--wtp-bearer", setting)?;
        for (_, t) in timers
            .iter_mut()
            .filter(|(o, _)| offset.is_none_or(|x| x == *o))
        {
            *t = Timers {
                segment_size: t.segment_size,
                group_size: t.group_size,
                ..Timers::responder(setting.value)
            };
        }
    }
    for (option, settings, range, set) in timer_options(args) {
        for setting in ordered(settings) {
            anyhow::ensure!(
                range.contains(&setting.value),
                "{option} {}: must be {} to {}",
                setting.value,
                range.start(),
                range.end()
            );
            let offset = port_offset(args, &connection, option, setting)?;
            for (_, t) in timers
                .iter_mut()
                .filter(|(o, _)| offset.is_none_or(|x| x == *o))
            {
                set(t, setting.value);
            }
        }
    }
    Ok(timers)
}

/// The role offset a setting names (None: every connection-mode port), or why it names
/// none.
fn port_offset<T: std::fmt::Display>(
    args: &WapPorts,
    connection: &[u16],
    option: &str,
    setting: &PortSetting<T>,
) -> anyhow::Result<Option<u16>> {
    let Some(p) = setting.port else {
        return Ok(None);
    };
    p.checked_sub(args.wap_base_port)
        .filter(|o| connection.contains(o))
        .map(Some)
        .ok_or_else(|| {
            anyhow!(
                "{option} {p}={}: not a connection-mode WAP port ({} or {})",
                setting.value,
                args.wap_base_port + 1,
                args.wap_base_port + 3
            )
        })
}

/// Each timer option: its name, its settings, the values it takes, and what it sets.
type TimerOption<'a> = (
    &'static str,
    &'a [PortSetting],
    std::ops::RangeInclusive<u64>,
    fn(&mut Timers, u64),
);

fn timer_options(args: &WapPorts) -> [TimerOption<'_>; 5] {
    [
        (
            "--wtp-retry-ms",
            &args.wtp_retry_ms,
            1..=600_000,
            |t, ms| t.retry_interval_ns = ms * 1_000_000,
        ),
        (
            "--wtp-group-retry-ms",
            &args.wtp_group_retry_ms,
            1..=600_000,
            |t, ms| t.group_retry_interval_ns = ms * 1_000_000,
        ),
        ("--wtp-ack-ms", &args.wtp_ack_ms, 1..=600_000, |t, ms| {
            t.ack_interval_ns = ms * 1_000_000
        }),
        (
            "--wtp-max-retransmissions",
            &args.wtp_max_retransmissions,
            0..=255,
            |t, n| t.max_retransmissions = u8::try_from(n).unwrap_or(u8::MAX),
        ),
        ("--wtp-mpl-ms", &args.wtp_mpl_ms, 0..=3_600_000, |t, ms| {
            t.mpl_ns = ms * 1_000_000
        }),
    ]
}
