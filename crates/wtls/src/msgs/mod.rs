//! Wire structures: one Rust type per WTLS structure.

pub mod alert;
pub mod certificate;
pub mod common;
pub mod enums;
pub mod handshake;
pub mod record;

pub use alert::{alert_checksum, Alert, ChangeCipherSpec};
pub use certificate::{
    CertificateChain, CertificateEntry, PublicKey, ToBeSignedCertificate, WtlsCertificate,
};
pub use common::{
    CipherSuite, DhParameters, DhPublicKey, EcBasis, EcField, EcParameters, EcPublicKey,
    Identifier, KeyExchangeId, ParameterSet, ParameterSpecifier, Random, RsaPublicKey, SessionId,
};
pub use handshake::{
    split_handshake_record, CertificateRequest, CertificateVerify, ClientHello, ClientKeyExchange,
    Finished, HandshakeHeader, HandshakeMessage, ServerHello, ServerKeyExchange,
    ServerKeyExchangeKey, VerifyData,
};
pub use record::{parse_datagram, OwnedRecord, Record, RecordHeader, MAX_FRAGMENT};
