//! Line and scatter charts: one drawing routine for the four linear/log axis
//! combinations, with the provenance deciding each series' style.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::ErrorBar as PlotErrorBar;
use plotters::prelude::*;

use plotters::element::DashedPathElement;

use super::draw::{
    log_axis, no_data, palette, plottable, tick, xy_ranges, OrMessage, AXIS_TITLE_SIZE, FONT,
    LABEL_SIZE, MARGIN, Y_LABEL_AREA,
};
use super::legend::{GUIDE_GREY, IDENTITY_NAME};
use super::look::{draw_line, draw_markers, Look};
use super::marks::{Marks, Role};
use super::{Axis, Series, Trace};

pub(super) fn draw_xy<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    scatter: bool,
    identity: bool,
    marks: &Marks,
) -> Result<(), String> {
    let (xr, yr) = xy_ranges(x, y, series, scatter, identity);
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
        marks,
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
    marks: &'s Marks,
}

impl XyContext<'_> {
    /// Mesh, the y = x guide if asked for, then every series with a placeable point
    /// (the series [`Figure::legend_entries`](super::Figure) lists).
    fn plot<DB, X, Y>(
        &self,
        mut chart: ChartContext<'_, DB, Cartesian2d<X, Y>>,
    ) -> Result<(), String>
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

        self.identity_line(&mut chart)?;
        let mut any_point = false;
        for (index, series) in self.series.iter().enumerate() {
            any_point |= self.one_series(&mut chart, index, series)?;
        }
        if !any_point {
            no_data(chart.plotting_area())?;
        }
        Ok(())
    }

    /// The dashed y = x guide of a scatter chart, where the two ranges overlap.
    fn identity_line<DB, X, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    ) -> Result<(), String>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        let lo = self.xr.0.max(self.yr.0);
        let hi = self.xr.1.min(self.yr.1);
        if !self.identity || lo >= hi {
            return Ok(());
        }
        let area = chart.plotting_area();
        self.marks
            .open(area, Role::Series, IDENTITY_NAME, &[("kind", "guide")])?;
        area.draw(&DashedPathElement::new(
            [(lo, lo), (hi, hi)],
            6,
            4,
            GUIDE_GREY.stroke_width(1),
        ))
        .msg()?;
        self.marks.close(area)
    }

    /// One series, in its own group: its error bars, its line and its markers, styled
    /// by its [`Look`]. Returns whether any of its points could be placed on the axes
    /// (a series without one is not drawn, and has no legend entry).
    fn one_series<DB, X, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
        index: usize,
        series: &Series,
    ) -> Result<bool, String>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        let (xlog, ylog) = (self.x.log, self.y.log);
        let colour = palette(series.colour.unwrap_or(index));
        let kind = series.provenance.kind();
        let points: Vec<(f64, f64)> = series
            .points
            .iter()
            .filter(|p| plottable(p.x, xlog) && plottable(p.y, ylog))
            .map(|p| (p.x, p.y))
            .collect();
        if points.is_empty() {
            return Ok(false);
        }
        let look = Look::of(kind, series.trace, self.scatter, points.len() == 1);
        let area = chart.plotting_area();
        self.marks.open(
            area,
            Role::Series,
            &series.name,
            &[("kind", kind.name()), ("trace", trace_name(series.trace))],
        )?;
        self.error_bars(chart, series, colour)?;
        let area = chart.plotting_area();
        if let Some(line) = look.line.filter(|_| points.len() > 1) {
            draw_line(area, points.clone(), line, colour)?;
        }
        if let Some(marker) = look.marker {
            draw_markers(area, points.iter().copied(), marker, colour)?;
        }
        self.marks.close(area)?;
        Ok(true)
    }

    /// The vertical error bars of a series' placeable points.
    fn error_bars<DB, X, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
        series: &Series,
        colour: RGBColor,
    ) -> Result<(), String>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        let (xlog, ylog) = (self.x.log, self.y.log);
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
        Ok(())
    }
}

/// The `data-trace` value of a series' group.
fn trace_name(trace: Trace) -> &'static str {
    match trace {
        Trace::Primary => "primary",
        Trace::Secondary => "secondary",
        Trace::Apart => "apart",
    }
}
