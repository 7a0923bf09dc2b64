//! The published tables of the source studies, embedded in the binary.
//!
//! The CSV files live in `data/reference/` of the repository (copied verbatim from the
//! project's reference notes) and are compiled in with `include_str!`, so a report built
//! on a CI machine needs no data directory beside it. Each table has a typed loader; the
//! percentage tables of the thesis (4.3-4.10) and the Herwono throughput tables have a
//! different column set each, so they load into a [`WideTable`] that keeps the published
//! headers (`T_M_C_CKX`, `T_M_S_MS/T_M_S_CKX`, ...) for side-by-side comparison.

use crate::{Authentication, Side, SuiteFamily};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! embedded {
    ($file:literal) => {
        (
            $file,
            include_str!(concat!("../../../data/reference/", $file)),
        )
    };
}

/// A reference table that failed to parse (a bug in the embedded data, named by file).
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceError {
    /// File name inside `data/reference/`.
    pub file: &'static str,
    /// What was wrong, with the CSV record position when known.
    pub message: String,
}

impl fmt::Display for ReferenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "data/reference/{}: {}", self.file, self.message)
    }
}

impl std::error::Error for ReferenceError {}

fn load<T: DeserializeOwned>((file, text): (&'static str, &str)) -> Result<Vec<T>, ReferenceError> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .map_err(|e| ReferenceError {
            file,
            message: e.to_string(),
        })
}

/// Thesis Table 3.2: one public-key parameter specifier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParameterSpecifier {
    /// WTLS parameter specifier code (1 = wtls7_160 ... 22 = RSA3072).
    pub parameter_specifier: u8,
    /// `ECC` or `RSA`.
    pub public_key_type: String,
    /// Name as in the thesis (`nist283k`).
    pub name: String,
    /// Short name used in the result tables (`283k`).
    pub short: String,
    /// Levi-Savas strength level 1-3.
    pub strength_level: u8,
    /// Curve or modulus description.
    pub curve_or_modulus: String,
}

/// Thesis Table 3.3: one CA/leaf certificate combination of a category and group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryGroupCase {
    /// Category 1-3 (strength of the CA key).
    pub category: u8,
    /// Group 1-4 (curve family; 4 = RSA).
    pub group: u8,
    /// Parameter specifier of the CA certificate.
    pub ca_parameter_specifier: u8,
    /// Parameter specifier of the client/server certificate.
    pub leaf_parameter_specifier: u8,
    /// CA certificate short name.
    pub ca_cert: String,
    /// Client/server certificate short name.
    pub leaf_cert: String,
}

/// Thesis Tables 4.1 (mutual) and 4.2 (server-authenticated): overall processing times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessingTimeRow {
    /// Handshake flavour.
    pub authentication: Authentication,
    /// Category 1-3.
    pub category: u8,
    /// Group 1-4.
    pub group: u8,
    /// CA certificate short name.
    pub ca_cert: String,
    /// Client/server certificate short name.
    pub leaf_cert: String,
    /// T_PD_C, Nokia 7650 client (ms).
    pub client_ms: f64,
    /// T_PD_S, Pentium 4 2.4 GHz gateway (ms).
    pub server_ms: f64,
}

impl ProcessingTimeRow {
    /// Key exchange family of this case.
    pub fn family(&self) -> SuiteFamily {
        SuiteFamily::from_cert_short(&self.leaf_cert)
    }
}

/// Thesis Table 4.11: handshake bytes including ACK packets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandshakeBytesRow {
    /// CA certificate short name.
    pub ca_cert: String,
    /// Client/server certificate short name.
    pub leaf_cert: String,
    /// Bytes of a mutually authenticated handshake.
    pub mutual_bytes: u32,
    /// Bytes of a server-authenticated handshake.
    pub server_bytes: u32,
}

impl HandshakeBytesRow {
    /// Bytes for the given flavour.
    pub fn bytes(&self, auth: Authentication) -> u32 {
        match auth {
            Authentication::Mutual => self.mutual_bytes,
            Authentication::ServerAuth => self.server_bytes,
        }
    }
}

/// Thesis Table 4.12: measured transmission time T_TD over GSM CSD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GsmCsdTransmissionRow {
    /// CA certificate short name.
    pub ca_cert: String,
    /// Client/server certificate short name.
    pub leaf_cert: String,
    /// T_TD of the mutual handshake (ms).
    pub mutual_ttd_ms: f64,
    /// T_TD of the server-authenticated handshake (ms).
    pub server_ttd_ms: f64,
}

impl GsmCsdTransmissionRow {
    /// T_TD for the given flavour (ms).
    pub fn ttd_ms(&self, auth: Authentication) -> f64 {
        match auth {
            Authentication::Mutual => self.mutual_ttd_ms,
            Authentication::ServerAuth => self.server_ttd_ms,
        }
    }
}

/// Thesis Tables 4.13 and 4.14: GPRS rates, ping RTT and published traversal per slot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GprsSlotRow {
    /// Time of day (`12PM`, ...).
    pub time_slot: String,
    /// Upload (client to server) rate in kbit/s.
    pub upload_kbps: f64,
    /// Download (server to client) rate in kbit/s.
    pub download_kbps: f64,
    /// Mean ping RTT of 100 64-byte pings (ms), Figures 4.25-4.31.
    pub ping_rtt_avg_ms: f64,
    /// Published mean one-way traversal delay (ms), Table 4.14.
    pub published_traversal_mean_ms: f64,
    /// Published standard deviation of the traversal delay (ms), Table 4.14.
    pub published_traversal_sd_ms: f64,
}

/// Thesis Table 4.15: traversal delay per bearer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BearerTraversalRow {
    /// Bearer name.
    pub bearer: String,
    /// Mean one-way traversal delay (ms).
    pub traversal_mean_ms: f64,
    /// Its standard deviation (ms).
    pub traversal_sd_ms: f64,
    /// Nominal channel rate when the thesis gives one (GSM CSD 9600 bit/s).
    pub nominal_rate_bps: Option<u32>,
    /// Where the row comes from.
    pub notes: String,
}

/// Levi-Savas 2003 Table 1: comparable ECC curves and RSA moduli.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrengthLevelRow {
    /// Level 1-3.
    pub strength_level: u8,
    /// Curves, `;`-separated (see [`StrengthLevelRow::curves`]).
    pub ecc_curves: String,
    /// RSA modulus of the same level.
    pub rsa_modulus_bits: u32,
    /// `yes` if the level's curves are in the WTLS standard.
    pub in_wtls_standard: String,
}

impl StrengthLevelRow {
    /// The curve names of the level (`160P`, `163K`, ...).
    pub fn curves(&self) -> Vec<&str> {
        self.ecc_curves.split(';').map(str::trim).collect()
    }
}

/// Levi-Savas 2003 Figure 6 scenarios.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeviSavasScenarioRow {
    /// `best` or `worst`.
    pub scenario: String,
    /// Server utilisation rho.
    pub server_utilization_rho: f64,
    /// Channel rate (bit/s).
    pub channel_rate_bps: f64,
    /// Queue model as stated.
    pub queue_model: String,
    /// Figure of the paper.
    pub published_figure: String,
}

/// Levi-Savas 2003: numbers quoted in the text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedPointRow {
    /// What the number is.
    pub quantity: String,
    /// Curve it belongs to.
    pub curve: String,
    /// Value (ms).
    pub value_ms: f64,
    /// Platform measured.
    pub platform: String,
}

/// Herwono-Liebhardt 2001: size of one message group (flight), WDP and IP overhead included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageGroupRow {
    /// `aachen_table1` or `icics_table2`.
    pub source: String,
    /// Handshake variant (`RSA_1024`, `ECDH_ECDSA_160_optimized`, ...).
    pub key_exchange: String,
    /// 1-based index of the group in the handshake.
    pub message_group: u8,
    /// Bytes including WDP and IP headers.
    pub bytes_incl_wdp_ip: u32,
}

/// Herwono-Liebhardt 2001 (ICICS): transaction duration increase caused by signText.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignTextRow {
    /// `ECDSA` or `RSA`.
    pub signature: String,
    /// `yes` if the certificate is appended to the signed string.
    pub certificate_in_signed_string: String,
    /// Increase of the transaction duration (s).
    pub transaction_duration_increase_s: f64,
}

/// A table whose leading columns are text keys and whose other columns are numbers,
/// keeping the published column headers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WideTable {
    /// Source file name.
    pub file: String,
    /// Headers of the key columns.
    pub key_columns: Vec<String>,
    /// Headers of the numeric columns, as published.
    pub value_columns: Vec<String>,
    /// The rows.
    pub rows: Vec<WideRow>,
}

/// One row of a [`WideTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WideRow {
    /// Key column values.
    pub keys: Vec<String>,
    /// Numeric values, in the order of [`WideTable::value_columns`].
    pub values: Vec<f64>,
}

impl WideTable {
    fn parse((file, text): (&'static str, &str), key_count: usize) -> Result<Self, ReferenceError> {
        let err = |message: String| ReferenceError { file, message };
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let headers = reader.headers().map_err(|e| err(e.to_string()))?.clone();
        if headers.len() <= key_count {
            return Err(err(format!("expected more than {key_count} columns")));
        }
        let mut rows = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let record = record.map_err(|e| err(e.to_string()))?;
            let keys = record.iter().take(key_count).map(str::to_owned).collect();
            let values = record
                .iter()
                .skip(key_count)
                .enumerate()
                .map(|(c, v)| {
                    v.trim().parse::<f64>().map_err(|_| {
                        err(format!(
                            "row {}: column {} is not a number: {v:?}",
                            i + 1,
                            &headers[key_count + c]
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            rows.push(WideRow { keys, values });
        }
        Ok(WideTable {
            file: file.to_owned(),
            key_columns: headers.iter().take(key_count).map(str::to_owned).collect(),
            value_columns: headers.iter().skip(key_count).map(str::to_owned).collect(),
            rows,
        })
    }

    /// Index of a value column by its published header.
    pub fn column(&self, header: &str) -> Option<usize> {
        self.value_columns.iter().position(|h| h == header)
    }

    /// The row whose key columns equal `keys` (case-insensitive: the thesis once prints
    /// `Rsa3072`).
    pub fn row(&self, keys: &[&str]) -> Option<&WideRow> {
        self.rows.iter().find(|r| {
            r.keys.len() == keys.len()
                && r.keys
                    .iter()
                    .zip(keys)
                    .all(|(a, b)| a.eq_ignore_ascii_case(b))
        })
    }

    /// Value at the row with `keys` and the column `header`.
    pub fn value(&self, keys: &[&str], header: &str) -> Option<f64> {
        let c = self.column(header)?;
        self.row(keys)?.values.get(c).copied()
    }
}

/// The eight percentage tables of thesis section 4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PercentTable {
    /// Table 4.3: mutual, ECDH_ECDSA, client.
    T4_3,
    /// Table 4.4: mutual, RSA, client.
    T4_4,
    /// Table 4.5: mutual, ECDH_ECDSA, server.
    T4_5,
    /// Table 4.6: mutual, RSA, server.
    T4_6,
    /// Table 4.7: server-authenticated, ECDH_ECDSA, client.
    T4_7,
    /// Table 4.8: server-authenticated, RSA, client.
    T4_8,
    /// Table 4.9: server-authenticated, ECDH_ECDSA, server.
    T4_9,
    /// Table 4.10: server-authenticated, RSA, server (the thesis captions it "client";
    /// its columns are `T_S_S_*`, server symbols).
    T4_10,
}

impl PercentTable {
    /// All eight, in thesis order.
    pub const ALL: [PercentTable; 8] = [
        PercentTable::T4_3,
        PercentTable::T4_4,
        PercentTable::T4_5,
        PercentTable::T4_6,
        PercentTable::T4_7,
        PercentTable::T4_8,
        PercentTable::T4_9,
        PercentTable::T4_10,
    ];

    /// The table covering a flavour, side and family.
    pub fn for_case(auth: Authentication, side: Side, family: SuiteFamily) -> PercentTable {
        use Authentication::*;
        use Side::*;
        use SuiteFamily::*;
        match (auth, family, side) {
            (Mutual, EcdhEcdsa, Client) => PercentTable::T4_3,
            (Mutual, Rsa, Client) => PercentTable::T4_4,
            (Mutual, EcdhEcdsa, Server) => PercentTable::T4_5,
            (Mutual, Rsa, Server) => PercentTable::T4_6,
            (ServerAuth, EcdhEcdsa, Client) => PercentTable::T4_7,
            (ServerAuth, Rsa, Client) => PercentTable::T4_8,
            (ServerAuth, EcdhEcdsa, Server) => PercentTable::T4_9,
            (ServerAuth, Rsa, Server) => PercentTable::T4_10,
        }
    }

    /// Flavour, side and family the table covers.
    pub fn case(self) -> (Authentication, Side, SuiteFamily) {
        use Authentication::*;
        use Side::*;
        use SuiteFamily::*;
        match self {
            PercentTable::T4_3 => (Mutual, Client, EcdhEcdsa),
            PercentTable::T4_4 => (Mutual, Client, Rsa),
            PercentTable::T4_5 => (Mutual, Server, EcdhEcdsa),
            PercentTable::T4_6 => (Mutual, Server, Rsa),
            PercentTable::T4_7 => (ServerAuth, Client, EcdhEcdsa),
            PercentTable::T4_8 => (ServerAuth, Client, Rsa),
            PercentTable::T4_9 => (ServerAuth, Server, EcdhEcdsa),
            PercentTable::T4_10 => (ServerAuth, Server, Rsa),
        }
    }

    /// Caption-style label (`Table 4.3`).
    pub fn label(self) -> &'static str {
        match self {
            PercentTable::T4_3 => "Table 4.3",
            PercentTable::T4_4 => "Table 4.4",
            PercentTable::T4_5 => "Table 4.5",
            PercentTable::T4_6 => "Table 4.6",
            PercentTable::T4_7 => "Table 4.7",
            PercentTable::T4_8 => "Table 4.8",
            PercentTable::T4_9 => "Table 4.9",
            PercentTable::T4_10 => "Table 4.10",
        }
    }

    fn source(self) -> (&'static str, &'static str) {
        match self {
            PercentTable::T4_3 => embedded!("bayoglu2004_table4_3_mutual_ecdh_client_pct.csv"),
            PercentTable::T4_4 => embedded!("bayoglu2004_table4_4_mutual_rsa_client_pct.csv"),
            PercentTable::T4_5 => embedded!("bayoglu2004_table4_5_mutual_ecdh_server_pct.csv"),
            PercentTable::T4_6 => embedded!("bayoglu2004_table4_6_mutual_rsa_server_pct.csv"),
            PercentTable::T4_7 => embedded!("bayoglu2004_table4_7_server_auth_ecdh_client_pct.csv"),
            PercentTable::T4_8 => embedded!("bayoglu2004_table4_8_server_auth_rsa_client_pct.csv"),
            PercentTable::T4_9 => embedded!("bayoglu2004_table4_9_server_auth_ecdh_server_pct.csv"),
            PercentTable::T4_10 => {
                embedded!("bayoglu2004_table4_10_server_auth_rsa_server_pct.csv")
            }
        }
    }

    /// Loads the table; keys are `ca_cert`, `leaf_cert`.
    pub fn load(self) -> Result<WideTable, ReferenceError> {
        WideTable::parse(self.source(), 2)
    }
}

/// Thesis Table 3.2.
pub fn parameter_specifiers() -> Result<Vec<ParameterSpecifier>, ReferenceError> {
    load(embedded!("bayoglu2004_table3_2_parameter_specifiers.csv"))
}

/// Thesis Table 3.3.
pub fn categories_groups() -> Result<Vec<CategoryGroupCase>, ReferenceError> {
    load(embedded!("bayoglu2004_table3_3_categories_groups.csv"))
}

/// Thesis Tables 4.1 and 4.2 (48 rows, mutual first).
pub fn processing_times() -> Result<Vec<ProcessingTimeRow>, ReferenceError> {
    load(embedded!("bayoglu2004_table4_1_4_2_processing_times.csv"))
}

/// Thesis Table 4.11 (24 rows).
pub fn handshake_bytes() -> Result<Vec<HandshakeBytesRow>, ReferenceError> {
    load(embedded!("bayoglu2004_table4_11_handshake_bytes.csv"))
}

/// Thesis Table 4.12 (24 rows).
pub fn gsm_csd_transmission() -> Result<Vec<GsmCsdTransmissionRow>, ReferenceError> {
    load(embedded!(
        "bayoglu2004_table4_12_gsm_csd_transmission_ms.csv"
    ))
}

/// Thesis Tables 4.13 and 4.14 (7 time slots).
pub fn gprs_slots() -> Result<Vec<GprsSlotRow>, ReferenceError> {
    load(embedded!("bayoglu2004_table4_13_4_14_gprs_slots.csv"))
}

/// Thesis Table 4.15 (4 bearers).
pub fn bearer_traversal() -> Result<Vec<BearerTraversalRow>, ReferenceError> {
    load(embedded!("bayoglu2004_table4_15_bearer_traversal.csv"))
}

/// Levi-Savas 2003 Table 1.
pub fn levi_savas_strength_levels() -> Result<Vec<StrengthLevelRow>, ReferenceError> {
    load(embedded!("levi_savas2003_table1_strength_levels.csv"))
}

/// Levi-Savas 2003 best/worst scenarios of Figure 6.
pub fn levi_savas_scenarios() -> Result<Vec<LeviSavasScenarioRow>, ReferenceError> {
    load(embedded!("levi_savas2003_scenarios.csv"))
}

/// Levi-Savas 2003 client timings quoted in the text.
pub fn levi_savas_published_points() -> Result<Vec<PublishedPointRow>, ReferenceError> {
    load(embedded!("levi_savas2003_published_points.csv"))
}

/// Herwono-Liebhardt 2001 message-group sizes (Aachen Table 1, ICICS Table 2).
pub fn herwono_message_groups() -> Result<Vec<MessageGroupRow>, ReferenceError> {
    load(embedded!("herwono2001_message_group_bytes.csv"))
}

/// Herwono-Liebhardt 2001 signText impact (ICICS section 3.3).
pub fn herwono_signtext() -> Result<Vec<SignTextRow>, ReferenceError> {
    load(embedded!("herwono2001_icics_signtext_increase_s.csv"))
}

/// Herwono-Liebhardt 2001 Aachen Table 2: record-layer throughput (Mbit/s); key column
/// `keyed_mac`, one value column per cipher.
pub fn herwono_aachen_record_throughput() -> Result<WideTable, ReferenceError> {
    WideTable::parse(
        embedded!("herwono2001_aachen_table2_record_throughput_mbps.csv"),
        1,
    )
}

/// Herwono-Liebhardt 2001 ICICS Table 1: record-layer throughput (Mbit/s); key columns
/// `keyed_mac`, `direction` (`enc`/`dec`), one value column per cipher.
pub fn herwono_icics_record_throughput() -> Result<WideTable, ReferenceError> {
    WideTable::parse(
        embedded!("herwono2001_icics_table1_record_throughput_mbps.csv"),
        2,
    )
}

/// The Herwono message groups of one handshake variant, in order (bytes incl. WDP/IP).
pub fn herwono_groups_of(source: &str, key_exchange: &str) -> Result<Vec<u32>, ReferenceError> {
    let mut rows: Vec<MessageGroupRow> = herwono_message_groups()?
        .into_iter()
        .filter(|r| r.source == source && r.key_exchange == key_exchange)
        .collect();
    rows.sort_by_key(|r| r.message_group);
    Ok(rows.into_iter().map(|r| r.bytes_incl_wdp_ip).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_parses_with_its_published_row_count() {
        assert_eq!(parameter_specifiers().unwrap().len(), 12);
        assert_eq!(categories_groups().unwrap().len(), 24);
        let pt = processing_times().unwrap();
        assert_eq!(pt.len(), 48);
        assert_eq!(
            pt.iter()
                .filter(|r| r.authentication == Authentication::Mutual)
                .count(),
            24
        );
        assert_eq!(handshake_bytes().unwrap().len(), 24);
        assert_eq!(gsm_csd_transmission().unwrap().len(), 24);
        assert_eq!(gprs_slots().unwrap().len(), 7);
        assert_eq!(bearer_traversal().unwrap().len(), 4);
        assert_eq!(levi_savas_strength_levels().unwrap().len(), 3);
        assert_eq!(levi_savas_scenarios().unwrap().len(), 2);
        assert_eq!(levi_savas_published_points().unwrap().len(), 2);
        assert_eq!(herwono_message_groups().unwrap().len(), 35);
        assert_eq!(herwono_signtext().unwrap().len(), 4);
        assert_eq!(herwono_aachen_record_throughput().unwrap().rows.len(), 2);
        assert_eq!(herwono_icics_record_throughput().unwrap().rows.len(), 4);
        let counts: Vec<usize> = PercentTable::ALL
            .iter()
            .map(|t| t.load().unwrap().rows.len())
            .collect();
        assert_eq!(counts, [18, 6, 18, 6, 18, 6, 18, 6]);
    }

    #[test]
    fn typed_values_match_the_thesis_text() {
        let pt = processing_times().unwrap();
        let r = pt
            .iter()
            .find(|r| {
                r.authentication == Authentication::ServerAuth
                    && r.leaf_cert == "rsa1024"
                    && r.ca_cert == "rsa1024"
            })
            .unwrap();
        // Quoted in section 4.1: "1006.78 ms".
        assert_eq!(r.client_ms, 1006.78);
        assert_eq!(r.family(), SuiteFamily::Rsa);
        assert_eq!(bearer_traversal().unwrap()[0].nominal_rate_bps, Some(9600));
        assert_eq!(bearer_traversal().unwrap()[1].nominal_rate_bps, None);
        assert_eq!(
            levi_savas_strength_levels().unwrap()[2].curves(),
            ["256P", "283K", "283R"]
        );
        assert_eq!(
            herwono_groups_of("icics_table2", "RSA_1024").unwrap(),
            [263, 485, 780, 116]
        );
        assert_eq!(
            herwono_groups_of("icics_table2", "ECDH_ECDSA_160_optimized")
                .unwrap()
                .len(),
            3
        );
    }

    #[test]
    fn wide_tables_keep_published_headers() {
        let t = PercentTable::T4_4.load().unwrap();
        assert_eq!(t.key_columns, ["ca_cert", "leaf_cert"]);
        assert_eq!(
            t.value(&["rsa3072", "rsa3072"], "T_M_C_CERTVRFY"),
            Some(88.08)
        );
        assert_eq!(t.value(&["rsa3072", "rsa3072"], "nope"), None);
        let icics = herwono_icics_record_throughput().unwrap();
        assert_eq!(icics.value(&["MD5", "enc"], "AES"), Some(15.10));
        for table in PercentTable::ALL {
            let (a, s, f) = table.case();
            assert_eq!(PercentTable::for_case(a, s, f), table);
        }
    }

    #[test]
    fn malformed_csv_is_an_error_naming_the_file() {
        let e = WideTable::parse(("x.csv", "a,b\nk,notanumber\n"), 1).unwrap_err();
        assert_eq!(e.file, "x.csv");
        assert!(e.to_string().contains("not a number"));
        let e = load::<HandshakeBytesRow>((
            "y.csv",
            "ca_cert,leaf_cert,mutual_bytes,server_bytes\na,b,-1,2\n",
        ))
        .unwrap_err();
        assert!(e.to_string().contains("y.csv"));
    }
}
