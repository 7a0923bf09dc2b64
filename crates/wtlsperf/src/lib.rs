//! The `wtlsperf` command's own code: each command's arguments and what it prints, over
//! the drivers in `wtlsperf-drivers` (and the certificate printer of `wtlsperf pki show`).

pub mod bearer_cmd;
pub mod client_cmd;
pub mod gateway_cmd;
pub mod load_cmd;
pub mod pki_show;
pub mod session_file;
