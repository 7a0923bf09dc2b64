//! A `redis-server` of a test's own: on loopback, on a free port, its files in a
//! directory the test gives (no persistence unless asked: `SAVE` writes `dump.rdb`
//! there, uncompressed so that a test can search it), stopped by its pid.
//!
//! Whether to run at all is [`crate::tool_runs`]`("redis-server", ...)`'s answer: a
//! missing server skips the test on a developer's machine and fails it under CI.

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The line `redis-server` logs once it accepts connections.
const READY: &str = "Ready to accept connections";
/// Longest wait for that line (a loaded CI machine); a backstop, not a pace.
const START_LIMIT: Duration = Duration::from_secs(30);

/// A running `redis-server`, stopped when dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl RedisServer {
    /// Starts one with its files in `dir`, on a free loopback port (another port is
    /// tried if one is taken between the check and the start).
    pub fn start(dir: &Path) -> std::io::Result<RedisServer> {
        let mut last = None;
        for _ in 0..5 {
            let port = free_port()?;
            match spawn(dir, port) {
                Ok(child) => {
                    return Ok(RedisServer {
                        child: Some(child),
                        port,
                        dir: dir.to_path_buf(),
                    })
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("redis-server did not start")))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id (none while stopped): a test may pause it (SIGSTOP) to
    /// play a hung server.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The directory holding its files (`dump.rdb` after `SAVE`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Kills it (SIGKILL, by its pid) and waits for it: whatever it held in memory is
    /// gone.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, after [`RedisServer::stop`].
    pub fn restart(&mut self) -> std::io::Result<()> {
        self.stop();
        self.child = Some(spawn(&self.dir, self.port)?);
        Ok(())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A loopback TCP port free now, below the kernel's ephemeral range (32768 and up on
/// Linux) so that no outgoing connection takes it while the server is stopped.
fn free_port() -> std::io::Result<u16> {
    use std::hash::{BuildHasher, RandomState};
    // Randomly keyed per call: parallel tests start from different ports.
    let start = RandomState::new().hash_one(std::process::id());
    for i in 0..12_000u64 {
        let port = 20_000 + ((start + i * 7_919) % 12_000) as u16;
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return Ok(port);
        }
    }
    Err(std::io::Error::other(
        "no free loopback port in 20000-31999",
    ))
}

/// Starts `redis-server` on `port` and waits for its ready line; an exit before it
/// (port taken, bad option) is an error carrying its log.
fn spawn(dir: &Path, port: u16) -> std::io::Result<Child> {
    let mut child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(dir)
        .args(["--save", "", "--appendonly", "no", "--rdbcompression", "no"])
        .args(["--daemonize", "no", "--logfile", ""])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let (lines, seen) = mpsc::channel();
    // Reads the log to its end, so that the server never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let deadline = Instant::now() + START_LIMIT;
    let mut log = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match seen.recv_timeout(left) {
            Ok(line) if line.contains(READY) => return Ok(child),
            Ok(line) => log.push(line),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(std::io::Error::other(format!(
                    "redis-server on port {port} did not become ready: {}",
                    log.join(" | ")
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    #[test]
    fn a_server_starts_answers_and_stops() {
        if !crate::tool_runs("redis-server", "a_server_starts_answers_and_stops") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut server = RedisServer::start(dir.path()).unwrap();
        let ping = |port: u16| -> std::io::Result<String> {
            let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
            s.write_all(b"PING\r\n")?;
            let mut buf = [0u8; 7];
            s.read_exact(&mut buf)?;
            Ok(String::from_utf8_lossy(&buf).into_owned())
        };
        assert_eq!(ping(server.port()).unwrap(), "+PONG\r\n");
        server.stop();
        assert!(ping(server.port()).is_err(), "still answering after stop");
        server.restart().unwrap();
        assert_eq!(ping(server.port()).unwrap(), "+PONG\r\n");
    }
}
