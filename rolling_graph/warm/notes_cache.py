"""The tool-time notes as a hook reads them: the snapshot's ``notes`` section, kept beside the
snapshot one marshalled entry per file, an entry decoded only when a note asks for it.

Every tool event's hook reads the project's notes (:mod:`rolling_graph.render.notes`), and a
tool event asks for the entries of one or two files of a few hundred. Decoding all of them, and
loading the snapshot's format module (:mod:`rolling_graph.warm.snapshot`) to find them, was most
of what the notes cost a PostToolUse hook: interleaved on the bench's graph (300 files' notes),
the hook went from ~19.1–21.0 ms to ~18.3–20.2 ms, the notes' part of it from 0.7–1.4 ms to
0.3–0.45 ms. A prompt that names files looks at every entry's path and so decodes them all
(~0.1 ms more than one decode of the whole, at a prompt).
"""

from __future__ import annotations

import marshal
import os

from rolling_graph.warm.snapshot_files import cache_blob, read_cache, signature, snapshot_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from rolling_graph.core.types import NoteTable

PART = "notes"


class Notes:
    """File id → note entry (a :class:`rolling_graph.core.types.NoteTable`), each entry decoded
    from its own bytes the first time it is asked for. An entry that does not decode is None (a
    reader checks every entry's shape anyway)."""

    __slots__ = ("_blobs", "_entries")

    def __init__(self, blobs: dict[str, Any]) -> None:
        self._blobs = blobs
        self._entries: dict[str, Any] = {}

    def __getitem__(self, key: str, /) -> Any:
        try:
            return self._entries[key]
        except KeyError:
            pass
        blob = self._blobs[key]  # KeyError for a file the notes do not know
        try:
            entry = marshal.loads(blob) if isinstance(blob, bytes) else None
        except (EOFError, ValueError, TypeError):
            entry = None
        self._entries[key] = entry
        return entry

    def get(self, key: str, /) -> Any:
        return self[key] if key in self._blobs else None

    def __contains__(self, key: object) -> bool:
        return key in self._blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def items(self) -> Iterator[tuple[str, Any]]:
        for key in self._blobs:
            yield key, self[key]


def blob(st: os.stat_result, project_root: str, notes: dict[str, Any]) -> bytes:
    """The notes' read cache (:func:`rolling_graph.warm.snapshot_files.cache_file`, part
    :data:`PART`) of the snapshot file whose ``os.stat`` is ``st``: each entry marshalled apart."""
    return cache_blob(PART, st, project_root, {str(fid): marshal.dumps(entry) for fid, entry in notes.items()})


def read_notes(home: str | os.PathLike[str], project_root: str) -> NoteTable:
    """The snapshot's ``notes`` section (what tool-time notes draw from,
    :mod:`rolling_graph.warm.notes`): file id → entry, or empty. From the read cache the writer
    leaves beside the snapshot when it was made from exactly this snapshot file (a
    :class:`Notes`); else from the snapshot itself (a dict). Each entry is checked again when a
    note is rendered (:mod:`rolling_graph.render.notes`)."""
    try:
        st = os.stat(snapshot_file(home, project_root))
    except OSError:
        return {}
    made_from = signature(st)
    blobs = read_cache(home, project_root, PART, made_from)
    if isinstance(blobs, dict):
        return Notes(blobs)
    # A cache of the layout before (the entries whole), made from this very snapshot file by an
    # older version: read as it is until the next snapshot replaces it (an upgrade's first
    # session would otherwise parse the snapshot on every tool event).
    whole = read_cache(home, project_root, PART, made_from, layout=1)
    if isinstance(whole, dict):
        return whole
    from rolling_graph.warm.snapshot import read_snapshot

    snap = read_snapshot(home, project_root)
    found = snap.get("notes") if snap is not None else None
    return found if isinstance(found, dict) else {}
