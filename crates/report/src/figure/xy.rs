//! Line and scatter charts: one drawing routine for the four linear/log axis
//! combinations, with the provenance deciding each series' style.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::ErrorBar as PlotErrorBar;
use plotters::prelude::*;

use super::draw::{
    axis_range, log_axis, no_data, palette, plottable, tick, OrMessage, AXIS_TITLE_SIZE, FONT,
    LABEL_SIZE, MARGIN, Y_LABEL_AREA,
};
use super::legend::{Glyph, LegendEntry};
use super::{Axis, Series};
use crate::provenance::ProvenanceKind;

pub(super) fn draw_xy<DB: DrawingBackend>(
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
    /// Mesh, the y = x guide if asked for, then every series; returns the legend entries.
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

        let mut entries: Vec<LegendEntry> = self.identity_line(&mut chart)?.into_iter().collect();
        let mut any_point = false;
        for (index, series) in self.series.iter().enumerate() {
            let (entry, drawn) = self.one_series(&mut chart, index, series)?;
            any_point |= drawn;
            entries.push(entry);
        }
        if !any_point {
            no_data(chart.plotting_area())?;
        }
        Ok(entries)
    }

    /// The dashed y = x guide of a scatter chart, where the two ranges overlap.
    fn identity_line<DB, X, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    ) -> Result<Option<LegendEntry>, String>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        let lo = self.xr.0.max(self.yr.0);
        let hi = self.xr.1.min(self.yr.1);
        if !self.identity || lo >= hi {
            return Ok(None);
        }
        let grey = RGBColor(120, 120, 120);
        chart
            .draw_series(DashedLineSeries::new(
                [(lo, lo), (hi, hi)],
                6,
                4,
                grey.stroke_width(1),
            ))
            .msg()?;
        Ok(Some(LegendEntry {
            name: "y = x (perfect agreement)".into(),
            kind: ProvenanceKind::Derived,
            colour: grey,
            glyph: Glyph::Identity,
        }))
    }

    /// One series: its error bars, its line (line charts) and its markers. Returns its
    /// legend entry and whether any of its points could be placed on the axes.
    fn one_series<DB, X, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
        index: usize,
        series: &Series,
    ) -> Result<(LegendEntry, bool), String>
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
        self.error_bars(chart, series, colour)?;
        if !self.scatter && points.len() > 1 {
            draw_line(chart, points.clone(), kind, colour)?;
        }
        // A model drawn as a line needs no markers, except when a single point would
        // otherwise be invisible.
        let markers = self.scatter || kind != ProvenanceKind::Modelled || points.len() == 1;
        if markers {
            draw_markers(chart, &points, kind, colour)?;
        }
        let entry = LegendEntry {
            name: series.name.clone(),
            kind,
            colour,
            glyph: if self.scatter {
                Glyph::Marker
            } else {
                Glyph::Line
            },
        };
        Ok((entry, !points.is_empty()))
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

/// A series' line, styled by its provenance.
fn draw_line<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    pts: Vec<(f64, f64)>,
    kind: ProvenanceKind,
    colour: RGBColor,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
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
    .msg()
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
