//! The drawing kit every chart shares: the fixed type sizes and margins, the embedded
//! font, the palette, tick labels and axis ranges (linear and logarithmic), and the
//! layout of a figure (title, plot, legend panel).

use std::fmt::Debug;
use std::sync::OnceLock;

use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::bars::draw_bars;
use super::legend::{draw_legend, split_widths};
use super::marks::Marks;
use super::xy::draw_xy;
use super::{Axis, Chart, Figure, Series};
use crate::ReportError;

/// Font family name under which the embedded DejaVu Sans is registered; plotters' SVG
/// backend writes it as the CSS font family, so browsers fall back to their own sans-serif.
pub(super) const FONT: &str = "sans-serif";
pub(super) const TITLE_SIZE: f64 = 20.0;
pub(super) const LABEL_SIZE: f64 = 13.0;
pub(super) const AXIS_TITLE_SIZE: f64 = 15.0;
pub(super) const MARGIN: u32 = 12;
pub(super) const Y_LABEL_AREA: u32 = 80;

impl Figure {
    /// Draws the whole figure: title, the chart on the left, its legend panel on the
    /// right (so the legend never hides data); `marks` groups each series and legend
    /// entry in the SVG.
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        marks: &Marks,
    ) -> Result<(), String> {
        root.fill(&WHITE).msg()?;
        let body = root
            .titled(
                &self.title,
                (FONT, TITLE_SIZE).into_font().style(FontStyle::Bold),
            )
            .msg()?;
        let (width, _) = body.dim_in_pixel();
        let (plot_width, _) = split_widths(width);
        let (plot, legend) = body.split_horizontally(plot_width);
        match &self.chart {
            Chart::Line(chart) => draw_xy(
                &plot,
                &chart.x,
                &chart.y,
                &chart.series,
                false,
                false,
                marks,
            )?,
            Chart::Scatter(chart) => draw_xy(
                &plot,
                &chart.x,
                &chart.y,
                &chart.series,
                true,
                chart.identity_line,
                marks,
            )?,
            Chart::GroupedBar(chart) => draw_bars(root, &plot, chart, marks)?,
        };
        draw_legend(&legend, &self.legend_entries(), marks)?;
        root.present().msg()?;
        Ok(())
    }
}

/// The x and y ranges of a line or scatter chart (one shared range when a scatter
/// chart's y = x guide joins axes of the same scale).
pub(super) fn xy_ranges(
    x: &Axis,
    y: &Axis,
    series: &[Series],
    scatter: bool,
    identity: bool,
) -> ((f64, f64), (f64, f64)) {
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
    (xr, yr)
}

/// Registers the embedded DejaVu Sans once per process. Embedding the font keeps PNG
/// output identical on every machine and frees the build from fontconfig/freetype.
pub(super) fn ensure_font() -> Result<(), ReportError> {
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
pub(super) trait OrMessage<T> {
    fn msg(self) -> Result<T, String>;
}

impl<T, E: Debug> OrMessage<T> for Result<T, E> {
    fn msg(self) -> Result<T, String> {
        self.map_err(|e| format!("{e:?}"))
    }
}

/// Colour-blind-safe palette (Okabe-Ito, then neutral extras), cycled by series index.
pub(super) fn palette(index: usize) -> RGBColor {
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
pub(super) fn tick(v: f64) -> String {
    let a = v.abs();
    // A tick computed as a sum of steps lands a rounding error away from zero.
    if a < 1e-12 {
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
pub(super) fn axis_range(
    values: impl Iterator<Item = f64>,
    log: bool,
    zero_based: bool,
) -> (f64, f64) {
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
        // One value: a tenth of it either side (a utilisation of 0.43 is not drawn on
        // -0.6..1.4), or 1 around zero.
        let half = if hi.abs() > 0.0 { hi.abs() * 0.1 } else { 1.0 };
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
pub(super) fn log_axis(range: (f64, f64)) -> WithKeyPoints<LogCoord<f64>> {
    let (bold, light) = log_ticks(range.0, range.1);
    (range.0..range.1)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(light)
}

/// Labelled and grid-only ticks for a log axis. plotters labels only powers of ten, which
/// leaves a range like 30..120 ms with a single label; so labels step through 1-2-5 or
/// every mantissa when the range spans fewer than three decades.
pub(super) fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
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
    if bold.len() < 2 {
        // A range inside one step of the mantissas (11..19 ms): evenly spaced round
        // values, as on a linear axis.
        let raw = (hi - lo) / 4.0;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|s| *s >= raw)
            .unwrap_or(raw);
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        bold = (first..=last).map(|k| k as f64 * step).collect();
    }
    let light = in_range(&all)
        .into_iter()
        .filter(|v| !bold.contains(v))
        .collect();
    (bold, light)
}

/// Whether a value can be placed on an axis of the given scale.
pub(super) fn plottable(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || v > 0.0)
}

pub(super) fn no_data<DB: DrawingBackend, CT: CoordTranslate>(
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

/// Shortens `label` with an ellipsis until `measure` says it fits in `max` pixels.
pub(super) fn fit_label(label: &str, max: u32, measure: &dyn Fn(&str) -> u32) -> String {
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
