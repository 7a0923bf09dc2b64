//! `wtlsperf count` under valgrind: the counts of two runs are identical, and they are
//! counts of real work (both sides and the bound's denominator non-zero, the server at
//! least its own public-key operations).
//!
//! Without valgrind the test prints why and returns, except under `CI=true` or
//! `WTLSPERF_REQUIRE_VALGRIND`, where it fails (`scripts/setup.sh` installs valgrind).

use std::process::Command;

fn count() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args([
            "count",
            "--case",
            "160p/160p",
            "--case",
            "rsa1024/rsa1024",
            "--auth",
            "mutual",
        ])
        .output()
        .expect("running wtlsperf count");
    assert!(
        out.status.success(),
        "wtlsperf count failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 CSV")
}

#[test]
fn instruction_counts_are_identical_across_two_runs() {
    if !wtlsperf_testtools::tool_runs(
        "valgrind",
        "instruction_counts_are_identical_across_two_runs",
    ) {
        return;
    }
    let first = count();
    let second = count();
    assert_eq!(
        first, second,
        "two runs of the same binary counted differently"
    );
    let mut rows = first.lines();
    assert_eq!(
        rows.next(),
        Some("case,auth,variant,server_instructions,client_instructions,raw_pk_instructions,instruction_bound_ratio")
    );
    let rows: Vec<Vec<&str>> = rows.map(|r| r.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{first}");
    for r in rows {
        let n = |i: usize| r[i].parse::<u64>().unwrap_or_else(|e| panic!("{r:?}: {e}"));
        let (server, client, raw) = (n(3), n(4), n(5));
        assert!(server > 0 && client > 0 && raw > 0, "{r:?}");
        assert!(
            server >= raw,
            "the server ran less than its own public-key work: {r:?}"
        );
    }
}

/// A selection the variant cannot run is refused before any case is counted, naming the
/// options; the anonymous variant's default modes are the ones it can run.
#[test]
fn a_selection_the_variant_cannot_run_is_refused_up_front() {
    let refused = |args: &[&str], names: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
            .arg("count")
            .args(args)
            .output()
            .expect("running wtlsperf count");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        for name in names {
            assert!(err.contains(name), "{args:?}: {err}");
        }
        assert!(
            !err.contains("valgrind"),
            "{args:?} got as far as valgrind: {err}"
        );
    };
    refused(
        &["--variant", "anonymous", "--auth", "mutual"],
        &["--auth mutual", "--variant anonymous"],
    );
    refused(&["--variant", "resumed"], &["--variant resumed"]);
}
