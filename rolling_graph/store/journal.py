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
mention), ``resume`` / ``pull`` / ``seed`` (nodes brought in from the warm graph),
``forget`` / ``unforget`` (nodes and their edges the user removed, and put back:
``rgraph forget``, :mod:`rolling_graph.store.forget`). Only
the ``ops`` and ``decay_at`` of an entry change the graph, always through the same
deterministic code, live and in a rebuild.
"""

from __future__ import annotations

import os

from rolling_graph.core import jsonio
from rolling_graph.core.ids import pointer_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from rolling_graph.core.config import DecaySettings
    from rolling_graph.core.types import GraphDoc, JournalEntry, PatchOp

#: Entry kinds that carry no change to the graph.
NON_MUTATING = frozenset({"rejected", "note"})


def append(path: str | os.PathLike[str], entry: JournalEntry) -> int:
    """Append one entry as a JSON line, fsync it, and return the journal's new size.

    The caller holds the session lock, so lines never interleave.
    """
    return append_many(path, [entry])


def encode(entry: JournalEntry) -> bytes:
    """One journal line. A lone surrogate (from a transcript or a payload) is kept as its
    JSON escape: the line stays valid UTF-8 and reads back as it was written."""
    return (jsonio.dumps(entry) + "\n").encode("utf-8", "backslashreplace")


def append_many(path: str | os.PathLike[str], entries: list[JournalEntry]) -> int:
    """Append entries as JSON lines in one write, fsync, and return the journal's new size.

    One write: a probe's batch (its patch and the tool fold after it) lands together. A
    process killed during it leaves at most a torn last line, which readers skip (and which
    the next append starts after); nothing of a batch is written twice.
    """
    data = b"".join(encode(e) for e in entries)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        # A previous writer killed mid-line leaves a fragment with no newline: start afresh.
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read_journal(path: str | os.PathLike[str], offset: int = 0, bad: list[int] | None = None) -> list[JournalEntry]:
    """All well-formed entries from ``offset`` on; torn or garbage lines are skipped (their
    byte offsets appended to ``bad`` when it is given)."""
    entries: list[JournalEntry] = []
    try:
        with open(path, "rb") as fh:
            if offset:
                fh.seek(offset)
            at = offset
            for line in fh:
                start, at = at, at + len(line)
                raw = line.strip()
                if not raw:
                    continue
                try:
                    entry: JournalEntry = jsonio.loads(raw)  # our own lines: their shape is JournalEntry
                except (ValueError, UnicodeDecodeError, RecursionError):
                    entry = None  # type: ignore[assignment]
                if isinstance(entry, dict) and isinstance(entry.get("seq"), int) and not isinstance(entry["seq"], bool):
                    entries.append(entry)
                elif bad is not None:
                    bad.append(start)
    except FileNotFoundError:
        return []
    return entries


def journal_size(path: str | os.PathLike[str]) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def op_touches(op: Mapping[str, object], node_id: str) -> bool:
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


def _member(op: PatchOp) -> tuple[str, str] | None:
    """``("nodes" | "edges", key)`` when ``op`` adds one whole node or edge, else None."""
    if not isinstance(op, dict) or op.get("op") != "add" or "value" not in op:
        return None
    path = op.get("path")
    if not isinstance(path, str) or not path.startswith(("/nodes/", "/edges/")):
        return None
    key = path[7:]  # (both prefixes are seven characters; a new session adds 600 members)
    if not key or "/" in key:
        return None
    if "~" in key:  # RFC 6901's escapes, as pointer_parts reads them
        key = key.replace("~1", "/").replace("~0", "~")
    return path[1:6], key


def whole_member_adds(ops: list[PatchOp]) -> bool:
    """Every op adds a whole node (``/nodes/<id>``) or edge (``/edges/<key>``)."""
    return all(_member(op) is not None for op in ops)


def _apply_ops(graph: GraphDoc, ops: list[PatchOp]) -> None:
    """RFC 6902, through jsonpatch; adds of whole nodes and edges (resume, pull: the
    SessionStart hook's case) are set directly, with jsonpatch's result and without its
    import (it loads ``re``, ~10 ms of the hook)."""
    adds = [m for m in map(_member, ops) if m is not None]
    if len(adds) == len(ops):
        for (head, key), op in zip(adds, ops, strict=True):
            if head == "nodes":
                graph["nodes"][key] = _fresh(op["value"])
            else:
                graph["edges"][key] = _fresh(op["value"])
        return
    import copy

    import jsonpatch

    # The graph must not share objects with the entry: decay changes weights in place, and
    # the entry may be written to the journal after that (a probe's batch is one write).
    jsonpatch.apply_patch(graph, copy.deepcopy(ops), in_place=True)


def _fresh(value: Any) -> Any:
    """A copy of a node or edge deep enough that changing the graph never changes the entry
    (their nested values are flat: ``sources`` and ``files`` lists, the ``facts`` map)."""
    if not isinstance(value, dict):
        return value
    return {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v) for k, v in value.items()}


def apply_entry(graph: GraphDoc, entry: JournalEntry, decay: DecaySettings) -> None:
    """Apply one journal entry to a graph document, in place.

    This is the only way the graph changes: the probe runner, activations, resume and a
    rebuild from the journal all go through it, so live and rebuilt graphs agree.
    """
    from rolling_graph.core import decay as decay_mod
    from rolling_graph.core import focus as focus_mod
    from rolling_graph.core.clock import parse_iso

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
    if seq > graph["journal_seq"]:
        graph["journal_seq"] = seq


class Loss:
    """What a rebuild could not restore: seqs missing from the journal (a garbage or torn
    line where an entry was), and entries present but unappliable (skipped whole)."""

    def __init__(self) -> None:
        self.missing: list[int] = []
        self.skipped: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.missing or self.skipped)

    def describe(self) -> str:
        parts = []
        if self.missing:
            parts.append(f"{len(self.missing)} unreadable (seq {_spans(self.missing)})")
        if self.skipped:
            parts.append(f"{len(self.skipped)} unappliable (seq {_spans(self.skipped)})")
        return "journal entries lost: " + "; ".join(parts)


def _spans(seqs: list[int]) -> str:
    out: list[str] = []
    for s in sorted(seqs):
        if out and out[-1].split("-")[-1] == str(s - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{s}"
        else:
            out.append(str(s))
    return ", ".join(out[:6]) + (" …" if len(out) > 6 else "")


def _ops_shaped(entry: JournalEntry) -> bool:
    ops = entry.get("ops")
    if ops is None:
        return True
    return isinstance(ops, list) and all(
        isinstance(op, dict) and isinstance(op.get("op"), str) and isinstance(op.get("path"), str) for op in ops
    )


def rebuild(
    base: GraphDoc, entries: list[JournalEntry], decay: DecaySettings, loss: Loss | None = None, *, careful: bool = False
) -> GraphDoc:
    """Fold entries (in ``seq`` order, skipping ones already applied) into ``base``; returns
    the graph (``base`` itself unless ``careful``).

    Seqs absent from the journal (a garbage or torn line where an entry was) are recorded
    in ``loss.missing``. ``careful``: each entry is applied to a copy, and one that cannot
    apply is skipped whole (its seq in ``loss.skipped``); the graph's ``journal_seq`` still
    ends at the highest seq read, so new entries never reuse one. Otherwise an entry that
    cannot apply raises, and the caller folds again, carefully, from a fresh base.
    """
    applied = base["journal_seq"]
    for entry in sorted(entries, key=lambda e: e["seq"]):
        seq = entry["seq"]
        if seq <= applied:
            continue
        if loss is not None:
            loss.missing.extend(range(applied + 1, seq))
        if not careful:
            apply_entry(base, entry, decay)
        else:
            trial: GraphDoc = jsonio.loads(jsonio.dumps(base))
            try:
                if not _ops_shaped(entry):
                    raise ValueError("ops are not RFC 6902 operations")
                apply_entry(trial, entry, decay)
            except Exception:  # any failure of one entry: skip it whole, keep the rest
                if loss is not None:
                    loss.skipped.append(seq)
                base["journal_seq"] = seq
            else:
                base = trial
        applied = seq
    return base
