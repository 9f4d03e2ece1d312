// Runs in <head>, before the page is painted: PatternFly 6's dark theme when the person chose
// it, or chose "System" (the default) and the browser prefers dark; and the browser's time zone
// sent once as a cookie, so dates on the pages are in the person's own zone
// (training/web/localtime.py, training/web/theme.py).
(function () {
  "use strict";
  var root = document.documentElement;
  var chosen = root.getAttribute("data-theme") || "system";
  var query = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function apply() {
    var dark = chosen === "dark" || (chosen === "system" && query !== null && query.matches);
    root.classList.toggle("pf-v6-theme-dark", dark);
  }
  apply();
  if (query && chosen === "system") {
    query.addEventListener("change", function () {
      apply();
      recolourCharts();
    });
  }

  // Plotly, then `callback`: at once when the page has it, else once the script at `src`
  // (added to the page if no tag asks for it yet: an htmx swap brought charts) has loaded.
  // Used by the Metrics tab (static/js/metrics.js) and the Training charts (curves.js).
  window.dashboardWhenPlotly = function (src, callback) {
    if (window.Plotly) { callback(); return; }
    var script = document.querySelector('script[src="' + src + '"]');
    if (!script) {
      script = document.createElement("script");
      script.src = src;
      document.head.appendChild(script);
    }
    script.addEventListener("load", function () { if (window.Plotly) callback(); });
  };

  // The colours charts draw with (static/js/metrics.js, cluster.js, compare.js), read from
  // the stylesheet so they follow the theme.
  window.dashboardChartColours = function () {
    var style = getComputedStyle(root);
    function pick(name, fallback) { return style.getPropertyValue(name).trim() || fallback; }
    return {
      text: pick("--dash-text", "#151515"), muted: pick("--dash-muted", "#6a6e73"),
      grid: pick("--dash-border", "#e0e0e0"), surface: pick("--dash-surface", "#fff"),
      danger: pick("--dash-danger", "#c9190b"), dangerText: pick("--dash-danger-text", "#a30000"),
      empty: pick("--dash-surface-alt", "#d2d2d2"), link: pick("--dash-link", "#0066cc")
    };
  };

  // The theme's colours of a Plotly chart's text, paper, grid and zero lines, as
  // Plotly.relayout's keys: Plotly's defaults are for a white page (about 1.5:1 on dark).
  function chartTheme() {
    var c = window.dashboardChartColours();
    return {"font.color": c.text, paper_bgcolor: c.surface, plot_bgcolor: c.surface,
            "xaxis.gridcolor": c.grid, "yaxis.gridcolor": c.grid,
            "xaxis.zerolinecolor": c.muted, "yaxis.zerolinecolor": c.muted};
  }

  // The same colours put into a layout for Plotly.newPlot or react (static/js/compare.js);
  // the layout is changed and returned.
  window.dashboardChartTheme = function (layout) {
    var theme = chartTheme();
    Object.keys(theme).forEach(function (path) {
      var keys = path.split("."), node = layout;
      for (var i = 0; i < keys.length - 1; i++) node = node[keys[i]] = node[keys[i]] || {};
      node[keys[keys.length - 1]] = theme[path];
    });
    return layout;
  };

  // The browser switched between light and dark while a page with charts is open.
  function recolourCharts() {
    if (!window.Plotly) return;
    var theme = chartTheme();
    document.querySelectorAll(".js-plotly-plot").forEach(function (gd) {
      window.Plotly.relayout(gd, theme);
    });
  }

  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && /^[A-Za-z0-9_+\-\/]{1,64}$/.test(zone) &&
        document.cookie.split("; ").indexOf("dashboard_tz=" + zone) < 0) {
      document.cookie = "dashboard_tz=" + zone + "; path=/; max-age=31536000; samesite=lax";
    }
  } catch (ignored) { /* no Intl: the pages stay in UTC */ }
})();
