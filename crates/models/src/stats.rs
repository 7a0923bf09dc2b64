//! Small, exact descriptive statistics shared by every model and by the report.
//!
//! Functions take a slice and return `None` when the statistic is undefined (empty input,
//! or fewer than two values for a sample standard deviation) instead of a NaN that would
//! silently poison a table. Percentiles come in two documented flavours because the
//! studies do not say which one they used: nearest-rank (a value that was actually
//! observed) and linear interpolation between order statistics (Hyndman-Fan type 7, the
//! default of NumPy, R and spreadsheet `PERCENTILE`).

use serde::{Deserialize, Serialize};

/// Arithmetic mean.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// Sample standard deviation with the n-1 denominator, the estimator Matlab's `std`
/// (used by the thesis) returns.
pub fn sample_sd(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

/// Second raw moment E[X^2], the quantity the Pollaczek-Khinchin formula needs
/// (thesis Eq. 3.11-3.12).
pub fn second_moment(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().map(|v| v * v).sum::<f64>() / values.len() as f64)
}

/// The first two raw moments of a sample, E[X] and E[X^2]: what the Pollaczek-Khinchin
/// formula (thesis Eq. 3.12) takes of a service time, and of a wait for its spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Moments {
    /// E[X].
    pub mean: f64,
    /// E[X^2].
    pub m2: f64,
}

impl Moments {
    /// The moments of `values`; `None` if it is empty.
    pub fn of(values: &[f64]) -> Option<Moments> {
        Some(Moments {
            mean: mean(values)?,
            m2: second_moment(values)?,
        })
    }
}

/// Squared coefficient of variation Var[X]/E[X]^2 (population variance), the service
/// variability term of the Allen-Cunneen approximation.
pub fn squared_cv(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    if m == 0.0 {
        return None;
    }
    let m2 = second_moment(values)?;
    Some((m2 - m * m).max(0.0) / (m * m))
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// How a percentile is read from the order statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    /// Linear interpolation between order statistics (Hyndman-Fan type 7): rank
    /// h = (n-1)·p/100, interpolated between floor(h) and ceil(h). For summaries of
    /// repeated measurements (medians, quartiles, the record layer's p95).
    Linear,
    /// The nearest-rank method: the smallest observed value with at least p % of the
    /// observations at or below it; p = 0 gives the minimum. Always an observed value,
    /// as a latency tail (p99 of a load run) should be.
    Nearest,
}

/// Percentile `p` (0-100) of `values` by `rank`; `p` outside 0-100 is clamped. `None`
/// for no values or a NaN `p`.
pub fn percentile(values: &[f64], p: f64, rank: Rank) -> Option<f64> {
    if values.is_empty() || p.is_nan() {
        return None;
    }
    let v = sorted(values);
    let p = p.clamp(0.0, 100.0);
    match rank {
        Rank::Linear => {
            let h = (v.len() - 1) as f64 * p / 100.0;
            let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
            Some(v[lo] + (h - lo as f64) * (v[hi] - v[lo]))
        }
        Rank::Nearest => {
            let r = (p / 100.0 * v.len() as f64).ceil() as usize;
            Some(v[r.clamp(1, v.len()) - 1])
        }
    }
}

/// Median, i.e. the linear-interpolation 50th percentile (mean of the two middle values
/// for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    percentile(values, 50.0, Rank::Linear)
}

/// 1-based ranks (j, n + 1 - j) of the order statistics that bound a distribution-free
/// 95 % interval of the median of `n` samples: the largest j with P(B < j) <= 0.025 for
/// B ~ Binomial(n, 1/2), so the interval covers the median with probability at least
/// 1 - 2 P(B < j) >= 95 %. `None` below six samples
/// (no order statistic bounds such an interval).
pub fn median_ci95_ranks(n: usize) -> Option<(usize, usize)> {
    let ln_half_n = n as f64 * 0.5f64.ln();
    let (mut cdf, mut j, mut ln_choose) = (0.0, 0usize, 0.0f64);
    for k in 0..=n / 2 {
        let p = (ln_choose + ln_half_n).exp();
        if cdf + p > 0.025 {
            break;
        }
        cdf += p;
        j = k + 1;
        ln_choose += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
    }
    (j >= 1).then_some((j, n + 1 - j))
}

/// Relative error (value - reference) / reference; `None` when the reference is zero.
pub fn relative_error(value: f64, reference: f64) -> Option<f64> {
    if reference == 0.0 {
        return None;
    }
    Some((value - reference) / reference)
}

/// Median and 95th percentile (nearest rank) of durations in ms; NaN for no durations
/// (the client and flood reports print what they have).
pub fn median_p95_ms(durations: &[std::time::Duration]) -> (f64, f64) {
    let ms: Vec<f64> = durations.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    let rank = |p: f64| percentile(&ms, p, Rank::Nearest).unwrap_or(f64::NAN);
    (rank(50.0), rank(95.0))
}

/// Two-sided 95 % quantile of Student's t with `df` degrees of freedom (t_0.975), from
/// the standard table for 1-30 and its Cornish-Fisher expansion beyond; `None` for 0.
pub fn student_t975(df: usize) -> Option<f64> {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => None,
        1..=30 => Some(TABLE[df - 1]),
        // Cornish-Fisher: z + (z^3 + z)/(4 df) + (5z^5 + 16z^3 + 3z)/(96 df^2), z the
        // normal quantile; within 0.001 of the exact value from df = 31.
        _ => {
            let (z, n) = (1.959_964f64, df as f64);
            Some(
                z + (z.powi(3) + z) / (4.0 * n)
                    + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n),
            )
        }
    }
}

/// Half-width of the 95 % confidence interval of a mean estimated by the method of batch
/// means: the run is cut into consecutive batches, long beside the correlation time of
/// the process, whose means are then nearly independent, so the interval is Student's
/// on them. `None` with fewer than two batches.
pub fn batch_means_ci95(batch_means: &[f64]) -> Option<f64> {
    let sd = sample_sd(batch_means)?;
    Some(student_t975(batch_means.len() - 1)? * sd / (batch_means.len() as f64).sqrt())
}

/// Half-width of the 95 % interval of the mean of `values` (in time order) by
/// [`batch_means_ci95`] over `batches` consecutive batches of equal counts; `None` with
/// fewer values than batches or fewer than two batches.
pub fn batch_mean_ci95(values: &[f64], batches: usize) -> Option<f64> {
    if batches < 2 || values.len() < batches {
        return None;
    }
    let n = values.len();
    let means: Vec<f64> = (0..batches)
        .filter_map(|b| mean(&values[b * n / batches..(b + 1) * n / batches]))
        .collect();
    batch_means_ci95(&means)
}

/// The usual one-line summary of a sample, percentiles by linear interpolation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n-1); 0 for a single value.
    pub sd: f64,
    /// Smallest value.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}

/// Summarises a sample; `None` if it is empty.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let v = sorted(values);
    Some(Summary {
        n: v.len(),
        mean: mean(&v)?,
        sd: sample_sd(&v).unwrap_or(0.0),
        min: *v.first()?,
        p50: percentile(&v, 50.0, Rank::Linear)?,
        p95: percentile(&v, 95.0, Rank::Linear)?,
        p99: percentile(&v, 99.0, Rank::Linear)?,
        max: *v.last()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_interval_ranks_follow_the_binomial() {
        assert_eq!(median_ci95_ranks(5), None);
        // n = 6: P(B = 0) = 1/64 <= 0.025 < 7/64.
        assert_eq!(median_ci95_ranks(6), Some((1, 6)));
        // Published table values (e.g. Conover, Practical Nonparametric Statistics).
        assert_eq!(median_ci95_ranks(10), Some((2, 9)));
        assert_eq!(median_ci95_ranks(20), Some((6, 15)));
        assert_eq!(median_ci95_ranks(100), Some((40, 61)));
        // Large n stays finite (the binomial terms underflow first, then grow).
        let (lo, hi) = median_ci95_ranks(5000).unwrap();
        assert!(lo > 2400 && hi < 2600 && lo + hi == 5001);
    }

    #[test]
    fn median_and_p95_by_nearest_rank() {
        let d: Vec<std::time::Duration> = (1..=20).map(std::time::Duration::from_millis).collect();
        let (m, p) = median_p95_ms(&d);
        assert_eq!(m, 10.0);
        assert_eq!(p, 19.0);
        assert!(median_p95_ms(&[]).0.is_nan());
    }

    #[test]
    fn batch_means_interval_is_students_on_the_batches() {
        assert_eq!(student_t975(0), None);
        assert_eq!(student_t975(19), Some(2.093));
        assert!((student_t975(31).unwrap() - 2.040).abs() < 1e-3);
        assert!((student_t975(120).unwrap() - 1.980).abs() < 1e-3);
        assert_eq!(batch_means_ci95(&[1.0]), None);
        // Batches 1, 2, 3: sd 1, t(2) = 4.303, half-width 4.303/sqrt(3).
        let h = batch_means_ci95(&[1.0, 2.0, 3.0]).unwrap();
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn empty_inputs_are_undefined() {
        assert_eq!(mean(&[]), None);
        assert_eq!(sample_sd(&[1.0]), None);
        assert_eq!(median(&[]), None);
        assert_eq!(percentile(&[], 50.0, Rank::Nearest), None);
        assert_eq!(summarize(&[]), None);
        assert_eq!(relative_error(1.0, 0.0), None);
    }

    #[test]
    fn moments_of_a_small_sample() {
        let x = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&x), Some(5.0));
        // Population variance 4, sample variance 32/7.
        assert!((sample_sd(&x).unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(second_moment(&x), Some(29.0));
        assert!((squared_cv(&x).unwrap() - 4.0 / 25.0).abs() < 1e-12);
    }

    #[test]
    fn moments_are_the_first_two_raw_moments() {
        let m = Moments::of(&[1.0, 3.0]).unwrap();
        assert_eq!((m.mean, m.m2), (2.0, 5.0));
        assert_eq!(Moments::of(&[]), None);
    }

    #[test]
    fn batch_means_cut_the_sample_in_order() {
        // Two batches with means 1 and 3: sd sqrt(2), t(1) = 12.706, half-width
        // 12.706 x sqrt(2) / sqrt(2).
        let ci = batch_mean_ci95(&[1.0, 1.0, 3.0, 3.0], 2).unwrap();
        assert!((ci - 12.706).abs() < 1e-9);
        assert_eq!(batch_mean_ci95(&[1.0], 2), None);
        assert_eq!(batch_mean_ci95(&[1.0, 2.0], 1), None);
        assert_eq!(batch_mean_ci95(&[2.0; 40], 20), Some(0.0));
    }

    #[test]
    fn percentile_flavours_differ_as_documented() {
        let x = [15.0, 20.0, 35.0, 40.0, 50.0];
        assert_eq!(percentile(&x, 30.0, Rank::Nearest), Some(20.0));
        assert_eq!(percentile(&x, 40.0, Rank::Nearest), Some(20.0));
        assert_eq!(percentile(&x, 100.0, Rank::Nearest), Some(50.0));
        assert_eq!(percentile(&x, 0.0, Rank::Nearest), Some(15.0));
        assert_eq!(percentile(&x, 40.0, Rank::Linear), Some(29.0));
        assert_eq!(percentile(&x, 0.0, Rank::Linear), Some(15.0));
        assert_eq!(percentile(&x, 100.0, Rank::Linear), Some(50.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn summary_and_relative_error() {
        let s = summarize(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.n, s.min, s.p50, s.max), (3, 1.0, 2.0, 3.0));
        assert_eq!(summarize(&[7.0]).unwrap().sd, 0.0);
        assert!((relative_error(110.0, 100.0).unwrap() - 0.1).abs() < 1e-12);
    }
}
