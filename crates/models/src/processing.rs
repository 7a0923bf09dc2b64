//! Processing-time model: thesis (Bayoglu 2004) section 3.1, Eq. 3.2-3.7, and the
//! percentage layout of its Tables 4.3-4.10.
//!
//! The thesis splits a handshake into per-message processing times on each side
//! (Tables 3.4-3.7); a message that a suite does not use simply counts as 0 so one formula
//! covers RSA and ECDH_ECDSA. Inside the key exchange step it further separates the
//! public-key operation (ECDH, RSA encryption/decryption) from the master-secret
//! derivation, which is what Tables 4.3-4.10 report as shares of the key exchange time.

use crate::reference::PercentTable;
use crate::{Authentication, Side, SuiteFamily};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The handshake messages of the thesis' message flow (Tables 3.5 and 3.7), in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Message {
    /// ClientHello (`CH`).
    ClientHello,
    /// ServerHello (`SH`).
    ServerHello,
    /// Server Certificate (`SCERT`).
    ServerCertificate,
    /// CertificateRequest (`CERTREQ`).
    CertificateRequest,
    /// ServerHelloDone (`SHD`).
    ServerHelloDone,
    /// Client Certificate (`CCERT`); empty in the server-authenticated flow of Table 3.7.
    ClientCertificate,
    /// ClientKeyExchange (`CKX`); its time includes the premaster and master secret.
    ClientKeyExchange,
    /// CertificateVerify (`CERTVRFY`), mutual RSA only.
    CertificateVerify,
    /// Client ChangeCipherSpec (`CCCS`).
    ClientChangeCipherSpec,
    /// Client Finished (`CFIN`).
    ClientFinished,
    /// Server ChangeCipherSpec (`SCCS`).
    ServerChangeCipherSpec,
    /// Server Finished (`SFIN`).
    ServerFinished,
}

impl Message {
    /// All twelve, in flow order.
    pub const ALL: [Message; 12] = [
        Message::ClientHello,
        Message::ServerHello,
        Message::ServerCertificate,
        Message::CertificateRequest,
        Message::ServerHelloDone,
        Message::ClientCertificate,
        Message::ClientKeyExchange,
        Message::CertificateVerify,
        Message::ClientChangeCipherSpec,
        Message::ClientFinished,
        Message::ServerChangeCipherSpec,
        Message::ServerFinished,
    ];

    /// Thesis abbreviation (`SCERT`).
    pub fn abbreviation(self) -> &'static str {
        match self {
            Message::ClientHello => "CH",
            Message::ServerHello => "SH",
            Message::ServerCertificate => "SCERT",
            Message::CertificateRequest => "CERTREQ",
            Message::ServerHelloDone => "SHD",
            Message::ClientCertificate => "CCERT",
            Message::ClientKeyExchange => "CKX",
            Message::CertificateVerify => "CERTVRFY",
            Message::ClientChangeCipherSpec => "CCCS",
            Message::ClientFinished => "CFIN",
            Message::ServerChangeCipherSpec => "SCCS",
            Message::ServerFinished => "SFIN",
        }
    }

    /// True for the messages the client sends, i.e. the ones that join the gateway's queue
    /// (thesis Tables 3.8 and 3.9).
    pub fn sent_by_client(self) -> bool {
        matches!(
            self,
            Message::ClientHello
                | Message::ClientCertificate
                | Message::ClientKeyExchange
                | Message::CertificateVerify
                | Message::ClientChangeCipherSpec
                | Message::ClientFinished
        )
    }

    /// Whether the thesis' queue model counts this message as a job at the gateway
    /// (Eq. 3.13 and 3.15 for mutual, 3.16 and 3.18 for server-authenticated): client
    /// messages, except that mutual ECDH_ECDSA sends no ClientKeyExchange and no
    /// CertificateVerify, and server-authenticated handshakes no CertificateVerify.
    pub fn is_queue_job(self, auth: Authentication, family: SuiteFamily) -> bool {
        if !self.sent_by_client() {
            return false;
        }
        !matches!(
            (auth, family, self),
            (
                Authentication::Mutual,
                SuiteFamily::EcdhEcdsa,
                Message::ClientKeyExchange
            ) | (_, SuiteFamily::EcdhEcdsa, Message::CertificateVerify)
                | (Authentication::ServerAuth, _, Message::CertificateVerify)
        )
    }

    /// The thesis symbol, e.g. `T_M_C_SCERT`.
    pub fn thesis_symbol(self, auth: Authentication, side: Side) -> String {
        format!(
            "T_{}_{}_{}",
            auth.thesis_letter(),
            side.thesis_letter(),
            self.abbreviation()
        )
    }
}

/// The operations the thesis times inside the key exchange step (Tables 3.4 and 3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// ECDH premaster secret computation (`ECDH`).
    Ecdh,
    /// Master secret derivation from the premaster secret (`MS`).
    MasterSecret,
    /// RSA encryption of the premaster secret, client (`RSAENC`).
    RsaEncrypt,
    /// RSA decryption of the premaster secret, server (`RSADEC`).
    RsaDecrypt,
}

impl Operation {
    /// Thesis abbreviation.
    pub fn abbreviation(self) -> &'static str {
        match self {
            Operation::Ecdh => "ECDH",
            Operation::MasterSecret => "MS",
            Operation::RsaEncrypt => "RSAENC",
            Operation::RsaDecrypt => "RSADEC",
        }
    }

    /// The thesis symbol, e.g. `T_S_S_RSADEC`.
    pub fn thesis_symbol(self, auth: Authentication, side: Side) -> String {
        format!(
            "T_{}_{}_{}",
            auth.thesis_letter(),
            side.thesis_letter(),
            self.abbreviation()
        )
    }
}

/// Per-message and per-operation processing times of one side of one handshake (ms).
/// Messages absent from the map count as 0, as the thesis prescribes for messages a
/// suite does not use. Operation times are *inside* the ClientKeyExchange time and are
/// never added to the total.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideTimes {
    /// Time spent generating or processing each message (ms).
    pub messages_ms: BTreeMap<Message, f64>,
    /// Time of each operation within the key exchange step (ms).
    pub operations_ms: BTreeMap<Operation, f64>,
}

impl SideTimes {
    /// Time of one message, 0 when it does not apply.
    pub fn message_ms(&self, m: Message) -> f64 {
        self.messages_ms.get(&m).copied().unwrap_or(0.0)
    }

    /// Time of one key exchange operation, 0 when it does not apply.
    pub fn operation_ms(&self, op: Operation) -> f64 {
        self.operations_ms.get(&op).copied().unwrap_or(0.0)
    }
}

/// One side's processing time T_PD_C or T_PD_S: the sum of that side's per-message times,
/// thesis Eq. 3.2 and 3.3 (mutual) and Eq. 3.5 and 3.6 (server-authenticated).
///
/// Eq. 3.2 as printed ends with `+ T_M_S_CH`, a server term, and Eq. 3.3 lacks it; this
/// function sums each side's own terms, which moves T_M_S_CH from the client to the
/// server total and leaves T_PD (Eq. 3.4) unchanged.
pub fn side_processing_ms(times: &SideTimes) -> f64 {
    Message::ALL.iter().map(|&m| times.message_ms(m)).sum()
}

/// Overall processing time T_PD = T_PD_S + T_PD_C, thesis Eq. 3.4 (mutual) and Eq. 3.7
/// (server-authenticated).
pub fn total_processing_ms(client: &SideTimes, server: &SideTimes) -> f64 {
    side_processing_ms(client) + side_processing_ms(server)
}

/// What one column of a percentage table measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PercentColumn {
    /// 100 minus the headline messages: every other message of the side.
    Others,
    /// A message's share of the side's processing time.
    Message(Message),
    /// An operation's share of the ClientKeyExchange time (not of the total).
    ShareOfKeyExchange(Operation),
}

/// The column layout of one of Tables 4.3-4.10, in published order.
pub fn percent_layout(table: PercentTable) -> Vec<PercentColumn> {
    use Operation::{Ecdh, MasterSecret, RsaDecrypt, RsaEncrypt};
    use PercentColumn::{Others, ShareOfKeyExchange};
    let msg = PercentColumn::Message;
    let (auth, side, family) = table.case();
    let mut cols = vec![Others, msg(Message::ClientKeyExchange)];
    match (family, side) {
        (SuiteFamily::EcdhEcdsa, _) => {
            cols.extend([ShareOfKeyExchange(Ecdh), ShareOfKeyExchange(MasterSecret)])
        }
        (SuiteFamily::Rsa, Side::Client) => cols.extend([
            ShareOfKeyExchange(MasterSecret),
            ShareOfKeyExchange(RsaEncrypt),
        ]),
        (SuiteFamily::Rsa, Side::Server) => cols.extend([
            ShareOfKeyExchange(MasterSecret),
            ShareOfKeyExchange(RsaDecrypt),
        ]),
    }
    match (auth, side) {
        (_, Side::Client) => cols.push(msg(Message::ServerCertificate)),
        (Authentication::Mutual, Side::Server) => cols.push(msg(Message::ClientCertificate)),
        (Authentication::ServerAuth, Side::Server) => {}
    }
    if auth == Authentication::Mutual && family == SuiteFamily::Rsa {
        cols.push(msg(Message::CertificateVerify));
    }
    cols
}

impl PercentColumn {
    /// The header the thesis (and the reference CSV) prints for this column.
    pub fn header(self, auth: Authentication, side: Side) -> String {
        match self {
            PercentColumn::Others => "Others".to_owned(),
            PercentColumn::Message(m) => m.thesis_symbol(auth, side),
            PercentColumn::ShareOfKeyExchange(op) => format!(
                "{}/{}",
                op.thesis_symbol(auth, side),
                Message::ClientKeyExchange.thesis_symbol(auth, side)
            ),
        }
    }
}

/// One computed cell of a percentage table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PercentCell {
    /// Published header (`T_M_S_CCERT`, `T_M_S_MS/T_M_S_CKX`, `Others`).
    pub header: String,
    /// Value in percent.
    pub percent: f64,
}

/// Turns per-message and per-operation times into the published columns of Tables
/// 4.3-4.10: headline messages as % of T_PD of the side, "Others" as the remainder, and
/// the key exchange operations as % of T_x_CKX. Returns `None` when the side's total or
/// the key exchange time is zero (the shares would be undefined).
pub fn percentage_row(table: PercentTable, times: &SideTimes) -> Option<Vec<PercentCell>> {
    let (auth, side, _) = table.case();
    let total = side_processing_ms(times);
    let ckx = times.message_ms(Message::ClientKeyExchange);
    if total <= 0.0 || ckx <= 0.0 {
        return None;
    }
    let layout = percent_layout(table);
    let headline: f64 = layout
        .iter()
        .filter_map(|c| match c {
            PercentColumn::Message(m) => Some(times.message_ms(*m)),
            _ => None,
        })
        .sum();
    Some(
        layout
            .iter()
            .map(|&c| PercentCell {
                header: c.header(auth, side),
                percent: match c {
                    PercentColumn::Others => 100.0 * (total - headline) / total,
                    PercentColumn::Message(m) => 100.0 * times.message_ms(m) / total,
                    PercentColumn::ShareOfKeyExchange(op) => 100.0 * times.operation_ms(op) / ckx,
                },
            })
            .collect(),
    )
}

/// The inverse of [`percentage_row`] for published data: absolute times (ms) of the
/// headline messages and key exchange operations of one case, from the side's total
/// (Table 4.1/4.2) and its percentage row. The "Others" remainder cannot be split from
/// the published data; it is returned separately so the caller decides where it goes.
pub fn times_from_percentages(
    table: PercentTable,
    side_total_ms: f64,
    percents: &[f64],
) -> Option<(SideTimes, f64)> {
    let layout = percent_layout(table);
    if percents.len() != layout.len() {
        return None;
    }
    let mut times = SideTimes::default();
    let mut others_ms = 0.0;
    for (c, p) in layout.iter().zip(percents) {
        match c {
            PercentColumn::Others => others_ms = side_total_ms * p / 100.0,
            PercentColumn::Message(m) => {
                times.messages_ms.insert(*m, side_total_ms * p / 100.0);
            }
            PercentColumn::ShareOfKeyExchange(_) => {}
        }
    }
    let ckx = times.message_ms(Message::ClientKeyExchange);
    for (c, p) in layout.iter().zip(percents) {
        if let PercentColumn::ShareOfKeyExchange(op) = c {
            times.operations_ms.insert(*op, ckx * p / 100.0);
        }
    }
    Some((times, others_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{processing_times, PercentTable};

    #[test]
    fn eq_3_2_to_3_4_sum_the_messages_of_each_side() {
        let mut client = SideTimes::default();
        let mut server = SideTimes::default();
        for (i, m) in Message::ALL.iter().enumerate() {
            client.messages_ms.insert(*m, i as f64);
            server.messages_ms.insert(*m, 10.0 * i as f64);
        }
        // Operations are inside CKX and must not be counted twice.
        client.operations_ms.insert(Operation::Ecdh, 1000.0);
        assert_eq!(side_processing_ms(&client), 66.0);
        assert_eq!(total_processing_ms(&client, &server), 726.0);
        // Eq. 3.2 as printed (T_M_S_CH moved to the client sum) gives the same T_PD.
        let printed_c = side_processing_ms(&client) + server.message_ms(Message::ClientHello);
        let printed_s = side_processing_ms(&server) - server.message_ms(Message::ClientHello);
        assert_eq!(printed_c + printed_s, total_processing_ms(&client, &server));
    }

    #[test]
    fn layouts_reproduce_the_published_headers() {
        for table in PercentTable::ALL {
            let published = table.load().unwrap();
            let (auth, side, _) = table.case();
            let ours: Vec<String> = percent_layout(table)
                .iter()
                .map(|c| c.header(auth, side))
                .collect();
            assert_eq!(ours, published.value_columns, "{}", table.label());
        }
    }

    #[test]
    fn published_rows_are_internally_consistent() {
        for table in PercentTable::ALL {
            let t = table.load().unwrap();
            let layout = percent_layout(table);
            for row in &t.rows {
                let mut headline = 0.0;
                let mut shares = 0.0;
                for (c, v) in layout.iter().zip(&row.values) {
                    match c {
                        PercentColumn::Others | PercentColumn::Message(_) => headline += v,
                        PercentColumn::ShareOfKeyExchange(_) => shares += v,
                    }
                }
                // Others + headline messages = 100 within the 2-decimal rounding.
                assert!(
                    (headline - 100.0).abs() <= 0.021,
                    "{} {:?}: {headline}",
                    table.label(),
                    row.keys
                );
                // Operations never exceed their message; the rest is framing and hashing.
                assert!(
                    (99.5..=100.021).contains(&shares),
                    "{} {:?}: {shares}",
                    table.label(),
                    row.keys
                );
            }
        }
    }

    #[test]
    fn round_trip_through_published_rows() {
        let totals = processing_times().unwrap();
        for table in PercentTable::ALL {
            let (auth, side, _) = table.case();
            for row in &table.load().unwrap().rows {
                let total = totals
                    .iter()
                    .find(|r| {
                        r.authentication == auth
                            && r.ca_cert.eq_ignore_ascii_case(&row.keys[0])
                            && r.leaf_cert == row.keys[1]
                    })
                    .map(|r| {
                        if side == Side::Client {
                            r.client_ms
                        } else {
                            r.server_ms
                        }
                    })
                    .unwrap();
                let (mut times, others) =
                    times_from_percentages(table, total, &row.values).unwrap();
                // Put "Others" on a message outside the headline set and recompute.
                *times
                    .messages_ms
                    .entry(Message::ClientFinished)
                    .or_default() += others;
                let cells = percentage_row(table, &times).unwrap();
                for (cell, published) in cells.iter().zip(&row.values) {
                    assert!(
                        (cell.percent - published).abs() < 0.03,
                        "{} {:?} {}",
                        table.label(),
                        row.keys,
                        cell.header
                    );
                }
                assert!((side_processing_ms(&times) - total).abs() < 0.03 * total / 100.0 + 1e-9);
            }
        }
    }

    #[test]
    fn undefined_shares_are_none() {
        assert!(percentage_row(PercentTable::T4_3, &SideTimes::default()).is_none());
        assert!(times_from_percentages(PercentTable::T4_3, 1.0, &[1.0]).is_none());
    }

    #[test]
    fn queue_jobs_match_eq_3_15_and_3_18() {
        let count = |a, f| Message::ALL.iter().filter(|m| m.is_queue_job(a, f)).count();
        assert_eq!(count(Authentication::Mutual, SuiteFamily::Rsa), 6);
        assert_eq!(count(Authentication::Mutual, SuiteFamily::EcdhEcdsa), 4);
        assert_eq!(count(Authentication::ServerAuth, SuiteFamily::Rsa), 5);
        assert_eq!(count(Authentication::ServerAuth, SuiteFamily::EcdhEcdsa), 5);
        assert_eq!(
            Message::ClientCertificate.thesis_symbol(Authentication::Mutual, Side::Server),
            "T_M_S_CCERT"
        );
    }
}
