//! The report section of part 2: tables and figures rendered from the results, no
//! measurement here.

use wtlsperf_models::queue::Variant;
use wtlsperf_models::stats::relative_error;
use wtlsperf_models::Authentication;
use wtlsperf_report::{
    Axis, Cell, Column, Figure, LineChart, Point, Provenance, Section, Series, Table,
};

use super::{
    auth_name, category3_groups, mixtures, outside_both, reality, Group, Inputs, LoadPoint,
    QueueModel, QueueResults, QueueRow, RowVariant, Setting,
};
use crate::evaluate::context::Ctx;

impl QueueResults {
    /// The report section of part 2.
    pub fn section(&self, ctx: &Ctx) -> Section {
        let mut s = Section::new(
            "queue",
            "Queueing at the gateway (thesis 3.2, 4.2; Levi-Savas 4.2)",
        )
        .intro(
            "Eq. 3.12 (Pollaczek-Khinchin) as section 4.2 applies it takes lambda in \
                 handshakes/s against the mean service time of one message, so rho understates the load by the k \
                 messages (jobs) per handshake. 'as published' keeps that reading (a model of \
                 ours on the thesis' published service times: its saturation points differ \
                 from the limits the thesis reads off its figures, see the finding on category \
                 3 group 2); 'corrected' offers k x lambda jobs/s with the exact per-job \
                 mixture. A load test on the real gateway decides.",
        );
        s = s.table(self.capacity_table(ctx));
        for group in category3_groups() {
            for auth in Authentication::ALL {
                if let Some(f) = self.published_figure(&group, auth) {
                    s = s.figure(f);
                }
            }
        }
        for group in category3_groups() {
            for auth in Authentication::ALL {
                if let Some(f) = self.measured_figure(ctx, &group, auth) {
                    s = s.figure(f);
                }
            }
        }
        if let Some(note) = &self.load_note {
            s = s.paragraph(note.clone());
        }
        if !self.load.is_empty() {
            s = s.paragraph(format!(
                "Each load point runs in two settings. 'bearer round trip': each client answer \
                 waits an exponential delay of {} ms mean, as a handset's answers follow the \
                 gateway's flight only after a bearer round trip; a handshake's later jobs \
                 then reach the gateway after a delay that does not wait on its queue, the \
                 premise Eq. 3.12 needs (Poisson arrivals of jobs), which this setting makes \
                 near true and the run does not test. 'loopback': \
                 the client answers at once, so a handshake's key-exchange job arrives \
                 microseconds after its ClientHello job left the worker (the finding on the \
                 corrected model gives the run's median), in step with the queue; only \
                 the handshake-chain simulation describes that. The waits are read over each \
                 run's steady window (a tenth of it, at most 0.25 s, cut at either end).",
                reality::BEARER_ROUND_TRIP_MS
            ));
            s = s.table(Self::load_table(
                ctx,
                "queue_load_test",
                "Load test: measured job wait vs the models (one worker)",
                &self.load,
            ));
            s = s.figure(self.load_figure(ctx, Setting::Bearer));
            s = s.figure(self.load_figure(ctx, Setting::Loopback));
        }
        let s = self.modern_part(ctx, s);
        self.variants_part(ctx, s)
    }

    /// The premise under other round-trip laws, and the mutual points.
    fn variants_part(&self, ctx: &Ctx, mut s: Section) -> Section {
        if let Some(note) = &self.variants.note {
            s = s.paragraph(note.clone());
        }
        if self.variants.robustness.is_empty() && self.variants.note.is_none() {
            s = s.paragraph(
                "The Poisson premise under round trips that are not exponential is tested in \
                 a run of its own, `wtlsperf evaluate --only robustness` (about 7 minutes): \
                 its points must be long enough for the interval rule to decide, and they do \
                 not fit this evaluation's 15 minutes. Its files (`queue_robustness.csv`, \
                 `part.json` with the finding) are described in docs/results.md."
                    .to_owned(),
            );
        }
        if !self.variants.robustness.is_empty() {
            s = s
                .paragraph(format!(
                    "The Poisson premise under other round-trip laws. The load test's own bearer \
                     points hold each client answer for an exponential delay, and a Poisson \
                     stream delayed by independent exponential delays stays Poisson: they \
                     cannot show where the premise stops. These points run {} with round trips \
                     of the same {} ms mean under other laws: {}. Each point is judged by an \
                     interval rule: the model against the measured mean wait's 95 % interval \
                     gives an interval of relative errors; 'keeps' when it lies within +-15 %, \
                     'stops' when it lies wholly beyond, 'undecided' when it straddles the line.",
                    super::variants::ROBUSTNESS_CASE,
                    reality::BEARER_ROUND_TRIP_MS,
                    super::variants::ROBUSTNESS_LAWS
                        .map(|l| format!("{l} ({})", l.describe()))
                        .join("; "),
                ))
                .table(self.robustness_table(ctx));
        }
        if !self.variants.mutual.is_empty() {
            let j = Self::judgement_of(self.variants.mutual.clone());
            s = s
                .paragraph(format!(
                    "Mutual handshakes, one datagram per message (the thesis' unit of a job): \
                     the client's second flight reaches the gateway as three or more jobs, back \
                     to back. The corrected model is within 15 % of the undisturbed jobs' mean \
                     wait at {} of {} judged points, and of the whole window's at {} of {}; \
                     the FIFO replay at {} of {}.",
                    j.undisturbed.within,
                    j.undisturbed.points(),
                    j.corrected.within,
                    j.corrected.points(),
                    j.replay.within,
                    j.replay.points(),
                ))
                .table(Self::load_table(
                    ctx,
                    "queue_load_test_mutual",
                    "Load test, mutual handshakes one datagram per message: measured job wait vs the models (one worker)",
                    &self.variants.mutual,
                ));
        }
        s
    }

    /// `queue_robustness`: every point of the premise's test, the exponential baseline
    /// first.
    fn robustness_table(&self, ctx: &Ctx) -> Table {
        let m = ctx.measured();
        let model = Provenance::modelled(
            "Eq. 3.12 at k x lambda",
            "measured per-job service moments of the same load run",
        );
        let rule = Provenance::derived(
            "interval rule: the model against the measured mean wait's 95 % interval, keeps when every error in it is within +-15 %, stops when none is",
        );
        let error = Provenance::derived("(model - measured)/measured");
        let ci = Provenance::derived("batch means, Student's t");
        let mut t = Table::new(
            "queue_robustness",
            "The Poisson premise under round-trip laws that are not exponential",
        )
        .column(Column::label("round-trip law"))
        .column(Column::new(
            "target rho",
            None,
            Provenance::derived("the point's target"),
        ))
        .column(Column::new("measured rho", None, m.clone()))
        .column(Column::new("think time", Some("ms"), m.clone()))
        .column(Column::new("undisturbed wait", Some("ms"), m.clone()))
        .column(Column::new("95 % interval", Some("+- %"), ci.clone()))
        .column(Column::new(
            "M/G/1 corrected, undisturbed",
            Some("ms"),
            model.clone(),
        ))
        .column(Column::new("error undisturbed", Some("%"), error.clone()))
        .column(Column::new("verdict undisturbed", None, rule.clone()))
        .column(Column::new("whole-window wait", Some("ms"), m))
        .column(Column::new("95 % interval", Some("+- %"), ci))
        .column(Column::new("M/G/1 corrected", Some("ms"), model))
        .column(Column::new("error whole window", Some("%"), error.clone()))
        .column(Column::new("verdict whole window", None, rule))
        .column(Column::new("error replay", Some("%"), error));
        let pct = |x: Option<f64>| Cell::opt(x.map(|x| x * 100.0), 1);
        let rel = |h: Option<f64>, w: Option<f64>| {
            Cell::opt(
                h.zip(w).and_then(|(h, w)| (w > 0.0).then(|| 100.0 * h / w)),
                1,
            )
        };
        for r in self.robustness_rows() {
            t = t.row(vec![
                Cell::text(r.round_trip_law),
                Cell::num(r.target_rho, 1),
                Cell::num(r.measured_rho, 2),
                Cell::num(r.think_ms, 1),
                Cell::opt(r.undisturbed_wait_ms, 4),
                rel(r.undisturbed_wait_ci95_ms, r.undisturbed_wait_ms),
                Cell::opt(r.corrected_undisturbed_ms, 4),
                pct(r.undisturbed_error),
                Cell::text(r.undisturbed_verdict),
                Cell::num(r.measured_wait_ms, 4),
                rel(r.measured_wait_ci95_ms, Some(r.measured_wait_ms)),
                Cell::opt(r.corrected_ms, 4),
                pct(r.whole_window_error),
                Cell::text(r.whole_window_verdict),
                pct(r.replay_error),
            ]);
        }
        t
    }

    /// DTLS 1.2 and EDHOC behind the same gateway worker: their points, and how the
    /// models fare on them.
    fn modern_part(&self, ctx: &Ctx, mut s: Section) -> Section {
        if let Some(note) = &self.modern_note {
            s = s.paragraph(note.clone());
        }
        if self.modern.is_empty() {
            return s;
        }
        let mut verdicts = Vec::new();
        for protocol in wtlsperf_drivers::registry::ids() {
            if !self.modern.iter().any(|p| p.protocol == protocol) {
                continue;
            }
            let j = self.protocol_judgement(protocol);
            if j.corrected.points() == 0 {
                let points: Vec<&super::LoadPoint> = self
                    .modern
                    .iter()
                    .filter(|p| p.protocol == protocol)
                    .collect();
                verdicts.push(format!(
                    "{protocol}: no point of its {} judged ({}; a missed, disturbed or \
                     unmodelled point is not judged)",
                    j.corrected.designed,
                    super::not_judged_causes(&points, true)
                ));
                continue;
            }
            let median = |j: &super::Judgement| {
                j.median()
                    .map_or("-".to_owned(), |m| format!("{:.1} %", m * 100.0))
            };
            verdicts.push(format!(
                "{protocol}: corrected M/G/1 within 15 % at {} of {} judged points (median \
                 |error| {}), the FIFO replay at {} of {} ({}), the corrected model on the \
                 undisturbed jobs at {} of {} ({})",
                j.corrected.within,
                j.corrected.points(),
                median(&j.corrected),
                j.replay.within,
                j.replay.points(),
                median(&j.replay),
                j.undisturbed.within,
                j.undisturbed.points(),
                median(&j.undisturbed),
            ));
        }
        s = s.paragraph(format!(
            "DTLS 1.2 (OpenSSL) and EDHOC (lakers over CoAP) run the same open-loop load test \
             against their own real servers, behind the same gateway worker (one pinned, \
             busy-polling worker; a peer table by address with the same time-outs; the same \
             per-job records), in the bearer setting, and are judged the same way: every \
             model at the point's measured rho. A job is a datagram that reached a \
             handshaking peer; neither library reports its records, so a job counts as one \
             message. {}.",
            verdicts.join("; ")
        ));
        s.table(Self::load_table(
            ctx,
            "queue_load_test_modern",
            "Load test, the other protocols of the registry (DTLS 1.2, EDHOC, and DTLS 1.3 and QUIC where built): measured job wait vs the models (one worker)",
            &self.modern,
        ))
    }

    fn capacity_table(&self, ctx: &Ctx) -> Table {
        let p = Provenance::modelled(
            "Bayoglu 2004 Eq. 3.12 with the groups' moments, Eq. 3.21-3.82 (sections 3.2.1-3.2.8), rho = 1",
            "published T_PD_S and Tables 4.5/4.6/4.9/4.10",
        );
        let m = Provenance::modelled(
            "Eq. 3.12 with Eq. 3.21-3.82, rho = 1",
            format!("per-job gateway CPU measured in run {}", ctx.run_id),
        );
        let mut t = Table::new(
            "queue_capacity",
            "Gateway capacity (handshakes/s at rho = 1), category 3",
        )
        .caption("Upper limit of one single-threaded gateway per group and mixture.")
        .column(Column::label("group"))
        .column(Column::label("mixture"))
        .column(Column::label("auth"))
        .column(Column::new(
            "published inputs, as published",
            Some("hs/s"),
            p.clone(),
        ))
        .column(Column::new("published inputs, corrected", Some("hs/s"), p))
        .column(Column::new(
            "our inputs, as published",
            Some("hs/s"),
            m.clone(),
        ))
        .column(Column::new("our inputs, corrected", Some("hs/s"), m));
        for group in category3_groups() {
            for auth in Authentication::ALL {
                for (mix, _) in mixtures(&group) {
                    let g = group.id();
                    t = t.row(vec![
                        Cell::text(&g),
                        Cell::text(&mix),
                        Cell::text(auth_name(auth)),
                        Cell::opt(
                            self.capacity(&g, &mix, auth, Inputs::Published, Variant::AsPublished),
                            1,
                        ),
                        Cell::opt(
                            self.capacity(&g, &mix, auth, Inputs::Published, Variant::Corrected),
                            1,
                        ),
                        Cell::opt(
                            self.capacity(&g, &mix, auth, Inputs::Measured, Variant::AsPublished),
                            0,
                        ),
                        Cell::opt(
                            self.capacity(&g, &mix, auth, Inputs::Measured, Variant::Corrected),
                            0,
                        ),
                    ]);
                }
            }
        }
        t.note("Thesis section 4.2 quotes 72 handshakes/s for group 2 mutual; the formula as printed gives 79.1 (163k leaves).")
    }

    fn curve(&self, filter: impl Fn(&QueueRow) -> bool) -> Vec<(f64, f64)> {
        self.rows
            .iter()
            .filter(|r| filter(r))
            .filter_map(|r| Some((r.lambda_hs_per_s, r.predicted_wait_ms?)))
            .collect()
    }

    fn published_figure(&self, group: &Group, auth: Authentication) -> Option<Figure> {
        let number = published_figure_number(group.group, auth);
        let mut chart = LineChart::new(
            Axis::new("arrival rate lambda", "handshakes/s"),
            Axis::new("mean wait of a job", "ms").log(),
        );
        for (i, (mix, _)) in mixtures(group).into_iter().enumerate() {
            for variant in [Variant::AsPublished, Variant::Corrected] {
                let pts = self.curve(|r| {
                    r.inputs == Inputs::Published
                        && r.group == group.id()
                        && r.mixture == mix
                        && r.auth == auth
                        && r.variant == RowVariant::Model(variant)
                        && r.predicted_wait_ms.is_some_and(|w| w > 0.0)
                });
                if pts.is_empty() {
                    continue;
                }
                let series = Series::new(
                    format!("{mix} {} (modelled)", RowVariant::Model(variant)),
                    Provenance::modelled(
                        format!("Bayoglu 2004 Eq. 3.12, {}", RowVariant::Model(variant)),
                        "published service times (Tables 4.1/4.2 x server % tables)",
                    ),
                    pts,
                )
                .colour(i);
                // One colour per mix; the two readings of Eq. 3.12 told apart by line.
                chart = chart.series(match variant {
                    Variant::AsPublished => series.secondary(),
                    _ => series,
                });
            }
        }
        if chart.series.is_empty() {
            return None;
        }
        Some(
            Figure::new(
                format!("fig4_{number}_queue_{}_{}", group.id(), auth_name(auth)),
                published_figure_title(group.group, auth),
                chart,
            )
            .caption("Both curves are our models on the thesis' published service times, not the thesis' plotted curves: 'as_published' (dashed) reads lambda as handshakes/s as Eq. 3.12 is printed, 'corrected' (solid) saturates k times earlier, and earlier still for the mutual ECDH_ECDSA mixes, whose gateway ECDH the printed Eq. 3.21, 3.36 and 3.51 leave out; one colour per mix.")
            .size(900, 480),
        )
    }

    fn measured_figure(&self, ctx: &Ctx, group: &Group, auth: Authentication) -> Option<Figure> {
        let filt = |model: QueueModel, variant: Option<Variant>| {
            let g = group.id();
            move |r: &QueueRow| {
                r.inputs == Inputs::Measured
                    && r.group == g
                    && r.mixture == "equal"
                    && r.auth == auth
                    && r.model == model
                    && variant.is_none_or(|v| r.variant == RowVariant::Model(v))
                    && r.predicted_wait_ms.is_some_and(|w| w > 0.0)
            }
        };
        let inputs = format!("per-job gateway CPU, run {}", ctx.run_id);
        let mut chart = LineChart::new(
            Axis::new("arrival rate lambda", "handshakes/s"),
            Axis::new("mean wait", "ms").log(),
        );
        for (name, model, variant, eq) in [
            (
                "M/G/1 corrected",
                QueueModel::PkMg1,
                Some(Variant::Corrected),
                "Bayoglu 2004 Eq. 3.12, k jobs per handshake",
            ),
            (
                "M/G/1 as published",
                QueueModel::PkMg1,
                Some(Variant::AsPublished),
                "Bayoglu 2004 Eq. 3.12 as printed",
            ),
            (
                "M/M/1 Levi-Savas (per handshake)",
                QueueModel::Mm1LeviSavas,
                None,
                "Levi-Savas 2003, Tw = Ts rho/(1-rho)",
            ),
            (
                "M/G/2 Allen-Cunneen",
                QueueModel::AllenCunneen(2),
                None,
                "Allen-Cunneen, c = 2",
            ),
            (
                "M/G/4 Allen-Cunneen",
                QueueModel::AllenCunneen(4),
                None,
                "Allen-Cunneen, c = 4",
            ),
            (
                "discrete-event simulation",
                QueueModel::DesMg1,
                None,
                "M/G/1 simulation, resampled measured jobs",
            ),
        ] {
            let pts = self.curve(filt(model, variant));
            if !pts.is_empty() {
                chart = chart.series(Series::new(
                    name,
                    Provenance::modelled(eq, inputs.clone()),
                    pts,
                ));
            }
        }
        if chart.series.is_empty() {
            return None;
        }
        Some(
            Figure::new(
                format!("queue_ours_{}_{}", group.id(), auth_name(auth)),
                format!(
                    "Our gateway: category 3 group {} ({auth:?}, equal key-size mix)",
                    group.group
                ),
                chart,
            )
            .size(900, 480),
        )
    }

    fn load_table(ctx: &Ctx, id: &str, title: &str, points: &[LoadPoint]) -> Table {
        let m = ctx.measured();
        let inputs = "measured per-job service moments of the same load run";
        let mut t = Table::new(id, title)
            .caption("Each point's arrival rate is calibrated while it runs: short warm-ups in the point's own conditions scale the rate until the worker's measured occupancy is within 0.03 of the target rho, at most four of them (the last one's rho may be further off), then the point records; a recording whose measured rho is more than 0.05 from the target is repeated, up to three recordings in all, and otherwise marked missed and not judged. A recording in which the worker lost more than 10 % of the window (waiting on its run queue, or to the hypervisor's steal) or the generator waited on its run queue for more than 10 % is disturbed: it is recorded again while the queue part's allowance lasts, and a point whose every recording was disturbed is marked and not judged. Every model is evaluated at the point's measured load. Waits are per job (datagram), from the gateway's job records, from the kernel's receive timestamp to the start of service, over each run's steady window (a tenth of the run, at most 0.25 s, cut at either end). 'measured wait' is the queueing wait the models predict: a job's wait when it arrived while the worker was busy with earlier jobs, zero when it found the worker idle; what jobs that found the worker idle waited (the path from the kernel to the worker, and any time the shared machine did not run the worker) is shown apart, with the total. Generator and gateway worker on separate cores.")
            .column(Column::label("case"))
            .column(Column::label("auth"))
            .column(Column::new("round trip", Some("ms"), Provenance::derived("emulated bearer round trip before each client answer, mean (exponential unless the table says otherwise); 0 = bare loopback")))
            .column(Column::new("target rho", None, Provenance::derived("the point's target; the rate offered is calibrated by the warm-ups")))
            .column(Column::new("lambda", Some("hs/s"), m.clone()))
            .column(Column::new("measured rho", None, m.clone()))
            .column(Column::new("warm-ups", None, Provenance::derived("short runs in the point's conditions until the measured rho is within 0.03 of the target, at most four")))
            .column(Column::new("warm-up rho", None, m.clone()))
            .column(Column::new("recordings", None, Provenance::derived("more than 1 when a recording's rho missed the target by more than 0.05 (at most 3) or was disturbed and recorded again (at most 2 more)")))
            .column(Column::label("rho missed"))
            .column(Column::new("disturbed", None, Provenance::derived("the kept recording: worker run-queue wait plus steal on its CPU, or the generator's run-queue wait, over 10 % of the window (steal or stalls); for a designed point also an undisturbed part too small to read")))
            .column(Column::new("re-recorded", None, Provenance::derived("disturbed recordings of the point recorded again, within the queue part's allowance")))
            .column(Column::new("worker run queue", Some("ms"), m.clone()))
            .column(Column::new("k jobs/handshake", None, m.clone()))
            .column(Column::new("measured wait", Some("ms"), m.clone()))
            .column(Column::new("95 % interval", Some("+- %"), Provenance::derived("batch means: 20 batches of the window's jobs in service order, Student's t")))
            .column(Column::new("total wait", Some("ms"), m.clone()))
            .column(Column::new("idle arrivals", Some("%"), m.clone()))
            .column(Column::new("idle-arrival wait", Some("ms"), m.clone()))
            .column(Column::new("first-job wait", Some("ms"), m.clone()))
            .column(Column::new("delivery delay", Some("ms"), m.clone()))
            .column(Column::new("late sends", Some("%"), m.clone()))
            .column(Column::new("steal", Some("ms"), m.clone()))
            .column(Column::new("worker stalls", None, m.clone()))
            .column(Column::new("worker stalled", Some("ms"), m.clone()))
            .column(Column::new("generator stalls", None, m.clone()))
            .column(Column::new("generator stalled", Some("ms"), m.clone()))
            .column(Column::new("sends > 0.2 ms late", None, m.clone()))
            .column(Column::new("delivery stalls", None, m.clone()))
            .column(Column::new("delivery stalled", Some("ms"), m.clone()))
            .column(Column::new("M/G/1 corrected", Some("ms"), Provenance::modelled("Eq. 3.12 at k x lambda", inputs)))
            .column(Column::new("error corrected", Some("%"), Provenance::derived("(model - measured)/measured")))
            .column(Column::new("undisturbed jobs", Some("%"), m.clone()))
            .column(Column::new("undisturbed wait", Some("ms"), m.clone()))
            .column(Column::new("95 % interval", Some("+- %"), Provenance::derived("batch means: 20 batches of the undisturbed jobs in arrival order, Student's t")))
            .column(Column::new("opening delivery", Some("us"), m))
            .column(Column::new("P-K one law, undisturbed", Some("ms"), Provenance::modelled("Eq. 3.12 at k x lambda", "job rate and occupancy moments of the undisturbed jobs")))
            .column(Column::new("error one law", Some("%"), Provenance::derived("(model - undisturbed wait)/undisturbed wait")))
            .column(Column::new("M/G/1 corrected, undisturbed", Some("ms"), Provenance::modelled("Eq. 3.12 at k x lambda, the busy period's opening job apart (Welch 1964)", "job rate and occupancy moments of the undisturbed jobs; those that found the worker idle hold it for their measured delivery too")))
            .column(Column::new("error undisturbed", Some("%"), Provenance::derived("(model - undisturbed wait)/undisturbed wait")))
            .column(Column::new("M/G/1 as published", Some("ms"), Provenance::modelled("Eq. 3.12 at lambda", inputs)))
            .column(Column::new("error as published", Some("%"), Provenance::derived("(model - measured)/measured")))
            .column(Column::new("M/M/1 Levi-Savas", Some("ms"), Provenance::modelled("Levi-Savas 2003 Tw", inputs)))
            .column(Column::new("simulation", Some("ms"), Provenance::modelled("M/G/1 DES", inputs)))
            .column(Column::new("handshake chains", Some("ms"), Provenance::modelled("chain simulation (wtlsperf)", "measured job chains and think time of the same run")))
            .column(Column::new("error chains", Some("%"), Provenance::derived("(model - measured)/measured")))
            .column(Column::new("trace replay", Some("ms"), Provenance::modelled("FIFO single server, Lindley recursion", "the run's own arrival instants and job occupancies")))
            .column(Column::new("error replay", Some("%"), Provenance::derived("(model - measured)/measured")));
        for p in points {
            t = t.row(load_row(p));
        }
        t
    }

    fn load_figure(&self, ctx: &Ctx, setting: Setting) -> Figure {
        let mut chart = LineChart::new(
            Axis::new("measured utilisation rho", ""),
            Axis::new("mean job wait", "ms").log(),
        );
        let cases: Vec<String> = {
            let mut v: Vec<String> = self.load.iter().map(|p| p.case.clone()).collect();
            v.sort();
            v.dedup();
            v
        };
        let n = cases.len().max(1);
        for (i, case) in cases.iter().enumerate() {
            let points: Vec<&LoadPoint> = self
                .load
                .iter()
                .filter(|p| &p.case == case && Setting::of(p) == setting)
                .collect();
            chart = case_series(chart, ctx, case, &points, i, n);
        }
        let (id, title) = match setting {
            Setting::Bearer => (
                "queue_load_test",
                format!(
                    "Gateway wait vs queue models: {} ms bearer round trip",
                    reality::BEARER_ROUND_TRIP_MS
                ),
            ),
            Setting::Loopback => (
                "queue_load_test_loopback",
                "Gateway wait vs queue models: bare loopback".to_owned(),
            ),
        };
        Figure::new(id, title, chart).size(900, 480).caption(
            "Hollow circles without a line: load points whose measured rho stayed more than \
             0.05 off their target after the repeats; reported, not judged, and left out of \
             every curve.",
        )
    }
}

/// The undisturbed part's mean wait at each point's measured rho, with its 95 % interval
/// where measured.
fn undisturbed_points(points: &[&LoadPoint]) -> Vec<Point> {
    points
        .iter()
        .filter_map(|p| {
            let w = p.undisturbed.wait_ms.filter(|w| *w > 0.0)?;
            Some(match p.undisturbed.wait_ci95_ms {
                // The axis is logarithmic: the bar stops above zero.
                Some(h) => {
                    Point::with_err(p.calibration.measured_rho, w, (w - h).max(0.01 * w), w + h)
                }
                None => Point::new(p.calibration.measured_rho, w),
            })
        })
        .collect()
}

/// A case's curves of the load figure: measured and modelled waits against measured rho,
/// the `i`-th of `n` cases (one colour per curve: the case, then the model). The points
/// that missed their target rho (reported, not judged) are left out of every curve and
/// drawn apart, hollow and unjoined, so that no line runs through them.
fn case_series(
    chart: LineChart,
    ctx: &Ctx,
    case: &str,
    all_points: &[&LoadPoint],
    i: usize,
    n: usize,
) -> LineChart {
    let (missed, points): (Vec<&LoadPoint>, Vec<&LoadPoint>) =
        all_points.iter().partition(|p| p.calibration.rho_missed);
    let pts = |f: &dyn Fn(&LoadPoint) -> Option<f64>| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter_map(|p| Some((p.calibration.measured_rho, f(p).filter(|w| *w > 0.0)?)))
            .collect()
    };
    let missed_waits: Vec<(f64, f64)> = missed
        .iter()
        .filter(|p| p.window.measured_wait_ms > 0.0)
        .map(|p| (p.calibration.measured_rho, p.window.measured_wait_ms))
        .collect();
    let undisturbed = undisturbed_points(&points);
    let measured_moments =
        || Provenance::modelled("Eq. 3.12 at k x lambda", "measured per-job moments");
    chart
        .series(
            Series::new(
                format!("{case} measured"),
                ctx.measured(),
                pts(&|p| Some(p.window.measured_wait_ms)),
            )
            .colour(i),
        )
        .series(
            Series::new(
                format!("{case} M/G/1 corrected"),
                measured_moments(),
                pts(&|p| p.models.corrected_ms),
            )
            .colour(i + n),
        )
        .series(
            Series::from_points(
                format!("{case} measured, undisturbed part (95 % interval)"),
                ctx.measured(),
                undisturbed,
            )
            .colour(i + 4 * n),
        )
        .series(
            Series::new(
                format!("{case} M/G/1 corrected, undisturbed part"),
                Provenance::modelled(
                    "Eq. 3.12 at k x lambda",
                    "the undisturbed jobs' rate and occupancy moments",
                ),
                pts(&|p| p.models.corrected_undisturbed_ms),
            )
            .colour(i + 5 * n),
        )
        .series(
            Series::new(
                format!("{case} handshake chains"),
                Provenance::modelled("chain simulation", "measured job chains"),
                pts(&|p| p.models.chain_ms),
            )
            .colour(i + 2 * n),
        )
        .series(
            Series::new(
                format!("{case} M/G/1, Eq. 3.12 as printed (modelled)"),
                Provenance::modelled(
                    "Bayoglu 2004 Eq. 3.12 as printed: lambda = handshakes/s",
                    "this run's measured service times",
                ),
                pts(&|p| p.models.as_published_ms),
            )
            .colour(i + 3 * n),
        )
        .series(
            Series::new(
                format!("{case} measured, missed its target rho (not judged)"),
                ctx.measured(),
                missed_waits,
            )
            .colour(i)
            .apart(),
        )
}

/// A model's relative error (%) against a measured wait, flagged at a judged point when
/// it is outside both 15 % and the measurement's 95 % interval `ci`, or outside 15 %.
fn error_cell(judged: bool, w: Option<f64>, measured: Option<f64>, ci: Option<f64>) -> Cell {
    let e = w
        .zip(measured)
        .and_then(|(w, m)| relative_error(w, m))
        .map(|e| e * 100.0);
    let cell = Cell::opt(e, 1);
    let beyond_interval = w.zip(measured).is_some_and(|(w, m)| outside_both(w, m, ci));
    match e {
        Some(_) if judged && beyond_interval => {
            cell.flag("outside both 15 % and the measured wait's 95 % interval")
        }
        Some(e) if judged && e.abs() > 15.0 => cell.flag("outside the 15 % target"),
        _ => cell,
    }
}

/// The cells of a load point's row of the load-test table.
fn load_row(p: &LoadPoint) -> Vec<Cell> {
    let judged = p.calibration.target_rho <= 0.8
        && !p.calibration.rho_missed
        && p.recording.disturbed.is_none();
    let err_against = |w, measured, ci| error_cell(judged, w, measured, ci);
    let err = |w: Option<f64>| {
        err_against(
            w,
            Some(p.window.measured_wait_ms),
            p.window.measured_wait_ci95_ms,
        )
    };
    let relative_ci = |ci: Option<f64>, w: Option<f64>| {
        ci.zip(w)
            .and_then(|(h, w)| (w > 0.0).then(|| 100.0 * h / w))
    };
    let missed = if p.calibration.rho_missed {
        Cell::text("missed")
            .flag("measured rho more than 0.05 from the target after the repeats: not judged")
    } else {
        Cell::text("-")
    };
    let disturbed = match p.recording.disturbed {
        Some(cause) => Cell::text(cause.name()).flag(
            "every recording of the point was disturbed beyond 10 % of its window: not judged",
        ),
        None => Cell::text("-"),
    };
    vec![
        Cell::text(if p.protocol == wtls::handshake::WTLS {
            p.case.clone()
        } else {
            format!("{} {}", p.protocol, p.case)
        }),
        Cell::text(auth_name(p.auth)),
        Cell::num(p.round_trip_ms, 0),
        Cell::num(p.calibration.target_rho, 2),
        Cell::num(p.calibration.lambda_hs_per_s, 1),
        Cell::num(p.calibration.measured_rho, 2),
        Cell::num(p.calibration.warmups as f64, 0),
        Cell::opt(p.calibration.warmup_rho, 2),
        Cell::num(p.calibration.attempts as f64, 0),
        missed,
        disturbed,
        Cell::num(p.recording.rerecords as f64, 0),
        Cell::opt(p.recording.load.worker_run_queue_ms, 1),
        Cell::num(p.run.jobs_per_handshake, 2),
        Cell::num(p.window.measured_wait_ms, 3),
        Cell::opt(
            relative_ci(
                p.window.measured_wait_ci95_ms,
                Some(p.window.measured_wait_ms),
            ),
            1,
        ),
        Cell::num(p.window.total_wait_ms, 3),
        Cell::num(p.window.idle_arrival_share * 100.0, 1),
        Cell::num(p.window.idle_arrival_wait_ms, 4),
        Cell::opt(p.window.first_job_wait_ms, 3),
        Cell::num(p.run.delivery_ms, 3),
        Cell::num(p.run.late_share * 100.0, 2),
        Cell::opt(p.run.steal_ms, 0),
        Cell::num(p.disturbances.worker_stalls as f64, 0),
        Cell::num(p.disturbances.worker_stall_ms, 1),
        Cell::num(p.disturbances.generator_stalls as f64, 0),
        Cell::num(p.disturbances.generator_stall_ms, 1),
        Cell::num(p.disturbances.late_sends as f64, 0),
        Cell::num(p.disturbances.delivery_stalls as f64, 0),
        Cell::num(p.disturbances.delivery_stall_ms, 1),
        Cell::opt(p.models.corrected_ms, 3),
        err(p.models.corrected_ms),
        Cell::num(p.undisturbed.share * 100.0, 0),
        Cell::opt(p.undisturbed.wait_ms, 3),
        Cell::opt(
            relative_ci(p.undisturbed.wait_ci95_ms, p.undisturbed.wait_ms),
            1,
        ),
        Cell::opt(p.undisturbed.opening_delivery_ms.map(|d| d * 1e3), 1),
        Cell::opt(p.models.pk_undisturbed_ms, 3),
        err_against(
            p.models.pk_undisturbed_ms,
            p.undisturbed.wait_ms,
            p.undisturbed.wait_ci95_ms,
        ),
        Cell::opt(p.models.corrected_undisturbed_ms, 3),
        err_against(
            p.models.corrected_undisturbed_ms,
            p.undisturbed.wait_ms,
            p.undisturbed.wait_ci95_ms,
        ),
        Cell::opt(p.models.as_published_ms, 3),
        err(p.models.as_published_ms),
        Cell::opt(p.models.mm1_ms, 3),
        Cell::opt(p.models.des_ms, 3),
        Cell::opt(p.models.chain_ms, 3),
        err(p.models.chain_ms),
        Cell::opt(p.models.replay_ms, 3),
        err(p.models.replay_ms),
    ]
}

/// The thesis' figure of a category 3 group's queue delays: Figures 4.13-4.16 (mutual)
/// and 4.20-4.23 (server-authenticated).
pub(crate) fn published_figure_number(group: u8, auth: Authentication) -> u32 {
    match auth {
        Authentication::Mutual => 12 + u32::from(group),
        Authentication::ServerAuth => 19 + u32::from(group),
    }
}

/// "Category 3 group 1 queue delay, mutual, published service times (thesis Figure 4.13)".
pub(crate) fn published_figure_title(group: u8, auth: Authentication) -> String {
    format!(
        "Category 3 group {group} queue delay, {}, published service times (thesis Figure 4.{})",
        crate::evaluate::citations::mode_words(auth),
        published_figure_number(group, auth)
    )
}
