//! The legend panel beside the plot: entries grouped by provenance, each with a sample
//! of how its series is drawn and its name wrapped to the panel's width.
//!
//! The entries come from the figure's description ([`Figure::legend_entries`]): one per
//! series with at least one plottable value, so the legend lists exactly the series the
//! plot draws. The panel is laid out before it is drawn, so that the figure can be made
//! tall enough for every entry ([`Figure::drawn_height`]).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::bars::bar_style;
use super::draw::{
    fit_label, palette, plottable, xy_ranges, OrMessage, FONT, LABEL_SIZE, MARGIN, TITLE_SIZE,
};
use super::look::{draw_line, draw_markers, Look};
use super::marks::{Marks, Role};
use super::{Chart, Figure};
use crate::provenance::ProvenanceKind;

/// What the legend panel shows for one series.
pub(super) struct LegendEntry {
    pub(super) name: String,
    pub(super) kind: ProvenanceKind,
    pub(super) colour: RGBColor,
    pub(super) sample: Sample,
}

/// How an entry's sample is drawn.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Sample {
    /// A line or scatter series.
    Look(Look),
    Bar,
    /// The y = x guide of a scatter chart.
    Identity,
}

/// Sizes of the panel's rows.
const LINE_H: i32 = LABEL_SIZE as i32 + 5;
const TEXT_X: i32 = 46;

/// One row of the laid-out panel.
enum Row<'e> {
    Heading(String),
    Entry(&'e LegendEntry, Vec<String>),
}

impl Figure {
    /// The legend's entries: one per series that has a value the axes can place, in
    /// drawing order, and the y = x guide where it is drawn.
    pub(super) fn legend_entries(&self) -> Vec<LegendEntry> {
        match &self.chart {
            Chart::Line(c) => xy_entries(&c.x, &c.y, &c.series, false, false),
            Chart::Scatter(c) => xy_entries(&c.x, &c.y, &c.series, true, c.identity_line),
            Chart::GroupedBar(c) => c
                .series
                .iter()
                .enumerate()
                .filter(|(_, s)| s.values.iter().flatten().any(|v| plottable(*v, c.y.log)))
                .map(|(j, s)| LegendEntry {
                    name: s.name.clone(),
                    kind: s.provenance.kind(),
                    colour: palette(s.colour.unwrap_or(j)),
                    sample: Sample::Bar,
                })
                .collect(),
        }
    }

    /// The height the figure is drawn at: its own, or more when the legend needs it.
    pub(super) fn drawn_height(&self) -> u32 {
        let entries = self.legend_entries();
        let (_, legend_width) = split_widths(self.width);
        let title = TITLE_SIZE as u32 + 2 * MARGIN;
        let needed = title + panel_height(&entries, legend_width) + MARGIN;
        self.height.max(needed)
    }
}

fn xy_entries(
    x: &super::Axis,
    y: &super::Axis,
    series: &[super::Series],
    scatter: bool,
    identity: bool,
) -> Vec<LegendEntry> {
    let mut entries = Vec::new();
    let (xr, yr) = xy_ranges(x, y, series, scatter, identity);
    if identity && xr.0.max(yr.0) < xr.1.min(yr.1) {
        entries.push(LegendEntry {
            name: IDENTITY_NAME.into(),
            kind: ProvenanceKind::Derived,
            colour: GUIDE_GREY,
            sample: Sample::Identity,
        });
    }
    for (index, s) in series.iter().enumerate() {
        let placed = s
            .points
            .iter()
            .filter(|p| plottable(p.x, x.log) && plottable(p.y, y.log))
            .count();
        if placed == 0 {
            continue;
        }
        let kind = s.provenance.kind();
        entries.push(LegendEntry {
            name: s.name.clone(),
            kind,
            colour: palette(s.colour.unwrap_or(index)),
            sample: Sample::Look(Look::of(kind, s.trace, scatter, placed == 1)),
        });
    }
    entries
}

/// The name of the y = x guide, in the plot's group and the legend's.
pub(super) const IDENTITY_NAME: &str = "y = x (perfect agreement)";
pub(super) const GUIDE_GREY: RGBColor = RGBColor(120, 120, 120);

/// The widths of the plot and of the legend panel in a figure `width` wide.
pub(super) fn split_widths(width: u32) -> (u32, u32) {
    let legend = (width / 4).clamp(150, 280);
    (width.saturating_sub(legend), legend)
}

fn measure(text: &str) -> u32 {
    (FONT, LABEL_SIZE)
        .into_font()
        .box_size(text)
        .map(|(w, _)| w)
        .unwrap_or(text.chars().count() as u32 * 8)
}

/// The panel's rows: a heading per provenance kind present, then its entries, the
/// guides (y = x) last.
fn layout(entries: &[LegendEntry], width: u32) -> Vec<Row<'_>> {
    let text_w = width.saturating_sub(TEXT_X as u32 + 6).max(40);
    let groups = ProvenanceKind::ALL
        .iter()
        .map(|&kind| {
            let group: Vec<&LegendEntry> = entries
                .iter()
                .filter(|e| e.kind == kind && e.sample != Sample::Identity)
                .collect();
            (kind.name().to_uppercase(), group)
        })
        .chain(std::iter::once((
            "REFERENCE".to_string(),
            entries
                .iter()
                .filter(|e| e.sample == Sample::Identity)
                .collect(),
        )));
    let mut rows = Vec::new();
    for (title, group) in groups {
        if group.is_empty() {
            continue;
        }
        rows.push(Row::Heading(title));
        for entry in group {
            rows.push(Row::Entry(entry, wrap(&entry.name, text_w, &measure)));
        }
    }
    rows
}

fn row_height(row: &Row) -> i32 {
    match row {
        Row::Heading(_) => LINE_H + 2,
        Row::Entry(_, lines) => LINE_H * lines.len() as i32 + 4,
    }
}

/// The height the panel needs for `entries` at `width`.
fn panel_height(entries: &[LegendEntry], width: u32) -> u32 {
    let rows = layout(entries, width);
    let headings = rows.iter().filter(|r| matches!(r, Row::Heading(_))).count() as i32;
    let h: i32 = rows.iter().map(row_height).sum::<i32>() + 6 * headings + MARGIN as i32 + 4;
    h.max(0) as u32
}

/// The legend panel, every entry in its own group (`marks`).
pub(super) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
    marks: &Marks,
) -> Result<(), String> {
    let (w, _) = area.dim_in_pixel();
    let font = (FONT, LABEL_SIZE).into_font();
    let heading = (FONT, LABEL_SIZE)
        .into_font()
        .style(FontStyle::Bold)
        .color(&RGBColor(60, 60, 60));
    let mut y = MARGIN as i32 + 4;
    let mut first = true;
    for row in layout(entries, w) {
        match &row {
            Row::Heading(title) => {
                if !first {
                    y += 6;
                }
                first = false;
                area.draw_text(title, &heading, (6, y)).msg()?;
            }
            Row::Entry(entry, lines) => {
                marks.open(area, Role::Legend, &entry.name, &[])?;
                draw_sample(area, entry, y + LINE_H / 2 - 1)?;
                for (i, line) in lines.iter().enumerate() {
                    area.draw_text(line, &font.color(&BLACK), (TEXT_X, y + LINE_H * i as i32))
                        .msg()?;
                }
                marks.close(area)?;
            }
        }
        y += row_height(&row);
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
    match entry.sample {
        Sample::Bar => {
            let (fill, outline) = bar_style(entry.kind, c);
            area.draw(&Rectangle::new([(x0 + 4, y - 6), (x1 - 4, y + 6)], fill))
                .msg()?;
            if let Some(outline) = outline {
                area.draw(&Rectangle::new([(x0 + 4, y - 6), (x1 - 4, y + 6)], outline))
                    .msg()?;
            }
        }
        Sample::Identity => {
            for s in [x0, x0 + 12, x0 + 24] {
                area.draw(&PathElement::new(
                    vec![(s, y), (s + 6, y)],
                    c.stroke_width(1),
                ))
                .msg()?;
            }
        }
        Sample::Look(look) => {
            if let Some(line) = look.line {
                draw_line(area, vec![(x0, y), (x1, y)], line, c)?;
            }
            if let Some(marker) = look.marker {
                draw_markers(area, [(xm, y)], marker, c)?;
            }
        }
    }
    Ok(())
}

/// Greedy word wrap to `max` pixels; a single word longer than a line is cut with an
/// ellipsis rather than overflowing into the plot.
pub(super) fn wrap(text: &str, max: u32, measure: &dyn Fn(&str) -> u32) -> Vec<String> {
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
