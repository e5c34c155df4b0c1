"""The hook index: what the hook needs to decide whether to speak, without the graph.

The hook runs before every prompt and after every tool call. Parsing a 2,000-node graph
takes longer than the rest of the hook together, yet most events end in silence: nothing
new, no node named, no decision behind the file a tool touched. So whoever writes the
graph also writes ``<sid>.index.json`` beside it::

    {"version": 2, "journal_seq": 41, "journal_bytes": 18234,
     "nodes": {"use-postgresql": {"label": "use postgresql for the warm store", "weight": 0.82,
                                  "kind": "correction", "source": "e12"}, ...},
     "focus": [...],
     "fp": {"use-postgresql": "9c1e0a2b", ...},      # ledger fingerprints of nodes that can be news
     "rev": {"use-postgresql": 41, ...},             # journal seq at which that fingerprint appeared
     "file_intents": {"src-db-py": ["use-postgresql"], ...}}

``nodes`` maps id → lowercase label, weight, kind and the node's source event when it has
only one (:class:`~rolling_graph.types.HookIndex`). The index is derived and never
authoritative: one that is missing, unreadable, of another version or older than the
journal is ignored (the hook then rebuilds it from the graph). Pure functions here; the
store does the file I/O.
"""

from __future__ import annotations

from .filepaths import file_id
from .ledger import INTENT_KINDS, fingerprint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .types import GraphDoc, HookIndex, IndexNode, Ledger

#: 2: nodes as named entries (1 had positional lists); an index of another version is rebuilt.
INDEX_VERSION = 2
_INTENT = ("decision", "correction", "preference")


def build_index(graph: GraphDoc, previous: Mapping[str, Any] | None = None) -> HookIndex:
    """The index of ``graph``; ``previous`` (the last index file, as read) carries each
    node's ``rev``."""
    from .adjacency import adjacency

    nodes = graph["nodes"]
    focus = [f for f in graph["focus"] if f in nodes]
    # News is intent (decisions, corrections, preferences, errors). A name drifting into the
    # focus as weights decay is not news: the full block at startup, resume and compaction
    # carries the focus.
    speakable = {nid for nid, n in nodes.items() if n["kind"] in INTENT_KINDS}
    adj = adjacency(graph, speakable)
    file_intents: dict[str, list[str]] = {}
    for nid in speakable:
        if nodes[nid]["kind"] not in _INTENT:
            continue
        for _, other, _ in adj.get(nid, ()):
            if nodes[other]["kind"] == "file":
                file_intents.setdefault(other, []).append(nid)
        for path in nodes[nid].get("files", ()):
            file_intents.setdefault(file_id(path), []).append(nid)
    compact: dict[str, IndexNode] = {}
    for nid, n in nodes.items():
        entry: IndexNode = {"label": n["label"].lower(), "weight": round(n["weight"], 3), "kind": n["kind"]}
        if len(n["sources"]) == 1:
            entry["source"] = n["sources"][0]
        compact[nid] = entry
    seq = graph["journal_seq"]
    fp = {nid: fingerprint(nid, graph, adj) for nid in speakable}
    old_fp = _map(previous, "fp")
    old_rev = _map(previous, "rev")
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


def _map(index: Mapping[str, Any] | None, key: str) -> Mapping[str, Any]:
    value = index.get(key) if index is not None else None
    return value if isinstance(value, dict) else {}


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


#: Kinds a prompt never "names": a request's label is an earlier prompt in the user's words,
#: so a prompt repeating it ("continue", the same question) would restore it in full again.
NOT_NAMED_KINDS = frozenset({"request"})


def named_in(index: HookIndex, text: str, exclude_source: str | None = None) -> list[str]:
    """The nodes the text names, in graph order, as :func:`rolling_graph.render.mentions`
    decides (a node whose only source is ``exclude_source`` does not count)."""
    low = text.lower()
    return [nid for nid, n in index["nodes"].items()
            if n["kind"] not in NOT_NAMED_KINDS and not (exclude_source and n.get("source") == exclude_source)
            and names(low, nid, n["label"])]


#: Most nodes the ledger keeps owing (news that did not fit a budget), most important first.
OWED_MAX = 30


def delta_order(index: HookIndex, ledger: Ledger) -> tuple[list[str], dict[str, str]]:
    """News for a prompt: nodes whose fingerprint changed after the ledger last looked
    (``_seq``) and differs from what was told, plus what is still owed; most important
    first (intent before names, focus first, then weight). Old nodes never told are not
    news: the full block on startup, resume and compaction carries what matters."""
    fp, rev, nodes, told = index["fp"], index["rev"], index["nodes"], ledger["told"]
    seen = ledger["seq"]
    fresh = {nid: f for nid, f in fp.items() if rev.get(nid, 0) > seen and told.get(nid) != f}
    for nid in ledger["owed"]:
        if nid in fp and told.get(nid) != fp[nid]:
            fresh[nid] = fp[nid]
    focus = set(index["focus"])
    order = sorted(
        (n for n in fresh if n in nodes),
        key=lambda i: (nodes[i]["kind"] not in INTENT_KINDS, i not in focus, -nodes[i]["weight"], i),
    )
    return order, fresh


def nothing_new(index: HookIndex, ledger: Ledger) -> bool:
    return ledger["seq"] == index["journal_seq"] and not ledger["owed"]


def mark(ledger: Ledger, journal_seq: int, owed: list[str]) -> None:
    """The ledger has looked at the graph up to ``journal_seq`` (the index's, or the
    graph's); ``owed``: news that did not fit, most important first."""
    ledger["seq"] = journal_seq
    ledger["owed"] = list(owed)[:OWED_MAX]


def tool_news(index: HookIndex, ledger: Ledger, paths: list[str]) -> list[str]:
    """Decisions tied to the files a tool touched that the conversation has not been told."""
    fp, told = index["fp"], ledger["told"]
    found: list[str] = []
    for path in paths:
        for nid in index["file_intents"].get(file_id(path), ()):
            if nid not in found and told.get(nid) != fp.get(nid):
                found.append(nid)
    return found
