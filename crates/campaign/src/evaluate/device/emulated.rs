//! The studies re-enacted end to end: real handshakes of the thesis' cases with an
//! emulated Nokia 7650 client, the real gateway, and emulated GSM CSD and GPRS links, run
//! all at once by the drivers ([`wtlsperf_drivers::device_runs`]); here the plan, and the
//! models and published times beside what they measured.

use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_bearer::{profile, DelayDistribution, LinkProfile};
use wtlsperf_models::device::DeviceProfile;
use wtlsperf_models::stats::median;
use wtlsperf_models::transmission::link_ms;
use wtlsperf_models::Authentication;

use crate::evaluate::context::Mode;
use crate::evaluate::processing::{auth_mode, cases_for, ProcessingResults};
use crate::evaluate::vocabulary::{BearerName, DeviceName};
use wtlsperf_drivers::auth::authentication;
use wtlsperf_drivers::device::ClientSteps;
use wtlsperf_drivers::device_runs::{run_on_device, DeviceHandshake, DeviceRun};
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::wire_log::flights_of;

/// The bearers the thesis measured (Table 4.12 over GSM CSD, GPRS average of Table 4.15).
pub const BEARERS: [&str; 2] = ["gsm-csd", "gprs-avg"];

/// Name of the GSM CSD link as it behaved in 2004 for our flights.
pub const GSM_CSD_2004: &str = "gsm-csd-2004";

/// The links of the re-enactment: the studies' profiles, plus GSM CSD at 9600 bit/s with
/// every flight delayed by the one-way time per datagram crossing that Eq. 4.1 finds in
/// the live handshakes of Table 4.12 (`per_flight_ms`; the 2004 network's WTP
/// acknowledgements and radio link protocol inside it). Over that link a handshake of ours
/// crosses the network as often as it does, and lasts what the thesis' did.
pub fn links(per_flight_ms: Option<f64>) -> anyhow::Result<Vec<LinkProfile>> {
    let mut out = BEARERS
        .iter()
        .map(|n| profile(n).map_err(anyhow::Error::from))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(ms) = per_flight_ms.filter(|m| m.is_finite() && *m > 0.0) {
        let mut l = profile("gsm-csd")?.with_traversal(DelayDistribution::Fixed(ms));
        l.name = GSM_CSD_2004.into();
        out.push(l);
    }
    Ok(out)
}

/// One emulated-device handshake, measured and modelled.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EmulatedRun {
    /// `rsa1024/rsa1024`.
    #[serde(serialize_with = "crate::evaluate::csv_file::display")]
    pub case: Case,
    /// Authentication mode.
    pub auth: Authentication,
    /// Bearer profile.
    pub bearer: BearerName,
    /// Emulated client device.
    pub device: DeviceName,
    /// Completed runs.
    pub runs: usize,
    /// Measured at the client: ClientHello sent to the server Finished handled (ms),
    /// median of the runs.
    pub measured_ms: f64,
    /// Device processing the client emulated (ms): the profile's T_PD_C.
    pub client_device_ms: f64,
    /// Gateway processing (median wall time of the in-memory runs, ms).
    pub server_ms: f64,
    /// Eq. 3.84 per flight for the flights exchanged, at the profile's mean traversal (ms).
    pub transmission_model_ms: f64,
    /// Model T_H = T_PD (device client + gateway) + T_TD + T_QD (0: one handshake at a time
    /// per relay, an idle gateway) (ms).
    pub model_ms: f64,
    /// Published T_H over GSM CSD: Tables 4.1/4.2 (client + server) + Table 4.12 (ms).
    pub published_ms: Option<f64>,
    /// Retransmissions the client made (0 expected).
    pub retransmissions: u32,
}

impl EmulatedRun {
    /// Measured over model, minus one.
    pub fn error(&self) -> f64 {
        self.measured_ms / self.model_ms - 1.0
    }
}

/// Runs of each case: one jittered traversal per flight makes a single run differ from
/// the model's mean by a few per cent, so the short modes take the median of three.
pub fn runs(mode: Mode) -> usize {
    match mode {
        Mode::Smoke | Mode::Full => 1,
        Mode::Quick => 3,
    }
}

/// Cases of each mode.
pub fn plan(mode: Mode) -> Vec<Case> {
    let all = cases_for(mode);
    match mode {
        Mode::Smoke => all.into_iter().take(1).collect(),
        Mode::Quick => all
            .into_iter()
            .filter(|c| {
                matches!(
                    c.to_string().as_str(),
                    "160p/160p" | "163k/163k" | "283k/283k" | "256p/256p" | "rsa1024/rsa1024"
                )
            })
            .collect(),
        Mode::Full => all,
    }
}

/// One table row from the runs of one case, authentication and bearer (medians).
fn row(
    processing: &ProcessingResults,
    device: &DeviceName,
    (case, auth, bearer): (Case, AuthMode, &BearerName),
    steps: &ClientSteps,
    measured: &[f64],
    transmission: &[f64],
    retransmissions: u32,
) -> EmulatedRun {
    let a = authentication(auth);
    let server_ms = processing
        .cases
        .iter()
        .find(|c| c.case == case && c.auth == a)
        .map_or(0.0, |c| c.server_wall_ms.median);
    let published = (bearer.is_thesis_bearer() || bearer.is(GSM_CSD_2004))
        .then(|| {
            let p = crate::evaluate::processing::published_row(&case, a)?;
            let ttd = crate::evaluate::transmission::published_ttd(&case, a)?;
            Some(p.client_ms + p.server_ms + ttd)
        })
        .flatten();
    let transmission = median(transmission).unwrap_or(f64::NAN);
    EmulatedRun {
        case,
        auth: a,
        bearer: bearer.clone(),
        device: device.clone(),
        runs: measured.len(),
        measured_ms: median(measured).unwrap_or(f64::NAN),
        client_device_ms: steps.total_ms(),
        server_ms,
        transmission_model_ms: transmission,
        model_ms: steps.total_ms() + server_ms + transmission,
        published_ms: published,
        retransmissions,
    }
}

/// Runs every planned case, both authentications, over both bearers, all at once, with
/// the client emulating `device` (the drivers' device runs), and sets the models beside
/// the medians of each case, authentication and bearer.
pub fn run(
    mode: Mode,
    store: &PkiStore,
    processing: &ProcessingResults,
    device: &DeviceProfile,
    per_flight_ms: Option<f64>,
) -> anyhow::Result<Vec<EmulatedRun>> {
    let mut work = Vec::new();
    for link in links(per_flight_ms)? {
        for case in plan(mode) {
            for auth in Authentication::ALL {
                for _ in 0..runs(mode) {
                    work.push(DeviceHandshake {
                        case,
                        auth: auth_mode(auth),
                        link: link.clone(),
                    });
                }
            }
        }
    }
    let results = run_on_device(store, device, &work, 1_000)?;
    let mut rows = Vec::new();
    let mut done: Vec<(Case, AuthMode, String)> = Vec::new();
    for h in &work {
        let key = (h.case, h.auth, h.link.name.clone());
        if done.contains(&key) {
            continue;
        }
        done.push(key);
        let ok: Vec<&DeviceRun> = work
            .iter()
            .zip(&results)
            .filter(|(w, _)| w.case == h.case && w.auth == h.auth && w.link.name == h.link.name)
            .filter_map(|(_, r)| r.as_ref().ok())
            .collect();
        let Some(first) = ok.first() else {
            continue;
        };
        let measured: Vec<f64> = ok
            .iter()
            .map(|r| r.client.duration.as_secs_f64() * 1e3)
            .collect();
        // Eq. 3.84 per flight over the flights each run exchanged.
        let transmission: Vec<f64> = ok
            .iter()
            .map(|r| link_ms(&flights_of(&r.client.wire), &h.link.rates()))
            .collect();
        rows.push(row(
            processing,
            &DeviceName::of(device),
            (h.case, h.auth, &BearerName::of(&h.link)),
            &first.steps,
            &measured,
            &transmission,
            ok.iter().map(|r| r.client.retransmissions).sum(),
        ));
    }
    anyhow::ensure!(!rows.is_empty(), "no emulated-device handshake completed");
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_2004_link_is_gsm_csd_with_the_fitted_per_flight_delay() {
        let plain = links(None).unwrap();
        assert_eq!(plain.len(), BEARERS.len());
        let with = links(Some(903.4)).unwrap();
        let l = with.iter().find(|l| l.name == GSM_CSD_2004).unwrap();
        let gsm = profile("gsm-csd").unwrap();
        assert_eq!((l.up_bps, l.down_bps), (gsm.up_bps, gsm.down_bps));
        assert_eq!(l.traversal.mean_ms(), 903.4);
        assert_eq!(links(Some(f64::NAN)).unwrap().len(), BEARERS.len());
    }

    #[test]
    fn plans_are_small_in_the_short_modes_and_complete_in_the_full_run() {
        assert!(plan(Mode::Quick).len() * runs(Mode::Quick) <= 15);
        assert_eq!(plan(Mode::Full).len(), cases_for(Mode::Full).len());
        assert_eq!(plan(Mode::Smoke).len(), 1);
    }
}
