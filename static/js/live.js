// Live updates on the job list and job pages: one websocket per tab, opened by the htmx
// websocket extension on the element #live-socket (hx-ext="ws,live" ws-connect="/ws/live/?...").
// training/live/consumers.py describes the protocol. This file:
//  - lets through only the pushed fragments whose target is on this page (the server sends
//    every part of a job's page; only the open tab's parts are here),
//  - reads the JSON frames: "announce" (into the aria-live region #live-announcer),
//    "statuses" (before a snapshot: announce the jobs whose status the page shows differently,
//    i.e. what changed while it was not connected), "ready" (connected and up to date),
//    "closing" (why the server is about to close the socket), "paused" (the socket is open
//    but updates cannot reach it for now: the watch hub does not see the cluster, or Redis
//    is away; "ready" follows, after the current state, when they can again); every JSON
//    frame is also dispatched as a `live:message` event for other scripts,
//  - shows "Reconnecting…" in #live-status while the socket is down or paused, and
//    reconnects with back-off (the extension itself retries closes 1006/1011/1012/1013; we
//    do the others),
//  - acts on the server's close codes: 4401 reloads the page (through sign-in and back),
//    4403 and 4400 show the reason and stop,
//  - gives pushed forms the page's CSRF token (the server renders pushes once for everyone),
//  - keeps keyboard focus on the same element when a push replaces it,
//  - on the Events tab, keeps out pushed rows and timeline lines of the type the tab's
//    filter leaves out (`data-event-filter`; pushes are shared by viewers of every filter)
//    and shows the "No events" row or text (`data-empty-text`) when none is left,
//  - on the job list, reads "refresh" (a job was created, or the snapshot has jobs the page
//    may lack): fetches #job-table again over htmx at the page's own address (its filters,
//    the person's token), debounced, and announces "Job x was created." for each new row
//    that the new table shows; the open socket stays when the new table's follows the same
//    projects,
//  - keeps ages and durations (`<time data-elapsed>`, training/templatetags/live_tags.py)
//    counting between pushes, in the server's words ("2h 15m 43s", "3d 4h 12m").
(function () {
  "use strict";
  if (!window.htmx) return;

  var EXTENSION_RETRIES = [1006, 1011, 1012, 1013];
  var BAD_REQUEST = 4400, SIGN_IN = 4401, FORBIDDEN = 4403;
  var MAX_DELAY_MS = 30000;
  var RELOAD_KEY = "live-signin-reload";
  var KEEP_ANNOUNCEMENTS = 3;
  var TICK_MS = 1000;                // ages and durations count on every second
  var REFRESH_DEBOUNCE_MS = 400;     // a burst of new jobs: one fetch of the table...
  var REFRESH_MAX_WAIT_MS = 2000;    // ...which a steady stream cannot put off longer
  var REFRESH_LATER_MS = 1000;       // a fetch under way, or a row's menu open: ask again
  var CREATED_MARGIN_MS = 2000;      // creation times have whole seconds (and clocks differ)
  var REFRESH_HEADER = "X-Live-Refresh";

  var leaving = false;   // the page is being left: its sockets close, nothing to show
  var retries = 0;       // our reconnects since the server last said "ready"
  var focusedId = null;  // the focused element's id while a push is swapped in

  window.addEventListener("pagehide", function () { leaving = true; });
  window.addEventListener("beforeunload", function () { leaving = true; });

  function texts() {
    var region = document.getElementById("live-status");
    return region ? region.dataset : {};
  }

  // The visible (and spoken: role=status) connection notice; empty when all is well.
  function showStatus(kind, text, link) {
    var region = document.getElementById("live-status");
    if (!region) return;
    region.textContent = "";
    region.className = "dash-live-status" + (kind ? " dash-live-status--" + kind : "");
    if (!text) return;
    var icon = document.createElement("i");
    icon.className = "fas " + (kind === "reconnecting" ? "fa-sync-alt" : "fa-exclamation-circle");
    icon.setAttribute("aria-hidden", "true");
    region.appendChild(icon);
    region.appendChild(document.createTextNode(" " + text));
    if (link) {
      var a = document.createElement("a");
      a.href = link.href;
      a.textContent = link.text;
      region.appendChild(document.createTextNode(" "));
      region.appendChild(a);
    }
  }

  // What changed, for screen readers: added paragraphs of a polite live region are read out.
  function announce(text) {
    var region = document.getElementById("live-announcer");
    if (!region || !text) return;
    var p = document.createElement("p");
    p.textContent = text;
    region.appendChild(p);
    while (region.children.length > KEEP_ANNOUNCEMENTS) region.removeChild(region.firstElementChild);
  }

  // The status an element shows (its status label's data-status), "" if none.
  function shownStatus(element) {
    var label = element.querySelector("[data-status]");
    return label ? label.getAttribute("data-status") : "";
  }

  function onJson(message, socketElt) {
    if (message.type === "refresh") {
      onRefresh(message);
    } else if (message.type === "announce") {
      // a list row's news only matters if this page of the list shows the row
      if (!message.only_if || document.getElementById(message.only_if)) announce(message.text);
    } else if (message.type === "statuses") {
      (message.jobs || []).forEach(function (job) {
        var element = document.getElementById(job.only_if);
        if (element && shownStatus(element) && shownStatus(element) !== job.status) {
          announce(job.text);
        }
      });
    } else if (message.type === "ready") {
      retries = 0;
      socketElt.setAttribute("data-live-state", "live");
      showStatus("", "");
    } else if (message.type === "paused") {
      socketElt.setAttribute("data-live-state", "reconnecting");
      showStatus("reconnecting", texts().reconnecting);
    } else if (message.type === "closing") {
      socketElt.liveClosing = message;  // the reason, read when the close comes
    }
    socketElt.dispatchEvent(new CustomEvent("live:message", { bubbles: true, detail: message }));
  }

  // The target of a pushed element: its own id, or the selector after "afterbegin:" etc.
  function targetOf(element) {
    var oob = element.getAttribute("hx-swap-oob") || "true";
    var colon = oob.indexOf(":");
    if (colon > 0) return oob.slice(colon + 1);
    return element.id ? "#" + CSS.escape(element.id) : null;
  }

  // Pushed HTML is rendered once for every viewer, so its forms carry no CSRF token: give
  // them this page's (the sign-out form in the masthead always has one).
  function addCsrfToken(root) {
    var mine = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (!mine) return;
    root.querySelectorAll("form[method=post]").forEach(function (form) {
      if (form.querySelector("input[name=csrfmiddlewaretoken]")) return;
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = "csrfmiddlewaretoken";
      input.value = mine.value;
      form.insertBefore(input, form.firstChild);
    });
  }

  // -- the Events tab's filter ------------------------------------------------------------
  var EVENT_ROWS = "#job-event-rows";
  var TIMELINE = "#job-event-timeline";

  // The timeline in words is pushed whole, of every type: it keeps the page's filter and
  // the lines of that type, or says there are none.
  function keepFilteredLines(element) {
    var shown = document.querySelector(TIMELINE);
    var wanted = (shown && shown.getAttribute("data-event-filter")) || "";
    element.setAttribute("data-event-filter", wanted);
    if (!wanted) return;
    element.querySelectorAll("li[data-event-type]").forEach(function (line) {
      if (line.getAttribute("data-event-type") !== wanted) line.remove();
    });
    var list = element.querySelector("ol");
    if (!list || list.querySelector("li")) return;
    var empty = document.createElement("p");
    empty.className = "dash-timeline__empty";
    empty.textContent = element.getAttribute("data-empty-text") || "";
    list.replaceWith(empty);
  }

  // Rows of events (all of them on connect, new ones on top later) are pushed to every
  // viewer of the job; a table filtered to Warning (or Normal) keeps only those. New rows
  // replace the page's rows of the same events (a changed count, or shown by a snapshot
  // just before): no event is shown twice. False: the element has nothing left to add.
  function keepFilteredEvents(element, selector) {
    if (selector === TIMELINE) keepFilteredLines(element);
    if (selector !== EVENT_ROWS) return true;
    var rows = document.querySelector(EVENT_ROWS);
    var table = rows && rows.closest("table[data-event-filter]");
    var wanted = table ? table.getAttribute("data-event-filter") : "";
    if (wanted) {
      element.querySelectorAll("tr[data-event-type]").forEach(function (row) {
        if (row.getAttribute("data-event-type") !== wanted) row.remove();
      });
    }
    if (element.id === "job-event-rows") return true;  // every row: the table's are replaced
    var fresh = element.querySelectorAll("tr[data-event-type]");
    fresh.forEach(function (row) {
      var shown = row.id && document.getElementById(row.id);
      if (shown) shown.remove();
    });
    return fresh.length > 0;
  }

  // "No events" when the (filtered) table has no row, not when it has some; the count
  // beside the table's disclosure is that of its rows.
  function showWhetherEventsAreEmpty() {
    var rows = document.querySelector(EVENT_ROWS);
    if (!rows) return;
    var count = document.getElementById("job-events-count");
    if (count) count.textContent = String(rows.querySelectorAll("tr[data-event-type]").length);
    var some = rows.querySelector("tr[data-event-type]") !== null;
    var empty = document.getElementById("job-events-empty");
    if (some && empty) empty.remove();
    if (some || empty) return;
    var table = rows.closest("table");
    var text = table && table.getAttribute("data-empty-text");
    if (!text) return;
    var row = document.createElement("tr");
    row.id = "job-events-empty";
    row.className = "pf-v6-c-table__tr";
    var cell = document.createElement("td");
    cell.className = "pf-v6-c-table__td";
    cell.colSpan = table.querySelectorAll("thead th").length || 1;
    cell.textContent = text;
    row.appendChild(cell);
    rows.appendChild(row);
  }

  function onlyWhatThisPageShows(html) {
    var template = document.createElement("template");
    template.innerHTML = html;
    addCsrfToken(template.content);
    var kept = "";
    Array.prototype.forEach.call(template.content.children, function (element) {
      var selector = targetOf(element);
      if (selector && document.querySelector(selector) && keepFilteredEvents(element, selector)) {
        kept += element.outerHTML;
      }
    });
    return kept;
  }

  // -- the job list: fetch the table again when a job may be missing from it ---------------
  var refresh = { target: "", timer: null, since: 0, busy: false, news: [] };

  function onRefresh(message) {
    var table = document.getElementById(message.target);
    if (!table) return;  // not the job list
    var listedAt = Date.parse(table.getAttribute("data-listed-at") || "");
    var missing = (message.jobs || []).filter(function (job) {
      if (document.getElementById(job.only_if)) return false;  // shown already
      // created before the page listed its jobs: its filters (or its page) leave it out
      return !job.created || isNaN(listedAt) ||
        Date.parse(job.created) >= listedAt - CREATED_MARGIN_MS;
    });
    if (!missing.length) return;
    refresh.target = message.target;
    refresh.news = refresh.news.concat(missing);
    var now = Date.now();
    if (refresh.timer) window.clearTimeout(refresh.timer);
    else refresh.since = now;
    var wait = Math.min(REFRESH_DEBOUNCE_MS, refresh.since + REFRESH_MAX_WAIT_MS - now);
    refresh.timer = window.setTimeout(fetchTable, Math.max(0, wait));
  }

  function fetchTable() {
    refresh.timer = null;
    var table = document.getElementById(refresh.target);
    if (!table) {
      refresh.news = [];
      return;
    }
    if (refresh.busy || table.querySelector("details[open]")) {
      // don't close a row's menu under the person's pointer
      refresh.timer = window.setTimeout(fetchTable, REFRESH_LATER_MS);
      return;
    }
    var news = refresh.news;
    var headers = {};
    headers[REFRESH_HEADER] = "true";
    refresh.news = [];
    refresh.busy = true;
    htmx.ajax("GET", location.pathname + location.search,
              { target: table, swap: "outerHTML", headers: headers })
      .then(function () {
        var told = {};
        news.forEach(function (job) {
          if (!told[job.only_if] && document.getElementById(job.only_if)) announce(job.text);
          told[job.only_if] = true;
        });
      }, function () { /* the table stays; the next change asks again */ })
      .then(function () { refresh.busy = false; });
  }

  // The ticks (the boxes of the "Ticked jobs" form) survive the table fetched again, for a
  // job that appeared or a filter changed: the rows still shown keep theirs. Read at the
  // swap, not at the request: a box ticked while the table was on its way counts too.
  var ticked = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "job-table") return;
    ticked = Array.prototype.map.call(
      target.querySelectorAll("input[form='compare-form']:checked"),
      function (box) { return box.value; });
  });
  document.addEventListener("htmx:afterSwap", function () {
    if (!ticked) return;
    var values = ticked;
    ticked = null;
    var table = document.getElementById("job-table");
    if (!table) return;
    table.querySelectorAll("input[form='compare-form']").forEach(function (box) {
      if (values.indexOf(box.value) !== -1) box.checked = true;
    });
  });

  // "N jobs not shown on this page changed": its button lists them again
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-live-refresh]");
    if (!button) return;
    refresh.target = button.getAttribute("data-live-refresh");
    if (refresh.timer) window.clearTimeout(refresh.timer);
    fetchTable();
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var config = event.detail.requestConfig;
    if (!config || !config.headers || !config.headers[REFRESH_HEADER]) return;
    // the filters changed while it was fetched: their own request brings the table
    if (config.path !== location.pathname + location.search) event.detail.shouldSwap = false;
  });

  // A table fetched again brings its socket element out of band: keep the open socket if
  // the new one would follow the same projects (else it is replaced, and connects anew),
  // and tell it which rows the table shows now ("rows" and "listed" of its address: only
  // these rows are sent; a socket that connects again says so again, on open).
  var PAGE_PARAMS = ["rows", "listed", "tab"];

  function socketParams(url) {
    var params = new URL(url || "", location.href).searchParams;
    var follows = [], page = new URLSearchParams();
    params.forEach(function (value, key) {
      if (PAGE_PARAMS.indexOf(key) >= 0) page.append(key, value);
      else follows.push(key + "=" + value);
    });
    return { follows: follows.join("&"), page: page.toString() };
  }

  function showRows(elt) {
    if (elt.liveSocket && elt.livePage !== undefined) {
      elt.liveSocket.send(JSON.stringify({ action: "show", page: elt.livePage }));
    }
  }

  // The job page's tabs are swapped in place: the socket is told which one shows (only the
  // Events tab is sent Events rows).
  document.addEventListener("htmx:afterSwap", function (event) {
    var content = document.getElementById("tab-content");
    var socket = document.getElementById("live-socket");
    if (!content || !socket || socket.getAttribute("data-live-page") !== "job") return;
    var page = "tab=" + encodeURIComponent(content.getAttribute("data-live-tab") || "");
    var known = socket.livePage !== undefined ? socket.livePage :
      socketParams(socket.getAttribute("ws-connect")).page;
    if (page === known) return;
    socket.livePage = page;
    showRows(socket);
  });

  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var current = event.detail.target;
    if (!current || current.id !== "live-socket") return;
    var fresh = event.detail.fragment && event.detail.fragment.firstElementChild;
    var state = current.getAttribute("data-live-state");
    if (!fresh || state === "stopped" || state === "signed-out") return;
    var now = socketParams(current.getAttribute("ws-connect"));
    var next = socketParams(fresh.getAttribute("ws-connect"));
    if (now.follows !== next.follows || !current.getAttribute("ws-connect")) return;
    event.detail.shouldSwap = false;
    if (now.page !== next.page) {
      current.livePage = next.page;
      showRows(current);
    }
  });

  // -- the diagnosis card -------------------------------------------------------------------
  // The hub pushes #job-diagnosis-signal with the job state's signature (it reads no logs,
  // quotas or metrics, so it cannot make the card); when it no longer matches the card's,
  // the card is fetched again with the viewer's own session (training/diagnoses/).
  function refreshDiagnosis() {
    var signal = document.getElementById("job-diagnosis-signal");
    var card = document.getElementById("job-diagnosis");
    if (!signal || !card || !card.getAttribute("data-src")) return;
    if (signal.getAttribute("data-signature") === card.getAttribute("data-signature")) return;
    card.setAttribute("data-signature", signal.getAttribute("data-signature"));
    var before = headline();
    htmx.ajax("GET", card.getAttribute("data-src"), { target: card, swap: "outerHTML" })
      .then(function () {
        var now = headline();  // a new diagnosis is said, as a status change is
        if (now && now !== before) announce(now);
      }, function () { /* the card stays; the next change asks again */ });
  }
  function headline() {
    var title = document.getElementById("job-diagnosis-title");
    return title ? title.textContent.replace(/\s+/g, " ").trim() : "";
  }
  document.addEventListener("htmx:wsAfterMessage", refreshDiagnosis);

  // -- ages and durations that keep counting -----------------------------------------------
  // odh/training/durations.py format_duration: "2h 15m 43s" under a day, "3d 4h 12m" after.
  function formatDuration(seconds) {
    var total = seconds > 0 ? Math.floor(seconds) : 0;
    var days = Math.floor(total / 86400);
    var hours = Math.floor((total % 86400) / 3600);
    var minutes = Math.floor((total % 3600) / 60);
    if (days) return days + "d " + hours + "h " + minutes + "m";
    var units = [[hours, "h"], [minutes, "m"], [total % 60, "s"]];
    while (units.length > 1 && units[0][0] === 0) units.shift();
    return units.map(function (unit) { return unit[0] + unit[1]; }).join(" ");
  }

  // data-elapsed: the seconds at rendering; counted on from when this page first saw the
  // element (its own clock only, so a skewed clock does not matter).
  function tick() {
    var now = window.performance.now();
    document.querySelectorAll("time[data-elapsed]").forEach(function (time) {
      if (time.liveCountedFrom === undefined) {
        time.liveCountedFrom = now - 1000 * (Number(time.getAttribute("data-elapsed")) || 0);
        return;
      }
      var text = formatDuration((now - time.liveCountedFrom) / 1000);
      if (time.textContent !== text) time.textContent = text;
    });
  }

  tick();
  window.setInterval(tick, TICK_MS);
  document.addEventListener("htmx:afterSettle", tick);

  htmx.defineExtension("live", {
    transformResponse: function (text, xhr, elt) {
      if (xhr) return text;  // an ordinary htmx request, not a websocket message
      var trimmed = text.replace(/^\s+/, "");
      if (trimmed.charAt(0) === "{") {
        try {
          onJson(JSON.parse(trimmed), elt);
        } catch (e) {
          console.warn("live updates: unreadable message", e);
        }
        return "";
      }
      var active = document.activeElement;
      focusedId = active && active !== document.body && active.id ? active.id : null;
      return onlyWhatThisPageShows(text);
    }
  });

  // A pushed list row keeps the menu the page drew (it is the person's: what they may do);
  // the items that fit one state of the job (Suspend, Resume, Retry) follow the row's.
  function fitRowMenus() {
    document.querySelectorAll("tr[data-job-state]").forEach(function (row) {
      var state = row.getAttribute("data-job-state");
      row.querySelectorAll("[data-while]").forEach(function (item) {
        item.hidden = item.getAttribute("data-while") !== state;
      });
    });
  }

  document.addEventListener("htmx:wsAfterMessage", function () {
    fitRowMenus();
    showWhetherEventsAreEmpty();
    tick();
    if (!focusedId) return;
    var active = document.activeElement;
    if (!active || active === document.body || !document.body.contains(active)) {
      var again = document.getElementById(focusedId);
      if (again) again.focus({ preventScroll: true });
    }
    focusedId = null;
  });

  document.addEventListener("htmx:wsConnecting", function (event) {
    if (event.target.getAttribute("data-live-state") !== "reconnecting") {
      event.target.setAttribute("data-live-state", "connecting");
    }
  });

  document.addEventListener("htmx:wsOpen", function (event) {
    event.target.setAttribute("data-live-state", "open");
    event.target.liveSocket = event.detail.socketWrapper;
    showRows(event.target);  // connected again: the rows shown since it first connected
  });

  function signInAgain(reason) {
    var data = texts();
    var last = 0;
    try { last = Number(window.sessionStorage.getItem(RELOAD_KEY) || 0); } catch (e) { /* none */ }
    if (Date.now() - last > 60000) {
      // Reloading goes through sign-in (the session has no live token) and back here.
      try { window.sessionStorage.setItem(RELOAD_KEY, String(Date.now())); } catch (e) { /* none */ }
      showStatus("stopped", reason || data.signin);
      window.location.reload();
      return;
    }
    // Reloaded a moment ago and refused again: let the person choose.
    showStatus("stopped", reason || data.signin, {
      href: data.signinUrl + "?next=" + encodeURIComponent(location.pathname + location.search),
      text: data.signinLink
    });
  }

  document.addEventListener("htmx:wsClose", function (event) {
    var elt = event.target;
    // Leaving the page, or the socket's element was replaced (the list's filters changed:
    // the new element opens its own socket).
    if (leaving || !document.body.contains(elt)) return;
    var code = event.detail.event.code;
    var closing = elt.liveClosing;
    elt.liveClosing = null;
    var reason = (closing && closing.code === code && closing.reason) || event.detail.event.reason || "";
    var data = texts();
    if (code === SIGN_IN) {
      elt.setAttribute("data-live-state", "signed-out");
      signInAgain(reason);
      return;
    }
    if (code === FORBIDDEN || code === BAD_REQUEST) {
      elt.setAttribute("data-live-state", "stopped");
      showStatus("stopped", (reason || data.forbidden) + " " + data.stopped);
      return;
    }
    elt.setAttribute("data-live-state", "reconnecting");
    showStatus("reconnecting", data.reconnecting);
    if (EXTENSION_RETRIES.indexOf(code) < 0) {
      // e.g. 1000/1001 (server going away), 4503 (cluster unreachable): back-off with jitter
      var wrapper = event.detail.socketWrapper;
      var delay = Math.random() * Math.min(MAX_DELAY_MS, 1000 * Math.pow(2, retries));
      retries += 1;
      window.setTimeout(function () {
        if (document.body.contains(elt)) wrapper.reconnect();
      }, delay);
    }
  });
})();
