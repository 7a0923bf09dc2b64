//! Figures: line, grouped-bar and scatter charts drawn with plotters into SVG (inlined in
//! the HTML) and PNG (for slides and papers).
//!
//! The drawing conventions are fixed so that a reader learns them once: the provenance of
//! a series decides its style (model = solid line, measured = filled markers, published =
//! dashed line with hollow markers, derived = dotted line), its colour only tells series
//! apart. The legend sits in its own panel to the right of the plot, grouped by
//! provenance, so it never hides data.

use std::fmt::Debug;
use std::sync::OnceLock;

use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::ErrorBar as PlotErrorBar;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::html::escape_html;
use crate::provenance::{Provenance, ProvenanceKind};
use crate::table::paragraphs;
use crate::{check_id, ReportError};

/// Font family name under which the embedded DejaVu Sans is registered; plotters' SVG
/// backend writes it as the CSS font family, so browsers fall back to their own sans-serif.
const FONT: &str = "sans-serif";
const TITLE_SIZE: f64 = 20.0;
const LABEL_SIZE: f64 = 13.0;
const AXIS_TITLE_SIZE: f64 = 15.0;
const MARGIN: u32 = 12;
const Y_LABEL_AREA: u32 = 80;

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

/// A named series of points for a line or scatter chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub provenance: Provenance,
    pub points: Vec<Point>,
    /// Palette index; None means "the series' position in the chart". Give a measured
    /// series and its model the same index to pair them visually.
    pub colour: Option<usize>,
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
        }
    }

    /// Fixes the palette index (see [`Series::colour`]).
    pub fn colour(mut self, index: usize) -> Self {
        self.colour = Some(index);
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

    /// The figure as a standalone SVG document.
    pub fn to_svg(&self) -> Result<String, ReportError> {
        self.validate()?;
        ensure_font()?;
        let mut svg = String::new();
        {
            let root =
                SVGBackend::with_string(&mut svg, (self.width, self.height)).into_drawing_area();
            self.draw(&root)
                .map_err(|message| self.plot_error(message))?;
        }
        Ok(svg)
    }

    /// The figure as PNG bytes (8-bit RGB).
    pub fn to_png(&self) -> Result<Vec<u8>, ReportError> {
        self.validate()?;
        ensure_font()?;
        let (w, h) = (self.width, self.height);
        let mut rgb = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            self.draw(&root)
                .map_err(|message| self.plot_error(message))?;
        }
        let png_err = |source| ReportError::Png {
            figure: self.id.clone(),
            source,
        };
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(png_err)?;
        writer.write_image_data(&rgb).map_err(png_err)?;
        writer.finish().map_err(png_err)?;
        Ok(out)
    }

    /// The plotted numbers in long form (series, provenance, x or category, y, error
    /// bar), so the figure can be re-drawn elsewhere without losing where values came from.
    pub fn data_csv(&self) -> Result<String, ReportError> {
        let csv_err = |source| ReportError::Csv {
            table: format!("figure {}", self.id),
            source,
        };
        let mut writer = csv::Writer::from_writer(Vec::new());
        let fmt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
        match &self.chart {
            Chart::Line(LineChart { x, y, series })
            | Chart::Scatter(ScatterChart { x, y, series, .. }) => {
                writer
                    .write_record([
                        "series".to_string(),
                        "provenance".to_string(),
                        x.title(),
                        y.title(),
                        format!("{} low [{}]", y.label, y.unit),
                        format!("{} high [{}]", y.label, y.unit),
                    ])
                    .map_err(csv_err)?;
                for s in series {
                    for p in &s.points {
                        writer
                            .write_record([
                                s.name.clone(),
                                s.provenance.to_string(),
                                p.x.to_string(),
                                p.y.to_string(),
                                fmt(p.err.map(|e| e.low)),
                                fmt(p.err.map(|e| e.high)),
                            ])
                            .map_err(csv_err)?;
                    }
                }
            }
            Chart::GroupedBar(chart) => {
                let y = &chart.y;
                writer
                    .write_record([
                        "series".to_string(),
                        "provenance".to_string(),
                        chart.category_label.clone(),
                        y.title(),
                        format!("{} low [{}]", y.label, y.unit),
                        format!("{} high [{}]", y.label, y.unit),
                    ])
                    .map_err(csv_err)?;
                for s in &chart.series {
                    for (i, category) in chart.categories.iter().enumerate() {
                        let err = s.errors.get(i).copied().flatten();
                        writer
                            .write_record([
                                s.name.clone(),
                                s.provenance.to_string(),
                                category.clone(),
                                fmt(s.values.get(i).copied().flatten()),
                                fmt(err.map(|e| e.low)),
                                fmt(err.map(|e| e.high)),
                            ])
                            .map_err(csv_err)?;
                    }
                }
            }
        }
        let bytes = writer
            .into_inner()
            .map_err(|e| csv_err(csv::Error::from(e.into_error())))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The figure as an HTML `<figure>` numbered `number`, with the SVG inlined and the
    /// provenance of every series listed in the caption.
    pub(crate) fn to_html(&self, number: usize, svg: &str) -> String {
        let id = escape_html(&self.id);
        let mut out = format!("<figure class=\"chart\" id=\"figure-{id}\">\n");
        // The XML prolog is not allowed inside HTML; the <svg> element itself is.
        let start = svg.find("<svg").unwrap_or(0);
        out.push_str("<div class=\"svg\">");
        out.push_str(&svg[start..]);
        out.push_str("</div>\n<figcaption><span class=\"num\">Figure ");
        out.push_str(&format!(
            "{number}.</span> {} <a class=\"csv\" href=\"figures/{id}.svg\">SVG</a> \
             <a class=\"csv\" href=\"figures/{id}.png\">PNG</a> \
             <a class=\"csv\" href=\"figures/{id}.csv\">data</a></figcaption>\n",
            escape_html(&self.title)
        ));
        out.push_str(&paragraphs(&self.caption, "caption"));
        out.push_str("<ul class=\"sources\">");
        for p in self.provenances() {
            let kind = p.kind();
            let convention = match self.chart {
                Chart::GroupedBar(_) => bar_convention(kind),
                Chart::Line(_) => kind.line_convention(),
                Chart::Scatter(_) => marker_convention(kind),
            };
            out.push_str(&format!(
                "<li><span class=\"key prov-{}\">{}</span> <span class=\"conv\">({})</span> {}</li>",
                kind.name(),
                kind.name(),
                convention,
                escape_html(&p.to_string())
            ));
        }
        out.push_str("</ul>\n</figure>\n");
        out
    }

    fn plot_error(&self, message: String) -> ReportError {
        ReportError::Plot {
            figure: self.id.clone(),
            message,
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).msg()?;
        let body = root
            .titled(
                &self.title,
                (FONT, TITLE_SIZE).into_font().style(FontStyle::Bold),
            )
            .msg()?;
        let (width, _) = body.dim_in_pixel();
        let legend_width = (width / 4).clamp(150, 280);
        let (plot, legend) = body.split_horizontally(width.saturating_sub(legend_width));
        let entries = match &self.chart {
            Chart::Line(chart) => draw_xy(&plot, &chart.x, &chart.y, &chart.series, false, false)?,
            Chart::Scatter(chart) => draw_xy(
                &plot,
                &chart.x,
                &chart.y,
                &chart.series,
                true,
                chart.identity_line,
            )?,
            Chart::GroupedBar(chart) => draw_bars(root, &plot, chart)?,
        };
        draw_legend(&legend, &entries)?;
        root.present().msg()?;
        Ok(())
    }
}

fn bar_convention(kind: ProvenanceKind) -> &'static str {
    match kind {
        ProvenanceKind::Measured => "solid bars",
        ProvenanceKind::Modelled => "light bars with outline",
        ProvenanceKind::Published => "hollow bars",
        ProvenanceKind::Derived => "pale bars",
    }
}

fn marker_convention(kind: ProvenanceKind) -> &'static str {
    match kind {
        ProvenanceKind::Measured => "filled circles",
        ProvenanceKind::Modelled => "crosses",
        ProvenanceKind::Published => "hollow squares",
        ProvenanceKind::Derived => "hollow triangles",
    }
}

/// Registers the embedded DejaVu Sans once per process. Embedding the font keeps PNG
/// output identical on every machine and frees the build from fontconfig/freetype.
fn ensure_font() -> Result<(), ReportError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ReportError::Font)
    }
}

/// plotters' errors carry the backend's error type; the report only needs the message.
trait OrMessage<T> {
    fn msg(self) -> Result<T, String>;
}

impl<T, E: Debug> OrMessage<T> for Result<T, E> {
    fn msg(self) -> Result<T, String> {
        self.map_err(|e| format!("{e:?}"))
    }
}

/// Colour-blind-safe palette (Okabe-Ito, then neutral extras), cycled by series index.
fn palette(index: usize) -> RGBColor {
    const COLOURS: [RGBColor; 10] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(0, 0, 0),
        RGBColor(140, 86, 75),
        RGBColor(127, 127, 127),
        RGBColor(170, 150, 0),
    ];
    COLOURS[index % COLOURS.len()]
}

/// Tick labels with as many decimals as the magnitude needs, without trailing zeros.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e6).contains(&a) {
        return format!("{v:.0e}");
    }
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The plotted range for a set of values: zero-based for quantities that start at zero
/// (times, delays), padded so markers do not sit on the frame, and a fixed decade on log
/// axes when no positive value exists.
fn axis_range(values: impl Iterator<Item = f64>, log: bool, zero_based: bool) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if log {
        if lo > hi {
            return (1.0, 10.0);
        }
        return (lo / 1.3, hi * 1.3);
    }
    if lo > hi {
        return (0.0, 1.0);
    }
    if zero_based {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo < f64::EPSILON * hi.abs().max(1.0) {
        let half = (hi.abs() * 0.1).max(1.0);
        lo -= half;
        hi += half;
    }
    let pad = (hi - lo) * 0.05;
    let lo = if zero_based && lo == 0.0 {
        0.0
    } else {
        lo - pad
    };
    (lo, hi + pad)
}

/// A logarithmic axis over `range` (both ends > 0) with ticks a reader can use.
fn log_axis(range: (f64, f64)) -> WithKeyPoints<LogCoord<f64>> {
    let (bold, light) = log_ticks(range.0, range.1);
    (range.0..range.1)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(light)
}

/// Labelled and grid-only ticks for a log axis. plotters labels only powers of ten, which
/// leaves a range like 30..120 ms with a single label; so labels step through 1-2-5 or
/// every mantissa when the range spans fewer than three decades.
fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    let in_range = |mantissas: &[f64]| -> Vec<f64> {
        (first..=last)
            .flat_map(|k| mantissas.iter().map(move |m| m * 10f64.powi(k)))
            .filter(|v| *v >= lo && *v <= hi)
            .collect()
    };
    let all = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
    let mut bold = in_range(&[1.0]);
    if bold.len() < 3 {
        bold = in_range(&[1.0, 2.0, 5.0]);
    }
    if bold.len() < 3 {
        bold = in_range(&all);
    }
    let light = in_range(&all)
        .into_iter()
        .filter(|v| !bold.contains(v))
        .collect();
    (bold, light)
}

/// Whether a value can be placed on an axis of the given scale.
fn plottable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

/// What the legend panel shows for one series.
struct LegendEntry {
    name: String,
    kind: ProvenanceKind,
    colour: RGBColor,
    glyph: Glyph,
}

#[derive(Clone, Copy, PartialEq)]
enum Glyph {
    Line,
    Marker,
    Bar,
    Identity,
}

fn draw_xy<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    scatter: bool,
    identity: bool,
) -> Result<Vec<LegendEntry>, String> {
    let xs = || series.iter().flat_map(|s| s.points.iter().map(|p| p.x));
    let ys = || {
        series.iter().flat_map(|s| {
            s.points.iter().flat_map(|p| {
                [Some(p.y), p.err.map(|e| e.low), p.err.map(|e| e.high)]
                    .into_iter()
                    .flatten()
            })
        })
    };
    let (mut xr, mut yr) = if identity && x.log == y.log {
        let both = axis_range(xs().chain(ys()), y.log, true);
        (both, both)
    } else {
        (
            axis_range(xs(), x.log, scatter),
            axis_range(ys(), y.log, true),
        )
    };
    if xr.0 >= xr.1 {
        xr = (0.0, 1.0);
    }
    if yr.0 >= yr.1 {
        yr = (0.0, 1.0);
    }
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(MARGIN)
        .x_label_area_size(55)
        .y_label_area_size(Y_LABEL_AREA);
    let ctx = XyContext {
        x,
        y,
        series,
        scatter,
        identity,
        xr,
        yr,
    };
    match (x.log, y.log) {
        (false, false) => ctx.plot(builder.build_cartesian_2d(xr.0..xr.1, yr.0..yr.1).msg()?),
        (false, true) => ctx.plot(builder.build_cartesian_2d(xr.0..xr.1, log_axis(yr)).msg()?),
        (true, false) => ctx.plot(builder.build_cartesian_2d(log_axis(xr), yr.0..yr.1).msg()?),
        (true, true) => ctx.plot(
            builder
                .build_cartesian_2d(log_axis(xr), log_axis(yr))
                .msg()?,
        ),
    }
}

/// Everything a line or scatter chart needs once its coordinate system is chosen; the
/// four linear/log combinations share this one drawing routine.
struct XyContext<'s> {
    x: &'s Axis,
    y: &'s Axis,
    series: &'s [Series],
    scatter: bool,
    identity: bool,
    xr: (f64, f64),
    yr: (f64, f64),
}

impl XyContext<'_> {
    fn plot<DB, X, Y>(
        &self,
        mut chart: ChartContext<'_, DB, Cartesian2d<X, Y>>,
    ) -> Result<Vec<LegendEntry>, String>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        chart
            .configure_mesh()
            .x_desc(self.x.title())
            .y_desc(self.y.title())
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_TITLE_SIZE))
            .bold_line_style(RGBColor(205, 205, 205))
            .light_line_style(RGBColor(242, 242, 242))
            .max_light_lines(4)
            .draw()
            .msg()?;

        let mut entries = Vec::new();
        if self.identity {
            let lo = self.xr.0.max(self.yr.0);
            let hi = self.xr.1.min(self.yr.1);
            if lo < hi {
                let grey = RGBColor(120, 120, 120);
                chart
                    .draw_series(DashedLineSeries::new(
                        [(lo, lo), (hi, hi)],
                        6,
                        4,
                        grey.stroke_width(1),
                    ))
                    .msg()?;
                entries.push(LegendEntry {
                    name: "y = x (perfect agreement)".into(),
                    kind: ProvenanceKind::Derived,
                    colour: grey,
                    glyph: Glyph::Identity,
                });
            }
        }

        let (xlog, ylog) = (self.x.log, self.y.log);
        let mut any_point = false;
        for (index, series) in self.series.iter().enumerate() {
            let colour = palette(series.colour.unwrap_or(index));
            let kind = series.provenance.kind();
            let points: Vec<(f64, f64)> = series
                .points
                .iter()
                .filter(|p| plottable(p.x, xlog) && plottable(p.y, ylog))
                .map(|p| (p.x, p.y))
                .collect();
            any_point |= !points.is_empty();

            let bars = series.points.iter().filter_map(|p| {
                let e = p.err.filter(|e| !e.low.is_nan() && !e.high.is_nan())?;
                if !(plottable(p.x, xlog) && plottable(p.y, ylog)) {
                    return None;
                }
                // On a log axis a lower bound <= 0 is drawn down to the frame.
                let low = if plottable(e.low, ylog) {
                    e.low
                } else {
                    self.yr.0
                };
                let high = if plottable(e.high, ylog) { e.high } else { p.y };
                Some(PlotErrorBar::new_vertical(
                    p.x,
                    low,
                    p.y,
                    high,
                    colour.stroke_width(1),
                    8,
                ))
            });
            chart.draw_series(bars).msg()?;

            if !self.scatter && points.len() > 1 {
                let pts = points.clone();
                match kind {
                    ProvenanceKind::Modelled => chart
                        .draw_series(LineSeries::new(pts, colour.stroke_width(3)))
                        .map(|_| ()),
                    ProvenanceKind::Measured => chart
                        .draw_series(LineSeries::new(pts, colour.mix(0.55).stroke_width(1)))
                        .map(|_| ()),
                    ProvenanceKind::Published => chart
                        .draw_series(DashedLineSeries::new(pts, 10, 6, colour.stroke_width(2)))
                        .map(|_| ()),
                    ProvenanceKind::Derived => chart
                        .draw_series(DashedLineSeries::new(pts, 2, 4, colour.stroke_width(2)))
                        .map(|_| ()),
                }
                .msg()?;
            }
            // A model drawn as a line needs no markers, except when a single point would
            // otherwise be invisible.
            let markers = self.scatter || kind != ProvenanceKind::Modelled || points.len() == 1;
            if markers {
                draw_markers(&mut chart, &points, kind, colour)?;
            }
            entries.push(LegendEntry {
                name: series.name.clone(),
                kind,
                colour,
                glyph: if self.scatter {
                    Glyph::Marker
                } else {
                    Glyph::Line
                },
            });
        }
        if !any_point {
            no_data(chart.plotting_area())?;
        }
        Ok(entries)
    }
}

fn draw_markers<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    points: &[(f64, f64)],
    kind: ProvenanceKind,
    colour: RGBColor,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let pts = points.iter().copied();
    match kind {
        ProvenanceKind::Measured => chart
            .draw_series(pts.map(|p| Circle::new(p, 4, colour.filled())))
            .map(|_| ()),
        ProvenanceKind::Modelled => chart
            .draw_series(pts.map(|p| Cross::new(p, 5, colour.stroke_width(2))))
            .map(|_| ()),
        ProvenanceKind::Published => chart
            .draw_series(pts.map(|p| {
                EmptyElement::at(p)
                    + Rectangle::new([(-4, -4), (4, 4)], WHITE.filled())
                    + Rectangle::new([(-4, -4), (4, 4)], colour.stroke_width(2))
            }))
            .map(|_| ()),
        ProvenanceKind::Derived => chart
            .draw_series(pts.map(|p| TriangleMarker::new(p, 5, colour.stroke_width(1))))
            .map(|_| ()),
    }
    .msg()
}

fn no_data<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
) -> Result<(), String> {
    let (w, h) = area.dim_in_pixel();
    let style = (FONT, 18.0)
        .into_font()
        .color(&RGBColor(120, 120, 120))
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.strip_coord_spec()
        .draw_text("no data", &style, (w as i32 / 2, h as i32 / 2))
        .msg()
}

/// Fill and outline of a bar by provenance: measured solid, model light with outline,
/// published hollow with a thick outline, derived pale.
fn bar_style(kind: ProvenanceKind, colour: RGBColor) -> (ShapeStyle, Option<ShapeStyle>) {
    match kind {
        ProvenanceKind::Measured => (colour.filled(), None),
        ProvenanceKind::Modelled => (colour.mix(0.35).filled(), Some(colour.stroke_width(1))),
        ProvenanceKind::Published => (WHITE.filled(), Some(colour.stroke_width(2))),
        ProvenanceKind::Derived => (colour.mix(0.15).filled(), Some(colour.stroke_width(1))),
    }
}

/// Shortens `label` with an ellipsis until `measure` says it fits in `max` pixels.
fn fit_label(label: &str, max: u32, measure: &dyn Fn(&str) -> u32) -> String {
    if measure(label) <= max {
        return label.to_string();
    }
    let mut chars: Vec<char> = label.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let candidate: String = chars.iter().collect::<String>() + "\u{2026}";
        if measure(&candidate) <= max {
            return candidate;
        }
    }
    "\u{2026}".to_string()
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    chart_spec: &GroupedBarChart,
) -> Result<Vec<LegendEntry>, String> {
    let n = chart_spec.categories.len();
    let ylog = chart_spec.y.log;
    let values = chart_spec.series.iter().flat_map(|s| {
        s.values
            .iter()
            .flatten()
            .copied()
            .chain(s.errors.iter().flatten().flat_map(|e| [e.low, e.high]))
    });
    let yr = axis_range(values, ylog, true);

    // Decide the category label layout before building the chart, because the label
    // area has to be reserved up front.
    let (area_w, area_h) = area.dim_in_pixel();
    let label_font = (FONT, LABEL_SIZE).into_font();
    let measure = |text: &str| {
        label_font
            .box_size(text)
            .map(|(w, _)| w)
            .unwrap_or(text.chars().count() as u32 * 8)
    };
    let slot = area_w.saturating_sub(Y_LABEL_AREA + 2 * MARGIN) as f64 / n as f64;
    let widest = chart_spec
        .categories
        .iter()
        .map(|c| measure(c))
        .max()
        .unwrap_or(0);
    let vertical = f64::from(widest) > slot - 6.0;
    let max_label = area_h / 3;
    let labels: Vec<String> = chart_spec
        .categories
        .iter()
        .map(|c| {
            if vertical {
                fit_label(c, max_label, &measure)
            } else {
                c.clone()
            }
        })
        .collect();
    let label_extent = if vertical {
        labels.iter().map(|l| measure(l)).max().unwrap_or(0)
    } else {
        LABEL_SIZE as u32 + 4
    };
    let axis_title_room = AXIS_TITLE_SIZE as u32 + 16;

    let mut builder = ChartBuilder::on(area);
    builder
        .margin(MARGIN)
        .x_label_area_size(label_extent + 12 + axis_title_room)
        .y_label_area_size(Y_LABEL_AREA);
    let x_range = 0.0..n as f64;
    let entries = if ylog {
        let chart = builder.build_cartesian_2d(x_range, log_axis(yr)).msg()?;
        plot_bars(chart, chart_spec, yr)?
    } else {
        let chart = builder.build_cartesian_2d(x_range, yr.0..yr.1).msg()?;
        plot_bars(chart, chart_spec, yr)?
    };

    // Category labels, drawn on the root in absolute pixels at each group's centre.
    let (label_x, label_y) = entries.1;
    let mut style = label_font.color(&BLACK);
    style = if vertical {
        style
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center))
    } else {
        style.pos(Pos::new(HPos::Center, VPos::Top))
    };
    for (label, x) in labels.iter().zip(label_x) {
        root.draw_text(label, &style, (x, label_y + 6)).msg()?;
    }
    Ok(entries.0)
}

/// Draws shading, mesh, bars and error bars; returns the legend entries and the pixel
/// positions (centres, axis line) where the category labels go.
#[allow(clippy::type_complexity)]
fn plot_bars<DB, Y>(
    mut chart: ChartContext<'_, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    spec: &GroupedBarChart,
    yr: (f64, f64),
) -> Result<(Vec<LegendEntry>, (Vec<i32>, i32)), String>
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let n = spec.categories.len();
    let ylog = spec.y.log;
    // Alternate shading keeps the eye on the right group when there are many categories.
    chart
        .draw_series((0..n).filter(|i| i % 2 == 1).map(|i| {
            Rectangle::new(
                [(i as f64, yr.0), (i as f64 + 1.0, yr.1)],
                RGBColor(246, 246, 246).filled(),
            )
        }))
        .msg()?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc(spec.category_label.as_str())
        .y_desc(spec.y.title())
        .y_label_formatter(&|v| tick(*v))
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, AXIS_TITLE_SIZE))
        .bold_line_style(RGBColor(205, 205, 205))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
        .msg()?;

    let m = spec.series.len().max(1) as f64;
    let group = 0.8;
    let bar = group / m;
    let base = if ylog {
        yr.0
    } else {
        0.0_f64.clamp(yr.0, yr.1)
    };
    let mut entries = Vec::new();
    let mut any_bar = false;
    for (j, series) in spec.series.iter().enumerate() {
        let colour = palette(series.colour.unwrap_or(j));
        let kind = series.provenance.kind();
        let (fill, outline) = bar_style(kind, colour);
        let mut rects = Vec::new();
        let mut bars = Vec::new();
        for (i, value) in series.values.iter().enumerate() {
            let x0 = i as f64 + (1.0 - group) / 2.0 + j as f64 * bar;
            let (x0, x1) = (x0 + bar * 0.06, x0 + bar * 0.94);
            if let Some(v) = value.filter(|v| plottable(*v, ylog)) {
                rects.push([(x0, base), (x1, v)]);
                let err = series.errors.get(i).copied().flatten();
                if let Some(e) = err.filter(|e| !e.low.is_nan() && !e.high.is_nan()) {
                    let low = if plottable(e.low, ylog) { e.low } else { base };
                    let high = if plottable(e.high, ylog) { e.high } else { v };
                    bars.push(((x0 + x1) / 2.0, low, v, high));
                }
            }
        }
        any_bar |= !rects.is_empty();
        chart
            .draw_series(rects.iter().map(|r| Rectangle::new(*r, fill)))
            .msg()?;
        if let Some(outline) = outline {
            chart
                .draw_series(rects.iter().map(|r| Rectangle::new(*r, outline)))
                .msg()?;
        }
        chart
            .draw_series(bars.iter().map(|&(x, low, v, high)| {
                PlotErrorBar::new_vertical(x, low, v, high, BLACK.stroke_width(1), 5)
            }))
            .msg()?;
        entries.push(LegendEntry {
            name: series.name.clone(),
            kind,
            colour,
            glyph: Glyph::Bar,
        });
    }
    if !any_bar {
        no_data(chart.plotting_area())?;
    }
    let centres = (0..n)
        .map(|i| chart.backend_coord(&(i as f64 + 0.5, yr.0)).0)
        .collect();
    let axis_y = chart.backend_coord(&(0.0, yr.0)).1;
    Ok((entries, (centres, axis_y)))
}

/// The legend panel: entries grouped under a heading per provenance kind, each with a
/// sample of how it is drawn and its name wrapped to the panel width.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
) -> Result<(), String> {
    let (w, h) = area.dim_in_pixel();
    let font = (FONT, LABEL_SIZE).into_font();
    let heading = (FONT, LABEL_SIZE)
        .into_font()
        .style(FontStyle::Bold)
        .color(&RGBColor(60, 60, 60));
    let text_x = 46;
    let text_w = w.saturating_sub(text_x as u32 + 6).max(40);
    let line_h = LABEL_SIZE as i32 + 5;
    let mut y = MARGIN as i32 + 4;
    // Guides such as y = x are not data, so they get their own group after the data.
    let groups = ProvenanceKind::ALL
        .iter()
        .map(|&kind| {
            let group: Vec<&LegendEntry> = entries
                .iter()
                .filter(|e| e.kind == kind && e.glyph != Glyph::Identity)
                .collect();
            (kind.name().to_uppercase(), group)
        })
        .chain(std::iter::once((
            "REFERENCE".to_string(),
            entries
                .iter()
                .filter(|e| e.glyph == Glyph::Identity)
                .collect(),
        )));
    for (title, group) in groups {
        if group.is_empty() {
            continue;
        }
        area.draw_text(&title, &heading, (6, y)).msg()?;
        y += line_h + 2;
        for entry in group {
            let lines = wrap(&entry.name, text_w, &|t: &str| {
                font.box_size(t)
                    .map(|(w, _)| w)
                    .unwrap_or(t.len() as u32 * 8)
            });
            let mid = y + line_h / 2 - 1;
            draw_sample(area, entry, mid)?;
            for line in &lines {
                area.draw_text(line, &font.color(&BLACK), (text_x, y))
                    .msg()?;
                y += line_h;
            }
            y += 4;
            if y > h as i32 - line_h {
                return Ok(());
            }
        }
        y += 6;
    }
    Ok(())
}

fn draw_sample<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entry: &LegendEntry,
    y: i32,
) -> Result<(), String> {
    let c = entry.colour;
    let (x0, x1, xm) = (8, 38, 23);
    match entry.glyph {
        Glyph::Bar => {
            let (fill, outline) = bar_style(entry.kind, c);
            area.draw(&Rectangle::new([(x0 + 4, y - 6), (x1 - 4, y + 6)], fill))
                .msg()?;
            if let Some(outline) = outline {
                area.draw(&Rectangle::new([(x0 + 4, y - 6), (x1 - 4, y + 6)], outline))
                    .msg()?;
            }
        }
        Glyph::Identity => {
            for s in [x0, x0 + 12, x0 + 24] {
                area.draw(&PathElement::new(
                    vec![(s, y), (s + 6, y)],
                    c.stroke_width(1),
                ))
                .msg()?;
            }
        }
        Glyph::Line | Glyph::Marker => {
            let line = entry.glyph == Glyph::Line;
            match entry.kind {
                ProvenanceKind::Modelled if line => area
                    .draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(3)))
                    .msg()?,
                ProvenanceKind::Measured if line => area
                    .draw(&PathElement::new(
                        vec![(x0, y), (x1, y)],
                        c.mix(0.55).stroke_width(1),
                    ))
                    .msg()?,
                ProvenanceKind::Published if line => {
                    for s in [x0, x0 + 20] {
                        area.draw(&PathElement::new(
                            vec![(s, y), (s + 10, y)],
                            c.stroke_width(2),
                        ))
                        .msg()?;
                    }
                }
                ProvenanceKind::Derived if line => {
                    for s in (x0..x1).step_by(6) {
                        area.draw(&PathElement::new(
                            vec![(s, y), (s + 2, y)],
                            c.stroke_width(2),
                        ))
                        .msg()?;
                    }
                }
                _ => {}
            }
            let marker = !line || entry.kind != ProvenanceKind::Modelled;
            if marker {
                match entry.kind {
                    ProvenanceKind::Measured => {
                        area.draw(&Circle::new((xm, y), 4, c.filled())).msg()?
                    }
                    ProvenanceKind::Modelled => area
                        .draw(&Cross::new((xm, y), 5, c.stroke_width(2)))
                        .msg()?,
                    ProvenanceKind::Published => {
                        let square = [(xm - 4, y - 4), (xm + 4, y + 4)];
                        area.draw(&Rectangle::new(square, WHITE.filled())).msg()?;
                        area.draw(&Rectangle::new(square, c.stroke_width(2)))
                            .msg()?;
                    }
                    ProvenanceKind::Derived => area
                        .draw(&TriangleMarker::new((xm, y), 5, c.stroke_width(1)))
                        .msg()?,
                }
            }
        }
    }
    Ok(())
}

/// Greedy word wrap to `max` pixels; a single word longer than a line is cut with an
/// ellipsis rather than overflowing into the plot.
fn wrap(text: &str, max: u32, measure: &dyn Fn(&str) -> u32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let candidate = if current.is_empty() {
            word.to_string()
        } else {
            format!("{current} {word}")
        };
        if measure(&candidate) <= max || current.is_empty() {
            current = candidate;
        } else {
            lines.push(std::mem::take(&mut current));
            current = word.to_string();
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
        .into_iter()
        .map(|line| fit_label(&line, max, measure))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured() -> Provenance {
        Provenance::measured("r1", "testbox")
    }

    fn line_figure() -> Figure {
        let chart = LineChart::new(
            Axis::new("arrival rate", "handshakes/s"),
            Axis::new("mean wait", "ms").log(),
        )
        .series(Series::new(
            "M/G/1 model",
            Provenance::modelled("Bayoglu 2004, Eq. 3.12", "measured service times"),
            (1..=10).map(|i| (f64::from(i), 2.0 * f64::from(i).powi(2))),
        ))
        .series(Series::from_points(
            "load test",
            measured(),
            (1..=10)
                .map(|i| Point::with_sym_err(f64::from(i), 2.2 * f64::from(i).powi(2), 5.0))
                .collect(),
        ))
        .series(Series::new(
            "thesis <figure 4.13>",
            Provenance::published("Bayoglu 2004, Figure 4.13"),
            [(2.0, 9.0), (5.0, 49.0), (8.0, 0.0)],
        ));
        Figure::new("wait", "Queue wait & load", chart)
    }

    #[test]
    fn a_unitless_axis_has_no_empty_brackets() {
        assert_eq!(Axis::new("utilisation rho", "").title(), "utilisation rho");
        assert_eq!(Axis::new("wait", "ms").title(), "wait [ms]");
    }

    #[test]
    fn svg_contains_axis_titles_legend_and_escaped_names() {
        let svg = line_figure().to_svg().unwrap();
        assert!(svg.contains("<svg"));
        assert!(svg.contains("mean wait [ms]"));
        assert!(svg.contains("arrival rate [handshakes/s]"));
        assert!(svg.contains("MODELLED"));
        assert!(svg.contains("Queue wait &amp; load"));
        assert!(!svg.contains("<figure 4.13>"));
    }

    #[test]
    fn png_has_the_png_signature() {
        let png = line_figure().size(640, 400).to_png().unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }

    #[test]
    fn mismatched_bar_series_is_an_error() {
        let chart = GroupedBarChart::new(
            "case",
            vec!["a".into(), "b".into()],
            Axis::new("time", "ms"),
        )
        .series(BarSeries::new("x", measured(), vec![Some(1.0)]));
        let err = Figure::new("bars", "t", chart).to_svg().unwrap_err();
        assert!(err.to_string().contains("1 values"), "{err}");
    }

    #[test]
    fn inverted_error_bar_is_an_error() {
        let chart = LineChart::new(Axis::new("x", "1"), Axis::new("y", "ms")).series(
            Series::from_points("s", measured(), vec![Point::with_err(1.0, 2.0, 3.0, 1.0)]),
        );
        assert!(Figure::new("f", "t", chart).validate().is_err());
    }

    #[test]
    fn empty_and_degenerate_charts_still_render() {
        let empty = LineChart::new(Axis::new("x", "1"), Axis::new("y", "ms").log());
        assert!(Figure::new("e", "empty", empty)
            .to_svg()
            .unwrap()
            .contains("no data"));
        let single = ScatterChart::new(Axis::new("x", "ms"), Axis::new("y", "ms"))
            .identity_line()
            .series(Series::new(
                "one",
                measured(),
                [(5.0, 5.0), (f64::NAN, 1.0)],
            ));
        assert!(Figure::new("s", "one point", single).to_png().is_ok());
    }

    #[test]
    fn ranges_and_ticks() {
        assert_eq!(axis_range([2.0, 4.0].into_iter(), false, true), (0.0, 4.2));
        let (lo, hi) = axis_range([4.0, 900.0, -1.0].into_iter(), true, true);
        assert!(lo > 0.0 && lo < 4.0 && hi > 900.0);
        assert_eq!(axis_range(std::iter::empty(), true, true), (1.0, 10.0));
        let (lo, hi) = axis_range([3.0, 3.0].into_iter(), false, false);
        assert!(lo < 3.0 && hi > 3.0);
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(250.0), "250");
        assert_eq!(tick(12.5), "12.5");
        assert_eq!(tick(2.0), "2");
        assert_eq!(tick(0.125), "0.125");
        assert_eq!(tick(2e7), "2e7");
        assert_eq!(log_ticks(3.0, 1200.0).0, vec![10.0, 100.0, 1000.0]);
        assert_eq!(log_ticks(4.0, 120.0).0, vec![5.0, 10.0, 20.0, 50.0, 100.0]);
        let (bold, light) = log_ticks(31.0, 117.0);
        assert_eq!(bold, vec![40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]);
        assert!(light.is_empty());
    }

    #[test]
    fn labels_are_shortened_and_wrapped_to_fit() {
        let measure = |t: &str| t.chars().count() as u32 * 10;
        assert_eq!(fit_label("short", 100, &measure), "short");
        assert_eq!(fit_label("much too long", 50, &measure), "much\u{2026}");
        assert_eq!(
            wrap("ECDH 163 mutual authentication", 100, &measure),
            vec!["ECDH 163", "mutual", "authentic\u{2026}"]
        );
    }

    #[test]
    fn data_csv_lists_every_bar_with_provenance() {
        let chart = GroupedBarChart::new(
            "case",
            vec!["RSA 1024".into(), "ECDH 163".into()],
            Axis::new("client time", "ms"),
        )
        .series(
            BarSeries::new("measured", measured(), vec![Some(4.5), None]).errors(vec![
                Some(ErrorBar {
                    low: 4.0,
                    high: 5.0,
                }),
                None,
            ]),
        );
        let csv = Figure::new("b", "t", chart).data_csv().unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "series,provenance,case,client time [ms],client time low [ms],client time high [ms]"
        );
        assert_eq!(
            lines[1],
            "measured,measured: run r1 on testbox,RSA 1024,4.5,4,5"
        );
        assert_eq!(lines[2], "measured,measured: run r1 on testbox,ECDH 163,,,");
    }
}
