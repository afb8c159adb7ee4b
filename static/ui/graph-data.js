/* Starts the graph explorer's data request while the page's other scripts are still downloading (740 KB of
 * Cytoscape and fcose): graph.js takes the answer over for its first load (see load() there). */
(function () {
  "use strict";

  var el = document.getElementById("graph");
  var form = document.getElementById("filters");
  if (!el || !window.fetch) return;
  var params = form ? new URLSearchParams(new FormData(form)).toString() : "";
  var url = el.dataset.dataUrl + (params ? "?" + params : "");
  // the same request as the page's <link rel="preload"> (no extra headers), so the preloaded answer is used
  var data = fetch(url, {credentials: "same-origin"})
    .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); });
  data.catch(function () {});  // graph.js reports a failure; nothing is left unhandled if it never runs
  window.ormahGraphData = {url: url, data: data};
})();
