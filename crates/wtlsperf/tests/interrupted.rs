//! `wtlsperf evaluate` stopped mid-run: killed, it leaves no `summary.json` or
//! `report.html` (nothing that passes for a complete run) and no torn file; stopped by
//! SIGINT, it also marks the directory interrupted, says where the partial results are
//! and exits non-zero. Each test stops the run as soon as its first file appears (the
//! PKI, the first part's output), long before the run could finish.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a run may take to write its first file before the test gives up.
const FIRST_FILE_WITHIN: Duration = Duration::from_secs(300);

fn start(out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_wtlsperf"))
        .args(["evaluate", "--smoke", "--out"])
        .arg(out)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run wtlsperf")
}

/// Every regular file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => pending.push(path),
                Ok(t) if t.is_file() => found.push(path),
                _ => {}
            }
        }
    }
    found
}

/// Waits until the run has written a file into `out` beside those in `before` (the
/// event the tests stop it on).
fn wait_for_first_file(child: &mut Child, out: &Path, before: &[PathBuf]) {
    let until = Instant::now() + FIRST_FILE_WITHIN;
    while files(out).iter().all(|f| before.contains(f)) {
        assert!(
            child.try_wait().expect("child status").is_none(),
            "the evaluation ended before writing a file"
        );
        assert!(Instant::now() < until, "no file in {}", out.display());
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// No file that passes for a complete run, and every file left is whole or a hidden
/// temporary one.
fn assert_nothing_looks_complete(out: &Path) {
    for name in ["summary.json", "report.html"] {
        assert!(!out.join(name).exists(), "{name} after an interrupted run");
    }
    for f in files(out) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') {
            assert!(name.ends_with(".partial"), "{}", f.display());
        }
    }
}

#[test]
fn a_killed_evaluation_leaves_no_complete_looking_summary_or_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("results");
    let mut child = start(&out);
    wait_for_first_file(&mut child, &out, &[]);
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
    assert_nothing_looks_complete(&out);
}

#[test]
fn sigint_marks_the_run_interrupted_and_exits_non_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("results");
    // A complete-looking summary of an earlier run in the same directory must not
    // survive into an interrupted one.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("summary.json"), "{}").unwrap();
    let before = files(&out);
    let mut child = start(&out);
    wait_for_first_file(&mut child, &out, &before);
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: sends a signal to our own child, which has not been waited for (its pid
    // cannot have been reused).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let done = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(128 + libc::SIGINT), "{stderr}");
    assert!(
        stderr.contains("interrupted by SIGINT")
            && stderr.contains(&format!("partial results in {}", out.display())),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_nothing_looks_complete(&out);
    let marker = std::fs::read_to_string(out.join("INTERRUPTED")).expect("INTERRUPTED");
    assert!(marker.contains("SIGINT"), "{marker}");
    let partial: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.partial.json")).expect("partial summary"),
    )
    .expect("JSON");
    assert_eq!(partial["run_state"], "interrupted");
    assert_eq!(partial["signal"], "SIGINT");
}
