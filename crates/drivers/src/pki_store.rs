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
//!
//! A client needs one case's CA certificate and its own certificate and key, not the
//! whole store: [`PkiStore::load_client`] reads and checks only those (a client starts
//! in milliseconds, where loading and checking every key of all 24 cases takes half a
//! second). A gateway loads everything it serves.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use wtls::codec::Codec;
use wtls::crypto::pk::KeyPair;
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

/// Where a command that serves other processes finds its PKI, and whether it may issue
/// one there (the operator's `--pki` and `--create-pki`): the command opens it after its
/// own checks, with [`PkiSource::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PkiSource {
    pub dir: PathBuf,
    pub create: bool,
}

impl PkiSource {
    /// Loads the PKI, or issues it when `create` is set; otherwise says how to make one.
    pub fn open(&self) -> Result<PkiStore> {
        PkiStore::open(&self.dir, self.create)
    }
}

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

/// What a client of one CA/leaf combination needs: the CA it trusts and its own
/// certificate and key. Cloning is cheap, as for [`CaseCredentials`].
#[derive(Debug, Clone)]
pub struct ClientCredentials {
    pub case: Case,
    pub ca_cert: WtlsCertificate,
    pub client_cert: WtlsCertificate,
    pub client_key: KeyPair,
    /// The ParameterIndex numbering the certificates were issued with.
    pub numbering: ParameterNumbering,
}

impl CaseCredentials {
    /// The client's part.
    pub fn client(&self) -> ClientCredentials {
        ClientCredentials {
            case: self.case,
            ca_cert: self.ca_cert.clone(),
            client_cert: self.client_cert.clone(),
            client_key: self.client_key.clone(),
            numbering: self.numbering,
        }
    }
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
        prepare_dir(dir, force)?;
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
            let (entry, ca) = issue_authority(dir, spec, (not_before, not_after), numbering)?;
            manifest.authorities.push(entry);
            authorities.insert(spec, ca);
        }
        for case in &runnable {
            let entry = issue_case(dir, &authorities[&case.ca], case, (not_before, not_after))?;
            manifest.cases.push(entry);
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
        let (manifest, numbering) = read_manifest(dir)?;
        let manifest_path = dir.join(MANIFEST);
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
            let leaves = Leaves::of(dir, &manifest, &ca.cert, case, now, numbering);
            let (server_cert, server_key) =
                leaves.load(&entry.server_cert, &entry.server_key, SERVER_SUBJECT)?;
            let (client_cert, client_key) =
                leaves.load(&entry.client_cert, &entry.client_key, CLIENT_SUBJECT)?;
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

    /// Loads from `dir` only what a client of `case` needs, checked as [`PkiStore::load`]
    /// checks it: the manifest, the case's CA certificate, and the client certificate
    /// (validated under that CA now) with its key (mode 0600, the certificate's key).
    /// The CA's key and the gateway's files are not read.
    pub fn load_client(dir: &Path, case: &Case) -> Result<ClientCredentials> {
        Self::load_client_at(dir, case, unix_now()?)
    }

    /// [`PkiStore::load_client`] validating at time `now`.
    pub fn load_client_at(dir: &Path, case: &Case, now: u32) -> Result<ClientCredentials> {
        let (manifest, numbering) = read_manifest(dir)?;
        let manifest_path = dir.join(MANIFEST);
        let entry = manifest
            .cases
            .iter()
            .find(|e| Case::parse(&e.case).is_ok_and(|c| c == *case))
            .ok_or_else(|| missing_case(&manifest, dir, case))?;
        let authority = manifest
            .authorities
            .iter()
            .find(|a| a.specifier == case.ca.short())
            .ok_or_else(|| {
                anyhow!(
                    "{}: case {case} names CA {} which the manifest does not list",
                    manifest_path.display(),
                    case.ca
                )
            })?;
        let ca_cert = read_cert(dir, &authority.cert)?;
        let leaves = Leaves::of(dir, &manifest, &ca_cert, *case, now, numbering);
        let (client_cert, client_key) =
            leaves.load(&entry.client_cert, &entry.client_key, CLIENT_SUBJECT)?;
        Ok(ClientCredentials {
            case: *case,
            ca_cert,
            client_cert,
            client_key,
            numbering,
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
        self.cases
            .get(case)
            .cloned()
            .ok_or_else(|| missing_case(&self.manifest, &self.dir, case))
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

/// Makes `dir` ready for a new PKI: refuses to replace one unless `force` is set,
/// creates the directory (mode 0700) if missing, and removes an old manifest first so
/// that an interrupted run never leaves a manifest pointing at a mixture of old and new
/// files.
fn prepare_dir(dir: &Path, force: bool) -> Result<()> {
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
        fs::remove_file(&manifest_path)
            .with_context(|| format!("cannot remove {}", manifest_path.display()))?;
    }
    Ok(())
}

/// Issues the root CA of `spec` valid over `validity` (Unix seconds) and writes its
/// certificate and key into `dir`.
fn issue_authority(
    dir: &Path,
    spec: Specifier,
    validity: (u32, u32),
    numbering: ParameterNumbering,
) -> Result<(AuthorityEntry, Authority)> {
    let name = Authority::default_name(spec);
    let ca = Authority::new_root_numbered(spec, &name, validity.0, validity.1, numbering)
        .with_context(|| format!("cannot create CA {name}"))?;
    let entry = AuthorityEntry {
        specifier: spec.short().to_string(),
        name,
        cert: format!("ca-{}.wcert", spec.short()),
        key: format!("ca-{}.key.pem", spec.short()),
    };
    write_public(dir, &entry.cert, &ca.cert.to_bytes())?;
    write_private(dir, &entry.key, &ca.key)?;
    Ok((entry, ca))
}

/// Issues the gateway and client certificates of `case` under `ca`, each with a key of
/// its own (even two leaves of the same specifier), and writes them into `dir`.
fn issue_case(dir: &Path, ca: &Authority, case: &Case, validity: (u32, u32)) -> Result<CaseEntry> {
    let stem = case_stem(case);
    let issue = |role: &str, subject: &str| -> Result<(String, String)> {
        let key = KeyPair::generate(case.leaf)
            .with_context(|| format!("cannot generate the {role} key of {case}"))?;
        let cert = ca
            .issue(subject, &key, validity.0, validity.1)
            .with_context(|| format!("cannot issue the {role} certificate of {case}"))?;
        let cert_file = format!("{stem}-{role}.wcert");
        let key_file = format!("{stem}-{role}.key.pem");
        write_public(dir, &cert_file, &cert.to_bytes())?;
        write_private(dir, &key_file, &key)?;
        Ok((cert_file, key_file))
    };
    let (server_cert, server_key) = issue("server", SERVER_SUBJECT)?;
    let (client_cert, client_key) = issue("client", CLIENT_SUBJECT)?;
    Ok(CaseEntry {
        case: case.to_string(),
        ca: case.ca.short().to_string(),
        leaf: case.leaf.short().to_string(),
        category: case.category,
        group: case.group,
        server_cert,
        server_key,
        client_cert,
        client_key,
    })
}

/// Reads and checks the manifest of `dir`: its format and its numbering.
fn read_manifest(dir: &Path) -> Result<(Manifest, ParameterNumbering)> {
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
    Ok((manifest, numbering))
}

/// Why `case` is not in the store at `dir`: unavailable on this machine (with the
/// reason the manifest recorded), or never issued.
fn missing_case(manifest: &Manifest, dir: &Path, case: &Case) -> anyhow::Error {
    let why: Vec<&str> = [case.ca, case.leaf]
        .iter()
        .filter_map(|s| {
            manifest
                .unavailable
                .iter()
                .find(|(name, _)| name == s.short())
                .map(|(_, reason)| reason.as_str())
        })
        .collect();
    if why.is_empty() {
        anyhow!(
            "case {case} is not in the PKI at {}; re-run init with --force to issue all 24",
            dir.display()
        )
    } else {
        anyhow!(
            "case {case} is unavailable on this machine: {}",
            why.join("; ")
        )
    }
}

/// Loads the leaves of one case, each validated under the case's CA at `now` and
/// checked against its key.
struct Leaves<'a> {
    dir: &'a Path,
    manifest: &'a Manifest,
    ca_cert: &'a WtlsCertificate,
    case: Case,
    now: u32,
    numbering: ParameterNumbering,
}

impl<'a> Leaves<'a> {
    fn of(
        dir: &'a Path,
        manifest: &'a Manifest,
        ca_cert: &'a WtlsCertificate,
        case: Case,
        now: u32,
        numbering: ParameterNumbering,
    ) -> Self {
        Leaves {
            dir,
            manifest,
            ca_cert,
            case,
            now,
            numbering,
        }
    }

    /// The certificate in `cert_file` for `subject` and the key in `key_file`.
    fn load(
        &self,
        cert_file: &str,
        key_file: &str,
        subject: &str,
    ) -> Result<(WtlsCertificate, KeyPair)> {
        let (dir, now) = (self.dir, self.now);
        let cert = read_cert(dir, cert_file)?;
        let key = read_key(dir, key_file, self.case.leaf)?;
        let certified = pki::validate(
            &cert,
            self.ca_cert,
            Some(&Identifier::text(subject)),
            now,
            self.numbering,
        )
        .with_context(|| {
            format!(
                "{} does not validate under {} at {now}; re-run init with --force to reissue",
                dir.join(cert_file).display(),
                entry_ca_file(self.manifest, self.case.ca)
            )
        })?;
        check_key_matches(&certified, &key, dir, cert_file, key_file)?;
        Ok((cert, key))
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

mod files;
/// The ML-DSA chains of the DTLS 1.3 rows (issued through aws-lc-rs, hence `dtls13`).
#[cfg(feature = "dtls13")]
pub mod ml_dsa;

use files::{check_key_matches, read_cert, read_key, write_private, write_public};

#[cfg(test)]
mod tests;
