"""Renderings of a sidecar document for other tools: JSON, Mermaid and Graphviz DOT.

Pure functions (``doc -> str``). Labels are untrusted text: each format escapes them for
its own syntax so a label can never close a string, start a new statement or inject
markup into a Markdown preview.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rolling_graph.cli.render_views import clean, edges_of, focus_of, node_label, nodes_of, weight_of
from rolling_graph.core.model import DOMAINS

if TYPE_CHECKING:
    from rolling_graph.core.types import GraphDoc


def to_json(doc: GraphDoc) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)


def _mermaid_label(text: str) -> str:
    escaped = clean(text, 60)
    for char, code in (("&", "#amp;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("|", "#124;"), ("`", "#96;")):
        escaped = escaped.replace(char, code)
    return escaped


def to_mermaid(doc: GraphDoc) -> str:
    """A Mermaid flowchart: a subgraph per domain, ``supersedes`` dashed."""
    nodes, edges = nodes_of(doc), edges_of(doc)
    ids = {nid: f"n{i}" for i, nid in enumerate(sorted(nodes))}
    lines = ["flowchart LR"]
    for domain in DOMAINS:
        members = sorted(nid for nid, n in nodes.items() if n.get("domain") == domain)
        if not members:
            continue
        lines.append(f"  subgraph {domain}")
        lines.extend(
            f'    {ids[nid]}["{_mermaid_label(node_label(nodes[nid], nid))} ({weight_of(nodes[nid]):.2f})"]'
            for nid in members
        )
        lines.append("  end")
    lines.extend(
        f'  {ids[nid]}["{_mermaid_label(node_label(n, nid))} ({weight_of(n):.2f})"]'
        for nid, n in sorted(nodes.items())
        if n.get("domain") not in DOMAINS
    )
    for key in sorted(edges):
        edge = edges[key]
        src, dst = ids.get(str(edge.get("source"))), ids.get(str(edge.get("target")))
        if not src or not dst:
            continue
        verb = _mermaid_label(clean(edge.get("relationship"), 30))
        arrow = f"-. {verb} .->" if edge.get("relationship") == "supersedes" else f"-- {verb} -->"
        lines.append(f"  {src} {arrow} {dst}")
    focus = [ids[f] for f in focus_of(doc) if f in ids]
    if focus:
        lines.append("  classDef focus stroke:#d97706,stroke-width:3px")
        lines.append(f"  class {','.join(focus)} focus")
    return "\n".join(lines) + "\n"


def _dot_string(text: str) -> str:
    return '"' + clean(text, 80).replace("\\", "\\\\").replace('"', '\\"') + '"'


DOT_COLORS = {"relationship": "#c026d3", "project": "#2563eb", "technical": "#16a34a", "personal": "#ca8a04"}


def to_dot(doc: GraphDoc) -> str:
    """A Graphviz digraph: a cluster per domain, focus bold, ``supersedes`` red dashed."""
    nodes, edges = nodes_of(doc), edges_of(doc)
    focus = set(focus_of(doc))
    lines = ["digraph rolling_graph {", "  rankdir=LR;", '  node [shape=box, style="rounded,filled", fillcolor=white];']
    for domain in (*DOMAINS, None):
        members = sorted(
            nid for nid, n in nodes.items() if (n.get("domain") if n.get("domain") in DOMAINS else None) == domain
        )
        if not members:
            continue
        indent = "  "
        if domain:
            lines.append(f"  subgraph cluster_{domain} {{")
            lines.append(f"    label={_dot_string(domain)}; color={_dot_string(DOT_COLORS[domain])};")
            indent = "    "
        for nid in members:
            n = nodes[nid]
            attrs = [f"label={_dot_string(f'{node_label(n, nid)} ({weight_of(n):.2f})')}"]
            if domain:
                attrs.append(f"color={_dot_string(DOT_COLORS[domain])}")
            if nid in focus:
                attrs.append("penwidth=3")
            lines.append(f"{indent}{_dot_string(nid)} [{', '.join(attrs)}];")
        if domain:
            lines.append("  }")
    for key in sorted(edges):
        edge = edges[key]
        src, dst = str(edge.get("source")), str(edge.get("target"))
        if src not in nodes or dst not in nodes:
            continue
        attrs = [f"label={_dot_string(clean(edge.get('relationship'), 30))}"]
        if edge.get("relationship") == "supersedes":
            attrs += ["style=dashed", 'color="#dc2626"', 'fontcolor="#dc2626"']
        lines.append(f"  {_dot_string(src)} -> {_dot_string(dst)} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
