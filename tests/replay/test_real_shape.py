"""Extraction from a session of real shape, replayed through the hooks (offline probe).

The transcript (``fixtures/scenario_real_shape.py``, our own content) holds every shape a
real Claude Code session has: a tracker through Bash, TodoWrite, TaskCreate/TaskUpdate,
plan mode, AskUserQuestion, pytest failing then passing (once in the background), an
interrupt marker, a commit, ``USER`` placeholders, one file named by an absolute and a
relative path. These tests read the resulting graph: what the session was about, and
no junk.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from rolling_graph.core.facts import COMMON_KEYS, KIND_KEYS
from rolling_graph.replay.run import ReplayOptions, replay

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures"))

import scenario_real_shape  # noqa: E402


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("real_shape")
    transcript = base / "real_shape.jsonl"
    scenario_real_shape.build().write(transcript)
    result = replay([transcript], options=ReplayOptions(probe="offline", mode="sync"), home=base / "home")
    assert not [r for r in result.records if r.error], "no hook failed"
    (doc,) = result.final_docs.values()
    return doc


def test_the_same_session_recorded_on_windows_makes_the_same_graph(graph: dict[str, Any], tmp_path: Path) -> None:
    # cwd, tool inputs and outputs and the prompt name C:\Users\USER\src\parcel-api\billing\proration.py
    transcript = tmp_path / "real_shape_windows.jsonl"
    scenario_real_shape.build().on_windows("/home/USER").write(transcript)
    assert "C:\\\\Users\\\\USER\\\\src\\\\parcel-api" in transcript.read_text(encoding="utf-8")
    result = replay([transcript], options=ReplayOptions(probe="offline", mode="sync"), home=tmp_path / "home")
    (windows,) = result.final_docs.values()
    assert sorted(nodes_of(windows, "file")) == ["billing/proration.py", "billing/webhooks.py", "tests/billing/test_annual.py"]
    assert {nid: (n["label"], n.get("facts")) for nid, n in windows["nodes"].items()} == \
        {nid: (n["label"], n.get("facts")) for nid, n in graph["nodes"].items()}
    assert windows["edges"] == graph["edges"]


def nodes_of(graph: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {n["label"]: n for n in graph["nodes"].values() if n["kind"] == kind}


def facts(node: dict[str, Any]) -> dict[str, Any]:
    return node.get("facts") or {}


def test_the_request_is_a_node_in_the_users_words(graph: dict[str, Any]) -> None:
    requests = nodes_of(graph, "request")
    first = next(label for label in requests if label.startswith("Invoices for annual plans are prorated twice"))
    assert facts(requests[first])["by"] == "user"
    # The answer to Claude's question is the user's choice between the options offered, and says what it answered.
    decisions = nodes_of(graph, "decision")
    assert facts(decisions["Only annual plans for now (Scope)"])["by"] == "user"
    assert "monthly plans" in decisions["Only annual plans for now (Scope)"]["summary"]
    # A background task's notification is not something the user asked.
    assert not any("task-notification" in label or "Background" in label for label in requests)


def test_the_task_list_is_folded_from_every_tool_that_keeps_it(graph: dict[str, Any]) -> None:
    tasks = nodes_of(graph, "task")
    assert facts(tasks["parcel-12: Annual invoices prorated twice"]) | {"status": "completed", "ref": "parcel-12"} == facts(tasks["parcel-12: Annual invoices prorated twice"])
    for todo in ("Reproduce the double proration", "Fix proration in apply_plan_change", "Add a regression test for annual upgrades"):
        assert facts(tasks[todo])["status"] == "completed", todo
    created = tasks["Add regression test for annual upgrades"]  # TaskCreate, then TaskUpdate by its id
    assert facts(created)["ref"] == "1" and facts(created)["status"] == "completed"


def test_one_file_node_per_file_keyed_by_its_relative_path(graph: dict[str, Any]) -> None:
    files = nodes_of(graph, "file")
    proration = files["billing/proration.py"]  # read and edited by absolute path, named in the prompt
    assert proration["id"] == "billing-proration-py"
    assert facts(proration)["edits"] == 2 and facts(proration)["reads"] == 1 and facts(proration)["last_op"] == "edit"
    assert facts(proration)["by"] == "user"  # the user named it: that outranks the tools
    webhooks = files["billing/webhooks.py"]  # Read by its relative path, edited by a MultiEdit
    assert facts(webhooks)["edits"] == 1 and facts(webhooks)["reads"] == 1
    # What the edit added; the call it removed is gone from the code, so not carried on.
    assert "`subscription.pending_proration`" in facts(webhooks)["what"] and "prorate_amount" not in facts(webhooks)["what"]
    assert facts(files["tests/billing/test_annual.py"])["writes"] == 1
    assert all(not label.startswith(("/", "~")) for label in files), sorted(files)


def test_code_names_from_edits_greps_and_plans(graph: dict[str, Any]) -> None:
    symbols = set(nodes_of(graph, "symbol"))
    assert {"prorate_amount", "apply_plan_change", "handle_invoice_created", "test_annual_upgrade_prorated_once",
            "subscription.pending_proration"} <= symbols


def test_the_test_command_carries_its_runs_and_last_outcome(graph: dict[str, Any]) -> None:
    (pytest_node,) = [n for label, n in nodes_of(graph, "command").items() if label == "python -m pytest -q tests/billing"]
    f = facts(pytest_node)
    assert f["runs"] == 3 and f["outcome"] == "pass"
    assert f["result"] == "0 failed of 17"  # the run before it, in the background, already passed


def test_errors_are_their_meaningful_line_and_resolved_by_a_later_pass(graph: dict[str, Any]) -> None:
    errors = nodes_of(graph, "error")
    assert set(errors) == {
        "FAILED tests/billing/test_proration.py::test_annual_upgrade - AssertionError: assert 200 == 100",
        "fatal: The current branch fix-proration has no upstream branch.",
    }
    assert all(facts(e)["state"] == "resolved" for e in errors.values())
    failing = errors["FAILED tests/billing/test_proration.py::test_annual_upgrade - AssertionError: assert 200 == 100"]
    assert f"{failing['id']}|blocks|python-m-pytest-q-tests-billing" in graph["edges"]


def test_decisions_from_the_plan_the_assistant_and_the_user(graph: dict[str, Any]) -> None:
    decisions = nodes_of(graph, "decision")
    assert "Plan: Prorate annual plans once" not in decisions, "a plan's title is no decision"
    assert facts(nodes_of(graph, "summary")["Plan: Prorate annual plans once"])["by"] == "assistant"
    assert "Keep proration only in apply_plan_change instead of the webhook" in decisions
    (correction,) = nodes_of(graph, "correction").values()
    assert "structlog" in correction["label"] and facts(correction)["by"] == "user"
    # The user's correction is about logging: it reverses nothing the assistant chose.
    assert not any(e["relationship"] == "supersedes" for e in graph["edges"].values())


def test_the_commit_is_a_node_with_its_subject(graph: dict[str, Any]) -> None:
    (commit,) = nodes_of(graph, "commit").values()
    assert commit["label"] == "4c1d9e2 fix: prorate annual plans once (parcel-12)" and facts(commit)["ref"] == "4c1d9e2"
    assert "commit-4c1d9e2|edits|billing-webhooks-py" in graph["edges"]


def test_nothing_from_json_keys_placeholders_markers_or_harness_files(graph: dict[str, Any]) -> None:
    labels = [n["label"] for n in graph["nodes"].values()]
    junk = {"USER", "Background", "Request", "run_in_background", "backgroundTaskId", "Error: Exit code 1", "Exit code 1"}
    assert not junk & set(labels)
    assert not [label for label in labels if "Exit code" in label or ".claude" in label or "/tmp/claude" in label or "USER" in label]
    assert not [label for label in labels if label.lower().startswith(("interrupted", "[request"))]


def test_facts_stay_within_each_kinds_keys(graph: dict[str, Any]) -> None:
    for node in graph["nodes"].values():
        allowed = KIND_KEYS.get(node["kind"], frozenset()) | COMMON_KEYS
        assert set(facts(node)) <= allowed, (node["label"], facts(node))
