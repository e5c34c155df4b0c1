"""SessionStart with the warm graph on: the session starts from its project's resume
snapshot, in one locked pass over the graph, without the imports that would make it slow;
and the pure helpers that path relies on agree with the libraries they stand in for."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

import jsonpatch
from conftest import run_hook
from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.ids import is_node_id, pointer_parts
from rolling_graph.store.journal import _apply_ops, _member, whole_member_adds
from rolling_graph.store.project import project_key, project_root
from rolling_graph.warm.snapshot_write import write_snapshot

SID = "start-1"


def warm_env() -> dict[str, str]:
    return dict(os.environ, ROLLING_GRAPH_WARM="on", ROLLING_GRAPH_PROBE_MODE="async",
                ROLLING_GRAPH_DSN="host=/nonexistent-rgraph-test port=1 connect_timeout=1")


def snapshot(project: str, home: Path) -> None:
    nodes = [{"id": "render-hosting", "label": "Use Render for hosting", "domain": "project", "kind": "decision", "weight": 0.8,
              "first_seen": "2026-11-01T10:00:00Z", "sessions": 3},
             {"id": "advisory-locks", "label": "Advisory locks", "domain": "technical", "kind": "entity", "weight": 0.6,
              "first_seen": "2026-11-01T10:00:00Z", "sessions": 2}]
    edges = [{"source": "render-hosting", "relationship": "informs", "target": "advisory-locks", "strength": 0.5}]
    write_snapshot(home, project, {"generated_at": "2026-11-20T10:00:00Z", "focus": [], "nodes": nodes, "edges": edges})


def start(source: str, cwd: Path, sid: str = SID) -> subprocess.CompletedProcess[bytes]:
    proc = run_hook("session-start", {"session_id": sid, "cwd": str(cwd), "source": source}, env=warm_env())
    assert proc.returncode == 0, proc.stderr
    return proc


def context(proc: subprocess.CompletedProcess[bytes]) -> str:
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout.strip() else ""


def journal(home: Path, sid: str = SID) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (home / "sessions" / f"{sid}.journal.jsonl").read_text().splitlines()]


def test_a_new_session_starts_from_its_projects_snapshot(isolated_home: Path, tmp_path: Path) -> None:
    snapshot(project_root(str(tmp_path)), isolated_home)
    text = context(start("startup", tmp_path))
    assert "Use Render for hosting" in text and "Advisory locks" in text
    graph = json.loads((isolated_home / "sessions" / f"{SID}.graph.json").read_text())
    assert graph["nodes"]["render-hosting"]["origin"] == "warm"
    assert "render-hosting|informs|advisory-locks" in graph["edges"]
    assert [e["kind"] for e in journal(isolated_home)] == ["init", "resume"]


def test_a_new_session_takes_the_snapshot_as_its_writer_checked_it_once(isolated_home: Path, tmp_path: Path) -> None:
    # The writer leaves the snapshot's checked nodes beside it (its seed); a new session's hook
    # reads them rather than checking every node again, and starts exactly as from the snapshot.
    from rolling_graph.warm.snapshot_files import cache_file

    project = project_root(str(tmp_path))
    snapshot(project, isolated_home)
    cache = Path(cache_file(isolated_home, project, "seed"))
    with_seed = context(start("startup", tmp_path, sid="with-seed"))
    seed = cache.read_bytes()
    cache.unlink()
    without = context(start("startup", tmp_path, sid="without-seed"))
    assert with_seed == without and "Use Render for hosting" in with_seed

    def pulled(sid: str) -> dict[str, Any]:
        graph = json.loads((isolated_home / "sessions" / f"{sid}.graph.json").read_text())
        return {nid: {k: v for k, v in node.items() if k not in ("last_activated", "first_seen")} for nid, node in graph["nodes"].items()}

    assert pulled("with-seed") == pulled("without-seed")
    # It is the seed the hook reads: one that says otherwise, made for the snapshot in place, is what the session gets.
    import marshal

    key, made_from, proj, (p, nodes, edges) = marshal.loads(seed)
    nodes[0] = {**nodes[0], "label": "Use Fly for hosting"}
    cache.write_bytes(marshal.dumps((key, made_from, proj, (p, nodes, edges))))
    assert "Use Fly for hosting" in context(start("startup", tmp_path, sid="forged-seed"))


def test_resuming_again_adds_nothing_and_leaves_the_graph_file_alone(isolated_home: Path, tmp_path: Path) -> None:
    snapshot(project_root(str(tmp_path)), isolated_home)
    start("startup", tmp_path)
    graph_file = isolated_home / "sessions" / f"{SID}.graph.json"
    before = graph_file.stat()
    text = context(start("resume", tmp_path))
    after = graph_file.stat()
    assert "Use Render for hosting" in text  # the block is still injected
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert [e["kind"] for e in journal(isolated_home)] == ["init", "resume"]
    state = json.loads((isolated_home / "sessions" / f"{SID}.state.json").read_text())
    assert "render-hosting" in state["ledger"]["told"]  # the ledger restarts from what the block showed


def test_another_projects_snapshot_is_never_pulled(isolated_home: Path, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    snapshot(project_root(str(tmp_path / "a")), isolated_home)
    assert "Use Render" not in context(start("startup", tmp_path / "b"))
    assert [e["kind"] for e in journal(isolated_home)] == ["init"]


@given(st.lists(st.sampled_from(["", "a", "b", ".", "..", "proj ect", "x~y", "é", "-"]), max_size=5), st.booleans(), st.booleans())
def test_project_key_is_the_pathlib_and_hashlib_formula(parts: list[str], absolute: bool, trailing: bool) -> None:
    root = ("/" if absolute else "") + "/".join(parts) + ("/" if trailing else "")
    name = PurePosixPath(root).name or "root"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name)[:40]
    assert project_key(root) == f"{safe}-{hashlib.sha256(root.encode()).hexdigest()[:12]}"


def test_project_root_is_the_nearest_git_top_level_or_the_directory_itself(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_root(str(repo / "src" / "pkg")) == str(repo.resolve())
    assert project_root(str(plain)) == str(plain.resolve())
    assert project_root(str(plain / ".." / "plain")) == str(plain.resolve())


@given(st.text(alphabet="abz09-_A\n ", max_size=70))
def test_node_ids_are_checked_like_the_slug_pattern(value: str) -> None:
    assert is_node_id(value) == bool(re.fullmatch(r"[a-z0-9][a-z0-9-]{0,63}", value))


_keys = st.text(alphabet="abc-/~01", min_size=1, max_size=6)
_adds = st.lists(st.tuples(st.sampled_from(["nodes", "edges"]), _keys, st.integers()), max_size=6)


@given(_adds)
def test_whole_member_adds_give_exactly_jsonpatchs_result(adds: list[tuple[str, str, int]]) -> None:
    ops = [{"op": "add", "path": f"/{head}/{key.replace('~', '~0').replace('/', '~1')}", "value": {"n": n}} for head, key, n in adds]
    assert whole_member_adds(ops)
    ours: dict[str, Any] = {"nodes": {"a": {"n": -1}}, "edges": {}}
    theirs = json.loads(json.dumps(ours))
    _apply_ops(ours, ops)
    jsonpatch.apply_patch(theirs, ops, in_place=True)
    assert ours == theirs


@given(st.one_of(st.none(), st.integers(), st.text(alphabet="/nodesg~01a", max_size=14),
                 st.builds(lambda h, k: f"/{h}/{k}", st.sampled_from(["nodes", "edges", "focus", "node"]), st.text(alphabet="ab/~01", max_size=6))))
def test_a_whole_member_is_read_from_its_pointer_as_rfc_6901_reads_it(path: object) -> None:
    parts = pointer_parts(path)
    expected = (parts[0], parts[1]) if len(parts) == 2 and parts[0] in ("nodes", "edges") and parts[1] else None
    assert _member({"op": "add", "path": path, "value": {}}) == expected


def test_anything_but_whole_member_adds_goes_through_jsonpatch() -> None:
    assert not whole_member_adds([{"op": "add", "path": "/nodes/a/weight", "value": 1}])
    assert not whole_member_adds([{"op": "replace", "path": "/nodes/a", "value": {}}])
    assert not whole_member_adds([{"op": "add", "path": "/focus/0", "value": "a"}])
    doc: dict[str, Any] = {"nodes": {"a": {"weight": 0.1}}, "edges": {}}
    _apply_ops(doc, [{"op": "replace", "path": "/nodes/a/weight", "value": 0.9}])
    assert doc["nodes"]["a"]["weight"] == 0.9


def test_a_compaction_summary_is_queued_without_the_entity_grammar_and_gets_its_paths_in_the_probe() -> None:
    from rolling_graph.capture.events import event_from_payload, redact_batch

    summary = "We moved rounding into src/billing/invoice.py and keep Decimal everywhere."
    event = event_from_payload("CompactSummary", {"text": summary}, "e1", "2026-11-25T10:00:00Z")
    assert event["paths"] == [] and event["paths_from_text"] is True
    (seen,) = redact_batch([event])
    assert "src/billing/invoice.py" in seen["paths"]
    assert "paths_from_text" not in seen


def test_after_compaction_the_files_the_summary_names_reach_the_graph(isolated_home: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "isCompactSummary": True, "message": {"role": "user", "content":
                                      "Summary: we chose Decimal for money and moved rounding into src/billing/invoice.py."}}) + "\n")
    assert run_hook("session-start", {"session_id": SID, "cwd": str(tmp_path), "source": "startup"}).returncode == 0
    proc = run_hook("session-start", {"session_id": SID, "cwd": str(tmp_path), "source": "compact", "transcript_path": str(transcript)})
    assert proc.returncode == 0, proc.stderr
    graph = json.loads((isolated_home / "sessions" / f"{SID}.graph.json").read_text())
    assert any("invoice.py" in node["label"] for node in graph["nodes"].values())


def test_in_async_mode_a_compaction_queues_its_summary_and_starts_one_probe(isolated_home: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rolling_graph import hook
    from rolling_graph.core.config import load_settings
    from rolling_graph.store.sidecar import SidecarStore

    monkeypatch.setenv("ROLLING_GRAPH_PROBE_MODE", "async")
    started: list[str] = []
    monkeypatch.setattr(hook, "_start_probe", lambda store, settings, sid: started.append(sid))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "isCompactSummary": True, "message": {"role": "user", "content":
                                      "Summary: Decimal for money; rounding lives in src/billing/invoice.py."}}) + "\n")
    hook.handle_event("session-start", {"session_id": SID, "cwd": str(tmp_path), "source": "startup"})
    hook.handle_event("session-start", {"session_id": SID, "cwd": str(tmp_path), "source": "compact", "transcript_path": str(transcript)})
    assert started == [SID]
    gate = SidecarStore(load_settings()).load_state(SID)["gate"]
    (queued,) = gate["pending"]
    assert queued["event"] == "CompactSummary" and "invoice.py" in queued["text"] and queued["paths_from_text"]
    assert gate["probe_requested"] and "compact" in gate["pending_reasons"]
