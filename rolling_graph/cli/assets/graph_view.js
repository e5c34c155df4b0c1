/* Rolling Graph view: draws the embedded graph as SVG. No network, no libraries.
 * Every string from the graph is untrusted: it is only ever set with textContent
 * or as an attribute value, never parsed as markup. */
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var status = document.getElementById('rg-status');
  var data = JSON.parse(document.getElementById('rg-data').textContent);
  var byId = {};
  data.nodes.forEach(function (n) { byId[n.id] = n; });
  var edges = data.edges.filter(function (e) { return byId[e.source] && byId[e.target]; });

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function html(name, text, parent, cls) {
    var node = document.createElement(name);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function radius(n) { return 5 + 17 * n.weight; }

  /* Force relaxation of the precomputed layout: repulsion between nodes, springs along
   * edges, gravity toward the node's starting (domain) position. Deterministic. */
  function relax() {
    var nodes = data.nodes;
    var count = nodes.length;
    if (count < 2) { return; }
    var anchors = nodes.map(function (n) { return [n.x, n.y]; });
    var steps = count > 250 ? 40 : 120;
    var k = Math.max(30, Math.min(90, Math.sqrt((data.width * data.height) / count) * 0.5));
    for (var step = 0; step < steps; step++) {
      var temp = 12 * (1 - step / steps) + 0.5;
      var dx = new Float64Array(count);
      var dy = new Float64Array(count);
      for (var i = 0; i < count; i++) {
        for (var j = i + 1; j < count; j++) {
          var vx = nodes[i].x - nodes[j].x;
          var vy = nodes[i].y - nodes[j].y;
          var d2 = vx * vx + vy * vy + 0.01;
          if (d2 > 9 * k * k) { continue; }
          var f = (k * k) / d2;
          dx[i] += vx * f; dy[i] += vy * f; dx[j] -= vx * f; dy[j] -= vy * f;
        }
      }
      var index = {};
      nodes.forEach(function (n, idx) { index[n.id] = idx; });
      edges.forEach(function (e) {
        var a = index[e.source], b = index[e.target];
        var vx = nodes[b].x - nodes[a].x, vy = nodes[b].y - nodes[a].y;
        var d = Math.sqrt(vx * vx + vy * vy) + 0.01;
        var f = (d * d) / k / d * 0.05;
        dx[a] += vx * f; dy[a] += vy * f; dx[b] -= vx * f; dy[b] -= vy * f;
      });
      for (var m = 0; m < count; m++) {
        dx[m] += (anchors[m][0] - nodes[m].x) * 0.15;
        dy[m] += (anchors[m][1] - nodes[m].y) * 0.15;
        var len = Math.sqrt(dx[m] * dx[m] + dy[m] * dy[m]) + 0.01;
        var move = Math.min(len, temp);
        nodes[m].x += (dx[m] / len) * move;
        nodes[m].y += (dy[m] / len) * move;
      }
    }
  }

  function legend() {
    var list = document.getElementById('rg-legend');
    var seen = {};
    data.nodes.forEach(function (n) { seen[n.domain] = (seen[n.domain] || 0) + 1; });
    Object.keys(data.colors).forEach(function (domain) {
      if (!seen[domain]) { return; }
      var item = html('li', null, list);
      var swatch = html('span', null, item, 'swatch');
      swatch.style.background = data.colors[domain];
      html('span', domain + ' (' + seen[domain] + ')', item);
    });
    var sup = html('li', '- - → supersedes', list);
    sup.style.color = '#dc2626';
    html('li', '◯ gold ring: focus', list);
  }

  function showDetails(n) {
    var panel = document.getElementById('rg-details');
    while (panel.firstChild) { panel.removeChild(panel.firstChild); }
    html('h2', n.label, panel);
    var table = html('table', null, panel);
    var rows = [['id', n.id]].concat(Object.keys(n.details).map(function (k) {
      var v = n.details[k];
      return [k, Array.isArray(v) ? v.join(', ') : v];
    }));
    if (n.focus) { rows.push(['focus', 'yes']); }
    rows.forEach(function (r) {
      var tr = html('tr', null, table);
      html('td', r[0], tr);
      html('td', r[1], tr);
    });
    if (n.superseded_by.length) {
      html('p', 'Superseded by: ' + n.superseded_by.map(function (s) { return byId[s] ? byId[s].label : s; }).join(', '), panel, 'superseded');
    }
    var mine = edges.filter(function (e) { return e.source === n.id || e.target === n.id; });
    html('h3', 'Edges (' + mine.length + ')', panel);
    var list = html('ul', null, panel);
    mine.forEach(function (e) {
      var other = byId[e.source === n.id ? e.target : e.source];
      var li = html('li', null, list);
      html('span', e.source === n.id ? e.verb + ' → ' : '← ' + e.verb + ' ', li);
      var link = html('span', other.label, li, 'link');
      link.addEventListener('click', function () { select(other.id); });
      html('span', ' (' + e.strength.toFixed(2) + ')', li);
    });
    html('h3', 'Provenance (' + n.provenance.length + ')', panel);
    var prov = html('ul', null, panel);
    if (!n.provenance.length) { html('li', 'no journal entry mentions this node', prov); }
    n.provenance.forEach(function (p) {
      var li = html('li', null, prov);
      var head = '#' + p.seq + ' ' + (p.at || '') + ' · ' + (p.kind || '');
      if (p.backend) { head += ' · probe ' + p.backend; }
      if (p.event_id) { head += ' · event ' + p.event_id; }
      html('div', head, li);
      if (p.reasons && p.reasons.length) { html('div', 'triggers: ' + p.reasons.join(', '), li, 'why'); }
      if (p.rationale) { html('div', '“' + p.rationale + '”', li, 'why'); }
      if (p.error) { html('div', 'rejected: ' + p.error, li, 'superseded'); }
    });
  }

  var groups = {};
  function select(id) {
    Object.keys(groups).forEach(function (k) { groups[k].classList.remove('selected'); });
    if (groups[id]) { groups[id].classList.add('selected'); }
    showDetails(byId[id]);
  }

  /* The smallest box holding every node (and its label), at least 480 x 320, centred. */
  function fit(nodes) {
    if (!nodes.length) { return [0, 0, data.width, data.height]; }
    var minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    nodes.forEach(function (n) {
      var r = radius(n);
      minX = Math.min(minX, n.x - r); maxX = Math.max(maxX, n.x + r + 150);
      minY = Math.min(minY, n.y - r); maxY = Math.max(maxY, n.y + r);
    });
    var pad = 30, w = Math.max(480, maxX - minX + 2 * pad), h = Math.max(320, maxY - minY + 2 * pad);
    var cx = (minX + maxX) / 2, cy = (minY + maxY) / 2;
    return [cx - w / 2, cy - h / 2, w, h];
  }

  function draw() {
    var svg = document.getElementById('rg-graph');
    var defs = el('defs', {}, svg);
    [['rg-arrow', '#94a3b8'], ['rg-arrow-sup', '#dc2626']].forEach(function (m) {
      var marker = el('marker', { id: m[0], viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
      el('path', { d: 'M0,0 L10,5 L0,10 z', fill: m[1] }, marker);
    });
    var view = fit(data.nodes);
    svg.setAttribute('viewBox', view.join(' '));
    var edgeLayer = el('g', { class: 'edges' }, svg);
    var nodeLayer = el('g', { class: 'nodes' }, svg);
    edges.forEach(function (e) {
      var a = byId[e.source], b = byId[e.target];
      var vx = b.x - a.x, vy = b.y - a.y, d = Math.sqrt(vx * vx + vy * vy) || 1;
      var rb = radius(b) + 3;
      var sup = e.verb === 'supersedes';
      var cls = 'edge' + (sup ? ' supersedes' : '') + (a.domain !== b.domain ? ' cross' : '');
      var line = el('line', {
        x1: a.x, y1: a.y, x2: b.x - (vx / d) * rb, y2: b.y - (vy / d) * rb,
        class: cls, 'stroke-width': sup ? 2 : 0.6 + 2 * e.strength,
        'marker-end': 'url(#' + (sup ? 'rg-arrow-sup' : 'rg-arrow') + ')',
        'data-verb': e.verb
      }, edgeLayer);
      var t = el('title', {}, line);
      t.textContent = a.label + ' —' + e.verb + '→ ' + b.label;
    });
    var labelled = data.nodes.slice().sort(function (p, q) { return q.weight - p.weight; }).slice(0, 60);
    var showLabel = {};
    labelled.forEach(function (n) { showLabel[n.id] = true; });
    data.nodes.forEach(function (n) {
      var cls = 'node' + (n.focus ? ' focus' : '') + (n.superseded_by.length ? ' superseded' : '');
      var g = el('g', { class: cls, 'data-id': n.id, 'data-domain': n.domain, transform: 'translate(' + n.x.toFixed(1) + ',' + n.y.toFixed(1) + ')' }, nodeLayer);
      el('circle', { r: radius(n).toFixed(1), fill: data.colors[n.domain] || data.colors.other }, g);
      var title = el('title', {}, g);
      title.textContent = n.label + ' (' + n.domain + ', ' + n.weight.toFixed(2) + ')';
      if (showLabel[n.id] || n.focus) {
        var text = el('text', { x: radius(n) + 3, y: 4 }, g);
        text.textContent = n.label.length > 40 ? n.label.slice(0, 39) + '…' : n.label;
      }
      g.addEventListener('click', function (ev) { ev.stopPropagation(); select(n.id); });
      groups[n.id] = g;
    });
    zoomAndPan(svg, view);
    return data.nodes.length;
  }

  function zoomAndPan(svg, view) {
    var drag = null;
    function apply() { svg.setAttribute('viewBox', view.join(' ')); }
    svg.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var scale = ev.deltaY > 0 ? 1.1 : 1 / 1.1;
      var rect = svg.getBoundingClientRect();
      var fx = (ev.clientX - rect.left) / rect.width, fy = (ev.clientY - rect.top) / rect.height;
      var w = view[2] * scale, h = view[3] * scale;
      view[0] += (view[2] - w) * fx; view[1] += (view[3] - h) * fy; view[2] = w; view[3] = h;
      apply();
    }, { passive: false });
    svg.addEventListener('mousedown', function (ev) { drag = [ev.clientX, ev.clientY]; });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (ev) {
      if (!drag) { return; }
      var rect = svg.getBoundingClientRect();
      view[0] -= (ev.clientX - drag[0]) * view[2] / rect.width;
      view[1] -= (ev.clientY - drag[1]) * view[3] / rect.height;
      drag = [ev.clientX, ev.clientY];
      apply();
    });
  }

  try {
    legend();
    relax();
    var drawn = draw();
    var focus = data.nodes.filter(function (n) { return n.focus; });
    if (focus.length) { select(focus[0].id); }
    /* Deep link: page.html#node=<id> opens that node, as a click on it would. */
    var wanted = /(?:^#|&)node=([^&]+)/.exec(window.location.hash);
    var target = wanted ? groups[decodeURIComponent(wanted[1])] : null;
    if (target) { target.dispatchEvent(new MouseEvent('click', { bubbles: true })); }
    status.setAttribute('data-nodes', String(drawn));
    status.setAttribute('data-edges', String(edges.length));
    status.setAttribute('data-ready', '1');
  } catch (err) {
    window.__rgFail(err && err.stack ? err.stack : err);
  }
}());
