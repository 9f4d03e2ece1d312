// The cluster overview's charts (training/templates/training/cluster_overview.html).
// The numbers come from the JSON in #cluster-chart-data; the same numbers are in the tables
// under each chart, which is what screen readers read (each chart is a labelled group).
// No Plotly mode bar: both axes are fixed (nothing to zoom or pan), and over these short
// charts it covered the legend and the threshold's label.
//
// Live updates (training/live/cluster_subscriptions.py): when the server says the cluster changed
// (a `live:message` event whose detail is {"type": "cluster-changed"}, or a
// `cluster:changed` event on the page), the part #cluster-numbers is fetched again with the
// person's own session and swapped in; the charts are then drawn again from the new JSON.
(function () {
  "use strict";

  var FONT = {family: "RedHatText, Overpass, Helvetica, Arial, sans-serif", size: 13};
  var CONFIG = {displaylogo: false, responsive: true, displayModeBar: false};

  function data() {
    var node = document.getElementById("cluster-chart-data");
    if (!node) return null;
    try { return JSON.parse(node.textContent); } catch (e) { return null; }
  }

  function drawGpu(gd, gpu) {
    // one horizontal bar per GPU model: in use, then free, adding up to the model's GPUs
    var text = function (values) { return values.map(function (v) { return String(v); }); };
    var c = window.dashboardChartColours();
    var height = Math.max(160, 100 + gpu.models.length * 48);
    gd.style.height = height + "px";
    window.Plotly.react(gd, [
      {type: "bar", orientation: "h", name: gpu.usedName, y: gpu.models, x: gpu.used,
       text: text(gpu.used), textposition: "inside", insidetextanchor: "middle",
       marker: {color: "#0066cc"}, textfont: {color: "#fff"},
       hovertemplate: "%{y}<br>" + gpu.usedName + ": %{x}<extra></extra>"},
      {type: "bar", orientation: "h", name: gpu.freeName, y: gpu.models, x: gpu.free,
       text: text(gpu.free), textposition: "inside", insidetextanchor: "middle",
       marker: {color: c.empty}, textfont: {color: c.text},
       hovertemplate: "%{y}<br>" + gpu.freeName + ": %{x}<extra></extra>"}
    ], {
      barmode: "stack", font: Object.assign({color: c.text}, FONT), height: height, bargap: 0.35,
      margin: {l: 10, r: 20, t: 36, b: 50},
      xaxis: {title: {text: gpu.axis}, rangemode: "tozero", fixedrange: true},
      yaxis: {automargin: true, autorange: "reversed", fixedrange: true},
      legend: {orientation: "h", x: 0, y: 1, yanchor: "bottom", traceorder: "normal"},
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)"
    }, CONFIG);
  }

  function drawQuota(gd, quota) {
    var colours = ["#0066cc", "#009596", "#5752d1", "#f0ab00", "#8a8d90"];
    var traces = quota.series.map(function (s, i) {
      return {type: "bar", orientation: "h", name: s.name, y: quota.projects, x: s.percent,
              customdata: s.numbers, marker: {color: colours[i % colours.length]},
              hovertemplate: "%{y} · " + s.name + ": %{customdata} (%{x}%)<extra></extra>"};
    });
    var c = window.dashboardChartColours();
    var height = Math.max(220, 70 + quota.projects.length * 22 * Math.max(1, quota.series.length));
    gd.style.height = height + "px";
    window.Plotly.react(gd, traces, {
      barmode: "group", font: Object.assign({color: c.text}, FONT), height: height, margin: {l: 10, r: 20, t: 28, b: 60},
      xaxis: {title: {text: quota.axis}, range: [0, 105], fixedrange: true, ticksuffix: "%"},
      yaxis: {automargin: true, autorange: "reversed", fixedrange: true},
      legend: {orientation: "h", y: -0.25, traceorder: "normal"},
      shapes: [{type: "line", xref: "x", x0: quota.threshold, x1: quota.threshold, yref: "paper",
                y0: 0, y1: 1, line: {color: c.danger, width: 2, dash: "dash"}}],
      annotations: [{xref: "x", x: quota.threshold, yref: "paper", y: 1, yanchor: "bottom",
                     showarrow: false, text: quota.thresholdName, font: {color: c.dangerText, size: 11}}],
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)"
    }, CONFIG);
  }

  function draw() {
    if (!window.Plotly) return;
    var d = data();
    if (!d) return;
    var gpu = document.getElementById("chart-gpu-models");
    if (gpu && d.gpu.models.length) drawGpu(gpu, d.gpu);
    var quota = document.getElementById("chart-quota-use");
    if (quota && d.quota.projects.length) drawQuota(quota, d.quota);
  }

  function refresh() {
    if (!window.htmx || !document.getElementById("cluster-numbers")) return;
    window.htmx.ajax("GET", window.location.pathname,
                     {target: "#cluster-numbers", swap: "outerHTML"});
  }

  document.addEventListener("DOMContentLoaded", draw);
  document.addEventListener("htmx:afterSettle", function () {
    if (document.getElementById("cluster-numbers")) draw();  // the part was swapped in again
  });
  var snapshots = 0;  // one per (re)connect of the live socket
  document.addEventListener("live:message", function (event) {
    var type = event.detail && event.detail.type;
    if (type === "cluster-changed") refresh();
    // after a reconnect the page may have missed changes: read the numbers again
    if (type === "cluster-snapshot" && ++snapshots > 1) refresh();
  });
  document.addEventListener("cluster:changed", refresh);
  window.dashCluster = {draw: draw, refresh: refresh};
})();
