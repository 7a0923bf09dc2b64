//! Each protocol's retransmission timers as the bench runs them, with the standard's
//! section they follow (`protocols_timers.csv`): one row per protocol and compared bearer
//! with its own timers, and the loss curves' equal-timer variant beside them. The values
//! come from the protocols' own modules, which set them on the libraries.

use wtlsperf_bearer::LinkProfile;
use wtlsperf_report::{Cell, Column, Provenance, Table};
use wtlsperf_spine::ProtocolId;

use crate::evaluate::loss_curves::{equal_first_timer_s, equal_label, EQUAL_TIMER_BEARER};
use crate::evaluate::vocabulary::BearerName;
use wtlsperf_drivers::registry::{self, RetransmissionTimers};

/// One row of `protocols_timers.csv` (columns in docs/results.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TimerRow {
    #[serde(serialize_with = "crate::evaluate::csv_file::display")]
    pub protocol: ProtocolId,
    pub bearer: BearerName,
    /// `default` (the protocol's own) or the loss curves' `equal: 1 s doubling`.
    pub timers: String,
    pub initial_timer_s: f64,
    /// The upper end of the first timer's random draw (CoAP); the first timer elsewhere.
    pub initial_timer_max_s: f64,
    pub backoff: f64,
    pub ceiling_s: Option<f64>,
    pub max_retransmissions: u32,
    pub source: String,
}

/// Each protocol's timers over `bearer` (its registry entry's), with its own first
/// timer, or with an equal one of `equal_s` seconds (fixed, no random factor, doubling;
/// each protocol keeps its own limit and ceiling).
fn schedules(
    bearer: &LinkProfile,
    equal_s: Option<u32>,
) -> Vec<(ProtocolId, RetransmissionTimers)> {
    registry::available()
        .map(|p| {
            let own = p.timers(bearer);
            let timers = match equal_s {
                Some(s) => own.with_initial(f64::from(s), 2.0),
                None => own,
            };
            (p.id(), timers)
        })
        .collect()
}

/// The rows: every protocol over every bearer of `bearers` with its own timers, then the
/// equal-timer variant over its bearer, when it is among them.
pub fn rows<'a>(bearers: impl Iterator<Item = &'a LinkProfile>) -> Vec<TimerRow> {
    let mut out = Vec::new();
    let mut equal = Vec::new();
    for b in bearers {
        let variants = if b.name == EQUAL_TIMER_BEARER {
            vec![None, Some(equal_first_timer_s(b))]
        } else {
            vec![None]
        };
        for equal_s in variants {
            let timers = match equal_s {
                Some(s) => equal_label(s),
                None => "default".to_owned(),
            };
            for (protocol, t) in schedules(b, equal_s) {
                let row = TimerRow {
                    protocol,
                    bearer: BearerName::of(b),
                    timers: timers.clone(),
                    initial_timer_s: t.initial_s,
                    initial_timer_max_s: t.initial_max_s,
                    backoff: t.backoff,
                    ceiling_s: t.ceiling_s,
                    max_retransmissions: t.max_retransmissions,
                    source: match equal_s {
                        Some(s) => format!(
                            "equal-timer variant: the first timer {s} s for every protocol, doubling, the protocol's own limit; the protocol's own: {}",
                            t.source
                        ),
                        None => t.source.to_owned(),
                    },
                };
                if equal_s.is_some() {
                    equal.push(row);
                } else {
                    out.push(row);
                }
            }
        }
    }
    out.extend(equal);
    out
}

/// The rows that differ only by bearer, once, with their bearers listed (every
/// protocol but WTLS has the same timers on every bearer).
fn grouped(rows: &[TimerRow]) -> Vec<(&TimerRow, String)> {
    let mut out: Vec<(&TimerRow, Vec<&str>)> = Vec::new();
    for r in rows {
        let same = |o: &&TimerRow| {
            TimerRow {
                bearer: r.bearer.clone(),
                ..(*o).clone()
            } == *r
        };
        match out.iter_mut().find(|(o, _)| same(o)) {
            Some((_, bearers)) => bearers.push(r.bearer.as_str()),
            None => out.push((r, vec![r.bearer.as_str()])),
        }
    }
    out.into_iter().map(|(r, b)| (r, b.join(", "))).collect()
}

/// The report's table of the timers.
pub fn table(rows: &[TimerRow]) -> Table {
    let from_code = || Provenance::derived("the protocol's module, as set on its library");
    let mut t = Table::new(
        "protocols_timers",
        "Each protocol's retransmission timers, with their source",
    )
    .caption("The handshake retransmission schedule each protocol runs here (first timer, what each retransmission multiplies it by, the largest timer, the retransmissions of one flight before the handshake fails) and the standard's section it follows. WTLS's first timer is scaled to the bearer; the others are the same on every bearer. The rows marked equal are the loss curves' equal-timer variant.")
    .column(Column::label("protocol"))
    .column(Column::label("bearer"))
    .column(Column::label("timers"))
    .column(Column::new("first timer", Some("s"), from_code()))
    .column(Column::new("back-off", Some("x"), from_code()))
    .column(Column::new("largest timer", Some("s"), from_code()))
    .column(Column::new("retransmissions", None, from_code()))
    .column(Column::label("source"));
    for (r, bearers) in grouped(rows) {
        let first = if (r.initial_timer_max_s - r.initial_timer_s).abs() > 1e-9 {
            format!("{:.1}-{:.1}", r.initial_timer_s, r.initial_timer_max_s)
        } else {
            format!("{:.2}", r.initial_timer_s)
        };
        t = t.row(vec![
            Cell::text(r.protocol.name()),
            Cell::text(bearers),
            Cell::text(&r.timers),
            Cell::text(first),
            Cell::num(r.backoff, 0),
            Cell::opt(r.ceiling_s, 0),
            Cell::num(f64::from(r.max_retransmissions), 0),
            Cell::text(&r.source),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocol_states_its_timers_and_the_equal_variant_is_equal() {
        let catalogue = crate::evaluate::vocabulary::Catalogue::shipped().unwrap();
        let rows = rows(catalogue.compared_bearers());
        let own: Vec<&TimerRow> = rows.iter().filter(|r| r.timers == "default").collect();
        let dtls = own
            .iter()
            .find(|r| r.protocol == wtlsperf_drivers::protocols::DTLS12)
            .unwrap();
        assert_eq!((dtls.initial_timer_s, dtls.max_retransmissions), (9.0, 12));
        assert!(own.iter().all(|r| !r.source.is_empty()));
        // LTE-M: WTLS's own first timer is about a tenth of DTLS's.
        let lte_wtls = own
            .iter()
            .find(|r| r.protocol == wtls::handshake::WTLS && r.bearer.as_str() == "lte-m")
            .unwrap();
        assert!(
            lte_wtls.initial_timer_s < 2.0,
            "{}",
            lte_wtls.initial_timer_s
        );
        let equal: Vec<&TimerRow> = rows.iter().filter(|r| r.timers != "default").collect();
        assert!(equal.len() >= 3);
        let first = equal[0].initial_timer_s;
        assert!(equal.iter().all(|r| r.initial_timer_s == first
            && r.initial_timer_max_s == first
            && r.backoff == 2.0));
        assert!(equal
            .iter()
            .all(|r| r.bearer.as_str() == EQUAL_TIMER_BEARER));
        assert_eq!(
            first, 1.0,
            "over LTE-M the equal first timer is RFC 6347's 1 s"
        );
    }

    #[test]
    fn the_table_lists_a_schedule_once_with_its_bearers() {
        let catalogue = crate::evaluate::vocabulary::Catalogue::shipped().unwrap();
        let rows = rows(catalogue.compared_bearers());
        let g = grouped(&rows);
        let dtls: Vec<_> = g
            .iter()
            .filter(|(r, _)| {
                r.protocol == wtlsperf_drivers::protocols::DTLS12 && r.timers == "default"
            })
            .collect();
        assert_eq!(dtls.len(), 1);
        assert!(dtls[0].1.contains("gsm-csd") && dtls[0].1.contains("lte-m"));
        // WTLS's timer is the bearer's: one row a bearer.
        let wtls = g
            .iter()
            .filter(|(r, _)| r.protocol == wtls::handshake::WTLS && r.timers == "default")
            .count();
        assert_eq!(wtls, catalogue.compared_bearers().count());
    }
}
