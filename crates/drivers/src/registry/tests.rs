use super::*;

#[test]
fn every_listed_configuration_parses_back_from_its_text() {
    for p in available() {
        let all = p.configurations();
        assert!(!all.is_empty(), "{}", p.id());
        for c in all {
            let text = c.to_string();
            let back: Contender = text.parse().unwrap();
            assert_eq!(back, c, "{text}");
            assert_eq!(back.protocol(), p.id());
        }
    }
}

#[test]
fn protocol_names_are_unique_and_in_rank_order() {
    let ids: Vec<ProtocolId> = protocols().iter().map(|p| p.id()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(ids, sorted);
}

#[test]
fn bad_contender_texts_name_what_is_wrong_and_list_the_known() {
    let e = contender("tls:x").unwrap_err().to_string();
    assert!(
        e.contains("\"tls\"") && e.contains("wtls") && e.contains("dtls1.2"),
        "{e}"
    );
    let e = contender("dtls1.2:rsa").unwrap_err().to_string();
    assert!(e.contains("psk-ccm8"), "{e}");
    let e = contender("wtls").unwrap_err();
    assert!(matches!(e, ContenderError::NoColon(_)), "{e}");
    let e = contender("wtls:999p/256p").unwrap_err().to_string();
    assert!(e.contains("256p/256p"), "{e}");
}

#[test]
fn wtls_configurations_read_as_the_thesis_names_them() {
    let c = contender("wtls:256p/256p-mutual").unwrap();
    assert_eq!(c.auth(), Authentication::Mutual);
    assert_eq!(c.configuration(), "256p/256p-mutual");
    assert!(!c.traits().forward_secrecy.holds);
    let s = contender("wtls:160p/160p").unwrap();
    assert_eq!(s.auth(), Authentication::ServerAuth);
}

#[test]
fn every_entry_states_its_timers_with_a_source() {
    let bearer = LinkProfile::loopback();
    for p in protocols() {
        let t = p.timers(&bearer);
        assert!(
            t.source.contains("RFC") || t.source.contains("WAP"),
            "{}",
            p.id()
        );
        assert!(t.backoff >= 1.0);
    }
}

#[test]
fn an_entry_missing_from_the_build_says_why() {
    let dtls13 = protocol("dtls1.3").unwrap();
    assert_eq!(
        dtls13.unavailable().is_some(),
        dtls13.configurations().is_empty()
    );
}

/// A WTLS case over a bearer sends the bytes the processing part's in-memory runner
/// measures (the flights its model prices): the gateway serves the case alone, so its
/// CertificateRequest names the case's CA, not every CA of the store.
#[test]
fn a_wtls_case_over_a_bearer_sends_the_in_memory_runners_bytes() {
    use crate::pki_store::{unix_now, PkiStore};
    use crate::runner::{measure_case, RunnerOptions};
    use ::wtls::suite::Case;
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        Case::parse("160p/160p").unwrap(),
        Case::parse("256p/256p").unwrap(),
    ];
    let store = PkiStore::create(dir.path(), true, unix_now().unwrap(), &cases).unwrap();
    let opts = RunnerOptions {
        reps: 1,
        warmup: 0,
        measure_bound: false,
        ..RunnerOptions::default()
    };
    let loopback = LinkProfile::loopback();
    for text in ["wtls:160p/160p", "wtls:160p/160p-mutual"] {
        let contender: Contender = text.parse().unwrap();
        let wtls = contender.downcast::<wtls::WtlsCase>().unwrap();
        let memory = measure_case(&store, wtls.case, wtls.mode(), &opts).unwrap();
        let (up, down) = memory.bytes_per_direction();
        let served = contender.serve(Bench { store: &store }, 1280).unwrap();
        let deadline = std::time::Duration::from_secs(10);
        let run = served::run_over_bearer(&*served, &loopback, 1, None, deadline).unwrap();
        assert_eq!(run.bytes(), up + down, "{text}");
    }
}
