//! Alerts and ChangeCipherSpec bodies, and the alert checksum over arbitrary records.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wtls::codec::Codec;
use wtls::msgs::alert::{alert_checksum, Alert, ChangeCipherSpec};

fuzz_target!(|data: &[u8]| {
    if let Ok(alert) = Alert::read_exact(data, "Alert") {
        assert_eq!(alert.to_bytes(), data);
        assert_eq!(data.len(), Alert::LEN);
    }
    if ChangeCipherSpec::read_exact(data, "ChangeCipherSpec").is_ok() {
        assert_eq!(data, [ChangeCipherSpec::VALUE]);
    }
    let c = alert_checksum(data);
    let a = Alert {
        level: wtls::msgs::enums::AlertLevel::Fatal,
        description: wtls::msgs::enums::AlertDescription::DecodeError,
        checksum: c,
    };
    assert!(a.checksum_matches(data));
});
