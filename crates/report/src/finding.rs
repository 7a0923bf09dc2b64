//! Findings: a claim, the evidence gathered for it, the verdict, and what kind of test
//! it was, with the badges the report shows for them.

use crate::provenance::ProvenanceKind;

/// What a finding concluded about its claim. Its name is the one word the report,
/// `findings.csv` and `summary.json` all use, whatever the finding's [`FindingKind`]:
/// the kind is shown beside it and says what the word means there (for our emulator
/// against our model, "confirmed" says the emulator is faithful to the model, not that
/// the model fits a real bearer). The name is also the CSS class.
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

/// A source study, for the passage a finding's claim rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Study {
    /// Bayoglu, M.Sc. thesis, METU 2004: the WTLS handshake's performance.
    Bayoglu2004,
    /// Herwono and Liebhardt 2001: the performance of WAP's security protocols.
    HerwonoLiebhardt2001Wap,
    /// Herwono and Liebhardt 2001: WTLS in mobile commerce (signText).
    HerwonoLiebhardt2001Mcommerce,
    /// Levi and Savas 2003: public-key operations in WTLS.
    LeviSavas2003,
}

impl Study {
    /// Every study, in the order the seeds list them.
    pub const ALL: [Study; 4] = [
        Study::Bayoglu2004,
        Study::HerwonoLiebhardt2001Wap,
        Study::HerwonoLiebhardt2001Mcommerce,
        Study::LeviSavas2003,
    ];

    /// How the report cites the study.
    pub fn citation(self) -> &'static str {
        match self {
            Self::Bayoglu2004 => "Bayoglu 2004",
            Self::HerwonoLiebhardt2001Wap => "Herwono-Liebhardt 2001 (WAP security protocols)",
            Self::HerwonoLiebhardt2001Mcommerce => "Herwono-Liebhardt 2001 (WTLS in m-commerce)",
            Self::LeviSavas2003 => "Levi-Savas 2003",
        }
    }

    /// The file name of the study's text under `data/seeds/`.
    pub fn seed_file(self) -> &'static str {
        match self {
            Self::Bayoglu2004 => "bayoglu2004_wtls_handshake_thesis.txt",
            Self::HerwonoLiebhardt2001Wap => "herwono_liebhardt2001_wap_security_protocols.txt",
            Self::HerwonoLiebhardt2001Mcommerce => "herwono_liebhardt2001_wtls_mcommerce.txt",
            Self::LeviSavas2003 => "levi_savas2003_pk_operations_in_wtls.txt",
        }
    }
}

/// What an attribution to a study rests on: the study, the place in it (section, table,
/// equation) and the passage quoted word for word, so that a test can find the passage
/// in the study's text and a reader can find it in the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passage {
    pub study: Study,
    pub place: &'static str,
    pub quote: &'static str,
}

impl Passage {
    /// `Bayoglu 2004, section 4.4: "..."`.
    pub fn cite(&self) -> String {
        format!(
            "{}, {}: \"{}\"",
            self.study.citation(),
            self.place,
            self.quote
        )
    }
}

/// What a finding tests. A study's claim checked against the study's data or our run is
/// not the same kind of result as a hypothesis of ours, our own model checked against our
/// run, or our bearer emulator checked against the model whose parameters it enforces:
/// the last agrees by construction unless the emulator is wrong, and says nothing about
/// real bearers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    /// A source study's statement, quoted with its place ([`Finding::passage`]), checked
    /// against the study's own published data or against this run.
    StudyClaim,
    /// A statement of ours (about our implementation, our measurement method, today's
    /// protocols or an earlier run), checked against this run.
    Hypothesis,
    /// A model of ours (corrected equation, simulation, replay) against our run.
    ModelAgainstRun,
    /// Our emulator against our model: both enforce the same parameters.
    EmulatorAgainstModel,
    /// A model of ours fitted to and checked against a study's published data (the
    /// passage the data and the model's form come from is quoted): it tests our model,
    /// not a statement of the study's, where the study's own statement holds by
    /// definition (a sum its equation defines).
    ModelAgainstStudyData,
}

impl FindingKind {
    /// Every kind, in the order the legend lists them.
    pub const ALL: [FindingKind; 5] = [
        FindingKind::StudyClaim,
        FindingKind::Hypothesis,
        FindingKind::ModelAgainstStudyData,
        FindingKind::ModelAgainstRun,
        FindingKind::EmulatorAgainstModel,
    ];

    /// Short name, also the `summary.json` and `findings.csv` value.
    pub fn name(self) -> &'static str {
        match self {
            Self::StudyClaim => "study's claim",
            Self::Hypothesis => "our hypothesis",
            Self::ModelAgainstRun => "our model vs our run",
            Self::EmulatorAgainstModel => "our emulator vs our model",
            Self::ModelAgainstStudyData => "our model vs the study's data",
        }
    }

    pub(crate) fn css(self) -> &'static str {
        match self {
            Self::StudyClaim => "claim",
            Self::Hypothesis => "hypothesis",
            Self::ModelAgainstRun => "model",
            Self::EmulatorAgainstModel => "emulator",
            Self::ModelAgainstStudyData => "model-study",
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
    /// The rule that decided the verdict, with its threshold (interval or tolerance) and
    /// the set of rows it was applied to.
    pub rule: String,
    /// The passage of the study the claim rests on; set exactly for a study's claim and
    /// for our model against the study's data (the passage its data and form come from).
    pub passage: Option<Passage>,
    /// Caveats shared with other findings, written once in the report and referred to.
    pub caveats: Vec<Caveat>,
    /// The kinds of figure the verdict rests on, where they differ from its kind's usual
    /// ones ([`Finding::rests_on`]).
    pub evidence_kinds: Option<Vec<ProvenanceKind>>,
}

/// A caveat several findings share (e.g. that a bearer's rates are nominal): the report
/// writes its text once and each finding refers to it by title, so that the same
/// paragraph is not repeated under every finding it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caveat {
    /// Anchor and reference (`caveat-<id>`); `[A-Za-z0-9_.-]`.
    pub id: String,
    pub title: String,
    pub text: String,
}

impl Caveat {
    pub fn new(id: impl Into<String>, title: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            text: text.into(),
        }
    }
}

impl Finding {
    /// A finding on a hypothesis of ours; [`Finding::study`] makes it a study's claim and
    /// [`Finding::kind`] one of our models or our emulator.
    pub fn new(claim: impl Into<String>, evidence: impl Into<String>, verdict: Verdict) -> Self {
        Self {
            claim: claim.into(),
            evidence: evidence.into(),
            verdict,
            kind: FindingKind::Hypothesis,
            rule: String::new(),
            passage: None,
            caveats: Vec::new(),
            evidence_kinds: None,
        }
    }

    /// The same finding as a study's claim, resting on `passage`: the only way to make a
    /// finding a study's claim, so that none is without its quotation.
    pub fn study(mut self, passage: Passage) -> Self {
        self.kind = FindingKind::StudyClaim;
        self.passage = Some(passage);
        self
    }

    /// The same finding as our model against a study's published data, quoting the
    /// passage the model's form and data come from: the only way to make one, so that
    /// none is without its source.
    pub fn against_study_data(mut self, passage: Passage) -> Self {
        self.kind = FindingKind::ModelAgainstStudyData;
        self.passage = Some(passage);
        self
    }

    /// The same finding, of one of our own kinds (a study's claim needs
    /// [`Finding::study`], our model against a study's data [`Finding::against_study_data`]).
    pub fn kind(mut self, kind: FindingKind) -> Self {
        let quoted = [FindingKind::StudyClaim, FindingKind::ModelAgainstStudyData];
        debug_assert!(
            !quoted.contains(&kind),
            "use Finding::study or against_study_data"
        );
        if !quoted.contains(&kind) {
            self.kind = kind;
            self.passage = None;
        }
        self
    }

    /// The same finding with the rule that decided its verdict.
    pub fn rule(mut self, rule: impl Into<String>) -> Self {
        self.rule = rule.into();
        self
    }

    /// The same finding with a shared caveat (written once in the report); a caveat
    /// already carried is not added twice.
    pub fn caveat(mut self, caveat: Caveat) -> Self {
        if !self.caveats.iter().any(|c| c.id == caveat.id) {
            self.caveats.push(caveat);
        }
        self
    }

    /// The same finding, resting on figures of these kinds (in the order they weigh):
    /// for a study's claim judged on the study's own tables alone, `[Published]`; for a
    /// claim of ours judged on a model alone, `[Modelled]`.
    pub fn rests_on(mut self, kinds: &[ProvenanceKind]) -> Self {
        self.evidence_kinds = Some(kinds.to_vec());
        self
    }

    /// The kinds of figure the verdict rests on: those set by [`Finding::rests_on`], or
    /// its kind's usual ones (a study's claim: the study's published figures and this
    /// run's measurements; a hypothesis: measurements; a model or the emulator against
    /// a run: the model's figures and the measurements).
    pub fn evidence(&self) -> Vec<ProvenanceKind> {
        use ProvenanceKind::*;
        self.evidence_kinds
            .clone()
            .unwrap_or_else(|| match self.kind {
                FindingKind::StudyClaim => vec![Published, Measured],
                FindingKind::ModelAgainstStudyData => vec![Published, Modelled],
                FindingKind::Hypothesis => vec![Measured],
                FindingKind::ModelAgainstRun | FindingKind::EmulatorAgainstModel => {
                    vec![Modelled, Measured]
                }
            })
    }

    /// [`Finding::evidence`] in words, `+`-separated: the `findings.csv` and
    /// `summary.json` value.
    pub fn evidence_label(&self) -> String {
        self.evidence()
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join("+")
    }

    /// The verdict's word: the same in the report, `findings.csv` and `summary.json`.
    pub fn verdict_label(&self) -> &'static str {
        self.verdict.name()
    }
}

pub(crate) fn finding_kind_explanation(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::StudyClaim => "a source study's statement, quoted with its section, table or equation, checked against the study's own published data or against this run (confirmed, contradicted, or inconclusive where the difference stays within its margin)",
        FindingKind::Hypothesis => "a statement of ours (about our implementation, our measurement method, today's protocols or an earlier run of ours) checked against this run (confirmed, contradicted, or inconclusive where the difference stays within its margin)",
        FindingKind::ModelAgainstRun => "a model of ours (a corrected equation, a simulation, a replay) against this run's measurements (confirmed: the model holds; contradicted: it fails)",
        FindingKind::ModelAgainstStudyData => "a model of ours fitted to and checked against a source study's published data, quoting the passage its form and data come from (confirmed: the model reproduces the data; contradicted: it does not); it tests our model, not the study's statement",
        FindingKind::EmulatorAgainstModel => "our bearer emulator against the model whose rate and traversal parameters it enforces (confirmed: the emulator is faithful to the model, which says nothing about how well the model fits a real bearer; contradicted: it is not)",
    }
}

pub(crate) fn finding_kind_badge(f: &Finding) -> String {
    format!(
        "<span class=\"test {}\">{}</span>",
        f.kind.css(),
        f.kind.name()
    )
}

/// The kinds a verdict rests on, each in its provenance colour.
pub(crate) fn evidence_badges(f: &Finding) -> String {
    f.evidence()
        .iter()
        .map(|k| format!("<span class=\"key prov-{0}\">{0}</span>", k.name()))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn verdict_badge(f: &Finding) -> String {
    format!(
        "<span class=\"verdict {}\">{}</span>",
        f.verdict.name(),
        f.verdict_label()
    )
}
