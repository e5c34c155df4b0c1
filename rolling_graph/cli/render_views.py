"""Pure renderings of a sidecar document for people and other tools.

``doc -> text | json | mermaid | dot`` (the HTML page lives in :mod:`rolling_graph.cli.view_html`), plus
the graph queries the inspection commands share: which nodes a ``DOMAIN|NODE`` argument
selects, a node's branch, what supersedes what, and a node's provenance in the journal.

Labels come from a model and a transcript: they are untrusted. Every rendering strips
control characters, bounds lengths and escapes for its target syntax (rich markup,
Mermaid, Graphviz).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from rolling_graph.journal import op_touches, pointer_parts
from rolling_graph.model import DOMAINS, LABEL_MAX, slugify

BAR_WIDTH = 10
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+")
DOMAIN_STYLES: dict[str, str] = {
    "relationship": "magenta",
    "project": "blue",
    "technical": "green",
    "personal": "yellow",
}


def clean(text: Any, limit: int = LABEL_MAX) -> str:
    """One line of untrusted text: no control/bidi characters, at most ``limit`` chars."""
    value = _CONTROL_RE.sub(" ", str(text if text is not None else "")).strip()
    return value if len(value) <= limit else value[: limit - 1] + "…"


def weight_of(item: dict[str, Any], key: str = "weight") -> float:
    try:
        value = float(item.get(key, 0.0))
    except (TypeError, ValueError):
        return 0.0
    return min(1.0, max(0.0, value))


def weight_bar(weight: float, width: int = BAR_WIDTH) -> str:
    filled = round(min(1.0, max(0.0, weight)) * width)
    return "█" * filled + "░" * (width - filled)


def nodes_of(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    nodes = doc.get("nodes")
    return {str(k): v for k, v in nodes.items() if isinstance(v, dict)} if isinstance(nodes, dict) else {}


def edges_of(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    edges = doc.get("edges")
    return {str(k): v for k, v in edges.items() if isinstance(v, dict)} if isinstance(edges, dict) else {}


def focus_of(doc: dict[str, Any]) -> list[str]:
    focus = doc.get("focus")
    return [str(f) for f in focus if isinstance(f, str)] if isinstance(focus, list) else []


def superseded_by(doc: dict[str, Any]) -> dict[str, list[str]]:
    """``old id -> [ids of the nodes that supersede it]``."""
    result: dict[str, list[str]] = {}
    for edge in edges_of(doc).values():
        if edge.get("relationship") == "supersedes":
            result.setdefault(str(edge.get("target")), []).append(str(edge.get("source")))
    for nid, node in nodes_of(doc).items():  # a node may also carry the newer one's id
        newer = node.get("superseded_by")
        for other in newer if isinstance(newer, list) else [newer] if isinstance(newer, str) else []:
            if other not in result.get(nid, []):
                result.setdefault(nid, []).append(str(other))
    return result


def resolve_node(doc: dict[str, Any], name: str) -> str | None:
    """A node id from what the user typed: the id, the label, or a unique id fragment."""
    nodes = nodes_of(doc)
    if name in nodes:
        return name
    slug = slugify(name)
    if slug in nodes:
        return slug
    by_label = [nid for nid, n in nodes.items() if clean(n.get("label")).lower() == name.strip().lower()]
    if len(by_label) == 1:
        return by_label[0]
    partial = [nid for nid in nodes if slug in nid]
    return partial[0] if len(partial) == 1 else None


def suggestions(doc: dict[str, Any], name: str, limit: int = 5) -> list[str]:
    slug = slugify(name)
    parts = [p for p in slug.split("-") if len(p) > 2]
    hits = [nid for nid in nodes_of(doc) if any(p in nid for p in parts)]
    return sorted(hits)[:limit]


@dataclass(frozen=True)
class Selection:
    kind: str  # "all" | "domain" | "node"
    name: str | None
    node_ids: frozenset[str]
    edge_keys: frozenset[str]


def incident_edges(doc: dict[str, Any], node_ids: set[str] | frozenset[str]) -> set[str]:
    return {k for k, e in edges_of(doc).items() if e.get("source") in node_ids or e.get("target") in node_ids}


def select(doc: dict[str, Any], target: str | None) -> Selection | None:
    """What ``rgraph show [DOMAIN|NODE]`` shows; ``None`` when the name matches nothing."""
    nodes = nodes_of(doc)
    if not target:
        return Selection("all", None, frozenset(nodes), frozenset(edges_of(doc)))
    if target.lower() in DOMAINS:
        domain = target.lower()
        ids = {nid for nid, n in nodes.items() if n.get("domain") == domain}
        return Selection("domain", domain, frozenset(ids), frozenset(incident_edges(doc, ids)))
    nid = resolve_node(doc, target)
    if nid is None:
        return None
    edges = incident_edges(doc, {nid})
    ids = {nid} | {str(edges_of(doc)[k].get(end)) for k in edges for end in ("source", "target")}
    return Selection("node", nid, frozenset(i for i in ids if i in nodes), frozenset(edges))


def subdocument(doc: dict[str, Any], sel: Selection) -> dict[str, Any]:
    """A copy of ``doc`` holding only the selected nodes and edges."""
    out = {k: v for k, v in doc.items() if k not in {"nodes", "edges", "focus"}}
    out["nodes"] = {k: v for k, v in nodes_of(doc).items() if k in sel.node_ids}
    out["edges"] = {k: v for k, v in edges_of(doc).items() if k in sel.edge_keys}
    out["focus"] = [f for f in focus_of(doc) if f in sel.node_ids]
    return out


def branch(doc: dict[str, Any], node_id: str) -> dict[str, Any]:
    """A node's branch in full: the node, all its edges, its neighbours."""
    nodes, edges = nodes_of(doc), edges_of(doc)
    keys = sorted(incident_edges(doc, {node_id}))
    neighbour_ids = sorted({str(edges[k].get(end)) for k in keys for end in ("source", "target")} - {node_id})
    return {
        "node": {"id": node_id, **nodes.get(node_id, {})},
        "edges": [{"key": k, **edges[k]} for k in keys],
        "neighbours": [{"id": n, **nodes[n]} for n in neighbour_ids if n in nodes],
    }


# --- journal provenance -----------------------------------------------------------


def entry_touches(entry: dict[str, Any], node_id: str) -> bool:
    """Whether a journal entry added, changed or activated ``node_id`` or one of its edges."""
    for key in ("nodes", "node_ids", "activated", "pulled"):
        listed = entry.get(key)
        if isinstance(listed, list) and node_id in listed:
            return True
    ops = entry.get("ops")
    return any(isinstance(op, dict) and op_touches(op, node_id) for op in ops or []) if isinstance(ops, list) else False


def provenance(journal: list[dict[str, Any]], node_id: str) -> list[dict[str, Any]]:
    """The journal entries behind a node, oldest first, reduced to what a person reads."""
    rows: list[dict[str, Any]] = []
    for entry in journal:
        if not isinstance(entry, dict) or not entry_touches(entry, node_id):
            continue
        ops = entry.get("ops") if isinstance(entry.get("ops"), list) else []
        touching = [
            f"{op.get('op')} {op.get('path')}" for op in ops if isinstance(op, dict) and op_touches(op, node_id)
        ]
        rows.append(
            {
                "seq": entry.get("seq"),
                "at": entry.get("at"),
                "kind": entry.get("kind"),
                "event_id": entry.get("event_id"),
                "backend": entry.get("backend"),
                "rationale": clean(entry.get("rationale"), 400),
                "reasons": [clean(r, 60) for r in entry.get("reasons") or [] if isinstance(r, str)],
                "error": clean(entry.get("error"), 300) if entry.get("error") else None,
                "ops": touching[:12],
            }
        )
    return rows


# --- text (rich) ----------------------------------------------------------------------


def node_label(node: dict[str, Any], nid: str) -> str:
    return clean(node.get("label") or nid)


def _node_line(nid: str, node: dict[str, Any], focus: set[str], old: dict[str, list[str]]) -> Text:
    line = Text()
    line.append(weight_bar(weight_of(node)), style=DOMAIN_STYLES.get(str(node.get("domain")), "white"))
    line.append(f" {weight_of(node):.2f}  ")
    line.append("★ " if nid in focus else "  ", style="bold yellow")
    line.append(node_label(node, nid), style="bold" if nid in focus else "")
    line.append(f"  [{clean(node.get('kind') or 'concept', 20)}] ", style="dim")
    line.append(nid, style="dim cyan")
    if node.get("anchor"):
        line.append("  ⚓anchor", style="cyan")
    if node.get("pulled"):
        line.append("  ↺pulled", style="cyan")
    if nid in old:
        line.append(f"  ✗ superseded by {', '.join(old[nid])}", style="red")
    return line


def _edge_line(edge: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> Text:
    src, dst, verb = str(edge.get("source")), str(edge.get("target")), clean(edge.get("relationship"), 30)
    line = Text("  ")
    line.append(src, style="cyan")
    line.append(f" —{verb}→ ", style="bold red" if verb == "supersedes" else "bold")
    line.append(dst, style="cyan")
    line.append(f"  {weight_of(edge, 'strength'):.2f}", style="dim")
    src_dom, dst_dom = nodes.get(src, {}).get("domain"), nodes.get(dst, {}).get("domain")
    if src_dom and dst_dom and src_dom != dst_dom:
        line.append(f"  ({clean(src_dom, 20)} ↔ {clean(dst_dom, 20)})", style="magenta")
    return line


def render_text(doc: dict[str, Any], sel: Selection | None = None, *, title: str | None = None) -> RenderableType:
    """The terminal view: header, focus cluster, nodes per domain with bars, edges."""
    sel = sel or select(doc, None)
    assert sel is not None
    nodes = {k: v for k, v in nodes_of(doc).items() if k in sel.node_ids}
    edges = {k: v for k, v in edges_of(doc).items() if k in sel.edge_keys}
    focus = set(focus_of(doc))
    old = superseded_by(doc)
    parts: list[RenderableType] = []
    head = Text(title or f"Session {clean(doc.get('session_id'), 80)}", style="bold")
    if doc.get("project"):
        head.append(f" · {clean(doc.get('project'), 200)}", style="dim")
    if doc.get("updated_at"):
        head.append(f" · updated {clean(doc.get('updated_at'), 40)}", style="dim")
    parts.append(head)
    scope = "" if sel.kind == "all" else f" ({sel.kind} {sel.name})"
    parts.append(Text(f"{len(nodes)} nodes · {len(edges)} edges{scope}"))
    focus_here = [f for f in focus_of(doc) if f in nodes]
    if focus_here:
        parts.append(Text("\nFocus", style="bold yellow"))
        parts.extend(_node_line(f, nodes[f], focus, old) for f in focus_here)
    for domain in (*DOMAINS, None):
        members = sorted(
            (nid for nid, n in nodes.items() if (n.get("domain") if n.get("domain") in DOMAINS else None) == domain),
            key=lambda nid: (-weight_of(nodes[nid]), nid),
        )
        if not members:
            continue
        parts.append(
            Text(f"\n{domain or 'other'} ({len(members)})", style=f"bold {DOMAIN_STYLES.get(domain or '', 'white')}")
        )
        parts.extend(_node_line(nid, nodes[nid], focus, old) for nid in members)
    if edges:
        parts.append(Text("\nEdges", style="bold"))
        for key in sorted(edges, key=lambda k: (-weight_of(edges[k], "strength"), k)):
            parts.append(_edge_line(edges[key], nodes_of(doc)))
    if not nodes:
        parts.append(Text("\n(the graph is empty so far)", style="dim"))
    return Group(*parts)


def render_branch(doc: dict[str, Any], node_id: str) -> RenderableType:
    """``rgraph expand``: every field of the node, its edges and neighbours."""
    data = branch(doc, node_id)
    node = data["node"]
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for key in sorted(node):
        value = node[key]
        shown = ", ".join(clean(v, 200) for v in value) if isinstance(value, list) else clean(value, 400)
        table.add_row(clean(key, 40), shown)
    old = superseded_by(doc)
    parts: list[RenderableType] = [Text(node_label(node, node_id), style="bold"), table]
    if node_id in old:
        parts.append(Text(f"superseded by {', '.join(old[node_id])}", style="red"))
    parts.append(Text(f"\nEdges ({len(data['edges'])})", style="bold"))
    parts.extend(_edge_line(e, nodes_of(doc)) for e in data["edges"])
    parts.append(Text(f"\nNeighbours ({len(data['neighbours'])})", style="bold"))
    focus = set(focus_of(doc))
    parts.extend(_node_line(n["id"], n, focus, old) for n in data["neighbours"])
    return Group(*parts)


def render_provenance(doc: dict[str, Any], node_id: str, rows: list[dict[str, Any]]) -> RenderableType:
    node = nodes_of(doc).get(node_id, {})
    head = Text(f"Why {node_label(node, node_id)} ", style="bold")
    head.append(f"({node_id})", style="dim cyan")
    parts: list[RenderableType] = [head]
    facts = [
        f"{k}: {clean(node.get(k), 60)}"
        for k in ("domain", "kind", "confidence", "first_seen", "last_activated")
        if node.get(k)
    ]
    parts.append(Text(" · ".join(facts) + f" · weight {weight_of(node):.2f}", style="dim"))
    sources = [clean(s, 80) for s in node.get("sources") or [] if isinstance(s, str)]
    if sources:
        parts.append(Text(f"sources: {', '.join(sources)}", style="dim"))
    if not rows:
        parts.append(Text("No journal entry mentions this node (journal missing or rotated).", style="yellow"))
    for row in rows:
        line = Text(f"\n#{row['seq']} {clean(row['at'], 40)}  ", style="bold")
        line.append(clean(row["kind"], 20), style="cyan")
        if row.get("backend"):
            line.append(f"  probe: {clean(row['backend'], 30)}")
        if row.get("event_id"):
            line.append(f"  event {clean(row['event_id'], 60)}", style="dim")
        parts.append(line)
        if row.get("reasons"):
            parts.append(Text(f"  triggers: {', '.join(row['reasons'])}", style="dim"))
        if row.get("rationale"):
            parts.append(Text(f"  “{row['rationale']}”"))
        if row.get("error"):
            parts.append(Text(f"  rejected: {row['error']}", style="red"))
        for op in row.get("ops") or []:
            parts.append(Text(f"  · {clean(op, 160)}", style="dim"))
    return Group(*parts)


def provenance_index(
    journal: list[dict[str, Any]], node_ids: set[str], per_node: int = 20
) -> dict[str, list[dict[str, Any]]]:
    """:func:`provenance` for many nodes in one pass over the journal (latest ``per_node`` kept)."""
    index: dict[str, list[dict[str, Any]]] = {}
    for entry in journal:
        if not isinstance(entry, dict):
            continue
        touched: set[str] = set()
        for key in ("nodes", "node_ids", "activated", "pulled"):
            listed = entry.get(key)
            if isinstance(listed, list):
                touched.update(str(x) for x in listed)
        ops = entry.get("ops") if isinstance(entry.get("ops"), list) else []
        for op in ops:
            if not isinstance(op, dict):
                continue
            for field in ("path", "from"):
                parts = pointer_parts(op.get(field))
                if len(parts) >= 2 and parts[0] == "nodes":
                    touched.add(parts[1])
                elif len(parts) >= 2 and parts[0] == "edges":
                    touched.update(parts[1].split("|")[::2])
        for nid in touched & node_ids:
            index.setdefault(nid, []).extend(provenance([entry], nid))
    return {nid: rows[-per_node:] for nid, rows in index.items()}
