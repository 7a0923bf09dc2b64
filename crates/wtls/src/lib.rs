//! WAP WTLS 1.0, sans-IO: the wire codec, the public-key and bulk crypto of every suite
//! the studies measured, WTLS certificates, record protection and the handshake state
//! machines. Nothing in this crate opens a socket or reads a clock; time is passed in.

pub mod codec;
pub mod crypto;
pub mod endpoint;
pub mod fixtures;
pub mod handshake;
pub mod keyed_map;
pub mod msgs;
pub mod params;
pub mod pki;
pub mod probe;
pub mod record;
pub mod suite;
#[cfg(feature = "testing")]
pub mod testing;
