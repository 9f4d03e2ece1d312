// Small progressive enhancements; every page works without them.
(function () {
  "use strict";

  // Copy buttons: <button data-copy-target="element-id">
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy-target]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy-target"));
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent).then(function () {
      var status = document.querySelector(".dash-copy-status");
      if (status) status.textContent = button.getAttribute("data-copied") || "";
    });
  });
})();

// The create-job wizard: after htmx swaps a field's message, mark the field invalid (or not)
// for screen readers and the error border; after a step change, move focus to the new step.
(function () {
  "use strict";

  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (!target || !target.classList) return;
    if (target.classList.contains("dash-field-message")) {
      var field = document.querySelector("[aria-describedby~='" + target.id + "']");
      if (!field) return;
      var severity = target.querySelector("[data-severity]");
      var level = severity ? severity.getAttribute("data-severity") : "";
      if (level === "error") field.setAttribute("aria-invalid", "true");
      else field.removeAttribute("aria-invalid");
      var control = field.closest(".pf-v6-c-form-control");
      if (control) {
        control.classList.toggle("pf-m-error", level === "error");
        control.classList.toggle("pf-m-warning", level === "warning");
      }
    }
  });

  // Every wizard request carries its send time, rising within the page: the server answers
  // a field's check, the resource check and Next in any order, and a check sent before Next
  // must not write back what the form held then (views/wizard/base.py, write_live_check).
  var lastRevision = 0;
  document.addEventListener("htmx:configRequest", function (event) {
    var source = event.detail.elt;
    if (!source || !source.closest || !source.closest("#wizard")) return;
    lastRevision = Math.max(Date.now(), lastRevision + 1);
    event.detail.parameters["revision"] = String(lastRevision);
  });

  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "wizard") return;
    var wanted = window.location.hash && document.getElementById(window.location.hash.slice(1));
    var focus = wanted || document.querySelector(".dash-step-title");
    if (focus) {
      if (!focus.hasAttribute("tabindex") && !/^(INPUT|SELECT|TEXTAREA|BUTTON|A|DETAILS)$/.test(focus.tagName)) {
        focus.setAttribute("tabindex", "-1");
      }
      focus.focus({ preventScroll: false });
    }
  });
})();

// Menus (<details class="dash-row-menu">): Escape closes the open one and gives focus back to
// its button; a click elsewhere closes it too.
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var open = event.target.closest ? event.target.closest("details.dash-row-menu[open]") : null;
    if (!open) open = document.querySelector("details.dash-row-menu[open]");
    if (!open) return;
    open.removeAttribute("open");
    var summary = open.querySelector("summary");
    if (summary) summary.focus();
  });
  document.addEventListener("click", function (event) {
    document.querySelectorAll("details.dash-row-menu[open]").forEach(function (menu) {
      if (!menu.contains(event.target)) menu.removeAttribute("open");
    });
  });
})();

// A job's tabs: after a link (a tab, a pod from Topology, a chart range) replaced the panel,
// focus goes to the new panel's heading, not back to the top of the page. A filter form's
// control keeps its focus (htmx gives it back by id).
(function () {
  "use strict";

  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "tab-content") return;
    var config = event.detail.requestConfig;
    var source = config && config.elt;
    if (!source || source.tagName !== "A") return;
    var heading = document.getElementById("tab-heading");
    if (heading) heading.focus({ preventScroll: true });
  });
})();

// A job's tabs (job_detail.html, nav.dash-tabs): on a narrow screen the strip scrolls
// sideways. A fade with a chevron shows on each side where tabs are hidden (the classes
// dash-tabs--more-start and dash-tabs--more-end), and the current tab is scrolled into view
// whenever the strip is drawn (page load, a tab swapped in by htmx). The cues are decorative
// (aria-hidden): the tabs are links, Tab reaches each one and the browser scrolls the strip
// to it; a click on a cue scrolls the strip that way, for a mouse.
(function () {
  "use strict";

  function list(nav) { return nav.querySelector(".pf-v6-c-tabs__list"); }

  function update(nav) {
    var strip = list(nav);
    if (!strip) return;
    var hidden = strip.scrollWidth - strip.clientWidth;
    nav.classList.toggle("dash-tabs--more-start", hidden > 1 && strip.scrollLeft > 1);
    nav.classList.toggle("dash-tabs--more-end", hidden > 1 && strip.scrollLeft < hidden - 1);
  }

  function reveal(nav) {
    var strip = list(nav);
    var current = strip && strip.querySelector(".pf-m-current");
    if (current && strip.scrollWidth > strip.clientWidth) {
      var box = strip.getBoundingClientRect();
      var tab = current.getBoundingClientRect();
      var left = tab.left - box.left + strip.scrollLeft - (strip.clientWidth - tab.width) / 2;
      strip.scrollTo({ left: Math.max(0, left), behavior: "instant" });
    }
    update(nav);
  }

  // a strip not seen yet (the page's, or one an htmx swap brought): its current tab in view
  function fresh(nav) {
    if (nav.dashTabsSeen) { update(nav); return; }
    nav.dashTabsSeen = true;
    reveal(nav);
  }

  function all(each) { document.querySelectorAll(".dash-tabs").forEach(each); }

  // scroll events do not bubble: caught on their way down
  document.addEventListener("scroll", function (event) {
    var strip = event.target;
    if (!strip.classList || !strip.classList.contains("pf-v6-c-tabs__list")) return;
    var nav = strip.closest(".dash-tabs");
    if (nav) update(nav);
  }, true);
  document.addEventListener("click", function (event) {
    var cue = event.target.closest ? event.target.closest(".dash-tabs__cue") : null;
    var strip = cue && list(cue.closest(".dash-tabs"));
    if (!strip) return;
    var step = strip.clientWidth * 0.7;
    strip.scrollBy({ left: cue.classList.contains("dash-tabs__cue--start") ? -step : step });
  });
  document.addEventListener("htmx:afterSettle", function () { all(fresh); });
  window.addEventListener("resize", function () { all(update); });
  if (document.fonts && document.fonts.ready) document.fonts.ready.then(function () { all(update); });
  all(fresh);
})();

// The masthead's navigation button: opens and closes the left navigation (over the page on
// narrow screens, beside it from 75rem). Escape closes it when it covers the page.
(function () {
  "use strict";

  var toggle = document.getElementById("nav-toggle");
  var sidebar = document.getElementById("page-sidebar");
  if (!toggle || !sidebar) return;
  var wide = window.matchMedia("(min-width: 75rem)");

  function shown() {
    return wide.matches ? !sidebar.classList.contains("pf-m-collapsed")
      : sidebar.classList.contains("pf-m-expanded");
  }
  function sync() { toggle.setAttribute("aria-expanded", shown() ? "true" : "false"); }
  function set(open) {
    if (wide.matches) sidebar.classList.toggle("pf-m-collapsed", !open);
    else sidebar.classList.toggle("pf-m-expanded", open);
    sync();
  }
  toggle.addEventListener("click", function () {
    set(!shown());
    // over the page (narrow screens), the opened navigation takes the focus: it is next
    if (!wide.matches && shown()) {
      var first = sidebar.querySelector("a");
      if (first) first.focus();
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !wide.matches && shown()) {
      set(false);
      toggle.focus();
    }
  });
  wide.addEventListener("change", sync);
  sync();
})();
