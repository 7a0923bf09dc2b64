//! `wtlsperf pki show` on the six real WTLS certificates (Entrust.net and VeriSign, from
//! Symbian's test data; `data/real_wtls_certificates/README.md`) and on the laboratory's
//! own: each decodes and re-encodes byte for byte, and the README's verify /
//! does-not-verify outcomes hold, with exit status 0 valid, 1 invalid, 2 unreadable.

use std::path::PathBuf;
use std::process::{Command, Output};

use wtls::codec::Codec;
use wtls::msgs::certificate::PublicKey;
use wtls::msgs::common::ParameterSpecifier;
use wtlsperf::pki_show::{describe, read_certificate};

const SIX: [&str; 6] = [
    "EntrustNetWAP.bin",
    "UNKNOWN.001",
    "MobileServiceCA.wap",
    "MobileServiceCA-badsig.wap",
    "william.bamberg.wap",
    "william.bamberg.com-badsig",
];

fn real(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/real_wtls_certificates")
        .join(name)
}

fn show(args: &[&str]) -> (i32, String, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(["pki", "show"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        out.status.code().expect("exited, not killed"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

fn path(name: &str) -> String {
    real(name).to_str().unwrap().to_string()
}

#[test]
fn the_six_real_certificates_decode_and_re_encode_byte_for_byte() {
    for name in SIX {
        let bytes = std::fs::read(real(name)).unwrap();
        let (cert, len) = read_certificate(&real(name)).unwrap();
        assert_eq!(len, bytes.len());
        assert_eq!(cert.to_bytes(), bytes, "{name}");
        // README: version 1, rsa_sha, RSA key with ParameterIndex 0, ISO-8859-1 names,
        // RSA-1024.
        assert_eq!(cert.tbs.parameters, ParameterSpecifier::Index(0), "{name}");
        let text = describe(&real(name), len, true, &cert, Default::default());
        for expected in [
            "re-encodes byte for byte",
            "Version: 1",
            "Signature algorithm: rsa_sha (2)",
            "character set ISO-8859-1 (4)",
            "Public key type: rsa (2)",
            "Parameters: index 0",
            "RSA public key: 1024 bit",
            "Signature: 128 bytes",
        ] {
            assert!(
                text.contains(expected),
                "{name}: no {expected:?} in\n{text}"
            );
        }
    }
    // Each -badsig twin is its original with one byte of the RSA modulus changed and
    // the signature kept, so the signature no longer matches the signed bytes.
    for (good, bad, offset) in [
        ("MobileServiceCA.wap", "MobileServiceCA-badsig.wap", 234),
        ("william.bamberg.wap", "william.bamberg.com-badsig", 299),
    ] {
        let (a, b) = (
            std::fs::read(real(good)).unwrap(),
            std::fs::read(real(bad)).unwrap(),
        );
        let differ: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        assert_eq!((a.len(), differ), (b.len(), vec![offset]), "{bad}");
        let (ca, _) = read_certificate(&real(good)).unwrap();
        let (twin, _) = read_certificate(&real(bad)).unwrap();
        assert_eq!(ca.signature, twin.signature);
        assert_ne!(ca.tbs.public_key, twin.tbs.public_key);
    }
}

#[test]
fn william_bamberg_verifies_under_the_mobile_service_ca_in_july_2000() {
    let (code, stdout, _) = show(&[
        &path("william.bamberg.wap"),
        "--ca",
        &path("MobileServiceCA.wap"),
        "--at",
        "2000-07-01",
    ]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("signature: verifies under CA"), "{stdout}");
    assert!(
        stdout.contains("Not after:  2000-07-15T23:59:59Z"),
        "{stdout}"
    );
    assert!(stdout.contains("Result: valid"), "{stdout}");
}

#[test]
fn the_badsig_twin_is_refused_with_its_reason() {
    let (code, stdout, _) = show(&[
        &path("william.bamberg.com-badsig"),
        "--ca",
        &path("MobileServiceCA.wap"),
        "--at",
        "2000-07-01",
    ]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("Result: INVALID: bad signature"),
        "{stdout}"
    );
    // MobileServiceCA-badsig's modulus is corrupted: nothing verifies under it.
    let (code, stdout, _) = show(&[
        &path("william.bamberg.wap"),
        "--ca",
        &path("MobileServiceCA-badsig.wap"),
        "--at",
        "2000-07-01T12:00:00+01:00",
    ]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("Result: INVALID: bad signature"),
        "{stdout}"
    );
    // Its own issuer (VeriSign's Class 3 test root) is not available: it decodes, its
    // signature is reported as not checked, and inside its window that is exit 0.
    let (code, stdout, _) = show(&[&path("MobileServiceCA-badsig.wap"), "--at", "2001-01-01"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("signature: not checked"), "{stdout}");
}

#[test]
fn the_entrust_roots_verify_their_own_signatures() {
    for name in ["EntrustNetWAP.bin", "UNKNOWN.001"] {
        let (code, stdout, _) = show(&[&path(name), "--at", "2010-01-01"]);
        assert_eq!(code, 0, "{name}: {stdout}");
        assert!(
            stdout.contains("signature: verifies under its own key (self-signed)"),
            "{name}: {stdout}"
        );
    }
}

#[test]
fn every_one_of_the_six_has_expired_now() {
    for name in SIX {
        let (code, stdout, _) = show(&[&path(name)]);
        assert_eq!(code, 1, "{name}: {stdout}");
        assert!(stdout.contains("Result: INVALID"), "{name}: {stdout}");
        assert!(stdout.contains("expired at 20"), "{name}: {stdout}");
    }
}

#[test]
fn wrong_issuer_and_early_times_are_named() {
    let (code, stdout, _) = show(&[
        &path("william.bamberg.wap"),
        "--ca",
        &path("EntrustNetWAP.bin"),
        "--at",
        "2000-07-01",
    ]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("issuer mismatch"), "{stdout}");
    let (code, stdout, _) = show(&[
        &path("william.bamberg.wap"),
        "--ca",
        &path("MobileServiceCA.wap"),
        "--at",
        "961000000",
    ]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("not yet valid"), "{stdout}");
}

#[test]
fn unreadable_files_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let truncated = dir.path().join("truncated.wtls");
    std::fs::write(
        &truncated,
        &std::fs::read(real("william.bamberg.wap")).unwrap()[..100],
    )
    .unwrap();
    let missing = dir.path().join("missing.wtls");
    for (args, named) in [
        (vec![path_of(&missing)], path_of(&missing)),
        (vec![path_of(&truncated)], path_of(&truncated)),
        (
            vec![
                path("william.bamberg.wap"),
                "--ca".into(),
                path_of(&missing),
            ],
            path_of(&missing),
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, stderr) = show(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(&named), "{stderr}");
    }
    let (code, _, stderr) = show(&[&path("UNKNOWN.001"), "--at", "next tuesday"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--at"), "{stderr}");
}

fn path_of(p: &std::path::Path) -> String {
    p.to_str().unwrap().to_string()
}

#[test]
fn pki_init_writes_rsa_certificates_with_parameter_index_0() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    let out = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(["pki", "init", "--dir", &path_of(&pki)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rsa = 0;
    for entry in std::fs::read_dir(&pki).unwrap() {
        let file = entry.unwrap().path();
        if file.extension().is_none_or(|e| e != "wcert") {
            continue;
        }
        let (cert, _) = read_certificate(&file).unwrap();
        if !matches!(cert.tbs.public_key, PublicKey::Rsa(_)) {
            continue;
        }
        assert_eq!(
            cert.tbs.parameters,
            ParameterSpecifier::Index(0),
            "{file:?}"
        );
        rsa += 1;
    }
    // Three RSA CAs; server and client leaves of the six RSA/RSA cases.
    assert_eq!(rsa, 3 + 2 * 6);
    let (code, stdout, _) = show(&[&path_of(&pki.join("rsa3072_rsa2048-server.wcert"))]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("Parameters: index 0 (RSA: the key gives its size; RSA2048"),
        "{stdout}"
    );

    // A leaf under its CA; then under a copy of the CA whose own signature is damaged.
    let leaf = path_of(&pki.join("rsa2048_rsa1024-server.wcert"));
    let ca = pki.join("ca-rsa2048.wcert");
    let (code, stdout, _) = show(&[&leaf, "--ca", &path_of(&ca)]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("CA signature: verifies under its own key"),
        "{stdout}"
    );
    let mut bytes = std::fs::read(&ca).unwrap();
    *bytes.last_mut().unwrap() ^= 0x01;
    let damaged = dir.path().join("damaged-ca.wcert");
    std::fs::write(&damaged, &bytes).unwrap();
    let (code, stdout, _) = show(&[&leaf, "--ca", &path_of(&damaged)]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("INVALID: the CA's self-signature: bad signature"),
        "{stdout}"
    );
}
