//! Record framing: `parse_datagram` on arbitrary bytes. Every record it returns must
//! lie inside the datagram, cover it exactly in order, and re-encode to its raw bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wtls::msgs::record::{parse_datagram, OwnedRecord, MAX_FRAGMENT};

fuzz_target!(|data: &[u8]| {
    let Ok(records) = parse_datagram(data) else {
        return;
    };
    assert!(!records.is_empty());
    let mut joined = Vec::with_capacity(data.len());
    for r in &records {
        assert!(r.fragment.len() <= MAX_FRAGMENT);
        assert_eq!(r.raw.len(), r.header.encoded_len() + r.fragment.len());
        assert_eq!(r.header.to_byte(), r.header_byte);
        let owned = OwnedRecord {
            header: r.header,
            fragment: r.fragment.to_vec(),
        };
        assert_eq!(
            owned.to_bytes(),
            r.raw,
            "record does not re-encode to itself"
        );
        joined.extend_from_slice(r.raw);
    }
    assert_eq!(joined, data, "records do not cover the datagram exactly");
});
