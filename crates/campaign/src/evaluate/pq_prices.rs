//! The post-quantum operation costs a device profile prices a handshake with: the
//! published ones of `data/devices/operations.csv` (pqm4 on the Cortex-M4 profile), and
//! for the `*-executed` profiles the costs this project executed on their
//! instruction-level core model (`data/devices/executed.csv`, PQClean), which replace
//! that file's "not available" for the same device and operation. Without them the
//! executed profiles, whose ML-KEM costs the device part lists, would drop out of every
//! post-quantum row as if nothing were known of them. Nothing is extrapolated: a device
//! with neither stays "not available".

use wtlsperf_models::device::executed::{post_quantum_costs, ExecutedOperation};
use wtlsperf_models::device::published_pq::{published_pq_costs, PublishedPqCost};

/// What the implementation column says of an executed cost.
pub const EXECUTED_IMPLEMENTATION: &str = "PQClean clean (executed)";

/// Every post-quantum cost the profiles use: published, and executed where a profile
/// was executed (each executed cost is the one its profile uses).
pub fn pq_prices() -> Vec<PublishedPqCost> {
    let mut out = published_pq_costs().unwrap_or_default();
    for e in post_quantum_costs().unwrap_or_default() {
        let ExecutedOperation::PostQuantum(primitive, scheme) = e.operation else {
            continue;
        };
        out.retain(|c| !(c.device == e.device && c.primitive == primitive && c.scheme == scheme));
        out.push(PublishedPqCost {
            device: e.device,
            primitive,
            scheme,
            implementation: EXECUTED_IMPLEMENTATION.to_owned(),
            cost: Some(e.cost),
            not_available: String::new(),
            used_by_profile: true,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtlsperf_models::device::executed::{PqPrimitive, PqScheme};
    use wtlsperf_models::device::published_pq::profile_cost;

    #[test]
    fn an_executed_profile_is_priced_by_its_executed_ml_kem_costs() {
        let prices = pq_prices();
        let executed = post_quantum_costs().unwrap();
        let keygen = executed
            .iter()
            .find(|c| {
                c.operation
                    == ExecutedOperation::PostQuantum(PqPrimitive::KemKeygen, PqScheme::MlKem768)
            })
            .expect("an executed ML-KEM-768 key generation");
        let priced = profile_cost(
            &prices,
            &keygen.device,
            PqPrimitive::KemKeygen,
            PqScheme::MlKem768,
        )
        .unwrap();
        assert_eq!(priced.ms, keygen.cost.ms);
    }

    #[test]
    fn published_costs_stay_and_a_device_with_neither_stays_unpriced() {
        let prices = pq_prices();
        let published = published_pq_costs().unwrap();
        let executed = post_quantum_costs().unwrap();
        for p in published
            .iter()
            .filter(|p| p.cost.is_some() && p.used_by_profile)
        {
            if executed.iter().any(|e| e.device == p.device) {
                continue;
            }
            let c = profile_cost(&prices, &p.device, p.primitive, p.scheme).unwrap();
            assert_eq!(Some(c.ms), p.cost.as_ref().map(|c| c.ms));
        }
        assert!(
            profile_cost(&prices, "esp32", PqPrimitive::KemKeygen, PqScheme::MlKem768)
                .unwrap_err()
                .starts_with("not available")
        );
    }
}
