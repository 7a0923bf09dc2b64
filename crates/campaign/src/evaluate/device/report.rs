//! The report section of part 3b: constrained clients.

use wtlsperf_report::{
    Axis, BarSeries, Cell, Column, Figure, GroupedBarChart, LineChart, Provenance, Section, Series,
    Table,
};

use wtls::suite::Case;
use wtlsperf_models::Authentication;

use super::{emulated, DeviceResults};
use crate::evaluate::context::Ctx;
use crate::evaluate::recommendation::ModernCandidate;
use crate::evaluate::verdict::{self, MODEL_TOLERANCE};
use crate::evaluate::vocabulary::{auth_name, DeviceName};

/// The bearer of the ECC-against-RSA figure: the slowest round trip of the compared
/// links, where the handshake's bytes and round trips weigh most.
const ECC_RSA_FIGURE_BEARER: &str = "nb-iot";

fn pct(x: f64) -> Cell {
    Cell::num(x * 100.0, 1)
}

/// Whether a recommendation's runner-up is beyond the model tolerance of the fastest:
/// within it, the model does not decide which of the two is faster.
fn separated(margin: Option<f64>) -> &'static str {
    match margin {
        Some(m) if m > MODEL_TOLERANCE => "yes",
        Some(_) => "no (within 5 %)",
        None => "",
    }
}

/// The other protocol's modelled time, flagged where its client price is an estimate.
fn modern_time(m: Option<&ModernCandidate>) -> Cell {
    let cell = Cell::opt(m.map(|m| m.th_ms), 1);
    match m.and_then(|m| m.estimate) {
        Some(e) => cell.flag(format!("the client's price is an estimate ({})", e.words())),
        None => cell,
    }
}

impl DeviceResults {
    /// The device section.
    pub fn section(&self, ctx: &Ctx) -> Section {
        Section::new("devices", "Constrained clients: device profiles and the studies re-enacted on an emulated handset")
            .intro(
                "Each profile prices the public-key operations of a client device; every number names its source: fitted to a study's tables, published by a maintained library's benchmark, measured on this machine, or scaled by the documented rule (size within a family: RSA public ~ bits^2, RSA private and EC scalar multiplication ~ bits^3; otherwise a reference device's ratio). A real handshake with an emulated device holds each client flight for the device's time (real computation still runs; the driver sleeps the rest), through the real gateway and an emulated bearer.",
            )
            .table(self.profiles_table())
            .table(self.fit_table())
            .table(self.rule_table())
            .table(self.runs_table(ctx))
            .figure(self.th_figure(ctx, Authentication::Mutual))
            .figure(self.th_figure(ctx, Authentication::ServerAuth))
            .table(self.transmission_table())
            .table(self.recommendation_table())
            .figure(self.ecc_rsa_figure())
            .table(self.levi_savas_table())
            .figure(self.herwono_figure())
            .paragraph(format!(
                "The findings of this part (the fit, the end-to-end check, the traversal count, Levi-Savas' conclusion on the executed processors and on the catalogue's devices, and Bayoglu's group ranking on his own published times with this machine reported beside it) are in the findings section.{}",
                ctx.catalogue
                    .typical_bearer_note()
                    .map_or(String::new(), |n| format!(" {n}"))
            ))
    }

    fn profiles_table(&self) -> Table {
        let mut t = Table::new("device_profiles", "Device profiles: cost of each public-key operation, with its source")
            .caption("The same numbers are in devices.csv. Nokia 7650: fitted (relative least squares) to the thesis' client measurements; ARM7TDMI: Levi-Savas' quoted totals split by the Nokia's verify:ECDH ratio; modern devices: published library benchmarks; the three *-executed profiles: Mbed TLS 2.28.3 and PQClean executed on an instruction-level model of the core, priced by its timing table (data/devices/executed.csv); this machine: measured now.")
            .column(Column::label("device"))
            .column(Column::label("operation"))
            .column(Column::label("key"))
            .column(Column::new("cost", Some("ms"), Provenance::derived("per row: see source")))
            .column(Column::label("source kind"))
            .column(Column::label("source"));
        for p in &self.profiles {
            for (op, c) in &p.operations {
                t = t.row(vec![
                    Cell::text(&p.name),
                    Cell::text(op.primitive.name()),
                    Cell::text(op.key.to_string()),
                    Cell::num(c.ms, 4),
                    Cell::text(c.source.kind()),
                    Cell::text(c.source.detail()),
                ]);
            }
            if let Some(c) = &p.per_message {
                t = t.row(vec![
                    Cell::text(&p.name),
                    Cell::text("symmetric per message"),
                    Cell::text(""),
                    Cell::num(c.ms, 4),
                    Cell::text(c.source.kind()),
                    Cell::text(c.source.detail()),
                ]);
            }
            if let Some(src) = &p.ephemeral_key_precomputed {
                t = t.note(format!(
                    "{}: ephemeral ECDH key made before the handshake ({src})",
                    p.name
                ));
            }
        }
        t
    }

    fn fit_table(&self) -> Table {
        let f = &self.nokia;
        let mut t = Table::new("device_nokia_fit", "Nokia 7650: client T_PD predicted with each case left out of the fit")
            .caption(format!(
                "Eq. 3.2/3.5 with the fitted operation costs; median |error| {:.2} %, worst {:.2} % (target: median within 10 %). Server-authenticated / mutual ClientKeyExchange time: {:.3} (median of 18 ECDH_ECDSA pairs).",
                f.median_abs_error * 100.0, f.worst_abs_error * 100.0, f.server_over_mutual_key_exchange
            ))
            .column(Column::label("case"))
            .column(Column::new("client T_PD published", Some("ms"), Provenance::published("Bayoglu 2004 Tables 4.1/4.2")))
            .column(Column::new("client T_PD predicted", Some("ms"), Provenance::modelled("Eq. 3.2/3.5, fit without this case", "Tables 4.1-4.4, 4.7, 4.8")))
            .column(Column::new("error", Some("%"), Provenance::derived("predicted / published - 1")))
            .column(Column::label("priced by the size rule"));
        for l in &f.leave_one_out {
            t = t.row(vec![
                Cell::text(&l.case),
                Cell::num(l.published_ms, 2),
                Cell::num(l.predicted_ms, 2),
                pct(l.error),
                Cell::text(&l.scaled),
            ]);
        }
        t
    }

    fn rule_table(&self) -> Table {
        let mut t = Table::new("device_scaling_rule", "The size rule on known numbers")
            .caption("Each known cost predicted from the nearest other known size of the same primitive and family in the same profile (RSA public ~ bits^2, RSA private and EC ~ bits^3).")
            .column(Column::label("device"))
            .column(Column::label("operation"))
            .column(Column::label("from"))
            .column(Column::new("known", Some("ms"), Provenance::derived("profile (fitted, published or measured)")))
            .column(Column::new("rule", Some("ms"), Provenance::modelled("size rule", "nearest known size")))
            .column(Column::new("error", Some("%"), Provenance::derived("rule / known - 1")));
        for r in &self.rule_checks {
            t = t.row(vec![
                Cell::text(&r.device),
                Cell::text(&r.operation),
                Cell::text(&r.from),
                Cell::num(r.known_ms, 4),
                Cell::num(r.predicted_ms, 4),
                pct(r.error),
            ]);
        }
        t
    }

    fn runs_table(&self, ctx: &Ctx) -> Table {
        let m = ctx.measured();
        let mut t = Table::new("device_runs", "T_H re-enacted: emulated Nokia 7650, real gateway, emulated GSM CSD and GPRS (Figures 4.39-4.43, Table 4.12 with T_PD)")
            .caption(format!(
                "All handshakes ran at once, one relay each. gsm-csd-2004: GSM CSD with each flight delayed by the per-crossing time fitted to Table 4.12 (see the Eq. 3.84 table). Per bearer, the model's bias (median measured / model - 1) against the +-5 % target, with the median |error| beside: {}; median |error| pooled over the bearers {:.1} %, not judged (the findings judge each bearer's bias).",
                verdict::per_bearer_target(
                    emulated::BEARERS.iter().map(|b| (*b, self.bearer_errors(b)))
                )
                .1
                .join("; "),
                self.end_to_end_median_error().unwrap_or(f64::NAN) * 100.0
            ))
            .column(Column::label("case"))
            .column(Column::label("auth"))
            .column(Column::label("bearer"))
            .column(Column::new("T_H ours", Some("ms"), m.clone()))
            .column(Column::new("device T_PD_C", Some("ms"), Provenance::derived("profile, as the pacer held it")))
            .column(Column::new("gateway T_PD_S", Some("ms"), m))
            .column(Column::new("T_TD model", Some("ms"), Provenance::modelled("Eq. 3.84 per flight", "flights exchanged, profile's mean traversal")))
            .column(Column::new("T_H model", Some("ms"), Provenance::modelled("T_PD + T_TD + T_QD", "device profile, our gateway, T_QD = 0")))
            .column(Column::new("error", Some("%"), Provenance::derived("ours / model - 1")))
            .column(Column::new("T_H published", Some("ms"), Provenance::published("Bayoglu 2004 Tables 4.1/4.2 + 4.12 (GSM CSD)")));
        for r in &self.emulated {
            t = t.row(vec![
                Cell::text(r.case.to_string()),
                Cell::text(auth_name(r.auth)),
                Cell::text(&r.bearer),
                Cell::num(r.measured_ms, 0),
                Cell::num(r.client_device_ms, 0),
                Cell::num(r.server_ms, 3),
                Cell::num(r.transmission_model_ms, 0),
                Cell::num(r.model_ms, 0),
                pct(r.error()),
                Cell::opt(r.published_ms, 0),
            ]);
        }
        t
    }

    /// Figures 4.39-4.43 re-enacted: T_H per case over GSM CSD, published beside ours
    /// (measured with the emulated Nokia) and the model.
    fn th_figure(&self, ctx: &Ctx, auth: Authentication) -> Figure {
        let rows = |bearer: &str| -> Vec<&super::emulated::EmulatedRun> {
            self.emulated
                .iter()
                .filter(|r| r.auth == auth && r.bearer.is(bearer))
                .collect()
        };
        let cases: Vec<Case> = rows("gsm-csd").iter().map(|r| r.case).collect();
        let value = |bearer: &str, f: fn(&super::emulated::EmulatedRun) -> Option<f64>| {
            cases
                .iter()
                .map(|c| rows(bearer).into_iter().find(|r| &r.case == c).and_then(f))
                .collect::<Vec<_>>()
        };
        let labels: Vec<String> = cases.iter().map(Case::to_string).collect();
        let chart = GroupedBarChart::new("case", labels, Axis::new("T_H", "ms").log())
            .series(
                BarSeries::new(
                    "published (Nokia 7650, live GSM CSD, 2004)",
                    Provenance::published("Bayoglu 2004 Tables 4.1/4.2 + 4.12"),
                    value("gsm-csd", |r| r.published_ms),
                )
                .colour(0),
            )
            .series(
                BarSeries::new(
                    "ours: emulated Nokia 7650, GSM CSD as in 2004 (per-flight delay of Table 4.12)",
                    ctx.measured(),
                    value(super::emulated::GSM_CSD_2004, |r| Some(r.measured_ms)),
                )
                .colour(1),
            )
            .series(
                BarSeries::new(
                    "ours: emulated Nokia 7650, GSM CSD profile",
                    ctx.measured(),
                    value("gsm-csd", |r| Some(r.measured_ms)),
                )
                .colour(2),
            )
            .series(
                BarSeries::new(
                    "model T_PD + T_TD + T_QD, GSM CSD profile",
                    Provenance::modelled("T_H = T_PD + T_TD + T_QD", "Nokia 7650 profile, our gateway and flights"),
                    value("gsm-csd", |r| Some(r.model_ms)),
                )
                .colour(3),
            );
        Figure::new(
            format!("device_th_gsm_csd_{}", auth_name(auth)),
            format!("T_H over GSM CSD with an emulated Nokia 7650, {} (Figures 4.39-4.43 re-enacted)", auth_name(auth)),
            chart,
        )
        .caption("Real handshakes: the client holds each flight for the Nokia 7650's time, the real gateway answers, an emulated link carries them.")
    }

    fn transmission_table(&self) -> Table {
        let mut t = Table::new("transmission_loo", "Eq. 3.84 against the live GSM CSD handshakes of Table 4.12, out of sample")
            .caption("Traversal delay fitted with Eq. 4.1 on 47 cases, the 48th predicted, for every case (per case in transmission_loo.csv). Datagram crossings are our implementation's, per case.")
            .column(Column::label("traversal count"))
            .column(Column::new("traversal (all 48)", Some("ms"), Provenance::modelled("Eq. 4.1, mean", "Tables 4.11, 4.12")))
            .column(Column::new("median |error|", Some("%"), Provenance::derived("leave-one-out")))
            .column(Column::new("worst |error|", Some("%"), Provenance::derived("leave-one-out")));
        for l in &self.transmission {
            t = t.row(vec![
                Cell::text(l.count.name()),
                Cell::num(l.traversal_all_ms, 1),
                pct(l.median_abs_error),
                pct(l.worst_abs_error),
            ]);
        }
        t
    }

    fn recommendation_table(&self) -> Table {
        let model = Provenance::modelled(
            "T_H = T_PD_C(device) + T_PD_S + T_TD + 0",
            "device profile, our gateway and flights, bearer profile",
        );
        let mut t = Table::new("device_recommendations", "Recommendation: the fastest full handshake per device, bearer, security category and authentication")
            .caption("Candidates are the cases of thesis Table 3.3 in the category (groups: 1 prime, 2 Koblitz, 3 random binary curves, 4 RSA) whose every client operation the device's library offers (Levi-Savas timed every curve and RSA on their ARM7 and drew them in their Figure 4, but quote in their text only the 224P and 256P client times, which are the numbers we hold: the arm7tdmi-25mhz profile prices its binary curves and RSA from the Nokia 7650's ratios, devices.csv source borrowed, so its rows here are estimates, which the findings leave out). Empty cells: no runner-up, or the device offers no RSA or no ECC suite. A runner-up within 5 % of the fastest (the model tolerance) leaves the ranking undecided: the separated column says so. Category 3 rows also name the fastest classical configuration of another protocol (DTLS 1.2, DTLS 1.3, EDHOC or QUIC) of the same authentication the device runs (P-256 only where its library offers it; PSK always), under the same model; EDHOC and DTLS PSK authenticate both sides, so they compete in the mutual rows; a flagged time rests on an estimated client price (a cost borrowed from another device's ratios, or a P-256 operation the profile does not price stood in for by its ECDH; recommendations.csv, best_modern_estimate, says which). The ranking is by time alone: no WTLS case has forward secrecy (its key exchange is ECDH with the server's certified static key, or RSA key transport), and the last column says whether the other protocol's configuration has it.")
            .column(Column::label("device"))
            .column(Column::label("bearer"))
            .column(Column::label("category"))
            .column(Column::label("auth"))
            .column(Column::label("fastest"))
            .column(Column::new("T_H", Some("ms"), model.clone()))
            .column(Column::label("runner-up"))
            .column(Column::new("margin", Some("%"), Provenance::derived("runner-up / fastest - 1")))
            .column(Column::label("separated (beyond 5 %)"))
            .column(Column::new("best ECC / best RSA", None, model.clone()))
            .column(Column::label("thesis' fastest group"))
            .column(Column::label("fastest other protocol"))
            .column(Column::new("its T_H", Some("ms"), Provenance::modelled(
                "T_H = T_PD_C(device) + T_PD_S + T_TD + 0",
                "device profile priced per P-256 operation where it prices it (else an estimate, flagged), the configuration's server CPU and flights measured in memory now, bearer profile",
            )))
            .column(Column::label("its forward secrecy"));
        for r in &self.recommendations {
            t = t.row(vec![
                Cell::text(r.device.as_str()),
                Cell::text(r.bearer.as_str()),
                Cell::num(f64::from(r.category), 0),
                Cell::text(auth_name(r.auth)),
                Cell::text(r.best.case.to_string()),
                Cell::num(r.best.th_ms, 1),
                Cell::text(
                    r.runner_up
                        .as_ref()
                        .map_or(String::new(), |c| c.case.to_string()),
                ),
                Cell::opt(r.margin.map(|m| m * 100.0), 1),
                Cell::text(separated(r.margin)),
                Cell::opt(r.ecc_over_rsa(), 3),
                Cell::text(
                    r.thesis_best_group
                        .map(super::recommendation::group_name)
                        .unwrap_or(""),
                ),
                Cell::text(
                    r.best_modern
                        .as_ref()
                        .map_or(String::new(), |m| format!("{} {}", m.protocol, m.suite)),
                ),
                modern_time(r.best_modern.as_ref()),
                Cell::text(
                    r.best_modern
                        .as_ref()
                        .map_or(String::new(), |m| m.forward_secrecy.text()),
                ),
            ]);
        }
        t
    }

    fn ecc_rsa_figure(&self) -> Figure {
        let devices: Vec<String> = self.profiles.iter().map(|p| p.name.clone()).collect();
        let mut chart = GroupedBarChart::new(
            "device",
            devices.clone(),
            Axis::new("best ECC T_H / best RSA T_H (below 1: ECC faster)", "").log(),
        );
        let (server, mutual) = (Authentication::ServerAuth, Authentication::Mutual);
        for (i, (category, auth)) in [(1, server), (3, server), (1, mutual), (3, mutual)]
            .into_iter()
            .enumerate()
        {
            let values = devices
                .iter()
                .map(|d| {
                    self.recommendations
                        .iter()
                        .find(|r| {
                            r.device.as_str() == d
                                && r.bearer.as_str() == ECC_RSA_FIGURE_BEARER
                                && r.category == category
                                && r.auth == auth
                        })
                        // An estimate from another device's ratios draws no bar.
                        .filter(|r| !r.ecc_rsa_borrowed)
                        .and_then(|r| r.ecc_over_rsa())
                })
                .collect();
            chart = chart.series(
                BarSeries::new(
                    format!("category {category}, {}", auth_name(auth)),
                    Provenance::modelled("T_H ratio", "device profile, NB-IoT profile"),
                    values,
                )
                .colour(i),
            );
        }
        Figure::new("device_ecc_vs_rsa", "Does ECC still beat RSA? Model T_H over NB-IoT, per device", chart)
            .caption("Ratio of the category's fastest ECDH_ECDSA handshake to its fastest RSA handshake, whatever their strengths (below 1: the fastest ECC case beats the fastest RSA case). This is not Levi-Savas' comparison, which pairs equal strengths (their Table 1); the equal-strength comparison is a finding of its own, on whole handshakes. No bar where either is priced with a cost borrowed from another device's ratios (devices.csv, source borrowed): the arm7tdmi-25mhz profile's binary curves and RSA, for one.")
    }

    fn levi_savas_table(&self) -> Table {
        let mut t = Table::new("device_levi_savas", "Levi-Savas Figure 6 with a device client: response time T_c + T_s + T_w + T_data")
            .caption("T_c: the device's public-key time on our profile of Levi-Savas' client (ARM7TDMI 25 MHz; Nokia 7650 beside it). Levi-Savas plot their client's times (their Figure 4) and quote only 224P and 256P (section 4.1, observation 6): 'T_c price' says where each T_c comes from, the profile's own numbers ('own'), the size rule on one of them ('scaled') or another device's ratio ('borrowed'); the last two are our estimates. T_s: our gateway; best: 56 kbit/s, no wait; worst: 6 kbit/s, rho 0.8 (M/M/1).")
            .column(Column::label("device"))
            .column(Column::label("case"))
            .column(Column::label("auth"))
            .column(Column::label("scenario"))
            .column(Column::new("T_c", Some("ms"), Provenance::derived("device profile")))
            .column(Column::label("T_c price"))
            .column(Column::new("response", Some("ms"), Provenance::modelled("Levi-Savas section 4.2", "device profile, our gateway, PK bytes")));
        for r in &self.levi_savas {
            t = t.row(vec![
                Cell::text(&r.device),
                Cell::text(r.case.to_string()),
                Cell::text(auth_name(r.auth)),
                Cell::text(&r.scenario),
                Cell::num(r.client_ms, 1),
                Cell::text(r.client_price),
                Cell::num(r.response_ms, 1),
            ]);
        }
        t
    }

    fn herwono_figure(&self) -> Figure {
        let mut chart = LineChart::new(
            Axis::new("throughput", "bit/s"),
            Axis::new("handshake duration", "ms").log(),
        );
        let mut keys: Vec<(String, DeviceName)> = self
            .herwono
            .iter()
            .map(|r| (r.handshake.clone(), r.device.clone()))
            .collect();
        keys.dedup();
        for (i, (h, d)) in keys.iter().enumerate() {
            let points = self
                .herwono
                .iter()
                .filter(|r| &r.handshake == h && &r.device == d)
                .map(|r| (r.throughput_bps, r.duration_ms));
            chart = chart.series(
                Series::new(
                    format!("{h} on {d}"),
                    Provenance::modelled(
                        "Herwono duration vs throughput",
                        "device profile, our flights",
                    ),
                    points,
                )
                .colour(i),
            );
        }
        Figure::new("device_herwono", "Herwono-Liebhardt ICICS Fig. 3 and Aachen Figure 4 with device clients", chart)
            .caption("Our flights (with WDP/IP overhead) at each throughput, plus the device's client time and our gateway's.")
    }
}
