//! wtlsperf's evaluation campaign: the sections of `wtlsperf evaluate`, the context they
//! share and the report they write, on top of the drivers in `wtlsperf-drivers`.

pub mod evaluate;
pub mod experiment;
