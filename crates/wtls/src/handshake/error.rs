//! What can go wrong in a handshake or on a connection, as types: what the peer did
//! wrong ([`PeerMisbehaved`]), what its bytes, keys or certificate failed (the other
//! variants of [`ProtocolError`]), what the record layer refused ([`RecordError`]) and
//! what we could not do ourselves ([`LocalError`]). Each maps to its alert in one
//! place, [`ProtocolError::alert`], so the choice of alert is made once per kind of
//! failure, not at every place a check fails. Why a record or datagram was dropped
//! unanswered is a [`DropReason`]; why an alert was not acted on an [`UnauthenticatedAlert`].

use crate::codec::DecodeError;
use crate::crypto::pk::PkError;
use crate::msgs::enums::{AlertDescription, HandshakeType};
use crate::params::ParameterError;
use crate::pki::CertError;
use crate::record::RecordError;
use crate::suite::Specifier;

use super::conn::Role;

/// The state a handshake was in, named for errors and logs (one name per state of
/// either side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandshakeState {
    // The server's states, in wire order.
    WaitClientHello,
    ClientHelloReceived,
    WaitClientCertificate,
    WaitClientKeyExchange,
    WaitCertificateVerify,
    WaitClientCcs,
    WaitClientFinished,
    // The client's states, in wire order.
    WaitServerHello,
    WaitCertificate,
    WaitServerKeyExchange,
    WaitRequestOrDone,
    WaitDoneOrOptimisedCcs,
    SendKeyExchange,
    WaitServerCcs,
    WaitServerFinished,
    // Both sides.
    SendFinished,
    Established,
    Closed,
}

impl HandshakeState {
    pub fn name(self) -> &'static str {
        use HandshakeState as S;
        match self {
            S::WaitClientHello => "WaitClientHello",
            S::ClientHelloReceived => "ClientHelloReceived",
            S::WaitClientCertificate => "WaitClientCertificate",
            S::WaitClientKeyExchange => "WaitClientKeyExchange",
            S::WaitCertificateVerify => "WaitCertificateVerify",
            S::WaitClientCcs => "WaitClientCcs",
            S::WaitClientFinished => "WaitClientFinished",
            S::WaitServerHello => "WaitServerHello",
            S::WaitCertificate => "WaitCertificate",
            S::WaitServerKeyExchange => "WaitServerKeyExchange",
            S::WaitRequestOrDone => "WaitRequestOrDone",
            S::WaitDoneOrOptimisedCcs => "WaitDoneOrOptimisedCcs",
            S::SendKeyExchange => "SendKeyExchange",
            S::WaitServerCcs => "WaitServerCcs",
            S::WaitServerFinished => "WaitServerFinished",
            S::SendFinished => "SendFinished",
            S::Established => "Established",
            S::Closed => "Closed",
        }
    }
}

impl std::fmt::Display for HandshakeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Something the peer sent that the protocol or our policy does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerMisbehaved {
    #[error("{message} while in {state}")]
    UnexpectedMessage {
        message: HandshakeType,
        state: HandshakeState,
    },
    #[error("ChangeCipherSpec while in {0}")]
    UnexpectedChangeCipherSpec(HandshakeState),
    #[error("ChangeCipherSpec before the keys were agreed")]
    ChangeCipherSpecBeforeKeys,
    #[error("Finished before the keys were agreed")]
    FinishedBeforeKeys,
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
    BadFinished(Role),
}

/// Our own side cannot do what the handshake or the caller needs: a configuration that
/// does not fit, a state that should not occur, or a call at the wrong time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LocalError {
    #[error("the chosen credential is not configured")]
    NoSuchCredential,
    #[error("RSA_anon without an RSA key")]
    RsaAnonWithoutKey,
    #[error("RSA credential holds an EC key")]
    RsaCredentialHoldsEcKey,
    #[error("an EC key pair without an EC point")]
    EcKeyWithoutPoint,
    #[error("no ECDH key for the chosen key exchange")]
    NoEcdhKey,
    #[error("RSA key exchange without an RSA key")]
    RsaKeyExchangeWithoutKey,
    #[error("no server key")]
    NoServerKey,
    #[error("the transcript hash the suite needs was dropped")]
    TranscriptHashDropped,
    #[error("no key exchange offered")]
    NoKeyExchangeOffered,
    #[error("optimised flow without a client credential")]
    OptimisedWithoutCredential,
    #[error("ChangeCipherSpec to send before the keys were agreed")]
    NoPendingKeys,
    #[error("every configured cipher suite is weak (enable weak ciphers to offer them)")]
    OnlyWeakCipherSuitesConfigured,
    #[error("only anonymous key exchange configured (enable it to offer it)")]
    OnlyAnonymousConfigured,
    #[error("the connection closed without an alert")]
    ClosedWithoutAlert,
    #[error("closed by the application before the handshake completed")]
    ClosedByApplication,
    #[error("application data before the handshake completed")]
    NotEstablished,
    #[error("no established connection for this address")]
    NoEstablishedConnection,
}

/// A handshake or record failure, with the alert the peer is sent
/// ([`ProtocolError::alert`]): the peer's fault, its bytes, its keys or certificate,
/// the record layer's verdict, or ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
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
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Local(#[from] LocalError),
    /// The peer ended the handshake with this (authenticated) alert.
    #[error("the peer sent {0}")]
    PeerAlert(AlertDescription),
}

impl ProtocolError {
    /// The alert for each kind of failure: the one place that chooses.
    pub fn alert(&self) -> AlertDescription {
        use AlertDescription as A;
        use PeerMisbehaved as P;
        match self {
            ProtocolError::Peer(p) => match p {
                P::UnexpectedMessage { .. }
                | P::UnexpectedChangeCipherSpec(_)
                | P::ChangeCipherSpecBeforeKeys
                | P::FinishedBeforeKeys
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
            ProtocolError::Decode(e) => e.alert(),
            ProtocolError::Key(e) => e.alert(),
            ProtocolError::Certificate(e) => e.alert(),
            ProtocolError::Parameters(e) => e.alert(),
            ProtocolError::Record(e) => e.alert(),
            ProtocolError::PeerAlert(description) => *description,
            ProtocolError::Local(e) => match e {
                LocalError::OnlyWeakCipherSuitesConfigured
                | LocalError::OnlyAnonymousConfigured => A::InsufficientSecurity,
                LocalError::ClosedByApplication => A::ConnectionCloseNotify,
                LocalError::NotEstablished | LocalError::NoEstablishedConnection => {
                    A::SessionNotReady
                }
                _ => A::InternalError,
            },
        }
    }
}

/// Why a record or a whole datagram was dropped without an answer (`docs/security.md`:
/// what anyone could have forged is dropped, not answered).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DropReason {
    #[error("record without sequence number")]
    NoSequenceNumber,
    #[error("record cipher-spec bit does not match the read state")]
    CipherSpecMismatch,
    #[error("stale or replayed record")]
    StaleOrReplayed,
    #[error("record failed authentication: {0}")]
    FailedAuthentication(RecordError),
    #[error("protected record without a read state")]
    ProtectedWithoutReadState,
    #[error("malformed alert: {0}")]
    MalformedAlert(DecodeError),
    #[error("application data before the handshake")]
    EarlyApplicationData,
    #[error("connection closed")]
    ConnectionClosed,
    #[error("unparsable datagram: {0}")]
    Unparsable(DecodeError),
    #[error("unauthenticated handshake input that does not fit the state: {0}")]
    DoesNotFit(Box<ProtocolError>),
    #[error("incomplete flight (a flight must arrive in one datagram)")]
    IncompleteFlight,
}

/// Why an alert was not acted on: anyone can forge one that nothing authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UnauthenticatedAlert {
    /// Explicit sequence numbers are negotiated; an alert without one (as Kannel sends
    /// them) cannot be placed or authenticated.
    #[error("alert without a sequence number")]
    NoSequenceNumber,
    /// Its checksum matches none of our last records (§7.12).
    #[error("alert checksum matches none of our records")]
    ChecksumMismatch,
}

/// A [`Result`] of a handshake step.
pub type HsResult<T> = Result<T, ProtocolError>;
