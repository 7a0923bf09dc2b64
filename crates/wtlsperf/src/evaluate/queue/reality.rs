//! The load test of part 2: open-loop Poisson handshakes against the in-process gateway
//! with ONE worker, at target utilisations rho computed from the in-process per-handshake
//! service time, and the mean job wait from the gateway's own job records beside every
//! model's prediction for the same point.

use std::time::Duration;

use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_models::Authentication;

use super::{predict, LoadPoint};
use crate::evaluate::processing::ProcessingResults;
use crate::evaluate::{Ctx, Mode};
use crate::load::{run_load, LoadSpec};
use crate::pki_store::PkiStore;

/// Cases, utilisations and seconds per point for a mode.
pub fn plan(mode: Mode) -> (Vec<&'static str>, Vec<f64>, f64) {
    match mode {
        Mode::Smoke => (vec!["256p/256p"], vec![0.3], 0.5),
        Mode::Quick => (
            vec!["256p/256p", "rsa1024/rsa1024"],
            vec![0.3, 0.6, 0.8],
            3.0,
        ),
        Mode::Full => (
            vec!["256p/256p", "rsa1024/rsa1024"],
            (1..=9).map(|i| i as f64 / 10.0).collect(),
            12.0,
        ),
    }
}

/// Runs the load points of the mode.
pub fn run(
    ctx: &Ctx,
    store: &PkiStore,
    processing: &ProcessingResults,
) -> anyhow::Result<Vec<LoadPoint>> {
    let (cases, rhos, seconds) = plan(ctx.mode);
    let sim_jobs = if ctx.mode == Mode::Full {
        200_000
    } else {
        20_000
    };
    let mut out = Vec::new();
    for name in cases {
        let case = Case::parse(name)?;
        let Some(r) = processing.find(&case, Authentication::ServerAuth) else {
            continue;
        };
        let per_handshake_ms: f64 = r.mean_jobs().iter().sum();
        anyhow::ensure!(per_handshake_ms > 0.0, "{name}: no in-process service time");
        let samples: Vec<f64> = r.job_service_ms.iter().flatten().copied().collect();
        for &rho in &rhos {
            let lambda = rho * 1000.0 / per_handshake_ms;
            ctx.step(&format!(
                "queue load test: {name} rho {rho:.1} ({lambda:.0} handshakes/s, {seconds} s)"
            ));
            let mut spec = LoadSpec::new(
                case,
                AuthMode::ServerAuth,
                lambda,
                Duration::from_secs_f64(seconds),
            );
            spec.workers = 1;
            spec.seed = 2004 + (rho * 10.0) as u64;
            spec.max_handshakes = (lambda * seconds * 1.5) as usize + 10;
            let rep = run_load(&spec, store)?;
            let Some(g) = rep.gateway.as_ref() else {
                anyhow::bail!("{name}: the in-process gateway returned no job statistics");
            };
            let k = if rep.started > 0 {
                g.jobs as f64 / rep.started as f64
            } else {
                0.0
            };
            let mean_ms = g.mean_service_us / 1000.0;
            let m2 = g.service_m2_us2 / 1e6;
            // The models get the arrival rate that really reached the gateway: at high
            // offered rates the generator shares the 2 cores and falls behind.
            let arrived = if rep.achieved_rate > 0.0 {
                rep.achieved_rate
            } else {
                lambda
            };
            let (corrected, as_published, mm1, des) =
                predict(arrived, k, mean_ms, m2, &samples, sim_jobs);
            out.push(LoadPoint {
                case: name.to_owned(),
                auth: "server".to_owned(),
                target_rho: rho,
                lambda_hs_per_s: lambda,
                achieved_hs_per_s: rep.achieved_rate,
                success_ratio: rep.success_ratio,
                jobs_per_handshake: k,
                measured_rho: g.utilisation,
                service_mean_ms: mean_ms,
                service_m2_ms2: m2,
                measured_wait_ms: g.mean_wait_us / 1000.0,
                corrected_ms: corrected,
                as_published_ms: as_published,
                mm1_ms: mm1,
                des_ms: des,
            });
        }
    }
    anyhow::ensure!(!out.is_empty(), "no load point could be run");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_the_required_points() {
        let (cases, rhos, _) = plan(Mode::Full);
        assert_eq!(cases, ["256p/256p", "rsa1024/rsa1024"]);
        assert_eq!(rhos.len(), 9);
        assert!((rhos[8] - 0.9).abs() < 1e-12);
        assert_eq!(plan(Mode::Quick).1, vec![0.3, 0.6, 0.8]);
    }
}
