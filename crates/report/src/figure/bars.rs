//! Grouped bar charts: bars styled by provenance, error bars, and category labels laid
//! out horizontally or turned on their side when they do not fit under their group.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::ErrorBar as PlotErrorBar;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::draw::{
    axis_range, fit_label, log_axis, no_data, palette, plottable, tick, OrMessage, AXIS_TITLE_SIZE,
    FONT, LABEL_SIZE, MARGIN, Y_LABEL_AREA,
};
use super::marks::{Marks, Role};
use super::GroupedBarChart;
use crate::provenance::ProvenanceKind;

/// Fill and outline of a bar by provenance: measured solid, model light with outline,
/// published hollow with a thick outline, derived pale.
pub(super) fn bar_style(
    kind: ProvenanceKind,
    colour: RGBColor,
) -> (ShapeStyle, Option<ShapeStyle>) {
    match kind {
        ProvenanceKind::Measured => (colour.filled(), None),
        ProvenanceKind::Modelled => (colour.mix(0.35).filled(), Some(colour.stroke_width(1))),
        ProvenanceKind::Published => (WHITE.filled(), Some(colour.stroke_width(2))),
        ProvenanceKind::Derived => (colour.mix(0.15).filled(), Some(colour.stroke_width(1))),
    }
}

pub(super) fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    chart_spec: &GroupedBarChart,
    marks: &Marks,
) -> Result<(), String> {
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
        plot_bars(chart, chart_spec, yr, marks)?
    } else {
        let chart = builder.build_cartesian_2d(x_range, yr.0..yr.1).msg()?;
        plot_bars(chart, chart_spec, yr, marks)?
    };

    // Category labels, drawn on the root in absolute pixels at each group's centre.
    let (label_x, label_y) = entries;
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
    Ok(())
}

/// The alternate shading of the groups (it keeps the eye on the right group when there
/// are many categories) and the mesh with its axis titles.
fn draw_frame<DB, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    spec: &GroupedBarChart,
    yr: (f64, f64),
) -> Result<(), String>
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let n = spec.categories.len();
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
        .msg()
}

/// A bar's rectangle and its error bar (x, low, value, high).
type BarShapes = (Vec<[(f64, f64); 2]>, Vec<(f64, f64, f64, f64)>);

/// One series' bars, each in its slot of its group (`slot_x(i)`: the slot's left edge in
/// group `i`, `bar` wide), from `base` up to a plottable value, with the error bars.
fn series_shapes(
    series: &super::BarSeries,
    slot_x: impl Fn(usize) -> f64,
    bar: f64,
    base: f64,
    ylog: bool,
) -> BarShapes {
    let mut rects = Vec::new();
    let mut bars = Vec::new();
    for (i, value) in series.values.iter().enumerate() {
        let x0 = slot_x(i);
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
    (rects, bars)
}

/// Draws shading, mesh, bars and error bars, each series with a bar in its own group
/// (the series [`Figure::legend_entries`](super::Figure) lists); returns the pixel
/// positions (centres, axis line) where the category labels go.
#[allow(clippy::type_complexity)]
fn plot_bars<DB, Y>(
    mut chart: ChartContext<'_, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    spec: &GroupedBarChart,
    yr: (f64, f64),
    marks: &Marks,
) -> Result<(Vec<i32>, i32), String>
where
    DB: DrawingBackend,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let n = spec.categories.len();
    let ylog = spec.y.log;
    draw_frame(&mut chart, spec, yr)?;

    // Only series with a bar take a slot in each group (and an entry in the legend).
    let has_bar = |s: &super::BarSeries| s.values.iter().flatten().any(|v| plottable(*v, ylog));
    let m = spec.series.iter().filter(|s| has_bar(s)).count().max(1) as f64;
    let group = 0.8;
    let bar = group / m;
    let base = if ylog {
        yr.0
    } else {
        0.0_f64.clamp(yr.0, yr.1)
    };
    let mut any_bar = false;
    let mut slot = 0usize;
    for (j, series) in spec.series.iter().enumerate() {
        if !has_bar(series) {
            continue;
        }
        let colour = palette(series.colour.unwrap_or(j));
        let kind = series.provenance.kind();
        let (fill, outline) = bar_style(kind, colour);
        let slot_x = |i: usize| i as f64 + (1.0 - group) / 2.0 + slot as f64 * bar;
        let (rects, bars) = series_shapes(series, slot_x, bar, base, ylog);
        if rects.is_empty() {
            continue;
        }
        any_bar = true;
        marks.open(
            chart.plotting_area(),
            Role::Series,
            &series.name,
            &[("kind", kind.name())],
        )?;
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
        marks.close(chart.plotting_area())?;
        slot += 1;
    }
    if !any_bar {
        no_data(chart.plotting_area())?;
    }
    let centres = (0..n)
        .map(|i| chart.backend_coord(&(i as f64 + 0.5, yr.0)).0)
        .collect();
    let axis_y = chart.backend_coord(&(0.0, yr.0)).1;
    Ok((centres, axis_y))
}
