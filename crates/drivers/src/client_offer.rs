//! What `wtlsperf client` offers a gateway: cipher suites by name (`--cipher`), the
//! trusted key ids it lists (`--trusted-ids`), and a configuration for an anonymous
//! client that needs no PKI at all.
//!
//! These options exist to talk to other WTLS servers. Kannel 1.4.5's (from its source,
//! `wap/wtls_*.c`) implements RSA_anon only, the bulk ciphers RC5_CBC_40, RC5_CBC_56,
//! RC5_CBC and DES_CBC with the SHA MAC, and misreads the 16-bit character set of a
//! `text` identifier in trusted_key_ids; so against it the client must choose its
//! suites and send no trusted key ids (`--anonymous --trusted-ids none --cipher
//! RC5_CBC/SHA`).

use wtls::handshake::{ClientConfig, KeyExchangeOffer, Packing, Policy};
use wtls::msgs::common::{CipherSuite, Identifier};
use wtls::msgs::enums::{BulkCipherAlgorithm, KeyExchangeSuite, MacAlgorithm};
use wtls::suite::Case;

/// The name of a cipher suite as `--cipher` takes it: `BULK/MAC`, e.g. `RC5_CBC/SHA`.
pub fn cipher_name(c: CipherSuite) -> String {
    format!("{}/{}", c.bulk.name(), c.mac.name())
}

/// Every valid `--cipher` value, for the error message.
fn valid_cipher_names() -> String {
    let bulks: Vec<&str> = BulkCipherAlgorithm::ALL.iter().map(|b| b.name()).collect();
    let macs: Vec<&str> = MacAlgorithm::ALL.iter().map(|m| m.name()).collect();
    format!(
        "BULK is one of {}; MAC is one of {}",
        bulks.join(", "),
        macs.join(", ")
    )
}

/// Parses `BULK/MAC` (names as WAP-261 writes them, any case).
pub fn parse_cipher(text: &str) -> Result<CipherSuite, String> {
    let Some((bulk, mac)) = text.split_once('/') else {
        return Err(format!(
            "{text:?} is not BULK/MAC (e.g. RC5_CBC/SHA); {}",
            valid_cipher_names()
        ));
    };
    let bulk = BulkCipherAlgorithm::ALL
        .iter()
        .find(|b| b.name().eq_ignore_ascii_case(bulk.trim()))
        .ok_or_else(|| format!("unknown bulk cipher {bulk:?}; {}", valid_cipher_names()))?;
    let mac = MacAlgorithm::ALL
        .iter()
        .find(|m| m.name().eq_ignore_ascii_case(mac.trim()))
        .ok_or_else(|| format!("unknown MAC {mac:?}; {}", valid_cipher_names()))?;
    Ok(CipherSuite::new(*bulk, *mac))
}

/// The cipher suites the client offers, in order, and whether that required enabling
/// weak suites: a suite the operator names explicitly is offered even if it is weak
/// (DES, the 40/56-bit RC5 exports), with a warning. Returns the warnings to print.
pub fn apply_ciphers(cfg: &mut ClientConfig, ciphers: &[CipherSuite]) -> Vec<String> {
    if ciphers.is_empty() {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for c in ciphers {
        if let Some(why) = wtls::record::is_weak(c.bulk, c.mac) {
            warnings.push(format!(
                "--cipher {} is weak ({why}); offered because it was asked for",
                cipher_name(*c)
            ));
            cfg.policy.allow_weak_ciphers = true;
        }
    }
    cfg.cipher_suites = ciphers.to_vec();
    warnings
}

/// An anonymous client configuration that needs no PKI: it offers RSA_anon (or
/// ECDH_anon) on the case's leaf parameters, trusts no CA and names no server, since an
/// anonymous key exchange authenticates nobody.
pub fn anonymous_config(case: &Case, packing: Packing) -> ClientConfig {
    let suite = if case.leaf.is_rsa() {
        KeyExchangeSuite::RsaAnon
    } else {
        KeyExchangeSuite::EcdhAnon
    };
    let mut c = ClientConfig::new(
        vec![KeyExchangeOffer {
            suite,
            spec: case.leaf,
            identifier: Identifier::Null,
        }],
        vec![crate::setup::default_cipher_suite()],
    );
    c.packing = packing;
    c.policy = Policy {
        allow_anonymous: true,
        ..Policy::default()
    };
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_names_parse_and_print() {
        let c = parse_cipher("RC5_CBC/SHA").unwrap();
        assert_eq!(
            c,
            CipherSuite::new(BulkCipherAlgorithm::Rc5Cbc, MacAlgorithm::Sha)
        );
        assert_eq!(cipher_name(c), "RC5_CBC/SHA");
        for name in [
            "DES_CBC/SHA",
            "RC5_CBC_40/SHA",
            "RC5_CBC_56/SHA",
            "3DES_CBC_EDE/MD5",
        ] {
            assert_eq!(cipher_name(parse_cipher(name).unwrap()), name);
        }
        assert_eq!(
            parse_cipher("rc5_cbc/sha").unwrap(),
            parse_cipher("RC5_CBC/SHA").unwrap()
        );
        let err = parse_cipher("RC4/SHA").unwrap_err();
        assert!(err.contains("unknown bulk cipher \"RC4\""), "{err}");
        assert!(
            err.contains("RC5_CBC_56") && err.contains("DES_CBC"),
            "{err}"
        );
        assert!(parse_cipher("RC5_CBC/SHA1")
            .unwrap_err()
            .contains("unknown MAC"));
        assert!(parse_cipher("RC5_CBC").unwrap_err().contains("BULK/MAC"));
    }

    #[test]
    fn asking_for_a_weak_cipher_offers_it_with_a_warning() {
        let case = Case::parse("rsa1024/rsa1024").unwrap();
        let mut cfg = anonymous_config(&case, Packing::default());
        assert!(!cfg.policy.allow_weak_ciphers);
        let strong = [parse_cipher("RC5_CBC/SHA").unwrap()];
        assert!(apply_ciphers(&mut cfg, &strong).is_empty());
        assert!(!cfg.policy.allow_weak_ciphers);
        let des = [parse_cipher("DES_CBC/SHA").unwrap()];
        let warnings = apply_ciphers(&mut cfg, &des);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("DES_CBC/SHA is weak"), "{warnings:?}");
        assert!(cfg.policy.allow_weak_ciphers);
        assert_eq!(cfg.cipher_suites, des);
        assert_eq!(cfg.offers[0].suite, KeyExchangeSuite::RsaAnon);
        assert!(cfg.trusted_cas.is_empty() && cfg.credential.is_none());
    }
}
