//! The text tables of `wtlsperf handshake`: one case laid out like thesis Tables
//! 4.1-4.11, and the overview of many.

use std::fmt::Write as _;

use wtls::handshake::AuthMode;

use super::record::{kind_name, med, median_of, ms, side_name};
use super::{
    percentage_comparison, published_bytes, published_totals, BoundRatio, CaseMeasurement, Flow,
    Side,
};

/// The human-readable table of one case, laid out like thesis Tables 4.1-4.11.
pub fn render_case(m: &CaseMeasurement) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", title(m));
    side_totals(&mut s, m);
    for side in [Side::Client, Side::Server] {
        side_messages(&mut s, m, side);
    }
    wire_shape(&mut s, m);
    bound_lines(&mut s, m);
    probe_overhead_line(&mut s, m);
    s
}

/// `== case auth (suite, variant, flow; reps, kind) ==`.
fn title(m: &CaseMeasurement) -> String {
    let suite = if m.case.leaf.is_rsa() {
        "RSA"
    } else {
        "ECDH_ECDSA"
    };
    let flow = match (m.auth, m.flow) {
        (AuthMode::Mutual, _) => "",
        (_, Flow::Thesis) => ", thesis flow (CertificateRequest + empty Certificate)",
        (_, Flow::Wtls) => ", WTLS flow (no CertificateRequest)",
    };
    format!(
        "== {} {} ({suite}, {}{flow}; {} reps, handshake kind {}) ==",
        m.case,
        m.auth.name(),
        m.variant.name(),
        m.reps.len(),
        m.reps.first().map(|r| kind_name(r.kind)).unwrap_or("-"),
    )
}

/// T_PD_C and T_PD_S (wall, CPU, CPU read outside the engine) beside Tables 4.1/4.2.
fn side_totals(s: &mut String, m: &CaseMeasurement) {
    let published = published_totals(m.case, m.auth);
    let _ = writeln!(
        s,
        "{:<7} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>10}",
        "side",
        "wall med",
        "wall p95",
        "CPU med",
        "CPU p95",
        "CPU outside",
        "thesis T_PD",
        "thesis/us"
    );
    for side in [Side::Client, Side::Server] {
        let (wall, cpu, outside, publ) = match side {
            Side::Client => (
                m.client_wall_ms(),
                m.client_cpu_ms(),
                m.client_outside_cpu_ms(),
                published.map(|p| p.0),
            ),
            Side::Server => (
                m.server_wall_ms(),
                m.server_cpu_ms(),
                m.server_outside_cpu_ms(),
                published.map(|p| p.1),
            ),
        };
        let ratio = publ
            .filter(|_| med(cpu) > 0.0)
            .map(|p| format!("{:.0}x", p / med(cpu)))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            s,
            "{:<7} {:>10.4} {:>10.4} {:>10.4} {:>10.4} {:>12.4} {:>12} {:>10}",
            side_name(side),
            med(wall),
            wall.map(|w| w.p95).unwrap_or(0.0),
            med(cpu),
            cpu.map(|c| c.p95).unwrap_or(0.0),
            med(outside),
            publ.map(|p| format!("{p:.2}"))
                .unwrap_or_else(|| "-".into()),
            ratio
        );
    }
    let _ = writeln!(s, "(ms; CPU = sum of the side's per-message thread CPU, T_PD_C / T_PD_S of Eq. 3.2/3.3, 3.5/3.6; \"CPU outside\" = thread CPU around the engine calls)");
}

/// One side's messages with their operations, then its row of Tables 4.3-4.10.
fn side_messages(s: &mut String, m: &CaseMeasurement, side: Side) {
    let _ = writeln!(s, "-- {} messages --", side_name(side));
    let _ = writeln!(
        s,
        "  {:<9} {:>9} {:>7} {:>9} {:>9} {:>6}  operations (wall, % of message wall)",
        "message", "CPU ms", "CPU %", "wall ms", "wall p95", "bytes"
    );
    for msg in m.message_summary(side) {
        let ops = msg
            .operations
            .iter()
            .map(|o| {
                format!(
                    "{} {:.4} ms {:.1}%",
                    o.operation.name(),
                    o.median_wall_ms,
                    o.share_of_message_pct
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            s,
            "  {:<9} {:>9.4} {:>7.2} {:>9.4} {:>9.4} {:>6}  {}",
            msg.message.name(),
            msg.median_cpu_ms,
            msg.share_pct,
            msg.median_wall_ms,
            msg.p95_wall_ms,
            msg.bytes,
            ops
        );
    }
    if let Some(cols) = percentage_comparison(m, side) {
        let line = cols
            .iter()
            .map(|c| {
                format!(
                    "{} {:.2}% (thesis {})",
                    c.header,
                    c.ours_pct,
                    c.published_pct
                        .map(|p| format!("{p:.2}%"))
                        .unwrap_or_else(|| "-".into())
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let _ = writeln!(s, "  thesis columns: {line}");
    }
}

/// Flights, datagrams, messages and bytes beside Table 4.11.
fn wire_shape(s: &mut String, m: &CaseMeasurement) {
    let flights = m
        .flight_bytes()
        .iter()
        .map(|(from_client, b)| format!("{}{b}", if *from_client { "C>S " } else { "S>C " }))
        .collect::<Vec<_>>()
        .join(" | ");
    let (dc, ds) = m.datagrams();
    let (mc, msv) = m.messages();
    let _ = writeln!(s, "flights (bytes per datagram): {flights}");
    let _ = writeln!(
        s,
        "datagrams C>S {dc}, S>C {ds}; messages client {mc}, server {msv}; handshake bytes {} (thesis Table 4.11: {}, which adds WTP ACK packets and lower-layer headers)",
        m.handshake_bytes(),
        published_bytes(m.case, m.auth)
            .map(|b| b.to_string())
            .unwrap_or_else(|| "-".into())
    );
}

/// The bound with its interval and floor, or the measurement failure with its spread.
fn bound_lines(s: &mut String, m: &CaseMeasurement) {
    match (m.bound(), m.bound_cpu_ms(), m.bound_ms()) {
        (Some(BoundRatio::Bounded { ratio, spread }), Some(cpu), Some(raw)) => {
            let (lo, hi) = spread.ci95.unwrap_or((f64::NAN, f64::NAN));
            let _ = writeln!(
                s,
                "bound: server CPU (probe off) {cpu:.4} ms beside raw public-key ops ({}) {raw:.4} ms (medians); paired ratio {ratio:.3} (95 % interval {lo:.3}-{hi:.3}, {} pairs){}",
                m.bound_operations.iter().map(|o| o.name()).collect::<Vec<_>>().join(" + "),
                spread.pairs,
                if ratio <= 1.10 { "" } else { "  (above the 1.10 target)" }
            );
            if let (Some(sym), Some(floor)) = (m.symmetric_floor_ms(), m.bound_floor_ratio()) {
                let _ = writeln!(
                    s,
                    "floor: the suite's mandatory symmetric work {sym:.4} ms, so no server can do better than {floor:.3}"
                );
            }
        }
        (Some(failed), _, _) => {
            let _ = writeln!(s, "bound: {}", failed.failure_text().unwrap_or_default());
        }
        _ => {
            let _ = writeln!(s, "bound: not measured for this variant");
        }
    }
}

/// What the probe costs, when measured.
fn probe_overhead_line(s: &mut String, m: &CaseMeasurement) {
    match m.probe_overhead {
        Some(o) => {
            let _ = writeln!(
                s,
                "probe overhead: {:+.2}% (thread CPU per handshake, median: off {:.4} ms, full {:.4} ms)",
                100.0 * o,
                median_of(m.probe_off_cpu_ns.iter().map(|&v| ms(v))).unwrap_or(0.0),
                median_of(m.probe_full_cpu_ns.iter().map(|&v| ms(v))).unwrap_or(0.0)
            );
        }
        None => {
            let _ = writeln!(s, "probe overhead: not measured");
        }
    }
}

/// One line per case: server CPU, the thesis value, the bound and the probe overhead.
pub fn render_overview(results: &[CaseMeasurement]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<18} {:<7} {:>10} {:>10} {:>11} {:>9} {:>8} {:>9} {:>8}",
        "case",
        "auth",
        "client ms",
        "server ms",
        "thesis S ms",
        "raw PK ms",
        "bound",
        "floor",
        "probe %"
    );
    let mut worst: Option<(f64, String)> = None;
    for m in results {
        let ratio = m.bound_ratio();
        if let Some(r) = ratio {
            if worst.as_ref().is_none_or(|(w, _)| r > *w) {
                worst = Some((r, format!("{} {}", m.case, m.auth.name())));
            }
        }
        let _ = writeln!(
            s,
            "{:<18} {:<7} {:>10.4} {:>10.4} {:>11} {:>9} {:>8} {:>9} {:>8}",
            m.case.to_string(),
            m.auth.name(),
            med(m.client_cpu_ms()),
            med(m.server_cpu_ms()),
            published_totals(m.case, m.auth)
                .map(|p| format!("{:.2}", p.1))
                .unwrap_or_else(|| "-".into()),
            m.bound_ms()
                .map(|b| format!("{b:.4}"))
                .unwrap_or_else(|| "-".into()),
            match m.bound() {
                Some(b) => b
                    .value()
                    .map(|r| format!("{r:.3}"))
                    .unwrap_or_else(|| "failed".into()),
                None => "-".into(),
            },
            m.bound_floor_ratio()
                .map(|r| format!("{r:.3}"))
                .unwrap_or_else(|| "-".into()),
            m.probe_overhead
                .map(|o| format!("{:+.2}", 100.0 * o))
                .unwrap_or_else(|| "-".into()),
        );
    }
    if let Some((w, which)) = worst {
        let _ = writeln!(s, "worst bound ratio: {w:.3} ({which})");
    }
    let met = results
        .iter()
        .filter(|m| m.bound_ratio().is_some_and(|r| r <= 1.10))
        .count();
    let reachable = results
        .iter()
        .filter(|m| m.bound_floor_ratio().is_some_and(|r| r <= 1.10))
        .count();
    let measured = results.iter().filter(|m| m.bound_ratio().is_some()).count();
    let _ = writeln!(
        s,
        "bound <= 1.10 in {met} of {measured} cases with a bound; floor (raw PK + the suite's mandatory symmetric work) <= 1.10 in {reachable}"
    );
    for m in results {
        if let Some(text) = m.bound().and_then(|b| b.failure_text()) {
            let _ = writeln!(s, "bound of {} {}: {text}", m.case, m.auth.name());
        }
    }
    s
}
