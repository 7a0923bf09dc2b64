//! "Time to a secure channel, 2001 to today": WTLS on the GSM CSD link of 2001 with the
//! thesis' handset beside DTLS 1.2, EDHOC, DTLS 1.3 and DTLS 1.3 with ML-KEM on NB-IoT,
//! LTE-M and NB-IoT over a GEO satellite with today's microcontroller, on the same axes.
//! Every row is modelled (T_H = Eq. 3.84 over the configuration's own flights + the
//! client's time on the device + this machine's server CPU, as `protocols.csv`); a row
//! the protocols part also ran over the emulated bearer carries the measured mean
//! beside it and is marked `measured`. The satellite profile is not among the compared
//! bearers, so its rows are modelled only.
//!
//! This part reads the protocols part's configurations and rows and runs nothing.

use std::path::Path;

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::published_pq::published_pq_costs;
use wtlsperf_models::Authentication;
use wtlsperf_report::{
    Axis, BarSeries, Cell, Column, Figure, GroupedBarChart, Provenance, Section, Table,
};
use wtlsperf_spine::Protocol;

use super::context::Ctx;
use super::csv_file::write_csv;
use super::protocols::{Config, ProtocolResults};
use wtlsperf_drivers::protocols::model::{self, Device};

/// The link and handset of 2001 (the thesis' Nokia 7650 on GSM CSD).
const THEN: (&str, &str) = ("gsm-csd", "nokia7650");
/// Today's links, and today's client: the Cortex-M4 profile, the one with published
/// ML-KEM costs (pqm4).
pub(crate) const TODAY_BEARERS: [&str; 3] = ["nb-iot", "lte-m", "nb-iot-ntn-geo"];
const TODAY_DEVICE: &str = "nrf52840";

/// One row of `then_and_now.csv` (columns documented in docs/results.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ThenNowRow {
    /// `2001` or `today`.
    pub era: &'static str,
    pub protocol: &'static str,
    pub suite: String,
    pub bearer: String,
    pub device: String,
    /// T_H modelled (ms); empty where the device has no published cost of an operation.
    pub modelled_ms: Option<f64>,
    /// Mean of the real runs over the emulated bearer on the emulated device, if run.
    pub measured_ms: Option<f64>,
    pub measured_runs: usize,
    /// `measured` where real runs exist, else `modelled`; or `not available: ...`.
    pub kind: String,
}

/// The rows of the table and figure.
#[derive(Debug, Clone, Default)]
pub struct ThenAndNow {
    pub rows: Vec<ThenNowRow>,
}

/// Whether a configuration is on the 2001-to-today axes: WTLS server-authenticated
/// (every category's case), and the server-authenticated classical and ML-KEM-768
/// handshakes of today.
fn selected(c: &Config) -> bool {
    if c.auth() != Authentication::ServerAuth {
        return false;
    }
    match c.protocol() {
        Protocol::Wtls => true,
        Protocol::Dtls12 => c.suite() == "ecdhe-ecdsa-p256-ccm8",
        Protocol::Edhoc => true,
        Protocol::Dtls13 => {
            c.suite() == "ecdhe-p256-ecdsa-ccm8" || c.suite() == "mlkem768-ecdsa-ccm8"
        }
    }
}

impl ThenAndNow {
    /// Builds the rows from the protocols part.
    pub fn build(ctx: &Ctx, protocols: &ProtocolResults) -> anyhow::Result<ThenAndNow> {
        let published = published_pq_costs().unwrap_or_default();
        let device = |name: &str| -> anyhow::Result<Device> {
            ctx.catalogue
                .devices
                .iter()
                .find(|d| d.name == name)
                .map(|d| Device::Profile(Box::new(d.clone())))
                .ok_or_else(|| anyhow::anyhow!("device {name} is not in the catalogue"))
        };
        let mut settings: Vec<(&'static str, LinkProfile, Device)> = vec![(
            "2001",
            ctx.catalogue.bearer(THEN.0)?.clone(),
            device(THEN.1)?,
        )];
        for b in TODAY_BEARERS {
            settings.push((
                "today",
                ctx.catalogue.bearer(b)?.clone(),
                device(TODAY_DEVICE)?,
            ));
        }
        let mut rows = Vec::new();
        for c in protocols.configs.iter().filter(|c| selected(c)) {
            for (era, bearer, dev) in &settings {
                // WTLS on 2001's setting and today's; today's protocols on today's only
                if *era == "2001" && c.protocol() != Protocol::Wtls {
                    continue;
                }
                let Some(client) = c.client_time(dev, &published) else {
                    continue;
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
                let kind = match (&client, run) {
                    (Err(reason), _) => reason.clone(),
                    (Ok(_), Some(_)) => "measured".to_owned(),
                    (Ok(_), None) => "modelled".to_owned(),
                };
                rows.push(ThenNowRow {
                    era,
                    protocol: c.protocol().name(),
                    suite: c.suite(),
                    bearer: bearer.name.clone(),
                    device: dev.name().to_owned(),
                    modelled_ms,
                    measured_ms: run.and_then(|r| r.measured_ms),
                    measured_runs: run.map_or(0, |r| r.measured_runs),
                    kind,
                });
            }
        }
        Ok(ThenAndNow { rows })
    }

    /// Writes `then_and_now.csv`.
    pub fn write_csv(&self, dir: &Path) -> anyhow::Result<()> {
        write_csv(&dir.join("then_and_now.csv"), &self.rows)
    }

    /// The report section: the figure (modelled, one bar per handshake and setting)
    /// and the table with the measured means where run.
    pub fn section(&self, ctx: &Ctx) -> Section {
        Section::new("then_and_now", "Time to a secure channel, 2001 to today")
            .intro(format!(
                "WTLS on GSM CSD with the Nokia 7650 (2001) beside today's handshakes on \
                 NB-IoT, LTE-M and NB-IoT over a GEO satellite with the {TODAY_DEVICE} \
                 (Cortex-M4, whose ML-KEM costs pqm4 publishes), on the same axes. Modelled \
                 everywhere (T_H = Eq. 3.84 over each handshake's own flights + the client's \
                 time on the device + this machine's server CPU); where the protocols part \
                 ran the handshake over the emulated bearer on that emulated device, the \
                 measured mean stands beside the model and the row is marked measured. The \
                 bearers' figures are typical values (data/bearers/profiles.csv)."
            ))
            .figure(self.figure())
            .table(self.table(ctx))
    }

    fn figure(&self) -> Figure {
        let settings: Vec<(String, String)> = {
            let mut v: Vec<(String, String)> = Vec::new();
            for r in &self.rows {
                let k = (r.bearer.clone(), r.device.clone());
                if !v.contains(&k) {
                    v.push(k);
                }
            }
            v
        };
        let categories = settings.iter().map(|(b, d)| format!("{b} / {d}")).collect();
        let mut chart = GroupedBarChart::new(
            "bearer / device",
            categories,
            Axis::new("time to a secure channel (modelled)", "ms").log(),
        );
        let mut handshakes: Vec<(&'static str, String)> = Vec::new();
        for r in &self.rows {
            if !handshakes.contains(&(r.protocol, r.suite.clone())) {
                handshakes.push((r.protocol, r.suite.clone()));
            }
        }
        for (protocol, suite) in handshakes {
            let values = settings
                .iter()
                .map(|(b, d)| {
                    self.rows
                        .iter()
                        .find(|r| {
                            r.protocol == protocol
                                && r.suite == suite
                                && &r.bearer == b
                                && &r.device == d
                        })
                        .and_then(|r| r.modelled_ms)
                })
                .collect();
            chart = chart.series(BarSeries::new(
                format!("{protocol} {suite}"),
                modelled(),
                values,
            ));
        }
        Figure::new(
            "then_and_now",
            "Time to a secure channel, 2001 to today",
            chart,
        )
        .caption(
            "Modelled T_H per handshake (server-authenticated); missing bars: no published \
             device cost for an operation (X25519, or ML-KEM off the Cortex-M4).",
        )
    }

    fn table(&self, ctx: &Ctx) -> Table {
        let mut t = Table::new("then_and_now", "Time to a secure channel, 2001 to today")
            .column(Column::label("era"))
            .column(Column::label("protocol"))
            .column(Column::label("suite / case"))
            .column(Column::label("bearer"))
            .column(Column::label("device"))
            .column(Column::new("modelled", Some("ms"), modelled()))
            .column(Column::new("measured", Some("ms"), ctx.measured()))
            .column(Column::new("runs", None, ctx.measured()))
            .column(Column::label("kind"));
        for r in &self.rows {
            t = t.row(vec![
                Cell::text(r.era),
                Cell::text(r.protocol),
                Cell::text(&r.suite),
                Cell::text(&r.bearer),
                Cell::text(&r.device),
                Cell::opt(r.modelled_ms, 0),
                Cell::opt(r.measured_ms, 0),
                Cell::num(r.measured_runs as f64, 0),
                Cell::text(&r.kind),
            ]);
        }
        t
    }
}

fn modelled() -> Provenance {
    Provenance::modelled(
        "T_H = Eq. 3.84 per flight + T_PD_C + T_PD_S",
        "each handshake's flights from the in-memory run, the bearer profile's rates and mean \
         traversal, the device profile's (and pqm4's published) operation costs, this \
         machine's server CPU",
    )
}
