//! The legend panel beside the plot: entries grouped by provenance, each with a sample
//! of how its series is drawn and its name wrapped to the panel's width.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::bars::bar_style;
use super::draw::{fit_label, OrMessage, FONT, LABEL_SIZE, MARGIN};
use crate::provenance::ProvenanceKind;

/// What the legend panel shows for one series.
pub(super) struct LegendEntry {
    pub(super) name: String,
    pub(super) kind: ProvenanceKind,
    pub(super) colour: RGBColor,
    pub(super) glyph: Glyph,
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Glyph {
    Line,
    Marker,
    Bar,
    Identity,
}

/// The legend panel: entries grouped under a heading per provenance kind, each with a
/// sample of how it is drawn and its name wrapped to the panel width.
pub(super) fn draw_legend<DB: DrawingBackend>(
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
