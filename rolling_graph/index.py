"""The hook index: what the hook needs to decide whether to speak, without the graph.

The hook runs before every prompt and after every tool call. Parsing a 2,000-node graph
takes longer than the rest of the hook together, yet most events end in silence: nothing
new, no node named, no decision behind the file a tool touched. So whoever writes the
graph also writes ``<sid>.index.json`` beside it::

    {"version": 1, "journal_seq": 41, "journal_bytes": 18234,
     "nodes": {"use-postgresql": ["use postgresql for the warm store", 0.82, "correction", "e12"], ...},
     "focus": [...],
     "fp": {"use-postgresql": "9c1e0a2b", ...},      # ledger fingerprints of nodes that can be news
     "rev": {"use-postgresql": 41, ...},             # journal seq at which that fingerprint appeared
     "file_intents": {"src-db-py": ["use-postgresql"], ...}}

``nodes`` maps id → [lowercase label, weight, kind, single source or null]. The index is
derived and never authoritative: one that is missing, unreadable or older than the
journal is ignored (the hook then reads the graph). Pure functions here; the store does
the file I/O.
"""

from __future__ import annotations

from .ledger import INTENT_KINDS, fingerprint
from .model import slugify

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INDEX_VERSION = 1
_INTENT = ("decision", "correction", "preference")


def build_index(graph: dict[str, Any], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The index of ``graph``; ``previous`` (the last index) carries each node's ``rev``."""
    from .render import adjacency

    nodes = graph.get("nodes", {})
    focus = [f for f in graph.get("focus", []) if f in nodes]
    # News is intent (decisions, corrections, preferences, errors). A name drifting into the
    # focus as weights decay is not news: the full block at startup, resume and compaction
    # carries the focus.
    speakable = {nid for nid, n in nodes.items() if n.get("kind") in INTENT_KINDS}
    adj = adjacency(graph, speakable)
    file_intents: dict[str, list[str]] = {}
    for nid in speakable:
        if nodes[nid].get("kind") not in _INTENT:
            continue
        for _, other, _ in adj.get(nid, ()):
            if nodes[other].get("kind") == "file":
                file_intents.setdefault(other, []).append(nid)
        for path in nodes[nid].get("files", ()) or ():
            file_intents.setdefault(slugify(str(path)), []).append(nid)
    compact = {}
    for nid, n in nodes.items():
        sources = n.get("sources") or []
        compact[nid] = [str(n.get("label", "")).lower(), round(float(n.get("weight", 0.0)), 3), n.get("kind"), sources[0] if len(sources) == 1 else None]
    seq = graph.get("journal_seq", 0)
    fp = {nid: fingerprint(nid, graph, adj) for nid in speakable}
    old_fp = (previous or {}).get("fp", {})
    old_rev = (previous or {}).get("rev", {})
    rev = {nid: (old_rev.get(nid, seq) if old_fp.get(nid) == f else seq) for nid, f in fp.items()}
    return {
        "version": INDEX_VERSION,
        "journal_seq": seq,
        "journal_bytes": graph.get("journal_bytes", 0),
        "nodes": compact,
        "focus": focus,
        "fp": fp,
        "rev": rev,
        "file_intents": {k: sorted(set(v)) for k, v in file_intents.items()},
    }


def names(low: str, nid: str, label: str) -> bool:
    """Does lowercased text name this node: its label as a whole word (or any long label
    as a substring), or its id? Cheap substring tests first; a regex only if they pass."""
    if len(label) >= 3 and label in low:
        if len(label) >= 40:
            return True
        import re

        if re.search(r"(?<![\w-])" + re.escape(label) + r"(?![\w-])", low):
            return True
    return len(nid) >= 4 and nid in low


def named_in(index: dict[str, Any], text: str, exclude_source: str | None = None) -> list[str]:
    """The nodes the text names, in graph order, as :func:`rolling_graph.render.mentions`
    decides (a node whose only source is ``exclude_source`` does not count)."""
    low = text.lower()
    return [nid for nid, (label, _w, _kind, source) in index.get("nodes", {}).items()
            if not (exclude_source and source == exclude_source) and names(low, nid, label)]


#: Most nodes the ledger keeps owing (news that did not fit a budget), most important first.
OWED_MAX = 30


def delta_order(index: dict[str, Any], ledger: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """News for a prompt: nodes whose fingerprint changed after the ledger last looked
    (``_seq``) and differs from what was told, plus what is still owed; most important
    first (intent before names, focus first, then weight). Old nodes never told are not
    news: the full block on startup, resume and compaction carries what matters."""
    fp = index.get("fp", {})
    rev = index.get("rev", {})
    nodes = index.get("nodes", {})
    seen = ledger.get("_seq", -1)
    fresh = {nid: f for nid, f in fp.items() if rev.get(nid, 0) > seen and ledger.get(nid) != f}
    for nid in ledger.get("_owed", ()):
        if nid in fp and ledger.get(nid) != fp[nid]:
            fresh[nid] = fp[nid]
    focus = set(index.get("focus", []))
    order = sorted(
        (n for n in fresh if n in nodes),
        key=lambda i: (nodes[i][2] not in INTENT_KINDS, i not in focus, -float(nodes[i][1]), i),
    )
    return order, fresh


def nothing_new(index: dict[str, Any], ledger: dict[str, Any]) -> bool:
    return ledger.get("_seq") == index.get("journal_seq") and not ledger.get("_owed")


def mark(ledger: dict[str, Any], index: dict[str, Any], owed: list[str]) -> None:
    """The ledger has looked at the graph up to the index's journal seq."""
    ledger["_seq"] = index.get("journal_seq", 0)
    ledger["_owed"] = list(owed)[:OWED_MAX]


def tool_news(index: dict[str, Any], ledger: dict[str, Any], paths: list[str]) -> list[str]:
    """Decisions tied to the files a tool touched that the conversation has not been told."""
    fp = index.get("fp", {})
    file_intents = index.get("file_intents", {})
    found: list[str] = []
    for path in paths:
        for nid in file_intents.get(slugify(path), ()):
            if nid not in found and ledger.get(nid) != fp.get(nid):
                found.append(nid)
    return found
