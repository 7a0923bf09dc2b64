//! `wtlsperf pki show FILE [--ca CAFILE] [--at TIME]`: what `openssl x509 -text` is for
//! X.509, for WTLS certificates (wire-format notes §6).
//!
//! The certificate is read with the protocol crate's own codec
//! ([`wtls::msgs::certificate::WtlsCertificate`]) and checked with its own validation
//! ([`wtls::pki::validate`]), so what this command says is what a handshake would decide.
//!
//! Exit status: 0 when every check made passed, 1 when one failed (the reason is printed),
//! 2 when a file cannot be read or decoded. Which checks are made:
//!
//! * the validity window, always, at `--at` (default: now);
//! * with `--ca`: the issuer names the CA, the signature verifies under the CA's key, and
//!   the CA is inside its own window too;
//! * without `--ca`, a self-issued certificate (issuer = subject) is verified under its
//!   own key; any other certificate's signature is reported as not checked, and does not
//!   by itself make the exit status non-zero (there is nothing to check it against).

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use wtls::codec::Codec;
use wtls::handshake::ParameterNumbering;
use wtls::msgs::certificate::{PublicKey, WtlsCertificate};
use wtls::msgs::common::{Identifier, ParameterSpecifier};
use wtls::pki::{self, CertError};

/// `wtlsperf pki show` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ShowArgs {
    /// The WTLS certificate file (the bare certificate, as `pki init` writes and as the
    /// WAP CAs issued them).
    pub file: PathBuf,
    /// Verify the certificate's signature under this CA certificate's key.
    #[arg(long, value_name = "CAFILE")]
    pub ca: Option<PathBuf>,
    /// When to check validity: RFC 3339 (2000-07-01T12:00:00Z), a date (YYYY-MM-DD,
    /// midnight UTC) or Unix seconds. Default: now.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub at: Option<u32>,
    /// How to read EC ParameterIndex values: wap261 (wtlsN curve numbers, the
    /// specification's) or thesis (Bayoglu's Table 3.2, what PKIs from before the
    /// WAP-261 numbering carry). RSA index 0 reads the same under both.
    #[arg(long, default_value = "wap261", value_parser = parse_numbering)]
    pub numbering: ParameterNumbering,
}

fn parse_numbering(text: &str) -> Result<ParameterNumbering, String> {
    ParameterNumbering::from_name(text)
        .ok_or_else(|| format!("{text:?} is not a numbering (wap261 or thesis)"))
}

/// What the command concluded; [`Outcome::exit_code`] is the process status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every check made passed.
    Valid,
    /// A check failed, with the reason.
    Invalid(String),
    /// A file could not be read or decoded, with the message naming it.
    Unreadable(String),
}

impl Outcome {
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Valid => 0,
            Outcome::Invalid(_) => 1,
            Outcome::Unreadable(_) => 2,
        }
    }
}

/// Parses `--at`: Unix seconds, `YYYY-MM-DD` (00:00:00 UTC) or RFC 3339 with any offset.
/// The result must fit the certificate's 32-bit time fields.
pub fn parse_time(text: &str) -> Result<u32, String> {
    let secs: i64 = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse()
            .map_err(|_| format!("{text:?} is too large for Unix seconds"))?
    } else if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        day.and_time(chrono::NaiveTime::MIN).and_utc().timestamp()
    } else {
        chrono::DateTime::parse_from_rfc3339(text)
            .map_err(|e| format!("{text:?} is not RFC 3339, YYYY-MM-DD or Unix seconds ({e})"))?
            .timestamp()
    };
    u32::try_from(secs).map_err(|_| {
        format!("{text:?} is outside the certificates' time range (1970-01-01 to 2106-02-07)")
    })
}

/// A Unix time as an ISO 8601 UTC date and time.
pub fn utc(secs: u32) -> String {
    match chrono::DateTime::from_timestamp(i64::from(secs), 0) {
        Some(t) => t.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => format!("{secs} s"),
    }
}

/// Reads and decodes a certificate file; the error names the file and what was wrong.
pub fn read_certificate(path: &Path) -> Result<(WtlsCertificate, usize), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let cert = WtlsCertificate::read_exact(&bytes, "WTLSCertificate")
        .map_err(|e| format!("{} is not a WTLS certificate: {e}", path.display()))?;
    Ok((cert, bytes.len()))
}

/// Runs the command: prints the decode and the verdict to `out`, and the reason for a
/// non-zero outcome to `out` too (the caller decides where that goes).
pub fn show(args: &ShowArgs, now: u32, out: &mut dyn Write) -> std::io::Result<Outcome> {
    let (cert, len) = match read_certificate(&args.file) {
        Ok(c) => c,
        Err(e) => return Ok(Outcome::Unreadable(e)),
    };
    let ca = match &args.ca {
        Some(path) => match read_certificate(path) {
            Ok((c, _)) => Some((path.as_path(), c)),
            Err(e) => return Ok(Outcome::Unreadable(e)),
        },
        None => None,
    };
    let reencodes = std::fs::read(&args.file).is_ok_and(|b| b == cert.to_bytes());
    let numbering = args.numbering;
    write!(
        out,
        "{}",
        describe(&args.file, len, reencodes, &cert, numbering)
    )?;
    let at = args.at.unwrap_or(now);
    let ca = ca.as_ref().map(|(p, c)| (*p, c));
    let (lines, outcome) = verdict(&cert, ca, at, numbering);
    writeln!(out, "Checks at {}:", utc(at))?;
    for line in lines {
        writeln!(out, "    {line}")?;
    }
    match &outcome {
        Outcome::Valid => writeln!(out, "Result: valid")?,
        Outcome::Invalid(why) => writeln!(out, "Result: INVALID: {why}")?,
        Outcome::Unreadable(_) => {}
    }
    Ok(outcome)
}

/// The command's entry point: the process exit status.
pub fn run(args: &ShowArgs) -> i32 {
    let mut stdout = std::io::stdout().lock();
    match show(args, wtlsperf_drivers::setup::unix_secs(), &mut stdout) {
        Ok(outcome) => {
            if let Outcome::Unreadable(why) = &outcome {
                eprintln!("wtlsperf pki show: {why}");
            }
            outcome.exit_code()
        }
        Err(e) => {
            eprintln!("wtlsperf pki show: writing the output: {e}");
            2
        }
    }
}

/// The checks made and their outcome (see the module documentation for which). Every
/// failed check is in the reason, the signature's first.
fn verdict(
    cert: &WtlsCertificate,
    ca: Option<(&Path, &WtlsCertificate)>,
    at: u32,
    numbering: ParameterNumbering,
) -> (Vec<String>, Outcome) {
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    let signer = match ca {
        Some((path, ca)) => Some((format!("CA {}", path.display()), ca)),
        None if cert.tbs.issuer.same_name(&cert.tbs.subject) => {
            Some(("its own key (self-signed)".to_string(), cert))
        }
        None => None,
    };
    match signer {
        None => lines.push(format!(
            "signature: not checked (issuer {} not given; use --ca CAFILE)",
            pki::describe(&cert.tbs.issuer)
        )),
        // `validate` checks the issuer and the signature first, then the time windows
        // (the CA's, then the certificate's own, which is reported below either way).
        Some((name, signer)) => match pki::validate(cert, signer, None, at, numbering) {
            Ok(_) => lines.push(format!("signature: verifies under {name}")),
            Err(e @ (CertError::Expired { .. } | CertError::NotYetValid { .. })) => {
                lines.push(format!("signature: verifies under {name}"));
                if !std::ptr::eq(signer, cert) && window(signer, at).is_err() {
                    let why = format!("the CA's {}", explain(&e));
                    lines.push(format!("CA validity: {why}"));
                    failures.push(why);
                }
            }
            Err(e) => {
                let why = explain(&e);
                lines.push(format!("signature: {why}"));
                failures.push(why);
            }
        },
    }
    if let Some((_, ca)) = ca {
        if let Err(why) = ca_signature(ca, at, numbering, &mut lines) {
            failures.push(why);
        }
    }
    match window(cert, at) {
        Ok(()) => lines.push("validity: inside the window".to_string()),
        Err(why) => {
            lines.push(format!("validity: {why}"));
            failures.push(why);
        }
    }
    let outcome = if failures.is_empty() {
        Outcome::Valid
    } else {
        Outcome::Invalid(failures.join("; "))
    };
    (lines, outcome)
}

/// The `--ca` certificate's own signature: a self-issued CA is checked under its own
/// key (a corrupted root fails here, as `TrustStore::add` refuses it); for any other
/// CA the issuer is not at hand and the line says so.
fn ca_signature(
    ca: &WtlsCertificate,
    at: u32,
    numbering: ParameterNumbering,
    lines: &mut Vec<String>,
) -> Result<(), String> {
    if !ca.tbs.issuer.same_name(&ca.tbs.subject) {
        lines.push(format!(
            "CA signature: not checked (its issuer {} is not given)",
            pki::describe(&ca.tbs.issuer)
        ));
        return Ok(());
    }
    match pki::validate(ca, ca, None, at, numbering) {
        // Its time window is the "CA validity" line's business.
        Ok(_) | Err(CertError::Expired { .. } | CertError::NotYetValid { .. }) => {
            lines.push("CA signature: verifies under its own key (self-signed)".to_string());
            Ok(())
        }
        Err(e) => {
            let why = format!("the CA's self-signature: {}", explain(&e));
            lines.push(format!("CA signature: {why}"));
            Err(why)
        }
    }
}

/// The validity window at `at`, with dates in the reason.
fn window(cert: &WtlsCertificate, at: u32) -> Result<(), String> {
    let t = &cert.tbs;
    if at > t.valid_not_after {
        return Err(format!(
            "expired at {} (not_after), checked at {}",
            utc(t.valid_not_after),
            utc(at)
        ));
    }
    if at < t.valid_not_before {
        return Err(format!(
            "not yet valid until {} (not_before), checked at {}",
            utc(t.valid_not_before),
            utc(at)
        ));
    }
    Ok(())
}

/// A validation error in words, with dates instead of Unix seconds.
fn explain(e: &CertError) -> String {
    match e {
        CertError::Expired {
            subject,
            not_after,
            now,
        } => format!(
            "certificate of {subject} expired at {} (checked at {})",
            utc(*not_after),
            utc(*now)
        ),
        CertError::NotYetValid {
            subject,
            not_before,
            now,
        } => format!(
            "certificate of {subject} is not yet valid: not_before {} (checked at {})",
            utc(*not_before),
            utc(*now)
        ),
        CertError::UnknownIssuer { issuer } => {
            format!("issuer mismatch: the certificate names issuer {issuer}, not the CA given")
        }
        CertError::BadSignature { .. } => format!("bad signature: {e}"),
        other => other.to_string(),
    }
}

/// IANA MIBenum names of the character sets a WTLS identifier may carry (WAP-261 §4.3
/// refers to the IANA registry); the ones seen in practice.
fn charset_name(mib: u16) -> &'static str {
    match mib {
        3 => "US-ASCII",
        4 => "ISO-8859-1",
        5 => "ISO-8859-2",
        6 => "ISO-8859-3",
        7 => "ISO-8859-4",
        8 => "ISO-8859-5",
        9 => "ISO-8859-6",
        10 => "ISO-8859-7",
        11 => "ISO-8859-8",
        12 => "ISO-8859-9",
        17 => "Shift_JIS",
        106 => "UTF-8",
        1000 => "ISO-10646-UCS-2",
        1015 => "UTF-16",
        2026 => "Big5",
        _ => "unnamed",
    }
}

/// The name bytes as text in their character set (Latin-1 maps byte to code point;
/// UCS-2 and UTF-16 are big-endian; anything else is read as UTF-8, lossily).
fn decode_name(mib: u16, name: &[u8]) -> String {
    match mib {
        4 => name.iter().map(|b| char::from(*b)).collect(),
        1000 | 1015 if name.len().is_multiple_of(2) => {
            let units: Vec<u16> = name
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        _ => String::from_utf8_lossy(name).into_owned(),
    }
}

fn identifier(id: &Identifier) -> String {
    match id {
        Identifier::Null => "null (0)".into(),
        Identifier::Text {
            character_set,
            name,
        } => format!(
            "text (1), character set {} ({character_set}), {} bytes: {:?}",
            charset_name(*character_set),
            name.len(),
            decode_name(*character_set, name)
        ),
        Identifier::Binary(b) => format!("binary (2), {} bytes: {}", b.len(), hex::encode(b)),
        Identifier::KeyHashSha(h) => format!("key_hash_sha (254): {}", hex::encode(h)),
        Identifier::X509Name(b) => {
            format!(
                "x509_name (255), DER, {} bytes: {}",
                b.len(),
                hex::encode(b)
            )
        }
    }
}

/// Hex in lines of 16 colon-separated bytes, indented, as `openssl x509 -text` prints.
fn hex_block(bytes: &[u8], indent: usize) -> String {
    let mut s = String::new();
    for chunk in bytes.chunks(16) {
        let line: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(s, "{:indent$}{}", "", line.join(":"));
    }
    s
}

/// Significant bits of a big-endian unsigned integer.
fn bit_length(bytes: &[u8]) -> usize {
    match bytes.iter().position(|b| *b != 0) {
        Some(i) => (bytes.len() - i) * 8 - bytes[i].leading_zeros() as usize,
        None => 0,
    }
}

/// The parameter specifier, with what it names under `numbering` (and under the other
/// numbering, where that reads an EC index differently).
fn parameters(cert: &WtlsCertificate, numbering: ParameterNumbering) -> String {
    let named = |n: ParameterNumbering| match pki::certificate_spec(cert, n) {
        Ok(spec) => format!("{} ({})", spec.name(), spec.short()),
        Err(e) => e.to_string(),
    };
    match &cert.tbs.parameters {
        ParameterSpecifier::Index(0) => {
            format!(
                "index 0 (RSA: the key gives its size; {})",
                named(numbering)
            )
        }
        ParameterSpecifier::Index(i) => {
            let mut s = format!(
                "index {i}: {} under the {numbering} numbering",
                named(numbering)
            );
            for other in ParameterNumbering::ALL
                .into_iter()
                .filter(|n| *n != numbering)
            {
                let name = pki::certificate_spec(cert, other)
                    .map_or("nothing".to_string(), |spec| {
                        format!("{} ({})", spec.name(), spec.short())
                    });
                let _ = write!(s, "; under {other}: {name}");
            }
            s
        }
        ParameterSpecifier::Set(set) => format!(
            "explicit (255), {} bytes, {}:\n{}",
            set.0.len(),
            named(numbering),
            hex_block(&set.0, 12).trim_end()
        ),
    }
}

/// The public key: RSA size, exponent and modulus, or the EC point's size and form.
fn public_key(cert: &WtlsCertificate, numbering: ParameterNumbering) -> String {
    let mut s = String::new();
    match &cert.tbs.public_key {
        PublicKey::Rsa(k) => {
            let _ = writeln!(s, "    RSA public key: {} bit", bit_length(&k.modulus));
            let exponent = k
                .exponent
                .iter()
                .try_fold(0u64, |v, b| v.checked_mul(256).map(|v| v + u64::from(*b)));
            let _ = match exponent {
                Some(e) => writeln!(s, "        Exponent: {e} (0x{})", hex::encode(&k.exponent)),
                None => writeln!(s, "        Exponent: 0x{}", hex::encode(&k.exponent)),
            };
            let _ = write!(s, "        Modulus:\n{}", hex_block(&k.modulus, 12));
        }
        PublicKey::Ec(p) => {
            let form = match p.0.first() {
                Some(4) => "uncompressed",
                Some(2 | 3) => "compressed",
                _ => "unknown form",
            };
            let bits = pki::certificate_spec(cert, numbering)
                .ok()
                .and_then(|s| s.field_bits())
                .map_or_else(|| "curve unknown".to_string(), |b| format!("{b} bit"));
            let _ = write!(
                s,
                "    EC public key: {bits}, {form} point, {} bytes:\n{}",
                p.0.len(),
                hex_block(&p.0, 12)
            );
        }
    }
    s
}

/// Every field of the certificate, with names for the code points.
pub fn describe(
    file: &Path,
    len: usize,
    reencodes: bool,
    cert: &WtlsCertificate,
    numbering: ParameterNumbering,
) -> String {
    let t = &cert.tbs;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "WTLS certificate {} ({len} bytes{})",
        file.display(),
        if reencodes {
            ", re-encodes byte for byte"
        } else {
            ", DOES NOT re-encode to the same bytes"
        }
    );
    let _ = writeln!(s, "    Version: {}", t.version);
    let _ = writeln!(
        s,
        "    Signature algorithm: {} ({})",
        t.signature_algorithm,
        t.signature_algorithm.to_u8()
    );
    let _ = writeln!(s, "    Issuer: {}", identifier(&t.issuer));
    let _ = writeln!(s, "    Validity:");
    let _ = writeln!(
        s,
        "        Not before: {} ({})",
        utc(t.valid_not_before),
        t.valid_not_before
    );
    let _ = writeln!(
        s,
        "        Not after:  {} ({})",
        utc(t.valid_not_after),
        t.valid_not_after
    );
    let _ = writeln!(s, "    Subject: {}", identifier(&t.subject));
    let _ = writeln!(
        s,
        "    Public key type: {} ({})",
        t.public_key_type,
        t.public_key_type.to_u8()
    );
    let _ = writeln!(s, "    Parameters: {}", parameters(cert, numbering));
    s.push_str(&public_key(cert, numbering));
    if cert.signature.is_empty() {
        let _ = writeln!(s, "    Signature: none (anonymous)");
    } else {
        let _ = write!(
            s,
            "    Signature: {} bytes\n{}",
            cert.signature.len(),
            hex_block(&cert.signature, 8)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_in_every_accepted_form() {
        assert_eq!(parse_time("962409600"), Ok(962_409_600));
        assert_eq!(parse_time("2000-07-01"), Ok(962_409_600));
        assert_eq!(parse_time("2000-07-01T00:00:00Z"), Ok(962_409_600));
        assert_eq!(parse_time("2000-07-01T02:00:00+02:00"), Ok(962_409_600));
        assert!(parse_time("1969-12-31").unwrap_err().contains("outside"));
        assert!(parse_time("99999999999").unwrap_err().contains("outside"));
        assert!(parse_time("yesterday").unwrap_err().contains("RFC 3339"));
        assert!(parse_time("").is_err());
        assert_eq!(utc(962_409_600), "2000-07-01T00:00:00Z");
    }

    #[test]
    fn names_decode_in_their_character_set() {
        assert_eq!(decode_name(4, &[b'M', 0xFC, b'n']), "Mün");
        assert_eq!(decode_name(106, "Mün".as_bytes()), "Mün");
        assert_eq!(decode_name(1000, &[0, b'A', 0, b'B']), "AB");
        assert_eq!(charset_name(4), "ISO-8859-1");
        assert_eq!(bit_length(&[0x00, 0x80, 0]), 16);
        assert_eq!(bit_length(&[0x01]), 1);
        assert_eq!(bit_length(&[0, 0]), 0);
        assert_eq!(hex_block(&[1, 2], 2), "  01:02\n");
    }
}
