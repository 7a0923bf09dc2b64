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
//!    a bearer holds when the median error of its rows is within the 5 % target, and the
//!    set follows rule 2; a median pooled over bearers that disagree does not decide.
//!    The one exception is the page loads with WTP on the link (`page_load_model`): their
//!    rows add WTP's acknowledgements and timers, which Eq. 3.84 has no term for, and
//!    fetches of different lengths, so each row is judged within 15 %, as it says.

use wtlsperf_report::Verdict;

/// The tolerance for comparisons between modelled (or published) numbers, relative:
/// the flight model reproduces the emulated handshakes within 5 % (median, the
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

    /// `holds in 20, fails in 22, within the margin in 0 of 42`.
    pub fn text(&self) -> String {
        format!(
            "holds beyond the margin in {}, fails beyond it in {}, within it in {} of {}",
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

/// The emulator findings' target (rule 5): the flight model is to reproduce the emulated
/// handshakes within 5 % (median) on each bearer.
pub const BEARER_TARGET: f64 = 0.05;

/// Rule 5 in words, for the findings of our emulator against our model (each names the
/// error it takes and appends its set).
pub const PER_BEARER_RULE: &str = "per bearer: the bearer holds when the median relative error of the model against the measured durations over its rows is at most the 5 % target and fails above it; confirmed (the emulator is consistent with the model) when every bearer holds, contradicted when one bearer fails (a counterexample to a claim over every bearer), otherwise inconclusive with each bearer's result; a median pooled over bearers, protocols or devices is reported, not judged";

/// Rule 5: each bearer's median |error| against [`BEARER_TARGET`]: the tally (a bearer
/// with no rows is not counted) and one clause per bearer, `gprs-avg 5.4 % (outside the
/// 5 % target)`.
pub fn per_bearer_target<'a>(
    medians: impl IntoIterator<Item = (&'a str, Option<f64>)>,
) -> (Tally, Vec<String>) {
    let mut decisions = Vec::new();
    let mut clauses = Vec::new();
    for (bearer, m) in medians {
        let Some(m) = m else { continue };
        let holds = m <= BEARER_TARGET;
        decisions.push(Some(holds));
        clauses.push(format!(
            "{bearer} {:.1} % ({} the 5 % target)",
            m * 100.0,
            if holds { "within" } else { "outside" }
        ));
    }
    (Tally::of(decisions), clauses)
}

/// The bearers of rule 5 whose median |error| is above [`BEARER_TARGET`], as
/// `gprs-avg 5.4 %`: the first screen names them beside a pooled median.
pub fn outside_target<'a>(
    medians: impl IntoIterator<Item = (&'a str, Option<f64>)>,
) -> Vec<String> {
    medians
        .into_iter()
        .filter_map(|(bearer, m)| {
            m.filter(|&m| m > BEARER_TARGET)
                .map(|m| format!("{bearer} {:.1} %", m * 100.0))
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

    #[test]
    fn the_emulator_is_judged_per_bearer() {
        // GSM CSD within the target, GPRS at 5.4 %: the pooled median would be within,
        // but GPRS is a bearer where the claim fails, so it is contradicted and named.
        let (t, clauses) = per_bearer_target([("gsm-csd", Some(0.021)), ("gprs-avg", Some(0.054))]);
        assert_eq!(t.verdict(), Verdict::Contradicted);
        assert_eq!(clauses[1], "gprs-avg 5.4 % (outside the 5 % target)");
        let (t, _) = per_bearer_target([("gsm-csd", Some(0.02)), ("gprs-avg", Some(0.03))]);
        assert_eq!(t.verdict(), Verdict::Confirmed);
        let (t, _) = per_bearer_target([("gsm-csd", Some(0.07)), ("gprs-avg", None)]);
        assert_eq!((t.verdict(), t.rows()), (Verdict::Contradicted, 1));
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
            "holds beyond the margin in 1, fails beyond it in 1, within it in 1 of 3"
        );
        assert_eq!(Tally::of([Some(false); 2]).verdict(), Verdict::Contradicted);
        assert_eq!(
            Tally::of([Some(true), None]).verdict(),
            Verdict::Inconclusive
        );
        assert_eq!(Tally::default().verdict(), Verdict::Inconclusive);
    }
}
