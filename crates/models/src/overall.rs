//! End-to-end handshake time: thesis (Bayoglu 2004) section 4.4, T_H = T_PD + T_TD + T_QD
//! (Figures 4.39-4.46); the Levi-Savas 2003 response time (Figure 6); and the
//! Herwono-Liebhardt 2001 handshake duration against bearer throughput (Aachen Fig. 4,
//! ICICS Fig. 3).

use crate::queue::mm1_wait_ms;
use crate::reference::{LeviSavasScenarioRow, ProcessingTimeRow};
use crate::transmission::{applicable_messages, eq_3_84_transmission_ms, serialisation_ms};
use serde::{Deserialize, Serialize};

/// The three components of one handshake's duration and their sum (ms).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HandshakeTime {
    /// T_PD, client plus gateway processing (Eq. 3.4 / 3.7).
    pub processing_ms: f64,
    /// T_TD, transmission (Eq. 3.84).
    pub transmission_ms: f64,
    /// T_QD, waiting at the gateway (Eq. 3.12); 0 for an idle gateway (Fig. 4.39-4.43).
    pub queue_ms: f64,
    /// T_H.
    pub total_ms: f64,
}

/// Overall handshake time T_H = T_PD + T_TD + T_QD, thesis section 4.4.
pub fn overall_handshake(processing_ms: f64, transmission_ms: f64, queue_ms: f64) -> HandshakeTime {
    HandshakeTime {
        processing_ms,
        transmission_ms,
        queue_ms,
        total_ms: processing_ms + transmission_ms + queue_ms,
    }
}

/// T_H of a published case (Table 4.1/4.2 row) over a bearer, the way Figures 4.39-4.46
/// are built: T_PD from the row, T_TD by Eq. 3.84 from the handshake bytes (Table 4.11),
/// the bearer rate and its one-way traversal delay (Table 4.15), and a queue delay.
pub fn thesis_case_handshake(
    row: &ProcessingTimeRow,
    handshake_bytes: u32,
    rate_bps: f64,
    traversal_ms: f64,
    queue_ms: f64,
) -> HandshakeTime {
    let n = applicable_messages(row.authentication, row.family());
    overall_handshake(
        row.client_ms + row.server_ms,
        eq_3_84_transmission_ms(handshake_bytes as f64, rate_bps, n, traversal_ms),
        queue_ms,
    )
}

/// A Levi-Savas server-load and channel scenario.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LeviSavasScenario {
    /// Server utilisation rho of the M/M/1 gateway.
    pub rho: f64,
    /// Channel rate (bit/s).
    pub channel_rate_bps: f64,
}

impl LeviSavasScenario {
    /// Best case of Figure 6: negligible waiting, 56 kbit/s.
    pub const BEST: LeviSavasScenario = LeviSavasScenario {
        rho: 0.0,
        channel_rate_bps: 56_000.0,
    };
    /// Worst case of Figure 6: rho = 0.8, 6 kbit/s.
    pub const WORST: LeviSavasScenario = LeviSavasScenario {
        rho: 0.8,
        channel_rate_bps: 6_000.0,
    };
}

impl From<&LeviSavasScenarioRow> for LeviSavasScenario {
    fn from(row: &LeviSavasScenarioRow) -> Self {
        LeviSavasScenario {
            rho: row.server_utilization_rho,
            channel_rate_bps: row.channel_rate_bps,
        }
    }
}

/// Components of the Levi-Savas response time (ms).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LeviSavasResponse {
    /// T_c, client public-key processing.
    pub client_ms: f64,
    /// T_s, server public-key processing per request.
    pub server_ms: f64,
    /// T_w = T_s·rho/(1 - rho).
    pub wait_ms: f64,
    /// T_data = 8L/R.
    pub data_ms: f64,
    /// T_resp = T_c + T_s + T_w + T_data.
    pub total_ms: f64,
}

/// Levi-Savas 2003 section 4.2: T_resp = T_c + T_s + T_w + T_data with an M/M/1 wait and
/// T_data = 8L/R for `data_bytes` of public-key related data. `None` for rho outside [0, 1).
pub fn levi_savas_response(
    client_ms: f64,
    server_ms: f64,
    data_bytes: f64,
    scenario: LeviSavasScenario,
) -> Option<LeviSavasResponse> {
    let wait_ms = mm1_wait_ms(server_ms, scenario.rho)?;
    let data_ms = serialisation_ms(data_bytes, scenario.channel_rate_bps);
    Some(LeviSavasResponse {
        client_ms,
        server_ms,
        wait_ms,
        data_ms,
        total_ms: client_ms + server_ms + wait_ms + data_ms,
    })
}

/// Bearer throughputs of the Herwono-Liebhardt figures: 1 to 20 kbit/s in 1 kbit/s steps.
pub fn herwono_throughputs_bps() -> Vec<f64> {
    (1..=20).map(|k| k as f64 * 1000.0).collect()
}

/// One point of a duration-against-throughput curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DurationPoint {
    /// Effective bearer throughput (bit/s).
    pub throughput_bps: f64,
    /// Handshake duration (ms).
    pub duration_ms: f64,
}

/// Handshake duration over a bearer of effective `throughput_bps` (ms): every message group
/// (flight, bytes incl. WDP/IP as in Herwono Table 1/2) is serialised and crosses the
/// network once, plus the processing of both peers:
/// sum(bytes)·8/R + groups · one-way latency + processing.
pub fn herwono_duration_ms(
    group_bytes: &[u32],
    throughput_bps: f64,
    one_way_latency_ms: f64,
    processing_ms: f64,
) -> f64 {
    let bytes: f64 = group_bytes.iter().map(|b| *b as f64).sum();
    serialisation_ms(bytes, throughput_bps)
        + group_bytes.len() as f64 * one_way_latency_ms
        + processing_ms
}

/// [`herwono_duration_ms`] at each throughput, e.g. [`herwono_throughputs_bps`].
pub fn herwono_sweep(
    group_bytes: &[u32],
    throughputs_bps: &[f64],
    one_way_latency_ms: f64,
    processing_ms: f64,
) -> Vec<DurationPoint> {
    throughputs_bps
        .iter()
        .map(|&r| DurationPoint {
            throughput_bps: r,
            duration_ms: herwono_duration_ms(group_bytes, r, one_way_latency_ms, processing_ms),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{
        bearer_traversal, handshake_bytes, herwono_groups_of, levi_savas_scenarios,
        processing_times,
    };
    use crate::Authentication;

    #[test]
    fn t_h_of_a_published_case_over_gsm_csd() {
        let rows = processing_times().unwrap();
        let row = rows
            .iter()
            .find(|r| r.authentication == Authentication::Mutual && r.leaf_cert == "160p")
            .unwrap();
        let bytes = handshake_bytes().unwrap()[0].bytes(Authentication::Mutual);
        let csd = &bearer_traversal().unwrap()[0];
        let t = thesis_case_handshake(row, bytes, 9600.0, csd.traversal_mean_ms, 0.0);
        // 745.65 + 10.57 ms processing; 1515 bytes at 9600 bit/s + 8 x 391.3 ms.
        assert!((t.processing_ms - 756.22).abs() < 1e-9);
        assert!((t.transmission_ms - (1262.5 + 3130.4)).abs() < 1e-9);
        assert!((t.total_ms - 5149.12).abs() < 1e-9);
        // Section 4.4: for ECDH_ECDSA the transmission dominates; for mutual RSA3072 the
        // processing does.
        assert!(t.transmission_ms > 5.0 * t.processing_ms);
        let rsa = rows
            .iter()
            .find(|r| r.authentication == Authentication::Mutual && r.leaf_cert == "rsa3072")
            .unwrap();
        let t = thesis_case_handshake(rsa, 3767, 9600.0, csd.traversal_mean_ms, 0.0);
        assert!(t.processing_ms > 5.0 * t.transmission_ms);
    }

    #[test]
    fn levi_savas_scenarios_of_figure_6() {
        let rows = levi_savas_scenarios().unwrap();
        let worst = LeviSavasScenario::from(rows.iter().find(|r| r.scenario == "worst").unwrap());
        let best = LeviSavasScenario::from(rows.iter().find(|r| r.scenario == "best").unwrap());
        assert_eq!(
            (worst, best),
            (LeviSavasScenario::WORST, LeviSavasScenario::BEST)
        );
        // 570 ms client (256P, quoted in section 4.1), 10 ms server, 600 bytes.
        let w = levi_savas_response(570.0, 10.0, 600.0, worst).unwrap();
        assert!((w.wait_ms - 40.0).abs() < 1e-9);
        assert!((w.data_ms - 800.0).abs() < 1e-9);
        assert!((w.total_ms - 1420.0).abs() < 1e-9);
        let b = levi_savas_response(570.0, 10.0, 600.0, best).unwrap();
        assert_eq!(b.wait_ms, 0.0);
        assert!((b.total_ms - (580.0 + 600.0 * 8.0 / 56.0)).abs() < 1e-9);
        assert!(levi_savas_response(
            1.0,
            1.0,
            1.0,
            LeviSavasScenario {
                rho: 1.0,
                channel_rate_bps: 1.0
            }
        )
        .is_none());
    }

    #[test]
    fn herwono_curves_fall_with_throughput_and_bytes_dominate_when_slow() {
        let rsa = herwono_groups_of("icics_table2", "RSA_1024").unwrap();
        let ecdh = herwono_groups_of("icics_table2", "ECDH_ECDSA_160").unwrap();
        let rates = herwono_throughputs_bps();
        assert_eq!((rates.len(), rates[0], rates[19]), (20, 1000.0, 20000.0));
        let curve = herwono_sweep(&rsa, &rates, 0.0, 0.0);
        assert!(curve
            .windows(2)
            .all(|w| w[1].duration_ms < w[0].duration_ms));
        // 1644 bytes at 1 kbit/s: 13.152 s; ECDH_ECDSA's 976 bytes: 7.808 s.
        assert!((curve[0].duration_ms - 13_152.0).abs() < 1e-9);
        assert!((herwono_duration_ms(&ecdh, 1000.0, 0.0, 0.0) - 7_808.0).abs() < 1e-9);
        // Fixed processing weighs less the slower the bearer (Herwono: "the impact of the
        // cryptographic methods becomes negligible as the network throughput decreases").
        let share = |r| 500.0 / herwono_duration_ms(&rsa, r, 0.0, 500.0);
        assert!(share(1000.0) < share(20000.0));
        // Latency counts once per message group.
        assert!((herwono_duration_ms(&rsa, 1000.0, 100.0, 0.0) - 13_552.0).abs() < 1e-9);
    }
}
