//! DTLS 1.3's configurations as values: the key exchange group, the credential (a
//! certificate chain with its signature, or a PSK), and the suite they make, with its
//! text form and what it costs the device. Kept apart from the wolfSSL plumbing in
//! `dtls13.rs`, which turns a suite into contexts.

use std::ffi::c_int;

use wolfssl_sys as w;

use crate::protocols::ml_dsa::MlDsa;

/// The key exchange of a DTLS 1.3 handshake: its TLS named group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    /// secp256r1 ECDHE.
    P256,
    /// ML-KEM-512 alone (draft-ietf-tls-mlkem).
    MlKem512,
    /// ML-KEM-768 alone.
    MlKem768,
    /// ML-KEM-1024 alone: NIST category 5, the highest level.
    MlKem1024,
    /// X25519 + ML-KEM-768 (draft-ietf-tls-ecdhe-mlkem).
    X25519MlKem768,
    /// secp256r1 + ML-KEM-768.
    P256MlKem768,
}

impl Group {
    pub const ALL: [Group; 6] = [
        Group::P256,
        Group::MlKem512,
        Group::MlKem768,
        Group::MlKem1024,
        Group::X25519MlKem768,
        Group::P256MlKem768,
    ];

    /// The TLS NamedGroup code point (wolfSSL's constants).
    pub fn code(self) -> c_int {
        (match self {
            Group::P256 => w::WOLFSSL_ECC_SECP256R1,
            Group::MlKem512 => w::WOLFSSL_ML_KEM_512,
            Group::MlKem768 => w::WOLFSSL_ML_KEM_768,
            Group::MlKem1024 => w::WOLFSSL_ML_KEM_1024,
            Group::X25519MlKem768 => w::WOLFSSL_X25519MLKEM768,
            Group::P256MlKem768 => w::WOLFSSL_SECP256R1MLKEM768,
        }) as c_int
    }

    pub fn name(self) -> &'static str {
        match self {
            Group::P256 => "p256",
            Group::MlKem512 => "mlkem512",
            Group::MlKem768 => "mlkem768",
            Group::MlKem1024 => "mlkem1024",
            Group::X25519MlKem768 => "x25519mlkem768",
            Group::P256MlKem768 => "p256mlkem768",
        }
    }

    /// Whether it includes ML-KEM.
    pub fn post_quantum(self) -> bool {
        self != Group::P256
    }

    /// Whether it pairs an elliptic curve with ML-KEM.
    pub fn hybrid(self) -> bool {
        matches!(self, Group::X25519MlKem768 | Group::P256MlKem768)
    }
}

/// How the two sides authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Credential {
    /// Certificates (of the suite's [`Signature`]); `mutual` adds the client's.
    Certificate { mutual: bool },
    /// External PSK, `psk_ke`: no key exchange.
    Psk,
    /// External PSK with a key exchange (`psk_dhe_ke`).
    PskDhe,
}

/// The signature scheme of a certificate configuration: the chain's keys and
/// signatures, and the CertificateVerify's SignatureScheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Signature {
    /// ECDSA P-256 with SHA-256 (`ecdsa_secp256r1_sha256`, 0x0403).
    EcdsaP256,
    /// ML-DSA (FIPS 204; `mldsa44` 0x0904, `mldsa65` 0x0905, draft-ietf-tls-mldsa).
    MlDsa(MlDsa),
}

impl Signature {
    pub const ALL: [Signature; 3] = [
        Signature::EcdsaP256,
        Signature::MlDsa(MlDsa::MlDsa44),
        Signature::MlDsa(MlDsa::MlDsa65),
    ];

    /// Name in configuration names.
    pub fn name(self) -> &'static str {
        match self {
            Signature::EcdsaP256 => "ecdsa",
            Signature::MlDsa(l) => l.name(),
        }
    }

    /// Name in tables' prose (`ML-DSA-44`).
    pub fn label(self) -> &'static str {
        match self {
            Signature::EcdsaP256 => "ECDSA P-256",
            Signature::MlDsa(MlDsa::MlDsa44) => "ML-DSA-44",
            Signature::MlDsa(MlDsa::MlDsa65) => "ML-DSA-65",
        }
    }

    /// The TLS SignatureScheme code point of the CertificateVerify.
    pub fn scheme(self) -> u16 {
        match self {
            Signature::EcdsaP256 => 0x0403,
            Signature::MlDsa(l) => l.signature_scheme(),
        }
    }

    /// Whether it is a post-quantum signature.
    pub fn post_quantum(self) -> bool {
        self != Signature::EcdsaP256
    }
}

/// Which certificates a certificate-authenticated side sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Chain {
    /// The end-entity certificate alone, the peer holding the CA (RFC 7925 section 4.4.2).
    Leaf,
    /// The end-entity certificate and the CA's.
    LeafAndCa,
}

/// One DTLS 1.3 configuration on the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dtls13Suite {
    pub credential: Credential,
    /// The key exchange (unused by [`Credential::Psk`], kept at [`Group::P256`]).
    pub group: Group,
    /// Connection ID negotiated (see the module's documentation).
    pub cid: bool,
    /// The certificates' signature scheme (unused by PSK, kept at ECDSA).
    pub signature: Signature,
    /// What a certificate side sends (unused by PSK, kept at the leaf alone).
    pub chain: Chain,
}

impl Dtls13Suite {
    /// Forward secrecy: every key exchange but `psk_ke` has an ephemeral share.
    pub fn forward_secrecy(self) -> crate::protocols::ForwardSecrecy {
        match self.credential {
            Credential::Psk => crate::protocols::ForwardSecrecy {
                holds: false,
                why: "PSK with psk_ke, no key exchange: every key derives from the pre-shared key",
            },
            _ => crate::protocols::ForwardSecrecy {
                holds: true,
                why: "an ephemeral key share of the group on both sides",
            },
        }
    }

    /// A configuration with ECDSA P-256 leaf certificates where it has certificates.
    pub const fn new(credential: Credential, group: Group, cid: bool) -> Dtls13Suite {
        Dtls13Suite {
            credential,
            group,
            cid,
            signature: Signature::EcdsaP256,
            chain: Chain::Leaf,
        }
    }

    /// The same configuration signing with `signature`.
    pub const fn signed_with(self, signature: Signature) -> Dtls13Suite {
        Dtls13Suite { signature, ..self }
    }

    /// The same configuration sending `chain`.
    pub const fn sending(self, chain: Chain) -> Dtls13Suite {
        Dtls13Suite { chain, ..self }
    }

    /// Every configuration: the classical ones with and without a CID, then each ML-KEM
    /// group with ECDSA certificates, server-authenticated and mutual, then the ML-DSA
    /// ones ([`Dtls13Suite::ml_dsa`]).
    pub fn all() -> Vec<Dtls13Suite> {
        let classical = [
            Credential::Certificate { mutual: false },
            Credential::Certificate { mutual: true },
            Credential::Psk,
            Credential::PskDhe,
        ];
        let mut out = Vec::new();
        for cid in [false, true] {
            for c in classical {
                out.push(Dtls13Suite::new(c, Group::P256, cid));
            }
        }
        for g in Group::ALL.into_iter().filter(|g| g.post_quantum()) {
            for mutual in [false, true] {
                out.push(Dtls13Suite::new(
                    Credential::Certificate { mutual },
                    g,
                    false,
                ));
            }
        }
        out.extend(Dtls13Suite::ml_dsa());
        out
    }

    /// The ML-DSA configurations, server-authenticated and mutual: the signature alone
    /// post-quantum (P-256 with ML-DSA-44); both halves post-quantum (ML-KEM-768 or the
    /// X25519 hybrid with ML-DSA-44, ML-KEM-1024 with ML-DSA-65 at the highest level);
    /// and ML-KEM-768 with ML-DSA-44 sending the CA too, against its leaf alone.
    pub fn ml_dsa() -> Vec<Dtls13Suite> {
        let pairs = [
            (Group::P256, MlDsa::MlDsa44),
            (Group::MlKem768, MlDsa::MlDsa44),
            (Group::X25519MlKem768, MlDsa::MlDsa44),
            (Group::MlKem1024, MlDsa::MlDsa65),
        ];
        let mut out = Vec::new();
        for (group, level) in pairs {
            for mutual in [false, true] {
                out.push(
                    Dtls13Suite::new(Credential::Certificate { mutual }, group, false)
                        .signed_with(Signature::MlDsa(level)),
                );
            }
        }
        let full = Dtls13Suite::new(
            Credential::Certificate { mutual: true },
            Group::MlKem768,
            false,
        )
        .signed_with(Signature::MlDsa(MlDsa::MlDsa44));
        out.push(full.sending(Chain::LeafAndCa));
        out
    }

    /// Name for tables, CSV and the command line, e.g. `ecdhe-p256-ecdsa-ccm8-mutual-cid`
    /// or `mlkem768-mldsa44-ccm8-mutual-ca`.
    pub fn name(self) -> String {
        let base = match self.credential {
            Credential::Certificate { mutual } => format!(
                "{}-{}-ccm8{}{}",
                match self.group {
                    Group::P256 => "ecdhe-p256",
                    g => g.name(),
                },
                self.signature.name(),
                if mutual { "-mutual" } else { "" },
                match self.chain {
                    Chain::Leaf => "",
                    Chain::LeafAndCa => "-ca",
                }
            ),
            Credential::Psk => "psk-ccm8".to_owned(),
            Credential::PskDhe => format!("psk-{}-ccm8", self.group.name()),
        };
        if self.cid {
            format!("{base}-cid")
        } else {
            base
        }
    }

    /// Parses [`Dtls13Suite::name`]; the error lists the names.
    pub fn parse(name: &str) -> anyhow::Result<Dtls13Suite> {
        Dtls13Suite::all()
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                let known: Vec<String> = Dtls13Suite::all().iter().map(|s| s.name()).collect();
                anyhow::anyhow!(
                    "unknown DTLS 1.3 suite {name:?}; known: {}",
                    known.join(", ")
                )
            })
    }

    /// Is the client authenticated too?
    pub fn mutual(self) -> bool {
        match self.credential {
            Credential::Certificate { mutual } => mutual,
            Credential::Psk | Credential::PskDhe => true,
        }
    }

    /// The signature scheme when the configuration has certificates.
    pub fn certificate_signature(self) -> Option<Signature> {
        matches!(self.credential, Credential::Certificate { .. }).then_some(self.signature)
    }
}
