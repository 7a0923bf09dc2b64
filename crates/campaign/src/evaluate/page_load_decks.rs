//! Page-load time by deck size: decks of 1 to 30 KB of WML fetched in connection mode
//! through `gateway --wap`'s WTLS port over the emulated bearers, the Reply segmented by
//! WTP SAR (packets of [`Timers::segment_size`] octets in groups of
//! [`Timers::group_size`], each group acknowledged before the next leaves), beside a model
//! of that exchange.
//!
//! The model is Eq. 3.84's form (thesis section 3.3; `asymmetric_transmission_ms`): the
//! page's bytes in each direction at the bearer's rate, plus one mean one-way traversal
//! per leg that waits for the one before: Connect, ConnectReply, the Ack and Get, then per
//! group of the Reply its packets and, but for the last, its Ack: `2 + 2G` legs for `G`
//! groups. Packets of one group share a leg (they follow each other on the link).

use wtlsperf_bearer::LinkProfile;
use wtlsperf_models::stats::{median, percentile, Rank};
use wtlsperf_report::{Cell, Column, Provenance, Table};
use wtlsperf_wap::wtp::Timers;

use super::context::{Ctx, Mode};
use super::page_load_model::link_model_ms;
use wtlsperf_drivers::page_load::{PageJob, PageRun};

/// Deck sizes (KiB of WML at the origin) and runs of each per bearer, by mode. Smoke runs
/// none; quick two small decks once (a few seconds over GSM CSD, run beside the other
/// page loads).
pub fn plan(mode: Mode) -> (Vec<usize>, usize) {
    match mode {
        Mode::Smoke => (Vec::new(), 0),
        Mode::Quick => (vec![1, 5], 1),
        Mode::Full => (vec![1, 5, 10, 20, 30], 3),
    }
}

/// One row of `page_load_decks.csv`: one bearer and deck size.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DeckRow {
    pub bearer: String,
    pub case: String,
    /// The deck's WML text at the origin (KiB).
    pub deck_kb: usize,
    /// The Reply's body as delivered (WMLC, B).
    pub body_bytes: usize,
    /// WTP packets and groups the body takes (body over the segment size, packets over
    /// the group size).
    pub packets: usize,
    pub groups: usize,
    pub runs: usize,
    /// Runs that did not complete, and the first one's error (empty when none failed).
    pub failed_runs: usize,
    pub first_failure: String,
    /// From the Connect to the Reply's last byte, after the WTLS handshake (ms): median
    /// and range of the runs.
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// Datagrams and bytes of the page part on the link, per direction (first run).
    pub up_datagrams: u64,
    pub down_datagrams: u64,
    pub up_bytes: u64,
    pub down_bytes: u64,
    /// Downlink datagrams beyond the ConnectReply and the Reply's packets (first run):
    /// retransmissions by WTP's timers.
    pub extra_down_datagrams: i64,
    /// The model's legs (`2 + 2 * groups`) and its time with the run's bytes (ms).
    pub model_traversals: u32,
    pub model_ms: f64,
    /// (model - median) / median, %.
    pub model_error_pct: f64,
}

/// The deck rows of one bearer's runs, by deck size.
pub(super) fn summarise(
    link: &LinkProfile,
    work: &[PageJob],
    results: &[anyhow::Result<PageRun>],
) -> Vec<DeckRow> {
    let timers = Timers::default();
    let mut kbs: Vec<usize> = work.iter().filter_map(|j| j.deck_kb).collect();
    kbs.dedup();
    let mut rows = Vec::new();
    for kb in kbs {
        let failures: Vec<String> = work
            .iter()
            .zip(results)
            .filter(|(j, _)| j.deck_kb == Some(kb))
            .filter_map(|(_, r)| r.as_ref().err().map(|e| format!("{e:#}")))
            .collect();
        let runs: Vec<(&PageJob, &PageRun)> = work
            .iter()
            .zip(results)
            .filter(|(j, _)| j.deck_kb == Some(kb))
            .filter_map(|(j, r)| Some((j, r.as_ref().ok()?)))
            .collect();
        let ms: Vec<f64> = runs.iter().map(|(_, r)| r.page_ms).collect();
        let (Some((job, first)), Some(m)) = (runs.first(), median(&ms)) else {
            rows.push(DeckRow::failed(link, work, kb, failures));
            continue;
        };
        let packets = first.body_bytes.div_ceil(timers.segment_size.max(1)).max(1);
        let groups = packets.div_ceil(usize::from(timers.group_size.max(1)));
        let legs = 2 + 2 * u32::try_from(groups).unwrap_or(u32::MAX / 4);
        let model = link_model_ms(link, &first.page_link, legs);
        rows.push(DeckRow {
            bearer: link.name.clone(),
            case: job.case.to_string(),
            deck_kb: kb,
            body_bytes: first.body_bytes,
            packets,
            groups,
            runs: runs.len(),
            failed_runs: failures.len(),
            first_failure: failures.first().cloned().unwrap_or_default(),
            median_ms: m,
            min_ms: percentile(&ms, 0.0, Rank::Nearest).unwrap_or(f64::NAN),
            max_ms: percentile(&ms, 100.0, Rank::Nearest).unwrap_or(f64::NAN),
            up_datagrams: first.page_link.up_datagrams,
            down_datagrams: first.page_link.down_datagrams,
            up_bytes: first.page_link.up_bytes,
            down_bytes: first.page_link.down_bytes,
            extra_down_datagrams: first.page_link.down_datagrams as i64 - 1 - packets as i64,
            model_traversals: legs,
            model_ms: model,
            model_error_pct: 100.0 * (model - m) / m,
        });
    }
    rows
}

impl DeckRow {
    /// The row of a size none of whose runs completed: what failed, nothing measured.
    fn failed(link: &LinkProfile, work: &[PageJob], kb: usize, failures: Vec<String>) -> DeckRow {
        let case = work
            .iter()
            .find(|j| j.deck_kb == Some(kb))
            .map(|j| j.case.to_string());
        DeckRow {
            bearer: link.name.clone(),
            case: case.unwrap_or_default(),
            deck_kb: kb,
            body_bytes: 0,
            packets: 0,
            groups: 0,
            runs: 0,
            failed_runs: failures.len(),
            first_failure: failures.first().cloned().unwrap_or_default(),
            median_ms: f64::NAN,
            min_ms: f64::NAN,
            max_ms: f64::NAN,
            up_datagrams: 0,
            down_datagrams: 0,
            up_bytes: 0,
            down_bytes: 0,
            extra_down_datagrams: 0,
            model_traversals: 0,
            model_ms: f64::NAN,
            model_error_pct: f64::NAN,
        }
    }
}

/// The report's table of the deck series.
pub fn table(ctx: &Ctx, rows: &[DeckRow]) -> Table {
    let m = ctx.measured();
    let model = Provenance::modelled(
        "Eq. 3.84 (thesis section 3.3)",
        "the page's link bytes per direction, 2 + 2 x groups traversals",
    );
    let mut t = Table::new("page_load_decks", "Page-load time by deck size: WTP SAR over the bearers")
        .caption("Connection mode through gateway --wap's WTLS port, from the Connect to the Reply's last byte after the handshake; the Reply in 1400-octet packets, groups of 3 acknowledged one by one (WAP-224 Appendix A's IP timers). Extra = downlink datagrams beyond the ConnectReply and the Reply's packets.")
        .column(Column::label("bearer"))
        .column(Column::new("deck", Some("KB"), Provenance::derived("WML text at the origin")))
        .column(Column::new("body", Some("B"), m.clone()))
        .column(Column::new("groups", None, Provenance::derived("body / 1400, / 3")))
        .column(Column::new("runs", None, m.clone()))
        .column(Column::new("failed", None, m.clone()))
        .column(Column::new("median", Some("ms"), m.clone()))
        .column(Column::new("model", Some("ms"), model))
        .column(Column::new("model error", Some("%"), Provenance::derived("(model - median) / median")))
        .column(Column::new("extra", None, m));
    // A size none of whose runs completed shows its failures and no numbers.
    let known = |v: f64, d: usize| Cell::opt(v.is_finite().then_some(v), d);
    for r in rows {
        t = t.row(vec![
            Cell::text(&r.bearer),
            Cell::num(r.deck_kb as f64, 0),
            Cell::num(r.body_bytes as f64, 0),
            Cell::num(r.groups as f64, 0),
            Cell::num(r.runs as f64, 0),
            Cell::num(r.failed_runs as f64, 0),
            known(r.median_ms, 0),
            known(r.model_ms, 0),
            known(r.model_error_pct, 1),
            Cell::num(r.extra_down_datagrams as f64, 0),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtls::suite::Case;
    use wtlsperf_bearer::profile;

    use super::super::page_load::{Fetch, LinkTally};

    #[test]
    fn quick_mode_keeps_the_series_small_and_full_spans_1_to_30_kb() {
        assert!(plan(Mode::Smoke).0.is_empty());
        let (quick, runs) = plan(Mode::Quick);
        assert!(quick.len() <= 2 && quick.iter().all(|kb| *kb <= 5) && runs == 1);
        assert_eq!(plan(Mode::Full).0, [1, 5, 10, 20, 30]);
    }

    #[test]
    fn a_segmented_reply_counts_its_groups_and_their_acks_as_legs() {
        let link = profile("gsm-csd").unwrap();
        let case = Case::parse("rsa1024/rsa1024").unwrap();
        let job = |kb| PageJob {
            case,
            fetch: Fetch::Connection,
            deck_kb: Some(kb),
        };
        // 9 packets of 1400 octets: 3 groups, 8 legs; 11 downlink datagrams are the
        // ConnectReply, the 9 packets and one retransmission.
        let tally = LinkTally {
            up_datagrams: 4,
            down_datagrams: 11,
            up_bytes: 400,
            down_bytes: 13_000,
        };
        let run = |ms| PageRun {
            ms,
            datagrams: 0,
            bytes: 0,
            link: tally,
            body_bytes: 12_000,
            page_ms: ms,
            page_link: tally,
        };
        let work = [job(10), job(10), job(1)];
        let results = vec![
            Ok(run(9_000.0)),
            Ok(run(11_000.0)),
            Err(anyhow::anyhow!("lost")),
        ];
        let rows = summarise(&link, &work, &results);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[1].runs, rows[1].failed_runs),
            (0, 1),
            "1 KB: its run failed"
        );
        assert_eq!(rows[1].first_failure, "lost");
        assert!(rows[1].median_ms.is_nan());
        let r = &rows[0];
        assert_eq!((r.failed_runs, r.first_failure.as_str()), (0, ""));
        assert_eq!((r.packets, r.groups, r.model_traversals), (9, 3, 8));
        assert_eq!(
            (r.runs, r.median_ms, r.min_ms, r.max_ms),
            (2, 10_000.0, 9_000.0, 11_000.0)
        );
        assert_eq!(r.extra_down_datagrams, 1);
        let ovh = link.per_datagram_overhead_bytes as f64;
        let expect = (400.0 + 4.0 * ovh) * 8.0 / 9.6
            + (13_000.0 + 11.0 * ovh) * 8.0 / 9.6
            + 8.0 * link.traversal.mean_ms();
        assert!(
            (r.model_ms - expect).abs() < 1e-6,
            "{} {expect}",
            r.model_ms
        );
    }
}
