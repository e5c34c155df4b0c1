"""plugin/commands/graph.md and its launcher plugin/hooks/graph: valid frontmatter, the launcher
pre-approved, the rgraph the hooks use, and only commands that exist."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import typer
from inspect_builders import inspect_app, settings_for, storage_session
from typer.testing import CliRunner

from rolling_graph.cli.show import SLASH_SUBCOMMANDS

PLUGIN = Path(__file__).resolve().parents[2] / "plugin"
COMMAND_FILE = PLUGIN / "commands" / "graph.md"
LAUNCHER = PLUGIN / "hooks" / "graph"
LAUNCHER_CALL = '"${CLAUDE_PLUGIN_ROOT}/hooks/graph" "${CLAUDE_PLUGIN_DATA}"'
#: What the launcher runs: what reads, and expand, whose activation is the point.
LAUNCHED = {"slash", "show", "expand", "why", "stats"}


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """The ``---`` delimited header as ``key: value`` pairs (the subset Claude Code reads)."""
    assert text.startswith("---\n"), "frontmatter must open on the first line"
    header, body = text[4:].split("\n---\n", 1)
    fields: dict[str, str] = {}
    for line in header.splitlines():
        match = re.fullmatch(r"([a-z][a-z-]*):\s*(.*)", line)
        assert match, f"not a 'key: value' line: {line!r}"
        key, value = match.groups()
        assert key not in fields, f"duplicate key {key}"
        if value[:1] in "\"'":
            assert value[-1:] == value[:1] and len(value) >= 2, f"unterminated quote in {key}"
            value = value[1:-1]
        fields[key] = value
    return fields, body


def command_names(app: typer.Typer) -> set[str]:
    return {info.name or info.callback.__name__ for info in app.registered_commands}  # type: ignore[union-attr]


def test_frontmatter_describes_the_command_and_preapproves_only_the_launcher() -> None:
    fields, body = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    assert set(fields) <= {"description", "argument-hint", "allowed-tools", "model", "disable-model-invocation"}
    assert fields["description"]
    # Claude Code substitutes ${CLAUDE_PLUGIN_ROOT} in allowed-tools too (checked with 2.1.332);
    # the launcher itself refuses forget, review, graduate, seed, reconcile and db.
    assert [tool.strip() for tool in fields["allowed-tools"].split(",")] == ['Bash("${CLAUDE_PLUGIN_ROOT}/hooks/graph":*)']
    for sub in ("show", "expand", "why", "stats"):
        assert sub in fields["argument-hint"]
    assert body.strip()


def test_preprocessed_line_runs_the_launcher_with_data_dir_session_id_and_arguments() -> None:
    _, body = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    lines = re.findall(r"^!`([^`]+)`$", body, flags=re.MULTILINE)
    assert lines == [f"{LAUNCHER_CALL} slash --activate --session=${{CLAUDE_SESSION_ID}} $ARGUMENTS"]


def test_command_names_only_launched_subcommands_that_exist() -> None:
    _, body = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    launched = set(re.findall(re.escape(LAUNCHER_CALL) + r" ([a-z][a-z-]*)", body))
    available = command_names(inspect_app())
    assert launched, "the command runs no rgraph subcommand"
    assert launched <= LAUNCHED <= available, (launched, available)
    # Whatever else it names (`rgraph forget`, for the user to type in a terminal) exists too.
    assert set(re.findall(r"`rgraph ([a-z][a-z-]*)", body)) <= available


def test_argument_hint_matches_what_the_dispatcher_accepts() -> None:
    fields, _ = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    hinted = set(re.findall(r"\b(show|expand|why|stats|view)\b", fields["argument-hint"]))
    assert hinted == set(SLASH_SUBCOMMANDS)


def expand_like_claude_code(arguments: str, session_id: str) -> list[str]:
    """The rgraph argv the launcher gets for ``/rolling-graph:graph ARGUMENTS`` (after substitution)."""
    _, body = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    line = re.search(r"^!`([^`]+)`$", body, flags=re.MULTILINE).group(1)  # type: ignore[union-attr]
    line = line.replace("${CLAUDE_SESSION_ID}", session_id).replace("$ARGUMENTS", arguments)
    line = line.replace("${CLAUDE_PLUGIN_ROOT}", str(PLUGIN)).replace("${CLAUDE_PLUGIN_DATA}", "/plugin-data")
    argv = shlex.split(line)
    assert argv[:2] == [str(LAUNCHER), "/plugin-data"]
    return argv[2:]


@pytest.fixture()
def storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ROLLING_GRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ROLLING_GRAPH_NOW", "2026-11-25T21:20:00Z")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    return storage_session(settings_for(tmp_path / "home"))


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("", "Focus"),
        ("show technical", "technical (3)"),
        ("personal", "Ada prefers typed Python"),
        ("show Use SQLite for the warm store", "(node use-sqlite-for-the-warm-store)"),
        ('why "Ada\'s unknown"', "no domain or node named"),
        ("why use-sqlite-for-the-warm-store", "The user chose SQLite."),
        ("expand 'Rolling Graph plugin'", "counted as an activation"),
        ("stats", "tokens injected"),
        ("view", "works offline"),
    ],
)
def test_slash_command_runs_each_subcommand(storage: str, arguments: str, expected: str) -> None:
    result = CliRunner().invoke(inspect_app(), expand_like_claude_code(arguments, storage))
    assert result.exit_code == 0, result.output
    assert expected in result.output


def test_slash_command_without_session_id_falls_back_to_latest(storage: str) -> None:
    result = CliRunner().invoke(inspect_app(), expand_like_claude_code("show", ""))
    assert result.exit_code == 0
    assert f"session {storage}" in result.output.lower() and "Use PostgreSQL" in result.output


def test_slash_command_for_a_session_without_graph_yet_says_so_and_falls_back(storage: str) -> None:
    result = CliRunner().invoke(inspect_app(), expand_like_claude_code("show", "brand-new-session"))
    assert result.exit_code == 0
    assert "Session brand-new-session has no graph yet" in result.output
    assert "Use PostgreSQL" in result.output


def test_slash_command_reports_problems_as_text_not_failure(storage: str) -> None:
    result = CliRunner().invoke(inspect_app(), expand_like_claude_code("why", storage))
    assert result.exit_code == 0
    assert "usage: /rolling-graph:graph why NODE" in result.output


def _fake_rgraph(path: Path, tag: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "{tag} $*"\n')
    path.chmod(0o755)
    return path


def launch(tmp_path: Path, *argv: str, path: str = "/usr/bin:/bin", **env: str) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": path, "HOME": str(tmp_path / "home"), **env}
    return subprocess.run([str(LAUNCHER), *argv], capture_output=True, text=True, env=environment, timeout=30)


def test_launcher_prefers_the_plugins_own_environment_to_path(tmp_path: Path) -> None:
    _fake_rgraph(tmp_path / "data" / "venv" / "bin" / "rgraph", "plugin-env")
    _fake_rgraph(tmp_path / "bin" / "rgraph", "on-path")
    done = launch(tmp_path, str(tmp_path / "data"), "slash", "show", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert (done.returncode, done.stdout.strip()) == (0, "plugin-env slash show")


def test_launcher_uses_rgraph_on_path_without_the_plugins_environment(tmp_path: Path) -> None:
    _fake_rgraph(tmp_path / "bin" / "rgraph", "on-path")
    done = launch(tmp_path, str(tmp_path / "data"), "why", "NODE", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert (done.returncode, done.stdout.strip()) == (0, "on-path why NODE")


def test_launcher_runs_the_rgraph_beside_an_explicit_hook(tmp_path: Path) -> None:
    _fake_rgraph(tmp_path / "elsewhere" / "rgraph", "explicit")
    _fake_rgraph(tmp_path / "data" / "venv" / "bin" / "rgraph", "plugin-env")
    hook = _fake_rgraph(tmp_path / "elsewhere" / "rgraph-hook", "hook")
    done = launch(tmp_path, str(tmp_path / "data"), "stats", ROLLING_GRAPH_HOOK=str(hook))
    assert done.stdout.strip() == "explicit stats"


def test_launcher_without_any_rgraph_says_so_in_one_line_with_the_fix(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = launch(tmp_path, str(data), "slash", "show")
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert "rgraph not found" in line and str(data / "logs" / "bootstrap.log") in line and "pipx install" in line


def test_launcher_while_the_bootstrap_builds_says_to_wait(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / ".bootstrap.lock").mkdir(parents=True)
    done = launch(tmp_path, str(data), "slash", "show")
    assert done.returncode == 1 and "still building" in done.stderr and len(done.stderr.splitlines()) == 1


def test_launcher_without_a_substituted_data_dir_falls_back_like_the_hooks(tmp_path: Path) -> None:
    # An older Claude Code that does not substitute ${CLAUDE_PLUGIN_DATA} leaves it as typed.
    _fake_rgraph(tmp_path / "state" / "venv" / "bin" / "rgraph", "state-env")
    done = launch(tmp_path, "${CLAUDE_PLUGIN_DATA}", "show", ROLLING_GRAPH_HOME=str(tmp_path / "state"))
    assert done.stdout.strip() == "state-env show"


@pytest.mark.parametrize("sub", ["forget", "review", "graduate", "seed", "db", "", "view"])
def test_launcher_refuses_what_a_human_must_decide_on(tmp_path: Path, sub: str) -> None:
    ran = tmp_path / "ran"
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "rgraph").write_text(f"#!/bin/sh\ntouch {ran}\n")
    (tmp_path / "bin" / "rgraph").chmod(0o755)
    done = launch(tmp_path, str(tmp_path / "data"), *([sub] if sub else []), "NODE", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert done.returncode == 1 and "runs only rgraph slash, show, expand, why and stats" in done.stderr
    assert not ran.exists()
