//! The shared session store as an operator runs it: `wtlsperf gateway --session-store`
//! processes sharing a `redis-server` of the test's own on loopback, and `wtlsperf client
//! --sess-out/--sess-in` carrying a session from one gateway to another.
//!
//! Every wait is for an event (a line of a gateway's log, a process's exit), never for a
//! length of time; the deadlines are backstops for a hung process. Without
//! `redis-server` the tests skip, and under CI they fail (crates/testtools).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use wtls::suite::Case;
use wtlsperf_drivers::pki_store::{unix_now, PkiStore};
use wtlsperf_testtools::redis::RedisServer;

/// Longest wait for a line of a gateway's log: a backstop for a hung gateway.
const LOG_LIMIT: Duration = Duration::from_secs(120);

fn pki() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("wtlsperf-store-{}", std::process::id()));
        let cases = [Case::parse("160p/160p").unwrap()];
        PkiStore::create(&dir, true, unix_now().unwrap(), &cases).unwrap();
        dir
    })
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wtlsperf"));
    c.env_remove("RUST_BACKTRACE").env("NO_COLOR", "1");
    c
}

/// A redis-server for one test, or `None` (after saying why) to skip it.
fn redis(test: &str, dir: &Path) -> Option<RedisServer> {
    wtlsperf_testtools::tool_runs("redis-server", test)
        .then(|| RedisServer::start(dir).expect("redis-server starts"))
}

/// A fresh 32-byte key file, as `head -c 32 /dev/urandom > FILE` makes one.
fn key_file(dir: &Path, name: &str) -> PathBuf {
    let mut key = [0u8; 32];
    openssl::rand::rand_bytes(&mut key).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, key).unwrap();
    path
}

/// A `wtlsperf gateway` process and the lines of its log as they come.
struct Gateway {
    child: Child,
    addr: SocketAddr,
    log: Receiver<String>,
    seen: Vec<String>,
}

impl Gateway {
    /// Starts a gateway on a free port sharing `store` with the keys `keys` (first
    /// seals), and waits for its "listening on" line.
    fn start(store: &str, keys: &[&Path]) -> Gateway {
        let mut cmd = bin();
        cmd.args(["gateway", "--listen", "127.0.0.1:0", "--pki"])
            .arg(pki())
            .args(["--session-store", store])
            // A loaded machine may keep redis-server off the CPU for longer than the
            // default 50 ms; these tests are about what fails, not how fast.
            .args(["--session-store-timeout-ms", "2000"]);
        for k in keys {
            cmd.arg("--session-key").arg(k);
        }
        let mut child = cmd
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut g = Gateway {
            child,
            addr: "127.0.0.1:0".parse().unwrap(),
            log,
            seen: Vec::new(),
        };
        let line = g.wait_for("wtlsperf gateway listening on ");
        g.addr = line.rsplit(' ').next().unwrap().parse().unwrap();
        g
    }

    /// Waits for a log line containing `needle` and returns it.
    fn wait_for(&mut self, needle: &str) -> String {
        if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
            return line.clone();
        }
        let deadline = Instant::now() + LOG_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.log.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(e) => panic!("no {needle:?} in the gateway's log ({e}): {:#?}", self.seen),
            }
        }
    }

    /// Every log line so far.
    fn log_so_far(&mut self) -> String {
        while let Ok(line) = self.log.try_recv() {
            self.seen.push(line);
        }
        self.seen.join("\n")
    }

    fn connect(&self) -> String {
        self.addr.to_string()
    }

    /// SIGKILL: the node dies with whatever it held in memory.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, as an operator stops it: its statistics (JSON on stdout).
    fn stop(self) -> serde_json::Value {
        // SAFETY: kill sends a signal to the child process we started and still own.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let out = self.child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// Runs `wtlsperf client` against `gateway` and returns its output; it must succeed.
fn client(gateway: &Gateway, args: &[&str]) -> String {
    let out = bin()
        .args(["client", "--connect", &gateway.connect(), "--pki"])
        .arg(pki())
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The master secret of the last line of an NSS key log.
fn master_secret(keylog: &Path) -> Vec<u8> {
    let text = std::fs::read_to_string(keylog).unwrap();
    let line = text.lines().last().unwrap();
    let fields: Vec<&str> = line.split(' ').collect();
    assert_eq!(fields.len(), 3, "{line}");
    assert_eq!(fields[0], "CLIENT_RANDOM");
    hex::decode(fields[2]).unwrap()
}

fn redis_connection(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

/// Everything Redis would write to disk: `SAVE`, then the RDB file (uncompressed, see
/// `RedisServer`), followed by a `DUMP` of every key.
fn redis_dump(server: &RedisServer) -> Vec<u8> {
    let mut con = redis_connection(server);
    let _: String = redis::cmd("SAVE").query(&mut con).unwrap();
    let mut all = std::fs::read(server.dir().join("dump.rdb")).unwrap();
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    for k in keys {
        let dumped: Vec<u8> = redis::cmd("DUMP").arg(k).query(&mut con).unwrap();
        all.extend_from_slice(&dumped);
    }
    all
}

/// Whether `secret` appears in `dump`, as bytes or as hex (either case).
fn reveals(dump: &[u8], secret: &[u8]) -> bool {
    let contains = |needle: &[u8]| dump.windows(needle.len()).any(|w| w == needle);
    let hex = hex::encode(secret);
    contains(secret) || contains(hex.as_bytes()) || contains(hex.to_uppercase().as_bytes())
}

#[test]
fn any_gateway_resumes_any_gateways_session_even_after_a_restart_and_redis_holds_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = redis("any_gateway_resumes...", dir.path()) else {
        return;
    };
    let key = key_file(dir.path(), "fleet.key");
    let first = Gateway::start(&server.url(), &[&key]);
    let second = Gateway::start(&server.url(), &[&key]);
    let sess = dir.path().join("session.json");
    let keylog = dir.path().join("keys.log");

    let out = client(
        &first,
        &["--sess-out", path(&sess), "--keylog", path(&keylog)],
    );
    assert!(out.contains("handshake 1 Full"), "{out}");
    #[cfg(unix)]
    for secret_file in [&sess, &keylog] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(secret_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", secret_file.display());
    }

    // Made on the first gateway, resumed on the second.
    let out = client(&second, &["--sess-in", path(&sess)]);
    assert!(out.contains("handshake 1 Abbreviated"), "{out}");
    assert!(out.contains("resumed: abbreviated handshake"), "{out}");

    // The node that made it dies and comes back: the session outlives it.
    first.kill();
    let restarted = Gateway::start(&server.url(), &[&key]);
    let out = client(&restarted, &["--sess-in", path(&sess)]);
    assert!(out.contains("handshake 1 Abbreviated"), "{out}");

    // The entry expires with the session's lifetime (one hour).
    let mut con = redis_connection(&server);
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("wtls:session:*")
        .query(&mut con)
        .unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    let ttl_ms: i64 = redis::cmd("PTTL").arg(&keys[0]).query(&mut con).unwrap();
    assert!(ttl_ms > 0 && ttl_ms <= 3_600_000, "TTL {ttl_ms} ms");

    // A reader of Redis learns no master secret: not in the dump, in no encoding.
    let secret = master_secret(&keylog);
    assert_eq!(secret.len(), 20);
    assert!(
        !reveals(&redis_dump(&server), &secret),
        "the dump holds the master secret"
    );
    // The search finds a secret that is there (so its silence above means something).
    let _: () = redis::cmd("SET")
        .arg("control")
        .arg(&secret[..])
        .query(&mut con)
        .unwrap();
    assert!(reveals(&redis_dump(&server), &secret));

    let stats = second.stop();
    assert_eq!(stats["session_store"]["hits"], 1, "{stats}");
    assert_eq!(stats["session_store"]["lookups_failed"], 0, "{stats}");
    let stats = restarted.stop();
    assert_eq!(stats["handshakes_completed"]["abbreviated"], 1, "{stats}");
}

#[test]
fn with_redis_down_full_handshakes_go_on_the_log_says_why_and_the_gateway_reconnects() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut server) = redis("with_redis_down...", dir.path()) else {
        return;
    };
    let key = key_file(dir.path(), "fleet.key");
    let mut gateway = Gateway::start(&server.url(), &[&key]);
    let sess = dir.path().join("session.json");
    client(&gateway, &["--sess-out", path(&sess)]);

    server.stop();
    let out = client(&gateway, &["--sess-in", path(&sess), "--count", "3"]);
    assert_eq!(out.matches(" Full ").count(), 3, "{out}");
    assert!(
        out.contains("not resumed: the gateway made a full handshake"),
        "{out}"
    );
    let why = gateway.wait_for("resumption fell back to a full handshake");
    assert!(why.contains("session lookup failed ("), "{why}");
    gateway.wait_for("session store unreachable");

    // Redis comes back (empty: it keeps nothing on disk); the gateway finds it alone.
    server.restart().unwrap();
    gateway.wait_for("session store reachable again");
    let fresh = dir.path().join("fresh.json");
    client(&gateway, &["--sess-out", path(&fresh)]);
    let out = client(&gateway, &["--sess-in", path(&fresh)]);
    assert!(out.contains("handshake 1 Abbreviated"), "{out}");

    let log = gateway.log_so_far();
    let secret = master_secret_of(&sess);
    assert!(
        !reveals(log.as_bytes(), &secret),
        "the log names a master secret"
    );
    let stats = gateway.stop();
    let store = &stats["session_store"];
    assert!(store["lookups_failed"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(store["went_down"], 1, "{stats}");
    assert_eq!(store["reconnects"], 1, "{stats}");
    assert_eq!(store["hits"], 1, "{stats}");
    assert_eq!(stats["handshakes_completed"]["full"], 5, "{stats}");
}

#[test]
fn a_hung_redis_costs_a_lookup_its_time_out_and_nothing_more() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = redis("a_hung_redis...", dir.path()) else {
        return;
    };
    let key = key_file(dir.path(), "fleet.key");
    let mut gateway = Gateway::start(&server.url(), &[&key]);
    let sess = dir.path().join("session.json");
    client(&gateway, &["--sess-out", path(&sess)]);

    let pid = server.pid().unwrap() as libc::pid_t;
    // SAFETY: signals to the redis-server child this test started and still owns.
    let signal = |sig| unsafe { libc::kill(pid, sig) };
    signal(libc::SIGSTOP);
    // The lookup waits out its time-out, then the handshake goes on as a full one.
    let out = client(&gateway, &["--sess-in", path(&sess), "--count", "2"]);
    assert_eq!(out.matches(" Full ").count(), 2, "{out}");
    let why = gateway.wait_for("session lookup failed (");
    assert!(why.contains("did not answer within the time-out"), "{why}");
    signal(libc::SIGCONT);
    gateway.wait_for("session store reachable again");
    let fresh = dir.path().join("fresh.json");
    client(&gateway, &["--sess-out", path(&fresh)]);
    let out = client(&gateway, &["--sess-in", path(&fresh)]);
    assert!(out.contains("handshake 1 Abbreviated"), "{out}");

    let stats = gateway.stop();
    let store = &stats["session_store"];
    // One lookup asked the hung server; the next was skipped, the store being down.
    assert_eq!(store["lookups_failed"], 2, "{stats}");
    assert_eq!(store["went_down"], 1, "{stats}");
    assert_eq!(store["reconnects"], 1, "{stats}");
}

/// The master secret a session file holds.
fn master_secret_of(sess: &Path) -> Vec<u8> {
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(sess).unwrap()).unwrap();
    hex::decode(file["master_secret"].as_str().unwrap()).unwrap()
}

#[test]
fn entries_of_a_retired_key_or_moved_to_another_session_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = redis("entries_of_a_retired_key...", dir.path()) else {
        return;
    };
    let old = key_file(dir.path(), "old.key");
    let new = key_file(dir.path(), "new.key");
    let before = Gateway::start(&server.url(), &[&old]);
    let sess = dir.path().join("session.json");
    client(&before, &["--sess-out", path(&sess)]);
    let other = dir.path().join("other.json");
    client(&before, &["--sess-out", path(&other)]);
    before.stop();

    // Rotation: the new key seals, the old one still opens.
    let rotating = Gateway::start(&server.url(), &[&new, &old]);
    let out = client(&rotating, &["--sess-in", path(&sess)]);
    assert!(out.contains("handshake 1 Abbreviated"), "{out}");
    rotating.stop();

    // The old key retired: its entries are refused, and the log says so.
    let mut retired = Gateway::start(&server.url(), &[&new]);
    let out = client(&retired, &["--sess-in", path(&sess)]);
    assert!(out.contains("not resumed"), "{out}");
    let line = retired.wait_for("session entry refused");
    assert!(line.contains("not configured"), "{line}");

    // An entry copied under another session's id does not open either.
    let id = |f: &Path| -> String {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
        v["session_id"].as_str().unwrap().to_string()
    };
    let mut con = redis_connection(&server);
    let sealed_old: Vec<u8> = redis::cmd("GET")
        .arg(format!("wtls:session:{}", id(&sess)))
        .query(&mut con)
        .unwrap();
    let fresh_sess = dir.path().join("fresh.json");
    client(&retired, &["--sess-out", path(&fresh_sess)]);
    let sealed_new: Vec<u8> = redis::cmd("GET")
        .arg(format!("wtls:session:{}", id(&fresh_sess)))
        .query(&mut con)
        .unwrap();
    assert_ne!(sealed_old, sealed_new);
    let _: () = redis::cmd("SET")
        .arg(format!("wtls:session:{}", id(&other)))
        .arg(sealed_new)
        .query(&mut con)
        .unwrap();
    let out = client(&retired, &["--sess-in", path(&other)]);
    assert!(out.contains("not resumed"), "{out}");
    retired.wait_for("not authentic");

    let stats = retired.stop();
    let store = &stats["session_store"];
    assert_eq!(store["refused_unknown_key"], 1, "{stats}");
    assert_eq!(store["refused_not_authentic"], 1, "{stats}");
    assert_eq!(store["hits"], 0, "{stats}");
}

/// Refused operator input: non-zero exit, `needles` in the message, no panic.
fn refused(args: &[&str], needles: &[&str]) {
    let out = bin().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} exited 0");
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_keys_stores_and_session_files_are_precise_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = path(pki());
    let short = dir.path().join("short.key");
    std::fs::write(&short, [1u8; 16]).unwrap();
    let missing = dir.path().join("missing.key");
    let good = key_file(dir.path(), "good.key");
    let store = "redis://127.0.0.1:1";
    let gw = |key: &Path| -> Vec<String> {
        [
            "gateway",
            "--pki",
            p,
            "--session-store",
            store,
            "--session-key",
            path(key),
        ]
        .map(String::from)
        .to_vec()
    };
    let args = gw(&short);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(
        &args,
        &["--session-key", "short.key", "16 bytes", "head -c 32"],
    );
    let args = gw(&missing);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&args, &["--session-key", "missing.key", "cannot read"]);
    refused(
        &["gateway", "--pki", p, "--session-store", store],
        &["--session-key"],
    );
    refused(
        &["gateway", "--pki", p, "--session-key", path(&good)],
        &["--session-store"],
    );
    refused(
        &[
            "gateway",
            "--pki",
            p,
            "--session-store",
            "http://x",
            "--session-key",
            path(&good),
        ],
        &["--session-store http://x"],
    );
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    refused(
        &["client", "--pki", p, "--sess-in", path(&bad)],
        &["--sess-in", "bad.json", "not a wtlsperf session file"],
    );
    refused(
        &["client", "--pki", p, "--sess-in", path(&missing)],
        &["--sess-in", "missing.key"],
    );
}
