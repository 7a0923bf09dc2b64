//! What can go wrong in a handshake, as types: what the peer did wrong
//! ([`PeerMisbehaved`]), what its bytes or keys failed ([`HandshakeError`]'s other
//! variants), and what we could not do ourselves. Each maps to its alert in one place,
//! [`HandshakeError::alert`], so the choice of alert is made once per kind of failure,
//! not at every place a check fails.

use crate::codec::DecodeError;
use crate::crypto::pk::PkError;
use crate::msgs::enums::{AlertDescription, HandshakeType};
use crate::params::ParameterError;
use crate::pki::CertError;
use crate::suite::Specifier;

use super::ProtocolError;

/// Something the peer sent that the protocol or our policy does not allow.
#[derive(Debug, thiserror::Error)]
pub enum PeerMisbehaved {
    #[error("{message} while in {state}")]
    UnexpectedMessage {
        message: HandshakeType,
        state: &'static str,
    },
    #[error("ChangeCipherSpec while in {0}")]
    UnexpectedChangeCipherSpec(&'static str),
    #[error("application data before the handshake completed")]
    EarlyApplicationData,
    #[error("renegotiation is not supported")]
    Renegotiation,
    #[error("protocol version {0} (only 1)")]
    UnsupportedVersion(u8),
    #[error("the client does not offer null compression")]
    NoNullCompression,
    #[error("no cipher suite in common")]
    NoCommonCipherSuite,
    #[error("only weak cipher suites offered (export, truncated MAC or NULL)")]
    OnlyWeakCipherSuites,
    #[error("anonymous key exchange is disabled")]
    AnonymousKeyExchange,
    #[error("no offered parameter index is known")]
    UnknownParameters,
    #[error("no key exchange in common (suite, key size or CA)")]
    NoCommonKeyExchange,
    #[error("too many key exchange ids")]
    TooManyKeyExchangeIds,
    #[error("server chose a cipher suite we did not offer")]
    CipherSuiteNotOffered,
    #[error("server asked for less frequent key refresh than offered")]
    KeyRefreshTooRare,
    #[error("only explicit sequence numbers are supported")]
    SequenceNumberMode,
    #[error("resumed session with another cipher suite")]
    ResumedWithAnotherCipherSuite,
    #[error("client_key_id {0} names no offered key exchange")]
    UnknownKeyExchangeChoice(u8),
    #[error("the peer sent no certificate")]
    NoCertificate,
    #[error("only WTLS certificates are supported")]
    NotAWtlsCertificate,
    #[error("the certificate's issuer is not a trusted CA")]
    UntrustedIssuer,
    #[error("peer key is {found}, the chosen key exchange named {named}")]
    KeyOnOtherParameters { found: Specifier, named: Specifier },
    #[error("RSA key of {0} bits (1024, 2048 or 3072 supported)")]
    UnsupportedRsaSize(u32),
    #[error("the key does not fit the key exchange suite")]
    KeyDoesNotFitSuite,
    #[error("key exchange point on another curve")]
    PointOnAnotherCurve,
    #[error("ClientKeyExchange point is not the certified client key")]
    PointNotCertified,
    #[error("a client certificate is required")]
    ClientCertificateRequired,
    #[error("CertificateVerify does not verify: {0}")]
    BadCertificateVerify(PkError),
    #[error("{0} Finished does not verify")]
    BadFinished(&'static str),
}

/// A handshake failure: the peer's fault, its bytes, its keys or certificate, or ours.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    #[error(transparent)]
    Peer(#[from] PeerMisbehaved),
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Key(#[from] PkError),
    #[error(transparent)]
    Certificate(#[from] CertError),
    #[error(transparent)]
    Parameters(#[from] ParameterError),
    /// Our own state or configuration cannot do what the handshake needs.
    #[error("internal: {0}")]
    Internal(&'static str),
    /// An error from the record layer, already with its alert.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
}

impl HandshakeError {
    /// The alert for each kind of failure: the one place that chooses.
    pub fn alert(&self) -> AlertDescription {
        use AlertDescription as A;
        use PeerMisbehaved as P;
        match self {
            HandshakeError::Peer(p) => match p {
                P::UnexpectedMessage { .. }
                | P::UnexpectedChangeCipherSpec(_)
                | P::EarlyApplicationData => A::UnexpectedMessage,
                P::Renegotiation => A::NoRenegotiation,
                P::UnsupportedVersion(_) => A::ProtocolVersion,
                P::NoNullCompression
                | P::NoCommonCipherSuite
                | P::NoCommonKeyExchange
                | P::ClientCertificateRequired => A::HandshakeFailure,
                P::OnlyWeakCipherSuites | P::AnonymousKeyExchange => A::InsufficientSecurity,
                P::UnknownParameters => A::UnknownParameterIndex,
                P::TooManyKeyExchangeIds
                | P::CipherSuiteNotOffered
                | P::KeyRefreshTooRare
                | P::SequenceNumberMode
                | P::ResumedWithAnotherCipherSuite
                | P::UnknownKeyExchangeChoice(_)
                | P::KeyOnOtherParameters { .. }
                | P::KeyDoesNotFitSuite
                | P::PointOnAnotherCurve
                | P::PointNotCertified => A::IllegalParameter,
                P::NoCertificate => A::BadCertificate,
                P::NotAWtlsCertificate | P::UnsupportedRsaSize(_) => A::UnsupportedCertificate,
                P::UntrustedIssuer => A::UnknownCa,
                P::BadCertificateVerify(_) | P::BadFinished(_) => A::DecryptError,
            },
            HandshakeError::Decode(e) => e.alert(),
            HandshakeError::Key(e) => e.alert(),
            HandshakeError::Certificate(e) => e.alert(),
            HandshakeError::Parameters(e) => e.alert(),
            HandshakeError::Internal(_) => A::InternalError,
            HandshakeError::Protocol(e) => e.description,
        }
    }
}

impl From<HandshakeError> for ProtocolError {
    fn from(e: HandshakeError) -> Self {
        match e {
            HandshakeError::Protocol(p) => p,
            other => ProtocolError::new(other.alert(), other.to_string()),
        }
    }
}

/// A [`Result`] of a handshake step.
pub type HsResult<T> = Result<T, HandshakeError>;
