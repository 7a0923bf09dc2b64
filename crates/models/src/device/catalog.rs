//! The profile catalogue: the published benchmark numbers of `data/devices/` (each with
//! its source), the ARM7TDMI of Levi-Savas and the fitted Nokia 7650, completed by the
//! scaling rule in dependency order.

use super::executed::{executed_costs, executed_operations};
use super::nokia::fit_nokia7650;
use super::scaling::complete;
use super::{Cost, DeviceProfile, KeyFamily, KeyType, Operation, Primitive, Source};
use crate::reference::{levi_savas_published_points, ReferenceError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// The two files of a device catalogue, each as (path for errors, text).
#[derive(Debug, Clone)]
pub struct CatalogueFiles {
    /// `profiles.csv`: one row per device.
    pub profiles: (String, String),
    /// `operations.csv`: the published cost of each operation.
    pub operations: (String, String),
}

impl CatalogueFiles {
    /// The shipped catalogue, `data/devices/`, compiled in.
    pub fn shipped() -> CatalogueFiles {
        CatalogueFiles {
            profiles: (
                "data/devices/profiles.csv".into(),
                include_str!("../../../../data/devices/profiles.csv").into(),
            ),
            operations: (
                "data/devices/operations.csv".into(),
                include_str!("../../../../data/devices/operations.csv").into(),
            ),
        }
    }

    /// `profiles.csv` and `operations.csv` of a directory laid out like `data/devices/`.
    pub fn read(dir: &std::path::Path) -> Result<CatalogueFiles, CatalogError> {
        let read = |name: &str| {
            let path = dir.join(name);
            let file = path.display().to_string();
            std::fs::read_to_string(&path)
                .map(|text| (file.clone(), text))
                .map_err(|e| CatalogError {
                    file,
                    message: e.to_string(),
                })
        };
        Ok(CatalogueFiles {
            profiles: read("profiles.csv")?,
            operations: read("operations.csv")?,
        })
    }
}

/// The catalogue failed to build (a bug in the embedded data, named by file and row).
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogError {
    /// File (inside `data/devices/` or `data/reference/`).
    pub file: String,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for CatalogError {}

impl From<ReferenceError> for CatalogError {
    fn from(e: ReferenceError) -> Self {
        CatalogError {
            file: format!("data/reference/{}", e.file),
            message: e.message,
        }
    }
}

/// A row of `data/devices/profiles.csv`.
#[derive(Debug, Clone, Deserialize)]
struct ProfileRow {
    device: String,
    description: String,
    #[allow(dead_code)]
    clock_mhz: f64,
    scaling_references: String,
    source: String,
    /// `all`, or `;`-separated families (`prime`, `koblitz`, `random`, `rsa`) and key
    /// types (`256p`) the device's library offers.
    offers: String,
}

/// A row of `data/devices/operations.csv`.
#[derive(Debug, Clone, Deserialize)]
struct OperationRow {
    device: String,
    primitive: String,
    key: String,
    /// Empty where no number is published ("not available"; post-quantum rows only).
    ms: Option<f64>,
    source: String,
}

fn rows<T: for<'de> Deserialize<'de>>(
    (file, text): &(String, String),
) -> Result<Vec<T>, CatalogError> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .map_err(|e| CatalogError {
            file: file.clone(),
            message: e.to_string(),
        })
}

/// The published modern devices of the shipped catalogue, uncompleted, with their
/// scaling references.
pub fn published_profiles() -> Result<Vec<(DeviceProfile, Vec<String>)>, CatalogError> {
    published_profiles_of(&CatalogueFiles::shipped())
}

/// The devices of a catalogue, uncompleted, with their scaling references.
fn published_profiles_of(
    files: &CatalogueFiles,
) -> Result<Vec<(DeviceProfile, Vec<String>)>, CatalogError> {
    let ops: Vec<OperationRow> = rows(&files.operations)?;
    let executed = executed_costs()?;
    let mut out: Vec<(DeviceProfile, Vec<String>)> = Vec::new();
    for p in rows::<ProfileRow>(&files.profiles)? {
        if out.iter().any(|(d, _)| d.name == p.device) || p.device.trim().is_empty() {
            return Err(CatalogError {
                file: files.profiles.0.clone(),
                message: format!("device {:?} is empty or named twice", p.device),
            });
        }
        let mut operations = executed_operations(&executed, &p.device);
        // post-quantum rows are listed beside the profile (`published_pq`)
        let wtls_rows = ops
            .iter()
            .filter(|o| o.device == p.device && !is_post_quantum(&o.primitive));
        for o in wtls_rows {
            let bad = |what: &str| CatalogError {
                file: files.operations.0.clone(),
                message: format!("{}: {what} {:?}/{:?}", o.device, o.primitive, o.key),
            };
            let primitive =
                Primitive::parse(&o.primitive).ok_or_else(|| bad("unknown primitive"))?;
            let key = KeyType::parse(&o.key).ok_or_else(|| bad("unknown key"))?;
            let ms = o.ms.filter(|ms| ms.is_finite() && *ms > 0.0);
            let Some(ms) = ms.filter(|_| primitive.applies_to(key.family)) else {
                return Err(bad("primitive does not apply or cost is not positive"));
            };
            operations.insert(
                Operation { primitive, key },
                Cost {
                    ms,
                    source: Source::Published {
                        reference: o.source.clone(),
                    },
                },
            );
        }
        let refs = p
            .scaling_references
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let offers = parse_offers(&p.offers).ok_or_else(|| CatalogError {
            file: files.profiles.0.clone(),
            message: format!("{}: unknown offers {:?}", p.device, p.offers),
        })?;
        out.push((
            DeviceProfile {
                offers,
                name: p.device,
                description: p.description,
                source: p.source,
                operations,
                per_message: None,
                p256_stand_ins: true,
                ephemeral_key_precomputed: None,
            },
            refs,
        ));
    }
    Ok(out)
}

/// True for a row of a post-quantum primitive (`kem_encaps`, `sig_verify`, ...).
fn is_post_quantum(primitive: &str) -> bool {
    super::executed::PqPrimitive::parse(primitive).is_some()
}

/// The key types of an `offers` cell: empty for `all`.
fn parse_offers(cell: &str) -> Option<Vec<KeyType>> {
    let mut keys = Vec::new();
    for item in cell.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let family = match item {
            "all" => return Some(Vec::new()),
            "prime" => Some(KeyFamily::PrimeCurve),
            "koblitz" => Some(KeyFamily::KoblitzCurve),
            "random" => Some(KeyFamily::RandomBinaryCurve),
            "rsa" => Some(KeyFamily::Rsa),
            _ => None,
        };
        match family {
            Some(f) => keys.extend(KeyType::wtls_keys().into_iter().filter(|k| k.family == f)),
            None => keys.push(KeyType::parse(item)?),
        }
    }
    (!keys.is_empty()).then_some(keys)
}

/// The ARM7TDMI at 25 MHz: Levi-Savas quote the client's public-key time of their
/// server-authenticated protocol (certificate verification + ECDH, section 3.1) for two
/// curves. The split between the two operations is not published; it is taken from the
/// Nokia 7650 fit on the same curve (the thesis' crypto primitives were written with
/// Savas' advice, so the two implementations share their structure).
fn arm7(nokia: &DeviceProfile) -> Result<DeviceProfile, CatalogError> {
    let mut operations = BTreeMap::new();
    for point in levi_savas_published_points()? {
        if point.quantity != "client_pk_processing_time" {
            continue;
        }
        let key = KeyType::parse(&point.curve).ok_or_else(|| CatalogError {
            file: "data/reference/levi_savas2003_published_points.csv".into(),
            message: format!("unknown curve {:?}", point.curve),
        })?;
        let (verify, ecdh) = (Operation::verify(key), Operation::ecdh(key));
        let (Ok((v, _)), Ok((e, _))) = (nokia.op_ms(verify), nokia.op_ms(ecdh)) else {
            continue;
        };
        for (op, share) in [(verify, v / (v + e)), (ecdh, e / (v + e))] {
            operations.insert(
                op,
                Cost {
                    ms: point.value_ms * share,
                    source: Source::Fitted {
                        reference: format!(
                            "Levi-Savas 2003 section 4.1: client public-key time {} ms for {} ({}), x the Nokia 7650 fit's share {:.3} of {} in verify + ECDH",
                            point.value_ms, point.curve, point.platform, share, op.primitive.name()
                        ),
                    },
                },
            );
        }
    }
    Ok(DeviceProfile {
        name: "arm7tdmi-25mhz".into(),
        description: "ARM7TDMI at 25 MHz, Levi-Savas' client".into(),
        source: "Levi-Savas 2003 section 4.1 (570 ms 256P, 376 ms 224P)".into(),
        operations,
        // Levi-Savas section 4: ECDSA and ECDH on all nine curves, RSA 1024-3072.
        offers: Vec::new(),
        per_message: None,
        // Our reading, not their statement: section 3.1 says only that protocol 1's client
        // sends its ECDH parameters, and section 4.1 gives the client's totals without
        // naming the protocol.
        p256_stand_ins: true,
        ephemeral_key_precomputed: Some(Source::Fitted {
            reference: "our reading of Levi-Savas 2003 section 4.1's client totals (570 ms at 256P, 376 ms at 224P, the protocol not named): certificate verification plus one ECDH, no key generation; section 3.1 says only that protocol 1's client sends its ECDH parameters".into(),
        }),
    })
}

/// Every profile of the shipped catalogue, completed; built and validated on first use
/// only.
pub fn all_profiles() -> Result<Vec<DeviceProfile>, CatalogError> {
    static SHIPPED: std::sync::OnceLock<Result<Vec<DeviceProfile>, CatalogError>> =
        std::sync::OnceLock::new();
    SHIPPED
        .get_or_init(|| load_profiles(&CatalogueFiles::shipped()))
        .clone()
}

/// Every profile of a catalogue, completed: the Nokia first (it is every other profile's
/// reference for the binary curves), then each profile once its references are done.
/// Every operation of a profile is checked as it is read; an operation operations.csv
/// names for a device profiles.csv lacks is an error.
pub fn load_profiles(files: &CatalogueFiles) -> Result<Vec<DeviceProfile>, CatalogError> {
    let published = published_profiles_of(files)?;
    let ops: Vec<OperationRow> = rows(&files.operations)?;
    if let Some(o) = ops
        .iter()
        .find(|o| !published.iter().any(|(d, _)| d.name == o.device))
    {
        return Err(CatalogError {
            file: files.operations.0.clone(),
            message: format!("device {:?} is not in {}", o.device, files.profiles.0),
        });
    }
    let nokia = fit_nokia7650()?.profile;
    let mut done: Vec<DeviceProfile> = vec![nokia.clone()];
    let mut pending: Vec<(DeviceProfile, Vec<String>)> = published
        .into_iter()
        .filter(|(p, _)| p.name != nokia.name)
        .map(|(p, refs)| {
            if p.name == "arm7tdmi-25mhz" {
                arm7(&nokia).map(|a| (a, refs))
            } else {
                Ok((p, refs))
            }
        })
        .collect::<Result<_, _>>()?;
    while !pending.is_empty() {
        let ready = pending
            .iter()
            .position(|(_, refs)| refs.iter().all(|r| done.iter().any(|d| &d.name == r)))
            .ok_or_else(|| CatalogError {
                file: files.profiles.0.clone(),
                message: "scaling_references name an unknown device or form a cycle".into(),
            })?;
        let (mut p, refs) = pending.remove(ready);
        let references: Vec<&DeviceProfile> = refs
            .iter()
            .filter_map(|r| done.iter().find(|d| &d.name == r))
            .collect();
        complete(&mut p, &references);
        done.push(p);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::WtlsCase;
    use crate::Authentication;

    #[test]
    fn every_catalogue_profile_prices_every_thesis_case() {
        let profiles = all_profiles().unwrap();
        assert!(profiles.len() >= 6);
        for p in &profiles {
            for ca in KeyType::wtls_keys() {
                for auth in Authentication::ALL {
                    let case = WtlsCase { ca, leaf: ca, auth };
                    assert!(p.client_processing_ms(case).is_ok(), "{} {case}", p.name);
                }
            }
            assert!(
                p.op_ms(Operation::ecdh(KeyType::P256)).is_ok(),
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn arm7_reproduces_the_quoted_totals() {
        let profiles = all_profiles().unwrap();
        let arm7 = profiles
            .iter()
            .find(|p| p.name == "arm7tdmi-25mhz")
            .unwrap();
        for (curve, total) in [("256p", 570.0), ("224p", 376.0)] {
            let k = KeyType::parse(curve).unwrap();
            let sum = arm7.op_ms(Operation::verify(k)).unwrap().0
                + arm7.op_ms(Operation::ecdh(k)).unwrap().0;
            assert!((sum - total).abs() < 1e-9);
        }
    }

    #[test]
    fn offers_cells_parse_families_keys_and_all() {
        assert_eq!(parse_offers("all"), Some(Vec::new()));
        assert_eq!(parse_offers("256p"), Some(vec![KeyType::P256]));
        assert_eq!(parse_offers("prime;rsa").map(|k| k.len()), Some(6));
        assert_eq!(parse_offers("bogus"), None);
        assert_eq!(parse_offers(""), None);
    }

    #[test]
    fn published_numbers_keep_their_sources() {
        for (p, _) in published_profiles().unwrap() {
            for c in p.operations.values() {
                assert!(matches!(c.source.kind(), "published" | "executed"));
                assert!(!c.source.detail().is_empty());
            }
        }
    }

    /// A catalogue directory like `data/devices/` with one more device, `fixture-m33`.
    pub(crate) fn fixture_with_a_new_device() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let shipped = CatalogueFiles::shipped();
        std::fs::write(
            dir.path().join("profiles.csv"),
            format!(
                "{}fixture-m33,\"a fixture Cortex-M33\",100,nokia7650,\"published: a fixture\",256p\n",
                shipped.profiles.1
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("operations.csv"),
            format!(
                "{}fixture-m33,ecdh,256p,12.5,\"a fixture\",\nfixture-m33,ecdsa_verify,256p,14,\"a fixture\",\n",
                shipped.operations.1
            ),
        )
        .unwrap();
        dir
    }

    #[test]
    fn a_new_row_in_a_catalogue_directory_is_a_new_profile() {
        let dir = fixture_with_a_new_device();
        let loaded = load_profiles(&CatalogueFiles::read(dir.path()).unwrap()).unwrap();
        let shipped = all_profiles().unwrap();
        assert_eq!(loaded.len(), shipped.len() + 1);
        let m33 = loaded.iter().find(|p| p.name == "fixture-m33").unwrap();
        assert_eq!(m33.op_ms(Operation::ecdh(KeyType::P256)).unwrap().0, 12.5);
        assert_eq!(m33.offers, vec![KeyType::P256]);
    }

    #[test]
    fn a_bad_catalogue_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = CatalogueFiles::read(dir.path()).unwrap_err();
        assert!(missing.file.ends_with("profiles.csv"), "{missing}");
        let mut files = CatalogueFiles::shipped();
        files.operations.1.push_str("nobody,ecdh,256p,1,\"x\",\n");
        let e = load_profiles(&files).unwrap_err();
        assert!(e.to_string().contains("\"nobody\" is not in"), "{e}");
        let mut files = CatalogueFiles::shipped();
        files.profiles.1.push_str("esp32,twice,1,,\"x\",all\n");
        let e = load_profiles(&files).unwrap_err();
        assert!(e.to_string().contains("named twice"), "{e}");
    }
}
