"""The sidecar store: atomic, locked, journaled, and rebuildable from the journal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rolling_graph.core.config import load_settings
from rolling_graph.core.ids import InvalidSessionId, validate_session_id
from rolling_graph.core.model import make_edge, make_node
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore


def _store() -> SidecarStore:
    return SidecarStore(load_settings())


def _add_node_ops(label: str, kind: str = "concept") -> list[dict]:
    node = make_node(label, "technical", kind)
    return [{"op": "add", "path": f"/nodes/{node['id']}", "value": node}]


def test_a_fresh_session_loads_as_an_empty_versioned_document() -> None:
    doc = _store().load("fresh-session")
    assert doc["version"] == 1
    assert doc["nodes"] == {} and doc["edges"] == {} and doc["focus"] == []
    assert doc["gate"]["events_since_probe"] == 0 and doc["ledger"] == {"told": {}, "seq": -1, "owed": []}


def test_applied_ops_are_journaled_with_provenance() -> None:
    store = _store()
    seq = store.apply_ops("s1", _add_node_ops("PostgreSQL"), kind="patch", rationale="the user chose it", event_id="e3", backend="offline")
    assert seq == 1
    [entry] = read_journal(store.journal_path("s1"))
    assert entry["kind"] == "patch" and entry["event_id"] == "e3" and entry["backend"] == "offline"
    assert entry["rationale"] == "the user chose it" and entry["at"].endswith("Z")
    assert "postgresql" in store.load("s1")["nodes"]


@pytest.mark.parametrize("damage", ["missing", "truncated", "garbage", "not-an-object", "old-version"])
def test_damaged_sidecar_is_rebuilt_from_the_journal(damage: str) -> None:
    store = _store()
    store.apply_ops("s1", _add_node_ops("PostgreSQL", "decision"), kind="patch", rationale="r1")
    store.apply_ops("s1", _add_node_ops("pgvector"), kind="patch", rationale="r2")
    edge = make_edge("postgresql", "depends_on", "pgvector")
    store.apply_ops("s1", [{"op": "add", "path": "/edges/postgresql|depends_on|pgvector", "value": edge}], kind="patch", rationale="r3")
    before = store.load("s1")
    path = store.graph_path("s1")
    text = path.read_text()
    if damage == "missing":
        path.unlink()
    elif damage == "truncated":
        path.write_text(text[: len(text) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(200))
    elif damage == "not-an-object":
        path.write_text("[]")
    else:
        path.write_text(json.dumps({**json.loads(text), "version": 0}))
    after = store.load("s1")
    assert after["nodes"] == before["nodes"]
    assert after["edges"] == before["edges"]
    assert after["focus"] == before["focus"]
    assert json.loads(path.read_text())["nodes"] == before["nodes"], "the repaired file is written back"


def test_a_graph_that_lags_its_journal_is_rolled_forward() -> None:
    store = _store()
    store.apply_ops("s1", _add_node_ops("PostgreSQL"), kind="patch", rationale="r1")
    stale = store.graph_path("s1").read_bytes()
    store.apply_ops("s1", _add_node_ops("pgvector"), kind="patch", rationale="r2")
    store.graph_path("s1").write_bytes(stale)  # as if we crashed between journal and graph writes
    assert set(store.load("s1")["nodes"]) == {"postgresql", "pgvector"}


def test_a_torn_last_journal_line_is_skipped_and_the_next_entry_starts_clean() -> None:
    store = _store()
    store.apply_ops("s1", _add_node_ops("PostgreSQL"), kind="patch", rationale="r1")
    with open(store.journal_path("s1"), "ab") as fh:
        fh.write(b'{"seq": 2, "kind": "patch", "ops": [{"op": "add", "pa')  # killed mid-append
    store.graph_path("s1").unlink()
    assert set(store.load("s1")["nodes"]) == {"postgresql"}
    store.apply_ops("s1", _add_node_ops("pgvector"), kind="patch", rationale="r2")
    assert [e["seq"] for e in read_journal(store.journal_path("s1"))] == [1, 2]
    store.graph_path("s1").unlink()
    assert set(store.load("s1")["nodes"]) == {"postgresql", "pgvector"}


def test_an_op_that_cannot_apply_never_reaches_the_journal() -> None:
    store = _store()
    with pytest.raises(Exception):  # noqa: B017 - jsonpatch's conflict error
        store.apply_ops("s1", [{"op": "replace", "path": "/nodes/ghost/weight", "value": 1.0}], kind="patch", rationale="bad")
    assert read_journal(store.journal_path("s1")) == []


_WRITER = """
import sys
from rolling_graph.core.config import load_settings
from rolling_graph.core.model import make_node
from rolling_graph.store.sidecar import SidecarStore
store = SidecarStore(load_settings())
worker, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    node = make_node(f"worker {worker} item {i}", "technical")
    store.apply_ops("shared", [{"op": "add", "path": f"/nodes/{node['id']}", "value": node}], kind="patch", rationale=f"{worker}-{i}")
    with store.transaction("shared", graph=False) as doc:
        doc["counters"]["events"] = doc["counters"].get("events", 0) + 1
"""


def test_eight_processes_writing_one_session_lose_nothing() -> None:
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(w), "15"]) for w in range(8)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    store = _store()
    doc = store.load("shared")
    assert len(doc["nodes"]) == 8 * 15
    assert doc["counters"]["events"] == 8 * 15
    entries = read_journal(store.journal_path("shared"))
    assert [e["seq"] for e in entries] == list(range(1, 121)), "no interleaved or duplicated entries"
    assert doc["journal_seq"] == 120
    # The journal alone reproduces the same graph.
    store.graph_path("shared").unlink()
    rebuilt = store.load("shared")
    assert rebuilt["nodes"] == doc["nodes"] and rebuilt["edges"] == doc["edges"]


_KILLED_WRITER = """
from rolling_graph.core.config import load_settings
from rolling_graph.core.model import make_node
from rolling_graph.store.sidecar import SidecarStore
store = SidecarStore(load_settings())
i = 0
print("ready", flush=True)
while True:
    ops = []
    for j in range(200):
        node = make_node(f"item {i} {j} " + "x" * 80, "technical")
        ops.append({"op": "add", "path": f"/nodes/{node['id']}", "value": node})
    store.apply_ops("victim", ops, kind="patch", rationale=str(i))
    i += 1
"""


@pytest.mark.parametrize("delay", [0.3, 0.7, 1.2])
def test_a_process_killed_mid_write_leaves_a_loadable_sidecar(delay: float) -> None:
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    store = _store()
    doc = store.load("victim")
    entries = read_journal(store.journal_path("victim"))
    assert len(doc["nodes"]) == 200 * len(entries)
    assert doc["journal_seq"] == (entries[-1]["seq"] if entries else 0)


def test_session_ids_must_be_plain() -> None:
    assert validate_session_id("5c0375b4-57a5-4f26-b12d-d022ee4e51b7") == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    for bad in ("../x", "a/b", "..", "a\\b", "x" * 129, "", "\x00", "ses\u2028sion", 12, None):
        with pytest.raises(InvalidSessionId):
            validate_session_id(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidSessionId):
        _store().graph_path("../../etc/passwd")


def test_writes_leave_no_temp_files_behind(isolated_home: Path) -> None:
    store = _store()
    for i in range(5):
        store.apply_ops("s1", _add_node_ops(f"thing {i}"), kind="patch", rationale="r")
    leftovers = [p.name for p in (isolated_home / "sessions").iterdir() if ".tmp." in p.name]
    assert leftovers == []
    assert store.list_sessions() == ["s1"]


def test_reads_of_an_unchanged_graph_come_from_its_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.store import files as sidecar_files

    store = _store()
    store.apply_ops("s1", _add_node_ops("PostgreSQL"), kind="patch", rationale="r1")
    assert Path(store.files.path("s1", "graph.cache")).exists()
    graph_file = str(store.graph_path("s1"))
    real = sidecar_files.read_json

    def no_graph_json(path: str) -> dict | None:
        assert path != graph_file, "the graph file was parsed although its cache is current"
        return real(path)

    monkeypatch.setattr(sidecar_files, "read_json", no_graph_json)
    assert "postgresql" in store.load("s1")["nodes"]


def test_the_graph_cache_holds_the_graph_with_equal_strings_stored_once() -> None:
    import marshal

    store = _store()
    ops = [op for name in ("PostgreSQL", "Redis", "Kafka") for op in _add_node_ops(name)]
    store.apply_ops("s1", ops, kind="patch", rationale="r1")
    graph = json.loads(store.graph_path("s1").read_text())
    _, _, cached, edges = marshal.loads(Path(store.files.path("s1", "graph.cache")).read_bytes())
    assert {**cached, "edges": marshal.loads(edges)} == graph
    a, b = cached["nodes"]["postgresql"], cached["nodes"]["redis"]
    assert a["kind"] == b["kind"] and a["kind"] is b["kind"], "one object: marshal writes the second as a reference"
    assert a["domain"] is b["domain"] and a["last_activated"] is b["last_activated"]


def test_the_hook_process_writes_the_graph_cache_without_sharing_and_it_still_serves_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    import marshal

    from rolling_graph.store import files as sidecar_files
    from rolling_graph.store import graph_cache

    monkeypatch.setattr(sidecar_files, "SHARE_CACHE_VALUES", False)  # as rolling_graph.hook.main sets it
    monkeypatch.setattr(graph_cache, "shared_values", lambda value: pytest.fail("shared in the hook process"))
    store = _store()
    store.apply_ops("s1", [op for name in ("PostgreSQL", "Redis") for op in _add_node_ops(name)], kind="patch", rationale="r1")
    graph = json.loads(store.graph_path("s1").read_text())
    _, _, cached, edges = marshal.loads(Path(store.files.path("s1", "graph.cache")).read_bytes())
    assert {**cached, "edges": marshal.loads(edges)} == graph
    real = sidecar_files.read_json
    monkeypatch.setattr(sidecar_files, "read_json", lambda path: pytest.fail("parsed") if path == str(store.graph_path("s1")) else real(path))
    assert store.load("s1")["nodes"]["redis"]["label"] == "Redis"


def test_a_graph_file_replaced_behind_the_caches_back_is_read_from_the_file() -> None:
    from rolling_graph.store.atomic import write_atomic

    store = _store()
    store.apply_ops("s1", _add_node_ops("PostgreSQL"), kind="patch", rationale="r1")
    path = store.graph_path("s1")
    graph = json.loads(path.read_text())
    graph["nodes"]["postgresql"]["label"] = "PostgreSQL 16"
    write_atomic(str(path), json.dumps(graph).encode())  # e.g. an older version of the plugin
    assert store.load("s1")["nodes"]["postgresql"]["label"] == "PostgreSQL 16"


@pytest.mark.parametrize("cache", [b"", b"\x00garbage", "marshal-of-another-key"])
def test_a_damaged_or_foreign_graph_cache_is_ignored(cache: bytes | str) -> None:
    import marshal

    store = _store()
    store.apply_ops("s1", _add_node_ops("PostgreSQL"), kind="patch", rationale="r1")
    before = store.load("s1")
    if cache == "marshal-of-another-key":
        st = os.stat(store.graph_path("s1"))
        cache = marshal.dumps((("another-format", 4, 3, 10), (st.st_ino, st.st_size, st.st_mtime_ns), {"nodes": {}}))
    Path(store.files.path("s1", "graph.cache")).write_bytes(cache)  # type: ignore[arg-type]
    assert store.load("s1")["nodes"] == before["nodes"]


def test_sessions_are_listed_newest_first_and_hook_state_alone_is_no_session(isolated_home: Path) -> None:
    store = _store()
    store.apply_ops("older", _add_node_ops("first thing"), kind="patch", rationale="r")
    store.apply_ops("newer", _add_node_ops("second thing"), kind="patch", rationale="r")
    (isolated_home / "sessions" / "stray.state.json").write_text("{}")
    past = time.time() - 3600
    for name in os.listdir(isolated_home / "sessions"):
        if name.startswith("newer."):
            os.utime(isolated_home / "sessions" / name, (past, past))
    with store.hook_transaction("older", index=False) as view:  # a hook event touches only the state file
        view.state["counters"]["events"] = 1
    assert store.list_sessions() == ["older", "newer"]
    times = store.session_times()
    assert set(times) == {"older", "newer"} and times["newer"] < times["older"]


def test_a_sessions_project_is_read_from_its_first_journal_entry() -> None:
    store = _store()
    with store.transaction("s1") as doc:
        doc["project"] = "/work/app"
        store.commit_entry(doc, {"kind": "init", "rationale": "session started", "ops": [], "reasons": []})
    assert store.project("s1") == "/work/app"
    assert store.project("never-seen") is None
    assert [e["kind"] for e in store.read_journal("s1")] == ["init"]


def test_a_live_graph_decays_exactly_as_its_journal_rebuilds_it() -> None:
    # Probe entries hours apart carry `decay_at`: the live graph must keep the time it last
    # decayed, or the time factor never applies live while a rebuild applies it.
    store = _store()
    store.apply_ops("s1", _add_node_ops("PostgreSQL", "decision") + _add_node_ops("pgvector"), kind="patch", rationale="r0")
    for hour, label in ((6, "Alembic"), (12, "Dramatiq"), (18, "Sentry")):
        with store.transaction("s1") as doc:
            store.commit_entry(doc, {"kind": "patch", "rationale": label, "ops": _add_node_ops(label),
                                     "decay_at": f"2026-11-26T{hour:02d}:00:00Z"})
    live = store.load("s1")
    store.graph_path("s1").unlink()
    rebuilt = store.load("s1")
    assert {n: v["weight"] for n, v in live["nodes"].items()} == {n: v["weight"] for n, v in rebuilt["nodes"].items()}
    assert live["nodes"]["postgresql"]["weight"] < 0.5, "six-hour gaps decay what was not touched"


def _session_with_an_edge(store: SidecarStore) -> None:
    ops = [op for name in ("PostgreSQL", "pgvector") for op in _add_node_ops(name)]
    ops.append({"op": "add", "path": "/edges/postgresql|depends_on|pgvector", "value": make_edge("postgresql", "depends_on", "pgvector")})
    store.apply_ops("s1", ops, kind="patch", rationale="r1")


def test_a_transaction_may_leave_the_edges_unread_and_then_never_writes_the_graph() -> None:
    """``edges=False`` (the block after a compaction from a kept view): the nodes as ever, the
    edges refusing any read until read, and a graph read so is never written: the file keeps
    its edge."""
    from rolling_graph.store.graph_cache import EdgesNotRead

    store = _store()
    _session_with_an_edge(store)
    whole = store.load("s1")
    graph_file = store.graph_path("s1").read_bytes()
    with store.transaction("s1", graph=False, edges=False) as doc:
        assert doc["nodes"] == whole["nodes"] and doc["journal_seq"] == whole["journal_seq"]
        assert isinstance(doc["edges"], EdgesNotRead)
        for look in (lambda e: list(e), lambda e: len(e), lambda e: e.get("x"), lambda e: dict(e), lambda e: "x" in e, lambda e: e.items()):
            with pytest.raises(RuntimeError, match="edges were not read"):
                look(doc["edges"])
        doc["counters"]["injections"] += 1  # the state part is written back as ever
    assert store.load("s1")["counters"]["injections"] == whole["counters"]["injections"] + 1
    with pytest.raises(RuntimeError, match="without its edges"), store.transaction("s1", edges=False):
        pass  # (graph=True, the default: the graph is written back)
    assert store.graph_path("s1").read_bytes() == graph_file and store.load("s1")["edges"] == whole["edges"]
    tx = store.transaction("s1", edges=False)
    with tx as doc:
        tx.read_edges()
        assert doc["edges"] == whole["edges"]
    assert store.load("s1")["edges"] == whole["edges"]


def test_a_graph_behind_its_journal_is_rolled_forward_with_its_edges_when_they_were_not_asked_for() -> None:
    store = _store()
    _session_with_an_edge(store)
    stale = store.graph_path("s1").read_bytes(), Path(store.files.path("s1", "graph.cache")).read_bytes()
    store.apply_ops("s1", _add_node_ops("Redis"), kind="patch", rationale="r2")
    store.graph_path("s1").write_bytes(stale[0])  # as a crash between the journal's append and the graph's write leaves it
    Path(store.files.path("s1", "graph.cache")).unlink()
    with store.files.lock("s1"):
        graph = store.files.load_graph_locked("s1", edges=False)
    assert "redis" in graph["nodes"] and graph["edges"] == store.load("s1")["edges"] and graph["edges"]


def test_a_graph_cache_of_the_layout_before_is_ignored_and_the_graph_read_from_its_file() -> None:
    """An upgrade finds caches written before the edges had a part of their own: the graph file
    is read instead, the edges with it, and the next write makes the cache anew."""
    import marshal

    from rolling_graph.store import graph_cache

    store = _store()
    _session_with_an_edge(store)
    whole = store.load("s1")
    cache = Path(store.files.path("s1", "graph.cache"))
    key, made_from, rest, edges = marshal.loads(cache.read_bytes())
    cache.write_bytes(marshal.dumps((("rolling-graph-graph-cache-2", *key[1:]), made_from, {**rest, "edges": marshal.loads(edges)})))
    st = store.graph_path("s1").stat()
    assert graph_cache.read(str(cache), st) is None and graph_cache.read(str(cache), st, edges=False) is None
    with store.transaction("s1", graph=False, edges=False) as doc:
        assert doc["edges"] == whole["edges"] and doc["nodes"] == whole["nodes"]
