// The comparison page's charts (training/templates/training/job_compare.html): each job's
// GPU utilization and training progress over the minutes since it started, on shared axes.
// The numbers behind them (averages, how far each got) are in the Outcome table.
(function () {
  "use strict";

  var FONT = {family: "RedHatText, Overpass, Helvetica, Arial, sans-serif", size: 13};
  var CONFIG = {displaylogo: false, responsive: true,
                modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"]};
  // One colour per job (its place on the page: the same in both charts), each at least 3:1
  // on the light and the dark theme's background.
  var COLOURS = ["#2b7bd6", "#c46100", "#3e8635", "#8476d1", "#e0483a", "#009596"];

  // A job with no points has no series here: the page says so under the chart, or in place
  // of it (training/views/metrics/compare.py). A single point has no line to draw: a marker then.
  // `yRange`: the y axis' range (percent charts: 0 to 105); left out, Plotly's own.
  function draw(id, series, xTitle, yTitle, yRange) {
    var gd = document.getElementById(id);
    if (!gd || !series.length || !window.Plotly) return;
    var escape = function (text) {
      return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    };
    var traces = series.map(function (s) {
      var colour = COLOURS[s.colour % COLOURS.length];
      return {type: "scatter", mode: s.x.length > 1 ? "lines" : "markers", name: escape(s.name),
              x: s.x, y: s.y, line: {color: colour}, marker: {color: colour, size: 8},
              hovertemplate: yRange ? "%{fullData.name}: %{y} · %{x} min<extra></extra>"
                                    : "%{fullData.name}: %{y} · %{x}<extra></extra>"};
    });
    // the theme's text, paper and grid colours (static/js/theme.js): Plotly's own are for
    // a white page
    window.Plotly.react(gd, traces, window.dashboardChartTheme({
      font: FONT, height: 300, margin: {l: 50, r: 20, t: 20, b: 50},
      xaxis: {title: {text: xTitle}, rangemode: "tozero"},
      yaxis: yRange ? {title: {text: yTitle}, range: yRange} : {title: {text: yTitle}},
      showlegend: true,  // names the job even when it is the only one drawn
      legend: {orientation: "h", y: -0.3}
    }), CONFIG);
  }

  function start() {
    var node = document.getElementById("compare-chart-data");
    if (!node) return;
    var d;
    try { d = JSON.parse(node.textContent); } catch (e) { return; }
    draw("compare-chart-gpu", d.gpu, d.xTitle, d.gpuTitle, [0, 105]);
    draw("compare-chart-progress", d.progress, d.xTitle, d.progressTitle, [0, 105]);
    // the training curves both runs logged (loss, accuracy...), by step or epoch
    (d.training || []).forEach(function (c) {
      draw("compare-curve-" + c.key, c.series, c.axis_title, c.title);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
