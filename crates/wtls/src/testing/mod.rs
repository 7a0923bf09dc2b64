//! Test support shared by the engine's own tests, the fuzz targets and the laboratory's
//! instruction counts: one set of fixtures ([`fixtures`]) and one in-memory driver for a
//! client and a server ([`pair::Pair`]).
//!
//! Why a cargo feature (`testing`) and not a `tests/common` module: three crates need
//! the same code (this crate's integration tests, `fuzz/` and `wtlsperf count`), and a
//! module under `tests/` cannot be reached from another crate. Behind the feature, none
//! of it is compiled into a build that did not ask for it; the crate's own tests enable
//! it through a dev-dependency on the crate itself.

pub mod fixtures;
pub mod pair;

pub use fixtures::{now, CaseKeys, FixtureError, UNIX_NOW};
pub use pair::{Direction, Fate, Pair};
