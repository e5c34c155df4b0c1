"""commands/graph.md: valid frontmatter, pre-approved rgraph, and only commands that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer
from inspect_builders import inspect_app, settings_for, storage_session
from typer.testing import CliRunner

from rolling_graph.cli.show import SLASH_SUBCOMMANDS

COMMAND_FILE = Path(__file__).resolve().parents[2] / "commands" / "graph.md"


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


def test_frontmatter_describes_the_command_and_preapproves_rgraph() -> None:
    fields, body = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    assert set(fields) <= {"description", "argument-hint", "allowed-tools", "model", "disable-model-invocation"}
    assert fields["description"]
    approved = [tool.strip() for tool in fields["allowed-tools"].split(",")]
    assert "Bash(rgraph slash:*)" in approved  # the command's own line
    # Only what reads (and expand, whose activation is the point): never forget, review,
    # graduate, seed, reconcile or db, which change memory a human must decide on.
    assert {re.fullmatch(r"Bash\(rgraph ([a-z]+):\*\)", tool).group(1) for tool in approved} == {"slash", "show", "expand", "why", "stats"}  # type: ignore[union-attr]
    for sub in ("show", "expand", "why", "stats"):
        assert sub in fields["argument-hint"]
    assert body.strip()


def test_preprocessed_line_passes_session_id_and_arguments() -> None:
    _, body = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    lines = re.findall(r"^!`([^`]+)`$", body, flags=re.MULTILINE)
    assert lines == ["rgraph slash --activate --session=${CLAUDE_SESSION_ID} $ARGUMENTS"]


def test_command_names_only_rgraph_subcommands_that_exist() -> None:
    _, body = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    named = set(re.findall(r"\brgraph ([a-z][a-z-]*)", body))
    available = command_names(inspect_app())
    pending: set[str] = set()
    assert named, "the command runs no rgraph subcommand"
    assert named <= available | pending, named - available
    assert {"slash", "show", "expand", "why", "stats", "view"} <= available


def test_argument_hint_matches_what_the_dispatcher_accepts() -> None:
    fields, _ = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    hinted = set(re.findall(r"\b(show|expand|why|stats|view)\b", fields["argument-hint"]))
    assert hinted == set(SLASH_SUBCOMMANDS)


def expand_like_claude_code(arguments: str, session_id: str) -> list[str]:
    """The argv Claude Code's shell would run for ``/graph ARGUMENTS`` (after substitution)."""
    _, body = split_frontmatter(COMMAND_FILE.read_text(encoding="utf-8"))
    line = re.search(r"^!`([^`]+)`$", body, flags=re.MULTILINE).group(1)  # type: ignore[union-attr]
    line = line.replace("${CLAUDE_SESSION_ID}", session_id).replace("$ARGUMENTS", arguments)
    argv = shlex.split(line)
    assert argv[0] == "rgraph"
    return argv[1:]


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
    assert "usage: /graph why NODE" in result.output
