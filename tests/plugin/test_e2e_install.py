"""End to end: the zero-setup route, as a new user takes it.

A fresh ``HOME``, nothing of ours on ``PATH``, the plugin added as the README says
(``claude plugin marketplace add CHECKOUT``, ``claude plugin install``), so it runs from Claude
Code's copy. The first session's ``SessionStart`` starts the plugin's bootstrap in the background
(its hooks stay silent meanwhile, and ``/rolling-graph:graph`` says the environment is being
built); the bootstrap builds the plugin's own environment under ``$CLAUDE_PLUGIN_DATA`` from the
copy; the next session runs our hooks from it with zero hook errors, its sidecar, in the one
state directory, holds what it was told, and ``/rolling-graph:graph show`` prints it through
that environment's ``rgraph`` (none is on ``PATH``).

The build installs from a local wheelhouse, so the test needs no network: ``.ci/run`` prepares
it (``pip wheel -w .ci/wheelhouse . setuptools wheel``) while the package index is reachable;
``ROLLING_GRAPH_TEST_WHEELHOUSE`` may point elsewhere.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from claude_harness import CHECKOUT, CLAUDE, Sandbox, hook_errors, plugin_name, stderr_hook_errors
from standin_model import StandinModel, ToolCall, Turn

WHEELHOUSE = Path(os.environ.get("ROLLING_GRAPH_TEST_WHEELHOUSE") or CHECKOUT / ".ci" / "wheelhouse")
BUILD_WAIT_S = 300.0

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(CLAUDE is None, reason="Claude Code CLI `claude` is not on PATH (see .ci/run)"),
    pytest.mark.skipif(
        not any(WHEELHOUSE.glob("rolling_graph-*.whl")),
        reason=f"no wheelhouse at {WHEELHOUSE}: run `pip wheel -w .ci/wheelhouse . setuptools wheel` (as .ci/run does)",
    ),
]


def plugin_data(sandbox: Sandbox) -> Path:
    """Where Claude Code keeps the plugin's data (``$CLAUDE_PLUGIN_DATA``)."""
    found = sorted(sandbox.home.glob(".claude/plugins/data/rolling-graph*"))
    assert found, "Claude Code created no plugin data directory"
    return found[0]


def wait_for_environment(sandbox: Sandbox) -> Path:
    deadline = time.monotonic() + BUILD_WAIT_S
    while time.monotonic() < deadline:
        found = sorted(sandbox.home.glob(".claude/plugins/data/rolling-graph*/venv/bin/rgraph-hook"))
        if found:
            return found[0]
        time.sleep(1.0)
    logs = "\n".join(p.read_text()[-3000:] for p in sandbox.home.glob(".claude/plugins/data/*/logs/bootstrap.log"))
    raise AssertionError(f"the bootstrap built no environment in {BUILD_WAIT_S:.0f} s:\n{logs}")


@pytest.mark.timeout(BUILD_WAIT_S + 180)
def test_a_new_user_with_nothing_installed_gets_working_hooks_from_the_second_session(tmp_path: Path) -> None:
    sandbox = Sandbox.create(
        tmp_path,
        wrap_hook=False,
        # Nothing of ours on PATH: only the system's Python, which the bootstrap builds from.
        PATH="/usr/bin:/bin",
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(WHEELHOUSE),
        ROLLING_GRAPH_WARM="off",
    )
    (sandbox.project / "notes.md").write_text("# Notes\n")
    copy = sandbox.install_from_marketplace(CHECKOUT)
    read_notes = Turn.tools(ToolCall("Read", {"file_path": str(sandbox.project / "notes.md")}))
    with StandinModel([Turn.say("Hello.")]) as model:
        first = sandbox.run(model, "hello", plugin_dir=None)
    assert stderr_hook_errors(first) == [], first.stderr
    assert hook_errors(sandbox.transcript(first.session_id)) == [], "hooks must stay silent while the bootstrap runs"

    hook = wait_for_environment(sandbox)
    assert hook.parent.parent.resolve() != (plugin_data(sandbox) / "venv"), "the environment is a versioned build behind a link"
    assert (plugin_data(sandbox) / "venv").is_symlink()

    with StandinModel([read_notes, Turn.say("Noted.")]) as model:
        second = sandbox.run(model, "We decided to use PostgreSQL instead of SQLite for the warm store.", plugin_dir=None)
    assert stderr_hook_errors(second) == [], second.stderr
    assert hook_errors(sandbox.transcript(second.session_id)) == []

    sidecar = sandbox.rg_home / "sessions" / f"{second.session_id}.graph.json"
    assert sidecar.exists(), f"no sidecar in the state directory {sandbox.rg_home}"
    deadline = time.monotonic() + 30
    labels: list[str] = []
    while time.monotonic() < deadline:
        labels = [node["label"] for node in json.loads(sidecar.read_text())["nodes"].values()]
        if any("PostgreSQL" in label for label in labels):
            break
        time.sleep(0.5)
    assert any("PostgreSQL" in label for label in labels), labels
    assert sandbox.plugin_data_sessions() == [], "state belongs in the one state directory, not the plugin's data"
    assert not (copy / "build").exists() and not list(copy.glob("*.egg-info")), "the bootstrap wrote into Claude Code's copy"

    # The slash command runs the plugin's own rgraph: nothing named rgraph is on PATH.
    with StandinModel([Turn.say("Here is the graph.")]) as model:
        shown = sandbox.run(model, f"/{plugin_name()}:graph show", "--resume", second.session_id, plugin_dir=None)
        [request, *_] = model.requests_of("main")
    assert shown.output.get("result") == "Here is the graph.", shown.describe()
    command_text = request.text()
    assert f"<command-name>/{plugin_name()}:graph</command-name>" in command_text
    assert "PostgreSQL" in command_text and "not found" not in command_text, command_text[-2000:]


def test_graph_show_before_any_rgraph_exists_says_so_with_the_fix(tmp_path: Path) -> None:
    # The session's SessionStart starts the bootstrap (made to fail fast: no package index), so
    # the command finds either that build under way or nothing at all; either way it says so.
    sandbox = Sandbox.create(tmp_path, wrap_hook=False, PATH="/usr/bin:/bin", ROLLING_GRAPH_WARM="off",
                             PIP_NO_INDEX="1", PIP_FIND_LINKS=str(tmp_path / "no-wheels"))
    with StandinModel([Turn.say("unused")]) as model:
        shown = sandbox.run(model, f"/{plugin_name()}:graph show", check=False)
        asked = model.requests_of("main")
    result = str(shown.output.get("result"))
    assert asked == [], "the model is not handed an empty block"
    [said] = [line for line in result.splitlines() if line.startswith("rolling-graph: ")]
    assert ("rgraph not found" in said and "pipx install" in said) or "still building" in said, shown.describe()
    assert "bootstrap.log" in said
