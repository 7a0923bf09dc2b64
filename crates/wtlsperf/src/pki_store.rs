//! The laboratory's PKI on disk: one CA per parameter specifier and, for each of the 24
//! CA/leaf combinations of thesis Table 3.3, a gateway and a client certificate, each
//! with its own key.
//!
//! Layout of the directory:
//!
//! * `manifest.json`: what was issued, when, and which file holds what;
//! * `ca-<spec>.wcert` / `ca-<spec>.key.pem`: a CA certificate (raw WTLS encoding) and
//!   its PKCS#8 PEM key;
//! * `<ca>_<leaf>-server.wcert`, `<ca>_<leaf>-server.key.pem`, and the same with
//!   `-client`: the leaf certificates and keys of a case.
//!
//! Certificates carry their ParameterIndex in one numbering for the whole store,
//! recorded in the manifest: WAP-261's for a new store unless asked otherwise (the
//! evaluation asks for the thesis' Table 3.2 numbering, which its byte counts need). A
//! manifest without the field predates the choice and was issued with the thesis'.
//!
//! Private keys are created with mode 0600 from the start (never loosened and then
//! tightened), and loading refuses a key that group or others could read. Every leaf is
//! validated under its CA when the store is loaded, so a damaged or expired PKI fails
//! before the first handshake rather than in the middle of a measurement campaign.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use wtls::codec::Codec;
use wtls::crypto::pk::{KeyPair, PeerKey};
use wtls::msgs::certificate::WtlsCertificate;
use wtls::msgs::common::Identifier;
use wtls::params::ParameterNumbering;
use wtls::pki::{self, Authority, TrustStore, CLIENT_SUBJECT, SERVER_SUBJECT};
use wtls::suite::{Case, Specifier};

/// Name of the manifest file; its presence marks a directory as holding a PKI.
pub const MANIFEST: &str = "manifest.json";
/// Certificates are valid from one hour before issue (clock skew between the machines
/// of a distributed run) ...
pub const VALID_BEFORE_NOW_S: u32 = 3600;
/// ... until two years after issue.
pub const VALIDITY_S: u32 = 2 * 365 * 86_400;

const MANIFEST_FORMAT: u32 = 1;

/// The manifest: everything needed to find and check the files.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Manifest {
    format: u32,
    /// Unix seconds at issue.
    issued_at: u32,
    valid_not_before: u32,
    valid_not_after: u32,
    authorities: Vec<AuthorityEntry>,
    cases: Vec<CaseEntry>,
    /// Specifiers skipped because the local libcrypto lacks them, with the reason.
    #[serde(default)]
    unavailable: Vec<(String, String)>,
    /// The ParameterIndex numbering of every certificate ("wap261" or "thesis").
    #[serde(default = "thesis_numbering_name")]
    numbering: String,
}

/// Stores written before the numbering was recorded used the thesis' numbering.
fn thesis_numbering_name() -> String {
    ParameterNumbering::Thesis.name().to_string()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct AuthorityEntry {
    specifier: String,
    name: String,
    cert: String,
    key: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct CaseEntry {
    case: String,
    ca: String,
    leaf: String,
    category: u8,
    group: u8,
    server_cert: String,
    server_key: String,
    client_cert: String,
    client_key: String,
}

/// Everything one CA/leaf combination needs on both sides of a handshake. Cloning is
/// cheap: keys share their OpenSSL objects.
#[derive(Debug, Clone)]
pub struct CaseCredentials {
    pub case: Case,
    pub ca_cert: WtlsCertificate,
    pub server_cert: WtlsCertificate,
    pub server_key: KeyPair,
    pub client_cert: WtlsCertificate,
    pub client_key: KeyPair,
    /// The ParameterIndex numbering the certificates were issued with: both ends of a
    /// handshake on these credentials must use it.
    pub numbering: ParameterNumbering,
}

/// A loaded (and validated) PKI directory.
#[derive(Debug)]
pub struct PkiStore {
    dir: PathBuf,
    manifest: Manifest,
    authorities: BTreeMap<Specifier, Authority>,
    cases: BTreeMap<Case, CaseCredentials>,
    trust: TrustStore,
}

/// Current Unix time in seconds, as the certificates count it.
pub fn unix_now() -> Result<u32> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .context("system clock is before 1970")?
        .as_secs();
    u32::try_from(secs).context("system clock is past 2106, beyond WTLS's 32-bit time")
}

fn case_stem(case: &Case) -> String {
    format!("{}_{}", case.ca.short(), case.leaf.short())
}

impl PkiStore {
    /// Issues a complete PKI into `dir` (created if missing), valid from one hour ago
    /// for two years. Refuses to replace an existing PKI unless `force` is set.
    pub fn init(dir: &Path, force: bool) -> Result<PkiStore> {
        Self::init_at(dir, force, unix_now()?)
    }

    /// [`PkiStore::init`] with the issue time given (reproducible experiments, tests).
    pub fn init_at(dir: &Path, force: bool, now: u32) -> Result<PkiStore> {
        Self::create(dir, force, now, &Case::ALL)
    }

    /// Issues the PKI for `cases` only. Cases whose curves the local libcrypto lacks are
    /// skipped and recorded in the manifest with the reason.
    pub fn create(dir: &Path, force: bool, now: u32, cases: &[Case]) -> Result<PkiStore> {
        Self::create_numbered(dir, force, now, cases, ParameterNumbering::default())
    }

    /// [`PkiStore::create`] issuing under `numbering`.
    pub fn create_numbered(
        dir: &Path,
        force: bool,
        now: u32,
        cases: &[Case],
        numbering: ParameterNumbering,
    ) -> Result<PkiStore> {
        let manifest_path = dir.join(MANIFEST);
        if manifest_path.exists() && !force {
            bail!(
                "a PKI already exists in {} (found {MANIFEST}); pass --force to replace it",
                dir.display()
            );
        }
        if !dir.exists() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("cannot create PKI directory {}", dir.display()))?;
        }
        if manifest_path.exists() {
            // Replace: the old manifest goes first so that an interrupted run never
            // leaves a manifest pointing at a mixture of old and new files.
            fs::remove_file(&manifest_path)
                .with_context(|| format!("cannot remove {}", manifest_path.display()))?;
        }

        let not_before = now.saturating_sub(VALID_BEFORE_NOW_S);
        let not_after = now.saturating_add(VALIDITY_S);
        let unavailable: Vec<(Specifier, String)> = wtls::suite::unavailable_specifiers();
        let runnable: Vec<Case> = cases.iter().copied().filter(Case::is_available).collect();

        let mut manifest = Manifest {
            format: MANIFEST_FORMAT,
            issued_at: now,
            valid_not_before: not_before,
            valid_not_after: not_after,
            authorities: Vec::new(),
            cases: Vec::new(),
            unavailable: unavailable
                .iter()
                .map(|(s, r)| (s.short().to_string(), r.clone()))
                .collect(),
            numbering: numbering.name().to_string(),
        };

        let mut ca_specs: Vec<Specifier> = runnable.iter().map(|c| c.ca).collect();
        ca_specs.sort();
        ca_specs.dedup();
        let mut authorities = BTreeMap::new();
        for spec in ca_specs {
            let name = Authority::default_name(spec);
            let ca = Authority::new_root_numbered(spec, &name, not_before, not_after, numbering)
                .with_context(|| format!("cannot create CA {name}"))?;
            let entry = AuthorityEntry {
                specifier: spec.short().to_string(),
                name,
                cert: format!("ca-{}.wcert", spec.short()),
                key: format!("ca-{}.key.pem", spec.short()),
            };
            write_public(dir, &entry.cert, &ca.cert.to_bytes())?;
            write_private(dir, &entry.key, &ca.key)?;
            manifest.authorities.push(entry);
            authorities.insert(spec, ca);
        }

        for case in &runnable {
            let ca = &authorities[&case.ca];
            let stem = case_stem(case);
            let issue = |role: &str, subject: &str| -> Result<(String, String)> {
                // Every leaf has its own key, even two leaves of the same specifier.
                let key = KeyPair::generate(case.leaf)
                    .with_context(|| format!("cannot generate the {role} key of {case}"))?;
                let cert = ca
                    .issue(subject, &key, not_before, not_after)
                    .with_context(|| format!("cannot issue the {role} certificate of {case}"))?;
                let cert_file = format!("{stem}-{role}.wcert");
                let key_file = format!("{stem}-{role}.key.pem");
                write_public(dir, &cert_file, &cert.to_bytes())?;
                write_private(dir, &key_file, &key)?;
                Ok((cert_file, key_file))
            };
            let (server_cert, server_key) = issue("server", SERVER_SUBJECT)?;
            let (client_cert, client_key) = issue("client", CLIENT_SUBJECT)?;
            manifest.cases.push(CaseEntry {
                case: case.to_string(),
                ca: case.ca.short().to_string(),
                leaf: case.leaf.short().to_string(),
                category: case.category,
                group: case.group,
                server_cert,
                server_key,
                client_cert,
                client_key,
            });
        }

        let json = serde_json::to_vec_pretty(&manifest).context("cannot encode the manifest")?;
        write_public(dir, MANIFEST, &json)?;
        // Read everything back through the same path a later run takes: what was just
        // written is proven loadable and valid.
        Self::load_at(dir, now)
    }

    /// Loads the PKI in `dir`, checking key file permissions and validating every leaf
    /// certificate under its CA at the current time.
    pub fn load(dir: &Path) -> Result<PkiStore> {
        Self::load_at(dir, unix_now()?)
    }

    /// [`PkiStore::load`] validating at time `now`.
    pub fn load_at(dir: &Path, now: u32) -> Result<PkiStore> {
        let manifest_path = dir.join(MANIFEST);
        let text = fs::read(&manifest_path).with_context(|| {
            format!(
                "no PKI in {} (cannot read {MANIFEST}); run init first",
                dir.display()
            )
        })?;
        let manifest: Manifest = serde_json::from_slice(&text)
            .with_context(|| format!("{} is not a valid manifest", manifest_path.display()))?;
        if manifest.format != MANIFEST_FORMAT {
            bail!(
                "{} has format {}, this program reads {MANIFEST_FORMAT}; re-run init with --force",
                manifest_path.display(),
                manifest.format
            );
        }

        let numbering = ParameterNumbering::from_name(&manifest.numbering).ok_or_else(|| {
            anyhow!(
                "{}: unknown parameter numbering {:?} (wap261 or thesis)",
                manifest_path.display(),
                manifest.numbering
            )
        })?;
        let mut authorities = BTreeMap::new();
        let mut trust = TrustStore::with_numbering(numbering);
        for entry in &manifest.authorities {
            let spec = parse_spec(&entry.specifier, &manifest_path)?;
            let cert = read_cert(dir, &entry.cert)?;
            let key = read_key(dir, &entry.key, spec)?;
            let ca = Authority::from_parts(key, cert.clone(), numbering)
                .with_context(|| format!("CA files {} / {}", entry.cert, entry.key))?;
            trust
                .add(cert)
                .with_context(|| format!("CA certificate {}", dir.join(&entry.cert).display()))?;
            authorities.insert(spec, ca);
        }

        let mut cases = BTreeMap::new();
        for entry in &manifest.cases {
            let case = Case::parse(&entry.case)
                .with_context(|| format!("case in {}", manifest_path.display()))?;
            let ca = authorities.get(&case.ca).ok_or_else(|| {
                anyhow!(
                    "{}: case {case} names CA {} which the manifest does not list",
                    manifest_path.display(),
                    case.ca
                )
            })?;
            let load_leaf = |cert_file: &str, key_file: &str, subject: &str| {
                let cert = read_cert(dir, cert_file)?;
                let key = read_key(dir, key_file, case.leaf)?;
                let certified = pki::validate(&cert, &ca.cert, Some(&Identifier::text(subject)), now, numbering)
                    .with_context(|| {
                        format!(
                            "{} does not validate under {} at {now}; re-run init with --force to reissue",
                            dir.join(cert_file).display(),
                            entry_ca_file(&manifest, case.ca)
                        )
                    })?;
                check_key_matches(&certified, &key, dir, cert_file, key_file)?;
                Ok::<_, anyhow::Error>((cert, key))
            };
            let (server_cert, server_key) =
                load_leaf(&entry.server_cert, &entry.server_key, SERVER_SUBJECT)?;
            let (client_cert, client_key) =
                load_leaf(&entry.client_cert, &entry.client_key, CLIENT_SUBJECT)?;
            cases.insert(
                case,
                CaseCredentials {
                    case,
                    ca_cert: ca.cert.clone(),
                    server_cert,
                    server_key,
                    client_cert,
                    client_key,
                    numbering,
                },
            );
        }

        Ok(PkiStore {
            dir: dir.to_path_buf(),
            manifest,
            authorities,
            cases,
            trust,
        })
    }

    /// Loads the PKI in `dir`, issuing it under `numbering` if the directory holds
    /// none (a store that exists keeps the numbering it was issued with).
    pub fn load_or_init_numbered(dir: &Path, numbering: ParameterNumbering) -> Result<PkiStore> {
        if dir.join(MANIFEST).exists() {
            Self::load(dir)
        } else {
            Self::create_numbered(dir, false, unix_now()?, &Case::ALL, numbering)
        }
    }

    /// The same keys with every certificate signed again under `numbering`, in memory
    /// only: the evaluation measures its handshakes on a thesis-numbered store and
    /// counts the bytes of the same handshakes under WAP-261 with this.
    pub fn renumbered(&self, numbering: ParameterNumbering) -> Result<PkiStore> {
        let (not_before, not_after) = self.validity();
        let mut authorities = BTreeMap::new();
        let mut trust = TrustStore::with_numbering(numbering);
        for (spec, ca) in &self.authorities {
            let again = Authority::from_key_numbered(
                ca.key.clone(),
                &ca.name,
                not_before,
                not_after,
                numbering,
            )
            .with_context(|| format!("cannot re-sign CA {}", ca.name))?;
            trust.add(again.cert.clone())?;
            authorities.insert(*spec, again);
        }
        let mut cases = BTreeMap::new();
        for (case, creds) in &self.cases {
            let ca = authorities
                .get(&case.ca)
                .ok_or_else(|| anyhow!("case {case} has no CA {}", case.ca))?;
            let reissue = |cert: &WtlsCertificate, key: &KeyPair, subject: &str| {
                ca.issue_as(
                    subject,
                    key,
                    cert.tbs.public_key_type,
                    not_before,
                    not_after,
                )
                .with_context(|| format!("cannot re-issue {subject} of {case}"))
            };
            cases.insert(
                *case,
                CaseCredentials {
                    case: *case,
                    ca_cert: ca.cert.clone(),
                    server_cert: reissue(&creds.server_cert, &creds.server_key, SERVER_SUBJECT)?,
                    server_key: creds.server_key.clone(),
                    client_cert: reissue(&creds.client_cert, &creds.client_key, CLIENT_SUBJECT)?,
                    client_key: creds.client_key.clone(),
                    numbering,
                },
            );
        }
        let mut manifest = self.manifest.clone();
        manifest.numbering = numbering.name().to_string();
        Ok(PkiStore {
            dir: self.dir.clone(),
            manifest,
            authorities,
            cases,
            trust,
        })
    }

    /// The ParameterIndex numbering of the store's certificates.
    pub fn numbering(&self) -> ParameterNumbering {
        ParameterNumbering::from_name(&self.manifest.numbering).unwrap_or_default()
    }

    /// Loads the PKI in `dir`, issuing it first if the directory holds none.
    pub fn load_or_init(dir: &Path) -> Result<PkiStore> {
        if dir.join(MANIFEST).exists() {
            Self::load(dir)
        } else {
            Self::init(dir, false)
        }
    }

    /// Loads the PKI in `dir`; issues one there only when `create` is set (the
    /// operator's `--create-pki`). Why not always: a gateway started with a mistyped
    /// `--pki` would otherwise serve certificates from a fresh CA that no client trusts,
    /// and say nothing.
    pub fn open(dir: &Path, create: bool) -> Result<PkiStore> {
        if dir.join(MANIFEST).exists() {
            Self::load(dir)
        } else if create {
            Self::init(dir, false)
        } else {
            bail!(
                "no PKI in {} ({} not found); issue one with `wtlsperf pki init --dir {}`, \
                 or pass --create-pki",
                dir.display(),
                dir.join(MANIFEST).display(),
                dir.display()
            )
        }
    }

    /// The credentials of one CA/leaf combination.
    pub fn case(&self, case: &Case) -> Result<CaseCredentials> {
        if let Some(creds) = self.cases.get(case) {
            return Ok(creds.clone());
        }
        let why: Vec<&str> = [case.ca, case.leaf]
            .iter()
            .filter_map(|s| {
                self.manifest
                    .unavailable
                    .iter()
                    .find(|(name, _)| name == s.short())
                    .map(|(_, reason)| reason.as_str())
            })
            .collect();
        if why.is_empty() {
            bail!(
                "case {case} is not in the PKI at {}; re-run init with --force to issue all 24",
                self.dir.display()
            )
        } else {
            bail!(
                "case {case} is unavailable on this machine: {}",
                why.join("; ")
            )
        }
    }

    /// The cases this store holds, in Table 3.3 order.
    pub fn cases(&self) -> impl Iterator<Item = &Case> {
        self.cases.keys()
    }

    /// All CA certificates, for a peer that accepts any of the laboratory's CAs.
    pub fn trust_store(&self) -> &TrustStore {
        &self.trust
    }

    /// The CA of a specifier (key included, to issue more certificates).
    pub fn authority(&self, spec: Specifier) -> Option<&Authority> {
        self.authorities.get(&spec)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The validity window every certificate of this store carries (Unix seconds).
    pub fn validity(&self) -> (u32, u32) {
        (
            self.manifest.valid_not_before,
            self.manifest.valid_not_after,
        )
    }
}

fn entry_ca_file(manifest: &Manifest, spec: Specifier) -> String {
    manifest
        .authorities
        .iter()
        .find(|a| a.specifier == spec.short())
        .map(|a| a.cert.clone())
        .unwrap_or_else(|| spec.short().to_string())
}

fn parse_spec(name: &str, manifest: &Path) -> Result<Specifier> {
    Specifier::from_short(name)
        .ok_or_else(|| anyhow!("{}: unknown specifier {name:?}", manifest.display()))
}

fn check_key_matches(
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

fn read_cert(dir: &Path, file: &str) -> Result<WtlsCertificate> {
    let path = dir.join(file);
    let bytes = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    WtlsCertificate::read_exact(&bytes, "WTLSCertificate")
        .map_err(|e| anyhow!("{} is not a WTLS certificate: {e}", path.display()))
}

fn read_key(dir: &Path, file: &str, spec: Specifier) -> Result<KeyPair> {
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

/// Writes a public file (certificate, manifest), replacing an old one.
fn write_public(dir: &Path, file: &str, bytes: &[u8]) -> Result<()> {
    let path = dir.join(file);
    fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes a private key into a file created with mode 0600. An old file is removed
/// first: opening an existing file keeps its old mode, which may be looser.
fn write_private(dir: &Path, file: &str, key: &KeyPair) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
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
            PkiStore::create_numbered(&dir.0, false, now, &cases, ParameterNumbering::Thesis)
                .unwrap();
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
                    let err =
                        pki::validate(cert, other, Some(&id), now, creds.numbering).unwrap_err();
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
}
