/* Rolling Graph view: the embedded graph as the view reads it, and which of its nodes are
 * shown. Plain functions over the page data and the reader's state (graph_view.js holds
 * both), no DOM. Maps keyed by ids (untrusted text) have no prototype.
 *
 *   index(data)                  nodes (focus first, then heaviest: the priority order) by id,
 *                                with their edges; edges whose ends are both nodes
 *   defaults(g)                  the default view: the focus (or the three heaviest), then
 *                                their strongest neighbours, BUDGET in all (a graph this
 *                                small is shown whole)
 *   wanted(g, defaults, state)   what the reader's state shows: the default view, "Show all",
 *                                pinned nodes, search matches, expanded nodes' neighbours;
 *                                what the kind and domain filters exclude goes
 *   hiddenNeighbours, priority   a node's neighbours not shown; the order labels are placed in */
var RGData = (function () {
  'use strict';
  var BUDGET = 48;            /* nodes in the default view; a graph this small is shown whole */

  function dict() { return Object.create(null); }
  function other(e, id) { return e.source === id ? e.target : e.source; }

  function index(data) {
    var nodes = data.nodes;
    var byId = dict(), adj = dict();
    nodes.forEach(function (n, i) { n.rank = i; byId[n.id] = n; adj[n.id] = []; });
    var edges = data.edges.filter(function (e) { return byId[e.source] && byId[e.target]; });
    edges.forEach(function (e) {
      adj[e.source].push(e);
      if (e.target !== e.source) { adj[e.target].push(e); }
    });
    return { nodes: nodes, byId: byId, adj: adj, edges: edges };
  }

  function passes(n, state) { return !state.hiddenKinds[n.kind] && !state.hiddenDomains[n.domain]; }

  function defaults(g) {
    var nodes = g.nodes, adj = g.adj, byId = g.byId;
    var set = dict();
    if (nodes.length <= BUDGET) { nodes.forEach(function (n) { set[n.id] = true; }); return set; }
    var core = nodes.filter(function (n) { return n.focus; });
    if (!core.length) { core = nodes.slice(0, 3); }
    core.forEach(function (n) { set[n.id] = true; });
    var score = dict();
    core.forEach(function (n) {
      adj[n.id].forEach(function (e) {
        var o = other(e, n.id);
        if (!set[o]) { score[o] = Math.max(score[o] || 0, e.strength + byId[o].weight); }
      });
    });
    Object.keys(score).sort(function (a, b) { return score[b] - score[a] || byId[a].rank - byId[b].rank; })
      .slice(0, Math.max(0, BUDGET - core.length)).forEach(function (id) { set[id] = true; });
    return set;
  }

  function wanted(g, defaultSet, state) {
    var set = dict();
    if (state.all) { g.nodes.forEach(function (n) { set[n.id] = true; }); }
    [defaultSet, state.pinned].forEach(function (s) { Object.keys(s).forEach(function (id) { set[id] = true; }); });
    state.found.forEach(function (id) { set[id] = true; });
    Object.keys(state.expanded).forEach(function (id) {
      set[id] = true;
      g.adj[id].forEach(function (e) { set[other(e, id)] = true; });
    });
    return g.nodes.filter(function (n) { return set[n.id] && passes(n, state); });
  }

  /* shown: the ids now on screen. */
  function hiddenNeighbours(g, n, shown, state) {
    var seen = dict(), count = 0;
    g.adj[n.id].forEach(function (e) {
      var o = other(e, n.id);
      if (!shown[o] && !seen[o] && passes(g.byId[o], state)) { seen[o] = true; count += 1; }
    });
    return count;
  }

  /* The selected node, then search matches, then the focus, then by rank. */
  function priority(a, b, state) {
    function score(n) {
      if (n.id === state.selected) { return 0; }
      if (state.found.indexOf(n.id) >= 0) { return 1; }
      return n.focus ? 2 : 3;
    }
    return score(a) - score(b) || a.rank - b.rank;
  }

  return {
    index: index, other: other, passes: passes, defaults: defaults, wanted: wanted,
    hiddenNeighbours: hiddenNeighbours, priority: priority
  };
}());
