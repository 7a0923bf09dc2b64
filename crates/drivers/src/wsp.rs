//! WSP (WAP-230) for the command-line tools: the codec is the sans-IO `wtlsperf-wap`
//! crate's; this module names it where the client, the gateway and the tests use it.

pub use wtlsperf_wap::wsp::*;
