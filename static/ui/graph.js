/* Ormah graph explorer: Cytoscape + fcose. Data comes from /graph/data/ (compact keys, see memory/graph.py):
 *   node {id, label, type, tier, space, imp, acc, self?, idn?, old?, more?}   edge [source, target, type, weight]
 *   pos {id: [x, y]} (cached, or laid out by the server for a big graph: then layout: "server")
 * The instance is window.ormahGraph; #graph gets data-state="ready" and data-node-count once the graph is drawn.
 */
(function () {
  "use strict";

  var el = document.getElementById("graph");
  if (!el || typeof window.cytoscape === "undefined") return;

  var statusEl = document.getElementById("graph-status");
  var filtersForm = document.getElementById("filters");
  var reduceMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
  var darkScheme = window.matchMedia("(prefers-color-scheme: dark)");
  var TYPES = ["fact", "decision", "preference", "event", "person", "project", "concept", "procedure", "goal",
               "observation"];
  var EDGES = ["related_to", "supports", "contradicts", "defines", "evolved_from", "derived_from", "part_of",
               "depends_on"];
  var DIRECTED = {defines: 1, evolved_from: 1, derived_from: 1, part_of: 1, depends_on: 1, supports: 1};
  var BIG = Number(el.dataset.big) || 1500; // above this many nodes: haystack edges, no arrows, textures while panning
  var DETAIL_ZOOM = 0.6; // below BIG: from this zoom on, every label in the style, curved edges with arrows

  var cy = null;
  var detailed = false;   // every memory's label, curved edges and arrows in the style (see detail())
  var order = [];        // node ids by importance, for N / P keyboard navigation
  var cursor = -1;
  var loadSeq = 0;

  function url(template, id) { return template.replace("__ID__", encodeURIComponent(id)); }
  function say(text) { if (statusEl) statusEl.textContent = text; }
  function duration() { return reduceMotion.matches ? 0 : 350; }

  // ---- style -------------------------------------------------------------------------------------------------

  function palette() {
    var css = getComputedStyle(document.documentElement);
    var v = function (name) { return css.getPropertyValue(name).trim(); };
    var p = {type: {}, edge: {}, tier: {}};
    TYPES.forEach(function (t) { p.type[t] = v("--type-" + t); });
    EDGES.forEach(function (e) { p.edge[e] = v("--edge-" + e); });
    ["core", "working", "archival"].forEach(function (t) { p.tier[t] = v("--tier-" + t); });
    p.self = v("--self"); p.identity = v("--identity"); p.hit = v("--hit");
    p.label = v("--graph-label"); p.labelBg = v("--graph-label-bg");
    p.badgeCtr = v("--danger") || "#b91c1c"; p.badgeSup = v("--edge-evolved_from") || "#8e5c84";
    return p;
  }

  /* A badge in the node's top-right corner: a small SVG circle with a sign (contradicted, superseded). */
  function badge(colour, sign) {
    var svg = '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><circle cx="10" cy="10" r="9" fill="' +
              colour + '" stroke="white" stroke-width="2"/><text x="10" y="14.5" font-size="13" font-family="sans-serif"' +
              ' font-weight="bold" text-anchor="middle" fill="white">' + sign + '</text></svg>';
    return {"background-image": "data:image/svg+xml;utf8," + encodeURIComponent(svg), "background-fit": "none",
            "background-width": "48%", "background-height": "48%", "background-position-x": "115%",
            "background-position-y": "-15%", "background-clip": "none", "background-image-containment": "over",
            "bounds-expansion": 6, "background-image-opacity": 1};
  }

  function styles(p, big) {
    // Text properties only on nodes that have a label: on the first style pass at 5,000 memories the same
    // properties on every node cost ~0.1 s of the renderer's CPU for names that are not drawn.
    var text = {"font-size": 11, "color": p.label, "text-valign": "bottom", "text-margin-y": 3,
                "text-background-color": p.labelBg, "text-background-opacity": 0.8, "text-background-padding": 2};
    // Each property a rule sets costs Cytoscape work on every element it applies to (a trigger check, a bounds
    // event), so the rules set nothing a default already gives (no label, haystack radius 0) and nothing the
    // fitted view cannot show: every label, curved edges and arrows only once zoomed in (see detail()).
    var every = !big && detailed;
    var node = {"width": "data(size)", "height": "data(size)", "background-color": p.type.fact,
                "border-width": 2, "border-color": p.tier.working, "overlay-padding": 6};
    // every label appears once zoomed in far enough to read it (11 px); below that only the chosen few
    if (every) Object.assign(node, text, {"label": "data(label)", "min-zoomed-font-size": 15});
    var edge = {"width": 1.2, "line-color": p.edge.related_to, "opacity": "data(op)"};  // haystack: the default
    if (every) Object.assign(edge, {"curve-style": "bezier", "arrow-scale": 0.8,
                                    "target-arrow-color": p.edge.related_to});
    var s = [
      {selector: "node", style: node},
      {selector: "node.lbl, node:selected, node.hit, node.hover, node.hood",
       style: Object.assign({"label": "data(label)", "min-zoomed-font-size": 0, "z-index": 5}, text)},
      {selector: "node.r-core", style: {"border-width": 4, "border-color": p.tier.core}},
      {selector: "node.r-working", style: {"border-width": 2, "border-color": p.tier.working}},
      {selector: "node.r-archival", style: {"border-width": 2, "border-color": p.tier.archival, "border-style": "dashed"}},
      {selector: "node.idn", style: {"outline-width": 3, "outline-color": p.identity, "outline-offset": 2}},
      {selector: "node.self", style: {"background-color": p.self, "font-size": 13, "font-weight": "bold", "z-index": 10,
                                      "border-width": 5, "border-color": p.tier.core}},
      {selector: "node.old", style: {"opacity": 0.4}},
      {selector: "edge", style: edge}
    ];
    TYPES.forEach(function (t) { s.push({selector: "node.t-" + t, style: {"background-color": p.type[t]}}); });
    s.push({selector: "node.self", style: {"background-color": p.self}});
    EDGES.forEach(function (e) {
      var st = {"line-color": p.edge[e]};
      if (every) st["target-arrow-color"] = p.edge[e];
      if (every && DIRECTED[e]) st["target-arrow-shape"] = "triangle";
      s.push({selector: "edge.e-" + e, style: st});
    });
    s.push(
      {selector: "edge.e-defines", style: {"width": 3.5, "opacity": 0.9}},
      {selector: "edge.e-supports", style: {"width": 1.8}},
      {selector: "edge.e-contradicts", style: {"width": 2, "line-style": "dashed"}},
      {selector: "edge.e-evolved_from", style: {"width": 1.8, "line-style": "dotted"}},
      {selector: "edge.e-derived_from", style: {"line-style": "dashed", "line-dash-pattern": [6, 2]}},
      {selector: ".dim", style: {"opacity": 0.1}},
      {selector: ".faded", style: {"opacity": 0.08, "text-opacity": 0}},
      {selector: "node.hover", style: {"z-index": 40, "font-weight": "bold"}},
      {selector: "edge.hover", style: {"width": 4, "opacity": 1, "z-index": 40}},
      // badges: small images on a graph that can afford them; above BIG a coloured double ring (cheaper to paint)
      {selector: "node.ctr", style: big ? {"border-color": p.badgeCtr, "border-style": "double", "border-width": 5}
                                        : badge(p.badgeCtr, "!")},
      {selector: "node.sup", style: big ? {"border-color": p.badgeSup, "border-style": "double", "border-width": 5}
                                        : badge(p.badgeSup, "↻")},
      {selector: "node.ctr.sup", style: big ? {"border-color": p.badgeCtr} : badge(p.badgeCtr, "!")},
      {selector: "node.hit", style: {"opacity": 1, "border-color": p.hit, "border-width": 5, "z-index": 20,
                                     "overlay-color": p.hit, "overlay-opacity": 0.18, "font-weight": "bold"}},
      {selector: "edge.hit-edge", style: {"opacity": 0.8}},
      {selector: "node:selected", style: {"overlay-color": p.hit, "overlay-opacity": 0.3, "z-index": 30}}
    );
    return s;
  }

  // ---- elements ----------------------------------------------------------------------------------------------

  /* Size grows with importance and with the number of connections. */
  function nodeSize(d, degree) {
    if (d.self) return 64;
    return Math.round(Math.max(18, Math.min(64, 16 + 18 * Math.sqrt(d.imp || 0) + 5 * Math.log2((degree || 0) + 1))));
  }

  function nodeClasses(d) {
    var c = ["t-" + d.type, "r-" + d.tier];
    if (d.self) c.push("self");
    if (d.idn) c.push("idn");
    if (d.old) c.push("old");
    if (d.ctr) c.push("ctr");
    if (d.sup) c.push("sup");
    return c.join(" ");
  }

  function nodeData(d, degree) {
    return {id: d.id, name: d.label, label: d.more ? d.label + "  +" + d.more : d.label, type: d.type,
            tier: d.tier, space: d.space, imp: d.imp, acc: d.acc, self: !!d.self, more: d.more || 0,
            old: !!d.old, ctr: !!d.ctr, sup: !!d.sup, size: nodeSize(d, degree), raw: d};
  }

  function nodeEl(d, position, degree) {
    var e = {group: "nodes", data: nodeData(d, degree), classes: nodeClasses(d)};
    if (position) e.position = position;
    return e;
  }

  function edgeId(e) { return e[0] + ">" + e[1] + ":" + e[2]; }

  function edgeEl(e) {
    return {group: "edges", data: {id: edgeId(e), source: e[0], target: e[1], type: e[2], w: e[3],
            reason: e[4] || "", op: Math.max(0.2, e[3] == null ? 0.5 : e[3])}, classes: "e-" + e[2]};
  }

  /* How many of the most important memories keep a readable label at every zoom. */
  function labelled(n) { return Math.min(40, Math.max(8, Math.round(n / 12))); }

  function weight(n) { return n.data("imp") + 0.12 * Math.log2(1 + n.degree(false)); }

  /* The same order as rememberOrder, from the JSON (sorting Cytoscape collections cost ~0.2 s at 5,000). */
  function orderFromData(nodes, degree) {
    var w = {}, me = {};
    nodes.forEach(function (d) {
      w[d.id] = (d.imp || 0) + 0.12 * Math.log2(1 + (degree[d.id] || 0));
      me[d.id] = d.self ? 1 : 0;
    });
    return nodes.map(function (d) { return d.id; }).sort(function (a, b) { return (me[b] - me[a]) || (w[b] - w[a]); });
  }

  function rememberOrder() {
    var w = {};
    cy.nodes().forEach(function (n) { w[n.id()] = weight(n); });
    var sorted = cy.nodes().sort(function (a, b) {
      return (b.data("self") - a.data("self")) || (w[b.id()] - w[a.id()]);
    });
    order = sorted.map(function (n) { return n.id(); });
    cursor = -1;
    cy.batch(function () {
      cy.nodes(".lbl").removeClass("lbl").removeStyle("font-size");
      sorted.slice(0, labelled(sorted.length)).addClass("lbl");
    });
    scaleLabels();
  }

  /* Labels of the chosen few (and of a hovered neighbourhood) keep 11 px on screen however far out the view is. */
  function scaleLabels() {
    if (!cy) return;
    var fs = Math.min(80, Math.max(11, 11 / cy.zoom()));
    cy.batch(function () { cy.nodes(".lbl, .hood, .hover, .hit").style("font-size", fs); });
  }
  var scaleQueued = false;
  function queueScale() {
    if (scaleQueued) return;
    scaleQueued = true;
    window.requestAnimationFrame(function () { scaleQueued = false; scaleLabels(); });
  }

  function countText(data) {
    var n = cy.nodes().length, m = cy.edges().length;
    var text = n + " memor" + (n === 1 ? "y" : "ies") + ", " + m + " connection" + (m === 1 ? "" : "s");
    if (data && data.truncated) text += " (the " + n + " most important of " + data.total + "; double-click to expand)";
    if (narrowed() && cy.nodes().filter(function (x) { return !x.data("self"); }).empty()) {
      text += ". No memory matches these filters; Reset shows them all.";
    }
    return text;
  }

  /* Whether the filters keep some memories out: a type, a space or a tag (the tier boxes only choose rings). */
  function narrowed() {
    if (!filtersForm) return false;
    var f = new FormData(filtersForm);
    return Boolean(f.get("type") || (f.get("space") && f.get("space") !== "*") || (f.get("tag") || "").trim());
  }

  // ---- layout and drawing ------------------------------------------------------------------------------------

  var CORE_MIN = 4;      // components with fewer memories are not given to fcose but set around it
  var DRAFT_ABOVE = 1000; // fcose quality "draft" (spectral only) for cores larger than this (ui/layout.py LAYOUT_ABOVE)

  /* Connected components from the element data (union-find; Cytoscape's own components() is slow at 5,000). */
  function components() {
    var nodes = cy.nodes(), index = {}, parent = new Array(nodes.length);
    nodes.forEach(function (n, i) { index[n.id()] = i; parent[i] = i; });
    function find(i) { while (parent[i] !== i) { parent[i] = parent[parent[i]]; i = parent[i]; } return i; }
    cy.edges().forEach(function (e) {
      var a = find(index[e.data("source")]), b = find(index[e.data("target")]);
      if (a !== b) parent[a] = b;
    });
    var groups = {};
    nodes.forEach(function (n, i) { var r = find(i); (groups[r] = groups[r] || []).push(n); });
    return Object.keys(groups).map(function (k) { return groups[k]; });
  }

  /* Small components on rings around the core, the most important on the innermost ring (nodes arrive sorted). */
  function placeAroundCore(small, bb, centreTaken) {
    var cx = (bb.x1 + bb.x2) / 2, cy0 = (bb.y1 + bb.y2) / 2, gap = 64;
    var r = bb.empty ? (centreTaken ? gap * 1.5 : 0) : Math.max(bb.w, bb.h) / 2 + 90;
    var slots = r === 0 ? 1 : Math.floor((2 * Math.PI * r) / gap), k = 0;
    small.forEach(function (group) {
      if (k >= slots) { r += gap; slots = Math.floor((2 * Math.PI * r) / gap); k = 0; }
      var a = (2 * Math.PI * k) / slots - Math.PI / 2;
      var x = cx + r * Math.cos(a), y = cy0 + r * Math.sin(a);
      k += 1;
      group.forEach(function (n, j) {
        var off = group.length === 1 ? 0 : 18, t = (2 * Math.PI * j) / group.length;
        n.position({x: x + off * Math.cos(t), y: y + off * Math.sin(t)});
      });
    });
  }

  function runLayout(then) {
    if (cy.nodes().length === 0) { then(); return; }
    var me = cy.nodes(".self");
    var selfId = me.nonempty() ? me.id() : null;
    var core = [], small = [];
    components().forEach(function (group) {
      var hasSelf = selfId && group.some(function (n) { return n.id() === selfId; });
      if (group.length >= CORE_MIN || (hasSelf && group.length > 1)) core.push.apply(core, group);
      else small.push(group);
    });
    small.sort(function (a, b) {
      return (b[0].data("self") - a[0].data("self")) || (b[0].data("imp") - a[0].data("imp"));
    });
    var coreEles = cy.collection(core);
    var finish = function () {
      var bb = coreEles.nonempty() ? coreEles.boundingBox() : {x1: 0, x2: 0, y1: 0, y2: 0, w: 0, h: 0, empty: true};
      var rest = small, selfAlone = selfId && small.length && small[0][0].id() === selfId;
      if (selfAlone) {
        // a self node without connections sits in the centre, or above the core when there is one
        small[0][0].position({x: (bb.x1 + bb.x2) / 2, y: bb.empty ? 0 : bb.y1 - 80});
        rest = small.slice(1);
      }
      cy.batch(function () { placeAroundCore(rest, bb, selfAlone); });
      then();
    };
    if (coreEles.empty()) { finish(); return; }
    layoutScripts().then(function () {
      if (!coreEles.cy().destroyed()) fcose(coreEles, selfId, finish);
    }, function (err) {
      el.dataset.state = "error";
      say("The layout could not be loaded (" + err.message + "). Reload the page to try again.");
    });
  }

  /* fcose and the two libraries under it (320 KB) load only when a layout runs: a later visit draws the cached
   * positions without them. The page includes them itself when the server had no positions (graph_page). */
  var layoutLoading = null;
  function layoutScripts() {
    if (window.cytoscapeFcose) return Promise.resolve();
    if (!layoutLoading) {
      layoutLoading = Promise.all((el.dataset.layoutScripts || "").split(" ").filter(Boolean).map(function (src) {
        return new Promise(function (resolve, reject) {
          var s = document.createElement("script");
          s.src = src;
          s.async = false;  // run in the order given: each needs the one before
          s.onload = resolve;
          s.onerror = function () { layoutLoading = null; reject(new Error("no " + src.split("/").pop())); };
          document.head.appendChild(s);
        });
      }));
    }
    return layoutLoading;
  }

  function fcose(coreEles, selfId, finish) {
    var core = coreEles.nodes();
    var o = {name: "fcose", quality: core.length > DRAFT_ABOVE ? "draft" : "default", randomize: true,
             animate: false, fit: false, nodeDimensionsIncludeLabels: false, packComponents: true,
             nodeRepulsion: 6500, idealEdgeLength: 70, edgeElasticity: 0.45, numIter: 2500, tile: true,
             samplingType: true, sampleSize: 25};
    if (selfId && coreEles.getElementById(selfId).nonempty()) {
      o.fixedNodeConstraint = [{nodeId: selfId, position: {x: 0, y: 0}}];
    }
    var layout = coreEles.union(coreEles.connectedEdges()).layout(o);
    layout.one("layoutstop", finish);
    layout.run();
  }

  /* Fit the nodes (not their labels: measuring thousands of labels is what made the first fit slow). */
  function fitAll() {
    cy.resize();
    if (cy.nodes().empty()) return;
    var bb = cy.nodes().boundingBox({includeLabels: false, includeOverlays: false});
    var pad = 30, w = cy.width(), h = cy.height();
    var zoom = Math.min(1.6, Math.max(cy.minZoom(), Math.min((w - 2 * pad) / Math.max(bb.w, 1),
                                                              (h - 2 * pad) / Math.max(bb.h, 1))));
    cy.viewport({zoom: zoom, pan: {x: (w - zoom * (bb.x1 + bb.x2)) / 2, y: (h - zoom * (bb.y1 + bb.y2)) / 2}});
  }

  /* The first frame: mark it, then (a big graph drawn from cached positions) add the edges held back, and call
   * the graph ready once they are drawn too; `rest` is the work that needed them (search hits, a focus). */
  function drawn(data, started, later, rest) {
    var mine = cy;
    var ready = function () {
      var now = performance.now();
      performance.mark("ormah:graph-ready");
      window.ormahGraphTimings.ready_ms = Math.round(now);
      el.dataset.nodeCount = String(cy.nodes().length);
      el.dataset.state = "ready";
      if (el.dataset.hits === "0" || !el.dataset.hits) say(countText(data));
      el.dispatchEvent(new CustomEvent("ormah:graph-ready", {bubbles: true}));
    };
    cy.one("render", function () {
      window.requestAnimationFrame(function () {
        performance.mark("ormah:graph-drawn");
        var now = performance.now();
        window.ormahGraphTimings = {start_ms: Math.round(started.t0), fetch_ms: Math.round(started.fetched - started.t0),
                                    init_ms: Math.round(started.built - started.fetched),
                                    layout_ms: Math.round(started.laidOut - started.built),
                                    fit_ms: Math.round(started.fitted - started.laidOut),
                                    render_ms: Math.round(now - started.fitted), total_ms: Math.round(now)};
        if (!later.length) { ready(); return; }
        window.setTimeout(function () {  // a task of its own, after the frame has been shown
          if (cy !== mine) return;
          cy.one("render", function () {
            window.requestAnimationFrame(function () {
              if (cy !== mine) return;
              rest();
              ready();
            });
          });
          cy.add(later.map(edgeEl));
          cy.forceRender();
        }, 0);
      });
    });
    fitAll();
    scaleLabels();
    started.fitted = performance.now();
    cy.forceRender();
  }

  function build(data, started) {
    var big = data.nodes.length > BIG;
    var degree = {}, pos = data.pos || {}, known = 0;
    data.edges.forEach(function (e) { degree[e[0]] = (degree[e[0]] || 0) + 1; degree[e[1]] = (degree[e[1]] || 0) + 1; });
    order = orderFromData(data.nodes, degree);
    cursor = -1;
    var top = {};
    order.slice(0, labelled(order.length)).forEach(function (id) { top[id] = 1; });
    var elements = data.nodes.map(function (d) {
      var at = pos[d.id];
      if (at) known += 1;
      var e = nodeEl(d, at ? {x: at[0], y: at[1]} : null, degree[d.id]);
      if (top[d.id]) e.classes += " lbl";
      return e;
    });
    // A big graph with every position cached draws its nodes first and its edges on the next frame: fitted, an
    // edge there is a hairline a fifth of a pixel wide, and creating, styling and drawing 2,000 of them is about
    // a third of Cytoscape's work before the first frame. The graph is "ready" once they are in.
    var n = data.nodes.length;
    var later = big && n && known === n ? data.edges : [];
    if (!later.length) elements = elements.concat(data.edges.map(edgeEl));
    if (cy) cy.destroy();
    detailed = false;
    // The elements go in once the instance is made (its preset layout then runs on nothing): given to the
    // constructor, that layout sets every position again (~10 % of the CPU of building and styling 5,000).
    cy = window.cytoscape({
      container: el, style: styles(palette(), big), layout: {name: "preset", fit: false},
      minZoom: 0.03, maxZoom: 4, boxSelectionEnabled: false, motionBlur: false,
      hideEdgesOnViewport: big, textureOnViewport: big, pixelRatio: big ? 1 : "auto"
    });
    cy.add(elements);
    cy.scratch("_big", big);
    window.ormahGraph = cy;
    bindGraphEvents();
    started.built = performance.now();
    var after = function (placed) {
      started.laidOut = performance.now();
      var rest = function () {
        savePositions(placed);
        var focus = el.dataset.focus;
        if (focus) {  // a memory no longer there opens its panel anyway: it says there is no such memory
          el.dataset.focus = "";
          select(focus, {open: true}).then(function (n) { if (!n) openPanel(focus); });
        }
        highlightSearch();
      };
      drawn(data, started, later, rest);
      if (!later.length) rest();
    };
    // Positions kept from earlier visits: only the memories without one are placed (next to a placed neighbour,
    // else around the rest); a first visit, or one where most memories are new, runs the full layout. Above
    // DRAFT_ABOVE memories in the core the server has already made that layout (fcose's spectral draft would do
    // no more) and sent it with the data: "server" (ormah_site/ui/layout.py).
    el.dataset.layout = data.layout === "server" ? "server" : n && known >= 0.6 * n ? "cached" : "computed";
    if (el.dataset.layout !== "computed") {
      after(placeNew(Object.keys(pos)));
    } else {
      runLayout(function () { after(cy.nodes()); });
    }
  }

  /* Put memories that have no position next to a positioned neighbour, or on rings around the graph. */
  function placeNew(knownIds) {
    var known = {};
    knownIds.forEach(function (id) { known[id] = 1; });
    var fresh = cy.nodes().filter(function (n) { return !known[n.id()]; });
    if (fresh.empty()) return fresh;
    var lonely = [];
    cy.batch(function () {
      fresh.forEach(function (n, i) {
        var anchor = n.neighborhood("node").filter(function (m) { return known[m.id()]; });
        if (anchor.nonempty()) {
          var p = anchor[0].position(), a = (2 * Math.PI * ((i * 0.618) % 1));
          n.position({x: p.x + 55 * Math.cos(a), y: p.y + 55 * Math.sin(a)});
          known[n.id()] = 1;
        } else {
          lonely.push([n]);
        }
      });
      var placed = cy.nodes().filter(function (n) { return known[n.id()]; });
      placeAroundCore(lonely, placed.nonempty() ? placed.boundingBox() : {x1: 0, x2: 0, y1: 0, y2: 0, w: 0, h: 0,
                                                                          empty: true}, placed.nonempty());
    });
    return fresh;
  }

  function csrfToken() {
    try { return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || ""; }
    catch (e) { return ""; }
  }

  /* A JSON request the server sent to the sign-in page (the session ended): go there, back to this view after. */
  function signedOut(r) {
    return r.redirected && new URL(r.url).pathname === "/login/";
  }
  function toSignIn() {
    window.location.assign("/login/?next=" + encodeURIComponent(window.location.pathname + window.location.search));
  }

  /* Keep where these memories are drawn for the next visit (server-side cache, ormah_site/ui/positions.py). */
  function savePositions(nodes) {
    if (!nodes || nodes.empty() || !el.dataset.positionsUrl) return;
    var pos = {};
    nodes.forEach(function (n) { var p = n.position(); pos[n.id()] = [Math.round(p.x), Math.round(p.y)]; });
    fetch(el.dataset.positionsUrl, {method: "POST", credentials: "same-origin",
                                    headers: {"Content-Type": "application/json", "X-CSRFToken": csrfToken()},
                                    body: JSON.stringify({pos: pos})})
      .then(function (r) { el.dataset.positionsSaved = r.ok && !signedOut(r) ? String(nodes.length) : "error"; })
      .catch(function () { el.dataset.positionsSaved = "error"; });
  }

  function load() {
    var seq = ++loadSeq;
    var started = {t0: performance.now()};
    el.dataset.state = "loading";
    say("Loading the graph…");
    var params = filtersForm ? new URLSearchParams(new FormData(filtersForm)).toString() : "";
    var target = el.dataset.dataUrl + (params ? "?" + params : "");
    var early = window.ormahGraphData;  // started by graph-data.js while this script was downloading
    window.ormahGraphData = null;
    var request = early && early.url === target ? early.data
      : fetch(target, {credentials: "same-origin", headers: {"Accept": "application/json"}})
          .then(function (r) {
            if (signedOut(r)) { toSignIn(); throw new Error("signed out"); }
            if (!r.ok) throw new Error("HTTP " + r.status);
            return r.json();
          });
    request
      .then(function (data) {
        if (seq !== loadSeq) return;
        started.fetched = performance.now();
        performance.mark("ormah:graph-data");
        build(data, started);
      })
      .catch(function (err) {
        if (err.message === "signed out") return;
        el.dataset.state = "error";
        say("The graph could not be loaded (" + err.message + "). Reload the page to try again.");
      });
  }

  // ---- neighbourhoods, refresh after edits -------------------------------------------------------------------

  function fetchHood(id) {
    return fetch(url(el.dataset.neighbourhoodUrl, id), {credentials: "same-origin",
                                                          headers: {"Accept": "application/json"}})
      .then(function (r) {
        if (signedOut(r)) { toSignIn(); return null; }
        return r.ok ? r.json() : null;
      });
  }

  function placeAround(centre, count, i) {
    var p = centre.position();
    var r = 70 + 6 * Math.sqrt(count) * 4;
    var a = (2 * Math.PI * i) / Math.max(count, 1);
    return {x: p.x + r * Math.cos(a), y: p.y + r * Math.sin(a)};
  }

  function freeSpot() {
    var bb = cy.elements().boundingBox();
    return cy.nodes().length ? {x: bb.x2 + 120, y: (bb.y1 + bb.y2) / 2} : {x: 0, y: 0};
  }

  /* Merge a neighbourhood into the graph: update the nodes we have, add the missing ones around the centre. */
  function merge(data, centreId, opts) {
    opts = opts || {};
    var added = cy.collection();
    cy.batch(function () {
      var centreData = data.nodes[0];
      var centre = cy.getElementById(centreId);
      if (centre.empty()) {
        var near = data.nodes.slice(1).map(function (d) { return cy.getElementById(d.id); })
          .filter(function (n) { return n.nonempty(); });
        var pos = near.length ? {x: near[0].position("x") + 60, y: near[0].position("y") + 60} : freeSpot();
        centre = cy.add(nodeEl(centreData, pos, 0));
        added = added.union(centre);
      }
      var fresh = data.nodes.slice(1).filter(function (d) { return cy.getElementById(d.id).empty(); });
      data.nodes.forEach(function (d) {
        var n = cy.getElementById(d.id);
        if (n.nonempty()) {
          if (opts.expanded && d.id === centreId) d.more = 0;
          n.data(nodeData(d, n.degree(false)));
          n.classes(nodeClasses(d) + (n.hasClass("lbl") ? " lbl" : "") + (n.hasClass("hit") ? " hit" : ""));
        }
      });
      fresh.forEach(function (d, i) {
        if (!opts.expanded && !opts.addNeighbours) return;
        added = added.union(cy.add(nodeEl(d, placeAround(centre, fresh.length, i), 0)));
      });
      if (opts.syncEdges) {
        var want = {};
        data.edges.forEach(function (e) { if (e[0] === centreId || e[1] === centreId) want[edgeId(e)] = 1; });
        centre.connectedEdges().forEach(function (e) { if (!want[e.id()]) e.remove(); });
      }
      data.edges.forEach(function (e) {
        if (cy.getElementById(edgeId(e)).nonempty()) return;
        if (cy.getElementById(e[0]).empty() || cy.getElementById(e[1]).empty()) return;
        cy.add(edgeEl(e));
      });
    });
    if (added.nonempty()) {
      added.union(cy.getElementById(centreId)).forEach(function (n) { n.data("size", nodeSize(n.data("raw") || {}, n.degree(false))); });
      rememberOrder();
      savePositions(added);
    }
    el.dataset.nodeCount = String(cy.nodes().length);
    return added;
  }

  function expand(id, opts) {
    opts = opts || {};
    return fetchHood(id).then(function (data) {
      if (!data || !data.nodes.length) return cy.collection();
      var added = merge(data, id, {expanded: true});
      if (!opts.quiet) {
        say("Expanded: " + added.length + " memor" + (added.length === 1 ? "y" : "ies") + " added. " + countText());
        var hood = cy.getElementById(id).closedNeighborhood();
        cy.animate({fit: {eles: hood, padding: 60}}, {duration: duration()});
      }
      return added;
    });
  }

  function refresh(id) {
    return fetchHood(id).then(function (data) {
      if (data && data.nodes.length && cy.getElementById(id).nonempty()) {
        merge(data, id, {syncEdges: true, addNeighbours: true});
        say("Updated. " + countText());
      }
    });
  }

  // ---- selection, panel, search ------------------------------------------------------------------------------

  function openPanel(id) {
    window.htmx.ajax("GET", url(el.dataset.nodeUrl, id), {target: "#panel", swap: "innerHTML"});
  }

  function centreOn(node) {
    var ext = cy.extent(), p = node.position();
    var inside = p.x > ext.x1 && p.x < ext.x2 && p.y > ext.y1 && p.y < ext.y2;
    if (!inside || cy.zoom() < 0.5) {
      cy.animate({center: {eles: node}, zoom: Math.max(cy.zoom(), 0.9)}, {duration: duration()});
    }
  }

  function select(id, opts) {
    var node = cy.getElementById(id);
    var done = function (n) {
      cy.$(":selected").unselect();
      n.select();
      centreOn(n);
      cursor = order.indexOf(n.id());
      if (opts && opts.open) openPanel(n.id());
      return n;
    };
    if (node.nonempty()) return Promise.resolve(done(node));
    return expand(id, {quiet: true}).then(function () {
      var n = cy.getElementById(id);
      return n.nonempty() ? done(n) : null;
    });
  }

  function clearHighlight() {
    var was = cy.nodes(".hit");
    cy.batch(function () {  // only the marked elements: a class removed from all 7,000 restyled each (260 ms at 5,000)
      cy.elements(".hit, .dim, .hit-edge").removeClass("hit dim hit-edge");
      was.not(".lbl").removeStyle("font-size");
    });
    el.dataset.hits = "0";
  }

  function highlightSearch() {
    if (!cy) return;
    var box = document.getElementById("search-hits");
    var ids = box && box.dataset.hitIds ? box.dataset.hitIds.split(" ").filter(Boolean) : [];
    clearHighlight();
    if (!ids.length) {
      var asked = box && box.dataset.query;
      say(asked ? "Nothing found for “" + asked + "” in this view. " + countText() : countText());
      return;
    }
    var missing = ids.filter(function (id) { return cy.getElementById(id).empty(); }).slice(0, 10);
    Promise.all(missing.map(function (id) { return expand(id, {quiet: true}); })).then(function () {
      var hits = cy.collection();
      ids.forEach(function (id) { hits = hits.union(cy.getElementById(id)); });
      cy.batch(function () {
        cy.elements().addClass("dim");
        hits.removeClass("dim").addClass("hit");
        hits.edgesWith(hits).removeClass("dim").addClass("hit-edge");
      });
      el.dataset.hits = String(hits.length);
      scaleLabels();
      if (hits.nonempty()) {
        if (hits.length === 1) cy.animate({center: {eles: hits}, zoom: Math.max(cy.zoom(), 1.2)}, {duration: duration()});
        else cy.animate({fit: {eles: hits, padding: 70}}, {duration: duration()});
      }
      say(hits.length + " search hit" + (hits.length === 1 ? "" : "s") + " highlighted. Escape clears.");
    });
  }

  var pickTarget = null;
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("[data-pick-target]");
    if (!b) return;
    pickTarget = document.getElementById(b.getAttribute("data-pick-target"));
    say("Pick mode: click the memory to connect to (Escape cancels).");
  });

  function bindGraphEvents() {
    cy.on("tap", "node", function (ev) {
      var id = ev.target.id();
      if (pickTarget && document.body.contains(pickTarget)) {
        pickTarget.value = id;
        pickTarget.focus();
        pickTarget = null;
        say("Picked: " + ev.target.data("name"));
        return;
      }
      cursor = order.indexOf(id);
      openPanel(id);
    });
    cy.on("dbltap", "node", function (ev) { expand(ev.target.id()); });
    cy.on("mouseover", "node", function (ev) { hoverNode(ev.target); });
    cy.on("mouseout", "node", function () { hoverOff(); });
    cy.on("mouseover", "edge", function (ev) { hoverEdge(ev.target); });
    cy.on("mouseout", "edge", function () { hoverOff(); });
    cy.on("zoom", function () { queueScale(); detail(); if (hovered) placeTip(hovered); });
    cy.on("pan", function () { if (hovered) placeTip(hovered); });
    cy.on("dragfree", "node", function (ev) { savePositions(ev.target); });
  }

  // ---- hover: the neighbourhood stands out, a tip names the memory or the connection -------------------------

  var tip = document.createElement("div");
  tip.id = "graph-tip";
  tip.className = "graph-tip";
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  el.parentNode.appendChild(tip);
  var hovered = null;
  el.addEventListener("mouseleave", function () { hoverOff(); });
  var BADGE_WORDS = {ctr: "contradicted by another memory", sup: "superseded by a newer memory",
                     old: "outdated"};

  function line(cls, text) {
    var p = document.createElement("p");
    p.className = cls;
    p.textContent = text;
    return p;
  }

  function showTip(parts) {
    tip.replaceChildren.apply(tip, parts);
    tip.hidden = false;
  }

  function placeTip(ele) {
    var box = el.getBoundingClientRect(), host = el.parentNode.getBoundingClientRect();
    var p = ele.isNode() ? ele.renderedPosition() : ele.renderedMidpoint();
    var x = p.x + (box.left - host.left) + 14, y = p.y + (box.top - host.top) + 14;
    tip.style.left = Math.max(4, Math.min(x, host.width - tip.offsetWidth - 4)) + "px";
    tip.style.top = Math.max(4, Math.min(y, host.height - tip.offsetHeight - 4)) + "px";
  }

  function hoverNode(n) {
    hoverOff();
    hovered = n;
    var hood = n.closedNeighborhood();
    cy.batch(function () {
      cy.elements().addClass("faded");
      hood.removeClass("faded");
      hood.nodes().addClass("hood");
      n.addClass("hover");
    });
    scaleLabels();
    var parts = [line("tip-title", n.data("name")),
                 line("tip-meta", n.data("type") + " · " + n.data("tier") + (n.data("space") ? " · " + n.data("space") : "") +
                      " · " + n.degree(false) + " connection" + (n.degree(false) === 1 ? "" : "s"))];
    ["ctr", "sup", "old"].forEach(function (k) { if (n.data(k)) parts.push(line("tip-badge tip-" + k, BADGE_WORDS[k])); });
    showTip(parts);
    placeTip(n);
    el.dataset.hover = n.id();
  }

  function hoverEdge(e) {
    hoverOff();
    hovered = e;
    cy.batch(function () {
      cy.elements().addClass("faded");
      e.union(e.connectedNodes()).removeClass("faded");
      e.connectedNodes().addClass("hood");
      e.addClass("hover");
    });
    scaleLabels();
    var parts = [line("tip-title", e.data("type").replace(/_/g, " ") + (e.data("w") != null ? " · weight " + e.data("w") : "")),
                 line("tip-meta", e.source().data("name") + " → " + e.target().data("name"))];
    if (e.data("reason")) parts.push(line("tip-reason", e.data("reason")));
    showTip(parts);
    placeTip(e);
    el.dataset.hover = e.id();
  }

  function hoverOff() {
    if (!hovered) return;
    var was = cy.nodes(".hood");
    cy.batch(function () {
      cy.elements(".faded").removeClass("faded");
      cy.elements(".hover").removeClass("hover");
      was.removeClass("hood");
      was.not(".lbl, .hit").removeStyle("font-size");
    });
    hovered = null;
    tip.hidden = true;
    el.dataset.hover = "";
  }

  // ---- page events -------------------------------------------------------------------------------------------

  document.body.addEventListener("htmx:afterSwap", function (ev) {
    var target = ev.detail.target;
    if (!cy || !target) return;
    if (target.id === "search-results") highlightSearch();
    if (target.id === "panel") {
      var article = target.querySelector("[data-node-id]");
      if (article) select(article.getAttribute("data-node-id"));
    }
  });

  document.body.addEventListener("ormah:changed", function (ev) {
    if (!cy) return;
    (ev.detail.ids || []).forEach(function (id) { refresh(id); });
  });

  document.body.addEventListener("ormah:removed", function (ev) {
    if (!cy) return;
    var ids = ev.detail.ids || [];
    ids.forEach(function (id) { cy.getElementById(id).remove(); });
    var shown = document.querySelector("#panel article.node[data-node-id]");
    if (shown && ids.indexOf(shown.getAttribute("data-node-id")) >= 0) {
      shown.setAttribute("aria-disabled", "true");
      shown.classList.add("gone");
      var note = document.createElement("p");
      note.className = "badge warn";
      note.setAttribute("role", "status");
      note.textContent = "This memory is no longer in the graph (merged or forgotten).";
      shown.insertBefore(note, shown.firstChild);
    }
    rememberOrder();
    el.dataset.nodeCount = String(cy.nodes().length);
    say("Removed. " + countText());
  });

  // ---- one state: the filters and the search live in the URL; both the graph and the search follow it ----------

  function syncUrl() {
    var params = filtersForm ? new URLSearchParams(new FormData(filtersForm)) : new URLSearchParams();
    var q = document.getElementById("q");
    if (q && q.value.trim()) params.set("q", q.value.trim());
    Array.from(params.keys()).forEach(function (k) { if (!params.get(k)) params.delete(k); });
    var text = params.toString();
    window.history.replaceState(null, "", text ? "?" + text : window.location.pathname);
  }

  function clearSearch() {
    var q = document.getElementById("q"), results = document.getElementById("search-results");
    if (q) q.value = "";
    if (results) results.replaceChildren();
    syncUrl();
  }

  document.body.addEventListener("htmx:afterSwap", function (ev) {
    if (ev.detail.target && ev.detail.target.id === "search-results") syncUrl();
  });

  if (filtersForm) {
    var reload = function () {
      syncUrl();
      var box = document.getElementById("search-hits");
      if (box) box.dataset.hitIds = "";  // the old hits belong to the old filters
      load();
      var q = document.getElementById("q");
      if (q && q.value.trim() && window.htmx) window.htmx.trigger(q.form, "submit");
    };
    filtersForm.addEventListener("change", reload);
    filtersForm.addEventListener("submit", function (ev) { ev.preventDefault(); reload(); });
  }

  function zoomBy(factor) {
    cy.zoom({level: cy.zoom() * factor, renderedPosition: {x: el.clientWidth / 2, y: el.clientHeight / 2}});
  }

  var buttons = {
    "g-fit": function () { cy.animate({fit: {eles: cy.elements(), padding: 30}}, {duration: duration()}); },
    "g-zoom-in": function () { zoomBy(1.25); },
    "g-zoom-out": function () { zoomBy(0.8); },
    "g-relayout": function () { runLayout(function () { fitAll(); savePositions(cy.nodes()); say(countText()); }); }
  };
  Object.keys(buttons).forEach(function (id) {
    var b = document.getElementById(id);
    if (b) b.addEventListener("click", function () { if (cy) buttons[id](); });
  });

  function step(delta) {
    if (!order.length) return;
    cursor = (cursor + delta + order.length) % order.length;
    var n = cy.getElementById(order[cursor]);
    cy.$(":selected").unselect();
    n.select();
    centreOn(n);
    say("Selected " + (cursor + 1) + " of " + order.length + ": " + n.data("name") + " (" + n.data("type") + ", " +
        n.data("tier") + "). Enter opens it.");
  }

  el.addEventListener("keydown", function (ev) {
    if (!cy || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    var handled = true;
    switch (ev.key) {
      case "ArrowLeft": cy.panBy({x: 60, y: 0}); break;
      case "ArrowRight": cy.panBy({x: -60, y: 0}); break;
      case "ArrowUp": cy.panBy({x: 0, y: 60}); break;
      case "ArrowDown": cy.panBy({x: 0, y: -60}); break;
      case "+": case "=": zoomBy(1.25); break;
      case "-": case "_": zoomBy(0.8); break;
      case "0": buttons["g-fit"](); break;
      case "n": case "N": step(1); break;
      case "p": case "P": step(-1); break;
      case "Enter": var s = cy.$("node:selected"); if (s.nonempty()) openPanel(s[0].id()); break;
      case "x": case "X": var x = cy.$("node:selected"); if (x.nonempty()) expand(x[0].id()); break;
      case "Escape": clearHighlight(); clearSearch(); cy.$(":selected").unselect(); pickTarget = null; hoverOff();
        say(countText()); break;
      default: handled = false;
    }
    if (handled) ev.preventDefault();
  });

  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape" && pickTarget) { pickTarget = null; say(countText()); }
  });

  darkScheme.addEventListener("change", function () { if (cy) cy.style(styles(palette(), !!cy.scratch("_big"))); });

  /* Zoomed in past the fitted view of a graph below BIG: restyle once with every label (drawn from the zoom where
   * 11 px passes min-zoomed-font-size), curved edges and arrows. Fitted, an arrow would be a pixel or two. */
  function detail() {
    if (detailed || cy.scratch("_big") || cy.zoom() < DETAIL_ZOOM) return;
    detailed = true;
    cy.style(styles(palette(), false));
  }

  window.ormahGraphReload = load;
  load();
  document.addEventListener("DOMContentLoaded", function () {  // after htmx has processed the page
    var q = document.getElementById("q");
    if (q && q.value && window.htmx) window.htmx.trigger(q.form, "submit");  // ?q= in the URL: search at once
  });
})();
