//! Part 4, the whole handshake (thesis section 4.4, Levi-Savas Figure 6, Herwono-Liebhardt
//! ICICS Fig. 3 and Aachen Figure 4).
//!
//! T_H = T_PD + T_TD + T_QD per case and bearer (Figures 4.39-4.43 with an idle gateway).
//! The thesis' T_PD is dominated by a 2004 Nokia 7650 client, about a thousand times
//! slower than this machine, so three versions are shown and labelled: the thesis'
//! inputs, ours, and a composite "thesis client + our gateway" (what a 2004 phone would
//! see against a gateway like ours).

use wtls::suite::Case;
use wtlsperf_models::overall::{
    herwono_duration_ms, herwono_throughputs_bps, levi_savas_response, thesis_case_handshake,
    LeviSavasScenario,
};
use wtlsperf_models::queue::{group_load, published_handshake_jobs, MixtureCase, Variant};
use wtlsperf_models::reference::{self, herwono_groups_of};
use wtlsperf_models::Authentication;
use wtlsperf_report::{
    Axis, BarSeries, Cell, Column, Figure, GroupedBarChart, LineChart, Provenance, Section, Series,
    Table,
};

use super::context::Ctx;
use super::device::emulated::EmulatedRun;
use super::processing::{CaseResult, ProcessingResults};
use super::queue::QueueResults;
use super::transmission::{
    groups_with_overhead, modelled_duration_ms, pk_bytes, TransmissionResults,
};

/// A bearer of thesis Table 4.15 as the overall model uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bearer {
    /// Name as in Table 4.15.
    pub name: String,
    /// Up and down rate (bit/s).
    pub up_bps: f64,
    /// Down rate (bit/s).
    pub down_bps: f64,
    /// Mean one-way traversal (ms).
    pub traversal_ms: f64,
}

/// GSM CSD and the three GPRS cases of Table 4.15, rates from Table 4.13.
pub fn thesis_bearers() -> Vec<Bearer> {
    let slots = reference::gprs_slots().unwrap_or_default();
    let rates = |slot: &str| {
        slots
            .iter()
            .find(|s| s.time_slot == slot)
            .map(|s| (s.upload_kbps * 1000.0, s.download_kbps * 1000.0))
    };
    let mut out = Vec::new();
    for row in reference::bearer_traversal().unwrap_or_default() {
        let (up, down) = match row.bearer.as_str() {
            "GSM CSD" => (9600.0, 9600.0),
            "GPRS worst case" => rates("8PM").unwrap_or((11_330.0, 19_000.0)),
            "GPRS average case" => rates("12PM").unwrap_or((10_500.0, 18_770.0)),
            "GPRS best case" => rates("12AM").unwrap_or((12_760.0, 28_890.0)),
            _ => continue,
        };
        out.push(Bearer {
            name: row.bearer.clone(),
            up_bps: up,
            down_bps: down,
            traversal_ms: row.traversal_mean_ms,
        });
    }
    out
}

/// T_H of one case over one bearer, three ways (ms).
#[derive(Debug, Clone, PartialEq)]
pub struct OverallRow {
    /// Case.
    pub case: Case,
    /// Mode.
    pub auth: Authentication,
    /// Bearer.
    pub bearer: String,
    /// Thesis inputs (Tables 4.1/4.2, 4.11, 4.15, Eq. 3.84), symmetric rate = the slower.
    pub thesis_ms: Option<f64>,
    /// Our T_PD + our flights through the flight model.
    pub ours_ms: f64,
    /// Thesis client T_PD_C + our gateway + our transmission.
    pub composite_ms: Option<f64>,
    /// Measured end to end: real handshakes of an emulated Nokia 7650 client with our
    /// gateway over the emulated bearer (part 3b, `device_runs.csv`), median; `None`
    /// where no emulated bearer stands for this one.
    pub emulated_ms: Option<f64>,
}

/// The emulated bearer profile that stands for a bearer of Table 4.15 in part 3b's runs.
fn emulated_profile(bearer: &str) -> Option<&'static str> {
    match bearer {
        "GSM CSD" => Some("gsm-csd"),
        "GPRS average case" => Some("gprs-avg"),
        _ => None,
    }
}

/// The measured duration of the emulated Nokia 7650 runs of one case (ms).
fn emulated_ms(
    runs: &[EmulatedRun],
    case: Case,
    auth: Authentication,
    bearer: &str,
) -> Option<f64> {
    let profile = emulated_profile(bearer)?;
    runs.iter()
        .find(|r| {
            r.device.is_thesis_device() && r.case == case && r.auth == auth && r.bearer.is(profile)
        })
        .map(|r| r.measured_ms)
}

/// One point of Figures 4.44-4.46: T_H of a mutual category-3 handshake over GSM CSD
/// at an arrival rate, with the queue delay of one reading of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedHandshake {
    /// 44, 45 or 46: the figure (the leaf's strength level 1, 2 or 3).
    pub figure: u8,
    /// Case.
    pub case: Case,
    /// `thesis, as published`, `thesis, corrected` or `ours, corrected`.
    pub inputs: &'static str,
    /// Handshakes per second.
    pub lambda_hs_per_s: f64,
    /// T_H (ms); `None` beyond saturation.
    pub th_ms: Option<f64>,
}

/// The cases of Figures 4.44-4.46: category 3 (the four CAs of strength level 3), leaf
/// of strength level 1, 2 or 3, as in the thesis' three figures.
pub fn queued_figure_cases() -> Vec<(u8, Case)> {
    let mut out = Vec::new();
    for (figure, level) in [(44u8, 1u8), (45, 2), (46, 3)] {
        for c in Case::ALL.iter().filter(|c| c.category == 3) {
            if c.leaf.strength_level() == level {
                out.push((figure, *c));
            }
        }
    }
    out
}

/// T_H with queue delay at 0-100 handshakes/s (thesis section 4.4, Figures 4.44-4.46):
/// T_PD and T_TD of the case (published: Tables 4.1 and 4.12; ours: measured processing
/// and our flights through the transmission model over GSM CSD), plus T_QD of Eq. 3.12
/// on the published per-message service times (as published and corrected) or on our
/// measured per-job service times (corrected).
pub fn queued_handshakes(processing: &ProcessingResults) -> Vec<QueuedHandshake> {
    let ttd = reference::gsm_csd_transmission().unwrap_or_default();
    let gsm = thesis_bearers().into_iter().find(|b| b.name == "GSM CSD");
    let lambdas: Vec<f64> = (0..=50).map(|i| i as f64 * 2.0).collect();
    let mut out = Vec::new();
    for (figure, case) in queued_figure_cases() {
        let (ca, leaf) = (case.ca.short(), case.leaf.short());
        let published = super::processing::published_row(&case, Authentication::Mutual);
        let published_ttd = ttd
            .iter()
            .find(|r| r.ca_cert == ca && r.leaf_cert == leaf)
            .map(|r| r.ttd_ms(Authentication::Mutual));
        for (inputs, variant) in [
            ("thesis, as published", Variant::AsPublished),
            ("thesis, corrected", Variant::Corrected),
        ] {
            let (Some(p), Some(ttd)) = (&published, published_ttd) else {
                continue;
            };
            let Ok(jobs) = published_handshake_jobs(Authentication::Mutual, ca, leaf, variant)
            else {
                continue;
            };
            let Ok(load) = group_load(
                &[MixtureCase {
                    weight: 1.0,
                    job_service_ms: jobs,
                }],
                variant,
            ) else {
                continue;
            };
            for &l in &lambdas {
                out.push(QueuedHandshake {
                    figure,
                    case,
                    inputs,
                    lambda_hs_per_s: l,
                    th_ms: load
                        .handshake_queue_delay_ms(l)
                        .map(|qd| p.client_ms + p.server_ms + ttd + qd),
                });
            }
        }
        if let (Some(c), Some(gsm)) = (processing.find(&case, Authentication::Mutual), &gsm) {
            let jobs = c.mean_jobs();
            let td = modelled_duration_ms(c, gsm.up_bps, gsm.down_bps, gsm.traversal_ms);
            let pd = c.client_cpu_ms.median + c.server_cpu_ms.median;
            if let Ok(load) = group_load(
                &[MixtureCase {
                    weight: 1.0,
                    job_service_ms: jobs,
                }],
                Variant::Corrected,
            ) {
                for &l in &lambdas {
                    out.push(QueuedHandshake {
                        figure,
                        case,
                        inputs: "ours, corrected",
                        lambda_hs_per_s: l,
                        th_ms: load.handshake_queue_delay_ms(l).map(|qd| pd + td + qd),
                    });
                }
            }
        }
    }
    out
}

/// All of part 4.
#[derive(Debug, Clone)]
pub struct OverallResults {
    /// T_H rows.
    pub rows: Vec<OverallRow>,
    /// Figures 4.44-4.46.
    pub queued: Vec<QueuedHandshake>,
    /// Levi-Savas (case, scenario, total ms, data ms).
    pub levi_savas: Vec<(String, &'static str, f64, f64, f64)>,
    /// Herwono sweep: (handshake, throughput bit/s, ours ms, published-groups ms).
    pub herwono: Vec<(String, f64, f64, Option<f64>)>,
    /// Measured Herwono points: (case, bit/s, ms).
    pub herwono_measured: Vec<(String, f64, f64)>,
    /// WTP series: handshake plus first page in connection mode, modelled (case, bit/s,
    /// ms) and measured over the symmetric page-load bearers.
    pub herwono_wtp: Vec<(String, f64, f64)>,
    pub herwono_wtp_measured: Vec<(String, f64, f64)>,
}

fn our_tpd(c: &CaseResult) -> f64 {
    c.client_wall_ms.median + c.server_wall_ms.median
}

/// Builds part 4 from parts 1-3.
pub fn build(
    ctx: &Ctx,
    processing: &ProcessingResults,
    transmission: &TransmissionResults,
    _queue: &QueueResults,
    emulated: &[EmulatedRun],
) -> anyhow::Result<OverallResults> {
    ctx.step("overall: T_H, Levi-Savas and Herwono");
    Ok(OverallResults {
        rows: th_rows(processing, emulated)?,
        queued: queued_handshakes(processing),
        levi_savas: levi_savas_points(processing),
        herwono: herwono_curves(processing),
        herwono_measured: herwono_measured(transmission),
        herwono_wtp: Vec::new(),
        herwono_wtp_measured: Vec::new(),
    })
}

/// T_H of every case over every bearer of Table 4.15: the thesis' inputs, ours, the
/// composite and the emulated Nokia's runs.
fn th_rows(
    processing: &ProcessingResults,
    emulated: &[EmulatedRun],
) -> anyhow::Result<Vec<OverallRow>> {
    let bytes = reference::handshake_bytes()?;
    let mut rows = Vec::new();
    for bearer in thesis_bearers() {
        for c in &processing.cases {
            let p = c.published();
            let thesis = p.as_ref().and_then(|p| {
                let b = bytes
                    .iter()
                    .find(|b| b.ca_cert == p.ca_cert && b.leaf_cert == p.leaf_cert)?;
                Some(
                    thesis_case_handshake(
                        p,
                        b.bytes(c.auth),
                        bearer.up_bps.min(bearer.down_bps),
                        bearer.traversal_ms,
                        0.0,
                    )
                    .total_ms,
                )
            });
            let ttd = modelled_duration_ms(c, bearer.up_bps, bearer.down_bps, bearer.traversal_ms);
            rows.push(OverallRow {
                case: c.case,
                auth: c.auth,
                bearer: bearer.name.clone(),
                thesis_ms: thesis,
                ours_ms: our_tpd(c) + ttd,
                composite_ms: p.map(|p| p.client_ms + c.server_wall_ms.median + ttd),
                emulated_ms: emulated_ms(emulated, c.case, c.auth, &bearer.name),
            });
        }
    }
    Ok(rows)
}

/// Levi-Savas' response time (Figure 6) of every server-authenticated case, best and
/// worst scenario.
fn levi_savas_points(processing: &ProcessingResults) -> Vec<(String, &'static str, f64, f64, f64)> {
    let mut levi_savas = Vec::new();
    for c in processing
        .cases
        .iter()
        .filter(|c| c.auth == Authentication::ServerAuth)
    {
        for (name, sc) in [
            ("best", LeviSavasScenario::BEST),
            ("worst", LeviSavasScenario::WORST),
        ] {
            if let Some(r) = levi_savas_response(
                c.client_cpu_ms.median,
                c.server_cpu_ms.median,
                pk_bytes(c) as f64,
                sc,
            ) {
                levi_savas.push((c.label(), name, r.total_ms, r.data_ms, r.wait_ms));
            }
        }
    }
    levi_savas
}

/// Herwono's duration-against-throughput curves of their variants and two full
/// handshakes, ours beside their published message groups.
fn herwono_curves(processing: &ProcessingResults) -> Vec<(String, f64, f64, Option<f64>)> {
    let mut herwono = Vec::new();
    let variants: Vec<&CaseResult> = processing
        .variants
        .iter()
        .chain(processing.cases.iter().filter(|c| {
            c.auth == Authentication::ServerAuth
                && matches!(c.label().as_str(), "160p/160p" | "rsa1024/rsa1024")
        }))
        .collect();
    for c in variants {
        let key = c.herwono_name();
        let ours = groups_with_overhead(c);
        let published = herwono_groups_of("icics_table2", &key)
            .ok()
            .filter(|g| !g.is_empty());
        for r in herwono_throughputs_bps() {
            herwono.push((
                key.clone(),
                r,
                herwono_duration_ms(&ours, r, 0.0, our_tpd(c)),
                published
                    .as_ref()
                    .map(|g| herwono_duration_ms(g, r, 0.0, 0.0)),
            ));
        }
    }
    herwono
}

/// The real handshakes over the Herwono sweep's bearers: (case, bit/s, ms).
fn herwono_measured(transmission: &TransmissionResults) -> Vec<(String, f64, f64)> {
    transmission
        .bearer
        .iter()
        .filter(|b| {
            b.bearer.as_str().starts_with("herwono-") && b.auth == Authentication::ServerAuth
        })
        .filter_map(|b| {
            let kbps: f64 = b
                .bearer
                .as_str()
                .trim_start_matches("herwono-")
                .trim_end_matches("kbps")
                .parse()
                .ok()?;
            Some((b.case.to_string(), kbps * 1000.0, b.measured_ms))
        })
        .collect()
}

impl OverallResults {
    /// Adds the WTP series (built from the page loads, which run after this part).
    pub fn add_wtp_series(
        &mut self,
        modelled: &[(String, f64, f64)],
        measured: &[(String, f64, f64)],
    ) {
        self.herwono_wtp = modelled.to_vec();
        self.herwono_wtp_measured = measured.to_vec();
    }

    /// The WTP series of the Herwono figure: one modelled and one measured per case.
    fn wtp_series(&self, ctx: &Ctx, mut chart: LineChart) -> LineChart {
        let mut cases: Vec<&String> = self.herwono_wtp.iter().map(|h| &h.0).collect();
        cases.dedup();
        for case in cases {
            let of = |pts: &[(String, f64, f64)]| -> Vec<(f64, f64)> {
                pts.iter()
                    .filter(|p| &p.0 == case)
                    .map(|p| (p.1, p.2))
                    .collect()
            };
            chart = chart.series(Series::new(
                format!("{case} + first page over WTP, ours"),
                Provenance::modelled(
                    "Herwono duration = bytes x 8 / R + T_PD",
                    "link bytes of a connection-mode page load plus the bearer's per-datagram overhead, our T_PD",
                ),
                of(&self.herwono_wtp),
            ));
            let measured = of(&self.herwono_wtp_measured);
            if !measured.is_empty() {
                chart = chart.series(Series::new(
                    format!(
                        "{case} + first page over WTP, measured (with the bearer's traversals)"
                    ),
                    ctx.measured(),
                    measured,
                ));
            }
        }
        chart
    }

    /// The report section of part 4.
    pub fn section(&self, ctx: &Ctx) -> Section {
        let mut s = Section::new(
            "overall",
            "Overall handshake and response time (thesis 4.4; Levi-Savas Fig. 6; Herwono-Liebhardt ICICS Fig. 3, Aachen Figure 4)",
        )
        .intro(
            "T_H = T_PD + T_TD + T_QD with an idle gateway (T_QD = 0). 'thesis inputs' \
                 rebuilds Figures 4.39-4.43 from the published tables; 'ours' models our \
                 processing and our measured flights; 'thesis client + our gateway' is a \
                 composite, labelled as such; 'emulated Nokia 7650 + our gateway' is \
                 measured: real handshakes of a client held for the Nokia 7650's fitted \
                 operation costs, with our gateway, over the emulated GSM CSD and GPRS \
                 (average) links (part 3b, device_runs.csv; quick mode runs three cases).",
        );
        s = s.table(self.overall_table(ctx));
        for auth in Authentication::ALL {
            s = s.figure(self.overall_figure(ctx, auth));
        }
        for figure in [44u8, 45, 46] {
            if let Some(f) = self.queued_figure(ctx, figure) {
                s = s.figure(f);
            }
        }
        s = s.table(self.levi_table(ctx));
        s = s.figure(self.herwono_figure(ctx));
        s
    }

    /// Figure 4.44, 4.45 or 4.46: T_H against the arrival rate.
    fn queued_figure(&self, ctx: &Ctx, figure: u8) -> Option<Figure> {
        let points: Vec<&QueuedHandshake> =
            self.queued.iter().filter(|q| q.figure == figure).collect();
        if points.is_empty() {
            return None;
        }
        let mut chart = LineChart::new(
            Axis::new("mutual handshake requests", "handshakes/s"),
            Axis::new("overall handshake time T_H", "ms").log(),
        );
        let mut cases: Vec<Case> = points.iter().map(|q| q.case).collect();
        cases.dedup();
        for (i, case) in cases.iter().enumerate() {
            for (j, inputs) in [
                "thesis, as published",
                "thesis, corrected",
                "ours, corrected",
            ]
            .into_iter()
            .enumerate()
            {
                let pts: Vec<(f64, f64)> = points
                    .iter()
                    .filter(|q| q.case == *case && q.inputs == inputs)
                    .filter_map(|q| Some((q.lambda_hs_per_s, q.th_ms?)))
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                let provenance = match inputs {
                    "thesis, as published" => Provenance::modelled(
                        "Bayoglu 2004 section 4.4: Tables 4.1 + 4.12 + Eq. 3.12 at lambda",
                        "published service times",
                    ),
                    "thesis, corrected" => Provenance::modelled(
                        "Tables 4.1 + 4.12 + Eq. 3.12 at k x lambda, k x wait",
                        "published service times",
                    ),
                    _ => Provenance::modelled(
                        "T_PD measured + Eq. 3.84 over GSM CSD + Eq. 3.12 corrected",
                        format!("measured on {}", ctx.machine),
                    ),
                };
                // One colour per curve: case i and reading j.
                chart = chart.series(
                    Series::new(format!("{case} ({inputs}, modelled)"), provenance, pts)
                        .colour(i + 4 * j),
                );
            }
        }
        Some(
            Figure::new(
                format!("fig4_{figure}_queued_handshake"),
                queued_figure_title(figure),
                chart,
            )
            .caption(
                "Curves stop where the model saturates. The thesis' reading (one message's \
                 wait, lambda handshakes/s) saturates k times later than the corrected one; \
                 on this machine's gateway the queue delay at 100 handshakes/s is negligible.",
            ),
        )
    }

    fn overall_table(&self, ctx: &Ctx) -> Table {
        let mut t = Table::new("overall_th", "T_H per case and bearer (Figures 4.39-4.43)")
            .column(Column::label("case"))
            .column(Column::label("auth"))
            .column(Column::label("bearer"))
            .column(Column::new(
                "thesis inputs",
                Some("ms"),
                Provenance::modelled(
                    "Bayoglu 2004 T_H = T_PD + Eq. 3.84",
                    "Tables 4.1/4.2, 4.11, 4.15",
                ),
            ))
            .column(Column::new(
                "ours",
                Some("ms"),
                Provenance::modelled(
                    "T_H = T_PD + flight model",
                    format!("T_PD and flights measured in run {}", ctx.run_id),
                ),
            ))
            .column(Column::new(
                "thesis client + our gateway",
                Some("ms"),
                Provenance::derived("published T_PD_C + our T_PD_S + our T_TD (composite)"),
            ))
            .column(Column::new(
                "emulated Nokia 7650 + our gateway",
                Some("ms"),
                ctx.measured(),
            ));
        for r in &self.rows {
            t = t.row(vec![
                Cell::text(r.case.to_string()),
                Cell::text(format!("{:?}", r.auth)),
                Cell::text(&r.bearer),
                Cell::opt(r.thesis_ms, 0),
                Cell::num(r.ours_ms, 0),
                Cell::opt(r.composite_ms, 0),
                Cell::opt(r.emulated_ms, 0),
            ]);
        }
        t
    }

    fn overall_figure(&self, ctx: &Ctx, auth: Authentication) -> Figure {
        let rows: Vec<&OverallRow> = self
            .rows
            .iter()
            .filter(|r| r.auth == auth && r.bearer == "GSM CSD")
            .collect();
        let labels: Vec<String> = rows.iter().map(|r| r.case.to_string()).collect();
        Figure::new(
            format!(
                "overall_gsm_csd_{}",
                if auth == Authentication::Mutual {
                    "mutual"
                } else {
                    "server"
                }
            ),
            overall_figure_title(auth),
            GroupedBarChart::new("case", labels, Axis::new("T_H", "ms"))
                .series(BarSeries::new(
                    "thesis inputs",
                    Provenance::modelled("T_H, thesis inputs", "Tables 4.1/4.2, 4.11, 4.15"),
                    rows.iter().map(|r| r.thesis_ms).collect(),
                ))
                .series(BarSeries::new(
                    "ours",
                    Provenance::modelled(
                        "T_H = T_PD + flight model",
                        format!("T_PD and flights measured in run {}", ctx.run_id),
                    ),
                    rows.iter().map(|r| Some(r.ours_ms)).collect(),
                ))
                .series(BarSeries::new(
                    "thesis client + our gateway",
                    Provenance::derived("composite"),
                    rows.iter().map(|r| r.composite_ms).collect(),
                ))
                .series(BarSeries::new(
                    "emulated Nokia 7650 + our gateway (measured)",
                    ctx.measured(),
                    rows.iter().map(|r| r.emulated_ms).collect(),
                )),
        )
        .size(1300, 460)
    }

    fn levi_table(&self, ctx: &Ctx) -> Table {
        let m = Provenance::modelled(
            "Levi-Savas 2003 T_resp = Tc + Ts + Tw + Tdata",
            format!("our CPU medians and PK bytes, run {}", ctx.run_id),
        );
        let mut t = Table::new(
            "levi_savas_response",
            "Levi-Savas response time, best (56 kbit/s, rho = 0) and worst (6 kbit/s, rho = 0.8)",
        )
        .column(Column::label("case"))
        .column(Column::label("scenario"))
        .column(Column::new("T_resp", Some("ms"), m.clone()))
        .column(Column::new("T_data", Some("ms"), m.clone()))
        .column(Column::new("T_w", Some("ms"), m));
        for (case, sc, total, data, wait) in &self.levi_savas {
            t = t.row(vec![
                Cell::text(case),
                Cell::text(*sc),
                Cell::num(*total, 1),
                Cell::num(*data, 1),
                Cell::num(*wait, 3),
            ]);
        }
        if let Ok(points) = reference::levi_savas_published_points() {
            for p in points {
                t = t.note(format!(
                    "Published: {} for {} = {} ms on {} (our client needs well under 1 ms for the same operations).",
                    p.quantity, p.curve, p.value_ms, p.platform
                ));
            }
        }
        t
    }

    fn herwono_figure(&self, ctx: &Ctx) -> Figure {
        let mut chart = LineChart::new(
            Axis::new("bearer throughput", "bit/s"),
            Axis::new("handshake duration", "ms").log(),
        );
        let mut names: Vec<String> = self.herwono.iter().map(|h| h.0.clone()).collect();
        names.dedup();
        for (i, name) in names.iter().enumerate() {
            let ours: Vec<(f64, f64)> = self
                .herwono
                .iter()
                .filter(|h| &h.0 == name)
                .map(|h| (h.1, h.2))
                .collect();
            chart = chart.series(
                Series::new(
                    format!("{name} ours"),
                    Provenance::modelled(
                        "Herwono duration = bytes x 8 / R + T_PD",
                        "our flights + 28 B, our T_PD",
                    ),
                    ours,
                )
                .colour(i),
            );
            let published: Vec<(f64, f64)> = self
                .herwono
                .iter()
                .filter(|h| &h.0 == name)
                .filter_map(|h| Some((h.1, h.3?)))
                .collect();
            if !published.is_empty() {
                chart = chart.series(
                    Series::new(
                        format!("{name} Herwono's bytes (modelled)"),
                        Provenance::modelled(
                            "bytes x 8 / R: serialisation only",
                            "Herwono-Liebhardt 2001 ICICS Table 2's published message-group bytes",
                        ),
                        published,
                    )
                    .colour(i)
                    .secondary(),
                );
            }
        }
        let mut cases: Vec<String> = self.herwono_measured.iter().map(|m| m.0.clone()).collect();
        cases.sort();
        cases.dedup();
        for case in cases {
            let pts: Vec<(f64, f64)> = self
                .herwono_measured
                .iter()
                .filter(|m| m.0 == case)
                .map(|m| (m.1, m.2))
                .collect();
            chart = chart.series(Series::new(
                format!("{case} full, measured through the link"),
                ctx.measured(),
                pts,
            ));
        }
        chart = self.wtp_series(ctx, chart);
        Figure::new(
            "herwono_duration",
            "Handshake duration against bearer throughput (Herwono-Liebhardt ICICS Fig. 3, Aachen Figure 4)",
            chart,
        )
        .caption(
            "No latency term, as in Herwono-Liebhardt; full, anonymous and optimised handshakes.",
        )
        .size(1000, 520)
    }
}

/// "Mutual handshake time with queue delay, category 3, leaf strength level 1, GSM CSD
/// (thesis Figure 4.44)": Figures 4.44-4.46, one per level.
pub(crate) fn queued_figure_title(figure: u8) -> String {
    format!(
        "Mutual handshake time with queue delay, category 3, leaf strength level {}, GSM CSD (thesis Figure 4.{figure})",
        figure - 43
    )
}

/// The overall handshake time of every case of one mode over GSM CSD: the GSM CSD bars
/// of the thesis' Figures 4.39-4.41 (one per category, both modes). Figures 4.42 and
/// 4.43 compare GSM CSD with GPRS, which the table beside this figure does.
pub(crate) fn overall_figure_title(auth: Authentication) -> String {
    format!(
        "Overall handshake time over GSM CSD, {} cases (as thesis Figures 4.39-4.41)",
        super::citations::mode_words(auth)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearers_of_table_4_15() {
        let b = thesis_bearers();
        assert_eq!(b.len(), 4);
        assert_eq!(b[0].up_bps, 9600.0);
        assert_eq!(b[0].traversal_ms, 391.3);
        assert_eq!(b[2].down_bps, 18_770.0);
    }
}
