"""The session document is normalised once, when it is loaded: one set of defaults, and
readers that trust the shape (rolling_graph.core.types) afterwards."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from conftest import context_of, prompt_payload

from rolling_graph.core.config import load_settings
from rolling_graph.core.model import DEFAULT_WEIGHT, make_edge, make_node, new_gate_state
from rolling_graph.core.normalize import normalize_graph, normalize_node, normalize_state
from rolling_graph.hook import handle_event
from rolling_graph.render.lod import render_lod
from rolling_graph.store.index import INDEX_VERSION
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm.snapshot import snapshot_ops

SID = "model-session"
NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def _store() -> SidecarStore:
    return SidecarStore(load_settings())


def _seed(store: SidecarStore) -> None:
    """A session with one decision and one file, journaled (what the hook would write)."""
    decision = make_node("Use PostgreSQL for the warm store", "technical", "decision", node_id="use-postgresql", weight=0.8)
    file = make_node("src/db.py", "technical", "file", node_id="src-db-py", weight=0.4)
    edge = make_edge("use-postgresql", "edits", "src-db-py")
    ops = [
        {"op": "add", "path": "/nodes/use-postgresql", "value": decision},
        {"op": "add", "path": "/nodes/src-db-py", "value": file},
        {"op": "add", "path": "/edges/use-postgresql|edits|src-db-py", "value": edge},
    ]
    store.apply_ops(SID, ops, kind="seed", rationale="test graph")


def _rewrite_graph(store: SidecarStore, change: object) -> None:
    """Edit the graph file by hand (as an older version or a person might), dropping the
    read cache so the next load parses the file."""
    path = store.graph_path(SID)
    doc = json.loads(path.read_text())
    change(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc))
    cache = path.with_name(f"{SID}.graph.cache")
    cache.unlink(missing_ok=True)


def test_a_node_without_weight_loads_with_the_one_default_weight() -> None:
    store = _store()
    _seed(store)

    def strip(doc: dict) -> None:
        node = doc["nodes"]["src-db-py"]
        for field in ("weight", "floor", "activations", "sources", "confidence"):
            del node[field]

    _rewrite_graph(store, strip)
    node = store.load(SID)["nodes"]["src-db-py"]
    assert node["weight"] == DEFAULT_WEIGHT
    assert (node["floor"], node["activations"], node["sources"], node["confidence"]) == (0.0, 0, [], "inferred")
    assert node["label"] == "src/db.py" and node["kind"] == "file"  # what was there is kept


def test_a_loaded_graph_with_incomplete_members_renders_and_indexes() -> None:
    store = _store()
    _seed(store)

    def damage(doc: dict) -> None:
        doc["nodes"]["use-postgresql"] = {"label": "Use PostgreSQL for the warm store", "kind": "decision"}
        doc["nodes"]["not a slug"] = {"label": "dropped"}
        doc["nodes"]["junk"] = "not a node"
        doc["edges"]["use-postgresql|edits|src-db-py"] = {}  # ends and verb from the key
        doc["edges"]["no-ends"] = {"strength": 0.9}
        del doc["focus"]

    _rewrite_graph(store, damage)
    doc = store.load(SID)
    assert set(doc["nodes"]) == {"use-postgresql", "src-db-py"}
    assert doc["nodes"]["use-postgresql"]["weight"] == DEFAULT_WEIGHT
    assert doc["nodes"]["use-postgresql"]["domain"] == "technical"
    assert doc["edges"] == {
        "use-postgresql|edits|src-db-py": {
            "source": "use-postgresql", "target": "src-db-py", "relationship": "edits",
            "strength": 0.5, "last_activated": doc["edges"]["use-postgresql|edits|src-db-py"]["last_activated"],
        }
    }
    assert doc["focus"] == []
    block = render_lod(doc, load_settings().render)
    assert "Use PostgreSQL for the warm store" in block and "(technical, 0.50)" in block


def test_the_snapshot_and_the_graph_file_share_the_default_weight() -> None:
    doc = normalize_graph({"nodes": {}, "edges": {}}, SID)
    snapshot = {"version": 1, "project": None, "nodes": [{"id": "render-hosting", "label": "Use Render"}], "edges": []}
    [op] = snapshot_ops(doc, snapshot, NOW)  # type: ignore[arg-type]
    assert op["value"]["weight"] == DEFAULT_WEIGHT == normalize_node("x", {})["weight"]
    assert op["value"]["pulled"] is True and op["value"]["activations"] == 0


def test_facts_of_an_incomplete_node_are_checked_against_their_spec() -> None:
    node = normalize_node("run-tests", {"kind": "command", "facts": {"runs": 3, "outcome": "fail", "edits": 2, "result": 7}})
    assert node["facts"] == {"runs": 3, "outcome": "fail"}  # edits: not a command's; result: not text


def test_a_state_file_with_the_older_flat_ledger_is_converted() -> None:
    state = normalize_state({"gate": {"events_since_probe": 3}, "ledger": {"use-postgresql": "9c1e0a2b", "_seq": 7, "_owed": ["x"]}})
    assert state["ledger"] == {"told": {"use-postgresql": "9c1e0a2b"}, "seq": 7, "owed": ["x"]}
    assert state["gate"] == {**new_gate_state(), "events_since_probe": 3}
    assert state["counters"]["events"] == 0


@pytest.mark.parametrize("older", ["positional", "a dict per node", "columns of different lengths"])
def test_an_index_of_an_older_format_is_rebuilt(older: str) -> None:
    store = _store()
    _seed(store)
    index_path = store.graph_path(SID).with_name(f"{SID}.index.json")
    current = json.loads(index_path.read_text())
    assert current["version"] == INDEX_VERSION
    at = current["ids"].index("use-postgresql")
    assert current["kinds"][at] == "decision"
    columns = list(zip(current["ids"], current["labels"], current["weights"], current["kinds"], strict=True))
    if older == "positional":  # version 1
        old = {**current, "version": 1, "nodes": {nid: [label, w, kind, None] for nid, label, w, kind in columns}}
    elif older == "a dict per node":  # version 2
        old = {**current, "version": 2, "nodes": {nid: {"label": label, "weight": w, "kind": kind} for nid, label, w, kind in columns}}
    else:
        old = {**current, "labels": current["labels"][:-1]}
    index_path.write_text(json.dumps(old))

    out = handle_event("user-prompt-submit", prompt_payload(SID, "what about use-postgresql?"), load_settings())
    assert "Use PostgreSQL for the warm store" in context_of(out)  # the named node, found through the index
    rebuilt = json.loads(index_path.read_text())
    assert rebuilt == current


def test_the_declared_types_cost_the_hook_nothing() -> None:
    """The shapes are for the type checker: a hook event never loads them. (``typing``
    itself may be loaded by an editable install's import finder, so it is not checked here;
    tests/test_hook_contract.py holds the hook's import budget.)"""
    import subprocess
    import sys

    code = (
        "import io, json, sys\n"
        "import os; os.environ['ROLLING_GRAPH_PROBE_MODE'] = 'async'\n"
        "from rolling_graph import hook\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps({'session_id': 's1', 'prompt': 'Use Redis.', 'cwd': '/tmp'}).encode()))\n"
        "hook.main(['user-prompt-submit'])\n"
        "print('\\n' + json.dumps([m for m in ('rolling_graph.core.types',) if m in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_the_declared_vocabulary_is_the_one_the_code_checks() -> None:
    """``Domain``, ``NodeKind``, ``Verb`` and ``Confidence`` (what the type checker holds a
    node and an edge to) name exactly the values normalisation and patch validation accept."""
    from typing import get_args

    from rolling_graph.core import model, types

    assert get_args(types.Domain) == model.DOMAINS
    assert get_args(types.NodeKind) == model.KINDS
    assert get_args(types.Verb) == model.VERBS
    assert get_args(types.Confidence) == model.CONFIDENCE
    assert set(model.DECISION_KINDS) < set(model.INTENT_KINDS) <= set(model.KINDS)


def test_an_edge_with_a_verb_outside_the_vocabulary_is_no_edge() -> None:
    graph = normalize_graph({"version": 1, "nodes": {"a": {"label": "A"}, "b": {"label": "B"}},
                             "edges": {"a|related_to|b": {"source": "a", "target": "b", "relationship": "related_to"},
                                       "a|informs|b": {"source": "a", "target": "b", "relationship": "informs"}}}, SID)
    assert list(graph["edges"]) == ["a|informs|b"]
