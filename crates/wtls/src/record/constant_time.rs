//! The exact test of the record layer's constant-time checks: valgrind's callgrind counts
//! the instructions of one call of the padding check and of the MAC comparison, and the
//! count must not depend on the verdict. A timing test on a shared machine could only
//! say "no difference above the noise"; an instruction count either matches or it does
//! not. (Counts are the same instructions, not the same cycles: a data-dependent cache
//! or branch-predictor effect would escape this test, as would a variable-time
//! instruction; there are no divisions or table lookups on secret data here.)
//!
//! The test re-runs this test binary under callgrind, once per scenario, with collection
//! on only inside [`counted`]; the child ([`child`], ignored in ordinary runs) reads its
//! scenario from [`SCENARIO`]. Without valgrind the test prints why and passes, except
//! under `CI=true` or `WTLSPERF_REQUIRE_VALGRIND`, where it fails (`scripts/setup.sh`
//! installs valgrind; see `wtlsperf_testtools`).

use std::hint::black_box;
use std::path::Path;
use std::process::Command;

use super::padding_verdict;
use crate::crypto::mac::RecordMac;
use crate::msgs::enums::MacAlgorithm;

/// The environment variable that names the child's scenario.
const SCENARIO: &str = "WTLS_CONSTANT_TIME_SCENARIO";
/// MAC length and record length of the padding scenarios (SHA-1 MAC, 48-byte record:
/// room for up to 27 bytes of padding).
const MAC_LEN: usize = 20;
const RECORD_LEN: usize = 48;

/// A decrypted record whose padding is `pad` bytes of value `pad` plus the length byte.
fn padded(pad: u8) -> Vec<u8> {
    let mut buf = vec![0xA5; RECORD_LEN];
    let n = buf.len();
    buf[n - 1 - usize::from(pad)..].fill(pad);
    buf
}

/// The padding scenarios: valid (none, short, longest that fits) and invalid (a wrong
/// byte at either end of the padding, a length pointing into the MAC).
fn padding_scenario(name: &str) -> Option<Vec<u8>> {
    Some(match name {
        "pad-0" => padded(0),
        "pad-7" => padded(7),
        "pad-27" => padded(27),
        "pad-7-first-wrong" => {
            let mut b = padded(7);
            b[RECORD_LEN - 8] ^= 1;
            b
        }
        "pad-7-last-wrong" => {
            let mut b = padded(7);
            b[RECORD_LEN - 2] ^= 1;
            b
        }
        "pad-40-overlong" => padded(40),
        _ => return None,
    })
}

/// The MAC scenarios over one 27-byte content: the right MAC, and a MAC wrong in its
/// first or its last byte.
fn mac_scenario(name: &str) -> Option<(RecordMac, Vec<u8>, Vec<u8>)> {
    let flip = match name {
        "mac-right" => None,
        "mac-first-wrong" => Some(0),
        "mac-last-wrong" => Some(MAC_LEN - 1),
        _ => return None,
    };
    let mac = RecordMac::new(MacAlgorithm::Sha, &[0x42; 20]);
    let content = vec![0x17; 27];
    let mut received = mac.compute(3, 0xE4, &content);
    if let Some(i) = flip {
        received[i] ^= 0x80;
    }
    Some((mac, content, received))
}

/// A scenario's input, built before anything is counted.
enum Input {
    Padding(Vec<u8>),
    Mac(RecordMac, Vec<u8>, Vec<u8>),
}

impl Input {
    fn of(name: &str) -> Option<Input> {
        if let Some(buf) = padding_scenario(name) {
            return Some(Input::Padding(buf));
        }
        let (mac, content, received) = mac_scenario(name)?;
        Some(Input::Mac(mac, content, received))
    }

    /// The check, on the prebuilt input: its verdict.
    fn check(&self) -> bool {
        match self {
            Input::Padding(buf) => {
                bool::from(black_box(padding_verdict(black_box(buf), MAC_LEN)).0)
            }
            Input::Mac(mac, content, received) => bool::from(black_box(mac.verify(
                3,
                0xE4,
                black_box(content),
                black_box(received),
            ))),
        }
    }
}

/// One call of the check; what callgrind counts (collection is on only inside it).
#[inline(never)]
fn counted(input: &Input) -> bool {
    input.check()
}

/// The child: one warm-up call (first-call costs such as CPU feature detection), then
/// the counted one. Ignored in ordinary runs; the parent runs it under callgrind.
#[test]
#[ignore = "run by checks_take_the_same_instructions_whatever_the_verdict under valgrind"]
fn child() {
    let name = std::env::var(SCENARIO).expect("the scenario");
    let input = Input::of(&name).expect("a known scenario");
    let warm = input.check();
    assert_eq!(warm, counted(&input));
}

/// Instructions of the counted call in `scenario`, or why valgrind could not count them.
fn instructions(scenario: &str, dir: &Path) -> Result<u64, String> {
    let profile = dir.join(format!("{scenario}.callgrind"));
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", profile.display()))
        .arg("--collect-atstart=no")
        .arg("--toggle-collect=*constant_time::counted")
        .arg(exe)
        .args(["--exact", "record::constant_time::child", "--ignored"])
        .args(["--test-threads=1", "--quiet"])
        .env(SCENARIO, scenario)
        .env("LD_BIND_NOW", "1")
        .output()
        .map_err(|e| format!("valgrind not runnable: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{scenario}: the child failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = std::fs::read_to_string(&profile).map_err(|e| e.to_string())?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("{scenario}: no totals in {}", profile.display()))
}

#[test]
fn checks_take_the_same_instructions_whatever_the_verdict() {
    if !wtlsperf_testtools::tool_runs(
        "valgrind",
        "checks_take_the_same_instructions_whatever_the_verdict",
    ) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("wtls-constant-time-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let groups: [&[&str]; 2] = [
        &[
            "pad-0",
            "pad-7",
            "pad-27",
            "pad-7-first-wrong",
            "pad-7-last-wrong",
            "pad-40-overlong",
        ],
        &["mac-right", "mac-first-wrong", "mac-last-wrong"],
    ];
    for group in groups {
        let counts: Vec<(&str, u64)> = group
            .iter()
            .map(|s| (*s, instructions(s, &dir).unwrap_or_else(|e| panic!("{e}"))))
            .collect();
        assert!(counts[0].1 > 0, "nothing counted: {counts:?}");
        assert!(
            counts.iter().all(|c| c.1 == counts[0].1),
            "the instruction count depends on the verdict: {counts:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The scenarios really differ in verdict, so equal counts mean something.
#[test]
fn the_scenarios_cover_both_verdicts() {
    let verdict = |s| Input::of(s).expect("scenario").check();
    assert!(verdict("pad-0") && verdict("pad-7") && verdict("pad-27"));
    assert!(!verdict("pad-7-first-wrong") && !verdict("pad-7-last-wrong"));
    assert!(!verdict("pad-40-overlong"));
    assert!(verdict("mac-right"));
    assert!(!verdict("mac-first-wrong") && !verdict("mac-last-wrong"));
}
