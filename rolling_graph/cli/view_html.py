"""``rgraph view``: one self-contained HTML page showing a session's graph.

No CDN and no network: the page carries its data as inline JSON, its script
(``rolling_graph/cli/assets/graph_view.js``) and its styles inline, and a Content-Security-Policy that
forbids every fetch. Python precomputes a deterministic layout (a cluster per domain,
heaviest nodes at the centre); the script relaxes it with a small force simulation and
draws SVG.

Labels are untrusted text. They travel only inside the JSON block, escaped so that no
``</script>`` or ``<!--`` can close it, and the script inserts them with ``textContent``,
never as markup.
"""

from __future__ import annotations

import html
import json
import math
from importlib import resources
from typing import Any

from rolling_graph.cli.render_views import (
    clean,
    edges_of,
    focus_of,
    node_label,
    nodes_of,
    provenance_index,
    superseded_by,
    weight_of,
)
from rolling_graph.model import DOMAINS

WIDTH, HEIGHT = 1000.0, 720.0
DEFAULT_LIMIT = 400
DOMAIN_COLORS: dict[str, str] = {
    "relationship": "#c026d3",
    "project": "#2563eb",
    "technical": "#16a34a",
    "personal": "#ca8a04",
    "other": "#64748b",
}
_CENTRES: dict[str, tuple[float, float]] = {
    "relationship": (0.27, 0.28),
    "project": (0.73, 0.28),
    "technical": (0.27, 0.72),
    "personal": (0.73, 0.72),
    "other": (0.5, 0.5),
}
_GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))
_DETAIL_FIELDS = (
    "domain",
    "kind",
    "weight",
    "confidence",
    "activations",
    "first_seen",
    "last_activated",
    "anchor",
    "floor",
    "pulled",
    "summary",
    "sources",
    "files",
)


def domain_key(node: dict[str, Any]) -> str:
    domain = node.get("domain")
    return domain if isinstance(domain, str) and domain in DOMAINS else "other"


def layout(doc: dict[str, Any], node_ids: list[str]) -> dict[str, tuple[float, float]]:
    """Deterministic start positions: a sunflower spiral per domain, heaviest at the centre."""
    nodes = nodes_of(doc)
    positions: dict[str, tuple[float, float]] = {}
    by_domain: dict[str, list[str]] = {}
    for nid in node_ids:
        by_domain.setdefault(domain_key(nodes[nid]), []).append(nid)
    for domain, members in by_domain.items():
        members.sort(key=lambda nid: (-weight_of(nodes[nid]), nid))
        cx, cy = _CENTRES[domain]
        spacing = min(48.0, 160.0 / math.sqrt(max(1, len(members))))
        for i, nid in enumerate(members):
            radius = spacing * math.sqrt(i + 0.5)
            angle = i * _GOLDEN_ANGLE
            positions[nid] = (
                round(cx * WIDTH + radius * math.cos(angle), 2),
                round(cy * HEIGHT + radius * math.sin(angle), 2),
            )
    return positions


def _detail_value(value: Any) -> Any:
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, list):
        return [clean(v, 160) for v in value[:16]]
    return clean(value, 300)


def view_data(doc: dict[str, Any], journal: list[dict[str, Any]], *, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """The JSON the page renders: nodes with positions, edges, provenance, legend."""
    nodes, edges = nodes_of(doc), edges_of(doc)
    focus = [f for f in focus_of(doc) if f in nodes]
    ranked = sorted(nodes, key=lambda nid: (-weight_of(nodes[nid]), nid))
    keep = list(dict.fromkeys([*focus, *ranked]))[: max(limit, len(focus))]
    kept = set(keep)
    old = superseded_by(doc)
    positions = layout(doc, keep)
    prov = provenance_index(journal, kept)
    out_nodes = []
    for nid in keep:
        node = nodes[nid]
        x, y = positions[nid]
        out_nodes.append(
            {
                "id": nid,
                "label": node_label(node, nid),
                "domain": domain_key(node),
                "weight": round(weight_of(node), 3),
                "focus": nid in focus,
                "superseded_by": [s for s in old.get(nid, []) if s in nodes],
                "x": x,
                "y": y,
                "details": {k: _detail_value(node[k]) for k in _DETAIL_FIELDS if k in node},
                "provenance": prov.get(nid, []),
            }
        )
    out_edges = [
        {
            "source": str(e.get("source")),
            "target": str(e.get("target")),
            "verb": clean(e.get("relationship"), 30),
            "strength": round(weight_of(e, "strength"), 3),
        }
        for _, e in sorted(edges.items())
        if e.get("source") in kept and e.get("target") in kept
    ]
    return {
        "session_id": clean(doc.get("session_id"), 128),
        "project": clean(doc.get("project"), 300),
        "updated_at": clean(doc.get("updated_at"), 40),
        "total_nodes": len(nodes),
        "total_edges": len(edges),
        "width": WIDTH,
        "height": HEIGHT,
        "colors": DOMAIN_COLORS,
        "nodes": out_nodes,
        "edges": out_edges,
    }


def embed_json(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&``."""
    text = json.dumps(data, ensure_ascii=True, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _asset(name: str) -> str:
    return resources.files("rolling_graph.cli").joinpath("assets", name).read_text(encoding="utf-8")


_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
<script>{guard}</script>
</head>
<body>
<header><h1>{title}</h1><p class="meta">{meta}</p><ul id="rg-legend"></ul></header>
<main>
<svg id="rg-graph" role="img" aria-label="session graph" xmlns="http://www.w3.org/2000/svg"></svg>
<aside id="rg-details"><p class="hint">Click a node to see its details and where it came from.</p></aside>
</main>
<ul id="rg-errors"></ul>
<div id="rg-status" data-ready="0" data-errors="0" data-nodes="0" data-edges="0" hidden></div>
<script type="application/json" id="rg-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""

# Runs first, so it counts errors thrown by the main script too (even syntax errors).
_GUARD = (
    "(function(){var n=0;function bump(m){n+=1;var s=document.getElementById('rg-status');"
    "if(s){s.setAttribute('data-errors',String(n));}var u=document.getElementById('rg-errors');"
    "if(u){var li=document.createElement('li');li.textContent=String(m);u.appendChild(li);}}"
    "window.__rgFail=bump;window.addEventListener('error',function(e){bump(e.message||'error');});"
    "window.addEventListener('unhandledrejection',function(e){bump(e.reason||'rejection');});"
    "document.addEventListener('securitypolicyviolation',function(e){bump('blocked by CSP: '+e.blockedURI);});"
    "var ce=console.error;console.error=function(){bump(Array.prototype.join.call(arguments,' '));"
    "return ce.apply(console,arguments);};})();"
)


def render_html(doc: dict[str, Any], journal: list[dict[str, Any]], *, limit: int = DEFAULT_LIMIT) -> str:
    """The whole page as one string."""
    data = view_data(doc, journal, limit=limit)
    shown = len(data["nodes"])
    meta = f"{data['total_nodes']} nodes · {data['total_edges']} edges"
    if shown < data["total_nodes"]:
        meta += f" · showing the {shown} heaviest"
    if data["project"]:
        meta += f" · {data['project']}"
    if data["updated_at"]:
        meta += f" · updated {data['updated_at']}"
    return _PAGE.format(
        csp=_CSP,
        title=html.escape(f"Rolling Graph · {data['session_id'] or 'session'}"),
        meta=html.escape(meta),
        css=_asset("graph_view.css"),
        guard=_GUARD,
        data=embed_json(data),
        script=_asset("graph_view.js").replace("</", "<\\/"),
    )
