//! The generator's clients: their configuration with the caches that keep client work
//! small (see the `load` module notes), precomputed key shares, and their sockets.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use mio::net::UdpSocket;
use mio::{Interest, Poll, Token};
use wtls::crypto::pk::{EphemeralPool, KeyPair, PeerKey};
use wtls::handshake::{AuthMode, ClientConfig};
use wtls::keyed_map::KeyedMap;
use wtls::msgs::common::EcPublicKey;
use wtls::suite::Case;
use zeroize::Zeroizing;

use super::LoadSpec;
use crate::pki_store::PkiStore;
use crate::setup::{self, Options};

/// Ephemeral key pairs kept in reserve where the key shares are precomputed.
const SHARE_RESERVE: usize = 64;

/// The client configuration with the caches of the module documentation, and the
/// ephemeral key pool its refill thread tops up.
pub(super) fn cheap_client_config(
    store: &PkiStore,
    spec: &LoadSpec,
    case: Case,
    auth: AuthMode,
    pool_target: usize,
) -> anyhow::Result<(Arc<ClientConfig>, Option<Arc<EphemeralPool>>)> {
    let creds = store.case(&case)?;
    let options = Options {
        packing: spec.packing,
        ..Options::default()
    };
    let mut cfg = setup::client_config(&creds, &options, false);
    cfg.retransmit_timeout_ns = spec.retransmit_timeout.as_nanos() as u64;
    cfg.verified_server_cache = Some(Arc::new(Mutex::new(KeyedMap::default())));
    let mut pool = None;
    if !case.leaf.is_rsa() && auth == AuthMode::ServerAuth {
        // The whole ECDH of a server-authenticated handshake, done before the clock
        // starts: the server's certified key is known, so each precomputed ephemeral key
        // comes with its shared secret and the client does no public-key work in the run.
        let server_key = wtls::pki::certificate_key(&creds.server_cert, creds.numbering)?;
        let shares = Arc::new(precompute_shares(&server_key, pool_target)?);
        let expected = server_key.clone();
        cfg.key_share_source = Some(Arc::new(move |key: &PeerKey| {
            if *key != expected {
                return None;
            }
            shares.lock().expect("key shares").pop().map(Ok)
        }));
    }
    if !case.leaf.is_rsa() {
        // With precomputed key shares the pool is only the reserve for a run that
        // outlasts them: filling it to the full target would double the setup time
        // (50 000 K-283 key pairs take about 15 s on one core).
        let size = if cfg.key_share_source.is_some() {
            pool_target.min(SHARE_RESERVE)
        } else {
            pool_target
        };
        let p = Arc::new(EphemeralPool::new(case.leaf, size)?);
        let source = p.clone();
        cfg.ephemeral_source = Some(Arc::new(move |s| {
            if s == source.spec() {
                source.take()
            } else {
                KeyPair::generate(s)
            }
        }));
        pool = Some(p);
    }
    Ok((Arc::new(cfg), pool))
}

/// Gives the calling thread its CPU affinity back when the run ends, however it ends.
pub(super) struct RestoreAffinity(pub(super) Option<libc::cpu_set_t>);

impl Drop for RestoreAffinity {
    fn drop(&mut self) {
        if let Some(previous) = &self.0 {
            setup::restore_affinity(previous);
        }
    }
}

/// A precomputed ECDH key share: the ephemeral point and its secret with the server key.
type KeyShare = (EcPublicKey, Zeroizing<Vec<u8>>);

/// `n` key shares for `server_key`, computed on both cores.
fn precompute_shares(server_key: &PeerKey, n: usize) -> anyhow::Result<Mutex<Vec<KeyShare>>> {
    let spec = server_key.spec();
    let threads = 2;
    let parts: Vec<anyhow::Result<Vec<KeyShare>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let count = n / threads + usize::from(t < n % threads);
                scope.spawn(move || {
                    let mut out = Vec::with_capacity(count);
                    for _ in 0..count {
                        let eph = KeyPair::generate(spec)?;
                        let shared = wtls::crypto::pk::ecdh(&eph, server_key)?;
                        let point = match eph.public_wire()? {
                            wtls::msgs::certificate::PublicKey::Ec(p) => p,
                            wtls::msgs::certificate::PublicKey::Rsa(_) => {
                                anyhow::bail!("an EC key pair has an EC public key")
                            }
                        };
                        out.push((point, shared));
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("key share thread panicked")))
            })
            .collect()
    });
    let mut all = Vec::with_capacity(n);
    for part in parts {
        all.extend(part?);
    }
    Ok(Mutex::new(all))
}

/// Binds the `k`-th client socket, connects it to the gateway and registers it as
/// token `k`.
pub(super) fn open_client_socket(
    poll: &Poll,
    k: usize,
    target: SocketAddr,
) -> std::io::Result<UdpSocket> {
    let mut sock = UdpSocket::bind(SocketAddr::new(client_ip(k as u64), 0))
        .or_else(|_| UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0))))?;
    sock.connect(target)?;
    poll.registry()
        .register(&mut sock, Token(k), Interest::READABLE)?;
    Ok(sock)
}

/// Raises the soft descriptor limit to the hard one; returns the soft limit now.
pub(super) fn raise_fd_limit() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the rlimit struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    usize::try_from(lim.rlim_cur)
        .unwrap_or(usize::MAX)
        .min(1 << 20)
}

/// The `k`-th client address: 127.0.0.2 .. 127.0.0.254 in turn (any 127/8 address is
/// local on Linux), so source addresses differ in more than the port.
fn client_ip(k: u64) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + (k % 253) as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_addresses_stay_in_loopback() {
        for k in [0u64, 1, 252, 253, 10_000] {
            match client_ip(k) {
                IpAddr::V4(a) => assert!(a.is_loopback() && a.octets()[3] >= 2),
                IpAddr::V6(_) => panic!("v6"),
            }
        }
    }
}
