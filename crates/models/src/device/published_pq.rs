//! Published post-quantum costs: ML-KEM and ML-DSA on the catalogue's devices, from the
//! rows of `data/devices/operations.csv` whose primitive is a post-quantum one.
//!
//! Each row names the implementation it was measured with (pqm4's `clean` is PQClean's
//! portable C, `m4fspeed`/`m4f` are its Cortex-M4 assembler versions). A device's
//! profile uses its fastest published implementation of an operation; the others stay
//! beside it for comparison. A row with an empty `ms` says that no number is published
//! for that device and operation: it is reported as "not available" and never filled in
//! by the scaling rule of [`super::scaling`], which was made for RSA and elliptic
//! curves and does not describe lattice arithmetic.

use super::catalog::CatalogError;
use super::executed::{PqPrimitive, PqScheme};
use super::{Cost, Source};
use serde::Deserialize;

const OPERATIONS_CSV: &str = include_str!("../../../../data/devices/operations.csv");
const FILE: &str = "data/devices/operations.csv";

/// One published post-quantum cost, or the statement that none is published.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedPqCost {
    /// Device (a row of `profiles.csv`).
    pub device: String,
    /// The operation.
    pub primitive: PqPrimitive,
    /// The scheme and parameter set.
    pub scheme: PqScheme,
    /// The implementation measured (`m4fspeed`, `clean`); empty when not available.
    pub implementation: String,
    /// The cost with its source; `None` when no number is published, and then
    /// `not_available` says what was looked for.
    pub cost: Option<Cost>,
    /// Why there is no number (empty when there is one).
    pub not_available: String,
    /// True for the implementation the device's profile uses (its fastest published).
    pub used_by_profile: bool,
}

/// A row of `operations.csv` (all columns; WTLS rows are skipped here).
#[derive(Debug, Deserialize)]
struct Row {
    device: String,
    primitive: String,
    key: String,
    ms: Option<f64>,
    source: String,
    #[serde(default)]
    implementation: String,
}

fn bad(row: &Row, what: &str) -> CatalogError {
    CatalogError {
        file: FILE.into(),
        message: format!("{} {}/{}: {what}", row.device, row.primitive, row.key),
    }
}

/// One row as a cost, checked: a known primitive of the scheme's kind, and either a
/// positive time with a named source and implementation, or a "not available" reason.
fn cost_of(row: &Row) -> Result<PublishedPqCost, CatalogError> {
    let (Some(primitive), Some(scheme)) = (
        PqPrimitive::parse(&row.primitive),
        PqScheme::parse(&row.key),
    ) else {
        return Err(bad(row, "unknown post-quantum operation"));
    };
    if primitive.is_kem() != scheme.is_kem() {
        return Err(bad(row, "primitive does not apply to the scheme"));
    }
    let cost = match row.ms {
        Some(ms) if ms.is_finite() && ms > 0.0 => {
            if row.implementation.trim().is_empty() || !row.source.contains("cycles") {
                return Err(bad(
                    row,
                    "a published cost names its implementation and cycles",
                ));
            }
            // pqm4 measures on its own board; a profile of another board with the same
            // core prices those cycles at its clock ("... cycles at the profile's 64 MHz").
            let reference = row.source.clone();
            let source = if row.source.contains("at the profile's") {
                Source::Transferred { reference }
            } else {
                Source::Published { reference }
            };
            Some(Cost { ms, source })
        }
        Some(_) => return Err(bad(row, "cost is not positive")),
        None if row.source.starts_with("not available: ") => None,
        None => {
            return Err(bad(
                row,
                "an empty cost must say why (\"not available: ...\")",
            ))
        }
    };
    Ok(PublishedPqCost {
        device: row.device.clone(),
        primitive,
        scheme,
        implementation: row.implementation.clone(),
        not_available: if cost.is_none() {
            row.source.clone()
        } else {
            String::new()
        },
        cost,
        used_by_profile: false,
    })
}

/// Every published post-quantum cost of the shipped catalogue, with the implementation
/// each profile uses marked (the fastest published one of each device and operation).
pub fn published_pq_costs() -> Result<Vec<PublishedPqCost>, CatalogError> {
    published_pq_costs_of(OPERATIONS_CSV)
}

fn published_pq_costs_of(text: &str) -> Result<Vec<PublishedPqCost>, CatalogError> {
    let mut out: Vec<PublishedPqCost> = Vec::new();
    for row in csv::Reader::from_reader(text.as_bytes()).deserialize::<Row>() {
        let row = row.map_err(|e| CatalogError {
            file: FILE.into(),
            message: e.to_string(),
        })?;
        if PqPrimitive::parse(&row.primitive).is_none() {
            continue;
        }
        let cost = cost_of(&row)?;
        let same = |c: &PublishedPqCost| {
            c.device == cost.device && c.primitive == cost.primitive && c.scheme == cost.scheme
        };
        if out
            .iter()
            .any(|c| same(c) && c.implementation == cost.implementation)
        {
            return Err(bad(&row, "named twice"));
        }
        out.push(cost);
    }
    mark_profile_choice(&mut out);
    Ok(out)
}

/// Marks, per device and operation, the fastest published implementation.
fn mark_profile_choice(costs: &mut [PublishedPqCost]) {
    for i in 0..costs.len() {
        let Some(ms) = costs[i].cost.as_ref().map(|c| c.ms) else {
            continue;
        };
        let faster_exists = costs.iter().any(|o| {
            o.device == costs[i].device
                && o.primitive == costs[i].primitive
                && o.scheme == costs[i].scheme
                && o.cost.as_ref().is_some_and(|c| c.ms < ms)
        });
        costs[i].used_by_profile = !faster_exists;
    }
}

/// The cost `device`'s profile uses for an operation: `Ok(cost)`, or `Err(reason)` when
/// no number is published (the reason is the row's "not available" text, or says that
/// the device has no row).
pub fn profile_cost(
    costs: &[PublishedPqCost],
    device: &str,
    primitive: PqPrimitive,
    scheme: PqScheme,
) -> Result<Cost, String> {
    let mine = || {
        costs
            .iter()
            .filter(|c| c.device == device && c.primitive == primitive && c.scheme == scheme)
    };
    if let Some(c) = mine()
        .find(|c| c.used_by_profile)
        .and_then(|c| c.cost.clone())
    {
        return Ok(c);
    }
    Err(mine()
        .map(|c| c.not_available.clone())
        .next()
        .unwrap_or_else(|| {
            format!(
                "not available: no published {} {} for {device}",
                primitive.name(),
                scheme.name()
            )
        }))
}

#[cfg(test)]
#[path = "published_pq_tests.rs"]
mod tests;
