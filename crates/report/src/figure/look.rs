//! How a series is drawn: its line and its marker, from its provenance and its
//! [`Trace`]. The plot and the legend sample both draw from one [`Look`], so a legend
//! entry cannot show a style its series does not have.

use plotters::coord::CoordTranslate;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::draw::OrMessage;
use super::Trace;
use crate::provenance::ProvenanceKind;

/// The line joining a series' points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LineLook {
    pub(super) width: u32,
    /// How much of the series' colour (the rest white): thin measured lines are faded so
    /// that their markers stand out.
    pub(super) strength: f64,
    /// Dash and gap in pixels; `None` is a solid line.
    pub(super) dash: Option<(u32, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Circle,
    Cross,
    Square,
    Triangle,
}

/// The marker at each of a series' points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MarkerLook {
    pub(super) shape: Shape,
    pub(super) filled: bool,
}

/// A series' line (none in scatter charts and for points set apart) and marker (none
/// for a model's line, whose points are the line).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Look {
    pub(super) line: Option<LineLook>,
    pub(super) marker: Option<MarkerLook>,
}

impl Look {
    /// The look of a series of `kind` drawn as `trace`, in a scatter chart (`scatter`)
    /// or a line chart; `lone`: the series has a single point, which a line alone would
    /// not show.
    pub(super) fn of(kind: ProvenanceKind, trace: Trace, scatter: bool, lone: bool) -> Look {
        let shape = match kind {
            ProvenanceKind::Measured => Shape::Circle,
            ProvenanceKind::Modelled => Shape::Cross,
            ProvenanceKind::Published => Shape::Square,
            ProvenanceKind::Derived => Shape::Triangle,
        };
        let hollow = MarkerLook {
            shape,
            filled: false,
        };
        let primary_marker = MarkerLook {
            shape,
            filled: kind == ProvenanceKind::Measured,
        };
        if trace == Trace::Apart {
            return Look {
                line: None,
                marker: Some(hollow),
            };
        }
        let marker = if trace == Trace::Secondary {
            hollow
        } else {
            primary_marker
        };
        if scatter {
            return Look {
                line: None,
                marker: Some(marker),
            };
        }
        let line = match (kind, trace) {
            (ProvenanceKind::Modelled, Trace::Primary) => line(3, 1.0, None),
            (ProvenanceKind::Measured, Trace::Primary) => line(1, 0.55, None),
            (ProvenanceKind::Published, Trace::Primary) => line(2, 1.0, Some((10, 6))),
            (ProvenanceKind::Derived, Trace::Primary) => line(2, 1.0, Some((2, 4))),
            (ProvenanceKind::Published, _) => line(2, 1.0, Some((3, 3))),
            (ProvenanceKind::Derived, _) => line(2, 1.0, Some((1, 6))),
            (_, _) => line(2, 1.0, Some((7, 4))),
        };
        // A model's line needs no markers, except when a single point would otherwise
        // be invisible.
        let marked = kind != ProvenanceKind::Modelled || lone;
        Look {
            line: Some(line),
            marker: marked.then_some(marker),
        }
    }

    /// The convention in words, for the figure's caption list.
    pub(super) fn describe(&self) -> String {
        let line = match self.line {
            None => "no line".to_string(),
            Some(LineLook { dash: None, .. }) => "solid line".to_string(),
            Some(LineLook {
                dash: Some((d, g)), ..
            }) if d <= 2 || g > 2 * d => "dotted line".to_string(),
            Some(_) => "dashed line".to_string(),
        };
        match self.marker {
            None => line,
            Some(m) => {
                let shape = match m.shape {
                    Shape::Circle => "circles",
                    Shape::Cross => "crosses",
                    Shape::Square => "squares",
                    Shape::Triangle => "triangles",
                };
                let fill = if m.filled { "filled" } else { "hollow" };
                format!("{line}, {fill} {shape}")
            }
        }
    }
}

fn line(width: u32, strength: f64, dash: Option<(u32, u32)>) -> LineLook {
    LineLook {
        width,
        strength,
        dash,
    }
}

/// Draws `points` joined by `line` on `area`, in the area's own coordinates.
pub(super) fn draw_line<DB, CT>(
    area: &DrawingArea<DB, CT>,
    points: Vec<CT::From>,
    line: LineLook,
    colour: RGBColor,
) -> Result<(), String>
where
    DB: DrawingBackend,
    CT: CoordTranslate,
    CT::From: Clone,
{
    let style = colour.mix(line.strength).stroke_width(line.width);
    match line.dash {
        None => area.draw(&PathElement::new(points, style)).msg(),
        Some((dash, gap)) => area
            .draw(&DashedPathElement::new(points, dash, gap, style))
            .msg(),
    }
}

/// Draws `marker` at each of `points` on `area`, in the area's own coordinates.
pub(super) fn draw_markers<DB, CT>(
    area: &DrawingArea<DB, CT>,
    points: impl IntoIterator<Item = CT::From>,
    marker: MarkerLook,
    colour: RGBColor,
) -> Result<(), String>
where
    DB: DrawingBackend,
    CT: CoordTranslate,
{
    for p in points {
        let at = EmptyElement::at(p);
        let drawn = match (marker.shape, marker.filled) {
            (Shape::Circle, true) => area.draw(&(at + Circle::new((0, 0), 4, colour.filled()))),
            (Shape::Circle, false) => area.draw(
                &(at + Circle::new((0, 0), 4, WHITE.filled())
                    + Circle::new((0, 0), 4, colour.stroke_width(2))),
            ),
            (Shape::Cross, _) => area.draw(&(at + Cross::new((0, 0), 5, colour.stroke_width(2)))),
            (Shape::Square, true) => {
                area.draw(&(at + Rectangle::new([(-4, -4), (4, 4)], colour.filled())))
            }
            (Shape::Square, false) => area.draw(
                &(at + Rectangle::new([(-4, -4), (4, 4)], WHITE.filled())
                    + Rectangle::new([(-4, -4), (4, 4)], colour.stroke_width(2))),
            ),
            (Shape::Triangle, true) => {
                area.draw(&(at + TriangleMarker::new((0, 0), 5, colour.filled())))
            }
            (Shape::Triangle, false) => {
                area.draw(&(at + TriangleMarker::new((0, 0), 5, colour.stroke_width(1))))
            }
        };
        drawn.msg()?;
    }
    Ok(())
}
