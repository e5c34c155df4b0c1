"""Probe proposals are untrusted: validated whole, applied whole, or not at all."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest

from rolling_graph.core.config import DecaySettings, load_settings
from rolling_graph.core.model import make_edge, make_node, new_document
from rolling_graph.core.patch import MAX_OPS, PatchRejected, validate_ops
from rolling_graph.probe.base import ProbeResult
from rolling_graph.probe.runner import _apply
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore

NOW = datetime(2026, 11, 25, 21, 0, tzinfo=UTC)


def _doc() -> dict:
    doc = new_document("s1", now=NOW)
    for label, kind in (("Use SQLite", "decision"), ("SQLite", "entity"), ("pgvector", "entity")):
        node = make_node(label, "technical", kind, now=NOW)
        doc["nodes"][node["id"]] = node
    doc["edges"]["use-sqlite|decides|sqlite"] = make_edge("use-sqlite", "decides", "sqlite", 0.7, now=NOW)
    return doc


def _add(nid: str, label: str, **value) -> dict:
    return {"op": "add", "path": f"/nodes/{nid}", "value": {"label": label, "domain": "technical", **value}}


def test_a_valid_patch_becomes_concrete_ops_with_our_weights() -> None:
    ops, touched = validate_ops(
        [
            _add("use-postgresql", "Use PostgreSQL", kind="decision", weight=0.01),
            {"op": "add", "path": "/edges/use-postgresql|supersedes|use-sqlite", "value": {"source": "use-postgresql", "target": "use-sqlite", "relationship": "supersedes", "strength": 0.9}},
        ],
        _doc(),
        NOW,
    )
    added = ops[0]["value"]
    assert added["weight"] == 0.7, "initial weight comes from the kind, not from the model"
    assert added["first_seen"] == "2026-11-25T21:00:00Z" and added["activations"] == 1
    assert touched == ["use-postgresql"]
    paths = [op["path"] for op in ops]
    assert "/nodes/use-sqlite/weight" in paths, "the superseded decision is weakened"
    assert "/nodes/use-sqlite/superseded_by" in paths


def test_weight_values_are_signals_not_assignments() -> None:
    doc = _doc()
    ops, _ = validate_ops([{"op": "replace", "path": "/nodes/sqlite/weight", "value": 0.99}], doc, NOW)
    up = next(op["value"] for op in ops if op["path"] == "/nodes/sqlite/weight")
    assert up == pytest.approx(0.5 + 0.5 * DecaySettings().activation_gain)
    ops, _ = validate_ops([{"op": "replace", "path": "/nodes/sqlite/weight", "value": 0.0}], doc, NOW)
    down = next(op["value"] for op in ops if op["path"] == "/nodes/sqlite/weight")
    assert down == pytest.approx(0.5 * (1 - DecaySettings().weaken_loss))


def test_adding_an_existing_node_activates_it() -> None:
    ops, touched = validate_ops([_add("sqlite", "SQLite")], _doc(), NOW)
    assert touched == ["sqlite"]
    assert {op["path"] for op in ops} >= {"/nodes/sqlite/weight", "/nodes/sqlite/activations", "/nodes/sqlite/last_activated"}


def test_labels_are_cleaned_of_control_characters_and_bounded() -> None:
    ops, _ = validate_ops([_add("odd", "line one\n\x1b[31mline two\x00" + "y" * 500)], _doc(), NOW)
    label = ops[0]["value"]["label"]
    assert "\n" not in label and "\x1b" not in label and "\x00" not in label
    assert len(label) <= 120


INVALID = {
    "not a list": {"op": "add"},
    "unknown op": [{"op": "move", "from": "/nodes/sqlite", "path": "/nodes/x"}],
    "path outside the graph": [{"op": "replace", "path": "/focus", "value": ["sqlite"]}],
    "gate is not the model's": [{"op": "replace", "path": "/gate/events_since_probe", "value": 0}],
    "not a pointer": [{"op": "add", "path": "nodes/x", "value": {}}],
    "node id not a slug": [_add("Bad Id!", "x")],
    "unknown domain": [{"op": "add", "path": "/nodes/x", "value": {"label": "X", "domain": "finance"}}],
    "unknown kind": [{"op": "add", "path": "/nodes/x", "value": {"label": "X", "domain": "project", "kind": "vibe"}}],
    "empty label": [{"op": "add", "path": "/nodes/x", "value": {"label": "  \n ", "domain": "project"}}],
    "label not text": [{"op": "add", "path": "/nodes/x", "value": {"label": {"$gt": 1}, "domain": "project"}}],
    "weight out of range": [{"op": "replace", "path": "/nodes/sqlite/weight", "value": 1.7}],
    "weight negative": [{"op": "replace", "path": "/nodes/sqlite/weight", "value": -0.1}],
    "weight not a number": [{"op": "replace", "path": "/nodes/sqlite/weight", "value": "high"}],
    "weight NaN": [{"op": "replace", "path": "/nodes/sqlite/weight", "value": float("nan")}],
    "weight of a missing node": [{"op": "replace", "path": "/nodes/ghost/weight", "value": 0.5}],
    "remove a node": [{"op": "remove", "path": "/nodes/sqlite"}],
    "edge to a missing node": [{"op": "add", "path": "/edges/sqlite|informs|ghost", "value": {"source": "sqlite", "target": "ghost", "relationship": "informs"}}],
    "edge verb not in vocabulary": [{"op": "add", "path": "/edges/sqlite|related_to|pgvector", "value": {"source": "sqlite", "target": "pgvector", "relationship": "related_to"}}],
    "edge key mismatch": [{"op": "add", "path": "/edges/a|b|c", "value": {"source": "sqlite", "target": "pgvector", "relationship": "informs"}}],
    "edge self loop": [{"op": "add", "path": "/edges/sqlite|informs|sqlite", "value": {"source": "sqlite", "target": "sqlite", "relationship": "informs"}}],
    "strength out of range": [{"op": "add", "path": "/edges/sqlite|informs|pgvector", "value": {"source": "sqlite", "target": "pgvector", "relationship": "informs", "strength": 3}}],
    "remove a supersedes edge": "special",
    "failed test op": [{"op": "test", "path": "/nodes/sqlite/label", "value": "MySQL"}],
    "missing value": [{"op": "add", "path": "/nodes/x"}],
    "too many ops": [_add(f"n{i}", f"N {i}") for i in range(MAX_OPS + 1)],
    "valid first, invalid later": [_add("fine", "Fine"), {"op": "replace", "path": "/nodes/ghost/label", "value": "x"}],
}


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_patches_are_rejected_whole(case: str) -> None:
    doc = _doc()
    proposal = INVALID[case]
    if proposal == "special":
        doc["edges"]["sqlite|supersedes|pgvector"] = make_edge("sqlite", "supersedes", "pgvector", now=NOW)
        proposal = [{"op": "remove", "path": "/edges/sqlite|supersedes|pgvector"}]
    before = copy.deepcopy(doc)
    with pytest.raises(PatchRejected):
        validate_ops(proposal, doc, NOW)
    assert doc == before


def test_a_rejected_model_patch_leaves_the_graph_unchanged_and_is_journaled() -> None:
    settings = load_settings()
    store = SidecarStore(settings)
    store.apply_ops("s1", [{"op": "add", "path": "/nodes/sqlite", "value": make_node("SQLite", "technical", now=NOW)}], kind="seed", rationale="setup")
    before = store.load("s1")
    bad = ProbeResult(backend="offline", rationale="ignore all previous instructions", patch=[{"op": "replace", "path": "/nodes/sqlite/weight", "value": 5}])
    _apply(store, settings, "s1", [{"id": "e1", "event": "UserPromptSubmit", "text": "x", "reasons": ["decision"]}], bad, "test")
    rejected = [e for e in read_journal(store.journal_path("s1")) if e["kind"] == "rejected"]
    assert len(rejected) == 1 and "outside 0..1" in rejected[0]["error"] and not rejected[0]["ops"]
    after = store.load("s1")
    assert after["nodes"]["sqlite"] == before["nodes"]["sqlite"]  # nothing of the bad patch applied
    assert after["counters"]["patches_rejected"] == 1
    # An offline patch is made outside the session's lock: rejected, it was made on a graph
    # that has changed since, and the batch is folded again on the graph as it is.
    assert read_journal(store.journal_path("s1"))[-1]["fallback_reason"].startswith("rejected offline patch")


def test_a_rejected_model_patch_falls_back_to_the_offline_probe_for_its_batch() -> None:
    settings = load_settings()
    store = SidecarStore(settings)
    bad = ProbeResult(backend="anthropic", rationale="r", patch=[{"op": "remove", "path": "/nodes/anything"}], input_tokens=10, output_tokens=5)
    batch = [{"id": "e1", "event": "UserPromptSubmit", "text": "Let's go with Redis for the cache.", "paths": [], "reasons": ["decision"]}]
    entry = _apply(store, settings, "s1", batch, bad, "test")
    kinds = [e["kind"] for e in read_journal(store.journal_path("s1"))]
    assert kinds == ["rejected", "patch"]
    assert entry["backend"] == "offline" and "rejected anthropic patch" in entry["fallback_reason"]
    assert store.load("s1")["nodes"]["use-redis-for-the-cache"]["kind"] == "decision"
