//! One load-test point as named parts (its calibration, the run, the steady window's
//! wait, the models, the disturbances and the undisturbed part), and its flat row of
//! `queue_load_test.csv`, the only place the parts become columns.

use wtlsperf_models::Authentication;
use wtlsperf_spine::ProtocolId;

use wtls::handshake::Packing;

use super::disturbance::{Cause, RecordingLoad};
use super::rows::auth_name;
use wtlsperf_drivers::load::RoundTripLaw;

/// The CSV name of a packing, as `--packing` spells it.
pub fn packing_name(p: Packing) -> &'static str {
    match p {
        Packing::FlightPerDatagram => "flight",
        Packing::MessagePerDatagram => "message",
    }
}

/// One load-test point against the real gateway.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPoint {
    /// The protocol of the real server behind the gateway worker.
    pub protocol: ProtocolId,
    /// WTLS case (`283k/283k`), or the DTLS 1.2 / EDHOC suite (`psk-ccm8`).
    pub case: String,
    pub auth: Authentication,
    /// Mean of the emulated bearer round trip before each client answer (ms); 0 on bare
    /// loopback.
    pub round_trip_ms: f64,
    /// The law of each round trip around that mean.
    pub round_trip_law: RoundTripLaw,
    /// How the clients packed their flights into datagrams (the gateway's jobs).
    pub packing: Packing,
    pub calibration: PointCalibration,
    pub run: RunFigures,
    pub window: WindowWait,
    pub models: Predictions,
    pub disturbances: Disturbances,
    pub undisturbed: UndisturbedFigures,
    pub recording: RecordingFigures,
}

impl LoadPoint {
    /// The rho the point is calibrated to and its target checked at: the undisturbed
    /// jobs' where the run has them (the models are judged on those jobs), else the
    /// whole window's.
    pub fn calibrated_rho(&self) -> f64 {
        self.recording
            .undisturbed_rho
            .unwrap_or(self.calibration.measured_rho)
    }
}

impl Default for LoadPoint {
    /// An empty server-authenticated point on bare loopback (the load test measures
    /// server authentication only).
    fn default() -> Self {
        LoadPoint {
            protocol: wtls::handshake::WTLS,
            case: String::new(),
            auth: Authentication::ServerAuth,
            round_trip_ms: 0.0,
            round_trip_law: RoundTripLaw::Exponential,
            packing: Packing::FlightPerDatagram,
            calibration: PointCalibration::default(),
            run: RunFigures::default(),
            window: WindowWait::default(),
            models: Predictions::default(),
            disturbances: Disturbances::default(),
            undisturbed: UndisturbedFigures::default(),
            recording: RecordingFigures::default(),
        }
    }
}

/// How the point reached its load (see `calibrate`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PointCalibration {
    /// Target utilisation of the point.
    pub target_rho: f64,
    /// Offered handshakes/s: the rate the warm-ups calibrated.
    pub lambda_hs_per_s: f64,
    /// Measured gateway utilisation over the recording's steady window.
    pub measured_rho: f64,
    /// Warm-ups run before the recording, and the utilisation the last one measured.
    pub warmups: usize,
    pub warmup_rho: Option<f64>,
    /// Recordings made: more than 1 when a recording missed its target rho by more than
    /// 0.05 (at most 3 undisturbed ones) or was disturbed and recorded again (at most 2
    /// more, see `disturbance`).
    pub attempts: usize,
    /// Whether the kept recording's measured rho is still more than 0.05 from the
    /// target: such a point is reported, not judged.
    pub rho_missed: bool,
}

/// What the run did and the service it measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunFigures {
    /// Achieved handshakes/s.
    pub achieved_hs_per_s: f64,
    /// Share of handshakes that completed.
    pub success_ratio: f64,
    /// Jobs (datagrams served) per handshake.
    pub jobs_per_handshake: f64,
    /// Mean per-job service time at the gateway (ms) and its second moment (ms^2).
    pub service_mean_ms: f64,
    pub service_m2_ms2: f64,
    /// Median time from the end of a job's service to the arrival of the same
    /// handshake's next job (ms): round trip plus client work.
    pub think_ms: f64,
    /// Delivery delay (ms): median wait of jobs that found the worker idle, added to
    /// every model's prediction (the models predict queueing only).
    pub delivery_ms: f64,
    /// Share of the generator's scheduled sends that left more than 1 ms late.
    pub late_share: f64,
    /// CPU time the hypervisor gave to others during the run (ms, all CPUs).
    pub steal_ms: Option<f64>,
}

/// The measured wait over the run's steady window.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WindowWait {
    /// Mean queueing wait of a job (ms): its wait when it arrived while the worker was
    /// busy with earlier jobs, zero when it found the worker idle. What the queue models
    /// predict.
    pub measured_wait_ms: f64,
    /// Half-width (ms) of its 95 % batch-means interval.
    pub measured_wait_ci95_ms: Option<f64>,
    /// Mean wait of a job (ms), from the kernel's timestamp to the start of service,
    /// idle arrivals included.
    pub total_wait_ms: f64,
    /// Share of jobs that found the worker idle, and their mean wait (ms): the path from
    /// the kernel to the worker and any time the worker was not running, no queueing.
    pub idle_arrival_share: f64,
    pub idle_arrival_wait_ms: f64,
    /// Mean wait of each handshake's first job (ms): the Poisson arrivals, which see the
    /// time-average queue P-K describes (PASTA).
    pub first_job_wait_ms: Option<f64>,
}

/// Every model's predicted mean job wait (ms), each at the point's measured load.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Predictions {
    /// Corrected P-K at k x lambda with the measured moments.
    pub corrected_ms: Option<f64>,
    /// As published: lambda against the per-job moments.
    pub as_published_ms: Option<f64>,
    /// The same on the undisturbed part's own handshake rate and occupancy moments: what
    /// is set beside the undisturbed jobs' wait, inputs and measurement from one part.
    pub as_published_undisturbed_ms: Option<f64>,
    /// Levi-Savas M/M/1 with T_s = k x mean job service, a per-handshake wait.
    pub mm1_ms: Option<f64>,
    /// Discrete-event simulation with the measured per-job service times.
    pub des_ms: Option<f64>,
    /// Handshake-aware simulation: the gateway's measured job chains of this run, the
    /// next job of a handshake arriving the measured think time after the previous
    /// one's service.
    pub chain_ms: Option<f64>,
    /// Trace replay: a FIFO single server fed with the run's own arrival instants and
    /// job occupancies; no assumption on the arrival process.
    pub replay_ms: Option<f64>,
    /// Corrected P-K on the undisturbed part's own job rate and occupancy moments, one
    /// law for every job (Eq. 3.12).
    pub pk_undisturbed_ms: Option<f64>,
    /// The same with the busy period's opening job apart, its delivery counted as worker
    /// time (exceptional first service): the corrected model the undisturbed measurement
    /// is judged against.
    pub corrected_undisturbed_ms: Option<f64>,
}

/// The shared machine's interruptions during the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Disturbances {
    /// The gateway worker's and the generator's stalls (off-core for over 200 us while
    /// never sleeping): how many and their summed length (ms).
    pub worker_stalls: usize,
    pub worker_stall_ms: f64,
    pub generator_stalls: usize,
    pub generator_stall_ms: f64,
    /// Datagrams held on their way to a free worker for over 200 us (the kernel's
    /// receive backlog): how many and their summed length (ms).
    pub delivery_stalls: usize,
    pub delivery_stall_ms: f64,
    /// The generator's sends more than 200 us late.
    pub late_sends: usize,
}

/// The undisturbed part of the steady window (see `reality`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UndisturbedFigures {
    /// Share of the steady window's jobs outside every disturbed interval.
    pub share: f64,
    /// Their mean queueing wait (ms) and the half-width of its 95 % batch-means
    /// interval (ms).
    pub wait_ms: Option<f64>,
    pub wait_ci95_ms: Option<f64>,
    /// Mean delivery (ms) of the undisturbed jobs that found the worker idle: arrival to
    /// start of service, worker time the jobs behind them wait for.
    pub opening_delivery_ms: Option<f64>,
}

/// What the kernel's counters say of the kept recording (see `disturbance`), and how
/// many disturbed recordings of the point were set aside for it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordingFigures {
    pub load: RecordingLoad,
    /// The rule's verdict on the kept recording: `None` when undisturbed.
    pub disturbed: Option<Cause>,
    /// Disturbed recordings recorded again.
    pub rerecords: usize,
    /// The worker's occupancy over the undisturbed part alone (its job rate times their
    /// mean occupancy): the load the undisturbed judgement sees, free of the time a
    /// disturbance added to the jobs it met.
    pub undisturbed_rho: Option<f64>,
}

/// The flat row of `queue_load_test.csv`: the columns of before the parts were named,
/// in their order, then the calibration's, then the protocol, the round trip's law and
/// the packing, then the recording's disturbance figures.
#[derive(serde::Serialize)]
struct LoadPointRow<'a> {
    case: &'a str,
    auth: &'static str,
    round_trip_ms: f64,
    target_rho: f64,
    lambda_hs_per_s: f64,
    achieved_hs_per_s: f64,
    success_ratio: f64,
    jobs_per_handshake: f64,
    measured_rho: f64,
    service_mean_ms: f64,
    service_m2_ms2: f64,
    measured_wait_ms: f64,
    total_wait_ms: f64,
    idle_arrival_share: f64,
    idle_arrival_wait_ms: f64,
    corrected_ms: Option<f64>,
    as_published_ms: Option<f64>,
    mm1_ms: Option<f64>,
    des_ms: Option<f64>,
    chain_ms: Option<f64>,
    replay_ms: Option<f64>,
    think_ms: f64,
    first_job_wait_ms: Option<f64>,
    delivery_ms: f64,
    late_share: f64,
    steal_ms: Option<f64>,
    worker_stalls: usize,
    worker_stall_ms: f64,
    generator_stalls: usize,
    generator_stall_ms: f64,
    delivery_stalls: usize,
    delivery_stall_ms: f64,
    late_sends: usize,
    undisturbed_share: f64,
    undisturbed_wait_ms: Option<f64>,
    undisturbed_wait_ci95_ms: Option<f64>,
    undisturbed_opening_delivery_ms: Option<f64>,
    pk_undisturbed_ms: Option<f64>,
    corrected_undisturbed_ms: Option<f64>,
    measured_wait_ci95_ms: Option<f64>,
    warmups: usize,
    warmup_rho: Option<f64>,
    attempts: usize,
    rho_missed: bool,
    protocol: &'static str,
    round_trip_law: &'static str,
    packing: &'static str,
    worker_run_queue_ms: Option<f64>,
    generator_run_queue_ms: Option<f64>,
    worker_steal_ms: Option<f64>,
    interference_ms: Option<f64>,
    recording_disturbed: Option<&'static str>,
    rerecords: usize,
    undisturbed_rho: Option<f64>,
}

impl serde::Serialize for LoadPoint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (c, r, w, m, d, u) = (
            &self.calibration,
            &self.run,
            &self.window,
            &self.models,
            &self.disturbances,
            &self.undisturbed,
        );
        let rec = &self.recording;
        LoadPointRow {
            case: &self.case,
            auth: auth_name(self.auth),
            round_trip_ms: self.round_trip_ms,
            target_rho: c.target_rho,
            lambda_hs_per_s: c.lambda_hs_per_s,
            achieved_hs_per_s: r.achieved_hs_per_s,
            success_ratio: r.success_ratio,
            jobs_per_handshake: r.jobs_per_handshake,
            measured_rho: c.measured_rho,
            service_mean_ms: r.service_mean_ms,
            service_m2_ms2: r.service_m2_ms2,
            measured_wait_ms: w.measured_wait_ms,
            total_wait_ms: w.total_wait_ms,
            idle_arrival_share: w.idle_arrival_share,
            idle_arrival_wait_ms: w.idle_arrival_wait_ms,
            corrected_ms: m.corrected_ms,
            as_published_ms: m.as_published_ms,
            mm1_ms: m.mm1_ms,
            des_ms: m.des_ms,
            chain_ms: m.chain_ms,
            replay_ms: m.replay_ms,
            think_ms: r.think_ms,
            first_job_wait_ms: w.first_job_wait_ms,
            delivery_ms: r.delivery_ms,
            late_share: r.late_share,
            steal_ms: r.steal_ms,
            worker_stalls: d.worker_stalls,
            worker_stall_ms: d.worker_stall_ms,
            generator_stalls: d.generator_stalls,
            generator_stall_ms: d.generator_stall_ms,
            delivery_stalls: d.delivery_stalls,
            delivery_stall_ms: d.delivery_stall_ms,
            late_sends: d.late_sends,
            undisturbed_share: u.share,
            undisturbed_wait_ms: u.wait_ms,
            undisturbed_wait_ci95_ms: u.wait_ci95_ms,
            undisturbed_opening_delivery_ms: u.opening_delivery_ms,
            pk_undisturbed_ms: m.pk_undisturbed_ms,
            corrected_undisturbed_ms: m.corrected_undisturbed_ms,
            measured_wait_ci95_ms: w.measured_wait_ci95_ms,
            warmups: c.warmups,
            warmup_rho: c.warmup_rho,
            attempts: c.attempts,
            rho_missed: c.rho_missed,
            protocol: self.protocol.name(),
            round_trip_law: self.round_trip_law.name(),
            packing: packing_name(self.packing),
            worker_run_queue_ms: rec.load.worker_run_queue_ms,
            generator_run_queue_ms: rec.load.generator_run_queue_ms,
            worker_steal_ms: rec.load.worker_steal_ms,
            interference_ms: rec.load.interference_ms,
            recording_disturbed: rec.disturbed.map(Cause::name),
            rerecords: rec.rerecords,
            undisturbed_rho: rec.undisturbed_rho,
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_keeps_the_old_columns_in_order_then_the_new_ones() {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(LoadPoint {
            case: "283k/283k".into(),
            ..Default::default()
        })
        .unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let header = text.lines().next().unwrap();
        assert!(header
            .starts_with("case,auth,round_trip_ms,target_rho,lambda_hs_per_s,achieved_hs_per_s,"));
        assert!(header.contains(
            ",undisturbed_opening_delivery_ms,pk_undisturbed_ms,corrected_undisturbed_ms,measured_wait_ci95_ms,"
        ));
        assert!(header
            .contains(",warmups,warmup_rho,attempts,rho_missed,protocol,round_trip_law,packing,"));
        assert!(header.ends_with(
            ",packing,worker_run_queue_ms,generator_run_queue_ms,worker_steal_ms,interference_ms,recording_disturbed,rerecords,undisturbed_rho"
        ));
        assert!(text
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("283k/283k,server,"));
    }
}
