"""The restore block's ranked view kept beside the graph (``<sid>.view.cache``, and
``<sid>.view-coding.cache`` for a resumed session's block): the same block as ranking the graph
afresh, taken only for the very graph file, code and ranking it was made with, and left by what
``PreCompact`` (or ``SessionEnd``) starts (the worker's ``finish``, or with the warm graph off the probe)."""

from __future__ import annotations

import marshal
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest
from conftest import run_hook
from restore_support import R, billing_session

from rolling_graph.core.config import load_settings, replace
from rolling_graph.core.model import make_node
from rolling_graph.render import rank, restore, view_cache
from rolling_graph.render.view import STATE, RestoreView
from rolling_graph.store import files as sidecar_files
from rolling_graph.store.sidecar import SidecarStore

SID = "view-1"
SUMMARY = "We are fixing double proration; apply_plan_change is where proration happens now."


def a_session(doc: dict[str, Any], *, view: bool = True) -> SidecarStore:
    """A session holding ``doc``'s nodes and edges; ``view``: and the view ``PreCompact``'s work leaves."""
    store = SidecarStore(load_settings())
    ops = [{"op": "add", "path": f"/nodes/{nid}", "value": node} for nid, node in doc["nodes"].items()]
    ops += [{"op": "add", "path": f"/edges/{key}", "value": edge} for key, edge in doc["edges"].items()]
    with store.transaction(SID) as session:
        session["project"] = doc["project"]
        store.commit_ops(session, ops, kind="patch", rationale="the probe's patch")
    if view:
        assert view_cache.refresh(store.files, SID)
    return store


def kept(store: SidecarStore, preset: str = "compact") -> RestoreView | None:
    doc = store.load(SID)
    return view_cache.read(store.files.path(SID, view_cache.SUFFIXES[preset]), doc, store.files.graph_signature(SID), preset)


def without_n3(state: tuple[Any, ...]) -> tuple[Any, ...]:
    """A forged view: ``customer_factory`` (node ``n3``) left out of it."""
    parts = dict(zip([name for name, _ in STATE], state, strict=True))
    for part in ("kind", "score", "paths"):
        parts[part].pop("n3", None)
    parts["order"].remove("n3")
    parts["by_kind"]["symbol"].remove("n3")
    return tuple(parts.values())


def the_hook_tells_the_same_block_from_the_view(payload: dict[str, str], cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``SessionStart`` hook tells the same block for ``payload`` with the view at ``cache``
    and without it, and restarts the ledger the same (the same fingerprints of what it shows),
    and reads it (a forged view without ``customer_factory`` drops the name). After a
    compaction, with the view, it reads none of the graph's edges."""
    from rolling_graph import hook
    from rolling_graph.store import graph_cache

    store = SidecarStore(load_settings())
    reads: list[bool] = []  # each read of the graph's cache: with its edges or not
    real_read = graph_cache.read

    def read(path: str, st: Any, *, edges: bool = True) -> Any:
        reads.append(edges)
        return real_read(path, st, edges=edges)

    monkeypatch.setattr(graph_cache, "read", read)

    def block() -> tuple[str, dict[str, str]]:
        reads.clear()
        out = hook.handle_event("session-start", payload)
        return str(((out or {}).get("hookSpecificOutput") or {}).get("additionalContext") or ""), store.load(SID)["ledger"]["told"]

    with_view, told = block()
    assert told and reads[:1] == [payload["source"] != "compact"], "after a compaction the edges are left unread"
    genuine = cache.read_bytes()
    cache.unlink()
    assert block() == (with_view, told) and "customer_factory" in with_view
    assert reads[:1] == [True]
    key, made_from, state, marks = marshal.loads(genuine)
    cache.write_bytes(marshal.dumps((key, (made_from[0] + 1, *made_from[1:]), state, marks)))  # of another graph file
    assert block() == (with_view, told), "a view of another graph: the hook ranks the graph, its edges read after all"
    cache.write_bytes(marshal.dumps((key, made_from, without_n3(state), marks)))
    assert "customer_factory" not in block()[0], "the hook read the view beside the graph"


@pytest.mark.parametrize("budget", [800, 400, 150])
@pytest.mark.parametrize("fillers", [0, 60])
def test_a_kept_view_renders_the_block_a_fresh_ranking_renders(budget: int, fillers: int) -> None:
    store = a_session(billing_session(fillers))
    view = kept(store)
    assert view is not None
    doc = store.load(SID)
    fresh = restore.restore_block(doc, R, "compact", summary=SUMMARY, budget_tokens=budget)
    assert restore.restore_block(doc, R, "compact", summary=SUMMARY, budget_tokens=budget, view=view) == fresh
    assert fresh[1] and "invoices for annual plans" in fresh[0]


def test_the_view_is_used_only_where_the_compact_ranking_is() -> None:
    store = a_session(billing_session(20))
    doc = store.load(SID)
    # A forged view (one name dropped from it) shows that the block is rendered from it...
    view = kept(store)
    assert view is not None
    forged = RestoreView.restored(doc, without_n3(view.state()))
    assert forged is not None
    assert "customer_factory" in restore.restore_block(doc, R, "compact", summary=SUMMARY)[0]
    assert "customer_factory" not in restore.restore_block(doc, R, "compact", summary=SUMMARY, view=forged)[0]
    # ... and only after a compaction with a summary, with the preset's own ranking.
    assert "customer_factory" in restore.restore_block(doc, R, "resume", view=forged)[0]
    assert "customer_factory" in restore.restore_block(doc, R, "compact", view=forged)[0]
    assert "customer_factory" in restore.restore_block(doc, R, "compact", summary=SUMMARY, view=forged,
                                                       rank_settings=rank.PRESETS["compact"])[0]


def test_a_view_of_another_graph_file_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    store = a_session(billing_session())
    cache = Path(store.files.path(SID, view_cache.SUFFIX))
    before = cache.read_bytes()
    monkeypatch.setattr(sidecar_files, "WRITE_BRANCHES", False)  # as rolling_graph.hook.main sets it
    extra = make_node("ledger_export", "technical", "symbol")
    store.apply_ops(SID, [{"op": "add", "path": f"/nodes/{extra['id']}", "value": extra}], kind="patch", rationale="a hook's write")
    assert not cache.exists(), "a write of the graph removes the view of the graph before it (and pays nothing for a new one)"
    cache.write_bytes(before)  # as a slow refresh of the graph before would leave it
    assert kept(store) is None, "made from another graph file: ignored"
    assert view_cache.refresh(store.files, SID) is True, "PreCompact's work makes it current"
    view = kept(store)
    assert view is not None and extra["id"] in view.order
    assert view_cache.refresh(store.files, SID) is False, "current: left alone"


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other graph", "not a view", "foreign id", "short", "no fingerprints"])
def test_a_damaged_or_foreign_view_is_not_taken(damage: str) -> None:
    store = a_session(billing_session())
    cache = Path(store.files.path(SID, view_cache.SUFFIX))
    key, made_from, state, marks = marshal.loads(cache.read_bytes())
    if damage == "garbage":
        cache.write_bytes(b"\x00not marshal at all")
    elif damage == "truncated":
        cache.write_bytes(cache.read_bytes()[:100])
    elif damage == "empty":
        cache.write_bytes(b"")
    elif damage == "other graph":
        cache.write_bytes(marshal.dumps((key, (made_from[0] + 1, *made_from[1:]), state, marks)))
    elif damage == "not a view":
        cache.write_bytes(marshal.dumps((key, made_from, ({}, [], "x"), marks)))
    elif damage == "foreign id":
        order = [*state[-1], "not-in-the-graph"]
        cache.write_bytes(marshal.dumps((key, made_from, (*state[:-1], order), marks)))
    elif damage == "no fingerprints":
        cache.write_bytes(marshal.dumps((key, made_from, state)))
    else:
        cache.write_bytes(marshal.dumps((key, made_from, state[:-1], marks)))
    assert kept(store) is None
    doc = store.load(SID)
    assert restore.restore_block(doc, R, "compact", summary=SUMMARY, view=kept(store))[0].count("apply_plan_change")


def test_other_ranking_settings_or_an_edited_module_make_the_view_stale(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    module = tmp_path / "ranking_part.py"
    module.write_text("X = 1\n")
    fake = types.ModuleType("ranking_part")
    fake.__file__ = str(module)
    monkeypatch.setitem(sys.modules, "ranking_part", fake)
    monkeypatch.setattr(view_cache, "CODE", (*view_cache.CODE, "ranking_part"))
    store = a_session(billing_session())
    assert kept(store) is not None
    module.write_text("X = 22\n")  # an edit (or an upgrade) of code that ranks
    assert kept(store) is None
    assert view_cache.refresh(store.files, SID) is True and kept(store) is not None
    presets = dict(rank.PRESETS)
    presets["compact"] = replace(rank.PRESETS["compact"], rrf_k=rank.PRESETS["compact"].rrf_k + 1)
    monkeypatch.setattr(view_cache, "RANK_PRESETS", presets)
    assert kept(store) is None


def test_a_session_start_after_a_compaction_renders_from_the_view_the_probe_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from rolling_graph import hook

    store = a_session(billing_session(20))
    monkeypatch.setenv("ROLLING_GRAPH_PROBE_MODE", "async")
    monkeypatch.setattr(hook, "_start_probe", lambda store, settings, sid: None)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": SUMMARY}}) + "\n")
    payload = {"session_id": SID, "cwd": str(tmp_path), "source": "compact", "transcript_path": str(transcript)}
    the_hook_tells_the_same_block_from_the_view(payload, Path(store.files.path(SID, view_cache.SUFFIX)), monkeypatch)


@pytest.mark.parametrize("trigger", ["pre-compact", "session-end"])
def test_the_worker_at_a_flush_leaves_the_view_of_the_graph_a_hook_wrote_last(
    trigger: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rolling_graph import worker

    store = a_session(billing_session(), view=False)
    cache = Path(store.files.path(SID, view_cache.SUFFIX))
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_DSN", "host=/nonexistent-rgraph-test port=1 connect_timeout=1")
    assert worker.main(["finish", "--session", SID, "--trigger", trigger]) == 0
    assert "queued" in capsys.readouterr().out  # the reconcile waits for the database, as before
    if trigger == "pre-compact":
        assert kept(store) is not None, "the SessionStart after the compaction finds the view"
        assert kept(store, "coding") is None
    else:
        assert not cache.exists(), "no compaction follows a session's end"
        assert kept(store, "coding") is not None, "a resumed session's SessionStart finds the view of its ranking"


@pytest.mark.parametrize("flush", [True, False])
def test_the_probe_a_flush_starts_leaves_the_view_of_the_graph_it_wrote(flush: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import prompt_payload

    from rolling_graph import hook
    from rolling_graph.probe import runner

    store = a_session(billing_session(), view=False)
    monkeypatch.setenv("ROLLING_GRAPH_PROBE_MODE", "async")
    monkeypatch.setattr(hook, "_start_probe", lambda store, settings, sid, view=False: None)
    monkeypatch.setattr(runner, "lower_priority", lambda: None)  # (main's first step: not for the test process)
    hook.handle_event("user-prompt-submit", prompt_payload(SID, "We decided to keep proration in apply_plan_change; "
                                                                "use Decimal for every amount in billing/proration.py."))
    assert store.load_state(SID)["gate"]["pending"], "a prompt the probe is to read"
    assert runner.main(["--session", SID, *(["--view"] if flush else [])]) == 0
    assert not store.load_state(SID)["gate"]["pending"], "probed"
    if not flush:  # a probe between two prompts pays for no view
        assert not Path(store.files.path(SID, view_cache.SUFFIX)).exists()
        return
    view = kept(store)
    assert view is not None, "the final graph has its view beside it"
    assert restore.restore_block(store.load(SID), R, "compact", summary=SUMMARY, view=view) == \
        restore.restore_block(store.load(SID), R, "compact", summary=SUMMARY)


@pytest.mark.parametrize(("event", "extra", "preset"), [("pre-compact", {"hook_event_name": "PreCompact", "trigger": "auto"}, "compact"),
                                                     ("session-end", {"hook_event_name": "SessionEnd", "reason": "exit"}, "coding")])
def test_a_flush_with_the_warm_graph_off_starts_the_probe_that_leaves_the_view(
    tmp_path: Path, event: str, extra: dict[str, str], preset: str
) -> None:
    import os

    store = a_session(billing_session(), view=False)
    env = dict(os.environ, ROLLING_GRAPH_PROBE_MODE="async", ROLLING_GRAPH_WARM="off")
    proc = run_hook(event, {"session_id": SID, "cwd": str(tmp_path), **extra}, env=env)
    assert proc.returncode == 0 and not proc.stderr
    cache = Path(store.files.path(SID, view_cache.SUFFIXES[preset]))
    graph = Path(store.files.path(SID, "graph.json"))

    def made_for_the_graph() -> bool:  # (the probe's code may be read from another place than this test's: no code key here)
        try:
            _, made_from, state, _ = marshal.loads(cache.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return False
        st = graph.stat()
        return made_from == (st.st_ino, st.st_size, st.st_mtime_ns) and RestoreView.restored(store.load(SID), state) is not None

    deadline = time.monotonic() + 30
    while not made_for_the_graph() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert made_for_the_graph(), "the detached probe left the view of the session's graph"


@pytest.mark.parametrize("budget", [800, 400])
def test_a_kept_coding_view_renders_a_resumed_sessions_block_as_a_fresh_ranking_does(budget: int) -> None:
    store = a_session(billing_session(40), view=False)
    assert view_cache.refresh(store.files, SID, "coding")
    doc = store.load(SID)
    view = kept(store, "coding")
    assert view is not None and view.preset == "coding"
    fresh = restore.restore_block(doc, R, "resume", budget_tokens=budget)
    assert restore.restore_block(doc, R, "resume", budget_tokens=budget, view=view) == fresh
    assert "customer_factory" in fresh[0]
    # Each view only for its own ranking: the coding one shapes a resumed session's block...
    forged = RestoreView.restored(doc, without_n3(marshal.loads(marshal.dumps(view.state()))), "coding")
    assert forged is not None
    assert "customer_factory" not in restore.restore_block(doc, R, "resume", budget_tokens=budget, view=forged)[0]
    # ... never the block after a compaction, and a compact one never a resumed session's.
    assert "customer_factory" in restore.restore_block(doc, R, "compact", summary=SUMMARY, budget_tokens=budget, view=forged)[0]
    compact_forged = RestoreView.restored(doc, without_n3(marshal.loads(marshal.dumps(view.state()))))
    assert "customer_factory" in restore.restore_block(doc, R, "resume", budget_tokens=budget, view=compact_forged)[0]


def test_a_view_kept_for_one_ranking_is_not_read_as_the_others() -> None:
    store = a_session(billing_session())
    coding = Path(store.files.path(SID, view_cache.SUFFIXES["coding"]))
    coding.write_bytes(Path(store.files.path(SID, view_cache.SUFFIX)).read_bytes())  # the compact view under the coding name
    assert kept(store) is not None and kept(store, "coding") is None


def test_a_resumed_session_start_renders_from_the_view_its_session_end_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = a_session(billing_session(20), view=False)
    assert view_cache.refresh(store.files, SID, "coding")  # what SessionEnd's work leaves
    payload = {"session_id": SID, "cwd": str(tmp_path), "source": "resume", "transcript_path": str(tmp_path / "t.jsonl")}
    the_hook_tells_the_same_block_from_the_view(payload, Path(store.files.path(SID, view_cache.SUFFIXES["coding"])), monkeypatch)


def test_the_hook_names_the_view_each_flush_leaves_as_the_worker_does() -> None:
    from rolling_graph import hook

    assert hook.VIEW_FOR_TRIGGER == view_cache.FOR_TRIGGER
    assert set(view_cache.FOR_TRIGGER.values()) == set(view_cache.SUFFIXES)
    assert set(view_cache.SUFFIXES.values()) <= set(sidecar_files.MADE_FOR_ONE_GRAPH)
