//! The report section "WTLS beside DTLS 1.2, EDHOC, ..." and its findings, every clause
//! computed from the run.

use wtlsperf_report::{
    Axis, BarSeries, Cell, Column, Figure, GroupedBarChart, Provenance, Section, Table,
};

use super::{Config, ProtocolResults, ProtocolRow, HYBRID_ANCHOR_KEY, LOSS};
use crate::evaluate::context::Ctx;
use crate::evaluate::vocabulary::{auth_name, BearerName, DeviceName};
use wtlsperf_models::Authentication;
use wtlsperf_spine::ProtocolId;

/// `103↑ 44↓ 119↑ ...`: each flight's payload bytes and direction.
fn flight_bytes(c: &Config) -> String {
    c.flights
        .iter()
        .map(|f| {
            let arrow = match f.direction {
                wtlsperf_models::transmission::Direction::Up => '↑',
                wtlsperf_models::transmission::Direction::Down => '↓',
            };
            format!("{}{arrow}", f.bytes)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn modelled() -> Provenance {
    Provenance::modelled(
        "T_H = Eq. 3.84 per flight + T_PD_C + T_PD_S",
        "the protocol's own flights from the in-memory run, profile rates and mean traversal, \
         the device profile's operation costs and this machine's server CPU",
    )
}

impl ProtocolResults {
    /// `WTLS beside DTLS 1.2, EDHOC and DTLS 1.3`: the protocols this run compared, by
    /// their registry titles.
    fn section_title(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for c in self.configs.iter().filter(|c| !c.is_wtls()) {
            let title = c.contender.entry().title();
            let name = title.split(" (").next().unwrap_or(title);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        match names.split_last() {
            None => "WTLS".to_owned(),
            Some((last, [])) => format!("WTLS beside {last}"),
            Some((last, rest)) => format!("WTLS beside {} and {last}", rest.join(", ")),
        }
    }

    /// The report section.
    pub fn section(&self, ctx: &Ctx) -> Section {
        let mut s = Section::new("protocols", self.section_title()).intro(
            "WTLS's successors on constrained links, on the same bench: DTLS 1.2 through \
             OpenSSL (ECDHE-ECDSA P-256 with AES-128-CCM-8 and a small certificate chain, \
             and PSK-AES128-CCM8: RFC 7925's two mandatory suites; cookie exchange on, as \
             RFC 6347 recommends, and measured without it in the cookie table; RFC 7925's \
             9 s initial retransmission timer, each protocol's timers in the timers table) \
             and EDHOC \
             (RFC 9528) through lakers, method 3 with cipher suite 2, credentials by \
             reference, over CoAP confirmable POSTs with RFC 7252's retransmission. WTLS \
             is the best case (fewest bytes) of each security category; P-256 and 128-bit \
             PSK are category 3's level. OpenSSL handles a whole flight per call, so DTLS \
             costs are per datagram and per handshake, not per message.",
        );
        if let Some(note) = ctx.catalogue.typical_bearer_note() {
            s = s.paragraph(note);
        }
        s = s.table(self.memory_table(ctx));
        s = s.table(super::timers::table(&self.timers));
        s = s.figure(self.duration_figure());
        s = s.table(self.measured_table(ctx));
        s = s.table(super::cookie::table(&self.cookie, ctx));
        s = s.table(self.device_table());
        s = s.table(self.loss_table(ctx));
        s = s.table(self.peer_table(ctx));
        // The findings are listed once, in the findings section.
        s
    }

    fn memory_table(&self, ctx: &Ctx) -> Table {
        let m = ctx.measured();
        let mut t = Table::new("protocols_memory", "Each handshake in memory on this machine")
            .caption("Median over the in-memory runs; bound ratio = server CPU / the raw P-256 (or RSA) operations of one handshake, timed after each handshake: the same library's, except for DTLS 1.3, whose wolfSSL server is divided by OpenSSL's raw P-256 operations (no ratio for its ML-KEM rows), so that a DTLS 1.3 ratio below 1 says wolfSSL's P-256 is faster than OpenSSL's, not that its server skips work.")
            .column(Column::label("protocol"))
            .column(Column::label("suite / case"))
            .column(Column::label("auth"))
            .column(Column::label("level"))
            .column(Column::new("bytes", Some("B"), m.clone()))
            .column(Column::new("datagrams", None, m.clone()))
            .column(Column::label("bytes per flight (↑ up, ↓ down)"))
            .column(Column::new("round trips", None, m.clone()))
            .column(Column::new("server CPU", Some("µs"), m.clone()))
            .column(Column::new("bound ratio", None, m.clone()))
            .column(Column::new("handshakes/s/core", None, Provenance::derived("1 / server CPU")))
            .column(Column::new("client CPU", Some("µs"), m));
        for c in &self.configs {
            t = t.row(vec![
                Cell::text(c.protocol().name()),
                Cell::text(c.suite()),
                Cell::text(auth_name(c.auth())),
                Cell::text(&c.level),
                Cell::num(c.bytes as f64, 0),
                Cell::num(c.datagrams as f64, 0),
                Cell::text(flight_bytes(c)),
                Cell::num(c.round_trips(), 1),
                Cell::num(c.server_cpu_us, 0),
                match c.bound_ratio {
                    Some(r) if r < 1.0 && c.protocol() == wtlsperf_drivers::protocols::DTLS13 => Cell::num(r, 2).flag(
                        "below 1: the denominator is another library's raw operations (see the caption)",
                    ),
                    other => Cell::opt(other, 2),
                },
                Cell::num(c.handshakes_per_core_s(), 0),
                Cell::num(c.client_cpu_us, 0),
            ]);
        }
        t
    }

    /// Modelled duration per bearer with this machine's client, one series per
    /// category-3-level handshake.
    fn duration_figure(&self) -> Figure {
        let bearers: Vec<String> = self.bearers.iter().map(|b| b.to_string()).collect();
        let mut chart = GroupedBarChart::new(
            "bearer",
            bearers,
            Axis::new("handshake duration", "ms").log(),
        );
        let level3 = |c: &&Config| c.level.contains("category 3");
        for c in self.configs.iter().filter(level3) {
            let values = self
                .bearers
                .iter()
                .map(|b| {
                    self.rows
                        .iter()
                        .find(|r| {
                            r.protocol == c.protocol()
                                && r.suite == c.suite()
                                && r.auth == c.auth()
                                && r.bearer == *b
                                && r.device == DeviceName::this_machine()
                        })
                        .and_then(|r| r.modelled_ms)
                })
                .collect();
            chart = chart.series(BarSeries::new(c.label(), modelled(), values));
        }
        Figure::new(
            "protocols_duration",
            "Modelled handshake duration per bearer, category 3 level, this machine's client",
            chart,
        )
        .size(1100, 480)
    }

    fn measured_table(&self, ctx: &Ctx) -> Table {
        let mut t = Table::new("protocols_bearers", "Handshake duration per bearer: model beside real runs")
            .caption("Real handshakes through the emulated bearers (relay with the profile's rates, traversal delay and 28 B per datagram); the client holds each flight for its device's time.")
            .column(Column::label("protocol"))
            .column(Column::label("suite / case"))
            .column(Column::label("auth"))
            .column(Column::label("bearer"))
            .column(Column::label("device"))
            .column(Column::new("modelled", Some("ms"), modelled()))
            .column(Column::new("measured (mean)", Some("ms"), ctx.measured()))
            .column(Column::new("runs", None, ctx.measured()))
            .column(Column::new("|error|", Some("%"), Provenance::derived("|measured / modelled - 1|")));
        for r in self.rows.iter().filter(|r| r.measured_runs > 0) {
            t = t.row(vec![
                Cell::text(r.protocol.name()),
                Cell::text(&r.suite),
                Cell::text(auth_name(r.auth)),
                Cell::text(r.bearer.as_str()),
                Cell::text(r.device.as_str()),
                Cell::opt(r.modelled_ms, 0),
                Cell::opt(r.measured_ms, 0),
                Cell::num(r.measured_runs as f64, 0),
                Cell::opt(r.model_error().map(|e| 100.0 * e), 1),
            ]);
        }
        let groups = self.bearer_model_errors();
        let outside = crate::evaluate::verdict::outside_target(
            groups.iter().map(|(g, e)| (g.as_str(), e.as_slice())),
        );
        t.note(format!(
            "Median |error| over these rows: {}, pooled, not judged. The finding on this model judges each protocol on each bearer by its bias (the median signed error and its 95 % interval, within +-5 %); of its {} groups, these are not shown within: {}.",
            self.model_median_error()
                .map_or("none measured".into(), |e| format!("{:.1} %", 100.0 * e)),
            groups.len(),
            if outside.is_empty() {
                "none".to_owned()
            } else {
                outside.join("; ")
            }
        ))
    }

    fn device_table(&self) -> Table {
        let mut t = Table::new("protocols_devices", "Modelled handshake duration on each device and bearer")
            .caption("T_H with the client's processing priced by the device profile (P-256 key generation or signature not in a profile are priced as one ECDH, a missing verification as two) and this machine's gateway.")
            .column(Column::label("protocol"))
            .column(Column::label("suite / case"))
            .column(Column::label("auth"))
            .column(Column::label("device"));
        for b in &self.bearers {
            t = t.column(Column::new(b.as_str(), Some("ms"), modelled()));
        }
        let mut keys: Vec<(ProtocolId, String, Authentication, DeviceName)> = Vec::new();
        for r in &self.rows {
            let k = (r.protocol, r.suite.clone(), r.auth, r.device.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        for k in keys {
            let mut cells = vec![
                Cell::text(k.0.name()),
                Cell::text(&k.1),
                Cell::text(auth_name(k.2)),
                Cell::text(k.3.as_str()),
            ];
            for b in &self.bearers {
                let v = self
                    .rows
                    .iter()
                    .find(|r| {
                        r.protocol == k.0
                            && r.suite == k.1
                            && r.auth == k.2
                            && r.device == k.3
                            && r.bearer == *b
                    })
                    .and_then(|r| r.modelled_ms);
                cells.push(Cell::opt(v, 0));
            }
            t = t.row(cells);
        }
        t
    }

    fn loss_table(&self, ctx: &Ctx) -> Table {
        let m = ctx.measured();
        let mut t = Table::new("protocols_loss", format!("Completion over {} with {:.0} % loss", self.loss_bearer, 100.0 * LOSS))
            .caption("Each protocol's own retransmission, as the timers table gives it with its RFC section: DTLS 1.2 through OpenSSL with the first timer set by the bench to RFC 7925 section 11's 9 s (DTLS_set_timer_cb; OpenSSL's own default is 1 s), doubling; DTLS 1.3 through wolfSSL with the same 9 s, doubling (RFC 9147 section 5.8); EDHOC over CoAP CON (ACK_TIMEOUT 2 s, random factor 1.5, MAX_RETRANSMIT 4); QUIC's probe timeout from the 333 ms initial RTT (RFC 9002 section 6.2); the WTLS client's timer from the bearer profile. The median is over all runs, a run that did not complete counted as beyond every time ('> longest' where the median falls on one), as the loss curves count them.")
            .column(Column::label("protocol"))
            .column(Column::label("suite / case"))
            .column(Column::label("auth"))
            .column(Column::new("runs", None, m.clone()))
            .column(Column::new("completed", None, m.clone()))
            .column(Column::label("median duration, all runs"))
            .column(Column::new("longest completed", Some("ms"), m.clone()))
            .column(Column::new("median client retransmissions", None, m));
        for l in &self.loss {
            t = t.row(vec![
                Cell::text(l.protocol.name()),
                Cell::text(&l.suite),
                Cell::text(auth_name(l.auth)),
                Cell::num(l.runs as f64, 0),
                Cell::num(l.completed as f64, 0),
                Cell::text(l.median_text()),
                Cell::opt(l.max_ms, 0),
                Cell::opt(l.median_retransmissions, 1),
            ]);
        }
        t
    }

    fn peer_table(&self, ctx: &Ctx) -> Table {
        let m = ctx.measured();
        let mut t = Table::new("protocols_peers", "Peer anchors: server CPU and bound ratio beside our gateway")
            .caption("In memory, one thread, full handshakes (no session cache or tickets); each anchor and our gateway measured in interleaved blocks; medians.")
            .column(Column::label("anchor"))
            .column(Column::new("handshakes", None, m.clone()))
            .column(Column::new("server CPU", Some("µs"), m.clone()))
            .column(Column::new("raw public-key", Some("µs"), m.clone()))
            .column(Column::new("bound ratio", None, m.clone()))
            .column(Column::label("our WTLS case"))
            .column(Column::new("our bound ratio", None, m));
        for (p, ours) in &self.peers {
            t = t.row(vec![
                Cell::text(p.peer.key()),
                Cell::num(p.reps as f64, 0),
                Cell::num(p.server_cpu_us, 0),
                Cell::num(p.raw_pk_us, 0),
                Cell::num(p.bound_ratio(), 2),
                Cell::text(p.peer.wtls_counterpart()),
                Cell::opt(*ours, 2),
            ]);
        }
        if let Some(h) = &self.hybrid_anchor {
            t = t.row(vec![
                Cell::text(HYBRID_ANCHOR_KEY),
                Cell::num(h.reps as f64, 0),
                Cell::num(h.server_cpu_us, 0),
                Cell::num(h.raw_us, 0),
                Cell::num(h.bound_ratio(), 2),
                Cell::text("dtls1.3 x25519mlkem768-ecdsa-ccm8"),
                Cell::opt(
                    self.configs
                        .iter()
                        .find(|c| c.suite() == "x25519mlkem768-ecdsa-ccm8")
                        .and_then(|c| c.bound_ratio),
                    2,
                ),
            ]);
        }
        t
    }

    pub(super) fn row(
        &self,
        pick: impl Fn(&Config) -> bool,
        bearer: &BearerName,
        device: &DeviceName,
    ) -> Option<&ProtocolRow> {
        let c = self.configs.iter().find(|c| pick(c))?;
        self.rows.iter().find(|r| {
            r.protocol == c.protocol()
                && r.suite == c.suite()
                && r.auth == c.auth()
                && r.bearer == *bearer
                && r.device == *device
        })
    }
}
