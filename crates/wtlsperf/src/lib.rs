//! The `wtlsperf` command's own code: what only a command does and no driver or section
//! of the campaign needs (today the certificate printer of `wtlsperf pki show`).

pub mod pki_show;
