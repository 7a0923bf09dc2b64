//! Device emulation over the real UDP gateway on loopback: the client's driver holds its
//! flights for an emulated device, whose steps add up to the device model's T_PD_C.
//! No timing assertions: what is checked is the accounting, which the clock cannot change.

use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_drivers::device::model_case;
use wtlsperf_drivers::gateway::{spawn_gateway, GatewayConfig};
use wtlsperf_drivers::pki_store::{unix_now, PkiStore};
use wtlsperf_drivers::protocols::model::wtls_steps;
use wtlsperf_drivers::setup::{self, ClientAuth, Options};
use wtlsperf_drivers::udp_client::{connect_client, probed_client};
use wtlsperf_models::device::{Cost, DeviceProfile, KeyType, Operation, Primitive, Source};

const CASES: [&str; 2] = ["rsa1024/rsa1024", "160p/160p"];

fn store() -> &'static PkiStore {
    static STORE: OnceLock<PkiStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir: PathBuf =
            std::env::temp_dir().join(format!("wtlsperf-device-{}", std::process::id()));
        let cases: Vec<Case> = CASES.iter().map(|c| Case::parse(c).unwrap()).collect();
        PkiStore::create(&dir, true, unix_now().unwrap(), &cases).unwrap()
    })
}

/// A made-up device a few milliseconds slow per operation, so the test stays short.
fn small_device() -> Arc<DeviceProfile> {
    let cost = |ms: f64| Cost {
        ms,
        source: Source::Measured {
            what: "test".into(),
        },
    };
    let mut operations = BTreeMap::new();
    for key in ["rsa1024", "160p"] {
        let key = KeyType::parse(key).unwrap();
        for primitive in Primitive::ALL
            .into_iter()
            .filter(|p| p.applies_to(key.family))
        {
            operations.insert(Operation { primitive, key }, cost(3.0));
        }
    }
    Arc::new(DeviceProfile {
        name: "test-device".into(),
        description: "test".into(),
        source: "test".into(),
        operations,
        per_message: Some(cost(0.5)),
        offers: Vec::new(),
        p256_stand_ins: true,
        ephemeral_key_precomputed: None,
    })
}

#[test]
fn an_emulated_client_accounts_exactly_its_device_time_in_real_handshakes() {
    let server =
        setup::gateway_server_config(store(), ClientAuth::Optional, &Options::default()).unwrap();
    let gw = spawn_gateway(GatewayConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(server),
    ))
    .unwrap();
    let device = small_device();
    for case in CASES {
        for auth in [AuthMode::ServerAuth, AuthMode::Mutual] {
            let case = Case::parse(case).unwrap();
            let creds = store().case(&case).unwrap();
            let mut cfg = setup::client_config(&creds, &Options::default(), false);
            // Nothing is lost on loopback: only a slow answer could cause a retransmission,
            // so none may happen however busy the machine (the count is asserted below).
            cfg.retransmit_timeout_ns = Duration::from_secs(120).as_nanos() as u64;
            let cfg = Arc::new(cfg);
            let model = model_case(case, auth).unwrap();
            let expected = device.client_processing_ms(model).unwrap();
            let steps = wtls_steps(case, model.auth, &device).unwrap();
            let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
            let deadline = Instant::now() + Duration::from_secs(120); // a hang guard
            let (run, _) = connect_client(
                &sock,
                gw.local_addr(),
                probed_client(cfg, auth, None),
                Some(&steps),
                None,
                deadline,
            )
            .unwrap();
            assert_eq!(run.retransmissions, 0, "{case} {}", auth.name());
            assert!(
                (steps.total_ms() - expected).abs() < 1e-9,
                "{case} {}: steps {} ms, model {} ms",
                auth.name(),
                steps.total_ms(),
                expected
            );
            // The hold is the device time less the real computation: never more.
            assert!(run.held.as_secs_f64() * 1e3 <= expected + 1e-6);
        }
    }
    gw.shutdown();
}
