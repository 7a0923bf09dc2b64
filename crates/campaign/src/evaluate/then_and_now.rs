//! "Time to a secure channel, 2001 to today": WTLS (RSA-1024, K-163, P-256) beside
//! DTLS 1.2, EDHOC, DTLS 1.3 and DTLS 1.3 with ML-KEM, every handshake on every device
//! profile over the bearers of 2001 (GSM CSD, GPRS) and of today (LTE-M, NB-IoT, NB-IoT
//! over a GEO satellite), on the same axes. Every row is modelled (T_H = Eq. 3.84 over
//! the configuration's own flights + the client's time on the device + this machine's
//! server CPU, as `protocols.csv`); a row the protocols part also ran over the emulated
//! bearer on that emulated device carries the measured mean beside it and is marked
//! `measured`. The satellite profile is not among the compared bearers, so its rows are
//! modelled only. The figure shows 2001's setting (the thesis' Nokia 7650 on GSM CSD)
//! beside today's microcontroller (the nRF52840 profile, a Cortex-M4 priced with pqm4's
//! published ML-KEM cycle counts) on today's links; the CSV and the table hold every
//! device and bearer.
//!
//! This part reads the processing and protocols parts' results and runs nothing.

use std::path::Path;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::PublishedPqCost;
use wtlsperf_models::Authentication;
use wtlsperf_report::{
    Axis, BarSeries, Cell, Column, Figure, GroupedBarChart, Provenance, Section, Table,
};

use super::context::Ctx;
use super::csv_file::write_csv;
use super::pq_prices::pq_prices;
use super::processing::ProcessingResults;
use super::protocols::{wtls_config, Config, ProtocolResults, WtlsPricing};
use super::vocabulary::Catalogue;
use wtlsperf_drivers::protocols::model::{self, Device};

/// The bearers of 2001 and of today, in the table's order.
pub(crate) const BEARERS: [(&str, &str); 5] = [
    ("2001", "gsm-csd"),
    ("2001", "gprs-avg"),
    ("today", "lte-m"),
    ("today", "nb-iot"),
    ("today", "nb-iot-ntn-geo"),
];
/// The figure's settings: the thesis' handset on 2001's link, and today's
/// microcontroller (the nRF52840, a Cortex-M4 priced with pqm4's published cycle counts) on
/// today's.
const FIGURE_THEN: (&str, &str) = ("gsm-csd", "nokia7650");
const FIGURE_TODAY_DEVICE: &str = "nrf52840";
/// WTLS's cases on the axes: the studies' RSA-1024, their smallest Koblitz curve and
/// the P-256 case that compares like for like with today's suites (server-authenticated:
/// WAP's usual mode).
const WTLS_CASES: [&str; 3] = ["rsa1024/rsa1024", "163k/163k", "256p/256p"];

/// One row of `then_and_now.csv` (columns documented in docs/results.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ThenNowRow {
    /// `2001` or `today`.
    pub era: &'static str,
    pub protocol: &'static str,
    pub suite: String,
    /// `server` or `mutual`.
    pub auth: &'static str,
    pub bearer: String,
    pub device: String,
    /// T_H modelled (ms); empty where the device has no published or executed cost of an
    /// operation.
    pub modelled_ms: Option<f64>,
    /// Mean of the real runs over the emulated bearer on the emulated device, if run.
    pub measured_ms: Option<f64>,
    pub measured_runs: usize,
    /// `measured` where real runs exist, else `modelled`, each saying when the client's
    /// price is an estimate (a cost borrowed from another device's ratios, or a P-256
    /// stand-in); or `not available: ...`.
    pub kind: String,
    /// The client's price is an estimate (`protocols::Estimate`; the table flags the cell, `kind`
    /// says which in the CSV).
    #[serde(skip)]
    pub borrowed: bool,
}

/// The rows of the table and figure.
#[derive(Debug, Clone, Default)]
pub struct ThenAndNow {
    pub rows: Vec<ThenNowRow>,
}

/// Whether one of today's configurations is on the axes: the server-authenticated
/// classical and post-quantum handshakes, and EDHOC, which authenticates both sides
/// in every method (its rows say `mutual`).
fn selected_modern(c: &Config) -> bool {
    let named = SELECTED.contains(&c.contender.to_string().as_str());
    // a protocol the registry adds beyond those named: its compared configuration
    let other = !c.is_wtls()
        && !SELECTED
            .iter()
            .any(|t| t.split(':').next() == Some(c.protocol().name()));
    named || other
}

/// Today's configurations on the axes, by contender text.
const SELECTED: [&str; 6] = [
    "dtls1.2:ecdhe-ecdsa-p256-ccm8",
    "edhoc:method3-suite2",
    "dtls1.3:ecdhe-p256-ecdsa-ccm8",
    "dtls1.3:mlkem768-ecdsa-ccm8",
    "dtls1.3:x25519mlkem768-ecdsa-ccm8",
    "dtls1.3:mlkem768-mldsa44-ccm8",
];

/// The configurations on the axes: WTLS's cases from the processing part, today's from
/// the protocols part.
fn configs(processing: &ProcessingResults, protocols: &ProtocolResults) -> Vec<Config> {
    let wtls = WTLS_CASES.iter().filter_map(|label| {
        processing
            .cases
            .iter()
            .find(|c| c.label() == *label && c.auth == Authentication::ServerAuth)
            .map(|c| wtls_config(c, c.case.category))
    });
    wtls.chain(
        protocols
            .configs
            .iter()
            .filter(|c| selected_modern(c))
            .cloned(),
    )
    .collect()
}

impl ThenAndNow {
    /// Builds the rows: every configuration on every device and bearer of the axes.
    pub fn build(
        catalogue: &Catalogue,
        processing: &ProcessingResults,
        protocols: &ProtocolResults,
    ) -> anyhow::Result<ThenAndNow> {
        let published = pq_prices();
        let devices: Vec<Device> = catalogue
            .devices
            .iter()
            .map(|d| Device::Profile(Box::new(d.clone())))
            .collect();
        let mut bearers: Vec<(&'static str, &LinkProfile)> = Vec::new();
        for (era, name) in BEARERS {
            bearers.push((era, catalogue.bearer(name)?));
        }
        let mut rows = Vec::new();
        for c in configs(processing, protocols) {
            for (era, bearer) in &bearers {
                for dev in &devices {
                    rows.push(row(&c, era, bearer, dev, protocols, &published));
                }
            }
        }
        Ok(ThenAndNow { rows })
    }

    /// Writes `then_and_now.csv`.
    pub fn write_csv(&self, dir: &Path) -> anyhow::Result<()> {
        write_csv(&dir.join("then_and_now.csv"), &self.rows)
    }

    /// The report section: the figure (2001's setting beside today's microcontroller on
    /// today's links) and the table of every device and bearer.
    pub fn section(&self, ctx: &Ctx) -> Section {
        Section::new("then_and_now", "Time to a secure channel, 2001 to today")
            .intro(format!(
                "WTLS (RSA-1024, K-163, P-256, server-authenticated) beside DTLS 1.2, EDHOC, \
                 DTLS 1.3, QUIC and their post-quantum configurations, every handshake on every device profile \
                 over the links of 2001 (GSM CSD, GPRS) and of today (LTE-M, NB-IoT, NB-IoT \
                 over a GEO satellite). Modelled everywhere (T_H = Eq. 3.84 over each \
                 handshake's own flights + the client's time on the device + this machine's \
                 server CPU); where the protocols part ran the handshake over the emulated \
                 bearer on that device, the run's mean stands beside the model (table: \
                 'model / run'; measured with this machine's client, on another profile an \
                 emulated device, its modelled compute held in the real run). The figure shows the thesis' Nokia 7650 on GSM \
                 CSD beside the {FIGURE_TODAY_DEVICE} (a Cortex-M4; its ML-KEM costs are pqm4's \
                 published Cortex-M4 cycle counts at the profile's clock) on today's links. \
                 'n/a': the device profile has no price for an operation of that \
                 handshake; a flagged cell's client price is an estimate: it rests on a cost \
                 the profile borrows from another device's ratios (devices.csv, source \
                 borrowed), or on a P-256 key generation or signature the profile does not \
                 price, taken as one of its ECDH; then_and_now.csv has every row with its kind. {}",
                nominal_note(&ctx.catalogue)
            ))
            .figure(self.figure())
            .table(self.table(ctx))
    }

    /// The handshakes in row order: (protocol, suite, auth).
    fn handshakes(&self) -> Vec<(&'static str, String, &'static str)> {
        let mut out: Vec<(&'static str, String, &'static str)> = Vec::new();
        for r in &self.rows {
            let k = (r.protocol, r.suite.clone(), r.auth);
            if !out.contains(&k) {
                out.push(k);
            }
        }
        out
    }

    /// The row of a handshake on a bearer and device.
    fn find(
        &self,
        h: &(&'static str, String, &'static str),
        bearer: &str,
        device: &str,
    ) -> Option<&ThenNowRow> {
        self.rows.iter().find(|r| {
            r.protocol == h.0
                && r.suite == h.1
                && r.auth == h.2
                && r.bearer == bearer
                && r.device == device
        })
    }

    fn figure(&self) -> Figure {
        let settings: Vec<(&str, &str)> = std::iter::once(FIGURE_THEN)
            .chain(
                BEARERS
                    .iter()
                    .filter(|(era, _)| *era == "today")
                    .map(|(_, b)| (*b, FIGURE_TODAY_DEVICE)),
            )
            .collect();
        let categories = settings.iter().map(|(b, d)| format!("{b} / {d}")).collect();
        let mut chart = GroupedBarChart::new(
            "bearer / device",
            categories,
            Axis::new("time to a secure channel (modelled)", "ms").log(),
        );
        // A handshake without a bar in any setting has no legend entry either (the
        // legend lists the series drawn): the caption names it and says why.
        let mut undrawn: Vec<String> = Vec::new();
        for h in self.handshakes() {
            let values: Vec<Option<f64>> = settings
                .iter()
                .map(|(b, d)| self.find(&h, b, d).and_then(|r| r.modelled_ms))
                .collect();
            let name = format!("{} {} ({})", h.0, h.1, h.2);
            if values.iter().all(Option::is_none) {
                undrawn.push(name.clone());
            }
            chart = chart.series(BarSeries::new(name, modelled(), values));
        }
        let undrawn = if undrawn.is_empty() {
            String::new()
        } else {
            format!(
                " Not drawn, no price on these devices for one of its operations: {}.",
                undrawn.join("; ")
            )
        };
        Figure::new(
            "then_and_now",
            "Time to a secure channel, 2001 to today",
            chart,
        )
        .caption(format!(
            "Modelled T_H per handshake; missing bars: the device profile has no price for \
             an operation of the handshake (X25519 on every profile, binary curves or RSA \
             on some libraries, ML-KEM where neither pqm4 publishes nor this project \
             executed it). A bar whose client price rests on an estimate (a cost borrowed from \
             another device's ratios, or a P-256 stand-in) is flagged in the table.{undrawn}"
        ))
    }

    /// One row per device and bearer, one column per handshake: the model, and the
    /// measured mean after a slash where the protocols part ran it.
    fn table(&self, ctx: &Ctx) -> Table {
        let handshakes = self.handshakes();
        let mut t = Table::new(
            "then_and_now",
            "Time to a secure channel (ms), 2001 to today: model / run",
        )
        .caption(
            "The WTLS handshakes are encoded as the thesis encoded them: one-byte parameter \
             indices (its Table 3.2), which WAP-261 does not define for P-256, B-163, \
             K-283 or B-283. WAP-261 sends those curves' parameters explicitly: the \
             report's section on transmission (beside thesis Table 4.11) gives each \
             case's bytes both ways, and the finding on WTLS \
             against DTLS 1.2 judges P-256 in both encodings.",
        )
        .column(Column::label("era"))
        .column(Column::label("bearer"))
        .column(Column::label("device"));
        for h in &handshakes {
            t = t.column(Column::new(
                format!("{} {} ({})", h.0, h.1, h.2),
                Some("ms"),
                model_then_run(),
            ));
        }
        let _ = ctx;
        let mut settings: Vec<(&'static str, String, String)> = Vec::new();
        for r in &self.rows {
            let k = (r.era, r.bearer.clone(), r.device.clone());
            if !settings.contains(&k) {
                settings.push(k);
            }
        }
        for (era, bearer, device) in settings {
            let mut cells = vec![Cell::text(era), Cell::text(&bearer), Cell::text(&device)];
            for h in &handshakes {
                let row = self.find(h, &bearer, &device);
                let cell = Cell::text(match row {
                    Some(ThenNowRow {
                        modelled_ms: Some(m),
                        measured_ms: Some(x),
                        ..
                    }) => {
                        format!("{m:.0} / {x:.0}")
                    }
                    Some(ThenNowRow {
                        modelled_ms: Some(m),
                        ..
                    }) => format!("{m:.0}"),
                    _ => "n/a".to_owned(),
                });
                cells.push(match row {
                    Some(r) if r.borrowed => cell.flag(BORROWED_NOTE),
                    _ => cell,
                });
            }
            t = t.row(cells);
        }
        t
    }
}

/// The note of a cell whose client price is an estimate.
const BORROWED_NOTE: &str = "the client's price is an estimate, not a published or executed price (then_and_now.csv, kind, says which)";

/// One configuration on one bearer and device: modelled, with the protocols part's
/// measured mean where it ran. A device without a price for one of the handshake's
/// operations gets a row without a model, marked not available; one whose price borrows
/// a cost from another device's ratios is marked so.
fn row(
    c: &Config,
    era: &'static str,
    bearer: &LinkProfile,
    dev: &Device,
    protocols: &ProtocolResults,
    published: &[PublishedPqCost],
) -> ThenNowRow {
    let client = match c.wtls_pricing(dev) {
        Some(WtlsPricing::NotOffered) => Err(
            "not available: the device's library does not offer one of the case's key types"
                .to_owned(),
        ),
        _ => c.client_time(dev, published).unwrap_or_else(|| {
            Err(
                "not available: the device profile has no price for an operation of this handshake"
                    .to_owned(),
            )
        }),
    };
    let modelled_ms = client.as_ref().ok().map(|client_ms| {
        model::duration_ms(
            c.flights_over(bearer),
            bearer,
            *client_ms,
            c.server_cpu_us / 1e3,
        )
    });
    let run = protocols.rows.iter().find(|r| {
        r.protocol == c.protocol()
            && r.suite == c.suite()
            && r.auth == c.auth()
            && r.bearer.as_str() == bearer.name
            && r.device.as_str() == dev.name()
            && r.measured_runs > 0
    });
    let estimate = c.estimate_on(dev, published);
    let borrowed = estimate.is_some();
    let kind = match (&client, run, estimate) {
        (Err(reason), _, _) => reason.clone(),
        (Ok(_), Some(_), Some(e)) => format!(
            "measured (an emulated device held to an estimated client price, {})",
            e.words()
        ),
        (Ok(_), Some(_), None) => "measured".to_owned(),
        (Ok(_), None, Some(e)) => format!("modelled (an estimated client price, {})", e.words()),
        (Ok(_), None, None) => "modelled".to_owned(),
    };
    ThenNowRow {
        era,
        protocol: c.protocol().name(),
        suite: c.suite(),
        auth: super::vocabulary::auth_name(c.auth()),
        bearer: bearer.name.clone(),
        device: dev.name().to_owned(),
        modelled_ms,
        measured_ms: run.and_then(|r| r.measured_ms),
        measured_runs: run.map_or(0, |r| r.measured_runs),
        kind,
        borrowed: borrowed && client.is_ok(),
    }
}

/// Which of the axes' bearers have nominal rather than measured rates, and what that
/// means for a duration over them (`vocabulary::nominal_rates_note`).
fn nominal_note(catalogue: &Catalogue) -> String {
    let bearers: Vec<&LinkProfile> = BEARERS
        .iter()
        .filter_map(|(_, name)| catalogue.bearer(name).ok())
        .collect();
    super::vocabulary::nominal_rates_note(bearers.into_iter()).unwrap_or_default()
}

/// The table's cells, `model / measured`: the model, then the protocols part's mean run
/// where it ran.
fn model_then_run() -> Provenance {
    Provenance::derived(
        "the modelled T_H (Eq. 3.84 per flight + T_PD_C + T_PD_S, as the figure), then after a \
         slash the mean of the protocols part's real runs over the emulated bearer where the \
         handshake ran: measured with this machine's client, on a device profile an emulated \
         device (its modelled compute held in the real run)",
    )
}

fn modelled() -> Provenance {
    Provenance::modelled(
        "T_H = Eq. 3.84 per flight + T_PD_C + T_PD_S",
        "each handshake's flights from the in-memory run, the bearer profile's rates and mean \
         traversal, the device profile's operation costs (ML-KEM: pqm4's published cycle \
         counts, measured on its own board and priced at the device's clock), this \
         machine's server CPU",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::processing::tests::synthetic;
    use crate::evaluate::vocabulary::BearerName;

    #[test]
    fn every_device_row_is_on_the_axes_with_each_wtls_case() {
        let dir = crate::evaluate::vocabulary::tests::fixture_data();
        let catalogue = Catalogue::load(dir.path()).unwrap();
        let processing = ProcessingResults {
            cases: WTLS_CASES
                .into_iter()
                .flat_map(|c| Authentication::ALL.map(|a| synthetic(c, a, 1.0)))
                .collect(),
            variants: vec![],
            skipped: vec![],
        };
        let protocols = ProtocolResults {
            configs: Vec::new(),
            rows: Vec::new(),
            loss: Vec::new(),
            peers: Vec::new(),
            measured_devices: Vec::new(),
            bearers: Vec::new(),
            loss_bearer: BearerName::of(catalogue.bearer("nb-iot").unwrap()),
            typical_bearer_note: None,
            hybrid_anchor: None,
            stage_seconds: Vec::new(),
            cookie: Vec::new(),
            timers: Vec::new(),
        };
        let t = ThenAndNow::build(&catalogue, &processing, &protocols).unwrap();
        // Every device of the data files, the fixture's new one included, on every
        // bearer of the axes, for each WTLS case: 3 cases x devices x 5 bearers.
        assert_eq!(t.rows.len(), 3 * catalogue.devices.len() * BEARERS.len());
        let fixture: Vec<&ThenNowRow> = t
            .rows
            .iter()
            .filter(|r| r.device == "fixture-m33")
            .collect();
        assert_eq!(fixture.len(), 3 * BEARERS.len());
        // Its library offers P-256 only: RSA-1024 and K-163 are not available, and
        // nothing is extrapolated for them.
        for r in fixture.iter().filter(|r| r.suite != "256p/256p") {
            assert_eq!(r.modelled_ms, None, "{r:?}");
            assert!(r.kind.contains("does not offer"), "{r:?}");
        }
        // A shipped device whose library offers every key type is priced for all three,
        // from its own numbers.
        assert!(t
            .rows
            .iter()
            .filter(|r| r.device == "nokia7650")
            .all(|r| r.modelled_ms.is_some() && !r.borrowed));
        // A price resting on another device's ratios is marked, in the CSV and the table:
        // the ARM7's RSA, the LPC1114's P-256 signature check.
        let borrowed = |device: &str, suite: &str| {
            t.rows
                .iter()
                .filter(|r| r.device == device && r.suite == suite)
                .all(|r| r.borrowed && r.kind.contains("borrowed"))
        };
        assert!(borrowed("arm7tdmi-25mhz", "rsa1024/rsa1024"));
        assert!(borrowed("lpc1114-m0", "256p/256p"));
        assert!(t.rows.iter().all(|r| r.era
            == if r.bearer == "gsm-csd" || r.bearer == "gprs-avg" {
                "2001"
            } else {
                "today"
            }));
    }
}
