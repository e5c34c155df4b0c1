"""warm/notes_cache.py: a tool event's hook decodes the notes of the files it touched, and only those."""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path

import pytest

from rolling_graph.core.filepaths import file_id
from rolling_graph.warm import notes_cache, snapshot_files
from rolling_graph.warm.snapshot_write import write_snapshot

PROJECT = "/work/app"


def entry(path: str, sessions: int) -> dict[str, object]:
    return {"path": path, "sessions": sessions, "edits": 2 * sessions, "what": "`load_config`", "with": [["src/b.py", 0.5, 2]]}


NOTES = {file_id(f"src/m{i}.py"): entry(f"src/m{i}.py", i + 1) for i in range(40)}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    write_snapshot(tmp_path, PROJECT, {"generated_at": "2026-11-27T00:00:00Z", "nodes": [], "edges": [], "notes": NOTES})
    return tmp_path


def test_the_notes_read_from_their_cache_are_the_snapshots_and_only_the_asked_entries_are_decoded(home: Path,
                                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    notes = notes_cache.read_notes(home, PROJECT)
    assert isinstance(notes, notes_cache.Notes), "read from the cache beside the snapshot, not from the snapshot"
    decoded: list[bytes] = []
    real = marshal.loads
    monkeypatch.setattr(notes_cache.marshal, "loads", lambda blob: decoded.append(blob) or real(blob))
    asked = file_id("src/m7.py")
    assert notes.get(asked) == NOTES[asked]
    assert notes[asked] is notes[asked], "decoded once"
    assert notes.get(file_id("src/nowhere.py")) is None
    assert len(decoded) == 1, "a tool event touching one file decodes that file's entry alone"
    assert len(notes) == len(NOTES) and bool(notes)
    assert dict(notes.items()) == NOTES, "a prompt looks at every entry: all of them, as the snapshot holds them"


def test_a_damaged_entry_is_none_and_the_others_are_read(home: Path) -> None:
    good, bad = file_id("src/m1.py"), file_id("src/m2.py")
    notes = notes_cache.Notes({good: marshal.dumps(NOTES[good]), bad: b"\xff\x00garbage", "other": 42})
    assert notes[good] == NOTES[good]
    assert notes[bad] is None and notes["other"] is None
    with pytest.raises(KeyError):
        notes["missing"]


def test_a_cache_of_the_layout_before_is_read_whole_and_one_of_another_snapshot_file_not_at_all(home: Path) -> None:
    cache = Path(snapshot_files.cache_file(home, PROJECT, notes_cache.PART))
    snapshot = snapshot_files.snapshot_file(home, PROJECT)
    st = os.stat(snapshot)
    # An older version's cache of this very snapshot file: the entries whole, under layout 1's key.
    # Read as it is (as that version did) until the next snapshot replaces it.
    layout_before = ("rgraph-notes-1", marshal.version, *sys.version_info[:2])
    older = {file_id("src/m1.py"): NOTES[file_id("src/m1.py")]}
    cache.write_bytes(marshal.dumps((layout_before, snapshot_files.signature(st), PROJECT, older)))
    assert notes_cache.read_notes(home, PROJECT) == older
    # Caches of either layout made from another snapshot file: the snapshot itself is read.
    os.utime(snapshot, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert notes_cache.read_notes(home, PROJECT) == NOTES
    cache.write_bytes(notes_cache.blob(st, PROJECT, {"x": {"path": "forged.py"}}))
    notes = notes_cache.read_notes(home, PROJECT)
    assert isinstance(notes, dict) and notes == NOTES


def test_no_snapshot_means_no_notes(tmp_path: Path) -> None:
    assert not notes_cache.read_notes(tmp_path, PROJECT)
