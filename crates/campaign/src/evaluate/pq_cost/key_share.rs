//! The ML-KEM key share and the cookie exchange. With the cookie exchange (DTLS 1.3's
//! default) a client whose first ClientHello fits one datagram with its ML-KEM-768 key
//! (1184 B, FIPS 203) sends it, the server answers with a HelloRetryRequest carrying the
//! cookie, and the client sends the whole ClientHello, key share included, again. At a
//! payload limit where that ClientHello does not fit one datagram wolfSSL's first
//! ClientHello carries no key share and the HelloRetryRequest asks for it: the key share
//! crosses once, the round trip remains with or without the cookie. The post-quantum
//! increments are measured with the default; this says where the key share is sent
//! twice and what that costs, from the cookie-free twins of the protocols part
//! (`protocols_cookie.csv`).

use wtlsperf_drivers::protocols::key_shares::ML_KEM_768_EK;

use crate::evaluate::protocols::cookie::{price_ms, CookieRow};
use crate::evaluate::protocols::ProtocolResults;
use crate::evaluate::vocabulary::{Catalogue, DeviceName};

/// The paragraph, or `None` when no post-quantum configuration has a cookie-free twin.
pub fn note(catalogue: &Catalogue, protocols: &ProtocolResults) -> Option<String> {
    let pq: Vec<String> = protocols
        .configs
        .iter()
        .filter(|c| c.is_post_quantum() && c.contender.traits().post_quantum_key_exchange)
        .map(|c| c.suite())
        .collect();
    let mine = |r: &&CookieRow| {
        r.cookie_exchange && pq.contains(&r.suite) && r.device == DeviceName::this_machine()
    };
    let (mut twice, mut once) = (Vec::new(), Vec::new());
    for with in protocols.cookie.iter().filter(mine) {
        let without = protocols.cookie.iter().find(|w| {
            !w.cookie_exchange
                && w.suite == with.suite
                && w.bearer == with.bearer
                && w.device == with.device
        })?;
        let bearer = catalogue.bearer(with.bearer.as_str()).ok()?;
        let limit = bearer.datagram_payload_limit();
        if with.round_trips > without.round_trips {
            // The repeated key share's serialisation up the link.
            let key_ms = ML_KEM_768_EK as f64 * 8.0 / bearer.up_bps * 1e3;
            twice.push(format!(
                "{} over {} ({limit}-byte payload limit): {} B in {} round trips with the cookie exchange, {} B in {} without; the cookie exchange costs {} of the modelled time to a secure channel with this machine's client, of which the repeated {ML_KEM_768_EK}-byte key takes {key_ms:.0} ms at {:.0} bit/s",
                with.suite,
                with.bearer,
                with.bytes,
                with.round_trips,
                without.bytes,
                without.round_trips,
                price_ms(&protocols.cookie, with).map_or("-".to_owned(), |p| format!("{p:.0} ms")),
                bearer.up_bps,
            ));
        } else if !once.contains(&format!("{} ({limit} B)", with.bearer)) {
            once.push(format!("{} ({limit} B)", with.bearer));
        }
    }
    if twice.is_empty() && once.is_empty() {
        return None;
    }
    Some(format!(
        "\n\nThe increments are with the cookie exchange, the DTLS 1.3 default. Where the first ClientHello fits one datagram with the ML-KEM-768 key, the client sends the key twice (the first ClientHello and the one that echoes the cookie): {}. Without the cookie exchange (protocols_cookie.csv) it is sent once and the round trip is gone. Over {} the first ClientHello would not fit, so it carries no key share, the HelloRetryRequest asks for it, and the key crosses once; the round trip is paid with or without the cookie. The classical baseline pays the same cookie round trip with a 65-byte P-256 share.",
        if twice.is_empty() { "on no bearer of this run".to_owned() } else { twice.join("; ") },
        if once.is_empty() { "no bearer".to_owned() } else { once.join(", ") },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::protocols::Config;
    use crate::evaluate::vocabulary::BearerName;

    #[test]
    fn the_key_share_crosses_twice_only_where_the_first_client_hello_carries_it() {
        let catalogue = Catalogue::shipped().unwrap();
        let Ok(contender) = wtlsperf_drivers::registry::contender("dtls1.3:mlkem768-ecdsa-ccm8")
        else {
            eprintln!("DTLS 1.3 is not in this build");
            return;
        };
        let suite = contender.suite();
        let config = Config {
            contender,
            level: String::new(),
            bytes: 0,
            datagrams: 0,
            flights: Vec::new(),
            flights_by_payload_limit: Vec::new(),
            server_cpu_us: 0.0,
            client_cpu_us: 0.0,
            bound_ratio: None,
            flights_wap261: None,
        };
        let row = |bearer: &str, cookie: bool, bytes: usize, rt: f64, ms: f64| CookieRow {
            protocol: wtlsperf_drivers::protocols::DTLS13,
            suite: suite.clone(),
            cookie_exchange: cookie,
            bearer: BearerName::of(catalogue.bearer(bearer).unwrap()),
            device: DeviceName::this_machine(),
            bytes,
            datagrams: 0,
            round_trips: rt,
            modelled_ms: Some(ms),
            measured_ms: None,
        };
        let protocols = ProtocolResults {
            configs: vec![config],
            rows: Vec::new(),
            loss: Vec::new(),
            peers: Vec::new(),
            measured_devices: Vec::new(),
            bearers: Vec::new(),
            loss_bearer: BearerName::of(catalogue.bearer("lte-m").unwrap()),
            typical_bearer_note: None,
            hybrid_anchor: None,
            stage_seconds: Vec::new(),
            cookie: vec![
                row("gsm-csd", true, 9000, 3.0, 12_000.0),
                row("gsm-csd", false, 7700, 2.0, 10_500.0),
                row("lte-m", true, 7800, 3.0, 600.0),
                row("lte-m", false, 7650, 3.0, 598.0),
            ],
            timers: Vec::new(),
        };
        let note = note(&catalogue, &protocols).unwrap();
        assert!(
            note.contains("over gsm-csd (1472-byte payload limit): 9000 B in 3 round trips with the cookie exchange, 7700 B in 2 without; the cookie exchange costs 1500 ms"),
            "{note}"
        );
        // 1184 B at GSM CSD's 9600 bit/s.
        assert!(note.contains("takes 987 ms at 9600 bit/s"), "{note}");
        assert!(
            note.contains("Over lte-m (1330 B) the first ClientHello would not fit"),
            "{note}"
        );
    }
}
