use super::*;
use crate::crypto::pk::tests::keys;
use crate::msgs::certificate::PublicKey;

const NOW: u32 = 1_700_000_000;
const N: ParameterNumbering = ParameterNumbering::Wap261;
const NB: u32 = NOW - 3600;
const NA: u32 = NOW + 2 * 365 * 86400;

fn root(spec: Specifier) -> Authority {
    let (ca_key, _) = keys(spec);
    Authority::from_key(ca_key.clone(), &Authority::default_name(spec), NB, NA).unwrap()
}

fn server_id() -> Identifier {
    Identifier::text(SERVER_SUBJECT)
}

#[test]
fn rsa_keys_carry_index_0_and_the_thesis_profile_keeps_its_numbers() {
    let (ca_key, leaf_key) = keys(Specifier::Rsa1024);
    let wap = Authority::from_key(ca_key.clone(), "wap", NB, NA).unwrap();
    let cert = wap.issue(SERVER_SUBJECT, leaf_key, NB, NA).unwrap();
    assert_eq!(cert.tbs.parameters, ParameterSpecifier::Index(0));
    let key = validate(&cert, &wap.cert, None, NOW, N).unwrap();
    assert_eq!(key.spec(), Specifier::Rsa1024);
    // Index 0 is read under the thesis numbering too.
    validate(&cert, &wap.cert, None, NOW, ParameterNumbering::Thesis).unwrap();

    let thesis = ParameterNumbering::Thesis;
    let old = Authority::from_key_numbered(ca_key.clone(), "old", NB, NA, thesis).unwrap();
    let cert = old.issue(SERVER_SUBJECT, leaf_key, NB, NA).unwrap();
    assert_eq!(cert.tbs.parameters, ParameterSpecifier::Index(20));
    validate(&cert, &old.cert, None, NOW, thesis).unwrap();
    // The thesis' RSA label is refused under WAP-261.
    let err = validate(&cert, &old.cert, None, NOW, N).unwrap_err();
    let CertError::BadAuthority {
        defect: AuthorityDefect::Certificate(inner),
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert!(
        matches!(
            **inner,
            CertError::UnsupportedParameters(ParameterDefect::Unnamed(
                ParameterError::UnknownIndex { index: 20, .. }
            ))
        ),
        "{err}"
    );
}

#[test]
fn every_case_issues_and_validates() {
    for case in crate::suite::Case::ALL {
        let ca = root(case.ca);
        let (_, leaf_key) = keys(case.leaf);
        let cert = ca.issue(SERVER_SUBJECT, leaf_key, NB, NA).unwrap();
        // The wire form reads back to the same certificate.
        let bytes = cert.to_bytes();
        let back = WtlsCertificate::read_exact(&bytes, "t").unwrap();
        assert_eq!(back, cert);
        let key = validate(&back, &ca.cert, Some(&server_id()), NOW, N)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(key, leaf_key.public_key().unwrap());
        assert_eq!(back.tbs.parameters, case.leaf.parameter_specifier(N));
        let expected_type = if case.leaf.is_rsa() {
            PublicKeyType::Rsa
        } else {
            PublicKeyType::Ecdh
        };
        assert_eq!(back.tbs.public_key_type, expected_type);
        assert_eq!(
            back.tbs.signature_algorithm,
            pk::signature_algorithm(case.ca)
        );
    }
}

#[test]
fn root_certificates_are_self_signed_with_the_right_types() {
    let ec = root(Specifier::Nist283r);
    assert_eq!(ec.cert.tbs.public_key_type, PublicKeyType::Ecdsa);
    assert_eq!(
        ec.cert.tbs.signature_algorithm,
        SignatureAlgorithm::EcdsaSha
    );
    assert_eq!(ec.cert.tbs.issuer, Identifier::text("wtlsperf CA 283r"));
    validate(&ec.cert, &ec.cert, None, NOW, N).unwrap();
    let rsa = root(Specifier::Rsa2048);
    assert_eq!(rsa.cert.tbs.public_key_type, PublicKeyType::Rsa);
    assert_eq!(rsa.cert.tbs.signature_algorithm, SignatureAlgorithm::RsaSha);
    let mut store = TrustStore::new();
    store.add(ec.cert.clone()).unwrap();
    store.add(rsa.cert.clone()).unwrap();
    assert_eq!(store.len(), 2);
    assert_eq!(
        store.find_issuer(&Identifier::text("wtlsperf CA rsa2048")),
        Some(&rsa.cert)
    );
    // Reassembling an authority from its parts checks the key matches.
    let again = Authority::from_parts(ec.key.clone(), ec.cert.clone(), N).unwrap();
    assert_eq!(again.name, "wtlsperf CA 283r");
    let wrong = Authority::from_parts(keys(Specifier::Nist283r).1.clone(), ec.cert.clone(), N);
    assert!(matches!(
        wrong,
        Err(CertError::BadAuthority {
            defect: AuthorityDefect::KeyMismatch,
            ..
        })
    ));
}

#[test]
fn each_check_fails_with_its_own_alert() {
    let ca = root(Specifier::Nist256p);
    let (_, leaf_key) = keys(Specifier::Nist224p);
    let good = ca.issue(SERVER_SUBJECT, leaf_key, NB, NA).unwrap();
    let alert = |r: Result<PeerKey, CertError>| r.unwrap_err().alert();

    // Validity window, both ends inclusive.
    assert!(validate(&good, &ca.cert, None, NB, N).is_ok());
    assert!(validate(&good, &ca.cert, None, NA, N).is_ok());
    assert_eq!(
        alert(validate(&good, &ca.cert, None, NA + 1, N)),
        AlertDescription::CertificateExpired
    );
    assert!(matches!(
        validate(&good, &ca.cert, None, NB - 1, N),
        Err(CertError::NotYetValid { .. })
    ));
    assert_eq!(
        alert(validate(&good, &ca.cert, None, NB - 1, N)),
        AlertDescription::BadCertificate
    );

    // Subject.
    let client = Identifier::text(CLIENT_SUBJECT);
    assert!(matches!(
        validate(&good, &ca.cert, Some(&client), NOW, N),
        Err(CertError::SubjectMismatch { .. })
    ));

    // Issuer: another CA.
    let other = root(Specifier::Nist283k);
    assert_eq!(
        alert(validate(&good, &other.cert, None, NOW, N)),
        AlertDescription::UnknownCa
    );

    // A changed field breaks the signature.
    let mut forged = good.clone();
    forged.tbs.valid_not_after += 1;
    assert!(matches!(
        validate(&forged, &ca.cert, None, NOW, N),
        Err(CertError::BadSignature { .. })
    ));
    assert_eq!(
        alert(validate(&forged, &ca.cert, None, NOW, N)),
        AlertDescription::BadCertificate
    );

    // A same-named CA with another key: issuer matches, signature does not.
    let impostor = Authority::from_key(
        keys(Specifier::Nist256p).1.clone(),
        &Authority::default_name(Specifier::Nist256p),
        NB,
        NA,
    )
    .unwrap();
    let by_impostor = impostor.issue(SERVER_SUBJECT, leaf_key, NB, NA).unwrap();
    assert_eq!(
        alert(validate(&by_impostor, &ca.cert, None, NOW, N)),
        AlertDescription::BadCertificate
    );

    // Algorithm that the CA key cannot produce.
    let mut wrong_alg = good.clone();
    wrong_alg.tbs.signature_algorithm = SignatureAlgorithm::RsaSha;
    assert!(matches!(
        validate(&wrong_alg, &ca.cert, None, NOW, N),
        Err(CertError::SignatureAlgorithmMismatch { .. })
    ));

    // Version.
    let mut v2 = good.clone();
    v2.tbs.version = 2;
    assert_eq!(
        alert(validate(&v2, &ca.cert, None, NOW, N)),
        AlertDescription::UnsupportedCertificate
    );
}

#[test]
fn keys_off_their_named_curve_are_unsupported() {
    let ca = root(Specifier::Nist256p);
    let (_, leaf_key) = keys(Specifier::Nist224p);
    let sign_as = |edit: &dyn Fn(&mut ToBeSignedCertificate)| {
        let mut cert = ca.issue(SERVER_SUBJECT, leaf_key, NB, NA).unwrap();
        edit(&mut cert.tbs);
        sign(&ca.key, cert.tbs).unwrap()
    };
    // A P-224 point announced as P-256 (validly signed): not on that curve.
    let wrong_curve = sign_as(&|t| t.parameters = Specifier::Nist256p.parameter_specifier(N));
    let err = validate(&wrong_curve, &ca.cert, None, NOW, N).unwrap_err();
    assert!(matches!(err, CertError::BadPublicKey { .. }), "{err}");
    assert_eq!(err.alert(), AlertDescription::UnsupportedCertificate);
    // Unknown index, explicit parameters, rsa type on a curve index.
    let unknown = sign_as(&|t| t.parameters = ParameterSpecifier::Index(4));
    assert!(matches!(
        validate(&unknown, &ca.cert, None, NOW, N),
        Err(CertError::UnsupportedParameters(ParameterDefect::Unnamed(
            ParameterError::UnknownIndex { index: 4, .. }
        )))
    ));
    let explicit = sign_as(&|t| {
        t.parameters = ParameterSpecifier::Set(crate::msgs::common::ParameterSet(vec![]))
    });
    assert_eq!(
        validate(&explicit, &ca.cert, None, NOW, N)
            .unwrap_err()
            .alert(),
        AlertDescription::UnsupportedCertificate
    );
    let (_, rsa_key) = keys(Specifier::Rsa1024);
    let rsa_on_curve = sign_as(&|t| {
        t.public_key_type = PublicKeyType::Rsa;
        t.public_key = rsa_key.public_wire().unwrap();
    });
    assert!(matches!(
        validate(&rsa_on_curve, &ca.cert, None, NOW, N),
        Err(CertError::KeyTypeMismatch { .. })
    ));
    // An EC point that is not on the curve at all.
    let off_curve = sign_as(&|t| {
        if let PublicKey::Ec(p) = &mut t.public_key {
            *p.0.last_mut().unwrap() ^= 1;
        }
    });
    assert!(matches!(
        validate(&off_curve, &ca.cert, None, NOW, N),
        Err(CertError::BadPublicKey { .. })
    ));
}

#[test]
fn trust_store_picks_the_issuer_or_answers_unknown_ca() {
    let mut store = TrustStore::new();
    let cas: Vec<Authority> = [Specifier::Wtls7_160, Specifier::Rsa1024]
        .into_iter()
        .map(root)
        .collect();
    for ca in &cas {
        store.add(ca.cert.clone()).unwrap();
    }
    for ca in &cas {
        let (_, leaf) = keys(ca.spec);
        let cert = ca.issue(CLIENT_SUBJECT, leaf, NB, NA).unwrap();
        let key = store
            .validate_chain(&cert, Some(&Identifier::text(CLIENT_SUBJECT)), NOW)
            .unwrap();
        assert_eq!(key.spec(), ca.spec);
    }
    let stranger = root(Specifier::Nist163k);
    let (_, leaf) = keys(Specifier::Nist163k);
    let cert = stranger.issue(SERVER_SUBJECT, leaf, NB, NA).unwrap();
    let err = store.validate_chain(&cert, None, NOW).unwrap_err();
    assert_eq!(err.alert(), AlertDescription::UnknownCa);
    assert_eq!(store.identifiers().count(), 2);

    // A corrupted CA certificate is refused when added.
    let mut broken = cas[0].cert.clone();
    broken.signature[4] ^= 0x40;
    assert!(matches!(
        TrustStore::new().add(broken),
        Err(CertError::BadAuthority {
            defect: AuthorityDefect::Certificate(inner),
            ..
        }) if matches!(*inner, CertError::BadSignature { .. })
    ));
}

#[test]
fn identifiers_describe_readably() {
    assert_eq!(describe(&Identifier::text("x")), "\"x\"");
    assert_eq!(describe(&Identifier::Binary(vec![1, 0xab])), "binary:01ab");
    assert_eq!(describe(&Identifier::Null), "(null identifier)");
}
