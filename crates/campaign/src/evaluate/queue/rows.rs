//! The typed rows of `queue.csv` and the capacities: models, readings, inputs and modes
//! are enums, and become the file's strings only when a row is serialised.

use std::fmt;
use wtlsperf_drivers::load::RoundTripLaw;

use serde::Serializer;
use wtls::suite::Case;
use wtlsperf_models::queue::Variant;
use wtlsperf_models::Authentication;
use wtlsperf_spine::ProtocolId;

/// A category-3 group: its CA and the leaves of Table 3.3.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// 1..4.
    pub group: u8,
    /// The group's cases.
    pub cases: Vec<Case>,
}

impl Group {
    /// `cat3-g2`.
    pub fn id(&self) -> String {
        format!("cat3-g{}", self.group)
    }
}

/// Where a model's service times come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inputs {
    /// The thesis' published tables.
    Published,
    /// This run's measurements.
    Measured,
}

impl fmt::Display for Inputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Inputs::Published => "published",
            Inputs::Measured => "measured",
        })
    }
}

/// The model a load-test row compares with the measured wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadModel {
    PkCorrected,
    PkAsPublished,
    Mm1LeviSavas,
    Des,
    ChainSim,
    TraceReplay,
    /// P-K with one occupancy law, on the undisturbed part.
    PkOneLawUndisturbed,
    /// P-K with the busy period's opening job apart, on the undisturbed part.
    PkCorrectedUndisturbed,
}

impl LoadModel {
    pub const ALL: [LoadModel; 8] = [
        LoadModel::PkCorrected,
        LoadModel::PkAsPublished,
        LoadModel::Mm1LeviSavas,
        LoadModel::Des,
        LoadModel::ChainSim,
        LoadModel::TraceReplay,
        LoadModel::PkOneLawUndisturbed,
        LoadModel::PkCorrectedUndisturbed,
    ];

    /// Whether the model is read against the undisturbed part's measurement.
    pub fn undisturbed(self) -> bool {
        matches!(
            self,
            LoadModel::PkOneLawUndisturbed | LoadModel::PkCorrectedUndisturbed
        )
    }

    fn name(self) -> &'static str {
        match self {
            LoadModel::PkCorrected => "pk_mg1_corrected",
            LoadModel::PkAsPublished => "pk_mg1_as_published",
            LoadModel::Mm1LeviSavas => "mm1_levi_savas",
            LoadModel::Des => "des_mg1",
            LoadModel::ChainSim => "chain_sim",
            LoadModel::TraceReplay => "trace_replay",
            LoadModel::PkOneLawUndisturbed => "pk_mg1_one_law_undisturbed",
            LoadModel::PkCorrectedUndisturbed => "pk_mg1_corrected_undisturbed",
        }
    }
}

/// The model of a `queue.csv` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueModel {
    /// Pollaczek-Khinchin M/G/1 (thesis Eq. 3.12).
    PkMg1,
    /// Levi-Savas 2003's M/M/1 per handshake.
    Mm1LeviSavas,
    /// Allen-Cunneen M/G/c with c servers.
    AllenCunneen(u32),
    /// Discrete-event M/G/1 simulation.
    DesMg1,
    /// A load-test point against a model.
    LoadTestVs(LoadModel),
}

impl fmt::Display for QueueModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueModel::PkMg1 => f.write_str("pk_mg1"),
            QueueModel::Mm1LeviSavas => f.write_str("mm1_levi_savas"),
            QueueModel::AllenCunneen(c) => write!(f, "allen_cunneen_c{c}"),
            QueueModel::DesMg1 => f.write_str("des_mg1"),
            QueueModel::LoadTestVs(m) => write!(f, "load_test_vs_{}", m.name()),
        }
    }
}

/// The reading of a row: the model's variant, none, or a load test's setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowVariant {
    Model(Variant),
    NotApplicable,
    /// A load test with this emulated round trip (ms; 0 = bare loopback), the round
    /// trip's law, and whether the clients sent one datagram per message.
    Setting {
        round_trip_ms: f64,
        law: RoundTripLaw,
        per_message: bool,
    },
}

impl RowVariant {
    /// The load test's own setting: an exponential round trip (or none), one datagram
    /// per flight.
    pub fn setting(round_trip_ms: f64) -> Self {
        RowVariant::Setting {
            round_trip_ms,
            law: RoundTripLaw::Exponential,
            per_message: false,
        }
    }
}

impl fmt::Display for RowVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowVariant::Model(Variant::AsPublished) => f.write_str("as_published"),
            RowVariant::Model(Variant::Corrected) => f.write_str("corrected"),
            RowVariant::NotApplicable => f.write_str("-"),
            RowVariant::Setting {
                round_trip_ms,
                law,
                per_message,
            } => {
                if *round_trip_ms > 0.0 {
                    write!(f, "round_trip_{round_trip_ms}ms")?;
                } else {
                    f.write_str("loopback")?;
                }
                if *law != RoundTripLaw::Exponential {
                    write!(f, "_{law}")?;
                }
                if *per_message {
                    f.write_str("_per_message")?;
                }
                Ok(())
            }
        }
    }
}

/// The mode's name in the queue files and tables.
pub fn auth_name(auth: Authentication) -> &'static str {
    match auth {
        Authentication::Mutual => "mutual",
        Authentication::ServerAuth => "server",
    }
}

fn as_display<T: fmt::Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn as_auth_name<S: Serializer>(a: &Authentication, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(auth_name(*a))
}

/// One row of `queue.csv`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct QueueRow {
    /// `pk_mg1`, `mm1_levi_savas`, `allen_cunneen_c2`, `des_mg1`, `load_test_vs_...`.
    #[serde(serialize_with = "as_display")]
    pub model: QueueModel,
    /// `as_published`, `corrected`, `-`, or the load test's setting.
    #[serde(serialize_with = "as_display")]
    pub variant: RowVariant,
    /// Inputs: `published` or `measured`.
    #[serde(serialize_with = "as_display")]
    pub inputs: Inputs,
    /// Group (`cat3-g2`) or case (`256p/256p`).
    pub group: String,
    /// Mixture of leaves (`283k`, `equal`).
    pub mixture: String,
    /// `mutual` or `server`.
    #[serde(serialize_with = "as_auth_name")]
    pub auth: Authentication,
    /// Handshakes per second.
    pub lambda_hs_per_s: f64,
    /// Utilisation under the model's own reading (a load test's target).
    pub rho: f64,
    /// Predicted mean wait of one job (ms).
    pub predicted_wait_ms: Option<f64>,
    /// Measured mean wait (ms), load-test rows only.
    pub measured_wait_ms: Option<f64>,
    /// (predicted - measured) / measured.
    pub relative_error: Option<f64>,
    /// Load-test rows: the utilisation the run measured (`rho` is its target), the
    /// half-width of the measured wait's 95 % interval (ms), and whether the measured rho
    /// missed the target by more than 0.05 (such a point is not judged).
    pub measured_rho: Option<f64>,
    pub measured_wait_ci95_ms: Option<f64>,
    pub rho_missed: Option<bool>,
    /// Load-test rows: whether the model is outside both 15 % and that interval.
    pub outside_15_percent_and_interval: Option<bool>,
    /// The protocol served: `wtls` for every model row, the load point's for a
    /// load-test row.
    #[serde(serialize_with = "as_display")]
    pub protocol: ProtocolId,
}

impl QueueRow {
    /// A model row (no measurement).
    #[allow(clippy::too_many_arguments)]
    pub fn modelled(
        model: QueueModel,
        variant: RowVariant,
        inputs: Inputs,
        group: String,
        mixture: String,
        auth: Authentication,
        lambda_hs_per_s: f64,
        rho: f64,
        predicted_wait_ms: Option<f64>,
    ) -> Self {
        QueueRow {
            model,
            variant,
            inputs,
            group,
            mixture,
            auth,
            lambda_hs_per_s,
            rho,
            predicted_wait_ms,
            measured_wait_ms: None,
            relative_error: None,
            measured_rho: None,
            measured_wait_ci95_ms: None,
            rho_missed: None,
            outside_15_percent_and_interval: None,
            protocol: wtls::handshake::WTLS,
        }
    }
}

/// A capacity: the arrival rate at rho = 1 of a group's mixture under a model's reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    /// `cat3-g2`.
    pub group: String,
    /// `163k`, `equal`.
    pub mixture: String,
    pub auth: Authentication,
    pub inputs: Inputs,
    pub variant: Variant,
    pub handshakes_per_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_the_file_strings() {
        assert_eq!(QueueModel::AllenCunneen(2).to_string(), "allen_cunneen_c2");
        assert_eq!(
            QueueModel::LoadTestVs(LoadModel::PkCorrectedUndisturbed).to_string(),
            "load_test_vs_pk_mg1_corrected_undisturbed"
        );
        assert_eq!(RowVariant::setting(20.0).to_string(), "round_trip_20ms");
        assert_eq!(RowVariant::setting(0.0).to_string(), "loopback");
        assert_eq!(
            RowVariant::Setting {
                round_trip_ms: 20.0,
                law: RoundTripLaw::GsmCsd,
                per_message: true
            }
            .to_string(),
            "round_trip_20ms_gsm-csd_per_message"
        );
        assert_eq!(
            RowVariant::Model(Variant::AsPublished).to_string(),
            "as_published"
        );
        let row = QueueRow::modelled(
            QueueModel::PkMg1,
            RowVariant::Model(Variant::Corrected),
            Inputs::Published,
            "cat3-g2".into(),
            "equal".into(),
            Authentication::Mutual,
            10.0,
            0.5,
            Some(1.0),
        );
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(&row).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .starts_with("pk_mg1,corrected,published,cat3-g2,equal,mutual,10.0,0.5,1.0"),
            "{text}"
        );
        assert!(
            text.lines().next().unwrap().ends_with(",protocol"),
            "{text}"
        );
        assert!(text.lines().nth(1).unwrap().ends_with(",wtls"), "{text}");
    }
}
