"""`rgraph demo` tells the bundled session honestly: every injection, the restore block after
the compaction, the user's prompts, consistent gate numbers, and a state directory that is
either gone (and not printed) or kept with a command that really opens it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rolling_graph.cli.demo import demo_transcript, prompts_of
from rolling_graph.replay.run import ReplayOptions, replay


@pytest.fixture()
def demo_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the demo's throw-away directory goes (tempfile's default), watched by the test."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    monkeypatch.setenv("COLUMNS", "200")
    return where


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], list[str], int, dict[str, int]]:
    """What the demo must show, from a replay of its session done here: the injections,
    the prompts, how many events fired the gate and the triggers counted."""
    home = tempfile.mkdtemp(prefix="rgraph-demo-ref-")
    try:
        result = replay([demo_transcript()], options=ReplayOptions(budget=800), home=home)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    summary = result.summary()
    injections = [r.injection for r in result.records if r.injection]
    compact = [r.injection for r in result.records if r.event == "SessionStart" and r.source == "compact" and r.injection]
    assert compact, "the demo session has a compaction whose restore block is injected"
    return injections, list(prompts_of(demo_transcript()).values()), summary["gate_fired"], summary["gate_reasons"]


def run_demo(*args: str) -> str:
    from rolling_graph.cli.main import app

    result = CliRunner().invoke(app, ["demo", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_demo_shows_every_injection_in_full_including_the_restore_block_after_compaction(
    demo_tmp: Path, reference: tuple[list[str], list[str], int, dict[str, int]]
) -> None:
    injections, _, _, _ = reference
    out = run_demo()
    flat = " ".join(out.split())
    assert len(injections) > 3
    assert f"all {len(injections)} injections" in out
    for block in injections:  # in full, wherever the terminal wrapped it
        assert " ".join(block.split()) in flat
    assert out.count("<rolling-graph-memory") == len(injections)
    after = flat[flat.index("SessionStart(compact)") :]
    restored = after[after.index("<rolling-graph-memory") : after.index("</rolling-graph-memory>")]
    assert "Request (user):" in restored and "Decisions in force:" in restored  # the restore block, not a delta


def test_demo_shows_the_users_prompts_in_order(demo_tmp: Path, reference: tuple[list[str], list[str], int, dict[str, int]]) -> None:
    _, prompts, _, _ = reference
    out = run_demo()
    flat = " ".join(out.split())
    positions = [flat.find(" ".join(p.split())) for p in prompts]
    assert len(prompts) >= 10 and all(pos >= 0 for pos in positions), positions
    assert positions == sorted(positions)
    assert "user ›" in out


def test_demo_gate_numbers_are_labelled_and_add_up(demo_tmp: Path, reference: tuple[list[str], list[str], int, dict[str, int]]) -> None:
    _, _, fired, reasons = reference
    out = run_demo()
    line = next(line for line in out.splitlines() if line.startswith("gate fired"))
    match = re.search(r"on (\d+) events\s+\((\d+) triggers: (.*)\)", line)
    assert match, line
    assert int(match.group(1)) == fired
    counts = {name: int(n) for name, n in (part.rsplit(" ", 1) for part in match.group(3).split(", "))}
    assert counts == reasons
    assert int(match.group(2)) == sum(counts.values()) > fired  # an event can fire on several triggers


def test_demo_without_keep_prints_no_state_dir_deletes_it_and_offers_keep(demo_tmp: Path) -> None:
    out = run_demo()
    assert list(demo_tmp.iterdir()) == []
    assert str(demo_tmp) not in out and not any(line.startswith("state dir") for line in out.splitlines())
    assert "throw-away state directory" in out and "rgraph demo --keep" in out


def test_demo_keep_prints_a_show_command_that_works(demo_tmp: Path, isolated_home: Path) -> None:
    out = run_demo("--keep")
    [kept] = list(demo_tmp.iterdir())
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("ROLLING_GRAPH_HOME=")]
    show = next(line for line in lines if " rgraph show --session " in line)
    assert show.startswith(f"ROLLING_GRAPH_HOME={kept} rgraph show --session c41d8e2a-")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    assert env["ROLLING_GRAPH_HOME"] == str(isolated_home)  # the line itself must point at the kept directory
    for line in lines:  # show, why and view: each runs as printed, in a shell
        proc = subprocess.run(["sh", "-c", line], capture_output=True, text=True, env=env, cwd=demo_tmp, timeout=60)
        assert proc.returncode == 0, (line, proc.stdout, proc.stderr)
    proc = subprocess.run(["sh", "-c", show], capture_output=True, text=True, env=env, timeout=60)
    assert "Use PostgreSQL for the job queue instead" in proc.stdout and "superseded by" in proc.stdout
    assert not any(isolated_home.glob("sessions/*")), "the user's own state directory was not touched"
