//! Device profiles: what each public-key operation costs on a constrained client, with
//! the provenance of every number, and the client's processing time T_PD_C of a WTLS
//! handshake on that device (thesis Eq. 3.2 and 3.5, message by message).
//!
//! A profile is data. Its numbers come from one of five places, recorded per number in
//! [`Source`]: a study's own tables (the Nokia 7650 of Bayoglu 2004 is *fitted* from
//! them, see [`nokia`]), a maintained library's published benchmark (the CSV files in
//! `data/devices/`), the library's code *executed* on an instruction-level model of the
//! device's core (see [`executed`]), a measurement on this machine (built by the caller,
//! which owns the clock), or the scaling rule of [`scaling`] for an operation a profile
//! lacks.
//!
//! Other protocols use the same API: [`DeviceProfile::op_ms`] answers "how long does
//! ECDH on P-256 (or an RSA-2048 private operation) take on this device, and says who".

pub mod catalog;
pub mod executed;
pub mod nokia;
pub mod published_pq;
pub mod scaling;

use crate::processing::Message;
use crate::Authentication;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

pub use catalog::{load_profiles, published_profiles, CatalogError, CatalogueFiles};

/// The algebraic family of a key: what the scaling rule may extrapolate within.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyFamily {
    /// Elliptic curve over a prime field (the thesis' `p` curves, P-256).
    PrimeCurve,
    /// Koblitz curve over a binary field (`k`).
    KoblitzCurve,
    /// Random curve over a binary field (`r`).
    RandomBinaryCurve,
    /// RSA modulus.
    Rsa,
}

/// A key type: family and size (field bits for a curve, modulus bits for RSA).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct KeyType {
    /// Family.
    pub family: KeyFamily,
    /// Field or modulus size in bits.
    pub bits: u16,
}

impl KeyType {
    /// P-256 (the thesis' `256p`, secp256r1).
    pub const P256: KeyType = KeyType {
        family: KeyFamily::PrimeCurve,
        bits: 256,
    };

    /// An RSA modulus of `bits`.
    pub fn rsa(bits: u16) -> KeyType {
        KeyType {
            family: KeyFamily::Rsa,
            bits,
        }
    }

    /// Parses the thesis' short names (`160p`, `283k`, `163r`, `rsa2048`, case-insensitive)
    /// and `p256`. `None` for anything else.
    pub fn parse(short: &str) -> Option<KeyType> {
        let s = short.trim().to_ascii_lowercase();
        if let Some(bits) = s.strip_prefix("rsa") {
            return bits.parse().ok().map(KeyType::rsa);
        }
        if let Some(bits) = s.strip_prefix('p') {
            return bits.parse().ok().map(|bits| KeyType {
                family: KeyFamily::PrimeCurve,
                bits,
            });
        }
        let (digits, suffix) = s.split_at(s.len().checked_sub(1)?);
        let family = match suffix {
            "p" => KeyFamily::PrimeCurve,
            "k" => KeyFamily::KoblitzCurve,
            "r" => KeyFamily::RandomBinaryCurve,
            _ => return None,
        };
        digits.parse().ok().map(|bits| KeyType { family, bits })
    }

    /// True for the elliptic-curve families.
    pub fn is_ec(self) -> bool {
        self.family != KeyFamily::Rsa
    }

    /// The twelve key types of the thesis (Table 3.2), in table order.
    pub fn wtls_keys() -> Vec<KeyType> {
        [
            "160p", "163k", "163r", "224p", "233k", "233r", "256p", "283k", "283r", "rsa1024",
            "rsa2048", "rsa3072",
        ]
        .iter()
        .filter_map(|s| KeyType::parse(s))
        .collect()
    }
}

impl fmt::Display for KeyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.family {
            KeyFamily::PrimeCurve => write!(f, "{}p", self.bits),
            KeyFamily::KoblitzCurve => write!(f, "{}k", self.bits),
            KeyFamily::RandomBinaryCurve => write!(f, "{}r", self.bits),
            KeyFamily::Rsa => write!(f, "rsa{}", self.bits),
        }
    }
}

/// A public-key primitive. RSA encryption and signature verification are one primitive
/// (the public exponent), decryption and signing the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Primitive {
    /// EC key pair generation (one fixed-base scalar multiplication).
    Keygen,
    /// ECDH shared secret (one variable-base scalar multiplication).
    Ecdh,
    /// ECDSA signature.
    EcdsaSign,
    /// ECDSA verification.
    EcdsaVerify,
    /// RSA public-key operation (encryption, verification).
    RsaPublic,
    /// RSA private-key operation (decryption, signature).
    RsaPrivate,
}

impl Primitive {
    /// All six.
    pub const ALL: [Primitive; 6] = [
        Primitive::Keygen,
        Primitive::Ecdh,
        Primitive::EcdsaSign,
        Primitive::EcdsaVerify,
        Primitive::RsaPublic,
        Primitive::RsaPrivate,
    ];

    /// Name in CSV files (`ecdsa_verify`).
    pub fn name(self) -> &'static str {
        match self {
            Primitive::Keygen => "keygen",
            Primitive::Ecdh => "ecdh",
            Primitive::EcdsaSign => "ecdsa_sign",
            Primitive::EcdsaVerify => "ecdsa_verify",
            Primitive::RsaPublic => "rsa_public",
            Primitive::RsaPrivate => "rsa_private",
        }
    }

    /// Parses [`Primitive::name`].
    pub fn parse(s: &str) -> Option<Primitive> {
        Primitive::ALL.into_iter().find(|p| p.name() == s.trim())
    }

    /// Whether the primitive applies to a key family.
    pub fn applies_to(self, family: KeyFamily) -> bool {
        matches!(self, Primitive::RsaPublic | Primitive::RsaPrivate) == (family == KeyFamily::Rsa)
    }
}

/// One operation on one key type: the unit a profile prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Operation {
    /// What is computed.
    pub primitive: Primitive,
    /// On which key type.
    pub key: KeyType,
}

impl Operation {
    /// ECDH on `key`.
    pub fn ecdh(key: KeyType) -> Operation {
        Operation {
            primitive: Primitive::Ecdh,
            key,
        }
    }

    /// Certificate-signature verification under `key`: ECDSA on a curve, the RSA public
    /// operation on a modulus.
    pub fn verify(key: KeyType) -> Operation {
        let primitive = if key.is_ec() {
            Primitive::EcdsaVerify
        } else {
            Primitive::RsaPublic
        };
        Operation { primitive, key }
    }

    /// Signature with `key`: ECDSA or the RSA private operation.
    pub fn sign(key: KeyType) -> Operation {
        let primitive = if key.is_ec() {
            Primitive::EcdsaSign
        } else {
            Primitive::RsaPrivate
        };
        Operation { primitive, key }
    }

    /// `ecdh 256p`.
    pub fn label(self) -> String {
        format!("{} {}", self.primitive.name(), self.key)
    }

    /// Every operation that applies to the WTLS key types (the set a profile is completed
    /// to).
    pub fn wtls_set() -> Vec<Operation> {
        KeyType::wtls_keys()
            .into_iter()
            .flat_map(|key| {
                Primitive::ALL
                    .into_iter()
                    .filter(move |p| p.applies_to(key.family))
                    .map(move |primitive| Operation { primitive, key })
            })
            .collect()
    }
}

/// Where one number of a profile comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// A published benchmark or a study's text: the reference (URL or repository + file,
    /// and the line quoted).
    Published {
        /// Citation.
        reference: String,
    },
    /// Fitted to a study's tables (which ones and how).
    Fitted {
        /// Citation and method.
        reference: String,
    },
    /// Executed: the device's core ran a maintained library's code on an instruction-level
    /// model (library version, compiler flags and the core's timing table named; see
    /// [`executed`]).
    Executed {
        /// Library, compiler flags, emulator and timing table.
        reference: String,
    },
    /// Measured on this machine by this program (what and how).
    Measured {
        /// What was measured.
        what: String,
    },
    /// A published cycle count of the device's core measured on another board (pqm4's
    /// NUCLEO-L4R5ZI for the Cortex-M4), priced at this profile's clock: that the
    /// cycles carry over between boards of one core is our assumption.
    Transferred {
        /// Citation, the board measured and the clock priced at.
        reference: String,
    },
    /// Derived from the device's own number of the same primitive and family by the size
    /// rule of [`scaling`] (rule 1).
    Scaled {
        /// The rule, with its inputs.
        rule: String,
    },
    /// Derived from the device's own number times *another* device's ratio (rule 2 of
    /// [`scaling`]): an estimate of an operation the device's library does not offer.
    Borrowed {
        /// The rule, with its inputs and the reference device.
        rule: String,
    },
}

impl Source {
    /// `published`, `fitted`, `executed`, `measured`, `scaled` or `borrowed`: the CSV
    /// column.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Published { .. } => "published",
            Source::Transferred { .. } => "transferred",
            Source::Fitted { .. } => "fitted",
            Source::Executed { .. } => "executed",
            Source::Measured { .. } => "measured",
            Source::Scaled { .. } => "scaled",
            Source::Borrowed { .. } => "borrowed",
        }
    }

    /// The citation, method or rule.
    pub fn detail(&self) -> &str {
        match self {
            Source::Published { reference }
            | Source::Transferred { reference }
            | Source::Fitted { reference }
            | Source::Executed { reference } => reference,
            Source::Measured { what } => what,
            Source::Scaled { rule } | Source::Borrowed { rule } => rule,
        }
    }

    /// True unless the number was extrapolated.
    pub fn is_direct(&self) -> bool {
        !matches!(self, Source::Scaled { .. } | Source::Borrowed { .. })
    }

    /// True when the number rests on another device's ratio.
    pub fn is_borrowed(&self) -> bool {
        matches!(self, Source::Borrowed { .. })
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.detail())
    }
}

/// A cost with its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Milliseconds.
    pub ms: f64,
    /// Provenance.
    pub source: Source,
}

/// A device: the cost of each public-key operation, plus the per-message symmetric work
/// (hashing, PRF, record protection) when it is known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceProfile {
    /// Name on the command line (`nokia7650`).
    pub name: String,
    /// What the device is.
    pub description: String,
    /// Where the profile as a whole comes from.
    pub source: String,
    /// Cost per operation.
    pub operations: BTreeMap<Operation, Cost>,
    /// Symmetric work per handshake message the client handles, when known.
    pub per_message: Option<Cost>,
    /// The key types the device's library offers; empty: every key type. A profile may
    /// price an operation its library lacks (borrowed or scaled, for comparison), but a
    /// suite on a key type outside this list is not one the device can run.
    pub offers: Vec<KeyType>,
    /// The client makes its ephemeral ECDH key before the handshake (so server-
    /// authenticated ECDH_ECDSA costs it no key generation inside ClientKeyExchange), with
    /// the evidence. `None`: the key is generated inside the handshake, as our engine does.
    pub ephemeral_key_precomputed: Option<Source>,
    /// A P-256 key generation, signature or verification the profile does not price
    /// is estimated from its own ECDH (the drivers' `protocols::model::op_ms`): a
    /// handshake priced so is an estimate. Off ([`DeviceProfile::without_estimates`]) to
    /// tell which handshakes rest on it.
    pub p256_stand_ins: bool,
}

/// An operation a profile cannot price, even by scaling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownOperation {
    /// Device name.
    pub device: String,
    /// The operation.
    pub operation: Operation,
}

impl fmt::Display for UnknownOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "device {} has no cost for {} (not published, and no scaling rule reaches it)",
            self.device,
            self.operation.label()
        )
    }
}

impl std::error::Error for UnknownOperation {}

impl DeviceProfile {
    /// The cost of `op` on this device and where it comes from. Operations outside the
    /// completed set (e.g. RSA-4096, P-384) are scaled from the nearest size of the same
    /// family ([`scaling::scale_bits`]).
    pub fn op_ms(&self, op: Operation) -> Result<(f64, Source), UnknownOperation> {
        if let Some(c) = self.operations.get(&op) {
            return Ok((c.ms, c.source.clone()));
        }
        scaling::from_nearest_size(self, op)
            .map(|c| (c.ms, c.source))
            .ok_or_else(|| UnknownOperation {
                device: self.name.clone(),
                operation: op,
            })
    }

    /// Symmetric cost per handshake message (0 when unknown).
    pub fn per_message_ms(&self) -> f64 {
        self.per_message.as_ref().map_or(0.0, |c| c.ms)
    }

    /// The client's processing time of one handshake message on this device.
    pub fn client_message_ms(
        &self,
        case: WtlsCase,
        message: Message,
    ) -> Result<f64, UnknownOperation> {
        if !client_handles(case, message) {
            return Ok(0.0);
        }
        let mut ms = self.per_message_ms();
        for op in client_operations(case, self.ephemeral_key_precomputed.is_some()) {
            if op.0 == message {
                ms += self.op_ms(op.1)?.0;
            }
        }
        Ok(ms)
    }

    /// The same profile with every cost borrowed from another device's ratios left out:
    /// a handshake it cannot price, or prices otherwise, rests on a borrowed cost.
    pub fn without_borrowed(&self) -> DeviceProfile {
        let mut own = self.clone();
        own.operations.retain(|_, c| !c.source.is_borrowed());
        own
    }

    /// The same profile without its estimates: no cost borrowed from another device's
    /// ratios and no P-256 stand-in. A handshake it cannot price, or prices otherwise,
    /// rests on an estimate.
    pub fn without_estimates(&self) -> DeviceProfile {
        DeviceProfile {
            p256_stand_ins: false,
            ..self.without_borrowed()
        }
    }

    /// True when some client operation of `case` is priced with another device's ratio
    /// ([`Source::Borrowed`]): such a handshake's time is an estimate, and a comparison
    /// it decides is not decided by this device.
    pub fn borrows_for(&self, case: WtlsCase) -> bool {
        client_operations(case, self.ephemeral_key_precomputed.is_some())
            .into_iter()
            .any(|(_, op)| matches!(self.op_ms(op), Ok((_, Source::Borrowed { .. }))))
    }

    /// The least direct source among the client operations of `case`: `borrowed`
    /// (another device's ratio), else `scaled` (the size rule on the device's own
    /// number), else `own` (published, fitted, executed or measured); `None` where an
    /// operation is not priced.
    pub fn client_price_kind(&self, case: WtlsCase) -> Option<&'static str> {
        let mut kind = "own";
        for (_, op) in client_operations(case, self.ephemeral_key_precomputed.is_some()) {
            match self.op_ms(op).ok()?.1 {
                Source::Borrowed { .. } => return Some("borrowed"),
                Source::Scaled { .. } => kind = "scaled",
                _ => {}
            }
        }
        Some(kind)
    }

    /// True when the device's library offers both key types of the case (and the profile
    /// prices its client flow).
    pub fn supports(&self, case: WtlsCase) -> bool {
        let offered = |k: KeyType| self.offers.is_empty() || self.offers.contains(&k);
        offered(case.ca) && offered(case.leaf) && self.client_processing_ms(case).is_ok()
    }

    /// The client's processing per flight of a full WTLS handshake on this device: its
    /// first flight (ClientHello), its second (everything from the server's hello to
    /// its Finished), and the server's ChangeCipherSpec and Finished last. The holds
    /// add up to [`DeviceProfile::client_processing_ms`].
    pub fn wtls_client_steps(&self, case: WtlsCase) -> Result<ClientSteps, UnknownOperation> {
        let first = self.client_message_ms(case, Message::ClientHello)?;
        let last = [Message::ServerChangeCipherSpec, Message::ServerFinished];
        let mut finish = 0.0;
        for m in last {
            finish += self.client_message_ms(case, m)?;
        }
        let mut middle = 0.0;
        for &m in Message::ALL.iter() {
            if m != Message::ClientHello && !last.contains(&m) {
                middle += self.client_message_ms(case, m)?;
            }
        }
        Ok(ClientSteps {
            flights: vec![first, middle],
            finish,
        })
    }

    /// The client's processing time T_PD_C of a full handshake (thesis Eq. 3.2 mutual,
    /// Eq. 3.5 server-authenticated): the sum of [`DeviceProfile::client_message_ms`].
    pub fn client_processing_ms(&self, case: WtlsCase) -> Result<f64, UnknownOperation> {
        Message::ALL
            .iter()
            .map(|&m| self.client_message_ms(case, m))
            .sum()
    }
}

/// The client's processing time per step on an emulated device (ms): `flights[k]` for
/// the k-th flight the client sends (0 = the first), `finish` for the last flight it
/// receives. The UDP driver holds each flight until that time has passed since its
/// computation began, for every protocol alike.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientSteps {
    /// Per client flight, in order.
    pub flights: Vec<f64>,
    /// Processing the server's last flight.
    pub finish: f64,
}

impl ClientSteps {
    /// The device's whole client time of the handshake (ms).
    pub fn total_ms(&self) -> f64 {
        self.flights.iter().sum::<f64>() + self.finish
    }
}

/// A WTLS handshake case as the device model sees it: the CA's key, the leaf's key (the
/// server's and, in mutual handshakes, the client's) and the authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WtlsCase {
    /// Key that signed the certificates.
    pub ca: KeyType,
    /// Key type of the server's (and the client's) certificate.
    pub leaf: KeyType,
    /// Flavour.
    pub auth: Authentication,
}

impl WtlsCase {
    /// From the thesis' short names (`rsa3072`, `rsa1024`).
    pub fn parse(ca: &str, leaf: &str, auth: Authentication) -> Option<WtlsCase> {
        Some(WtlsCase {
            ca: KeyType::parse(ca)?,
            leaf: KeyType::parse(leaf)?,
            auth,
        })
    }
}

impl fmt::Display for WtlsCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let auth = match self.auth {
            Authentication::Mutual => "mutual",
            Authentication::ServerAuth => "server",
        };
        write!(f, "{}/{} {auth}", self.ca, self.leaf)
    }
}

/// Whether the client handles `message` in this case (thesis Tables 3.5 and 3.7; a
/// mutual ECDH_ECDSA client computes the premaster secret where ClientKeyExchange would
/// be, and the thesis times it as `T_M_C_CKX`).
pub fn client_handles(case: WtlsCase, message: Message) -> bool {
    let mutual = case.auth == Authentication::Mutual;
    match message {
        Message::CertificateRequest | Message::ClientCertificate => mutual,
        Message::CertificateVerify => mutual && !case.leaf.is_ec(),
        _ => true,
    }
}

/// Messages the client handles in this case.
pub fn client_message_count(case: WtlsCase) -> usize {
    Message::ALL
        .iter()
        .filter(|&&m| client_handles(case, m))
        .count()
}

/// The public-key operations of the client, by message, in a full WTLS handshake
/// (thesis sections 3.1.1-3.1.2, Levi-Savas section 3):
///
/// * server Certificate: the CA's signature over it (ECDSA, or the RSA public operation);
/// * ClientKeyExchange: ECDH with the server's certified key (server-authenticated: on a
///   fresh key pair, generated here unless `ephemeral_precomputed`), or RSA encryption of
///   the premaster secret under the server's key;
/// * CertificateVerify (mutual RSA only): a signature with the client's key, which is of
///   the leaf's type.
pub fn client_operations(case: WtlsCase, ephemeral_precomputed: bool) -> Vec<(Message, Operation)> {
    let mut ops = vec![(Message::ServerCertificate, Operation::verify(case.ca))];
    if case.leaf.is_ec() {
        if case.auth == Authentication::ServerAuth && !ephemeral_precomputed {
            ops.push((
                Message::ClientKeyExchange,
                Operation {
                    primitive: Primitive::Keygen,
                    key: case.leaf,
                },
            ));
        }
        ops.push((Message::ClientKeyExchange, Operation::ecdh(case.leaf)));
    } else {
        ops.push((
            Message::ClientKeyExchange,
            Operation {
                primitive: Primitive::RsaPublic,
                key: case.leaf,
            },
        ));
        if case.auth == Authentication::Mutual {
            ops.push((Message::CertificateVerify, Operation::sign(case.leaf)));
        }
    }
    ops
}

/// Every profile of the catalogue, completed by the scaling rule: the Nokia 7650 fit,
/// the ARM7TDMI of Levi-Savas and the published modern devices. The profile of this
/// machine is measured by the caller and completed with [`scaling::complete`].
pub fn profiles() -> Result<Vec<DeviceProfile>, CatalogError> {
    catalog::all_profiles()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_types_parse_the_thesis_names() {
        assert_eq!(KeyType::parse("256p"), Some(KeyType::P256));
        assert_eq!(KeyType::parse("P256"), Some(KeyType::P256));
        assert_eq!(KeyType::parse("Rsa3072"), Some(KeyType::rsa(3072)));
        assert_eq!(
            KeyType::parse("283k").map(|k| k.family),
            Some(KeyFamily::KoblitzCurve)
        );
        assert_eq!(
            KeyType::parse("163r").map(|k| k.to_string()).as_deref(),
            Some("163r")
        );
        assert_eq!(KeyType::parse("x"), None);
        assert_eq!(KeyType::parse(""), None);
        assert_eq!(KeyType::wtls_keys().len(), 12);
        assert_eq!(Operation::wtls_set().len(), 9 * 4 + 3 * 2);
    }

    #[test]
    fn client_flows_follow_tables_3_5_and_3_7() {
        let rsa = WtlsCase::parse("rsa3072", "rsa1024", Authentication::Mutual).unwrap();
        let ops = client_operations(rsa, false);
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[0].1, Operation::verify(KeyType::rsa(3072)));
        assert_eq!(
            ops[2],
            (
                Message::CertificateVerify,
                Operation::sign(KeyType::rsa(1024))
            )
        );
        let ec = WtlsCase::parse("224p", "160p", Authentication::ServerAuth).unwrap();
        assert_eq!(client_operations(ec, false).len(), 3);
        assert_eq!(client_operations(ec, true).len(), 2);
        assert_eq!(client_message_count(ec), 9);
        assert_eq!(client_message_count(rsa), 12);
        let ec_mutual = WtlsCase {
            auth: Authentication::Mutual,
            ..ec
        };
        assert_eq!(client_message_count(ec_mutual), 11);
    }
}
