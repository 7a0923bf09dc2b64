//! Caveats written once: a paragraph that several findings' evidence repeats word for
//! word (the nominal-bearer-rates sentence every finding over the modern bearers
//! carries, say) is taken out of each finding's evidence and kept once as a shared
//! [`Caveat`], which the finding refers to. The report writes it once above the contents,
//! `summary.json` once under `caveats`, and `findings.csv` names it in each finding's
//! `caveats` column.
//!
//! The parts keep writing their evidence whole, each finding readable on its own where
//! it is built; the sharing is decided here, over every finding of the run, so that a
//! caveat a new finding repeats is shared without anyone having to remember to.

use wtlsperf_report::{Caveat, Finding};

/// A paragraph shorter than this is a phrase, not a caveat, even if repeated.
const MIN_CAVEAT_CHARS: usize = 80;

/// The findings with every paragraph that two or more of them repeat taken out of their
/// evidence and attached as a shared caveat (ids `caveat-1`, `caveat-2`, ... in order of
/// first appearance).
pub fn share(mut findings: Vec<Finding>) -> Vec<Finding> {
    let mut repeated: Vec<(String, usize)> = Vec::new();
    for f in &findings {
        let mut seen_here: Vec<&str> = Vec::new();
        for p in paragraphs(&f.evidence) {
            if p.len() < MIN_CAVEAT_CHARS || seen_here.contains(&p) {
                continue;
            }
            seen_here.push(p);
            match repeated.iter_mut().find(|(text, _)| text == p) {
                Some((_, n)) => *n += 1,
                None => repeated.push((p.to_owned(), 1)),
            }
        }
    }
    let mut caveats: Vec<Caveat> = Vec::new();
    for (text, _) in repeated.into_iter().filter(|(_, n)| *n >= 2) {
        let mut title = title_of(&text);
        // Two caveats of one title (the nominal rates of two sets of bearers): the later
        // is told apart by the words only it has.
        if let Some(earlier) = caveats.iter().find(|c| c.title == title) {
            let theirs: Vec<&str> = earlier.text.split_whitespace().collect();
            let own: Vec<String> = text
                .split_whitespace()
                .filter(|w| !theirs.contains(w))
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
                .filter(|w| !w.is_empty())
                .take(3)
                .collect();
            title = if own.is_empty() {
                format!("{title} ({})", caveats.len() + 1)
            } else {
                format!("{title}, with {}", own.join(" "))
            };
        }
        caveats.push(Caveat::new(format!("{}", caveats.len() + 1), title, text));
    }
    for f in &mut findings {
        let kept: Vec<&str> = paragraphs(&f.evidence)
            .filter(|p| !caveats.iter().any(|c| c.text == *p))
            .collect();
        let shared: Vec<Caveat> = caveats
            .iter()
            .filter(|c| paragraphs(&f.evidence).any(|p| p == c.text))
            .cloned()
            .collect();
        if shared.is_empty() {
            continue;
        }
        f.evidence = kept.join("\n\n");
        for c in shared {
            if !f.caveats.iter().any(|o| o.id == c.id) {
                f.caveats.push(c);
            }
        }
    }
    findings
}

/// The evidence's paragraphs (blank lines separate them), trimmed.
fn paragraphs(text: &str) -> impl Iterator<Item = &str> {
    text.split("\n\n").map(str::trim).filter(|p| !p.is_empty())
}

/// A short title: the words before the first colon when there are few of them ("Nominal
/// bearer rates"), else the first six words.
fn title_of(text: &str) -> String {
    if let Some((head, _)) = text.split_once(':') {
        if head.split_whitespace().count() <= 6 {
            return head.trim().to_owned();
        }
    }
    let words: Vec<&str> = text.split_whitespace().take(6).collect();
    format!("{} ...", words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtlsperf_report::Verdict;

    const NOTE: &str = "Nominal bearer rates: lte-m (peak); nb-iot (peak). These profiles are typical figures, not measurements.";

    #[test]
    fn a_paragraph_repeated_in_findings_becomes_one_caveat() {
        let findings = vec![
            Finding::new(
                "a",
                format!("First evidence.\n\n{NOTE}"),
                Verdict::Confirmed,
            ),
            Finding::new(
                "b",
                format!("Second evidence.\n\n{NOTE}"),
                Verdict::Inconclusive,
            ),
            Finding::new("c", "Alone, with nothing shared.", Verdict::Contradicted),
        ];
        let shared = share(findings);
        assert_eq!(shared[0].evidence, "First evidence.");
        assert_eq!(shared[1].evidence, "Second evidence.");
        assert_eq!(shared[0].caveats, shared[1].caveats);
        assert_eq!(shared[0].caveats.len(), 1);
        let c = &shared[0].caveats[0];
        assert_eq!(
            (c.id.as_str(), c.title.as_str(), c.text.as_str()),
            ("1", "Nominal bearer rates", NOTE)
        );
        assert!(shared[2].caveats.is_empty());
        // Everything else of a finding is kept.
        assert_eq!(
            (shared[1].claim.as_str(), shared[1].verdict),
            ("b", Verdict::Inconclusive)
        );
    }

    #[test]
    fn caveats_of_one_title_are_told_apart() {
        let other = NOTE.replace("nb-iot (peak).", "nb-iot (peak); nb-iot-ntn-geo (peak).");
        let shared = share(vec![
            Finding::new("a", NOTE, Verdict::Confirmed),
            Finding::new("b", NOTE, Verdict::Confirmed),
            Finding::new("c", other.clone(), Verdict::Confirmed),
            Finding::new("d", other, Verdict::Confirmed),
        ]);
        assert_eq!(shared[0].caveats[0].title, "Nominal bearer rates");
        assert_eq!(
            shared[2].caveats[0].title,
            "Nominal bearer rates, with nb-iot-ntn-geo"
        );
        assert_ne!(shared[0].caveats[0].id, shared[2].caveats[0].id);
    }

    #[test]
    fn a_paragraph_of_one_finding_stays_in_its_evidence() {
        let once = share(vec![Finding::new(
            "a",
            format!("E.\n\n{NOTE}"),
            Verdict::Confirmed,
        )]);
        assert!(once[0].evidence.ends_with(NOTE) && once[0].caveats.is_empty());
    }
}
