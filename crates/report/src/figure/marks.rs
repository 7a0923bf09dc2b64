//! Structure in the SVG: each drawn series and each legend entry becomes a `<g>` element
//! that names its series, so that a figure's legend can be compared with its series from
//! the SVG alone (a unit test here, and the browser test on the whole report).
//!
//! plotters writes flat SVG with no way to open a group. So, when drawing SVG, the
//! drawing code writes a sentinel text element where a group opens and where it closes,
//! and [`Marks::finish`] replaces each sentinel with `<g ...>` or `</g>`. The PNG is
//! drawn without sentinels.

use plotters::coord::CoordTranslate;
use plotters::prelude::*;

use super::draw::{OrMessage, FONT};
use crate::html::escape_html;

const SENTINEL: &str = "@@wtlsperf-mark ";

/// What a group holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A series' drawing (lines, markers, bars, error bars).
    Series,
    /// A legend entry (its sample and its name).
    Legend,
}

impl Role {
    fn class(self) -> &'static str {
        match self {
            Role::Series => "series",
            Role::Legend => "legend-entry",
        }
    }
}

/// The groups of one drawing: on for SVG, off for PNG.
pub(super) struct Marks {
    on: bool,
    /// The attributes of each group opened so far, in order.
    opened: std::cell::RefCell<Vec<String>>,
}

impl Marks {
    pub(super) fn new(on: bool) -> Marks {
        Marks {
            on,
            opened: Default::default(),
        }
    }

    /// Opens a group of `role` for series `name` (`attrs`: further `data-` attributes).
    pub(super) fn open<DB: DrawingBackend, CT: CoordTranslate>(
        &self,
        area: &DrawingArea<DB, CT>,
        role: Role,
        name: &str,
        attrs: &[(&str, &str)],
    ) -> Result<(), String> {
        if !self.on {
            return Ok(());
        }
        let mut tag = format!(
            "<g class=\"{}\" data-series=\"{}\"",
            role.class(),
            escape_html(name)
        );
        for (key, value) in attrs {
            tag.push_str(&format!(" data-{key}=\"{}\"", escape_html(value)));
        }
        tag.push('>');
        let index = {
            let mut opened = self.opened.borrow_mut();
            opened.push(tag);
            opened.len() - 1
        };
        self.sentinel(area, &format!("open {index}"))
    }

    /// Closes the group opened last.
    pub(super) fn close<DB: DrawingBackend, CT: CoordTranslate>(
        &self,
        area: &DrawingArea<DB, CT>,
    ) -> Result<(), String> {
        if !self.on {
            return Ok(());
        }
        self.sentinel(area, "close")
    }

    fn sentinel<DB: DrawingBackend, CT: CoordTranslate>(
        &self,
        area: &DrawingArea<DB, CT>,
        what: &str,
    ) -> Result<(), String> {
        let style = (FONT, 1.0).into_font().color(&BLACK);
        area.strip_coord_spec()
            .draw_text(&format!("{SENTINEL}{what}@@"), &style, (0, 0))
            .msg()
    }

    /// The SVG with every sentinel replaced by its group's tag.
    pub(super) fn finish(&self, svg: &str) -> String {
        let opened = self.opened.borrow();
        let mut out = String::with_capacity(svg.len());
        let mut rest = svg;
        while let Some(at) = rest.find(SENTINEL) {
            let (Some(start), Some(end)) = (
                rest[..at].rfind("<text"),
                rest[at..].find("</text>").map(|e| at + e + "</text>".len()),
            ) else {
                break;
            };
            out.push_str(&rest[..start]);
            let what = rest[at + SENTINEL.len()..]
                .split("@@")
                .next()
                .unwrap_or_default();
            match what.strip_prefix("open ") {
                Some(i) => {
                    let tag = i.parse::<usize>().ok().and_then(|i| opened.get(i));
                    out.push_str(tag.map(String::as_str).unwrap_or("<g>"));
                }
                None => out.push_str("</g>"),
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }
}

/// The series and the legend entries of a figure's SVG, read from its groups: each name
/// once per group, in drawing order. A series group counts only if it holds a drawn
/// element (a line, a marker, a bar).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SvgLegendCheck {
    pub series: Vec<String>,
    pub legend: Vec<String>,
}

impl SvgLegendCheck {
    /// The disagreements between legend and series, in words; empty when they agree.
    pub fn disagreements(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.series {
            if !self.legend.contains(s) {
                out.push(format!("series {s:?} is drawn but has no legend entry"));
            }
        }
        for l in &self.legend {
            if !self.series.contains(l) {
                out.push(format!("legend entry {l:?} has no drawn series"));
            }
        }
        if out.is_empty() && self.series.len() != self.legend.len() {
            out.push(format!(
                "{} drawn series against {} legend entries",
                self.series.len(),
                self.legend.len()
            ));
        }
        out
    }
}

/// Reads the series and legend groups of `svg` (as [`Marks`] writes them).
pub fn svg_series_and_legend(svg: &str) -> SvgLegendCheck {
    let mut check = SvgLegendCheck::default();
    let mut rest = svg;
    while let Some(at) = rest.find("<g class=\"") {
        let tag_end = rest[at..].find('>').map_or(rest.len(), |e| at + e + 1);
        let tag = &rest[at..tag_end];
        let body_end = rest[tag_end..]
            .find("</g>")
            .map_or(rest.len(), |e| tag_end + e);
        let body = &rest[tag_end..body_end];
        let name = attribute(tag, "data-series").unwrap_or_default();
        if tag.starts_with("<g class=\"series\"") {
            let drawn = [
                "<circle",
                "<line",
                "<polyline",
                "<polygon",
                "<rect",
                "<path",
            ]
            .iter()
            .any(|e| body.contains(e));
            if drawn {
                check.series.push(name);
            }
        } else if tag.starts_with("<g class=\"legend-entry\"") {
            check.legend.push(name);
        }
        rest = &rest[body_end.min(rest.len())..];
        if rest.starts_with("</g>") {
            rest = &rest[4..];
        }
    }
    check
}

/// The unescaped value of `name="..."` in a tag.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let end = tag[start..].find('"')? + start;
    Some(
        tag[start..end]
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}
