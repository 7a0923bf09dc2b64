//! wtlsperf: everything with I/O around the sans-IO `wtls` crate.

pub mod pcap;
pub mod pki_store;
