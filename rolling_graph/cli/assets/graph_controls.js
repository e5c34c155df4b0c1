/* Rolling Graph view: the toolbar (search, show all, default view, fit), the kind and domain
 * filters, the legend, and zoom and pan on the drawing. Untrusted text (kinds) goes in with
 * textContent and attribute values only. */
var RGControls = (function () {
  'use strict';
  var DEBOUNCE_MS = 120;
  var api = null;

  var html = RGDetails.html;  // graph_panel.js loads first (view_html.SCRIPTS)

  function counts(nodes, key) {
    var out = Object.create(null);
    nodes.forEach(function (n) { out[n[key]] = (out[n[key]] || 0) + 1; });
    return out;
  }

  /* One checkbox per value, all checked; a change reports the unchecked ones of both sets. */
  function filters(data, nodes) {
    var domains = counts(nodes, 'domain'), kinds = counts(nodes, 'kind');
    var boxes = [];
    function add(set, key, value, count, colour) {
      var label = html('label', null, set, 'chip');
      var box = html('input', null, label);
      box.type = 'checkbox';
      box.checked = true;
      box.setAttribute('data-' + key, value);
      if (colour) { html('span', null, label, 'swatch').style.background = colour; }
      html('span', value + ' (' + count + ')', label);
      box.addEventListener('change', changed);
      boxes.push([key, value, box]);
    }
    function changed() {
      var hidden = { kind: Object.create(null), domain: Object.create(null) };
      boxes.forEach(function (b) { if (!b[2].checked) { hidden[b[0]][b[1]] = true; } });
      api.filter(hidden.kind, hidden.domain);
    }
    var domainSet = document.getElementById('rg-domains');
    Object.keys(data.colors).forEach(function (d) { if (domains[d]) { add(domainSet, 'domain', d, domains[d], data.colors[d]); } });
    var kindSet = document.getElementById('rg-kinds');
    Object.keys(kinds).sort(function (a, b) { return kinds[b] - kinds[a] || (a < b ? -1 : 1); }).forEach(function (k) {
      add(kindSet, 'kind', k, kinds[k], null);
    });
  }

  function legend() {
    var list = document.getElementById('rg-legend');
    html('li', '- - → supersedes', list, 'sup');
    html('li', '◯ gold ring: focus', list);
    html('li', 'double-click a node (or its ⊕): show its hidden neighbours', list);
    html('li', 'hover a node or an edge: its verbs', list);
  }

  function toolbar() {
    var input = document.getElementById('rg-search'), timer = null;
    function run() { clearTimeout(timer); timer = null; api.search(input.value); }
    input.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(run, DEBOUNCE_MS); });
    input.addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter') { run(); }
      if (ev.key === 'Escape') { input.value = ''; run(); }
    });
    document.getElementById('rg-all').addEventListener('click', function () { api.showAll(); });
    document.getElementById('rg-default').addEventListener('click', function () { api.reset(); });
    document.getElementById('rg-fit').addEventListener('click', function () { api.fit(); });
  }

  function zoomAndPan(svg) {
    var drag = null;
    svg.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var rect = svg.getBoundingClientRect();
      api.pan(0, 0, ev.deltaY > 0 ? 1.1 : 1 / 1.1, (ev.clientX - rect.left) / rect.width, (ev.clientY - rect.top) / rect.height);
    }, { passive: false });
    svg.addEventListener('mousedown', function (ev) { drag = [ev.clientX, ev.clientY]; });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (ev) {
      if (!drag) { return; }
      api.pan(ev.clientX - drag[0], ev.clientY - drag[1], 1, 0, 0);
      drag = [ev.clientX, ev.clientY];
    });
  }

  function build(data, nodes, callbacks) {
    api = callbacks;
    legend();
    filters(data, nodes);
    toolbar();
    zoomAndPan(document.getElementById('rg-graph'));
  }

  /* The nodes whose label or id holds the query (any case): labels that start with it
   * first, then in the page's order (focus, then heaviest). */
  function find(nodes, query) {
    var needle = query.trim().toLowerCase();
    if (!needle) { return []; }
    var hits = nodes.filter(function (n) {
      return n.label.toLowerCase().indexOf(needle) >= 0 || n.id.toLowerCase().indexOf(needle) >= 0;
    });
    function starts(n) { return n.label.toLowerCase().indexOf(needle) === 0 ? 0 : 1; }
    return hits.sort(function (a, b) { return starts(a) - starts(b) || a.rank - b.rank; });
  }

  /* total < 0: no query. */
  function matches(total, revealed, filtered) {
    var text = '';
    if (total === 0) { text = 'no match'; }
    if (total > 0) {
      text = total + ' match' + (total === 1 ? '' : 'es');
      if (revealed < total) { text += ', the first ' + revealed + ' shown'; }
      if (filtered) { text += ' (' + filtered + ' hidden by filters)'; }
    }
    document.getElementById('rg-matches').textContent = text;
  }

  function clearSearch() { document.getElementById('rg-search').value = ''; }

  return { build: build, find: find, matches: matches, clearSearch: clearSearch };
}());
