//! The report subsection of the post-quantum cost table.

use wtlsperf_report::{Cell, Column, Provenance, Section, Table};

use super::findings::budget_rule;
use super::{Affordability, Channel, PqCost};
use crate::evaluate::context::Ctx;

fn modelled() -> Provenance {
    Provenance::modelled(
        "T_H = Eq. 3.84 per flight + T_PD_C + T_PD_S, post-quantum minus classical",
        "each handshake's flights (DTLS 1.3, QUIC) fragmented in memory to the bearer's datagram \
         payload limit, the bearer profile's rates and mean traversal, the device profile's \
         operation costs (ML-KEM: pqm4's published cycle counts, measured on pqm4's own \
         board and priced at the device's clock, PQClean's executed ones on the \
         *-executed profiles), this machine's server CPU",
    )
}

/// A column of post-quantum minus classical run means: measured on this machine, on
/// another device profile an emulated device (the basis column says which).
fn run_difference(ctx: &Ctx) -> Provenance {
    Provenance::derived(format!(
        "post-quantum minus classical mean of the protocols part's runs over the emulated \
         bearer ({}): measured with this machine's client; on another device profile an \
         emulated device, its modelled compute held in the real run (basis)",
        ctx.measured()
    ))
}

impl PqCost {
    /// The protocols of the table's rows, in first-seen order.
    fn protocols(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !out.contains(&r.protocol.as_str()) {
                out.push(&r.protocol);
            }
        }
        out
    }

    /// The section: the rule, then the rows with every cost priced (the devices
    /// without a published or executed ML-KEM price are named in a paragraph instead of
    /// a row each).
    pub fn section(&self, ctx: &Ctx) -> Section {
        let unavailable = self.unpriced();
        let s = Section::new(
            "pq_cost",
            "What post-quantum key exchange and authentication cost, and where they stop being affordable",
        )
        .intro(format!(
            "{} with ML-KEM-768 (alone, or in the P-256 or X25519 hybrid), with ML-DSA-44 \
             certificates, or both, each against the same protocol with P-256 ECDHE and \
             ECDSA, same cipher suite and library, per device and bearer: \
             extra bytes and datagrams at the bearer's MTU, extra client compute on the \
             device, extra time to a secure channel, modelled everywhere and run where the \
             protocols part ran both handshakes on that device (measured on this machine; \
             on another device profile an emulated device, its modelled compute held in \
             the real run; pq_cost.csv). The rule: {} {}",
            self.protocols().join(" and "),
            budget_rule(),
            self.nominal_note.as_deref().unwrap_or_default()
        ))
        .table(self.table(ctx));
        let s = match self.channel_table() {
            Some(t) => s.table(t),
            None => s,
        };
        if unavailable.is_empty() {
            s
        } else {
            s.paragraph(format!(
                "Not priced (no published or executed cost of an operation the handshake needs, \
                 never extrapolated from elliptic-curve numbers): {}; their rows are in \
                 pq_cost.csv with the reason.",
                unavailable.join("; ")
            ))
        }
    }

    /// The devices with a configuration left unpriced, grouped by which: `nokia7650,
    /// esp32 (every post-quantum configuration)`, `nrf52840 (x25519mlkem768-ecdsa-ccm8
    /// only)`, so a device the tables price for the other configurations is not listed
    /// as unpriced outright.
    pub(super) fn unpriced(&self) -> Vec<String> {
        use std::collections::{BTreeMap, BTreeSet};
        let mut all: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut missing: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for r in &self.rows {
            all.entry(&r.device).or_default().insert(&r.pq_suite);
            if matches!(r.affordable, Affordability::NotAvailable(_)) {
                missing.entry(&r.device).or_default().insert(&r.pq_suite);
            }
        }
        // Devices in catalogue order of first appearance, grouped by what they lack.
        let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
        let mut seen = BTreeSet::new();
        for r in &self.rows {
            let Some(suites) = missing.get(r.device.as_str()) else {
                continue;
            };
            if !seen.insert(r.device.as_str()) {
                continue;
            }
            let what = if Some(suites) == all.get(r.device.as_str()) {
                "every post-quantum configuration".to_owned()
            } else {
                format!(
                    "{} only",
                    suites.iter().copied().collect::<Vec<_>>().join(", ")
                )
            };
            match groups.iter_mut().find(|(w, _)| *w == what) {
                Some((_, devices)) => devices.push(&r.device),
                None => groups.push((what, vec![&r.device])),
            }
        }
        groups
            .into_iter()
            .map(|(what, devices)| format!("{} ({what})", devices.join(", ")))
            .collect()
    }

    /// The classical, hybrid key exchange and fully post-quantum handshakes' time to a
    /// secure channel per device and bearer, with the ones over the budget named.
    fn channel_table(&self) -> Option<Table> {
        let times = self.channel_times();
        let protocol = times.first()?.protocol.clone();
        let time = || {
            Provenance::derived("the run's mean where the handshake ran over the emulated bearer on the device (measured with this machine's client; on another device profile an emulated device, its modelled compute held in the real run), else the modelled T_H (pq_cost.csv)")
        };
        let mut t = Table::new(
            "pq_channel",
            "Time to a secure channel: classical, hybrid key exchange, fully post-quantum",
        )
        .caption(format!("{protocol}; * where modelled (no run of the handshake on that device and bearer), else the run's mean; empty where the device has no published or executed price for an operation the handshake needs; over the budget: beyond its row's margin (the rule above)."))
        .column(Column::label("device"))
        .column(Column::label("bearer"));
        for c in Channel::ALL {
            t = t.column(Column::new(c.label(), Some("s"), time()));
        }
        t = t.column(Column::label("over the budget"));
        for r in times.iter().filter(|r| r.protocol == protocol) {
            let mut cells = vec![Cell::text(&r.device), Cell::text(&r.bearer)];
            let mut over: Vec<&str> = Vec::new();
            for c in Channel::ALL {
                let timed = r.time(c);
                if timed.and_then(|x| x.over_budget()) == Some(true) {
                    over.push(c.label());
                }
                cells.push(match timed {
                    Some(x) => Cell::text(x.seconds_text()),
                    None => Cell::Missing,
                });
            }
            cells.push(Cell::text(if over.is_empty() {
                "none".to_owned()
            } else {
                over.join(", ")
            }));
            t = t.row(cells);
        }
        Some(t)
    }

    fn table(&self, ctx: &Ctx) -> Table {
        let mut t = Table::new(
            "pq_cost",
            format!(
                "Post-quantum minus classical ({}), per device and bearer",
                self.protocols().join(", ")
            ),
        )
        .column(Column::label("suite"))
        .column(Column::label("bearer"))
        .column(Column::label("device"))
        .column(Column::new("extra bytes", Some("B"), modelled()))
        .column(Column::new("extra datagrams", None, modelled()))
        .column(Column::new("extra client", Some("ms"), modelled()))
        .column(Column::new("extra, modelled", Some("ms"), modelled()))
        .column(Column::new("extra, run", Some("ms"), run_difference(ctx)))
        .column(Column::new(
            "post-quantum, deciding",
            Some("ms"),
            modelled(),
        ))
        .column(Column::label("basis"))
        .column(Column::new("margin", Some("ms"), Provenance::derived("5 % of the budget, widened by the row's measured-to-modelled gap or its protocol's model bias on the bearer (the rule)")))
        .column(Column::label("affordable"));
        for r in self
            .rows
            .iter()
            .filter(|r| !matches!(r.affordable, Affordability::NotAvailable(_)))
        {
            t = t.row(vec![
                Cell::text(&r.pq_suite),
                Cell::text(&r.bearer),
                Cell::text(&r.device),
                Cell::num(r.extra_bytes as f64, 0),
                Cell::num(r.extra_datagrams as f64, 0),
                Cell::opt(r.extra_client_ms, 1),
                Cell::opt(r.extra_modelled_ms, 0),
                Cell::opt(r.extra_measured_ms, 0),
                Cell::opt(r.deciding_ms().map(|d| d.1), 0),
                Cell::text(r.basis_words()),
                Cell::opt(r.margin_ms, 0),
                Cell::text(r.affordable.to_string()),
            ]);
        }
        t
    }
}
