//! Writing a figure out: a standalone SVG, a PNG, the plotted numbers as CSV, and the
//! HTML `<figure>` the report inlines, with each series' drawing convention named.

use plotters::prelude::*;

use super::draw::ensure_font;
use super::look::Look;
use super::marks::Marks;
use super::{Chart, Figure, LineChart, ScatterChart, Series, Trace};
use crate::html::escape_html;
use crate::provenance::Provenance;
use crate::provenance::ProvenanceKind;
use crate::table::paragraphs;
use crate::ReportError;

impl Figure {
    /// The figure as a standalone SVG document.
    pub fn to_svg(&self) -> Result<String, ReportError> {
        self.validate()?;
        ensure_font()?;
        let mut svg = String::new();
        let marks = Marks::new(true);
        {
            let root = SVGBackend::with_string(&mut svg, (self.width, self.drawn_height()))
                .into_drawing_area();
            self.draw(&root, &marks)
                .map_err(|message| self.plot_error(message))?;
        }
        Ok(marks.finish(&svg))
    }

    /// The figure as PNG bytes (8-bit RGB).
    pub fn to_png(&self) -> Result<Vec<u8>, ReportError> {
        self.validate()?;
        ensure_font()?;
        let (w, h) = (self.width, self.drawn_height());
        let mut rgb = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            self.draw(&root, &Marks::new(false))
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
            let convention = match &self.chart {
                Chart::GroupedBar(_) => bar_convention(kind).to_string(),
                Chart::Line(LineChart { series, .. }) => looks(series, p, false),
                Chart::Scatter(ScatterChart { series, .. }) => looks(series, p, true),
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
}

fn bar_convention(kind: ProvenanceKind) -> &'static str {
    match kind {
        ProvenanceKind::Measured => "solid bars",
        ProvenanceKind::Modelled => "light bars with outline",
        ProvenanceKind::Published => "hollow bars",
        ProvenanceKind::Derived => "pale bars",
    }
}

/// How the series of provenance `p` are drawn, each distinct look once, a second
/// quantity and points set apart named as such.
fn looks(series: &[Series], p: &Provenance, scatter: bool) -> String {
    let mut out: Vec<String> = Vec::new();
    for s in series.iter().filter(|s| &s.provenance == p) {
        let look = Look::of(p.kind(), s.trace, scatter, s.points.len() == 1).describe();
        let text = match s.trace {
            Trace::Primary => look,
            Trace::Secondary => format!("{look} for the second quantity"),
            Trace::Apart => format!("{look} for points set apart"),
        };
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out.join("; ")
}
