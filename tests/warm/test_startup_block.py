"""A new session's block, rendered by the snapshot's writer and kept beside the snapshot
(:mod:`rolling_graph.warm.startup_block`): the hook tells the same block with or without it,
really reads it, and renders its own whenever the kept one might say otherwise."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import HOOK, context_of, run_hook
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from rolling_graph.core.clock import Clock, iso
from rolling_graph.core.config import DecaySettings, RenderSettings, Settings, load_settings, replace
from rolling_graph.hook import handle_event
from rolling_graph.store.project import project_root
from rolling_graph.warm import snapshot, snapshot_files, startup_block
from rolling_graph.warm.snapshot_write import write_snapshot

WRITTEN = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)  # when the last session's snapshot was written
LATER = WRITTEN + timedelta(hours=3)  # a new session, hours after it


def nodes(first_seen: list[str]) -> list[dict[str, Any]]:
    """A snapshot's nodes of every kind a block shows, first seen at the given stamps in turn."""
    made: list[dict[str, Any]] = [
        {"id": "req-wire-the-exporter", "label": "Wire the exporter into the nightly job", "kind": "request", "weight": 0.7},
        {"id": "use-advisory-locks", "label": "Use Postgres advisory locks for the queue", "kind": "decision", "weight": 0.8,
         "summary": "one worker per project"},
        {"id": "task-retry-budget", "label": "Add a retry budget to the exporter", "kind": "task", "weight": 0.6,
         "facts": {"status": "in_progress"}},
        {"id": "task-drop-v1", "label": "Drop the v1 endpoint", "kind": "task", "weight": 0.5, "facts": {"status": "pending"}},
        {"id": "task-docs", "label": "Document the exporter", "kind": "task", "weight": 0.5, "facts": {"status": "pending"}},
        {"id": "mise-run-test", "label": "mise run test", "kind": "command", "weight": 0.9, "facts": {"runs": 12, "outcome": "fail"}},
    ]
    for i in range(12):
        path = f"internal/export/part_{i}.go"
        file_id = f"internal-export-part-{i}-go"
        made.append({"id": file_id, "label": path, "kind": "file", "weight": 0.9 - i / 50, "facts": {"path": path, "edits": 12 - i}})
        for j in range(3):
            made.append({"id": f"sym-{i}-{j}", "label": f"ExportPart{i}Step{j}", "kind": "symbol", "weight": 0.8 - j / 20,
                         "facts": {"in": file_id}})
    for i, node in enumerate(made):
        node.update(domain="technical", sessions=1 + i % 4, first_seen=first_seen[i % len(first_seen)])
    return made


def write(home: Path, project: str, first_seen: list[str], settings: Settings | None) -> None:
    made = nodes(first_seen)
    edges = [{"source": "use-advisory-locks", "relationship": "informs", "target": "task-retry-budget", "strength": 0.6}]
    write_snapshot(home, project, {"generated_at": iso(WRITTEN), "focus": [], "nodes": made, "edges": edges}, settings=settings)


def settings_at(home: Path, now: datetime, budget: int = 800) -> Settings:
    return Settings(home=home, warm=False, render=RenderSettings(budget_tokens=budget), clock=Clock.at(iso(now)))


def start(settings: Settings, project: str, sid: str, source: str = "startup") -> str:
    out = handle_event("session-start", {"session_id": sid, "hook_event_name": "SessionStart", "source": source, "cwd": project,
                                         "transcript_path": "/nonexistent/transcript.jsonl"}, settings)
    return context_of(out)


def kept(home: Path, project: str) -> Path:
    return Path(snapshot_files.cache_file(home, project, startup_block.PART))


def ledger(home: Path, sid: str) -> Any:
    return json.loads((home / "sessions" / f"{sid}.state.json").read_text())["ledger"]


def forge(home: Path, project: str, settings: Settings, text: str = "FORGED BLOCK", after: str = "") -> None:
    """A kept block that says ``text``, made (by its key) for the snapshot file in place and ``settings``."""
    st_ = os.stat(snapshot_files.snapshot_file(home, project))
    blob = snapshot_files.cache_blob(startup_block.PART, st_, project, (startup_block.key(settings), after, text, ["use-advisory-locks"]))
    kept(home, project).write_bytes(blob)


def forge_as_installed(home: Path, project: str) -> None:
    """:func:`forge` by the code the installed hook runs (``-P``: not this checkout's, whichever
    the tests import), with the settings the hook reads from the environment."""
    script = (
        "import os\n"
        "from rolling_graph.core.config import load_settings\n"
        "from rolling_graph.warm import snapshot_files, startup_block\n"
        f"home, project = {str(home)!r}, {project!r}\n"
        "st = os.stat(snapshot_files.snapshot_file(home, project))\n"
        "blob = snapshot_files.cache_blob('startup', st, project, (startup_block.key(load_settings()), '', 'FORGED BLOCK', []))\n"
        "open(snapshot_files.cache_file(home, project, 'startup'), 'wb').write(blob)\n"
    )
    proc = subprocess.run([os.path.join(os.path.dirname(HOOK), "python"), "-P", "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture
def project(tmp_path: Path) -> str:
    return project_root(str(tmp_path / "app"))


@pytest.mark.parametrize(("budget", "source"), [(800, "startup"), (400, "startup"), (800, "clear")])
def test_a_new_session_is_told_the_same_block_and_ledger_with_or_without_the_kept_one(
    isolated_home: Path, project: str, budget: int, source: str
) -> None:
    settings = settings_at(isolated_home, LATER, budget)
    write(isolated_home, project, ["2026-11-18T09:00:00Z", "2026-11-20T09:55:00Z", "2026-11-01T12:00:00Z"], settings)
    assert kept(isolated_home, project).exists()
    with_kept = start(settings, project, "with-kept", source)
    kept(isolated_home, project).unlink()
    rendered = start(settings, project, "rendered", source)
    assert with_kept == rendered
    assert "Wire the exporter into the nightly job" in with_kept and "ExportPart0Step0" in with_kept
    assert ledger(isolated_home, "with-kept") == ledger(isolated_home, "rendered")


@pytest.mark.parametrize("source", ["startup", "clear"])
def test_the_hook_really_reads_the_kept_block(isolated_home: Path, project: str, source: str) -> None:
    settings = settings_at(isolated_home, LATER)
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], settings)
    forge(isolated_home, project, settings)
    assert start(settings, project, "new-1", source) == "FORGED BLOCK"
    # The ledger starts from what the kept block shows, as from a block the hook rendered.
    assert list(ledger(isolated_home, "new-1")["told"]) == ["use-advisory-locks"]


def test_a_kept_block_is_not_told_before_the_time_it_holds_from(isolated_home: Path, project: str) -> None:
    settings = settings_at(isolated_home, LATER)
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], settings)
    forge(isolated_home, project, settings, after=iso(LATER + timedelta(seconds=1)))
    text = start(settings, project, "too-early")
    assert "FORGED" not in text and "Wire the exporter" in text


def test_a_session_a_minute_after_the_last_one_is_told_the_kept_block(isolated_home: Path, project: str) -> None:
    # Every node but the tasks was first seen half a minute before the new session (its stamps,
    # a second apart for 54 nodes, reach back past that): only the tasks' order reads
    # first_seen, and theirs are days old.
    now = datetime(2026, 11, 20, 10, 5, tzinfo=UTC)
    settings = settings_at(isolated_home, now)
    stamps = [iso(now - timedelta(seconds=30))] * 54
    stamps[2:5] = ["2026-11-18T09:00:00Z", "2026-11-18T08:00:00Z", "2026-11-18T10:00:00Z"]  # the three tasks
    write(isolated_home, project, stamps, settings)
    made = startup_block.build(snapshot.read_seed(isolated_home, project), settings, now)  # type: ignore[arg-type]
    assert made is not None and made[1] < iso(now)
    with_kept = start(settings, project, "a-minute-after")
    assert with_kept == made[2]
    kept(isolated_home, project).unlink()
    assert start(settings, project, "rendered") == with_kept
    assert ledger(isolated_home, "a-minute-after") == ledger(isolated_home, "rendered")


def test_a_task_first_seen_seconds_before_the_session_makes_it_render_its_block_and_tell_the_same(
    isolated_home: Path, project: str
) -> None:
    # The pending task "Drop the v1 endpoint" (the snapshot's fourth node) was first seen two
    # seconds before the new session: its stamp, three seconds back, takes its place, and the
    # block must not be the one kept for later.
    now = datetime(2026, 11, 20, 10, 5, tzinfo=UTC)
    settings = settings_at(isolated_home, now)
    stamps = ["2026-11-18T09:00:00Z"] * 54
    stamps[3] = iso(now - timedelta(seconds=2))
    write(isolated_home, project, stamps, settings)
    made = startup_block.build(snapshot.read_seed(isolated_home, project), settings, now)  # type: ignore[arg-type]
    assert made is not None and made[1] > iso(now)
    forge(isolated_home, project, settings, after=made[1])
    text = start(settings, project, "seconds-after")
    assert "FORGED" not in text
    assert text == made[2], "rendered at its own time, the block says what the writer kept for later"


def test_of_the_blocks_code_only_the_open_tasks_order_reads_when_a_node_was_first_seen() -> None:
    # What lets a kept block hold minutes after the last session (startup_block.valid_after):
    # a new read of first_seen in the block's code must say how the kept block stays right.
    readers = {}
    for name in startup_block.CODE:
        path = Path(startup_block._PACKAGE, *name.split("/")).with_suffix(".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and any(isinstance(c, ast.Constant) and c.value == "first_seen"
                                                       and isinstance(p, ast.Subscript) and p.slice is c
                                                       for p in ast.walk(fn) for c in ast.iter_child_nodes(p)):
                readers.setdefault(name, set()).add(fn.name)
    assert readers == {
        "render/sections": {"add_tasks", "order"},  # the open tasks' order: READS_FIRST_SEEN
        "warm/snapshot": {"_clean_node", "seed_ops"},  # the seed's checks and its clamp to the stamp
        "warm/startup_block": {"valid_after"},
    }
    assert {"task"} == startup_block.READS_FIRST_SEEN


def test_other_settings_or_another_snapshot_make_a_kept_block_stale(isolated_home: Path, project: str) -> None:
    settings = settings_at(isolated_home, LATER)
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], settings)
    forge(isolated_home, project, settings)
    assert "FORGED" not in start(settings_at(isolated_home, LATER, budget=400), project, "other-budget")
    forged = kept(isolated_home, project).read_bytes()
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], settings)  # the same snapshot, written again: another file
    kept(isolated_home, project).write_bytes(forged)
    assert "FORGED" not in start(settings, project, "other-file")


@pytest.mark.parametrize("damage", [b"", b"garbage", b"\x00" * 40, "truncate", "shape"])
def test_a_damaged_kept_block_is_ignored(isolated_home: Path, project: str, damage: bytes | str) -> None:
    settings = settings_at(isolated_home, LATER)
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], settings)
    path = kept(isolated_home, project)
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:-20])
    elif damage == "shape":
        st_ = os.stat(snapshot_files.snapshot_file(isolated_home, project))
        path.write_bytes(snapshot_files.cache_blob(startup_block.PART, st_, project, (startup_block.key(settings), "", 42, None)))
    else:
        assert isinstance(damage, bytes)
        path.write_bytes(damage)
    text = start(settings, project, "damaged")
    assert "Wire the exporter into the nightly job" in text


def test_a_resumed_or_known_session_renders_its_own_block(isolated_home: Path, project: str) -> None:
    settings = settings_at(isolated_home, LATER)
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], settings)
    start(settings, project, "known")  # the session exists: its graph holds the seed
    forge(isolated_home, project, settings)
    assert "FORGED" not in start(settings, project, "known", "resume")
    assert "FORGED" not in start(settings, project, "known", "startup")


def test_the_writer_keeps_no_block_without_settings_and_removes_an_old_one(isolated_home: Path, project: str) -> None:
    # (A forgotten node's words must not outlive the snapshot that held them.)
    settings = settings_at(isolated_home, LATER)
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], settings)
    assert b"Wire the exporter" in kept(isolated_home, project).read_bytes()
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], None)
    assert not kept(isolated_home, project).exists()


def test_the_writer_keeps_no_block_for_stamps_it_cannot_compare(isolated_home: Path, project: str) -> None:
    settings = settings_at(isolated_home, LATER)
    write(isolated_home, project, ["2026-11-18T09:00:00.250+00:00"], settings)  # not the hook's form: compared as text there
    assert not kept(isolated_home, project).exists()
    assert "Wire the exporter" in start(settings, project, "odd-stamps")


def test_key_names_each_code_file_and_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in startup_block.CODE:
        path = tmp_path / (name + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# code\n")
    monkeypatch.setattr(startup_block, "_PACKAGE", str(tmp_path))
    settings = Settings(home=tmp_path)
    before = startup_block.key(settings)
    assert startup_block.key(Settings(home=tmp_path / "elsewhere")) == before
    edited = tmp_path / "render" / "sections.py"
    os.utime(edited, ns=(edited.stat().st_atime_ns, edited.stat().st_mtime_ns + 1_000_000))
    assert startup_block.key(settings) != before
    after_edit = startup_block.key(settings)
    assert startup_block.key(Settings(home=tmp_path, render=RenderSettings(budget_tokens=500))) != after_edit
    assert startup_block.key(Settings(home=tmp_path, decay=replace(DecaySettings(), half_life_hours=3.0))) != after_edit


def test_the_key_covers_every_module_the_block_is_computed_with(isolated_home: Path, project: str) -> None:
    # In a fresh interpreter: what does computing a block load of ours? All of it is in CODE.
    settings = settings_at(isolated_home, LATER)
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], settings)
    script = (
        "import sys, json\n"
        "from rolling_graph.core.config import load_settings\n"
        "from rolling_graph.core.clock import utcnow\n"
        "from rolling_graph.warm import startup_block, snapshot\n"
        f"seed = snapshot.read_seed({str(isolated_home)!r}, {project!r})\n"
        "assert startup_block.build(seed, load_settings(), utcnow()) is not None\n"
        "print(json.dumps([m for m, mod in sys.modules.items() if m.startswith('rolling_graph.')"
        " and not hasattr(mod, '__path__')]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded = {m.removeprefix("rolling_graph.").replace(".", "/") for m in json.loads(proc.stdout)}
    assert loaded - set(startup_block.CODE) == set()
    assert {"render/restore", "render/rank", "store/journal", "warm/snapshot"} <= loaded


#: Each node's first stamp, within two minutes of one another: the seed's stamps, a second apart
#: for its 54 nodes, would fall among them at any time much before :func:`startup_block.valid_after`.
#: Or within seconds: the tasks' (the third to fifth nodes) stamps then fall among their first
#: stamps at any time much before it.
STAMPS = st.one_of(*(st.lists(st.integers(min_value=0, max_value=most).map(lambda s: iso(WRITTEN + timedelta(seconds=s))),
                              min_size=54, max_size=54) for most in (120, 6)))


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first_seen=STAMPS, later=st.integers(min_value=0, max_value=400 * 24 * 3600))
def test_the_block_is_the_same_at_every_time_past_the_one_it_holds_from(first_seen: list[str], later: int) -> None:
    seed = snapshot.seed_of({"project": "/p", "nodes": nodes(first_seen), "edges": []})
    start_at = datetime.fromisoformat(startup_block.valid_after(seed).replace("Z", "+00:00"))
    settings = Settings(home="/nonexistent-rgraph")
    assert startup_block.render(seed, settings, start_at) == startup_block.render(seed, settings, start_at + timedelta(seconds=later))


def test_the_real_hook_takes_the_kept_block(isolated_home: Path, project: str) -> None:
    # As Claude Code runs it: the installed hook, the real clock, the writer's default settings.
    os.makedirs(project, exist_ok=True)
    write(isolated_home, project, ["2026-11-18T09:00:00Z"], load_settings())
    env = dict(os.environ)
    fresh = context_of(json.loads(run_hook("session-start", {"session_id": "real-1", "cwd": project, "source": "startup"}, env).stdout))
    forge_as_installed(isolated_home, project)
    proc = run_hook("session-start", {"session_id": "real-2", "cwd": project, "source": "startup"}, env)
    assert proc.returncode == 0, proc.stderr
    assert context_of(json.loads(proc.stdout)) == "FORGED BLOCK"
    assert "Wire the exporter into the nightly job" in fresh
