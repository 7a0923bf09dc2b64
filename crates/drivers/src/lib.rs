//! wtlsperf's drivers: everything with I/O around the sans-IO `wtls` crate that the
//! commands and the evaluation campaign share: the PKI on disk, the in-memory handshake
//! runner, the UDP gateway and client, the bearer relay, the open-loop load generator,
//! the flood test, the WAP client and gateway and the other protocols' adapters.

pub mod auth;
pub mod bearer_runs;
pub mod client_offer;
pub mod counts;
pub mod device;
pub mod device_runs;
pub mod flood;
pub mod gateway;
pub mod load;
pub mod page_load;
pub mod pcap;
pub mod pki_store;
pub mod pool;
pub mod protocols;
pub mod record_bench;
pub mod registry;
pub mod relay_run;
pub mod runner;
pub mod session_store;
pub mod setup;
pub mod signtext;
pub mod udp_client;
pub mod wap_client;
pub mod wap_gateway;
pub mod wire_log;
pub mod wsp;
