"""The session journal: an append-only JSONL log of every change to the hot graph.

The journal is written *ahead* of the sidecar: an entry is appended (and fsynced) before
the graph file that reflects it is replaced. The graph can therefore always be rebuilt,
or rolled forward after a crash, by folding :func:`apply_entry` over the journal.

An entry::

    {"seq": 12, "at": "2026-11-25T21:04:00Z", "event_id": "e41", "kind": "patch",
     "backend": "offline", "rationale": "...", "reasons": ["decision"],
     "ops": [...effective RFC 6902 ops...], "decay_at": "2026-11-25T21:04:00Z"}

``kind`` is one of ``patch`` (a probe's validated proposal), ``rejected`` (a proposal that
failed validation: ``error`` says why; nothing applied), ``activate`` (an expansion or
mention), ``resume`` / ``pull`` / ``seed`` (nodes brought in from the warm graph). Only
the ``ops`` and ``decay_at`` of an entry change the graph, always through the same
deterministic code, live and in a rebuild.
"""

from __future__ import annotations

import os

from . import jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .config import DecaySettings

#: Entry kinds that carry no change to the graph.
NON_MUTATING = frozenset({"rejected", "note"})


def append(path: str | os.PathLike[str], entry: dict[str, Any]) -> int:
    """Append one entry as a JSON line, fsync it, and return the journal's new size.

    The caller holds the session lock, so lines never interleave.
    """
    line = (jsonio.dumps(entry) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        # A previous writer killed mid-line leaves a fragment with no newline: start afresh.
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read_journal(path: str | os.PathLike[str], offset: int = 0) -> list[dict[str, Any]]:
    """All well-formed entries from ``offset`` on; torn or garbage lines are skipped."""
    entries: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as fh:
            if offset:
                fh.seek(offset)
            for raw in fh:
                raw = raw.strip()
                if not raw:
                    continue
                try:
                    entry = jsonio.loads(raw)
                except (ValueError, UnicodeDecodeError):
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("seq"), int):
                    entries.append(entry)
    except FileNotFoundError:
        return []
    return entries


def journal_size(path: str | os.PathLike[str]) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def pointer_parts(path: Any) -> list[str]:
    """An RFC 6901 JSON pointer's unescaped parts (``[]`` for anything else)."""
    if not isinstance(path, str) or not path.startswith("/"):
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def op_touches(op: dict[str, Any], node_id: str) -> bool:
    """Whether one RFC 6902 op addresses ``node_id`` or an edge with it at either end."""
    for field in ("path", "from"):
        parts = pointer_parts(op.get(field))
        if len(parts) < 2:
            continue
        if parts[0] == "nodes" and parts[1] == node_id:
            return True
        if parts[0] == "edges" and node_id in parts[1].split("|")[::2]:
            return True
    return False


def _member(op: Any) -> tuple[str, str] | None:
    """``("nodes" | "edges", key)`` when ``op`` adds one whole node or edge, else None."""
    if not isinstance(op, dict) or op.get("op") != "add" or "value" not in op:
        return None
    parts = pointer_parts(op.get("path"))
    if len(parts) != 2 or parts[0] not in ("nodes", "edges") or not parts[1]:
        return None
    return parts[0], parts[1]


def whole_member_adds(ops: list[Any]) -> bool:
    """Every op adds a whole node (``/nodes/<id>``) or edge (``/edges/<key>``)."""
    return all(_member(op) is not None for op in ops)


def _apply_ops(graph: dict[str, Any], ops: list[Any]) -> None:
    """RFC 6902, through jsonpatch; adds of whole nodes and edges (resume, pull: the
    SessionStart hook's case) are set directly, with jsonpatch's result and without its
    import (it loads ``re``, ~10 ms of the hook)."""
    if whole_member_adds(ops) and all(isinstance(graph.get(_member(op)[0]), dict) for op in ops):  # type: ignore[index]
        for op in ops:
            head, key = _member(op)  # type: ignore[misc]
            graph[head][key] = op["value"]
        return
    import jsonpatch

    jsonpatch.apply_patch(graph, ops, in_place=True)


def apply_entry(graph: dict[str, Any], entry: dict[str, Any], decay: DecaySettings) -> None:
    """Apply one journal entry to a graph document, in place.

    This is the only way the graph changes: the probe runner, activations, resume and a
    rebuild from the journal all go through it, so live and rebuilt graphs agree.
    """
    from . import decay as decay_mod
    from . import focus as focus_mod
    from .model import parse_iso

    if entry.get("kind") not in NON_MUTATING:
        ops = entry.get("ops") or []
        if ops:
            _apply_ops(graph, ops)
        decay_at = parse_iso(entry.get("decay_at"))
        if decay_at is not None:
            decay_mod.decay_graph(graph, decay_at, decay)
        at = parse_iso(entry.get("at"))
        if at is not None:
            graph["focus"] = focus_mod.focus_cluster(graph, at, decay)
    seq = entry.get("seq", 0)
    if isinstance(seq, int) and seq > graph.get("journal_seq", 0):
        graph["journal_seq"] = seq


def rebuild(base: dict[str, Any], entries: list[dict[str, Any]], decay: DecaySettings) -> dict[str, Any]:
    """Fold entries (in ``seq`` order, skipping ones already applied) into ``base``."""
    applied = base.get("journal_seq", 0)
    for entry in sorted(entries, key=lambda e: e["seq"]):
        if entry["seq"] <= applied:
            continue
        apply_entry(base, entry, decay)
        applied = entry["seq"]
    return base
