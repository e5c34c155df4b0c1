/* Rolling Graph view: the details panel of the selected node. Untrusted text goes in with
 * textContent only. */
var RGDetails = (function () {
  'use strict';

  function html(name, text, parent, cls) {
    var node = document.createElement(name);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function table(rows, parent) {
    var t = html('table', null, parent);
    rows.forEach(function (r) {
      var tr = html('tr', null, t);
      html('td', r[0], tr);
      html('td', r[1], tr);
    });
    return t;
  }
  function shown(v) { return Array.isArray(v) ? v.join(', ') : v; }

  /* n: a node of the page data; api: byId, adj, other, select, expand, isShown, passes,
   * hiddenNeighbours (see graph_view.js). */
  function show(n, api) {
    var panel = document.getElementById('rg-details');
    while (panel.firstChild) { panel.removeChild(panel.firstChild); }
    html('h2', n.label, panel);
    if (!api.passes(n)) {
      html('p', 'Hidden by the kind or domain filter.', panel, 'note');
    } else if (!api.isShown(n.id)) {
      html('p', 'Not in the view.', panel, 'note');
    }
    var rows = [['id', n.id], ['kind', n.kind], ['domain', n.domain]];
    Object.keys(n.details).forEach(function (k) {
      if (k !== 'kind' && k !== 'domain') { rows.push([k, shown(n.details[k])]); }
    });
    if (n.focus) { rows.push(['focus', 'yes']); }
    table(rows, panel);
    var facts = Object.keys(n.facts || {});
    if (facts.length) {
      html('h3', 'Facts', panel);
      table(facts.map(function (k) { return [k, n.facts[k] === null ? '—' : n.facts[k]]; }), panel).className = 'facts';
    }
    var hidden = api.isShown(n.id) ? api.hiddenNeighbours(n) : 0;
    if (hidden) {
      var more = html('button', 'Show ' + hidden + ' hidden neighbour' + (hidden === 1 ? '' : 's'), panel, 'expand');
      more.type = 'button';
      more.addEventListener('click', function () { api.expand(n.id); });
    }
    if (n.superseded_by.length) {
      var names = n.superseded_by.map(function (s) { return api.byId[s] ? api.byId[s].label : s; });
      html('p', 'Superseded by: ' + names.join(', '), panel, 'superseded');
    }
    var mine = api.adj[n.id];
    html('h3', 'Edges (' + mine.length + ')', panel);
    var list = html('ul', null, panel);
    mine.forEach(function (e) {
      var other = api.byId[api.other(e, n.id)];
      var li = html('li', null, list);
      html('span', e.source === n.id ? e.verb + ' → ' : '← ' + e.verb + ' ', li, 'verb-name');
      var link = html('span', other.label, li, 'link');
      link.addEventListener('click', function () { api.select(other.id, true); });
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

  // html(): the one way the page's scripts make an element with untrusted text (textContent).
  return { show: show, html: html };
}());
