// The comparison page's charts (training/templates/training/job_compare.html): each job's
// GPU utilization and training progress over the minutes since it started, on shared axes.
// The numbers behind them (averages, how far each got) are in the Outcome table.
(function () {
  "use strict";

  var FONT = {family: "RedHatText, Overpass, Helvetica, Arial, sans-serif", size: 13};
  var CONFIG = {displaylogo: false, responsive: true,
                modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"]};

  function draw(id, series, xTitle, yTitle) {
    var gd = document.getElementById(id);
    if (!gd || !series.length || !window.Plotly) return;
    var escape = function (text) {
      return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    };
    var traces = series.map(function (s) {
      return {type: "scatter", mode: "lines", name: escape(s.name), x: s.x, y: s.y,
              hovertemplate: "%{fullData.name}: %{y} · %{x} min<extra></extra>"};
    });
    window.Plotly.react(gd, traces, {
      font: FONT, height: 300, margin: {l: 50, r: 20, t: 20, b: 50},
      xaxis: {title: {text: xTitle}, rangemode: "tozero"},
      yaxis: {title: {text: yTitle}, range: [0, 105]},
      legend: {orientation: "h", y: -0.3},
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)"
    }, CONFIG);
  }

  function start() {
    var node = document.getElementById("compare-chart-data");
    if (!node) return;
    var d;
    try { d = JSON.parse(node.textContent); } catch (e) { return; }
    draw("compare-chart-gpu", d.gpu, d.xTitle, d.gpuTitle);
    draw("compare-chart-progress", d.progress, d.xTitle, d.progressTitle);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
