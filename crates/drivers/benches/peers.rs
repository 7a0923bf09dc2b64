//! Peer performance anchors beside our gateway (docs/results.md, "WTLS beside its successors"): OpenSSL's TLS 1.2 (ECDHE-ECDSA
//! P-256 and RSA-2048 key transport) and DTLS 1.2 servers and rustls' TLS 1.2 and 1.3
//! (ECDHE-ECDSA P-256), each one's bound ratio (median server thread CPU per handshake
//! over the median of the same library's raw public-key operations of one handshake)
//! beside our WTLS gateway's for 256p/256p and rsa2048/rsa2048, server-authenticated.
//!
//! In memory, one process, one thread per handshake pair; every anchor and our gateway
//! take turns in ten interleaved blocks so that drift in the machine's speed hits all
//! alike, and each handshake is followed by its raw operations. 3000 handshakes each by
//! default (`PEERS_REPS` overrides). The PKI for the WTLS cases is created in a
//! temporary directory.
//!
//! Run: `cargo bench -p wtlsperf-drivers --bench peers`.

use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::protocols::compare::anchors_beside_ours;

fn main() -> anyhow::Result<()> {
    let reps: usize = std::env::var("PEERS_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let dir = tempfile::tempdir()?;
    let store = PkiStore::load_or_init(&dir.path().join("pki"))?;
    println!(
        "{:<28} {:>6} {:>11} {:>9} {:>7}   {:<16} {:>7}",
        "anchor", "reps", "server_us", "raw_us", "bound", "ours", "bound"
    );
    for (p, ours) in anchors_beside_ours(&store, reps, 50)? {
        println!(
            "{:<28} {:>6} {:>11.1} {:>9.1} {:>7.2}   {:<16} {:>7}",
            p.peer.key(),
            p.reps,
            p.server_cpu_us,
            p.raw_pk_us,
            p.bound_ratio(),
            p.peer.wtls_counterpart(),
            ours.map_or("-".into(), |b| format!("{b:.2}"))
        );
    }
    Ok(())
}
