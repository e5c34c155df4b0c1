"""The injection ledger: what the conversation has already been told.

Injected context stays in Claude's history until compaction, so re-sending the same block
on every prompt wastes tokens. The ledger's ``told`` maps node id → a fingerprint of what
was shown (kind, label, summary, superseded status, and the node's meaningful edges); its
``seq`` and ``owed`` say how far it has looked and what did not fit. A prompt gets
only nodes that are new or whose fingerprint changed; weight drift alone is not news.
After a compaction, on resume or at startup the ledger is reset and the full block sent.
"""

from __future__ import annotations

from rolling_graph.core.model import INTENT_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rolling_graph.core.types import Adjacency, GraphDoc, Ledger

#: Edges whose appearance makes a node worth re-telling.
MEANINGFUL = frozenset({"supersedes", "decides", "blocks", "contradicts"})
#: Kinds a prompt delta may carry even when not near the focus: the session's intent, and errors.
NEWS_KINDS = frozenset({*INTENT_KINDS, "error"})
LEDGER_MAX = 5000


def fingerprint(nid: str, doc: GraphDoc, adj: Adjacency) -> str:
    n = doc["nodes"][nid]
    links = sorted(f"{d}{v}:{o}" for v, o, d in adj.get(nid, ()) if v in MEANINGFUL)
    raw = "|".join([n["kind"], n["label"], n.get("summary", ""), n.get("superseded_by", ""), *links])
    import zlib  # here: a tool result's hook, which never fingerprints, does not load it

    return format(zlib.crc32(raw.encode("utf-8")), "08x")


def record(ledger: Ledger, entries: dict[str, str]) -> None:
    """Remember what was shown (node id → fingerprint); bounded."""
    told = ledger["told"]
    told.update(entries)
    if len(told) > LEDGER_MAX:  # bounded: forget the oldest node entries
        for key in list(told)[: len(told) - LEDGER_MAX]:
            del told[key]
