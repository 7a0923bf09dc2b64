//! WTLS certificates: decode arbitrary bytes as a certificate (and as a chain) and
//! validate what decodes against a fixed CA. Validation must return an error, never
//! panic, and a decoded certificate must re-encode to its input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wtls::codec::Codec;
use wtls::msgs::certificate::{CertificateChain, WtlsCertificate};
use wtls::msgs::common::Identifier;
use wtls_fuzz::{certificate_authority, UNIX_NOW};

fuzz_target!(|data: &[u8]| {
    let ca = certificate_authority();
    if let Ok(cert) = WtlsCertificate::read_exact(data, "Certificate") {
        assert_eq!(cert.to_bytes(), data);
        let expected = Identifier::text(wtls::pki::SERVER_SUBJECT);
        // Both ParameterIndex numberings read every certificate.
        for numbering in wtls::params::ParameterNumbering::ALL {
            let _ = wtls::pki::validate(&cert, ca, Some(&expected), UNIX_NOW, numbering);
            let _ = wtls::pki::validate(&cert, ca, None, cert.tbs.valid_not_before, numbering);
            let _ = wtls::pki::certificate_key(&cert, numbering);
            // Using the fuzzed certificate as a CA exercises the CA-key parsing path.
            let _ = wtls::pki::validate(ca, &cert, None, UNIX_NOW, numbering);
        }
    }
    if let Ok(chain) = CertificateChain::read_exact(data, "CertificateChain") {
        assert_eq!(chain.to_bytes(), data);
    }
});
