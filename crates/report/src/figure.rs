//! Figures: line, grouped-bar and scatter charts drawn with plotters into SVG (inlined in
//! the HTML) and PNG (for slides and papers).
//!
//! The drawing conventions are fixed so that a reader learns them once: the provenance of
//! a series decides its style (model = solid line, measured = filled markers, published =
//! dashed line with hollow markers, derived = dotted line), its colour only tells series
//! apart. A second quantity of the same source (a p95 beside its median) is drawn with a
//! dashed line and hollow markers ([`Trace::Secondary`]), and points set apart (missed or
//! degraded) with hollow markers and no line ([`Trace::Apart`]), so neither relies on
//! colour alone. The legend sits in its own panel to the right of the plot, grouped by
//! provenance, so it never hides data, and it is built from the series that have a
//! plottable value, so it lists exactly the series drawn; the figure grows taller when
//! the legend needs the room.
//!
//! In the SVG, every drawn series and every legend entry is a `<g>` element carrying the
//! series' name (`data-series`), so that a test can compare a figure's legend with its
//! series from the SVG's own structure (`marks`).
//!
//! This file describes a figure (axes, series, charts, [`Figure`]) and checks it;
//! drawing is in `draw` (shared kit), `look` (how a series is drawn, shared by the plot
//! and its legend sample), `xy` (line and scatter charts), `bars` (grouped bars) and
//! `legend`; writing it out as SVG, PNG, CSV and HTML in `export`.

mod bars;
mod draw;
mod export;
mod legend;
mod look;
mod marks;
mod xy;

pub use marks::{svg_series_and_legend, SvgLegendCheck};

use crate::provenance::Provenance;
use crate::{check_id, ReportError};

/// An axis: what is plotted and in which unit. Both are mandatory because a figure
/// without units cannot be compared with a published one.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub unit: String,
    /// Logarithmic scale, for spans like 4 ms .. 900 ms across key exchange suites.
    pub log: bool,
}

impl Axis {
    /// A linear axis, e.g. `Axis::new("arrival rate", "handshakes/s")`.
    pub fn new(label: impl Into<String>, unit: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            unit: unit.into(),
            log: false,
        }
    }

    /// Switches the axis to a logarithmic scale; values <= 0 are then left out.
    pub fn log(mut self) -> Self {
        self.log = true;
        self
    }

    /// `label [unit]`, as printed beside the axis; only the label for a quantity
    /// without a unit (a utilisation, a ratio).
    pub fn title(&self) -> String {
        if self.unit.is_empty() {
            self.label.clone()
        } else {
            format!("{} [{}]", self.label, self.unit)
        }
    }
}

/// The extent of an error bar, as absolute y values (not offsets), so asymmetric ranges
/// such as 5th..95th percentiles fit as well as mean +/- a confidence half-width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorBar {
    pub low: f64,
    pub high: f64,
}

/// One (x, y) value with an optional error bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub err: Option<ErrorBar>,
}

impl Point {
    /// A point without error bar.
    pub fn new(x: f64, y: f64) -> Self {
        Self { x, y, err: None }
    }

    /// A point with an error bar from `low` to `high` (absolute y values).
    pub fn with_err(x: f64, y: f64, low: f64, high: f64) -> Self {
        Self {
            x,
            y,
            err: Some(ErrorBar { low, high }),
        }
    }

    /// A point with a symmetric error bar `y - half_width .. y + half_width`.
    pub fn with_sym_err(x: f64, y: f64, half_width: f64) -> Self {
        Self::with_err(x, y, y - half_width, y + half_width)
    }
}

/// How a series' points are joined and marked, beside what its provenance decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trace {
    /// The provenance's convention (module documentation).
    #[default]
    Primary,
    /// A second quantity of the same source and colour (a p95 beside its median, a
    /// second reading of one model): dashed line, hollow markers.
    Secondary,
    /// Points set apart from their curve (missed their target, degraded): hollow
    /// markers, no line through them.
    Apart,
}

/// A named series of points for a line or scatter chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub provenance: Provenance,
    pub points: Vec<Point>,
    /// Palette index; None means "the series' position in the chart". Give a measured
    /// series and its model the same index to pair them visually.
    pub colour: Option<usize>,
    /// Line and markers beside the provenance's convention.
    pub trace: Trace,
}

impl Series {
    /// A series from plain (x, y) pairs.
    pub fn new(
        name: impl Into<String>,
        provenance: Provenance,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) -> Self {
        Self::from_points(
            name,
            provenance,
            points.into_iter().map(|(x, y)| Point::new(x, y)).collect(),
        )
    }

    /// A series from points that may carry error bars.
    pub fn from_points(
        name: impl Into<String>,
        provenance: Provenance,
        points: Vec<Point>,
    ) -> Self {
        Self {
            name: name.into(),
            provenance,
            points,
            colour: None,
            trace: Trace::Primary,
        }
    }

    /// Fixes the palette index (see [`Series::colour`]).
    pub fn colour(mut self, index: usize) -> Self {
        self.colour = Some(index);
        self
    }

    /// Draws the series as a second quantity of its source ([`Trace::Secondary`]).
    pub fn secondary(mut self) -> Self {
        self.trace = Trace::Secondary;
        self
    }

    /// Draws the series' points apart, unjoined and hollow ([`Trace::Apart`]).
    pub fn apart(mut self) -> Self {
        self.trace = Trace::Apart;
        self
    }
}

/// Several series of y over x, e.g. mean queue wait against arrival rate, one curve per
/// key exchange group, model and measurement together.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
}

impl LineChart {
    pub fn new(x: Axis, y: Axis) -> Self {
        Self {
            x,
            y,
            series: Vec::new(),
        }
    }

    pub fn series(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }
}

/// Points without connecting lines, e.g. modelled against measured handshake time; the
/// optional y = x line shows where perfect agreement would lie.
#[derive(Debug, Clone, PartialEq)]
pub struct ScatterChart {
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// Draw the y = x diagonal (both axes then share one range).
    pub identity_line: bool,
}

impl ScatterChart {
    pub fn new(x: Axis, y: Axis) -> Self {
        Self {
            x,
            y,
            series: Vec::new(),
            identity_line: false,
        }
    }

    pub fn series(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }

    pub fn identity_line(mut self) -> Self {
        self.identity_line = true;
        self
    }
}

/// One bar per category for a grouped bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub provenance: Provenance,
    /// One value per category, None where there is none (not published, not run).
    pub values: Vec<Option<f64>>,
    /// Empty, or one optional error bar per category.
    pub errors: Vec<Option<ErrorBar>>,
    pub colour: Option<usize>,
}

impl BarSeries {
    pub fn new(name: impl Into<String>, provenance: Provenance, values: Vec<Option<f64>>) -> Self {
        Self {
            name: name.into(),
            provenance,
            values,
            errors: Vec::new(),
            colour: None,
        }
    }

    /// Adds error bars, one per category.
    pub fn errors(mut self, errors: Vec<Option<ErrorBar>>) -> Self {
        self.errors = errors;
        self
    }

    pub fn colour(mut self, index: usize) -> Self {
        self.colour = Some(index);
        self
    }
}

/// Categories (e.g. the 24 handshake cases) times series (e.g. measured and published).
/// Long category names are turned vertical, and shortened with an ellipsis only when even
/// vertical they would take more than a third of the figure.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedBarChart {
    /// What the categories are, e.g. "handshake case".
    pub category_label: String,
    pub categories: Vec<String>,
    pub y: Axis,
    pub series: Vec<BarSeries>,
}

impl GroupedBarChart {
    pub fn new(category_label: impl Into<String>, categories: Vec<String>, y: Axis) -> Self {
        Self {
            category_label: category_label.into(),
            categories,
            y,
            series: Vec::new(),
        }
    }

    pub fn series(mut self, series: BarSeries) -> Self {
        self.series.push(series);
        self
    }
}

/// The kinds of chart a figure can hold.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    Line(LineChart),
    GroupedBar(GroupedBarChart),
    Scatter(ScatterChart),
}

impl From<LineChart> for Chart {
    fn from(chart: LineChart) -> Self {
        Self::Line(chart)
    }
}

impl From<GroupedBarChart> for Chart {
    fn from(chart: GroupedBarChart) -> Self {
        Self::GroupedBar(chart)
    }
}

impl From<ScatterChart> for Chart {
    fn from(chart: ScatterChart) -> Self {
        Self::Scatter(chart)
    }
}

/// A figure of the report: a chart with an id, a title and a caption.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// File name stem of `figures/<id>.svg|png|csv` and HTML anchor; `[A-Za-z0-9_.-]`.
    pub id: String,
    /// Drawn above the chart and repeated in the HTML caption.
    pub title: String,
    pub caption: String,
    pub chart: Chart,
    /// Pixel size of the PNG and of the SVG's coordinate system.
    pub width: u32,
    pub height: u32,
}

impl Figure {
    /// A 1000 x 600 figure.
    pub fn new(id: impl Into<String>, title: impl Into<String>, chart: impl Into<Chart>) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            caption: String::new(),
            chart: chart.into(),
            width: 1000,
            height: 600,
        }
    }

    pub fn caption(mut self, caption: impl Into<String>) -> Self {
        self.caption = caption.into();
        self
    }

    pub fn size(mut self, width: u32, height: u32) -> Self {
        self.width = width;
        self.height = height;
        self
    }

    /// Checks the id, the size and that bar series have one value per category.
    pub fn validate(&self) -> Result<(), ReportError> {
        check_id("figure", &self.id)?;
        let invalid = |message: String| ReportError::InvalidFigure {
            figure: self.id.clone(),
            message,
        };
        if !(300..=4000).contains(&self.width) || !(200..=4000).contains(&self.height) {
            return Err(invalid(format!(
                "size {}x{} is outside 300..4000 x 200..4000 pixels",
                self.width, self.height
            )));
        }
        let mut error_bars: Vec<&ErrorBar> = Vec::new();
        match &self.chart {
            Chart::Line(LineChart { series, .. }) | Chart::Scatter(ScatterChart { series, .. }) => {
                for s in series {
                    error_bars.extend(s.points.iter().filter_map(|p| p.err.as_ref()));
                }
            }
            Chart::GroupedBar(chart) => {
                if chart.categories.is_empty() {
                    return Err(invalid("a bar chart needs at least one category".into()));
                }
                for s in &chart.series {
                    let n = chart.categories.len();
                    if s.values.len() != n || !(s.errors.is_empty() || s.errors.len() == n) {
                        return Err(invalid(format!(
                            "bar series {:?} has {} values and {} error bars for {} categories",
                            s.name,
                            s.values.len(),
                            s.errors.len(),
                            n
                        )));
                    }
                    error_bars.extend(s.errors.iter().flatten());
                }
            }
        }
        if let Some(bad) = error_bars.iter().find(|e| e.low > e.high) {
            return Err(invalid(format!(
                "error bar low {} is not <= high {}",
                bad.low, bad.high
            )));
        }
        Ok(())
    }

    /// The distinct provenances of the plotted series, in drawing order.
    pub fn provenances(&self) -> Vec<&Provenance> {
        let all: Vec<&Provenance> = match &self.chart {
            Chart::Line(LineChart { series, .. }) | Chart::Scatter(ScatterChart { series, .. }) => {
                series.iter().map(|s| &s.provenance).collect()
            }
            Chart::GroupedBar(chart) => chart.series.iter().map(|s| &s.provenance).collect(),
        };
        let mut distinct: Vec<&Provenance> = Vec::new();
        for p in all {
            if !distinct.contains(&p) {
                distinct.push(p);
            }
        }
        distinct
    }
}

#[cfg(test)]
mod tests;
