//! The verdict rule every finding follows (the findings module and docs/results.md, "How
//! a verdict is decided"), written once and shared by every part that states a finding,
//! so that each states the same rule with its own threshold.
//!
//! 1. **A difference decides only when it clears its margin.** A measured number is
//!    compared with its measured 95 % interval; a modelled or published number (no
//!    interval) with a stated tolerance, [`MODEL_TOLERANCE`] unless the finding names
//!    another. "Confirmed" or "contradicted" needs the difference beyond the margin;
//!    otherwise the comparison is "inconclusive" and the evidence gives the margin.
//! 2. **A verdict over a set names the set** and holds over every measured and modelled
//!    row the claim covers: confirmed when every row holds beyond its margin,
//!    contradicted when one row fails beyond it, inconclusive otherwise (rows within the
//!    margin and none failing). A claim over every row of its set (every device, every
//!    bearer, wherever a budget held) is refuted by one row that fails beyond its
//!    margin, which no other row can undo; the finding gives each subset's verdict
//!    beside, so a reader sees where the claim holds and where not.
//! 3. **A verdict decided by one profile, one library or one case says so** in its
//!    evidence; rows whose deciding number is an estimate (a cost borrowed from another
//!    device) are not judged and are counted apart.
//! 4. **The load-test models** (the queue models and the FIFO replay against the real
//!    gateway's measured mean waits) decide each load point by its interval
//!    ([`interval_verdict`]): the model against the measured mean wait and its 95 %
//!    interval gives an interval of relative errors, which *keeps* 15 % when it lies
//!    within +-15 %, *stops* when it lies wholly beyond, and is *undecided* otherwise.
//!    Over the points the finding names: confirmed when every judged point keeps,
//!    contradicted when one stops, otherwise inconclusive: rule 2 over load points, each
//!    decided by its interval (a model claimed at every point of its set is refuted by
//!    one point whose whole measured interval puts it beyond 15 %).
//! 5. **Our emulator against our model** is judged per bearer ([`per_bearer_target`]):
//!    the model predicts a jittered link's mean traversal, so what a bearer can confirm
//!    or refute is the model's bias, the median signed error of its rows; a bearer holds
//!    when that median's distribution-free 95 % interval lies within +-5 %, fails when
//!    it lies wholly beyond, and the set follows rule 2. The median |error|, the scatter
//!    of single runs through the jitter, is reported beside, as is a median pooled over
//!    bearers, and neither decides.
//!    The page loads with WTP on the link (`page_load_model`) are not under this rule:
//!    their model counts every datagram the link carried as a traversal, which the run
//!    cannot separate from the emulator, so that finding is our model against our run,
//!    and its rows (WTP's acknowledgements and timers, fetches of different lengths)
//!    are each judged within 15 %, as it says.

use wtlsperf_models::stats::{median, median_ci95_ranks};
use wtlsperf_report::Verdict;

/// The tolerance for comparisons between modelled (or published) numbers, relative:
/// the flight model is held to a bias within 5 % on the emulated handshakes (rule 5, the
/// transmission finding's target), so a modelled difference smaller than that is not a
/// difference the model can decide.
pub const MODEL_TOLERANCE: f64 = 0.05;

/// One row's comparison of "a is below b", relative margin `tolerance` of `b`:
/// `Some(true)` when a < b by more than the margin, `Some(false)` when a > b by more
/// than the margin, `None` when the difference is within it.
pub fn below(a: f64, b: f64, tolerance: f64) -> Option<bool> {
    let margin = tolerance * b.abs();
    if a < b - margin {
        Some(true)
    } else if a > b + margin {
        Some(false)
    } else {
        None
    }
}

/// The same with an absolute margin (a measured interval's half-width, both sides'
/// combined).
pub fn below_by(a: f64, b: f64, margin: f64) -> Option<bool> {
    if a < b - margin {
        Some(true)
    } else if a > b + margin {
        Some(false)
    } else {
        None
    }
}

/// The tally of a claim over a set of rows: decided for, decided against, within the
/// margin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub holds: usize,
    pub fails: usize,
    pub undecided: usize,
}

impl Tally {
    /// Counts each row's decision (`None`: within the margin).
    pub fn of(decisions: impl IntoIterator<Item = Option<bool>>) -> Tally {
        let mut t = Tally::default();
        for d in decisions {
            match d {
                Some(true) => t.holds += 1,
                Some(false) => t.fails += 1,
                None => t.undecided += 1,
            }
        }
        t
    }

    /// The same tally over `rows` rows, the ones neither holding nor failing counted as
    /// within the margin.
    pub fn with_rest_undecided(mut self, rows: usize) -> Tally {
        self.undecided = rows.saturating_sub(self.holds + self.fails);
        self
    }

    /// Rows in the set.
    pub fn rows(&self) -> usize {
        self.holds + self.fails + self.undecided
    }

    /// Rule 2: confirmed when every row holds beyond its margin, contradicted when one
    /// row fails beyond it (a counterexample to a claim over every row), inconclusive
    /// otherwise (and for an empty set).
    pub fn verdict(&self) -> Verdict {
        let n = self.rows();
        if n == 0 {
            Verdict::Inconclusive
        } else if self.fails > 0 {
            Verdict::Contradicted
        } else if self.holds == n {
            Verdict::Confirmed
        } else {
            Verdict::Inconclusive
        }
    }

    /// `holds beyond the margin in 20, fails beyond it in 22, undecided (within the margin) in 0 of 42`.
    pub fn text(&self) -> String {
        format!(
            "holds beyond the margin in {}, fails beyond it in {}, undecided (within the margin) in {} of {}",
            self.holds,
            self.fails,
            self.undecided,
            self.rows()
        )
    }

    /// The tally of rule 5's groups, whose margin is the target itself: `within the
    /// target in 17, beyond it in 2, undecided (the interval crosses it) in 11 of 30`.
    pub fn target_text(&self) -> String {
        format!(
            "within the target in {}, beyond it in {}, undecided (the interval crosses it) in {} of {}",
            self.holds,
            self.fails,
            self.undecided,
            self.rows()
        )
    }
}

/// Rule 4, the verdict over a set of load points judged by the interval rule:
/// contradicted when one stops, confirmed when every judged point keeps, inconclusive
/// otherwise (or when none was judged).
pub fn interval_verdict(judged: usize, keeps: usize, stops: usize) -> Verdict {
    if judged == 0 {
        Verdict::Inconclusive
    } else if stops > 0 {
        Verdict::Contradicted
    } else if keeps == judged {
        Verdict::Confirmed
    } else {
        Verdict::Inconclusive
    }
}

/// The emulator findings' target (rule 5): the flight model's bias on the emulated
/// handshakes, the median of the signed relative errors, is to lie within +-5 % on each
/// bearer.
pub const BEARER_TARGET: f64 = 0.05;

/// Rule 5 in words, for the findings of our emulator against our model (each names the
/// signed error it takes and appends its set).
pub const PER_BEARER_RULE: &str = "per bearer: the model's bias is the median of the signed relative errors over the bearer's rows, with its distribution-free 95 % interval (order statistics of the binomial; with fewer than six rows, where no such interval exists, the rows' whole range); the bearer holds when that interval lies within the +-5 % target, fails when it lies wholly beyond, and is undecided otherwise; confirmed (the runs and the model agree on every bearer) when every bearer holds, contradicted when one bearer fails (a counterexample to a claim over every bearer), otherwise inconclusive with each bearer's result. A jittered link scatters single runs about the model's mean traversal, which the model predicts; the median |error| measures that scatter and is reported beside, not judged, as is a median pooled over bearers, protocols or devices";

/// A run's mean against its model: the gap, which stands in for the mean's scatter where
/// only the mean of a few runs is kept (0 where either is missing).
pub fn run_gap_ms(measured: Option<f64>, modelled: Option<f64>) -> f64 {
    match (measured, modelled) {
        (Some(m), Some(p)) => (m - p).abs(),
        _ => 0.0,
    }
}

/// An interval `(lo, hi)` against the band +-`tolerance`: `Some(true)` when it lies
/// within, `Some(false)` when wholly beyond either edge, `None` when it crosses one.
pub fn within_band((lo, hi): (f64, f64), tolerance: f64) -> Option<bool> {
    if lo >= -tolerance && hi <= tolerance {
        Some(true)
    } else if lo > tolerance || hi < -tolerance {
        Some(false)
    } else {
        None
    }
}

/// One bearer's rows under rule 5: the model's bias with its interval, and the scatter.
#[derive(Debug, Clone, PartialEq)]
pub struct BearerBias {
    pub bearer: String,
    pub rows: usize,
    /// Median signed relative error.
    pub bias: f64,
    /// The interval that decides: the distribution-free 95 % interval of that median
    /// (six rows or more), else the rows' whole range.
    pub interval: (f64, f64),
    /// Median |relative error|: the scatter of single runs, reported.
    pub scatter: f64,
}

impl BearerBias {
    /// `None` for a bearer without rows.
    pub fn of(bearer: &str, signed: &[f64]) -> Option<Self> {
        let mut sorted: Vec<f64> = signed.iter().copied().filter(|e| e.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let bias = median(&sorted)?;
        let abs: Vec<f64> = sorted.iter().map(|e| e.abs()).collect();
        // Below six rows no order statistic bounds a 95 % interval of the median, and
        // every row must then be within (or beyond) the target: a claim over each row.
        let (lo, hi) = median_ci95_ranks(sorted.len()).unwrap_or((1, sorted.len()));
        Some(Self {
            bearer: bearer.to_owned(),
            rows: sorted.len(),
            bias,
            interval: (sorted[lo - 1], sorted[hi - 1]),
            scatter: median(&abs)?,
        })
    }

    /// Holds (interval within +-5 %), fails (wholly beyond), undecided (`None`).
    pub fn decision(&self) -> Option<bool> {
        within_band(self.interval, BEARER_TARGET)
    }

    fn result(&self) -> &'static str {
        match self.decision() {
            Some(true) => "within the +-5 % target",
            Some(false) => "beyond the +-5 % target",
            None => "undecided: the interval crosses the +-5 % target",
        }
    }

    /// `gprs-avg bias +0.3 % (95 % interval -1.2 to +1.9 %, within the +-5 % target;
    /// median |error| 5.4 %, n = 48)`; below six rows the interval is the rows' range.
    pub fn clause(&self) -> String {
        let (lo, hi) = self.interval;
        let interval = if self.rows < 6 {
            "fewer than six rows, every row within"
        } else {
            "95 % interval"
        };
        format!(
            "{} bias {:+.1} % ({interval} {:+.1} to {:+.1} %, {}; median |error| {:.1} %, n = {})",
            self.bearer,
            self.bias * 100.0,
            lo * 100.0,
            hi * 100.0,
            self.result(),
            self.scatter * 100.0,
            self.rows
        )
    }
}

/// Rule 5 over bearers given their signed relative errors: the tally (a bearer with no
/// rows is not counted) and one [`BearerBias::clause`] per bearer.
pub fn per_bearer_target<'a, S: AsRef<[f64]>>(
    signed: impl IntoIterator<Item = (&'a str, S)>,
) -> (Tally, Vec<String>) {
    let biases: Vec<BearerBias> = signed
        .into_iter()
        .filter_map(|(b, e)| BearerBias::of(b, e.as_ref()))
        .collect();
    (
        Tally::of(biases.iter().map(BearerBias::decision)),
        biases.iter().map(BearerBias::clause).collect(),
    )
}

/// The bearers of rule 5 whose bias is not shown within the target (beyond it or
/// undecided), each as `nb-iot bias +6.1 % (beyond)`: the first screen names them
/// beside a pooled median, and the finding gives their intervals.
pub fn outside_target<'a, S: AsRef<[f64]>>(
    signed: impl IntoIterator<Item = (&'a str, S)>,
) -> Vec<String> {
    signed
        .into_iter()
        .filter_map(|(b, e)| BearerBias::of(b, e.as_ref()))
        .filter(|b| b.decision() != Some(true))
        .map(|b| {
            let result = if b.decision().is_some() {
                "beyond"
            } else {
                "undecided"
            };
            format!("{} bias {:+.1} % ({result})", b.bearer, b.bias * 100.0)
        })
        .collect()
}

/// Rule 4 in words, for the findings' `rule` (each appends its own set).
pub const INTERVAL_RULE: &str = "per point, the model against the measured mean wait and its 95 % interval gives an interval of relative errors: keeps when it lies within +-15 %, stops when it lies wholly beyond, undecided otherwise; a point is judged when its target rho is at most 0.8, its measured rho (over the undisturbed jobs, the load the points are calibrated to) landed within 0.05 of the target and its kept recording was not disturbed; confirmed when every judged point keeps, contradicted when one stops (a model claimed at every point is refuted by one point it misses beyond the measured interval), otherwise inconclusive";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_inside_the_margin_decides_nothing() {
        assert_eq!(below(1.1855, 1.1773, 0.05), None);
        assert_eq!(below(0.73, 1.0, MODEL_TOLERANCE), Some(true));
        assert_eq!(below(1.2, 1.0, MODEL_TOLERANCE), Some(false));
        assert_eq!(below_by(10.0, 12.0, 1.0), Some(true));
        assert_eq!(below_by(10.0, 10.5, 1.0), None);
    }

    /// `n` signed errors spread evenly over `bias +- half`.
    fn spread(bias: f64, half: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| bias - half + 2.0 * half * i as f64 / (n - 1) as f64)
            .collect()
    }

    #[test]
    fn the_emulator_is_judged_per_bearer_on_its_bias() {
        // A jittered bearer scatters single runs by +-10 % about an unbiased model: the
        // median |error| is above 5 %, yet the bias's interval lies within the target.
        let jittered = spread(0.003, 0.10, 48);
        let (t, clauses) = per_bearer_target([
            ("gsm-csd", spread(0.01, 0.02, 48)),
            ("gprs-avg", jittered.clone()),
        ]);
        assert_eq!(t.verdict(), Verdict::Confirmed);
        assert!(
            clauses[1].starts_with("gprs-avg bias +0.3 % (95 % interval"),
            "{}",
            clauses[1]
        );
        assert!(
            clauses[1].contains("within the +-5 % target; median |error| 5."),
            "{}",
            clauses[1]
        );
        assert!(outside_target([("gprs-avg", jittered)]).is_empty());
        // A bearer whose every row is 8 % slow is biased beyond the target: one such
        // bearer contradicts the claim over every bearer, and the first screen names it.
        let slow = spread(0.08, 0.01, 48);
        let (t, clauses) =
            per_bearer_target([("gsm-csd", spread(0.0, 0.02, 48)), ("nb-iot", slow.clone())]);
        assert_eq!(t.verdict(), Verdict::Contradicted);
        assert!(
            clauses[1].contains("beyond the +-5 % target"),
            "{}",
            clauses[1]
        );
        assert_eq!(
            outside_target([("nb-iot", slow)]),
            vec!["nb-iot bias +8.0 % (beyond)"]
        );
        // An interval across the target decides nothing.
        let (t, _) = per_bearer_target([("gprs-avg", spread(0.04, 0.05, 12))]);
        assert_eq!(t.verdict(), Verdict::Inconclusive);
        // Below six rows every row decides: a jitter-free sweep of four rows within, or
        // one of its rows beyond.
        let (t, clauses) = per_bearer_target([
            ("herwono-2kbps", vec![0.0, 0.01, 0.0, -0.002]),
            ("gprs-avg", Vec::new()),
        ]);
        assert_eq!((t.verdict(), t.rows()), (Verdict::Confirmed, 1));
        assert!(
            clauses[0].contains("(fewer than six rows, every row within -0.2 to +1.0 %, within"),
            "{}",
            clauses[0]
        );
        let (t, _) = per_bearer_target([("herwono-2kbps", vec![0.0, 0.06, 0.0])]);
        assert_eq!(t.verdict(), Verdict::Inconclusive);
    }

    #[test]
    fn one_stopping_load_point_contradicts_a_load_test_model() {
        assert_eq!(interval_verdict(3, 2, 1), Verdict::Contradicted);
        assert_eq!(interval_verdict(3, 3, 0), Verdict::Confirmed);
        assert_eq!(interval_verdict(3, 2, 0), Verdict::Inconclusive);
        assert_eq!(interval_verdict(0, 0, 0), Verdict::Inconclusive);
    }

    #[test]
    fn a_set_is_confirmed_only_when_every_row_holds_and_refuted_by_one_that_fails() {
        let all = Tally::of([Some(true); 3]);
        assert_eq!(all.verdict(), Verdict::Confirmed);
        // One row failing beyond its margin is a counterexample the others cannot undo.
        let mixed = Tally::of([Some(true), Some(false), None]);
        assert_eq!(mixed.verdict(), Verdict::Contradicted);
        assert_eq!(
            Tally::of([Some(true), Some(true), Some(false)]).verdict(),
            Verdict::Contradicted
        );
        assert_eq!(
            mixed.text(),
            "holds beyond the margin in 1, fails beyond it in 1, undecided (within the margin) in 1 of 3"
        );
        assert_eq!(Tally::of([Some(false); 2]).verdict(), Verdict::Contradicted);
        assert_eq!(
            Tally::of([Some(true), None]).verdict(),
            Verdict::Inconclusive
        );
        assert_eq!(Tally::default().verdict(), Verdict::Inconclusive);
    }
}
