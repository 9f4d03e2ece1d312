// The "Training" charts (training/templates/training/partials/training_curves.html): one
// Plotly chart per metric the job's lead log gave, by step (or epoch), drawn like the
// Metrics tab's charts (static/js/metrics.js). The data is in the page (a json_script
// named by data-training-curves): what the watcher kept with the job, no request more.
// Trace names are sent escaped (`label`: odh/training/metrics/series.py plotly_text) and
// hover templates name the trace with %{fullData.name}, never the text itself.
// Without JavaScript the numbers are in the table under each chart.
(function () {
  "use strict";

  if (window.dashCurves) {  // loaded again by an htmx tab swap: just pick up the new tab
    window.dashCurves.scan();
    return;
  }

  var COLORS = ["#0066cc", "#f0ab00"];

  // Plotly: a full page has it already; an htmx swap may still be loading it (theme.js)
  var whenPlotly = window.dashboardWhenPlotly;

  function draw(root) {
    var source = document.getElementById(root.getAttribute("data-training-curves"));
    if (!source) return;
    var charts = JSON.parse(source.textContent);
    var c = window.dashboardChartColours();
    charts.forEach(function (chart) {
      var gd = root.querySelector('[data-curve="' + chart.key + '"]');
      if (!gd) return;
      // a narrow chart (a phone) keeps a mode bar of one row, within the top margin: fewer
      // buttons, so it never wraps down over the plot and its hover box
      var narrow = gd.clientWidth && gd.clientWidth < 360;
      var config = {responsive: true, displaylogo: false, displayModeBar: "hover",
                    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"].concat(
                      narrow ? ["zoomIn2d", "zoomOut2d", "pan2d"] : [])};
      gd.textContent = "";
      var traces = chart.traces.map(function (t, i) {
        return {type: "scatter", mode: t.x.length > 1 ? "lines+markers" : "markers",
                name: t.label, meta: t.per, x: t.x, y: t.y,
                line: {width: 1.5, color: COLORS[i % COLORS.length]},
                marker: {size: 5, color: COLORS[i % COLORS.length]},
                hovertemplate: "%{fullData.name}: %{y}<extra></extra>"};
      });
      window.Plotly.newPlot(gd, traces, {
        height: 320,
        margin: {l: 56, r: 16, t: 40, b: 32},
        font: {family: '"Red Hat Text", "RedHatText", "Overpass", Helvetica, Arial, sans-serif',
               size: 12, color: c.text},
        paper_bgcolor: c.surface, plot_bgcolor: c.surface,
        hovermode: "x unified", showlegend: true,
        legend: {orientation: "h", x: 0, y: -0.15, yanchor: "top", font: {size: 11}},
        xaxis: {title: {text: chart.axis_title}, gridcolor: c.grid, automargin: true,
                zeroline: false},
        yaxis: {gridcolor: c.grid, zeroline: false, automargin: true}
      }, config);
      gd.setAttribute("data-drawn", "true");
    });
  }

  function scan() {
    document.querySelectorAll("[data-training-curves]").forEach(function (root) {
      if (root.dashCurves) return;
      root.dashCurves = true;
      whenPlotly(root.getAttribute("data-plotly-src"), function () { draw(root); });
    });
  }

  window.dashCurves = {scan: scan};
  document.addEventListener("htmx:afterSettle", scan);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", scan);
  else scan();
})();
