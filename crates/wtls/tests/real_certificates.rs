//! The six WTLS certificates from real CAs (Entrust.net, VeriSign's trial mobile
//! service; Symbian's test copies, see `data/real_wtls_certificates/README.md`) read as
//! conformance vectors: every one decodes and re-encodes byte for byte, names its RSA
//! key with ParameterIndex 0 and is read under the default (WAP-261) numbering, and the
//! README's verify / does-not-verify outcomes hold.

use wtls::codec::Codec;
use wtls::msgs::certificate::WtlsCertificate;
use wtls::msgs::common::{Identifier, ParameterSpecifier};
use wtls::params::ParameterNumbering;
use wtls::pki::{self, CertError};
use wtls::suite::Specifier;

const N: ParameterNumbering = ParameterNumbering::Wap261;
/// 2000-07-01 00:00 UTC: inside the validity of `william.bamberg.wap` and its CA.
const JULY_2000: u32 = 962_409_600;

macro_rules! cert {
    ($file:literal) => {
        (
            $file,
            include_bytes!(concat!("data/real_wtls_certificates/", $file)).as_slice(),
        )
    };
}

const ALL: [(&str, &[u8]); 6] = [
    cert!("EntrustNetWAP.bin"),
    cert!("UNKNOWN.001"),
    cert!("MobileServiceCA.wap"),
    cert!("MobileServiceCA-badsig.wap"),
    cert!("william.bamberg.wap"),
    cert!("william.bamberg.com-badsig"),
];

fn read(bytes: &[u8]) -> WtlsCertificate {
    WtlsCertificate::read_exact(bytes, "certificate").unwrap()
}

#[test]
fn every_real_certificate_re_encodes_and_has_an_rsa1024_key_at_index_0() {
    for (name, bytes) in ALL {
        let cert = read(bytes);
        assert_eq!(cert.to_bytes(), bytes, "{name}");
        assert_eq!(cert.tbs.parameters, ParameterSpecifier::Index(0), "{name}");
        assert_eq!(
            pki::certificate_spec(&cert, N).unwrap(),
            Specifier::Rsa1024,
            "{name}"
        );
        let Identifier::Text { character_set, .. } = cert.tbs.issuer else {
            panic!("{name}: issuer is not a text identifier")
        };
        assert_eq!(character_set, Identifier::CHARSET_LATIN1, "{name}");
    }
}

#[test]
fn the_personal_certificate_verifies_under_its_ca_and_its_twin_does_not() {
    let ca = read(ALL[2].1);
    let leaf = read(ALL[4].1);
    let key = pki::validate(&leaf, &ca, None, JULY_2000, N).unwrap();
    assert_eq!(key.spec(), Specifier::Rsa1024);
    let forged = read(ALL[5].1);
    assert!(matches!(
        pki::validate(&forged, &ca, None, JULY_2000, N),
        Err(CertError::BadSignature { .. })
    ));
    // Our UTF-8 spelling of the CA's Latin-1 name is the same name.
    let Identifier::Text { name, .. } = &ca.tbs.subject else {
        panic!("CA subject is not text")
    };
    let utf8 = Identifier::text(std::str::from_utf8(name).unwrap());
    assert!(utf8.same_name(&leaf.tbs.issuer));
}

#[test]
fn the_self_signed_entrust_roots_verify_and_have_expired_now() {
    for (name, bytes) in [ALL[0], ALL[1]] {
        let root = read(bytes);
        let inside = root.tbs.valid_not_before + 86_400;
        pki::validate(&root, &root, None, inside, N).unwrap_or_else(|e| panic!("{name}: {e}"));
        let now = 1_760_000_000; // 2025-10
        assert!(
            matches!(
                pki::validate(&root, &root, None, now, N),
                Err(CertError::Expired { .. })
            ),
            "{name}"
        );
    }
}
