/* Review inbox: keyboard triage. j/k move between cards, a approves, r rejects, e edits the result of a merge or
 * consolidation before approving (Escape in the form cancels), u undoes the last action, o opens the first memory
 * of the card, ? shows the keys. Decisions go through the card's own form (htmx). */
(function () {
  "use strict";

  var current = null;  // the data-card key of the selected card

  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function cards() {
    return Array.prototype.slice.call(document.querySelectorAll("#inbox-cards .inbox-card"));
  }

  function select(card) {
    cards().forEach(function (c) { c.classList.remove("is-current"); c.removeAttribute("aria-current"); });
    if (!card) { current = null; return; }
    current = card.getAttribute("data-card");
    card.classList.add("is-current");
    card.setAttribute("aria-current", "true");
    card.focus({preventScroll: true});
    card.scrollIntoView({block: "nearest"});
  }

  function selected() {
    var list = cards();
    var found = list.filter(function (c) { return c.getAttribute("data-card") === current; })[0];
    return found || null;
  }

  function move(step) {
    var list = cards();
    if (!list.length) return;
    var at = list.indexOf(selected());
    var next = at < 0 ? (step > 0 ? 0 : list.length - 1) : Math.min(list.length - 1, Math.max(0, at + step));
    select(list[next]);
  }

  function nextPending(from) {
    var list = cards();
    var start = list.indexOf(from);
    for (var i = start + 1; i < list.length; i++) if (list[i].hasAttribute("data-pending")) return list[i];
    for (var j = start - 1; j >= 0; j--) if (list[j].hasAttribute("data-pending")) return list[j];
    return from;
  }

  function decide(action) {
    var card = selected() || cards().filter(function (c) { return c.hasAttribute("data-pending"); })[0];
    if (!card || !card.hasAttribute("data-pending")) return;
    select(card);
    var button = card.querySelector('[data-action="' + action + '"]');
    if (button && !button.disabled) { wire(card); button.click(); }
  }

  // htmx 2 wires the hx-post of swapped-in content only when the swap settles (a timer after it, late on a busy
  // machine): a key pressed in between clicked a plain button and nothing was sent. Wire it now (idempotent).
  function wire(el) {
    if (window.htmx) window.htmx.process(el);
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape" && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
      var form = ev.target.closest && ev.target.closest("form.edit-result");
      var cancel = form && form.querySelector('[data-action="cancel-edit"]');
      if (cancel) { ev.preventDefault(); cancel.click(); return; }
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey || typing(document.activeElement)) return;
    var key = ev.key;
    if (key === "j") { move(1); }
    else if (key === "k") { move(-1); }
    else if (key === "a") { decide("approve"); }
    else if (key === "r") { decide("reject"); }
    else if (key === "e") { decide("edit"); }
    else if (key === "u") {
      var undo = document.getElementById("undo-last");
      if (undo && !undo.disabled) { wire(undo); undo.click(); }
    } else if (key === "o") {
      var link = selected() && selected().querySelector("a[href^='/nodes/']");
      if (link) window.location.assign(link.getAttribute("href"));
    } else if (key === "?") {
      toggleHelp();
    } else { return; }
    ev.preventDefault();
  });

  function toggleHelp() {
    var help = document.getElementById("keys-help");
    var toggle = document.getElementById("keys-help-toggle");
    if (!help) return;
    help.hidden = !help.hidden;
    if (toggle) toggle.setAttribute("aria-expanded", String(!help.hidden));
  }
  var toggle = document.getElementById("keys-help-toggle");
  if (toggle) toggle.addEventListener("click", toggleHelp);

  // Clicking a card selects it, so the keys act on what was last touched.
  document.addEventListener("click", function (ev) {
    var card = ev.target.closest && ev.target.closest("#inbox-cards .inbox-card");
    if (card) { current = card.getAttribute("data-card"); markOnly(card); }
  });

  function markOnly(card) {
    cards().forEach(function (c) { c.classList.toggle("is-current", c === card); });
  }

  // After a decision the card comes back decided: keep the place and move on to the next waiting card.
  document.addEventListener("htmx:afterSwap", function (ev) {
    var target = ev.detail && ev.detail.target;
    if (!target) return;
    if (target.id === "inbox-body" || target.id === "inbox-cards") { restore(); return; }
    var card = document.getElementById(target.id);
    if (card && card.classList.contains("inbox-card")) {
      select(card.hasAttribute("data-pending") ? card : nextPending(card));
      // The edit form came in: the person types next, so the first field (or the one with an error) takes focus.
      var field = card.querySelector("form.edit-result [aria-invalid=true]") ||
                  card.querySelector("form.edit-result input[type=text], form.edit-result textarea");
      if (field && card.hasAttribute("data-pending")) {
        field.focus();
        if (field.setSelectionRange) field.setSelectionRange(field.value.length, field.value.length);
      }
    }
  });
  document.addEventListener("htmx:afterSettle", function (ev) {
    if (ev.detail && ev.detail.elt && ev.detail.elt.id === "inbox-body") restore();
  });

  function restore() {
    var card = selected();
    if (card) select(card);
  }
})();
