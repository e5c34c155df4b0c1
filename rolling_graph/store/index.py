"""The hook index: what the hook needs to decide whether to speak, without the graph.

The hook runs before every prompt and after every tool call. Parsing a 2,000-node graph
takes longer than the rest of the hook together, yet most events end in silence: nothing
new, no node named, no decision behind the file a tool touched. So whoever writes the
graph also writes ``<sid>.index.json`` beside it::

    {"version": 3, "journal_seq": 41, "journal_bytes": 18234,
     "ids": ["use-postgresql", "src-db-py", ...],    # the nodes, as columns in graph order
     "labels": ["use postgresql for the warm store", "src/db.py", ...],   # lowercased
     "kinds": ["correction", "file", ...], "weights": [0.82, 0.4, ...],
     "sources": ["e12", "", ...],                     # the source event of a node with only one
     "focus": [...],
     "fp": {"use-postgresql": "9c1e0a2b", ...},      # ledger fingerprints of nodes that can be news
     "rev": {"use-postgresql": 41, ...},             # journal seq at which that fingerprint appeared
     "file_intents": {"src-db-py": ["use-postgresql"], ...}}

and ``<sid>.tool-index.json``, the part a tool result reads (:func:`build_tool_index`).
See :class:`~rolling_graph.core.types.HookIndex`. The index is derived and never
authoritative: one that is missing, unreadable, of another version or older than the
journal is ignored (the hook then rebuilds it from the graph). Pure functions here; the
store does the file I/O.
"""

from __future__ import annotations

from rolling_graph.core.filepaths import file_id
from rolling_graph.core.ledger import NEWS_KINDS, fingerprint
from rolling_graph.core.model import INTENT_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from rolling_graph.core.types import GraphDoc, HookIndex, Ledger, Node, ToolIndex

#: 3: nodes as columns (2 had a dict per node, 1 positional lists); an index of another
#: version is rebuilt.
INDEX_VERSION = 3
#: The node columns of an index, each a list as long as ``ids``.
COLUMNS = ("ids", "labels", "kinds", "weights", "sources")


def _seen_in_output(node: Node) -> bool:
    """An error read from this session's tool output (not pulled from an earlier session)."""
    return node["kind"] == "error" and not node.get("pulled") and (node.get("facts") or {}).get("by") == "tool"


def build_index(graph: GraphDoc, previous: Mapping[str, Any] | None = None) -> HookIndex:
    """The index of ``graph``; ``previous`` (the last index file, as read) carries each
    node's ``rev``."""
    from rolling_graph.core.adjacency import adjacency

    nodes = graph["nodes"]
    focus = [f for f in graph["focus"] if f in nodes]
    # News is intent (decisions, corrections, preferences, errors). A name drifting into the
    # focus as weights decay is not news: the full block at startup, resume and compaction
    # carries the focus.
    # An error this session's own tool output showed is no news to it: the conversation has
    # the output (an error an earlier session left, or one the user reported, still is).
    speakable = {nid for nid, n in nodes.items() if n["kind"] in NEWS_KINDS and not _seen_in_output(n)}
    adj = adjacency(graph, speakable)
    file_intents: dict[str, list[str]] = {}
    for nid in speakable:
        if nodes[nid]["kind"] not in INTENT_KINDS:
            continue
        for _, other, _ in adj.get(nid, ()):
            if nodes[other]["kind"] == "file":
                file_intents.setdefault(other, []).append(nid)
        for path in nodes[nid].get("files", ()):
            file_intents.setdefault(file_id(path), []).append(nid)
    seq = graph["journal_seq"]
    fp = {nid: fingerprint(nid, graph, adj) for nid in speakable}
    old_fp = _map(previous, "fp")
    old_rev = _map(previous, "rev")
    rev = {nid: (old_rev.get(nid, seq) if old_fp.get(nid) == f else seq) for nid, f in fp.items()}
    return {
        "version": INDEX_VERSION,
        "journal_seq": seq,
        "journal_bytes": graph.get("journal_bytes", 0),
        "ids": list(nodes),
        "labels": [n["label"].lower() for n in nodes.values()],
        "kinds": [n["kind"] for n in nodes.values()],
        "weights": [round(n["weight"], 3) for n in nodes.values()],
        "sources": [n["sources"][0] if len(n["sources"]) == 1 else "" for n in nodes.values()],
        "focus": focus,
        "fp": fp,
        "rev": rev,
        "file_intents": {k: sorted(set(v)) for k, v in file_intents.items()},
    }


#: The tool index's version; one of another version is ignored (the full index is read).
TOOL_INDEX_VERSION = 1


def build_tool_index(index: HookIndex) -> ToolIndex:
    """What a tool result reads of ``index``: the node ids (is a name new to the graph?) and
    the decisions tied to files, with their fingerprints (:func:`tool_news`). A tool result
    comes 150–250 times a session; on a 2,000-node graph this is a quarter of the index to
    parse."""
    tied = {nid for ids in index["file_intents"].values() for nid in ids}
    return {
        "version": TOOL_INDEX_VERSION,
        "journal_seq": index["journal_seq"],
        "journal_bytes": index["journal_bytes"],
        "ids": index["ids"],
        "file_intents": index["file_intents"],
        "fp": {nid: f for nid, f in index["fp"].items() if nid in tied},
    }


def tool_view(tool: ToolIndex) -> tuple[HookIndex, frozenset[str]]:
    """The hook index a tool result works with (no labels, no news order: a tool result
    only hears of decisions tied to its files) and the graph's node ids."""
    index: HookIndex = {
        "version": INDEX_VERSION, "journal_seq": tool["journal_seq"], "journal_bytes": tool["journal_bytes"],
        "ids": [], "labels": [], "kinds": [], "weights": [], "sources": [],
        "focus": [], "fp": tool["fp"], "rev": {}, "file_intents": tool["file_intents"],
    }
    return index, frozenset(tool["ids"])


def _map(index: Mapping[str, Any] | None, key: str) -> Mapping[str, Any]:
    value = index.get(key) if index is not None else None
    return value if isinstance(value, dict) else {}


def _spaced_word_char(c: str) -> bool:
    """A letter, digit or ``_`` of a script that spaces its words (Latin, Greek, Cyrillic): beside
    a name, part of a longer word. Chinese, Japanese and Korean write a name against the next
    word (``config.tsのエラー``), which is no part of it."""
    return c == "_" or (c.isalnum() and c < "\u0500")


def says(text: str, name: str, *, before: str = "-", after: str = "-") -> bool:
    """Does ``text`` hold ``name`` as a whole: with no word character (:func:`_spaced_word_char`),
    nor one of ``before`` / ``after``, beside it (``workflow_test.go`` is not said by
    ``manual_workflow_test.go``)?"""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not (_spaced_word_char(text[at - 1]) or text[at - 1] in before)) and (
                end == len(text) or not (_spaced_word_char(text[end]) or text[end] in after)):
            return True
        at = text.find(name, at + 1)
    return False


def names(low: str, nid: str, label: str) -> bool:
    """Does lowercased text name this node: its label as a whole word (:func:`says`; any long
    label as a substring), or its id?"""
    if len(label) >= 3 and label in low and (len(label) >= 40 or says(low, label)):
        return True
    return len(nid) >= 4 and nid in low


#: Kinds a prompt never "names": a request's label is an earlier prompt in the user's words,
#: so a prompt repeating it ("continue", the same question) would restore it in full again;
#: a command's label is what the user types to run it ("run mise run test"): naming it asks
#: for a run, not for the files its last runs happened beside (its outcome comes as news).
NOT_NAMED_KINDS = frozenset({"request", "command"})


def named_in(index: HookIndex, text: str, exclude_source: str | None = None) -> list[str]:
    """The nodes the text names, in graph order, as :func:`rolling_graph.render.lod.mentions`
    decides (a node whose only source is ``exclude_source`` does not count)."""
    low = text.lower()
    return [nid for nid, label, kind, source in zip(index["ids"], index["labels"], index["kinds"], index["sources"], strict=True)
            if kind not in NOT_NAMED_KINDS and not (exclude_source and source == exclude_source) and names(low, nid, label)]


#: Most nodes the ledger keeps owing (news that did not fit a budget), most important first.
OWED_MAX = 30


def delta_order(index: HookIndex, ledger: Ledger) -> tuple[list[str], dict[str, str]]:
    """News for a prompt: nodes whose fingerprint changed after the ledger last looked
    (``_seq``) and differs from what was told, plus what is still owed; most important
    first (intent before names, focus first, then weight). Old nodes never told are not
    news: the full block on startup, resume and compaction carries what matters."""
    fp, rev, told = index["fp"], index["rev"], ledger["told"]
    seen = ledger["seq"]
    fresh = {nid: f for nid, f in fp.items() if rev.get(nid, 0) > seen and told.get(nid) != f}
    for nid in ledger["owed"]:
        if nid in fp and told.get(nid) != fp[nid]:
            fresh[nid] = fp[nid]
    if not fresh:
        return [], fresh
    focus = set(index["focus"])
    kinds, weights = index["kinds"], index["weights"]
    at = {nid: i for i, nid in enumerate(index["ids"]) if nid in fresh}
    order = sorted(at, key=lambda i: (kinds[at[i]] not in NEWS_KINDS, i not in focus, -weights[at[i]], i))
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
