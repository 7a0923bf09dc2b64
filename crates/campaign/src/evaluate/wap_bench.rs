//! The WAP gateway beside Kannel 1.4.5's wapbox (`wtlsperf evaluate --wap-bench DIR`):
//! what `scripts/bench-wap-kannel.sh` measured, read back from the CSVs it wrote and
//! summarised as docs/wap.md's "Benchmark against Kannel" summarises them.
//!
//! The benchmark needs Kannel, nginx and dumpcap, root for the capture, and minutes of
//! the machine to itself, so the evaluation does not run it: it reads a directory the
//! script wrote, `runs.csv` (one row per `fakewap` run), `wtls.csv` (one row per run of
//! our client on a port, or of curl on the origin alone) and, when present, `meta.json`
//! (when, at which commit, with which binary and options). Every number of the section
//! comes from those files; nothing is measured here, and the section says when and where
//! it was. A directory that cannot be read is refused before anything runs
//! ([`WapBenchError`]), as a bad experiment file is.
//!
//! [`WapBench::load`] reads and checks the files; [`WapBench::summary`] makes the medians
//! over runs and the ratios ours/Kannel; `section` turns them into the report's tables,
//! figure and CSV files.

mod section;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use wtlsperf_models::stats::median;

use super::context::utc_stamp;

/// Why a `--wap-bench` directory was refused: the option and the file, so the operator
/// knows what to fix. The command exits 2 on it, as on any other usage error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WapBenchError {
    /// A file of the directory (or the directory itself) is missing or malformed.
    #[error("--wap-bench: {}: {message}", file.display())]
    File { file: PathBuf, message: String },
    /// `--only wap_bench` without a directory to read.
    #[error("--only wap_bench needs --wap-bench DIR (a results directory of scripts/bench-wap-kannel.sh)")]
    NoDirectory,
}

impl WapBenchError {
    fn file(file: &Path, message: impl Into<String>) -> Self {
        WapBenchError::File {
            file: file.to_path_buf(),
            message: message.into(),
        }
    }
}

/// The gateway a `fakewap` run went to (`gateway` in runs.csv).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Gateway {
    /// `wtlsperf gateway --wap`.
    Ours,
    /// Kannel 1.4.5's bearerbox and wapbox.
    Kannel,
}

impl Gateway {
    /// Both, in the order the tables list them.
    pub const ALL: [Gateway; 2] = [Gateway::Ours, Gateway::Kannel];

    /// Its name in a table row, beside the thread count.
    pub fn short(self) -> &'static str {
        match self {
            Gateway::Ours => "ours",
            Gateway::Kannel => "Kannel",
        }
    }

    /// The name a reader of the report knows it by (the figure's legend).
    pub fn label(self) -> &'static str {
        match self {
            Gateway::Ours => "ours (wtlsperf gateway --wap)",
            Gateway::Kannel => "Kannel 1.4.5 wapbox",
        }
    }
}

/// One run of Kannel's `fakewap` against one gateway: a row of runs.csv, whose columns
/// docs/wap.md ("Benchmark against Kannel") and `scripts/bench_wap_kannel.py` define.
/// Latencies are empty when the capture held no answered session.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FakewapRun {
    pub gateway: Gateway,
    pub threads: u32,
    pub run: u32,
    pub sessions: u64,
    pub completed: u64,
    pub wall_s: f64,
    pub sessions_per_s: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Sessions whose Get got no Reply in the capture.
    pub unanswered: u64,
    /// fakewap's "is not Reply": the protocol errors.
    pub not_reply: u64,
    /// Replies with a status other than 200.
    pub not_200: u64,
    pub panics: u64,
    pub fakewap_worst_s: Option<f64>,
    pub fakewap_rc: i32,
}

impl FakewapRun {
    /// The measured numbers, by column name, for the range check.
    fn numbers(&self) -> [(&'static str, Option<f64>); 7] {
        [
            ("wall_s", Some(self.wall_s)),
            ("sessions_per_s", self.sessions_per_s),
            ("p50_ms", self.p50_ms),
            ("p95_ms", self.p95_ms),
            ("p99_ms", self.p99_ms),
            ("max_ms", self.max_ms),
            ("fakewap_worst_s", self.fakewap_worst_s),
        ]
    }
}

/// Where our client fetched the page (`port` in wtls.csv): one of our gateway's four WAP
/// ports, or the origin alone (curl), the baseline of the GET overhead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(try_from = "String")]
pub enum ClientPort {
    Wap(u16),
    Origin,
}

impl TryFrom<String> for ClientPort {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        if s == "origin" {
            return Ok(ClientPort::Origin);
        }
        s.parse()
            .map(ClientPort::Wap)
            .map_err(|_| format!("port {s:?} is neither a UDP port number nor \"origin\""))
    }
}

impl fmt::Display for ClientPort {
    /// As wtls.csv writes it: the port number, or `origin`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientPort::Origin => f.write_str("origin"),
            ClientPort::Wap(p) => write!(f, "{p}"),
        }
    }
}

impl ClientPort {
    /// The port and what WAP runs there (WAP-259 WDP, Appendix B), as the table names it.
    pub fn label(self) -> String {
        match self {
            ClientPort::Origin => "origin (curl)".into(),
            ClientPort::Wap(p @ 9200) => format!("{p} (connectionless WSP)"),
            ClientPort::Wap(p @ 9201) => format!("{p} (WSP over WTP)"),
            ClientPort::Wap(p @ 9202) => format!("{p} (connectionless WSP, WTLS)"),
            ClientPort::Wap(p @ 9203) => format!("{p} (WSP over WTP, WTLS)"),
            ClientPort::Wap(p) => p.to_string(),
        }
    }
}

/// One run of our client (or of curl on the origin), one page after another: a row of
/// wtls.csv.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ClientRun {
    pub port: ClientPort,
    pub run: u32,
    pub pages: u64,
    pub ok: u64,
    pub wall_s: f64,
    pub pages_per_s: Option<f64>,
    pub get_p50_ms: Option<f64>,
    pub get_p95_ms: Option<f64>,
    pub get_p99_ms: Option<f64>,
    pub handshake_p50_ms: Option<f64>,
}

impl ClientRun {
    /// The measured numbers, by column name, for the range check.
    fn numbers(&self) -> [(&'static str, Option<f64>); 6] {
        [
            ("wall_s", Some(self.wall_s)),
            ("pages_per_s", self.pages_per_s),
            ("get_p50_ms", self.get_p50_ms),
            ("get_p95_ms", self.get_p95_ms),
            ("get_p99_ms", self.get_p99_ms),
            ("handshake_p50_ms", self.handshake_p50_ms),
        ]
    }
}

/// `meta.json`, which the script writes when it finishes: what a reader needs to find
/// the run again. Every field may be absent (an older directory has no file at all).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct BenchMeta {
    /// UTC start and end, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started_utc: Option<String>,
    pub finished_utc: Option<String>,
    /// `git rev-parse --short HEAD` of the checkout, or "unknown".
    pub commit: Option<String>,
    /// The `wtlsperf` binary the script ran (`BENCH_BIN`).
    pub binary: Option<String>,
    /// The script's options as given, defaults filled in.
    pub options: Option<String>,
    /// CPU model and cores.
    pub machine: Option<String>,
}

/// A benchmark directory, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct WapBench {
    pub dir: PathBuf,
    pub runs: Vec<FakewapRun>,
    pub client: Vec<ClientRun>,
    /// `None`: the directory has no meta.json.
    pub meta: Option<BenchMeta>,
    /// runs.csv's modification time (`YYYYMMDDTHHMMSSZ`): when the run ended, for a
    /// directory without meta.json.
    pub runs_written: Option<String>,
}

impl WapBench {
    /// Reads `dir/runs.csv`, `dir/wtls.csv` and `dir/meta.json` (if present); refuses a
    /// missing or unreadable file, a missing column, a number that is not one, a
    /// negative or non-finite measurement, an empty table and a run listed twice.
    pub fn load(dir: &Path) -> Result<WapBench, WapBenchError> {
        if !dir.is_dir() {
            return Err(WapBenchError::file(
                dir,
                "not a directory (give the results directory of scripts/bench-wap-kannel.sh)",
            ));
        }
        let runs_path = dir.join("runs.csv");
        let runs: Vec<FakewapRun> = read_rows(&runs_path, &RUN_COLUMNS)?;
        check_rows(&runs_path, &runs, |r| {
            (
                format!("{:?}, {} threads, run {}", r.gateway, r.threads, r.run),
                r.numbers(),
            )
        })?;
        let client_path = dir.join("wtls.csv");
        let client: Vec<ClientRun> = read_rows(&client_path, &CLIENT_COLUMNS)?;
        check_rows(&client_path, &client, |r| {
            (format!("port {}, run {}", r.port, r.run), r.numbers())
        })?;
        let meta = read_meta(&dir.join("meta.json"))?;
        let runs_written = std::fs::metadata(&runs_path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| utc_stamp(d.as_secs()));
        Ok(WapBench {
            dir: dir.to_path_buf(),
            runs,
            client,
            meta,
            runs_written,
        })
    }
}

/// runs.csv's columns (`RUN_COLUMNS` of scripts/bench_wap_kannel.py); more may follow.
const RUN_COLUMNS: [&str; 17] = [
    "gateway",
    "threads",
    "run",
    "sessions",
    "completed",
    "wall_s",
    "sessions_per_s",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
    "unanswered",
    "not_reply",
    "not_200",
    "panics",
    "fakewap_worst_s",
    "fakewap_rc",
];

/// wtls.csv's columns (`WTLS_COLUMNS` of scripts/bench_wap_kannel.py).
const CLIENT_COLUMNS: [&str; 10] = [
    "port",
    "run",
    "pages",
    "ok",
    "wall_s",
    "pages_per_s",
    "get_p50_ms",
    "get_p95_ms",
    "get_p99_ms",
    "handshake_p50_ms",
];

/// Every row of a CSV file whose header has `columns`, typed; an error names the line
/// and column. The header is checked first because an absent column of an optional
/// number would otherwise read as empty in every row.
fn read_rows<T: DeserializeOwned>(path: &Path, columns: &[&str]) -> Result<Vec<T>, WapBenchError> {
    let refuse = |message: String| WapBenchError::file(path, message);
    let mut reader = csv::Reader::from_path(path).map_err(|e| refuse(e.to_string()))?;
    let headers = reader.headers().map_err(|e| refuse(e.to_string()))?.clone();
    let missing: Vec<&str> = columns
        .iter()
        .copied()
        .filter(|c| !headers.iter().any(|h| h == *c))
        .collect();
    if !missing.is_empty() {
        return Err(refuse(format!(
            "line 1: no column {} (not a file of scripts/bench-wap-kannel.sh?)",
            missing.join(", ")
        )));
    }
    let mut rows = Vec::new();
    for row in reader.deserialize() {
        rows.push(row.map_err(|e| refuse(csv_message(&e, &headers)))?);
    }
    if rows.is_empty() {
        return Err(refuse("no rows (did the benchmark finish?)".into()));
    }
    Ok(rows)
}

/// A CSV error as a reader can act on it: the line and the column's name, not the
/// column's index the `csv` crate gives.
fn csv_message(e: &csv::Error, headers: &csv::StringRecord) -> String {
    let line = e.position().map(|p| format!("line {}: ", p.line()));
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => {
            let column = err
                .field()
                .and_then(|i| headers.get(i as usize))
                .map(|name| format!("column {name}: "));
            format!(
                "{}{}{}",
                line.unwrap_or_default(),
                column.unwrap_or_default(),
                err.kind()
            )
        }
        _ => e.to_string(),
    }
}

/// Refuses a row listed twice (by its key) and a measurement that is negative or not
/// finite, which no run of the script writes.
fn check_rows<T, const N: usize>(
    path: &Path,
    rows: &[T],
    key_and_numbers: impl Fn(&T) -> (String, [(&'static str, Option<f64>); N]),
) -> Result<(), WapBenchError> {
    let mut seen = std::collections::HashSet::new();
    for row in rows {
        let (key, numbers) = key_and_numbers(row);
        if let Some((column, value)) = numbers
            .iter()
            .find_map(|&(c, v)| v.filter(|v| !v.is_finite() || *v < 0.0).map(|v| (c, v)))
        {
            return Err(WapBenchError::file(
                path,
                format!("{key}: column {column}: {value} is not a measurement"),
            ));
        }
        if !seen.insert(key.clone()) {
            return Err(WapBenchError::file(path, format!("{key} is listed twice")));
        }
    }
    Ok(())
}

/// `meta.json` if the directory has one.
fn read_meta(path: &Path) -> Result<Option<BenchMeta>, WapBenchError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| WapBenchError::file(path, e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(WapBenchError::file(path, e.to_string())),
    }
}

/// One gateway at one thread count, over its runs: medians of the rate and of each
/// run's percentiles, the worst session of all runs, and the error counts run by run
/// (a median would hide one bad run, as it hid a run of 772 wrong PDUs once).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GatewaySummary {
    pub threads: u32,
    pub gateway: Gateway,
    pub runs: usize,
    pub sessions_per_s: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// "is not Reply" of each run, in run order, `/`-separated.
    pub not_reply_per_run: String,
    pub not_200_per_run: String,
    pub unanswered_per_run: String,
    /// fakewap's own worst transaction over the runs.
    pub fakewap_worst_s: Option<f64>,
}

/// Ours over Kannel at one thread count: the medians' ratios.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratio {
    pub threads: u32,
    pub ours_sessions_per_s: Option<f64>,
    pub kannel_sessions_per_s: Option<f64>,
    /// Ours / Kannel: above 1, ours is faster.
    pub sessions_per_s_ratio: Option<f64>,
    pub ours_p99_ms: Option<f64>,
    pub kannel_p99_ms: Option<f64>,
    /// Ours / Kannel: below 1, ours has the shorter tail.
    pub p99_ratio: Option<f64>,
}

/// One port of our client (or the origin), over its runs, with the GET's overhead: the
/// port's median GET p50 minus the origin's, the gateway's cost over the origin alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientSummary {
    #[serde(serialize_with = "super::csv_file::display")]
    pub port: ClientPort,
    pub runs: usize,
    /// Pages answered with status 200 of those asked, each run: `200/199/200 of 200`
    /// (`200 of 200, 100 of 100` when the runs asked for different numbers).
    pub ok_per_run: String,
    pub pages_per_s: Option<f64>,
    pub get_p50_ms: Option<f64>,
    pub get_p95_ms: Option<f64>,
    pub get_p99_ms: Option<f64>,
    pub handshake_p50_ms: Option<f64>,
    pub get_overhead_ms: Option<f64>,
}

/// The section's three tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub gateways: Vec<GatewaySummary>,
    pub ratios: Vec<Ratio>,
    pub client: Vec<ClientSummary>,
}

impl WapBench {
    /// The medians over runs, the ratios and the client's overhead.
    pub fn summary(&self) -> Summary {
        let mut by_cell: BTreeMap<(u32, Gateway), Vec<&FakewapRun>> = BTreeMap::new();
        for r in &self.runs {
            by_cell.entry((r.threads, r.gateway)).or_default().push(r);
        }
        let gateways: Vec<GatewaySummary> = by_cell
            .into_iter()
            .map(|((threads, gateway), runs)| gateway_summary(threads, gateway, runs))
            .collect();
        let ratios = ratios(&gateways);
        Summary {
            gateways,
            ratios,
            client: client_summaries(&self.client),
        }
    }
}

/// The median of the values present, if any.
fn median_of<T>(rows: &[&T], value: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = rows.iter().filter_map(|r| value(r)).collect();
    median(&values)
}

/// The largest of the values present, if any.
fn max_of<T>(rows: &[&T], value: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    rows.iter().filter_map(|r| value(r)).reduce(f64::max)
}

/// Each row's value, in order, `/`-separated (docs/wap.md's "0/0/0").
fn per_run<T>(rows: &[&T], value: impl Fn(&T) -> String) -> String {
    rows.iter().map(|r| value(r)).collect::<Vec<_>>().join("/")
}

fn gateway_summary(threads: u32, gateway: Gateway, mut runs: Vec<&FakewapRun>) -> GatewaySummary {
    runs.sort_by_key(|r| r.run);
    GatewaySummary {
        threads,
        gateway,
        runs: runs.len(),
        sessions_per_s: median_of(&runs, |r| r.sessions_per_s),
        p50_ms: median_of(&runs, |r| r.p50_ms),
        p95_ms: median_of(&runs, |r| r.p95_ms),
        p99_ms: median_of(&runs, |r| r.p99_ms),
        max_ms: max_of(&runs, |r| r.max_ms),
        not_reply_per_run: per_run(&runs, |r| r.not_reply.to_string()),
        not_200_per_run: per_run(&runs, |r| r.not_200.to_string()),
        unanswered_per_run: per_run(&runs, |r| r.unanswered.to_string()),
        fakewap_worst_s: max_of(&runs, |r| r.fakewap_worst_s),
    }
}

/// Ours over Kannel at each thread count both ran.
fn ratios(gateways: &[GatewaySummary]) -> Vec<Ratio> {
    let find = |threads, gateway| {
        gateways
            .iter()
            .find(|g| g.threads == threads && g.gateway == gateway)
    };
    let divide = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let mut threads: Vec<u32> = gateways.iter().map(|g| g.threads).collect();
    threads.dedup();
    threads
        .into_iter()
        .filter_map(|t| {
            let (ours, kannel) = (find(t, Gateway::Ours)?, find(t, Gateway::Kannel)?);
            Some(Ratio {
                threads: t,
                ours_sessions_per_s: ours.sessions_per_s,
                kannel_sessions_per_s: kannel.sessions_per_s,
                sessions_per_s_ratio: divide(ours.sessions_per_s, kannel.sessions_per_s),
                ours_p99_ms: ours.p99_ms,
                kannel_p99_ms: kannel.p99_ms,
                p99_ratio: divide(ours.p99_ms, kannel.p99_ms),
            })
        })
        .collect()
}

/// Each port's medians over runs, our ports first and the origin last, each port's
/// GET overhead over the origin's median.
fn client_summaries(rows: &[ClientRun]) -> Vec<ClientSummary> {
    let mut by_port: BTreeMap<ClientPort, Vec<&ClientRun>> = BTreeMap::new();
    for r in rows {
        by_port.entry(r.port).or_default().push(r);
    }
    let origin_p50 = by_port
        .get(&ClientPort::Origin)
        .and_then(|runs| median_of(runs, |r| r.get_p50_ms));
    by_port
        .into_iter()
        .map(|(port, mut runs)| {
            runs.sort_by_key(|r| r.run);
            let get_p50_ms = median_of(&runs, |r| r.get_p50_ms);
            let get_overhead_ms = match (port, get_p50_ms, origin_p50) {
                // The inputs have two decimals: rounding drops the subtraction's
                // floating-point residue (0.07999999999999999), not a measured digit.
                (ClientPort::Wap(_), Some(p), Some(o)) => Some(((p - o) * 1e4).round() / 1e4),
                _ => None,
            };
            ClientSummary {
                port,
                runs: runs.len(),
                ok_per_run: ok_per_run(&runs),
                pages_per_s: median_of(&runs, |r| r.pages_per_s),
                get_p50_ms,
                get_p95_ms: median_of(&runs, |r| r.get_p95_ms),
                get_p99_ms: median_of(&runs, |r| r.get_p99_ms),
                handshake_p50_ms: median_of(&runs, |r| r.handshake_p50_ms),
                get_overhead_ms,
            }
        })
        .collect()
}

/// Each run's pages answered with status 200, of the pages asked.
fn ok_per_run(runs: &[&ClientRun]) -> String {
    let asked = runs.first().map_or(0, |r| r.pages);
    if runs.iter().all(|r| r.pages == asked) {
        format!("{} of {asked}", per_run(runs, |r| r.ok.to_string()))
    } else {
        runs.iter()
            .map(|r| format!("{} of {}", r.ok, r.pages))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
