// When an htmx request fails, say so: htmx swaps no 4xx/5xx answer and nothing answers a
// request that never reached the dashboard, so without this a Next, Create, fix or Save
// template that failed would look as if it did nothing. The page stays as it is (with what
// was typed in it); a banner at the top of the page says what happened, in the words of
// the error page the dashboard answered with, and offers to try the same thing again.
// The texts are the <script> element's data-* attributes (translated by the template).
(function () {
  "use strict";

  var script = document.currentScript;
  var REGION_ID = "request-error";
  var failed = null;  // the request that failed: {elt, verb, path, target, submitter}

  function text(name) {
    return (script && script.getAttribute("data-" + name)) || "";
  }

  function squeeze(value) {
    return (value || "").replace(/\s+/g, " ").trim();
  }

  // An empty live region from the start, so screen readers announce what is put in it.
  function region() {
    var found = document.getElementById(REGION_ID);
    if (found) return found;
    var main = document.getElementById("main") || document.body;
    var el = document.createElement("div");
    el.id = REGION_ID;
    el.setAttribute("aria-live", "assertive");
    el.setAttribute("aria-atomic", "true");
    var after = document.getElementById("live-announcer");
    if (after && after.parentNode === main) main.insertBefore(el, after.nextSibling);
    else main.insertBefore(el, main.firstChild);
    return el;
  }

  // The heading and explanation of the error page the dashboard answered with.
  function fromErrorPage(xhr) {
    var type = xhr.getResponseHeader("Content-Type") || "";
    if (type.indexOf("text/html") !== 0 || !xhr.responseText) return null;
    var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
    var main = doc.getElementById("main") || doc.body;
    if (!main) return null;
    Array.prototype.forEach.call(main.querySelectorAll(".pf-v6-screen-reader, .dash-messages"),
      function (el) { el.remove(); });
    var heading = main.querySelector("h1");
    var words = [];
    Array.prototype.forEach.call(main.querySelectorAll("p"), function (p) {
      if (p.closest(".dash-muted") || p.classList.contains("dash-muted")) return;
      var said = squeeze(p.textContent);
      if (said && words.length < 2) words.push(said);
    });
    if (!heading && !words.length) return null;
    return { title: squeeze(heading && heading.textContent), details: words.join(" ") };
  }

  function hide() {
    failed = null;
    var el = document.getElementById(REGION_ID);
    if (el) {
      el.textContent = "";
      el.className = "";
      el.removeAttribute("data-shown");
    }
  }

  function button(label, primary, onClick) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "pf-v6-c-button " + (primary ? "pf-m-secondary" : "pf-m-link");
    b.textContent = label;
    b.addEventListener("click", onClick);
    return b;
  }

  function show(title, details, requestId, status) {
    var el = region();
    // the same failure again (a field checked as it is typed, while the cluster is away):
    // the banner stays, and is not announced once more
    var said = title + "\n" + details;
    if (el.firstChild && el.getAttribute("data-shown") === said) return;
    el.setAttribute("data-shown", said);
    el.textContent = "";
    el.className = "dash-section dash-messages";
    var alert = document.createElement("div");
    alert.className = "pf-v6-c-alert pf-m-danger pf-m-inline";
    alert.setAttribute("role", "alert");

    var icon = document.createElement("div");
    icon.className = "pf-v6-c-alert__icon";
    icon.innerHTML = '<i class="fas fa-exclamation-circle" aria-hidden="true"></i>';
    alert.appendChild(icon);

    var heading = document.createElement("p");
    heading.className = "pf-v6-c-alert__title";
    var prefix = document.createElement("span");
    prefix.className = "pf-v6-screen-reader";
    prefix.textContent = text("error") + " ";
    heading.appendChild(prefix);
    heading.appendChild(document.createTextNode(title));
    alert.appendChild(heading);

    var description = document.createElement("div");
    description.className = "pf-v6-c-alert__description";
    if (details) {
      var p = document.createElement("p");
      p.textContent = details;
      description.appendChild(p);
    }
    var kept = document.createElement("p");
    kept.textContent = text("kept");
    description.appendChild(kept);
    if (requestId) {
      var rid = document.createElement("p");
      rid.className = "dash-muted";
      rid.innerHTML = "<small></small>";
      rid.firstChild.textContent = text("request-id").replace("%(id)s", requestId);
      description.appendChild(rid);
    }
    alert.appendChild(description);

    var actions = document.createElement("div");
    actions.className = "pf-v6-c-alert__action-group";
    // a 403 may be a form whose CSRF token went stale (the cookie was cleared, or the
    // person signed in again in another tab): a fresh one first, then the same request
    actions.appendChild(button(text("retry"), true, status === 403 ? retryWithFreshToken
                                                                   : retry));
    actions.appendChild(button(text("dismiss"), false, hide));
    alert.appendChild(actions);

    el.appendChild(alert);
    if (el.scrollIntoView) el.scrollIntoView({ block: "nearest" });
  }

  // The same request again, with what the form holds now: its button pressed again (so
  // htmx sends that button's name and value, as the first time), or the element's request.
  function retry() {
    var last = failed;
    hide();
    if (!last) return;
    var elt = last.elt;
    if (!elt || !document.body.contains(elt)) {
      window.location.reload();
      return;
    }
    if (last.submitter && document.body.contains(last.submitter)) {
      last.submitter.click();
    } else if (elt.tagName === "FORM" && elt.requestSubmit) {
      elt.requestSubmit();
    } else if (window.htmx) {
      var target = last.target && document.body.contains(last.target) ? last.target : undefined;
      window.htmx.ajax(last.verb, last.path, { source: elt, target: target });
    }
  }

  // The page's CSRF token, renewed from a fresh copy of this page (a GET, which also sets
  // a new cookie): in the forms and in the hx-headers htmx sends with every request.
  function retryWithFreshToken() {
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("input[name=csrfmiddlewaretoken]");
        if (fresh) {
          Array.prototype.forEach.call(
            document.querySelectorAll("input[name=csrfmiddlewaretoken]"),
            function (input) { input.value = fresh.value; });
        }
        var headers = doc.body && doc.body.getAttribute("hx-headers");
        if (headers) document.body.setAttribute("hx-headers", headers);
      })
      .catch(function () { /* the same request will say what is wrong */ })
      .then(retry);
  }

  function remember(detail) {
    var config = detail.requestConfig || {};
    var event = config.triggeringEvent;
    var submitter = event && event.submitter ? event.submitter : null;
    // a step's Next and the field check its blur sends fail together: Try again is for
    // what the person pressed, not for the check that happened on the way
    if (failed && failed.submitter && !submitter) return;
    failed = {
      elt: detail.elt || config.elt,
      verb: config.verb || "get",
      path: config.path || (detail.pathInfo && detail.pathInfo.requestPath),
      target: detail.target || config.target,
      submitter: submitter
    };
  }

  document.addEventListener("htmx:responseError", function (event) {
    var detail = event.detail || {};
    var xhr = detail.xhr;
    if (!xhr) return;
    var page = fromErrorPage(xhr);
    remember(detail);
    show(page && page.title ? page.title : text("failed").replace("%(status)s", xhr.status),
         page ? page.details : "", xhr.getResponseHeader("X-Request-Id"), xhr.status);
  });

  document.addEventListener("htmx:sendError", function (event) {
    remember(event.detail || {});
    show(text("unreachable"), "", "");
  });

  // Done after all (tried again, or the page moved on): the banner goes.
  document.addEventListener("htmx:afterRequest", function (event) {
    var detail = event.detail || {};
    if (!failed || !detail.successful) return;
    var config = detail.requestConfig || {};
    if (detail.boosted || config.path === failed.path) hide();
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", region);
  else region();
})();
