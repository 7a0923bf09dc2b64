//! The published post-quantum rows load, name their sources, are pqm4's cycles at the
//! profile's clock, and say "not available" where nothing is published.

use super::*;

const SCHEMES: [(PqScheme, [PqPrimitive; 2]); 5] = [
    (
        PqScheme::MlKem512,
        [PqPrimitive::KemEncaps, PqPrimitive::KemDecaps],
    ),
    (
        PqScheme::MlKem768,
        [PqPrimitive::KemEncaps, PqPrimitive::KemDecaps],
    ),
    (
        PqScheme::MlKem1024,
        [PqPrimitive::KemEncaps, PqPrimitive::KemDecaps],
    ),
    (
        PqScheme::MlDsa44,
        [PqPrimitive::SigSign, PqPrimitive::SigVerify],
    ),
    (
        PqScheme::MlDsa65,
        [PqPrimitive::SigSign, PqPrimitive::SigVerify],
    ),
];

/// The cycle count a pqm4 source names ("... 392423 cycles at the profile's 64 MHz").
fn cycles_named(reference: &str) -> f64 {
    let before = reference
        .rsplit_once(" cycles at the profile's 64 MHz")
        .expect("names the cycles at the profile's clock")
        .0;
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn the_cortex_m4_profile_has_pqm4s_optimised_and_clean_costs_each_with_its_source() {
    let costs = published_pq_costs().unwrap();
    for (scheme, primitives) in SCHEMES {
        for primitive in primitives {
            let rows: Vec<_> = costs
                .iter()
                .filter(|c| {
                    c.device == "nrf52840" && c.scheme == scheme && c.primitive == primitive
                })
                .collect();
            let implementations: Vec<&str> =
                rows.iter().map(|c| c.implementation.as_str()).collect();
            assert_eq!(
                rows.len(),
                2,
                "{scheme:?} {primitive:?}: {implementations:?}"
            );
            assert!(implementations.contains(&"clean"));
            for c in &rows {
                let cost = c.cost.as_ref().unwrap();
                // pqm4's board's cycles at the profile's clock
                assert_eq!(cost.source.kind(), "transferred");
                let reference = cost.source.detail();
                assert!(reference.contains("github.com/mupq/pqm4"), "{reference}");
                assert!(reference.contains(&c.implementation), "{reference}");
                // milliseconds are the cited cycles at the nRF52840's 64 MHz
                assert!((cost.ms - cycles_named(reference) / 64_000.0).abs() < 1e-3);
            }
            let used: Vec<_> = rows.iter().filter(|c| c.used_by_profile).collect();
            assert_eq!(used.len(), 1);
            assert_ne!(
                used[0].implementation, "clean",
                "the profile uses the optimised code"
            );
            let chosen = profile_cost(&costs, "nrf52840", primitive, scheme).unwrap();
            assert_eq!(Some(&chosen), used[0].cost.as_ref());
        }
    }
}

#[test]
fn the_esp32_and_the_cortex_m0plus_say_not_available_with_what_was_looked_for() {
    let costs = published_pq_costs().unwrap();
    for device in ["esp32", "cortex-m0plus-48mhz-executed"] {
        for (scheme, primitives) in SCHEMES {
            for primitive in primitives {
                let reason = profile_cost(&costs, device, primitive, scheme).unwrap_err();
                assert!(reason.starts_with("not available: "), "{reason}");
                assert!(
                    reason.contains("arXiv"),
                    "names the paper looked at: {reason}"
                );
            }
        }
    }
    // a device without rows is not available either, and says so
    let reason = profile_cost(
        &costs,
        "imxrt1060",
        PqPrimitive::KemEncaps,
        PqScheme::MlKem768,
    )
    .unwrap_err();
    assert!(reason.starts_with("not available"), "{reason}");
}

#[test]
fn a_post_quantum_row_without_a_cost_or_a_reason_is_refused() {
    let head = "device,primitive,key,ms,source,implementation\n";
    let no_reason = format!("{head}esp32,kem_encaps,mlkem768,,somewhere,\n");
    assert!(published_pq_costs_of(&no_reason).is_err());
    let no_cycles = format!("{head}esp32,kem_encaps,mlkem768,5.0,a paper,ref\n");
    assert!(published_pq_costs_of(&no_cycles).is_err());
    let wrong_kind = format!("{head}esp32,sig_sign,mlkem768,5.0,1 cycles,ref\n");
    assert!(published_pq_costs_of(&wrong_kind).is_err());
    let twice = format!("{head}esp32,kem_encaps,mlkem768,5.0,1 cycles,ref\nesp32,kem_encaps,mlkem768,6.0,2 cycles,ref\n");
    assert!(published_pq_costs_of(&twice).is_err());
    let ok = format!("{head}esp32,kem_encaps,mlkem768,5.0,1 cycles,ref\nesp32,kem_encaps,mlkem768,4.0,2 cycles,opt\n");
    let costs = published_pq_costs_of(&ok).unwrap();
    let chosen = profile_cost(&costs, "esp32", PqPrimitive::KemEncaps, PqScheme::MlKem768).unwrap();
    assert_eq!(chosen.ms, 4.0, "the fastest published implementation");
}
