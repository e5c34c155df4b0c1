"""Pure renderings of a sidecar document for people and other tools.

``doc -> text | json | mermaid | dot`` (the HTML page lives in :mod:`rolling_graph.cli.view_html`), plus
the graph queries the inspection commands share: which nodes a ``DOMAIN|NODE`` argument
selects, a node's branch, what supersedes what, and a node's provenance in the journal.

Labels come from a model and a transcript: they are untrusted. Every rendering strips
control characters, bounds lengths and escapes for its target syntax (rich markup,
Mermaid, Graphviz).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from rolling_graph.core.focus import superseded_by
from rolling_graph.core.ids import pointer_parts, slugify
from rolling_graph.core.model import DOMAINS, LABEL_MAX
from rolling_graph.safety.sanitize import one_line
from rolling_graph.store.forget import named_ids
from rolling_graph.store.journal import op_touches

if TYPE_CHECKING:
    from rolling_graph.core.types import Edge, GraphDoc, JournalEntry, Node

BAR_WIDTH = 10
DOMAIN_STYLES: dict[str, str] = {
    "relationship": "magenta",
    "project": "blue",
    "technical": "green",
    "personal": "yellow",
}


def clean(text: Any, limit: int = LABEL_MAX) -> str:
    """One line of untrusted text (:func:`rolling_graph.safety.sanitize.one_line`), at most ``limit`` chars."""
    value = one_line("" if text is None else text)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def weight_of(item: Mapping[str, Any], key: str = "weight") -> float:
    try:
        value = float(item.get(key, 0.0))
    except (TypeError, ValueError):
        return 0.0
    return min(1.0, max(0.0, value))


def weight_bar(weight: float, width: int = BAR_WIDTH) -> str:
    filled = round(min(1.0, max(0.0, weight)) * width)
    return "█" * filled + "░" * (width - filled)


def nodes_of(doc: GraphDoc) -> dict[str, Node]:
    return doc.get("nodes") or {}


def edges_of(doc: GraphDoc) -> dict[str, Edge]:
    return doc.get("edges") or {}


def focus_of(doc: GraphDoc) -> list[str]:
    return doc.get("focus") or []


def exact_node(doc: GraphDoc, name: str) -> str | None:
    """A node id from what the user typed: the id, or a label as typed
    (:func:`rolling_graph.store.forget.name_matches`; never the typed name slugified). A name
    that matches more than one node raises :class:`rolling_graph.store.forget.AmbiguousName`."""
    labels = {nid: str(n.get("label") or "") for nid, n in nodes_of(doc).items()}
    found = named_ids([name], labels)
    return found[0] if found else None


def resolve_node(doc: GraphDoc, name: str) -> str | None:
    """A node id from what the user typed: :func:`exact_node`, or a unique id fragment
    (``rgraph show`` only: it reads; ``why``, ``expand`` and ``forget`` take exact names)."""
    found = exact_node(doc, name)
    if found is not None:
        return found
    slug = slugify(name)
    partial = [nid for nid in nodes_of(doc) if slug in nid]
    return partial[0] if len(partial) == 1 else None


def suggestions(doc: GraphDoc, name: str, limit: int = 5) -> list[str]:
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


def incident_edges(doc: GraphDoc, node_ids: set[str] | frozenset[str]) -> set[str]:
    return {k for k, e in edges_of(doc).items() if e["source"] in node_ids or e["target"] in node_ids}


def select(doc: GraphDoc, target: str | None) -> Selection | None:
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
    ids = {nid} | {end for k in edges for end in (edges_of(doc)[k]["source"], edges_of(doc)[k]["target"])}
    return Selection("node", nid, frozenset(i for i in ids if i in nodes), frozenset(edges))


def subdocument(doc: GraphDoc, sel: Selection) -> GraphDoc:
    """A copy of ``doc`` holding only the selected nodes and edges."""
    return {
        **doc,
        "nodes": {k: v for k, v in nodes_of(doc).items() if k in sel.node_ids},
        "edges": {k: v for k, v in edges_of(doc).items() if k in sel.edge_keys},
        "focus": [f for f in focus_of(doc) if f in sel.node_ids],
    }


def branch(doc: GraphDoc, node_id: str) -> dict[str, Any]:
    """A node's branch in full: the node, all its edges, its neighbours."""
    nodes, edges = nodes_of(doc), edges_of(doc)
    keys = sorted(incident_edges(doc, {node_id}))
    neighbour_ids = sorted({end for k in keys for end in (edges[k]["source"], edges[k]["target"])} - {node_id})
    return {
        "node": {"id": node_id, **nodes.get(node_id, {})},
        "edges": [{"key": k, **edges[k]} for k in keys],
        "neighbours": [{"id": n, **nodes[n]} for n in neighbour_ids if n in nodes],
    }


# --- journal provenance -----------------------------------------------------------


def entry_touches(entry: JournalEntry, node_id: str) -> bool:
    """Whether a journal entry added, changed or activated ``node_id`` or one of its edges
    (every change to the graph is an op in the journal)."""
    ops = entry.get("ops")
    return any(isinstance(op, dict) and op_touches(op, node_id) for op in ops or []) if isinstance(ops, list) else False


def provenance(journal: list[JournalEntry], node_id: str) -> list[dict[str, Any]]:
    """The journal entries behind a node, oldest first, reduced to what a person reads."""
    rows: list[dict[str, Any]] = []
    for entry in journal:
        if not isinstance(entry, dict) or not entry_touches(entry, node_id):
            continue
        ops = entry.get("ops") or []
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


#: Characters of a tool output's line shown as a label (the injected block's bound).
OUTPUT_LABEL_CHARS = 120
#: Node kinds whose label is a line of a tool's output: untrusted text that may read like an
#: instruction (``/rolling-graph:graph show`` lands in the conversation), so it is fenced and cut.
OUTPUT_KINDS = frozenset({"error"})


def node_label(node: Mapping[str, Any], nid: str) -> str:
    return clean(node.get("label") or nid)


def shown_label(node: Mapping[str, Any], nid: str) -> str:
    """A label for the terminal and ``/rolling-graph:graph`` views: a tool output's line fenced in
    backticks and cut, as the injected block bounds it; any other label as it is."""
    if node.get("kind") in OUTPUT_KINDS and node.get("label"):
        return "`" + clean(node.get("label"), OUTPUT_LABEL_CHARS).replace("`", "'") + "`"
    return node_label(node, nid)


def _node_line(nid: str, node: Mapping[str, Any], focus: set[str], old: dict[str, list[str]]) -> Text:
    line = Text()
    line.append(weight_bar(weight_of(node)), style=DOMAIN_STYLES.get(str(node.get("domain")), "white"))
    line.append(f" {weight_of(node):.2f}  ")
    line.append("★ " if nid in focus else "  ", style="bold yellow")
    line.append(shown_label(node, nid), style="bold" if nid in focus else "")
    line.append(f"  [{clean(node.get('kind') or 'concept', 20)}] ", style="dim")
    line.append(nid, style="dim cyan")
    if node.get("anchor"):
        line.append("  ⚓approved by you (seeded memory)", style="cyan")
    if node.get("pulled"):
        line.append(f"  ↺pulled · {earlier_session(node)}", style="cyan")
    if nid in old:
        line.append(f"  ✗ superseded by {', '.join(old[nid])}", style="red")
    return line


def earlier_session(node: Mapping[str, Any]) -> str:
    """Where a pulled node comes from, in words: ``from an earlier session, 2026-01-05``."""
    at = clean(node.get("seen_at"), 40)[:10] if isinstance(node.get("seen_at"), str) else ""
    return f"from an earlier session, {at}" if at else "from an earlier session"


def earlier_sessions(node: Mapping[str, Any]) -> str | None:
    """``rgraph why`` for a pulled node: the earlier sessions that touched it and when, or None."""
    if not node.get("pulled"):
        return None
    ids = [clean(s, 80) for s in node.get("seen_in") or [] if isinstance(s, str)]
    at = clean(node.get("seen_at"), 40)[:10] if isinstance(node.get("seen_at"), str) else ""
    who = ("session " if len(ids) == 1 else "sessions ") + ", ".join(ids) if ids else "an earlier session"
    when = f", last on {at}" if at else ""
    return f"From {who}{when} (pulled from the warm graph into this session)."


def _edge_line(edge: Mapping[str, Any], nodes: dict[str, Node]) -> Text:
    src, dst, verb = str(edge.get("source")), str(edge.get("target")), clean(edge.get("relationship"), 30)
    line = Text("  ")
    line.append(src, style="cyan")
    line.append(f" —{verb}→ ", style="bold red" if verb == "supersedes" else "bold")
    line.append(dst, style="cyan")
    line.append(f"  {weight_of(edge, 'strength'):.2f}", style="dim")
    src_node, dst_node = nodes.get(src), nodes.get(dst)
    src_dom = src_node["domain"] if src_node else None
    dst_dom = dst_node["domain"] if dst_node else None
    if src_dom and dst_dom and src_dom != dst_dom:
        line.append(f"  ({clean(src_dom, 20)} ↔ {clean(dst_dom, 20)})", style="magenta")
    return line


def render_text(doc: GraphDoc, sel: Selection | None = None, *, title: str | None = None) -> RenderableType:
    """The terminal view: header, focus cluster, nodes per domain with bars, edges."""
    sel = sel or select(doc, None)
    assert sel is not None
    nodes = {k: v for k, v in nodes_of(doc).items() if k in sel.node_ids}
    edges = {k: v for k, v in edges_of(doc).items() if k in sel.edge_keys}
    focus = set(focus_of(doc))
    old = superseded_by(edges_of(doc))
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


def render_branch(doc: GraphDoc, node_id: str) -> RenderableType:
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
    old = superseded_by(edges_of(doc))
    parts: list[RenderableType] = [Text(shown_label(node, node_id), style="bold"), table]
    if node_id in old:
        parts.append(Text(f"superseded by {', '.join(old[node_id])}", style="red"))
    parts.append(Text(f"\nEdges ({len(data['edges'])})", style="bold"))
    parts.extend(_edge_line(e, nodes_of(doc)) for e in data["edges"])
    parts.append(Text(f"\nNeighbours ({len(data['neighbours'])})", style="bold"))
    focus = set(focus_of(doc))
    parts.extend(_node_line(n["id"], n, focus, old) for n in data["neighbours"])
    return Group(*parts)


def render_provenance(doc: GraphDoc, node_id: str, rows: list[dict[str, Any]]) -> RenderableType:
    node: Mapping[str, Any] = nodes_of(doc).get(node_id) or {}
    head = Text(f"Why {shown_label(node, node_id)} ", style="bold")
    head.append(f"({node_id})", style="dim cyan")
    parts: list[RenderableType] = [head]
    facts = [
        f"{k}: {clean(node.get(k), 60)}"
        for k in ("domain", "kind", "confidence", "first_seen", "last_activated")
        if node.get(k)
    ]
    if node:
        parts.append(Text(" · ".join(facts) + f" · weight {weight_of(node):.2f}", style="dim"))
    else:
        parts.append(Text("No longer in the graph: the user forgot it (the last entry below).", style="yellow"))
    earlier = earlier_sessions(node)
    if earlier:
        parts.append(Text(earlier, style="cyan"))
    if node.get("anchor"):
        parts.append(Text("Approved by you: seeded flat memory (rgraph seed), a rule or fact, not read from a session.", style="cyan"))
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
    journal: list[JournalEntry], node_ids: set[str], per_node: int = 20
) -> dict[str, list[dict[str, Any]]]:
    """:func:`provenance` for many nodes in one pass over the journal (latest ``per_node`` kept)."""
    index: dict[str, list[dict[str, Any]]] = {}
    for entry in journal:
        if not isinstance(entry, dict):
            continue
        touched: set[str] = set()
        for op in entry.get("ops") or []:
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
