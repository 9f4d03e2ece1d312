// The Metrics tab: Plotly charts of a job's GPU, CPU, memory, network and disk series,
// extended live.
//
// The page carries the tables of numbers, the address of the job's metrics.json and which
// range to ask it for (a small json_script): the points themselves are fetched from there
// once Plotly is ready (compact JSON: times in seconds, not in the page's weight). Every
// ~15 s, while the browser tab is visible, new points (those after the last one drawn) are
// fetched and appended with Plotly.extendTraces. A websocket push of the same JSON can call
// window.dashMetrics.append(payload) to do the same.
// Without JavaScript the tab still shows the numbers (the tables under each chart).
//
// Series names come partly from Prometheus labels. Plotly reads a trace's name as its own
// little HTML and a hover template's %{...} as variables, so a trace is named with the
// series' `label` (the name with <, > and & escaped: odh/training/metrics/series.py plotly_text)
// and its hover template says %{fullData.name}, never the name itself. The plain name is
// kept in the trace's `meta`, to find its row in the table and its trace in new points.
//
// Plotly draws the times in the browser's own time zone: the caption above the charts names
// that zone (its sentence, translated, is the page's data-text-zone).
// Plotly's mode bar shows at the chart's top right corner while the pointer is on the chart
// or one of its buttons has the keyboard focus: the top margin is kept free for it, so it
// never covers a label (the GPU memory's capacity).
(function () {
  "use strict";

  if (window.dashMetrics) {  // loaded again by an htmx tab swap: just pick up the new tab
    window.dashMetrics.scan();
    return;
  }

  var GIB = 1024 * 1024 * 1024;
  var MIB = 1024 * 1024;
  var KB = 1e3, MB = 1e6, GB = 1e9;  // I/O rates in decimal units, as speeds are quoted
  var KEEP = 1.5;  // keep up to 1.5 ranges of points; the x axis shows one range
  var COLORS = ["#0066cc", "#f0ab00", "#3e8635", "#c9190b", "#8476d1", "#009596",
                "#ec7a08", "#6a6e73", "#004080", "#795600", "#1e4f18", "#470000"];
  var views = [];

  // -- units -------------------------------------------------------------------------------
  function scaleOf(unit) {  // bytes are drawn in GiB, I/O rates in MB/s
    return {bytes: GIB, bytes_per_second: MB}[unit] || 1;
  }

  function plotted(unit, value) {
    if (value === null || value === undefined) return null;
    return value / scaleOf(unit);
  }

  // `units` are the words after values, translated (metrics_meta.units from the view).
  function formatValue(unit, value, units) {  // the text of odh.training.metrics.charts.format_value
    if (value === null || value === undefined || isNaN(value)) return "\u2013";
    if (unit === "percent") return value.toFixed(0) + "%";
    if (unit === "cores") return value.toFixed(2) + " " + units.cpu;
    if (unit === "bytes") {
      return Math.abs(value) >= GIB ? (value / GIB).toFixed(1) + " " + units.gib
                                    : (value / MIB).toFixed(0) + " " + units.mib;
    }
    if (unit === "bytes_per_second") {
      var size = Math.abs(value);
      if (size >= GB) return (value / GB).toFixed(2) + " " + units.gbps;
      if (size >= MB) return (value / MB).toFixed(1) + " " + units.mbps;
      if (size >= KB) return (value / KB).toFixed(0) + " " + units.kbps;
      return value.toFixed(0) + " " + units.bps;
    }
    return String(value);
  }

  function axisTitle(unit, units) {
    return {percent: "%", cores: units.cpu, bytes: units.gib,
            bytes_per_second: units.mbps}[unit] || "";
  }

  function hoverFormat(unit, units) {
    return {percent: "%{y:.0f}%", cores: "%{y:.2f} " + units.cpu,
            bytes: "%{y:.1f} " + units.gib,
            bytes_per_second: "%{y:.1f} " + units.mbps}[unit] || "%{y}";
  }

  function ms(iso) { return Date.parse(iso); }

  // The caption says the time zone the axes are drawn in: the browser's.
  function nameZone(root) {
    var caption = root.parentNode.querySelector("[data-metrics-zone]");
    var zone = "";
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
    if (!caption || !zone) return;  // the page's sentence: the zone the dashboard knows
    var text = (caption.getAttribute("data-text-zone") || "").replace("%(zone)s", zone);
    if (text && caption.textContent !== text) caption.textContent = text;
  }

  function times(seconds) { return seconds.map(function (t) { return t * 1000; }); }

  // What Plotly shows as it is (the server sends it escaped as `label`; this for any other)
  function plotlyText(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  // Plotly: a full page has it already; an htmx swap may still be loading it (theme.js)
  var whenPlotly = window.dashboardWhenPlotly;

  // -- one Metrics tab on the page ------------------------------------------------------------
  function View(root) {
    this.root = root;
    var source = document.getElementById(root.getAttribute("data-metrics-source"));
    this.meta = JSON.parse(source.textContent);
    this.units = this.meta.units || {cpu: "", gib: "", mib: ""};
    this.url = root.getAttribute("data-json-url");
    this.interval = parseInt(root.getAttribute("data-interval"), 10) || 15000;
    this.data = null;  // metrics.json's first answer, once fetched (load)
    this.since = null;
    this.end = null;
    this.timer = null;
    this.busy = false;
    this.stopped = false;
  }

  View.prototype.text = function (name) {
    return this.root.getAttribute("data-text-" + name) || "";
  };

  // The element Plotly draws in: one without an id, which htmx's settling (it restores the
  // class and style of elements whose id the old content had) would otherwise undo.
  View.prototype.graph = function (key) {
    return this.root.querySelector('[data-chart="' + key + '"]');
  };

  View.prototype.trace = function (series, unit, index) {
    return {
      type: "scatter", mode: "lines",
      name: series.label !== undefined ? series.label : plotlyText(series.name),
      meta: series.name,
      x: times(series.t), y: series.y.map(function (v) { return plotted(unit, v); }),
      line: {width: 1.5, color: COLORS[index % COLORS.length]},
      hovertemplate: "%{fullData.name}: " + hoverFormat(unit, this.units) + "<extra></extra>",
      connectgaps: false
    };
  };

  // The x axis: the range before the newest point; a job's whole run ("job:<seconds>")
  // keeps its start in view while the end moves on.
  View.prototype.xRange = function () {
    if (String(this.data.range).indexOf("job:") === 0) return [ms(this.data.start), this.end];
    return [this.end - this.data.seconds * 1000, this.end];
  };

  View.prototype.layout = function (chart) {
    var unit = chart.unit;
    var c = window.dashboardChartColours();
    var layout = {
      height: 320,
      margin: {l: 56, r: 16, t: 40, b: 32},  // t: room for the mode bar (28 px) and a label
      font: {family: '"Red Hat Text", "RedHatText", "Overpass", Helvetica, Arial, sans-serif',
             size: 12, color: c.text},
      paper_bgcolor: c.surface, plot_bgcolor: c.surface,  // Plotly's own modebar colours then
      hovermode: "x unified",
      showlegend: true,
      legend: {orientation: "h", x: 0, y: -0.12, yanchor: "top", font: {size: 11}},
      xaxis: {type: "date", range: this.xRange(), gridcolor: c.grid, automargin: true,
              tickformat: "%H:%M", hoverformat: "%b %d, %H:%M:%S"},
      yaxis: {title: {text: axisTitle(unit, this.units)}, rangemode: "tozero", gridcolor: c.grid,
              zeroline: false},
      shapes: [], annotations: []
    };
    if (unit === "percent") layout.yaxis.range = [0, 105];
    if (chart.key === "gpu_memory" && chart.capacity) {
      var most = 0;
      Object.keys(chart.capacity).forEach(function (k) {
        most = Math.max(most, chart.capacity[k] || 0);
      });
      if (most > 0) {
        var gib = most / GIB;
        layout.yaxis.range = [0, gib * 1.08];
        layout.shapes.push({type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: gib,
                            y1: gib, line: {color: c.muted, width: 1, dash: "dash"}});
        layout.annotations.push({xref: "paper", x: 1, xanchor: "right", yref: "y", y: gib,
                                 yanchor: "bottom", showarrow: false,
                                 text: this.text("capacity") + ": " +
                                       formatValue("bytes", most, this.units),
                                 font: {size: 11, color: c.muted}});
      }
    }
    if (!chart.series.length) {
      layout.annotations.push({xref: "paper", yref: "paper", x: 0.5, y: 0.5, showarrow: false,
                               text: (this.meta.empty || {})[chart.key] || "",
                               font: {size: 14, color: c.muted}, name: "empty"});
    }
    return layout;
  };

  View.prototype.draw = function () {
    var self = this;
    var config = {responsive: true, displaylogo: false, displayModeBar: "hover",
                  modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"]};
    Object.keys(this.data.charts).forEach(function (key) {
      var chart = self.data.charts[key];
      var gd = self.graph(key);
      if (!gd) return;
      gd.textContent = "";
      var traces = chart.series.map(function (s, i) { return self.trace(s, chart.unit, i); });
      window.Plotly.newPlot(gd, traces, self.layout(chart), config);
    });
    var live = this.root.parentNode.querySelector("[data-metrics-live]");
    if (live) live.hidden = false;
  };

  // New points (metrics.json's shape, only points after this.since) onto the charts.
  View.prototype.append = function (payload) {
    if (!this.data || !payload || !payload.charts || payload.range !== this.data.range) return;
    var self = this;
    if (payload.end && ms(payload.end) > this.end) {
      this.end = ms(payload.end);
      this.since = payload.end;
    }
    var keep = Math.ceil((this.data.points || 400) * KEEP);
    Object.keys(payload.charts).forEach(function (key) {
      var chart = payload.charts[key];
      var known = self.data.charts[key];
      var gd = self.graph(key);
      if (!gd || !known || !gd.data) return;
      var xs = [], ys = [], indices = [];
      chart.series.forEach(function (s) {
        if (!s.t.length) return;
        var index = -1;
        for (var i = 0; i < gd.data.length; i++) {
          if (gd.data[i].meta === s.name) { index = i; break; }
        }
        if (index < 0) {  // a new GPU or pod: a trace of its own, and a row of numbers
          window.Plotly.addTraces(gd, self.trace(s, chart.unit, gd.data.length));
          known.series.push({name: s.name, pod: s.pod, t: [], y: []});
          self.addRow(key, s.name);
          return;
        }
        indices.push(index);
        xs.push(times(s.t));
        ys.push(s.y.map(function (v) { return plotted(chart.unit, v); }));
      });
      if (indices.length) window.Plotly.extendTraces(gd, {x: xs, y: ys}, indices, keep);
      if (chart.capacity && known.capacity) {
        Object.keys(chart.capacity).forEach(function (k) { known.capacity[k] = chart.capacity[k]; });
      }
      var update = {"xaxis.range": self.xRange()};
      if (gd.data.length && gd.layout.annotations) {
        update.annotations = gd.layout.annotations.filter(function (a) { return a.name !== "empty"; });
      }
      window.Plotly.relayout(gd, update);
      self.updateTable(key, gd, known.unit);
    });
  };

  // A row for a series that appeared after the page was drawn (filled by updateTable).
  View.prototype.addRow = function (key, name) {
    var table = this.root.querySelector('[data-chart-table="' + key + '"]');
    if (!table) return;
    var exists = false;
    table.querySelectorAll("tr[data-series]").forEach(function (tr) {
      if (tr.getAttribute("data-series") === name) exists = true;
    });
    if (exists) return;
    var row = document.createElement("tr");
    row.className = "pf-v6-c-table__tr";
    row.setAttribute("data-series", name);
    var head = document.createElement("th");
    head.className = "pf-v6-c-table__th";
    head.setAttribute("scope", "row");
    head.textContent = name;
    row.appendChild(head);
    var columns = table.querySelectorAll("thead th").length;
    ["latest", "average", "maximum"].forEach(function (stat) {
      var cell = document.createElement("td");
      cell.className = "pf-v6-c-table__td";
      cell.setAttribute("data-stat", stat);
      row.appendChild(cell);
    });
    for (var i = 4; i < columns; i++) {
      var extra = document.createElement("td");
      extra.className = "pf-v6-c-table__td";
      row.appendChild(extra);
    }
    table.querySelector("tbody").appendChild(row);
    var numbers = table.closest("details");
    if (numbers) numbers.hidden = false;
  };

  // The numbers under a chart: latest, average and maximum over the range shown.
  View.prototype.updateTable = function (key, gd, unit) {
    var table = this.root.querySelector('[data-chart-table="' + key + '"]');
    if (!table) return;
    var from = this.xRange()[0];
    var scale = scaleOf(unit);
    var units = this.units;
    gd.data.forEach(function (trace) {
      var row = null;
      table.querySelectorAll("tr[data-series]").forEach(function (tr) {
        if (tr.getAttribute("data-series") === trace.meta) row = tr;
      });
      if (!row) return;
      var values = [];
      for (var i = 0; i < trace.x.length; i++) {
        if (trace.x[i] >= from && trace.y[i] !== null && trace.y[i] !== undefined) {
          values.push(trace.y[i] * scale);
        }
      }
      if (!values.length) return;
      var sum = 0, most = -Infinity;
      values.forEach(function (v) { sum += v; if (v > most) most = v; });
      var stats = {latest: values[values.length - 1], average: sum / values.length, maximum: most};
      Object.keys(stats).forEach(function (stat) {
        var cell = row.querySelector('[data-stat="' + stat + '"]');
        if (cell) cell.textContent = formatValue(unit, stats[stat], units);
      });
    });
  };

  View.prototype.problem = function (text) {
    var box = this.root.parentNode.querySelector("[data-metrics-problem]");
    if (!box) return;
    var slot = box.querySelector("[data-metrics-problem-text]");
    if (text) {
      if (slot.textContent !== text) slot.textContent = text;
      box.hidden = false;
    } else {
      box.hidden = true;
    }
  };

  // metrics.json with `query`; `done(body)` with its answer, problems said on the tab.
  View.prototype.request = function (query, done) {
    var self = this;
    this.busy = true;
    var url = this.url + "?" + Object.keys(query).map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(query[k]);
    }).join("&");
    fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (response) {
        var type = response.headers.get("Content-Type") || "";
        if (response.redirected || type.indexOf("application/json") < 0 ||
            response.status === 401) {
          // sent to sign in (the session ended), or Prometheus refused the sign-in
          return response.json().catch(function () { return {}; }).then(function (body) {
            self.problem(body.error || self.text("signed-out"));
            self.stop();
          });
        }
        return response.json().then(function (body) {
          if (!response.ok) {
            self.problem(self.text("failed") + " " + (body.error || response.status));
            return;
          }
          self.problem("");
          done(body);
        });
      })
      .catch(function (error) {
        self.problem(self.text("failed") + " " + error);
      })
      .then(function () { self.busy = false; });
  };

  // The charts' points, first time: drawn, then extended by each poll.
  View.prototype.load = function () {
    var self = this;
    this.request(this.meta.query || {}, function (body) {
      if (self.stopped || !body.charts) return;
      self.data = body;
      self.since = body.end;
      self.end = ms(body.end);
      self.draw();
    });
  };

  View.prototype.poll = function () {
    if (this.stopped || this.busy) return;
    if (!document.body.contains(this.root)) { this.stop(); return; }
    if (document.hidden) return;  // paused; visibilitychange polls again
    if (!this.data) { this.load(); return; }  // the first fetch failed: again
    var self = this;
    this.request({range: this.data.range, since: this.since},
               function (body) { self.append(body); });
  };

  View.prototype.start = function () {
    var self = this;
    this.timer = window.setInterval(function () { self.poll(); }, this.interval);
  };

  View.prototype.stop = function () {
    var self = this;
    this.stopped = true;
    if (this.timer) window.clearInterval(this.timer);
    this.timer = null;
    if (window.Plotly && this.data) {  // its resize listeners and styles go with it
      Object.keys(this.data.charts).forEach(function (key) {
        var gd = self.graph(key);
        if (gd && gd.data) window.Plotly.purge(gd);
      });
    }
  };

  // -- finding Metrics tabs (page load, htmx swaps) -------------------------------------------
  function scan() {
    views = views.filter(function (v) {
      if (document.body.contains(v.root)) return true;
      v.stop();
      return false;
    });
    document.querySelectorAll("[data-metrics]").forEach(function (root) {
      if (root.dashMetricsView) return;
      var view = new View(root);
      root.dashMetricsView = view;
      views.push(view);
      nameZone(root);
      whenPlotly(root.getAttribute("data-plotly-src"), function () {
        if (view.stopped) return;
        view.load();
        view.start();
      });
    });
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) views.forEach(function (v) { v.poll(); });
  });
  document.addEventListener("htmx:afterSettle", scan);
  document.addEventListener("htmx:beforeSwap", function (event) {
    // the tab is about to be replaced: stop its timer and free its charts first
    var target = event.detail && event.detail.target;
    if (!target || !event.detail.shouldSwap) return;
    views.forEach(function (v) { if (target.contains(v.root)) v.stop(); });
  });

  window.dashMetrics = {
    scan: scan,
    // Append pushed points (metrics.json's shape) to every Metrics tab showing that range.
    append: function (payload) { views.forEach(function (v) { v.append(payload); }); },
    views: function () { return views.slice(); }
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", scan);
  else scan();
})();
