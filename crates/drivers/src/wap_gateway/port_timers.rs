//! WTP's timers per connection-mode port: `--wtp-retry-ms`, `--wtp-ack-ms` and
//! `--wtp-max-retransmissions`, each for every port or, as `PORT=VALUE`, for one.

use anyhow::anyhow;
use wtlsperf_wap::wtp::Timers;

use super::{WapPorts, ROLES};
use crate::wap_client::WspMode;

/// A value of a `gateway --wap` option for one port (`PORT=VALUE`) or, without a port,
/// for every port it applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSetting {
    pub port: Option<u16>,
    pub value: u64,
}

impl std::str::FromStr for PortSetting {
    type Err = String;

    fn from_str(s: &str) -> Result<PortSetting, String> {
        let (port, value) = match s.split_once('=') {
            Some((p, v)) => (Some(p.parse().map_err(|e| format!("port {p:?}: {e}"))?), v),
            None => (None, s),
        };
        let value = value
            .parse()
            .map_err(|e| format!("{value:?} is not a whole number ({e})"))?;
        Ok(PortSetting { port, value })
    }
}

/// The WTP timers of each connection-mode port (by role offset) that the options set:
/// WAP-224 leaves the values to the bearer (§9.12), so an operator may tune them per
/// port; unset values keep [`Timers::default`]. Settings without a port come first,
/// then those naming one.
pub fn port_timers(args: &WapPorts) -> anyhow::Result<Vec<(u16, Timers)>> {
    let connection: Vec<u16> = ROLES
        .iter()
        .filter(|r| r.mode == WspMode::Connection)
        .map(|r| r.offset)
        .collect();
    let mut timers: Vec<(u16, Timers)> =
        connection.iter().map(|o| (*o, Timers::default())).collect();
    for (option, settings, range, set) in timer_options(args) {
        let mut ordered: Vec<&PortSetting> = settings.iter().filter(|s| s.port.is_none()).collect();
        ordered.extend(settings.iter().filter(|s| s.port.is_some()));
        for setting in ordered {
            anyhow::ensure!(
                range.contains(&setting.value),
                "{option} {}: must be {} to {}",
                setting.value,
                range.start(),
                range.end()
            );
            let offset = match setting.port {
                None => None,
                Some(p) => Some(
                    p.checked_sub(args.wap_base_port)
                        .filter(|o| connection.contains(o))
                        .ok_or_else(|| {
                            anyhow!(
                                "{option} {p}={}: not a connection-mode WAP port ({} or {})",
                                setting.value,
                                args.wap_base_port + 1,
                                args.wap_base_port + 3
                            )
                        })?,
                ),
            };
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

/// Each timer option: its name, its settings, the values it takes, and what it sets.
type TimerOption<'a> = (
    &'static str,
    &'a [PortSetting],
    std::ops::RangeInclusive<u64>,
    fn(&mut Timers, u64),
);

fn timer_options(args: &WapPorts) -> [TimerOption<'_>; 3] {
    [
        (
            "--wtp-retry-ms",
            &args.wtp_retry_ms,
            1..=600_000,
            |t, ms| t.retry_interval_ns = ms * 1_000_000,
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
    ]
}
