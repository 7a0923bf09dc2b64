//! What a WAP user waited for, measured: WTLS handshakes and first pages fetched through
//! the WAP gateway's secure ports from a loopback origin ([`LabOrigin`]), each run
//! through its own bearer relay. A page comes connectionless (one Get and its Reply) or
//! in connection mode over WTP (Connect, then Get; WTP's acknowledgements really on the
//! link), and in connection mode decks of a given size too (the Reply segmented by WTP
//! SAR). The evaluation plans the runs and summarises them beside its models.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_bearer::{LinkProfile, RelayOptions};
use wtlsperf_wap::wtp::Timers;

use crate::pki_store::PkiStore;
use crate::registry::wtls::{bearer_retransmit_timeout, wtls_bearer_config};
use crate::relay_run::through_relay;
use crate::setup::{gateway_server_config, ClientAuth, Options};
use crate::wap_client::{self, Limits, Socket, WspMode, WtlsPipe};
use crate::wap_gateway::{self, lab_origin::LabOrigin, WapGatewayConfig, WapJob, ROLES};

/// What one run does after the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// Nothing: the handshake alone.
    Handshake,
    /// One connectionless Get (port 9202's role).
    Connectionless,
    /// Connect and Get as WTP transactions (port 9203's role).
    Connection,
}

impl Fetch {
    pub const ALL: [Fetch; 3] = [Fetch::Handshake, Fetch::Connectionless, Fetch::Connection];

    pub fn name(self) -> &'static str {
        match self {
            Fetch::Handshake => "handshake",
            Fetch::Connectionless => "connectionless",
            Fetch::Connection => "connection",
        }
    }
}

/// Datagrams and bytes one run put on the link, per direction, as the relay counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkTally {
    pub up_datagrams: u64,
    pub down_datagrams: u64,
    pub up_bytes: u64,
    pub down_bytes: u64,
}

/// One run to make: a case and fetch, and for the deck series the deck's size (KiB of
/// WML at the origin).
#[derive(Debug, Clone, Copy)]
pub struct PageJob {
    pub case: Case,
    pub fetch: Fetch,
    pub deck_kb: Option<usize>,
}

/// One measured run.
#[derive(Debug, Clone)]
pub struct PageRun {
    /// From the first ClientHello to the handshake's end or the page's last byte (ms).
    pub ms: f64,
    /// Datagrams and bytes on the link, both ways, and per direction.
    pub datagrams: u64,
    pub bytes: u64,
    pub link: LinkTally,
    /// The page's body as delivered (WMLC), 0 for the handshake alone.
    pub body_bytes: usize,
    /// The page alone, after the handshake: from the first WSP datagram to the Reply's
    /// last byte (ms), and what it put on the link.
    pub page_ms: f64,
    pub page_link: LinkTally,
}

/// One bearer's share of a plan: its link and the runs to make over it.
#[derive(Debug, Clone)]
pub struct PageBatch {
    pub link: LinkProfile,
    pub work: Vec<PageJob>,
}

/// What a plan measured: each batch's runs in its work's order, and the gateway's jobs
/// over the whole plan.
#[derive(Debug)]
pub struct PageLoads {
    pub runs: Vec<Vec<anyhow::Result<PageRun>>>,
    pub gateway_jobs: Vec<WapJob>,
}

/// Runs every batch against one in-process WAP gateway (its secure ports) and origin,
/// the batches one after the other and each batch's runs at once, each on its own relay;
/// `deck_kbs` are the deck sizes the origin serves for the jobs that name one. `before`
/// is told of each batch as it starts, for progress.
pub fn measure(
    store: &PkiStore,
    batches: &[PageBatch],
    deck_kbs: &[usize],
    auth: AuthMode,
    mut before: impl FnMut(&PageBatch),
) -> anyhow::Result<PageLoads> {
    let origin = LabOrigin::start().context("starting the lab origin")?;
    let server = gateway_server_config(store, ClientAuth::Optional, &Options::default())?;
    let gateway = wap_gateway::spawn(WapGatewayConfig {
        ip: "127.0.0.1".parse()?,
        base_port: 0,
        roles: ROLES.iter().filter(|r| r.secure).copied().collect(),
        server: Arc::new(server),
        origin_timeout: Duration::from_secs(30),
        timers: Timers::default(),
        // The secure ports only: every client proves its address by its handshake.
        limits: wap_gateway::WapLimits::default(),
        access_log: None,
        port_timers: Vec::new(),
    })?;
    let targets = Targets {
        connectionless: gateway
            .addr(WspMode::Connectionless, true)
            .context("the gateway's connectionless WTLS port")?,
        connection: gateway
            .addr(WspMode::Connection, true)
            .context("the gateway's connection-mode WTLS port")?,
        url: origin.url(),
        sized: deck_kbs
            .iter()
            .map(|kb| (*kb, origin.sized_url(*kb)))
            .collect(),
    };
    let mut runs = Vec::new();
    for batch in batches {
        before(batch);
        runs.push(run_all(store, &targets, &batch.link, auth, &batch.work));
    }
    let gateway_jobs = gateway.take_jobs();
    drop(gateway);
    Ok(PageLoads { runs, gateway_jobs })
}

/// Where the runs go.
struct Targets {
    connectionless: SocketAddr,
    connection: SocketAddr,
    url: String,
    /// The sized decks' URLs by size (KiB).
    sized: Vec<(usize, String)>,
}

impl Targets {
    fn url_of(&self, job: &PageJob) -> anyhow::Result<&str> {
        match job.deck_kb {
            None => Ok(&self.url),
            Some(kb) => self
                .sized
                .iter()
                .find(|(k, _)| *k == kb)
                .map(|(_, u)| u.as_str())
                .with_context(|| format!("no URL for the {kb} KB deck")),
        }
    }
}

fn run_all(
    store: &PkiStore,
    targets: &Targets,
    link: &LinkProfile,
    auth: AuthMode,
    work: &[PageJob],
) -> Vec<anyhow::Result<PageRun>> {
    // Many at once: each run mostly waits on its emulated link.
    crate::pool::run_concurrently(work, 48, |i, job| {
        one_run(store, targets, link.clone(), job, auth, 31 + i as u64)
    })
}

/// One handshake (and page) through a fresh relay.
fn one_run(
    store: &PkiStore,
    targets: &Targets,
    link: LinkProfile,
    job: &PageJob,
    auth: AuthMode,
    seed: u64,
) -> anyhow::Result<PageRun> {
    let (case, fetch) = (job.case, job.fetch);
    let url = targets.url_of(job)?;
    let creds = store.case(&case)?;
    let cfg = wtls_bearer_config(&creds, &link);
    let rto = bearer_retransmit_timeout(&link);
    let upstream = match fetch {
        Fetch::Connection => targets.connection,
        _ => targets.connectionless,
    };
    let deadline = Instant::now() + rto * 70;
    let fetched = through_relay(
        upstream,
        &link,
        seed,
        RelayOptions::default(),
        |sock, peer| {
            let (run, mut client) =
                crate::udp_client::connect(sock, peer, Arc::new(cfg), auth, None, None, deadline)?;
            // What the handshake put on the link, as the client counted it (the
            // emulated bearers lose nothing): the rest of the relay's counts is the page's.
            let handshake = LinkTally {
                up_datagrams: run.datagrams_sent,
                down_datagrams: run.datagrams_received,
                up_bytes: run.bytes_sent,
                down_bytes: run.bytes_received,
            };
            let mode = match fetch {
                Fetch::Handshake => return Ok((run.duration, Duration::ZERO, 0, handshake)),
                Fetch::Connectionless => WspMode::Connectionless,
                Fetch::Connection => WspMode::Connection,
            };
            let started = Instant::now();
            let mut pipe = WtlsPipe::new(Socket::new(sock, peer, None)?, &mut client);
            let limits = Limits {
                retry: rto,
                deadline,
            };
            let page = wap_client::fetch(&mut pipe, mode, url, 1, limits)?;
            let page_time = started.elapsed();
            anyhow::ensure!(
                page.status.http() == Some(200),
                "the page came back {}",
                page.status
            );
            Ok((run.duration, page_time, page.body.len(), handshake))
        },
    );
    let ((handshake, page_time, body_bytes, until_page), stats) =
        fetched.with_context(|| format!("{case} {} of {url} over {}", fetch.name(), link.name))?;
    let all = LinkTally {
        up_datagrams: stats.up.datagrams_in,
        down_datagrams: stats.down.datagrams_in,
        up_bytes: stats.up.bytes_in,
        down_bytes: stats.down.bytes_in,
    };
    Ok(PageRun {
        ms: (handshake + page_time).as_secs_f64() * 1e3,
        datagrams: stats.up.datagrams_in + stats.down.datagrams_in,
        bytes: stats.up.bytes_in + stats.down.bytes_in,
        link: all,
        body_bytes,
        page_ms: page_time.as_secs_f64() * 1e3,
        page_link: LinkTally {
            up_datagrams: all.up_datagrams.saturating_sub(until_page.up_datagrams),
            down_datagrams: all.down_datagrams.saturating_sub(until_page.down_datagrams),
            up_bytes: all.up_bytes.saturating_sub(until_page.up_bytes),
            down_bytes: all.down_bytes.saturating_sub(until_page.down_bytes),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_are_named_as_the_csv_writes_them() {
        assert_eq!(
            Fetch::ALL.map(Fetch::name),
            ["handshake", "connectionless", "connection"]
        );
    }
}
