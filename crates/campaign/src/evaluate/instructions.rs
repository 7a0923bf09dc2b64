//! Instructions executed per case (callgrind): the deterministic twin of part 1's CPU
//! times and bound ratio.
//!
//! The timings drift with the machine (10-20 % within minutes on a shared one); the
//! instruction counts of one seeded handshake do not ([`wtlsperf_drivers::counts`]). Every case and
//! variant part 1 measured is counted, two at a time. Without valgrind the part says so
//! and the columns stay empty: the rest of the evaluation does not depend on it.

use std::time::Instant;

use wtls::handshake::AuthMode;
use wtls::suite::Case;
use wtlsperf_report::{Cell, Column, Provenance, Section, Table};

use super::context::{Ctx, Mode};
use super::processing::{auth_mode, ProcessingResults};
use wtlsperf_drivers::counts::{self, CaseCounts, Planned, DEFAULT_SEED};
use wtlsperf_drivers::pki_store::PkiStore;
use wtlsperf_drivers::runner::Variant;

/// Counting processes at once: the machine the evaluation is sized for has two cores.
const JOBS: usize = 2;

/// The counts of every case part 1 measured, or why there are none.
#[derive(Debug, Clone, Default)]
pub struct InstructionResults {
    pub counts: Vec<CaseCounts>,
    /// Why nothing was counted (valgrind missing).
    pub not_counted: Option<String>,
    /// Wall time of the count pass (s).
    pub seconds: f64,
}

impl InstructionResults {
    /// The counts of one case, authentication and variant.
    pub fn find(&self, case: &Case, auth: AuthMode, variant: Variant) -> Option<&CaseCounts> {
        self.counts
            .iter()
            .find(|c| c.case == *case && c.auth == auth && c.variant == variant)
    }
}

/// Counts every case and variant of `p` on a PKI issued from the fixed seed under the
/// store's parameter numbering (so the handshakes are the ones part 1 timed).
pub fn run(
    ctx: &Ctx,
    store: &PkiStore,
    p: &ProcessingResults,
) -> anyhow::Result<InstructionResults> {
    if let Err(why) = counts::available() {
        return Ok(InstructionResults {
            not_counted: Some(why),
            ..InstructionResults::default()
        });
    }
    if ctx.mode == Mode::Quick {
        // A tenth of a quick run's 200 s: the counts are the timings' deterministic twin,
        // which the full run and `wtlsperf counts` give.
        return Ok(InstructionResults {
            not_counted: Some("a quick run does not count instructions (some 25 s under valgrind); the full run and `wtlsperf counts` do".into()),
            ..InstructionResults::default()
        });
    }
    let plan: Vec<Planned> = p
        .cases
        .iter()
        .chain(&p.variants)
        .map(|c| Planned {
            case: c.case,
            auth: auth_mode(c.auth),
            variant: c.variant,
        })
        .collect();
    let started = Instant::now();
    // The progress bar, not the context: the callback runs on the counting threads.
    let bar = ctx.progress.clone();
    let counts = counts::count(
        &plan,
        DEFAULT_SEED,
        store.numbering(),
        JOBS,
        None,
        move |done, total| bar.set_message(format!("instruction counts: {done}/{total} cases")),
    )?;
    Ok(InstructionResults {
        counts,
        not_counted: None,
        seconds: started.elapsed().as_secs_f64(),
    })
}

impl InstructionResults {
    /// The report's table of counts.
    pub fn section(&self, ctx: &Ctx) -> Section {
        let section = Section::new(
            "instructions",
            "Instructions per handshake (callgrind): the timings' deterministic twin",
        );
        if let Some(why) = &self.not_counted {
            return section.intro(format!("Not counted in this run: {why}."));
        }
        let m = ctx.measured();
        let mut t = Table::new("instructions", "Instructions of one handshake per case")
            .caption("One seeded handshake per case after a warm-up, virtual time, keys issued from the same seed: the same binary gives the same counts on every run. raw public-key: the server's public-key operations alone (the bound's denominator); ratio: server / raw public-key, the instruction twin of the bound ratio.")
            .column(Column::label("case"))
            .column(Column::label("auth"))
            .column(Column::label("variant"))
            .column(Column::new("server", Some("instructions"), m.clone()))
            .column(Column::new("client", Some("instructions"), m.clone()))
            .column(Column::new("raw public-key", Some("instructions"), m))
            .column(Column::new("ratio", None, Provenance::derived("server / raw public-key")));
        for c in &self.counts {
            t = t.row(vec![
                Cell::text(c.case.to_string()),
                Cell::text(c.auth.name()),
                Cell::text(c.variant.name()),
                Cell::num(c.server as f64, 0),
                Cell::num(c.client as f64, 0),
                Cell::opt(c.raw_pk.map(|r| r as f64), 0),
                Cell::opt(c.bound_ratio(), 3),
            ]);
        }
        section
            .intro(format!(
                "{} handshakes counted under valgrind's callgrind in {:.0} s ({JOBS} at a time).",
                self.counts.len(),
                self.seconds
            ))
            .table(t)
    }
}
