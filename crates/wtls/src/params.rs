//! What a wire `ParameterSpecifier` names (wire-format notes §4.2, §10): the mapping
//! between the project's [`Specifier`]s and the ParameterIndex values of certificates,
//! KeyExchangeIds and ServerKeyExchange.
//!
//! Two numberings exist, and a peer must use the same one as we do:
//!
//! * [`ParameterNumbering::Wap261`] (the default, conformant): RSA keys carry index 0
//!   (the key size comes from the modulus, as in every real WTLS certificate we have:
//!   Entrust.net and VeriSign, read by Symbian's parser). EC keys carry their WAP-261
//!   curve number N (curve `wtlsN`, OID 2.23.43.1.4.N): wtls3 = K-163, wtls7 =
//!   secp160r2, wtls10 = K-233, wtls11 = B-233, wtls12 = P-224 (OpenSSL's curve table,
//!   `ec_curve.c`). B-163, P-256, K-283 and B-283 have no WTLS number, so they go as
//!   explicit parameters (index 255 and an `ECParameters` set), the one encoding the
//!   specification itself offers for an unnumbered curve.
//! * [`ParameterNumbering::Thesis`] (compatibility): the numbers of Bayoglu (2004)
//!   Table 3.2 (1..10 for the curves, 20..22 for RSA). The thesis' handshake byte counts
//!   (Table 4.11) were made with it; an explicit set costs 126 (B-163) to 205 (P-256)
//!   bytes instead of one wherever an unnumbered curve is named. Index 0 for RSA is accepted here too.
//!
//! Explicit parameters are accepted under both numberings, but only when they are
//! exactly the domain parameters of one of our curves (the seed aside): we never
//! compute on a curve a peer made up.

use std::sync::OnceLock;

use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcGroup, PointConversionForm};

use crate::msgs::common::{EcBasis, EcField, EcParameters, ParameterSet, ParameterSpecifier};
use crate::msgs::enums::AlertDescription;
use crate::suite::Specifier;

/// Which numbering of ParameterIndex values a side writes and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum ParameterNumbering {
    /// WAP-261: RSA 0, EC curves by their wtlsN number, explicit parameters otherwise.
    #[default]
    Wap261,
    /// Bayoglu (2004) Table 3.2: what the thesis' byte counts were made with.
    Thesis,
}

impl ParameterNumbering {
    pub const ALL: [ParameterNumbering; 2] =
        [ParameterNumbering::Wap261, ParameterNumbering::Thesis];

    /// The name used on the command line and in files ("wap261", "thesis").
    pub fn name(self) -> &'static str {
        match self {
            ParameterNumbering::Wap261 => "wap261",
            ParameterNumbering::Thesis => "thesis",
        }
    }

    /// Inverse of [`ParameterNumbering::name`], ignoring case.
    pub fn from_name(name: &str) -> Option<ParameterNumbering> {
        Self::ALL
            .into_iter()
            .find(|n| n.name().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for ParameterNumbering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a received ParameterSpecifier names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamedParameters {
    /// RSA of a size the key itself gives (index 0).
    AnyRsa,
    /// One specifier: a curve, or an RSA size (thesis numbering).
    Key(Specifier),
}

impl NamedParameters {
    /// Whether a key of `spec` fits these parameters.
    pub fn admits(self, spec: Specifier) -> bool {
        match self {
            NamedParameters::AnyRsa => spec.is_rsa(),
            NamedParameters::Key(s) => s == spec,
        }
    }

    /// Whether the parameters are an RSA key's.
    pub fn is_rsa(self) -> bool {
        match self {
            NamedParameters::AnyRsa => true,
            NamedParameters::Key(s) => s.is_rsa(),
        }
    }

    /// The one specifier named, or for [`NamedParameters::AnyRsa`] the RSA size of a
    /// modulus of `modulus_bits` bits (`None` for a size we do not support).
    pub fn resolve(self, modulus_bits: Option<u32>) -> Option<Specifier> {
        match self {
            NamedParameters::Key(s) => Some(s),
            NamedParameters::AnyRsa => modulus_bits.and_then(rsa_of_bits),
        }
    }
}

/// Why a ParameterSpecifier names nothing we support; the peer gets
/// `unknown_parameter_index`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParameterError {
    #[error("parameter index {index} names no key parameters under the {numbering} numbering")]
    UnknownIndex {
        index: u8,
        numbering: ParameterNumbering,
    },
    #[error("explicit parameters that are none of our curves")]
    UnknownExplicit,
}

impl ParameterError {
    pub fn alert(&self) -> AlertDescription {
        AlertDescription::UnknownParameterIndex
    }
}

/// The RSA specifier of a modulus size.
pub fn rsa_of_bits(bits: u32) -> Option<Specifier> {
    Specifier::ALL
        .into_iter()
        .find(|s| s.rsa_bits() == Some(bits))
}

impl Specifier {
    /// The WAP-261 curve number (wtlsN, OID 2.23.43.1.4.N) of this curve, `None` for
    /// RSA and for the curves WAP-261 does not number (wire-format notes §10).
    pub fn wap261_curve(self) -> Option<u8> {
        match self {
            Specifier::Nist163k => Some(3),
            Specifier::Wtls7_160 => Some(7),
            Specifier::Nist233k => Some(10),
            Specifier::Nist233r => Some(11),
            Specifier::Nist224p => Some(12),
            _ => None,
        }
    }

    /// The ParameterSpecifier a key of this specifier carries under `numbering`.
    pub fn parameter_specifier(self, numbering: ParameterNumbering) -> ParameterSpecifier {
        match numbering {
            ParameterNumbering::Thesis => ParameterSpecifier::Index(self.thesis_number()),
            ParameterNumbering::Wap261 if self.is_rsa() => ParameterSpecifier::Index(0),
            ParameterNumbering::Wap261 => match (self.wap261_curve(), explicit_parameters(self)) {
                (Some(n), _) => ParameterSpecifier::Index(n),
                (None, Some(set)) => ParameterSpecifier::Set(set.clone()),
                // No libcrypto description: the curve is unavailable and no key on it
                // can be built, so this is never sent; the thesis number names it.
                (None, None) => ParameterSpecifier::Index(self.thesis_number()),
            },
        }
    }

    /// What a received ParameterSpecifier names under `numbering`.
    pub fn named_by(
        p: &ParameterSpecifier,
        numbering: ParameterNumbering,
    ) -> Result<NamedParameters, ParameterError> {
        match p {
            ParameterSpecifier::Index(0) => Ok(NamedParameters::AnyRsa),
            ParameterSpecifier::Index(i) => {
                let found = Specifier::ALL.into_iter().find(|s| match numbering {
                    ParameterNumbering::Thesis => s.thesis_number() == *i,
                    ParameterNumbering::Wap261 => s.wap261_curve() == Some(*i),
                });
                found
                    .map(NamedParameters::Key)
                    .ok_or(ParameterError::UnknownIndex {
                        index: *i,
                        numbering,
                    })
            }
            ParameterSpecifier::Set(set) => {
                let wanted = set
                    .ec_parameters()
                    .map_err(|_| ParameterError::UnknownExplicit)?;
                Specifier::ALL
                    .into_iter()
                    .find(|s| {
                        explicit_parameters(*s)
                            .and_then(|p| p.ec_parameters().ok())
                            .is_some_and(|ours| same_curve(&ours, &wanted))
                    })
                    .map(NamedParameters::Key)
                    .ok_or(ParameterError::UnknownExplicit)
            }
        }
    }
}

/// Equal domain parameters; the seed only documents how a and b were generated.
fn same_curve(a: &EcParameters, b: &EcParameters) -> bool {
    a.field == b.field
        && a.a == b.a
        && a.b == b.b
        && a.base == b.base
        && a.order == b.order
        && a.cofactor == b.cofactor
}

/// The explicit `ECParameters` of a curve, encoded once per process; `None` for RSA and
/// for a curve the local libcrypto lacks.
pub fn explicit_parameters(spec: Specifier) -> Option<&'static ParameterSet> {
    static SETS: OnceLock<Vec<(Specifier, ParameterSet)>> = OnceLock::new();
    SETS.get_or_init(|| {
        Specifier::ALL
            .into_iter()
            .filter_map(|s| Some((s, ParameterSet::from(&ec_parameters(s)?))))
            .collect()
    })
    .iter()
    .find(|(s, _)| *s == spec)
    .map(|(_, set)| set)
}

/// The domain parameters of a named curve from OpenSSL's table, in the layout of §4.2:
/// field elements (a, b) as fixed-length octet strings of the field size (X9.62), the
/// base point uncompressed, order and cofactor as minimal big-endian integers, no seed.
fn ec_parameters(spec: Specifier) -> Option<EcParameters> {
    let group = EcGroup::from_curve_name(spec.curve_nid()?).ok()?;
    let mut ctx = BigNumContext::new().ok()?;
    let (mut p, mut a, mut b) = (
        BigNum::new().ok()?,
        BigNum::new().ok()?,
        BigNum::new().ok()?,
    );
    let field_len = spec.field_bytes()?;
    let field = if spec.is_binary_field() {
        group
            .components_gf2m(&mut p, &mut a, &mut b, &mut ctx)
            .ok()?;
        binary_field(&p)?
    } else {
        group
            .components_gfp(&mut p, &mut a, &mut b, &mut ctx)
            .ok()?;
        EcField::Prime { p: p.to_vec() }
    };
    let field_len = i32::try_from(field_len).ok()?;
    let base = group
        .generator_opt()?
        .to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)
        .ok()?;
    let (mut order, mut cofactor) = (BigNum::new().ok()?, BigNum::new().ok()?);
    group.order(&mut order, &mut ctx).ok()?;
    group.cofactor(&mut cofactor, &mut ctx).ok()?;
    Some(EcParameters {
        field,
        a: a.to_vec_padded(field_len).ok()?,
        b: b.to_vec_padded(field_len).ok()?,
        seed: Vec::new(),
        base,
        order: order.to_vec(),
        cofactor: cofactor.to_vec(),
    })
}

/// GF(2^m) from its reduction polynomial: a trinomial x^m + x^k + 1 or a pentanomial
/// x^m + x^k3 + x^k2 + x^k1 + 1 (k1 < k2 < k3), as every NIST binary curve has.
fn binary_field(poly: &BigNum) -> Option<EcField> {
    let m = poly.num_bits() - 1;
    let middle: Vec<u16> = (1..m)
        .filter(|&i| poly.is_bit_set(i))
        .map(|i| u16::try_from(i).ok())
        .collect::<Option<_>>()?;
    let basis = match middle.as_slice() {
        [k] => EcBasis::Trinomial { k: *k },
        [k1, k2, k3] => EcBasis::Pentanomial {
            k1: *k1,
            k2: *k2,
            k3: *k3,
        },
        _ => EcBasis::Polynomial {
            irreducible: poly.to_vec(),
        },
    };
    Some(EcField::CharacteristicTwo {
        m: u16::try_from(m).ok()?,
        basis,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_numbering_round_trips_every_available_specifier() {
        for numbering in ParameterNumbering::ALL {
            for spec in Specifier::ALL.into_iter().filter(|s| s.is_available()) {
                let wire = spec.parameter_specifier(numbering);
                let named = Specifier::named_by(&wire, numbering).unwrap();
                assert!(named.admits(spec), "{spec} under {numbering}: {named:?}");
                if !(spec.is_rsa() && numbering == ParameterNumbering::Wap261) {
                    assert_eq!(named, NamedParameters::Key(spec));
                }
            }
        }
    }

    #[test]
    fn wap261_uses_index_0_for_rsa_and_the_wtls_curve_numbers() {
        let n = ParameterNumbering::Wap261;
        for rsa in [Specifier::Rsa1024, Specifier::Rsa2048, Specifier::Rsa3072] {
            assert_eq!(rsa.parameter_specifier(n), ParameterSpecifier::Index(0));
        }
        let expect = [
            (Specifier::Nist163k, 3),
            (Specifier::Wtls7_160, 7),
            (Specifier::Nist233k, 10),
            (Specifier::Nist233r, 11),
            (Specifier::Nist224p, 12),
        ];
        for (spec, index) in expect {
            if spec.is_available() {
                assert_eq!(
                    spec.parameter_specifier(n),
                    ParameterSpecifier::Index(index)
                );
            }
        }
        assert!(matches!(
            Specifier::Nist256p.parameter_specifier(n),
            ParameterSpecifier::Set(_)
        ));
        // The thesis' RSA labels mean nothing under WAP-261 ...
        assert!(Specifier::named_by(&ParameterSpecifier::Index(20), n).is_err());
        // ... and index 0 is RSA under both numberings.
        for numbering in ParameterNumbering::ALL {
            assert_eq!(
                Specifier::named_by(&ParameterSpecifier::Index(0), numbering),
                Ok(NamedParameters::AnyRsa)
            );
        }
    }

    #[test]
    fn explicit_p256_parameters_have_the_nist_layout() {
        let set = explicit_parameters(Specifier::Nist256p).unwrap();
        let p = set.ec_parameters().unwrap();
        let EcField::Prime { p: prime } = &p.field else {
            panic!("P-256 is a prime curve")
        };
        assert_eq!(prime.len(), 32);
        assert_eq!((p.a.len(), p.b.len(), p.base.len()), (32, 32, 65));
        assert_eq!(p.cofactor, vec![1]);
        // A set for another curve, or a tampered one, names nothing.
        let mut tampered = p.clone();
        tampered.b[31] ^= 1;
        let wire = ParameterSpecifier::Set(ParameterSet::from(&tampered));
        assert_eq!(
            Specifier::named_by(&wire, ParameterNumbering::Wap261),
            Err(ParameterError::UnknownExplicit)
        );
    }

    /// What an explicit set costs on the wire per mention (index, 2-byte length, set),
    /// the figure docs/protocol.md quotes.
    #[test]
    fn explicit_sets_cost_126_to_205_bytes_per_mention() {
        for (spec, bytes) in [
            (Specifier::Nist163r, 126),
            (Specifier::Nist256p, 205),
            (Specifier::Nist283k, 201),
            (Specifier::Nist283r, 201),
        ] {
            if spec.is_available() {
                let wire = spec.parameter_specifier(ParameterNumbering::Wap261);
                assert_eq!(crate::codec::Codec::to_bytes(&wire).len(), bytes, "{spec}");
            }
        }
    }

    #[test]
    fn binary_curves_are_trinomials_or_pentanomials() {
        for spec in [Specifier::Nist283k, Specifier::Nist163r] {
            if !spec.is_available() {
                continue;
            }
            let p = explicit_parameters(spec).unwrap().ec_parameters().unwrap();
            match p.field {
                EcField::CharacteristicTwo {
                    m,
                    basis: EcBasis::Pentanomial { k1, k2, k3 },
                } => {
                    assert_eq!(u32::from(m), spec.field_bits().unwrap());
                    assert!(k1 < k2 && k2 < k3 && k3 < m);
                }
                other => panic!("{spec}: {other:?}"),
            }
        }
    }
}
