//! The scaling rule for operations a profile lacks, and its error on the known ones.
//!
//! 1. **Size, within a family.** Schoolbook multi-precision arithmetic costs the square of
//!    the operand size per multiplication. An RSA public operation (fixed small exponent)
//!    does a constant number of modular multiplications, so it grows with bits²; a
//!    private operation does one per exponent bit, bits³. An EC scalar multiplication does
//!    a number of field multiplications proportional to the scalar's bit length, each
//!    costing field bits², so bits³. The rule is applied only within one family (prime
//!    curves, Koblitz curves, random binary curves, RSA): binary-field arithmetic scales
//!    differently in software, and Koblitz curves replace doublings by Frobenius maps.
//! 2. **Ratio from a reference profile.** When a device has no number of a family or a
//!    primitive at all (a P-256-only library has no binary curves and no RSA), the ratio
//!    between the wanted operation and one it has is taken from a reference device that
//!    has both (named in the profile catalogue), anchored on the device's own number.
//!
//! Every scaled number records the rule and its anchor in its [`Source`].

use super::{Cost, DeviceProfile, Operation, Primitive, Source};
use serde::Serialize;

/// The exponent of the size rule for a primitive on a family.
pub fn bits_exponent(primitive: Primitive) -> f64 {
    match primitive {
        Primitive::RsaPublic => 2.0,
        _ => 3.0,
    }
}

/// Rule 1: the cost of `primitive` at `to_bits` from its cost at `from_bits`.
pub fn scale_bits(primitive: Primitive, ms: f64, from_bits: u16, to_bits: u16) -> f64 {
    ms * (f64::from(to_bits) / f64::from(from_bits)).powf(bits_exponent(primitive))
}

/// The nearest-sized operation of the same primitive and family in `profile`, preferring
/// direct (unscaled) numbers.
fn nearest_same_family(
    profile: &DeviceProfile,
    op: Operation,
    direct_only: bool,
) -> Option<(Operation, &Cost)> {
    profile
        .operations
        .iter()
        .filter(|(o, c)| {
            o.primitive == op.primitive
                && o.key.family == op.key.family
                && o.key.bits != op.key.bits
                && (!direct_only || c.source.is_direct())
        })
        .min_by_key(|(o, c)| (!c.source.is_direct(), o.key.bits.abs_diff(op.key.bits)))
        .map(|(o, c)| (*o, c))
}

/// Rule 1 applied to `op` from the nearest size of the same family in `profile`.
pub fn from_nearest_size(profile: &DeviceProfile, op: Operation) -> Option<Cost> {
    let (anchor, cost) = nearest_same_family(profile, op, false)?;
    Some(Cost {
        ms: scale_bits(op.primitive, cost.ms, anchor.key.bits, op.key.bits),
        source: Source::Scaled {
            rule: format!(
                "{} x ({}/{})^{} from {} {:.4} ms ({})",
                op.label(),
                op.key.bits,
                anchor.key.bits,
                bits_exponent(op.primitive),
                anchor.label(),
                cost.ms,
                cost.source.kind()
            ),
        },
    })
}

/// Rule 2: `op` from one of the device's own direct numbers times a reference's ratio.
fn from_reference(
    profile: &DeviceProfile,
    op: Operation,
    reference: &DeviceProfile,
) -> Option<Cost> {
    let target_ref = reference.operations.get(&op)?;
    // Anchors: the device's direct numbers the reference also prices. Prefer the same
    // primitive, then the same family, then the nearest size.
    let (anchor, own) = profile
        .operations
        .iter()
        .filter(|(o, c)| c.source.is_direct() && reference.operations.contains_key(o))
        .min_by_key(|(o, _)| {
            (
                o.primitive != op.primitive,
                o.key.family != op.key.family,
                o.key.bits.abs_diff(op.key.bits),
            )
        })?;
    let anchor_ref = reference.operations.get(anchor)?;
    if anchor_ref.ms <= 0.0 {
        return None;
    }
    Some(Cost {
        ms: own.ms * target_ref.ms / anchor_ref.ms,
        source: Source::Borrowed {
            rule: format!(
                "{} {:.4} ms ({}) x {}'s ratio {} / {} = {:.4}",
                anchor.label(),
                own.ms,
                own.source.kind(),
                reference.name,
                op.label(),
                anchor.label(),
                target_ref.ms / anchor_ref.ms
            ),
        },
    })
}

/// Rule 2 for a curve family the device's library does not have, keyed on another
/// primitive: the reference's ratio between the two curves for a primitive both price
/// (e.g. Koblitz key generation from P-256 key generation and the Nokia's ECDH ratio
/// 163k : 256p).
fn from_reference_curve_ratio(
    profile: &DeviceProfile,
    op: Operation,
    reference: &DeviceProfile,
) -> Option<Cost> {
    let (anchor, own) = profile
        .operations
        .iter()
        .filter(|(o, c)| c.source.is_direct() && o.primitive == op.primitive && o.key.is_ec())
        .min_by_key(|(o, _)| o.key.bits.abs_diff(op.key.bits))?;
    for q in Primitive::ALL {
        let to = reference.operations.get(&Operation {
            primitive: q,
            key: op.key,
        });
        let from = reference.operations.get(&Operation {
            primitive: q,
            key: anchor.key,
        });
        if let (Some(to), Some(from)) = (to, from) {
            if from.ms > 0.0 {
                return Some(Cost {
                    ms: own.ms * to.ms / from.ms,
                    source: Source::Borrowed {
                        rule: format!(
                            "{} {:.4} ms ({}) x {}'s {} ratio {} / {} = {:.4}",
                            anchor.label(),
                            own.ms,
                            own.source.kind(),
                            reference.name,
                            q.name(),
                            op.key,
                            anchor.key,
                            to.ms / from.ms
                        ),
                    },
                });
            }
        }
    }
    None
}

/// Fills every WTLS operation the profile lacks, by rule 1 from its own direct numbers
/// when it has the family, else by rule 2 from the references in order. Operations no
/// rule reaches stay absent.
pub fn complete(profile: &mut DeviceProfile, references: &[&DeviceProfile]) {
    let mut added = Vec::new();
    for op in Operation::wtls_set() {
        if profile.operations.contains_key(&op) {
            continue;
        }
        let scaled = nearest_same_family(profile, op, true)
            .and_then(|_| from_nearest_size(profile, op))
            .or_else(|| {
                references
                    .iter()
                    .find_map(|r| from_reference(profile, op, r))
            })
            .or_else(|| {
                references
                    .iter()
                    .find_map(|r| from_reference_curve_ratio(profile, op, r))
            });
        if let Some(c) = scaled {
            added.push((op, c));
        }
    }
    profile.operations.extend(added);
}

/// One check of rule 1 on a known number: predicted from the nearest other known size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleCheck {
    /// Device.
    pub device: String,
    /// The known operation predicted.
    pub operation: String,
    /// The known operation it was predicted from.
    pub from: String,
    /// Known cost (ms).
    pub known_ms: f64,
    /// Rule 1's prediction (ms).
    pub predicted_ms: f64,
    /// predicted / known - 1.
    pub error: f64,
}

/// Rule 1's error on every direct number that has another direct size of its primitive
/// and family in the same profile.
pub fn rule_checks(profile: &DeviceProfile) -> Vec<RuleCheck> {
    profile
        .operations
        .iter()
        .filter(|(_, c)| c.source.is_direct())
        .filter_map(|(op, cost)| {
            let (anchor, a) = nearest_same_family(profile, *op, true)?;
            let predicted = scale_bits(op.primitive, a.ms, anchor.key.bits, op.key.bits);
            Some(RuleCheck {
                device: profile.name.clone(),
                operation: op.label(),
                from: anchor.label(),
                known_ms: cost.ms,
                predicted_ms: predicted,
                error: predicted / cost.ms - 1.0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::KeyType;
    use std::collections::BTreeMap;

    fn profile(name: &str, ops: &[(Primitive, &str, f64)]) -> DeviceProfile {
        DeviceProfile {
            name: name.into(),
            description: String::new(),
            source: String::new(),
            operations: ops
                .iter()
                .map(|(p, k, ms)| {
                    (
                        Operation {
                            primitive: *p,
                            key: KeyType::parse(k).unwrap(),
                        },
                        Cost {
                            ms: *ms,
                            source: Source::Published {
                                reference: "test".into(),
                            },
                        },
                    )
                })
                .collect::<BTreeMap<_, _>>(),
            per_message: None,
            offers: Vec::new(),
            p256_stand_ins: true,
            ephemeral_key_precomputed: None,
        }
    }

    #[test]
    fn size_rule_is_cubic_for_private_and_ec_and_square_for_public() {
        assert_eq!(scale_bits(Primitive::RsaPrivate, 1.0, 1024, 2048), 8.0);
        assert_eq!(scale_bits(Primitive::RsaPublic, 1.0, 1024, 2048), 4.0);
        assert_eq!(scale_bits(Primitive::Ecdh, 8.0, 256, 128), 1.0);
    }

    #[test]
    fn completion_uses_own_family_first_then_the_reference() {
        let reference = profile(
            "ref",
            &[
                (Primitive::Ecdh, "256p", 10.0),
                (Primitive::Ecdh, "163k", 5.0),
                (Primitive::RsaPublic, "rsa2048", 2.0),
            ],
        );
        let mut p = profile("dev", &[(Primitive::Ecdh, "256p", 100.0)]);
        complete(&mut p, &[&reference]);
        let k163 = p
            .op_ms(Operation::ecdh(KeyType::parse("163k").unwrap()))
            .unwrap();
        assert!((k163.0 - 50.0).abs() < 1e-9, "{k163:?}");
        let p160 = p
            .op_ms(Operation::ecdh(KeyType::parse("160p").unwrap()))
            .unwrap();
        assert!((p160.0 - 100.0 * (160.0f64 / 256.0).powi(3)).abs() < 1e-9);
        let rsa = p.op_ms(Operation::verify(KeyType::rsa(2048))).unwrap();
        assert!((rsa.0 - 20.0).abs() < 1e-9);
        assert_eq!(rsa.1.kind(), "borrowed");
        assert_eq!(p160.1.kind(), "scaled");
        // Outside the completed set: rule 1 on the fly.
        assert!(p.op_ms(Operation::verify(KeyType::rsa(4096))).is_ok());
        assert!(p.op_ms(Operation::sign(KeyType::P256)).is_err());
    }

    #[test]
    fn rule_checks_predict_each_known_size_from_its_neighbour() {
        let p = profile(
            "dev",
            &[
                (Primitive::Ecdh, "160p", 1.0),
                (Primitive::Ecdh, "320p", 8.0),
            ],
        );
        let checks = rule_checks(&p);
        assert_eq!(checks.len(), 2);
        assert!(checks.iter().all(|c| c.error.abs() < 1e-12));
    }
}
