//! `wtlsperf client --wsp-get URL` as a WAP 1.x browser: the page fetched over
//! connectionless WSP (a Get with a one-octet transaction id, ports 9200/9202) or over
//! connection-mode WSP inside WTP transactions (Connect, Get, Disconnect; ports
//! 9201/9203), through the WTLS channel or over bare UDP (`--no-wtls`), with the
//! headers such a browser sends (Accept: compiled WML first). A WMLC body is decompiled
//! and printed. With `--post FILE` the request is a WSP Post carrying the file; in
//! connection mode a body over one packet goes as a segmented invoke (WTP SAR).
//!
//! The protocol logic is the sans-IO `wtlsperf-wap` crate; this file moves datagrams and
//! maps the process clock to its virtual time.

use std::collections::VecDeque;
use std::io::Write as _;
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{anyhow, bail, Context};
use wtls::handshake::{Client, Event};
use wtlsperf_wap::wbxml::wml;
use wtlsperf_wap::wsp::{
    self, Capabilities, ContentType, GetMethod, Headers, PostMethod, Status, Version,
};
use wtlsperf_wap::wtp::{
    self, AbortReason, Direction, Initiator, Tid, Timers, TransactionClass, WtpBearer,
};

use crate::pcap::PcapWriter;
use crate::setup;

/// Largest datagram read.
const MAX_DATAGRAM: usize = 65_535;
/// The User-Agent the browser announces.
pub const USER_AGENT: &str = concat!("wtlsperf/", env!("CARGO_PKG_VERSION"));

/// Which WSP the browser speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WspMode {
    /// One Get and its Reply, no WTP (ports 9200 and 9202).
    Connectionless,
    /// Connect, Get and Disconnect as WTP transactions (ports 9201 and 9203).
    Connection,
}

/// A datagram path to the gateway: bare UDP, or application data through WTLS.
pub trait Pipe {
    fn send(&mut self, datagram: &[u8]) -> anyhow::Result<()>;
    /// The next datagram (for WTLS: the next application data) before `until`.
    fn recv(&mut self, until: Instant) -> anyhow::Result<Option<Vec<u8>>>;
    fn peer(&self) -> SocketAddr;
}

/// The socket side both pipes share: a connected socket, an optional capture.
pub struct Socket<'a> {
    sock: &'a UdpSocket,
    peer: SocketAddr,
    local: SocketAddr,
    pcap: Option<&'a mut PcapWriter>,
}

impl<'a> Socket<'a> {
    pub fn new(
        sock: &'a UdpSocket,
        peer: SocketAddr,
        pcap: Option<&'a mut PcapWriter>,
    ) -> anyhow::Result<Self> {
        let local = crate::udp_client::source_address(sock, peer)?;
        Ok(Socket {
            sock,
            peer,
            local,
            pcap,
        })
    }

    fn capture(&mut self, outgoing: bool, d: &[u8]) -> anyhow::Result<()> {
        let (Some(pcap), SocketAddr::V4(local), SocketAddr::V4(peer)) =
            (self.pcap.as_deref_mut(), self.local, self.peer)
        else {
            return Ok(());
        };
        let (src, dst) = if outgoing {
            (local, peer)
        } else {
            (peer, local)
        };
        pcap.write_udp(SystemTime::now(), src, dst, d)
            .context("--pcap")
    }

    fn send(&mut self, d: &[u8]) -> anyhow::Result<()> {
        self.capture(true, d)?;
        match self.sock.send_to(d, self.peer) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Err(refused(self.peer)),
            Err(e) => Err(e).with_context(|| format!("sending to {}", self.peer)),
        }
    }

    fn recv(&mut self, until: Instant) -> anyhow::Result<Option<Vec<u8>>> {
        let mut buf = vec![0u8; MAX_DATAGRAM];
        loop {
            let now = Instant::now();
            if now >= until {
                return Ok(None);
            }
            self.sock
                .set_read_timeout(Some((until - now).max(Duration::from_millis(1))))?;
            match self.sock.recv_from(&mut buf) {
                Ok((n, from)) if from == self.peer => {
                    self.capture(false, &buf[..n])?;
                    return Ok(Some(buf[..n].to_vec()));
                }
                Ok(_) => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Err(refused(self.peer))
                }
                Err(e) => return Err(e).context("receiving"),
            }
        }
    }
}

fn refused(peer: SocketAddr) -> anyhow::Error {
    anyhow!("{peer} refused the datagram (ECONNREFUSED): nothing listens on that UDP port")
}

/// WSP over bare UDP.
pub struct UdpPipe<'a>(pub Socket<'a>);

impl Pipe for UdpPipe<'_> {
    fn send(&mut self, d: &[u8]) -> anyhow::Result<()> {
        self.0.send(d)
    }
    fn recv(&mut self, until: Instant) -> anyhow::Result<Option<Vec<u8>>> {
        self.0.recv(until)
    }
    fn peer(&self) -> SocketAddr {
        self.0.peer
    }
}

/// WSP as WTLS application data.
pub struct WtlsPipe<'a> {
    pub socket: Socket<'a>,
    pub client: &'a mut Client,
    pending: VecDeque<Vec<u8>>,
}

impl<'a> WtlsPipe<'a> {
    pub fn new(socket: Socket<'a>, client: &'a mut Client) -> Self {
        WtlsPipe {
            socket,
            client,
            pending: VecDeque::new(),
        }
    }
}

impl Pipe for WtlsPipe<'_> {
    fn send(&mut self, d: &[u8]) -> anyhow::Result<()> {
        let sealed = self.client.seal_application_data(d)?;
        self.socket.send(&sealed)
    }

    fn recv(&mut self, until: Instant) -> anyhow::Result<Option<Vec<u8>>> {
        loop {
            if let Some(d) = self.pending.pop_front() {
                return Ok(Some(d));
            }
            let Some(record) = self.socket.recv(until)? else {
                return Ok(None);
            };
            let out = self.client.handle_datagram(&record, setup::now());
            for d in &out.datagrams {
                self.socket.send(d)?;
            }
            for e in out.events {
                match e {
                    Event::ApplicationData(d) => self.pending.push_back(d),
                    Event::AlertReceived(alert) => {
                        bail!("{} sent the alert {alert:?}", self.socket.peer)
                    }
                    _ => {}
                }
            }
            if self.client.is_closed() {
                bail!("{} closed the WTLS connection", self.socket.peer);
            }
        }
    }

    fn peer(&self) -> SocketAddr {
        self.socket.peer
    }
}

/// A fetched page.
#[derive(Debug, Clone)]
pub struct Page {
    pub status: Status,
    pub content_type: ContentType,
    pub headers: Headers,
    pub body: Vec<u8>,
    /// From the first request datagram to the Reply.
    pub elapsed: Duration,
    /// Connection mode: the session the gateway gave, and the Connect's round trip.
    pub session: Option<(u32, Duration)>,
}

/// Time limits of one fetch.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connectionless: resend the Get after this; connection mode: WTP's retry interval.
    pub retry: Duration,
    pub deadline: Instant,
}

/// What the browser asks of a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Get {
        uri: String,
    },
    /// A form or upload: the body and its media type.
    Post {
        uri: String,
        content_type: ContentType,
        body: Vec<u8>,
    },
}

impl Request {
    /// A Post of `body` as the media type `media` (its WSP number when well known).
    pub fn post(uri: String, media: &str, body: Vec<u8>) -> Request {
        Request::Post {
            uri,
            content_type: ContentType::from_name(media),
            body,
        }
    }

    pub fn uri(&self) -> &str {
        match self {
            Request::Get { uri } | Request::Post { uri, .. } => uri,
        }
    }

    /// `GET` or `POST`, as the client prints it.
    pub fn method(&self) -> &'static str {
        match self {
            Request::Get { .. } => "GET",
            Request::Post { .. } => "POST",
        }
    }

    fn pdu(&self) -> wsp::Pdu {
        match self {
            Request::Get { uri } => wsp::Pdu::Get {
                method: GetMethod::Get,
                uri: uri.clone(),
                headers: Headers::browser(USER_AGENT),
            },
            Request::Post {
                uri,
                content_type,
                body,
            } => wsp::Pdu::Post {
                method: PostMethod::Post,
                uri: uri.clone(),
                content_type: content_type.clone(),
                headers: Headers::browser(USER_AGENT),
                body: body.clone(),
            },
        }
    }
}

/// Largest connectionless request: one UDP datagram over IPv4, less WSP's TID octet.
/// Connectionless WSP has no segmentation; a larger body needs connection mode.
pub const MAX_CONNECTIONLESS_REQUEST: usize = 65_507;

/// Fetches `uri` in `mode`. `tid` is the connectionless transaction id, or the first
/// WTP TID in connection mode (three are used).
pub fn fetch(
    pipe: &mut dyn Pipe,
    mode: WspMode,
    uri: &str,
    tid: u16,
    limits: Limits,
) -> anyhow::Result<Page> {
    let get = Request::Get {
        uri: uri.to_owned(),
    };
    request(pipe, mode, &get, tid, limits)
}

/// Sends `req` in `mode` and returns the Reply, as [`fetch`] does for a Get.
pub fn request(
    pipe: &mut dyn Pipe,
    mode: WspMode,
    req: &Request,
    tid: u16,
    limits: Limits,
) -> anyhow::Result<Page> {
    match mode {
        WspMode::Connectionless => fetch_connectionless(pipe, req, tid as u8, limits),
        WspMode::Connection => fetch_in_session(pipe, req, Tid::new(tid), limits),
    }
}

fn fetch_connectionless(
    pipe: &mut dyn Pipe,
    req: &Request,
    tid: u8,
    limits: Limits,
) -> anyhow::Result<Page> {
    let peer = pipe.peer();
    let request = wsp::encode_connectionless(tid, &req.pdu());
    if request.len() > MAX_CONNECTIONLESS_REQUEST {
        bail!(
            "the WSP {} is {} octets, more than one datagram ({MAX_CONNECTIONLESS_REQUEST}): \
             connectionless WSP has no segmentation; use --wsp-mode connection",
            req.method(),
            request.len()
        );
    }
    let started = Instant::now();
    while Instant::now() < limits.deadline {
        pipe.send(&request)?;
        let until = (Instant::now() + limits.retry).min(limits.deadline);
        while let Some(back) = pipe.recv(until)? {
            if back == request {
                bail!(
                    "{peer} echoed the WSP {} back instead of answering it: it is an echo \
                     server (such as wtlsperf gateway without --wap), not a WAP gateway",
                    req.method()
                );
            }
            match wsp::decode_connectionless(&back) {
                Ok((t, pdu)) if t == tid => return page_of(pdu, started.elapsed(), None),
                Ok(_) => {} // an answer to an earlier request
                Err(e) => {
                    return Err(anyhow!(e).context(format!("{peer}'s answer is not a WSP Reply")))
                }
            }
        }
    }
    bail!("no WSP Reply from {peer} before the deadline")
}

fn page_of(
    pdu: wsp::Pdu,
    elapsed: Duration,
    session: Option<(u32, Duration)>,
) -> anyhow::Result<Page> {
    match pdu {
        wsp::Pdu::Reply {
            status,
            content_type,
            headers,
            body,
        } => Ok(Page {
            status,
            content_type,
            headers,
            body,
            elapsed,
            session,
        }),
        other => bail!("expected a WSP Reply, got a {:?} PDU", other.pdu_type()),
    }
}

fn fetch_in_session(
    pipe: &mut dyn Pipe,
    req: &Request,
    first: Tid,
    limits: Limits,
) -> anyhow::Result<Page> {
    // WAP-224 Appendix A's initiator values on an IP bearer, but R (the invoke's B_R)
    // from `--rto-ms`: the caller knows its link's round trip.
    let timers = Timers {
        retry_interval_ns: u64::try_from(limits.retry.as_nanos()).unwrap_or(u64::MAX),
        ..Timers::initiator(WtpBearer::Ip)
    };
    let connect = wsp::Pdu::Connect {
        version: Version::V1_0,
        capabilities: Capabilities {
            client_sdu_size: Some(MAX_DATAGRAM as u32),
            server_sdu_size: Some(MAX_DATAGRAM as u32),
            method_mor: Some(1),
            push_mor: Some(1),
            ..Capabilities::default()
        },
        headers: Headers::browser(USER_AGENT),
    };
    let started = Instant::now();
    let answer = transact(
        pipe,
        first,
        TransactionClass::Two,
        connect.encode(),
        timers,
        limits,
    )?;
    let session_id = match wsp::Pdu::decode(&answer).context("the answer to WSP Connect")? {
        wsp::Pdu::ConnectReply { session_id, .. } => session_id,
        other => bail!(
            "{} answered WSP Connect with a {:?} PDU, not ConnectReply",
            pipe.peer(),
            other.pdu_type()
        ),
    };
    let connected = started.elapsed();
    let get_started = Instant::now();
    let answer = transact(
        pipe,
        first.next(),
        TransactionClass::Two,
        req.pdu().encode(),
        timers,
        limits,
    )?;
    let reply =
        wsp::Pdu::decode(&answer).with_context(|| format!("the answer to WSP {}", req.method()))?;
    let page = page_of(reply, get_started.elapsed(), Some((session_id, connected)))?;
    let disconnect = wsp::Pdu::Disconnect { session_id }.encode();
    transact(
        pipe,
        first.next().next(),
        TransactionClass::Zero,
        disconnect,
        timers,
        limits,
    )?;
    Ok(page)
}

/// The process clock as WTP's virtual time.
fn wtp_now() -> wtp::Now {
    let now = setup::now();
    wtp::Now::new(now.mono_ns, now.unix_secs)
}

/// Runs one WTP transaction as initiator; returns the result (empty for classes 0, 1).
fn transact(
    pipe: &mut dyn Pipe,
    tid: Tid,
    class: TransactionClass,
    data: Vec<u8>,
    timers: Timers,
    limits: Limits,
) -> anyhow::Result<Vec<u8>> {
    let peer = pipe.peer();
    let (mut initiator, out) =
        Initiator::start(tid, class, data, timers, wtp_now()).map_err(|e| anyhow!("WTP: {e}"))?;
    let mut result = Vec::new();
    let apply =
        |out: wtp::Output, pipe: &mut dyn Pipe, result: &mut Vec<u8>| -> anyhow::Result<bool> {
            for d in &out.send {
                pipe.send(d)?;
            }
            for e in out.events {
                match e {
                    wtp::Event::Result(d) => *result = d,
                    wtp::Event::Completed => return Ok(true),
                    wtp::Event::Aborted { reason, by_peer } => bail!(
                        "WTP transaction {} aborted {}: {}",
                        tid.value(),
                        if by_peer {
                            format!("by {peer}")
                        } else {
                            "locally".into()
                        },
                        describe_abort(reason)
                    ),
                    _ => {}
                }
            }
            Ok(false)
        };
    if apply(out, pipe, &mut result)? {
        return Ok(result);
    }
    loop {
        let now_ns = wtp_now().mono_ns;
        let timer = initiator
            .deadline()
            .map(|t| Instant::now() + Duration::from_nanos(t.saturating_sub(now_ns)));
        let until = timer.map_or(limits.deadline, |t| t.min(limits.deadline));
        match pipe.recv(until)? {
            Some(datagram) => {
                // A datagram that is not WTP, or not this transaction's, is not ours.
                let Ok(pdus) = wtp::decode_datagram(&datagram) else {
                    continue;
                };
                for pdu in pdus {
                    if pdu.tid != tid || pdu.direction != Direction::FromResponder {
                        continue;
                    }
                    let out = initiator.handle(&pdu, wtp_now());
                    if apply(out, pipe, &mut result)? {
                        return Ok(result);
                    }
                }
            }
            None if Instant::now() >= limits.deadline => bail!(
                "WTP transaction {} with {peer} did not finish before the deadline \
                 ({} retransmissions)",
                tid.value(),
                initiator.retransmissions()
            ),
            None => {
                let out = initiator.on_timeout(wtp_now());
                if apply(out, pipe, &mut result)? {
                    return Ok(result);
                }
            }
        }
    }
}

fn describe_abort(reason: AbortReason) -> String {
    match reason {
        AbortReason::Provider(r) => format!("WTP provider reason {r:?}"),
        AbortReason::User(octet) => match wsp::AbortReason::from_octet(octet) {
            Some(r) => format!("WSP reason {r:?}"),
            None => format!("user reason 0x{octet:02x}"),
        },
    }
}

/// Prints a fetched page: the summary line, then the WML (decompiled when compiled).
pub fn print_page(uri: &str, page: &Page) {
    print_reply(
        &Request::Get {
            uri: uri.to_owned(),
        },
        page,
    );
}

/// Prints the Reply to a request: the summary line (with the body sent, for a Post),
/// then the WML (decompiled when compiled) or a text body.
pub fn print_reply(req: &Request, page: &Page) {
    if let Some((session, connect)) = page.session {
        println!(
            "  WSP Connect: session 0x{session:x} in {:.3} ms",
            connect.as_secs_f64() * 1e3
        );
    }
    let sent = match req {
        Request::Get { .. } => String::new(),
        Request::Post {
            content_type, body, ..
        } => format!(" ({} B of {content_type} sent)", body.len()),
    };
    println!(
        "  WSP {} {}{sent}: status {}, content type {}, {} B body, in {:.3} ms",
        req.method(),
        req.uri(),
        page.status,
        page.content_type,
        page.body.len(),
        page.elapsed.as_secs_f64() * 1e3
    );
    if page.content_type.same_as(&ContentType::WMLC) {
        match wml::decompile(&page.body) {
            Ok(text) => print!("{text}"),
            Err(e) => println!("  (the WMLC does not decode: {e})"),
        }
    } else if page.content_type.same_as(&ContentType::WML)
        || page.content_type.to_string().starts_with("text/")
    {
        println!("{}", String::from_utf8_lossy(&page.body));
    }
}

/// Appends the key-log line of an established client to `path` (created 0600: it holds
/// a secret).
pub fn write_keylog(path: &Path, client: &Client) -> anyhow::Result<()> {
    let (random, master) = client
        .key_log_entry()
        .ok_or_else(|| anyhow!("--keylog: the handshake agreed no master secret"))?;
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(path)
        .with_context(|| format!("--keylog {}", path.display()))?;
    writeln!(
        file,
        "CLIENT_RANDOM {} {}",
        hex::encode(random),
        hex::encode(master.as_slice())
    )
    .with_context(|| format!("--keylog {}", path.display()))
}
