"""Forgetting in a session's graph (``rgraph forget``): the user removes nodes, and may put
them back.

Both are journaled like every change (:meth:`rolling_graph.store.sidecar.SidecarStore.commit_entry`):
a ``forget`` entry removes the nodes and every edge at either end, and keeps what it removed,
as it was, beside its ops (``removed``: data, never applied); an ``unforget`` entry adds
them back from there. A rebuild from the journal does the same. The warm graph's side is
:mod:`rolling_graph.warm.forget`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from rolling_graph.core.errors import UserError
from rolling_graph.store import journal as journal_mod
from rolling_graph.store.atomic import write_atomic

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rolling_graph.core.types import Edge, JournalEntry, Node, PatchOp
    from rolling_graph.store.sidecar import SidecarStore


def forget(store: SidecarStore, sid: str, node_ids: list[str], *, rationale: str) -> list[str]:
    """Remove nodes, with every edge at either end, because the user said so; journaled
    (kind ``forget``), so a rebuild from the journal forgets them too. New activity may
    bring a name back as a new node. Returns the ids that existed and were removed."""
    with store.transaction(sid) as doc:
        found = [n for n in dict.fromkeys(node_ids) if n in doc["nodes"]]
        if found:
            gone = set(found)
            edges = {k: e for k, e in doc["edges"].items() if e.get("source") in gone or e.get("target") in gone}
            ops: list[PatchOp] = [{"op": "remove", "path": f"/edges/{_pointer(key)}"} for key in edges]
            ops += [{"op": "remove", "path": f"/nodes/{_pointer(nid)}"} for nid in found]
            store.commit_entry(doc, {
                "kind": "forget", "rationale": rationale, "event_id": None, "backend": "user", "reasons": ["forget"], "ops": ops,
                # What went, as it was: not applied (only ``ops`` change the graph), kept for ``unforget``.
                "removed": {"nodes": {nid: doc["nodes"][nid] for nid in found}, "edges": edges},
            })
    return found


class AmbiguousName(UserError):
    """A name that matches more than one node: refused, with the list, so nothing is
    removed, put back or shown that the user did not name."""

    def __init__(self, name: str, matches: Mapping[str, str]) -> None:
        self.name, self.matches = name, dict(matches)
        listed = ", ".join(f"{label} ({nid})" for nid, label in self.matches.items())
        super().__init__(f"{name!r} names more than one node: {listed}; give the id of the one meant")


def name_matches(name: str, labels: Mapping[str, str]) -> list[str]:
    """Every id ``name`` names among ``labels`` (id -> label): the id itself, and the nodes
    whose label is ``name`` as typed (or, when none is, equal ignoring case). The typed name
    is never slugified nor cut to a fragment: ``session.cwd`` never names ``session_cwd``."""
    hits = [name] if name in labels else []
    exact = [nid for nid, label in labels.items() if label == name and nid != name]
    if not hits and not exact:
        folded = name.casefold()
        exact = [nid for nid, label in labels.items() if label.casefold() == folded]
    return list(dict.fromkeys([*hits, *exact]))


def named_ids(names: list[str], labels: Mapping[str, str]) -> list[str]:
    """The ids ``names`` name among ``labels`` (:func:`name_matches`); a name that matches
    more than one node raises :class:`AmbiguousName` (forgetting is for good: never a guess)."""
    ids: list[str] = []
    for name in names:
        found = name_matches(name, labels)
        if len(found) > 1:
            raise AmbiguousName(name, {nid: labels[nid] for nid in found})
        ids += found
    return list(dict.fromkeys(ids))


def forgotten_records(entries: Iterable[JournalEntry]) -> tuple[dict[str, tuple[Node, str]], dict[str, Edge]]:
    """What the ``forget`` entries among ``entries`` removed: each node as it was with when
    (the last forget of it wins), and the edges."""
    nodes: dict[str, tuple[Node, str]] = {}
    edges: dict[str, Edge] = {}
    for entry in entries:
        removed = entry.get("removed") if entry.get("kind") == "forget" else None
        if isinstance(removed, dict):
            nodes.update({nid: (node, str(entry.get("at") or "")) for nid, node in (removed.get("nodes") or {}).items() if isinstance(node, dict)})
            edges.update({k: e for k, e in (removed.get("edges") or {}).items() if isinstance(e, dict)})
    return nodes, edges


def unforget(store: SidecarStore, sid: str, node_ids: list[str], *, rationale: str) -> list[str]:
    """Put back nodes :func:`forget` removed, as they were then, with their edges whose
    other end is in the graph; journaled (kind ``unforget``). A node in the graph again
    by now (new work on its name) is left as it is. Returns the ids put back."""
    removed_nodes, removed_edges = forgotten_records(store.read_journal(sid))
    with store.transaction(sid) as doc:
        back = [nid for nid in node_ids if nid in removed_nodes and nid not in doc["nodes"]]
        if back:
            present = set(doc["nodes"]) | set(back)
            ops: list[PatchOp] = [{"op": "add", "path": f"/nodes/{_pointer(nid)}", "value": removed_nodes[nid][0]} for nid in back]
            ops += [
                {"op": "add", "path": f"/edges/{_pointer(key)}", "value": edge}
                for key, edge in removed_edges.items()
                if key not in doc["edges"] and edge.get("source") in present and edge.get("target") in present
                and (edge.get("source") in back or edge.get("target") in back)
            ]
            store.commit_entry(
                doc, {"kind": "unforget", "rationale": rationale, "event_id": None, "backend": "user", "reasons": ["unforget"], "ops": ops}
            )
    return back


#: What a purged text reads as, wherever it was.
PURGED = "[purged]"
#: Keys whose values are structure (ids, pointers, times), never a text to erase.
_STRUCTURAL = frozenset({"path", "op", "id", "source", "target", "relationship", "event_id", "event_ids", "session_id",
                         "project", "at", "kind", "backend", "decay_at", "seq", "domain", "model", "reasons"})


class PurgeReport(NamedTuple):
    """What :func:`purge` erased: the node ids, the journal entries that held their text,
    and how many distinct texts (labels, summaries) were erased."""

    ids: list[str]
    entries: int
    texts: int


def purge(store: SidecarStore, sid: str, node_ids: list[str], *, rationale: str) -> PurgeReport:
    """Erase nodes and their text from the session, for good (``rgraph forget --purge``):
    the nodes go (journaled, kind ``forget``, with nothing kept to put back), and under the
    session's lock the journal is rewritten with every occurrence of their labels and
    summaries replaced by :data:`PURGED` (ops, rationales, earlier ``forget`` records,
    events), as are the graph's other nodes and the queued events. Returns what was
    erased. Cannot be undone."""
    with store.transaction(sid) as doc:
        removed_nodes, _ = forgotten_records(store.read_journal(sid))
        found: list[str] = []
        texts: set[str] = set()
        for nid in dict.fromkeys(node_ids):
            node = doc["nodes"].get(nid) or (removed_nodes[nid][0] if nid in removed_nodes else None)
            if node is None:
                continue
            found.append(nid)
            texts |= {str(t) for t in (node.get("label"), node.get("summary")) if isinstance(t, str) and t.strip()}
        if not found:
            return PurgeReport([], 0, 0)
        present = [nid for nid in found if nid in doc["nodes"]]
        if present:
            gone = set(present)
            edges = [k for k, e in doc["edges"].items() if e.get("source") in gone or e.get("target") in gone]
            ops: list[PatchOp] = [{"op": "remove", "path": f"/edges/{_pointer(key)}"} for key in edges]
            ops += [{"op": "remove", "path": f"/nodes/{_pointer(nid)}"} for nid in present]
            store.commit_entry(doc, {"kind": "forget", "rationale": rationale, "event_id": None, "backend": "user",
                                     "reasons": ["forget", "purge"], "ops": ops, "purged": True})
        ordered = sorted(texts, key=len, reverse=True)  # the longer text first: a label holding the summary
        erased = set(found)
        entries = store.read_journal(sid)
        scrubbed = [_scrub_entry(e, ordered, erased) for e in entries]
        touched = sum(1 for a, b in zip(entries, scrubbed, strict=True) if a != b)
        write_atomic(store.journal_path(sid), b"".join(journal_mod.encode(e) for e in scrubbed))
        for key in ("nodes", "edges", "gate"):
            doc[key] = _scrub(doc[key], ordered)
    return PurgeReport(found, touched, len(ordered))


def _scrub_entry(entry: JournalEntry, texts: list[str], ids: set[str]) -> JournalEntry:
    """``entry`` with ``texts`` erased, and nothing of ``ids`` kept in a ``removed`` record."""
    out: JournalEntry = _scrub(entry, texts)
    removed = out.get("removed")
    if isinstance(removed, dict):
        nodes = {k: v for k, v in (removed.get("nodes") or {}).items() if k not in ids}
        edges = {k: v for k, v in (removed.get("edges") or {}).items()
                 if isinstance(v, dict) and v.get("source") not in ids and v.get("target") not in ids}
        out["removed"] = {"nodes": nodes, "edges": edges}
    return out


def _scrub(value: Any, texts: list[str], key: str | None = None) -> Any:
    if isinstance(value, str):
        if key in _STRUCTURAL:
            return value
        for text in texts:
            if text in value:
                value = value.replace(text, PURGED)
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, texts, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, texts, key) for v in value]
    return value


def _pointer(key: str) -> str:
    """One RFC 6901 pointer part: ``~`` and ``/`` escaped (an edge key may hold neither, but
    a pointer is only right escaped)."""
    return key.replace("~", "~0").replace("/", "~1")
