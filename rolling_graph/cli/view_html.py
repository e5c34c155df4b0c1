"""``rgraph view``: one self-contained HTML page showing a session's graph.

No CDN and no network: the page carries its data as inline JSON, its scripts
(``rolling_graph/cli/assets/*.js``, see :data:`SCRIPTS`) and its styles inline,
and a Content-Security-Policy that forbids every fetch.

The page opens on the focus cluster and its neighbours; the rest comes on demand (show all,
expand a node, search). The script lays out what is shown in the browser, where it can
measure every label, and places labels so that no two overlap (a label that finds no room is
shortened, then hidden behind its tooltip). Everything is seeded: the same graph gives the
same picture.

Labels are untrusted text. They travel only inside the JSON block, escaped so that no
``</script>`` or ``<!--`` can close it, and the script inserts them with ``textContent``,
never as markup.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from rolling_graph.cli.render_views import clean, edges_of, focus_of, node_label, nodes_of, provenance_index, weight_of
from rolling_graph.core.focus import superseded_by
from rolling_graph.core.model import DOMAINS

if TYPE_CHECKING:
    from rolling_graph.core.types import GraphDoc, JournalEntry, Node

DEFAULT_LIMIT = 400
DOMAIN_COLORS: dict[str, str] = {
    "relationship": "#c026d3",
    "project": "#2563eb",
    "technical": "#16a34a",
    "personal": "#ca8a04",
    "other": "#64748b",
}
FACTS_MAX = 16
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


def domain_key(node: Node) -> str:
    domain = node.get("domain")
    return domain if isinstance(domain, str) and domain in DOMAINS else "other"


def kind_key(node: Node) -> str:
    """The node's kind as the page shows and filters it (untrusted text, so bounded)."""
    return clean(node.get("kind") or "concept", 24) or "concept"


def facts_of(node: Node) -> dict[str, Any]:
    """The node's ``facts`` (SCHEMA12), bounded again: the document on disk is untrusted."""
    raw: Any = node.get("facts")
    if not isinstance(raw, dict):
        return {}
    out: dict[str, Any] = {}
    for key in sorted(raw)[:FACTS_MAX]:
        value = raw[key]
        if isinstance(value, bool | int | float) or value is None:
            out[clean(key, 30)] = value
        else:
            out[clean(key, 30)] = clean(value, 160)
    return out


def _detail_value(value: Any) -> Any:
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, list):
        return [clean(v, 160) for v in value[:16]]
    return clean(value, 300)


def view_data(doc: GraphDoc, journal: list[JournalEntry], *, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """The JSON the page renders: nodes (focus first, then heaviest), edges, provenance, legend."""
    nodes, edges = nodes_of(doc), edges_of(doc)
    focus = [f for f in focus_of(doc) if f in nodes]
    ranked = sorted(nodes, key=lambda nid: (-weight_of(nodes[nid]), nid))
    keep = list(dict.fromkeys([*focus, *ranked]))[: max(limit, len(focus))]
    kept = set(keep)
    old = superseded_by(edges)
    prov = provenance_index(journal, kept)
    out_nodes = []
    for nid in keep:
        node = nodes[nid]
        out_nodes.append(
            {
                "id": nid,
                "label": node_label(node, nid),
                "domain": domain_key(node),
                "kind": kind_key(node),
                "weight": round(weight_of(node), 3),
                "focus": nid in focus,
                "superseded_by": [s for s in old.get(nid, []) if s in nodes],
                "details": {k: _detail_value(node.get(k)) for k in _DETAIL_FIELDS if k in node},
                "facts": facts_of(node),
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


#: The page's script, in order: layout and what is shown (pure functions), details panel,
#: controls, then the view that draws with them and starts everything.
SCRIPTS = ("graph_layout.js", "graph_data.js", "graph_panel.js", "graph_controls.js", "graph_view.js")


def script_text() -> str:
    return "\n".join(_asset(name) for name in SCRIPTS).replace("</", "<\\/")


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
<header>
<h1>{title}</h1><p class="meta">{meta}</p>
<div id="rg-toolbar">
<input id="rg-search" type="search" placeholder="Search label or id" aria-label="Search nodes by label or id"
 autocomplete="off" spellcheck="false">
<span id="rg-matches" aria-live="polite"></span>
<button type="button" id="rg-all">Show all</button>
<button type="button" id="rg-default">Default view</button>
<button type="button" id="rg-fit">Fit</button>
<span id="rg-count"></span>
</div>
<div id="rg-filters">
<fieldset id="rg-domains"><legend>Domain</legend></fieldset>
<fieldset id="rg-kinds"><legend>Kind</legend></fieldset>
</div>
<ul id="rg-legend"></ul>
</header>
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


def render_html(doc: GraphDoc, journal: list[JournalEntry], *, limit: int = DEFAULT_LIMIT) -> str:
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
        script=script_text(),
    )
