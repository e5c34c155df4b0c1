"""Stable keys and durable facts, as pure functions: how two sessions' facts fold, what a
sidecar from before stable keys is re-keyed to, how commands lose their worktree's paths,
and what a resume snapshot hands a new session."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.clock import iso
from rolling_graph.core.model import make_node, new_document
from rolling_graph.probe.proposal import Proposal
from rolling_graph.warm import keys, warm_facts
from rolling_graph.warm.snapshot import snapshot_ops

T0 = datetime(2026, 11, 20, 10, tzinfo=UTC)
T1 = T0 + timedelta(hours=5)


# -- folding facts across sessions ---------------------------------------------------------------
def test_counts_take_the_larger_view_status_the_newer_and_by_the_strongest() -> None:
    older = {"edits": 6, "what": "`prorate_amount`", "last_op": "edit", "by": "user"}
    newer = {"edits": 2, "reads": 3, "last_op": "read", "by": "tool"}
    assert warm_facts.fold(older, T0, newer, T1) == {"edits": 6, "reads": 3, "what": "`prorate_amount`", "last_op": "read", "by": "user"}
    # the same two views the other way round (an old session reconciled late): the same answer
    assert warm_facts.fold(newer, T1, older, T0) == warm_facts.fold(older, T0, newer, T1)
    task_open, task_done = {"status": "pending"}, {"status": "completed"}
    assert warm_facts.fold(task_open, T0, task_done, T1) == {"status": "completed"}
    assert warm_facts.fold(task_done, T1, task_open, T0) == {"status": "completed"}


facts_st = st.fixed_dictionaries({}, optional={
    "edits": st.integers(0, 50), "reads": st.integers(0, 50), "status": st.sampled_from(["pending", "in_progress", "completed"]),
    "by": st.sampled_from(["user", "assistant", "tool"]),
})


@given(facts_st, facts_st, st.integers(-100, 100))
def test_folding_is_idempotent_and_order_free(a: dict[str, Any], b: dict[str, Any], hours: int) -> None:
    ta, tb = T0, T0 + timedelta(hours=hours)
    once = warm_facts.fold(a, ta, b, tb)
    assert warm_facts.fold(once, max(ta, tb), b, tb) == once  # reconciling the same session again changes nothing
    if hours:
        assert warm_facts.fold(b, tb, a, ta) == once


def test_durable_facts_drop_the_sessions_own_counters_and_are_redacted() -> None:
    kept = warm_facts.durable("command", {"runs": 3, "outcome": "fail", "seq": 99, "ref": "bg-17",
                                          "result": "auth failed for sk-ant-api03-" + "a" * 40, "by": "tool"})
    assert kept == {"runs": 3, "outcome": "fail", "result": "auth failed for [REDACTED:anthropic-key]", "by": "tool"}
    assert warm_facts.durable("task", {"status": "pending", "ref": "bd-12", "seq": 4}) == {"status": "pending", "ref": "bd-12"}
    assert warm_facts.durable("symbol", {"seq": 4}) is None
    assert warm_facts.durable("file", {"path": "a.py", "edits": 2, "seq": 9, "first": 3}) == {"path": "a.py", "edits": 2}
    assert warm_facts.durable("symbol", {"seq": 4, "mentions": 9}) is None  # uses go to the activations column instead
    assert warm_facts.durable("file", {"edits": -1, "bogus": 1}) is None  # out of bounds, unknown: dropped


# -- re-keying a sidecar written before stable keys ----------------------------------------------
def test_an_old_sidecars_absolute_file_nodes_are_rekeyed_and_merged() -> None:
    absolute = {**make_node("/home/ada/wt/feature/src/app.py", "technical", "file", now=T0), "activations": 2,
                "facts": {"edits": 2}}
    relative = {**make_node("src/app.py", "technical", "file", node_id="src-app-py", now=T1), "activations": 1,
                "facts": {"path": "src/app.py", "edits": 1}}
    decision = make_node("Use Decimal", "project", "decision", now=T0)
    outside = make_node("/etc/hosts", "technical", "file", now=T0)
    nodes = {n["id"]: dict(n) for n in (absolute, relative, decision, outside)}
    edges = {f"use-decimal|depends_on|{absolute['id']}": {"source": "use-decimal", "relationship": "depends_on", "target": absolute["id"],
                                                           "strength": 0.7, "last_activated": iso(T0)}}
    doc = {"project": "/home/ada/repo", "gate": {"root": "/home/ada/wt/feature"}}
    new_nodes, new_edges = keys.rekey_files(nodes, edges, keys.doc_roots(doc))
    assert set(new_nodes) == {"src-app-py", "use-decimal", outside["id"]}
    merged = new_nodes["src-app-py"]
    assert (merged["label"], merged["activations"], merged["facts"]["edits"], merged["facts"]["path"]) == ("src/app.py", 3, 3, "src/app.py")
    assert list(new_edges) == ["use-decimal|depends_on|src-app-py"]
    assert keys.rekey_files(nodes, edges, []) == (nodes, edges)  # no root known: nothing moves


# -- commands and errors without the worktree's paths -------------------------------------------------
def test_a_command_names_the_same_files_in_every_worktree() -> None:
    p = Proposal({"nodes": {}, "edges": {}, "project": "/r/app", "gate": {"root": "/r/wt/feature"}})  # type: ignore[typeddict-item]
    assert p.local("pytest /r/wt/feature/tests/test_app.py -q") == "pytest tests/test_app.py -q"
    assert p.local("ruff check /r/wt/feature") == "ruff check ."
    assert p.local("cat /r/wt/feature-2/x.py") == "cat /r/wt/feature-2/x.py"  # another directory that starts alike
    assert p.path("/r/wt/feature/src/app.py") == "src/app.py"


# -- what a snapshot hands a new session ---------------------------------------------------------------
def snap(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"version": 1, "project": "/p", "nodes": nodes, "edges": []}


def test_a_new_session_gets_the_snapshots_facts_in_its_order_without_event_counters() -> None:
    nodes = [
        {"id": "req-fix-totals", "label": "fix totals", "domain": "project", "kind": "request", "weight": 0.4,
         "first_seen": iso(T0), "facts": {"by": "user", "seq": 812}},
        {"id": "task-add-test", "label": "add a test", "domain": "project", "kind": "task", "weight": 0.5,
         "first_seen": iso(T0), "facts": {"status": "in_progress"}},
        {"id": "src-app-py", "label": "src/app.py", "domain": "technical", "kind": "file", "weight": 0.9,
         "first_seen": iso(T1 + timedelta(days=2)), "facts": {"path": "src/app.py", "edits": 4, "seq": 790}},
    ]
    now = T1 + timedelta(days=1)
    added = [op["value"] for op in snapshot_ops(new_document("s", "/p"), snap(nodes), now)]  # type: ignore[arg-type]
    assert [n["id"] for n in added] == ["req-fix-totals", "task-add-test", "src-app-py"]
    stamps = [n["last_activated"] for n in added]
    assert stamps == sorted(stamps, reverse=True) and stamps[0] == iso(now) and len(set(stamps)) == 3
    assert added[0]["facts"] == {"by": "user"} and added[1]["facts"] == {"status": "in_progress"}
    assert added[2]["facts"] == {"path": "src/app.py", "edits": 4}
    assert all(n["first_seen"] <= n["last_activated"] for n in added)
    assert all(n["activations"] == 0 and n["pulled"] for n in added)  # nothing this session did yet
