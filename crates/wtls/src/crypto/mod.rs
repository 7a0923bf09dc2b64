//! Cryptography of the WTLS suites: public-key operations through OpenSSL, the WTLS PRF
//! and key derivation, the bulk ciphers and the record MACs.

pub mod cipher;
pub mod keys;
pub mod mac;
pub mod pk;
pub mod prf;
pub mod random;
pub mod sha1;
