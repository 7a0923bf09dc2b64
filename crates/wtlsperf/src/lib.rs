//! The `wtlsperf` command's own code: each command's arguments and what it prints, over
//! the drivers in `wtlsperf-drivers` and the campaign in `wtlsperf-campaign` (and the
//! certificate printer of `wtlsperf pki show`). The command line is parsed here and only
//! here: each `*_cmd` module owns its command's clap arguments and turns them into the
//! typed configuration its library runs with.

pub mod bearer_cmd;
pub mod cli_args;
pub mod client_cmd;
pub mod compare_cmd;
pub mod count_cmd;
pub mod evaluate_cmd;
pub mod flood_cmd;
pub mod gateway_cmd;
pub mod handshake_cmd;
pub mod load_cmd;
pub mod pki_show;
pub mod run_cmd;
pub mod session_file;
