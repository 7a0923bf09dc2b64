//! Part 6: what the measurements confirm and contradict in the studies, each claim with
//! the number that decides it.

use wtlsperf_models::queue::Variant;
use wtlsperf_models::{Authentication, Side};
use wtlsperf_report::{Finding, Section, Verdict};

use super::processing::ProcessingResults;
use super::queue::{QueueResults, Setting};
use super::transmission::TransmissionResults;

/// The findings of this run.
pub fn build(p: &ProcessingResults, q: &QueueResults, t: &TransmissionResults) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some((m, sd)) = t.eq41_summary() {
        out.push(Finding::new(
            "Bayoglu 2004, Table 4.15: the GSM CSD one-way traversal delay is 391.3 ms (sd 90.0), from Eq. 4.1 on the 48 handshakes.",
            format!("Eq. 4.1 on Tables 4.11/4.12 (bytes x 8, R = 9600 bit/s, n = 6/4/5) gives {m:.1} ms, sd {sd:.1} ms."),
            if (m - 391.3).abs() < 0.05 && (sd - 90.0).abs() < 0.05 { Verdict::Confirmed } else { Verdict::Contradicted },
        ));
    }
    if let Some(noon) = t.eq42.iter().find(|r| r.slot == "12PM") {
        out.push(Finding::new(
            "Bayoglu 2004, Eq. 4.2 and Table 4.14: the GPRS traversal delay is T_RTT/2 minus the 64-byte ping's serialisation (64 x 8 / R).",
            format!(
                "12 PM slot: Eq. 4.2 as printed (bits) gives {:.1} ms; the published {:.1} ms is reproduced only with 64 / R (bytes over bit/s): {:.1} ms. All 7 slots behave alike, so the table was computed with the units slip.",
                noon.as_printed_ms, noon.published_ms, noon.bytes_over_bps_ms
            ),
            Verdict::Contradicted,
        ));
    }
    if let (Some(asp), Some(corr)) = (
        q.capacity(
            "cat3-g2",
            "163k",
            Authentication::Mutual,
            "published",
            Variant::AsPublished,
        ),
        q.capacity(
            "cat3-g2",
            "163k",
            Authentication::Mutual,
            "published",
            Variant::Corrected,
        ),
    ) {
        out.push(Finding::new(
            "Bayoglu 2004, section 4.2: 72 handshakes/s is the practical upper limit of category 3 group 2 (mutual).",
            format!(
                "Eq. 3.12-3.21 as printed give {asp:.1} handshakes/s at rho = 1 for 283k/163k, not 72. Counting the 4 jobs each handshake brings (and the gateway's ECDH the thesis leaves out) the same published service times give {corr:.1} handshakes/s."
            ),
            Verdict::Contradicted,
        ));
    }
    if let (Some(ce), Some(pe)) = (
        q.median_error(Setting::Bearer, |l| l.corrected_ms),
        q.median_error(Setting::Bearer, |l| l.as_published_ms),
    ) {
        let k = q.load.first().map(|l| l.jobs_per_handshake).unwrap_or(0.0);
        let (within, points) = q.within_15_percent(Setting::Bearer, |l| l.corrected_ms);
        out.push(Finding::new(
            "Bayoglu 2004, Eq. 3.12 with lambda = handshakes/s and X = the service time of one message predicts the gateway's waiting time.",
            format!(
                "Load test on the real gateway (one worker, rho <= 0.8, clients answering after an emulated bearer round trip of {rt} ms mean): the corrected model (k = {k:.1} jobs/handshake, k x lambda) is within 15 % at {within} of {points} points, median |error| {:.0} %, worst {:.0} %; the model as published has median |error| {:.0} %.",
                ce * 100.0,
                q.max_error(Setting::Bearer, |l| l.corrected_ms).unwrap_or(f64::NAN) * 100.0,
                pe * 100.0,
                rt = super::queue::reality::BEARER_ROUND_TRIP_MS,
            ),
            if ce < pe { Verdict::Contradicted } else { Verdict::Inconclusive },
        ));
    }
    let undisturbed = q.undisturbed_errors();
    if let (Some(med), Some(worst), Some(share)) = (
        wtlsperf_models::stats::median(&undisturbed),
        undisturbed.iter().copied().max_by(f64::total_cmp),
        q.undisturbed_share_median(),
    ) {
        let within = undisturbed.iter().filter(|&&e| e <= 0.15).count();
        let intervals = q.undisturbed_intervals();
        let one_law = q.undisturbed_one_law_errors();
        let one_within = one_law.iter().filter(|&&e| e <= 0.15).count();
        let bearer = || q.load.iter().filter(|l| Setting::of(l) == Setting::Bearer);
        let delivery_us: Vec<f64> = bearer()
            .filter_map(|l| Some(l.undisturbed_opening_delivery_ms? * 1e3))
            .collect();
        let (stalls, stalled_ms, gen, gen_ms): (usize, f64, usize, f64) =
            bearer().fold((0, 0.0, 0, 0.0), |a, l| {
                (
                    a.0 + l.worker_stalls,
                    a.1 + l.worker_stall_ms,
                    a.2 + l.generator_stalls,
                    a.3 + l.generator_stall_ms,
                )
            });
        let (held, held_ms): (usize, f64) = bearer().fold((0, 0.0), |a, l| {
            (a.0 + l.delivery_stalls, a.1 + l.delivery_stall_ms)
        });
        out.push(Finding::new(
            "The corrected Eq. 3.12 (k x lambda, per-job moments) predicts the mean wait of the gateway's queue.",
            format!(
                "{} Over the bearer-setting runs the gateway's worker was off its core while it had work {stalls} times ({stalled_ms:.0} ms in all) and the load generator {gen} times ({gen_ms:.0} ms; its sends due meanwhile then leave in a burst), and datagrams were held on their way to a free worker {held} times ({held_ms:.0} ms; the kernel's receive backlog). Leaving out every job whose time at the gateway, arrival to end of occupancy, met such a stall or the settling time after it keeps a median {:.0} % of each run's jobs, over which the corrected model is within 15 % at {within} of {} points (rho <= 0.8), median |error| {:.0} %, worst {:.0} %; the measured mean waits' 95 % batch-means intervals are +-{:.0} % (median; widest +-{:.0} %). The model counts the worker's delivery of a job that finds it idle (from the kernel's timestamp to the worker; {:.1} us on average, median over the points) as worker time the jobs behind it wait for; with one occupancy law for every job, as Eq. 3.12 has it, it is within 15 % at {one_within} of {} points, median |error| {:.0} %.",
                if worst <= 0.15 {
                    "Yes, once the shared machine's interruptions are read apart."
                } else if within * 2 > undisturbed.len() {
                    "At most points, once the shared machine's interruptions are read apart."
                } else {
                    "Not in this run, even with the shared machine's interruptions read apart."
                },
                share * 100.0,
                undisturbed.len(),
                med * 100.0,
                worst * 100.0,
                wtlsperf_models::stats::median(&intervals).unwrap_or(f64::NAN) * 100.0,
                intervals.iter().copied().fold(f64::NAN, f64::max) * 100.0,
                wtlsperf_models::stats::median(&delivery_us).unwrap_or(f64::NAN),
                one_law.len(),
                wtlsperf_models::stats::median(&one_law).unwrap_or(f64::NAN) * 100.0,
            ),
            if worst <= 0.15 { Verdict::Confirmed } else { Verdict::Inconclusive },
        ));
    }
    if let (Some(chain), Some(lo)) = (
        q.median_error(Setting::Loopback, |l| l.chain_ms),
        q.median_error(Setting::Loopback, |l| l.corrected_ms),
    ) {
        out.push(Finding::new(
            "The jobs of a handshake reach the gateway as independent Poisson arrivals (the premise of Eq. 3.12, published and corrected alike).",
            format!(
                "Only when a round trip separates them. On bare loopback a handshake's key-exchange job arrives some 10 us after its ClientHello job was served, so when the gateway is busy it is held back, and the corrected P-K model misses the measured wait by {:.0} % (median |error|). A simulation of handshakes as job chains, fed with the same runs' measured jobs and think time, has median |error| {:.0} % (worst {:.0} %) there.",
                lo * 100.0,
                chain * 100.0,
                q.max_error(Setting::Loopback, |l| l.chain_ms).unwrap_or(f64::NAN) * 100.0,
            ),
            if chain < lo { Verdict::Contradicted } else { Verdict::Inconclusive },
        ));
    }
    if let (Some(rb), Some(rl)) = (
        q.median_error(Setting::Bearer, |l| l.replay_ms),
        q.median_error(Setting::Loopback, |l| l.replay_ms),
    ) {
        out.push(Finding::new(
            "The gateway behaves as the single FIFO server the queue models assume.",
            format!(
                "A FIFO server replaying each run's own arrival instants and job occupancies (no assumption on the arrivals) matches the measured queueing wait to a median |error| of {:.0} % with the bearer round trip (worst {:.0} %) and {:.0} % on loopback (worst {:.0} %). Where the replay matches and P-K misses, the difference lies in the arrival stream (on loopback a handshake's jobs arrive in step with the queue; with the emulated bearer each answer is a delayed copy of its ClientHello). Where the replay misses too, jobs waited longer than a FIFO server with the measured occupancies would make them: the worker was off its core while idle (the stalls of the finding on the corrected model), which no queue model of the gateway holds.",
                rb * 100.0,
                q.max_error(Setting::Bearer, |l| l.replay_ms).unwrap_or(f64::NAN) * 100.0,
                rl * 100.0,
                q.max_error(Setting::Loopback, |l| l.replay_ms).unwrap_or(f64::NAN) * 100.0,
            ),
            if rb.max(rl) <= 0.15 { Verdict::Confirmed } else { Verdict::Inconclusive },
        ));
    }
    if q.load.is_empty() {
        if let Some(note) = &q.load_note {
            out.push(Finding::new(
            "Bayoglu 2004, Eq. 3.12 as published predicts the gateway's waiting time.",
            format!("Not decided in this run: {note}. The corrected capacities above are k times lower."),
            Verdict::Inconclusive,
        ));
        }
    }
    out.push(Finding::new(
        "Bayoglu 2004, Eq. 3.21: the gateway's queue jobs of a mutual ECDH_ECDSA handshake are the client's messages; the key exchange term is absent.",
        "The gateway still computes the ECDH premaster secret from the client's certified key (T_M_S_CKX is 16-35 % of T_PD_S in Table 4.5); the corrected model charges it to the client Certificate job, the published one drops it.".to_string(),
        Verdict::Contradicted,
    ));
    if let Some((case, r)) = p.worst_bound_ratio() {
        out.push(Finding::new(
            "A handshake's gateway CPU time is bounded below by its public-key operations.",
            format!("Worst bound ratio (gateway CPU / raw PK operations of the same keys) is {r:.2} for {case}; every case stays above 1."),
            if p.cases.iter().filter_map(|c| c.bound_ratio).all(|b| b >= 0.95) { Verdict::Confirmed } else { Verdict::Contradicted },
        ));
    }
    if let Some(o) = p.probe_overhead_pct() {
        out.push(Finding::new(
            "The per-message probes do not distort what they measure.",
            format!("Median probe overhead over the cases: {o:.1} % of the handshake's CPU time (probe on vs off, interleaved)."),
            if o.abs() < 5.0 { Verdict::Confirmed } else { Verdict::Inconclusive },
        ));
    }
    if let (Some(c), Some(s)) = (
        p.median_speedup(Side::Client),
        p.median_speedup(Side::Server),
    ) {
        out.push(Finding::new(
            "Bayoglu 2004, section 4.1: client processing on the phone dominates the handshake; the gateway is two orders of magnitude faster.",
            format!("Median published/ours: client {c:.0}x (Nokia 7650 vs this machine), gateway {s:.0}x (Pentium 4 vs this machine). The relative order of the cases is what carries over, not the absolute times."),
            Verdict::Confirmed,
        ));
    }
    if let Some(e) = t.model_error() {
        out.push(Finding::new(
            "Bayoglu 2004, Eq. 3.84: transmission time over a slow bearer is L/R plus one traversal per message crossing.",
            format!("Real handshakes through the emulated bearers: median |model - measured| / measured = {:.1} % (target 5 %).", e * 100.0),
            if e <= 0.05 { Verdict::Confirmed } else { Verdict::Inconclusive },
        ));
    }
    out
}

/// The findings section.
pub fn section(findings: &[Finding]) -> Section {
    let mut s = Section::new("findings", "Findings").intro(
        "What this run confirms and contradicts in the source studies, each with the number that decides it.",
    );
    for f in findings {
        s = s.finding(f.clone());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::queue::published_rows;
    use crate::evaluate::transmission::{eq_4_1_on_thesis_data, eq_4_2_on_thesis_data};

    #[test]
    fn published_data_alone_gives_the_known_verdicts() {
        let (rows, capacities) = published_rows();
        let q = QueueResults {
            rows,
            load: vec![],
            capacities,
            load_note: Some("no load".into()),
        };
        let t = TransmissionResults {
            eq41: eq_4_1_on_thesis_data().unwrap(),
            eq42: eq_4_2_on_thesis_data().unwrap(),
            bearer: vec![],
            bearer_note: None,
            cases: vec![],
            variants: vec![],
        };
        let p = ProcessingResults {
            cases: vec![],
            variants: vec![],
            skipped: vec![],
            instructions: Default::default(),
        };
        let f = build(&p, &q, &t);
        assert_eq!(f[0].verdict, Verdict::Confirmed);
        assert!(f[0].evidence.contains("391.3"));
        assert!(f[1].evidence.contains("342.9") && f[1].evidence.contains("376.1"));
        assert!(f[2].evidence.contains("79.1"));
        assert!(f.iter().any(|f| f.verdict == Verdict::Inconclusive));
    }
}
