//! DTLS 1.2 and EDHOC in the recommendation table: beside each device's fastest WTLS
//! case of a security category, the fastest modern suite the device can run at that
//! level, under the same model T_H = T_PD_C (the device's price of the suite's client
//! operations, [`wtlsperf_drivers::protocols::model`]) + T_PD_S (the server's CPU, measured in
//! memory now) + T_TD (Eq. 3.84 over the suite's own flights). P-256 and 128-bit PSK
//! are category 3's level, so only category 3 rows get a modern candidate.

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::device::{DeviceProfile, KeyType};
use wtlsperf_models::transmission::Flight;
use wtlsperf_models::Authentication;

use super::super::protocols::Estimate;
use super::super::recommendation::{ModernCandidate, Recommendation};
use crate::evaluate::vocabulary::{BearerName, DeviceName};
use wtlsperf_drivers::protocols::{measure_suite, model, Suite};

/// The security category of the modern suites.
const MODERN_CATEGORY: u8 = 3;

/// Each modern suite's flights and server CPU per handshake, measured in memory.
pub struct ModernBench {
    suites: Vec<(Suite, Vec<Flight>, f64)>,
}

impl ModernBench {
    /// Measures every suite `reps` times (after a few unmeasured handshakes).
    pub fn measure(reps: usize) -> anyhow::Result<ModernBench> {
        let mut suites = Vec::new();
        for suite in Suite::ALL {
            let m = measure_suite(suite, reps.max(1), reps.min(5))?;
            suites.push((suite, m.shape.flights(), m.server_cpu_us / 1e3));
        }
        Ok(ModernBench { suites })
    }

    /// The fastest suite of `auth` the device runs over `bearer`, by model T_H.
    fn best(
        &self,
        device: &DeviceProfile,
        bearer: &LinkProfile,
        auth: Authentication,
    ) -> Option<ModernCandidate> {
        let p256 = device.offers.is_empty() || device.offers.contains(&KeyType::P256);
        self.suites
            .iter()
            .filter(|(s, _, _)| s.mutual() == (auth == Authentication::Mutual))
            .filter(|(s, _, _)| p256 || s.pk_ops(true).is_empty())
            .filter_map(|(s, flights, server_ms)| {
                let client_ms = model::client_ms(*s, device).ok()?;
                let protocol = s.protocol();
                Some(ModernCandidate {
                    protocol,
                    suite: s.name().to_owned(),
                    th_ms: model::duration_ms(flights, bearer, client_ms, *server_ms),
                    forward_secrecy: s.forward_secrecy(),
                    estimate: Estimate::of(device, |p| model::client_ms(*s, p).ok()),
                })
            })
            .min_by(|a, b| a.th_ms.total_cmp(&b.th_ms))
    }

    /// Sets the modern candidate of every category-3 row.
    pub fn add_to<'a>(
        &self,
        rows: &mut [Recommendation],
        devices: &[DeviceProfile],
        bearers: impl Iterator<Item = &'a LinkProfile> + Clone,
    ) {
        for r in rows.iter_mut().filter(|r| r.category == MODERN_CATEGORY) {
            let Some(device) = devices.iter().find(|d| DeviceName::of(d) == r.device) else {
                continue;
            };
            let Some(bearer) = bearers.clone().find(|b| BearerName::of(b) == r.bearer) else {
                continue;
            };
            r.best_modern = self.best(device, bearer, r.auth);
        }
    }
}
