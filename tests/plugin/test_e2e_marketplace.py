"""End to end: the plugin added from a checkout with ``/plugin marketplace add`` and installed.

Claude Code copies a marketplace plugin into ``~/.claude/plugins/cache/<marketplace>/<plugin>/
<version>/``: the whole directory the marketplace entry's ``source`` names, symlinks followed
(checked with 2.1.332). The plugin is therefore ``plugin/`` (its manifest, hooks and command, and
links to the package source its bootstrap installs from), never the checkout, whose ``.venv``,
``build/`` and ``.hypothesis`` the README's own steps create (269 MB were copied when the plugin
was the checkout).

The route with the package installed (``rgraph`` and ``rgraph-hook`` on ``PATH``, as ``pipx
install`` leaves them) runs here; the zero-setup route, whose plugin builds its own environment
from the copy, is ``test_e2e_install.py``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from claude_harness import CHECKOUT, CLAUDE, Sandbox, hook_errors, plugin_name
from standin_model import StandinModel, ToolCall, Turn

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(CLAUDE is None, reason="Claude Code CLI `claude` is not on PATH (see .ci/run)"),
]

MAX_COPY_BYTES = 10 * 1024 * 1024
#: What the README's quick start and test run leave in a checkout, and git never tracks.
CHECKOUT_LITTER = (".venv", "build", ".hypothesis", ".pytest_cache", "wheelhouse", ".git")
DECISION = "We decided to use PostgreSQL instead of SQLite for the warm store."


def tree_bytes(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def littered_checkout(target: Path) -> Path:
    """A copy of the checkout (its links kept as links) with 30 MB in the places the README's
    steps fill: a virtual environment, a build directory, hypothesis' database."""
    shutil.copytree(CHECKOUT, target, symlinks=True,
                    ignore=shutil.ignore_patterns(*CHECKOUT_LITTER, "*.egg-info", "__pycache__"))
    for litter in (".venv/lib/site.bin", "build/lib/wheel.bin", ".hypothesis/examples/db.bin"):
        (target / litter).parent.mkdir(parents=True, exist_ok=True)
        (target / litter).write_bytes(os.urandom(10 * 1024 * 1024))
    return target


def message_texts(model: StandinModel) -> list[str]:
    texts: list[str] = []
    for request in model.requests_of("main"):
        for message in request.body["messages"]:
            if message["role"] != "user":
                continue
            content = message["content"]
            texts.append(content if isinstance(content, str) else
                         "\n".join(b.get("text", "") for b in content if isinstance(b, dict)))
    return texts


@pytest.mark.parametrize("source", ["littered copy", "this checkout"])
def test_the_installed_copy_holds_only_the_plugin_and_stays_under_ten_mb(tmp_path: Path, source: str) -> None:
    marketplace = littered_checkout(tmp_path / "checkout") if source == "littered copy" else CHECKOUT
    sandbox = Sandbox.create(tmp_path / "user", wrap_hook=False)

    copy = sandbox.install_from_marketplace(marketplace)
    size = tree_bytes(sandbox.home / ".claude" / "plugins" / "cache")

    print(f"{source}: checkout {tree_bytes(marketplace) / 1e6:.1f} MB, installed copy {size / 1e6:.2f} MB")
    assert size <= MAX_COPY_BYTES, f"the installed copy is {size / 1e6:.1f} MB"
    present = {p.relative_to(copy).as_posix() for p in copy.rglob("*") if "__pycache__" not in p.parts}
    assert {".claude-plugin/plugin.json", "hooks/hooks.json", "hooks/run", "hooks/bootstrap", "hooks/rgraph-hook",
            "hooks/graph", "commands/graph.md", "pyproject.toml", "README.md", "rolling_graph/hook.py"} <= present
    assert not any(p.split("/")[0] in {".venv", "build", ".hypothesis", "tests", "fixtures", "bench", ".git"} for p in present)
    assert json.loads((copy / ".claude-plugin" / "plugin.json").read_text())["name"] == plugin_name()


def test_with_the_package_installed_the_marketplace_plugin_runs_hooks_and_graph_show(tmp_path: Path) -> None:
    # Route one of the README: the package installed (its bin on PATH), the plugin from the marketplace.
    sandbox = Sandbox.create(tmp_path, ROLLING_GRAPH_PROBE_MODE="sync", ROLLING_GRAPH_WARM="off")
    (sandbox.project / "notes.md").write_text("# Notes\n")
    sandbox.install_from_marketplace(CHECKOUT)
    read_notes = Turn.tools(ToolCall("Read", {"file_path": str(sandbox.project / "notes.md")}))

    with StandinModel([read_notes, Turn.say("Noted.")]) as model:
        first = sandbox.run(model, DECISION, plugin_dir=None)
    assert "session-start" in sandbox.fired_events() and "post-tool-use" in sandbox.fired_events()
    assert hook_errors(sandbox.transcript(first.session_id)) == []

    command = f"/{plugin_name()}:graph show"
    with StandinModel([Turn.say("Here is the graph.")]) as model:
        shown = sandbox.run(model, command, "--resume", first.session_id, plugin_dir=None)
        texts = message_texts(model)
    assert shown.output.get("result") == "Here is the graph.", shown.describe()
    command_text = next(t for t in reversed(texts) if f"<command-name>/{plugin_name()}:graph</command-name>" in t)
    assert "PostgreSQL" in command_text and "not found" not in command_text, command_text[-2000:]
