/* Ormah UI helpers shared by every page: keyboard shortcuts and focus after htmx swaps. */
(function () {
  "use strict";

  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  // Filter and legend boxes start closed on narrow screens, so the graph is in reach.
  if (window.matchMedia("(max-width: 720px)").matches) {
    document.querySelectorAll("details[data-open-wide]").forEach(function (d) { d.open = false; });
  }

  // A signed-out htmx request is redirected to the sign-in page: go there instead of swapping it into a panel. A
  // change (not a GET) was not made; the sign-in page says so (`undone=1`).
  document.addEventListener("htmx:beforeSwap", function (ev) {
    var xhr = ev.detail && ev.detail.xhr;
    if (xhr && xhr.responseURL && new URL(xhr.responseURL).pathname === "/login/") {
      ev.detail.shouldSwap = false;
      var verb = ev.detail.requestConfig && ev.detail.requestConfig.verb;
      window.location.assign("/login/?next=" + encodeURIComponent(window.location.pathname + window.location.search) +
                             (verb && verb !== "get" ? "&undone=1" : ""));
    }
  });

  // An htmx request that got no answer, or a 5xx one (htmx swaps neither, see the htmx-config in base.html): say so
  // in the message area, as text, and leave the screen as it was. Without this the click did nothing visible.
  function tell(text) {
    var toast = document.getElementById("toast");
    if (!toast) return;
    var error = document.createElement("span");
    error.className = "error";
    error.textContent = text;
    var reload = document.createElement("a");
    reload.className = "link";
    reload.href = window.location.pathname + window.location.search;
    reload.textContent = "Reload";
    toast.replaceChildren(error, reload);
    toast.classList.add("shown");
  }
  document.addEventListener("htmx:responseError", function (ev) {
    var xhr = ev.detail && ev.detail.xhr;
    tell("Ormah could not do that: the server answered with an error (" + (xhr ? xhr.status : "?") + "). " +
         "The screen was not updated; reload the page to see the current state.");
  });
  document.addEventListener("htmx:sendError", function () {
    tell("Ormah did not answer (is `ormah serve` still running?). The screen was not updated; reload the page " +
         "once it is back.");
  });

  // A request in flight (an approval can take seconds): its element says it is busy (ormah.css shows a progress
  // cursor on its buttons) until the answer; htmx itself drops a second click meanwhile.
  document.addEventListener("htmx:beforeRequest", function (ev) {
    if (ev.detail && ev.detail.elt) ev.detail.elt.setAttribute("aria-busy", "true");
  });
  document.addEventListener("htmx:afterRequest", function (ev) {
    if (ev.detail && ev.detail.elt) ev.detail.elt.removeAttribute("aria-busy");
  });

  // After an undo, the node panel shows the memory as it is now.
  document.body.addEventListener("ormah:undone", function () {
    var shown = document.querySelector("#panel article.node[data-node-id]");
    if (shown && window.htmx) {
      window.htmx.ajax("GET", "/nodes/" + shown.getAttribute("data-node-id") + "/", {target: "#panel"});
    }
  });

  // "/" focuses the search box (where there is one).
  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "/" || ev.ctrlKey || ev.metaKey || ev.altKey || typing(document.activeElement)) return;
    var q = document.getElementById("q");
    if (q) { ev.preventDefault(); q.focus(); q.select(); }
  });

  // After htmx replaces the node panel, move focus into it: the field a form refused, else its first field,
  // else the heading.
  document.addEventListener("htmx:afterSwap", function (ev) {
    var target = ev.detail && ev.detail.target;
    if (!target || target.id !== "panel") return;
    var alert = target.querySelector("[role=alert]");
    var field = target.querySelector("form [aria-invalid=true]") ||
                target.querySelector("form[aria-label] input:not([type=hidden]), form[aria-label] textarea");
    var heading = target.querySelector("#node-title");
    var el = alert && !field ? alert : (field || heading || target);
    if (el === alert && !el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
    el.focus({preventScroll: false});
  });
})();
