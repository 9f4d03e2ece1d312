// The masthead's bell (#bell): the person's notices (training/live/notice_subscriptions.py).
//  - Live over the page's own websocket: on every open of #live-socket it subscribes
//    ("notices" = the person's user name; the server refuses anyone else's); a page that
//    opens no socket gets one of the bell's own (#bell-socket), opened the same way (htmx's
//    websocket extension and live.js).
//  - "notices" (on every (re)connect: the unread count) and "notice" (a new one: its list
//    item, the count, a sentence for the aria-live region #bell-announcer, and, when the
//    person allowed it and the page is in the background, the browser's own notification).
//  - The button's accessible name carries the count; opening the drawer fetches its list
//    and marks the notices read (POST), moves focus into it; Escape or the close button
//    closes it and gives focus back to the button.
(function () {
  "use strict";
  var bell = document.getElementById("bell");
  if (!bell || !window.htmx) return;
  var button = document.getElementById("bell-button");
  var count = document.getElementById("bell-count");
  var drawer = document.getElementById("bell-drawer");
  var items = document.getElementById("bell-items");
  var title = document.getElementById("bell-title");
  var closer = document.getElementById("bell-close");
  var announcer = document.getElementById("bell-announcer");
  var data = bell.dataset;
  var MAX_SHOWN = 99;

  function setUnread(n) {
    n = Math.max(0, Number(n) || 0);
    button.setAttribute("data-unread", String(n));
    count.textContent = n > MAX_SHOWN ? MAX_SHOWN + "+" : String(n);
    count.hidden = n === 0;
    button.setAttribute("aria-label", n ? data.labelUnread.replace("%(count)s", String(n))
                                        : data.label);
  }

  function announce(text) {
    if (!text) return;
    var p = document.createElement("p");
    p.textContent = text;
    announcer.appendChild(p);
    while (announcer.children.length > 3) announcer.removeChild(announcer.firstElementChild);
  }

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (e) {
      return "";
    }
  }

  // -- the drawer ----------------------------------------------------------------------------
  var loading = null;

  function markRead() {
    if (loading) return loading;
    if (!items.firstElementChild) items.textContent = data.loading;
    loading = fetch(data.readUrl, {
      method: "POST", credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), "X-Requested-With": "fetch" }
    }).then(function (response) {
      if (!response.ok) throw new Error(String(response.status));
      return response.text();
    }).then(function (html) {
      items.innerHTML = html;
      setUnread(0);
    }, function () {
      items.textContent = data.failed;
    }).then(function () { loading = null; });
    return loading;
  }

  function isOpen() { return !drawer.hidden; }

  function open() {
    drawer.hidden = false;
    button.setAttribute("aria-expanded", "true");
    showBrowserState();
    title.focus();
    markRead();
  }

  function close(giveFocusBack) {
    if (!isOpen()) return;
    drawer.hidden = true;
    button.setAttribute("aria-expanded", "false");
    if (giveFocusBack) button.focus();
  }

  button.addEventListener("click", function () {
    if (isOpen()) close(true); else open();
  });
  closer.addEventListener("click", function () { close(true); });
  bell.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && isOpen()) {
      event.preventDefault();
      close(true);
    }
  });
  // a click elsewhere closes it (focus goes where the person clicked)
  document.addEventListener("click", function (event) {
    if (isOpen() && !bell.contains(event.target)) close(false);
  });
  // tabbing out of the drawer (it is not modal) closes it
  bell.addEventListener("focusout", function (event) {
    if (isOpen() && event.relatedTarget && !bell.contains(event.relatedTarget)) close(false);
  });

  // -- the browser's own notifications, only when the person asks for them -----------------
  var browserBox = document.getElementById("bell-browser");
  var allow = document.getElementById("bell-allow");
  var browserState = document.getElementById("bell-browser-state");
  var canNotify = "Notification" in window;

  function showBrowserState() {
    if (!canNotify) return;
    browserBox.hidden = false;
    var permission = window.Notification.permission;
    allow.hidden = permission !== "default";
    browserState.textContent = permission === "granted" ? data.browserOn :
      permission === "denied" ? data.browserDenied : "";
    browserState.hidden = !browserState.textContent;
  }

  allow.addEventListener("click", function () {
    var asked = window.Notification.requestPermission(showBrowserState);
    if (asked && asked.then) asked.then(showBrowserState);
  });

  function notifyDevice(message) {
    if (!canNotify || window.Notification.permission !== "granted") return;
    if (document.visibilityState === "visible") return;  // the bell says it already
    try {
      var shown = new window.Notification(message.title, {
        body: message.body || "", tag: "odh-notice-" + (message.id || message.title)
      });
      shown.onclick = function () {
        window.focus();
        if (message.link) window.location.assign(message.link);
      };
    } catch (e) { /* some browsers only notify from a service worker */ }
  }

  // -- live: the page's socket, or the bell's own -----------------------------------------
  function subscribe(wrapper) {
    wrapper.send(JSON.stringify({ action: "subscribe", kind: "notices",
                                  value: data.subscription }));
  }

  document.addEventListener("htmx:wsOpen", function (event) {
    if (event.target.id === "live-socket") subscribe(event.detail.socketWrapper);
  });

  document.addEventListener("live:message", function (event) {
    var message = event.detail || {};
    if (message.type === "notices") {
      setUnread(message.unread);
      if (isOpen() && message.unread) markRead();
    } else if (message.type === "notice") {
      setUnread(message.unread);
      announce(message.text);
      notifyDevice(message);
      if (isOpen()) {
        var list = document.getElementById("bell-list");
        if (list) list.insertAdjacentHTML("afterbegin", message.html);
        var empty = document.getElementById("bell-empty");
        if (empty) empty.hidden = true;
        markRead();
      }
    }
  });

  function ownSocket() {
    var page = document.getElementById("live-socket");
    if (page && page.getAttribute("ws-connect")) return;  // the page's socket carries it
    var socket = document.createElement("div");
    socket.id = "bell-socket";
    socket.hidden = true;
    socket.setAttribute("hx-ext", "ws,live");
    socket.setAttribute("ws-connect", data.socketUrl);
    socket.setAttribute("data-live-page", "bell");
    document.body.appendChild(socket);
    window.htmx.process(socket);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ownSocket);
  } else {
    ownSocket();
  }
})();
