//! The public-key parameter specifiers the thesis measured (Bayoglu 2004, Table 3.2) and
//! the 24 CA/leaf combinations built from them (Table 3.3).
//!
//! A [`Specifier`] names one public-key system: a named elliptic curve or an RSA modulus
//! size. A [`Case`] pairs the specifier of the CA certificate with the specifier of the
//! client/server (leaf) certificates; the thesis' categories (security level) and groups
//! (prime / Koblitz / random curves / RSA) come with it.
//!
//! Binary-field curves are sometimes compiled out of a distribution's libcrypto, so the
//! crate probes what the local OpenSSL offers ([`unavailable_specifiers`]) instead of
//! assuming it: the CLI can then say exactly which cases cannot run here and why.

use std::fmt;
use std::sync::OnceLock;

use openssl::ec::EcGroup;
use openssl::nid::Nid;

use crate::msgs::enums::KeyExchangeSuite;

/// One of the 12 public-key parameter specifiers of thesis Table 3.2.
///
/// # Wire ParameterIndex
///
/// Which ParameterIndex a key of this specifier carries depends on the numbering in use
/// ([`crate::params::ParameterNumbering`]): WAP-261's (RSA 0, EC curves by their wtlsN
/// number, explicit parameters for the unnumbered ones) by default, or the thesis' own
/// Table 3.2 numbers ([`Specifier::thesis_number`]) as a compatibility profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Specifier {
    /// WTLS curve 7: 160-bit prime field, the same curve as SECG secp160r2.
    Wtls7_160,
    /// NIST K-163 (sect163k1, also WTLS curve 3).
    Nist163k,
    /// NIST B-163 (sect163r2).
    Nist163r,
    /// RSA with a 1024-bit modulus.
    Rsa1024,
    /// NIST P-224 (secp224r1, parameters of WTLS curve 12).
    Nist224p,
    /// NIST K-233 (sect233k1, also WTLS curve 10).
    Nist233k,
    /// NIST B-233 (sect233r1, also WTLS curve 11).
    Nist233r,
    /// RSA with a 2048-bit modulus.
    Rsa2048,
    /// NIST P-256 (prime256v1 / secp256r1).
    Nist256p,
    /// NIST K-283 (sect283k1).
    Nist283k,
    /// NIST B-283 (sect283r1).
    Nist283r,
    /// RSA with a 3072-bit modulus.
    Rsa3072,
}

impl Specifier {
    /// All 12 specifiers in the order of thesis Table 3.2.
    pub const ALL: [Specifier; 12] = [
        Specifier::Wtls7_160,
        Specifier::Nist163k,
        Specifier::Nist163r,
        Specifier::Rsa1024,
        Specifier::Nist224p,
        Specifier::Nist233k,
        Specifier::Nist233r,
        Specifier::Rsa2048,
        Specifier::Nist256p,
        Specifier::Nist283k,
        Specifier::Nist283r,
        Specifier::Rsa3072,
    ];

    /// The number the thesis gives this specifier in Table 3.2.
    pub fn thesis_number(self) -> u8 {
        match self {
            Specifier::Wtls7_160 => 1,
            Specifier::Nist163k => 2,
            Specifier::Nist163r => 3,
            Specifier::Rsa1024 => 20,
            Specifier::Nist224p => 5,
            Specifier::Nist233k => 6,
            Specifier::Nist233r => 7,
            Specifier::Rsa2048 => 21,
            Specifier::Nist256p => 8,
            Specifier::Nist283k => 9,
            Specifier::Nist283r => 10,
            Specifier::Rsa3072 => 22,
        }
    }

    /// The short name of Table 3.2/3.3 ("160p", "163k", "rsa1024", ...), used in case
    /// names such as "256p/224p".
    pub fn short(self) -> &'static str {
        match self {
            Specifier::Wtls7_160 => "160p",
            Specifier::Nist163k => "163k",
            Specifier::Nist163r => "163r",
            Specifier::Rsa1024 => "rsa1024",
            Specifier::Nist224p => "224p",
            Specifier::Nist233k => "233k",
            Specifier::Nist233r => "233r",
            Specifier::Rsa2048 => "rsa2048",
            Specifier::Nist256p => "256p",
            Specifier::Nist283k => "283k",
            Specifier::Nist283r => "283r",
            Specifier::Rsa3072 => "rsa3072",
        }
    }

    /// Looks a specifier up by its short name or its Table 3.2 name, ignoring case.
    pub fn from_short(name: &str) -> Option<Specifier> {
        Specifier::ALL
            .into_iter()
            .find(|s| s.short().eq_ignore_ascii_case(name) || s.name().eq_ignore_ascii_case(name))
    }

    /// The name column of Table 3.2 ("wtls7_160", "nist163k", ..., "RSA1024").
    pub fn name(self) -> &'static str {
        match self {
            Specifier::Wtls7_160 => "wtls7_160",
            Specifier::Nist163k => "nist163k",
            Specifier::Nist163r => "nist163r",
            Specifier::Rsa1024 => "RSA1024",
            Specifier::Nist224p => "nist224p",
            Specifier::Nist233k => "nist233k",
            Specifier::Nist233r => "nist233r",
            Specifier::Rsa2048 => "RSA2048",
            Specifier::Nist256p => "nist256p",
            Specifier::Nist283k => "nist283k",
            Specifier::Nist283r => "nist283r",
            Specifier::Rsa3072 => "RSA3072",
        }
    }

    /// The strength level of Table 3.2 (1..3); the thesis' category of a case is the
    /// strength level of its CA.
    pub fn strength_level(self) -> u8 {
        match self {
            Specifier::Wtls7_160
            | Specifier::Nist163k
            | Specifier::Nist163r
            | Specifier::Rsa1024 => 1,
            Specifier::Nist224p
            | Specifier::Nist233k
            | Specifier::Nist233r
            | Specifier::Rsa2048 => 2,
            Specifier::Nist256p
            | Specifier::Nist283k
            | Specifier::Nist283r
            | Specifier::Rsa3072 => 3,
        }
    }

    pub fn is_rsa(self) -> bool {
        matches!(
            self,
            Specifier::Rsa1024 | Specifier::Rsa2048 | Specifier::Rsa3072
        )
    }

    /// Whether the curve lies over a binary field GF(2^m) (the K and B curves): these
    /// are the ones a libcrypto built with `no-ec2m` lacks.
    pub fn is_binary_field(self) -> bool {
        matches!(
            self,
            Specifier::Nist163k
                | Specifier::Nist163r
                | Specifier::Nist233k
                | Specifier::Nist233r
                | Specifier::Nist283k
                | Specifier::Nist283r
        )
    }

    /// The RSA modulus length, `None` for curves.
    pub fn rsa_bits(self) -> Option<u32> {
        match self {
            Specifier::Rsa1024 => Some(1024),
            Specifier::Rsa2048 => Some(2048),
            Specifier::Rsa3072 => Some(3072),
            _ => None,
        }
    }

    /// OpenSSL's identifier of the named curve, `None` for RSA.
    pub fn curve_nid(self) -> Option<Nid> {
        match self {
            Specifier::Wtls7_160 => Some(Nid::SECP160R2),
            Specifier::Nist163k => Some(Nid::SECT163K1),
            Specifier::Nist163r => Some(Nid::SECT163R2),
            Specifier::Nist224p => Some(Nid::SECP224R1),
            Specifier::Nist233k => Some(Nid::SECT233K1),
            Specifier::Nist233r => Some(Nid::SECT233R1),
            Specifier::Nist256p => Some(Nid::X9_62_PRIME256V1),
            Specifier::Nist283k => Some(Nid::SECT283K1),
            Specifier::Nist283r => Some(Nid::SECT283R1),
            Specifier::Rsa1024 | Specifier::Rsa2048 | Specifier::Rsa3072 => None,
        }
    }

    /// The degree of the curve's field in bits (m for GF(2^m), the bit length of p for
    /// GF(p)), `None` for RSA.
    pub fn field_bits(self) -> Option<u32> {
        match self {
            Specifier::Wtls7_160 => Some(160),
            Specifier::Nist163k | Specifier::Nist163r => Some(163),
            Specifier::Nist224p => Some(224),
            Specifier::Nist233k | Specifier::Nist233r => Some(233),
            Specifier::Nist256p => Some(256),
            Specifier::Nist283k | Specifier::Nist283r => Some(283),
            Specifier::Rsa1024 | Specifier::Rsa2048 | Specifier::Rsa3072 => None,
        }
    }

    /// Key size in bits as the thesis counts it: field degree or modulus length.
    pub fn key_bits(self) -> u32 {
        self.field_bits()
            .or(self.rsa_bits())
            .expect("every specifier is a curve or an RSA size")
    }

    /// Bytes of one field element: the length of an ECDH shared secret and of each
    /// coordinate in an uncompressed point. `None` for RSA.
    pub fn field_bytes(self) -> Option<usize> {
        self.field_bits().map(|b| b.div_ceil(8) as usize)
    }

    /// Whether the local libcrypto can build this specifier's keys.
    pub fn is_available(self) -> bool {
        self.unavailability().is_none()
    }

    /// Why the local libcrypto cannot serve this specifier, `None` when it can. Probed
    /// once per process.
    pub fn unavailability(self) -> Option<&'static str> {
        static PROBE: OnceLock<Vec<(Specifier, String)>> = OnceLock::new();
        PROBE
            .get_or_init(probe_libcrypto)
            .iter()
            .find(|(s, _)| *s == self)
            .map(|(_, reason)| reason.as_str())
    }
}

impl fmt::Display for Specifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short())
    }
}

fn probe_libcrypto() -> Vec<(Specifier, String)> {
    Specifier::ALL
        .into_iter()
        .filter_map(|spec| {
            let nid = spec.curve_nid()?;
            match EcGroup::from_curve_name(nid) {
                Ok(_) => None,
                Err(err) => Some((
                    spec,
                    format!(
                        "{} ({}) is not offered by the local libcrypto ({}): {}",
                        spec.short(),
                        spec.name(),
                        openssl::version::version(),
                        err.errors()
                            .first()
                            .and_then(|e| e.reason())
                            .unwrap_or("curve unknown")
                    ),
                )),
            }
        })
        .collect()
}

/// Every specifier the local libcrypto cannot serve, with the reason, so the CLI can name
/// the cases that will be skipped (typically all binary-field curves when a distribution
/// builds OpenSSL without them). RSA is always available.
pub fn unavailable_specifiers() -> Vec<(Specifier, String)> {
    Specifier::ALL
        .into_iter()
        .filter_map(|s| s.unavailability().map(|r| (s, r.to_string())))
        .collect()
}

/// One CA/leaf combination of thesis Table 3.3: the CA certificate's specifier and the
/// specifier of the client and server certificates it signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Case {
    pub ca: Specifier,
    pub leaf: Specifier,
    /// Security category (1..3) = strength level of the CA.
    pub category: u8,
    /// Group within the category: 1 prime curves, 2 Koblitz, 3 random binary, 4 RSA.
    pub group: u8,
}

/// The error of [`Case::parse`]: names what was given and every valid case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown case {given:?}: expected CA/leaf, one of {}",
    valid_case_names()
)]
pub struct UnknownCase {
    pub given: String,
}

fn valid_case_names() -> String {
    Case::ALL
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Case {
    const fn new(ca: Specifier, leaf: Specifier, category: u8, group: u8) -> Case {
        Case {
            ca,
            leaf,
            category,
            group,
        }
    }

    /// The 24 combinations in the order of thesis Table 3.3.
    pub const ALL: [Case; 24] = {
        use Specifier::*;
        [
            Case::new(Wtls7_160, Wtls7_160, 1, 1),
            Case::new(Nist163k, Nist163k, 1, 2),
            Case::new(Nist163r, Nist163r, 1, 3),
            Case::new(Rsa1024, Rsa1024, 1, 4),
            Case::new(Nist224p, Wtls7_160, 2, 1),
            Case::new(Nist224p, Nist224p, 2, 1),
            Case::new(Nist233k, Nist163k, 2, 2),
            Case::new(Nist233k, Nist233k, 2, 2),
            Case::new(Nist233r, Nist163r, 2, 3),
            Case::new(Nist233r, Nist233r, 2, 3),
            Case::new(Rsa2048, Rsa1024, 2, 4),
            Case::new(Rsa2048, Rsa2048, 2, 4),
            Case::new(Nist256p, Wtls7_160, 3, 1),
            Case::new(Nist256p, Nist224p, 3, 1),
            Case::new(Nist256p, Nist256p, 3, 1),
            Case::new(Nist283k, Nist163k, 3, 2),
            Case::new(Nist283k, Nist233k, 3, 2),
            Case::new(Nist283k, Nist283k, 3, 2),
            Case::new(Nist283r, Nist163r, 3, 3),
            Case::new(Nist283r, Nist233r, 3, 3),
            Case::new(Nist283r, Nist283r, 3, 3),
            Case::new(Rsa3072, Rsa1024, 3, 4),
            Case::new(Rsa3072, Rsa2048, 3, 4),
            Case::new(Rsa3072, Rsa3072, 3, 4),
        ]
    };

    /// Parses "CA/leaf" in short names, e.g. "256p/224p" or "rsa3072/rsa1024".
    pub fn parse(text: &str) -> Result<Case, UnknownCase> {
        let unknown = || UnknownCase {
            given: text.to_string(),
        };
        let (ca, leaf) = text.trim().split_once('/').ok_or_else(unknown)?;
        let ca = Specifier::from_short(ca.trim()).ok_or_else(unknown)?;
        let leaf = Specifier::from_short(leaf.trim()).ok_or_else(unknown)?;
        Case::find(ca, leaf).ok_or_else(unknown)
    }

    /// The Table 3.3 row with this CA and leaf specifier, if there is one.
    pub fn find(ca: Specifier, leaf: Specifier) -> Option<Case> {
        Case::ALL.into_iter().find(|c| c.ca == ca && c.leaf == leaf)
    }

    /// The key exchange suite the case runs: RSA for RSA leaves, ECDH_ECDSA (server's
    /// fixed ECDH key certified by an ECDSA CA) for curve leaves.
    pub fn key_exchange_suite(&self) -> KeyExchangeSuite {
        if self.leaf.is_rsa() {
            KeyExchangeSuite::Rsa
        } else {
            KeyExchangeSuite::EcdhEcdsa
        }
    }

    /// Whether the local libcrypto supports both the CA's and the leaf's specifier.
    pub fn is_available(&self) -> bool {
        self.ca.is_available() && self.leaf.is_available()
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.ca.short(), self.leaf.short())
    }
}

impl std::str::FromStr for Case {
    type Err = UnknownCase;
    fn from_str(s: &str) -> Result<Case, UnknownCase> {
        Case::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of reference/bayoglu2004_table3_2_parameter_specifiers.csv
    /// (number, type, name, short, strength level).
    const TABLE_3_2: &str = "\
1,ECC,wtls7_160,160p,1
2,ECC,nist163k,163k,1
3,ECC,nist163r,163r,1
20,RSA,RSA1024,rsa1024,1
5,ECC,nist224p,224p,2
6,ECC,nist233k,233k,2
7,ECC,nist233r,233r,2
21,RSA,RSA2048,rsa2048,2
8,ECC,nist256p,256p,3
9,ECC,nist283k,283k,3
10,ECC,nist283r,283r,3
22,RSA,RSA3072,rsa3072,3";

    /// Rows of reference/bayoglu2004_table3_3_categories_groups.csv
    /// (category, group, CA number, leaf number).
    const TABLE_3_3: &str = "\
1,1,1,1
1,2,2,2
1,3,3,3
1,4,20,20
2,1,5,1
2,1,5,5
2,2,6,2
2,2,6,6
2,3,7,3
2,3,7,7
2,4,21,20
2,4,21,21
3,1,8,1
3,1,8,5
3,1,8,8
3,2,9,2
3,2,9,6
3,2,9,9
3,3,10,3
3,3,10,7
3,3,10,10
3,4,22,20
3,4,22,21
3,4,22,22";

    #[test]
    fn specifiers_match_table_3_2() {
        for (row, spec) in TABLE_3_2.lines().zip(Specifier::ALL) {
            let f: Vec<&str> = row.split(',').collect();
            assert_eq!(spec.thesis_number().to_string(), f[0]);
            assert_eq!(spec.is_rsa(), f[1] == "RSA");
            assert_eq!(spec.name(), f[2]);
            assert_eq!(spec.short(), f[3]);
            assert_eq!(spec.strength_level().to_string(), f[4]);
            assert_eq!(spec.is_rsa(), spec.curve_nid().is_none());
            assert_eq!(spec.is_rsa(), spec.rsa_bits().is_some());
        }
    }

    #[test]
    fn cases_match_table_3_3() {
        for (row, case) in TABLE_3_3.lines().zip(Case::ALL) {
            let f: Vec<u8> = row.split(',').map(|x| x.parse().unwrap()).collect();
            assert_eq!(case.category, f[0]);
            assert_eq!(case.group, f[1]);
            assert_eq!(case.ca.thesis_number(), f[2]);
            assert_eq!(case.leaf.thesis_number(), f[3]);
            assert_eq!(case.category, case.ca.strength_level());
            assert_eq!(case.ca.is_rsa(), case.leaf.is_rsa());
        }
    }

    #[test]
    fn thesis_numbers_are_unique() {
        let mut numbers: Vec<u8> = Specifier::ALL.iter().map(|s| s.thesis_number()).collect();
        numbers.sort();
        numbers.dedup();
        assert_eq!(numbers.len(), Specifier::ALL.len());
        assert!(!numbers.contains(&0) && !numbers.contains(&255));
    }

    #[test]
    fn names_parse_back() {
        for spec in Specifier::ALL {
            assert_eq!(Specifier::from_short(spec.short()), Some(spec));
            assert_eq!(Specifier::from_short(spec.name()), Some(spec));
        }
        assert_eq!(Specifier::from_short("512p"), None);
        for case in Case::ALL {
            assert_eq!(Case::parse(&case.to_string()), Ok(case));
        }
        assert_eq!(
            "256p/224p".parse::<Case>().unwrap().to_string(),
            "256p/224p"
        );
    }

    #[test]
    fn parse_errors_list_the_valid_cases() {
        for bad in ["224p/256p", "256p", "x/y", "", "rsa1024/160p"] {
            let err = Case::parse(bad).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains("283r/233r") && msg.contains("rsa3072/rsa1024"));
            assert_eq!(err.given, bad);
        }
    }

    #[test]
    fn suites_follow_the_leaf() {
        assert_eq!(
            Case::parse("rsa3072/rsa1024").unwrap().key_exchange_suite(),
            KeyExchangeSuite::Rsa
        );
        assert_eq!(
            Case::parse("283k/163k").unwrap().key_exchange_suite(),
            KeyExchangeSuite::EcdhEcdsa
        );
    }

    #[test]
    fn field_sizes_agree_with_openssl() {
        for spec in Specifier::ALL {
            if let Some(nid) = spec.curve_nid() {
                if let Ok(group) = EcGroup::from_curve_name(nid) {
                    assert_eq!(Some(group.degree()), spec.field_bits(), "{spec}");
                }
            }
            assert_eq!(spec.field_bits().is_some(), spec.field_bytes().is_some());
        }
        assert_eq!(Specifier::Nist163k.field_bytes(), Some(21));
        assert_eq!(Specifier::Rsa2048.key_bits(), 2048);
    }

    #[test]
    fn availability_probe_is_consistent() {
        let missing = unavailable_specifiers();
        for spec in Specifier::ALL {
            let listed = missing.iter().any(|(s, _)| *s == spec);
            assert_eq!(listed, !spec.is_available());
            if spec.is_rsa() || matches!(spec, Specifier::Nist224p | Specifier::Nist256p) {
                // RSA and the NIST prime curves are in every OpenSSL build (even the
                // ones that drop binary and small SECG curves).
                assert!(spec.is_available(), "{spec}");
            }
        }
        for case in Case::ALL {
            assert_eq!(
                case.is_available(),
                case.ca.is_available() && case.leaf.is_available()
            );
        }
    }
}
