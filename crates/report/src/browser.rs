//! The report in a real browser: [`check_in_chromium`] opens a `report.html` in
//! headless Chromium (Debian's `chromium`) at 1280 px and reports what a reader would
//! trip over: a console error (a script error, a resource that failed to load, anything
//! the browser logs to the console of a page that has no scripts of its own),
//! horizontal overflow, and a figure whose legend and series disagree, read from the
//! SVG's own groups (`g.series` and `g.legend-entry`, each naming its series; see the
//! `figure` module) or whose legend entry is cut off. The tests of this crate and the
//! end-to-end test of `wtlsperf evaluate` call it.

use std::path::Path;
use std::process::Command;

/// The script the harness puts first in the page's head: it records every error event
/// (scripts and resources) and console.error, and after the load event writes what it
/// found into `<pre id="wtlsperf-check">`, one problem a line, which `--dump-dom` prints.
const HARNESS: &str = r#"<script>
window.__problems = [];
window.addEventListener('error', function (e) {
  var what = e.message || (e.target && (e.target.src || e.target.href)) || 'error event';
  __problems.push('console-error\t' + what);
}, true);
(function () {
  var original = console.error;
  console.error = function () {
    __problems.push('console-error\t' + Array.prototype.join.call(arguments, ' '));
    original.apply(console, arguments);
  };
})();
window.addEventListener('load', function () {
  var root = document.documentElement;
  if (root.scrollWidth > root.clientWidth) {
    __problems.push('overflow\tpage is ' + root.scrollWidth + ' px wide in a ' + root.clientWidth + ' px window');
  }
  var figures = document.querySelectorAll('figure.chart');
  figures.forEach(function (fig) {
    var svg = fig.querySelector('svg');
    if (!svg) { __problems.push('legend\t' + fig.id + ': no SVG'); return; }
    var drawn = Array.prototype.filter.call(svg.querySelectorAll('g.series'), function (g) {
      return g.querySelector('circle, line, polyline, polygon, rect, path') !== null;
    }).map(function (g) { return g.getAttribute('data-series'); }).sort();
    var legend = Array.prototype.map.call(svg.querySelectorAll('g.legend-entry'), function (g) {
      return g.getAttribute('data-series');
    }).sort();
    if (JSON.stringify(drawn) !== JSON.stringify(legend)) {
      __problems.push('legend\t' + fig.id + ': series ' + JSON.stringify(drawn) + ' against legend ' + JSON.stringify(legend));
    }
    var height = svg.viewBox.baseVal && svg.viewBox.baseVal.height ? svg.viewBox.baseVal.height : svg.getAttribute('height');
    svg.querySelectorAll('g.legend-entry').forEach(function (g) {
      var box = g.getBBox();
      if (box.y + box.height > Number(height) + 0.5) {
        __problems.push('legend\t' + fig.id + ': entry ' + g.getAttribute('data-series') + ' is cut off');
      }
    });
  });
  var out = document.createElement('pre');
  out.id = 'wtlsperf-check';
  out.textContent = 'figures\t' + figures.length + '\n' + __problems.join('\n');
  document.body.appendChild(out);
});
</script>
"#;

/// What the browser found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserFindings {
    /// Figures (`figure.chart`) in the page.
    pub figures: usize,
    /// One problem a line, `kind\tdetail` with kind `console-error`, `overflow` or
    /// `legend`; empty when the page is clean.
    pub problems: Vec<String>,
}

/// Opens `html` (a report.html's text; written with the harness as `checked.html` in
/// `dir`, beside the report's own files) in headless Chromium at 1280 px. An error says
/// why Chromium could not be run or did not report.
pub fn check_in_chromium(html: &str, dir: &Path) -> Result<BrowserFindings, String> {
    let page = dir.join("checked.html");
    let with_harness = html.replacen("<head>", &format!("<head>\n{HARNESS}"), 1);
    if with_harness == html {
        return Err("the page has no <head> to put the harness in".into());
    }
    std::fs::write(&page, with_harness).map_err(|e| format!("{}: {e}", page.display()))?;
    let profile = tempfile::tempdir().map_err(|e| format!("a Chromium profile directory: {e}"))?;
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1280,900",
            "--virtual-time-budget=5000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .map_err(|e| format!("chromium: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("chromium exited with {}: {stderr}", out.status));
    }
    let dom = String::from_utf8_lossy(&out.stdout);
    const OPEN: &str = "<pre id=\"wtlsperf-check\">";
    let report = dom
        .find(OPEN)
        .map(|at| &dom[at + OPEN.len()..])
        .and_then(|rest| rest.find("</pre>").map(|end| &rest[..end]))
        .ok_or_else(|| format!("the harness did not report; chromium said: {stderr}"))?;
    let mut lines = report.lines();
    let figures = lines
        .next()
        .and_then(|l| l.strip_prefix("figures\t"))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("the harness's report has no figure count: {report}"))?;
    let mut problems: Vec<String> = lines
        .filter(|l| !l.is_empty())
        .map(|l| l.replace("&quot;", "\"").replace("&amp;", "&"))
        .collect();
    // A page without scripts of its own logs nothing: every console message the browser
    // printed (a blocked resource, a parse error) is a problem.
    for line in stderr.lines() {
        if line.contains(":CONSOLE") && !line.contains("checked.html") {
            problems.push(format!("console-error\t{line}"));
        }
    }
    Ok(BrowserFindings { figures, problems })
}
