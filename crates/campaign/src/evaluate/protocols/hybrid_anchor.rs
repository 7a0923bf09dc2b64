//! The post-quantum peer anchor of the protocols comparison: what rustls' hybrid
//! TLS 1.3 handshake costs its server and puts on the wire, beside our DTLS 1.3 rows.

use serde::Serialize;

/// `summary.json`'s and the peer table's name of the post-quantum peer anchor.
pub const HYBRID_ANCHOR_KEY: &str = "rustls_tls13_x25519mlkem768_aws_lc_rs";

/// The post-quantum peer anchor (`protocols/peer_hybrid.rs`): rustls TLS 1.3 with
/// X25519MLKEM768 through aws-lc-rs, and the hybrid key shares on the wire beside
/// wolfSSL's DTLS 1.3 ones.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HybridAnchorFigures {
    pub reps: usize,
    pub server_cpu_us: f64,
    pub raw_us: f64,
    /// rustls' ClientHello and ServerHello key_exchange bytes.
    pub client_share_bytes: usize,
    pub server_share_bytes: usize,
    /// wolfSSL's DTLS 1.3 hybrid key shares, the same group.
    pub dtls13_client_share_bytes: usize,
    pub dtls13_server_share_bytes: usize,
}

impl HybridAnchorFigures {
    /// Server CPU over its raw public-key work (aws-lc-rs).
    pub fn bound_ratio(&self) -> f64 {
        self.server_cpu_us / self.raw_us
    }

    /// The anchor measured, in a build that has it (`None` otherwise).
    pub(super) fn measure(reps: usize) -> Option<anyhow::Result<HybridAnchorFigures>> {
        let measured = wtlsperf_drivers::protocols::post_quantum_anchor(reps, (reps / 10).max(2))?;
        Some(measured.map(|(a, (c, s))| HybridAnchorFigures {
            reps: a.reps,
            server_cpu_us: a.server_cpu_us,
            raw_us: a.raw_us,
            client_share_bytes: a.client_share_bytes,
            server_share_bytes: a.server_share_bytes,
            dtls13_client_share_bytes: c,
            dtls13_server_share_bytes: s,
        }))
    }
}
