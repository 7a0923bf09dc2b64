//! An experiment file as written (TOML, read with serde and the `toml` crate), and its
//! check against the registry and the catalogues: [`Experiment::load`] either returns a
//! plan every value of which is known and in range, or a [`FileError`] that names the
//! file, the line and the key, and lists the values the key accepts. Nothing runs
//! before the whole file has passed.
//!
//! Every key is documented in docs/experiments.md.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use wtlsperf_drivers::device::THIS_MACHINE;
use wtlsperf_drivers::registry::{self, Contender};
use wtlsperf_models::device::DeviceProfile;

use super::bearer::{Bearer, InlineBearer};
use crate::evaluate::vocabulary::Catalogue;

/// Most runs a point may ask for: a bound on what one file can make the bench do.
pub const MAX_RUNS: usize = 10_000;
/// Longest load point (s): every load loop is bounded in time.
pub const MAX_LOAD_SECONDS: f64 = 120.0;
/// The load points' default length (s).
pub const DEFAULT_LOAD_SECONDS: f64 = 2.0;
/// The load points' default and largest number of calibrating warm-ups.
pub const DEFAULT_WARMUPS: usize = 3;
pub const MAX_WARMUPS: usize = 6;

/// Why a file was refused: where, which key, and what is wrong with it (with the known
/// values where the key takes a name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {}{message}", file.display(), line.map_or(String::new(), |l| format!(":{l}")), if key.is_empty() { String::new() } else { format!("{key}: ") })]
pub struct FileError {
    pub file: PathBuf,
    /// 1-based; `None` when the file could not be read at all.
    pub line: Option<usize>,
    /// The key as a path: `bearers[2].mtu`, `measure.load.rho[0]`; empty when the
    /// file could not be read.
    pub key: String,
    pub message: String,
}

/// The file as written: every key optional where the docs give a default.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    title: Spanned<String>,
    #[serde(default)]
    description: String,
    contenders: Spanned<Vec<Spanned<String>>>,
    bearers: Option<Spanned<Vec<Spanned<RawBearer>>>>,
    devices: Option<Spanned<Vec<Spanned<String>>>>,
    loss: Option<Spanned<Vec<Spanned<f64>>>>,
    runs: Option<Spanned<i64>>,
    #[serde(default)]
    seed: u64,
    measure: Option<Spanned<RawMeasure>>,
}

/// A bearer of the list: a catalogue name, or a table defining one.
#[derive(Debug)]
enum RawBearer {
    Named(String),
    Inline(InlineBearer),
}

impl<'de> Deserialize<'de> for RawBearer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = RawBearer;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a bearer's name from data/bearers/profiles.csv or a table defining one",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawBearer, E> {
                Ok(RawBearer::Named(v.to_owned()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<RawBearer, A::Error> {
                let inline =
                    InlineBearer::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(RawBearer::Inline(inline))
            }
        }
        d.deserialize_any(Visit)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeasure {
    flights: Option<bool>,
    bearer_runs: Option<bool>,
    loss_curves: Option<bool>,
    load: Option<Spanned<RawLoad>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoad {
    rho: Spanned<Vec<Spanned<f64>>>,
    seconds: Option<Spanned<f64>>,
    warmups: Option<Spanned<i64>>,
}

/// A device an experiment runs its clients as.
#[derive(Debug, Clone)]
pub enum Device {
    /// A catalogue profile: the client's flights are held to its priced time.
    Profile(DeviceProfile),
    /// This machine: the client runs at its own speed, nothing held.
    ThisMachine,
}

impl Device {
    /// The `device` column.
    pub fn name(&self) -> &str {
        match self {
            Device::Profile(p) => &p.name,
            Device::ThisMachine => THIS_MACHINE,
        }
    }
}

/// Which measurements an experiment takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// Bytes and flights of each contender at each bearer's payload limit.
    pub flights: bool,
    /// Real handshakes over each emulated bearer, as each device, beside Eq. 3.84.
    pub bearer_runs: bool,
    /// Completion under loss in virtual time, at each loss level.
    pub loss_curves: bool,
    /// Load points on the real gateway.
    pub load: Option<LoadPlan>,
}

/// The load points: each contender at each target utilisation.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPlan {
    pub rho: Vec<f64>,
    pub seconds: f64,
    /// Short runs that correct the first rate by the utilisation they measure (0: offer
    /// rho over the in-memory server CPU as it is).
    pub warmups: usize,
}

/// A checked experiment: what [`super::run`] runs.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub file: PathBuf,
    pub title: String,
    pub description: String,
    pub contenders: Vec<Contender>,
    pub bearers: Vec<Bearer>,
    pub devices: Vec<Device>,
    /// Loss probabilities of the loss curves, each in [0, 1).
    pub levels: Vec<f64>,
    pub runs: usize,
    pub seed: u64,
    pub measure: Measure,
}

/// Byte offsets to 1-based lines, and the key a toml error's span points at.
struct Source<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    fn error(
        &self,
        span: Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> FileError {
        FileError {
            file: self.file.to_path_buf(),
            line: Some(self.line(span.start)),
            key: key.into(),
            message: message.into(),
        }
    }

    /// toml's own error (syntax, an unknown key, a wrong type): its line, and the key
    /// as written at or before its span, within the table whose header comes before it.
    fn toml_error(&self, e: &toml::de::Error) -> FileError {
        let start = e.span().map_or(0, |s| s.start);
        FileError {
            file: self.file.to_path_buf(),
            line: e.span().map(|_| self.line(start)),
            key: self.key_at(start),
            message: e.message().trim().to_owned(),
        }
    }

    /// The dotted key a byte offset belongs to: the nearest `key =` at or above it and
    /// the nearest `[table]` header above that.
    fn key_at(&self, offset: usize) -> String {
        // toml's spans fall on character boundaries; a bad one reads as the whole text
        let before = self.text.get(..offset).unwrap_or(self.text);
        // The key itself when the span starts on it (an unknown key's span).
        let rest = &self.text[before.len()..];
        let here: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        let mut key = None;
        let mut table = None;
        for line in before.lines().rev() {
            let t = line.trim();
            if t.starts_with('[') {
                table = Some(t.trim_matches(|c| c == '[' || c == ']').trim().to_owned());
                break;
            }
            if key.is_none() && !t.starts_with('#') {
                if let Some((k, _)) = t.split_once('=') {
                    let k = k.trim().trim_start_matches(['{', ',']).trim();
                    if !k.is_empty() && !k.contains(['"', '[', ' ']) {
                        key = Some(k.to_owned());
                    }
                }
            }
        }
        // a bare word at the span is the key only when `=` follows it (else a value)
        let is_key = !here.is_empty() && rest[here.len()..].trim_start().starts_with('=');
        let key = if is_key { Some(here) } else { key };
        match (table, key) {
            (Some(t), Some(k)) => format!("{t}.{k}"),
            (Some(t), None) => t,
            (None, Some(k)) => k,
            (None, None) => "(top level)".to_owned(),
        }
    }
}

impl Experiment {
    /// Reads and checks `path` against the shipped registry and `catalogue`.
    pub fn load(path: &Path, catalogue: &Catalogue) -> Result<Experiment, FileError> {
        let text = std::fs::read_to_string(path).map_err(|e| FileError {
            file: path.to_path_buf(),
            line: None,
            key: String::new(),
            message: format!("cannot read it: {e}"),
        })?;
        Experiment::parse(path, &text, catalogue)
    }

    /// Checks `text`, the contents of `file`.
    pub fn parse(file: &Path, text: &str, catalogue: &Catalogue) -> Result<Experiment, FileError> {
        let src = Source { file, text };
        let raw: RawFile = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
        let title = raw.title.get_ref().trim().to_owned();
        if title.is_empty() {
            return Err(src.error(raw.title.span(), "title", "must not be empty"));
        }
        let measure = measure(&src, raw.measure.as_ref(), raw.loss.is_some())?;
        let levels = levels(&src, raw.loss.as_ref(), measure.loss_curves)?;
        Ok(Experiment {
            file: file.to_path_buf(),
            title,
            description: raw.description.trim().to_owned(),
            contenders: contenders(&src, &raw.contenders)?,
            bearers: bearers(&src, raw.bearers.as_ref(), &measure, catalogue)?,
            devices: devices(&src, raw.devices.as_ref(), catalogue)?,
            levels,
            runs: runs(&src, raw.runs.as_ref())?,
            seed: raw.seed,
            measure,
        })
    }
}

/// A list key that must name at least one value.
fn non_empty<T>(
    src: &Source,
    list: &Spanned<Vec<T>>,
    key: &str,
    known: &str,
) -> Result<(), FileError> {
    if list.get_ref().is_empty() {
        return Err(src.error(list.span(), key, format!("lists nothing; known: {known}")));
    }
    Ok(())
}

fn contenders(
    src: &Source,
    list: &Spanned<Vec<Spanned<String>>>,
) -> Result<Vec<Contender>, FileError> {
    let known = || {
        registry::available()
            .flat_map(|p| p.configurations())
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    non_empty(src, list, "contenders", &known())?;
    let mut out: Vec<Contender> = Vec::new();
    for (i, text) in list.get_ref().iter().enumerate() {
        let key = format!("contenders[{i}]");
        let c = registry::contender(text.get_ref())
            .map_err(|e| src.error(text.span(), &key, e.to_string()))?;
        if out.contains(&c) {
            return Err(src.error(text.span(), &key, format!("{c} is listed twice")));
        }
        out.push(c);
    }
    Ok(out)
}

/// The bearers: needed by every measurement but the load points (which run on
/// loopback).
fn bearers(
    src: &Source,
    list: Option<&Spanned<Vec<Spanned<RawBearer>>>>,
    measure: &Measure,
    catalogue: &Catalogue,
) -> Result<Vec<Bearer>, FileError> {
    let names = || {
        catalogue
            .bearers
            .profiles()
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(list) = list else {
        if measure.flights || measure.bearer_runs || measure.loss_curves {
            return Err(FileError {
                file: src.file.to_path_buf(),
                line: None,
                key: "bearers".to_owned(),
                message: format!(
                    "flights, bearer runs and loss curves need at least one bearer; known: {}, or an inline table",
                    names()
                ),
            });
        }
        return Ok(Vec::new());
    };
    non_empty(
        src,
        list,
        "bearers",
        &format!("{}, or an inline table", names()),
    )?;
    let mut out: Vec<Bearer> = Vec::new();
    for (i, item) in list.get_ref().iter().enumerate() {
        let key = format!("bearers[{i}]");
        let bearer = match item.get_ref() {
            RawBearer::Named(name) => {
                let profile = catalogue.bearer(name).map_err(|_| {
                    src.error(
                        item.span(),
                        &key,
                        format!("unknown bearer {name:?}; the catalogue (data/bearers/profiles.csv) has: {}", names()),
                    )
                })?;
                Bearer::catalogue(profile.clone())
            }
            RawBearer::Inline(inline) => {
                if catalogue.bearer(&inline.name).is_ok() {
                    return Err(src.error(
                        item.span(),
                        format!("{key}.name"),
                        format!(
                            "{:?} is a catalogue bearer's name; an inline bearer needs its own",
                            inline.name
                        ),
                    ));
                }
                inline
                    .profile()
                    .map_err(|(field, why)| src.error(item.span(), format!("{key}.{field}"), why))?
            }
        };
        if out.iter().any(|b| b.profile.name == bearer.profile.name) {
            return Err(src.error(
                item.span(),
                &key,
                format!("{} is listed twice", bearer.profile.name),
            ));
        }
        out.push(bearer);
    }
    Ok(out)
}

fn devices(
    src: &Source,
    list: Option<&Spanned<Vec<Spanned<String>>>>,
    catalogue: &Catalogue,
) -> Result<Vec<Device>, FileError> {
    let Some(list) = list else {
        return Ok(vec![Device::ThisMachine]);
    };
    let names = || {
        catalogue
            .devices
            .iter()
            .map(|d| d.name.as_str())
            .chain([THIS_MACHINE])
            .collect::<Vec<_>>()
            .join(", ")
    };
    non_empty(src, list, "devices", &names())?;
    let mut out: Vec<Device> = Vec::new();
    for (i, name) in list.get_ref().iter().enumerate() {
        let key = format!("devices[{i}]");
        let device = if name.get_ref() == THIS_MACHINE {
            Device::ThisMachine
        } else {
            let p = catalogue
                .devices
                .iter()
                .find(|d| &d.name == name.get_ref())
                .ok_or_else(|| {
                    src.error(
                        name.span(),
                        &key,
                        format!(
                            "unknown device {:?}; known (data/devices/profiles.csv): {}",
                            name.get_ref(),
                            names()
                        ),
                    )
                })?;
            Device::Profile(p.clone())
        };
        if out.iter().any(|d| d.name() == device.name()) {
            return Err(src.error(
                name.span(),
                &key,
                format!("{} is listed twice", device.name()),
            ));
        }
        out.push(device);
    }
    Ok(out)
}

/// A probability of the file: in [0, 1).
fn probability(src: &Source, v: &Spanned<f64>, key: &str) -> Result<f64, FileError> {
    let p = *v.get_ref();
    if !(0.0..1.0).contains(&p) {
        return Err(src.error(
            v.span(),
            key,
            format!("{p} is not a loss probability: it must lie in [0, 1) (0.05 is 5 %)"),
        ));
    }
    Ok(p)
}

fn levels(
    src: &Source,
    list: Option<&Spanned<Vec<Spanned<f64>>>>,
    curves: bool,
) -> Result<Vec<f64>, FileError> {
    let Some(list) = list else {
        if curves {
            return Err(FileError {
                file: src.file.to_path_buf(),
                line: None,
                key: "loss".to_owned(),
                message: "measure.loss_curves is on, so the file needs loss levels (loss = [0.0, 0.05, 0.1])".to_owned(),
            });
        }
        return Ok(Vec::new());
    };
    non_empty(
        src,
        list,
        "loss",
        "probabilities in [0, 1), e.g. [0.0, 0.05]",
    )?;
    let mut out = Vec::new();
    for (i, v) in list.get_ref().iter().enumerate() {
        let p = probability(src, v, &format!("loss[{i}]"))?;
        if out.contains(&p) {
            return Err(src.error(
                v.span(),
                format!("loss[{i}]"),
                format!("{p} is listed twice"),
            ));
        }
        out.push(p);
    }
    Ok(out)
}

fn runs(src: &Source, runs: Option<&Spanned<i64>>) -> Result<usize, FileError> {
    let Some(r) = runs else { return Ok(3) };
    usize::try_from(*r.get_ref())
        .ok()
        .filter(|n| (1..=MAX_RUNS).contains(n))
        .ok_or_else(|| {
            src.error(
                r.span(),
                "runs",
                format!("{} runs: must lie in 1..={MAX_RUNS}", r.get_ref()),
            )
        })
}

/// The measurements: flights and bearer runs unless turned off, the loss curves when
/// the file gives loss levels.
fn measure(
    src: &Source,
    raw: Option<&Spanned<RawMeasure>>,
    has_levels: bool,
) -> Result<Measure, FileError> {
    let Some(raw) = raw else {
        return Ok(Measure {
            flights: true,
            bearer_runs: true,
            loss_curves: has_levels,
            load: None,
        });
    };
    let m = raw.get_ref();
    let load = match &m.load {
        None => None,
        Some(load) => Some(load_plan(src, load)?),
    };
    let measure = Measure {
        flights: m.flights.unwrap_or(true),
        bearer_runs: m.bearer_runs.unwrap_or(true),
        loss_curves: m.loss_curves.unwrap_or(has_levels),
        load,
    };
    if !(measure.flights || measure.bearer_runs || measure.loss_curves || measure.load.is_some()) {
        return Err(src.error(
            raw.span(),
            "measure",
            "asks for no measurement; known: flights, bearer_runs, loss_curves, load",
        ));
    }
    Ok(measure)
}

fn load_plan(src: &Source, load: &Spanned<RawLoad>) -> Result<LoadPlan, FileError> {
    let l = load.get_ref();
    non_empty(
        src,
        &l.rho,
        "measure.load.rho",
        "utilisations in (0, 1), e.g. [0.3, 0.5]",
    )?;
    let mut rho = Vec::new();
    for (i, v) in l.rho.get_ref().iter().enumerate() {
        let r = *v.get_ref();
        if !(r > 0.0 && r < 1.0) {
            return Err(src.error(
                v.span(),
                format!("measure.load.rho[{i}]"),
                format!("{r} is not a utilisation of a stable queue: it must lie in (0, 1)"),
            ));
        }
        rho.push(r);
    }
    let seconds = match &l.seconds {
        None => DEFAULT_LOAD_SECONDS,
        Some(s) => {
            let v = *s.get_ref();
            if !(v > 0.0 && v <= MAX_LOAD_SECONDS) {
                return Err(src.error(
                    s.span(),
                    "measure.load.seconds",
                    format!("{v} s: must lie in (0, {MAX_LOAD_SECONDS}]"),
                ));
            }
            v
        }
    };
    let warmups = match &l.warmups {
        None => DEFAULT_WARMUPS,
        Some(w) => usize::try_from(*w.get_ref())
            .ok()
            .filter(|n| *n <= MAX_WARMUPS)
            .ok_or_else(|| {
                src.error(
                    w.span(),
                    "measure.load.warmups",
                    format!("{} warm-ups: must lie in 0..={MAX_WARMUPS}", w.get_ref()),
                )
            })?,
    };
    Ok(LoadPlan {
        rho,
        seconds,
        warmups,
    })
}
