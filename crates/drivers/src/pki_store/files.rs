//! The PKI's files: certificates in their raw WTLS encoding, private keys as PKCS#8 PEM
//! created with mode 0600 and refused when group or others could read them.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use wtls::codec::Codec;
use wtls::crypto::pk::{KeyPair, PeerKey};
use wtls::msgs::certificate::WtlsCertificate;
use wtls::suite::Specifier;

pub(super) fn check_key_matches(
    certified: &PeerKey,
    key: &KeyPair,
    dir: &Path,
    cert_file: &str,
    key_file: &str,
) -> Result<()> {
    let own = key
        .public_key()
        .with_context(|| format!("{}", dir.join(key_file).display()))?;
    if &own != certified {
        bail!(
            "{} is not the private key of {}; re-run init with --force",
            dir.join(key_file).display(),
            dir.join(cert_file).display()
        );
    }
    Ok(())
}

pub(super) fn read_cert(dir: &Path, file: &str) -> Result<WtlsCertificate> {
    let path = dir.join(file);
    let bytes = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    WtlsCertificate::read_exact(&bytes, "WTLSCertificate")
        .map_err(|e| anyhow!("{} is not a WTLS certificate: {e}", path.display()))
}

pub(super) fn read_key(dir: &Path, file: &str, spec: Specifier) -> Result<KeyPair> {
    let path = dir.join(file);
    let meta = fs::metadata(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        bail!(
            "private key {} is readable by group or others (mode {mode:03o}); fix with `chmod 600 {}`",
            path.display(),
            path.display()
        );
    }
    let pem = zeroize::Zeroizing::new(
        fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?,
    );
    KeyPair::from_pem(spec, &pem).with_context(|| format!("private key {}", path.display()))
}

/// Writes a public file (certificate, manifest) whole, replacing an old one: an
/// interrupted `pki init` leaves no truncated certificate behind.
pub(super) fn write_public(dir: &Path, file: &str, bytes: &[u8]) -> Result<()> {
    let path = dir.join(file);
    wtlsperf_report::write_whole(&path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Writes a private key into a file created with mode 0600. An old file is removed
/// first: opening an existing file keeps its old mode, which may be looser.
pub(super) fn write_private(dir: &Path, file: &str, key: &KeyPair) -> Result<()> {
    let path = dir.join(file);
    match fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot replace {}", path.display())),
    }
    let pem = key
        .to_pem_pkcs8()
        .with_context(|| format!("cannot encode {}", path.display()))?;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(&pem)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}
