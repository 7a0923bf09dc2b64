//! Consistency of the checked-in executed results (the regeneration itself takes minutes
//! and is not run here): the files parse, every row names its provenance, the device rows
//! are the counted cycles at each clock, and the validation errors and their summary are
//! what the published and executed cycles give.

use super::*;
use crate::device::{profiles, KeyType};
use std::collections::HashMap;

const COUNTS_CSV: &str = include_str!("../../../../data/devices/executed_counts.csv");
const VALIDATION_CSV: &str = include_str!("../../../../data/devices/executed_validation.csv");
const SUMMARY_CSV: &str = include_str!("../../../../data/devices/executed_validation_summary.csv");

type Row = HashMap<String, String>;

fn table(text: &str) -> Vec<Row> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize::<Row>()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn num(row: &Row, column: &str) -> f64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} of {row:?}"))
}

const CORES: [(&str, &str); 3] = [
    ("arm7tdmi-25mhz-executed", "arm7tdmi"),
    ("cortex-m0plus-48mhz-executed", "cortex-m0plus"),
    ("cortex-m4-64mhz-executed", "cortex-m4"),
];

#[test]
fn every_executed_row_parses_and_names_its_provenance() {
    let costs = executed_costs().unwrap();
    for (device, _) in CORES {
        let ops = executed_operations(&costs, device);
        for op in [
            Operation::ecdh(KeyType::P256),
            Operation::verify(KeyType::P256),
            Operation::sign(KeyType::P256),
            Operation::verify(KeyType::rsa(2048)),
            Operation::sign(KeyType::rsa(2048)),
        ] {
            let cost = ops
                .get(&op)
                .unwrap_or_else(|| panic!("{device} {}", op.label()));
            assert_eq!(cost.source.kind(), "executed");
        }
    }
    let m4_kem: Vec<_> = costs
        .iter()
        .filter(|c| c.device == "cortex-m4-64mhz-executed")
        .filter(|c| {
            matches!(
                c.operation,
                ExecutedOperation::PostQuantum(_, PqScheme::MlKem768)
            )
        })
        .collect();
    assert_eq!(
        m4_kem.len(),
        3,
        "ML-KEM-768 keygen, encaps and decaps on the M4"
    );
}

#[test]
fn device_rows_are_the_counted_cycles_at_each_clock() {
    let counts = table(COUNTS_CSV);
    let costs = executed_costs().unwrap();
    for (device, core) in CORES {
        for c in costs.iter().filter(|c| c.device == device) {
            let (primitive, key) = match c.operation {
                ExecutedOperation::Wtls(op) => {
                    (op.primitive.name().to_string(), op.key.to_string())
                }
                ExecutedOperation::PostQuantum(p, s) => {
                    (p.name().to_string(), s.name().to_string())
                }
            };
            let row = counts
                .iter()
                .find(|r| {
                    // the build of the device's own instruction set, not a validation build
                    r["instruction_set"] == core
                        && r["timing_core"] == core
                        && r["primitive"] == primitive
                        && r["key"] == key
                })
                .unwrap_or_else(|| panic!("no count for {device} {}", c.operation));
            assert_eq!(
                num(row, "cycles") as u64,
                c.cycles,
                "{device} {}",
                c.operation
            );
        }
    }
}

#[test]
fn class_cycles_add_up_to_each_count() {
    const CLASSES: [&str; 7] = [
        "data_processing",
        "multiply",
        "divide",
        "load_store",
        "load_store_multiple",
        "branch_taken",
        "branch_untaken",
    ];
    for row in table(COUNTS_CSV) {
        assert!(row["compiler_flags"].contains("-mcpu="), "{row:?}");
        for (suffix, total) in [("_cycles", "cycles"), ("_instructions", "instructions")] {
            let sum: f64 = CLASSES
                .iter()
                .map(|c| num(&row, &format!("{c}{suffix}")))
                .sum();
            // each class is a mean over seeds, rounded on its own
            assert!(
                (sum - num(&row, total)).abs() <= CLASSES.len() as f64,
                "{row:?}"
            );
        }
        assert!(num(&row, "hash_cycles") <= num(&row, "cycles"));
    }
}

#[test]
fn validation_errors_are_what_the_cycles_give() {
    let rows = table(VALIDATION_CSV);
    assert!(rows.len() >= 11);
    for r in &rows {
        let (published, executed) = (num(r, "published_cycles"), num(r, "executed_cycles"));
        let error = 100.0 * (executed - published) / published;
        assert!((error - num(r, "error_pct")).abs() < 0.01, "{r:?}");
        assert_eq!(r["within_target"] == "True", error.abs() <= 20.0, "{r:?}");
        assert!(!r["source"].is_empty());
    }
    let counts = table(COUNTS_CSV);
    for r in &rows {
        // the executed side is the counted cycles of the reference's build and timing core
        let (mut cycles, mut hashed) = (0.0, 0.0);
        for op in r["operation"].split('+') {
            let (primitive, key) = op.split_once('/').unwrap();
            let count = counts
                .iter()
                .find(|c| {
                    c["instruction_set"] == r["instruction_set"]
                        && c["timing_core"] == r["timing_core"]
                        && c["primitive"] == primitive
                        && c["key"] == key
                })
                .unwrap_or_else(|| panic!("no count for {r:?}"));
            cycles += num(count, "cycles");
            hashed += num(count, "hash_cycles");
        }
        let expected = match r["compared"].as_str() {
            "total" => cycles,
            "non-hash" => cycles - hashed,
            other => panic!("unknown comparison {other}"),
        };
        assert_eq!(num(r, "executed_cycles"), expected, "{r:?}");
        // pqm4's counts are same code only beside the build that links pqm4's SHA-3
        if r["same_code"] == "yes" && r["reference"].starts_with("pqm4") {
            assert_eq!(r["instruction_set"], "cortex-m4-pqm4keccak", "{r:?}");
        }
    }
    for s in table(SUMMARY_CSV) {
        let keep = |r: &&Row| match s["scope"].as_str() {
            "same code, non-hash" => r["same_code"] == "yes" && r["compared"] == "non-hash",
            "same code, total" => r["same_code"] == "yes" && r["compared"] == "total",
            "other code, total" => r["same_code"] == "no" && r["compared"] == "total",
            "every point" => true,
            other => panic!("unknown scope {other}"),
        };
        let mut errors: Vec<f64> = rows
            .iter()
            .filter(keep)
            .map(|r| num(r, "error_pct").abs())
            .collect();
        errors.sort_by(f64::total_cmp);
        let n = errors.len();
        assert_eq!(n as f64, num(&s, "points"));
        let median = if n % 2 == 1 {
            errors[n / 2]
        } else {
            (errors[n / 2 - 1] + errors[n / 2]) / 2.0
        };
        assert!(
            (median - num(&s, "median_abs_error_pct")).abs() < 0.02,
            "{s:?}"
        );
        assert!(
            (errors[n - 1] - num(&s, "worst_abs_error_pct")).abs() < 0.02,
            "{s:?}"
        );
    }
}

/// The validation target over the same-code points (docs/results.md, "Executed device
/// costs"): median within 10 % and every point within 20 %. It holds on pqm4's points and on
/// micro-ecc's F446RE points; micro-ecc's own LPC1114 points miss it by under two points,
/// low, because that board reads its flash with wait states the zero-wait-state model does
/// not price, so they are held to what the documentation says of them. The Mbed TLS rows
/// beside micro-ecc's numbers compare two libraries and stay out of the target.
#[test]
fn same_code_points_meet_the_stated_target() {
    let rows = table(VALIDATION_CSV);
    for compared in ["total", "non-hash"] {
        let mut errors: Vec<f64> = rows
            .iter()
            .filter(|r| r["same_code"] == "yes" && r["compared"] == compared)
            .map(|r| num(r, "error_pct").abs())
            .collect();
        errors.sort_by(f64::total_cmp);
        assert!(!errors.is_empty(), "{compared}");
        let n = errors.len();
        let median = if n % 2 == 1 {
            errors[n / 2]
        } else {
            (errors[n / 2 - 1] + errors[n / 2]) / 2.0
        };
        assert!(median <= 10.0, "{compared}: median {median} %");
    }
    let same_code_microecc = rows
        .iter()
        .filter(|r| r["same_code"] == "yes" && r["reference"].starts_with("micro-ecc"))
        .count();
    assert_eq!(same_code_microecc, 10, "six F446RE and four LPC1114 points");
    for r in rows.iter().filter(|r| r["same_code"] == "yes") {
        let error = num(r, "error_pct");
        if r["reference"].contains("(LPC1114)") {
            assert!((-25.0..0.0).contains(&error), "{r:?}");
        } else {
            assert!(error.abs() <= 20.0, "{r:?}");
        }
    }
    // micro-ecc's numbers are same code only beside the micro-ecc images
    for r in rows
        .iter()
        .filter(|r| r["reference"].starts_with("micro-ecc"))
    {
        let microecc_image = r["instruction_set"].contains("microecc");
        assert_eq!(r["same_code"] == "yes", microecc_image, "{r:?}");
    }
}

#[test]
fn executed_devices_are_catalogue_profiles_completed_for_every_case() {
    let all = profiles().unwrap();
    for (device, _) in CORES {
        let p = all.iter().find(|p| p.name == device).unwrap();
        let (ms, source) = p.op_ms(Operation::ecdh(KeyType::P256)).unwrap();
        assert_eq!(source.kind(), "executed");
        assert!(ms > 0.0);
        // binary curves: Mbed TLS has none, so they rest on the Nokia fit's ratios
        let k163 = KeyType::parse("163k").unwrap();
        assert!(p.op_ms(Operation::ecdh(k163)).unwrap().1.is_borrowed());
    }
}
