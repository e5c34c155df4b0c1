/* Rolling Graph view: the layout. Plain functions over plain objects, no DOM, no clocks,
 * no Math.random: the same graph always gives the same picture.
 *
 *   positions(items, links, fresh)  start positions (kept ones stay, new ones go next to a
 *                                   placed neighbour or into their domain's spiral), a force
 *                                   relaxation, then a pass that pushes apart every two node
 *                                   footprints (circle + full label) that overlap
 *   placeLabels(items, order)       greedy label placement in priority order: eight spots
 *                                   around the node, for each of its texts (full, then
 *                                   short); a label that finds no free spot is not drawn.
 *                                   Two placed label boxes never overlap, by construction.
 *   Boxes, spotOnEdge               a grid of placed boxes, and a free spot along an edge:
 *                                   edge-verb labels go only where no node label is. */
var RGLayout = (function () {
  'use strict';

  var GAP = 3;          /* between a circle and its label */
  var PAD = 2;          /* the least distance between two label boxes */
  var CELL = 96;        /* grid cell for box look-ups */
  var ROOM = 0.5;       /* free space per node in the force layout, times its footprint */
  var STUCK = 25;       /* separation sweeps before everything is given a little more room */
  var CENTRES = {
    relationship: [-1, -0.75], project: [1, -0.75], technical: [-1, 0.75], personal: [1, 0.75], other: [0, 0]
  };
  var GOLDEN = Math.PI * (3 - Math.sqrt(5));

  /* FNV-1a: a stable 32-bit hash of a string; unit() maps it to [0, 1). */
  function hash(text) {
    var h = 2166136261;
    for (var i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return h >>> 0;
  }
  function unit(text) { return hash(text) / 4294967296; }

  function overlaps(a, b, pad) {
    return a.x < b.x + b.w + pad && b.x < a.x + a.w + pad && a.y < b.y + b.h + pad && b.y < a.y + a.h + pad;
  }

  /* A uniform grid of boxes: add(box), free(box, pad) is true when no stored box comes
   * within pad of it. */
  function Boxes() { this.cells = {}; }
  Boxes.prototype.keys = function (box, pad) {
    var out = [];
    var x0 = Math.floor((box.x - pad) / CELL), x1 = Math.floor((box.x + box.w + pad) / CELL);
    var y0 = Math.floor((box.y - pad) / CELL), y1 = Math.floor((box.y + box.h + pad) / CELL);
    for (var gx = x0; gx <= x1; gx++) {
      for (var gy = y0; gy <= y1; gy++) { out.push(gx + ',' + gy); }
    }
    return out;
  };
  Boxes.prototype.add = function (box) {
    var cells = this.cells;
    this.keys(box, 0).forEach(function (k) { (cells[k] = cells[k] || []).push(box); });
  };
  Boxes.prototype.free = function (box, pad) {
    var keys = this.keys(box, pad);
    for (var i = 0; i < keys.length; i++) {
      var list = this.cells[keys[i]] || [];
      for (var j = 0; j < list.length; j++) {
        if (overlaps(box, list[j], pad)) { return false; }
      }
    }
    return true;
  };

  function footprint(it) {
    var half = Math.max(it.r, it.h / 2);
    return { l: it.x - it.r - PAD, r: it.x + it.r + GAP + it.w + PAD, t: it.y - half - PAD, b: it.y + half + PAD };
  }

  /* Seeds: a node placed before keeps its spot; a new one goes beside its first placed
   * neighbour (at a hashed angle), else into a sunflower spiral around its domain's centre. */
  function seed(items, links, spread) {
    var nbrs = items.map(function () { return []; });
    links.forEach(function (l) { nbrs[l.a].push(l.b); nbrs[l.b].push(l.a); });
    var spiral = {};
    items.forEach(function (it, i) {
      if (it.x !== undefined && it.y !== undefined) { return; }
      var near = nbrs[i].filter(function (j) { return items[j].x !== undefined && j < i; })[0];
      if (near === undefined) { near = nbrs[i].filter(function (j) { return items[j].x !== undefined; })[0]; }
      var angle = 2 * Math.PI * unit(it.id);
      if (near !== undefined) {
        var dist = spread * (0.6 + 0.4 * unit('d' + it.id));
        it.x = items[near].x + dist * Math.cos(angle);
        it.y = items[near].y + dist * Math.sin(angle);
        return;
      }
      var c = CENTRES[it.domain] || CENTRES.other;
      var k = spiral[it.domain] = (spiral[it.domain] || 0) + 1;
      var rad = spread * 0.7 * Math.sqrt(k - 0.5);
      it.x = c[0] * spread * 3 + rad * Math.cos(k * GOLDEN);
      it.y = c[1] * spread * 3 + rad * Math.sin(k * GOLDEN);
    });
  }

  /* Fruchterman-Reingold with a pull toward the domain's centre, two changes: a link pulls
   * each end by 1/sqrt(its degree), so hubs are not dragged into one pile; and two
   * footprints (circle + label) that overlap push apart hard, so the pass that separates
   * them afterwards has little left to do. */
  function relax(items, links, spread, steps, heat) {
    var n = items.length;
    var dx = new Float64Array(n), dy = new Float64Array(n), pull = new Float64Array(n).fill(1);
    var hw = new Float64Array(n), hh = new Float64Array(n), off = new Float64Array(n);
    links.forEach(function (l) { pull[l.a] += 1; pull[l.b] += 1; });
    items.forEach(function (it, i) {
      pull[i] = 1 / Math.sqrt(pull[i]);
      hw[i] = it.r + (GAP + it.w) / 2 + PAD;
      hh[i] = Math.max(it.r, it.h / 2) + PAD;
      off[i] = (GAP + it.w) / 2;
    });
    var k2 = spread * spread, far = 16 * k2;
    for (var step = 0; step < steps; step++) {
      var temp = heat * (1 - step / steps) + 0.5;
      dx.fill(0);
      dy.fill(0);
      for (var i = 0; i < n; i++) {
        var a = items[i];
        for (var j = i + 1; j < n; j++) {
          var vx = a.x - items[j].x, vy = a.y - items[j].y;
          var d2 = vx * vx + vy * vy;
          if (d2 > far) { continue; }
          if (d2 < 0.01) { vx = (i - j) * 0.1; vy = 0.1; d2 = vx * vx + vy * vy; }
          var f = k2 / d2;
          var ox = hw[i] + hw[j] - Math.abs(vx + off[i] - off[j]), oy = hh[i] + hh[j] - Math.abs(vy);
          if (ox > 0 && oy > 0) { f *= 4; }
          dx[i] += vx * f; dy[i] += vy * f; dx[j] -= vx * f; dy[j] -= vy * f;
        }
      }
      for (var e = 0; e < links.length; e++) {
        var ia = links[e].a, ib = links[e].b, p = items[ia], q = items[ib];
        var lx = q.x - p.x, ly = q.y - p.y;
        var g = Math.sqrt(lx * lx + ly * ly) / spread * (0.5 + links[e].s);
        dx[ia] += lx * g * pull[ia]; dy[ia] += ly * g * pull[ia];
        dx[ib] -= lx * g * pull[ib]; dy[ib] -= ly * g * pull[ib];
      }
      for (var m = 0; m < n; m++) {
        var it = items[m], c = CENTRES[it.domain] || CENTRES.other;
        dx[m] += (c[0] * spread * 2 - it.x) * 0.08;
        dy[m] += (c[1] * spread * 2 - it.y) * 0.08;
        var len = Math.sqrt(dx[m] * dx[m] + dy[m] * dy[m]);
        if (len > 0) {
          var move = Math.min(len, temp);
          it.x += (dx[m] / len) * move;
          it.y += (dy[m] / len) * move;
        }
      }
    }
  }

  /* Stretch one axis, shrink the other, so the drawing's extent (labels included) has the
   * drawing area's width / height ratio. */
  function reshape(items, aspect) {
    var minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    items.forEach(function (it) {
      minX = Math.min(minX, it.x - it.r); maxX = Math.max(maxX, it.x + it.r + GAP + it.w);
      minY = Math.min(minY, it.y - it.r); maxY = Math.max(maxY, it.y + it.r);
    });
    var w = maxX - minX, h = maxY - minY;
    if (w <= 0 || h <= 0) { return; }
    var f = Math.sqrt(aspect / (w / h));
    f = Math.max(0.6, Math.min(1.7, f));
    var cx = (minX + maxX) / 2, cy = (minY + maxY) / 2;
    items.forEach(function (it) { it.x = cx + (it.x - cx) * f; it.y = cy + (it.y - cy) / f; });
  }

  /* Scale every position about the centroid: what pairwise pushes cannot untangle in a
   * few sweeps, a little more room does. */
  function spreadOut(items, factor) {
    var cx = 0, cy = 0;
    items.forEach(function (it) { cx += it.x; cy += it.y; });
    cx /= items.length; cy /= items.length;
    items.forEach(function (it) { it.x = cx + (it.x - cx) * factor; it.y = cy + (it.y - cy) * factor; });
  }

  /* Push apart every two overlapping footprints along the axis where they overlap least,
   * until none overlap (sort and sweep on y: footprints are wide and low). Returns how many sweeps it took. */
  function separate(items, maxSweeps) {
    var n = items.length;
    var order = items.map(function (_, i) { return i; });
    for (var sweep = 0; sweep < maxSweeps; sweep++) {
      if (sweep && sweep % STUCK === 0) { spreadOut(items, 1.06); }
      var fp = items.map(footprint);
      order.sort(function (p, q) { return fp[p].t - fp[q].t || p - q; });
      var moved = false;
      for (var oi = 0; oi < n; oi++) {
        var i = order[oi];
        for (var oj = oi + 1; oj < n; oj++) {
          var j = order[oj];
          if (fp[j].t >= fp[i].b) { break; }
          var ox = Math.min(fp[i].r, fp[j].r) - Math.max(fp[i].l, fp[j].l);
          var oy = Math.min(fp[i].b, fp[j].b) - Math.max(fp[i].t, fp[j].t);
          if (ox <= 0 || oy <= 0) { continue; }
          moved = true;
          var first = items[i], second = items[j];
          if (ox < oy) {
            var sx = ox / 2 + 0.5, iLeft = first.x < second.x || (first.x === second.x && i < j);
            first.x += iLeft ? -sx : sx; second.x += iLeft ? sx : -sx;
          } else {
            var sy = oy / 2 + 0.5, iUp = first.y < second.y || (first.y === second.y && i < j);
            first.y += iUp ? -sy : sy; second.y += iUp ? sy : -sy;
          }
          fp[i] = footprint(first); fp[j] = footprint(second);
        }
      }
      if (!moved) { return sweep; }
    }
    return maxSweeps;
  }

  /* items: [{id, domain, r, w, h, x?, y?}] (w, h: the label box to make room for); links:
   * [{a, b, s}] by index; change: the share of items that are new (1: a fresh layout; less:
   * kept items move less); aspect: the drawing area's width / height. Sets x and y on every
   * item (rounded to 0.1). */
  function positions(items, links, change, aspect) {
    var n = items.length;
    if (!n) { return { sweeps: 0 }; }
    var area = 0;
    items.forEach(function (it) { area += (2 * it.r + GAP + it.w + 16) * (Math.max(2 * it.r, it.h) + 18); });
    var spread = Math.max(40, Math.sqrt((area * ROOM) / n));
    seed(items, links, spread);
    if (n > 1) {
      var steps = change > 0.5 ? (n > 200 ? 300 : 260) : 90;
      relax(items, links, spread, steps, spread * Math.max(0.2, change));
    }
    var sweeps = 0;
    for (var round = 0; round < 2; round++) {
      if (aspect) { reshape(items, aspect); }
      sweeps += separate(items, 600);
    }
    items.forEach(function (it) { it.x = Math.round(it.x * 10) / 10; it.y = Math.round(it.y * 10) / 10; });
    return { sweeps: sweeps };
  }

  function hitsCircle(box, c) {
    var nx = Math.max(box.x, Math.min(c.x, box.x + box.w)), ny = Math.max(box.y, Math.min(c.y, box.y + box.h));
    var ddx = c.x - nx, ddy = c.y - ny;
    return ddx * ddx + ddy * ddy < (c.r + 1) * (c.r + 1);
  }

  function spots(it, w, h) {
    var r = it.r, d = r * 0.72;
    return [
      [it.x + r + GAP, it.y - h / 2], [it.x - r - GAP - w, it.y - h / 2],
      [it.x - w / 2, it.y + r + 1], [it.x - w / 2, it.y - r - 1 - h],
      [it.x + d + 1, it.y + d], [it.x + d + 1, it.y - d - h],
      [it.x - d - 1 - w, it.y + d], [it.x - d - 1 - w, it.y - d - h]
    ];
  }

  /* items: [{x, y, r, options: [{w, h}, ...]}]: the label's texts, preferred first; order:
   * indices, most important first; pad: the least gap between two labels (more than PAD
   * when the drawing will be shown small, as text boxes snap to whole pixels). Returns
   * {placed: [{option: k (or -1: no label), x, y, w, h}], boxes: Boxes}. Each option is tried
   * clear of circles, then over them; never within pad of another label. */
  function placeLabels(items, order, pad) {
    pad = Math.max(PAD, pad || 0);
    var boxes = new Boxes();
    var placed = items.map(function () { return { option: -1 }; });
    var near = new Boxes();
    items.forEach(function (c, i) { near.add({ x: c.x - c.r, y: c.y - c.r, w: 2 * c.r, h: 2 * c.r, i: i }); });
    function clearOfCircles(box, skip) {
      var keys = near.keys(box, 1);
      for (var k = 0; k < keys.length; k++) {
        var list = near.cells[keys[k]] || [];
        for (var b = 0; b < list.length; b++) {
          if (list[b].i !== skip && hitsCircle(box, items[list[b].i])) { return false; }
        }
      }
      return true;
    }
    order.forEach(function (idx) {
      var it = items[idx];
      for (var t = 0; t < 2 * it.options.length; t++) {
        var size = it.options[t >> 1], strict = (t & 1) === 0, cand = spots(it, size.w, size.h);
        for (var s = 0; s < cand.length; s++) {
          var box = { x: cand[s][0], y: cand[s][1], w: size.w, h: size.h };
          if (!boxes.free(box, pad) || (strict && !clearOfCircles(box, idx))) { continue; }
          boxes.add(box);
          placed[idx] = { option: t >> 1, x: box.x, y: box.y, w: box.w, h: box.h };
          return;
        }
      }
    });
    return { placed: placed, boxes: boxes };
  }

  /* A w x h box centred on the edge a -> b, at its middle or a little either side, where
   * free(box) allows; else (forced) at the middle anyway, else null. */
  function spotOnEdge(a, b, w, h, free, force) {
    var at = [0.5, 0.38, 0.62, 0.28, 0.72];
    for (var i = 0; i < at.length; i++) {
      var box = { x: a.x + (b.x - a.x) * at[i] - w / 2, y: a.y + (b.y - a.y) * at[i] - h / 2, w: w, h: h };
      if (free(box)) { return box; }
    }
    return force ? { x: (a.x + b.x) / 2 - w / 2, y: (a.y + b.y) / 2 - h / 2, w: w, h: h } : null;
  }

  return { hash: hash, unit: unit, overlaps: overlaps, Boxes: Boxes, PAD: PAD, positions: positions, placeLabels: placeLabels,
    hitsCircle: hitsCircle, spotOnEdge: spotOnEdge };
}());
