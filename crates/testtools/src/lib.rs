//! Tests that need an external program (valgrind for instruction counts, tshark for the
//! dissector checks) ask here whether to run, skip, or fail.
//!
//! On a developer's machine a missing tool skips the test with a message saying how to
//! install it. In CI it must not: a skipped check that passes looks like a check that
//! ran. A missing tool is therefore a failure when `CI` is `true` (or `1`), or when the
//! tool's own switch `WTLSPERF_REQUIRE_<TOOL>` is set (`WTLSPERF_REQUIRE_TSHARK`,
//! `WTLSPERF_REQUIRE_VALGRIND`, `WTLSPERF_REQUIRE_CHROMIUM` for the report's browser
//! test; `scripts/test.sh` sets them).
//!
//! [`redis::RedisServer`] runs a test's own `redis-server` (the shared session store's
//! tests).

pub mod redis;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The script that installs every tool the tests use.
pub const SETUP_SCRIPT: &str = "scripts/setup.sh";

/// What a test should do about a tool it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The tool runs (`TOOL --version` succeeded): run the test.
    Run,
    /// The tool is missing and nothing requires it: skip, printing the reason.
    Skip(String),
    /// The tool is missing and CI or its switch requires it: fail with the reason.
    Fail(String),
}

/// The environment a verdict depends on, read once so that tests can give their own.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// The directories searched for the tool (`PATH`).
    pub path: Option<OsString>,
    /// `CI`.
    pub ci: Option<OsString>,
    /// `WTLSPERF_REQUIRE_<TOOL>` for the tool asked about.
    pub require: Option<OsString>,
}

impl Environment {
    /// This process's environment, for `tool`.
    pub fn of_process(tool: &str) -> Environment {
        Environment {
            path: std::env::var_os("PATH"),
            ci: std::env::var_os("CI"),
            require: std::env::var_os(switch(tool)),
        }
    }

    /// Whether a missing tool is a failure here, and why.
    fn requirement(&self, tool: &str) -> Option<String> {
        let ci = self
            .ci
            .as_deref()
            .and_then(OsStr::to_str)
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
        if ci {
            Some("CI is true".to_string())
        } else if self.require.is_some() {
            Some(format!("{} is set", switch(tool)))
        } else {
            None
        }
    }
}

/// The switch that requires `tool` outside CI: `WTLSPERF_REQUIRE_` and its name in
/// capitals, with `_` for what a shell variable cannot hold (`redis-server`:
/// `WTLSPERF_REQUIRE_REDIS_SERVER`).
pub fn switch(tool: &str) -> String {
    let name: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("WTLSPERF_REQUIRE_{name}")
}

/// The executable called `tool` in the directories of `path`, if any.
fn find(tool: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(tool))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(file: &Path) -> bool {
    file.is_file()
}

/// What to do about `tool` in `env`: run when `tool --version`, found on `env.path`,
/// succeeds; otherwise skip or fail (see the crate's documentation). The messages name
/// the tool and [`SETUP_SCRIPT`].
pub fn verdict(tool: &str, env: &Environment) -> Verdict {
    let missing = match find(tool, env.path.as_deref()) {
        None => format!("{tool} not found on PATH"),
        Some(exe) => match Command::new(&exe).arg("--version").output() {
            Ok(out) if out.status.success() => return Verdict::Run,
            Ok(out) => format!("{} --version exited with {}", exe.display(), out.status),
            Err(e) => format!("{} not runnable: {e}", exe.display()),
        },
    };
    match env.requirement(tool) {
        Some(why) => Verdict::Fail(format!(
            "{missing}; {tool} is required ({why}): install it with {SETUP_SCRIPT}"
        )),
        None => Verdict::Skip(format!(
            "{missing}; skipping (install it with {SETUP_SCRIPT}; set CI=true or {} to make this a failure)",
            switch(tool)
        )),
    }
}

/// For a test that needs `tool`: `true` to run it; `false` (after printing why) to skip
/// it. Panics, naming the tool and [`SETUP_SCRIPT`], when the tool is missing and CI or
/// its switch requires it.
pub fn tool_runs(tool: &str, test: &str) -> bool {
    match verdict(tool, &Environment::of_process(tool)) {
        Verdict::Run => true,
        Verdict::Skip(why) => {
            eprintln!("SKIPPED {test}: {why}");
            false
        }
        Verdict::Fail(why) => panic!("{test}: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory holding one executable script `name` that exits with `status`.
    fn fake_tool(name: &str, status: i32) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join(name);
        std::fs::write(&file, format!("#!/bin/sh\nexit {status}\n")).expect("write the script");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755))
                .expect("make it executable");
        }
        dir
    }

    fn env(path: &Path, ci: Option<&str>, require: Option<&str>) -> Environment {
        Environment {
            path: Some(path.as_os_str().to_owned()),
            ci: ci.map(OsString::from),
            require: require.map(OsString::from),
        }
    }

    /// One test runs every fake tool: a script written while another test thread forks
    /// could be held open in that child and fail to execute (ETXTBSY).
    #[test]
    fn a_tool_runs_only_when_its_version_check_succeeds() {
        let dir = fake_tool("valgrind", 0);
        for ci in [None, Some("true")] {
            assert_eq!(
                verdict("valgrind", &env(dir.path(), ci, None)),
                Verdict::Run
            );
        }
        let dir = fake_tool("tshark", 3);
        assert!(matches!(
            verdict("tshark", &env(dir.path(), Some("true"), None)),
            Verdict::Fail(_)
        ));
        assert!(matches!(
            verdict("tshark", &env(dir.path(), None, None)),
            Verdict::Skip(_)
        ));
    }

    #[test]
    fn a_missing_tool_skips_outside_ci() {
        let empty = tempfile::tempdir().unwrap();
        for ci in [None, Some("false"), Some("")] {
            let Verdict::Skip(why) = verdict("valgrind", &env(empty.path(), ci, None)) else {
                panic!("not a skip with CI={ci:?}");
            };
            assert!(
                why.contains("valgrind") && why.contains(SETUP_SCRIPT),
                "{why}"
            );
        }
    }

    #[test]
    fn a_missing_tool_fails_under_ci_naming_the_tool_and_the_setup_script() {
        let empty = tempfile::tempdir().unwrap();
        for (tool, ci) in [("valgrind", "true"), ("tshark", "TRUE"), ("valgrind", "1")] {
            let Verdict::Fail(why) = verdict(tool, &env(empty.path(), Some(ci), None)) else {
                panic!("{tool} missing under CI={ci} is not a failure");
            };
            assert!(why.contains(tool) && why.contains(SETUP_SCRIPT), "{why}");
            assert!(why.contains("CI is true"), "{why}");
        }
    }

    #[test]
    fn the_tools_own_switch_still_requires_it() {
        let empty = tempfile::tempdir().unwrap();
        let Verdict::Fail(why) = verdict("tshark", &env(empty.path(), None, Some("1"))) else {
            panic!("WTLSPERF_REQUIRE_TSHARK did not make a missing tshark a failure");
        };
        assert!(why.contains("WTLSPERF_REQUIRE_TSHARK"), "{why}");
        assert_eq!(switch("valgrind"), "WTLSPERF_REQUIRE_VALGRIND");
        assert_eq!(switch("redis-server"), "WTLSPERF_REQUIRE_REDIS_SERVER");
    }

    /// The real PATH with every directory holding valgrind taken out: the tool is gone
    /// for the helper, while the machine keeps it.
    #[test]
    fn valgrind_stripped_from_the_real_path_fails_under_ci() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let stripped: Vec<PathBuf> = std::env::split_paths(&path)
            .filter(|dir| !is_executable(&dir.join("valgrind")))
            .collect();
        let stripped = std::env::join_paths(stripped).expect("a PATH");
        let env = Environment {
            path: Some(stripped),
            ci: Some("true".into()),
            require: None,
        };
        assert!(matches!(verdict("valgrind", &env), Verdict::Fail(_)));
    }
}
