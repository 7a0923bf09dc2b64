//! Our measurements beside the thesis' published ones: Tables 4.1/4.2 (side totals),
//! 4.3-4.10 (percentage shares) and 4.11 (handshake bytes).

use serde::Serialize;
use wtls::handshake::AuthMode;
use wtls::probe::{Message, Operation};
use wtls::suite::Case;
use wtlsperf_models::processing::{self, percent_layout, percentage_row, PercentColumn, SideTimes};
use wtlsperf_models::reference::{self, PercentTable};
use wtlsperf_models::SuiteFamily;

use super::{CaseMeasurement, Side, Variant};
use crate::auth::authentication;

/// The thesis' published T_PD_C and T_PD_S (ms) for a case (Tables 4.1 and 4.2).
pub fn published_totals(case: Case, auth: AuthMode) -> Option<(f64, f64)> {
    let rows = reference::processing_times().ok()?;
    let a = authentication(auth);
    rows.iter()
        .find(|r| {
            r.authentication == a
                && r.ca_cert.eq_ignore_ascii_case(case.ca.short())
                && r.leaf_cert.eq_ignore_ascii_case(case.leaf.short())
        })
        .map(|r| (r.client_ms, r.server_ms))
}

/// The thesis' Table 4.11 bytes for a case (incl. WTP acknowledgements and headers).
pub fn published_bytes(case: Case, auth: AuthMode) -> Option<u32> {
    reference::handshake_bytes()
        .ok()?
        .iter()
        .find(|r| {
            r.ca_cert.eq_ignore_ascii_case(case.ca.short())
                && r.leaf_cert.eq_ignore_ascii_case(case.leaf.short())
        })
        .map(|r| r.bytes(authentication(auth)))
}

pub(super) fn model_message(m: Message) -> Option<processing::Message> {
    use processing::Message as P;
    Some(match m {
        Message::CH => P::ClientHello,
        Message::SH => P::ServerHello,
        Message::SCERT => P::ServerCertificate,
        Message::CERTREQ => P::CertificateRequest,
        Message::SHD => P::ServerHelloDone,
        Message::CCERT => P::ClientCertificate,
        Message::CKX => P::ClientKeyExchange,
        Message::CERTVRFY => P::CertificateVerify,
        Message::CCCS => P::ClientChangeCipherSpec,
        Message::CFIN => P::ClientFinished,
        Message::SCCS => P::ServerChangeCipherSpec,
        Message::SFIN => P::ServerFinished,
        Message::SKX => return None,
    })
}

fn model_operation(o: Operation) -> Option<processing::Operation> {
    use processing::Operation as P;
    Some(match o {
        Operation::ECDH => P::Ecdh,
        Operation::MS => P::MasterSecret,
        Operation::RSAENC => P::RsaEncrypt,
        Operation::RSADEC => P::RsaDecrypt,
        _ => return None,
    })
}

/// One column of a thesis percentage table: ours next to the published value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PercentComparison {
    /// The published header (`T_M_S_CCERT`, `T_M_S_ECDH/T_M_S_CKX`, `Others`).
    pub header: String,
    pub ours_pct: f64,
    pub published_pct: Option<f64>,
}

/// Our row of the thesis percentage table for this case and side (Tables 4.3-4.10),
/// beside the published one. Message shares use median CPU times; operation shares of
/// the key exchange use wall times (the probe times operations by wall clock only).
/// `None` for variants the thesis did not measure or when the key exchange time is 0.
pub fn percentage_comparison(m: &CaseMeasurement, side: Side) -> Option<Vec<PercentComparison>> {
    if !matches!(m.variant, Variant::Full) {
        return None;
    }
    let msgs = m.message_summary(side);
    let (mut cpu, mut wall) = (SideTimes::default(), SideTimes::default());
    for s in &msgs {
        if let Some(pm) = model_message(s.message) {
            cpu.messages_ms.insert(pm, s.median_cpu_ms);
            wall.messages_ms.insert(pm, s.median_wall_ms);
        }
        for op in &s.operations {
            if let (Some(po), Message::CKX) = (model_operation(op.operation), s.message) {
                wall.operations_ms.insert(po, op.median_wall_ms);
            }
        }
    }
    // Messages the probe does not map (SKX) still count in the side's total.
    let unmapped: f64 = msgs
        .iter()
        .filter(|s| model_message(s.message).is_none())
        .map(|s| s.median_cpu_ms)
        .sum();
    if unmapped > 0.0 {
        *cpu.messages_ms
            .entry(processing::Message::ClientHello)
            .or_default() += unmapped;
    }
    let family = if m.case.leaf.is_rsa() {
        SuiteFamily::Rsa
    } else {
        SuiteFamily::EcdhEcdsa
    };
    let table = PercentTable::for_case(m.authentication(), side, family);
    let by_cpu = percentage_row(table, &cpu)?;
    let by_wall = percentage_row(table, &wall)?;
    let published = table.load().ok();
    let keys = [m.case.ca.short(), m.case.leaf.short()];
    Some(
        percent_layout(table)
            .iter()
            .zip(by_cpu.iter().zip(&by_wall))
            .map(|(col, (c, w))| PercentComparison {
                header: c.header.clone(),
                ours_pct: match col {
                    PercentColumn::ShareOfKeyExchange(_) => w.percent,
                    _ => c.percent,
                },
                published_pct: published.as_ref().and_then(|t| t.value(&keys, &c.header)),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::record::{med, sent_by_client};
    use wtlsperf_models::stats;

    #[test]
    fn empty_summaries_print_as_zero() {
        assert_eq!(med(stats::summarize(&[3.0, 1.0, 2.0, 10.0])), 2.5);
        assert_eq!(med(stats::summarize(&[])), 0.0);
    }

    #[test]
    fn thesis_senders() {
        let client: Vec<_> = Message::ALL
            .iter()
            .filter(|m| sent_by_client(**m))
            .map(|m| m.name())
            .collect();
        assert_eq!(client, ["CH", "CCERT", "CKX", "CERTVRFY", "CCCS", "CFIN"]);
        // The model crate agrees for every message it knows.
        for m in Message::ALL {
            if let Some(pm) = model_message(m) {
                assert_eq!(pm.sent_by_client(), sent_by_client(m), "{}", m.name());
            }
        }
    }

    #[test]
    fn published_rows_are_found_for_every_case() {
        for case in Case::ALL {
            for auth in [AuthMode::ServerAuth, AuthMode::Mutual] {
                assert!(published_totals(case, auth).is_some(), "{case}");
                assert!(published_bytes(case, auth).is_some(), "{case}");
            }
        }
        // Table 4.1, first row: 160p/160p mutual, 745.65 ms client, 10.57 ms server.
        assert_eq!(
            published_totals(Case::ALL[0], AuthMode::Mutual),
            Some((745.65, 10.57))
        );
    }
}
