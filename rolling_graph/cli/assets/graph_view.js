/* Rolling Graph view: draws what RGData says is shown of the embedded graph as SVG, laid
 * out by RGLayout. No network, no libraries. Every string from the graph (labels, ids,
 * kinds, verbs, facts) is untrusted: it is only ever set with textContent or as an
 * attribute value, never parsed as markup, and maps keyed by it have no prototype.
 *
 * What is shown: the default view (the focus cluster and its strongest neighbours, or the
 * whole graph when it is small) plus what the reader asks for: "Show all", a node's
 * neighbours (double-click it, its + badge, or the button in its details), search matches,
 * a deep link (#node=<id>). The kind and domain filters hide what they exclude from all of
 * these. Labels never overlap: RGLayout places them, shortens or drops those without room
 * (the node keeps its tooltip). Edge verbs: the selected node's edges carry theirs where
 * there is room; hovering a node or an edge draws its verbs on top. */
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var REVEAL = 30;            /* at most this many search matches are brought into view */
  var FULL = 42, SHORT = 18;  /* label lengths: full text up to FULL, abbreviated to SHORT */
  var MIN_GAP_PX = 2;         /* between two labels on screen (text boxes snap to whole pixels) */
  var LABELS = 90;            /* labels the layout makes room for; the rest only where space is left */
  var status = document.getElementById('rg-status');
  var svg = document.getElementById('rg-graph');
  var data = JSON.parse(document.getElementById('rg-data').textContent);
  function dict() { return Object.create(null); }

  var graph = RGData.index(data);
  var nodes = graph.nodes;    /* focus first, then heaviest: the priority order */
  var byId = graph.byId, adj = graph.adj, edges = graph.edges, other = RGData.other;

  var state = {
    all: false, expanded: dict(), pinned: dict(), found: [],
    hiddenKinds: dict(), hiddenDomains: dict(), selected: null, centre: false
  };
  var groups = dict(), shown = dict(), laid = dict(), sizes = dict();
  var view = [0, 0, 1, 1], placed = null, current = [];
  var layers = {};

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }
  function radius(n) { return 5 + 17 * n.weight; }
  function passes(n) { return RGData.passes(n, state); }

  function fullText(n) { return n.label.length > FULL ? n.label.slice(0, FULL - 1) + '…' : n.label; }
  function shortText(n) {
    if (n.label.length <= SHORT) { return null; }
    var slash = n.label.lastIndexOf('/');
    if (slash > 0 && n.label.length - slash < SHORT) { return '…' + n.label.slice(slash); }
    return n.label.slice(0, SHORT - 1) + '…';
  }

  /* Text boxes, measured in the page (one layout pass for a batch), cached by class + text. */
  function measure(texts, cls) {
    var todo = texts.filter(function (t, i) { return t !== null && !sizes[cls + '\u0000' + t] && texts.indexOf(t) === i; });
    if (!todo.length) { return; }
    var g = el('g', { visibility: 'hidden' }, svg);
    var made = todo.map(function (t) { var x = el('text', { class: cls }, g); x.textContent = t; return x; });
    made.forEach(function (x, i) {
      var b = x.getBBox();
      sizes[cls + '\u0000' + todo[i]] = { w: b.width, h: b.height, bx: b.x, by: b.y };
    });
    svg.removeChild(g);
  }
  function size(text, cls) { return text === null ? null : sizes[cls + '\u0000' + text]; }

  /* What is shown: see RGData. */
  var defaults = RGData.defaults(graph);
  function wanted() { return RGData.wanted(graph, defaults, state); }
  function hiddenNeighbours(n) { return RGData.hiddenNeighbours(graph, n, shown, state); }
  function priority(a, b) { return RGData.priority(a, b, state); }

  /* Lay out what is shown (only when something new appears), place labels, draw. */
  function update() {
    var started = performance.now();
    var list = wanted();
    var grown = list.filter(function (n) { return !laid[n.id]; }).length;
    shown = dict();
    list.forEach(function (n) { shown[n.id] = true; });
    nodes.forEach(function (n) {
      if (shown[n.id]) { groups[n.id].removeAttribute('display'); } else { groups[n.id].setAttribute('display', 'none'); }
    });
    measure(list.map(fullText).concat(list.map(shortText)), 'label');
    if (grown) {
      if (grown > list.length / 2) {  /* mostly new: a fresh layout reads better than a grown one */
        nodes.forEach(function (n) { delete n.x; delete n.y; });
      }
      var index = dict();
      list.forEach(function (n, i) { index[n.id] = i; });
      budget(list);
      var items = list.map(function (n) {
        var s = n.roomy ? size(fullText(n), 'label') : { w: 0, h: 0 };
        return { id: n.id, domain: n.domain, r: radius(n), w: s.w, h: s.h, x: n.x, y: n.y };
      });
      var links = [];
      edges.forEach(function (e) {
        if (shown[e.source] && shown[e.target] && e.source !== e.target) {
          links.push({ a: index[e.source], b: index[e.target], s: e.strength });
        }
      });
      RGLayout.positions(items, links, grown / list.length, aspect());
      list.forEach(function (n, i) { n.x = items[i].x; n.y = items[i].y; });
      laid = dict();
      list.forEach(function (n) { laid[n.id] = true; });
    }
    current = list;
    placeLabels(list);
    drawEdges();
    nodes.forEach(function (n) {
      var g = groups[n.id];
      g.setAttribute('transform', 'translate(' + n.x + ',' + n.y + ')');
      var more = shown[n.id] ? hiddenNeighbours(n) : 0;
      g.more.setAttribute('display', more ? 'inline' : 'none');
      g.moreTitle.textContent = more + ' more neighbour' + (more === 1 ? '' : 's') + ': double-click to show';
      g.classList.toggle('match', state.found.indexOf(n.id) >= 0);
    });
    selectedVerbs();
    fit(state.centre);
    state.centre = false;
    report(performance.now() - started);
  }

  /* Room in the layout for the LABELS most important labels; the others get their short
   * text only where space is left over. */
  function budget(list) {
    list.slice().sort(priority).forEach(function (n, i) { n.roomy = i < LABELS; });
  }
  function texts(n) {
    var short = shortText(n);
    if (!n.roomy) { return [short || fullText(n)]; }
    return short ? [fullText(n), short] : [fullText(n)];
  }

  function placeLabels(list) {
    var items = list.map(function (n) {
      return { x: n.x, y: n.y, r: radius(n), options: texts(n).map(function (t) { return size(t, 'label'); }) };
    });
    var order = list.map(function (_, i) { return i; }).sort(function (i, j) { return priority(list[i], list[j]); });
    placed = RGLayout.placeLabels(items, order, MIN_GAP_PX / scaleOf(list));
    nodes.forEach(function (n) { groups[n.id].label.setAttribute('display', 'none'); });
    list.forEach(function (n, i) {
      var p = placed.placed[i], text = groups[n.id].label;
      n.labelled = p.option < 0 ? 'none' : texts(n)[p.option] === fullText(n) ? 'full' : 'short';
      if (p.option < 0) { return; }
      var t = texts(n)[p.option], s = size(t, 'label');
      text.textContent = t;
      text.setAttribute('x', (p.x - n.x - s.bx).toFixed(2));
      text.setAttribute('y', (p.y - n.y - s.by).toFixed(2));
      text.removeAttribute('display');
    });
  }

  function drawEdges() {
    clear(layers.edges);
    edges.forEach(function (e) {
      if (!shown[e.source] || !shown[e.target] || e.source === e.target) { return; }
      var a = byId[e.source], b = byId[e.target];
      var vx = b.x - a.x, vy = b.y - a.y, d = Math.sqrt(vx * vx + vy * vy) || 1;
      var ra = radius(a), rb = radius(b) + 3;
      var ends = { x1: a.x + (vx / d) * ra, y1: a.y + (vy / d) * ra, x2: b.x - (vx / d) * rb, y2: b.y - (vy / d) * rb };
      var sup = e.verb === 'supersedes';
      var g = el('g', { class: 'link' }, layers.edges);
      g.setAttribute('data-source', e.source);
      g.setAttribute('data-target', e.target);
      var line = el('line', ends, g);
      line.setAttribute('class', 'edge' + (sup ? ' supersedes' : '') + (a.domain !== b.domain ? ' cross' : ''));
      line.setAttribute('stroke-width', String(sup ? 2 : 0.6 + 2 * e.strength));
      line.setAttribute('marker-end', 'url(#' + (sup ? 'rg-arrow-sup' : 'rg-arrow') + ')');
      line.setAttribute('data-verb', e.verb);
      var hit = el('line', ends, g);
      hit.setAttribute('class', 'edge-hit');
      el('title', {}, hit).textContent = a.label + ' —' + e.verb + '→ ' + b.label;
      hit.addEventListener('mouseenter', function () { verbs([e], layers.hover, true); });
      hit.addEventListener('mouseleave', function () { clear(layers.hover); });
    });
  }

  /* Verb labels along edges, in free space (clear of node labels, circles and each other);
   * when forced (a hover), a verb with no free spot still goes at its edge's middle, on top. */
  function verbs(list, layer, force) {
    clear(layer);
    measure(list.map(function (e) { return e.verb; }), 'verb-text');
    var mine = new RGLayout.Boxes();
    list.forEach(function (e) {
      var a = byId[e.source], b = byId[e.target], s = size(e.verb, 'verb-text');
      if (!shown[a.id] || !shown[b.id] || a === b) { return; }
      var w = s.w + 6, h = s.h + 2;
      var box = RGLayout.spotOnEdge(a, b, w, h, function (c) {
        return placed.boxes.free(c, RGLayout.PAD) && mine.free(c, 1) && current.every(function (n) {
          return !RGLayout.hitsCircle(c, { x: n.x, y: n.y, r: radius(n) - 1 });
        });
      }, force);
      if (!box) { return; }
      mine.add(box);
      var g = el('g', { class: 'verb' + (e.verb === 'supersedes' ? ' supersedes' : '') }, layer);
      g.setAttribute('data-edge', e.source + ' ' + e.verb + ' ' + e.target);
      el('rect', { x: box.x.toFixed(2), y: box.y.toFixed(2), width: w.toFixed(2), height: h.toFixed(2), rx: 3 }, g);
      var text = el('text', { class: 'verb-text', x: (box.x + 3 - s.bx).toFixed(2), y: (box.y + 1 - s.by).toFixed(2) }, g);
      text.textContent = e.verb;
    });
  }
  function selectedVerbs() {
    var id = state.selected;
    verbs(id && shown[id] ? adj[id] : [], layers.selected, false);
  }

  /* About how many screen pixels a drawing unit will be once fitted (before labels are placed). */
  function scaleOf(list) {
    var rect = svg.getBoundingClientRect(), minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    list.forEach(function (n) {
      var r = radius(n), w = n.roomy ? size(fullText(n), 'label').w : 0;
      minX = Math.min(minX, n.x - r); maxX = Math.max(maxX, n.x + r + w);
      minY = Math.min(minY, n.y - r); maxY = Math.max(maxY, n.y + r);
    });
    if (!list.length || !rect.width) { return 1; }
    return Math.min(1.25, rect.width / (maxX - minX + 48), rect.height / (maxY - minY + 48));
  }

  function aspect() {
    var rect = svg.getBoundingClientRect();
    return rect.width > 0 && rect.height > 0 ? rect.width / rect.height : 1.4;
  }

  /* The smallest box holding what is shown (circles and labels), shaped like the drawing
   * area, never zoomed in past 1.25x; centred on the best visible search match if asked. */
  function fit(centre) {
    var rect = svg.getBoundingClientRect();
    var pw = rect.width || 800, ph = rect.height || 500;
    var minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    current.forEach(function (n, i) {
      var r = radius(n) + 4, p = placed.placed[i];
      minX = Math.min(minX, n.x - r); maxX = Math.max(maxX, n.x + r);
      minY = Math.min(minY, n.y - r); maxY = Math.max(maxY, n.y + r);
      if (p.option >= 0) {
        minX = Math.min(minX, p.x); maxX = Math.max(maxX, p.x + p.w);
        minY = Math.min(minY, p.y); maxY = Math.max(maxY, p.y + p.h);
      }
    });
    if (!current.length) { minX = minY = 0; maxX = pw; maxY = ph; }
    var pad = 24;
    var w = Math.max(pw / 1.25, maxX - minX + 2 * pad), h = Math.max(ph / 1.25, maxY - minY + 2 * pad);
    if (w / h < pw / ph) { w = h * pw / ph; } else { h = w * ph / pw; }
    var cx = (minX + maxX) / 2, cy = (minY + maxY) / 2;
    var target = centre ? state.found.filter(function (id) { return shown[id]; })[0] : null;
    if (target) { cx = byId[target].x; cy = byId[target].y; }
    view = [cx - w / 2, cy - h / 2, w, h];
    svg.setAttribute('viewBox', view.map(function (v) { return v.toFixed(2); }).join(' '));
  }

  function report(ms) {
    var count = { full: 0, short: 0, none: 0 };
    current.forEach(function (n) { count[n.labelled] += 1; });
    svg.setAttribute('data-visible', String(current.length));
    svg.setAttribute('data-labelled', String(count.full + count.short));
    svg.setAttribute('data-shortened', String(count.short));
    svg.setAttribute('data-unlabelled', String(count.none));
    svg.setAttribute('data-layout-ms', ms.toFixed(1));
    var text = 'showing ' + current.length + ' of ' + nodes.length + ' nodes';
    if (count.none) { text += ' · ' + count.none + ' unlabelled (hover for the name)'; }
    document.getElementById('rg-count').textContent = text;
    document.getElementById('rg-all').disabled = state.all || current.length === nodes.filter(passes).length;
  }

  function select(id, reveal) {
    if (!byId[id]) { return; }
    state.selected = id;
    if (reveal && !shown[id] && passes(byId[id])) { state.pinned[id] = true; update(); }
    nodes.forEach(function (n) { groups[n.id].classList.toggle('selected', n.id === id); });
    selectedVerbs();
    RGDetails.show(byId[id], detailsApi);
  }
  function expand(id) {
    state.expanded[id] = true;
    update();
    if (state.selected) { RGDetails.show(byId[state.selected], detailsApi); }
  }
  function hover(id) {
    Array.prototype.forEach.call(layers.edges.childNodes, function (g) {
      g.classList.toggle('hot', id !== null && (g.getAttribute('data-source') === id || g.getAttribute('data-target') === id));
    });
    if (id === null) { clear(layers.hover); } else { verbs(adj[id], layers.hover, true); }
  }
  var detailsApi = {
    byId: byId, adj: adj, other: other, select: select, expand: expand,
    isShown: function (id) { return !!shown[id]; }, passes: passes, hiddenNeighbours: hiddenNeighbours
  };

  function makeNode(n) {
    var cls = 'node' + (n.focus ? ' focus' : '') + (n.superseded_by.length ? ' superseded' : '');
    var g = el('g', { class: cls, 'data-id': n.id, 'data-domain': n.domain, 'data-kind': n.kind, display: 'none' }, layers.nodes);
    var r = radius(n);
    el('circle', { r: r.toFixed(1), fill: data.colors[n.domain] || data.colors.other }, g);
    el('title', {}, g).textContent = n.label + ' (' + n.kind + ', ' + n.domain + ', ' + n.weight.toFixed(2) + ')';
    g.more = el('g', { class: 'more', transform: 'translate(' + (-r * 0.72 - 2).toFixed(1) + ',' + (-r * 0.72 - 2).toFixed(1) + ')' }, g);
    el('circle', { r: 5 }, g.more);
    el('path', { d: 'M-3,0 H3 M0,-3 V3' }, g.more);
    g.moreTitle = el('title', {}, g.more);
    g.more.addEventListener('click', function (ev) { ev.stopPropagation(); expand(n.id); });
    g.label = el('text', { class: 'label' }, g);
    g.addEventListener('click', function (ev) { ev.stopPropagation(); select(n.id, false); });
    g.addEventListener('dblclick', function (ev) { ev.stopPropagation(); expand(n.id); });
    g.addEventListener('mouseenter', function () { hover(n.id); });
    g.addEventListener('mouseleave', function () { hover(null); });
    groups[n.id] = g;
  }

  function build() {
    var defs = el('defs', {}, svg);
    [['rg-arrow', '#94a3b8'], ['rg-arrow-sup', '#dc2626']].forEach(function (m) {
      var marker = el('marker', { id: m[0], viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
      el('path', { d: 'M0,0 L10,5 L0,10 z', fill: m[1] }, marker);
    });
    layers.edges = el('g', { class: 'edges' }, svg);
    layers.selected = el('g', { class: 'verbs' }, svg);
    layers.nodes = el('g', { class: 'nodes' }, svg);
    layers.hover = el('g', { class: 'verbs hover' }, svg);
    nodes.forEach(makeNode);
    RGControls.build(data, nodes, {
      search: search,
      showAll: function () { state.all = true; update(); },
      reset: function () {
        state.all = false; state.expanded = dict(); state.pinned = dict();
        RGControls.clearSearch();
        search('');
      },
      fit: function () { fit(false); },
      filter: function (kinds, domains) { state.hiddenKinds = kinds; state.hiddenDomains = domains; update(); },
      pan: function (dx, dy, scale, fx, fy) { zoomPan(dx, dy, scale, fx, fy); }
    });
  }

  function search(query) {
    var hits = RGControls.find(nodes, query);
    state.found = hits.slice(0, REVEAL).map(function (n) { return n.id; });
    state.centre = hits.length > 0;
    update();
    var hidden = hits.filter(function (n) { return !passes(n); }).length;
    RGControls.matches(query.trim() ? hits.length : -1, Math.min(hits.length, REVEAL), hidden);
    svg.setAttribute('data-query', query.trim());
    var first = state.found.filter(function (id) { return shown[id]; })[0];
    if (first) { select(first, false); }
  }

  function zoomPan(dx, dy, scale, fx, fy) {
    var rect = svg.getBoundingClientRect();
    if (scale !== 1) {
      var w = view[2] * scale, h = view[3] * scale;
      view[0] += (view[2] - w) * fx; view[1] += (view[3] - h) * fy; view[2] = w; view[3] = h;
    } else {
      view[0] -= dx * view[2] / rect.width;
      view[1] -= dy * view[3] / rect.height;
    }
    svg.setAttribute('viewBox', view.map(function (v) { return v.toFixed(2); }).join(' '));
  }

  try {
    build();
    update();
    var focus = nodes.filter(function (n) { return n.focus; });
    if (focus.length) { select(focus[0].id, false); }
    /* Deep link: page.html#node=<id> opens that node (and brings it into view). */
    var deepLink = function () {
      var m = /(?:^#|&)node=([^&]+)/.exec(window.location.hash);
      if (m) { select(decodeURIComponent(m[1]), true); }
    };
    deepLink();
    window.addEventListener('hashchange', deepLink);
    window.addEventListener('resize', function () { fit(false); });
    status.setAttribute('data-nodes', String(nodes.length));
    status.setAttribute('data-edges', String(edges.length));
    status.setAttribute('data-ready', '1');
  } catch (err) {
    window.__rgFail(err && err.stack ? err.stack : err);
  }
}());
