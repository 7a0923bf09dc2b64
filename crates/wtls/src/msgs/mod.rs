//! Wire structures: one Rust type per WTLS structure.

pub mod enums;
