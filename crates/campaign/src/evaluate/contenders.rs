//! The evaluation's choice of contenders: named configurations of the registry, and
//! every protocol the registry adds beyond them by the configurations its entry says
//! are compared ([`registry::ProtocolEntry::compared`]),
//! so a protocol registered in the drivers appears in each comparison without being
//! named here.

use wtlsperf_drivers::registry::{self, Contender};

/// `named` (those this build has, in order), then the first configuration of every
/// available protocol none of them belongs to, WTLS aside (its cases come from the
/// processing part).
pub fn with_every_protocol(named: &[&str]) -> Vec<Contender> {
    let mut out: Vec<Contender> = named
        .iter()
        .filter_map(|t| registry::contender(t).ok())
        .collect();
    for p in registry::available() {
        let listed = p.id() == wtls::handshake::WTLS || out.iter().any(|c| c.protocol() == p.id());
        if !listed {
            out.extend(p.compared());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_available_protocol_is_present_and_unknown_names_drop_out() {
        let got = with_every_protocol(&["dtls1.2:psk-ccm8", "nonsense:x"]);
        assert_eq!(got[0].to_string(), "dtls1.2:psk-ccm8");
        for p in registry::available().filter(|p| p.id() != wtls::handshake::WTLS) {
            assert!(got.iter().any(|c| c.protocol() == p.id()), "{}", p.id());
        }
    }
}
