//! The campaign's vocabulary: the devices and bearers it runs on, loaded from their data
//! files and validated once at start-up, and the typed names its rows carry. A row names
//! its device and bearer with [`DeviceName`] and [`BearerName`], which only a loaded
//! catalogue entry hands out; they become text at the CSV and JSON edge only (serialised
//! as the catalogue name). Every section that lists devices or bearers lists the ones
//! here, so a new row in `data/devices/` or `data/bearers/profiles.csv` appears in all of
//! them without a code change.

use std::fmt;
use std::path::Path;

use anyhow::Context;
use serde::Serialize;
use wtlsperf_bearer::{BearerCatalogue, LinkProfile, RateKind};
use wtlsperf_models::device::{load_profiles, CatalogueFiles, DeviceProfile};
use wtlsperf_models::Authentication;

/// The device the thesis measured on (Bayoglu 2004's client), the reference of its
/// re-enactments.
pub const THESIS_DEVICE: &str = "nokia7650";
/// The bearer of the thesis' measured handshakes (Table 4.12).
pub const THESIS_BEARER: &str = "gsm-csd";
/// The clients of the studies themselves (Bayoglu's handset, Levi-Savas' ARM7); every
/// other catalogue device is one of today's.
pub const STUDY_DEVICES: [&str; 2] = [THESIS_DEVICE, "arm7tdmi-25mhz"];

/// A device a row was measured or modelled on: a catalogue profile, or this machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct DeviceName(String);

impl DeviceName {
    /// The name of a catalogue profile.
    pub fn of(profile: &DeviceProfile) -> DeviceName {
        DeviceName(profile.name.clone())
    }

    /// This machine, measured in the run (`this-machine`).
    pub fn this_machine() -> DeviceName {
        DeviceName(wtlsperf_drivers::device::THIS_MACHINE.to_owned())
    }

    /// Whether this is the thesis' own client.
    pub fn is_thesis_device(&self) -> bool {
        self.0 == THESIS_DEVICE
    }

    /// Whether this is one of the studies' own clients (not one of today's devices).
    pub fn is_study_device(&self) -> bool {
        STUDY_DEVICES.contains(&self.0.as_str())
    }

    /// The catalogue name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A report cell's text.
impl From<&DeviceName> for String {
    fn from(name: &DeviceName) -> String {
        name.0.clone()
    }
}

impl fmt::Display for DeviceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A bearer profile a row ran or was modelled over: a catalogue profile, or a link
/// derived from one (as the GSM CSD link of 2004 in the device re-enactment).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct BearerName(String);

impl BearerName {
    /// The name of a catalogue profile.
    pub fn of(profile: &LinkProfile) -> BearerName {
        BearerName(profile.name.clone())
    }

    /// Whether this is the bearer of the thesis' measured handshakes.
    pub fn is_thesis_bearer(&self) -> bool {
        self.0 == THESIS_BEARER
    }

    /// Whether this is the link called `name` (a choice of a plan or a figure).
    pub fn is(&self, name: &str) -> bool {
        self.0 == name
    }

    /// The catalogue name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A report cell's text.
impl From<&BearerName> for String {
    fn from(name: &BearerName) -> String {
        name.0.clone()
    }
}

impl fmt::Display for BearerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `server` or `mutual`: the CSV value of an authentication mode (its serde name), for
/// the report's text.
pub fn auth_name(auth: Authentication) -> &'static str {
    match auth {
        Authentication::Mutual => "mutual",
        Authentication::ServerAuth => "server",
    }
}

/// The devices and bearers of the campaign.
#[derive(Debug, Clone)]
pub struct Catalogue {
    /// Every catalogue device, completed by the scaling rule, in catalogue order.
    pub devices: Vec<DeviceProfile>,
    /// Every bearer profile.
    pub bearers: BearerCatalogue,
}

impl Catalogue {
    /// The shipped catalogues (`data/devices/`, `data/bearers/profiles.csv`).
    pub fn shipped() -> anyhow::Result<Catalogue> {
        Catalogue::checked(Catalogue {
            devices: wtlsperf_models::device::profiles()
                .context("device catalogue data/devices/")?,
            bearers: BearerCatalogue::shipped()
                .context("bearer catalogue")?
                .clone(),
        })
    }

    /// The catalogues of a data directory laid out like `data/`: `devices/profiles.csv`,
    /// `devices/operations.csv` and `bearers/profiles.csv`.
    pub fn load(dir: &Path) -> anyhow::Result<Catalogue> {
        let devices = CatalogueFiles::read(&dir.join("devices"))
            .and_then(|files| load_profiles(&files))
            .with_context(|| format!("device catalogue in {}", dir.display()))?;
        let bearers = BearerCatalogue::load(&dir.join("bearers").join("profiles.csv"))
            .with_context(|| format!("bearer catalogue in {}", dir.display()))?;
        Catalogue::checked(Catalogue { devices, bearers })
    }

    /// The studies' reference device and bearer must be there: the re-enactments are
    /// built on them.
    fn checked(catalogue: Catalogue) -> anyhow::Result<Catalogue> {
        catalogue.thesis_device()?;
        catalogue.bearers.get(THESIS_BEARER)?;
        anyhow::ensure!(
            catalogue.compared_bearers().next().is_some(),
            "the bearer catalogue marks no bearer as compared"
        );
        Ok(catalogue)
    }

    /// The thesis' client.
    pub fn thesis_device(&self) -> anyhow::Result<&DeviceProfile> {
        self.devices
            .iter()
            .find(|d| d.name == THESIS_DEVICE)
            .with_context(|| format!("the device catalogue has no {THESIS_DEVICE}"))
    }

    /// The bearers the comparisons across devices and protocols list, slowest first as
    /// the catalogue orders them.
    pub fn compared_bearers(&self) -> impl Iterator<Item = &LinkProfile> + Clone {
        self.bearers.compared()
    }

    /// The compared bearers whose profile is a typical figure rather than a measurement
    /// or a study's number (their `source` in `bearers/profiles.csv` says so), with the
    /// sentence every table, figure and finding that uses them carries: whole findings
    /// rest on them, and a reader must know their rates are nominal peak rates.
    pub fn typical_bearer_note(&self) -> Option<String> {
        nominal_rates_note(self.compared_bearers())
    }

    /// A bearer by name (a choice of the plan, such as the lossy link's).
    pub fn bearer(&self, name: &str) -> anyhow::Result<&LinkProfile> {
        Ok(self.bearers.get(name)?)
    }
}

/// The note on `bearers` whose rates are nominal (`rate_kind` in `bearers/profiles.csv`),
/// for a part that uses bearers beyond the compared ones (the satellite profile). Only a
/// peak rate bounds anything: serialisation at the standard's peak is the least a link
/// of that class takes, while a typical rate and every profile's latency are typical
/// values, so a duration over them is typical, not a bound.
pub fn nominal_rates_note<'a>(bearers: impl Iterator<Item = &'a LinkProfile>) -> Option<String> {
    let nominal: Vec<&LinkProfile> = bearers.filter(|b| b.rate_kind.is_nominal()).collect();
    let named: Vec<String> = nominal
        .iter()
        .map(|b| format!("{} ({})", b.name, b.rate_kind.describe()))
        .collect();
    let of_kind = |kind: RateKind| -> Vec<&str> {
        nominal
            .iter()
            .filter(|b| b.rate_kind == kind)
            .map(|b| b.name.as_str())
            .collect()
    };
    let (peak, typical) = (of_kind(RateKind::Peak), of_kind(RateKind::Typical));
    let mut reading = Vec::new();
    if !peak.is_empty() {
        reading.push(format!(
            "over the peak-rate profiles ({}) the serialisation is a lower bound on what such a link gives",
            peak.join(", ")
        ));
    }
    if !typical.is_empty() {
        reading.push(format!(
            "the typical-rate profiles ({}) give a typical serialisation, not a bound",
            typical.join(", ")
        ));
    }
    (!named.is_empty()).then(|| {
        format!(
            "Nominal bearer rates: {}. These profiles are not measurements: their rates are not effective rates measured on a network (data/bearers/profiles.csv names the 3GPP document or source each rests on), and every latency is a typical value; {}; so a duration over them is a typical figure.",
            named.join("; "),
            reading.join("; ")
        )
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A data directory like `data/` with one more device (`fixture-m33`, P-256 only) and
    /// one more compared bearer (`fixture-5g`).
    pub(crate) fn fixture_data() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
        let devices = dir.path().join("devices");
        let bearers = dir.path().join("bearers");
        std::fs::create_dir_all(&devices).unwrap();
        std::fs::create_dir_all(&bearers).unwrap();
        let append = |from: &Path, to: &Path, row: &str| {
            let text = std::fs::read_to_string(from).unwrap();
            std::fs::write(to, format!("{text}{row}\n")).unwrap();
        };
        append(
            &root.join("devices/profiles.csv"),
            &devices.join("profiles.csv"),
            "fixture-m33,\"a fixture Cortex-M33\",100,nokia7650,\"published: a fixture\",256p",
        );
        append(
            &root.join("devices/operations.csv"),
            &devices.join("operations.csv"),
            "fixture-m33,ecdh,256p,12.5,\"a fixture\",\nfixture-m33,ecdsa_verify,256p,14,\"a fixture\",",
        );
        append(
            &root.join("bearers/profiles.csv"),
            &bearers.join("profiles.csv"),
            "fixture-5g,2000000,4000000,normal,10,2,28,1400,\"a fixture\",yes,\"a fixture\",peak",
        );
        dir
    }

    /// Only a peak rate makes the serialisation a lower bound; a typical rate and the
    /// latencies make a duration typical, and the note says which profile is which.
    #[test]
    fn the_nominal_rates_note_bounds_only_the_peak_rates() {
        let of = |name: &str, kind: RateKind| LinkProfile {
            name: name.into(),
            rate_kind: kind,
            ..LinkProfile::loopback()
        };
        let (edge, nb) = (of("edge", RateKind::Typical), of("nb-iot", RateKind::Peak));
        let both = nominal_rates_note([&edge, &nb].into_iter()).unwrap();
        assert!(
            both.contains("peak-rate profiles (nb-iot) the serialisation is a lower bound"),
            "{both}"
        );
        assert!(
            both.contains("typical-rate profiles (edge) give a typical serialisation, not a bound"),
            "{both}"
        );
        let peak = nominal_rates_note([&nb].into_iter()).unwrap();
        assert!(!peak.contains("typical-rate"), "{peak}");
        let study = of("gsm-csd", RateKind::Study);
        assert!(nominal_rates_note([&study].into_iter()).is_none());
    }

    #[test]
    fn a_data_directory_brings_its_new_rows() {
        let dir = fixture_data();
        let loaded = Catalogue::load(dir.path()).unwrap();
        let shipped = Catalogue::shipped().unwrap();
        assert_eq!(loaded.devices.len(), shipped.devices.len() + 1);
        assert!(loaded.devices.iter().any(|d| d.name == "fixture-m33"));
        let compared: Vec<&str> = loaded.compared_bearers().map(|b| b.name.as_str()).collect();
        assert_eq!(compared.last(), Some(&"fixture-5g"));
        assert_eq!(compared.len(), shipped.compared_bearers().count() + 1);
    }

    #[test]
    fn a_catalogue_without_the_thesis_bearer_is_refused() {
        let dir = fixture_data();
        let path = dir.path().join("bearers/profiles.csv");
        let text = std::fs::read_to_string(&path).unwrap();
        let without: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("gsm-csd,"))
            .collect();
        std::fs::write(&path, without.join("\n")).unwrap();
        let e = format!("{:#}", Catalogue::load(dir.path()).unwrap_err());
        assert!(e.contains("gsm-csd"), "{e}");
    }
}
