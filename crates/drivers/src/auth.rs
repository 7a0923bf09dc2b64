//! The one place where the engine's authentication mode and the models' meet.
//!
//! Two types name the same concept on purpose: `wtls::handshake::AuthMode` is the
//! engine's, and `wtlsperf_models::Authentication` the models' (with the thesis' `M`/`S`
//! letters and the reference CSVs' spelling). The layering rule is that only this
//! application crate depends on the others, so neither can name the other's type and the
//! orphan rule forbids a `From` between them here: these two functions are the
//! conversion, and nothing else converts. The command line parses straight into
//! `AuthMode` (the `wtlsperf` crate's `cli_args::auth_mode`); the gateway's `setup::ClientAuth` is a policy with
//! three values, not a third name for the mode.

use wtls::handshake::AuthMode;
use wtlsperf_models::Authentication;

/// The engine's mode of a thesis authentication mode.
pub fn auth_mode(auth: Authentication) -> AuthMode {
    match auth {
        Authentication::Mutual => AuthMode::Mutual,
        Authentication::ServerAuth => AuthMode::ServerAuth,
    }
}

/// The thesis' (the models') authentication mode of an engine mode.
pub fn authentication(mode: AuthMode) -> Authentication {
    match mode {
        AuthMode::Mutual => Authentication::Mutual,
        AuthMode::ServerAuth => Authentication::ServerAuth,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conversions_are_inverse_and_keep_the_thesis_letter() {
        for auth in Authentication::ALL {
            let mode = auth_mode(auth);
            assert_eq!(authentication(mode), auth);
            assert_eq!(mode.letter(), auth.thesis_letter());
        }
    }
}
