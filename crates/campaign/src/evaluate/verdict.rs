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
//!    row the claim covers. Where the rows disagree (some decided for, some against),
//!    the finding gives the verdict of each subset and its headline is "inconclusive".
//! 3. **A verdict decided by one profile, one library or one case says so** in its
//!    evidence; rows whose deciding number is an estimate (a cost borrowed from another
//!    device) are not judged and are counted apart.

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

    /// Rule 2: confirmed when every row holds beyond its margin, contradicted when every
    /// row fails beyond it, inconclusive otherwise (and for an empty set).
    pub fn verdict(&self) -> Verdict {
        let n = self.rows();
        if n == 0 {
            Verdict::Inconclusive
        } else if self.holds == n {
            Verdict::Confirmed
        } else if self.fails == n {
            Verdict::Contradicted
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
    fn a_set_is_confirmed_only_when_every_row_holds() {
        let all = Tally::of([Some(true); 3]);
        assert_eq!(all.verdict(), Verdict::Confirmed);
        let mixed = Tally::of([Some(true), Some(false), None]);
        assert_eq!(mixed.verdict(), Verdict::Inconclusive);
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
