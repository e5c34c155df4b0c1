"""The branch cache: a prompt that names a topic decodes that topic's nodes and links from
``<sid>.branches.cache``, not the whole graph, and says exactly what the whole graph says."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from conftest import context_of, prompt_payload, run_hook

from rolling_graph.core.adjacency import adjacency
from rolling_graph.core.config import load_settings
from rolling_graph.core.ids import edge_key
from rolling_graph.core.model import VERBS, make_edge, make_node
from rolling_graph.hook import handle_event
from rolling_graph.store import branches
from rolling_graph.store import files as sidecar_files
from rolling_graph.store.files import SessionFiles
from rolling_graph.store.sidecar import SidecarStore

SID = "branch-cache-session"
TOPICS = ["invoice proration", "billing webhook", "retry queue", "email provider", "tax rules", "refund flow"]


def a_session(n_nodes: int = 300, seed: int = 3) -> SidecarStore:
    """A graph of ``n_nodes`` named nodes and ~1.5 edges each, written as the probe writes it."""
    rng = random.Random(seed)
    nodes = [make_node(f"{rng.choice(TOPICS)} part {i}", "technical", rng.choice(["symbol", "file", "decision", "entity"]),
                       weight=round(rng.random(), 3)) for i in range(n_nodes)]
    ops = [{"op": "add", "path": f"/nodes/{n['id']}", "value": n} for n in nodes]
    for _ in range(n_nodes * 3 // 2):
        s, t = rng.sample([n["id"] for n in nodes], 2)
        verb = rng.choice(VERBS)
        ops.append({"op": "add", "path": f"/edges/{edge_key(s, verb, t)}", "value": make_edge(s, verb, t, 0.5)})
    store = SidecarStore(load_settings())
    store.apply_ops(SID, ops, kind="seed", rationale="a big session")
    # Resumed: the full block goes out and the ledger starts from it, so a prompt gets only
    # what it names (and what is new since).
    handle_event("session-start", {"session_id": SID, "cwd": "/home/dev/app", "source": "resume", "transcript_path": "/nonexistent"},
                 load_settings())
    return store


def cache_file(store: SidecarStore) -> Path:
    return Path(store.files.path(SID, "branches.cache"))


def test_a_subset_holds_exactly_what_the_whole_graph_says_of_those_nodes() -> None:
    store = a_session()
    graph = store.load(SID)
    with store.lock(SID):
        cached = store.load_branches(SID)
    assert cached is not None
    rng = random.Random(5)
    for _ in range(20):
        ids = rng.sample(sorted(graph["nodes"]), 8)
        linked = ids[:3]
        doc, adj = cached.subset(ids, linked)
        assert adj == {nid: lst for nid, lst in adjacency(graph, linked).items() if nid in linked}
        neighbours = {other for lst in adj.values() for _, other, _ in lst}
        assert set(doc["nodes"]) == set(ids) | neighbours
        assert all(doc["nodes"][nid] == graph["nodes"][nid] for nid in doc["nodes"])
        assert doc["journal_seq"] == graph["journal_seq"] and doc["edges"] == {}


def note_for(prompt: str) -> str:
    return context_of(handle_event("user-prompt-submit", prompt_payload(SID, prompt), load_settings()))


def test_a_prompt_naming_a_node_says_the_same_with_the_cache_as_with_the_whole_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    store = a_session()
    label = store.load(SID)["nodes"][next(iter(store.load(SID)["nodes"]))]["label"]
    home = Path(store.dir)
    shutil.copytree(home, home.with_name("sessions-copy"))
    with_cache = note_for(f"How does the {label} work?")
    state_with = store.load_state(SID)["ledger"]

    shutil.rmtree(home)
    shutil.copytree(home.with_name("sessions-copy"), home)
    cache_file(store).unlink()
    without_cache = note_for(f"How does the {label} work?")
    assert label in with_cache and "You named:" in with_cache
    assert with_cache == without_cache
    assert store.load_state(SID)["ledger"] == state_with


def test_with_a_current_cache_the_prompt_never_loads_the_whole_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    store = a_session()
    label = store.load(SID)["nodes"][next(iter(store.load(SID)["nodes"]))]["label"]

    def no_whole_graph(self: SessionFiles, sid: str) -> None:
        raise AssertionError("the whole graph was loaded")

    monkeypatch.setattr(SessionFiles, "load_graph_locked", no_whole_graph)
    assert label in note_for(f"Tell me about the {label}.")


def test_a_stale_damaged_or_foreign_cache_is_not_used() -> None:
    store = a_session(40)
    path = cache_file(store)
    with store.lock(SID):
        assert store.load_branches(SID) is not None
    good = path.read_bytes()

    path.write_bytes(b"\x00garbage")
    with store.lock(SID):
        assert store.load_branches(SID) is None

    path.write_bytes(good)  # the journal has grown past the graph file it was built from
    with open(store.files.path(SID, "journal.jsonl"), "ab") as fh:
        fh.write(b'{"seq": 999}\n')
    with store.lock(SID):
        assert store.load_branches(SID) is None


def test_a_graph_the_hook_process_writes_leaves_the_cache_stale_not_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    store = a_session(40)
    before = cache_file(store).read_bytes()
    monkeypatch.setattr(sidecar_files, "WRITE_BRANCHES", False)  # as rolling_graph.hook.entry sets it
    extra = make_node("ledger export", "technical", "symbol")
    linked = make_node("export_format", "technical", "symbol")  # a name that goes with it, so naming it restores something
    store.apply_ops(SID, [{"op": "add", "path": f"/nodes/{extra['id']}", "value": extra},
                          {"op": "add", "path": f"/nodes/{linked['id']}", "value": linked},
                          {"op": "add", "path": f"/edges/{edge_key(extra['id'], 'informs', linked['id'])}",
                           "value": make_edge(extra["id"], "informs", linked["id"], 0.5)}], kind="resume", rationale="a hook's write")
    assert cache_file(store).read_bytes() == before, "the hook did not pay for the cache"
    with store.lock(SID):
        assert store.load_branches(SID) is None, "built from another graph file: ignored"
    assert "ledger export" in note_for("What is the ledger export for?"), "the whole graph answers instead"


def test_the_hook_process_does_not_write_the_cache() -> None:
    store = a_session(40)
    cache_file(store).unlink()
    graph_file = Path(store.files.path(SID, "graph.json"))
    before = graph_file.stat().st_mtime_ns
    # The tests' hooks probe in sync mode: this decision is folded in and the graph written
    # by the hook process itself.
    proc = run_hook("user-prompt-submit", prompt_payload(SID, "Let's go with Postgres for the job queue, it is simpler."))
    assert proc.returncode == 0 and proc.stderr == b""
    assert graph_file.stat().st_mtime_ns != before and "postgres" in graph_file.read_text().lower()
    assert not cache_file(store).exists()


def test_the_cache_records_every_node_once() -> None:
    store = a_session(60)
    graph = store.load(SID)
    with store.lock(SID):
        cached = store.load_branches(SID)
    assert cached is not None and set(cached.nodes) == set(graph["nodes"])
    assert set(cached.links) == set(adjacency(graph))
    assert branches.read(str(cache_file(store)), (0, 0, 0), 0) is None, "another graph file's signature"


def test_news_the_index_has_and_the_graph_does_not_is_skipped_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    monkeypatch.setenv("ROLLING_GRAPH_PROBE_MODE", "async")  # no probe in the hook to rewrite the index first
    store = a_session(40)
    real = make_node("refund flow audit", "technical", "decision")
    store.apply_ops(SID, [{"op": "add", "path": f"/nodes/{real['id']}", "value": real}], kind="probe", rationale="news")
    index_path = Path(store.files.path(SID, "index.json"))
    index = json.loads(index_path.read_text())
    # An index ahead of its graph (as a crash between the two writes could leave it): a
    # node it lists as news that the graph does not hold.
    for column, value in (("ids", "ghost-node"), ("labels", "ghost node"), ("kinds", "decision"), ("weights", 0.99), ("sources", "e1")):
        index[column].insert(0, value)
    index["fp"]["ghost-node"], index["rev"]["ghost-node"] = "00000000", index["journal_seq"]
    index_path.write_text(json.dumps(index))
    note = note_for("Remind me of the ghost node and the refund flow audit.")
    assert "refund flow audit" in note and "ghost node" not in note
