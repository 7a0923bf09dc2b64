use super::*;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use wtls::msgs::common::ParameterSpecifier;
use wtls::msgs::enums::AlertDescription;
use wtls::pki::CertError;

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "wtlsperf-pki-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&path);
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// One complete PKI for the read-only tests (issuing all 24 cases takes seconds).
fn full() -> &'static (TempDir, PkiStore) {
    static FULL: OnceLock<(TempDir, PkiStore)> = OnceLock::new();
    FULL.get_or_init(|| {
        let dir = TempDir::new("full");
        let store = PkiStore::init(&dir.0, false).unwrap();
        (dir, store)
    })
}

fn cheap() -> [Case; 1] {
    [Case::parse("160p/160p").unwrap()]
}

#[test]
fn a_store_keeps_its_numbering_and_renumbers_in_memory() {
    let dir = TempDir::new("numbering");
    let now = unix_now().unwrap();
    let cases = [
        Case::parse("256p/256p").unwrap(),
        Case::parse("rsa1024/rsa1024").unwrap(),
    ];
    let thesis =
        PkiStore::create_numbered(&dir.0, false, now, &cases, ParameterNumbering::Thesis).unwrap();
    // Read back from disk, the manifest says how the certificates were numbered.
    let again = PkiStore::load(&dir.0).unwrap();
    assert_eq!(again.numbering(), ParameterNumbering::Thesis);
    let rsa = again.case(&cases[1]).unwrap();
    assert_eq!(
        rsa.server_cert.tbs.parameters,
        ParameterSpecifier::Index(20)
    );
    // The same keys under WAP-261: RSA index 0, P-256 as explicit parameters.
    let wap = thesis.renumbered(ParameterNumbering::Wap261).unwrap();
    let rsa = wap.case(&cases[1]).unwrap();
    assert_eq!(rsa.server_cert.tbs.parameters, ParameterSpecifier::Index(0));
    assert_eq!(rsa.server_key.spec(), Specifier::Rsa1024);
    let p256 = wap.case(&cases[0]).unwrap();
    assert!(matches!(
        p256.server_cert.tbs.parameters,
        ParameterSpecifier::Set(_)
    ));
    let key = pki::validate(
        &p256.server_cert,
        &p256.ca_cert,
        None,
        now,
        ParameterNumbering::Wap261,
    )
    .unwrap();
    assert_eq!(key, p256.server_key.public_key().unwrap());
}

fn cert_error(err: &anyhow::Error) -> &CertError {
    err.chain()
        .find_map(|e| e.downcast_ref::<CertError>())
        .unwrap_or_else(|| panic!("no certificate error in: {err:#}"))
}

#[test]
fn init_issues_all_24_combinations() {
    let (dir, store) = full();
    assert_eq!(store.cases().count(), 24);
    assert_eq!(store.trust_store().len(), 12);
    for case in Case::ALL {
        let creds = store.case(&case).unwrap();
        assert_eq!(creds.case, case);
        assert_eq!(creds.server_key.spec(), case.leaf);
        assert_eq!(creds.client_key.spec(), case.leaf);
        assert!(dir
            .0
            .join(format!("{}-server.wcert", case_stem(&case)))
            .exists());
    }
    let (nb, na) = store.validity();
    assert_eq!(na - nb, VALIDITY_S + VALID_BEFORE_NOW_S);
    // A second load reads the same PKI.
    let again = PkiStore::load(&dir.0).unwrap();
    assert_eq!(again.manifest, store.manifest);
    let case = Case::parse("rsa3072/rsa2048").unwrap();
    assert_eq!(
        again.case(&case).unwrap().server_cert,
        store.case(&case).unwrap().server_cert
    );
}

#[test]
fn every_leaf_validates_only_under_its_own_ca() {
    let (_, store) = full();
    let now = unix_now().unwrap();
    let cas: Vec<&WtlsCertificate> = store.trust_store().certificates().collect();
    for case in Case::ALL {
        let creds = store.case(&case).unwrap();
        for (cert, subject) in [
            (&creds.server_cert, SERVER_SUBJECT),
            (&creds.client_cert, CLIENT_SUBJECT),
        ] {
            let id = Identifier::text(subject);
            pki::validate(cert, &creds.ca_cert, Some(&id), now, creds.numbering).unwrap();
            store
                .trust_store()
                .validate_chain(cert, Some(&id), now)
                .unwrap();
            for other in cas.iter().filter(|c| ***c != creds.ca_cert) {
                let err = pki::validate(cert, other, Some(&id), now, creds.numbering).unwrap_err();
                assert!(
                    matches!(
                        err.alert(),
                        AlertDescription::UnknownCa | AlertDescription::BadCertificate
                    ),
                    "{case}: {err}"
                );
            }
        }
    }
}

#[test]
fn server_and_client_keys_are_distinct() {
    let (_, store) = full();
    let mut seen = Vec::new();
    for case in Case::ALL {
        let creds = store.case(&case).unwrap();
        for key in [&creds.server_key, &creds.client_key] {
            let public = key.public_key().unwrap();
            assert!(!seen.contains(&public), "{case}: key reused");
            seen.push(public);
        }
    }
    assert_eq!(seen.len(), 48);
}

#[test]
fn keys_are_created_private() {
    let (dir, _) = full();
    let mut keys = 0;
    for entry in fs::read_dir(&dir.0).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if name.ends_with(".key.pem") {
            keys += 1;
            let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{name}");
        }
    }
    assert_eq!(keys, 12 + 48);
}

#[test]
fn existing_pki_is_not_overwritten_without_force() {
    let dir = TempDir::new("force");
    let now = unix_now().unwrap();
    let first = PkiStore::create(&dir.0, false, now, &cheap()).unwrap();
    let err = PkiStore::create(&dir.0, false, now, &cheap()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("--force") && msg.contains(&dir.0.display().to_string()));
    // With force a new PKI replaces the old one (new keys), still 0600.
    let second = PkiStore::create(&dir.0, true, now, &cheap()).unwrap();
    let case = cheap()[0];
    assert_ne!(
        first.case(&case).unwrap().server_cert,
        second.case(&case).unwrap().server_cert
    );
    // load_or_init finds the existing PKI instead of issuing another.
    let loaded = PkiStore::load_or_init(&dir.0).unwrap();
    assert_eq!(
        loaded.case(&case).unwrap().server_cert,
        second.case(&case).unwrap().server_cert
    );
    // A case the store does not hold is a clear error.
    let missing = Case::parse("256p/256p").unwrap();
    assert!(loaded
        .case(&missing)
        .unwrap_err()
        .to_string()
        .contains("--force"));
}

#[test]
fn a_missing_pki_is_created_only_when_asked() {
    let dir = TempDir::new("open");
    let missing = dir.0.join("typo").join("pki");
    let err = PkiStore::open(&missing, false).unwrap_err().to_string();
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(
        err.contains("--create-pki") && err.contains("pki init"),
        "{err}"
    );
    assert!(!missing.exists(), "nothing was created");
    // An existing PKI opens without the flag.
    PkiStore::create(&dir.0, false, unix_now().unwrap(), &cheap()).unwrap();
    assert!(PkiStore::open(&dir.0, false).is_ok());
}

#[test]
fn readable_key_is_refused_on_load() {
    let dir = TempDir::new("mode");
    PkiStore::create(&dir.0, false, unix_now().unwrap(), &cheap()).unwrap();
    let key = dir.0.join("160p_160p-client.key.pem");
    fs::set_permissions(&key, fs::Permissions::from_mode(0o644)).unwrap();
    let err = PkiStore::load(&dir.0).unwrap_err().to_string();
    assert!(err.contains("chmod 600"), "{err}");
    assert!(err.contains("160p_160p-client.key.pem"), "{err}");
    fs::set_permissions(&key, fs::Permissions::from_mode(0o600)).unwrap();
    PkiStore::load(&dir.0).unwrap();
}

#[test]
fn expired_and_future_certificates_are_rejected_with_their_alert() {
    let now = unix_now().unwrap();
    let dir = TempDir::new("expired");
    PkiStore::create(&dir.0, false, now - VALIDITY_S - 10, &cheap()).unwrap();
    let err = PkiStore::load_at(&dir.0, now).unwrap_err();
    assert_eq!(
        cert_error(&err).alert(),
        AlertDescription::CertificateExpired
    );
    assert!(format!("{err:#}").contains("--force"));

    let dir = TempDir::new("future");
    PkiStore::create(&dir.0, false, now + 86_400, &cheap()).unwrap();
    let err = PkiStore::load_at(&dir.0, now).unwrap_err();
    assert!(matches!(cert_error(&err), CertError::NotYetValid { .. }));
    assert_eq!(cert_error(&err).alert(), AlertDescription::BadCertificate);
}

#[test]
fn swapped_or_damaged_files_fail_at_load() {
    let dir = TempDir::new("swap");
    let cases = [
        Case::parse("160p/160p").unwrap(),
        Case::parse("224p/160p").unwrap(),
    ];
    PkiStore::create(&dir.0, false, unix_now().unwrap(), &cases).unwrap();
    // A server certificate of another CA in place of this case's.
    fs::copy(
        dir.0.join("224p_160p-server.wcert"),
        dir.0.join("160p_160p-server.wcert"),
    )
    .unwrap();
    let err = PkiStore::load(&dir.0).unwrap_err();
    assert_eq!(cert_error(&err).alert(), AlertDescription::UnknownCa);

    PkiStore::create(&dir.0, true, unix_now().unwrap(), &cases).unwrap();
    // The client key of one case used as the server key: wrong key for the cert.
    let server_key = dir.0.join("160p_160p-server.key.pem");
    fs::remove_file(&server_key).unwrap();
    fs::copy(dir.0.join("160p_160p-client.key.pem"), &server_key).unwrap();
    let err = PkiStore::load(&dir.0).unwrap_err().to_string();
    assert!(err.contains("is not the private key"), "{err}");

    // Truncated certificate.
    PkiStore::create(&dir.0, true, unix_now().unwrap(), &cases).unwrap();
    let cert = dir.0.join("ca-224p.wcert");
    let bytes = fs::read(&cert).unwrap();
    fs::write(&cert, &bytes[..bytes.len() - 3]).unwrap();
    let err = PkiStore::load(&dir.0).unwrap_err().to_string();
    assert!(err.contains("ca-224p.wcert"), "{err}");
}

#[test]
fn a_client_loads_its_own_case_as_the_whole_store_has_it() {
    let (dir, store) = full();
    for case in store.cases() {
        let whole = store.case(case).unwrap().client();
        let own = PkiStore::load_client(&dir.0, case).unwrap();
        assert_eq!(own.case, *case);
        assert_eq!(own.ca_cert, whole.ca_cert, "{case}");
        assert_eq!(own.client_cert, whole.client_cert, "{case}");
        assert_eq!(
            own.client_key.public_key().unwrap(),
            whole.client_key.public_key().unwrap(),
            "{case}"
        );
        assert_eq!(own.numbering, whole.numbering);
    }
}

#[test]
fn a_client_reads_nothing_but_its_cases_ca_certificate_and_client_files() {
    let dir = TempDir::new("client-only");
    let cases = [
        Case::parse("160p/160p").unwrap(),
        Case::parse("224p/224p").unwrap(),
    ];
    PkiStore::create(&dir.0, false, unix_now().unwrap(), &cases).unwrap();
    // Everything of the other case, the CA's key and the gateway's files go.
    for file in [
        "ca-224p.wcert",
        "ca-224p.key.pem",
        "224p_224p-client.wcert",
        "224p_224p-client.key.pem",
        "ca-160p.key.pem",
        "160p_160p-server.wcert",
        "160p_160p-server.key.pem",
    ] {
        fs::remove_file(dir.0.join(file)).unwrap();
    }
    assert!(PkiStore::load(&dir.0).is_err());
    let own = PkiStore::load_client(&dir.0, &cases[0]).unwrap();
    assert_eq!(own.case, cases[0]);
    // The other case's files are gone, and its loading says which.
    let err = format!(
        "{:#}",
        PkiStore::load_client(&dir.0, &cases[1]).unwrap_err()
    );
    assert!(err.contains("ca-224p.wcert"), "{err}");
}

#[test]
fn a_client_gets_the_stores_checks_and_errors() {
    let dir = TempDir::new("client-checks");
    let now = unix_now().unwrap();
    let case = cheap()[0];
    PkiStore::create(&dir.0, false, now, &cheap()).unwrap();
    // A case never issued is named as the whole store names it.
    let other = Case::parse("rsa1024/rsa1024").unwrap();
    let err = format!("{:#}", PkiStore::load_client(&dir.0, &other).unwrap_err());
    assert!(err.contains("is not in the PKI"), "{err}");
    // Validated at the time given: two years on, the certificate has expired.
    let later = now + VALIDITY_S + 1;
    assert!(PkiStore::load_client_at(&dir.0, &case, later).is_err());
    // A key that group or others could read is refused.
    let key = dir.0.join("160p_160p-client.key.pem");
    fs::set_permissions(&key, fs::Permissions::from_mode(0o644)).unwrap();
    let err = format!("{:#}", PkiStore::load_client(&dir.0, &case).unwrap_err());
    assert!(err.contains("readable by group or others"), "{err}");
    // The gateway's key in the client's place does not match the client certificate.
    fs::remove_file(&key).unwrap();
    fs::copy(dir.0.join("160p_160p-server.key.pem"), &key).unwrap();
    fs::set_permissions(&key, fs::Permissions::from_mode(0o600)).unwrap();
    let err = format!("{:#}", PkiStore::load_client(&dir.0, &case).unwrap_err());
    assert!(err.contains("is not the private key of"), "{err}");
}
