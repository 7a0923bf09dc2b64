//! Property tests of the WTLS wire codec: every structure round-trips through its
//! encoding, no reader panics on arbitrary or corrupted bytes, and cutting a valid
//! encoding short is always an error.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use wtls::codec::{Codec, DecodeError, Reader};
use wtls::msgs::enums::{
    AlertDescription, AlertLevel, BulkCipherAlgorithm, CompressionMethod, ContentType,
    KeyExchangeSuite, MacAlgorithm, PublicKeyType, SequenceNumberMode, SignatureAlgorithm,
};
use wtls::msgs::*;

// ---------------------------------------------------------------- strategies

fn bytes(min: usize, max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), min..=max)
}

fn random() -> impl Strategy<Value = Random> {
    any::<[u8; 16]>().prop_map(Random)
}

fn session_id() -> impl Strategy<Value = SessionId> {
    bytes(0, 8).prop_map(|b| SessionId::new(&b).unwrap())
}

fn identifier() -> impl Strategy<Value = Identifier> {
    prop_oneof![
        Just(Identifier::Null),
        (any::<u16>(), bytes(0, 255)).prop_map(|(character_set, name)| Identifier::Text {
            character_set,
            name
        }),
        bytes(0, 255).prop_map(Identifier::Binary),
        any::<[u8; 20]>().prop_map(Identifier::KeyHashSha),
        bytes(0, 255).prop_map(Identifier::X509Name),
    ]
}

fn ec_basis() -> impl Strategy<Value = EcBasis> {
    prop_oneof![
        Just(EcBasis::Onb),
        any::<u16>().prop_map(|k| EcBasis::Trinomial { k }),
        any::<(u16, u16, u16)>().prop_map(|(k1, k2, k3)| EcBasis::Pentanomial { k1, k2, k3 }),
        bytes(1, 40).prop_map(|irreducible| EcBasis::Polynomial { irreducible }),
    ]
}

fn ec_parameters() -> impl Strategy<Value = EcParameters> {
    let field = prop_oneof![
        bytes(1, 40).prop_map(|p| EcField::Prime { p }),
        (any::<u16>(), ec_basis()).prop_map(|(m, basis)| EcField::CharacteristicTwo { m, basis }),
    ];
    (
        field,
        bytes(0, 40),
        bytes(0, 40),
        bytes(0, 40),
        bytes(1, 80),
        bytes(1, 40),
        bytes(1, 4),
    )
        .prop_map(|(field, a, b, seed, base, order, cofactor)| EcParameters {
            field,
            a,
            b,
            seed,
            base,
            order,
            cofactor,
        })
}

fn dh_parameters() -> impl Strategy<Value = DhParameters> {
    (any::<u8>(), bytes(1, 300), bytes(1, 8)).prop_map(|(dh_e, p, g)| DhParameters { dh_e, p, g })
}

fn parameter_specifier() -> impl Strategy<Value = ParameterSpecifier> {
    prop_oneof![
        (0u8..=254).prop_map(ParameterSpecifier::Index),
        bytes(0, 64).prop_map(|b| ParameterSpecifier::Set(ParameterSet(b))),
        ec_parameters().prop_map(|p| ParameterSpecifier::Set(ParameterSet::from(&p))),
        dh_parameters().prop_map(|p| ParameterSpecifier::Set(ParameterSet::from(&p))),
    ]
}

fn suite() -> impl Strategy<Value = KeyExchangeSuite> + Clone {
    select(KeyExchangeSuite::ALL)
}

fn key_exchange_id() -> impl Strategy<Value = KeyExchangeId> {
    (suite(), parameter_specifier(), identifier()).prop_map(|(suite, parameters, identifier)| {
        KeyExchangeId {
            suite,
            parameters,
            identifier,
        }
    })
}

fn rsa_key() -> impl Strategy<Value = RsaPublicKey> {
    (bytes(1, 4), bytes(1, 400)).prop_map(|(exponent, modulus)| RsaPublicKey { exponent, modulus })
}

fn ec_key() -> impl Strategy<Value = EcPublicKey> {
    bytes(1, 255).prop_map(EcPublicKey)
}

fn dh_key() -> impl Strategy<Value = DhPublicKey> {
    bytes(1, 300).prop_map(DhPublicKey)
}

fn cipher_suite() -> impl Strategy<Value = CipherSuite> {
    (select(BulkCipherAlgorithm::ALL), select(MacAlgorithm::ALL))
        .prop_map(|(bulk, mac)| CipherSuite { bulk, mac })
}

fn tbs_certificate() -> impl Strategy<Value = ToBeSignedCertificate> {
    let key = prop_oneof![
        rsa_key().prop_map(|k| (PublicKeyType::Rsa, PublicKey::Rsa(k))),
        ec_key().prop_map(|k| (PublicKeyType::Ecdh, PublicKey::Ec(k))),
        ec_key().prop_map(|k| (PublicKeyType::Ecdsa, PublicKey::Ec(k))),
    ];
    (
        select(SignatureAlgorithm::ALL),
        identifier(),
        any::<(u32, u32)>(),
        identifier(),
        parameter_specifier(),
        key,
    )
        .prop_map(
            |(signature_algorithm, issuer, (nb, na), subject, parameters, (typ, public_key))| {
                ToBeSignedCertificate {
                    version: 1,
                    signature_algorithm,
                    issuer,
                    valid_not_before: nb,
                    valid_not_after: na,
                    subject,
                    public_key_type: typ,
                    parameters,
                    public_key,
                }
            },
        )
}

fn wtls_certificate() -> impl Strategy<Value = WtlsCertificate> {
    (tbs_certificate(), bytes(1, 400)).prop_map(|(tbs, sig)| {
        let signature = match tbs.signature_algorithm {
            SignatureAlgorithm::Anonymous => Vec::new(),
            _ => sig,
        };
        WtlsCertificate { tbs, signature }
    })
}

fn certificate_entry() -> impl Strategy<Value = CertificateEntry> {
    prop_oneof![
        wtls_certificate().prop_map(CertificateEntry::Wtls),
        bytes(1, 300).prop_map(CertificateEntry::X509),
        bytes(1, 300).prop_map(CertificateEntry::X968),
        bytes(1, 255).prop_map(CertificateEntry::Url),
    ]
}

fn certificate_chain() -> impl Strategy<Value = CertificateChain> {
    vec(certificate_entry(), 0..4).prop_map(CertificateChain)
}

fn client_hello() -> impl Strategy<Value = ClientHello> {
    (
        any::<u8>(),
        random(),
        session_id(),
        vec(key_exchange_id(), 0..4),
        vec(key_exchange_id(), 0..4),
        vec(cipher_suite(), 1..=127),
        1usize..=5,
        select(SequenceNumberMode::ALL),
        any::<u8>(),
    )
        .prop_map(
            |(v, random, session_id, ck, tk, cs, ncomp, mode, key_refresh)| ClientHello {
                client_version: v,
                random,
                session_id,
                client_key_ids: ck,
                trusted_key_ids: tk,
                cipher_suites: cs,
                compression_methods: vec![CompressionMethod::Null; ncomp],
                sequence_number_mode: mode,
                key_refresh,
            },
        )
}

fn server_hello() -> impl Strategy<Value = ServerHello> {
    (
        any::<u8>(),
        random(),
        session_id(),
        any::<u8>(),
        cipher_suite(),
        select(SequenceNumberMode::ALL),
        any::<u8>(),
    )
        .prop_map(|(v, random, session_id, id, cs, mode, kr)| ServerHello {
            server_version: v,
            random,
            session_id,
            client_key_id: id,
            cipher_suite: cs,
            compression_method: CompressionMethod::Null,
            sequence_number_mode: mode,
            key_refresh: kr,
        })
}

fn rsa_suite() -> impl Strategy<Value = KeyExchangeSuite> {
    select(
        KeyExchangeSuite::ALL
            .iter()
            .copied()
            .filter(|s| s.is_rsa())
            .collect::<Vec<_>>(),
    )
}

fn ecdh_suite() -> impl Strategy<Value = KeyExchangeSuite> {
    select(
        KeyExchangeSuite::ALL
            .iter()
            .copied()
            .filter(|s| s.is_ecdh())
            .collect::<Vec<_>>(),
    )
}

fn dh_suite() -> impl Strategy<Value = KeyExchangeSuite> {
    select(vec![
        KeyExchangeSuite::DhAnon,
        KeyExchangeSuite::DhAnon512,
        KeyExchangeSuite::DhAnon768,
    ])
}

/// A ServerKeyExchange together with a suite under which it reads back.
fn server_key_exchange() -> impl Strategy<Value = (KeyExchangeSuite, ServerKeyExchange)> {
    let keyed = prop_oneof![
        (rsa_suite(), rsa_key().prop_map(ServerKeyExchangeKey::Rsa)),
        (dh_suite(), dh_key().prop_map(ServerKeyExchangeKey::Dh)),
        (ecdh_suite(), ec_key().prop_map(ServerKeyExchangeKey::Ec)),
    ];
    (keyed, parameter_specifier())
        .prop_map(|((suite, key), parameters)| (suite, ServerKeyExchange { parameters, key }))
}

/// A ClientKeyExchange together with a suite under which it reads back.
fn client_key_exchange() -> impl Strategy<Value = (KeyExchangeSuite, ClientKeyExchange)> {
    prop_oneof![
        (rsa_suite(), bytes(1, 400).prop_map(ClientKeyExchange::Rsa)),
        (dh_suite(), bytes(1, 300).prop_map(ClientKeyExchange::Dh)),
        (ecdh_suite(), ec_key().prop_map(ClientKeyExchange::Ec)),
    ]
}

/// Any handshake message with the context it needs to be read back.
fn handshake_message() -> impl Strategy<Value = (Option<KeyExchangeSuite>, HandshakeMessage)> {
    let any_ctx = proptest::option::of(suite());
    prop_oneof![
        (any_ctx.clone(), Just(HandshakeMessage::HelloRequest)),
        (
            any_ctx.clone(),
            client_hello().prop_map(HandshakeMessage::ClientHello)
        ),
        (
            any_ctx.clone(),
            server_hello().prop_map(HandshakeMessage::ServerHello)
        ),
        (
            any_ctx.clone(),
            certificate_chain().prop_map(HandshakeMessage::Certificate)
        ),
        server_key_exchange().prop_map(|(s, m)| (Some(s), HandshakeMessage::ServerKeyExchange(m))),
        (
            any_ctx.clone(),
            vec(key_exchange_id(), 0..4).prop_map(|t| HandshakeMessage::CertificateRequest(
                CertificateRequest {
                    trusted_authorities: t
                }
            ))
        ),
        (any_ctx.clone(), Just(HandshakeMessage::ServerHelloDone)),
        (
            any_ctx.clone(),
            bytes(1, 300).prop_map(|signature| HandshakeMessage::CertificateVerify(
                CertificateVerify { signature }
            ))
        ),
        client_key_exchange().prop_map(|(s, m)| (Some(s), HandshakeMessage::ClientKeyExchange(m))),
        (
            any_ctx,
            any::<[u8; 12]>().prop_map(|v| HandshakeMessage::Finished(Finished {
                verify_data: VerifyData::new(v)
            }))
        ),
    ]
}

fn alert() -> impl Strategy<Value = Alert> {
    (
        select(AlertLevel::ALL),
        select(AlertDescription::ALL),
        any::<[u8; 4]>(),
    )
        .prop_map(|(level, description, checksum)| Alert {
            level,
            description,
            checksum,
        })
}

fn record(length_present: bool) -> impl Strategy<Value = OwnedRecord> {
    (
        proptest::option::of(any::<u16>()),
        any::<bool>(),
        select(ContentType::ALL),
        bytes(0, 120),
    )
        .prop_map(
            move |(sequence, cipher_spec, content_type, fragment)| OwnedRecord {
                header: RecordHeader {
                    length_present,
                    sequence,
                    cipher_spec,
                    content_type,
                },
                fragment,
            },
        )
}

/// A datagram: records with L, then a last record with or without L.
fn datagram() -> impl Strategy<Value = Vec<OwnedRecord>> {
    (vec(record(true), 0..4), any::<bool>().prop_flat_map(record)).prop_map(
        |(mut records, last)| {
            records.push(last);
            records
        },
    )
}

// ---------------------------------------------------------------- helpers

/// Encode, read back exactly, compare, and check that every strict prefix is an error.
fn round_trip_and_truncate<T: Codec + PartialEq + std::fmt::Debug>(
    value: &T,
) -> Result<(), TestCaseError> {
    let bytes = value.to_bytes();
    prop_assert_eq!(&T::read_exact(&bytes, "t").map_err(fail)?, value);
    for cut in 0..bytes.len() {
        prop_assert!(
            T::read_exact(&bytes[..cut], "t").is_err(),
            "prefix of {} bytes accepted",
            cut
        );
    }
    Ok(())
}

/// Turn a decode error into a test failure that names the field.
fn fail(e: DecodeError) -> TestCaseError {
    TestCaseError::fail(format!("decode error: {e}"))
}

fn every_ctx() -> impl Iterator<Item = Option<KeyExchangeSuite>> {
    std::iter::once(None).chain(KeyExchangeSuite::ALL.iter().copied().map(Some))
}

/// Run every reader over `data`; the only requirement is that none panics.
fn read_everything(data: &[u8]) {
    let _ = Random::read_exact(data, "t");
    let _ = SessionId::read_exact(data, "t");
    let _ = Identifier::read_exact(data, "t");
    let _ = ParameterSpecifier::read_exact(data, "t");
    let _ = ParameterSet(data.to_vec()).ec_parameters();
    let _ = ParameterSet(data.to_vec()).dh_parameters();
    let _ = KeyExchangeId::read_exact(data, "t");
    let _ = RsaPublicKey::read_exact(data, "t");
    let _ = EcPublicKey::read_exact(data, "t");
    let _ = DhPublicKey::read_exact(data, "t");
    let _ = CipherSuite::read_exact(data, "t");
    let _ = ToBeSignedCertificate::read_exact(data, "t");
    let _ = WtlsCertificate::read_exact(data, "t");
    let _ = CertificateEntry::read_exact(data, "t");
    let _ = CertificateChain::read_exact(data, "t");
    let _ = ClientHello::read_exact(data, "t");
    let _ = ServerHello::read_exact(data, "t");
    let _ = CertificateRequest::read_exact(data, "t");
    let _ = CertificateVerify::read_exact(data, "t");
    let _ = Finished::read_exact(data, "t");
    let _ = HandshakeHeader::read_exact(data, "t");
    let _ = split_handshake_record(data);
    let _ = Alert::read_exact(data, "t");
    let _ = ChangeCipherSpec::read_exact(data, "t");
    let _ = parse_datagram(data);
    if let Some(b) = data.first() {
        let _ = RecordHeader::from_byte(*b);
    }
    for ctx in every_ctx() {
        let _ = HandshakeMessage::read(&mut Reader::new(data), ctx);
        let _ = HandshakeMessage::read_record(data, ctx);
        if let Some(suite) = ctx {
            let _ = ServerKeyExchange::read_for(&mut Reader::new(data), suite);
            let _ = ClientKeyExchange::read_for(&mut Reader::new(data), suite);
        }
    }
}

// ---------------------------------------------------------------- properties

proptest! {
    #[test]
    fn common_structures_round_trip(
        r in random(),
        s in session_id(),
        id in identifier(),
        ps in parameter_specifier(),
        kid in key_exchange_id(),
        rsa in rsa_key(),
        ec in ec_key(),
        dh in dh_key(),
        cs in cipher_suite(),
    ) {
        round_trip_and_truncate(&r)?;
        round_trip_and_truncate(&s)?;
        round_trip_and_truncate(&id)?;
        round_trip_and_truncate(&ps)?;
        round_trip_and_truncate(&kid)?;
        round_trip_and_truncate(&rsa)?;
        round_trip_and_truncate(&ec)?;
        round_trip_and_truncate(&dh)?;
        round_trip_and_truncate(&cs)?;
    }

    #[test]
    fn explicit_parameters_round_trip(ec in ec_parameters(), dh in dh_parameters()) {
        round_trip_and_truncate(&ec)?;
        round_trip_and_truncate(&dh)?;
        prop_assert_eq!(ParameterSet::from(&ec).ec_parameters().map_err(fail)?, ec);
        prop_assert_eq!(ParameterSet::from(&dh).dh_parameters().map_err(fail)?, dh);
    }

    #[test]
    fn certificates_round_trip(cert in wtls_certificate(), chain in certificate_chain()) {
        round_trip_and_truncate(&cert)?;
        round_trip_and_truncate(&cert.tbs)?;
        let bytes = cert.to_bytes();
        prop_assert!(bytes.starts_with(&cert.tbs_bytes()));
        round_trip_and_truncate(&chain)?;
    }

    #[test]
    fn handshake_bodies_round_trip(ch in client_hello(), sh in server_hello(), a in alert()) {
        round_trip_and_truncate(&ch)?;
        round_trip_and_truncate(&sh)?;
        round_trip_and_truncate(&a)?;
        round_trip_and_truncate(&ChangeCipherSpec)?;
    }

    #[test]
    fn suite_dependent_bodies_round_trip(
        (s1, ske) in server_key_exchange(),
        (s2, cke) in client_key_exchange(),
    ) {
        let mut out = Vec::new();
        ske.encode(&mut out);
        let mut r = Reader::new(&out);
        prop_assert_eq!(&ServerKeyExchange::read_for(&mut r, s1).map_err(fail)?, &ske);
        prop_assert!(r.is_empty());
        for cut in 0..out.len() {
            let mut r = Reader::new(&out[..cut]);
            prop_assert!(ServerKeyExchange::read_for(&mut r, s1).is_err());
        }
        let mut out = Vec::new();
        cke.encode(&mut out);
        let mut r = Reader::new(&out);
        prop_assert_eq!(&ClientKeyExchange::read_for(&mut r, s2).map_err(fail)?, &cke);
        prop_assert!(r.is_empty());
        // A truncated RSA body can pass for a bare ciphertext (both forms are accepted),
        // so only the DH and EC bodies must reject every prefix; the handshake header
        // catches RSA truncation (see handshake_messages_round_trip).
        if !s2.is_rsa() {
            for cut in 0..out.len() {
                let mut r = Reader::new(&out[..cut]);
                let ok = ClientKeyExchange::read_for(&mut r, s2).is_ok() && r.is_empty();
                prop_assert!(!ok, "prefix of {} bytes accepted", cut);
            }
        }
    }

    #[test]
    fn handshake_messages_round_trip((ctx, msg) in handshake_message()) {
        let bytes = msg.to_bytes();
        let (header, body) = split_handshake_record(&bytes).map_err(fail)?;
        prop_assert_eq!(header.typ, msg.typ());
        prop_assert_eq!(usize::from(header.length), body.len());
        prop_assert_eq!(&HandshakeMessage::read_record(&bytes, ctx).map_err(fail)?, &msg);
        let mut r = Reader::new(&bytes);
        prop_assert_eq!(&HandshakeMessage::read(&mut r, ctx).map_err(fail)?, &msg);
        prop_assert!(r.is_empty());
        for cut in 0..bytes.len() {
            prop_assert!(HandshakeMessage::read_record(&bytes[..cut], ctx).is_err());
            let mut r = Reader::new(&bytes[..cut]);
            prop_assert!(HandshakeMessage::read(&mut r, ctx).is_err());
        }
    }

    #[test]
    fn datagrams_round_trip(records in datagram()) {
        let mut dgram = Vec::new();
        records.iter().for_each(|r| r.encode(&mut dgram));
        let parsed = parse_datagram(&dgram).map_err(fail)?;
        prop_assert_eq!(parsed.len(), records.len());
        let mut offset = 0;
        for (p, want) in parsed.iter().zip(&records) {
            prop_assert_eq!(&p.to_owned_record(), want);
            prop_assert_eq!(p.header_byte, want.header.to_byte());
            prop_assert_eq!(p.raw, &dgram[offset..offset + p.raw.len()]);
            prop_assert_eq!(p.raw, &want.to_bytes()[..]);
            offset += p.raw.len();
        }
        prop_assert_eq!(offset, dgram.len());
    }

    #[test]
    fn truncated_records_with_length_are_errors(rec in record(true)) {
        let bytes = rec.to_bytes();
        for cut in 0..bytes.len() {
            prop_assert!(parse_datagram(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in bytes(0, 300)) {
        read_everything(&data);
    }

    #[test]
    fn corrupted_encodings_never_panic(
        (ctx, msg) in handshake_message(),
        at in any::<prop::sample::Index>(),
        value in any::<u8>(),
    ) {
        let mut bytes = msg.to_bytes();
        let i = at.index(bytes.len());
        bytes[i] = value;
        read_everything(&bytes);
        read_everything(&bytes[3..]);
        // Canonical encoding, except that an RSA ClientKeyExchange is accepted without
        // its length prefix and re-encoded with it.
        if let Ok(parsed) = HandshakeMessage::read_record(&bytes, ctx) {
            if !matches!(parsed, HandshakeMessage::ClientKeyExchange(ClientKeyExchange::Rsa(_))) {
                prop_assert_eq!(parsed.to_bytes(), bytes);
            }
        }
    }

    #[test]
    fn corrupted_certificates_never_panic(
        cert in wtls_certificate(),
        at in any::<prop::sample::Index>(),
        value in any::<u8>(),
    ) {
        let mut bytes = cert.to_bytes();
        let i = at.index(bytes.len());
        bytes[i] = value;
        read_everything(&bytes);
        // The encoding is canonical: whatever still parses re-encodes to the same bytes,
        // which is what lets tbs_bytes() stand for the signed bytes as received.
        if let Ok(parsed) = WtlsCertificate::read_exact(&bytes, "t") {
            prop_assert_eq!(parsed.to_bytes(), bytes);
        }
    }
}
