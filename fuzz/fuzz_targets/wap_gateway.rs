//! The WAP gateway's per-datagram path: the service of both WAP modes
//! (`WapService::on_datagram`, the entry point every port calls, WTLS removed) fed
//! datagrams from eight addresses while time advances, with a fake origin that answers
//! every fetch at once with a page of a fuzzer-chosen size, and the reflection ledger
//! charged as the ports charge it.
//!
//! Input: steps of one control octet (bits 0-2 the source address, bit 3 its port, bit 4
//! the mode, bits 5-7 how far time moves, in steps of 0.7 s), a two-octet length and the
//! datagram. Checks: nothing panics; every datagram goes to the address whose datagram
//! or request caused it; the tables stay within their (small) limits after every step;
//! once every WTP timer has run out, no transaction or reassembly is left.
#![no_main]

use std::net::{IpAddr, SocketAddr};

use libfuzzer_sys::fuzz_target;
use wtlsperf_drivers::wap_client::WspMode;
use wtlsperf_drivers::wap_gateway::reflection::{ReflectionGuard, ReflectionLimit};
use wtlsperf_drivers::wap_gateway::service::{
    Action, ReplyTo, SarLimits, ServiceLimits, WapService,
};
use wtlsperf_wap::wsp;
use wtlsperf_wap::wtp::{Now, Timers};

const LIMITS: ServiceLimits = ServiceLimits {
    max_transactions: 8,
    max_sessions: 4,
    max_per_client: 3,
    max_tid_peers: 8,
    sar: SarLimits {
        max_segments: 8,
        max_bytes: 2048,
        per_peer: 2,
        total: 4,
    },
};

/// The fake origin: a 200 of `size` octets for every request.
fn page(size: usize) -> wsp::Pdu {
    wsp::Pdu::Reply {
        status: wsp::Status::OK,
        content_type: wsp::ContentType::WMLC,
        headers: wsp::Headers::default(),
        body: vec![0x01; size],
    }
}

fn run(
    svc: &mut WapService,
    guard: &ReflectionGuard,
    source: SocketAddr,
    mut actions: Vec<Action>,
    size: usize,
    now: Now,
) {
    while let Some(action) = actions.pop() {
        match action {
            Action::Send { to, bytes } => {
                assert_eq!(to, source, "an answer to another address");
                guard.charge(to.ip(), bytes.len(), now.mono_ns);
            }
            Action::Fetch { reply_to, .. } => {
                let (ReplyTo::Connectionless { peer, .. } | ReplyTo::Transaction { peer, .. }) =
                    reply_to;
                assert_eq!(peer, source, "a request on behalf of another address");
                actions.extend(svc.on_reply(reply_to, page(size), now));
            }
            Action::Proven { peer } => {
                assert_eq!(peer, source);
                guard.prove(peer.ip(), now.mono_ns);
            }
        }
    }
}

fn check_bounds(svc: &WapService) {
    let s = svc.stats();
    assert!(s.transactions <= LIMITS.max_transactions, "{s:?}");
    assert!(s.sessions <= LIMITS.max_sessions, "{s:?}");
    assert!(s.reassemblies <= LIMITS.sar.total, "{s:?}");
    assert!(s.tid_peers <= LIMITS.max_tid_peers, "{s:?}");
}

fuzz_target!(|data: &[u8]| {
    let timers = Timers::default();
    let mut services = [
        WapService::with_limits(WspMode::Connectionless, timers, LIMITS),
        WapService::with_limits(WspMode::Connection, timers, LIMITS),
    ];
    let guard = ReflectionGuard::new(ReflectionLimit {
        addresses: 8,
        ..ReflectionLimit::default()
    });
    let mut now_ns = 0u64;
    let mut input = data;
    while input.len() >= 3 {
        let ctl = input[0];
        let len = usize::from(u16::from_be_bytes([input[1], input[2]])).min(input.len() - 3);
        let (datagram, rest) = input[3..].split_at(len);
        input = rest;
        let source = SocketAddr::new(
            IpAddr::from([127, 0, 0, (ctl & 7) + 1]),
            4000 + u16::from((ctl >> 3) & 1),
        );
        now_ns += u64::from(ctl >> 5) * 700_000_000;
        let now = Now::new(now_ns, 0);
        let svc = &mut services[usize::from((ctl >> 4) & 1)];
        guard.received(source.ip(), datagram.len(), now_ns);
        let actions = svc.on_datagram(source, datagram, now);
        run(svc, &guard, source, actions, usize::from(ctl) * 61, now);
        for s in &mut services {
            // Timers answer the transaction's own peer; the check above is per source,
            // so their datagrams are only charged here.
            for a in s.on_timeout(now) {
                if let Action::Send { to, bytes } = a {
                    guard.charge(to.ip(), bytes.len(), now_ns);
                }
            }
            check_bounds(s);
        }
    }
    // Ten minutes on, in steps of WTP's retry interval: every timer has run out.
    for _ in 0..100 {
        now_ns += timers.retry_interval_ns;
        for s in &mut services {
            let _ = s.on_timeout(Now::new(now_ns, 0));
        }
    }
    for s in &services {
        let st = s.stats();
        assert_eq!((st.transactions, st.reassemblies), (0, 0), "{st:?}");
    }
});
