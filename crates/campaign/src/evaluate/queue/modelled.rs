//! Layers 1 and 2 of the queue study: the thesis' models on the published service
//! times and on ours, over arrival-rate grids, and the predictions beside a load point.

use wtls::suite::Case;
use wtlsperf_models::queue::{
    allen_cunneen_wait_ms, group_load, mm1_wait_ms, pk_mean_wait_ms, published_handshake_jobs,
    simulate, Empirical, GroupLoad, MixtureCase, SimConfig, Variant,
};
use wtlsperf_models::Authentication;

use super::rows::{Capacity, Group, Inputs, QueueModel, QueueRow, RowVariant};
use crate::evaluate::context::Mode;
use crate::evaluate::processing::ProcessingResults;

/// The four category-3 groups of thesis Figures 4.13-4.23.
pub fn category3_groups() -> Vec<Group> {
    (1..=4u8)
        .map(|g| Group {
            group: g,
            cases: Case::ALL
                .into_iter()
                .filter(|c| c.category == 3 && c.group == g)
                .collect(),
        })
        .collect()
}

/// Mixtures p of Eq. 3.19 evaluated: each leaf alone and equal shares.
pub fn mixtures(group: &Group) -> Vec<(String, Vec<(Case, f64)>)> {
    let mut out: Vec<(String, Vec<(Case, f64)>)> = group
        .cases
        .iter()
        .map(|c| (c.leaf.short().to_owned(), vec![(*c, 1.0)]))
        .collect();
    let w = 1.0 / group.cases.len() as f64;
    out.push((
        "equal".to_owned(),
        group.cases.iter().map(|c| (*c, w)).collect(),
    ));
    out
}

/// The group load of a mixture on the published service times.
pub fn published_load(
    auth: Authentication,
    mixture: &[(Case, f64)],
    variant: Variant,
) -> Option<GroupLoad> {
    let cases: Vec<MixtureCase> = mixture
        .iter()
        .map(|(c, w)| {
            Some(MixtureCase {
                weight: *w,
                job_service_ms: published_handshake_jobs(
                    auth,
                    c.ca.short(),
                    c.leaf.short(),
                    variant,
                )
                .ok()?,
            })
        })
        .collect::<Option<_>>()?;
    group_load(&cases, variant).ok()
}

/// The group load of a mixture on our measured mean per-job service times.
pub fn measured_load(
    processing: &ProcessingResults,
    auth: Authentication,
    mixture: &[(Case, f64)],
    variant: Variant,
) -> Option<GroupLoad> {
    let cases: Vec<MixtureCase> = mixture
        .iter()
        .map(|(c, w)| {
            let jobs = processing.find(c, auth)?.mean_jobs();
            (!jobs.is_empty()).then_some(MixtureCase {
                weight: *w,
                job_service_ms: jobs,
            })
        })
        .collect::<Option<_>>()?;
    group_load(&cases, variant).ok()
}

/// The thesis' arrival rates of Figures 4.13-4.23: 0 to 100 handshakes/s.
pub fn thesis_lambdas() -> Vec<f64> {
    (0..=50).map(|i| i as f64 * 2.0).collect()
}

/// The models on the published service times (layer 1).
pub fn published_rows() -> (Vec<QueueRow>, Vec<Capacity>) {
    let mut rows = Vec::new();
    let mut caps = Vec::new();
    for group in category3_groups() {
        for auth in Authentication::ALL {
            for (mix, mixture) in mixtures(&group) {
                for variant in [Variant::AsPublished, Variant::Corrected] {
                    let Some(load) = published_load(auth, &mixture, variant) else {
                        continue;
                    };
                    caps.push(Capacity {
                        group: group.id(),
                        mixture: mix.clone(),
                        auth,
                        inputs: Inputs::Published,
                        variant,
                        handshakes_per_s: load.capacity_handshakes_per_s(),
                    });
                    for lambda in thesis_lambdas() {
                        rows.push(QueueRow::modelled(
                            QueueModel::PkMg1,
                            RowVariant::Model(variant),
                            Inputs::Published,
                            group.id(),
                            mix.clone(),
                            auth,
                            lambda,
                            load.utilisation(lambda),
                            load.mean_wait_ms(lambda),
                        ));
                    }
                }
            }
        }
    }
    (rows, caps)
}

/// Arrival rates from 0 to 95 % of a capacity, `n` + 1 points.
pub fn lambdas_to(capacity: f64, n: usize) -> Vec<f64> {
    (0..=n)
        .map(|i| 0.95 * capacity * i as f64 / n as f64)
        .collect()
}

/// The models on our measured service times (layer 2).
pub fn measured_rows(mode: Mode, processing: &ProcessingResults) -> (Vec<QueueRow>, Vec<Capacity>) {
    let mut rows = Vec::new();
    let mut caps = Vec::new();
    let sim_jobs = match mode {
        Mode::Smoke => 2_000,
        Mode::Quick => 20_000,
        Mode::Full => 200_000,
    };
    for group in category3_groups() {
        for auth in Authentication::ALL {
            for (mix, mixture) in mixtures(&group) {
                let (Some(corr), Some(asp)) = (
                    measured_load(processing, auth, &mixture, Variant::Corrected),
                    measured_load(processing, auth, &mixture, Variant::AsPublished),
                ) else {
                    continue;
                };
                for (variant, load) in [(Variant::Corrected, &corr), (Variant::AsPublished, &asp)] {
                    caps.push(Capacity {
                        group: group.id(),
                        mixture: mix.clone(),
                        auth,
                        inputs: Inputs::Measured,
                        variant,
                        handshakes_per_s: load.capacity_handshakes_per_s(),
                    });
                }
                let at = MixtureAt {
                    group: &group,
                    mix: &mix,
                    auth,
                };
                let capacity = corr.capacity_handshakes_per_s();
                for lambda in lambdas_to(capacity, 19) {
                    rows.extend(at.curve_rows(&corr, &asp, lambda));
                }
                // Pooled per-job samples of the mixture, each case weighted by its share.
                let samples = pooled_jobs(processing, auth, &mixture);
                if mix == "equal" && !samples.is_empty() {
                    for rho in [0.2, 0.4, 0.6, 0.8, 0.9] {
                        let lambda = rho * capacity;
                        let w = des_wait(&samples, corr.job_rate_per_s(lambda), sim_jobs);
                        rows.push(at.row(
                            QueueModel::DesMg1,
                            RowVariant::Model(Variant::Corrected),
                            lambda,
                            rho,
                            w,
                        ));
                    }
                }
            }
        }
    }
    (rows, caps)
}

/// A mixture of a group in one mode, whose measured-input rows are being made.
struct MixtureAt<'a> {
    group: &'a Group,
    mix: &'a str,
    auth: Authentication,
}

impl MixtureAt<'_> {
    fn row(
        &self,
        model: QueueModel,
        variant: RowVariant,
        lambda: f64,
        rho: f64,
        w: Option<f64>,
    ) -> QueueRow {
        QueueRow::modelled(
            model,
            variant,
            Inputs::Measured,
            self.group.id(),
            self.mix.to_owned(),
            self.auth,
            lambda,
            rho,
            w,
        )
    }

    /// The analytic models at one arrival rate: P-K in both readings, Levi-Savas' M/M/1
    /// per handshake, and Allen-Cunneen for 1, 2 and 4 workers.
    fn curve_rows(&self, corr: &GroupLoad, asp: &GroupLoad, lambda: f64) -> Vec<QueueRow> {
        let per_handshake_ms = corr.mean_service_ms * corr.jobs_per_handshake;
        let rho_h = lambda * per_handshake_ms / 1000.0;
        let mut rows = vec![
            self.row(
                QueueModel::PkMg1,
                RowVariant::Model(Variant::Corrected),
                lambda,
                corr.utilisation(lambda),
                corr.mean_wait_ms(lambda),
            ),
            self.row(
                QueueModel::PkMg1,
                RowVariant::Model(Variant::AsPublished),
                lambda,
                asp.utilisation(lambda),
                asp.mean_wait_ms(lambda),
            ),
            self.row(
                QueueModel::Mm1LeviSavas,
                RowVariant::NotApplicable,
                lambda,
                rho_h,
                mm1_wait_ms(per_handshake_ms, rho_h),
            ),
        ];
        let job_rate = corr.job_rate_per_s(lambda);
        for c in [1u32, 2, 4] {
            rows.push(self.row(
                QueueModel::AllenCunneen(c),
                RowVariant::Model(Variant::Corrected),
                lambda,
                corr.utilisation(lambda) / c as f64,
                allen_cunneen_wait_ms(job_rate, c, corr.mean_service_ms, corr.second_moment_ms2),
            ));
        }
        rows
    }
}

/// The per-job samples of a mixture: every job of every repetition of each case,
/// replicated in proportion to the case's weight (weights of 1/3 or 1 only need equal
/// repetition counts, which the runner gives).
pub fn pooled_jobs(
    processing: &ProcessingResults,
    auth: Authentication,
    mixture: &[(Case, f64)],
) -> Vec<f64> {
    let mut out = Vec::new();
    for (c, w) in mixture {
        if *w <= 0.0 {
            continue;
        }
        if let Some(r) = processing.find(c, auth) {
            out.extend(r.job_service_ms.iter().flatten().copied());
        }
    }
    out
}

/// Mean wait of a simulated M/G/1 queue fed with the given service-time samples.
pub fn des_wait(samples_ms: &[f64], job_rate_per_s: f64, jobs: usize) -> Option<f64> {
    let mut sampler = Empirical::new(samples_ms.to_vec())?;
    let cfg = SimConfig {
        arrival_rate_per_s: job_rate_per_s,
        servers: 1,
        jobs,
        warmup_jobs: jobs / 10,
        seed: 2004,
    };
    simulate(cfg, &mut sampler).ok().map(|r| r.mean_wait_ms)
}

/// Predictions for one measured load point (moments in ms, rates per second).
pub fn predict(
    lambda_hs: f64,
    jobs_per_handshake: f64,
    mean_ms: f64,
    m2_ms2: f64,
    samples_ms: &[f64],
    sim_jobs: usize,
) -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
    let job_rate = lambda_hs * jobs_per_handshake;
    let corrected = pk_mean_wait_ms(job_rate, mean_ms, m2_ms2);
    let as_published = pk_mean_wait_ms(lambda_hs, mean_ms, m2_ms2);
    let ts = jobs_per_handshake * mean_ms;
    let mm1 = mm1_wait_ms(ts, lambda_hs * ts / 1000.0);
    let des = des_wait(samples_ms, job_rate, sim_jobs);
    (corrected, as_published, mm1, des)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_those_of_table_3_3() {
        let g = category3_groups();
        assert_eq!(g.len(), 4);
        assert!(g.iter().all(|g| g.cases.len() == 3));
        assert_eq!(g[1].cases[0].to_string(), "283k/163k");
        assert_eq!(mixtures(&g[0]).len(), 4);
    }

    #[test]
    fn published_capacity_of_group_2_mutual_is_the_printed_formula() {
        let (_, caps) = published_rows();
        let c = caps
            .iter()
            .find(|c| {
                c.group == "cat3-g2"
                    && c.mixture == "163k"
                    && c.auth == Authentication::Mutual
                    && c.variant == Variant::AsPublished
            })
            .unwrap();
        assert_eq!((c.handshakes_per_s * 10.0).round() / 10.0, 79.1);
    }

    #[test]
    fn corrected_prediction_is_k_times_the_as_published_rho() {
        let samples = vec![1.0, 3.0];
        let (corr, asp, mm1, des) = predict(100.0, 2.0, 2.0, 5.0, &samples, 50_000);
        // k lambda = 200 jobs/s, E[X] = 2 ms: rho = 0.4, W = 0.2 x 5 / 1.2 = 0.8333 ms.
        assert!((corr.unwrap() - 0.2 * 5.0 / 1.2).abs() < 1e-9);
        // lambda = 100/s: rho = 0.2, W = 0.1 x 5 / 1.6.
        assert!((asp.unwrap() - 0.1 * 5.0 / 1.6).abs() < 1e-9);
        // Ts = 4 ms, rho = 0.4: 4 x 0.4 / 0.6.
        assert!((mm1.unwrap() - 4.0 * 0.4 / 0.6).abs() < 1e-9);
        let des = des.unwrap();
        assert!((des - corr.unwrap()).abs() / corr.unwrap() < 0.1, "{des}");
    }

    #[test]
    fn lambda_grid_stops_short_of_saturation() {
        let l = lambdas_to(100.0, 19);
        assert_eq!(l.len(), 20);
        assert_eq!(l[0], 0.0);
        assert!((l[19] - 95.0).abs() < 1e-9);
    }
}
