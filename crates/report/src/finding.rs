//! Findings: a claim, the evidence gathered for it, the verdict, and what kind of test
//! it was, with the badges the report shows for them.

/// What a finding concluded about its claim. The name is also the CSS class; the
/// words a reader sees depend on the finding's [`FindingKind`] ([`Finding::verdict_label`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Confirmed,
    Contradicted,
    Inconclusive,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Self::Confirmed => "confirmed",
            Self::Contradicted => "contradicted",
            Self::Inconclusive => "inconclusive",
        }
    }
}

/// What a finding tests. A study's claim checked against the study's data or our run is
/// not the same kind of result as our own model checked against our run, or our bearer
/// emulator checked against the model whose parameters it enforces: the last agrees by
/// construction unless the emulator is wrong, and says nothing about real bearers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    /// A claim, a source study's or an earlier measurement's, checked against the
    /// study's own published data or against this run.
    Claim,
    /// A model of ours (corrected equation, simulation, replay) against our run.
    ModelAgainstRun,
    /// Our emulator against our model: both enforce the same parameters.
    EmulatorAgainstModel,
    /// Whether our measurement method itself is sound (probes, bounds).
    Measurement,
}

impl FindingKind {
    /// Every kind, in the order the legend lists them.
    pub const ALL: [FindingKind; 4] = [
        FindingKind::Claim,
        FindingKind::ModelAgainstRun,
        FindingKind::EmulatorAgainstModel,
        FindingKind::Measurement,
    ];

    /// Short name, also the CSS class and the `summary.json` value.
    pub fn name(self) -> &'static str {
        match self {
            Self::Claim => "claim",
            Self::ModelAgainstRun => "our model vs our run",
            Self::EmulatorAgainstModel => "our emulator vs our model",
            Self::Measurement => "our measurement",
        }
    }

    pub(crate) fn css(self) -> &'static str {
        match self {
            Self::Claim => "claim",
            Self::ModelAgainstRun => "model",
            Self::EmulatorAgainstModel => "emulator",
            Self::Measurement => "measurement",
        }
    }

    /// What the verdict says for this kind: only a claim is "confirmed".
    fn verdict_words(self, verdict: Verdict) -> &'static str {
        use Verdict::*;
        match (self, verdict) {
            (_, Inconclusive) => "inconclusive",
            (Self::Claim, Confirmed) => "confirmed",
            (Self::Claim, Contradicted) => "contradicted",
            (Self::ModelAgainstRun, Confirmed) => "model holds",
            (Self::ModelAgainstRun, Contradicted) => "model fails",
            (Self::EmulatorAgainstModel, Confirmed) => "consistent",
            (Self::EmulatorAgainstModel, Contradicted) => "inconsistent",
            (Self::Measurement, Confirmed) => "sound",
            (Self::Measurement, Contradicted) => "measurement failed",
        }
    }
}

/// A claim, the evidence gathered here, the verdict, and what kind of test it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub claim: String,
    /// Plain text; blank lines separate paragraphs.
    pub evidence: String,
    pub verdict: Verdict,
    pub kind: FindingKind,
}

impl Finding {
    /// A finding on a claim; [`Finding::kind`] names another kind.
    pub fn new(claim: impl Into<String>, evidence: impl Into<String>, verdict: Verdict) -> Self {
        Self {
            claim: claim.into(),
            evidence: evidence.into(),
            verdict,
            kind: FindingKind::Claim,
        }
    }

    /// The same finding, of another kind.
    pub fn kind(mut self, kind: FindingKind) -> Self {
        self.kind = kind;
        self
    }

    /// The verdict in the words of the finding's kind (`confirmed`, `model holds`,
    /// `consistent`, ...).
    pub fn verdict_label(&self) -> &'static str {
        self.kind.verdict_words(self.verdict)
    }
}

pub(crate) fn finding_kind_explanation(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::Claim => "a claim, from a source study or an earlier measurement, checked against the study's own published data or against this run (verdict: confirmed or contradicted)",
        FindingKind::ModelAgainstRun => "a model of ours (a corrected equation, a simulation, a replay) against this run's measurements (model holds or fails)",
        FindingKind::EmulatorAgainstModel => "our bearer emulator against the model whose rate and traversal parameters it enforces: agreement shows the emulator is faithful, not that the model fits a real bearer (consistent or inconsistent)",
        FindingKind::Measurement => "whether our measurement method is sound (sound or failed)",
    }
}

pub(crate) fn finding_kind_badge(f: &Finding) -> String {
    format!(
        "<span class=\"test {}\">{}</span>",
        f.kind.css(),
        f.kind.name()
    )
}

pub(crate) fn verdict_badge(f: &Finding) -> String {
    format!(
        "<span class=\"verdict {}\">{}</span>",
        f.verdict.name(),
        f.verdict_label()
    )
}
