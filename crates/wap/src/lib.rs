//! The WAP 1.x stack that sits on a WTLS channel (or on bare UDP on the unsecured
//! ports): transactions, sessions and compiled content.
//!
//! - [`wtp`]: the Wireless Transaction Protocol (WAP-224): PDUs with every field typed,
//!   and the initiator and responder state machines of classes 0, 1 and 2, driven in
//!   virtual time ([`wtlsperf_spine::Now`]) like the handshake engines.
//! - [`wsp`]: the Wireless Session Protocol (WAP-230): the PDUs of both modes and the
//!   binary header encoding with its well-known tables.
//! - [`wbxml`]: WML compiled to WBXML (WAP-192, WML 1.x token tables) and decompiled back.
//!
//! Nothing here does I/O or reads a clock: the drivers in the `wtlsperf` crate move the
//! bytes and the time. Every decoder takes untrusted bytes and answers with a value or a
//! precise error; none panics.

pub mod codec;
pub mod wbxml;
pub mod wsp;
pub mod wtp;

pub use codec::DecodeError;
