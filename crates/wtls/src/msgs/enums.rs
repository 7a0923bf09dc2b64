//! Every WTLS code point as a typed enum (wire-format notes §2.2, §3.1, §4.3, §5, §8).
//!
//! Unknown values are errors at read time: WTLS has no extension mechanism that would
//! require carrying unknown code points through, and a strict reader keeps the state
//! machines free of "unknown" branches.

use crate::codec::{Codec, DecodeError, Reader};

/// Declares a `u8` code-point enum with `Codec`, `from_u8`, `to_u8`, and `name`.
macro_rules! code_points {
    (
        $(#[$meta:meta])*
        $name:ident, $field:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $wire_name:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $value ),+
        }

        impl $name {
            /// Every defined value, in code-point order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn from_u8(v: u8) -> Result<Self, DecodeError> {
                match v {
                    $( $value => Ok($name::$variant), )+
                    other => Err(DecodeError::UnknownValue { field: $field, value: other as u32 }),
                }
            }

            pub fn to_u8(self) -> u8 {
                self as u8
            }

            /// The name used by the WTLS specification and the sources.
            pub fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $wire_name, )+
                }
            }
        }

        impl Codec for $name {
            fn encode(&self, out: &mut Vec<u8>) {
                out.push(*self as u8);
            }
            fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                $name::from_u8(r.u8($field)?)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

code_points! {
    /// Record-layer content type (the low nibble of the record-type byte, §2.2).
    ContentType, "Record.content_type" {
        ChangeCipherSpec = 1 => "change_cipher_spec",
        Alert = 2 => "alert",
        Handshake = 3 => "handshake",
        ApplicationData = 4 => "application_data",
    }
}

code_points! {
    /// Handshake message type (§3.1).
    HandshakeType, "Handshake.msg_type" {
        HelloRequest = 0 => "hello_request",
        ClientHello = 1 => "client_hello",
        ServerHello = 2 => "server_hello",
        Certificate = 11 => "certificate",
        ServerKeyExchange = 12 => "server_key_exchange",
        CertificateRequest = 13 => "certificate_request",
        ServerHelloDone = 14 => "server_hello_done",
        CertificateVerify = 15 => "certificate_verify",
        ClientKeyExchange = 16 => "client_key_exchange",
        Finished = 20 => "finished",
    }
}

code_points! {
    /// Key exchange suite (§5.1). 0-14 from WAP-199, 15-18 added by WAP-261.
    KeyExchangeSuite, "KeyExchangeId.key_exchange_suite" {
        Null = 0 => "null",
        SharedSecret = 1 => "shared_secret",
        DhAnon = 2 => "DH_anon",
        DhAnon512 = 3 => "DH_anon_512",
        DhAnon768 = 4 => "DH_anon_768",
        RsaAnon = 5 => "RSA_anon",
        RsaAnon512 = 6 => "RSA_anon_512",
        RsaAnon768 = 7 => "RSA_anon_768",
        Rsa = 8 => "RSA",
        Rsa512 = 9 => "RSA_512",
        Rsa768 = 10 => "RSA_768",
        EcdhAnon = 11 => "ECDH_anon",
        EcdhAnon113 = 12 => "ECDH_anon_113",
        EcdhAnon131 = 13 => "ECDH_anon_131",
        EcdhEcdsa = 14 => "ECDH_ECDSA",
        EcdhAnonUncomp = 15 => "ECDH_anon_uncomp",
        EcdhAnonUncomp113 = 16 => "ECDH_anon_uncomp_113",
        EcdhAnonUncomp131 = 17 => "ECDH_anon_uncomp_131",
        EcdhEcdsaUncomp = 18 => "ECDH_ECDSA_uncomp",
    }
}

impl KeyExchangeSuite {
    /// RSA family: the client encrypts a 20-byte secret under the server's RSA key.
    pub fn is_rsa(self) -> bool {
        matches!(
            self,
            Self::Rsa
                | Self::Rsa512
                | Self::Rsa768
                | Self::RsaAnon
                | Self::RsaAnon512
                | Self::RsaAnon768
        )
    }

    /// Elliptic-curve Diffie-Hellman family.
    pub fn is_ecdh(self) -> bool {
        matches!(
            self,
            Self::EcdhAnon
                | Self::EcdhAnon113
                | Self::EcdhAnon131
                | Self::EcdhEcdsa
                | Self::EcdhAnonUncomp
                | Self::EcdhAnonUncomp113
                | Self::EcdhAnonUncomp131
                | Self::EcdhEcdsaUncomp
        )
    }

    /// Anonymous suites: the server's key travels in ServerKeyExchange, unauthenticated.
    pub fn is_anonymous(self) -> bool {
        matches!(
            self,
            Self::DhAnon
                | Self::DhAnon512
                | Self::DhAnon768
                | Self::RsaAnon
                | Self::RsaAnon512
                | Self::RsaAnon768
                | Self::EcdhAnon
                | Self::EcdhAnon113
                | Self::EcdhAnon131
                | Self::EcdhAnonUncomp
                | Self::EcdhAnonUncomp113
                | Self::EcdhAnonUncomp131
        )
    }

    /// Suites whose server key is certified (the server sends a Certificate).
    pub fn is_certified(self) -> bool {
        matches!(
            self,
            Self::Rsa | Self::Rsa512 | Self::Rsa768 | Self::EcdhEcdsa | Self::EcdhEcdsaUncomp
        )
    }

    /// The suite with its point format set aside: an `_uncomp` suite (15-18) as its
    /// plain twin (11-14). The engine negotiates on this; the format is a wire detail.
    pub fn base(self) -> Self {
        match self {
            Self::EcdhAnonUncomp => Self::EcdhAnon,
            Self::EcdhAnonUncomp113 => Self::EcdhAnon113,
            Self::EcdhAnonUncomp131 => Self::EcdhAnon131,
            Self::EcdhEcdsaUncomp => Self::EcdhEcdsa,
            other => other,
        }
    }

    /// The `_uncomp` twin (15-18) of an EC suite 11-14; other suites are their own.
    pub fn uncompressed(self) -> Self {
        match self {
            Self::EcdhAnon => Self::EcdhAnonUncomp,
            Self::EcdhAnon113 => Self::EcdhAnonUncomp113,
            Self::EcdhAnon131 => Self::EcdhAnonUncomp131,
            Self::EcdhEcdsa => Self::EcdhEcdsaUncomp,
            other => other,
        }
    }

    /// Upper bound on the key size in bits that the suite permits, if it sets one.
    pub fn key_size_limit_bits(self) -> Option<u32> {
        match self {
            Self::DhAnon512 | Self::RsaAnon512 | Self::Rsa512 => Some(512),
            Self::DhAnon768 | Self::RsaAnon768 | Self::Rsa768 => Some(768),
            Self::EcdhAnon113 | Self::EcdhAnonUncomp113 => Some(113),
            Self::EcdhAnon131 | Self::EcdhAnonUncomp131 => Some(131),
            _ => None,
        }
    }
}

code_points! {
    /// Bulk cipher algorithm (§5.2). `Aes128Cbc` is this project's extension (see
    /// docs/protocol.md): the studies measured AES, WTLS 1.0 never assigned it a code.
    BulkCipherAlgorithm, "CipherSuite.bulk_cipher_algorithm" {
        Null = 0 => "NULL",
        Rc5Cbc40 = 1 => "RC5_CBC_40",
        Rc5Cbc56 = 2 => "RC5_CBC_56",
        Rc5Cbc = 3 => "RC5_CBC",
        DesCbc40 = 4 => "DES_CBC_40",
        DesCbc = 5 => "DES_CBC",
        TripleDesCbcEde = 6 => "3DES_CBC_EDE",
        IdeaCbc40 = 7 => "IDEA_CBC_40",
        IdeaCbc56 = 8 => "IDEA_CBC_56",
        IdeaCbc = 9 => "IDEA_CBC",
        Rc5Cbc64 = 10 => "RC5_CBC_64",
        IdeaCbc64 = 11 => "IDEA_CBC_64",
        /// Private-use code point chosen by wtlsperf (documented in docs/protocol.md).
        Aes128Cbc = 0xFE => "AES_128_CBC",
    }
}

impl BulkCipherAlgorithm {
    /// Whether WTLS 1.0 (WAP-261) assigns this cipher its code point; `false` for the
    /// project's private-use AES, which a report must not present as a WTLS cipher.
    pub fn is_assigned_by_wtls(self) -> bool {
        self != BulkCipherAlgorithm::Aes128Cbc
    }
}

code_points! {
    /// MAC algorithm (§5.3).
    MacAlgorithm, "CipherSuite.mac_algorithm" {
        Sha0 = 0 => "SHA_0",
        Sha40 = 1 => "SHA_40",
        Sha80 = 2 => "SHA_80",
        Sha = 3 => "SHA",
        ShaXor40 = 4 => "SHA_XOR_40",
        Md5_40 = 5 => "MD5_40",
        Md5_80 = 6 => "MD5_80",
        Md5 = 7 => "MD5",
    }
}

code_points! {
    CompressionMethod, "compression_method" {
        Null = 0 => "null",
    }
}

code_points! {
    /// How sequence numbers travel (§3.4).
    SequenceNumberMode, "sequence_number_mode" {
        Off = 0 => "off",
        Implicit = 1 => "implicit",
        Explicit = 2 => "explicit",
    }
}

code_points! {
    /// Identifier type (§4.3).
    IdentifierType, "Identifier.identifier_type" {
        Null = 0 => "null",
        Text = 1 => "text",
        Binary = 2 => "binary",
        KeyHashSha = 254 => "key_hash_sha",
        X509Name = 255 => "x509_name",
    }
}

code_points! {
    /// Certificate format in a Certificate message (§3.6).
    CertificateFormat, "Certificate.certificate_format" {
        Wtls = 1 => "WTLSCert",
        X509 = 2 => "X509Cert",
        X968 = 3 => "X968Cert",
        Url = 4 => "CertURL",
    }
}

code_points! {
    /// Signature algorithm (§4.5, §6).
    SignatureAlgorithm, "signature_algorithm" {
        Anonymous = 0 => "anonymous",
        EcdsaSha = 1 => "ecdsa_sha",
        RsaSha = 2 => "rsa_sha",
    }
}

code_points! {
    /// Public key type in a WTLS certificate (§5.4).
    PublicKeyType, "public_key_type" {
        Rsa = 2 => "rsa",
        Ecdh = 3 => "ecdh",
        Ecdsa = 4 => "ecdsa",
    }
}

code_points! {
    /// Alert level (§8.2).
    AlertLevel, "Alert.level" {
        Warning = 1 => "warning",
        Critical = 2 => "critical",
        Fatal = 3 => "fatal",
    }
}

code_points! {
    /// Alert description (§8.2).
    AlertDescription, "Alert.description" {
        ConnectionCloseNotify = 0 => "connection_close_notify",
        SessionCloseNotify = 1 => "session_close_notify",
        NoConnection = 5 => "no_connection",
        UnexpectedMessage = 10 => "unexpected_message",
        TimeRequired = 11 => "time_required",
        BadRecordMac = 20 => "bad_record_mac",
        DecryptionFailed = 21 => "decryption_failed",
        RecordOverflow = 22 => "record_overflow",
        DecompressionFailure = 30 => "decompression_failure",
        HandshakeFailure = 40 => "handshake_failure",
        BadCertificate = 42 => "bad_certificate",
        UnsupportedCertificate = 43 => "unsupported_certificate",
        CertificateRevoked = 44 => "certificate_revoked",
        CertificateExpired = 45 => "certificate_expired",
        CertificateUnknown = 46 => "certificate_unknown",
        IllegalParameter = 47 => "illegal_parameter",
        UnknownCa = 48 => "unknown_ca",
        AccessDenied = 49 => "access_denied",
        DecodeError = 50 => "decode_error",
        DecryptError = 51 => "decrypt_error",
        UnknownKeyId = 52 => "unknown_key_id",
        DisabledKeyId = 53 => "disabled_key_id",
        KeyExchangeDisabled = 54 => "key_exchange_disabled",
        SessionNotReady = 55 => "session_not_ready",
        UnknownParameterIndex = 56 => "unknown_parameter_index",
        DuplicateFinishedReceived = 57 => "duplicate_finished_received",
        ExportRestriction = 60 => "export_restriction",
        ProtocolVersion = 70 => "protocol_version",
        InsufficientSecurity = 71 => "insufficient_security",
        InternalError = 80 => "internal_error",
        UserCanceled = 90 => "user_canceled",
        NoRenegotiation = 100 => "no_renegotiation",
    }
}

impl AlertDescription {
    /// Alerts that may travel in clear text even after ChangeCipherSpec, because the
    /// peer may be unable to decrypt (§2.4).
    pub fn may_be_sent_in_clear(self) -> bool {
        matches!(
            self,
            Self::NoConnection
                | Self::BadRecordMac
                | Self::DecryptionFailed
                | Self::RecordOverflow
                | Self::DecompressionFailure
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_point_round_trips() {
        for s in KeyExchangeSuite::ALL {
            assert_eq!(KeyExchangeSuite::from_u8(s.to_u8()).unwrap(), *s);
        }
        for a in AlertDescription::ALL {
            assert_eq!(AlertDescription::read_exact(&[a.to_u8()], "t").unwrap(), *a);
        }
        assert_eq!(KeyExchangeSuite::ALL.len(), 19);
        assert_eq!(BulkCipherAlgorithm::ALL.len(), 13);
        assert_eq!(MacAlgorithm::ALL.len(), 8);
    }

    #[test]
    fn unknown_values_name_their_field() {
        let err = ContentType::from_u8(9).unwrap_err();
        assert_eq!(err.field(), "Record.content_type");
        assert_eq!(err.alert(), AlertDescription::IllegalParameter);
    }
}
